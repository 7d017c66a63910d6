//! The generated Python module (`python/usvlog.py`) run with the machine's python3: it decodes the
//! bundled sample to the independent reference decoder's values and to exactly what the Rust
//! decoder (`logspec dump`) prints, reports faults where they are, and agrees with Rust and C on the
//! golden vectors (`golden/<format>.json`) byte for byte.
//!
//! python3 and gcc are external tools. When one is missing the test says so loudly and passes,
//! except under CI (`CI` set), where a missing tool is a failure: CI installs them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{assert_lines_eq, data, jsonl, logspec};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `tool` can be run. A missing tool is reported; under CI it fails the test.
fn have(tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !ok {
        let msg = format!("`{tool}` is not on PATH, so this check did not run");
        assert!(std::env::var_os("CI").is_none(), "{msg}; CI must install it");
        eprintln!("\n*** NOTICE: {msg}.\n");
    }
    ok
}

/// Runs a Python snippet with `python/` on the module path.
fn python(script: &str, args: &[&str]) -> Output {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .env("PYTHONPATH", root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3")
}

fn python_dump(file: &Path) -> Output {
    Command::new("python3").arg(root().join("python/usvlog.py")).arg("dump").arg(file).output().expect("run python3")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cross_language").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn python_decodes_the_sample_to_the_reference_and_the_rust_values() {
    if !have("python3") {
        return;
    }
    let sample = data("usvlog/step.usvlog");
    let out = python_dump(&sample);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let py = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    assert_lines_eq(&py, &expected);
    let rust = logspec(&["dump", sample.to_str().unwrap()]);
    assert!(rust.status.success());
    assert_lines_eq(&py, &jsonl(&String::from_utf8(rust.stdout).unwrap()));
}

/// `read_usvlog` (the shape of upstream's `read_timeseries_bin`): header, counts and columns
/// against the reference summary and the reference dump's values.
#[test]
fn python_columns_match_the_reference_summary() {
    if !have("python3") {
        return;
    }
    let script = r#"
import json, sys, usvlog
log = usvlog.read_usvlog(sys.argv[1])
print(json.dumps({
    "header": {"magic": log.header["magic"].decode(), "fw_model_schema": log.header["fw_model_schema"], "t0_us": log.header["t0_us"]},
    "records_total": log.records_total, "record_counts": log.counts, "bytes_consumed": log.bytes_consumed,
    "unknown_records": log.unknown, "yaw_psi_d": log.columns["REC_YAW_CTRL_DEBUG"]["psi_d"],
    "yaw_t_us": log.columns["REC_YAW_CTRL_DEBUG"]["t_us"],
}))
"#;
    let out = python(script, &[data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("usvlog/step.expected.summary.json")).unwrap()).unwrap();
    for key in ["records_total", "record_counts", "bytes_consumed", "unknown_records"] {
        assert_eq!(got[key], summary[key], "{key}");
    }
    for key in ["magic", "fw_model_schema", "t0_us"] {
        assert_eq!(got["header"][key], summary["header"][key], "header.{key}");
    }
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    let yaw: Vec<_> = expected.iter().filter(|r| r["name"] == "REC_YAW_CTRL_DEBUG").collect();
    let psi_d: Vec<_> = yaw.iter().map(|r| r["fields"]["psi_d"].as_f64().unwrap()).collect();
    let t_us: Vec<_> = yaw.iter().map(|r| r["t_us"].as_u64().unwrap()).collect();
    let got_psi: Vec<f64> = got["yaw_psi_d"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let got_t: Vec<u64> = got["yaw_t_us"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(got_psi, psi_d);
    assert_eq!(got_t, t_us);
}

/// A truncated file and a corrupt length: every complete record first, then an error that names
/// the file, byte offset, record index and what was expected and found.
#[test]
fn python_reports_faults_after_every_complete_record() {
    if !have("python3") {
        return;
    }
    let dir = scratch("faults");
    let bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    // Header (32) + NAV (12 + 24) + GUIDANCE (12 + 16) = 96, then 10 bytes of MISSION_STATE.
    let cut = dir.join("cut.usvlog");
    std::fs::write(&cut, &bytes[..96 + 12 + 10]).unwrap();
    let out = python_dump(&cut);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(jsonl(&String::from_utf8(out.stdout).unwrap()).len(), 2);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.usvlog: byte 96: record #2 (REC_MISSION_STATE): truncated payload: 10 of 32 bytes"),
        "{err}"
    );

    // A known record whose length disagrees with its layout (strict, like the reference reader).
    let mut bad = bytes[..96 + 12 + 32].to_vec();
    bad[96 + 10] = 31;
    let f = dir.join("len.usvlog");
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("byte 96: record #2 (REC_MISSION_STATE): payload length 31, expected 32"), "{err}");

    // An unknown schema id fails fast, naming the field.
    let mut bad = bytes[..96].to_vec();
    bad[6] = 7;
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("field fw_model_schema: fw_model_schema 7 is not one this reader knows (1)"), "{err}");

    // A bad magic names the field, what was expected and what was found.
    let mut bad = bytes[..96].to_vec();
    bad[0] = b'X';
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("field magic: FileHeader: expected b'USVLOG', found b'XSVLOG'"), "{err}");

    // An unknown id is skipped by its length and kept; then a record whose payload is missing.
    let mut bad = bytes[..32].to_vec();
    bad.extend_from_slice(&[0; 8]);
    bad.extend_from_slice(&200u16.to_le_bytes());
    bad.extend_from_slice(&3u16.to_le_bytes());
    bad.extend_from_slice(&[0xde, 0xad, 0xbe]);
    bad.extend_from_slice(&bytes[32..32 + 12]);
    std::fs::write(&f, &bad).unwrap();
    let out = python_dump(&f);
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines[0]["payload_hex"], "deadbe");
    assert_eq!(lines[0]["name"], serde_json::Value::Null);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("byte 47: record #1 (REC_NAV_SOLUTION): truncated payload: 0 of 24 bytes"), "{err}");
}
