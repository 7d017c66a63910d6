//! Helpers shared by the benchmarks: medians of timed runs, MB/s, an allocation counter, and the
//! wall time and peak RSS of a whole `logspec` process.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts allocations; install with `#[global_allocator] static A: Counting = Counting;`.
pub struct Counting;
pub static ALLOCS: AtomicU64 = AtomicU64::new(0);
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

pub fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Runs a command, returning its wall time and peak RSS (polled from /proc; Linux only).
pub fn process(args: &[&str]) -> (Duration, Option<u64>) {
    let t = Instant::now();
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).stdout(Stdio::null()).spawn().expect("spawn logspec");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = Some(kb);
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (t.elapsed(), peak)
}
