//! The WPILib struct-schema front end: golden diagnostics for invalid schemas
//! (`tests/invalid_struct/<name>.txt`: first line `# expect: E....`, the rest is the schema of
//! struct `Bad`, compiled with `Translation2d` and `Rotation2d` beside it), the IR a schema lowers
//! to (offsets, bit-field packing per struct.adoc), and the Rust types `Builder` generates.
//! Accept changed snapshots with `INSTA_UPDATE=always cargo test -p logspec-codegen --test
//! wpistruct` and review the diff.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use logspec_codegen::wpistruct::{self, lower};
use logspec_ir::ir::{BitKind, Ty, TypeDef};

#[test]
fn invalid_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_struct");
    let mut files: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 9);
    for p in files {
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&p).unwrap();
        let (first, schema) = text.split_once('\n').unwrap();
        let want: BTreeSet<String> = first
            .strip_prefix("# expect:")
            .unwrap_or_else(|| panic!("{name}: first line must be `# expect: E....`"))
            .split([' ', ','])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let path = format!("tests/invalid_struct/{name}.txt");
        let schemas = [("Bad", schema), ("Translation2d", "double x;double y"), ("Rotation2d", "double value")];
        let errs = match wpistruct::compile_schemas(&path, &schemas) {
            Ok(_) => panic!("{path} compiled, but it is meant to be invalid"),
            Err(e) => e,
        };
        let got: BTreeSet<String> =
            errs.iter().flat_map(|e| &e.diagnostics).map(|d| d.code.as_str().to_string()).collect();
        let rendered: String = errs.iter().map(|e| e.render()).collect();
        assert_eq!(got, want, "{path}:\n{rendered}");
        let mut settings = insta::Settings::clone_current();
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(name, rendered));
    }
}

const CUSTOM: &str = "enum{idle=0,run=1,fault=7}uint8 state;int8 a:3;int8 b:4;bool flag:1;uint16 c:5;uint16 d:11;\
bool e:1;bool f:1;int32 i32;uint32 u32;int64 i64;uint64 u64;float f32;double f64;Inner inner;Inner pair[2];bool ok";

/// The layout of the `Custom` struct of the WPILOG test file: 72 bytes, as WPILib's packer
/// writes it (bit-fields 3+4+1 in one byte, 5+11 in a `uint16`, two bools in a new byte).
#[test]
fn custom_layout() {
    let set = wpistruct::compile_schemas("test", &[("Custom", CUSTOM), ("Inner", "int16 id;char tag[8]")]).unwrap();
    let l = lower::lower(&set, &["Custom"], "custom", None);
    let s = l.schema.strukt(l.ids["Custom"]);
    assert_eq!(s.size, Some(72));
    let offsets: Vec<(&str, u32)> = s.fields.iter().map(|f| (f.name.as_str(), f.offset.unwrap())).collect();
    assert_eq!(
        offsets,
        [
            ("state", 0),
            ("bits0", 1),
            ("bits1", 2),
            ("bits2", 4),
            ("i32", 5),
            ("u32", 9),
            ("i64", 13),
            ("u64", 21),
            ("f32", 29),
            ("f64", 33),
            ("inner", 41),
            ("pair", 51),
            ("ok", 71)
        ]
    );
    let Ty::Named(id) = s.fields[1].ty else { panic!() };
    let TypeDef::Flags(f) = l.schema.ty(id) else { panic!() };
    let bits: Vec<(&str, u32, u32, BitKind)> =
        f.fields.iter().map(|b| (b.name.as_str(), b.bit, b.width, b.kind)).collect();
    assert_eq!(bits, [("a", 0, 3, BitKind::Signed), ("b", 3, 4, BitKind::Signed), ("flag", 7, 1, BitKind::Bool)]);
}

/// `Builder::compile_struct_schemas` output, snapshotted (the root crate compiles and runs it in
/// `tests/it/wpistruct.rs`).
#[test]
fn rust_types() {
    let set = wpistruct::compile_schemas("test", &[("Custom", CUSTOM), ("Inner", "int16 id;char tag[8]")]).unwrap();
    let text = wpistruct::rust_source(&set, &["Custom"], "custom", "::logspec_runtime", None);
    insta::assert_snapshot!("custom_rust", text);
}
