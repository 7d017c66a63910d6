//! Lock files and the compatibility check: the real USVLOG drift incident, and one test per change
//! class.

mod support;

use logspec_ir::lock::{self, Verdict};

const HEAD: &str = include_str!("../../schemas/usvlog.toml");

/// The USVLOG layout at upstream commit 1f3c316: no ACTUATOR_REQ, so every record after id 2 has an
/// id one lower, and two fields still carry their old names.
fn usvlog_1f3c316() -> String {
    let mut out = String::new();
    let mut skip = false;
    for block in HEAD.split("\n[[record]]\n") {
        if block.contains("name = \"REC_ACTUATOR_REQ\"") {
            skip = true;
            continue;
        }
        let mut b = block.to_string();
        if !out.is_empty() {
            for id in 4..=13 {
                b = b.replace(&format!("\nid = {id}\n"), &format!("\nid = {}\n", id - 1));
            }
            out.push_str("\n[[record]]\n");
        }
        out.push_str(&b);
    }
    assert!(skip);
    out.replace(
        "{ name = \"u_s_req\", type = \"f32\", doc = \"Requested surge command.\" }",
        "{ name = \"u_s_cmd\", type = \"f32\" }",
    )
    .replace(
        "{ name = \"u_d_req\", type = \"f32\", doc = \"Requested differential command.\" }",
        "{ name = \"u_d_cmd\", type = \"f32\" }",
    )
}

fn compile(text: &str) -> logspec_ir::ir::Schema {
    logspec_codegen::compile_str("schemas/usvlog.toml", text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_real_drift_incident_is_caught() {
    let head_names: Vec<String> = compile(HEAD).records.iter().map(|r| r.name.clone()).collect();
    let names: Vec<&str> = head_names.iter().map(String::as_str).collect();
    let pinned = support::usvlog_pinned("the_real_drift_incident_is_caught", &names);
    assert_eq!(names, support::USVLOG_UPSTREAM, "{pinned}");
    let old = compile(&usvlog_1f3c316());
    assert_eq!(old.records.len(), 12, "{pinned}");
    let locked = lock::updated(None, &old);

    // HEAD's layout under the same FW_MODEL_SCHEMA 1: an error naming every renumbered record.
    let head = compile(HEAD);
    let report = lock::check(&locked, &head);
    assert!(report.is_error());
    let breaking: Vec<&str> =
        report.changes.iter().filter(|c| c.verdict == Verdict::Breaking).map(|c| c.message.as_str()).collect();
    for (name, from, to) in [("REC_ACTUATOR_CMD", 3, 4), ("REC_SENSOR_GYRO", 12, 13), ("REC_EKF_DIAG", 10, 11)] {
        let m = format!("record {name} was renumbered from id {from} to id {to}");
        assert!(breaking.contains(&m.as_str()), "missing {m:?} in {breaking:#?}");
    }
    assert_eq!(breaking.iter().filter(|m| m.contains("renumbered")).count(), 10);
    assert!(breaking.contains(&"new record REC_ACTUATOR_REQ reuses id 3, which was REC_ACTUATOR_CMD"));
    // The renamed fields are reported as compatible.
    assert!(report
        .changes
        .iter()
        .any(|c| c.verdict == Verdict::Compatible && c.message.contains("`u_s_cmd` renamed to `u_s_req`")));

    // With FW_MODEL_SCHEMA bumped to 2, the change is allowed and the old layout stays as history.
    let bumped = compile(&HEAD.replace("schema_id = { value = 1,", "schema_id = { value = 2,"));
    let report = lock::check(&locked, &bumped);
    assert!(!report.is_error() && report.lock_is_stale());
    assert_eq!(report.against, Some(1));
    let relocked = lock::updated(Some(&locked), &bumped);
    assert_eq!(relocked.schemas.iter().map(|s| s.id).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(relocked.schemas[0], locked.schemas[0]);
    let report = lock::check(&relocked, &bumped);
    assert!(!report.is_error() && !report.lock_is_stale(), "{report:?}");

    // The rendered lock parses back to the same value.
    let text = lock::render(&relocked, "schemas/usvlog.toml");
    assert_eq!(lock::parse(&text).unwrap(), relocked);
}

const SMALL: &str = r#"
[format]
name = "small"
schema_id = { value = 1, name = "SMALL_SCHEMA" }

[framing]
tag = "type"
length = "len"
fields = [{ name = "type", type = "u8" }, { name = "len", type = "u8" }]

[[record]]
name = "REC_A"
id = 1
doc = "A."
fields = [
  { name = "x", type = "f32", unit = "m" },
  { name = "y", type = "f32" },
  { name = "flag", type = "u8" },
  { pad = 3 },
]

[[record]]
name = "REC_B"
id = 2
fields = [{ name = "n", type = "u16" }]
"#;

fn verdicts(edited: &str) -> (bool, Vec<(Verdict, String)>) {
    let locked = lock::updated(None, &compile(SMALL));
    let report = lock::check(&locked, &compile(edited));
    (report.is_error(), report.changes.into_iter().map(|c| (c.verdict, c.message)).collect())
}

#[test]
fn change_classes() {
    // New record: compatible.
    let (err, c) = verdicts(&format!(
        "{SMALL}\n[[record]]\nname = \"REC_C\"\nid = 3\nfields = [{{ name = \"z\", type = \"u8\" }}]\n"
    ));
    assert!(!err);
    assert_eq!(c, [(Verdict::Compatible, "new record REC_C (id 3)".to_string())]);

    // Field type change: breaking.
    let (err, c) = verdicts(&SMALL.replace("{ name = \"y\", type = \"f32\" }", "{ name = \"y\", type = \"i32\" }"));
    assert!(err);
    assert_eq!(c, [(Verdict::Breaking, "REC_A: field `y` changed type from f32le to i32le".to_string())]);

    // Field reorder: breaking.
    let (err, c) = verdicts(&SMALL.replace(
        "{ name = \"x\", type = \"f32\", unit = \"m\" },\n  { name = \"y\", type = \"f32\" },",
        "{ name = \"y\", type = \"f32\" },\n  { name = \"x\", type = \"f32\", unit = \"m\" },",
    ));
    assert!(err);
    assert!(
        c.iter().any(|(v, m)| *v == Verdict::Breaking && m == "REC_A: field `x` moved from byte 0 to byte 4"),
        "{c:?}"
    );

    // Size change: breaking.
    let (err, c) = verdicts(&SMALL.replace("{ pad = 3 },", "{ pad = 7 },"));
    assert!(err);
    assert!(c.iter().any(|(_, m)| m == "REC_A: size changed from 12 bytes to 16 bytes"), "{c:?}");

    // Rename only: compatible (the wire layout is the same).
    let (err, c) = verdicts(&SMALL.replace("name = \"flag\"", "name = \"valid\""));
    assert!(!err);
    assert_eq!(c, [(Verdict::Compatible, "REC_A: field `flag` renamed to `valid` (same wire layout)".to_string())]);

    // Doc and unit only: nothing.
    let (err, c) =
        verdicts(&SMALL.replace("doc = \"A.\"", "doc = \"The A record.\"").replace("unit = \"m\"", "unit = \"mm\""));
    assert!(!err && c.is_empty(), "{c:?}");

    // Id reuse: REC_B removed and its id given to a new record.
    let (err, c) = verdicts(&SMALL.replace("name = \"REC_B\"", "name = \"REC_C\""));
    assert!(err);
    assert!(c.contains(&(Verdict::Breaking, "record REC_B (id 2) was removed".to_string())), "{c:?}");
    assert!(c.contains(&(Verdict::Breaking, "new record REC_C reuses id 2, which was REC_B".to_string())), "{c:?}");
}
