//! Rebuilding older layouts from lock entries: every kind of type survives the trip through the
//! lock's canonical text, and a lock whose text disagrees with its fingerprints is refused.

use logspec_codegen::compile_str;
use logspec_ir::ir::{Schema, TypeDef};
use logspec_ir::{history, lock};

fn compile(name: &str, text: &str) -> Schema {
    compile_str(name, text).unwrap_or_else(|e| panic!("{}", e.render()))
}

const SCHEMAS: [(&str, &str); 3] = [
    ("usvlog.toml", include_str!("../../schemas/usvlog.toml")),
    ("everything.toml", include_str!("schemas/everything.toml")),
    ("c_all_kinds.toml", include_str!("schemas/c_all_kinds.toml")),
];

#[test]
fn every_type_kind_rebuilds_to_the_same_locked_layout() {
    for (name, text) in SCHEMAS {
        let schema = compile(name, text);
        let entry = lock::entry(&schema);
        let rebuilt = history::rebuild(&schema, &entry).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(lock::entry(&rebuilt), entry, "{name}");
        for (a, b) in schema.records.iter().zip(&rebuilt.records) {
            assert_eq!((a.id, &a.name, a.fingerprint), (b.id, &b.name, b.fingerprint), "{name}");
        }
    }
}

#[test]
fn named_types_keep_their_names_and_docs() {
    let schema = compile(SCHEMAS[0].0, SCHEMAS[0].1);
    let rebuilt = history::rebuild(&schema, &lock::entry(&schema)).unwrap();
    let act = rebuilt.types.iter().find(|t| t.name() == "ActSrc").expect("ActSrc reused by name");
    assert!(matches!(act, TypeDef::Enum(e) if e.values.len() == 3));
    assert_eq!(act.doc(), Some("Who requested the actuator command."));
    let nav = rebuilt.strukt(rebuilt.records[0].body);
    assert_eq!(nav.fields[0].unit.as_deref(), Some("m"));
}

fn usvlog_with_lock_line(from: &str, to: &str) -> (Schema, lock::Lock) {
    let schema = compile(SCHEMAS[0].0, SCHEMAS[0].1);
    let mut l = lock::Lock { format: "usvlog".into(), schemas: vec![lock::entry(&schema)] };
    l.schemas[0].id = 0;
    let line = l.schemas[0].records.iter_mut().flat_map(|r| r.fields.iter_mut()).find(|f| *f == from).unwrap();
    *line = to.to_string();
    (schema, l)
}

#[test]
fn a_hand_edited_lock_is_refused() {
    // The type changed, the fingerprint did not: decoding with either would be a guess.
    let (schema, l) = usvlog_with_lock_line("x: f32le @0", "x: i32le @0");
    let err = history::history(&schema, &l).unwrap_err();
    assert!(err.contains("schema id 0, record REC_NAV_SOLUTION") && err.contains("edited by hand"), "{err}");
}

#[test]
fn a_malformed_type_is_refused_with_its_column() {
    let (schema, l) = usvlog_with_lock_line("x: f32le @0", "x: f33le @0");
    let err = history::history(&schema, &l).unwrap_err();
    assert!(err.contains("field `x`") && err.contains("column 1") && err.contains("expected a type"), "{err}");
    let (schema, l) = usvlog_with_lock_line("x: f32le @0", "x: array[4](f32le @0");
    let err = history::history(&schema, &l).unwrap_err();
    assert!(err.contains("expected `)`"), "{err}");
}

#[test]
fn the_schemas_own_id_is_not_history() {
    let schema = compile(SCHEMAS[0].0, SCHEMAS[0].1);
    let l = lock::Lock { format: "usvlog".into(), schemas: vec![lock::entry(&schema)] };
    assert!(history::history(&schema, &l).unwrap().is_empty());
}
