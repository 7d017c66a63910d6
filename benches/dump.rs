//! `logspec dump FILE > /dev/null` throughput, whole process, against memcpy of the same bytes
//! measured in the same run.
//!
//! `cargo bench --bench dump` (options after `--`):
//! - `--mb N` (200): the USVLOG input of the `usvlog` bench (`common/usvlog_input.rs`);
//! - `--rlog-mb N` (100): the R1 input of the `rlog` bench (`common/rlog_input.rs`, 97 MB);
//! - `--carla-mb N` (200), `--wpilog-mb N` (100): the inputs of the `carla` and `wpilog` benches
//!   (0 leaves a format out);
//! - `--file PATH`: another log as well (a ROS bag, say; repeatable);
//! - `--runs N` (5): runs of each line, the median reported;
//! - each input is dumped by the binary as it runs (on two threads where there are two cores)
//!   and with `LOGSPEC_THREADS=1` (the lines made on the reading thread, the generic path);
//! - `--bin PATH`: the `logspec` binary to time (default: this build's, release under `cargo
//!   bench`); `--versus PATH`: a second binary timed in turn with it (an older build), its
//!   figure and the ratio printed beside;
//! - `--keep DIR`: writes the inputs into DIR and keeps them (for profiling).
//!
//! Each input is written to a temporary file (in the page cache); each line is the median wall
//! time of `logspec dump FILE` with standard output on `/dev/null`, after a warm-up run, and the
//! median of memcpy of the file's bytes in this process, timed between the runs. The CPU time
//! (user and system, from `/usr/bin/time`) is the steadier figure on a shared machine: there the
//! wall clock mostly measures the share of the cores the process got. The goals (issue 35) are
//! 150 MB/s of USVLOG and 100 MB/s of RLOG on a machine whose memcpy copies 8.7 GB/s: 0.0172x
//! and 0.0115x memcpy.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{arg, mbps, median};

/// One `logspec dump FILE > /dev/null`: its wall time, and its CPU time (user and system) where
/// `/usr/bin/time` is there to tell it. `one` keeps it on one thread (`LOGSPEC_THREADS=1`).
fn dump(bin: &Path, file: &Path, one: bool) -> (Duration, Option<Duration>) {
    let timed = Path::new("/usr/bin/time").exists();
    let mut cmd = if timed {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "@@ %U %S"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    if one {
        cmd.env("LOGSPEC_THREADS", "1");
    }
    let t = Instant::now();
    let out = cmd.arg("dump").arg(file).stdout(Stdio::null()).stderr(Stdio::piped()).output().expect("run logspec");
    let wall = t.elapsed();
    assert!(out.status.success(), "logspec dump {} failed: {}", file.display(), out.status);
    let text = String::from_utf8_lossy(&out.stderr);
    let cpu = text.lines().find_map(|l| l.strip_prefix("@@ ")).and_then(|l| {
        let v: Vec<f64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        (v.len() == 2).then(|| Duration::from_secs_f64(v[0] + v[1]))
    });
    (wall, cpu)
}

/// `logspec dump FILE > /dev/null` on one thread, started on core `core` (the second copy of
/// [`common::two_copies`]).
fn one_thread(bin: &Path, file: &Path, core: usize) -> std::process::Child {
    let mut cmd = common::pinned(&core.to_string(), bin);
    cmd.env("LOGSPEC_THREADS", "1").arg("dump").arg(file).stdout(Stdio::null()).spawn().expect("run logspec")
}

/// The median wall time and, if every run has one, the median CPU time.
fn medians(v: Vec<(Duration, Option<Duration>)>) -> (Duration, Option<Duration>) {
    let cpu: Vec<Duration> = v.iter().filter_map(|x| x.1).collect();
    let cpu = (cpu.len() == v.len()).then(|| median(cpu));
    (median(v.into_iter().map(|x| x.0).collect()), cpu)
}

/// Every `NAME VALUE` of the command line with this name.
fn args_all(name: &str) -> Vec<String> {
    let a: Vec<String> = std::env::args().collect();
    a.windows(2).filter(|w| w[0] == name).map(|w| w[1].clone()).collect()
}

fn main() {
    let num = |name: &str, default: &str| arg(name, default).parse::<f64>().expect("a number");
    let runs = num("--runs", "5") as usize;
    let bin = args_all("--bin").pop().map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_logspec")), PathBuf::from);
    let versus = args_all("--versus").pop().map(PathBuf::from);
    let keep = args_all("--keep").pop().map(PathBuf::from);
    let dir =
        keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("logspec-bench-dump-{}", std::process::id())));
    std::fs::create_dir_all(&dir).unwrap();

    // (label, file, goal in MB/s at the 8.7 GB/s memcpy)
    let mut inputs: Vec<(String, PathBuf, Option<f64>)> = Vec::new();
    let mut write = |label: &str, name: &str, goal: Option<f64>, build: &dyn Fn() -> Vec<u8>| {
        let p = dir.join(name);
        eprintln!("building {label}...");
        std::fs::write(&p, build()).unwrap();
        inputs.push((label.to_string(), p, goal));
    };
    let mb = num("--mb", "200");
    if mb > 0.0 {
        write("USVLOG", "bench.usvlog", Some(150.0), &|| common::usvlog_input::build(mb));
    }
    let rlog_mb = num("--rlog-mb", "100");
    if rlog_mb > 0.0 {
        write("RLOG R1", "bench.rlog", Some(100.0), &|| common::rlog_input::build_r1(rlog_mb));
    }
    let carla_mb = num("--carla-mb", "200");
    if carla_mb > 0.0 {
        write("CARLA", "bench_carla.log", None, &|| common::carla_input::build(carla_mb).0);
    }
    let wpilog_mb = num("--wpilog-mb", "100");
    if wpilog_mb > 0.0 {
        write("WPILOG", "bench.wpilog", None, &|| common::wpilog_input::build(wpilog_mb));
    }
    for f in args_all("--file") {
        let p = PathBuf::from(&f);
        let label = p.file_name().map_or(f.clone(), |n| n.to_string_lossy().into_owned());
        inputs.push((label, p, None));
    }

    println!("binary: {}", bin.display());
    if let Some(v) = &versus {
        println!("versus: {}", v.display());
    }
    println!("medians of {runs} runs; memcpy of the same bytes timed between the runs");
    for (label, file, goal) in &inputs {
        let bytes = std::fs::read(file).expect("read the input");
        let n = bytes.len();
        let mut dst = vec![0u8; n];
        dst.copy_from_slice(&bytes);
        let mut memcpy = Vec::new();
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut one = Vec::new();
        let mut cores = Vec::new();
        let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
        // Warm-up: page cache, the binaries.
        dump(&bin, file, false);
        if let Some(v) = &versus {
            dump(v, file, false);
        }
        for _ in 0..runs {
            let t = Instant::now();
            dst.copy_from_slice(&bytes);
            memcpy.push(t.elapsed());
            std::hint::black_box(&dst);
            ours.push(dump(&bin, file, false));
            one.push(dump(&bin, file, true));
            if two_cores {
                cores.push(common::two_copies(|core| one_thread(&bin, file, core)));
            }
            if let Some(v) = &versus {
                theirs.push(dump(v, file, false));
            }
        }
        let m = mbps(n, median(memcpy));
        let (wall, cpu) = medians(ours);
        let d = mbps(n, wall);
        let cpu_x = cpu.map(|c| mbps(n, c) / m);
        let goal_text = goal.map_or(String::new(), |g| {
            let x = g / 8700.0;
            let verdict = |r: f64| if r >= x { "met" } else { "not met" };
            let by_cpu = cpu_x.map_or(String::new(), |c| format!(", by CPU time {}", verdict(c)));
            format!("; goal {g:.0} MB/s at 8.7 GB/s memcpy = {x:.4}x: wall {}{by_cpu}", verdict(d / m))
        });
        let cpu_text = |c: Option<Duration>| {
            c.map_or(String::new(), |c| format!(", CPU time {:.1} MB/s = {:.4}x", mbps(n, c), mbps(n, c) / m))
        };
        println!(
            "{label:<14} {:>6.1} MB  dump {d:>6.1} MB/s  {:.4}x memcpy ({m:.0} MB/s){}{goal_text}",
            n as f64 / 1e6,
            d / m,
            cpu_text(cpu)
        );
        let (ow, oc) = medians(one);
        let by_cpu = match (cpu, oc) {
            (Some(a), Some(b)) => format!(", {:.2}x by CPU time", b.as_secs_f64() / a.as_secs_f64()),
            _ => String::new(),
        };
        println!(
            "{:<22} one thread {:>6.1} MB/s  {:.4}x memcpy{}; two threads {:.2}x faster{by_cpu}{}",
            "",
            mbps(n, ow),
            mbps(n, ow) / m,
            cpu_text(oc),
            ow.as_secs_f64() / wall.as_secs_f64(),
            if cores.is_empty() {
                String::new()
            } else {
                format!(" (two one-thread dumps at once: {:.2}x)", common::median_f64(cores))
            }
        );
        if !theirs.is_empty() {
            let (vw, vc) = medians(theirs);
            let v = mbps(n, vw);
            let by_cpu = match (cpu, vc) {
                (Some(a), Some(b)) => format!(", {:.2}x by CPU time", b.as_secs_f64() / a.as_secs_f64()),
                _ => String::new(),
            };
            println!(
                "{:<24} versus {v:>6.1} MB/s  {:.4}x memcpy{}; this binary {:.2}x faster{by_cpu}",
                "",
                v / m,
                cpu_text(vc),
                d / v
            );
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
