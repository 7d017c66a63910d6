//! RLOG R1 decoding throughput, against `memcpy` of the same bytes measured in the same run.
//!
//! `cargo bench --bench rlog` (optionally `-- --mb 100`). The input is a large R1 file made of the
//! real AdvantageKit v1.8.1 robot log (`tests/data/rlog/akit_v1.8.1_robotlog.rlog`: 98 keys, 97%
//! doubles, plus double and int arrays, strings, string arrays, booleans) repeated: its cycles are
//! written again and again by logspec's writer with timestamps continued, keys defined once.
//! Reports, as medians of several runs:
//! - memcpy of the whole buffer (the baseline);
//! - decoding every message into typed values with the key table: owned (`Reader::next_event`),
//!   borrowed (`Reader::next_event_ref`: every array element and string still produced and
//!   passed to `black_box`; and the same through the lending `Reader::for_each_event_ref`, with
//!   the closure called as a function and with it inlined as the call's docs advise, and inlined
//!   with the bytes decoded in place, `Reader::from_slice`, instead of copied in through `Read`), and
//!   whole cycles (`Reader::next_cycle`), as MB/s, x memcpy, values/s
//!   and allocations per value;
//! - whole-process `logspec info` on a file, with its peak RSS for two file sizes (memory must not
//!   grow with the file), and `logspec dump > /dev/null`;
//! - R2: `next_event_ref` and `for_each_event_ref` (both ways) over an R2 file built from the R2 all-types
//!   sample, against memcpy of that file, with allocations per value;
//! - the same throughput against AdvantageScope's decoder, from its reference figure (36 MB/s
//!   with memcpy at 5.2 GB/s on a 2-core machine, `bench-inputs/README.md`), scaled by this run's
//!   memcpy.
//!
//! With `--cpu` (Linux), memcpy and the in-process decoders are timed by the thread's CPU time
//! instead of the wall clock, so that time spent waiting for a core on a shared, loaded machine
//! does not count (the whole-process figures stay wall-clock).

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{allocations, arg_mb, cpu_time, mbps, memcpy_time, time, whole_process};
use logspec::formats::rlog::{Event, EventRef, R1ValueRef, R2ValueRef, Reader, Revision, ValueRef, Writer};
use logspec::runtime::Input;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// AdvantageScope's RLOG decoder and memcpy on the reference machine, MB/s.
const ADVANTAGESCOPE_MBPS: f64 = 36.0;
const REFERENCE_MEMCPY_MBPS: f64 = 5200.0;

/// An R2 file of about `mb` MB made of the R2 all-types sample
/// (`tests/data/rlog/gen_akit_head_r2_alltypes.rlog`: every declared type, structs and arrays)
/// repeated, keys defined once.
fn build_r2(mb: f64) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rlog/gen_akit_head_r2_alltypes.rlog");
    let sample = std::fs::read(path).expect("the bundled R2 sample");
    let mut r = Reader::new(&sample[..]).unwrap();
    let mut events = Vec::new();
    while let Some(ev) = r.next_event() {
        events.push(ev.unwrap());
    }
    let keys: Vec<(i16, String, Option<String>)> =
        r.keys().map(|(id, k)| (id, k.name.clone(), k.declared_type.clone())).collect();
    let target = (mb * 1e6) as usize;
    let mut w = Writer::new(Vec::with_capacity(target + sample.len()), Revision::R2);
    let mut rep = 0u32;
    let mut written = 1usize;
    while written < target {
        for ev in &events {
            match ev {
                Event::Timestamp(t) => w.timestamp(t + f64::from(rep)).unwrap(),
                Event::KeyDef { key_id } if rep == 0 => {
                    let (_, name, ty) = keys.iter().find(|(id, ..)| id == key_id).unwrap();
                    w.define(*key_id, name, ty.as_deref()).unwrap();
                }
                Event::KeyDef { .. } => {}
                Event::Value { key_id, value, .. } => w.value(*key_id, value.clone()).unwrap(),
            }
        }
        rep += 1;
        written += sample.len();
    }
    w.finish().unwrap()
}

fn decode_events(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(ev) = r.next_event() {
        if let Ok(Event::Value { ref value, key_id, .. }) = ev {
            black_box((value, r.key(key_id)));
            n += 1;
        }
    }
    n
}

/// Every message lent by `next_event_ref`: each value's typed content (every array element and
/// string) is produced and passed to `black_box`, with its key.
fn decode_events_ref(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(ev) = r.next_event_ref() {
        if let Ok(EventRef::Value { key, value, .. }) = ev {
            black_box(key);
            match value {
                ValueRef::R1(v) => consume(v),
                ValueRef::R2(v) => consume_r2(v),
            }
            n += 1;
        }
    }
    n
}

/// As [`decode_events_ref`], through the lending call `for_each_event_ref`: the reader's loop
/// hands every message to the closure.
fn for_each_ref(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    r.for_each_event_ref(|ev| {
        if let EventRef::Value { key, value, .. } = ev {
            black_box(key);
            match value {
                ValueRef::R1(v) => consume(v),
                ValueRef::R2(v) => consume_r2(v),
            }
            n += 1;
        }
    })
    .unwrap();
    n
}

/// As [`for_each_ref`], with the closure and what it calls inlined into each of the reader's
/// decoding paths, as the docs of `for_each_event_ref` advise (`#[inline(always)]` on the closure
/// and on its helpers): each path then hands its value over in registers, and the consumer's
/// match on the value's variant folds away where the path already knows it. A consumer that is
/// called as a function instead ([`for_each_ref`]) receives every value through memory.
fn for_each_ref_inlined(buf: &[u8]) -> u64 {
    each_inlined(Reader::new(buf).unwrap())
}

/// [`for_each_ref_inlined`] with the bytes decoded in place (`Reader::from_slice`), not copied
/// into the reader's buffer through `Read` first.
fn for_each_ref_inlined_in_place(buf: &[u8]) -> u64 {
    each_inlined(Reader::from_slice(buf).unwrap())
}

/// The loop of [`for_each_ref_inlined`], over either input.
#[inline(always)]
fn each_inlined<R: std::io::Read, I: Input>(mut r: Reader<R, I>) -> u64 {
    let mut n = 0u64;
    r.for_each_event_ref(
        #[inline(always)]
        |ev| {
            if let EventRef::Value { key, value, .. } = ev {
                black_box(key);
                match value {
                    ValueRef::R1(v) => consume_inlined(v),
                    ValueRef::R2(v) => consume_r2_inlined(v),
                }
                n += 1;
            }
        },
    )
    .unwrap();
    n
}

/// Every value's typed content (every array element and string) to `black_box`.
macro_rules! consume_r1_body {
    ($v:expr) => {
        let v = $v;
        match v {
            R1ValueRef::Null {} => {}
            R1ValueRef::Boolean { value } => {
                black_box(value);
            }
            R1ValueRef::BooleanArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R1ValueRef::Integer { value } => {
                black_box(value);
            }
            R1ValueRef::IntegerArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R1ValueRef::Double { value } => {
                black_box(value);
            }
            R1ValueRef::DoubleArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R1ValueRef::String { value } => {
                black_box(value);
            }
            R1ValueRef::StringArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R1ValueRef::Byte { value } => {
                black_box(value);
            }
            R1ValueRef::ByteArray { value } => {
                black_box(value);
            }
        }
    };
}

macro_rules! consume_r2_body {
    ($v:expr) => {
        let v = $v;
        match v {
            R2ValueRef::BooleanArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R2ValueRef::Int64Array { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R2ValueRef::FloatArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R2ValueRef::DoubleArray { value } => value.iter().for_each(|x| {
                black_box(x);
            }),
            R2ValueRef::StringArray { value } => value.iter().for_each(|x| {
                black_box(x.text);
            }),
            other => {
                black_box(other);
            }
        }
    };
}

#[inline]
fn consume(v: R1ValueRef<'_>) {
    consume_r1_body!(v);
}

#[inline]
fn consume_r2(v: R2ValueRef<'_>) {
    consume_r2_body!(v);
}

#[inline(always)]
fn consume_inlined(v: R1ValueRef<'_>) {
    consume_r1_body!(v);
}

#[inline(always)]
fn consume_r2_inlined(v: R2ValueRef<'_>) {
    consume_r2_body!(v);
}

fn decode_cycles(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(c) = r.next_cycle() {
        let c = c.unwrap();
        n += c.values.len() as u64;
        black_box(c);
    }
    n
}

/// The median of `runs` timings of `f`, by wall clock, or by thread CPU time with `cpu`.
fn timed<T>(cpu: bool, runs: usize, f: impl FnMut() -> T) -> Duration {
    if cpu {
        cpu_time(runs, f)
    } else {
        time(runs, f)
    }
}

/// memcpy of `buf`, timed as [`timed`].
fn memcpy_timed(cpu: bool, buf: &[u8], runs: usize) -> Duration {
    if !cpu {
        return memcpy_time(buf, runs);
    }
    let mut dst = vec![0u8; buf.len()];
    timed(true, runs, || {
        dst.copy_from_slice(buf);
        dst[dst.len() / 2]
    })
}

fn main() {
    let mb = arg_mb(100.0);
    let cpu = std::env::args().any(|a| a == "--cpu");
    if cpu && !cfg!(target_os = "linux") {
        eprintln!("--cpu needs Linux's CLOCK_THREAD_CPUTIME_ID");
        std::process::exit(2);
    }
    let runs = 5;
    eprintln!("building a {mb} MB R1 file in memory...");
    let buf = common::rlog_input::build_r1(mb);
    let values = decode_events(&buf);
    assert_eq!(decode_events_ref(&buf), values);
    assert_eq!(for_each_ref(&buf), values);
    assert_eq!(for_each_ref_inlined(&buf), values);
    assert_eq!(for_each_ref_inlined_in_place(&buf), values);
    println!("input: {} bytes, {} values ({:.1} B/value)", buf.len(), values, buf.len() as f64 / values as f64);

    if cpu {
        println!("timing: thread CPU time (--cpu); whole-process figures by the wall clock");
    }
    let memcpy = memcpy_timed(cpu, &buf, runs);
    let events = timed(cpu, runs, || decode_events(&buf));
    let events_ref = timed(cpu, runs, || decode_events_ref(&buf));
    let each_ref = timed(cpu, runs, || for_each_ref(&buf));
    let each_inl = timed(cpu, runs, || for_each_ref_inlined(&buf));
    let each_place = timed(cpu, runs, || for_each_ref_inlined_in_place(&buf));
    let cycles = timed(cpu, runs, || decode_cycles(&buf));
    let a0 = allocations();
    decode_events(&buf);
    let allocs = allocations() - a0;
    let a0 = allocations();
    decode_events_ref(&buf);
    let allocs_ref = allocations() - a0;
    let a0 = allocations();
    for_each_ref(&buf);
    let allocs_each = allocations() - a0;
    let a0 = allocations();
    for_each_ref_inlined(&buf);
    let allocs_inl = allocations() - a0;
    let a0 = allocations();
    for_each_ref_inlined_in_place(&buf);
    let allocs_place = allocations() - a0;

    let m = mbps(buf.len(), memcpy);
    // AdvantageScope's figure, scaled to this machine by the memcpy ratio.
    let advantagescope = ADVANTAGESCOPE_MBPS * m / REFERENCE_MEMCPY_MBPS;
    println!("memcpy                           {m:>7.0} MB/s   1.00x (baseline)");
    println!("AdvantageScope (reference, scaled) {advantagescope:>5.0} MB/s   {:.4}x memcpy", advantagescope / m);
    let line = |label: &str, t: std::time::Duration, allocations: u64| {
        let e = mbps(buf.len(), t);
        println!(
            "{label:<33}{e:>7.0} MB/s   {:.3}x memcpy   {:.1}x AdvantageScope   {:.1} M values/s   {:.3} allocations/value",
            e / m,
            e / advantagescope,
            values as f64 / t.as_secs_f64() / 1e6,
            allocations as f64 / values as f64
        );
    };
    line("decode, next_event", events, allocs);
    line("decode, next_event_ref (borrowed)", events_ref, allocs_ref);
    line("decode, for_each_event_ref", each_ref, allocs_each);
    line("decode, for_each_event_ref, inlined closure", each_inl, allocs_inl);
    line("decode, for_each_event_ref, inlined, in place (from_slice)", each_place, allocs_place);
    let c = mbps(buf.len(), cycles);
    println!(
        "decode, next_cycle               {c:>7.0} MB/s   {:.3}x memcpy   {:.1}x AdvantageScope",
        c / m,
        c / advantagescope
    );

    // The quarter file is cut mid-message: info reports it and exits 1, after reading everything.
    let w = whole_process(&buf, buf.len() / 4, "rlog");
    println!(
        "logspec info (whole process)     {:>7.0} MB/s   {:.3}x memcpy   {:.1}x AdvantageScope   peak RSS {} kB ({} MB file), {} kB ({} MB file)",
        w.info_mbps,
        w.info_mbps / m,
        w.info_mbps / advantagescope,
        w.info_rss_kb,
        buf.len() / 1_000_000,
        w.quarter_rss_kb,
        buf.len() / 4_000_000
    );
    println!("logspec dump > /dev/null         {:>7.0} MB/s   peak RSS {} kB", w.dump_mbps, w.dump_rss_kb);

    // R2: every value decoded in place by its key's declared type.
    let buf2 = build_r2(mb / 4.0);
    let values2 = decode_events_ref(&buf2);
    assert_eq!(for_each_ref(&buf2), values2);
    assert_eq!(for_each_ref_inlined(&buf2), values2);
    assert_eq!(for_each_ref_inlined_in_place(&buf2), values2);
    let memcpy2 = memcpy_timed(cpu, &buf2, runs);
    let ref2 = timed(cpu, runs, || decode_events_ref(&buf2));
    let each2 = timed(cpu, runs, || for_each_ref(&buf2));
    let inl2 = timed(cpu, runs, || for_each_ref_inlined(&buf2));
    let place2 = timed(cpu, runs, || for_each_ref_inlined_in_place(&buf2));
    let a0 = allocations();
    decode_events_ref(&buf2);
    let allocs2 = allocations() - a0;
    let a0 = allocations();
    for_each_ref(&buf2);
    let allocs_each2 = allocations() - a0;
    let a0 = allocations();
    for_each_ref_inlined(&buf2);
    let allocs_inl2 = allocations() - a0;
    let a0 = allocations();
    for_each_ref_inlined_in_place(&buf2);
    let allocs_place2 = allocations() - a0;
    let m2 = mbps(buf2.len(), memcpy2);
    let e = mbps(buf2.len(), ref2);
    println!("R2 input: {} bytes, {} values ({:.1} B/value)", buf2.len(), values2, buf2.len() as f64 / values2 as f64);
    println!("memcpy (R2 input)                {m2:>7.0} MB/s   1.00x (baseline)");
    println!(
        "R2 decode, next_event_ref        {e:>7.0} MB/s   {:.3}x memcpy   {:.1} M values/s   {:.3} allocations/value",
        e / m2,
        values2 as f64 / ref2.as_secs_f64() / 1e6,
        allocs2 as f64 / values2 as f64
    );
    let e = mbps(buf2.len(), each2);
    println!(
        "R2 decode, for_each_event_ref    {e:>7.0} MB/s   {:.3}x memcpy   {:.1} M values/s   {:.3} allocations/value",
        e / m2,
        values2 as f64 / each2.as_secs_f64() / 1e6,
        allocs_each2 as f64 / values2 as f64
    );
    let e = mbps(buf2.len(), inl2);
    println!(
        "R2 decode, for_each_event_ref, inlined closure {e:>5.0} MB/s   {:.3}x memcpy   {:.1} M values/s   {:.3} allocations/value",
        e / m2,
        values2 as f64 / inl2.as_secs_f64() / 1e6,
        allocs_inl2 as f64 / values2 as f64
    );
    let e = mbps(buf2.len(), place2);
    println!(
        "R2 decode, for_each_event_ref, inlined, in place (from_slice) {e:>5.0} MB/s   {:.3}x memcpy   {:.1} M values/s   {:.3} allocations/value",
        e / m2,
        values2 as f64 / place2.as_secs_f64() / 1e6,
        allocs_place2 as f64 / values2 as f64
    );
}
