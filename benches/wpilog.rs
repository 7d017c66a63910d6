//! WPILOG decoding throughput, against `memcpy` of the same bytes measured in the same run.
//!
//! `cargo bench --bench wpilog` (optionally `-- --mb 100`). The input is a large file made of a
//! real robot log (`tests/data/wpilog/stuypulse_FRC_20220701_010412.wpilog`: WPILib 2022
//! DataLogManager with NT mirroring; 86 entries, 85% doubles, double arrays, strings, booleans)
//! repeated: its data records written again and again by logspec's writer with timestamps
//! continued, entries started once. Reports, as medians of several runs:
//! - memcpy of the whole buffer (the baseline);
//! - reading every record with the entry table (`Reader::next_record`), and the same with every
//!   standard-typed value decoded in place (`Entry::decode_ref`, array elements summed) and into
//!   the owned generated `DataValue` (`Entry::decode`), as MB/s, x memcpy,
//!   records/s and allocations per record;
//! - whole-process `logspec info` (which decodes every standard value to count invalid ones) on
//!   the file, with its peak RSS for two file sizes (memory must not grow with the file), and
//!   `logspec dump > /dev/null`.

mod common;

use std::hint::black_box;

use common::wpilog_input::build;
use common::{allocations, arg_mb, mbps, memcpy_time, time, whole_process};
use logspec::formats::wpilog::{Body, DataValueRef, Reader};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// Every record, with the entry it belongs to.
fn read_records(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if let Body::Data(e) = rec.body {
            black_box((e, rec.payload, rec.header.timestamp));
        }
        n += 1;
    }
    n
}

/// Every record, and every standard-typed value decoded in place (`Entry::decode_ref`: strings
/// and arrays lent from the read buffer, array elements decoded as iterated).
fn decode_values(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if let Body::Data(Some(e)) = rec.body {
            match e.decode_ref(rec.payload).unwrap() {
                DataValueRef::DoubleArray { value: a } => black_box(a.iter().fold(0.0, |s, x| s + x)),
                DataValueRef::Int64Array { value: a } => black_box(a.iter().fold(0.0, |s, x| s + x as f64)),
                DataValueRef::FloatArray { value: a } => black_box(a.iter().fold(0.0, |s, x| s + f64::from(x))),
                DataValueRef::BooleanArray { value: a } => black_box(a.iter().filter(|x| *x).count() as f64),
                v => black_box({
                    black_box(v);
                    0.0
                }),
            };
        }
        n += 1;
    }
    n
}

/// Every record, and every standard-typed value decoded into the owned generated `DataValue`.
fn decode_values_owned(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if let Body::Data(Some(e)) = rec.body {
            if e.is_standard() {
                black_box(e.decode(rec.payload).unwrap());
            } else {
                black_box(rec.payload);
            }
        }
        n += 1;
    }
    n
}

fn main() {
    let mb = arg_mb(100.0);
    let runs = 5;
    eprintln!("building a {mb} MB WPILOG file in memory...");
    let buf = build(mb);
    let records = read_records(&buf);
    assert_eq!(decode_values(&buf), records);
    assert_eq!(decode_values_owned(&buf), records);
    println!("input: {} bytes, {} records ({:.1} B/record)", buf.len(), records, buf.len() as f64 / records as f64);

    let memcpy = memcpy_time(&buf, runs);
    let framing = time(runs, || read_records(&buf));
    let values = time(runs, || decode_values(&buf));
    let owned = time(runs, || decode_values_owned(&buf));
    let a0 = allocations();
    read_records(&buf);
    let allocs_framing = allocations() - a0;
    let a0 = allocations();
    decode_values(&buf);
    let allocs_values = allocations() - a0;
    let a0 = allocations();
    decode_values_owned(&buf);
    let allocs_owned = allocations() - a0;

    let m = mbps(buf.len(), memcpy);
    println!("memcpy                                  {m:>7.0} MB/s   1.00x (baseline)");
    let f = mbps(buf.len(), framing);
    println!(
        "records + entry table (next_record)     {f:>7.0} MB/s   {:.3}x memcpy   {:.1} M records/s   {:.4} allocations/record",
        f / m,
        records as f64 / framing.as_secs_f64() / 1e6,
        allocs_framing as f64 / records as f64
    );
    let v = mbps(buf.len(), values);
    println!(
        "records + every value, borrowed         {v:>7.0} MB/s   {:.3}x memcpy   {:.1} M records/s   {:.4} allocations/record",
        v / m,
        records as f64 / values.as_secs_f64() / 1e6,
        allocs_values as f64 / records as f64
    );

    let o = mbps(buf.len(), owned);
    println!(
        "records + every value, owned DataValue  {o:>7.0} MB/s   {:.3}x memcpy   {:.1} M records/s   {:.4} allocations/record",
        o / m,
        records as f64 / owned.as_secs_f64() / 1e6,
        allocs_owned as f64 / records as f64
    );

    let w = whole_process(&buf, buf.len() / 4, "wpilog");
    println!(
        "logspec info (whole process)            {:>7.0} MB/s   {:.3}x memcpy   peak RSS {} kB ({} MB file), {} kB ({} MB file)",
        w.info_mbps,
        w.info_mbps / m,
        w.info_rss_kb,
        buf.len() / 1_000_000,
        w.quarter_rss_kb,
        buf.len() / 4_000_000
    );
    println!("logspec dump > /dev/null                {:>7.0} MB/s   peak RSS {} kB", w.dump_mbps, w.dump_rss_kb);
}
