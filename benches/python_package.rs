//! The Python package `logspec` reading large logs into columns, measured in the same run as its
//! baselines:
//! - USVLOG (about 200 MB, the record mix of `bench-inputs/gen_usvlog.py`,
//!   `common/usvlog_input.rs`): `logspec.open(path).tables()` (pyarrow), the same turned into
//!   numpy arrays, and `logspec.usvlog.read_timeseries_bin` (numpy), against `benches/python/upstream_standin.py`, the stand-in of usv-autopilot's
//!   `read_timeseries_bin` (see BENCHMARKS.md), with each process's peak RSS against the bytes of
//!   the arrays it returned;
//! - RLOG (about 100 MB R1, `common/rlog_input.rs`): `tables()` into pyarrow, against
//!   AdvantageScope's decoder figure (36 MB/s with memcpy at 5.2 GB/s, `bench-inputs/README.md`)
//!   scaled by this run's memcpy, as `benches/rlog.rs` does.
//!
//! `cargo bench --bench python_package` (options: `-- --usvlog-mb 200 --rlog-mb 100 --runs 3`;
//! `--usvlog-mb 0` skips the USVLOG part, `--rlog-mb 0` the RLOG part).
//! Each read runs in its own Python process (`benches/python/package_bench.py`), the file in the
//! page cache; the clock excludes imports; USVLOG reports wall clock and the CPU time of the
//! process's threads. The package must be importable by `$LOGSPEC_PYTHON`
//! (default `python3`): build it with `maturin develop --release` in a venv and point
//! `LOGSPEC_PYTHON` at the venv's python. Without it the bench says so and measures nothing.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{arg, mbps, memcpy_time};

/// AdvantageScope's RLOG decoder and memcpy on the reference machine, MB/s.
const ADVANTAGESCOPE_MBPS: f64 = 36.0;
const REFERENCE_MEMCPY_MBPS: f64 = 5200.0;

fn python() -> String {
    std::env::var("LOGSPEC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Runs `package_bench.py MODE FILE`.
fn run(mode: &str, file: &Path) -> common::PythonRead {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    common::python_run(
        &python(),
        &root.join("benches/python/package_bench.py"),
        mode,
        file,
        root.join("benches/python").as_os_str(),
    )
}

/// Median seconds of `n` runs, the last run's rows and array bytes, and the highest peak RSS.
fn measure(mode: &str, file: &Path, n: usize) -> (f64, u64, u64, u64) {
    let (t, _, rows, bytes, rss) = measure_cpu(mode, file, n);
    (t, rows, bytes, rss)
}

/// Like [`measure`], with the median CPU seconds (all the process's threads) after the time.
fn measure_cpu(mode: &str, file: &Path, n: usize) -> (f64, f64, u64, u64, u64) {
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    let (mut rows, mut bytes, mut rss) = (0, 0, 0);
    for _ in 0..n {
        let r = run(mode, file);
        times.push(r.seconds);
        cpus.push(r.cpu_seconds.unwrap_or(f64::NAN));
        (rows, bytes) = (r.records, r.array_bytes);
        rss = rss.max(r.peak_kb);
    }
    times.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    (times[times.len() / 2], cpus[cpus.len() / 2], rows, bytes, rss)
}

fn main() {
    let ok = Command::new(python())
        .args(["-c", "import logspec, numpy, pyarrow"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("python_package: needs {} with the logspec package, numpy and pyarrow; nothing measured", python());
        return;
    }
    let usvlog_mb: f64 = arg("--usvlog-mb", "200").parse().expect("--usvlog-mb");
    let rlog_mb: f64 = arg("--rlog-mb", "100").parse().expect("--rlog-mb");
    let runs: usize = arg("--runs", "3").parse().expect("--runs");
    let dir = std::env::temp_dir().join(format!("logspec-bench-package-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // `--usvlog-mb 0` measures the RLOG part alone.
    if usvlog_mb > 0.0 {
        usvlog(&dir, usvlog_mb, runs);
    }

    // `--rlog-mb 0` measures the USVLOG part alone.
    if rlog_mb <= 0.0 {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let buf = common::rlog_input::build_r1(rlog_mb);
    let memcpy = mbps(buf.len(), memcpy_time(&buf, 5));
    let file = dir.join("big.rlog");
    std::fs::write(&file, &buf).unwrap();
    let size = buf.len() as f64 / 1e6;
    drop(buf);
    let advantagescope = ADVANTAGESCOPE_MBPS * memcpy / REFERENCE_MEMCPY_MBPS;
    println!("\n{size:.1} MB RLOG R1 ({runs} runs, median):");
    println!("  memcpy                       {memcpy:8.0} MB/s");
    println!("  AdvantageScope, scaled       {advantagescope:8.1} MB/s  1.00x");
    let (t, rows, bytes, rss) = measure("arrow", &file, runs);
    println!(
        "  package tables() (pyarrow)   {:8.1} MB/s  {:6.1}x AdvantageScope scaled ({:.1}x unscaled)  {t:.3} s  {rows} values  peak RSS {:.0} MB  arrays {:.0} MB",
        size / t,
        size / t / advantagescope,
        size / t / ADVANTAGESCOPE_MBPS,
        rss as f64 / 1024.0,
        bytes as f64 / 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The USVLOG part: the package's readers against the stand-in.
fn usvlog(dir: &Path, usvlog_mb: f64, runs: usize) {
    let file = dir.join("big.usvlog");
    std::fs::write(&file, common::usvlog_input::build(usvlog_mb)).unwrap();
    let size = std::fs::metadata(&file).unwrap().len() as f64 / 1e6;
    println!("\n{size:.1} MB USVLOG ({runs} runs per package reader, 1 of the stand-in; medians):");
    let (base, base_cpu, records, ..) = measure_cpu("standin", &file, 1);
    println!("  stand-in           {base:8.3} s  {:7.1} MB/s  1.00x  CPU {base_cpu:7.3} s", size / base);
    for mode in ["arrow", "numpy", "timeseries"] {
        let (t, cpu, rows, bytes, rss) = measure_cpu(mode, &file, runs);
        assert_eq!(rows, records, "{mode} read a different number of records");
        println!(
            "  package {mode:<10} {t:8.3} s  {:7.1} MB/s  {:6.1}x the stand-in  CPU {cpu:7.3} s  {:6.1}x  peak RSS {:6.0} MB  arrays {:6.0} MB  ({:.2}x the arrays)",
            size / t,
            base / t,
            base_cpu / cpu,
            rss as f64 / 1024.0,
            bytes as f64 / 1e6,
            rss as f64 * 1024.0 / bytes as f64
        );
    }
    std::fs::remove_file(&file).unwrap();
}
