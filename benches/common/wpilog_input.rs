//! The large WPILOG input of the benchmarks: the data records of the real robot log
//! `tests/data/wpilog/stuypulse_FRC_20220701_010412.wpilog` written again and again by logspec's
//! writer, timestamps continued, entries started once. Built in memory; `benches/wpilog.rs` and
//! `benches/dump.rs` use it.

use logspec::formats::wpilog::{Reader, Writer};

/// A file of about `mb` MB.
pub fn build(mb: f64) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wpilog/stuypulse_FRC_20220701_010412.wpilog");
    let sample = std::fs::read(path).expect("the bundled WPILOG sample");
    let mut r = Reader::new(&sample[..]).unwrap();
    let mut recs = Vec::new();
    let mut span = 0i64;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        span = span.max(rec.header.timestamp);
        recs.push((rec.header, rec.payload.to_vec()));
    }
    let target = (mb * 1e6) as usize;
    let mut w = Writer::with_header(Vec::with_capacity(target + sample.len()), r.header()).unwrap();
    let mut rep = 0i64;
    let mut written = 0usize;
    while written < target {
        for (h, payload) in &recs {
            if h.entry == 0 && rep > 0 {
                continue;
            }
            w.raw(h.entry, h.timestamp + rep * (span + 20_000), payload).unwrap();
        }
        rep += 1;
        written += sample.len();
    }
    w.finish_file().unwrap()
}
