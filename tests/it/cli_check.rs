//! `logspec check` against a copy of the project's schemas and headers: clean, then with a
//! hand-edited header. And `logspec doc`, whose tables are checked against the C compiler.

use crate::scratch;

use crate::common;

use std::path::Path;

use common::logspec;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

#[test]
fn hand_edited_header_fails_check_with_a_diff() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = scratch::temp_dir().join(format!("logspec-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_dir(&root.join("schemas"), &tmp.join("schemas"));
    for generated in ["include", "python", "golden", "docs/formats"] {
        copy_dir(&root.join(generated), &tmp.join(generated));
    }
    let args = |t: &Path| {
        vec![
            "check".to_string(),
            "--root".into(),
            t.to_str().unwrap().into(),
            "--schemas".into(),
            t.join("schemas").to_str().unwrap().into(),
        ]
    };
    let run = |a: Vec<String>| logspec(&a.iter().map(String::as_str).collect::<Vec<_>>());

    let out = run(args(&tmp));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // A firmware engineer "fixes" an id by hand in the generated header.
    let h = tmp.join("include/usvlog/record_types.h");
    let text = std::fs::read_to_string(&h).unwrap();
    let edited = text.replacen("#define REC_ESC_OUTPUT        5", "#define REC_ESC_OUTPUT        50", 1);
    assert_ne!(edited, text, "the header should define REC_ESC_OUTPUT");
    std::fs::write(&h, edited).unwrap();

    let out = run(args(&tmp));
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8(out.stdout).unwrap();
    assert!(diff.contains("--- a/include/usvlog/record_types.h"), "{diff}");
    assert!(diff.contains("-#define REC_ESC_OUTPUT        50"), "{diff}");
    assert!(diff.contains("+#define REC_ESC_OUTPUT        5 "), "{diff}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("logspec gen"), "{stderr}");

    // `logspec gen` repairs it.
    let mut g = args(&tmp);
    g[0] = "gen".into();
    assert!(run(g.clone()).status.success());
    assert!(run(args(&tmp)).status.success());

    // The generated Python module is held to the same rule.
    let py = tmp.join("python/usvlog.py");
    let text = std::fs::read_to_string(&py).unwrap();
    std::fs::write(&py, text.replacen("REC_ESC_OUTPUT = 5", "REC_ESC_OUTPUT = 50", 1)).unwrap();
    let out = run(args(&tmp));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().contains("+REC_ESC_OUTPUT = 5\n"));
    assert!(run(g).status.success());
    assert!(run(args(&tmp)).status.success());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn unbumped_breaking_change_fails_check_and_lock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = scratch::temp_dir().join(format!("logspec-lockcheck-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_dir(&root.join("schemas"), &tmp.join("schemas"));
    let schemas = tmp.join("schemas");
    let s = schemas.to_str().unwrap();
    let schema = schemas.join("usvlog.toml");
    let text = std::fs::read_to_string(&schema).unwrap();
    // Renumber REC_SENSOR_GYRO without bumping FW_MODEL_SCHEMA, to an id no record has (ids a
    // user adds to schemas/usvlog.toml are small; 4000 is far from them).
    let renumbered = text.replace("name = \"REC_SENSOR_GYRO\"\nid = 13", "name = \"REC_SENSOR_GYRO\"\nid = 4000");
    assert_ne!(renumbered, text, "REC_SENSOR_GYRO (id 13, pinned by upstream usv-autopilot) is in schemas/usvlog.toml");
    std::fs::write(&schema, renumbered).unwrap();
    let out = logspec(&["check", "--root", tmp.to_str().unwrap(), "--schemas", s]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stdout.contains("breaking: record REC_SENSOR_GYRO was renumbered from id 13 to id 4000"), "{stdout}");
    assert!(stderr.contains("bump FW_MODEL_SCHEMA"), "{stderr}");
    let out = logspec(&["lock", "--schemas", s]);
    assert_eq!(out.status.code(), Some(1), "lock must refuse to overwrite history");

    // Bumped: the lock keeps the id-1 layout as history and adds id 2.
    let text =
        std::fs::read_to_string(&schema).unwrap().replace("schema_id = { value = 1,", "schema_id = { value = 2,");
    std::fs::write(&schema, text).unwrap();
    assert!(logspec(&["lock", "--schemas", s]).status.success());
    let lock = std::fs::read_to_string(schemas.join("usvlog.lock")).unwrap();
    assert!(lock.contains("[[schema]]\nid = 1\n") && lock.contains("[[schema]]\nid = 2\n"), "{lock}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn the_repository_is_not_stale() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = logspec(&["check", "--root", root, "--schemas", &format!("{root}/schemas")]);
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// The record tables of `logspec doc` give every field's offset and every record's size; the C
/// compiler, given the generated header, must agree (`offsetof`, `sizeof`).
#[test]
fn doc_tables_match_the_c_compiler() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = logspec(&["doc", &format!("{root}/schemas/usvlog.toml")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("<!-- @generated by logspec"), "{md}");

    // Parse the page: the record summary (name, size) and each record's field table.
    let mut sizes = Vec::new();
    let mut fields: Vec<(String, String, u64)> = Vec::new();
    let mut current: Option<String> = None;
    for line in md.lines() {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if let Some(rest) = line.strip_prefix("### `REC_") {
            current = Some(format!("REC_{}", rest.split('`').next().unwrap()));
        } else if line.starts_with("## ") {
            current = None;
        }
        if cells.len() == 5 && cells[1].starts_with("[`REC_") {
            let name = cells[1].trim_start_matches("[`").split('`').next().unwrap().to_string();
            sizes.push((name, cells[2].parse::<u64>().unwrap()));
        } else if let (Some(rec), 5) = (&current, cells.len()) {
            if let (Ok(off), Some(f)) = (cells[0].parse::<u64>(), cells[1].strip_prefix('`')) {
                fields.push((rec.clone(), f.trim_end_matches('`').to_string(), off));
            }
        }
    }
    // Every record of the schema has a row (the count is the schema's, so that a record added
    // to schemas/usvlog.toml needs no change here).
    let schema = logspec::codegen::compile_file(std::path::Path::new(&format!("{root}/schemas/usvlog.toml"))).unwrap();
    assert_eq!(sizes.len(), schema.records.len(), "{md}");
    assert!(sizes.len() >= 13, "the 13 upstream records at least: {sizes:?}");
    assert!(fields.len() > 50, "{fields:?}");

    let mut c =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"usvlog/record_types.h\"\nint main(void) {\n");
    let ty = |rec: &str| format!("usvlog_{}_t", rec.to_lowercase());
    for (rec, size) in &sizes {
        c += &format!("    printf(\"%d\\n\", (int)(sizeof({}) == {size}));\n", ty(rec));
    }
    for (rec, f, off) in &fields {
        c += &format!("    printf(\"%d\\n\", (int)(offsetof({}, {f}) == {off}));\n", ty(rec));
    }
    c += "    return 0;\n}\n";
    let dir = scratch::temp_dir().join(format!("logspec-doc-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("doc.c"), &c).unwrap();
    let exe = dir.join("doc");
    let cc = std::process::Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Werror", "-I", &format!("{root}/include"), "-o"])
        .arg(&exe)
        .arg(dir.join("doc.c"))
        .output()
        .expect("gcc is needed");
    assert!(cc.status.success(), "{}\n{c}", String::from_utf8_lossy(&cc.stderr));
    let run = std::process::Command::new(&exe).output().unwrap();
    let results = String::from_utf8(run.stdout).unwrap();
    let checks: Vec<String> = sizes
        .iter()
        .map(|(r, s)| format!("sizeof {r} == {s}"))
        .chain(fields.iter().map(|(r, f, o)| format!("offsetof {r}.{f} == {o}")))
        .collect();
    assert_eq!(results.lines().count(), checks.len());
    for (ok, what) in results.lines().zip(&checks) {
        assert_eq!(ok, "1", "the doc says {what}; the C compiler disagrees");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `docs/cli.md` is generated from the command-line definitions; regenerate it with
/// `logspec cli-reference > docs/cli.md` after changing a verb or option.
#[test]
fn cli_reference_is_current() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = logspec(&["cli-reference"]);
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let on_disk = std::fs::read_to_string(format!("{root}/docs/cli.md")).unwrap_or_default();
    assert!(generated == on_disk, "docs/cli.md is stale: run `cargo run -- cli-reference > docs/cli.md`");
    assert!(generated.contains("## `logspec dump`") && generated.contains("--quiet"));
}
