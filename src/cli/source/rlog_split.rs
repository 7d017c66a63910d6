//! An R1 RLOG file read in two halves at once: part A reads from the start as ever
//! ([`super::rlog_samples::read_rlog`]); part B, on another thread, reads from a guessed message
//! start near the middle to the end ([`read_half`]) and keeps its values per key id, in file
//! order, without knowing the keys' names or channels (most of them were defined in the first
//! half). When A reaches the guessed offset it checks the guess: if a message starts exactly
//! there, the framing from there on is the one B followed (RLOG messages frame themselves, and
//! an R1 value carries its type), so B's values are joined to A's ([`Split::join`]) with A's key
//! table and channels, as if A had read them; if A steps over the offset, the guess was wrong
//! and A reads on alone. The result is always what one read from the start gives.
//!
//! What crosses the cut, and why joining is exact:
//! - the key table: B's values of keys that A defined take A's keys; B's own definitions must be
//!   of ids A did not define (else the join is declined and A reads on);
//! - the cycle time: B starts at a timestamp message (the guess is a `00` byte), so each of its
//!   values has the time of its own cycle;
//! - the channels and tables: made by [`super::rlog_samples::Keys::channel`] for each (key id,
//!   value code) in the order of their first values in B, after A's, as one read makes them;
//! - the rows: a table's rows are A's, then B's in file order. B's keys have distinct names (else
//!   the join is declined), so no two keys of B share a table and replaying each key's values in
//!   order keeps every table's order;
//! - samples and the error: B's values before its error, then its error (offsets are the file's),
//!   as one read stops at it; an error of A before the cut ends the read there, B unused.
//!
//! Only reads without filters are split (the time window decides per value when a channel is
//! announced); the caller ([`crate::cli::tables::read_rlog_split`]) reads anything else as before.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use logspec::formats::rlog::{self, EventRef, Key, R1BodyRef, R1MessageRef, R1ValueRef, Reader, RlogError, ValueRef};
use logspec::runtime::{Cursor, Endian, View};

use super::rlog_samples::{deliver_plain, Keys, Route};
use super::{seconds_to_ns, State};
use crate::cli::CliError;

/// Key ids below this are joined (B gives up at any other): the ids whose routes are kept.
pub const KEYS: usize = super::rlog_samples::KEYS;

/// Part B of a read in two halves, as part A sees it: where B starts, and B's result.
pub struct Split<'a> {
    /// The guessed message start where B began (an absolute offset).
    pub cut: u64,
    /// B's result; called once, with whether it is still wanted (`false` asks B to stop).
    half: Option<Box<dyn FnOnce(bool) -> Option<Half<'a>> + 'a>>,
    /// Set when B was joined.
    joined: &'a std::cell::Cell<bool>,
}

impl<'a> Split<'a> {
    /// Part B starting at `cut`; `half(wanted)` waits for its [`Half`] (`None`: B failed);
    /// `joined` is set if B is joined.
    pub fn new(
        cut: u64,
        half: impl FnOnce(bool) -> Option<Half<'a>> + 'a,
        joined: &'a std::cell::Cell<bool>,
    ) -> Split<'a> {
        Split { cut, half: Some(Box::new(half)), joined }
    }

    fn take(&mut self, wanted: bool) -> Option<Half<'a>> {
        self.half.take().and_then(|h| h(wanted))
    }

    /// Joins B to what A read, when A stopped at B's start with reader `r`: true when joined
    /// (the read is complete), false when A must read on alone (B's guess was wrong, or B's
    /// half cannot be joined exactly).
    pub(super) fn join(
        mut self,
        r: &Reader<Box<dyn std::io::Read>>,
        keys: &mut Keys<'_>,
        state: &mut State<'_>,
    ) -> Result<bool, CliError> {
        // A stepped over the guessed start: it was inside a message.
        if r.position() != self.cut {
            self.take(false);
            return Ok(false);
        }
        let Some(half) = self.take(true) else { return Ok(false) };
        let Some(names) = half.names(r) else { return Ok(false) };
        half.apply(&names, keys, state)?;
        drop(names);
        // B's columns are freed on a thread of their own (unmapping them takes a few ms).
        let Half { keys: rows, firsts, defs, .. } = half;
        let free = move || drop((rows, firsts, defs));
        let _ = std::thread::Builder::new().name("logspec-free".into()).spawn(free);
        self.joined.set(true);
        Ok(true)
    }
}

impl Drop for Split<'_> {
    /// A part A that ended before the cut (an error) stops B.
    fn drop(&mut self) {
        self.take(false);
    }
}

/// A run of B's values of one key and type, for [`super::Sink::rlog_run`].
#[derive(Clone, Copy, Debug)]
pub enum Run<'a> {
    Bool(&'a [bool]),
    /// R1 integers, widened.
    I64(&'a [i64]),
    F64(&'a [f64]),
}

impl Run<'_> {
    /// The `i`th value as the reader lends it.
    pub fn value(&self, i: usize) -> ValueRef<'static> {
        ValueRef::R1(match *self {
            Run::Bool(v) => R1ValueRef::Boolean { value: v[i] },
            // Widened from an R1 `i32`, so the narrowing is exact.
            Run::I64(v) => R1ValueRef::Integer { value: v[i] as i32 },
            Run::F64(v) => R1ValueRef::Double { value: v[i] },
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Run::Bool(v) => v.len(),
            Run::I64(v) => v.len(),
            Run::F64(v) => v.len(),
        }
    }

    fn slice(&self, a: usize, b: usize) -> Self {
        match *self {
            Run::Bool(v) => Run::Bool(&v[a..b]),
            Run::I64(v) => Run::I64(&v[a..b]),
            Run::F64(v) => Run::F64(&v[a..b]),
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
    /// The values of the key's first value's type, when that is a number or a boolean.
    values: Values,
    /// Rows of any other type (or of every type, when the first is not a number): the row and
    /// the absolute offset and value code of its message, decoded again when joined.
    others: Vec<(usize, u64, u8)>,
    /// The value codes seen (bit per code).
    codes: u16,
    /// Whether B defined the key (before any of its values).
    defined: bool,
}

#[derive(Default)]
enum Values {
    /// No value yet, or the first is not a number or a boolean.
    #[default]
    None,
    Bool(Vec<bool>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Values {
    fn run(&self) -> Option<Run<'_>> {
        match self {
            Values::None => None,
            Values::Bool(v) => Some(Run::Bool(v)),
            Values::I64(v) => Some(Run::I64(v)),
            Values::F64(v) => Some(Run::F64(v)),
        }
    }
}

/// Why B gave up (its half is then not joined; A reads on alone).
struct GiveUp;

/// Reads part B: the messages of `input` (the file from absolute offset `cut` on, where a
/// timestamp message is guessed to start) to its end, keeping each value per key id. `None`
/// when B gave up: asked to stop (`stop`), or something it cannot join exactly (a key id
/// defined twice, or after values of it, or at or above [`KEYS`]; a time past `i64::MAX` ns).
pub fn read_half<'m>(input: &'m [u8], cut: u64, revision: rlog::Revision, stop: &AtomicBool) -> Option<Half<'m>> {
    let mut r = Reader::resume(input, revision, cut);
    let mut half = Half { keys: Vec::new(), firsts: Vec::new(), defs: Vec::new(), error: None, input, cut };
    // The cycle time in nanoseconds; -1 before B's first timestamp.
    let mut t: i64 = -1;
    let flow = r.try_for_each_event_at(
        #[inline(always)]
        |at, ev| match ev {
            EventRef::Value { key_id, value: ValueRef::R1(v), .. } => {
                let k = usize::from(key_id as u16);
                if let Some(rows) = half.keys.get_mut(k) {
                    let typed = match (&mut rows.values, v) {
                        (Values::F64(x), R1ValueRef::Double { value }) => push(x, value),
                        (Values::I64(x), R1ValueRef::Integer { value }) => push(x, i64::from(value)),
                        (Values::Bool(x), R1ValueRef::Boolean { value }) => push(x, value),
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
    match flow {
        Ok(ControlFlow::Continue(())) => {}
        Ok(ControlFlow::Break(GiveUp)) => return None,
        // A value that did not decode as its key's type (R2): nothing to join it with.
        Err(e) if e.is_recoverable() => return None,
        Err(e) => half.error = Some(e),
    }
    Some(half)
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
        // The key's first value: a number or a boolean gives the key its typed column.
        let typed = match (row, v) {
            (0, R1ValueRef::Boolean { value }) => {
                rows.values = Values::Bool(vec![value]);
                true
            }
            (0, R1ValueRef::Integer { value }) => {
                rows.values = Values::I64(vec![i64::from(value)]);
                true
            }
            (0, R1ValueRef::Double { value }) => {
                rows.values = Values::F64(vec![value]);
                true
            }
            _ => false,
        };
        if !typed {
            rows.others.push((row, at, code));
        }
        rows.times.push(t);
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

    /// The key of each key id with values in B, by id, when B can be joined to A (whose reader
    /// `r` holds the keys defined before the cut): B defined no key that A defined, and no two
    /// of B's keys share a name (nor has one a `#`, with which a key's name can be another's
    /// table name), so that no table gets rows of two of B's keys.
    fn names<'k>(&'k self, r: &'k Reader<Box<dyn std::io::Read>>) -> Option<Vec<Option<&'k Key>>> {
        if self.defs.iter().any(|(id, _)| r.key(*id).is_some()) {
            return None;
        }
        let mut keys = vec![None; self.keys.len()];
        let mut names = std::collections::HashSet::new();
        for (k, rows) in self.keys.iter().enumerate() {
            if rows.codes == 0 {
                continue;
            }
            let id = k as u16 as i16;
            let key = self.defs.iter().find(|(d, _)| *d == id).map(|(_, key)| key).or_else(|| r.key(id));
            let name = key.map_or("?", |k| k.name.as_str());
            if name.contains('#') || !names.insert(name) {
                return None;
            }
            keys[k] = key;
        }
        Some(keys)
    }

    /// Delivers B's values after A's: the channels of B's (key, code)s in the order of their
    /// first values, then each key's rows in order, runs of its typed column at once
    /// ([`super::Sink::rlog_run`]), then B's error.
    fn apply(&self, keys_of: &[Option<&Key>], keys: &mut Keys<'_>, state: &mut State<'_>) -> Result<(), CliError> {
        // A key id B defines was (if A saw values of it, undefined) forgotten at its definition.
        for (id, _) in &self.defs {
            keys.routes.forget(*id);
        }
        for f in &self.firsts {
            let key = keys_of[usize::from(f.key)];
            let name = key.map_or("?", |k| k.name.as_str());
            let t = self.keys[usize::from(f.key)].times[f.row] as u64;
            keys.channel(
                state,
                Some((usize::from(f.key), usize::from(f.code))),
                t,
                name,
                rlog::r1_code_name(i128::from(f.code)),
            )?;
        }
        // Each key's rows, in order, by the channel they go to: pieces of a table's job.
        let mut jobs: Vec<Job<'_>> = Vec::new();
        for (k, rows) in self.keys.iter().enumerate() {
            if rows.codes == 0 {
                continue;
            }
            let route = |code: u8| match keys.routes.get(Some((k, usize::from(code)))) {
                Route::Plain(id) => Some(id),
                _ => None,
            };
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
            let typed = rows.values.run();
            let typed_route = typed.and_then(|run| route(run_code(&run)));
            // Rows `row..end` of the typed column, which start at typed value `v`.
            let (mut row, mut v) = (0usize, 0usize);
            let mut others = rows.others.iter().peekable();
            while row < rows.times.len() {
                let end = others.peek().map_or(rows.times.len(), |(r, ..)| *r);
                if end > row {
                    let run = typed.expect("rows not among the others are typed").slice(v, v + end - row);
                    if let Some(id) = typed_route {
                        let j = job_of(id, &mut jobs);
                        jobs[j].pieces.push(Piece::Run(&rows.times[row..end], run));
                    }
                    v += end - row;
                    row = end;
                    continue;
                }
                let &(_, at, code) = others.next().expect("peeked");
                if let Some(id) = route(code) {
                    let j = job_of(id, &mut jobs);
                    jobs[j].pieces.push(Piece::One(rows.times[row], at));
                }
                row += 1;
            }
        }
        let decode = |at: u64| self.value_at(at);
        let jobs = Jobs { jobs, decode: &decode };
        // The sink takes the jobs at once (on several threads), or they are delivered here.
        let taken = state.sink.rlog_jobs(&jobs)?;
        for (job, taken) in jobs.jobs.iter().zip(taken) {
            if taken {
                state.outcome.samples += job.rows() as u64;
                continue;
            }
            for piece in &job.pieces {
                match *piece {
                    Piece::Run(times, run) => deliver_run(state, job.id, times, run)?,
                    Piece::One(t, at) => deliver_plain(state, job.id, t as u64, &self.value_at(at)?)?,
                }
            }
        }
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

/// The rows of one channel from B, in order, for [`super::Sink::rlog_jobs`].
pub struct Job<'a> {
    /// The channel.
    pub id: usize,
    pub pieces: Vec<Piece<'a>>,
}

impl Job<'_> {
    /// How many rows the job has.
    pub fn rows(&self) -> usize {
        self.pieces.iter().map(|p| if let Piece::Run(t, _) = p { t.len() } else { 1 }).sum()
    }
}

/// Rows of a [`Job`]: a run of values of one type with their times, or one value (its time,
/// and the absolute offset of its message, decoded by [`Jobs::decode`]).
#[derive(Clone, Copy)]
pub enum Piece<'a> {
    Run(&'a [i64], Run<'a>),
    One(i64, u64),
}

/// Jobs of distinct channels (each of its own table), and how to decode a [`Piece::One`].
pub struct Jobs<'a> {
    pub jobs: Vec<Job<'a>>,
    pub decode: &'a (dyn Fn(u64) -> Result<ValueRef<'a>, CliError> + Sync),
}

/// The R1 value code of a run's values.
fn run_code(run: &Run<'_>) -> u8 {
    let v = match run {
        Run::Bool(_) => R1ValueRef::Boolean { value: false },
        Run::I64(_) => R1ValueRef::Integer { value: 0 },
        Run::F64(_) => R1ValueRef::Double { value: 0.0 },
    };
    v.tag() as u8
}

/// Hands a run of typed values to the sink at once, or one at a time if it does not take runs.
fn deliver_run(state: &mut State<'_>, id: usize, times: &[i64], run: Run<'_>) -> Result<(), CliError> {
    if state.sink.rlog_run(id, times, run)? {
        state.outcome.samples += times.len() as u64;
        return Ok(());
    }
    for (i, t) in times.iter().enumerate() {
        deliver_plain(state, id, *t as u64, &run.value(i))?;
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

/// Pushes onto a column of B, growing it fourfold when full (as the in-memory tables do).
#[inline(always)]
fn push<T>(v: &mut Vec<T>, x: T) -> bool {
    if v.len() == v.capacity() {
        v.reserve(v.capacity().max(256) * 3);
    }
    v.push(x);
    true
}
