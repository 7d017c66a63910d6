//! USVLOG decoding throughput, against `memcpy` of the same bytes measured in the same run.
//!
//! `cargo bench --bench usvlog` (optionally `-- --mb 200`). The input is built in memory with the
//! record mix of `bench-inputs/gen_usvlog.py` (one 200 ms super period = 227 records: GYRO at
//! 200 Hz, the control records at 100 Hz, EKF_DIAG 20 Hz, GNSS 10 Hz, MISSION_STATE 5 Hz).
//! Reports, as medians of several runs:
//! - memcpy of the whole buffer (the baseline);
//! - in-memory decoding of every record into typed structs (`SliceReader`), as MB/s and as a
//!   fraction of memcpy, and allocations per record (counted by a global allocator);
//! - the streaming `Reader` over `Read` (copies through its 64 KiB buffer);
//! - whole-process `logspec info` and `logspec dump > /dev/null` on a file, with peak RSS for two
//!   file sizes (memory must stay flat as the file grows).

mod common;

use std::hint::black_box;

use common::{allocations, arg_mb, mbps, memcpy_time, time, whole_process};

use logspec::formats::usvlog::*;
use logspec::runtime::{Event, Reader, SliceReader};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

use common::usvlog_input::build;

fn decode_all(buf: &[u8]) -> u64 {
    let (_, mut r) = SliceReader::<Usvlog>::new(buf).unwrap();
    let mut n = 0u64;
    r.decode_each(|_, record| {
        if let Some(record) = record {
            black_box(record);
            n += 1;
        }
    })
    .unwrap();
    n
}

/// The same through the `next_event` iterator style, which moves each record out.
fn decode_events(buf: &[u8]) -> u64 {
    let (_, mut r) = SliceReader::<Usvlog>::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(ev) = r.next_event() {
        if let Ok(Event::Record { ref record, .. }) = ev {
            black_box(record);
            n += 1;
        }
    }
    n
}

fn frame_all(buf: &[u8]) -> u64 {
    let (_, r) = SliceReader::<Usvlog>::new(buf).unwrap();
    let mut n = 0u64;
    for raw in r.flatten() {
        black_box(raw.payload);
        n += 1;
    }
    n
}

fn stream_all(buf: &[u8]) -> u64 {
    let mut r = Reader::<_, Usvlog>::new(buf).unwrap();
    let mut n = 0u64;
    r.decode_each(|_, record| {
        if let Some(record) = record {
            black_box(record);
            n += 1;
        }
    })
    .unwrap();
    n
}

fn main() {
    let mb = arg_mb(200.0);
    let runs = 7;
    eprintln!("building a {mb} MB USVLOG stream in memory...");
    let buf = build(mb);
    let records = decode_all(&buf);
    println!("input: {} bytes, {} records ({:.1} B/record)", buf.len(), records, buf.len() as f64 / records as f64);

    let memcpy = memcpy_time(&buf, runs);
    let frame = time(runs, || frame_all(&buf));
    let decode = time(runs, || decode_all(&buf));
    let events = time(runs, || decode_events(&buf));
    let a0 = allocations();
    decode_all(&buf);
    let allocs = allocations() - a0;
    let stream = time(runs, || stream_all(&buf));

    let m = mbps(buf.len(), memcpy);
    println!("memcpy                          {:>8.0} MB/s   1.00x (baseline)", m);
    let f = mbps(buf.len(), frame);
    println!("framing only (no payload decode) {:>7.0} MB/s   {:.2}x memcpy", f, f / m);
    let d = mbps(buf.len(), decode);
    println!(
        "decode, in memory (decode_each) {:>8.0} MB/s   {:.2}x memcpy   {:.1} M records/s   {:.4} allocations/record",
        d,
        d / m,
        records as f64 / decode.as_secs_f64() / 1e6,
        allocs as f64 / records as f64
    );
    let e = mbps(buf.len(), events);
    println!("decode, in memory (next_event)  {:>8.0} MB/s   {:.2}x memcpy", e, e / m);
    let s = mbps(buf.len(), stream);
    println!("decode, streaming (Reader<Read>) {:>7.0} MB/s   {:.2}x memcpy", s, s / m);

    // Whole process, file in the page cache; the quarter file ends on a whole super period.
    let w = whole_process(&buf, 32 + (buf.len() / 4 - 32) / 6948 * 6948, "usvlog");
    println!(
        "logspec info (whole process)     {:>7.0} MB/s   {:.2}x memcpy   peak RSS {} kB ({} MB file), {} kB ({} MB file)",
        w.info_mbps,
        w.info_mbps / m,
        w.info_rss_kb,
        buf.len() / 1_000_000,
        w.quarter_rss_kb,
        buf.len() / 4_000_000
    );
    println!("logspec dump > /dev/null         {:>7.0} MB/s   peak RSS {} kB", w.dump_mbps, w.dump_rss_kb);
}
