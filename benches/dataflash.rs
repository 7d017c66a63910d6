//! ArduPilot DataFlash reading against pymavlink's `DFReader` (the reference decoder of the test
//! data), timed side by side in one run, and memcpy of the same bytes.
//!
//! `cargo bench --bench dataflash` (options: `-- --mb 20 --runs 3`). The input is a real log
//! (`tests/data/dataflash/wlichon_00000001.BIN`: ArduCopter 4.4, 174 message types, FMTU units)
//! grown to `--mb` MB: the whole file once (its FMT, FMTU, UNIT and MULT messages first), then its
//! other messages again and again. Reports, as medians:
//! - memcpy of the whole buffer;
//! - reading every message with every column decoded into a visitor (`Reader::next_message`,
//!   `Decoder::visit_as`, the dump's path without the JSON text) in memory, in place
//!   (`Reader::from_slice`, as the command reads a mapped file);
//! - whole-process `logspec dump > /dev/null` and `logspec info`, with peak RSS on the file and on
//!   its first quarter (memory must not grow with the file);
//! - pymavlink's `DFReader_binary` on the same file in its own Python process
//!   (`benches/python/dfreader_bench.py`): `recv_msg()` for every message, and with every column
//!   read (`getattr`), the figure the goal is held to; each as seconds and as the ratio to
//!   logspec's in-memory read and to whole-process `dump`, and by CPU time (logspec's read by its
//!   thread's CPU time, DFReader by `time.process_time()`): on a loaded machine wall clock
//!   mostly measures a process's share of the cores.
//!
//! Python: `LOGSPEC_PYTHON` (default `python3`) with pymavlink 2.4.50; without it the bench says so
//! and times logspec alone.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::touch::Touch;
use common::{arg, arg_mb, cpu_time, mbps, median, memcpy_time, process, time};
use logspec::formats::dataflash::{Event, Reader, SliceReader};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// Every message, every column decoded: the count of messages.
fn read_all(buf: &[u8]) -> u64 {
    let mut r = SliceReader::from_slice(buf);
    let mut touch = Touch;
    let mut n = 0;
    while let Some(m) = r.next_message() {
        let m = m.expect("the bench input reads");
        if let Event::Message { decoder, body, .. } = m.event {
            decoder.visit_as(body, None, &mut touch).unwrap();
            n += 1;
        }
    }
    n
}

/// The test log grown to `mb` MB: the file, then its messages other than FMT, FMTU, UNIT and
/// MULT repeated.
fn build(mb: f64) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read(root.join("tests/data/dataflash/wlichon_00000001.BIN")).unwrap();
    let mut spans = Vec::new();
    let mut r = Reader::new(&file[..]);
    while let Some(m) = r.next_message() {
        let m = m.unwrap();
        if let Event::Message { decoder, .. } = m.event {
            let name = decoder.name();
            let len = 3 + decoder.lowered.size as usize;
            if !matches!(name, "FMT" | "FMTU" | "UNIT" | "MULT") {
                spans.push((m.offset as usize, len));
            }
        }
    }
    let want = (mb * 1e6) as usize;
    let mut buf = Vec::with_capacity(want + file.len());
    buf.extend_from_slice(&file);
    'fill: loop {
        for (o, n) in &spans {
            if buf.len() >= want {
                break 'fill;
            }
            buf.extend_from_slice(&file[*o..o + n]);
        }
    }
    buf
}

fn python() -> String {
    std::env::var("LOGSPEC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn main() {
    let mb = arg_mb(20.0);
    let runs: usize = arg("--runs", "3").parse().unwrap_or(3);
    let buf = build(mb);
    let messages = read_all(&buf);
    println!("input: {} bytes, {} messages ({:.1} B/message)", buf.len(), messages, buf.len() as f64 / messages as f64);
    let memcpy = memcpy_time(&buf, 5);
    let ours = time(5, || read_all(&buf));
    let ours_cpu = cpu_time(5, || read_all(&buf));
    let m = mbps(buf.len(), memcpy);
    println!("memcpy                                      {m:>7.0} MB/s   1.00x (baseline)");
    let o = mbps(buf.len(), ours);
    println!(
        "logspec, every message and column (memory)  {o:>7.1} MB/s   {:.3}x memcpy   {:.2} M messages/s   (CPU {:.3} s)",
        o / m,
        messages as f64 / ours.as_secs_f64() / 1e6,
        ours_cpu.as_secs_f64()
    );

    let dir = std::env::temp_dir().join(format!("logspec-bench-dataflash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.bin");
    std::fs::write(&big, &buf).unwrap();
    let quarter = dir.join("quarter.bin");
    std::fs::write(&quarter, &buf[..buf.len() / 4]).unwrap();
    let (bigs, quarters) = (big.to_str().unwrap(), quarter.to_str().unwrap());
    let _ = process(&["info", bigs]);
    let info: Vec<_> = (0..runs).map(|_| process(&["info", bigs])).collect();
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
        "logspec info (whole process)                {:>7.1} MB/s   {:.2} s   peak RSS {} kB ({} MB file), {} kB (quarter)",
        mbps(buf.len(), info_t),
        info_t.as_secs_f64(),
        rss(&info),
        buf.len() / 1_000_000,
        rss(&quarter_info)
    );

    let ok = Command::new(python())
        .args(["-c", "import pymavlink.DFReader"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("pymavlink DFReader: needs {} with pymavlink (LOGSPEC_PYTHON); not measured", python());
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("benches/python/dfreader_bench.py");
    let pythonpath = root.join("benches/python");
    for (mode, what) in [("recv", "recv_msg() of every message"), ("fields", "recv_msg() and every column")] {
        let reads: Vec<_> =
            (0..runs).map(|_| common::python_run(&python(), &script, mode, &big, pythonpath.as_os_str())).collect();
        for r in &reads {
            assert_eq!(r.records, messages, "DFReader read {} messages, logspec {messages}", r.records);
        }
        let mut secs: Vec<f64> = reads.iter().map(|r| r.seconds).collect();
        secs.sort_by(f64::total_cmp);
        let s = secs[secs.len() / 2];
        let mut cpu: Vec<f64> = reads.iter().filter_map(|r| r.cpu_seconds).collect();
        cpu.sort_by(f64::total_cmp);
        let cpu = cpu.get(cpu.len() / 2).copied().unwrap_or(f64::NAN);
        let peak = reads.iter().map(|r| r.peak_kb).max().unwrap_or(0);
        println!(
            "DFReader, {what:<29} {:>7.2} MB/s   {s:.2} s (CPU {cpu:.2} s)   logspec {:.0}x (memory), {:.0}x (dump, whole process), {:.0}x (memory, CPU time)   peak RSS {peak} kB",
            mbps(buf.len(), std::time::Duration::from_secs_f64(s)),
            s / ours.as_secs_f64(),
            s / dump_t.as_secs_f64(),
            cpu / ours_cpu.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
