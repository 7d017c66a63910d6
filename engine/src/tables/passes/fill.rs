//! Pass 2: the records pass 1 framed, read again and written into the columns, in parts that
//! run on threads of their own. A part is a run of whole records between
//! two boundaries pass 1 found, and owns the rows of every column that its records fill (pass 1
//! counted the rows of each type before each boundary), so parts share no memory and need no
//! lock. Each part maps its own rows' pages (`madvise`, the kernel zeroing them on its thread),
//! reads its bytes a chunk at a time with `pread` on the one open file, frames each chunk's
//! records with the runtime's [`SliceReader`], noting where each type's payloads start in the
//! chunk, and then fills those rows of every column a column at a time, at the offsets the IR
//! gives ([`FixedLayout::gather_at`]) straight from the chunk, so that each column is written
//! sequentially and no payload is copied twice.

use std::fs::File;
use std::io;

use logspec::runtime::{FramedFormat, RawRecord, SliceReader};

use super::count::tick;
use super::{Keep, Layouts};
use crate::columns::FixedLayout;

/// The bytes a part reads at a time (grown only for a record longer than this).
const CHUNK: usize = 256 << 10;

/// One column's rows, typed: the Arrow array's values (a bool as a `u8`, 0 or 1) or a numpy
/// column's.
pub enum Out<'a> {
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    U32(&'a mut [u32]),
    U64(&'a mut [u64]),
    I8(&'a mut [i8]),
    I16(&'a mut [i16]),
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

/// `$body` with `$c` bound to the slice of whichever variant `$out` is (and `$v`, if named, to
/// that variant's constructor).
macro_rules! each_out {
    ($out:expr, $c:ident => $body:expr) => {
        each_out!($out, _v, $c => $body)
    };
    ($out:expr, $v:ident, $c:ident => $body:expr) => {
        match $out {
            Out::U8($c) => { let $v = Out::U8; $body }
            Out::U16($c) => { let $v = Out::U16; $body }
            Out::U32($c) => { let $v = Out::U32; $body }
            Out::U64($c) => { let $v = Out::U64; $body }
            Out::I8($c) => { let $v = Out::I8; $body }
            Out::I16($c) => { let $v = Out::I16; $body }
            Out::I32($c) => { let $v = Out::I32; $body }
            Out::I64($c) => { let $v = Out::I64; $body }
            Out::F32($c) => { let $v = Out::F32; $body }
            Out::F64($c) => { let $v = Out::F64; $body }
        }
    };
}

impl<'a> Out<'a> {
    /// The first `n` rows and the rest; `None` when there are fewer than `n`.
    fn split(self, n: usize) -> Option<(Out<'a>, Out<'a>)> {
        each_out!(self, wrap, c => c.split_at_mut_checked(n).map(|(a, b)| (wrap(a), wrap(b))))
    }

    fn prefault(&mut self) {
        each_out!(self, c => prefault(c))
    }

    /// Rows `rows` of column `j` of `layout`, gathered from the payloads at `starts` in
    /// `chunk`. `None` when the column has no such rows.
    fn gather(
        &mut self,
        layout: &FixedLayout,
        j: usize,
        chunk: &[u8],
        starts: &[u32],
        rows: std::ops::Range<usize>,
    ) -> Option<()> {
        each_out!(self, c => c.get_mut(rows).map(|c| layout.gather_at(j, chunk, starts, c)))
    }
}

/// A table's time column: the framing's timestamps as they are (`Ticks`), or in nanoseconds
/// (`Nanos`: each timestamp times the scale, saturating at `i64::MAX`, as the sample source's
/// time and the Arrow `Timestamp(ns)` column have it).
pub enum Time<'a> {
    Ticks(&'a mut [u64]),
    Nanos(&'a mut [i64], u64),
}

impl<'a> Time<'a> {
    fn len(&self) -> usize {
        match self {
            Time::Ticks(t) => t.len(),
            Time::Nanos(t, _) => t.len(),
        }
    }

    fn split(self, n: usize) -> Option<(Time<'a>, Time<'a>)> {
        Some(match self {
            Time::Ticks(t) => t.split_at_mut_checked(n).map(|(a, b)| (Time::Ticks(a), Time::Ticks(b)))?,
            Time::Nanos(t, s) => t.split_at_mut_checked(n).map(|(a, b)| (Time::Nanos(a, s), Time::Nanos(b, s)))?,
        })
    }

    fn prefault(&mut self) {
        match self {
            Time::Ticks(t) => prefault(t),
            Time::Nanos(t, _) => prefault(t),
        }
    }

    /// Writes `ticks` at rows `rows`; `None` when the column has no such rows.
    fn put(&mut self, ticks: &[u64], rows: std::ops::Range<usize>) -> Option<()> {
        match self {
            Time::Ticks(t) => t.get_mut(rows)?.copy_from_slice(ticks),
            Time::Nanos(t, scale) => {
                for (o, &tick) in t.get_mut(rows)?.iter_mut().zip(ticks) {
                    *o = i64::try_from(tick.saturating_mul(*scale)).unwrap_or(i64::MAX);
                }
            }
        }
        Some(())
    }
}

/// A record type's columns: all its rows, or a part's. `columns` are the layout's, in order.
pub struct Columns<'a> {
    pub ty: usize,
    pub time: Time<'a>,
    pub columns: Vec<Out<'a>>,
}

impl<'a> Columns<'a> {
    /// The first `n` rows of every column and the rest; `None` when there are fewer than `n`.
    pub fn split(self, n: usize) -> Option<(Columns<'a>, Columns<'a>)> {
        let (t_a, t_b) = self.time.split(n)?;
        let (mut a, mut b) = (Vec::with_capacity(self.columns.len()), Vec::with_capacity(self.columns.len()));
        for c in self.columns {
            let (x, y) = c.split(n)?;
            a.push(x);
            b.push(y);
        }
        Some((Columns { ty: self.ty, time: t_a, columns: a }, Columns { ty: self.ty, time: t_b, columns: b }))
    }
}

/// A record type's rows in one part, and the rows of the chunk being read that are not yet in
/// them.
struct TypeRows<'a> {
    cols: Columns<'a>,
    /// Rows already in the columns.
    done: usize,
    /// Where the payloads of rows `done..done + starts.len()` start in the chunk, and their
    /// records' times.
    starts: Vec<u32>,
    ticks: Vec<u64>,
}

impl TypeRows<'_> {
    /// Writes the chunk's rows into the columns, a column at a time. False when the columns
    /// have no room for them (more rows than pass 1 counted: the file changed).
    fn flush(&mut self, layout: &FixedLayout, chunk: &[u8]) -> bool {
        let n = self.starts.len();
        let rows = self.done..self.done + n;
        if self.cols.time.put(&self.ticks, rows.clone()).is_none() {
            return false;
        }
        for (j, out) in self.cols.columns.iter_mut().enumerate() {
            if out.gather(layout, j, chunk, &self.starts, rows.clone()).is_none() {
                return false;
            }
        }
        self.done += n;
        self.starts.clear();
        self.ticks.clear();
        true
    }
}

/// A run of whole records that pass 1 framed (bytes `start..end`, indices
/// `first..first + records`) and the rows of every column its records fill.
pub struct Part<'a> {
    pub start: u64,
    pub end: u64,
    pub first: u64,
    pub records: u64,
    tables: Vec<TypeRows<'a>>,
}

impl<'a> Part<'a> {
    pub fn new(start: u64, end: u64, first: u64, records: u64, columns: Vec<Columns<'a>>) -> Self {
        let tables =
            columns.into_iter().map(|cols| TypeRows { cols, done: 0, starts: Vec::new(), ticks: Vec::new() }).collect();
        Part { start, end, first, records, tables }
    }

    /// The rows of each type (`(type index, rows)`) written into the columns: all of the
    /// part's rows when its fill returned no fault, a prefix of them otherwise.
    pub fn done(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.tables.iter().map(|t| (t.cols.ty, t.done))
    }
}

/// The file changed between the passes (it ended early, or its records are not those pass 1
/// framed): where pass 2 found it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub offset: u64,
    pub index: Option<u64>,
    pub tag: Option<u64>,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the file changed while it was read (found at byte {})", self.offset)
    }
}

fn changed(offset: u64, index: Option<u64>, tag: Option<u64>) -> Changed {
    Changed { offset, index, tag }
}

/// Fills every part's rows, each part on a thread of its own (the first on the calling
/// thread). Returns each part's fault: the rows of a part that returned one are a prefix of
/// its rows (those before the fault); the other parts' rows are all written.
pub fn fill<F: FramedFormat, K: Keep>(
    file: &File,
    types: &Layouts,
    keep: &K,
    parts: &mut [Part<'_>],
) -> io::Result<Vec<Option<Changed>>> {
    let mut results: Vec<Option<io::Result<Option<Changed>>>> = Vec::new();
    std::thread::scope(|s| {
        let Some((first, rest)) = parts.split_first_mut() else { return };
        let mut handles = Vec::with_capacity(rest.len());
        for part in rest {
            let job = move || fill_part::<F, K>(file, types, keep, part);
            // A thread that cannot be made leaves its part to the calling thread, below.
            handles.push(std::thread::Builder::new().name("logspec-columns".into()).spawn_scoped(s, job).ok());
        }
        results.push(Some(fill_part::<F, K>(file, types, keep, first)));
        for h in handles {
            results.push(h.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
        }
    });
    let mut faults = Vec::with_capacity(parts.len());
    for (part, result) in parts.iter_mut().zip(results) {
        let result = match result {
            Some(r) => r,
            None => fill_part::<F, K>(file, types, keep, part),
        };
        faults.push(result?);
    }
    Ok(faults)
}

/// One part: maps its rows' pages, reads and frames its records, fills its rows. Returns the
/// fault that stopped it early (the file changed since pass 1), if any.
fn fill_part<F: FramedFormat, K: Keep>(
    file: &File,
    types: &Layouts,
    keep: &K,
    part: &mut Part<'_>,
) -> io::Result<Option<Changed>> {
    for t in &mut part.tables {
        t.cols.time.prefault();
        t.cols.columns.iter_mut().for_each(Out::prefault);
    }
    let mut slot = vec![usize::MAX; types.len()];
    for (k, t) in part.tables.iter().enumerate() {
        slot[t.cols.ty] = k;
    }
    let mut filler = Filler { types, keep, slot, tables: &mut part.tables };
    let fault = match each_record::<F, K>(file, part.start, part.end, part.first, &mut filler)? {
        Ok(n) if n == part.records => None,
        Ok(n) => Some(changed(part.end, Some(part.first + n), None)),
        Err(f) => Some(f),
    };
    // Without a fault, every row of the part must be in the columns (pass 1 counted them).
    let short = part.tables.iter().any(|t| t.done != t.cols.time.len());
    Ok(fault.or_else(|| short.then(|| changed(part.end, None, None))))
}

/// Where each framed record goes: its type's table (its payload's start in the chunk), until
/// the chunk's rows are written into the columns.
struct Filler<'p, 'a, K> {
    types: &'p Layouts,
    keep: &'p K,
    /// Table index by type index (`usize::MAX`: no table).
    slot: Vec<usize>,
    tables: &'p mut [TypeRows<'a>],
}

impl<K: Keep> Filler<'_, '_, K> {
    /// A record framed at byte `at` of the chunk, its header `header` bytes long.
    #[inline]
    fn record(&mut self, raw: &RawRecord<'_>, at: usize, header: usize) -> Result<(), Changed> {
        let tag = raw.header.tag;
        let Some(i) = self.types.find(tag) else { return Ok(()) };
        let tick = tick(raw);
        if !self.keep.keep(i, tick) {
            // Pass 1 checked the payload of every known record: a misfit now is a change.
            return if self.types.fits(i, raw.payload.len()) {
                Ok(())
            } else {
                Err(changed(raw.offset, Some(raw.index), Some(tag)))
            };
        }
        let start = u32::try_from(at + header).ok();
        match (self.tables.get_mut(self.slot[i]), start) {
            (Some(table), Some(start)) if self.types.fits(i, raw.payload.len()) => {
                table.starts.push(start);
                table.ticks.push(tick);
                Ok(())
            }
            _ => Err(changed(raw.offset, Some(raw.index), Some(tag))),
        }
    }

    /// The chunk's records are all framed: their rows go into the columns.
    fn chunk(&mut self, chunk: &[u8], end: u64) -> Result<(), Changed> {
        for t in self.tables.iter_mut() {
            if !t.starts.is_empty() && !t.flush(self.types.layout(t.cols.ty), chunk) {
                return Err(changed(end, None, Some(self.types.id(t.cols.ty))));
            }
        }
        Ok(())
    }
}

/// Frames the records in bytes `start..end` of `file` (whole records, as pass 1 framed them;
/// `first` is the index of the first) by the runtime's rule, a chunk at a time, and hands each
/// to `to` with its absolute offset and index, then the chunk. Stops at the first fault.
/// Returns the records framed, or the fault: `to`'s, or the file's changing (ending early, or a
/// record crossing `end`).
fn each_record<F: FramedFormat, K: Keep>(
    file: &File,
    start: u64,
    end: u64,
    first: u64,
    to: &mut Filler<'_, '_, K>,
) -> io::Result<Result<u64, Changed>> {
    let mut buf = vec![0u8; CHUNK.min(usize::try_from(end.saturating_sub(start)).unwrap_or(CHUNK))];
    // `buf[..have]` holds the file's bytes from `base`.
    let (mut base, mut have, mut index) = (start, 0usize, first);
    while base < end {
        while have < buf.len() && base + (have as u64) < end {
            let want = buf.len().min(usize::try_from(end - base).unwrap_or(usize::MAX));
            match read_at(file, &mut buf[have..want], base + have as u64) {
                Ok(0) => break,
                Ok(n) => have += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // The whole records in the buffer; a record cut by the buffer's end is framed again
        // from the buffer's next fill.
        let mut r = SliceReader::<F>::records(&buf[..have]);
        while let Some(Ok(raw)) = r.next() {
            let at = raw.offset as usize;
            let raw = RawRecord { offset: base + raw.offset, index, ..raw };
            if let Err(fault) = to.record(&raw, at, F::RECORD_HEADER_SIZE) {
                return Ok(Err(fault));
            }
            index += 1;
        }
        let used = usize::try_from(r.position()).unwrap_or(have);
        if let Err(fault) = to.chunk(&buf[..used], base + used as u64) {
            return Ok(Err(fault));
        }
        if used == 0 {
            // Not one whole record in the buffer: a record longer than the buffer (grow it, to
            // at most the bytes left, which pass 1 framed whole, and what a `u32` start
            // addresses), or the file ended early.
            let left = usize::try_from(end - base).unwrap_or(usize::MAX);
            let grown = buf.len().saturating_mul(2).min(left).min(u32::MAX as usize);
            if have == buf.len() && grown > buf.len() {
                buf.resize(grown, 0);
                continue;
            }
            return Ok(Err(changed(base, Some(index), None)));
        }
        buf.copy_within(used..have, 0);
        have -= used;
        base += used as u64;
    }
    Ok(Ok(index - first))
}

/// Reads at `offset` without moving a shared file position, so that parts read one open file
/// at once.
#[cfg(unix)]
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// Has the kernel map a large new column's pages in one call (Linux 5.14 and later;
/// `MADV_POPULATE_WRITE`; an older kernel refuses, which changes nothing): the column is about
/// to be written whole, and one call is cheaper than a page fault per 4 KiB page. Each part
/// maps its own rows, so the kernel zeroes the pages on every part's thread at once. (Huge
/// pages, `MADV_HUGEPAGE`, were tried: slower in a new process, the kernel compacting memory
/// first.)
// A system call on the caller's own memory (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
pub(crate) fn prefault<T>(values: &mut [T]) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const PAGE: usize = 4096;
        let start = values.as_mut_ptr() as usize;
        let first = start.next_multiple_of(PAGE);
        let end = (start + std::mem::size_of_val(values)) / PAGE * PAGE;
        if end >= first + (64 << 10) {
            // SAFETY: the range lies inside `values`, page-aligned; MADV_POPULATE_WRITE maps
            // the pages as a write would, never changing their contents.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_POPULATE_WRITE) };
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = values;
}
