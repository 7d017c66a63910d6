//! Iterating over a log's records in Python (`for r in logspec.open(path)`): the package builds
//! each record's dict in Rust from the decoded values. Measured in the same run as its baseline,
//! the records as JSON Lines from `logspec dump` parsed by `json.loads` (how the package made
//! them before, through the dump's text), on a USVLOG file (the record mix of
//! `common/usvlog_input.rs`) and an R1 RLOG file (`common/rlog_input.rs`).
//!
//! `cargo bench --bench python_records` (options: `-- --usvlog-mb 20 --rlog-mb 10 --runs 3`).
//! Each run is its own Python process, the file in the page cache; the clock excludes imports.
//! The package must be importable by `$LOGSPEC_PYTHON` (default `python3`): build it with
//! `maturin develop --release` in a venv and point `LOGSPEC_PYTHON` at the venv's python.
//! Without it the bench says so and measures nothing.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::arg;

fn python() -> String {
    std::env::var("LOGSPEC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Runs `records_bench.py MODE FILE`: the iteration's seconds and records.
fn run(mode: &str, file: &Path) -> (f64, u64) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python/records_bench.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(mode)
        .arg(file)
        .env("LOGSPEC_BIN", env!("CARGO_BIN_EXE_logspec"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stderr(Stdio::inherit())
        .output()
        .expect("spawn python");
    assert!(out.status.success(), "records_bench.py {mode} failed");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    (v["seconds"].as_f64().unwrap(), v["records"].as_u64().unwrap())
}

/// Median seconds of `n` runs, and the records of the last.
fn measure(mode: &str, file: &Path, n: usize) -> (f64, u64) {
    let mut times = Vec::new();
    let mut records = 0;
    for _ in 0..n {
        let (s, r) = run(mode, file);
        times.push(s);
        records = r;
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], records)
}

fn compare(what: &str, file: &Path, runs: usize) {
    let size = std::fs::metadata(file).unwrap().len() as f64 / 1e6;
    let (base, base_records) = measure("json", file, runs);
    let (ours, records) = measure("package", file, runs);
    assert_eq!(records, base_records, "{what}: the package and the dump give different record counts");
    println!("\n{size:.1} MB {what}, {records} records ({runs} runs each; medians):");
    println!("  dump + json.loads (baseline) {base:>7.3} s  {:>10.0} records/s", records as f64 / base);
    println!(
        "  logspec.open(path) records   {ours:>7.3} s  {:>10.0} records/s  {:.2}x the baseline",
        records as f64 / ours,
        base / ours
    );
}

fn main() {
    let ok = Command::new(python())
        .args(["-c", "import logspec"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("python_records: needs {} with the logspec package; nothing measured", python());
        return;
    }
    let usvlog_mb: f64 = arg("--usvlog-mb", "20").parse().expect("--usvlog-mb");
    let rlog_mb: f64 = arg("--rlog-mb", "10").parse().expect("--rlog-mb");
    let runs: usize = arg("--runs", "3").parse().expect("--runs");
    let dir = std::env::temp_dir().join(format!("logspec-bench-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let usvlog = dir.join("big.usvlog");
    std::fs::write(&usvlog, common::usvlog_input::build(usvlog_mb)).unwrap();
    compare("USVLOG", &usvlog, runs);
    let rlog = dir.join("big.rlog");
    std::fs::write(&rlog, common::rlog_input::build_r1(rlog_mb)).unwrap();
    compare("RLOG (R1)", &rlog, runs);
    let _ = std::fs::remove_dir_all(&dir);
}
