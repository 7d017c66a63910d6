//! CARLA recorder decoding throughput, against `memcpy` of the same bytes measured in the same run.
//!
//! `cargo bench --bench carla` (optionally `-- --mb 50`). The input is a large recording built in
//! memory from the real scenario_runner recording `tests/data/carla/scenario_runner_DistanceToLaneCenter.log`
//! the way `bench-inputs/gen_carla.py` does it: the header and the spawn frames once, then the
//! steady frames repeated until the size is reached, then the despawn frames once. Every
//! FrameStart gets a consecutive frame id, `elapsed` is the running sum of `duration_this` (the
//! last frame keeps -1.0), PlatformTime is shifted by the same offset as `elapsed`; every other
//! packet is copied byte for byte.
//! Reports, as medians of several runs:
//! - memcpy of the whole buffer (the baseline);
//! - decoding every packet into typed records (`Reader::next_packet`, in memory through `Read`),
//!   and whole frames (`Reader::next_frame`), as MB/s, x memcpy, x the binrw-derived decoder's
//!   reference figure, packets/s and allocations per packet;
//! - whole-process `logspec info` on a file, with its peak RSS for two file sizes (memory must not
//!   grow with the file), and `logspec dump > /dev/null`.

mod common;

use std::hint::black_box;

use common::{allocations, arg_mb, mbps, memcpy_time, time, whole_process};
use logspec::formats::carla::{Body, Reader, PACKET_HEADER};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// A binrw-derived decoder of the same packets on the reference machine (2 cores), MB/s.
const BINRW_MBPS: f64 = 383.0;
/// The target: this many times the binrw-derived decoder.
const TARGET_X: f64 = 5.0;

const FRAME_START: u8 = 0;
const FRAME_END: u8 = 1;
const EVENT_ADD: u8 = 2;
const EVENT_DEL: u8 = 3;
const EVENT_PARENT: u8 = 4;
const PLATFORM_TIME: u8 = 14;

/// One frame of the sample: its byte range and its packets as (id, body offset, body size).
struct SampleFrame {
    start: usize,
    end: usize,
    packets: Vec<(u8, usize, usize)>,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn f64_at(b: &[u8], o: usize) -> f64 {
    f64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// The header length and the frames of a recording.
fn frames(b: &[u8]) -> (usize, Vec<SampleFrame>) {
    let mut o = 2;
    o += 2 + usize::from(u16_at(b, o)) + 8;
    o += 2 + usize::from(u16_at(b, o));
    let header_len = o;
    let (mut out, mut cur) = (Vec::new(), SampleFrame { start: o, end: o, packets: Vec::new() });
    while o < b.len() {
        let id = b[o];
        let size = u32::from_le_bytes(b[o + 1..o + 5].try_into().unwrap()) as usize;
        if id == FRAME_START {
            cur = SampleFrame { start: o, end: o, packets: Vec::new() };
        }
        cur.packets.push((id, o + PACKET_HEADER, size));
        o += PACKET_HEADER + size;
        if id == FRAME_END {
            cur.end = o;
            out.push(std::mem::replace(&mut cur, SampleFrame { start: o, end: o, packets: Vec::new() }));
        }
    }
    assert_eq!(o, b.len(), "trailing bytes in the sample");
    (header_len, out)
}

/// The total record count of the packets `id` of a frame (their leading u16).
fn count(b: &[u8], f: &SampleFrame, id: u8) -> u32 {
    f.packets.iter().filter(|p| p.0 == id && p.2 >= 2).map(|p| u32::from(u16_at(b, p.1))).sum()
}

/// Builds a recording of about `mb` MB; returns it and the number of frames.
fn build(mb: f64) -> (Vec<u8>, usize) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/carla/scenario_runner_DistanceToLaneCenter.log");
    let b = std::fs::read(path).expect("the bundled CARLA sample");
    let (header_len, fr) = frames(&b);
    let half = fr.len() / 2;
    // The steady frames: after the last spawn or parenting in the first half, up to the first
    // despawn in the second half.
    let first = (0..half).filter(|&i| count(&b, &fr[i], EVENT_ADD) + count(&b, &fr[i], EVENT_PARENT) > 0).max();
    let first = first.map_or(0, |i| i + 1);
    let last = (half..fr.len()).find(|&i| count(&b, &fr[i], EVENT_DEL) > 0).unwrap_or(fr.len() - 1);
    let loop_bytes = fr[last].start - fr[first].start;
    let fixed = header_len + (fr[first].start - fr[0].start) + (fr[fr.len() - 1].end - fr[last].start);
    let reps = (((mb * 1e6 - fixed as f64) / loop_bytes as f64).round() as usize).max(1);
    let order: Vec<usize> = (0..last).chain((1..reps).flat_map(|_| first..last)).chain(last..fr.len()).collect();

    let mut out = Vec::with_capacity(fixed + reps * loop_bytes);
    out.extend_from_slice(&b[..header_len]);
    let mut elapsed = 0.0f64;
    for (k, &i) in order.iter().enumerate() {
        let f = &fr[i];
        let base = out.len();
        out.extend_from_slice(&b[f.start..f.end]);
        let at = |off: usize| base + off - f.start;
        // FrameStart: frame_id u64, duration_this f64, elapsed f64.
        let fs = f.packets[0].1;
        let (mut dur, el_orig) = (f64_at(&b, fs + 8), f64_at(&b, fs + 16));
        if k == order.len() - 1 {
            dur = -1.0;
        }
        out[at(fs)..at(fs) + 8].copy_from_slice(&(k as u64 + 1).to_le_bytes());
        out[at(fs) + 8..at(fs) + 16].copy_from_slice(&dur.to_le_bytes());
        out[at(fs) + 16..at(fs) + 24].copy_from_slice(&elapsed.to_le_bytes());
        for &(id, off, size) in &f.packets {
            if id == PLATFORM_TIME && size == 8 {
                let t = f64_at(&b, off) + (elapsed - el_orig);
                out[at(off)..at(off) + 8].copy_from_slice(&t.to_le_bytes());
            }
        }
        if dur >= 0.0 {
            elapsed += dur;
        }
    }
    eprintln!(
        "{} frames: spawn frames 0..{}, loop {first}..{} x{reps}, tail {last}..{}, {elapsed:.1} s",
        order.len(),
        first.saturating_sub(1),
        last - 1,
        fr.len() - 1
    );
    (out, order.len())
}

/// Decodes every packet; returns the number of decoded packets, and of packets kept raw.
fn decode_packets(buf: &[u8]) -> (u64, u64) {
    let mut r = Reader::new(buf).unwrap();
    let (mut n, mut raw) = (0u64, 0u64);
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        match p.body {
            Body::Record { .. } => n += 1,
            _ => raw += 1,
        }
        black_box(p);
    }
    (n, raw)
}

fn decode_frames(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(f) = r.next_frame() {
        let f = f.unwrap();
        n += f.packets.len() as u64 + 1;
        black_box(f);
    }
    n
}

fn main() {
    let mb = arg_mb(200.0);
    let runs = 5;
    eprintln!("building a {mb} MB CARLA recording in memory...");
    let (buf, frame_count) = build(mb);
    let (packets, raw) = decode_packets(&buf);
    assert_eq!(raw, 0, "every packet of the input decodes");
    assert_eq!(decode_frames(&buf), packets, "frames hold every packet");
    println!(
        "input: {} bytes, {frame_count} frames, {packets} packets ({:.1} B/packet)",
        buf.len(),
        buf.len() as f64 / packets as f64
    );

    let memcpy = memcpy_time(&buf, runs);
    let by_packet = time(runs, || decode_packets(&buf));
    let by_frame = time(runs, || decode_frames(&buf));
    let a0 = allocations();
    decode_packets(&buf);
    let allocs = allocations() - a0;

    let m = mbps(buf.len(), memcpy);
    println!("memcpy                           {m:>7.0} MB/s   1.00x (baseline)");
    println!(
        "binrw-derived (reference)        {BINRW_MBPS:>7.0} MB/s   {:.3}x memcpy   target {:.0} MB/s ({TARGET_X}x)",
        BINRW_MBPS / m,
        BINRW_MBPS * TARGET_X
    );
    let p = mbps(buf.len(), by_packet);
    println!(
        "decode, next_packet              {p:>7.0} MB/s   {:.3}x memcpy   {:.1}x binrw   {:.1} M packets/s   {:.2} allocations/packet",
        p / m,
        p / BINRW_MBPS,
        packets as f64 / by_packet.as_secs_f64() / 1e6,
        allocs as f64 / packets as f64
    );
    let f = mbps(buf.len(), by_frame);
    println!("decode, next_frame               {f:>7.0} MB/s   {:.3}x memcpy   {:.1}x binrw", f / m, f / BINRW_MBPS);

    // The quarter file is cut mid-packet: info reports it and exits 1, after reading everything.
    let w = whole_process(&buf, buf.len() / 4, "log");
    println!(
        "logspec info (whole process)     {:>7.0} MB/s   {:.3}x memcpy   {:.1}x binrw   peak RSS {} kB ({} MB file), {} kB ({} MB file)",
        w.info_mbps,
        w.info_mbps / m,
        w.info_mbps / BINRW_MBPS,
        w.info_rss_kb,
        buf.len() / 1_000_000,
        w.quarter_rss_kb,
        buf.len() / 4_000_000
    );
    println!("logspec dump > /dev/null         {:>7.0} MB/s   peak RSS {} kB", w.dump_mbps, w.dump_rss_kb);
}
