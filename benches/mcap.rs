//! ROS 2 MCAP decoding throughput: every message of a ROS 2 recording decoded through the one
//! interface (`logspec::log::open`, then `Log::scan` of every channel into a sink that visits
//! each value, folding every number and string length into a sum), against, in the same run:
//!
//! - the `mcap` crate's own iteration (`mcap::MessageStream` over the file mapped, as the crate's
//!   documentation reads one: records, chunks and message bytes, no CDR decoded), the goal's
//!   1.0x;
//! - `rosbags` 0.11.9 deserialising every message (`AnyReader` and `deserialize_cdr`, timed
//!   inside Python around its loop), the goal's 20x, when `ROSBAGS_PYTHON` names a Python that
//!   has it (`python3 -m venv V && V/bin/pip install rosbags==0.11.9`);
//! - memcpy of the file, for scale;
//! - whole-process `logspec dump > /dev/null` and its peak RSS at the full size and a quarter of it
//!   (memory must not grow with the file).
//!
//! Two inputs, each of `--mb N` MB of message data (default 100):
//!
//! - the corner cases: the messages of `tests/data/ros2/gen_rosbags_corner.mcap` (every
//!   primitive, strings, nested and bounded arrays, `PointCloud2`, `Imu`, `TFMessage`, a
//!   big-endian message; about 5 bytes per value) repeated with log times continued, written by
//!   the `mcap` crate's writer (uncompressed chunks, as rosbag2 writes them; `--zstd` for zstd
//!   chunks);
//! - a robot's recording, when `ROSBAGS_PYTHON` is set (and not with `--zstd`): the topics,
//!   rates and contents of the ROS1 bag bench's input (Imu 200 Hz, PoseStamped 100 Hz, a 32 KiB
//!   PointCloud2 10 Hz) as ROS 2 messages, written by rosbags' own rosbag2 writer
//!   (`benches/python/gen_ros2_mcap.py`, which needs numpy too).
//!
//! `--keep DIR` writes the inputs there and leaves them (to time another build on them).
//! `--only scan|check|crate --file FILE` runs one reader alone on `FILE`, 20 times (`ONLY_RUNS`
//! to change it; for `perf` and `valgrind`), and builds nothing: `check` is the scan into a sink
//! that takes each message checked whole first.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use common::touch::scan_all;
use common::{arg, arg_mb, mbps, median, memcpy_time, process, thread_cpu};

/// The `mcap` crate's own iteration of every message (no CDR decoded); returns (messages, bytes).
fn mcap_iterate(buf: &[u8]) -> (u64, u64) {
    let (mut n, mut bytes) = (0u64, 0u64);
    for m in mcap::MessageStream::new(buf).expect("an MCAP file") {
        let m = m.expect("a message");
        n += 1;
        bytes += black_box(m.data.len()) as u64;
    }
    (n, bytes)
}

/// The test file's messages repeated to `mb` MB of message data, written by the `mcap` crate.
fn build(out: &Path, mb: f64, zstd: bool) -> (u64, u64) {
    let src = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ros2/gen_rosbags_corner.mcap")).unwrap();
    let mut msgs: Vec<(mcap::Message<'static>, u64)> = Vec::new();
    for m in mcap::MessageStream::new(&src).unwrap() {
        let m = m.unwrap();
        let t = m.log_time;
        msgs.push((m, t));
    }
    msgs.sort_by_key(|m| m.1);
    let t0 = msgs.first().map_or(0, |m| m.1);
    let span = msgs.last().map_or(0, |m| m.1) - t0 + 1_000_000;
    let per_round: usize = msgs.iter().map(|m| m.0.data.len()).sum();
    let rounds = ((mb * 1e6) / per_round as f64).ceil() as u64;
    let options = mcap::WriteOptions::new()
        .compression(zstd.then_some(mcap::Compression::Zstd))
        .profile("ros2")
        .library("logspec bench");
    let mut w = options.create(std::io::BufWriter::new(std::fs::File::create(out).unwrap())).unwrap();
    let mut ids: HashMap<u16, u16> = HashMap::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    for r in 0..rounds {
        for (m, t) in &msgs {
            let id = match ids.get(&m.channel.id) {
                Some(id) => *id,
                None => {
                    let s = m.channel.schema.as_ref().unwrap();
                    let schema = w.add_schema(&s.name, &s.encoding, &s.data).unwrap();
                    let id =
                        w.add_channel(schema, &m.channel.topic, &m.channel.message_encoding, &BTreeMap::new()).unwrap();
                    ids.insert(m.channel.id, id);
                    id
                }
            };
            let log_time = t + r * span;
            let h =
                mcap::records::MessageHeader { channel_id: id, sequence: n as u32, log_time, publish_time: log_time };
            w.write_to_known_channel(&h, &m.data).unwrap();
            n += 1;
            bytes += m.data.len() as u64;
        }
    }
    w.finish().unwrap();
    (n, bytes)
}

const ROSBAGS: &str = r#"
import sys, time
from rosbags.highlevel import AnyReader
from pathlib import Path
n = 0
with AnyReader([Path(sys.argv[1])]) as r:
    ts = r.typestore
    t = time.perf_counter()
    for c, _, raw in r.messages():
        ts.deserialize_cdr(raw, c.msgtype)
        n += 1
    print(time.perf_counter() - t, n)
"#;

/// Times rosbags on `file` (`n` messages, `bytes` of message data) and prints it against
/// logspec's scan (`t_scan`).
fn rosbags_line(python: &str, file: &Path, n: u64, bytes: u64, t_scan: Duration) {
    if let Some((t, m)) = rosbags(python, file) {
        assert_eq!(m, n, "rosbags read every message");
        println!(
            "rosbags 0.11.9 deserialize_cdr:  {:8.1} MB/s  ({:.3} s)  logspec is {:.1}x",
            mbps(bytes as usize, t),
            t.as_secs_f64(),
            t.as_secs_f64() / t_scan.as_secs_f64()
        );
    }
}

fn rosbags(python: &str, file: &Path) -> Option<(Duration, u64)> {
    let out = std::process::Command::new(python).args(["-c", ROSBAGS, file.to_str().unwrap()]).output().ok()?;
    if !out.status.success() {
        eprintln!("rosbags: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.split_whitespace();
    let secs: f64 = parts.next()?.parse().ok()?;
    let n: u64 = parts.next()?.parse().ok()?;
    Some((Duration::from_secs_f64(secs), n))
}

/// The `mcap` crate's iteration as its documentation shows it: the file mapped, then every
/// message of a `MessageStream` over the map (no CDR decoded); returns (messages, bytes).
// Maps the bench's own input, as the `mcap` crate's documentation reads a file.
#[allow(unsafe_code)]
fn mcap_mapped(p: &Path) -> (u64, u64) {
    let file = std::fs::File::open(p).expect("opens the file");
    // SAFETY: the bench's own input, which nothing changes while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("maps the file");
    mcap_iterate(&map)
}

/// The messages of an MCAP file and their bytes, by the `mcap` crate.
fn count(p: &Path) -> (u64, u64) {
    let file = std::fs::read(p).unwrap();
    mcap_iterate(&file)
}

/// Interleaved rounds of the `mcap` crate's iteration of the mapped file and logspec's scan of
/// the file opened as the command opens it (mapped), each once per round; prints the medians
/// (wall clock and the reading thread's CPU time) and returns the scan's.
fn compare(p: &Path, n: u64, bytes: u64) -> Duration {
    let rounds = 7;
    let (mut t_mcap, mut t_scan, mut t_check) = (Vec::new(), Vec::new(), Vec::new());
    let (mut c_mcap, mut c_scan, mut c_check) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (t, c) = (std::time::Instant::now(), thread_cpu());
        let (m, _) = black_box(mcap_mapped(p));
        t_mcap.push(t.elapsed());
        c_mcap.push(thread_cpu() - c);
        assert_eq!(m, n);
        for once in [true, false] {
            let (t, c) = (std::time::Instant::now(), thread_cpu());
            let s = black_box(scan_all(p, once));
            let (t, c) = (t.elapsed(), thread_cpu() - c);
            let (ts, cs) = if once { (&mut t_scan, &mut c_scan) } else { (&mut t_check, &mut c_check) };
            ts.push(t);
            cs.push(c);
            assert_eq!(s, n);
        }
    }
    let (t_mcap, t_scan, t_check) = (median(t_mcap), median(t_scan), median(t_check));
    // The reading thread's CPU time: the steadier figure on a loaded machine.
    let (c_mcap, c_scan, c_check) = (median(c_mcap), median(c_scan), median(c_check));
    println!(
        "mcap crate, every message (no CDR): {:8.1} MB/s of message data  ({:.3} s)",
        mbps(bytes as usize, t_mcap),
        t_mcap.as_secs_f64()
    );
    println!(
        "logspec scan, every message decoded: {:8.1} MB/s  ({:.3} s)  {:.2}x the mcap crate's iteration",
        mbps(bytes as usize, t_scan),
        t_scan.as_secs_f64(),
        t_mcap.as_secs_f64() / t_scan.as_secs_f64()
    );
    println!(
        "  by CPU time: mcap crate {:.3} s, logspec scan {:.3} s: {:.2}x the mcap crate's iteration",
        c_mcap.as_secs_f64(),
        c_scan.as_secs_f64(),
        c_mcap.as_secs_f64() / c_scan.as_secs_f64()
    );
    println!(
        "logspec scan, each message checked whole, then visited (a sink without try_visit): {:.3} s, by CPU time \
         {:.3} s; the one pass is {:.2}x faster by wall clock, {:.2}x by CPU time",
        t_check.as_secs_f64(),
        c_check.as_secs_f64(),
        t_check.as_secs_f64() / t_scan.as_secs_f64(),
        c_check.as_secs_f64() / c_scan.as_secs_f64()
    );
    t_scan
}

fn main() {
    let only = arg("--only", "");
    if !only.is_empty() {
        let file = arg("--file", "");
        assert!(!file.is_empty(), "--only needs --file FILE");
        let p = Path::new(&file);
        for _ in 0..std::env::var("ONLY_RUNS").map_or(20, |v| v.parse().unwrap()) {
            match only.as_str() {
                "scan" => black_box(scan_all(p, true)),
                "check" => black_box(scan_all(p, false)),
                "crate" => black_box(mcap_mapped(p).0),
                other => panic!("--only {other}: scan, check or crate"),
            };
        }
        return;
    }
    let mb = arg_mb(100.0);
    let zstd = std::env::args().any(|a| a == "--zstd");
    let keep = arg("--keep", "");
    let dir = match keep.as_str() {
        "" => std::env::temp_dir().join(format!("logspec-bench-mcap-{}", std::process::id())),
        k => std::path::PathBuf::from(k),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.mcap");
    let quarter = dir.join("quarter.mcap");
    let (n, bytes) = build(&big, mb, zstd);
    build(&quarter, mb / 4.0, zstd);
    let file = std::fs::read(&big).unwrap();
    println!(
        "input: the corner-case messages repeated, {n} messages, {:.1} MB of message data, file {:.1} MB ({})",
        bytes as f64 / 1e6,
        file.len() as f64 / 1e6,
        if zstd { "zstd chunks" } else { "uncompressed chunks" }
    );
    let t_memcpy = memcpy_time(&file, 5);
    println!("memcpy of the file:              {:8.1} MB/s", mbps(file.len(), t_memcpy));
    drop(file);
    let t_scan = compare(&big, n, bytes);
    if let Ok(python) = std::env::var("ROSBAGS_PYTHON") {
        rosbags_line(&python, &big, n, bytes, t_scan);
    } else {
        println!("rosbags: set ROSBAGS_PYTHON to a Python with rosbags 0.11.9 to time it here");
    }
    match std::env::var("ROSBAGS_PYTHON") {
        Ok(python) if !zstd => {
            let robot = dir.join("robot.mcap");
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/python/gen_ros2_mcap.py");
            let out = std::process::Command::new(&python)
                .args([script, robot.to_str().unwrap(), "--mb", &mb.to_string()])
                .output()
                .expect("runs the generator");
            assert!(out.status.success(), "gen_ros2_mcap.py: {}", String::from_utf8_lossy(&out.stderr));
            let (n, bytes) = count(&robot);
            println!(
                "input: a robot's recording (Imu 200 Hz, PoseStamped 100 Hz, 32 KiB PointCloud2 10 Hz; rosbags' \
                 writer), {n} messages, {:.1} MB of message data",
                bytes as f64 / 1e6
            );
            let t_scan = compare(&robot, n, bytes);
            rosbags_line(&python, &robot, n, bytes, t_scan);
        }
        _ => println!("the robot's recording: set ROSBAGS_PYTHON to a Python with rosbags 0.11.9 and numpy to time it"),
    }
    for (what, p) in [("quarter", &quarter), ("full", &big)] {
        let (t, rss) = process(&["dump", p.to_str().unwrap()]);
        println!(
            "logspec dump > /dev/null, {what} size: {:.3} s, peak RSS {} MB",
            t.as_secs_f64(),
            rss.map_or("?".into(), |k| format!("{:.1}", k as f64 / 1024.0))
        );
    }
    if keep.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
