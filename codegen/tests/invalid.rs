//! Golden tests for schema diagnostics.
//!
//! Every `tests/invalid/<name>.toml` is a minimal schema with one kind of mistake (or, for
//! `several_errors`, several). Its first line lists the diagnostic codes it must produce:
//!
//! ```toml
//! # expect: E0101
//! ```
//!
//! The test compiles each file, checks that it fails with exactly the listed codes (so that a
//! mistake is reported once, without follow-on errors), and compares the rendered diagnostics with
//! the snapshot `tests/snapshots/invalid__<name>.snap`. To accept changed output, run
//! `INSTA_UPDATE=always cargo test -p logspec-codegen --test invalid` and review the diff.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The schema files of `tests/invalid`, sorted, as (name without `.toml`, text).
fn cases() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid");
    let mut out: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let name = p.file_stem().and_then(|s| s.to_str()).expect("UTF-8 file name").to_string();
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// The codes listed on the `# expect:` first line.
fn expected_codes(name: &str, text: &str) -> BTreeSet<String> {
    let first = text.lines().next().unwrap_or_default();
    let list = first
        .strip_prefix("# expect:")
        .unwrap_or_else(|| panic!("{name}.toml: the first line must be `# expect: E....`, found {first:?}"));
    let codes: BTreeSet<String> = list.split([' ', ',']).filter(|s| !s.is_empty()).map(str::to_string).collect();
    assert!(!codes.is_empty(), "{name}.toml: `# expect:` lists no code");
    codes
}

#[test]
fn invalid_schemas() {
    let cases = cases();
    assert!(cases.len() >= 20, "expected at least 20 invalid schemas, found {}", cases.len());
    let mut failed = Vec::new();
    for (name, text) in &cases {
        let result = std::panic::catch_unwind(|| check(name, text));
        if result.is_err() {
            failed.push(name.clone());
        }
    }
    assert!(failed.is_empty(), "failing invalid schemas: {}", failed.join(", "));
}

fn check(name: &str, text: &str) {
    let path = format!("tests/invalid/{name}.toml");
    let err = match logspec_codegen::compile_str(&path, text) {
        Ok(_) => panic!("{path} compiled, but it is meant to be invalid"),
        Err(e) => e,
    };
    assert!(!err.diagnostics.is_empty(), "{path}: an error without diagnostics");

    let want = expected_codes(name, text);
    let got: BTreeSet<String> = err.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect();
    let missing: Vec<&String> = want.difference(&got).collect();
    assert!(missing.is_empty(), "{path}: expected codes {missing:?} not reported; got {got:?}\n{}", err.render());
    let extra: Vec<&String> = got.difference(&want).collect();
    assert!(extra.is_empty(), "{path}: unexpected codes {extra:?} (follow-on errors?)\n{}", err.render());

    for d in &err.diagnostics {
        assert!(d.span.start <= d.span.end && d.span.end <= text.len(), "{path}: span {:?} outside the file", d.span);
    }

    // The same input always gives the same output.
    let again = logspec_codegen::compile_str(&path, text).expect_err("still invalid");
    assert_eq!(again.diagnostics, err.diagnostics, "{path}: diagnostics are not deterministic");

    let rendered = err.render();
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, rendered));
}

/// Every snapshot belongs to a schema that still exists.
#[test]
fn no_stale_snapshots() {
    let names: BTreeSet<String> = cases().into_iter().map(|(n, _)| n).collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let Ok(entries) = fs::read_dir(&dir) else { return };
    let mut stale = Vec::new();
    for entry in entries {
        let file = entry.expect("directory entry").file_name().to_string_lossy().into_owned();
        if let Some(name) = file.strip_prefix("invalid__").and_then(|f| f.strip_suffix(".snap")) {
            if !names.contains(name) {
                stale.push(file);
            }
        }
    }
    assert!(stale.is_empty(), "snapshots without a schema in tests/invalid (delete them): {stale:?}");
}
