//! `tables()` of an R1 RLOG file on two threads that each read half of it: the file is read
//! into memory once (each thread reading half of it, [`read_file`]); part B reads from a guessed message start near the middle to the end
//! ([`source::rlog_split::read_half`]) while part A reads from the start in the same way (into
//! per-key columns, [`source::rlog_split::Split`]), stops at B's start, and there either joins
//! B's values (a message starts exactly there) or reads on alone (it does not). See [`source::rlog_split`] for why the join is
//! exact; the result is always what [`source::read`] on one thread gives.
//!
//! Not split (the caller reads them as before, `None`): R2 files (a value's layout is its key's
//! type, defined in the first half, so B could not frame its values without A), captured streams,
//! small files ([`MIN_SPLIT`]), reads with filters, files that cannot be read, and files where
//! no plausible message start is found near the middle.
//!
//! The file is not memory-mapped: another process truncating a mapped file makes the reads of
//! its lost pages fault (SIGBUS), which would end the Python interpreter. A file that shrinks
//! while it is read here is read as far as it goes (as a streaming read would: the rows
//! before its new end, then the error of a message cut there); one that grows is read at the
//! length it had.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use logspec::formats::rlog::{R1BodyRef, R1MessageRef, Reader, ReaderOptions, Revision};
use logspec::runtime::{Cursor, Endian, View};

use super::Tables;
use crate::cli::source::{self, rlog_split, Outcome, Select};
use crate::cli::{detect, CliError, FormatKind, InputArgs};

/// Files smaller than this are read on one thread: starting a second costs more than it saves.
pub const MIN_SPLIT: u64 = 4 << 20;

/// Where part B starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// At the first plausible message start after the middle of the file ([`find_cut`]).
    Guess,
    /// At this absolute offset, whatever is there (for tests: a wrong guess must not change
    /// the result); any file size.
    At(u64),
}

/// What [`read_rlog_split`] read.
pub struct Halves {
    /// The tables (to [`Tables::finish`]).
    pub tables: Tables,
    /// What [`source::read`] returned.
    pub outcome: Result<Outcome, CliError>,
    /// Whether the second half was joined (else the first part read on alone).
    pub joined: bool,
}

/// Reads an R1 RLOG file into [`Tables`] in two halves at once (see the module's text), or
/// `None` when the file is not one to split that way.
pub fn read_rlog_split(
    file: &Path,
    path: &str,
    assume_r1: bool,
    select: &Select,
    cut: Cut,
) -> Result<Option<Halves>, CliError> {
    if crate::cli::filter::Tally::needed(select) {
        return Ok(None);
    }
    let Ok(f) = File::open(file) else { return Ok(None) };
    let Ok(len) = f.metadata().map(|m| m.len()) else { return Ok(None) };
    if cut == Cut::Guess && len < MIN_SPLIT {
        return Ok(None);
    }
    let Ok(len) = usize::try_from(len) else { return Ok(None) };
    // A file that cannot be read is read (and its error reported) by the caller's way.
    let Ok(data) = read_file(&f, len) else { return Ok(None) };
    let data = Arc::new(data);
    let len = data.len();
    let bytes = &data[..];
    let options = ReaderOptions { assume_revision: assume_r1.then_some(Revision::R1) };
    let Ok(r) = Reader::with_options(bytes, options) else { return Ok(None) };
    if r.revision() != Revision::R1 {
        return Ok(None);
    }
    let start = r.position();
    let cut = match cut {
        Cut::Guess => match find_cut(bytes, start) {
            Some(c) => c,
            None => return Ok(None),
        },
        Cut::At(c) if c > start && c < len as u64 => c,
        Cut::At(_) => return Ok(None),
    };
    let input = InMemory { data: data.clone(), pos: 0 };
    let d = detect(file, Box::new(input), &InputArgs { format: Some(FormatKind::Rlog), ..InputArgs::default() })?;
    let stop = AtomicBool::new(false);
    let joined = std::cell::Cell::new(false);
    let (sink, outcome) = std::thread::scope(|s| {
        let b = std::thread::Builder::new()
            .name("logspec-rlog-half".into())
            .spawn_scoped(s, || rlog_split::read_half(&bytes[cut as usize..], cut, Revision::R1, &stop));
        let mut sink = Tables::new(false);
        let Ok(b) = b else {
            let outcome = source::read(d, file, path, assume_r1, select, &mut sink);
            return (sink, outcome);
        };
        let split = rlog_split::Split::new(
            cut,
            bytes,
            |wanted| {
                if !wanted {
                    stop.store(true, Ordering::Relaxed);
                }
                // A part B that panicked is not joined: A reads on alone.
                b.join().ok().flatten().filter(|_| wanted)
            },
            &joined,
        );
        let outcome = source::read_split(d, file, path, assume_r1, select, &mut sink, Some(split));
        (sink, outcome)
    });
    // The tables hold nothing of the file's bytes. Giving their pages back takes a few ms;
    // another thread does it (or this one, if none starts).
    let _ = std::thread::Builder::new().name("logspec-free".into()).spawn(move || drop(data));
    Ok(Some(Halves { tables: sink, outcome, joined: joined.get() }))
}

/// The first plausible start of a timestamp message at or after the middle of the messages
/// (which start at `start`), within 1 MiB: a `00` byte from which the generated views decode
/// [`PROBE`] messages (or every message to the end), the first a timestamp of a positive finite
/// time, no later timestamp earlier than the one before, every key id below the reader's
/// routed ids, and at least one value. Only a guess: part A checks it.
pub fn find_cut(bytes: &[u8], start: u64) -> Option<u64> {
    let start = usize::try_from(start).ok()?;
    let mid = start + (bytes.len().checked_sub(start)?) / 2;
    let end = bytes.len().min(mid.saturating_add(1 << 20));
    let mut p = mid;
    while p < end {
        p += bytes[p..end].iter().position(|b| *b == 0)?;
        if plausible(&bytes[p..]) {
            return Some(p as u64);
        }
        p += 1;
    }
    None
}

/// Messages decoded from a candidate start before it is taken.
const PROBE: usize = 64;

/// Whether R1 messages decode from the start of `bytes` as [`find_cut`] wants.
fn plausible(bytes: &[u8]) -> bool {
    let mut c = Cursor::new(bytes);
    let (mut last, mut values) = (None::<f64>, 0);
    for _ in 0..PROBE {
        if c.position() == bytes.len() {
            break;
        }
        let Ok(m) = R1MessageRef::decode_view(&mut c, Endian::Big) else { return false };
        match m.body {
            R1BodyRef::Timestamp { timestamp } => {
                let ok = match last {
                    None => timestamp.is_finite() && timestamp > 0.0,
                    Some(t) => timestamp.is_finite() && timestamp >= t,
                };
                if !ok {
                    return false;
                }
                last = Some(timestamp);
            }
            R1BodyRef::KeyDef { key_id, .. } | R1BodyRef::Field { key_id, .. } => {
                if last.is_none() || usize::from(key_id as u16) >= source::rlog_split::KEYS {
                    return false;
                }
                values += usize::from(matches!(m.body, R1BodyRef::Field { .. }));
            }
        }
    }
    values > 0
}

/// The first `len` bytes of the file (the length it had when the read began), fewer if it
/// ends sooner: the first half read on this thread, the second on another at the same time,
/// each mapping its half's new pages in one call first (`passes::prefault`): the fresh pages
/// cost more than the copy. BENCHMARKS.md has what this costs against a map.
fn read_file(f: &File, len: usize) -> std::io::Result<Vec<u8>> {
    let mut data = vec![0u8; len];
    let mid = len / 2;
    let (a, b) = data.split_at_mut(mid);
    let (got_a, got_b) = std::thread::scope(|s| {
        // No second thread: the caller reads the file its own way.
        let second =
            std::thread::Builder::new().name("logspec-read".into()).spawn_scoped(s, || read_full(f, b, mid as u64))?;
        let got_a = read_full(f, a, 0);
        let got_b = second.join().unwrap_or_else(|_| Err(std::io::Error::other("a read thread panicked")));
        std::io::Result::Ok((got_a, got_b))
    })?;
    let got_a = got_a?;
    // The file ends where the first read that came short ended.
    let end = if got_a < mid { got_a } else { mid + got_b? };
    data.truncate(end);
    Ok(data)
}

/// Reads `buf.len()` bytes at `offset` into fresh memory, or fewer if the file ends sooner;
/// how many.
fn read_full(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    super::passes::prefault(buf);
    let mut n = 0;
    while n < buf.len() {
        match super::passes::read_at(f, &mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The file's bytes as a `Read`, for the format's detection and the reader it opens, whose
/// revision and start part A reads in place from.
struct InMemory {
    data: Arc<Vec<u8>>,
    pos: usize,
}

impl Read for InMemory {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.data[self.pos..];
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}
