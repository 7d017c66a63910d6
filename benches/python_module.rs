//! The generated pure-Python module (`python/usvlog.py`) reading a USVLOG file into columns,
//! against a stand-in of the upstream reader it replaces, measured in the same run.
//!
//! `cargo bench --bench python_module` (options: `-- --sizes 20,200 --runs 3 --modes
//! standin,numpy,plain,package`; the stand-in runs first, as the baseline of the ratios). The inputs are
//! built in memory with the record mix of `bench-inputs/gen_usvlog.py` (see
//! `common/usvlog_input.rs`) and written to a temporary directory. For each size, each reader runs
//! in its own `python3` process (`benches/python/read_bench.py`), the file in the page cache:
//! - `standin`: `benches/python/upstream_standin.py`, written the way usv-autopilot's
//!   `read_timeseries_bin` works (its code is not in this repository), the baseline;
//! - `numpy`: `read_usvlog(path, numpy=True)`;
//! - `plain`: `read_usvlog(path)` with numpy made unimportable;
//! - `package`: the Python package's `logspec.usvlog.read_timeseries_bin(path)` (issue 20 part 1),
//!   when `python3` can import `logspec` (build it with `pip install ./py`, release profile).
//!
//! Reports the read's time (medians; imports excluded): wall clock and the CPU time of all the
//! process's threads (the steadier figure on a loaded machine, where wall clock mostly measures
//! the CPU share a process got; a reader on two threads is faster in wall clock than in CPU time
//! only when both cores are free), the speed ratios against the stand-in, the process's peak RSS
//! (VmHWM, polled from /proc; Linux only) and, for numpy, the bytes of the arrays returned. Each
//! reader's name is printed before it runs (the 200 MB stand-in takes minutes on a loaded
//! machine), so a run cut short shows how far it got. Needs python3 and numpy; without them it
//! says so and measures nothing.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::arg;
use common::usvlog_input::build;

/// Runs `read_bench.py MODE FILE`.
fn run(mode: &str, file: &Path) -> common::PythonRead {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    common::python_run(
        "python3",
        &root.join("benches/python/read_bench.py"),
        mode,
        file,
        &std::env::join_paths([root.join("python"), root.join("benches/python")]).unwrap(),
    )
}

fn has(args: &[&str]) -> bool {
    Command::new("python3").args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn main() {
    if !has(&["--version"]) || !has(&["-c", "import numpy"]) {
        println!("python_module: needs python3 with numpy; nothing measured");
        return;
    }
    let sizes: Vec<f64> = arg("--sizes", "20,200").split(',').map(|s| s.trim().parse().expect("--sizes")).collect();
    let runs: usize = arg("--runs", "3").parse().expect("--runs");
    let dir = std::env::temp_dir().join(format!("logspec-bench-python-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for mb in sizes {
        let buf = build(mb);
        let file = dir.join(format!("{mb}mb.usvlog"));
        std::fs::write(&file, &buf).unwrap();
        drop(buf);
        let size = std::fs::metadata(&file).unwrap().len();
        // The big stand-in runs take minutes; fewer runs there.
        let n = if mb > 50.0 { 1 } else { runs };
        println!("\n{:.1} MB USVLOG ({} runs per reader, median):", size as f64 / 1e6, n);
        let (mut base, mut base_cpu) = (0.0, 0.0);
        let mut records = None;
        let package = has(&["-c", "import logspec.usvlog"]);
        if !package {
            println!("  (package: `import logspec.usvlog` fails in python3; `pip install ./py` to measure it)");
        }
        let modes = arg("--modes", "standin,numpy,plain,package");
        for mode in modes.split(',').filter(|m| *m != "package" || package) {
            print!("  {mode:<8}");
            let _ = std::io::stdout().flush();
            let (mut times, mut cpus) = (Vec::new(), Vec::new());
            let (mut rss, mut arrays) = (0, 0);
            for _ in 0..n {
                let r = run(mode, &file);
                assert_eq!(*records.get_or_insert(r.records), r.records, "{mode} read a different number of records");
                times.push(r.seconds);
                cpus.push(r.cpu_seconds.unwrap_or(f64::NAN));
                rss = rss.max(r.peak_kb);
                arrays = r.array_bytes;
            }
            times.sort_by(f64::total_cmp);
            cpus.sort_by(f64::total_cmp);
            let (t, cpu) = (times[times.len() / 2], cpus[cpus.len() / 2]);
            if mode == "standin" {
                (base, base_cpu) = (t, cpu);
            }
            let arrays = if arrays > 0 { format!(", arrays {:.0} MB", arrays as f64 / 1e6) } else { String::new() };
            println!(
                " {t:8.3} s  {:7.1} MB/s  {:6.2}x the stand-in  CPU {cpu:7.3} s  {:6.2}x the stand-in's  peak RSS {:6.0} MB{arrays}",
                size as f64 / 1e6 / t,
                base / t,
                base_cpu / cpu,
                rss as f64 / 1024.0
            );
        }
        std::fs::remove_file(&file).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
