//! Issue 31's Spark line: the fleet aggregate on a standalone Spark cluster with two workers
//! against one, side by side in one run (BENCHMARKS.md, "Spark over raw logs").
//!
//! `cargo bench -p logspec-datafusion --bench spark` (optionally `-- --fleet 50 --fleet-mb 100
//! --rounds 3 --queries 3`). It lives beside `full_scan` (the engines over a fleet of raw logs,
//! the same fleet), where building it takes no more than the provider's crate, not the command's.
//! The fleet: `--fleet` copies with different names of a `--fleet-mb` R1 RLOG (the `rlog`
//! bench's input, `common/rlog_input.rs`; by default its 97 MB, as issue 31 asks: 50 copies of the
//! bench input), written once to a temporary folder and hard-linked under the other names (one
//! file's pages in the page cache; a copy where the file system has no hard links).
//! `benches/python/spark_bench.py` starts the cluster the Spark test starts (a master and two
//! workers of one core each) and times `SELECT count(*), min(value), max(value), avg(value)` over
//! `/SystemStats/BatteryVoltage` of every log through `logspec.spark`, in an application with one
//! executor (`spark.cores.max=1`: one worker) and one with an executor on each worker
//! (`spark.cores.max=2`), alternating. Each answer is checked against `tables::read` of one log.
//!
//! `$LOGSPEC_PYTHON` (default `python3`) must import `logspec` (built from this tree: `maturin
//! build --release` in `py/`, installed or on `PYTHONPATH`) and `pyspark`, and `java` must be on
//! the path; otherwise the bench says so and measures nothing.

/// The `rlog` bench's input builder (benches/common).
#[path = "../../benches/common/rlog_input.rs"]
mod rlog_input;

use std::path::Path;
use std::process::{Command, Stdio};

use logspec::log::{Open, Select};

const KEY: &str = "/SystemStats/BatteryVoltage";

/// The value of a `NAME VALUE` argument, or `default`.
fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.to_string())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let python = std::env::var("LOGSPEC_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .args(["-c", "import logspec.spark, pyspark"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let java = Command::new("java").arg("-version").stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok || !java {
        println!("spark: needs {python} with logspec and pyspark, and java; nothing measured");
        return;
    }
    let fleet: usize = arg("--fleet", "50").parse().expect("--fleet N");
    let fleet_mb: f64 = arg("--fleet-mb", "100").parse().expect("--fleet-mb N");
    let rounds = arg("--rounds", "3");
    let queries = arg("--queries", "3");

    let dir = std::env::temp_dir().join(format!("logspec-bench-spark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let small = rlog_input::build_r1(fleet_mb);
    let one = dir.join("robot_000.rlog");
    std::fs::write(&one, &small).expect("write a fleet log");
    for i in 1..fleet {
        let name = dir.join(format!("robot_{i:03}.rlog"));
        if std::fs::hard_link(&one, &name).is_err() {
            std::fs::write(&name, &small).expect("write a fleet log");
        }
    }
    // The answer, from the engine's in-memory read of one log.
    let read = logspec_engine::tables::read(&one, &Open { map: true, ..Open::default() }, &Select::default())
        .expect("read one log");
    let table = read.tables.iter().find(|t| t.name == KEY).expect("the key's table");
    let (mut rows, mut lo, mut hi) = (0usize, f64::INFINITY, f64::NEG_INFINITY);
    for b in &table.batches {
        let v = b.column_by_name("value").expect("value");
        let v = v.as_any().downcast_ref::<arrow_array::Float64Array>().expect("doubles");
        rows += v.len();
        for x in v.iter().flatten() {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(&python)
        .arg(root.join("benches/python/spark_bench.py"))
        .args(["--fleet", &dir.display().to_string(), "--table", KEY, "--rounds", &rounds, "--queries", &queries])
        .stderr(Stdio::inherit())
        .output()
        .expect("run spark_bench.py");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "spark_bench.py failed");
    let mut by = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let cores = v["cores"].as_u64().unwrap() as usize;
        assert_eq!(v["executors"].as_u64(), Some(cores as u64), "{line}: one executor per core");
        let a = &v["answer"];
        assert_eq!(a[0].as_u64(), Some((rows * fleet) as u64), "{line}: rows");
        assert_eq!((a[1].as_f64(), a[2].as_f64()), (Some(lo), Some(hi)), "{line}: min, max");
        by[cores - 1].0.push(v["seconds"].as_f64().unwrap());
        by[cores - 1].1.push(v["cpu_seconds"].as_f64().unwrap());
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let n = by[0].0.len();
    println!(
        "Spark, {fleet} RLOG R1 logs of {:.1} MB ({} rows of {KEY}); median of {n} queries per side; load {}",
        small.len() as f64 / 1e6,
        rows * fleet,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    let (t1, c1) = (median(by[0].0.clone()), median(by[0].1.clone()));
    let (t2, c2) = (median(by[1].0.clone()), median(by[1].1.clone()));
    println!("  one worker (1 executor, 1 core)    {t1:>7.2} s  workers' CPU {c1:>7.2} s");
    println!("  two workers (2 executors, 1 core)  {t2:>7.2} s  workers' CPU {c2:>7.2} s");
    println!("  two workers against one: {:.2}x faster (wall)", t1 / t2);
    println!("  every query (s): one {:?}, two {:?}", by[0].0, by[1].0);
}
