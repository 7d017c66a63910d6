//! Framed record streams: a file header, then records that each start with a fixed-size record
//! header holding a type tag, a payload length and, optionally, a timestamp.
//!
//! The generated code of each format implements [`FramedFormat`]; the reader and writer here are
//! shared by every format, so no format has a hand-written reader loop.

use std::boxed::Box;
use std::fmt;
use std::io::{self, Read, Write};
use std::vec::Vec;

use crate::cursor::Cursor;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Shown};
use crate::readbuf::{ReadBuf, CHUNK};
use crate::sync::{resync, CrcShifts, Resync, SpanCrc};
use crate::traits::{Decode, Encode, Endian};

pub use crate::format::{Corruption, FramedFormat, ReadErrorKind, RecordHeader, Versioned, WithFormat};

/// Calls `w` with the layout a file was written under, read from the schema id in its header
/// (`head` holds the first bytes of the file: at least the file header). Files without a schema
/// id, and a `head` too short to hold the header, get `F` itself, whose reader then reports what
/// is wrong. An unknown schema id is an error that lists the ids this build knows.
///
/// ```ignore
/// struct Count;
/// impl WithFormat for Count {
///     type Output = usize;
///     fn call<F: FramedFormat>(self) -> usize { /* SliceReader::<F>::new(..) */ 0 }
/// }
/// let n = with_file_format::<usvlog::Usvlog, _>(&bytes, Count)?;
/// ```
pub fn with_file_format<F: Versioned, W: WithFormat>(head: &[u8], w: W) -> Result<W::Output, ReadError> {
    let Ok(h) = F::FileHeader::decode(&mut Cursor::new(head), Endian::Little) else {
        return Ok(w.call::<F>());
    };
    match F::schema_id(&h) {
        None => Ok(w.call::<F>()),
        Some(id) => F::with_schema_id(id, w).map_err(|_| {
            header_error::<F>(ReadErrorKind::UnknownSchemaId {
                field: F::SCHEMA_ID_FIELD,
                found: id,
                known: F::SCHEMA_IDS,
            })
        }),
    }
}

/// A read failure with its location: byte offset in the stream (of the record or header that
/// failed), the record's index and type when known. Boxed, so that `Result`s on the hot path stay
/// small; its fields are reached through `Deref` (`err.offset`, `err.kind`).
#[derive(Debug)]
pub struct ReadError(Box<ReadErrorDetail>);

impl ReadError {
    #[cold]
    pub fn new(detail: ReadErrorDetail) -> Self {
        ReadError(Box::new(detail))
    }

    pub fn into_detail(self) -> ReadErrorDetail {
        *self.0
    }
}

impl core::ops::Deref for ReadError {
    type Target = ReadErrorDetail;
    fn deref(&self) -> &ReadErrorDetail {
        &self.0
    }
}

/// The parts of a [`ReadError`].
#[derive(Debug)]
pub struct ReadErrorDetail {
    pub kind: ReadErrorKind,
    /// Absolute byte offset of the start of the failing header or record.
    pub offset: u64,
    /// Index of the failing record (0-based), `None` for the file header.
    pub record_index: Option<u64>,
    pub tag: Option<u64>,
    pub record: Option<&'static str>,
    pub format: &'static str,
}

impl ReadError {
    /// Whether reading can go on after this error (a bad record whose length was known, or a
    /// corrupted region passed over).
    pub fn is_recoverable(&self) -> bool {
        matches!(self.kind, ReadErrorKind::Decode(_) | ReadErrorKind::Corrupt { .. }) && self.record_index.is_some()
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at byte {}", self.format, self.offset)?;
        match (self.record_index, self.record, self.tag) {
            (Some(i), Some(name), _) => write!(f, " (record #{i}, {name})")?,
            (Some(i), None, Some(t)) => write!(f, " (record #{i}, type {t})")?,
            (Some(i), None, None) => write!(f, " (record #{i})")?,
            (None, ..) => write!(f, " (file header)")?,
        }
        f.write_str(": ")?;
        match &self.kind {
            ReadErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            ReadErrorKind::Truncated { what, needed, available } => {
                write!(f, "file truncated inside the {what}: needed {needed} bytes, only {available} left")
            }
            ReadErrorKind::Decode(e) | ReadErrorKind::BadRecordHeader(e) => {
                let mut e = e.detail();
                // Report the field's absolute position too.
                let abs = self.offset + e.offset;
                e.offset = abs;
                write!(f, "{e}")
            }
            ReadErrorKind::Corrupt { why, skipped } => {
                write!(f, "{why}; {skipped} bytes passed over to ")?;
                match self.offset.checked_add(*skipped) {
                    Some(at) => write!(f, "the next good record at byte {at}"),
                    None => f.write_str("the end"),
                }
            }
            ReadErrorKind::UnknownSchemaId { field, found, known } => {
                write!(f, "{field} is {found}, but this build only knows schema id")?;
                if known.len() != 1 {
                    f.write_str("s")?;
                }
                for (i, k) in known.iter().enumerate() {
                    write!(f, "{}{k}", if i == 0 { " " } else { ", " })?;
                }
                f.write_str("; refusing to guess the layout")
            }
            ReadErrorKind::OtherSchemaId { field, found, expected } => write!(
                f,
                "{field} is {found}, but this reader decodes schema id {expected}; \
                 open the file with `with_file_format` to decode it with the layout of schema id {found}"
            ),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            ReadErrorKind::Decode(e) | ReadErrorKind::BadRecordHeader(e) => Some(e),
            ReadErrorKind::Corrupt { why: Corruption::Header(e), .. } => Some(e),
            _ => None,
        }
    }
}

/// One record as framed in the stream, before payload decoding.
#[derive(Clone, Copy, Debug)]
pub struct RawRecord<'a> {
    /// Absolute offset of the record header.
    pub offset: u64,
    /// 0-based index in the stream.
    pub index: u64,
    pub header: RecordHeader,
    pub payload: &'a [u8],
}

/// A decoded record, or one whose type this schema does not know.
#[derive(Clone, Debug)]
pub enum Event<'a, R> {
    Record { raw: RawRecord<'a>, record: R },
    Unknown { raw: RawRecord<'a> },
}

/// Decodes a framed record ([`Reader::next_raw`], a [`SliceReader`]'s next): what `next_event`
/// gives for it, a payload that does not decode as the record's error.
#[inline(always)]
pub fn decode_event<F: FramedFormat>(raw: RawRecord<'_>) -> Result<Event<'_, F::Record>, ReadError> {
    match F::decode_record(raw.header.tag, raw.payload) {
        None => Ok(Event::Unknown { raw }),
        Some(Ok(record)) => Ok(Event::Record { raw, record }),
        Some(Err(e)) => Err(payload_error::<F>(raw.offset, raw.index, raw.header.tag, e)),
    }
}

/// Decodes one record and lends it to `f`. The record is matched by reference: moving it out of
/// the `Option<Result<..>>` would copy it, and that copy (wide loads of just-written narrow
/// stores) costs more than the decoding itself.
#[inline(always)]
fn lend<'a, F: FramedFormat>(
    raw: &RawRecord<'a>,
    f: &mut impl FnMut(&RawRecord<'a>, Option<&F::Record>),
) -> Result<(), ReadError> {
    let decoded = F::decode_record(raw.header.tag, raw.payload);
    match &decoded {
        None => f(raw, None),
        Some(Ok(record)) => f(raw, Some(record)),
        Some(Err(e)) => return Err(payload_error::<F>(raw.offset, raw.index, raw.header.tag, e.clone())),
    }
    Ok(())
}

/// Checks one record's payload without building it and tells `f` whether its type is known.
#[inline(always)]
fn check<'a, F: FramedFormat>(raw: &RawRecord<'a>, f: &mut impl FnMut(&RawRecord<'a>, bool)) -> Result<(), ReadError> {
    match F::check_record(raw.header.tag, raw.payload) {
        None => f(raw, false),
        Some(Ok(())) => f(raw, true),
        Some(Err(e)) => return Err(payload_error::<F>(raw.offset, raw.index, raw.header.tag, e)),
    }
    Ok(())
}

/// The error of a payload that does not decode. It takes the record's place by value: a reference
/// to the record would make the reading loop store each record's framing to memory, for this
/// path alone.
#[cold]
fn payload_error<F: FramedFormat>(offset: u64, index: u64, tag: u64, e: DecodeError) -> ReadError {
    record_error::<F>(ReadErrorKind::Decode(e.at(F::RECORD_HEADER_SIZE)), offset, index, Some(tag))
}

#[cold]
fn record_error<F: FramedFormat>(kind: ReadErrorKind, offset: u64, index: u64, tag: Option<u64>) -> ReadError {
    ReadError::new(ReadErrorDetail {
        kind,
        offset,
        record_index: Some(index),
        tag,
        record: tag.and_then(F::record_name),
        format: F::NAME,
    })
}

#[cold]
fn header_error<F: FramedFormat>(kind: ReadErrorKind) -> ReadError {
    ReadError::new(ReadErrorDetail { kind, offset: 0, record_index: None, tag: None, record: None, format: F::NAME })
}

fn decode_file_header<F: FramedFormat>(
    bytes: &[u8],
    at_eof: bool,
) -> Result<Option<(F::FileHeader, usize)>, ReadError> {
    let mut c = Cursor::new(bytes);
    match F::FileHeader::decode(&mut c, Endian::Little) {
        Ok(h) => {
            F::check_file_header(&h).map_err(header_error::<F>)?;
            Ok(Some((h, c.position())))
        }
        Err(e) => match (e.kind, at_eof) {
            (DecodeErrorKind::UnexpectedEof { needed, available }, true) => {
                Err(header_error::<F>(ReadErrorKind::Truncated {
                    what: "file header",
                    needed: e.offset + needed,
                    available: e.offset + available,
                }))
            }
            (DecodeErrorKind::UnexpectedEof { .. }, false) => Ok(None),
            _ => Err(header_error::<F>(ReadErrorKind::Decode(e))),
        },
    }
}

/// How the last bytes of an input, at a record boundary and no more than the size of its
/// `[framing] trailer`, end it: the one end rule of every framed reader (the generated ones here and
/// the IR interpreter's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Exactly the trailer (nothing, for a format without one): a clean end.
    Clean,
    /// Fewer bytes than the trailer: it is cut.
    Short,
    /// As many bytes as the trailer, but not its bytes.
    Wrong,
}

impl End {
    /// How `rest` ends an input whose format's trailer is `trailer`.
    pub fn of(trailer: &[u8], rest: &[u8]) -> End {
        if rest == trailer {
            End::Clean
        } else if rest.len() < trailer.len() {
            End::Short
        } else {
            End::Wrong
        }
    }
}

/// What ends the input at a record boundary, `bytes` being the rest (no more than the trailer's
/// size), as [`End::of`] says. `None`: a clean end.
#[cold]
fn at_end<F: FramedFormat>(bytes: &[u8]) -> Option<ReadErrorKind> {
    let t = F::TRAILER;
    Some(match End::of(t, bytes) {
        End::Clean => return None,
        End::Short => {
            let (needed, available) = (t.len() as u64, bytes.len() as u64);
            ReadErrorKind::Truncated { what: "file trailer", needed, available }
        }
        End::Wrong => {
            let kind = DecodeErrorKind::BadConst { expected: Shown::bytes(t), found: Shown::bytes(bytes) };
            ReadErrorKind::Decode(DecodeError::new(kind).in_type("file trailer"))
        }
    })
}

/// Where the record at the start of `bytes` ends: the framing rule, which the slice reader and the
/// streaming reader share (the streaming reader reads more when the record is short and the input
/// has not ended).
enum Frame {
    /// The whole record is there: its header, and its length with the header.
    Whole { header: RecordHeader, total: usize },
    /// The bytes end inside the record's header or payload; `want` is the length of the whole
    /// record when it is known and addressable.
    Short { what: &'static str, needed: u64, available: u64, tag: Option<u64>, want: Option<usize> },
    /// The record header does not decode.
    BadHeader(DecodeError),
}

#[inline(always)]
fn frame<F: FramedFormat>(bytes: &[u8]) -> Frame {
    let h = F::RECORD_HEADER_SIZE;
    if bytes.len() < h {
        let (needed, available) = (h as u64, bytes.len() as u64);
        return Frame::Short { what: "record header", needed, available, tag: None, want: Some(h) };
    }
    let header = match F::parse_record_header(bytes) {
        Ok(header) => header,
        Err(e) => return Frame::BadHeader(e),
    };
    match usize::try_from(header.len).ok().and_then(|l| l.checked_add(h)) {
        Some(total) if total <= bytes.len() => Frame::Whole { header, total },
        want => Frame::Short {
            what: "payload",
            needed: header.len,
            available: (bytes.len() - h) as u64,
            tag: Some(header.tag),
            want,
        },
    }
}

/// Whether the record at the start of `bytes` checks out, for [`resync`]: it frames, its CRC
/// matches, and (without a CRC to vouch for it) its type is known and its payload decodes.
/// `None`: `bytes` end inside it and more may come (`eof` false).
/// `at` is where `bytes` start in `spans`' bytes (present when the framing has a CRC).
fn checks_out<F: FramedFormat>(bytes: &[u8], at: usize, eof: bool, spans: &mut Option<SpanCrc<'_>>) -> Option<bool> {
    match frame::<F>(bytes) {
        Frame::Whole { header, total } => Some(match (F::CHECKSUM, spans) {
            (Some(c), Some(spans)) => c.verify_in(spans, at, F::RECORD_HEADER_SIZE, total),
            _ => matches!(F::decode_record(header.tag, &bytes[F::RECORD_HEADER_SIZE..total]), Some(Ok(_))),
        }),
        Frame::Short { .. } if !eof => None,
        Frame::Short { .. } | Frame::BadHeader(_) => Some(false),
    }
}

/// The framing's CRC shifts, made the first time they are needed; `None` without a CRC.
fn shifts_of<F: FramedFormat>(shifts: &mut Option<Box<CrcShifts>>) -> Option<&CrcShifts> {
    let c = F::CHECKSUM?;
    Some(shifts.get_or_insert_with(|| Box::new(CrcShifts::new(c.crc))))
}

/// A whole record's CRC, checked (`Ok` for a framing without one).
#[inline(always)]
fn verify<F: FramedFormat>(bytes: &[u8], total: usize) -> Result<(), Corruption> {
    match F::CHECKSUM {
        None => Ok(()),
        Some(c) => {
            let (hb, payload) = bytes[..total].split_at(F::RECORD_HEADER_SIZE);
            c.verify(hb, payload).map_err(|(stored, computed)| Corruption::Checksum {
                field: c.field,
                stored,
                computed,
            })
        }
    }
}

/// Reads records from an in-memory buffer without copying them.
pub struct SliceReader<'a, F: FramedFormat> {
    bytes: &'a [u8],
    pos: usize,
    index: u64,
    done: bool,
    /// The CRC's zero-byte shifts, made at the first resynchronisation of a framing with one.
    shifts: Option<Box<CrcShifts>>,
    _f: core::marker::PhantomData<F>,
}

impl<'a, F: FramedFormat> SliceReader<'a, F> {
    /// Decodes and checks the file header, and returns it with a reader over the records.
    pub fn new(bytes: &'a [u8]) -> Result<(F::FileHeader, Self), ReadError> {
        let (h, n) = decode_file_header::<F>(bytes, true)?.ok_or_else(|| {
            header_error::<F>(ReadErrorKind::Truncated { what: "file header", needed: 1, available: 0 })
        })?;
        Ok((h, SliceReader { bytes, pos: n, index: 0, done: false, shifts: None, _f: core::marker::PhantomData }))
    }

    /// A reader over records alone, with no file header before them: `bytes` starts with a
    /// record header (a stream's records after a header read elsewhere, or a reader's look-ahead
    /// from [`Reader::peek`]). Offsets and indices count from the start of `bytes`.
    pub fn records(bytes: &'a [u8]) -> Self {
        SliceReader { bytes, pos: 0, index: 0, done: false, shifts: None, _f: core::marker::PhantomData }
    }

    /// Byte offset of the next record.
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// Moves the reader to byte offset `pos` of the same bytes, where the record numbered
    /// `index` starts (a chunk of a time index); a position past the end ends the reading. A
    /// position that is not a record boundary reads whatever is there as records, with the
    /// errors that gives.
    pub fn seek(&mut self, pos: u64, index: u64) {
        let pos = usize::try_from(pos).map_or(self.bytes.len(), |p| p.min(self.bytes.len()));
        self.pos = pos;
        self.index = index;
        self.done = false;
    }

    /// The next record, decoded.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'a, F::Record>, ReadError>> {
        Some(match self.next()? {
            Ok(raw) => decode_event::<F>(raw),
            Err(e) => Err(e),
        })
    }
}

impl<'a, F: FramedFormat> SliceReader<'a, F> {
    /// Decodes records until the end or the first error, calling `f` with each record's framing
    /// and its decoded value (`None` for a type the schema does not know). The error is returned;
    /// after a recoverable one (a bad payload), calling again resumes after that record.
    ///
    /// This is the fastest way through a buffer: each record is decoded in place and lent to `f`,
    /// never moved.
    #[inline]
    pub fn decode_each(&mut self, mut f: impl FnMut(&RawRecord<'a>, Option<&F::Record>)) -> Result<(), ReadError> {
        for raw in self.by_ref() {
            lend::<F>(&raw?, &mut f)?;
        }
        Ok(())
    }

    /// [`decode_each`](Self::decode_each) for a caller that needs to know only whether each record
    /// decodes: `f` gets each record's framing and whether its type is known, the payload checked
    /// ([`FramedFormat::check_record`]) and no record built. The same records, errors and resumption.
    #[inline]
    pub fn check_each(&mut self, mut f: impl FnMut(&RawRecord<'a>, bool)) -> Result<(), ReadError> {
        for raw in self.by_ref() {
            check::<F>(&raw?, &mut f)?;
        }
        Ok(())
    }
}

impl<F: FramedFormat> SliceReader<'_, F> {
    /// The error of a record cut short, out of the hot loop: a truncation, which ends the stream
    /// unless the framing resynchronises and a good record follows.
    #[cold]
    #[inline(never)]
    fn short(&mut self, what: &'static str, needed: u64, available: u64, tag: Option<u64>) -> ReadError {
        let truncated = ReadErrorKind::Truncated { what, needed, available };
        let why = (F::RESYNC && tag.is_some()).then_some(Corruption::Length { needed, available });
        self.resume_or(why, truncated, tag)
    }

    /// The error of a record header that does not decode, out of the hot loop.
    #[cold]
    #[inline(never)]
    fn bad_header(&mut self, e: DecodeError) -> ReadError {
        let bad = ReadErrorKind::BadRecordHeader(e.clone());
        let why = F::RESYNC.then_some(Corruption::Header(e));
        self.resume_or(why, bad, None)
    }

    /// After a record that does not check out (`why`), resumes at the next good record and
    /// reports the bytes passed over; ends the stream with `otherwise` when there is nothing to
    /// resume at (`why` is `None`: a framing without sync or checksum, or a record cut by the end).
    #[cold]
    #[inline(never)]
    fn resume_or(&mut self, why: Option<Corruption>, otherwise: ReadErrorKind, tag: Option<u64>) -> ReadError {
        match why {
            Some(why) => self.resume(why, Some(otherwise), tag),
            None => {
                self.done = true;
                record_error::<F>(otherwise, self.pos as u64, self.index, tag)
            }
        }
    }

    /// [`resume_or`](Self::resume_or) with a corruption: a record that ends past the input's end
    /// (`otherwise`, a truncation) stays a truncation when no good record follows it.
    #[cold]
    #[inline(never)]
    fn resume(&mut self, why: Corruption, otherwise: Option<ReadErrorKind>, tag: Option<u64>) -> ReadError {
        let (pos, index) = (self.pos, self.index);
        let shifts = shifts_of::<F>(&mut self.shifts);
        let mut spans = shifts.map(|s| SpanCrc::new(s, self.bytes, pos + 1));
        let found = resync(self.bytes, pos + 1, F::SYNC, |b, at| checks_out::<F>(b, at, true, &mut spans));
        self.index += 1;
        let skipped = match found {
            Resync::Found(k) => k - pos,
            Resync::More(_) => {
                self.done = true;
                if let (Corruption::Length { .. }, Some(truncated)) = (&why, otherwise) {
                    return record_error::<F>(truncated, pos as u64, index, tag);
                }
                self.bytes.len() - pos
            }
        };
        self.pos += skipped;
        record_error::<F>(ReadErrorKind::Corrupt { why, skipped: skipped as u64 }, pos as u64, index, tag)
    }
}

impl<'a, F: FramedFormat> Iterator for SliceReader<'a, F> {
    type Item = Result<RawRecord<'a>, ReadError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        // The end: nothing left, or (with a `[framing] trailer`) no more than the trailer's bytes.
        if rest.len() <= F::TRAILER.len() {
            self.done = true;
            let end = at_end::<F>(rest).map(|kind| Err(record_error::<F>(kind, self.pos as u64, self.index, None)));
            if end.is_none() {
                // The trailer is read.
                self.pos = self.bytes.len();
            }
            return end;
        }
        let (header, total) = match frame::<F>(rest) {
            Frame::Whole { header, total } => {
                if F::CHECKSUM.is_some() {
                    if let Err(why) = verify::<F>(rest, total) {
                        return Some(Err(self.resume(why, None, Some(header.tag))));
                    }
                }
                (header, total)
            }
            Frame::Short { what, needed, available, tag, .. } => {
                return Some(Err(self.short(what, needed, available, tag)));
            }
            Frame::BadHeader(e) => return Some(Err(self.bad_header(e))),
        };
        let h = F::RECORD_HEADER_SIZE;
        let payload = &rest[h..total];
        let raw = RawRecord { offset: self.pos as u64, index: self.index, header, payload };
        self.pos += total;
        self.index += 1;
        Some(Ok(raw))
    }
}

/// Reads records from any [`Read`] in constant memory: one reusable buffer ([`ReadBuf`]) that
/// only grows to the largest record actually present, and only as its bytes arrive.
pub struct Reader<R, F: FramedFormat> {
    buf: ReadBuf<R>,
    index: u64,
    done: bool,
    header: Option<F::FileHeader>,
    /// The CRC's zero-byte shifts, made at the first resynchronisation of a framing with one.
    shifts: Option<Box<CrcShifts>>,
}

impl<R: Read, F: FramedFormat> Reader<R, F> {
    /// Reads and checks the file header.
    pub fn new(inner: R) -> Result<Self, ReadError> {
        Self::from_buf(ReadBuf::new(inner))
    }

    /// Like [`new`](Self::new), over a buffer that may already hold the first bytes of the stream
    /// (a format that looked at them first, e.g. to report a bad header in its own terms).
    pub fn from_buf(mut buf: ReadBuf<R>) -> Result<Self, ReadError> {
        let mut want = 1;
        loop {
            buf.fill(want).map_err(|e| header_error::<F>(ReadErrorKind::Io(e)))?;
            match decode_file_header::<F>(buf.bytes(), buf.is_eof())? {
                Some((h, n)) => {
                    buf.take(n);
                    return Ok(Reader { buf, index: 0, done: false, header: Some(h), shifts: None });
                }
                None => want = buf.available() + 1,
            }
        }
    }

    /// The file header.
    pub fn file_header(&self) -> &F::FileHeader {
        self.header.as_ref().expect("set by new()")
    }

    /// Byte offset of the next record.
    pub fn position(&self) -> u64 {
        self.buf.position()
    }

    /// Reads ahead until `n` bytes from the next record on are buffered (or the input ends) and
    /// returns the buffered bytes without consuming them, for a format that looks ahead before
    /// its first record (CARLA tells UE5 recordings apart by their first Position packet). The
    /// buffer grows to `n` bytes only as they arrive.
    pub fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        self.buf.fill(n)?;
        Ok(self.buf.bytes())
    }

    /// The next framed record, or `None` at a clean end of the stream. After a truncation or I/O
    /// error, every later call returns `None`.
    #[inline]
    pub fn next_raw(&mut self) -> Option<Result<RawRecord<'_>, ReadError>> {
        if self.done {
            return None;
        }
        let h = F::RECORD_HEADER_SIZE;
        let fail = |s: &mut Self, kind, tag: Option<u64>| {
            s.done = true;
            Some(Err(record_error::<F>(kind, s.buf.position(), s.index, tag)))
        };
        // One byte past a trailer, to tell the input's last bytes from a record's first.
        if let Err(e) = self.buf.fill(h.max(F::TRAILER.len() + 1)) {
            return fail(self, ReadErrorKind::Io(e), None);
        }
        if self.buf.available() <= F::TRAILER.len() && self.buf.is_eof() {
            self.done = true;
            let end = at_end::<F>(self.buf.bytes());
            if end.is_none() {
                // The trailer is read.
                let n = self.buf.available();
                self.buf.take(n);
            }
            return end.and_then(|kind| fail(self, kind, None));
        }
        let (header, total) = loop {
            match frame::<F>(self.buf.bytes()) {
                Frame::Whole { header, total } => match verify::<F>(self.buf.bytes(), total) {
                    Ok(()) => break (header, total),
                    Err(why) => return Some(Err(self.resume(why, None, Some(header.tag)))),
                },
                // The bytes read end inside the record: read the rest, unless the input ended.
                Frame::Short { want: Some(want), tag, .. } if !self.buf.is_eof() => {
                    if let Err(e) = self.buf.fill(want) {
                        return fail(self, ReadErrorKind::Io(e), tag);
                    }
                }
                Frame::Short { what, needed, available, tag, .. } => {
                    let truncated = ReadErrorKind::Truncated { what, needed, available };
                    if F::RESYNC && tag.is_some() {
                        return Some(Err(self.resume(Corruption::Length { needed, available }, Some(truncated), tag)));
                    }
                    return fail(self, truncated, tag);
                }
                Frame::BadHeader(e) if F::RESYNC => {
                    let bad = ReadErrorKind::BadRecordHeader(e.clone());
                    return Some(Err(self.resume(Corruption::Header(e), Some(bad), None)));
                }
                Frame::BadHeader(e) => return fail(self, ReadErrorKind::BadRecordHeader(e), None),
            }
        };
        let (offset, index) = (self.buf.position(), self.index);
        self.index += 1;
        let payload = &self.buf.take(total)[h..];
        Some(Ok(RawRecord { offset, index, header, payload }))
    }

    /// After a record that does not check out (`why`), passes over the bytes up to the next good
    /// record, reading on until one is found or the input ends, and reports them. A record cut by
    /// the end with nothing good after it stays a truncation (`otherwise`). The buffer holds at
    /// most a candidate record and a chunk.
    #[cold]
    #[inline(never)]
    fn resume(&mut self, why: Corruption, otherwise: Option<ReadErrorKind>, tag: Option<u64>) -> ReadError {
        let (offset, index) = (self.buf.position(), self.index);
        self.index += 1;
        let mut from = 1;
        loop {
            let eof = self.buf.is_eof();
            let shifts = shifts_of::<F>(&mut self.shifts);
            let mut spans = shifts.map(|s| SpanCrc::new(s, self.buf.bytes(), from));
            match resync(self.buf.bytes(), from, F::SYNC, |b, at| checks_out::<F>(b, at, eof, &mut spans)) {
                Resync::Found(k) => {
                    self.buf.take(k);
                    break;
                }
                Resync::More(k) if !eof => {
                    self.buf.take(k);
                    from = 0;
                    if let Err(e) = self.buf.fill(self.buf.available().saturating_add(CHUNK)) {
                        self.done = true;
                        return record_error::<F>(ReadErrorKind::Io(e), offset, index, tag);
                    }
                }
                Resync::More(_) => {
                    self.done = true;
                    if let (Corruption::Length { .. }, Some(truncated)) = (&why, otherwise) {
                        return record_error::<F>(truncated, offset, index, tag);
                    }
                    let n = self.buf.available();
                    self.buf.take(n);
                    break;
                }
            }
        }
        let skipped = self.buf.position() - offset;
        record_error::<F>(ReadErrorKind::Corrupt { why, skipped }, offset, index, tag)
    }

    /// Like [`SliceReader::decode_each`]: decodes records until the end or the first error, lending
    /// each to `f` without moving it. After a recoverable error, calling again resumes.
    #[inline]
    pub fn decode_each(&mut self, mut f: impl FnMut(&RawRecord<'_>, Option<&F::Record>)) -> Result<(), ReadError> {
        while let Some(raw) = self.next_raw() {
            lend::<F>(&raw?, &mut f)?;
        }
        Ok(())
    }

    /// Like [`SliceReader::check_each`]: checks records until the end or the first error, without
    /// building them. After a recoverable error, calling again resumes.
    #[inline]
    pub fn check_each(&mut self, mut f: impl FnMut(&RawRecord<'_>, bool)) -> Result<(), ReadError> {
        while let Some(raw) = self.next_raw() {
            check::<F>(&raw?, &mut f)?;
        }
        Ok(())
    }

    /// The next record, decoded. A record that fails to decode is reported and skipped (its
    /// length is known), so reading can go on; truncation and I/O errors end the stream.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_, F::Record>, ReadError>> {
        Some(match self.next_raw()? {
            Ok(raw) => decode_event::<F>(raw),
            Err(e) => Err(e),
        })
    }
}

/// An error while writing.
#[derive(Debug)]
pub enum WriteError {
    Io(io::Error),
    Encode(EncodeError),
    /// A raw record's tag does not fit the record header's tag field.
    TagTooLarge {
        field: &'static str,
        tag: u64,
        max: u64,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Io(e) => write!(f, "I/O error: {e}"),
            WriteError::Encode(e) => write!(f, "{e}"),
            WriteError::TagTooLarge { field, tag, max } => {
                write!(f, "record tag {tag} does not fit the header field `{field}` (max {max}); nothing was written")
            }
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io(e) => Some(e),
            WriteError::Encode(e) => Some(e),
            WriteError::TagTooLarge { .. } => None,
        }
    }
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

impl From<EncodeError> for WriteError {
    fn from(e: EncodeError) -> Self {
        WriteError::Encode(e)
    }
}

/// Writes a file header, then records, through one reusable buffer (64 KiB).
///
/// Like [`std::io::BufWriter`], a writer that is dropped writes out what it buffered, so an
/// early return (`?`) in the caller loses nothing it was given; an error at that point cannot be
/// reported, so call [`finish`](Self::finish) to see it. A process killed mid-write leaves a
/// file whose complete records decode (at most the buffered ones are missing).
#[must_use = "records are buffered; call `finish` to write them out and see any error"]
pub struct Writer<W: Write, F: FramedFormat> {
    /// `None` only once `finish` has taken it.
    inner: Option<W>,
    buf: Vec<u8>,
    _f: core::marker::PhantomData<F>,
}

impl<W: Write, F: FramedFormat> Drop for Writer<W, F> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            // Errors cannot be reported from drop; `finish` is the way to see them.
            let _ = inner.write_all(&self.buf).and_then(|_| inner.flush());
        }
    }
}

impl<W: Write, F: FramedFormat> Writer<W, F> {
    pub fn new(inner: W, header: &F::FileHeader) -> Result<Self, WriteError> {
        let mut w = Writer { inner: Some(inner), buf: Vec::with_capacity(CHUNK), _f: core::marker::PhantomData };
        header.encode(&mut w.buf, Endian::Little)?;
        Ok(w)
    }

    /// Writes one record. Nothing is written if it cannot be encoded.
    pub fn write(&mut self, timestamp: u64, record: &F::Record) -> Result<(), WriteError> {
        let len = record.encoded_len();
        self.check_len(len)?;
        let start = self.buf.len();
        let h = F::RECORD_HEADER_SIZE;
        self.buf.resize(start + h, 0);
        let header = RecordHeader { tag: F::record_tag(record), len: len as u64, timestamp: Some(timestamp) };
        F::write_record_header(&header, &mut self.buf[start..]);
        if let Err(e) = record.encode(&mut self.buf, Endian::Little) {
            self.buf.truncate(start);
            return Err(e.into());
        }
        self.seal(start);
        self.maybe_flush()
    }

    /// Writes a record with a raw payload (e.g. one of a type this schema does not know).
    /// A tag that the header's tag field cannot hold is refused (it would become another tag).
    pub fn write_raw(&mut self, tag: u64, timestamp: u64, payload: &[u8]) -> Result<(), WriteError> {
        if tag > F::MAX_TAG {
            return Err(WriteError::TagTooLarge { field: F::TAG_FIELD, tag, max: F::MAX_TAG });
        }
        self.check_len(payload.len())?;
        let start = self.buf.len();
        self.buf.resize(start + F::RECORD_HEADER_SIZE, 0);
        let header = RecordHeader { tag, len: payload.len() as u64, timestamp: Some(timestamp) };
        F::write_record_header(&header, &mut self.buf[start..]);
        self.buf.extend_from_slice(payload);
        self.seal(start);
        self.maybe_flush()
    }

    /// Fills in the CRC of the record that starts at `start` of the buffer, if the framing has one.
    #[inline]
    fn seal(&mut self, start: usize) {
        if let Some(c) = F::CHECKSUM {
            let (header, payload) = self.buf[start..].split_at_mut(F::RECORD_HEADER_SIZE);
            c.fill(header, payload);
        }
    }

    fn check_len(&self, len: usize) -> Result<(), WriteError> {
        if len as u64 > F::MAX_PAYLOAD {
            return Err(EncodeError::TooLong { field: "payload length", len: len as u64, max: F::MAX_PAYLOAD }.into());
        }
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<(), WriteError> {
        if self.buf.len() >= CHUNK {
            if let Some(inner) = self.inner.as_mut() {
                inner.write_all(&self.buf)?;
            }
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes the file trailer (`[framing] trailer`, if any), then everything buffered, and
    /// returns the inner writer. This is how to see a write error; dropping the writer flushes
    /// too, but silently and without the trailer, so that readers report the file as unfinished.
    pub fn finish(mut self) -> Result<W, WriteError> {
        let Some(mut inner) = self.inner.take() else {
            return Err(WriteError::Io(io::Error::other("the writer was already finished")));
        };
        self.buf.extend_from_slice(F::TRAILER);
        inner.write_all(&self.buf)?;
        self.buf.clear();
        inner.flush()?;
        Ok(inner)
    }
}
