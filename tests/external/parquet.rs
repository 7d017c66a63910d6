//! `logspec export --parquet`, read back by independent engines: pyarrow (every table of every
//! sample log equals `logspec dump`, types and units as documented), DuckDB and PySpark (aggregates
//! over a fleet of 200 logs made from the USVLOG sample, against figures computed here from
//! `logspec dump`; Polars and DataFusion the same, through the calls docs/parquet.md shows), and
//! a corrupt log among good ones.
//!
//! The engines are Python packages (and Java for Spark): without them a trial is reported as
//! ignored, except under CI (`CI=true`), which installs them and where they fail instead.

use crate::scratch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::tools;
use tools::Need;

use logspec::formats::usvlog::*;
use logspec::runtime::{Event, SliceReader, Writer};

/// How many logs the fleet dataset has.
const FLEET: usize = 200;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn logspec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).output().expect("run logspec")
}

/// Where the scratch directory `name` of this process is.
fn scratch_path(name: &str) -> PathBuf {
    scratch::temp_dir().join(format!("logspec-parquet-{}-{name}", std::process::id()))
}

/// A fresh scratch directory for one trial.
fn scratch(name: &str) -> PathBuf {
    let dir = scratch_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg(root().join("tests/parquet").join(script))
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{script} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every log file of tests/data.
fn sample_logs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["usvlog", "rlog", "carla", "rosbag", "wpilog", "ulog", "dataflash"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/data").join(dir))
            .expect("list tests/data")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                !name.contains(".expected")
                    && [".usvlog", ".rlog", ".bin", ".BIN", ".log", ".bag", ".wpilog", ".ulg"]
                        .iter()
                        .any(|x| name.ends_with(x))
            })
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

fn every_sample_table_equals_dump() {
    let out = scratch("samples");
    let logs = sample_logs();
    assert!(logs.len() >= 15, "found only {} sample logs", logs.len());
    // Given as one directory: the export finds the logs in it.
    let data = root().join("tests/data");
    let r = logspec(&["export", "--parquet", out.to_str().unwrap(), data.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    // test_truncated.bag and the two DataFlash logs that end inside a message stop partway:
    // their complete rows are kept, and the exit status says so.
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    for log in ["test_truncated", "gen_df_corner", "pymavlink_test"] {
        assert!(stderr.contains(&format!("log={log} (")), "{log}: {stderr}");
    }
    assert_eq!(stderr.matches("FAILED").count(), 3, "{stderr}");
    let mut args = vec![env!("CARGO_BIN_EXE_logspec").to_string(), out.display().to_string()];
    args.extend(logs.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = python("check_tables.py", &args);
    assert!(report.contains("checked"), "{report}");
    eprintln!("{}", report.trim());
    let _ = std::fs::remove_dir_all(&out);
}

/// The figures of one log, from its dump: REC_NAV_SOLUTION rows, sum of x, min and max of psi,
/// first time (ns); and rows per channel.
#[derive(Debug, Default, Clone, PartialEq)]
struct LogFigures {
    rows: u64,
    sum_x: f64,
    min_psi: f64,
    max_psi: f64,
    first_ns: u64,
}

struct Fleet {
    out: PathBuf,
    /// By log name.
    logs: BTreeMap<String, LogFigures>,
    /// Rows per channel over the fleet.
    channels: BTreeMap<String, u64>,
}

/// The fleet: 200 USVLOGs made from the sample with the library's writer (positions shifted,
/// headings scaled, times offset and lengths cut per log), exported once, and the figures the
/// engines must find, computed from `logspec dump` of each log.
fn fleet() -> &'static Fleet {
    static FLEET_DATA: OnceLock<Fleet> = OnceLock::new();
    FLEET_DATA.get_or_init(|| {
        let dir = scratch("fleet");
        let logs_dir = dir.join("logs");
        std::fs::create_dir_all(&logs_dir).unwrap();
        let sample = std::fs::read(root().join("tests/data/usvlog/step.usvlog")).unwrap();
        let (_, mut reader) = SliceReader::<Usvlog>::new(&sample).expect("read the sample");
        let mut records = Vec::new();
        while let Some(ev) = reader.next_event() {
            if let Ok(Event::Record { raw, record }) = ev {
                records.push((raw.header.timestamp.unwrap_or(0), record));
            }
        }
        assert!(records.len() > 4000, "the sample has {} records", records.len());
        for k in 0..FLEET {
            let keep = records.len() - (k * 37) % 2000;
            let header = FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 0 };
            let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
            for (t, r) in &records[..keep] {
                let mut r = *r;
                if let UsvlogRecord::RecNavSolution(n) = &mut r {
                    n.x += k as f32 * 0.25;
                    n.psi *= 1.0 + k as f32 / 100.0;
                }
                w.write(t + k as u64 * 1_000_000, &r).unwrap();
            }
            std::fs::write(logs_dir.join(format!("run_{k:03}.usvlog")), w.finish().unwrap()).unwrap();
        }
        let out = dir.join("dataset");
        let r = logspec(&["export", "--parquet", out.to_str().unwrap(), logs_dir.to_str().unwrap()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let mut logs = BTreeMap::new();
        let mut channels = BTreeMap::new();
        for k in 0..FLEET {
            let name = format!("run_{k:03}");
            let dump = logspec(&["dump", logs_dir.join(format!("{name}.usvlog")).to_str().unwrap()]);
            assert!(dump.status.success());
            let mut f = LogFigures {
                min_psi: f64::INFINITY,
                max_psi: f64::NEG_INFINITY,
                first_ns: u64::MAX,
                ..Default::default()
            };
            for line in String::from_utf8(dump.stdout).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let channel = v["name"].as_str().unwrap().to_string();
                *channels.entry(channel.clone()).or_insert(0u64) += 1;
                if channel == "REC_NAV_SOLUTION" {
                    let psi = v["fields"]["psi"].as_f64().unwrap();
                    f.rows += 1;
                    f.sum_x += v["fields"]["x"].as_f64().unwrap();
                    f.min_psi = f.min_psi.min(psi);
                    f.max_psi = f.max_psi.max(psi);
                    f.first_ns = f.first_ns.min(v["t_us"].as_u64().unwrap() * 1000);
                }
            }
            logs.insert(name, f);
        }
        Fleet { out, logs, channels }
    })
}

/// Checks an engine's answer (JSON: `per_log` rows `[log, rows, sum_x, min_psi, max_psi,
/// first_ns]`, `per_channel` counts, `one_log` the rows of run_007 through a filter on `log`).
fn check_answer(engine: &str, answer: &str, fleet: &Fleet) {
    let v: serde_json::Value = serde_json::from_str(answer.trim().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{engine} answered {answer:?}: {e}"));
    let rows = v["per_log"].as_array().expect("per_log");
    assert_eq!(rows.len(), FLEET, "{engine}: logs");
    for row in rows {
        let log = row[0].as_str().unwrap();
        let want = &fleet.logs[log];
        assert_eq!(row[1].as_u64().unwrap(), want.rows, "{engine}: {log} rows");
        let sum = row[2].as_f64().unwrap();
        assert!(
            (sum - want.sum_x).abs() <= 1e-9 * want.sum_x.abs().max(1.0),
            "{engine}: {log} sum(x) {sum} vs {}",
            want.sum_x
        );
        assert_eq!(row[3].as_f64().unwrap(), want.min_psi, "{engine}: {log} min(psi)");
        assert_eq!(row[4].as_f64().unwrap(), want.max_psi, "{engine}: {log} max(psi)");
        if !row[5].is_null() {
            assert_eq!(row[5].as_u64().unwrap(), want.first_ns, "{engine}: {log} first time");
        }
    }
    let per_channel = v["per_channel"].as_object().expect("per_channel");
    let got: BTreeMap<String, u64> = per_channel.iter().map(|(k, n)| (k.clone(), n.as_u64().unwrap())).collect();
    assert_eq!(got, fleet.channels, "{engine}: rows per channel");
    assert_eq!(v["one_log"].as_u64(), Some(fleet.logs["run_007"].rows), "{engine}: log = 'run_007'");
}

fn duckdb_fleet_aggregates() {
    let fleet = fleet();
    let answer = python("duckdb_aggregates.py", &[fleet.out.to_str().unwrap()]);
    check_answer("DuckDB", &answer, fleet);
}

fn spark_fleet_aggregates() {
    let fleet = fleet();
    let answer = python("spark_aggregates.py", &[fleet.out.to_str().unwrap()]);
    check_answer("Spark", &answer, fleet);
}

/// The Polars example of docs/parquet.md (`scan_parquet` with `hive_partitioning=True`).
fn polars_fleet_aggregates() {
    let fleet = fleet();
    let answer = python("polars_aggregates.py", &[fleet.out.to_str().unwrap()]);
    check_answer("Polars", &answer, fleet);
}

/// The DataFusion example of docs/parquet.md (`register_parquet` with the `log` partition column).
fn datafusion_fleet_aggregates() {
    let fleet = fleet();
    let answer = python("datafusion_aggregates.py", &[fleet.out.to_str().unwrap()]);
    check_answer("DataFusion", &answer, fleet);
}

fn corrupt_log_among_good() {
    let dir = scratch("corrupt");
    let sample = std::fs::read(root().join("tests/data/usvlog/step.usvlog")).unwrap();
    for name in ["good_a", "good_b"] {
        std::fs::write(dir.join(format!("{name}.usvlog")), &sample).unwrap();
    }
    // Cut in the middle of a record, two thirds in.
    let cut = &sample[..sample.len() * 2 / 3 + 5];
    let bad = dir.join("cut.usvlog");
    std::fs::write(&bad, cut).unwrap();
    let dump = logspec(&["dump", bad.to_str().unwrap()]);
    assert!(!dump.status.success(), "dump of the cut log must fail");
    let mut complete: BTreeMap<String, u64> = BTreeMap::new();
    for line in String::from_utf8(dump.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *complete.entry(v["name"].as_str().unwrap().to_string()).or_insert(0) += 1;
    }
    let out = dir.join("out");
    let r = logspec(&[
        "export",
        "--parquet",
        out.to_str().unwrap(),
        dir.join("good_a.usvlog").to_str().unwrap(),
        bad.to_str().unwrap(),
        dir.join("good_b.usvlog").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("log=cut ("), "the summary names the failed log: {stderr}");
    assert!(stderr.contains("FAILED"), "{stderr}");
    assert!(stderr.contains("1 log(s) failed"), "{stderr}");
    let counts = python("count_rows.py", &[out.to_str().unwrap(), "cut"]);
    let got: BTreeMap<String, u64> = serde_json::from_str(counts.trim()).unwrap();
    assert_eq!(got, complete, "rows of the cut log: every complete record, nothing else");
    for good in ["good_a", "good_b"] {
        let counts = python("count_rows.py", &[out.to_str().unwrap(), good]);
        let got: BTreeMap<String, u64> = serde_json::from_str(counts.trim()).unwrap();
        assert_eq!(got.values().sum::<u64>(), 5201, "{good}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let pyarrow = [Need::PyModule("pyarrow")];
    let trials = vec![
        tools::trial("every_sample_table_equals_dump", &pyarrow, every_sample_table_equals_dump),
        tools::trial("duckdb_fleet_aggregates", &[Need::PyModule("duckdb")], duckdb_fleet_aggregates),
        tools::trial(
            "spark_fleet_aggregates",
            &[Need::PyModule("pyspark"), Need::Program("java")],
            spark_fleet_aggregates,
        ),
        tools::trial("polars_fleet_aggregates", &[Need::PyModule("polars")], polars_fleet_aggregates),
        tools::trial("datafusion_fleet_aggregates", &[Need::PyModule("datafusion")], datafusion_fleet_aggregates),
        tools::trial("corrupt_log_among_good", &pyarrow, corrupt_log_among_good),
    ];
    trials
}

/// Removes the fleet (about 70 MB), which the trials share, when they have all run.
pub fn cleanup() {
    let _ = std::fs::remove_dir_all(scratch_path("fleet"));
}
