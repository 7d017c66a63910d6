//! `logspec export --parquet` throughput and memory, whole process, on a USVLOG file.
//!
//! `cargo bench --bench parquet` (optionally `-- --mb 50`). The input is the USVLOG stream of
//! the `usvlog` bench (record mix of `bench-inputs/gen_usvlog.py`), written to a temporary file
//! (in the page cache). Reports, as medians of 3 runs:
//! - `logspec dump > /dev/null` on the same file (the baseline, measured in the same run);
//! - `export --parquet` of one file with one job: MB/s of input, the ratio to dump, and the
//!   ratio to memcpy of the input in this process (the issue's goal: at least 0.025x);
//! - the same export on one core (`taskset -c 0`) and on two (`taskset -c 0,1`): a log is read
//!   on one thread and encoded on others, so two cores should take it at least 1.7x as fast
//!   (where `taskset` is found and the machine has two cores);
//! - `export --parquet -j 2` of two such files: MB/s of input, the ratio to one file;
//! - peak RSS of the one-file export, for a quarter of the file, the file, and a file twice its
//!   size (flat as it grows);
//! - a user's own schema read through the IR interpreter: `info` and `export --parquet` of the
//!   same file given as `--schema schemas/usvlog.toml` (the path of any project's schema), as a
//!   ratio to the bundled generated reader on it (the goal: at least 0.5x);
//! - where `python3` has numpy, pandas and pyarrow: logspec's generated Python reader
//!   (`python/usvlog.py`, `read(numpy=True)`: columns per record type, the shape of the upstream
//!   reader's `read_timeseries_bin`) into a `pandas.DataFrame` per record type and
//!   `DataFrame.to_parquet`, on the same file, as a ratio (the upstream USV reader is not on
//!   this machine).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::usvlog_input::build;
use common::{arg_mb, mbps, median};

/// Wall time, CPU time (user + system) and peak RSS (kB) of a `logspec` run, through
/// `/usr/bin/time` when it is there (else wall time and RSS polled from /proc, CPU time unknown).
fn process(args: &[&str]) -> (Duration, Option<Duration>, Option<u64>) {
    process_on(None, args)
}

/// [`process`], on the cores `cpus` (`taskset -c CPUS`) when given.
fn process_on(cpus: Option<&str>, args: &[&str]) -> (Duration, Option<Duration>, Option<u64>) {
    if let Some(cpus) = cpus {
        let t = Instant::now();
        let status = common::pinned(cpus, env!("CARGO_BIN_EXE_logspec"))
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("run taskset");
        assert!(status.success(), "taskset -c {cpus} logspec {args:?}: {status}");
        return (t.elapsed(), None, None);
    }
    if Path::new("/usr/bin/time").exists() {
        let t = Instant::now();
        let out = Command::new("/usr/bin/time")
            .args(["-f", "@@ %U %S %M"])
            .arg(env!("CARGO_BIN_EXE_logspec"))
            .args(args)
            .stdout(Stdio::null())
            .output()
            .expect("run /usr/bin/time");
        let wall = t.elapsed();
        let text = String::from_utf8_lossy(&out.stderr);
        let line = text.lines().find_map(|l| l.strip_prefix("@@ ")).unwrap_or("");
        let v: Vec<f64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if let [u, s, m] = v[..] {
            return (wall, Some(Duration::from_secs_f64(u + s)), Some(m as u64));
        }
        return (wall, None, None);
    }
    let (wall, rss) = common::process(args);
    (wall, None, rss)
}

fn cpu_median(v: &[(Duration, Option<Duration>, Option<u64>)]) -> Option<Duration> {
    let c: Vec<Duration> = v.iter().filter_map(|x| x.1).collect();
    (c.len() == v.len()).then(|| median(c))
}

fn main() {
    let mb = arg_mb(200.0);
    let runs = 3;
    eprintln!("building a {mb} MB USVLOG stream...");
    let buf = build(mb);
    let dir = std::env::temp_dir().join(format!("logspec-bench-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.usvlog");
    let big2 = dir.join("big2.usvlog");
    // A quarter that ends on a whole super period (6948 bytes), as in the usvlog bench.
    let quarter = dir.join("quarter.usvlog");
    std::fs::write(&big, &buf).unwrap();
    std::fs::write(&big2, &buf).unwrap();
    std::fs::write(&quarter, &buf[..32 + (buf.len() / 4 - 32) / 6948 * 6948]).unwrap();
    let double = dir.join("double.usvlog");
    std::fs::write(&double, build(2.0 * mb)).unwrap();
    let out = dir.join("out");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (big_s, big2_s, quarter_s, double_s, out_s) = (s(&big), s(&big2), s(&quarter), s(&double), s(&out));
    println!("input: {} bytes", buf.len());

    let run = |args: &[&str]| {
        let _ = std::fs::remove_dir_all(&out);
        process(args)
    };
    let memcpy = common::memcpy_time(&buf, 5);
    let dump: Vec<_> = (0..runs).map(|_| process(&["dump", &big_s])).collect();
    let dump_t = median(dump.iter().map(|x| x.0).collect());
    let one: Vec<_> = (0..runs).map(|_| run(&["-q", "export", "--parquet", &out_s, "-j", "1", &big_s])).collect();
    let one_t = median(one.iter().map(|x| x.0).collect());
    let one_rss = one.iter().filter_map(|x| x.2).max().unwrap_or(0);
    let parquet_bytes = dir_size(&out);
    let two: Vec<_> =
        (0..runs).map(|_| run(&["-q", "export", "--parquet", &out_s, "-j", "2", &big_s, &big2_s])).collect();
    let two_t = median(two.iter().map(|x| x.0).collect());
    let two_rss = two.iter().filter_map(|x| x.2).max().unwrap_or(0);
    let rss_of = |file: &str| {
        (0..runs).filter_map(|_| run(&["-q", "export", "--parquet", &out_s, "-j", "1", file]).2).max().unwrap_or(0)
    };
    let quarter_rss = rss_of(&quarter_s);
    let double_rss = rss_of(&double_s);
    // One log on one core and on two, the runs interleaved so that the load of a shared machine
    // falls on both alike.
    let taskset = Command::new("taskset").arg("-V").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let on_cores = (taskset && cores >= 2).then(|| {
        let (mut one_core, mut two_cores, mut machine) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            for (cpus, v) in [("0", &mut one_core), ("0,1", &mut two_cores)] {
                let _ = std::fs::remove_dir_all(&out);
                v.push(process_on(Some(cpus), &["-q", "export", "--parquet", &out_s, "-j", "1", &big_s]).0);
            }
            machine.push(common::two_copies(|core| {
                let dir = out.with_extension(format!("copy{core}"));
                let _ = std::fs::remove_dir_all(&dir);
                common::pinned(&core.to_string(), env!("CARGO_BIN_EXE_logspec"))
                    .args(["-q", "export", "--parquet", dir.to_str().expect("a UTF-8 path"), "-j", "1", &big_s])
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("run taskset")
            }));
        }
        (median(one_core), median(two_cores), common::median_f64(machine))
    });

    // CPU time shows the cost when the machine is shared (wall time then includes waiting).
    let cpu = |v: &[(Duration, Option<Duration>, Option<u64>)], bytes: usize| {
        cpu_median(v).map_or("CPU time unknown".to_string(), |c| format!("{:.1} MB/s of CPU time", mbps(bytes, c)))
    };
    println!(
        "CPU: dump {}; export 1 file {}; export 2 files {}",
        cpu(&dump, buf.len()),
        cpu(&one, buf.len()),
        cpu(&two, 2 * buf.len())
    );
    let d = mbps(buf.len(), dump_t);
    let o = mbps(buf.len(), one_t);
    let t = mbps(2 * buf.len(), two_t);
    let m = mbps(buf.len(), memcpy);
    println!("memcpy of the input (in process)          {m:>7.1} MB/s");
    println!("logspec dump > /dev/null (baseline)       {d:>7.1} MB/s   1.00x");
    println!(
        "export --parquet, 1 file, -j 1            {o:>7.1} MB/s   {:.2}x dump   {:.4}x memcpy   peak RSS {} kB ({} MB file), {} kB ({} MB file), {} kB ({} MB file); {:.1} MB of Parquet",
        o / d,
        o / m,
        quarter_rss,
        buf.len() / 4_000_000,
        one_rss,
        buf.len() / 1_000_000,
        double_rss,
        buf.len() / 500_000,
        parquet_bytes as f64 / 1e6
    );
    println!(
        "export --parquet, 2 files, -j 2           {t:>7.1} MB/s   {:.2}x one file   peak RSS {} kB",
        t / o,
        two_rss
    );
    match on_cores {
        Some((c1, c2, machine)) => {
            let (a, b) = (mbps(buf.len(), c1), mbps(buf.len(), c2));
            println!("export --parquet, 1 file, taskset -c 0    {a:>7.1} MB/s");
            println!(
                "export --parquet, 1 file, taskset -c 0,1  {b:>7.1} MB/s   {:.2}x one core (two one-core exports at once: {machine:.2}x)",
                b / a
            );
        }
        None => println!("export --parquet on one core and on two: not run (needs taskset and two cores)"),
    }
    // A user's own schema: the same file through the interpreter, against the generated reader.
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml");
    let info_b = median((0..runs).map(|_| process(&["info", &big_s]).0).collect());
    let info_s = median((0..runs).map(|_| process(&["info", "--schema", schema, &big_s]).0).collect());
    let pq_s = median(
        (0..runs)
            .map(|_| run(&["-q", "export", "--schema", schema, "--parquet", &out_s, "-j", "1", &big_s]).0)
            .collect(),
    );
    println!(
        "info, --schema (interpreter)              {:>7.1} MB/s   {:.2}x the bundled reader ({:.1} MB/s)",
        mbps(buf.len(), info_s),
        info_b.as_secs_f64() / info_s.as_secs_f64(),
        mbps(buf.len(), info_b)
    );
    println!(
        "export --parquet, --schema (interpreter)  {:>7.1} MB/s   {:.2}x the bundled reader",
        mbps(buf.len(), pq_s),
        one_t.as_secs_f64() / pq_s.as_secs_f64()
    );
    match python_pandas(&big) {
        Some(p) => {
            let pm = mbps(buf.len(), p);
            println!(
                "python/usvlog.py + pandas.to_parquet      {pm:>7.1} MB/s   export --parquet is {:.1}x faster",
                o / pm
            );
        }
        None => println!("python/usvlog.py + pandas.to_parquet: not run (python3 with pandas and pyarrow not found)"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn dir_size(dir: &Path) -> u64 {
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            n += if p.is_dir() { dir_size(&p) } else { e.metadata().map_or(0, |m| m.len()) };
        }
    }
    n
}

/// One run of the generated Python reader into pandas and `to_parquet` (a table per record
/// type), or `None` without python3, pandas and pyarrow.
fn python_pandas(file: &Path) -> Option<Duration> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let probe =
        Command::new("python3").args(["-c", "import numpy, pandas, pyarrow"]).stderr(Stdio::null()).status().ok()?;
    if !probe.success() {
        return None;
    }
    let out = file.with_extension("pandas");
    // `read(numpy=True)` has the shape of the upstream reader's `read_timeseries_bin`: columns
    // per record type.
    let script = r#"
import sys, os
sys.path.insert(0, sys.argv[1])
import pandas as pd
import usvlog
log = usvlog.read(sys.argv[2], numpy=True)
os.makedirs(sys.argv[3], exist_ok=True)
for name, cols in log.columns.items():
    pd.DataFrame(cols).to_parquet(os.path.join(sys.argv[3], name + ".parquet"))
"#;
    let t = Instant::now();
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(root.join("python"))
        .arg(file)
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .ok()?;
    let d = t.elapsed();
    let _ = std::fs::remove_dir_all(&out);
    status.success().then_some(d)
}
