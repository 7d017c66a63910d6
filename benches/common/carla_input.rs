//! The large CARLA input of the benchmarks: a recording of about `mb` MB built from the real
//! scenario_runner recording `tests/data/carla/scenario_runner_DistanceToLaneCenter.log` the way
//! `bench-inputs/gen_carla.py` does it (see `benches/carla.rs`). Built in memory; `benches/carla.rs`,
//! `benches/dump.rs` and `benches/info.rs` use it.

use logspec::formats::carla::{CarlaRecordRef, FrameStart, PacketRef, PlatformTime, SliceReader, PACKET_HEADER};
use logspec::runtime::{Endian, Fixed};

/// One frame of the sample: its byte range and its packets.
struct SampleFrame<'a> {
    start: usize,
    end: usize,
    packets: Vec<PacketRef<'a>>,
}

/// The records of the packets of one kind in a frame (their `records` count).
fn count(f: &SampleFrame<'_>, pick: impl Fn(&CarlaRecordRef<'_>) -> Option<usize>) -> usize {
    f.packets.iter().filter_map(|p| p.record().and_then(&pick)).sum()
}

/// Builds a recording of about `mb` MB; returns it and the number of frames.
pub fn build(mb: f64) -> (Vec<u8>, usize) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/carla/scenario_runner_DistanceToLaneCenter.log");
    let b = std::fs::read(path).expect("the bundled CARLA sample");
    let mut r = SliceReader::new(&b).expect("the sample's header");
    let header_len = r.position() as usize;
    let mut fr: Vec<SampleFrame<'_>> = Vec::new();
    for p in r.by_ref() {
        let p = p.expect("the sample reads whole");
        let end = p.offset as usize + PACKET_HEADER + p.size as usize;
        match p.record() {
            Some(CarlaRecordRef::FrameStart(_)) => {
                fr.push(SampleFrame { start: p.offset as usize, end, packets: vec![p] });
            }
            _ => {
                let f = fr.last_mut().expect("packets inside frames");
                f.end = end;
                f.packets.push(p);
            }
        }
    }
    let half = fr.len() / 2;
    let adds = |f: &SampleFrame<'_>| {
        count(f, |r| match r {
            CarlaRecordRef::EventAdd(a) => Some(a.records.len()),
            CarlaRecordRef::EventParent(p) => Some(p.records.len()),
            _ => None,
        })
    };
    let dels = |f: &SampleFrame<'_>| {
        count(f, |r| if let CarlaRecordRef::EventDel(d) = r { Some(d.records.len()) } else { None })
    };
    // The steady frames: after the last spawn or parenting in the first half, up to the first
    // despawn in the second half.
    let first = (0..half).filter(|&i| adds(&fr[i]) > 0).max();
    let first = first.map_or(0, |i| i + 1);
    let last = (half..fr.len()).find(|&i| dels(&fr[i]) > 0).unwrap_or(fr.len() - 1);
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
        let body = |p: &PacketRef<'_>| base + p.offset as usize - f.start + PACKET_HEADER;
        let Some(CarlaRecordRef::FrameStart(fs)) = f.packets[0].record() else { unreachable!("frames start so") };
        let mut dur = fs.duration_this;
        if k == order.len() - 1 {
            dur = -1.0;
        }
        let start = FrameStart { frame_id: k as u64 + 1, duration_this: dur, elapsed };
        let at = body(&f.packets[0]);
        start.encode_fixed(&mut out[at..at + <FrameStart as Fixed>::SIZE], Endian::Little);
        for p in &f.packets {
            if let Some(CarlaRecordRef::PlatformTime(t)) = p.record() {
                let at = body(p);
                let t = PlatformTime { time: t.time + (elapsed - fs.elapsed) };
                t.encode_fixed(&mut out[at..at + <PlatformTime as Fixed>::SIZE], Endian::Little);
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
