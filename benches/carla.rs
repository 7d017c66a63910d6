//! CARLA recorder decoding throughput, against `memcpy` of the same bytes and against Rust peers
//! (binrw- and zerocopy-derived decoders, `carla/peers.rs`), all measured in the same run.
//!
//! `cargo bench --bench carla` (optionally `-- --mb 50`). The input is a large recording built in
//! memory from the real scenario_runner recording `tests/data/carla/scenario_runner_DistanceToLaneCenter.log`
//! the way `bench-inputs/gen_carla.py` does it: the header and the spawn frames once, then the
//! steady frames repeated until the size is reached, then the despawn frames once. Every
//! FrameStart gets a consecutive frame id, `elapsed` is the running sum of `duration_this` (the
//! last frame keeps -1.0), PlatformTime is shifted by the same offset as `elapsed`; every other
//! packet is copied byte for byte. Packet boundaries come from logspec's reader, and the patched
//! packets are written by the generated encoders.
//! Reports, as medians of several runs:
//! - memcpy of the whole buffer (the baseline);
//! - every packet as a generated view, from the buffer (`SliceReader`) and through `Read`
//!   (`Reader::next_packet_ref`), with allocations per packet;
//! - every packet owned (`Reader::next_packet`) and whole frames (`Reader::next_frame`);
//! - the binrw and zerocopy peers over the same buffer;
//! - whole-process `logspec info` on a file, with its peak RSS for two file sizes (memory must not
//!   grow with the file), and `logspec dump > /dev/null`.

mod common;
#[path = "carla/peers.rs"]
mod peers;

use std::hint::black_box;

use common::carla_input::build;
use common::{allocations, arg_mb, mbps, memcpy_time, time, whole_process};
use logspec::formats::carla::{Body, BodyRef, Reader, SliceReader};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

/// The target for every packet through views: this many times memcpy.
const TARGET_X_MEMCPY: f64 = 0.5;

/// Every packet as a view, from the buffer; returns the number of decoded packets, and of
/// packets kept raw.
fn view_packets(buf: &[u8]) -> (u64, u64) {
    let (mut n, mut raw) = (0u64, 0u64);
    for p in SliceReader::new(buf).unwrap() {
        let p = p.unwrap();
        match p.body {
            BodyRef::Record { .. } => n += 1,
            _ => raw += 1,
        }
        black_box(p);
    }
    (n, raw)
}

/// Every packet as a view, through `Read`.
fn view_packets_read(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf).unwrap();
    let mut n = 0u64;
    while let Some(p) = r.next_packet_ref() {
        black_box(p.unwrap());
        n += 1;
    }
    n
}

/// Every packet owned, through `Read`; returns the number of decoded packets, and of packets
/// kept raw.
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
    let header_len = SliceReader::new(&buf).unwrap().position() as usize;
    let (packets, raw) = view_packets(&buf);
    assert_eq!(raw, 0, "every packet of the input decodes");
    assert_eq!(decode_packets(&buf), (packets, 0), "views and owned packets agree");
    assert_eq!(view_packets_read(&buf), packets);
    assert_eq!(decode_frames(&buf), packets, "frames hold every packet");
    assert_eq!(peers::binrw_all(&buf, header_len), packets, "the binrw peer reads every packet");
    assert_eq!(peers::zerocopy_all(&buf, header_len), packets, "the zerocopy peer reads every packet");
    println!(
        "input: {} bytes, {frame_count} frames, {packets} packets ({:.1} B/packet)",
        buf.len(),
        buf.len() as f64 / packets as f64
    );

    let memcpy = memcpy_time(&buf, runs);
    let by_view = time(runs, || view_packets(&buf));
    let by_view_read = time(runs, || view_packets_read(&buf));
    let by_packet = time(runs, || decode_packets(&buf));
    let by_frame = time(runs, || decode_frames(&buf));
    let by_binrw = time(runs, || peers::binrw_all(&buf, header_len));
    let by_zerocopy = time(runs, || peers::zerocopy_all(&buf, header_len));
    let allocs_per = |f: &dyn Fn()| {
        let a0 = allocations();
        f();
        (allocations() - a0) as f64 / packets as f64
    };
    let view_allocs = allocs_per(&|| {
        view_packets(&buf);
    });
    let owned_allocs = allocs_per(&|| {
        decode_packets(&buf);
    });

    let m = mbps(buf.len(), memcpy);
    let bw = mbps(buf.len(), by_binrw);
    let zc = mbps(buf.len(), by_zerocopy);
    println!("memcpy                           {m:>7.0} MB/s   1.00x (baseline)");
    println!("binrw peer (owned)               {bw:>7.0} MB/s   {:.3}x memcpy", bw / m);
    println!("zerocopy peer (references)       {zc:>7.0} MB/s   {:.3}x memcpy", zc / m);
    let row = |name: &str, d: std::time::Duration, allocs: Option<f64>| {
        let v = mbps(buf.len(), d);
        let a = allocs.map_or(String::new(), |a| format!("   {a:.2} allocations/packet"));
        println!(
            "{name:<32} {v:>7.0} MB/s   {:.3}x memcpy   {:.1}x binrw   {:.2}x zerocopy   {:.1} M packets/s{a}",
            v / m,
            v / bw,
            v / zc,
            packets as f64 / d.as_secs_f64() / 1e6,
        );
        v / m
    };
    let x = row("views, SliceReader", by_view, Some(view_allocs));
    row("views, next_packet_ref (Read)", by_view_read, None);
    row("owned, next_packet (Read)", by_packet, Some(owned_allocs));
    row("owned, next_frame (Read)", by_frame, None);
    println!(
        "target: every packet through views >= {TARGET_X_MEMCPY}x memcpy: {}",
        if x >= TARGET_X_MEMCPY { "met" } else { "NOT met" }
    );

    // The quarter file is cut mid-packet: info reports it and exits 1, after reading everything.
    let w = whole_process(&buf, buf.len() / 4, "log");
    println!(
        "logspec info (whole process)     {:>7.0} MB/s   {:.3}x memcpy   {:.1}x binrw   peak RSS {} kB ({} MB file), {} kB ({} MB file)",
        w.info_mbps,
        w.info_mbps / m,
        w.info_mbps / bw,
        w.info_rss_kb,
        buf.len() / 1_000_000,
        w.quarter_rss_kb,
        buf.len() / 4_000_000
    );
    println!("logspec dump > /dev/null         {:>7.0} MB/s   peak RSS {} kB", w.dump_mbps, w.dump_rss_kb);
}
