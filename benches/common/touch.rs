//! The visitor the decode benches hand every value to.

use std::hint::black_box;

use std::path::Path;

use logspec::log::{Channel, DynVisit, Open, Samples, Select, TryVisit};
use logspec::runtime::{NumberType, Numbers, Visitor};

/// Hands every value a visit shows to [`black_box`] (a number as its bits, a string or byte
/// array as its length, an array's length), so that each is read and converted to its type,
/// and keeps nothing, as the peers' loops keep nothing of what they lend (`black_box` of each
/// message's length).
///
/// It keeps no sum: a sum kept in the visitor is a read and a write of one word of memory per
/// value (the visitor is reached through `&mut self`), each waiting on the one before, a chain
/// of store-to-load latencies that measured the bench's visitor, not the decoding (BENCHMARKS.md,
/// "The benches' visitor").
///
/// A `uint8[]` (a point cloud's data) is taken as the slice it is lent as: its length handed on,
/// its bytes not read (as the crates' framing and the plan lines take it; what a consumer does
/// with them, a copy into a column or a write, is its own cost).
#[derive(Default)]
pub struct Touch;

impl Visitor for Touch {
    #[inline]
    fn uint(&mut self, _: Option<&str>, v: u64) {
        black_box(v);
    }
    #[inline]
    fn int(&mut self, _: Option<&str>, v: i64) {
        black_box(v);
    }
    #[inline]
    fn f32(&mut self, _: Option<&str>, v: f32) {
        black_box(v.to_bits());
    }
    #[inline]
    fn f64(&mut self, _: Option<&str>, v: f64) {
        black_box(v.to_bits());
    }
    #[inline]
    fn bool(&mut self, _: Option<&str>, v: bool) {
        black_box(v);
    }
    #[inline]
    fn str(&mut self, _: Option<&str>, v: &str) {
        black_box(v.len());
    }
    #[inline]
    fn bytes(&mut self, _: Option<&str>, v: &[u8]) {
        black_box(v.len());
    }
    /// Other numbers each as the trait's default shows them (each read and converted, with no
    /// call through `dyn Visitor` for each).
    #[inline]
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        if v.ty() == NumberType::U8 {
            black_box(v.len());
            return;
        }
        v.show(name, self);
    }
    #[inline]
    fn enumeration(&mut self, _: Option<&str>, raw: i128, _: Option<&'static str>) {
        black_box(raw);
    }
    #[inline]
    fn flags(&mut self, _: Option<&str>, raw: u64) {
        black_box(raw);
    }
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    #[inline]
    fn begin_array(&mut self, _: Option<&str>, len: usize) {
        black_box(len);
    }
    fn end_array(&mut self) {}
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
    fn end_variant(&mut self) {}
}

impl logspec::value::ValueSink for Touch {
    fn null(&mut self, _: Option<&str>) {}
}

/// A [`Samples`] sink that shows every sample to [`Touch`]: through the visit the scan hands it
/// (a ROS message is decoded by its plan as it is visited), or the value where one is handed.
#[derive(Default)]
pub struct Scanned {
    pub samples: u64,
    touch: Touch,
    /// Whether the sink takes a visit that may stop partway ([`Samples::try_visit`], as the
    /// export's and the engines' sinks do): each message decoded once as it is shown; without,
    /// each is checked whole first (the generic path).
    pub once: bool,
    /// Whether the sink takes each ROS message as its recorded bytes ([`Samples::raw`], as a
    /// sink that passes messages through undecoded does): none is decoded, so the scan is the
    /// one interface's framing alone.
    pub raw: bool,
}

impl Samples for Scanned {
    fn channel(&mut self, _: usize, _: &Channel) -> Result<(), logspec::log::Error> {
        Ok(())
    }
    fn sample(&mut self, _: usize, _: u64, value: &logspec::value::Value) -> Result<(), logspec::log::Error> {
        self.samples += 1;
        value.write_to(&mut self.touch, None);
        Ok(())
    }
    fn visit(&mut self, _: usize, _: u64, value: &dyn DynVisit) -> Result<(), logspec::log::Error> {
        self.samples += 1;
        value.visit_dyn(&mut self.touch);
        Ok(())
    }
    fn raw(&mut self, _: usize, _: u64, bytes: &[u8]) -> Result<bool, logspec::log::Error> {
        if !self.raw {
            return Ok(false);
        }
        self.samples += 1;
        black_box(bytes.len());
        Ok(true)
    }
    fn try_visit(&mut self, _: usize, _: u64, value: &dyn TryVisit) -> Result<bool, logspec::log::Error> {
        if !self.once {
            return Ok(false);
        }
        // `Touch` keeps nothing: a visit that stopped leaves nothing to take back.
        if value.try_visit_dyn(&mut self.touch) {
            self.samples += 1;
        }
        Ok(true)
    }
}

/// Every message of the log at `p` through the one interface: opened by
/// [`logspec::log::open`] (format sniffed; the file mapped, as the command-line tool opens it),
/// every channel scanned into [`Scanned`] (`once`: each ROS message decoded once as it is shown,
/// else checked whole first); returns the samples.
pub fn scan_all(p: &Path, once: bool) -> u64 {
    scan_into(p, Scanned { once, ..Scanned::default() })
}

/// As [`scan_all`], every ROS message taken as its recorded bytes, none decoded
/// ([`Scanned::raw`]): the floor of the scan, what the one interface costs before a value is
/// read.
pub fn scan_raw(p: &Path) -> u64 {
    scan_into(p, Scanned { raw: true, ..Scanned::default() })
}

fn scan_into(p: &Path, mut sink: Scanned) -> u64 {
    let log = logspec::log::open(p, &Open { map: true, ..Open::default() }).expect("opens the log");
    let outcome = log.scan(&Select::default(), &mut sink).expect("scans the log");
    assert!(outcome.error.is_none() && outcome.warnings.is_empty(), "{:?} {:?}", outcome.error, outcome.warnings);
    sink.samples
}
