//! Issue 31's first speed line: a full-scan aggregate over one channel, DataFusion over the raw
//! logs (`LogTable`) against the same SQL in DuckDB over logspec's own Parquet export (snappy)
//! of the same logs, export time not counted, measured side by side in one run (BENCHMARKS.md).
//!
//! `cargo bench -p logspec-datafusion --bench full_scan` (optionally `-- --rlog-mb 100
//! --fleet 50 --fleet-mb 4 --usvlog-mb 200 --carla-mb 200 --bag PATH --rounds 5`). DuckDB is the Python package of py/requirements-test.txt,
//! run by `python3` (set `PYTHON`): each round a process opens a connection and times the query
//! once inside (start-up and import not counted). Inputs, in the page cache:
//!
//! - `rlog`: the R1 file of the `rlog` bench (the bundled AdvantageKit robot log's cycles
//!   written again and again, 98 keys), one log;
//! - `fleet`: `--fleet` copies of a `--fleet-mb` R1 file with different names;
//! - `usvlog` (`--usvlog-mb`, 0 for none): the `usvlog` bench's input, table `REC_SENSOR_GYRO`,
//!   column `z_gyro`;
//! - `carla` (`--carla-mb`, 0 for none): the `carla` bench's input, table `Position`, column
//!   `location.x` (DataFusion: `get_field(location, 'x')`);
//! - `--bag PATH`: a ROS bag (`gen_rosbag.py` of the bench-input generators, e.g. `--mb 200
//!   --compression none`), table `/imu`, column `angular_velocity.x`.
//!
//! The query: `SELECT count(*), min(C), max(C), avg(C)` over one column `C` of one table (RLOG:
//! `value` of the key `/SystemStats/BatteryVoltage`, a double); both engines' answers are checked
//! equal.

#[path = "../../benches/common/carla_input.rs"]
mod carla_input;
/// The `rlog`, `usvlog` and `carla` benches' input builders (benches/common).
#[path = "../../benches/common/rlog_input.rs"]
mod rlog_input;
#[path = "../../benches/common/usvlog_input.rs"]
mod usvlog_input;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use datafusion::prelude::SessionContext;
use logspec::log::{Open, Select};
use logspec_datafusion::LogTable;
use logspec_engine::parquet::{export, Codec, Options};

const KEY: &str = "/SystemStats/BatteryVoltage";

const DUCKDB: &str = r#"
import json, sys, time
import duckdb, pyarrow.parquet as pq
from pathlib import Path
out, table, c = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
d = next(d for d in out.iterdir() if (f := sorted(d.glob("*/*.parquet"))) and pq.read_metadata(f[0]).metadata[b"logspec.table"].decode() == table)
con = duckdb.connect()
q = f"SELECT count(*), CAST(min({c}) AS DOUBLE), CAST(max({c}) AS DOUBLE), avg({c}) FROM read_parquet('{d}/*/*.parquet')"
t = time.perf_counter()
r = con.sql(q).fetchall()[0]
print(json.dumps({"seconds": time.perf_counter() - t, "rows": r[0], "min": r[1], "max": r[2]}))
"#;

/// The value of a `NAME VALUE` argument, or `default`.
fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.to_string())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// (rows, min, max) and the time of DataFusion's answer.
fn datafusion(rt: &tokio::runtime::Runtime, logs: &[PathBuf], table: &str, c: &str) -> ((i64, f64, f64), Duration) {
    let t = Instant::now();
    let log_table = LogTable::try_new(logs, table).expect("the logs");
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(log_table)).expect("register");
    // A member of a struct column (`a.b`, as DuckDB writes it) through `get_field`.
    let c = match c.split_once('.') {
        Some((s, m)) => format!("get_field({s}, '{m}')"),
        None => c.to_string(),
    };
    let sql = format!("SELECT count(*), CAST(min({c}) AS DOUBLE), CAST(max({c}) AS DOUBLE), avg({c}) FROM t");
    let batches = rt.block_on(async { ctx.sql(&sql).await?.collect().await }).expect("query");
    let b = &batches[0];
    let got = (
        b.column(0).as_primitive::<Int64Type>().value(0),
        b.column(1).as_primitive::<Float64Type>().value(0),
        b.column(2).as_primitive::<Float64Type>().value(0),
    );
    (got, t.elapsed())
}

fn duckdb(python: &str, script: &Path, out: &Path, table: &str, c: &str) -> ((i64, f64, f64), Duration) {
    let o = Command::new(python).arg(script).arg(out).arg(table).arg(c).output().expect("run python");
    assert!(o.status.success(), "duckdb: {}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let got = (v["rows"].as_i64().unwrap(), v["min"].as_f64().unwrap(), v["max"].as_f64().unwrap());
    (got, Duration::from_secs_f64(v["seconds"].as_f64().unwrap()))
}

fn main() {
    let mb: f64 = arg("--rlog-mb", "100").parse().expect("--rlog-mb N");
    let fleet: usize = arg("--fleet", "50").parse().expect("--fleet N");
    let fleet_mb: f64 = arg("--fleet-mb", "4").parse().expect("--fleet-mb N");
    let rounds: usize = arg("--rounds", "5").parse().expect("--rounds N");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("duckdb_query.py");
    std::fs::write(&script, DUCKDB).expect("write the script");

    let one = dir.path().join("rlog").join("bench.rlog");
    std::fs::create_dir_all(one.parent().unwrap()).unwrap();
    let bytes = rlog_input::build_r1(mb);
    std::fs::write(&one, &bytes).expect("write the input");
    let small = rlog_input::build_r1(fleet_mb);
    let fleet_dir = dir.path().join("fleet");
    std::fs::create_dir_all(&fleet_dir).unwrap();
    for i in 0..fleet {
        std::fs::write(fleet_dir.join(format!("robot_{i:03}.rlog")), &small).expect("write a fleet log");
    }
    let mut inputs = vec![
        (format!("RLOG R1 {:.1} MB, one log", bytes.len() as f64 / 1e6), vec![one.clone()], KEY, "value"),
        (format!("{fleet} RLOG R1 logs of {:.1} MB", small.len() as f64 / 1e6), vec![fleet_dir.clone()], KEY, "value"),
    ];
    // One log of another bench's input, in a folder of its own.
    let alone = |name: &str, bytes: &[u8]| -> PathBuf {
        let path = dir.path().join(name).join(format!("bench.{name}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).expect("write the input");
        path
    };
    let usvlog_mb: f64 = arg("--usvlog-mb", "200").parse().expect("--usvlog-mb N");
    if usvlog_mb > 0.0 {
        let path = alone("usvlog", &usvlog_input::build(usvlog_mb));
        let mb = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
        inputs.push((format!("USVLOG {mb:.1} MB"), vec![path], "REC_SENSOR_GYRO", "z_gyro"));
    }
    let carla_mb: f64 = arg("--carla-mb", "200").parse().expect("--carla-mb N");
    if carla_mb > 0.0 {
        let path = alone("log", &carla_input::build(carla_mb).0);
        let mb = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
        inputs.push((format!("CARLA {mb:.1} MB"), vec![path], "Position", "location.x"));
    }
    let bag = arg("--bag", "");
    if !bag.is_empty() {
        let mb = std::fs::metadata(&bag).expect("--bag PATH").len() as f64 / 1e6;
        inputs.push((format!("ROS bag {mb:.1} MB"), vec![PathBuf::from(&bag)], "/imu", "angular_velocity.x"));
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    println!("full-scan aggregate over one column of one table; median of {rounds} rounds, DataFusion and DuckDB alternating");
    for (k, (label, logs, table, c)) in inputs.iter().enumerate() {
        let out = dir.path().join(format!("parquet{k}"));
        let how = Open { map: true, ..Open::default() };
        let e = export(Options {
            out: out.clone(),
            inputs: logs.clone(),
            select: Select::default(),
            input: how,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            codec: Codec::Snappy,
        })
        .expect("the Parquet export");
        assert!(e.logs.iter().all(|l| l.error.is_none()));
        let (mut tf, mut td) = (Vec::new(), Vec::new());
        let (mut af, mut ad) = (None, None);
        for r in 0..rounds {
            let mut run = |which: usize| {
                if which == 0 {
                    let (a, t) = datafusion(&rt, logs, table, c);
                    af = Some(a);
                    tf.push(t);
                } else {
                    let (a, t) = duckdb(&python, &script, &out, table, c);
                    ad = Some(a);
                    td.push(t);
                }
            };
            run(r % 2);
            run(1 - r % 2);
        }
        // Rows exactly; the least and greatest value to the last digits a cast of an f32 to a
        // double may print differently (DuckDB's and DataFusion's casts).
        let (a, d) = (af.expect("rounds"), ad.expect("rounds"));
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
        assert!(a.0 == d.0 && close(a.1, d.1) && close(a.2, d.2), "{label}: DataFusion {a:?} and DuckDB {d:?} agree");
        let (f, d) = (median(tf), median(td));
        let rows = a.0;
        println!(
            "  {label:<34} {table} {c}: rows {rows:>9}  DataFusion (raw logs) {:>7.3} s  DuckDB (snappy Parquet) {:>7.3} s  DuckDB / DataFusion {:.2}x",
            f.as_secs_f64(),
            d.as_secs_f64(),
            d.as_secs_f64() / f.as_secs_f64()
        );
    }
}
