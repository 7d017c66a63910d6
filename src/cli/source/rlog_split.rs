//! An R1 RLOG file read in two halves at once. Part B, on another thread, reads from a guessed
//! message start near the middle to the end ([`read_half`]); part A reads from the start to
//! that offset ([`Split`]). Both keep their values per key id in file order ([`Half`]: a
//! column of the key's first number, boolean or number-list type and its times, and where its
//! other values are), without channels, tables or, in B, the names of keys defined before it. When A
//! reaches B's start it checks the guess: if a message starts exactly there, the framing from
//! there on is the one B followed (RLOG messages frame themselves, and an R1 value carries its
//! type), so both halves are delivered, A's then B's; if A steps over the offset, the guess was
//! wrong and A reads on alone. The result is always what the one-thread read
//! (`rlog_samples::read_rlog` without a split) gives.
//!
//! Delivering a half (`Half::apply`) makes what the one-thread read makes:
//! - the key table: B's values of keys that A defined take A's keys; B's own definitions must be
//!   of ids A did not define (else B is not joined and A reads on);
//! - the cycle time: B starts at a timestamp message (else it gives up), so each of its values
//!   has the time of its own cycle;
//! - the channels and tables: made by `Keys::channel` for each (key id, value code) in the order
//!   of their first values, A's then B's;
//! - the rows: a table's rows are A's, then B's, each in file order. No two keys of one half
//!   share a name (else the half is not joined; for A, the file is read again on one thread), so
//!   no two keys of a half share a table, and delivering each key's values in order keeps every
//!   table's order. Each table's rows are one job ([`Job`]), so the sink fills the tables on two
//!   threads; a key's whole column of A becomes the table's column without a copy;
//! - samples and the error: a half's values before its error, then its error (offsets are the
//!   file's), as the one-thread read stops at it; an error of A before the cut ends the read
//!   there, B unused.
//!
//! Only reads without filters are split (the time window decides per value when a channel is
//! announced); the caller (`tables::read_rlog_split`) reads anything else as before.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use logspec::formats::rlog::{
    self, EventRef, Key, R1BodyRef, R1MessageRef, R1Value, R1ValueRef, Reader, RlogError, ValueRef,
};
use logspec::runtime::{Cursor, Endian, Input, View};

use super::rlog_samples::{deliver_plain, Keys, Route};
use super::{seconds_to_ns, State};
use crate::cli::tables::Lists;
use crate::cli::CliError;

/// Key ids below this are joined (B gives up at any other): the ids whose routes are kept.
pub const KEYS: usize = super::rlog_samples::KEYS;

/// Part B of a read in two halves, as part A sees it: where B starts, the file, and B's result.
pub struct Split<'a> {
    /// The guessed message start where B began (an absolute offset).
    pub cut: u64,
    /// The whole file (as long as it was when the read began).
    bytes: &'a [u8],
    /// B's result; called once, with whether it is still wanted (`false` asks B to stop).
    half: Option<Box<dyn FnOnce(bool) -> Option<Half<'a>> + 'a>>,
    /// Set when B was joined.
    joined: &'a std::cell::Cell<bool>,
}

impl<'a> Split<'a> {
    /// Part B starting at `cut` of the file `bytes`; `half(wanted)` waits for its [`Half`]
    /// (`None`: B failed); `joined` is set if B is joined.
    pub fn new(
        cut: u64,
        bytes: &'a [u8],
        half: impl FnOnce(bool) -> Option<Half<'a>> + 'a,
        joined: &'a std::cell::Cell<bool>,
    ) -> Split<'a> {
        Split { cut, bytes, half: Some(Box::new(half)), joined }
    }

    fn take(&mut self, wanted: bool) -> Option<Half<'a>> {
        self.half.take().and_then(|h| h(wanted))
    }

    /// Part A: reads the file from the start with `r` (its reader, after the revision byte) to
    /// B's start as B reads (per key id, [`Half`]). If a message starts exactly at B's start, B
    /// is joined: both halves are delivered, A's then B's. If A steps over it (the guess was
    /// wrong) or B cannot be joined exactly, A reads on to the end. If A itself cannot be
    /// delivered exactly ([`Half::names`], or it gave up), the file is read again from the
    /// start by `read_loop`, the one-thread read.
    pub(super) fn read(
        mut self,
        r: Reader<Box<dyn std::io::Read>>,
        keys: &mut Keys<'_>,
        state: &mut State<'_>,
        read_loop: impl FnOnce(&mut Reader<&[u8]>, &mut Keys<'_>, &mut State<'_>) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let options = rlog::ReaderOptions { assume_revision: (!r.has_revision_byte()).then_some(r.revision()) };
        // Part A reads the file in place, as B does; `r` reads the same bytes through `Read`.
        let at = r.position();
        let in_place =
            rlog::SliceReader::from_slice_with_options(self.bytes, options).ok().filter(|p| p.position() == at);
        let Some(mut r) = in_place else {
            let mut r = Reader::with_options(self.bytes, options)
                .map_err(|e| CliError::Input(format!("{}: {e}", keys.path)))?;
            return read_loop(&mut r, keys, state);
        };
        let stop = AtomicBool::new(false);
        // From the start of the file, the cycle time is 0 until the first timestamp.
        let mut a = Half::new(self.bytes, 0, 0);
        r.stop_at(Some(self.cut));
        let mut read = a.read(&mut r, &stop);
        let mut b = None;
        if read.is_ok() && r.stopped() {
            r.stop_at(None);
            let on_boundary = r.position() == self.cut;
            b = self.take(on_boundary).filter(|b| {
                let a_key = |id: i16| a.key(id);
                b.names(&a_key).is_some()
            });
            if b.is_none() {
                read = a.read(&mut r, &stop);
            }
        }
        self.take(false);
        let names = read.ok().and_then(|()| a.names(&|_| None));
        let Some(names) = names else {
            // Part A cannot be delivered as it was read: the one-thread read, from the start.
            drop(b);
            let mut r = Reader::with_options(self.bytes, options)
                .map_err(|e| CliError::Input(format!("{}: {e}", keys.path)))?;
            return read_loop(&mut r, keys, state);
        };
        a.apply(&names, keys, state)?;
        if let Some(mut b) = b {
            let names = {
                let a_key = |id: i16| a.key(id);
                b.names(&a_key).expect("checked before")
            };
            b.apply(&names, keys, state)?;
            self.joined.set(true);
            free(b);
        }
        free(a);
        Ok(())
    }
}

/// Frees a half's columns on a thread of their own (giving their pages back takes a few ms).
fn free(half: Half<'_>) {
    let Half { keys, firsts, defs, .. } = half;
    let _ = std::thread::Builder::new().name("logspec-free".into()).spawn(move || drop((keys, firsts, defs)));
}

impl Drop for Split<'_> {
    /// A part A that ended before the cut (an error) stops B.
    fn drop(&mut self) {
        self.take(false);
    }
}

/// A run of a half's values of one key and type, for [`super::Sink::rlog_run`].
#[derive(Clone, Copy, Debug)]
pub enum Run<'a> {
    Bool(&'a [bool]),
    /// R1 integers, widened.
    I64(&'a [i64]),
    F64(&'a [f64]),
    /// R1 `double[]` values.
    F64List(ListRun<'a, f64>),
    /// R1 `int[]` values, their items widened.
    I64List(ListRun<'a, i64>),
}

/// A run of list values: each row's items are `items[offsets[i]..offsets[i + 1]]`; `ats` are
/// the absolute offsets of the rows' messages, to decode a row again for a sink that takes no
/// runs of lists ([`Run::value`]).
#[derive(Clone, Copy, Debug)]
pub struct ListRun<'a, T> {
    pub offsets: &'a [i32],
    pub items: &'a [T],
    pub ats: &'a [u64],
}

impl<'a, T> ListRun<'a, T> {
    /// The rows.
    pub fn len(&self) -> usize {
        self.ats.len()
    }

    /// The items of every row, in order.
    pub fn row_items(&self) -> &'a [T] {
        let (first, last) = (self.offsets[0], self.offsets[self.len()]);
        &self.items[first as usize..last as usize]
    }
}

impl<'a> Run<'a> {
    /// The `i`th value as the reader lends it; a list is decoded again from its message by
    /// `decode` (a half's `value_at`).
    pub fn value<'d>(
        &self,
        i: usize,
        decode: &dyn Fn(u64) -> Result<ValueRef<'d>, CliError>,
    ) -> Result<ValueRef<'d>, CliError> {
        Ok(ValueRef::R1(match *self {
            Run::Bool(v) => R1ValueRef::Boolean { value: v[i] },
            // Widened from an R1 `i32`, so the narrowing is exact.
            Run::I64(v) => R1ValueRef::Integer { value: v[i] as i32 },
            Run::F64(v) => R1ValueRef::Double { value: v[i] },
            Run::F64List(l) => return decode(l.ats[i]),
            Run::I64List(l) => return decode(l.ats[i]),
        }))
    }

    fn slice(&self, a: usize, b: usize) -> Self {
        fn list<T>(l: ListRun<'_, T>, a: usize, b: usize) -> ListRun<'_, T> {
            ListRun { offsets: &l.offsets[a..=b], items: l.items, ats: &l.ats[a..b] }
        }
        match *self {
            Run::Bool(v) => Run::Bool(&v[a..b]),
            Run::I64(v) => Run::I64(&v[a..b]),
            Run::F64(v) => Run::F64(&v[a..b]),
            Run::F64List(l) => Run::F64List(list(l, a, b)),
            Run::I64List(l) => Run::I64List(list(l, a, b)),
        }
    }
}

/// Part B's values: per key id, in file order.
pub struct Half<'m> {
    keys: Vec<KeyRows>,
    /// The first value of each (key id, value code) in B, in file order: where channels are made.
    firsts: Vec<First>,
    /// The keys B defined.
    defs: Vec<(i16, Key)>,
    /// The error that ended B's reading, after every value before it.
    error: Option<RlogError>,
    /// B's whole input, to decode its rare values again ([`KeyRows::others`]), and the
    /// absolute offset of its first byte.
    input: &'m [u8],
    cut: u64,
    /// The cycle time (nanoseconds; -1 before the first timestamp of a half that starts inside
    /// the file).
    t: i64,
}

/// A (key id, value code) first seen in B, at row `row` of the key.
#[derive(Clone, Copy)]
struct First {
    key: u16,
    code: u8,
    row: usize,
}

/// The values of one key id in B.
#[derive(Default)]
struct KeyRows {
    /// The time of every row (`log_time` nanoseconds).
    times: Vec<i64>,
    /// The values of the key's first value's type, when that is a number, a boolean, or a list
    /// of doubles or integers.
    values: Option<Column>,
    /// Rows of any other type (or of every type, when the first has no column): the row and
    /// the absolute offset and value code of its message, decoded again when joined.
    others: Vec<(usize, u64, u8)>,
    /// The value codes seen (bit per code).
    codes: u16,
    /// Whether B defined the key (before any of its values).
    defined: bool,
}

/// A key's list values, and where each row's message is ([`ListRun::ats`]).
pub struct KeyLists<T> {
    pub rows: Lists<T>,
    pub ats: Vec<u64>,
}

impl<T: Copy> KeyLists<T> {
    /// A key's first list value, from the message at `at`.
    fn first(items: impl ExactSizeIterator<Item = T>, at: u64) -> Option<Self> {
        let mut l = KeyLists { rows: Lists::default(), ats: Vec::new() };
        l.push(items, at).then_some(l)
    }

    /// Appends a row of these items from the message at `at`; false (nothing appended) when
    /// there would be more items than 32-bit offsets count.
    #[inline(always)]
    fn push(&mut self, items: impl ExactSizeIterator<Item = T>, at: u64) -> bool {
        self.rows.push(items) && push(&mut self.ats, at)
    }

    fn run(&self) -> ListRun<'_, T> {
        ListRun { offsets: &self.rows.offsets, items: self.rows.items.as_slice(), ats: &self.ats }
    }
}

/// Why B gave up (its half is then not joined; A reads on alone).
struct GiveUp;

/// Reads part B: the messages of `input` (the file from absolute offset `cut` on, where a
/// timestamp message is guessed to start) to its end, keeping each value per key id. `None`
/// when B gave up: asked to stop (`stop`), or something it cannot join exactly (a key id
/// defined twice, or after values of it, or at or above [`KEYS`]; a time past `i64::MAX` ns;
/// a value before B's first timestamp).
pub fn read_half<'m>(input: &'m [u8], cut: u64, revision: rlog::Revision, stop: &AtomicBool) -> Option<Half<'m>> {
    let mut r = rlog::SliceReader::resume_in_place(input, revision, cut);
    // The cycle time is not known before B's first timestamp.
    let mut half = Half::new(input, cut, -1);
    half.read(&mut r, stop).ok()?;
    Some(half)
}

impl<'m> Half<'m> {
    /// An empty half over `input`, whose first byte is at absolute offset `cut`, with the cycle
    /// time `t` (nanoseconds; -1: unknown) until its first timestamp.
    fn new(input: &'m [u8], cut: u64, t: i64) -> Half<'m> {
        Half { keys: Vec::new(), firsts: Vec::new(), defs: Vec::new(), error: None, input, cut, t }
    }

    /// Reads `r`'s messages (until it ends, fails or stops, [`Reader::stop_at`]) into the half.
    /// `Err` when it gave up (see [`read_half`]); a reading error is kept in the half.
    fn read<R, I: Input>(&mut self, r: &mut Reader<R, I>, stop: &AtomicBool) -> Result<(), GiveUp> {
        let half = self;
        let mut t = half.t;
        let flow = r.try_for_each_event_at(
            #[inline(always)]
            |at, ev| match ev {
                EventRef::Value { key_id, value: ValueRef::R1(v), .. } => {
                    let k = usize::from(key_id as u16);
                    if let Some(rows) = half.keys.get_mut(k) {
                        let typed = match (&mut rows.values, v) {
                            (Some(Column::F64(x)), R1ValueRef::Double { value }) => push(x, value),
                            (Some(Column::I64(x)), R1ValueRef::Integer { value }) => push(x, i64::from(value)),
                            (Some(Column::Bool(x)), R1ValueRef::Boolean { value }) => push(x, value),
                            (Some(Column::F64List(x)), R1ValueRef::DoubleArray { value }) => x.push(value.iter(), at),
                            (Some(Column::I64List(x)), R1ValueRef::IntegerArray { value }) => {
                                x.push(value.iter().map(i64::from), at)
                            }
                            _ => false,
                        };
                        if typed {
                            push(&mut rows.times, t);
                            return ControlFlow::Continue(());
                        }
                    }
                    half.other(k, v, at, t)
                }
                EventRef::Value { .. } => ControlFlow::Break(GiveUp),
                EventRef::Timestamp(ts) => {
                    t = match i64::try_from(seconds_to_ns(ts)) {
                        Ok(t) if !stop.load(Ordering::Relaxed) => t,
                        _ => return ControlFlow::Break(GiveUp),
                    };
                    ControlFlow::Continue(())
                }
                EventRef::KeyDef { key_id, key } => half.define(key_id, key),
            },
        );
        half.t = t;
        match flow {
            Ok(ControlFlow::Continue(())) => Ok(()),
            Ok(ControlFlow::Break(GiveUp)) => Err(GiveUp),
            // A value that did not decode as its key's type (R2): nothing to join it with.
            Err(e) if e.is_recoverable() => Err(GiveUp),
            Err(e) => {
                half.error = Some(e);
                Ok(())
            }
        }
    }
}

impl<'m> Half<'m> {
    /// A value that is not of its key's first type, or the key's first value, out of line.
    #[cold]
    #[inline(never)]
    fn other(&mut self, k: usize, v: R1ValueRef<'_>, at: u64, t: i64) -> ControlFlow<GiveUp> {
        let Ok(code) = u8::try_from(v.tag()) else { return ControlFlow::Break(GiveUp) };
        // A value before B's first timestamp has the time of a cycle that A started: B began
        // at a message that is not a timestamp. Every key's first value comes here, so the
        // first value of B does.
        if k >= KEYS || code > 15 || t < 0 {
            return ControlFlow::Break(GiveUp);
        }
        if self.keys.len() <= k {
            self.keys.resize_with(k + 1, KeyRows::default);
        }
        let rows = &mut self.keys[k];
        let row = rows.times.len();
        if rows.codes & (1 << code) == 0 {
            rows.codes |= 1 << code;
            self.firsts.push(First { key: k as u16, code, row });
        }
        // The key's first value: a number, a boolean or a list of doubles or integers gives the
        // key its typed column.
        let first = match (row, v) {
            (0, R1ValueRef::Boolean { value }) => Some(Column::Bool(vec![value])),
            (0, R1ValueRef::Integer { value }) => Some(Column::I64(vec![i64::from(value)])),
            (0, R1ValueRef::Double { value }) => Some(Column::F64(vec![value])),
            (0, R1ValueRef::DoubleArray { value }) => KeyLists::first(value.iter(), at).map(Column::F64List),
            (0, R1ValueRef::IntegerArray { value }) => {
                KeyLists::first(value.iter().map(i64::from), at).map(Column::I64List)
            }
            _ => None,
        };
        let typed = first.is_some();
        if typed {
            rows.values = first;
        }
        if !typed {
            rows.others.push((row, at, code));
        }
        push(&mut rows.times, t);
        ControlFlow::Continue(())
    }

    /// A key defined in B: joined only if it is defined once, before its values.
    #[cold]
    #[inline(never)]
    fn define(&mut self, key_id: i16, key: &Key) -> ControlFlow<GiveUp> {
        let k = usize::from(key_id as u16);
        if k >= KEYS {
            return ControlFlow::Break(GiveUp);
        }
        if self.keys.len() <= k {
            self.keys.resize_with(k + 1, KeyRows::default);
        }
        let rows = &mut self.keys[k];
        if rows.defined || rows.codes != 0 {
            return ControlFlow::Break(GiveUp);
        }
        rows.defined = true;
        self.defs.push((key_id, key.clone()));
        ControlFlow::Continue(())
    }

    /// The name of each key id with values in the half, by id, when the half can be joined
    /// exactly (`outer`: the keys defined before it): it defined no key defined before it, and
    /// no two of its keys share a name (nor has one a `#`, with which a key's name can be
    /// another's table name), so that no table gets rows of two of its keys, whose order
    /// between each other it did not keep.
    fn names<'k>(&'k self, outer: &dyn Fn(i16) -> Option<&'k Key>) -> Option<Vec<Option<String>>> {
        if self.defs.iter().any(|(id, _)| outer(*id).is_some()) {
            return None;
        }
        let mut keys = vec![None; self.keys.len()];
        let mut names = std::collections::HashSet::new();
        for (k, rows) in self.keys.iter().enumerate() {
            if rows.codes == 0 {
                continue;
            }
            let id = k as u16 as i16;
            let name = self.key(id).or_else(|| outer(id)).map_or("?", |k| k.name.as_str());
            if name.contains('#') || !names.insert(name) {
                return None;
            }
            keys[k] = Some(name.to_string());
        }
        Some(keys)
    }

    /// A key the half defined.
    fn key(&self, id: i16) -> Option<&Key> {
        self.defs.iter().find(|(d, _)| *d == id).map(|(_, key)| key)
    }

    /// Delivers the half's values after what was read before it: the channels of its (key,
    /// code)s in the order of their first values, then each key's rows in order, by channel
    /// ([`super::Sink::rlog_jobs`]; a key's whole typed column given to the sink, which takes
    /// it as the table's column or appends it), then the half's error.
    fn apply(&mut self, names: &[Option<String>], keys: &mut Keys<'_>, state: &mut State<'_>) -> Result<(), CliError> {
        // A key id the half defines was (if values of it came before, undefined) forgotten at
        // its definition.
        for (id, _) in &self.defs {
            keys.routes.forget(*id);
        }
        for f in &self.firsts {
            let name = names[usize::from(f.key)].as_deref().unwrap_or("?");
            let t = self.keys[usize::from(f.key)].times.as_slice()[f.row] as u64;
            let type_name = rlog::r1_code_name(i128::from(f.code));
            keys.channel(state, Some((usize::from(f.key), usize::from(f.code))), t, name, type_name)?;
        }
        let route = |k: usize, code: u8| match keys.routes.get(Some((k, usize::from(code)))) {
            Route::Plain(id) => Some(id),
            _ => None,
        };
        // A key of one typed column (most keys): the column itself.
        let mut jobs: Vec<Job<'_>> = Vec::new();
        for (k, rows) in self.keys.iter_mut().enumerate() {
            let Some(run) = rows.values.as_ref().map(Column::run) else { continue };
            let Some(id) = route(k, run_code(&run)).filter(|_| rows.others.is_empty()) else { continue };
            let column = rows.values.take().expect("a typed column");
            jobs.push(Job { id, pieces: vec![Piece::Column(std::mem::take(&mut rows.times), column)] });
            rows.codes = 0;
        }
        // Each other key's rows, in order, by the channel they go to.
        for (k, rows) in self.keys.iter().enumerate() {
            if rows.codes == 0 {
                continue;
            }
            let first = jobs.len();
            let job_of = |id: usize, jobs: &mut Vec<Job<'_>>| -> usize {
                match jobs[first..].iter().position(|j| j.id == id) {
                    Some(j) => first + j,
                    None => {
                        jobs.push(Job { id, pieces: Vec::new() });
                        jobs.len() - 1
                    }
                }
            };
            let typed = rows.values.as_ref().map(Column::run);
            let typed_route = typed.and_then(|run| route(k, run_code(&run)));
            // Rows `row..end` of the typed column, which start at typed value `v`.
            let (mut row, mut v) = (0usize, 0usize);
            let mut others = rows.others.iter().peekable();
            while row < rows.times.len() {
                let end = others.peek().map_or(rows.times.len(), |(r, ..)| *r);
                if end > row {
                    let run = typed.expect("rows not among the others are typed").slice(v, v + end - row);
                    if let Some(id) = typed_route {
                        let j = job_of(id, &mut jobs);
                        jobs[j].pieces.push(Piece::Run(&rows.times.as_slice()[row..end], run));
                    }
                    v += end - row;
                    row = end;
                    continue;
                }
                let &(_, at, code) = others.next().expect("peeked");
                if let Some(id) = route(k, code) {
                    let j = job_of(id, &mut jobs);
                    jobs[j].pieces.push(Piece::One(rows.times.as_slice()[row], at));
                }
                row += 1;
            }
        }
        let this = &*self;
        let decode = |at: u64| this.value_at(at);
        // The sink takes the jobs at once (on several threads), or they are delivered here.
        let left = state.sink.rlog_jobs(Jobs { jobs, decode: &decode })?;
        for job in &left.jobs {
            for piece in &job.pieces {
                match piece {
                    Piece::Run(times, run) => deliver_run(state, job.id, times, *run, &decode)?,
                    Piece::Column(times, column) => {
                        deliver_run(state, job.id, times.as_slice(), column.run(), &decode)?
                    }
                    &Piece::One(t, at) => deliver_plain(state, job.id, t as u64, &this.value_at(at)?)?,
                }
            }
        }
        state.outcome.samples += left.taken;
        if let Some(e) = &self.error {
            state.outcome.fail(crate::cli::fault::Fault::read(keys.path, e));
        }
        Ok(())
    }

    /// The value of B's message at absolute offset `at` (one B decoded before).
    fn value_at(&self, at: u64) -> Result<ValueRef<'m>, CliError> {
        let bytes = usize::try_from(at - self.cut).ok().and_then(|i| self.input.get(i..)).unwrap_or_default();
        decode_at(bytes).map(ValueRef::R1).ok_or_else(|| {
            CliError::Input(format!(
                "byte {at}: a message read on another thread no longer decodes (the file changed?)"
            ))
        })
    }
}

/// The rows of one channel from a half, in order, for [`super::Sink::rlog_jobs`].
pub struct Job<'a> {
    /// The channel.
    pub id: usize,
    pub pieces: Vec<Piece<'a>>,
}

impl Job<'_> {
    /// How many rows the job has.
    pub fn rows(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Run(t, _) => t.len(),
                Piece::Column(t, _) => t.len(),
                Piece::One(..) => 1,
            })
            .sum()
    }
}

/// Rows of a [`Job`]: a run of values of one type with their times, a key's whole column of
/// them (which a sink may keep as it is), or one value (its time, and the absolute offset of its
/// message, decoded by [`Jobs::decode`]).
pub enum Piece<'a> {
    Run(&'a [i64], Run<'a>),
    Column(Vec<i64>, Column),
    One(i64, u64),
}

/// A key's whole column of values of one type.
pub enum Column {
    Bool(Vec<bool>),
    /// R1 integers, widened.
    I64(Vec<i64>),
    F64(Vec<f64>),
    F64List(KeyLists<f64>),
    I64List(KeyLists<i64>),
}

impl Column {
    pub fn run(&self) -> Run<'_> {
        match self {
            Column::Bool(v) => Run::Bool(v),
            Column::I64(v) => Run::I64(v),
            Column::F64(v) => Run::F64(v),
            Column::F64List(l) => Run::F64List(l.run()),
            Column::I64List(l) => Run::I64List(l.run()),
        }
    }
}

/// Jobs of distinct channels (each of its own table), and how to decode a [`Piece::One`];
/// what a sink leaves of them, with the rows of the jobs it took (`taken`).
pub struct Jobs<'a> {
    pub jobs: Vec<Job<'a>>,
    pub decode: &'a (dyn Fn(u64) -> Result<ValueRef<'a>, CliError> + Sync),
}

/// What a sink left of [`Jobs`]: the jobs it did not take, and the rows of those it took.
pub struct Left<'a> {
    pub jobs: Vec<Job<'a>>,
    pub taken: u64,
}

/// The R1 value code of a run's values.
fn run_code(run: &Run<'_>) -> u8 {
    let tag = match run {
        Run::Bool(_) => R1Value::TAG_BOOLEAN,
        Run::I64(_) => R1Value::TAG_INTEGER,
        Run::F64(_) => R1Value::TAG_DOUBLE,
        Run::F64List(_) => R1Value::TAG_DOUBLE_ARRAY,
        Run::I64List(_) => R1Value::TAG_INTEGER_ARRAY,
    };
    tag as u8
}

/// Hands a run of typed values to the sink at once, or one at a time if it does not take runs
/// (lists decoded again by `decode`).
fn deliver_run<'d>(
    state: &mut State<'_>,
    id: usize,
    times: &[i64],
    run: Run<'_>,
    decode: &dyn Fn(u64) -> Result<ValueRef<'d>, CliError>,
) -> Result<(), CliError> {
    if state.sink.rlog_run(id, times, run)? {
        state.outcome.samples += times.len() as u64;
        return Ok(());
    }
    for (i, t) in times.iter().enumerate() {
        deliver_plain(state, id, *t as u64, &run.value(i, decode)?)?;
    }
    Ok(())
}

/// The value of the R1 field message at the start of `bytes` (by the generated view).
fn decode_at(bytes: &[u8]) -> Option<R1ValueRef<'_>> {
    match R1MessageRef::decode_view(&mut Cursor::new(bytes), Endian::Big).ok()?.body {
        R1BodyRef::Field { value, .. } => Some(value),
        _ => None,
    }
}

/// Pushes onto a column of a half with the in-memory tables' growth rule
/// (`tables::push_row`); true: the value was taken.
#[inline(always)]
fn push<T>(v: &mut Vec<T>, x: T) -> bool {
    crate::cli::tables::push_row(v, x);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice of a list run keeps each row's offsets, items and message offset together, and
    /// a row of it is decoded again from its message for a sink that takes no runs.
    #[test]
    fn list_runs_slice_and_decode_their_rows() {
        let mut l = KeyLists::<f64> { rows: Lists::default(), ats: Vec::new() };
        for (row, at) in [(vec![], 10u64), (vec![1.0, 2.0], 20), (vec![3.0], 30), (vec![4.0, 5.0, 6.0], 40)] {
            assert!(l.push(row.into_iter(), at));
        }
        let run = Run::F64List(l.run()).slice(1, 3);
        let Run::F64List(s) = run else { panic!("a list run") };
        assert_eq!((s.offsets, s.ats, s.row_items()), (&[0, 2, 3][..], &[20, 30][..], &[1.0, 2.0, 3.0][..]));
        assert_eq!(s.len(), 2);
        let asked = std::cell::Cell::new(0);
        let decode = |at: u64| -> Result<ValueRef<'static>, CliError> {
            asked.set(at);
            Ok(ValueRef::R1(R1ValueRef::Null {}))
        };
        assert!(matches!(run.value(1, &decode), Ok(ValueRef::R1(R1ValueRef::Null {}))));
        assert_eq!(asked.get(), 30);
        // Numbers need no decoding.
        let never = |_: u64| -> Result<ValueRef<'static>, CliError> { panic!("decoded a number") };
        assert!(matches!(Run::F64(&[0.5]).value(0, &never), Ok(ValueRef::R1(R1ValueRef::Double { value: 0.5 }))));
    }
}
