//! Helpers shared by the benchmarks: medians of timed runs, MB/s, an allocation counter, and the
//! wall time and peak RSS of a whole `logspec` process.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::OsStr;
use std::hint::black_box;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts allocations; install with `#[global_allocator] static A: Counting = Counting;`.
pub struct Counting;
pub static ALLOCS: AtomicU64 = AtomicU64::new(0);
// An allocator that counts: `GlobalAlloc` is an unsafe trait.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

/// Allocations made so far.
pub fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let _ = black_box(f());
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

// `clock_gettime` and `getrusage` from the C library that std already links.
#[cfg(target_os = "linux")]
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

#[cfg(target_os = "linux")]
#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

/// `struct rusage` on 64-bit Linux: `ru_utime` and `ru_stime` (two `struct timeval`s), then
/// fourteen `long`s.
#[cfg(target_os = "linux")]
#[repr(C)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    rest: [i64; 14],
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
// `clock_gettime`, a call into the C library.
#[allow(unsafe_code)]
pub fn thread_cpu() -> Duration {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable `struct timespec` (two `long`s on 64-bit Linux).
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.sec as u64, ts.nsec as u32)
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu() -> Duration {
    unreachable!("thread CPU time needs Linux's CLOCK_THREAD_CPUTIME_ID")
}

/// The CPU time (user and system) of this process's children that have ended and been waited
/// for (`getrusage(RUSAGE_CHILDREN)`): the difference around [`process`] calls is theirs.
#[cfg(target_os = "linux")]
// `getrusage`, a call into the C library.
#[allow(unsafe_code)]
pub fn children_cpu() -> Duration {
    const RUSAGE_CHILDREN: i32 = -1;
    let mut u = Rusage { utime: [0; 2], stime: [0; 2], rest: [0; 14] };
    // SAFETY: `u` is a valid, writable `struct rusage` (18 `long`s on 64-bit Linux).
    let rc = unsafe { getrusage(RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_CHILDREN)");
    let tv = |t: [i64; 2]| Duration::new(t[0] as u64, (t[1] * 1000) as u32);
    tv(u.utime) + tv(u.stime)
}

#[cfg(not(target_os = "linux"))]
pub fn children_cpu() -> Duration {
    unreachable!("children's CPU time needs Linux's getrusage")
}

/// The median of `runs` timings of `f` by this thread's CPU time, after a warm-up.
pub fn cpu_time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let _ = black_box(f());
    median(
        (0..runs)
            .map(|_| {
                let t = thread_cpu();
                black_box(f());
                thread_cpu() - t
            })
            .collect(),
    )
}

pub fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Runs a command, returning its wall time and peak RSS (polled from /proc; Linux only).
pub fn process(args: &[&str]) -> (Duration, Option<u64>) {
    let t = Instant::now();
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).stdout(Stdio::null()).spawn().expect("spawn logspec");
    let peak = wait_peak_rss(&mut child, Duration::from_millis(2));
    (t.elapsed(), peak)
}

/// Waits for a child, polling its peak RSS in kB (`VmHWM` in /proc; Linux only) every `poll`.
pub fn wait_peak_rss(child: &mut Child, poll: Duration) -> Option<u64> {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = Some(peak.unwrap_or(0).max(kb));
            }
        }
        if child.try_wait().unwrap().is_some() {
            return peak;
        }
        std::thread::sleep(poll);
    }
}

/// Runs `python SCRIPT MODE FILE` (a reader script of `benches/python/`, which prints JSON with
/// `seconds`, `records` and `array_bytes`): those three, and the process's peak RSS in kB.
pub fn python_read(python: &str, script: &Path, mode: &str, file: &Path, pythonpath: &OsStr) -> (f64, u64, u64, u64) {
    let r = python_run(python, script, mode, file, pythonpath);
    (r.seconds, r.records, r.array_bytes, r.peak_kb)
}

/// What one run of a reader script measured.
pub struct PythonRead {
    /// The read's wall-clock seconds, and the CPU seconds of all the process's threads during
    /// it (`time.process_time()`; `None` when the script does not say).
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
    pub records: u64,
    pub array_bytes: u64,
    /// The process's peak RSS in kB (0 when /proc could not tell).
    pub peak_kb: u64,
}

/// Like [`python_read`], with the CPU time the script reports.
pub fn python_run(python: &str, script: &Path, mode: &str, file: &Path, pythonpath: &OsStr) -> PythonRead {
    let mut child = Command::new(python)
        .arg(script)
        .arg(mode)
        .arg(file)
        .env("PYTHONPATH", pythonpath)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn python");
    let peak = wait_peak_rss(&mut child, Duration::from_millis(5)).unwrap_or(0);
    let out = child.wait_with_output().unwrap();
    let name = script.display();
    assert!(out.status.success(), "{name} {mode} failed");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the reader script prints JSON");
    PythonRead {
        seconds: v["seconds"].as_f64().unwrap(),
        cpu_seconds: v["cpu_seconds"].as_f64(),
        records: v["records"].as_u64().unwrap(),
        array_bytes: v["array_bytes"].as_u64().unwrap(),
        peak_kb: peak,
    }
}

/// The value of a bench's `NAME VALUE` argument, or `default`.
pub fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.to_string())
}

/// The `--mb N` argument of a bench, or `default`.
pub fn arg_mb(default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == "--mb").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The median time of copying `buf`, the baseline every figure is a ratio of.
pub fn memcpy_time(buf: &[u8], runs: usize) -> Duration {
    let mut dst = vec![0u8; buf.len()];
    time(runs, || {
        dst.copy_from_slice(buf);
        dst[dst.len() / 2]
    })
}

/// `bin` run on the CPUs `cpus` (`taskset -c CPUS BIN`), or where the system puts it when
/// `taskset` is not found.
pub fn pinned(cpus: &str, bin: impl AsRef<OsStr>) -> Command {
    if !Path::new("/usr/bin/taskset").exists() {
        return Command::new(bin);
    }
    let mut c = Command::new("/usr/bin/taskset");
    c.args(["-c", cpus]).arg(bin);
    c
}

/// The second core as the machine gives it now, for the work a bench measures: `one` (a
/// command on one core, say) run alone, then twice at once (`pair`); returns twice its time
/// alone over the slower of the two (2.0: two copies ran as fast as one). A bench calls it
/// between its runs and reports the median beside its two-thread figures: a virtual machine's
/// host may slow both cores while they are busy together, and a two-thread figure then says
/// more about the host than about the code. A loop of the bench's own (a hash over memory) is
/// no stand-in: its chain of multiplies ran at 2.0x while two `logspec dump` processes did not.
pub fn two_copies(mut one: impl FnMut(usize) -> std::process::Child) -> f64 {
    let t = std::time::Instant::now();
    assert!(one(0).wait().expect("run the command").success());
    let alone = t.elapsed();
    let t = std::time::Instant::now();
    let (mut a, mut b) = (one(0), one(1));
    assert!(a.wait().expect("run the command").success() && b.wait().expect("run the command").success());
    2.0 * alone.as_secs_f64() / t.elapsed().as_secs_f64().max(1e-9)
}

/// The median of some ratios.
pub fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Whole-process figures of `logspec info` and `logspec dump` on a file (in the page cache).
pub struct WholeProcess {
    pub info_mbps: f64,
    /// Peak RSS of `info` on the whole file, and on `buf[..quarter_len]`, in kB.
    pub info_rss_kb: u64,
    pub quarter_rss_kb: u64,
    pub dump_mbps: f64,
    pub dump_rss_kb: u64,
}

/// Writes `buf` (and its first `quarter_len` bytes) to temporary files named `*.{ext}` and runs
/// `logspec info` (median of 3, after a warm-up) and `logspec dump > /dev/null` on them.
pub fn whole_process(buf: &[u8], quarter_len: usize, ext: &str) -> WholeProcess {
    let dir = std::env::temp_dir().join(format!("logspec-bench-{ext}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join(format!("big.{ext}"));
    std::fs::write(&big, buf).unwrap();
    let quarter = dir.join(format!("quarter.{ext}"));
    std::fs::write(&quarter, &buf[..quarter_len]).unwrap();
    let (big, quarter) = (big.to_str().unwrap(), quarter.to_str().unwrap());
    let _ = process(&["info", big]);
    let info: Vec<_> = (0..3).map(|_| process(&["info", big])).collect();
    let info_t = median(info.iter().map(|x| x.0).collect());
    let info_rss_kb = info.iter().filter_map(|x| x.1).max().unwrap_or(0);
    let quarter_rss_kb = (0..3).filter_map(|_| process(&["info", quarter]).1).max().unwrap_or(0);
    let dump = process(&["dump", big]);
    let _ = std::fs::remove_dir_all(&dir);
    WholeProcess {
        info_mbps: mbps(buf.len(), info_t),
        info_rss_kb,
        quarter_rss_kb,
        dump_mbps: mbps(buf.len(), dump.0),
        dump_rss_kb: dump.1.unwrap_or(0),
    }
}

pub mod carla_input;
pub mod rlog_input;
pub mod touch;
pub mod usvlog_input;
pub mod window;
pub mod wpilog_input;
