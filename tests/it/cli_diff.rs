//! `logspec diff --against <git-ref>` in a scratch git repository.

use crate::scratch;

use crate::common;

use std::path::Path;
use std::process::Command;

use common::logspec;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git is needed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn classifies_changes_since_a_revision() {
    let tmp = scratch::temp_dir().join(format!("logspec-diff-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let schemas = tmp.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let schema = schemas.join("usvlog.toml");
    let head = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml")).unwrap();
    std::fs::write(&schema, &head).unwrap();
    git(&tmp, &["init", "-q"]);
    git(&tmp, &["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
    git(&tmp, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
    let s = schemas.to_str().unwrap();
    let diff = || logspec(&["diff", "--against", "HEAD", "--schemas", s]);

    // A unit change and a new record: cosmetic and compatible.
    let edited = head.replace("{ name = \"x\", type = \"f32\", unit = \"m\", doc = \"North position.\" }", "{ name = \"x\", type = \"f32\", unit = \"mm\", doc = \"North position.\" }")
        + "\n[[record]]\nname = \"REC_DIFF_TEST_ADDED\"\nid = 4001\nfields = [{ name = \"volts\", type = \"f32\", unit = \"V\" }]\n";
    std::fs::write(&schema, &edited).unwrap();
    let out = diff();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("compatible: new record REC_DIFF_TEST_ADDED (id 4001)"), "{stdout}");
    assert!(stdout.contains("cosmetic: REC_NAV_SOLUTION: field `x` unit changed from m to mm"), "{stdout}");

    // A retyped field without a bump: breaking, exit 1.
    std::fs::write(&schema, edited.replace("{ name = \"idx\", type = \"u16\"", "{ name = \"idx\", type = \"i16\""))
        .unwrap();
    let out = diff();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("breaking: REC_MISSION_STATE: field `idx` changed type from u16le to i16le"), "{stdout}");
    assert!(String::from_utf8(out.stderr).unwrap().contains("bump"));

    // The same with FW_MODEL_SCHEMA bumped: allowed.
    let bumped = edited
        .replace("{ name = \"idx\", type = \"u16\"", "{ name = \"idx\", type = \"i16\"")
        .replace("schema_id = { value = 1,", "schema_id = { value = 2,");
    std::fs::write(&schema, bumped).unwrap();
    let out = diff();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().contains("FW_MODEL_SCHEMA bumped to 2"));
    let _ = std::fs::remove_dir_all(&tmp);
}
