//! A framed log whose record types are flat structs of fixed size (USVLOG) read into columns
//! of their final size, in two passes over one open file, the second on up to
//! [`MAX_THREADS`] threads: the shared core of the Python package's
//! `logspec.usvlog.read_timeseries_bin` (numpy columns in upstream's dtypes) and of its
//! `tables()` of such a log (Arrow arrays in the IR's types, `tables::read_usvlog`).
//!
//! Pass 1 ([`count()`]) frames every record, counts the rows each type gives (so that every
//! column is allocated once, at its final size, by the caller), keeps the unknown records and
//! notes record boundaries that cut the file into parts of about equal bytes. Pass 2 ([`fill()`])
//! fills each part's rows on a thread of its own, a column at a time, at the offsets the IR
//! gives ([`FixedLayout::gather_at`]). Which records become rows is the caller's [`Keep`],
//! asked the same in both passes. The result and its errors do not depend on the number of
//! parts; a file that changed between the passes gives [`Changed`], never rows of another
//! file's layout.

mod count;
mod fill;

pub use count::{count, Counted, Split, Stop, Unknown};
pub use fill::{fill, read_at, Changed, Columns, Out, Part, Time};

use crate::columns::FixedLayout;

/// The record types that become columns: record id and layout, by type index.
pub struct Layouts {
    types: Vec<(u64, FixedLayout)>,
    /// Type index by record id, for ids up to the largest (at most 65,536).
    by_id: Vec<Option<usize>>,
    /// Whether a known record's payload must be exactly its type's size (else at least).
    pub strict: bool,
}

impl Layouts {
    /// The layouts of `types` (`(record id, layout)`); `strict`: a payload longer than its
    /// type's size is a fault ([`Stop::Length`]) rather than a row of its first bytes.
    pub fn new(types: Vec<(u64, FixedLayout)>, strict: bool) -> Layouts {
        let max = types.iter().map(|t| t.0).max().unwrap_or(0);
        let mut by_id = vec![None; usize::try_from(max).unwrap_or(0).saturating_add(1).min(1 << 16)];
        for (i, (id, _)) in types.iter().enumerate() {
            if let Some(slot) = usize::try_from(*id).ok().and_then(|id| by_id.get_mut(id)) {
                *slot = Some(i);
            }
        }
        Layouts { types, by_id, strict }
    }

    /// How many types there are.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The type index of record id `tag`.
    #[inline]
    pub fn find(&self, tag: u64) -> Option<usize> {
        match usize::try_from(tag).ok().and_then(|t| self.by_id.get(t)) {
            Some(i) => *i,
            None => self.types.iter().position(|t| t.0 == tag),
        }
    }

    /// The record id of type `i`.
    pub fn id(&self, i: usize) -> u64 {
        self.types[i].0
    }

    /// The layout of type `i`.
    pub fn layout(&self, i: usize) -> &FixedLayout {
        &self.types[i].1
    }

    /// Whether a payload of `len` bytes fits type `i` (as [`Layouts::strict`] says).
    #[inline]
    fn fits(&self, i: usize, len: usize) -> bool {
        let size = self.types[i].1.size;
        len == size || (!self.strict && len > size)
    }
}

/// Which records of a known type become rows: asked by both passes, so it must answer alike for
/// the same record (a function of the type and the record's time).
pub trait Keep: Sync {
    /// Whether the record of type `ty` at time `tick` (the framing's timestamp field, or the
    /// record's index when the format has none) is a row.
    fn keep(&self, ty: usize, tick: u64) -> bool;

    /// Pass 1's question, in file order, once per record before the first fault: the same
    /// answer as [`Keep::keep`]; a filter may note what it saw here.
    fn note(&mut self, ty: usize, tick: u64) -> bool {
        self.keep(ty, tick)
    }
}

/// Every record of a known type is a row.
pub struct All;

impl Keep for All {
    #[inline(always)]
    fn keep(&self, _ty: usize, _tick: u64) -> bool {
        true
    }
}

/// At most this many threads fill the columns (pass 2), and no more than the machine has
/// cores: the work is memory-bound (the kernel zeroing new pages, the file's bytes copied in,
/// the columns written), so more threads than that gain little.
pub const MAX_THREADS: usize = 2;

/// The fewest file bytes per part when the number of parts is chosen here: below that, the
/// file is read by one thread.
pub const MIN_PART_BYTES: u64 = 8 << 20;

/// The parts of pass 2 for a file of `len` bytes: one per core up to [`MAX_THREADS`], each of
/// at least [`MIN_PART_BYTES`].
pub fn auto_parts(len: u64) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS);
    cores.min(usize::try_from(len / MIN_PART_BYTES).unwrap_or(usize::MAX)).max(1)
}

/// Cuts every type's columns (all their rows, as pass 1 counted them) at pass 1's splits into
/// the parts of pass 2. `None` when a split counts more rows than the columns have (which pass
/// 1 never does).
pub fn split<'a, H>(c: &Counted<H>, columns: Vec<Columns<'a>>, types: usize) -> Option<Vec<Part<'a>>> {
    let mut parts = Vec::with_capacity(c.splits.len() + 1);
    let (mut start, mut first) = (c.start, 0u64);
    let mut before = vec![0usize; types];
    let mut rest = columns;
    for s in &c.splits {
        let mut mine = Vec::with_capacity(rest.len());
        let mut later = Vec::with_capacity(rest.len());
        for cols in rest {
            let n = s.rows.get(cols.ty)?.checked_sub(*before.get(cols.ty)?)?;
            let (a, b) = cols.split(n)?;
            mine.push(a);
            later.push(b);
        }
        parts.push(Part::new(start, s.offset, first, s.index - first, mine));
        before.clone_from(&s.rows);
        (start, first, rest) = (s.offset, s.index, later);
    }
    parts.push(Part::new(start, c.end, first, c.limit - first, rest));
    Some(parts)
}
