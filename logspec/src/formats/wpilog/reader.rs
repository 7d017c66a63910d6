//! The WPILOG reader: the file header and record headers decoded by the generated types, the
//! entry table, and records lent one at a time from a constant-size read buffer.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};

use std::marker::PhantomData;

use logspec_runtime::{Cursor, Decode, DecodeError, DecodeErrorKind, Endian, Input, ReadBuf, WindowBuf};

use super::{ControlBody, ControlRecord, DataType, Entry, FileHeader, RecordHeader};

/// Entry ids below this, or below twice the number of active entries, are kept in a vector
/// indexed by id (the common case: writers number entries from 1); larger ids go to a map. A
/// Start record can make the reader allocate at most this many slots beyond those two per active
/// entry, never a slot per id up to its own.
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
    Control { record: &'a ControlRecord, entry: Option<Entry<'a>> },
    /// An entry-0 record that is not a valid Start (at least 17 bytes, three complete strings),
    /// Finish (exactly 5 bytes) or Set Metadata (at least 9 bytes, a complete string): why.
    /// Lent like the record, so that a record stays small to return.
    ControlInvalid(&'a DecodeError),
    /// A data record, with the entry active for its id; `None` for an orphan (no Start record
    /// for the id, or its entry was finished). Decode the payload with [`Entry::decode_ref`]
    /// (borrowed, no allocation) or [`Entry::decode`] (owned).
    Data(Option<Entry<'a>>),
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

/// The entry table: id -> the active entry, in memory proportional to the Start records of
/// the active entries (a file of millions of Start records keeps millions of entries).
///
/// Every entry's name, type and metadata lie one after the other in one buffer (`text`); an
/// entry is a [`Slot`] (24 bytes) with where they are and the variant its type selects. Slots
/// are kept in a vector indexed by id while the ids stay below twice the number of active
/// entries (or [`DENSE_IDS`]), in a map otherwise. A Finish or a Set Metadata leaves the old
/// strings dead in the buffer; when the dead outweigh the live, the table is rebuilt
/// ([`Entries::compact`]), so that a long log that restarts or re-describes its entries does not
/// grow.
#[derive(Default)]
struct Entries {
    dense: Vec<Option<Slot>>,
    /// Entries whose ids were too far above the dense range when they started. An id is in
    /// `dense` or `sparse`, never both; the dense range may grow past a sparse id.
    sparse: HashMap<u32, Slot>,
    text: String,
    /// The active entries, and the weight ([`Slot::weight`]) of them and of the dead ones.
    live: usize,
    live_weight: usize,
    dead_weight: usize,
    /// The entry the last Finish ended (its strings stay in `text` until the next compaction,
    /// which happens only before a control record is applied).
    finished: Option<Slot>,
}

/// An active entry in 24 bytes: its id, where its strings are in [`Entries::text`] (a 48-bit
/// offset), their lengths, and its type's variant.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    id: u32,
    at_low: u32,
    at_high: u16,
    name: u32,
    ty: u32,
    meta: u32,
    /// A byte of 11 values, so that `Option<Slot>` is no larger.
    data_type: DataType,
}

const _: () = assert!(std::mem::size_of::<Option<Slot>>() == 24);

impl Slot {
    #[inline]
    pub(super) fn id(&self) -> u32 {
        self.id
    }

    #[inline]
    fn at(&self) -> usize {
        (u64::from(self.at_high) << 32 | u64::from(self.at_low)) as usize
    }

    fn len(&self) -> usize {
        self.name as usize + self.ty as usize + self.meta as usize
    }

    /// What an entry costs: its strings and its slot.
    fn weight(&self) -> usize {
        self.len() + std::mem::size_of::<Slot>()
    }

    #[inline]
    pub(super) fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The name, type and metadata in `text` (empty if `text` is not the table's, which the
    /// table never lends).
    #[inline]
    pub(super) fn strings<'a>(&self, text: &'a str) -> (&'a str, &'a str, &'a str) {
        let text = text.get(self.at()..self.at() + self.len()).unwrap_or("");
        let (name, rest) = text.split_at_checked(self.name as usize).unwrap_or(("", ""));
        rest.split_at_checked(self.ty as usize).map_or((name, "", ""), |(ty, meta)| (name, ty, meta))
    }
}

/// The table is rebuilt when the dead weigh more than the live and more than this.
const COMPACT_MIN: usize = 64 * 1024;

impl Entries {
    #[inline]
    fn slot(&self, id: u32) -> Option<&Slot> {
        match self.dense.get(id as usize) {
            Some(Some(s)) => Some(s),
            _ if self.sparse.is_empty() => None,
            _ => self.sparse.get(&id),
        }
    }

    #[inline]
    fn get(&self, id: u32) -> Option<Entry<'_>> {
        self.slot(id).map(|s| Entry::new(s, &self.text))
    }

    fn finished(&self) -> Option<Entry<'_>> {
        self.finished.as_ref().map(|s| Entry::new(s, &self.text))
    }

    /// Starts `id` (ending the entry active for it, if any).
    fn start(&mut self, id: u32, name: &str, type_name: &str, metadata: &str, data_type: DataType) {
        self.remove(id);
        let at = self.text.len();
        for s in [name, type_name, metadata] {
            self.text.push_str(s);
        }
        // Strings of a record longer than u32::MAX bytes do not exist (its size is a u32).
        let len = |s: &str| u32::try_from(s.len()).unwrap_or(u32::MAX);
        // A 48-bit offset: the strings of 256 TB of entries do not fit in memory.
        let (at_low, at_high) = (at as u64 as u32, (at as u64 >> 32) as u16);
        let slot = Slot { id, at_low, at_high, name: len(name), ty: len(type_name), meta: len(metadata), data_type };
        self.live += 1;
        self.live_weight += slot.weight();
        let i = id as usize;
        if i < self.dense.len() || i < self.dense_limit() {
            if self.dense.len() <= i {
                self.dense.resize(i + 1, None);
            }
            self.dense[i] = Some(slot);
        } else {
            self.sparse.insert(id, slot);
        }
    }

    /// Ids below this may be kept in the vector.
    fn dense_limit(&self) -> usize {
        (DENSE_IDS as usize).max(2 * self.live)
    }

    /// Ends `id`; returns its slot (its strings are dead, but stay until the next compaction).
    fn remove(&mut self, id: u32) -> Option<Slot> {
        let slot = match self.dense.get_mut(id as usize).and_then(Option::take) {
            Some(s) => Some(s),
            None if self.sparse.is_empty() => None,
            None => self.sparse.remove(&id),
        }?;
        self.live -= 1;
        self.live_weight -= slot.weight();
        self.dead_weight += slot.weight();
        Some(slot)
    }

    /// Replaces the metadata of the active entry `id`: its name and type again, then the new
    /// metadata (an entry's strings stay together); the old strings are dead.
    fn set_metadata(&mut self, id: u32, metadata: &str) {
        let slot = match self.dense.get_mut(id as usize) {
            Some(Some(s)) => s,
            _ => match self.sparse.get_mut(&id) {
                Some(s) => s,
                None => return,
            },
        };
        let old = *slot;
        let at = self.text.len();
        let (name, type_name, _) = old.strings(&self.text);
        let kept = [name, type_name].concat();
        self.text.push_str(&kept);
        self.text.push_str(metadata);
        let (at_low, at_high) = (at as u64 as u32, (at as u64 >> 32) as u16);
        *slot = Slot { at_low, at_high, meta: u32::try_from(metadata.len()).unwrap_or(u32::MAX), ..old };
        self.live_weight = self.live_weight - old.weight() + slot.weight();
        self.dead_weight += old.len();
    }

    /// Every active entry.
    fn iter(&self) -> impl Iterator<Item = Slot> + '_ {
        self.dense.iter().filter_map(|s| *s).chain(self.sparse.values().copied())
    }

    /// Rebuilds the table from the active entries when the dead outweigh them: a new buffer
    /// with only their strings, and the dense range chosen again.
    fn compact_if_worth_it(&mut self) {
        if self.dead_weight <= self.live_weight.max(COMPACT_MIN) {
            return;
        }
        self.compact();
    }

    fn compact(&mut self) {
        let old = std::mem::take(self);
        self.text.reserve_exact(old.live_weight - old.live * std::mem::size_of::<Slot>());
        // The vector covers the active ids below the limit for this many entries.
        let limit = (DENSE_IDS as usize).max(2 * old.live);
        let dense = old.iter().map(|s| s.id as usize + 1).filter(|n| *n <= limit).max().unwrap_or(0);
        self.dense.reserve_exact(dense);
        self.dense.resize(dense, None);
        for s in old.iter() {
            let (name, type_name, metadata) = s.strings(&old.text);
            self.start(s.id, name, type_name, metadata, s.data_type());
        }
    }
}

/// A streaming WPILOG reader over any `Read`, in constant memory (the read buffer grows only to
/// the largest record); or over bytes in memory lent a window at a time ([`Reader::from_window`]:
/// a mapped file, read in place, where the reader can [`seek`](Reader::seek)).
pub struct Reader<R, I = ReadBuf<R>> {
    buf: I,
    _input: PhantomData<R>,
    header: FileHeader,
    entries: Entries,
    /// Bytes of the record last lent, consumed at the next call.
    pos: usize,
    /// The control record last decoded.
    control: Option<ControlRecord>,
    /// Why the last invalid control record did not decode.
    invalid: Option<DecodeError>,
    records: u64,
    done: bool,
    /// Reading ends at the first record at or after this offset ([`Reader::stop_at`]).
    stop: u64,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the file header.
    pub fn new(inner: R) -> Result<Self, WpilogError> {
        Self::over(ReadBuf::new(inner))
    }
}

impl<'a, A: FnMut(u64)> Reader<&'a [u8], WindowBuf<'a, A>> {
    /// A reader of WPILOG bytes in memory lent a window at a time (a mapped file: see
    /// [`WindowBuf`]): records are lent in place, never copied into a read buffer.
    pub fn from_window(buf: WindowBuf<'a, A>) -> Result<Self, WpilogError> {
        Self::over(buf)
    }
}

impl<R, I: Input> Reader<R, I> {
    /// Reads and checks the file header from `buf`.
    fn over(mut buf: I) -> Result<Self, WpilogError> {
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
            _input: PhantomData,
            header,
            entries: Entries::default(),
            pos: 0,
            control: None,
            invalid: None,
            records: 0,
            done: false,
            stop: u64::MAX,
        })
    }

    /// Moves to absolute offset `offset`, which must be a record's start, where the record
    /// numbered `record` (0 for the first after the header) starts (the time index's chunks and
    /// state messages, `logspec::log::index`), keeping the entry table, where the input can go
    /// back and forth ([`Reader::from_window`]); `false`, and nothing moved, where it cannot.
    /// Reading goes on from there, until [`stop_at`](Self::stop_at).
    pub fn seek(&mut self, offset: u64, record: u64) -> bool {
        if !self.buf.seek(offset) {
            return false;
        }
        self.pos = 0;
        self.done = false;
        self.records = record;
        true
    }

    /// Makes reading end (`None`) at the first record that starts at or after `offset`; `None`:
    /// at the end of the input.
    pub fn stop_at(&mut self, offset: Option<u64>) {
        self.stop = offset.unwrap_or(u64::MAX);
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The entry active for `id`, if any.
    pub fn entry(&self, id: u32) -> Option<Entry<'_>> {
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
        if offset >= self.stop {
            return None;
        }
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
            control_body(&mut self.entries, &mut self.control, &mut self.invalid, payload)
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
    control: &'a mut Option<ControlRecord>,
    invalid: &'a mut Option<DecodeError>,
    payload: &[u8],
) -> Body<'a> {
    match self::control(payload) {
        Ok(rec) => {
            let id = apply(&mut *entries, &rec);
            let entries: &'a Entries = entries;
            let entry = match rec.body {
                ControlBody::Finish { .. } => entries.finished(),
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
/// (keeping the entry as the finished one), a Set Metadata replaces the metadata of an active
/// entry. Returns the id the record is about.
fn apply(entries: &mut Entries, rec: &ControlRecord) -> u32 {
    // Before anything that the record lends is in the table.
    entries.finished = None;
    entries.compact_if_worth_it();
    match &rec.body {
        ControlBody::Start { entry, name, r#type, metadata } => {
            entries.start(*entry, name, r#type, metadata, DataType::of(r#type));
            *entry
        }
        ControlBody::Finish { entry } => {
            entries.finished = entries.remove(*entry);
            *entry
        }
        ControlBody::SetMetadata { entry, metadata } => {
            entries.set_metadata(*entry, metadata);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::wpilog::Writer;

    /// Reads every record of `bytes`, checking each data record's entry against `names` (id ->
    /// the name it must have, `None` for an orphan); returns the reader at the end.
    fn read(bytes: &[u8], names: impl Fn(u32) -> Option<String>) -> Reader<&[u8]> {
        let mut r = Reader::new(bytes).unwrap();
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            if let Body::Data(e) = rec.body {
                let id = rec.header.entry;
                assert_eq!(e.map(|e| (e.id(), e.name().to_string())), names(id).map(|n| (id, n)), "entry {id}");
            }
        }
        r
    }

    #[test]
    fn restarting_one_entry_keeps_the_table_small() {
        // 20,000 Start/Finish cycles and 20,000 Set Metadata records of one id, each with 1 KB
        // strings: 40 MB of strings that the table must not keep.
        let mut w = Writer::new(Vec::new(), "").unwrap();
        let long = |c: char, i: u32| format!("/{i}/{}", c.to_string().repeat(1000));
        for i in 0..20_000u32 {
            w.start(7, &long('n', i), "double", &long('m', i), 1).unwrap();
            w.set_metadata(7, &long('s', i), 2).unwrap();
            w.value(7, 3, &crate::formats::wpilog::DataValue::Double { value: 1.5 }).unwrap();
            w.finish(7, 4).unwrap();
        }
        let bytes = w.finish_file().unwrap();
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut i = 0u32;
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            match rec.body {
                Body::Control { record, entry } => {
                    let e = entry.expect("every control record is about entry 7");
                    assert_eq!((e.id(), e.name(), e.type_name()), (7, long('n', i).as_str(), "double"));
                    match record.body {
                        ControlBody::Start { .. } => assert_eq!(e.metadata(), long('m', i)),
                        ControlBody::SetMetadata { .. } | ControlBody::Finish { .. } => {
                            assert_eq!(e.metadata(), long('s', i))
                        }
                    }
                    if matches!(record.body, ControlBody::Finish { .. }) {
                        i += 1;
                    }
                }
                Body::Data(e) => {
                    let e = e.expect("entry 7 is active");
                    assert!(e.is_standard());
                    assert_eq!((e.name(), e.metadata()), (long('n', i).as_str(), long('s', i).as_str()));
                }
                Body::ControlInvalid(e) => panic!("{e}"),
            }
        }
        assert_eq!(i, 20_000);
        let t = &r.entries;
        assert_eq!((t.live, t.live_weight), (0, 0));
        // Compacted whenever the dead outweighed 64 KiB: never near the 40 MB written.
        assert!(t.text.capacity() < 512 * 1024, "{} bytes of strings kept", t.text.capacity());
        assert!(t.dead_weight <= COMPACT_MIN + 4 * 1024, "{}", t.dead_weight);
    }

    #[test]
    fn sparse_ids_are_kept_in_a_map_and_found() {
        let mut w = Writer::new(Vec::new(), "").unwrap();
        let big = [u32::MAX, 1 << 31, 5_000_000, 10_000];
        for id in big {
            w.start(id, &format!("/big{id}"), "int64", "", 1).unwrap();
        }
        // Then 12,000 dense ids: the dense range (twice the active entries) grows past 10,000,
        // which stays in the map until it is started again.
        for id in (1..=12_000).filter(|id| *id != 10_000) {
            w.start(id, &format!("/e{id}"), "double", "", 2).unwrap();
        }
        for id in big.into_iter().chain([1, 9_999, 12_000, 12_001, 4_000_000]) {
            w.raw(id, 3, &[0; 8]).unwrap();
        }
        let bytes = w.finish_file().unwrap();
        let name = |id: u32| match id {
            1..=12_000 if id != 10_000 => Some(format!("/e{id}")),
            u32::MAX | 2_147_483_648 | 5_000_000 | 10_000 => Some(format!("/big{id}")),
            _ => None,
        };
        let r = read(&bytes, name);
        let t = &r.entries;
        assert_eq!(t.live, 12_003);
        assert!(t.dense.len() <= 24_006, "{}", t.dense.len());
        assert!(t.dense.len() > 10_000);
        // Allocated for the active entries only, never for an id up to u32::MAX.
        assert!(t.dense.capacity() < 64 * 1024, "{}", t.dense.capacity());
        assert_eq!(t.sparse.len(), 4);

        // Started again, 10,000 moves into the vector; finished, it is gone from both.
        let mut w = Writer::new(Vec::new(), "").unwrap();
        w.start(10_000, "/big10000", "int64", "", 1).unwrap();
        for id in 1..=12_000 {
            w.start(id, &format!("/e{id}"), "double", "", 2).unwrap();
        }
        w.raw(10_000, 3, &[0; 8]).unwrap();
        w.finish(10_000, 4).unwrap();
        w.raw(10_000, 5, &[0; 8]).unwrap();
        let bytes = w.finish_file().unwrap();
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut seen = Vec::new();
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            if let Body::Data(e) = rec.body {
                seen.push(e.map(|e| e.name().to_string()));
            }
        }
        assert_eq!(seen, [Some("/e10000".to_string()), None]);
        assert!(r.entries.sparse.is_empty());
        assert_eq!(r.entries.live, 11_999);
        assert!(r.entry(10_000).is_none());
        assert_eq!(r.entry(12_000).map(|e| e.name()), Some("/e12000"));
    }

    #[test]
    fn compaction_keeps_every_active_entry() {
        // 3,000 entries, some at sparse ids, whose metadata is replaced until the table is
        // rebuilt several times; every entry stays as its last record left it.
        let ids: Vec<u32> = (1..=3_000).map(|i| if i % 500 == 0 { i * 1_000_000 } else { i }).collect();
        let mut w = Writer::new(Vec::new(), "").unwrap();
        for &id in &ids {
            w.start(id, &format!("/e{id}"), "string", "m0", 1).unwrap();
        }
        for round in 1..=30 {
            for &id in &ids {
                w.set_metadata(id, &format!("m{round}-{}", "x".repeat(40)), 2).unwrap();
            }
        }
        let bytes = w.finish_file().unwrap();
        let r = read(&bytes, |_| None);
        let t = &r.entries;
        assert_eq!(t.live, 3_000);
        assert_eq!(t.sparse.len(), 6);
        assert!(t.text.len() < 3 * 3_000 * 60, "{}", t.text.len());
        for &id in &ids {
            let e = r.entry(id).unwrap();
            assert_eq!((e.id(), e.name(), e.type_name()), (id, format!("/e{id}").as_str(), "string"));
            assert_eq!(e.metadata(), format!("m30-{}", "x".repeat(40)));
            assert!(e.is_standard());
        }
    }
}
