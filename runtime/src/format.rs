//! The traits that plug a framed format into the runtime's readers and writers, and what reading
//! one can fail with. They need neither `std` nor `alloc`, so generated code compiles in a
//! `no_std` crate; the readers and writers over `std::io` are in [`crate::framed`].

use crate::error::DecodeError;
use crate::sync::RecordChecksum;
use crate::traits::{Decode, Encode};
use crate::visit::Visit;

/// The framing fields of one record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub tag: u64,
    pub len: u64,
    pub timestamp: Option<u64>,
}

/// How a format's records are framed: a fixed-size header with a tag and a length. It names no
/// owned type, so every format with a framing implements it, also where its records have only
/// views (generated without `alloc`, see `Builder::alloc`): a `no_std` reader frames records with
/// [`parse_record_header`](Self::parse_record_header) and views each payload with the generated
/// `<Format>RecordRef::decode`. Implemented by generated code.
pub trait Framing {
    /// The format's short name (`usvlog`).
    const NAME: &'static str;
    /// Size of the record header in bytes.
    const RECORD_HEADER_SIZE: usize;
    /// The largest payload the length field can express.
    const MAX_PAYLOAD: u64;
    /// The largest tag the tag field can express.
    const MAX_TAG: u64;
    /// Names of the record-header fields that hold the tag, the length and the timestamp.
    const TAG_FIELD: &'static str;
    const LENGTH_FIELD: &'static str;
    const TIMESTAMP_FIELD: Option<&'static str>;
    /// The bytes that begin every record (`[framing] sync`), empty without one.
    const SYNC: &'static [u8] = &[];
    /// The bytes that end the file after the last record (`[framing] trailer`), empty without
    /// one. Readers take the input's last bytes for it where exactly this many are left at a
    /// record boundary; other bytes there, or fewer, are an error.
    const TRAILER: &'static [u8] = &[];
    /// The per-record checksum (`[framing] checksum`), if any.
    const CHECKSUM: Option<RecordChecksum> = None;
    /// Whether a reader that loses the record boundary searches for the next good record
    /// ([`crate::sync::resync`]): when the framing has a sync or a checksum to recognise one by.
    const RESYNC: bool = !Self::SYNC.is_empty() || Self::CHECKSUM.is_some();

    /// Parses the framing fields from the first `RECORD_HEADER_SIZE` bytes of `b`, checking its
    /// const fields (sync markers).
    fn parse_record_header(b: &[u8]) -> Result<RecordHeader, DecodeError>;
    /// Writes a record header into the first `RECORD_HEADER_SIZE` bytes of `out`.
    fn write_record_header(h: &RecordHeader, out: &mut [u8]);
    /// The name of the record type with this tag, if known.
    fn record_name(tag: u64) -> Option<&'static str>;
    /// The payload size of the record type with this tag when its length is all there is to check:
    /// a fixed-size record with no const field, whose payload decodes exactly when it has this
    /// many bytes. `None` for the other types and for unknown tags. Generated as one `match`, which
    /// the compiler makes a table: [`FramedFormat::check_record`] checks such a record with one
    /// load and one comparison, without a branch per type.
    #[inline(always)]
    fn exact_size(tag: u64) -> Option<usize> {
        let _ = tag;
        None
    }

    /// Whether a payload of `len` bytes of the record type with this tag is proved to decode by
    /// its length alone ([`exact_size`](Self::exact_size)). The one test of that fast path:
    /// [`FramedFormat::check_record`] checks such a payload without decoding it, and a reader may
    /// hand such a record on undecoded, to be decoded only if its value is wanted.
    #[inline(always)]
    fn decodes_by_length(tag: u64, len: usize) -> bool {
        matches!(Self::exact_size(tag), Some(n) if n == len)
    }
}

/// A framed format with owned types: its file header and "any record", which the runtime's
/// readers and writers decode and encode. Implemented by generated code (with `alloc`, or for
/// formats whose records need no allocator).
pub trait FramedFormat: Framing {
    /// The schema id this layout decodes (empty for formats without one).
    const KNOWN_SCHEMA_IDS: &'static [u64];
    type FileHeader: Decode + Encode + Visit;
    /// "Any record of this format".
    type Record: Encode + Visit;

    /// Checks what decoding alone cannot (the schema id); consts were checked while decoding.
    fn check_file_header(h: &Self::FileHeader) -> Result<(), ReadErrorKind>;
    /// The schema id a file header declares, for formats that have one.
    fn schema_id(h: &Self::FileHeader) -> Option<u64>;
    /// Decodes a payload; `None` for a tag this schema does not know.
    fn decode_record(tag: u64, payload: &[u8]) -> Option<Result<Self::Record, DecodeError>>;
    /// The tag of a record.
    fn record_tag(r: &Self::Record) -> u64;

    /// Whether a payload decodes, without building its record: what
    /// [`decode_record`](Self::decode_record) says, with the record dropped (`None` for a tag this
    /// schema does not know; the same error). A type whose length is all there is to check
    /// ([`Framing::decodes_by_length`]) is checked by its length; any other, or a payload of
    /// another length, is decoded.
    #[inline(always)]
    fn check_record(tag: u64, payload: &[u8]) -> Option<Result<(), DecodeError>> {
        if Self::decodes_by_length(tag, payload.len()) {
            Some(Ok(()))
        } else {
            decode_dropped::<Self>(tag, payload)
        }
    }
}

/// [`FramedFormat::check_record`] past its fast path: the record decoded and dropped.
#[inline(never)]
fn decode_dropped<F: FramedFormat + ?Sized>(tag: u64, payload: &[u8]) -> Option<Result<(), DecodeError>> {
    F::decode_record(tag, payload).map(|r| r.map(drop))
}

/// A computation over a format picked at run time, e.g. by a file's schema id: see
/// `with_file_format` (with `std`) and [`Versioned`].
pub trait WithFormat {
    type Output;
    fn call<F: FramedFormat>(self) -> Self::Output;
}

/// A format together with the older layouts of its lock history. Implemented by generated code
/// for every framed format; the older layouts live in the generated `history` module.
pub trait Versioned: FramedFormat {
    /// Every schema id this build decodes: the current one first, then the locked older ones.
    const SCHEMA_IDS: &'static [u64];
    /// The file-header field that holds the schema id (`""` for formats without one).
    const SCHEMA_ID_FIELD: &'static str;
    /// Calls `w` with the format (this one or an older layout) of schema id `id`; hands `w` back
    /// for an id this build does not know.
    fn with_schema_id<W: WithFormat>(id: u64, w: W) -> Result<W::Output, W>;
}

/// Why a record of a framing with a sync or a checksum did not check out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// The CRC in the record header is not the CRC of its bytes.
    Checksum { field: &'static str, stored: u32, computed: u32 },
    /// The record header does not decode (a wrong sync, a bad const).
    Header(DecodeError),
    /// The record's length runs past the end of the input.
    Length { needed: u64, available: u64 },
}

impl core::fmt::Display for Corruption {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Corruption::Checksum { field, stored, computed } => {
                write!(f, "checksum mismatch: `{field}` holds {stored:#x}, the record's bytes give {computed:#x}")
            }
            Corruption::Header(e) => write!(f, "bad record header: {}", e.detail()),
            Corruption::Length { needed, available } => {
                write!(f, "the length field says {needed} payload bytes, only {available} follow")
            }
        }
    }
}

/// What went wrong while reading a stream.
#[derive(Debug)]
pub enum ReadErrorKind {
    /// Reading the input failed.
    #[cfg(feature = "std")]
    Io(std::io::Error),
    /// The input ended inside a header or payload.
    Truncated { what: &'static str, needed: u64, available: u64 },
    /// A payload or header did not decode.
    Decode(DecodeError),
    /// A record header is invalid (e.g. a wrong sync marker): the stream cannot be followed further.
    BadRecordHeader(DecodeError),
    /// The file's schema id is not one this build knows.
    UnknownSchemaId { field: &'static str, found: u64, known: &'static [u64] },
    /// A corrupted region: the record here did not check out, and reading resumed at the next
    /// record that does (or at the end), `skipped` bytes on.
    Corrupt { why: Corruption, skipped: u64 },
    /// The file's schema id is one this build knows, but not the one of this reader's layout: pick
    /// the reader by the file's schema id with `with_file_format` (with `std`).
    OtherSchemaId { field: &'static str, found: u64, expected: u64 },
}
