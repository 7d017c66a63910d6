//! The large RLOG input of the benchmarks: an R1 file of about `mb` MB made of the bundled
//! AdvantageKit v1.8.1 robot log (`tests/data/rlog/akit_v1.8.1_robotlog.rlog`) whose cycles are
//! written again and again by logspec's writer, timestamps continued and keys defined once.
//! Built in memory; `benches/rlog.rs` and `benches/python_package.rs` use it.

use logspec::formats::rlog::{Event, Reader, Revision, Writer};

pub fn build_r1(mb: f64) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rlog/akit_v1.8.1_robotlog.rlog");
    let sample = std::fs::read(path).expect("the bundled R1 sample");
    let mut r = Reader::new(&sample[..]).unwrap();
    let mut events = Vec::new();
    let mut span = 0.0f64;
    while let Some(ev) = r.next_event() {
        let ev = ev.unwrap();
        if let Event::Timestamp(t) = ev {
            span = span.max(t);
        }
        events.push(ev);
    }
    let keys: Vec<(i16, String)> = r.keys().map(|(id, k)| (id, k.name.clone())).collect();
    let target = (mb * 1e6) as usize;
    let mut w = Writer::new(Vec::with_capacity(target + sample.len()), Revision::R1);
    let mut rep = 0u32;
    let mut written = 1usize;
    while written < target {
        let shift = f64::from(rep) * (span + 0.02);
        for ev in &events {
            match ev {
                Event::Timestamp(t) => w.timestamp(t + shift).unwrap(),
                Event::KeyDef { key_id } if rep == 0 => {
                    let name = &keys.iter().find(|(id, _)| id == key_id).unwrap().1;
                    w.define(*key_id, name, None).unwrap();
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
