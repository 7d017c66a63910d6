//! Pass 1: frames every record of the file, counts the rows of each known record type (the
//! records [`Keep`] keeps; so that every column is allocated once, at its final size), keeps the
//! unknown records, stops at the first fault, and notes where pass 2 may start its parts: the
//! first record at or after each of a few byte targets, with the rows of each type before it. The framing itself
//! stays sequential (a USVLOG record header carries no marker to resynchronise on, so a boundary
//! is only known by framing up to it); pass 2 then starts each part at a boundary found here,
//! never at a guessed one. The file is read in chunks (on a second thread when there is one,
//! while this one frames the chunk before), each framed by the runtime's [`SliceReader`], a
//! record cut by a chunk's end put back in front of the next chunk; the errors are the streaming
//! reader's, at the same offsets.

use std::fs::File;
use std::io;
use std::sync::mpsc;

use logspec::log::fault::{kind, Faults};
use logspec::runtime::{FramedFormat, RawRecord, ReadError, ReadErrorDetail, ReadErrorKind, SliceReader};

use super::{Keep, Layouts};

/// Why pass 1 stopped before the end of the file.
#[derive(Debug)]
pub enum Stop {
    /// The reader's error (a truncation, a bad record header, an I/O error), at the offsets the
    /// streaming reader gives.
    Read(ReadError),
    /// A known record whose payload does not fit its type ([`Layouts::strict`]): the record at
    /// `offset`, of index `index` and type index `ty`, has `len` payload bytes.
    Length { offset: u64, index: u64, ty: usize, len: usize },
}

/// A record whose type the layouts do not know, skipped by its length.
#[derive(Clone, Copy, Debug)]
pub struct Unknown {
    pub offset: u64,
    /// The framing's timestamp (0 without one).
    pub timestamp: u64,
    pub tag: u64,
    pub payload_len: u64,
}

/// Where a part of pass 2 starts: a record boundary that pass 1 framed.
pub struct Split {
    /// The byte offset of the record's header.
    pub offset: u64,
    /// The record's 0-based index in the file.
    pub index: u64,
    /// Rows of each type (by type index) before the record.
    pub rows: Vec<usize>,
}

/// What pass 1 finds: the file header, the known types in order of their first row with their
/// rows, the unknown records, how far pass 2 may read (the records before the first fault),
/// and where its parts may start.
pub struct Counted<H> {
    pub header: H,
    /// Type indices in order of their first row.
    pub order: Vec<usize>,
    /// Rows of each type (by type index), before the first fault.
    pub counts: Vec<usize>,
    /// The first `keep_unknown` unknown records; all are counted in `faults`.
    pub unknown: Vec<Unknown>,
    pub faults: Faults,
    pub fault: Option<Stop>,
    /// The byte offset of the first record and of the byte after the last record pass 2 reads.
    pub start: u64,
    pub end: u64,
    /// The records pass 2 reads: those before the first fault.
    pub limit: u64,
    /// The boundaries of pass 2's parts after the first, in file order.
    pub splits: Vec<Split>,
}

/// The bytes pass 1 reads at a time, after a reserve where the bytes of a record cut by the
/// previous chunk's end are put back in front, so that every record is framed from one slice.
const CHUNK: usize = 256 << 10;
const RESERVE: usize = 32 << 10;
/// The chunk buffers in flight: one being framed, two being read or waiting.
const BUFFERS: usize = 3;

/// Pass 1 over `file`, whose length was `len` bytes when opened: frames every record; counts
/// the rows of each known type that `keep` keeps; stops at the first fault (a truncation, or a
/// payload that does not fit its type); notes up to `parts - 1` boundaries that divide the
/// records into `parts` runs of about equal bytes. `Err` when the file header does not decode.
/// With `reader_thread`, the file's chunks are read on a second thread while this one frames
/// the chunk before; the result is the same.
#[allow(clippy::too_many_arguments)]
pub fn count<F: FramedFormat, K: Keep>(
    file: &File,
    len: u64,
    types: &Layouts,
    keep: &mut K,
    keep_unknown: u64,
    parts: usize,
    reader_thread: bool,
) -> Result<Counted<F::FileHeader>, ReadError> {
    let mut pass = Pass::<F, K>::new(len, types, keep, keep_unknown, parts);
    if !reader_thread {
        let mut chunks = Chunks::Inline { file, pos: 0, spare: Some(vec![0; RESERVE + CHUNK]) };
        pass.run(&mut chunks)?;
        return pass.finish().ok_or_else(no_header::<F>);
    }
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::channel();
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        let reader = move || {
            let mut pos = 0u64;
            while let Ok(mut buf) = free_rx.recv() {
                let read = read_full(file, &mut buf[RESERVE..], pos);
                let stop = !matches!(read, Ok(n) if n > 0);
                if let Ok(n) = read {
                    pos += n as u64;
                }
                if full_tx.send(read.map(|n| (buf, n))).is_err() || stop {
                    break;
                }
            }
        };
        let mut chunks = match std::thread::Builder::new().name("logspec-usvlog-read".into()).spawn_scoped(s, reader) {
            Ok(_) => {
                for _ in 0..BUFFERS {
                    // The reader stops only when its channels close, after this send.
                    let _ = free_tx.send(vec![0; RESERVE + CHUNK]);
                }
                Chunks::Thread { full: full_rx, free: free_tx }
            }
            // No second thread: read here.
            Err(_) => Chunks::Inline { file, pos: 0, spare: Some(vec![0; RESERVE + CHUNK]) },
        };
        pass.run(&mut chunks)?;
        // Closing the channels ends the reader thread, which the scope then joins.
        drop(chunks);
        pass.finish().ok_or_else(no_header::<F>)
    })
}

/// The file's bytes in chunks, in order: each chunk's bytes at `RESERVE..RESERVE + n` of its
/// buffer, `n == 0` at the end of the file.
enum Chunks<'f> {
    Inline { file: &'f File, pos: u64, spare: Option<Vec<u8>> },
    Thread { full: mpsc::Receiver<io::Result<(Vec<u8>, usize)>>, free: mpsc::Sender<Vec<u8>> },
}

impl Chunks<'_> {
    fn next(&mut self) -> io::Result<(Vec<u8>, usize)> {
        match self {
            Chunks::Inline { file, pos, spare } => {
                let mut buf = spare.take().unwrap_or_else(|| vec![0; RESERVE + CHUNK]);
                let n = read_full(file, &mut buf[RESERVE..], *pos)?;
                *pos += n as u64;
                Ok((buf, n))
            }
            Chunks::Thread { full, .. } => {
                full.recv().unwrap_or_else(|_| Err(io::Error::other("usvlog: the thread reading the file stopped")))
            }
        }
    }

    /// A chunk's buffer, framed: read the next chunk into it.
    fn give_back(&mut self, buf: Vec<u8>) {
        match self {
            Chunks::Inline { spare, .. } => *spare = Some(buf),
            Chunks::Thread { free, .. } => {
                let _ = free.send(buf);
            }
        }
    }
}

/// Reads `file` from `pos` until `buf` is full or the file ends: the bytes read.
fn read_full(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match super::read_at(file, &mut buf[n..], pos + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Pass 1's state between chunks.
struct Pass<'t, F: FramedFormat, K> {
    types: &'t Layouts,
    keep: &'t mut K,
    /// How many unknown records are kept in full (all are counted).
    keep_unknown: u64,
    parts: u64,
    len: u64,
    next_split: u64,
    next_target: u64,
    /// The file header, once decoded.
    header: Option<F::FileHeader>,
    order: Vec<usize>,
    counts: Vec<usize>,
    unknown: Vec<Unknown>,
    faults: Faults,
    splits: Vec<Split>,
    fault: Option<Stop>,
    /// The offset of the first record, and of the byte after the last record counted.
    start: u64,
    end: u64,
    /// The records counted (the next one's index).
    index: u64,
}

impl<'t, F: FramedFormat, K: Keep> Pass<'t, F, K> {
    fn new(len: u64, types: &'t Layouts, keep: &'t mut K, keep_unknown: u64, parts: usize) -> Self {
        Pass {
            types,
            keep,
            keep_unknown,
            parts: parts.max(1) as u64,
            len,
            next_split: 1,
            next_target: u64::MAX,
            header: None,
            order: Vec::new(),
            counts: vec![0; types.len()],
            unknown: Vec::new(),
            faults: Faults::default(),
            splits: Vec::new(),
            fault: None,
            start: 0,
            end: 0,
            index: 0,
        }
    }

    /// The byte target of split `k`: `start + k * (len - start) / parts`.
    fn target(&self, k: u64) -> u64 {
        if k >= self.parts {
            return u64::MAX;
        }
        let body = u128::from(self.len.saturating_sub(self.start));
        self.start + (body * u128::from(k) / u128::from(self.parts)) as u64
    }

    /// Frames the chunks until the end of the file or the first fault. `Err`: the file header
    /// does not decode.
    fn run(&mut self, chunks: &mut Chunks<'_>) -> Result<(), ReadError> {
        // The bytes of a record cut by the previous chunk's end, from file offset `self.end`.
        let mut carry: Vec<u8> = Vec::new();
        loop {
            let (mut buf, n) = match chunks.next() {
                Ok(chunk) => chunk,
                Err(e) => return self.io_fault(e),
            };
            let eof = n == 0;
            if carry.len() <= RESERVE {
                let from = RESERVE - carry.len();
                buf[from..RESERVE].copy_from_slice(&carry);
                let bytes = &buf[from..RESERVE + n];
                let used = self.frame(bytes, eof)?;
                carry.clear();
                carry.extend_from_slice(&bytes[used..]);
                chunks.give_back(buf);
            } else {
                // A record longer than the reserve: framed from the carry, grown by the chunk.
                carry.extend_from_slice(&buf[RESERVE..RESERVE + n]);
                chunks.give_back(buf);
                let used = self.frame(&carry, eof)?;
                carry.drain(..used);
            }
            if eof || self.fault.is_some() {
                return Ok(());
            }
        }
    }

    /// Frames the whole records at the start of `bytes` (the file's bytes from `self.end`, the
    /// file ending after them when `eof`) and counts them. Returns the bytes framed: a record
    /// cut by the end of `bytes` is left for the next chunk, unless the file ends there.
    fn frame(&mut self, bytes: &[u8], eof: bool) -> Result<usize, ReadError> {
        let base = self.end;
        let mut r = if self.header.is_some() {
            SliceReader::<F>::records(bytes)
        } else {
            // The first chunk holds the file header (unless the file is shorter than it, when
            // the header's error is the same as the streaming reader's).
            let (h, r) = SliceReader::<F>::new(bytes)?;
            self.header = Some(h);
            self.start = r.position();
            self.end = self.start;
            self.next_target = self.target(1);
            r
        };
        let first = self.index;
        while let Some(next) = r.next() {
            let raw = match next {
                Ok(raw) => RawRecord { offset: base + raw.offset, index: first + raw.index, ..raw },
                // The chunk ends inside a record: the next chunk has the rest.
                Err(e) if !eof && matches!(e.kind, ReadErrorKind::Truncated { .. }) => break,
                Err(e) => {
                    let mut d = e.into_detail();
                    d.offset += base;
                    d.record_index = d.record_index.map(|i| i + first);
                    self.fault = Some(Stop::Read(ReadError::new(d)));
                    break;
                }
            };
            if !self.record(&raw, base + r.position()) {
                break;
            }
        }
        Ok(usize::try_from(self.end - base).unwrap_or(bytes.len()))
    }

    /// Counts one record (ending at byte `end`). False at a fault (a known record's payload of
    /// the wrong length), which it keeps.
    #[inline]
    fn record(&mut self, raw: &RawRecord<'_>, end: u64) -> bool {
        if raw.offset >= self.next_target && raw.index > 0 {
            self.splits.push(Split { offset: raw.offset, index: raw.index, rows: self.counts.clone() });
            // Past every target this record reached: a record longer than a part makes no
            // empty part.
            self.next_split += 1;
            while self.target(self.next_split) <= raw.offset {
                self.next_split += 1;
            }
            self.next_target = self.target(self.next_split);
        }
        let payload_len = raw.payload.len();
        match self.types.find(raw.header.tag) {
            None => {
                let unknown = || Unknown {
                    offset: raw.offset,
                    timestamp: raw.header.timestamp.unwrap_or(0),
                    tag: raw.header.tag,
                    payload_len: payload_len as u64,
                };
                self.faults.note(kind::UNKNOWN_TYPE, || ());
                if (self.unknown.len() as u64) < self.keep_unknown {
                    self.unknown.push(unknown());
                }
            }
            Some(i) => {
                if !self.types.fits(i, payload_len) {
                    self.fault = Some(Stop::Length { offset: raw.offset, index: raw.index, ty: i, len: payload_len });
                    return false;
                }
                if self.keep.note(i, tick(raw)) {
                    if self.counts[i] == 0 {
                        self.order.push(i);
                    }
                    self.counts[i] += 1;
                }
            }
        }
        self.index += 1;
        self.end = end;
        true
    }

    /// An I/O error: of the file header (an `Err`), or of the records after the last counted.
    fn io_fault(&mut self, e: io::Error) -> Result<(), ReadError> {
        let at_header = self.header.is_none();
        let fault = ReadError::new(ReadErrorDetail {
            kind: ReadErrorKind::Io(e),
            offset: if at_header { 0 } else { self.end },
            record_index: (!at_header).then_some(self.index),
            tag: None,
            record: None,
            format: F::NAME,
        });
        if at_header {
            return Err(fault);
        }
        self.fault = Some(Stop::Read(fault));
        Ok(())
    }

    fn finish(mut self) -> Option<Counted<F::FileHeader>> {
        // A split at the record of the fault would make an empty part.
        let limit = self.index;
        self.splits.retain(|s| s.index < limit);
        Some(Counted {
            header: self.header?,
            order: self.order,
            counts: self.counts,
            unknown: self.unknown,
            faults: self.faults,
            fault: self.fault,
            start: self.start,
            end: self.end,
            limit,
            splits: self.splits,
        })
    }
}

/// A record's time for [`Keep`]: the framing's timestamp, or the record's index when the format
/// has none (as the sample source counts it).
#[inline]
pub(super) fn tick(raw: &RawRecord<'_>) -> u64 {
    raw.header.timestamp.unwrap_or(raw.index)
}

/// The error of a file whose header was never read (which [`Pass::run`] reports itself; this is
/// a backstop).
#[cold]
fn no_header<F: FramedFormat>() -> ReadError {
    ReadError::new(ReadErrorDetail {
        kind: ReadErrorKind::Truncated { what: "file header", needed: 1, available: 0 },
        offset: 0,
        record_index: None,
        tag: None,
        record: None,
        format: F::NAME,
    })
}
