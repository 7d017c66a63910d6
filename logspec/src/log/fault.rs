//! The structured form of an error or warning about an input: what kind of problem, the whole
//! message (exactly the text the command prints after `logspec: `) and its parts: the file, the
//! byte offset, the record index and the field. Every format's reader error converts into it
//! ([`Locate`]); the command prints the message, the Python package builds its exceptions and
//! warnings from the parts, so that nothing is parsed back out of the text.

use crate::formats::carla::{CarlaError, CarlaErrorKind};
use crate::formats::rlog::{RlogError, RlogErrorKind};
use crate::formats::rosbag::BagError;
use crate::formats::wpilog::{WpilogError, WpilogErrorKind};
use crate::runtime::{DecodeError, ReadError, ReadErrorKind};

/// What kind of problem a [`Fault`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The bytes are bad: truncated, corrupted, or not the layout the schema describes.
    Decode,
    /// The file is none of the formats logspec reads (or not the one forced).
    Format,
    /// A channel filter matched no channel, or the time window held no sample.
    Filter,
}

/// An input problem with its place. `message` is the whole text, as printed; the other fields
/// are `None` where the engine does not know them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
    /// The file as shown in messages (`<stdin>` for standard input).
    pub file: Option<String>,
    /// The absolute byte offset of the record, packet, message or header at fault.
    pub offset: Option<u64>,
    /// The 0-based index of the failing record, where the format counts records.
    pub record: Option<u64>,
    /// The field being decoded, `Type.field` (or `Type`, or `field`, as much as is known).
    pub field: Option<String>,
}

impl Fault {
    /// A problem with only a message (and the file).
    pub fn new(kind: FaultKind, file: &str, message: String) -> Fault {
        Fault { kind, message, file: Some(file.to_string()), offset: None, record: None, field: None }
    }

    /// A reader's error: `{file}: {error}` with the error's place.
    pub fn read(file: &str, e: &impl Locate) -> Fault {
        Fault::read_with(file, e, String::new())
    }

    /// A reader's error with text after it (`; skipped`).
    pub fn read_with(file: &str, e: &impl Locate, suffix: impl Into<String>) -> Fault {
        let mut f = Fault::new(FaultKind::Decode, file, format!("{file}: {e}{}", suffix.into()));
        (f.offset, f.record, f.field) = (e.offset(), e.record(), e.field());
        f
    }

    /// A problem at a known byte offset (and record), with a message of its own.
    pub fn at(file: &str, offset: u64, record: Option<u64>, message: String) -> Fault {
        Fault { offset: Some(offset), record, ..Fault::new(FaultKind::Decode, file, message) }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Where a reader's error is. Each format's error type says it in its own fields; this gathers
/// them under one set of names.
pub trait Locate: std::fmt::Display {
    fn offset(&self) -> Option<u64>;
    fn record(&self) -> Option<u64> {
        None
    }
    fn field(&self) -> Option<String> {
        None
    }
}

/// `Type.field` of a decode error, as its message names it.
pub fn field_of(e: &DecodeError) -> Option<String> {
    match (e.ty, e.field) {
        (Some(t), Some(x)) => Some(format!("{t}.{x}")),
        (Some(t), None) => Some(t.to_string()),
        (None, Some(x)) => Some(x.to_string()),
        (None, None) => None,
    }
}

impl Locate for ReadError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn record(&self) -> Option<u64> {
        self.record_index
    }
    fn field(&self) -> Option<String> {
        match &self.kind {
            ReadErrorKind::Decode(e) | ReadErrorKind::BadRecordHeader(e) => field_of(e),
            _ => None,
        }
    }
}

impl Locate for RlogError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn field(&self) -> Option<String> {
        match &self.kind {
            RlogErrorKind::Decode(e) => field_of(e),
            _ => None,
        }
    }
}

impl Locate for WpilogError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn record(&self) -> Option<u64> {
        self.record
    }
    fn field(&self) -> Option<String> {
        match &self.kind {
            WpilogErrorKind::BadMagic(e) | WpilogErrorKind::Header(e) => field_of(e),
            _ => None,
        }
    }
}

impl Locate for CarlaError {
    fn offset(&self) -> Option<u64> {
        match &self.kind {
            CarlaErrorKind::Io(_) | CarlaErrorKind::Truncated { .. } => Some(self.offset),
            CarlaErrorKind::Ue5 { position_offset, .. } => Some(*position_offset),
            CarlaErrorKind::NotCarla(_) | CarlaErrorKind::UnsupportedVersion(_) => None,
        }
    }
}

impl Locate for BagError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
}

/// The kinds of problem the readers count ([`Faults::note`]).
pub mod kind {
    pub const UNDECODABLE: &str = "records that do not decode";
    pub const UNKNOWN_TYPE: &str = "records of unknown type";
    pub const MISFIT_PACKET: &str = "packets whose layout does not fit their size";
    pub const UNKNOWN_PACKET: &str = "packets of unknown id";
    pub const UNKNOWN_CONNECTION: &str = "messages of unknown connections";
    pub const UNDECODABLE_MESSAGE: &str = "messages that do not decode";
    pub const UNDECODABLE_VALUE: &str = "values that do not decode";
}

/// How many problems of one kind are kept in full: shown by `dump` and `info`, handed to Python
/// as warnings. The rest of that kind are counted ([`Faults`]).
pub const SHOWN_PER_KIND: u64 = 5;

/// Problems that do not stop a reading, bounded: the first [`SHOWN_PER_KIND`] of each kind are
/// kept in full, the rest only counted, so that a file of ten million bad records costs a
/// constant in memory and in output. A kind is a phrase naming the problem in the plural
/// ("records that do not decode"); there are a few per format, fixed in the code.
#[derive(Debug, Default, Clone)]
pub struct Faults {
    /// Per kind, in the order first met: the phrase and how many.
    kinds: Vec<(&'static str, u64)>,
}

impl Faults {
    /// Counts a problem of `kind`. `message` is built (and returned, to be shown) only for the
    /// first few of the kind, so that counting the rest costs no formatting.
    pub fn note<T>(&mut self, kind: &'static str, message: impl FnOnce() -> T) -> Option<T> {
        let i = match self.kinds.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.kinds.push((kind, 0));
                self.kinds.len() - 1
            }
        };
        self.kinds[i].1 += 1;
        (self.kinds[i].1 <= SHOWN_PER_KIND).then(message)
    }

    /// How many problems were counted, of every kind.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|(_, n)| n).sum()
    }

    /// How many of `kind` were counted.
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds.iter().find(|(k, _)| *k == kind).map_or(0, |(_, n)| *n)
    }

    /// One line per kind with more problems than were shown: `{file}: 12345 records that do not
    /// decode in all; the first 5 are shown`.
    pub fn more(&self, file: &str) -> Vec<String> {
        self.kinds
            .iter()
            .filter(|(_, n)| *n > SHOWN_PER_KIND)
            .map(|(k, n)| format!("{file}: {n} {k} in all; the first {SHOWN_PER_KIND} are shown"))
            .collect()
    }

    /// Every kind with its count, in the order first met.
    pub fn kinds(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.kinds.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_error_keeps_its_text_and_its_place() {
        let e = BagError::at(42, "bad op");
        let f = Fault::read_with("x.bag", &e, "; skipped");
        assert_eq!(f.message, "x.bag: byte 42: bad op; skipped");
        assert_eq!((f.offset, f.record, f.field.as_deref(), f.file.as_deref()), (Some(42), None, None, Some("x.bag")));
        assert_eq!(f.to_string(), f.message);
    }

    #[test]
    fn faults_keep_the_first_few_of_each_kind_and_count_the_rest() {
        let mut f = Faults::default();
        let mut shown = Vec::new();
        let mut built = 0;
        for i in 0..1000 {
            let kind = if i % 2 == 0 { "records that do not decode" } else { "records of unknown type" };
            if let Some(m) = f.note(kind, || {
                built += 1;
                format!("record {i}")
            }) {
                shown.push(m);
            }
        }
        assert_eq!(built, 2 * SHOWN_PER_KIND);
        assert_eq!(shown[..3], ["record 0", "record 1", "record 2"]);
        assert_eq!((f.total(), f.count("records of unknown type")), (1000, 500));
        assert_eq!(
            f.more("x.bin"),
            [
                "x.bin: 500 records that do not decode in all; the first 5 are shown",
                "x.bin: 500 records of unknown type in all; the first 5 are shown"
            ]
        );
    }
}
