//! PX4 ULog reading against pyulog (the reference decoder of the test data), timed side by side
//! in one run, and memcpy of the same bytes.
//!
//! `cargo bench --bench ulog` (options: `-- --mb 50 --runs 3`). The input is a real log
//! (`tests/data/ulog/pyulog_sample_logging_tagged_and_default_params.ulg`: PX4, 107 formats, 96
//! subscriptions of which 37 multi-instance, tagged logged strings, default parameters) grown to
//! `--mb` MB: the whole file once (its header, flag bits and definitions section first), then the
//! messages of its data section other than definitions (Data, logged strings, Sync, Dropout)
//! again and again. Reports, as medians:
//! - memcpy of the whole buffer;
//! - reading every message with every field of every Data message decoded into a visitor
//!   (`Reader::next_message`, `Decoder::visit_as`, the dump's path without the JSON text) in
//!   memory, in place (`Reader::from_slice`, as the command reads a mapped file);
//! - whole-process `logspec dump > /dev/null` and `logspec info`, with peak RSS on the file and on
//!   its first quarter (memory must not grow with the file);
//! - pyulog's `ULog(path)` on the same file in its own Python process
//!   (`benches/python/pyulog_bench.py`), which must keep as many Data messages as logspec decodes:
//!   its full parse (every message read, every topic's fields as numpy arrays), the figure both
//!   goals are held to. `info` is compared with it too: it is what pyulog's own `ulog_info` calls
//!   to print its summary (message counts per topic, time span), the work `logspec info` does;
//!   `ULog(path, parse_header_only=True)` reads no Data message and is printed for scale only.
//!
//! Python: `LOGSPEC_PYTHON` (default `python3`) with pyulog 1.3.0; without it the bench says so
//! and times logspec alone.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::touch::Touch;
use common::{arg, arg_mb, children_cpu, cpu_time, mbps, median, memcpy_time, process, time};
use logspec::formats::ulog::{Event, Reader, SliceReader};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// Every message read, every field of every Data message decoded: the messages, and the Data
/// messages among them.
fn read_all(buf: &[u8]) -> (u64, u64) {
    let mut r = SliceReader::from_slice(buf).expect("the bench input has a ULog header");
    let mut touch = Touch;
    let (mut n, mut data) = (0, 0);
    while let Some(m) = r.next_message() {
        let m = m.expect("the bench input reads");
        n += 1;
        if let Event::Data { subscription: Some(s), payload, .. } = m.event {
            let d = s.decoder.as_ref().expect("the bench input's formats compile");
            d.visit_as(payload, None, &mut touch).expect("the bench input's Data decodes");
            data += 1;
        }
    }
    (n, data)
}

/// The test log grown to `mb` MB: the file, then the messages of its data section other than
/// definitions repeated.
fn build(mb: f64) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read(root.join("tests/data/ulog/pyulog_sample_logging_tagged_and_default_params.ulg")).unwrap();
    let mut spans = Vec::new();
    let mut r = Reader::new(&file[..]).unwrap();
    let mut prev: Option<u64> = None;
    let mut last = None;
    while let Some(m) = r.next_message() {
        let m = m.unwrap();
        if let Some(p) = prev.take() {
            spans.push((p as usize, m.offset as usize));
        }
        if matches!(m.event, Event::Data { .. } | Event::Logging { .. } | Event::Sync | Event::Dropout { .. }) {
            prev = Some(m.offset);
        }
        last = Some(m.offset);
    }
    if let Some(p) = prev {
        spans.push((p as usize, file.len()));
    }
    assert!(last.is_some() && !spans.is_empty(), "the test log has a data section");
    let want = (mb * 1e6) as usize;
    let mut buf = Vec::with_capacity(want + file.len());
    buf.extend_from_slice(&file);
    'fill: loop {
        for (a, z) in &spans {
            if buf.len() >= want {
                break 'fill;
            }
            buf.extend_from_slice(&file[*a..*z]);
        }
    }
    buf
}

fn python() -> String {
    std::env::var("LOGSPEC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn main() {
    let mb = arg_mb(50.0);
    let runs: usize = arg("--runs", "3").parse().unwrap_or(3);
    let buf = build(mb);
    let (messages, data) = read_all(&buf);
    println!(
        "input: {} bytes, {} messages ({} Data; {:.1} B/message)",
        buf.len(),
        messages,
        data,
        buf.len() as f64 / messages as f64
    );
    let memcpy = memcpy_time(&buf, 5);
    let ours = time(5, || read_all(&buf));
    let ours_cpu = cpu_time(5, || read_all(&buf));
    let m = mbps(buf.len(), memcpy);
    println!("memcpy                                      {m:>7.0} MB/s   1.00x (baseline)");
    let o = mbps(buf.len(), ours);
    println!(
        "logspec, every message and field (memory)   {o:>7.1} MB/s   {:.3}x memcpy   {:.2} M messages/s   (CPU {:.3} s)",
        o / m,
        messages as f64 / ours.as_secs_f64() / 1e6,
        ours_cpu.as_secs_f64()
    );

    let dir = std::env::temp_dir().join(format!("logspec-bench-ulog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.ulg");
    std::fs::write(&big, &buf).unwrap();
    let quarter = dir.join("quarter.ulg");
    std::fs::write(&quarter, &buf[..buf.len() / 4]).unwrap();
    let (bigs, quarters) = (big.to_str().unwrap(), quarter.to_str().unwrap());
    let _ = process(&["info", bigs]);
    let info: Vec<_> = (0..runs).map(|_| process(&["info", bigs])).collect();
    // The mean CPU time (user and system) of `info` processes, over at least 20 of them: the
    // kernel charges a process's time by the tick, so a process of a few ticks or less is
    // charged unevenly, and the mean of 3 was off by half.
    let cpu_runs = runs.max(20);
    let cpu0 = children_cpu();
    for _ in 0..cpu_runs {
        process(&["info", bigs]);
    }
    let info_cpu = (children_cpu() - cpu0) / cpu_runs as u32;
    let dump: Vec<_> = (0..runs).map(|_| process(&["dump", bigs])).collect();
    let info_t = median(info.iter().map(|x| x.0).collect());
    let dump_t = median(dump.iter().map(|x| x.0).collect());
    let rss = |v: &[(std::time::Duration, Option<u64>)]| v.iter().filter_map(|x| x.1).max().unwrap_or(0);
    let quarter_info: Vec<_> = (0..runs).map(|_| process(&["info", quarters])).collect();
    let quarter_dump: Vec<_> = (0..runs).map(|_| process(&["dump", quarters])).collect();
    println!(
        "logspec dump > /dev/null (whole process)    {:>7.1} MB/s   {:.2} s   peak RSS {} kB ({} MB file), {} kB (quarter)",
        mbps(buf.len(), dump_t),
        dump_t.as_secs_f64(),
        rss(&dump),
        buf.len() / 1_000_000,
        rss(&quarter_dump)
    );
    println!(
        "logspec info (whole process)                {:>7.1} MB/s   {:.3} s (CPU {:.3} s)   peak RSS {} kB ({} MB file), {} kB (quarter)",
        mbps(buf.len(), info_t),
        info_t.as_secs_f64(),
        info_cpu.as_secs_f64(),
        rss(&info),
        buf.len() / 1_000_000,
        rss(&quarter_info)
    );

    let ok = Command::new(python())
        .args(["-c", "import pyulog"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("pyulog: needs {} with pyulog (LOGSPEC_PYTHON); not measured", python());
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("benches/python/pyulog_bench.py");
    let pythonpath = root.join("benches/python");
    let median_of = |mode: &str| {
        let reads: Vec<_> =
            (0..runs).map(|_| common::python_run(&python(), &script, mode, &big, pythonpath.as_os_str())).collect();
        let mut secs: Vec<f64> = reads.iter().map(|r| r.seconds).collect();
        secs.sort_by(f64::total_cmp);
        let mut cpu: Vec<f64> = reads.iter().filter_map(|r| r.cpu_seconds).collect();
        cpu.sort_by(f64::total_cmp);
        let peak = reads.iter().map(|r| r.peak_kb).max().unwrap_or(0);
        (reads, secs[secs.len() / 2], cpu.get(cpu.len() / 2).copied(), peak)
    };
    let (reads, s, cpu, peak) = median_of("parse");
    for r in &reads {
        assert_eq!(r.records, data, "pyulog kept {} Data messages, logspec decoded {data}", r.records);
    }
    let cpu = cpu.unwrap_or(f64::NAN);
    println!(
        "pyulog ULog(path), full parse               {:>7.2} MB/s   {s:.2} s (CPU {cpu:.2} s)   peak RSS {peak} kB",
        mbps(buf.len(), std::time::Duration::from_secs_f64(s)),
    );
    println!(
        "  logspec against it, wall clock: {:.1}x (memory), {:.1}x (dump, whole process), {:.1}x (info, whole process)",
        s / ours.as_secs_f64(),
        s / dump_t.as_secs_f64(),
        s / info_t.as_secs_f64()
    );
    println!(
        "  logspec against it, CPU time:   {:.1}x (memory), {:.1}x (info, whole process)",
        cpu / ours_cpu.as_secs_f64(),
        cpu / info_cpu.as_secs_f64()
    );
    let (_, s, _, peak) = median_of("header");
    println!(
        "pyulog ULog(path, parse_header_only=True)   {s:.3} s (definitions only, no Data read; for scale)   peak RSS {peak} kB"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
