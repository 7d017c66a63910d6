//! The WPILOG reader: the file header and record headers decoded by the generated types, the
//! entry table, and records lent one at a time from a constant-size read buffer.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};

use logspec_runtime::{Cursor, Decode, DecodeError, DecodeErrorKind, Endian, ReadBuf};

use super::{ControlBody, ControlRecord, Entry, FileHeader, RecordHeader};

/// Entry ids below this are kept in a vector indexed by id (the common case: writers number
/// entries from 1); larger ids go to a map. A Start record can make the reader allocate at most
/// this many pointers (32 KB), never an entry per id up to its own.
const DENSE_IDS: u32 = 4096;

/// The longest record header: the lengths byte, 4 + 4 + 8 bytes.
const MAX_HEADER: usize = 17;

/// A record as [`Reader::next_record`] lends it until the next call.
#[derive(Clone, Debug)]
pub struct RecordRef<'a> {
    /// Absolute byte offset of the record header in the file.
    pub offset: u64,
    /// The record header as read (its `lengths` byte keeps the widths the file used).
    pub header: RecordHeader,
    /// The payload bytes.
    pub payload: &'a [u8],
    pub body: Body<'a>,
}

/// What a record is.
#[derive(Clone, Debug)]
pub enum Body<'a> {
    /// A control record (entry 0), already applied to the reader's entry table, with the entry
    /// it is about: the one a Start started, a Set Metadata changed, or a Finish ended (`None`
    /// when its id was not active).
    Control { record: &'a ControlRecord, entry: Option<&'a Entry> },
    /// An entry-0 record that is not a valid Start (at least 17 bytes, three complete strings),
    /// Finish (exactly 5 bytes) or Set Metadata (at least 9 bytes, a complete string): why.
    /// Lent like the record, so that a record stays small to return.
    ControlInvalid(&'a DecodeError),
    /// A data record, with the entry active for its id; `None` for an orphan (no Start record
    /// for the id, or its entry was finished). Decode the payload with [`Entry::decode_ref`]
    /// (borrowed, no allocation) or [`Entry::decode`] (owned).
    Data(Option<&'a Entry>),
}

/// An error that ends reading (boxed, so that a record's `Result` stays small).
#[derive(Debug)]
pub struct WpilogError(Box<WpilogErrorDetail>);

impl WpilogError {
    #[cold]
    pub fn new(offset: u64, record: Option<u64>, kind: WpilogErrorKind) -> Self {
        WpilogError(Box::new(WpilogErrorDetail { offset, record, kind }))
    }
}

impl std::ops::Deref for WpilogError {
    type Target = WpilogErrorDetail;
    fn deref(&self) -> &WpilogErrorDetail {
        &self.0
    }
}

/// The parts of a [`WpilogError`].
#[derive(Debug)]
pub struct WpilogErrorDetail {
    /// Absolute byte offset: of the record that failed, or 0 for the file header.
    pub offset: u64,
    /// The index of the failing record (0 for the first record after the header), if past the header.
    pub record: Option<u64>,
    pub kind: WpilogErrorKind,
}

#[derive(Debug)]
pub enum WpilogErrorKind {
    Io(io::Error),
    /// The file does not start with `WPILOG` (the header's const field says what it found).
    BadMagic(DecodeError),
    /// A version other than 1.x.
    UnsupportedVersion(u16),
    /// The file header does not decode (bad UTF-8 in the extra header).
    Header(DecodeError),
    /// The input ends inside a record (or the file header) that needs `needed` bytes from its
    /// start; `available` are left.
    Truncated {
        needed: u64,
        available: u64,
    },
}

impl fmt::Display for WpilogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}", self.offset)?;
        if let Some(r) = self.record {
            write!(f, ", record {r}")?;
        }
        f.write_str(": ")?;
        match &self.kind {
            WpilogErrorKind::Io(e) => write!(f, "read error: {e}"),
            WpilogErrorKind::BadMagic(e) => write!(f, "not a WPILOG file: {e}"),
            WpilogErrorKind::UnsupportedVersion(v) => {
                write!(f, "unsupported WPILOG version {}.{} (0x{v:04x}); this reader knows 1.x", v >> 8, v & 0xff)
            }
            WpilogErrorKind::Header(e) => write!(f, "file header: {e}"),
            WpilogErrorKind::Truncated { needed, available } => match self.record {
                Some(_) => write!(
                    f,
                    "the file ends inside a record: it needs {needed} bytes, {available} are left (trailing bytes)"
                ),
                None => {
                    write!(f, "the file ends inside the file header: it needs {needed} bytes, {available} are left")
                }
            },
        }
    }
}

impl std::error::Error for WpilogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            WpilogErrorKind::Io(e) => Some(e),
            WpilogErrorKind::Header(e) | WpilogErrorKind::BadMagic(e) => Some(e),
            _ => None,
        }
    }
}

/// The entry table: id -> the active entry.
#[derive(Default)]
struct Entries {
    dense: Vec<Option<Box<Entry>>>,
    sparse: HashMap<u32, Entry>,
}

impl Entries {
    #[inline]
    fn get(&self, id: u32) -> Option<&Entry> {
        if id < DENSE_IDS {
            self.dense.get(id as usize).and_then(|e| e.as_deref())
        } else {
            self.sparse.get(&id)
        }
    }

    fn get_mut(&mut self, id: u32) -> Option<&mut Entry> {
        if id < DENSE_IDS {
            self.dense.get_mut(id as usize).and_then(|e| e.as_deref_mut())
        } else {
            self.sparse.get_mut(&id)
        }
    }

    fn insert(&mut self, e: Entry) {
        if e.id < DENSE_IDS {
            let i = e.id as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, None);
            }
            self.dense[i] = Some(Box::new(e));
        } else {
            self.sparse.insert(e.id, e);
        }
    }

    fn remove(&mut self, id: u32) -> Option<Entry> {
        if id < DENSE_IDS {
            self.dense.get_mut(id as usize).and_then(Option::take).map(|e| *e)
        } else {
            self.sparse.remove(&id)
        }
    }
}

/// A streaming WPILOG reader over any `Read`, in constant memory (the read buffer grows only to
/// the largest record).
pub struct Reader<R> {
    buf: ReadBuf<R>,
    header: FileHeader,
    entries: Entries,
    /// Bytes of the record last lent, consumed at the next call.
    pos: usize,
    /// The control record last decoded.
    control: Option<ControlRecord>,
    /// Why the last invalid control record did not decode.
    invalid: Option<DecodeError>,
    /// The entry the last Finish ended.
    finished: Option<Entry>,
    records: u64,
    done: bool,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the file header.
    pub fn new(inner: R) -> Result<Self, WpilogError> {
        let mut buf = ReadBuf::new(inner);
        let header_err = |kind| WpilogError::new(0, None, kind);
        let mut want = 1;
        let header = loop {
            buf.fill(want).map_err(|e| header_err(WpilogErrorKind::Io(e)))?;
            let mut c = Cursor::new(buf.bytes());
            match FileHeader::decode(&mut c, Endian::Little) {
                Ok(h) => {
                    let n = c.position();
                    buf.take(n);
                    break h;
                }
                Err(e) => match e.kind {
                    DecodeErrorKind::UnexpectedEof { needed, available } => {
                        if buf.is_eof() {
                            let kind = WpilogErrorKind::Truncated {
                                needed: e.offset + needed,
                                available: e.offset + available,
                            };
                            return Err(header_err(kind));
                        }
                        want = usize::try_from(e.offset + needed).unwrap_or(usize::MAX).max(buf.available() + 1);
                    }
                    DecodeErrorKind::BadConst { .. } => return Err(header_err(WpilogErrorKind::BadMagic(e))),
                    _ => return Err(header_err(WpilogErrorKind::Header(e))),
                },
            }
        };
        if header.version >> 8 != 1 {
            return Err(header_err(WpilogErrorKind::UnsupportedVersion(header.version)));
        }
        Ok(Reader {
            buf,
            header,
            entries: Entries::default(),
            pos: 0,
            control: None,
            invalid: None,
            finished: None,
            records: 0,
            done: false,
        })
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The entry active for `id`, if any.
    pub fn entry(&self, id: u32) -> Option<&Entry> {
        self.entries.get(id)
    }

    /// Complete records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Absolute offset of the next record (after the last one lent).
    pub fn position(&self) -> u64 {
        self.buf.position() + self.pos as u64
    }

    /// The next record, `None` at the end of the input, or the error that ends reading (a record
    /// cut by the end of the input, a read error). Every complete record before it is returned
    /// first.
    #[inline(always)]
    pub fn next_record(&mut self) -> Option<Result<RecordRef<'_>, WpilogError>> {
        if self.done {
            return None;
        }
        self.buf.take(std::mem::take(&mut self.pos));
        let offset = self.buf.position();
        if let Err(e) = self.buf.fill(MAX_HEADER) {
            return Some(Err(self.fail(offset, WpilogErrorKind::Io(e))));
        }
        if self.buf.available() == 0 {
            self.done = true;
            return None;
        }
        let mut c = Cursor::new(self.buf.bytes());
        let header = match RecordHeader::decode(&mut c, Endian::Little) {
            Ok(h) => h,
            // With 17 bytes asked for, only the end of the input cuts a header.
            Err(e) => {
                let (needed, available) = match e.kind {
                    DecodeErrorKind::UnexpectedEof { needed, available } => (e.offset + needed, e.offset + available),
                    _ => (MAX_HEADER as u64, self.buf.available() as u64),
                };
                return Some(Err(self.fail(offset, WpilogErrorKind::Truncated { needed, available })));
            }
        };
        let hlen = c.position();
        let total = hlen as u64 + u64::from(header.size);
        let total_usize = usize::try_from(total).unwrap_or(usize::MAX);
        if let Err(e) = self.buf.fill(total_usize) {
            return Some(Err(self.fail(offset, WpilogErrorKind::Io(e))));
        }
        if self.buf.available() < total_usize {
            let available = self.buf.available() as u64;
            return Some(Err(self.fail(offset, WpilogErrorKind::Truncated { needed: total, available })));
        }
        self.pos = total_usize;
        self.records += 1;
        let payload = &self.buf.bytes()[hlen..total_usize];
        let body = if header.entry == 0 {
            control_body(&mut self.entries, &mut self.finished, &mut self.control, &mut self.invalid, payload)
        } else {
            Body::Data(self.entries.get(header.entry))
        };
        Some(Ok(RecordRef { offset, header, payload, body }))
    }

    #[cold]
    #[inline(never)]
    fn fail(&mut self, offset: u64, kind: WpilogErrorKind) -> WpilogError {
        self.done = true;
        WpilogError::new(offset, Some(self.records), kind)
    }
}

/// A control record (entry 0) decoded and applied to the entry table. Out of line, so that the
/// data-record path of [`Reader::next_record`] stays small enough to inline into a caller's loop.
#[inline(never)]
fn control_body<'a>(
    entries: &'a mut Entries,
    finished: &'a mut Option<Entry>,
    control: &'a mut Option<ControlRecord>,
    invalid: &'a mut Option<DecodeError>,
    payload: &[u8],
) -> Body<'a> {
    match self::control(payload) {
        Ok(rec) => {
            let id = apply(&mut *entries, &mut *finished, &rec);
            let (entries, finished): (&'a Entries, &'a Option<Entry>) = (entries, finished);
            let entry = match rec.body {
                ControlBody::Finish { .. } => finished.as_ref(),
                _ => entries.get(id),
            };
            Body::Control { record: control.insert(rec), entry }
        }
        Err(e) => Body::ControlInvalid(invalid.insert(e)),
    }
}

/// A control record's payload decoded as WPILib's reader accepts it: Finish must be exactly 5
/// bytes; Start and Set Metadata may be followed by bytes the specification gives no meaning.
pub fn control(payload: &[u8]) -> Result<ControlRecord, DecodeError> {
    let mut c = Cursor::new(payload);
    let rec = ControlRecord::decode(&mut c, Endian::Little)?;
    if matches!(rec.body, ControlBody::Finish { .. }) && !c.is_empty() {
        let extra = c.remaining() as u64;
        return Err(DecodeError::new(DecodeErrorKind::TrailingBytes { extra })
            .at(c.position())
            .in_type("ControlRecord"));
    }
    Ok(rec)
}

/// Applies a control record to the entry table: a Start (re)defines its id, a Finish ends it
/// (moving the entry to `finished`), a Set Metadata replaces the metadata of an active entry.
/// Returns the id the record is about.
fn apply(entries: &mut Entries, finished: &mut Option<Entry>, rec: &ControlRecord) -> u32 {
    match &rec.body {
        ControlBody::Start { entry, name, r#type, metadata } => {
            entries.insert(Entry::new(*entry, name.clone(), r#type.clone(), metadata.clone()));
            *entry
        }
        ControlBody::Finish { entry } => {
            *finished = entries.remove(*entry);
            *entry
        }
        ControlBody::SetMetadata { entry, metadata } => {
            if let Some(e) = entries.get_mut(*entry) {
                e.metadata.clone_from(metadata);
            }
            *entry
        }
    }
}

/// Reads a whole file from memory: the header, every complete record (as owned header, payload
/// and body) and the error that ended reading, if any. The plain entry point for fuzzing and
/// tests; the CLI streams with [`Reader`].
#[allow(clippy::type_complexity)]
pub fn read_all(bytes: &[u8]) -> Result<(FileHeader, Vec<(RecordHeader, Vec<u8>)>, Option<WpilogError>), WpilogError> {
    let mut r = Reader::new(bytes)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record() {
        match rec {
            Ok(rec) => out.push((rec.header, rec.payload.to_vec())),
            Err(e) => return Ok((r.header.clone(), out, Some(e))),
        }
    }
    Ok((r.header.clone(), out, None))
}
