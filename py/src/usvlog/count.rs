//! Pass 1 of `read_timeseries_bin`: frames every record of the file, counts each known record
//! type (so that every column is allocated once, at its final size), keeps the unknown records,
//! stops at the first fault, and notes where pass 2 may start its parts: the first record at or
//! after each of a few byte targets, with the rows of each type before it. The framing itself
//! stays sequential (a USVLOG record header carries no marker to resynchronise on, so a boundary
//! is only known by framing up to it); pass 2 then starts each part at a boundary found here,
//! never at a guessed one. The file is read in chunks (on a second thread when there is one,
//! while this one frames the chunk before), each framed by the runtime's [`SliceReader`], a
//! record cut by a chunk's end put back in front of the next chunk; the errors are the streaming
//! reader's, at the same offsets.

use std::fs::File;
use std::io;
use std::sync::mpsc;

use logspec::formats::usvlog::Usvlog;
use logspec::runtime::{Framing, RawRecord, ReadError, ReadErrorDetail, ReadErrorKind, SliceReader};

use super::{find, lookup, Fault, Type};

/// Where a part of pass 2 starts: a record boundary that pass 1 framed.
pub(super) struct Split {
    /// The byte offset of the record's header.
    pub offset: u64,
    /// The record's 0-based index in the file.
    pub index: u64,
    /// Rows of each type (by type index) before the record.
    pub rows: Vec<usize>,
}

/// What pass 1 finds: the header, the known types in order of first appearance with their
/// counts, the unknown records, how far pass 2 may read (the records before the first fault),
/// and where its parts may start.
pub(super) struct Counted {
    pub fw_model_schema: u64,
    pub t0_us: u64,
    /// Type indices in order of first appearance.
    pub order: Vec<usize>,
    /// Rows of each type (by type index), before the first fault.
    pub counts: Vec<usize>,
    /// `(t_us, type_id, payload_len)` of each unknown record (when they are kept).
    pub unknown: Vec<(u64, u64, u64)>,
    pub fault: Option<Fault>,
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
/// each known type; stops at the first fault (a truncation, or a payload of the wrong length);
/// notes up to `parts - 1` boundaries that divide the records into `parts` runs of about equal
/// bytes. `Err` when the file header does not decode. With `reader_thread`, the file's chunks
/// are read on a second thread while this one frames the chunk before; the result is the same.
pub(super) fn count(
    file: &File,
    len: u64,
    types: &[Type],
    strict: bool,
    keep_unknown: bool,
    parts: usize,
    reader_thread: bool,
) -> Result<Counted, Fault> {
    let mut pass = Pass::new(len, types, strict, keep_unknown, parts);
    if !reader_thread {
        let mut chunks = Chunks::Inline { file, pos: 0, spare: Some(vec![0; RESERVE + CHUNK]) };
        pass.run(&mut chunks)?;
        return Ok(pass.finish());
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
        Ok(pass.finish())
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
        match super::fill::read_at(file, &mut buf[n..], pos + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Pass 1's state between chunks.
struct Pass<'t> {
    types: &'t [Type],
    by_id: Vec<Option<usize>>,
    strict: bool,
    keep_unknown: bool,
    parts: u64,
    len: u64,
    next_split: u64,
    next_target: u64,
    /// `(fw_model_schema, t0_us)`, once the file header is decoded.
    header: Option<(u64, u64)>,
    order: Vec<usize>,
    counts: Vec<usize>,
    unknown: Vec<(u64, u64, u64)>,
    splits: Vec<Split>,
    fault: Option<Fault>,
    /// The offset of the first record, and of the byte after the last record counted.
    start: u64,
    end: u64,
    /// The records counted (the next one's index).
    index: u64,
}

impl<'t> Pass<'t> {
    fn new(len: u64, types: &'t [Type], strict: bool, keep_unknown: bool, parts: usize) -> Self {
        Pass {
            types,
            by_id: lookup(types),
            strict,
            keep_unknown,
            parts: parts.max(1) as u64,
            len,
            next_split: 1,
            next_target: u64::MAX,
            header: None,
            order: Vec::new(),
            counts: vec![0; types.len()],
            unknown: Vec::new(),
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
    fn run(&mut self, chunks: &mut Chunks<'_>) -> Result<(), Fault> {
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
    fn frame(&mut self, bytes: &[u8], eof: bool) -> Result<usize, Fault> {
        let base = self.end;
        let mut r = if self.header.is_some() {
            SliceReader::<Usvlog>::records(bytes)
        } else {
            // The first chunk holds the file header (unless the file is shorter than it, when
            // the header's error is the same as the streaming reader's).
            let (h, r) = SliceReader::<Usvlog>::new(bytes).map_err(|e| Fault::read(&e))?;
            self.header = Some((h.fw_model_schema.into(), h.t0_us));
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
                    self.fault = Some(Fault::read(&ReadError::new(d)));
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
        match find(&self.by_id, self.types, raw.header.tag) {
            None => {
                if self.keep_unknown {
                    self.unknown.push((raw.header.timestamp.unwrap_or(0), raw.header.tag, payload_len as u64));
                }
            }
            Some(i) => {
                let ty = &self.types[i];
                if (self.strict && payload_len != ty.size) || payload_len < ty.size {
                    self.fault = Some(Fault::payload_length(raw, ty, self.strict));
                    return false;
                }
                if self.counts[i] == 0 {
                    self.order.push(i);
                }
                self.counts[i] += 1;
            }
        }
        self.index += 1;
        self.end = end;
        true
    }

    /// An I/O error: of the file header (an `Err`), or of the records after the last counted.
    fn io_fault(&mut self, e: io::Error) -> Result<(), Fault> {
        let at_header = self.header.is_none();
        let fault = Fault::read(&ReadError::new(ReadErrorDetail {
            kind: ReadErrorKind::Io(e),
            offset: if at_header { 0 } else { self.end },
            record_index: (!at_header).then_some(self.index),
            tag: None,
            record: None,
            format: Usvlog::NAME,
        }));
        if at_header {
            return Err(fault);
        }
        self.fault = Some(fault);
        Ok(())
    }

    fn finish(mut self) -> Counted {
        let (fw_model_schema, t0_us) = self.header.unwrap_or_default();
        // A split at the record of the fault would make an empty part.
        let limit = self.index;
        self.splits.retain(|s| s.index < limit);
        Counted {
            fw_model_schema,
            t0_us,
            order: self.order,
            counts: self.counts,
            unknown: self.unknown,
            fault: self.fault,
            start: self.start,
            end: self.end,
            limit,
            splits: self.splits,
        }
    }
}

impl Fault {
    /// A known record whose payload is not of its type's size (shorter, or with
    /// `strict_payload_len` longer), in the words of upstream's check.
    fn payload_length(raw: &RawRecord<'_>, ty: &Type, strict: bool) -> Fault {
        let what = if strict { "exactly" } else { "at least" };
        Fault {
            message: format!(
                "usvlog: at byte {} (record #{}, {}): payload length {}, expected {what} {} (strict_payload_len={})",
                raw.offset,
                raw.index,
                ty.name,
                raw.payload.len(),
                ty.size,
                if strict { "True" } else { "False" }
            ),
            offset: raw.offset,
            record_index: Some(raw.index),
            type_id: Some(ty.id),
            record: Usvlog::record_name(ty.id),
        }
    }
}
