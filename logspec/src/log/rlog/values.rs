//! RLOG in the sample source: one channel per key, typed by its declared (R2) or first value's
//! (R1) type, read through the reader's lending loop (`rlog::Reader::try_for_each_event_ref`). A value of
//! a plain type (numbers, booleans, strings, arrays of them, bytes) reaches the sink as the view
//! ([`super::Samples::rlog`]), so that a sink with typed columns appends it with no [`Value`] in between;
//! `struct:` and `proto:` values are decoded through the log's schemas and handed over as values.
//!
//! Which channel a value goes to depends only on its key (name, declared type) and, in R1, on its
//! value code, so once a channel is announced or skipped the answer is kept per key id and value
//! code ([`Routes`]) and the key's name is not hashed again for every value. A key id and code
//! whose channel is not selected is handed to the reader (`rlog::Reader::skip_values`), which
//! from then on passes over those values itself by a table by key id: no event, no key looked
//! up, no route, no cycle time converted (R2: the value not decoded by its type).

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use crate::formats::rlog::{self, EventRef, ValueRef};
use crate::formats::wpistruct::TypeRegistry;
use crate::runtime::Input;
use crate::value::Value;

use super::rlog_channel;
use crate::log::fault::{kind, Fault};
use crate::log::index::{self, Cycles, Index, Range, SchemaAt};
use crate::log::scan::{seconds_to_ns, Slot, State};
use crate::log::structs::struct_channel;
use crate::log::Error;

/// Key ids below this have their routes kept (as record tags below `TAGS` are, for framed
/// formats), so the cache is bounded whatever ids a file uses.
pub(super) const KEYS: usize = 4096;
/// Routes kept per key id: one per R1 value code (an R2 key has one type: route 0).
const CODES: usize = 11;

/// Where the values of a key id and value code go, once that no longer changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// Not settled yet: resolved by the key's name (the channel is new or pending).
    Unknown,
    /// The channel is not selected.
    Skip,
    /// The channel's id: a plain value, handed to the sink as its view.
    Plain(usize),
}

/// The settled routes, by key id and value code.
#[derive(Default)]
pub(super) struct Routes {
    by_key: Vec<[Route; CODES]>,
}

impl Routes {
    /// The route slot of a value (`None`: not cached, resolve every time).
    #[inline]
    pub(super) fn slot(key_id: i16, value: &ValueRef<'_>) -> Option<(usize, usize)> {
        let key = usize::from(key_id as u16);
        let code = match value {
            ValueRef::R1(v) => usize::try_from(v.tag()).ok().filter(|c| *c < CODES)?,
            ValueRef::R2(_) => 0,
        };
        (key < KEYS).then_some((key, code))
    }

    #[inline]
    pub(super) fn get(&self, slot: Option<(usize, usize)>) -> Route {
        match slot {
            Some((k, c)) => self.by_key.get(k).map_or(Route::Unknown, |r| r[c]),
            None => Route::Unknown,
        }
    }

    fn set(&mut self, slot: Option<(usize, usize)>, route: Route) {
        if let Some((k, c)) = slot {
            if self.by_key.len() <= k {
                self.by_key.resize(k + 1, [Route::Unknown; CODES]);
            }
            self.by_key[k][c] = route;
        }
    }

    /// A key id was (re)defined: its name or type may have changed.
    pub(super) fn forget(&mut self, key_id: i16) {
        if let Some(r) = self.by_key.get_mut(usize::from(key_id as u16)) {
            *r = [Route::Unknown; CODES];
        }
    }
}

/// The bytes of an R2 value that carries bytes (raw, struct, proto, any other declared type), as
/// `structs::rlog_bytes` for the owned value.
pub(crate) fn value_bytes<'a>(v: &ValueRef<'a>) -> Option<&'a [u8]> {
    use rlog::R2ValueRef as V;
    match v {
        ValueRef::R2(V::Raw { value } | V::Struct { value } | V::Proto { value } | V::Other { value }) => Some(value),
        _ => None,
    }
}

/// The value as the one-column object of its channel, `{"value": ..}` (what [`super::Samples::sample`]
/// gets when the sink does not take the view).
fn object(v: &ValueRef<'_>) -> Value {
    Value::Object(vec![("value".to_string(), rlog::to_value(&v.to_value()))])
}

/// RLOG: one channel per key. An R1 key whose values change type (other than to `null`, a
/// removed key) gets one more channel of the same name for each other type, so that no sink has
/// to drop the values that do not fit; `struct:` and `proto:` values are decoded through the
/// log's schemas (a value that does not decode stays hex, on a channel of its own).
///
/// The reader's lending loop (`for_each_event_ref`) hands each event to a closure that settles
/// the common case (a value whose route is known) inline; a value of a key not yet routed, or
/// one that may carry a schema, goes to [`Keys::value`], out of line.
pub(super) struct ReadRlog<'a, 's> {
    pub(super) path: &'a str,
    pub(super) schemas: TypeRegistry,
    pub(super) state: &'a mut State<'s>,
    /// With a range (chunks of the time index): only the messages that start in it, after the
    /// state messages before it (`Index::states_before`); without, every message, and the
    /// chunks and state messages of the time index are noted ([`crate::log::Outcome::index`]).
    pub(super) range: Option<(Range, Vec<u64>)>,
}

impl super::WithRlog for ReadRlog<'_, '_> {
    type Output = Result<(), Error>;
    fn call<R, I: Input>(self, mut r: rlog::Reader<R, I>) -> Self::Output {
        let ReadRlog { path, schemas, state, range } = self;
        let mut keys = Keys {
            path,
            schemas,
            first_type: HashMap::new(),
            undecoded: HashSet::new(),
            routes: Routes::default(),
            states: None,
            schema_notes: None,
        };
        let Some((range, states)) = range else {
            keys.states = Some(Vec::new());
            keys.schema_notes = Some(SchemaNotes::default());
            let mut cycles = Cycles::new(r.position());
            let whole = read_loop(&mut r, &mut keys, state, Some(&mut cycles))?;
            if whole {
                let chunks = cycles.finish(r.position());
                if !chunks.is_empty() {
                    let states = keys.states.take().unwrap_or_default();
                    let schemas = keys.schema_notes.take().map(|n| n.at).unwrap_or_default();
                    state.outcome.index = Some(Index { origin_ns: 0, chunks, states, schemas });
                }
            }
            return Ok(());
        };
        // Nothing read yet: the wrong index is the scan's error (a fault, as a log that does
        // not open).
        keys.start_at(&mut r, range, &states).map_err(Error::at)?;
        r.stop_at(Some(range.end));
        if read_loop(&mut r, &mut keys, state, None)? && r.position() != range.end {
            state.outcome.fail(crate::log::index::ended_elsewhere(path, r.position(), range.end));
        }
        Ok(())
    }
}

/// Why [`read_loop`] leaves the reader's loop before the end.
enum Stop {
    /// The values of this key id and value code go to no channel: the reader is told to pass
    /// over them ([`rlog::Reader::skip_values`]), and the loop goes on.
    Skip(i16, u8),
    Error(Error),
}

/// The one-thread read: every message through the reader's lending loop (up to the reader's
/// stop offset); `Ok(true)` when no fault ended it early. With `cycles`, the chunks of the
/// time index are noted at the cycles it passes.
fn read_loop<R, I: Input>(
    r: &mut rlog::Reader<R, I>,
    keys: &mut Keys<'_>,
    state: &mut State<'_>,
    mut cycles: Option<&mut Cycles>,
) -> Result<bool, Error> {
    let path = keys.path;
    // The cycle's time in nanoseconds, converted once per cycle, and only for a value that is
    // not skipped.
    let (mut cycle, mut t_ns) = (0.0f64, 0u64);
    loop {
        let read = r.try_for_each_event_at(
            #[inline(always)]
            |at, ev| {
                let (timestamp, key_id, key, value) = match ev {
                    EventRef::Value { timestamp, key_id, key, value } => (timestamp, key_id, key, value),
                    EventRef::KeyDef { key_id, .. } => {
                        keys.routes.forget(key_id);
                        if let Some(s) = keys.states.as_mut() {
                            s.push(at);
                        }
                        if let Some(n) = keys.schema_notes.as_mut() {
                            n.definitions.insert(key_id, at);
                        }
                        return ControlFlow::Continue(());
                    }
                    EventRef::Timestamp(t) => {
                        if let Some(c) = cycles.as_deref_mut() {
                            c.cycle(at, t);
                        }
                        return ControlFlow::Continue(());
                    }
                };
                let slot = Routes::slot(key_id, &value);
                let route = keys.routes.get(slot);
                // A value that may be a schema is offered to the registry every time, so it never
                // takes the short way; every other value of a skipped channel stops here.
                let bytes = value_bytes(&value).is_some();
                if route == Route::Skip && !bytes {
                    // From now on the reader passes over this key's values of this code itself
                    // (by its dense table), once the loop has been left to tell it.
                    return match slot {
                        Some((_, code)) => ControlFlow::Break(Stop::Skip(key_id, code as u8)),
                        None => ControlFlow::Continue(()),
                    };
                }
                if timestamp.to_bits() != cycle.to_bits() {
                    (cycle, t_ns) = (timestamp, seconds_to_ns(timestamp));
                }
                let done = match route {
                    Route::Plain(id) if !bytes => {
                        if state.wanted_settled(t_ns) {
                            deliver_plain(state, id, t_ns, &value)
                        } else {
                            Ok(())
                        }
                    }
                    _ => keys.value(state, slot, at, t_ns, key_id, key, &value),
                };
                match done {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => ControlFlow::Break(Stop::Error(e)),
                }
            },
        );
        match read {
            Ok(ControlFlow::Continue(())) => break,
            Ok(ControlFlow::Break(Stop::Skip(key_id, code))) => r.skip_values(key_id, code),
            Ok(ControlFlow::Break(Stop::Error(e))) => return Err(e),
            // The reader goes on after the message at the next call.
            Err(e) if e.is_recoverable() => state.warn(kind::UNDECODABLE_VALUE, || format!("{path}: {e}")),
            Err(e) => {
                state.outcome.fail(Fault::read(path, &e));
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// What the reading keeps about keys besides the settled routes.
pub(super) struct Keys<'p> {
    pub(super) path: &'p str,
    schemas: TypeRegistry,
    /// The type of each key's first value (its channel's type; R1 keys may change type).
    first_type: HashMap<String, String>,
    /// Keys whose struct or proto values did not decode (warned about once).
    undecoded: HashSet<String>,
    pub(super) routes: Routes,
    /// While a whole log is read: the offsets of the messages that set the reader's state (key
    /// definitions, and the first value of each key name, which fixes its channel's type), for
    /// the time index.
    states: Option<Vec<u64>>,
    /// While a whole log is read: its schema messages, for the time index.
    schema_notes: Option<SchemaNotes>,
}

/// The schema messages a whole read notes for the time index ([`Index::schemas`]).
#[derive(Default)]
struct SchemaNotes {
    /// The offset of the definition of each key id.
    definitions: HashMap<i16, u64>,
    /// The first value of each schema key name, with its key's definition.
    at: Vec<SchemaAt>,
    names: HashSet<String>,
}

impl Keys<'_> {
    /// Moves `r` to `range`'s start with the state a reader from the log's start has there
    /// ([`index::start_at`]): the state messages before it (`states`, from the time index: key
    /// definitions, and the first value of each key name) read first. A state message that is
    /// not one, or a start that is not a cycle's timestamp, is a wrong index: a fault.
    fn start_at<R, I: Input>(&mut self, r: &mut rlog::Reader<R, I>, range: Range, states: &[u64]) -> Result<(), Fault> {
        let path = self.path;
        let what = "not a key definition or a value";
        if !index::start_at(&mut Restarting { reader: r, keys: self, seeks: false }, range, states, path, what)? {
            return Ok(());
        }
        // The chunk starts with its first cycle's timestamp.
        match r.next_event_ref() {
            Some(Ok(EventRef::Timestamp(_))) => Ok(()),
            _ => Err(index::wrong(path, range.start, "not a cycle's timestamp")),
        }
    }

    /// A state message's value: the type of its key name's channel, if it has none yet.
    fn first_type(&mut self, key: Option<&rlog::Key>, value: &ValueRef<'_>) {
        let name = key.map_or("?", |k| k.name.as_str());
        let type_name = value.type_name(key.and_then(|k| k.declared_type.as_deref()));
        if !self.first_type.contains_key(name) {
            self.first_type.insert(name.to_string(), type_name.to_string());
        }
    }

    /// A value whose route is not settled, or that carries bytes: offered to the schema registry,
    /// decoded through it (`struct:`, `proto:`), or delivered to its key's channel, announcing
    /// the channel first; the route is settled where it no longer changes.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        state: &mut State<'_>,
        slot: Option<(usize, usize)>,
        at: u64,
        t_ns: u64,
        key_id: i16,
        key: Option<&rlog::Key>,
        value: &ValueRef<'_>,
    ) -> Result<(), Error> {
        let path = self.path;
        let bytes = value_bytes(value);
        let name = key.map_or("?", |k| k.name.as_str());
        let type_name = value.type_name(key.and_then(|k| k.declared_type.as_deref()));
        // A value that may be a schema is offered to the registry, every time, as before any
        // route: the registry keeps what it needs.
        if let Some(b) = bytes {
            let schema = self.schemas.offer(name, type_name, b);
            if let (true, Some(n)) = (schema, self.schema_notes.as_mut()) {
                if let Some(&definition) = n.definitions.get(&key_id) {
                    if n.names.insert(name.to_string()) {
                        n.at.push(SchemaAt { offset: at, definition });
                    }
                }
            }
            for w in self.schemas.take_warnings() {
                state.outcome.warnings.push(format!("{path}: {w}"));
            }
        }
        match self.routes.get(slot) {
            Route::Skip => return Ok(()),
            Route::Plain(id) => {
                if state.wanted_settled(t_ns) {
                    deliver_plain(state, id, t_ns, value)?;
                }
                return Ok(());
            }
            Route::Unknown => {}
        }
        if let (Some(b), true) = (bytes, TypeRegistry::decodes(type_name)) {
            match self.schemas.decode(type_name, b) {
                // A struct's members are the channel's columns (`translation.x`); anything else
                // is the one column `value` (`value[0].x` for arrays of structs).
                Ok(v) => {
                    let v = match v {
                        Value::Object(_) => v,
                        other => Value::Object(vec![("value".to_string(), other)]),
                    };
                    let schemas = &self.schemas;
                    state.deliver(name, t_ns, || v, || struct_channel(schemas, name, type_name))?;
                }
                // A struct or proto value that does not decode stays hex, on a channel of its
                // own so that it never shares columns with the decoded values.
                Err(e) => {
                    if self.undecoded.insert(name.to_string()) {
                        state.outcome.warnings.push(format!("{path}: `{name}`: {e}; its values are kept as hex"));
                    }
                    let channel_key = format!("{name}\0{type_name}\0hex");
                    state.deliver(&channel_key, t_ns, || object(value), || rlog_channel(name, type_name))?;
                }
            }
            return Ok(());
        }
        if let Some(id) = self.channel(state, slot, at, t_ns, name, type_name)? {
            deliver_plain(state, id, t_ns, value)?;
        }
        Ok(())
    }

    /// The channel of a plain value of key `name` and type `type_name` at `t_ns`, when it is
    /// wanted: the key's channel, or one more channel per other type (R1); the channel is
    /// announced if new, and the value's route (`slot`) settled where it no longer changes.
    pub(super) fn channel(
        &mut self,
        state: &mut State<'_>,
        slot: Option<(usize, usize)>,
        at: u64,
        t_ns: u64,
        name: &str,
        type_name: &str,
    ) -> Result<Option<usize>, Error> {
        let first = match self.first_type.entry(name.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                // The key name's first value: a state message of the time index.
                if let Some(s) = self.states.as_mut() {
                    s.push(at);
                }
                e.insert(type_name.to_string())
            }
        };
        let (channel_key, channel_type, other) = if first == type_name || type_name == "null" {
            (name.to_string(), first.as_str(), false)
        } else {
            (format!("{name}\0{type_name}"), type_name, true)
        };
        // A channel of another type than the key's first is the table `<name>#<type>` (as
        // `logspec_engine::tables::table_name` names a second channel of one name), said here so
        // that a read that starts mid-log (a partition) names it so though it meets it first.
        let describe = || {
            let mut c = rlog_channel(name, channel_type);
            c.group = other.then(|| format!("{name}#{channel_type}"));
            c
        };
        let id = state.wanted(&channel_key, t_ns, describe)?;
        match state.ids.get(&channel_key) {
            Some(Slot::Skip) => self.routes.set(slot, Route::Skip),
            Some(Slot::Id(id)) => self.routes.set(slot, Route::Plain(*id)),
            _ => {}
        }
        Ok(id)
    }
}

/// An RLOG reader with the keys whose channels' types its state messages set, for
/// [`index::start_at`].
struct Restarting<'r, 'k, 'p, R, I> {
    reader: &'r mut rlog::Reader<R, I>,
    keys: &'k mut Keys<'p>,
    /// Whether the reader seeks (a mapped file): then every state message is where the time
    /// index says, and one that does not read is a wrong index, not the reader's fault.
    seeks: bool,
}

impl<R, I: Input> index::Restart for Restarting<'_, '_, '_, R, I> {
    fn seek(&mut self, offset: u64, _: u64) -> bool {
        self.seeks = self.reader.seek(offset);
        self.seeks
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    fn next_taking(&mut self, state: Option<u64>, path: &str) -> Option<Result<(u64, bool), Fault>> {
        let at = self.reader.position();
        let taken = state == Some(at);
        Some(match self.reader.next_event_ref()? {
            Ok(EventRef::KeyDef { .. }) => Ok((at, taken)),
            Ok(EventRef::Value { key, value, .. }) => {
                if taken {
                    self.keys.first_type(key, &value);
                }
                Ok((at, taken))
            }
            Ok(EventRef::Timestamp(_)) => Ok((at, false)),
            // Over a map, not a state message (`seeks`); a stream goes on after a value that does
            // not decode, as the scan does.
            Err(e) if self.seeks || e.is_recoverable() => Ok((e.offset, false)),
            Err(e) => Err(Fault::read(path, &e)),
        })
    }
}

/// Hands a plain value to the sink as its view, or as a [`Value`] when the sink does not take
/// views.
#[inline]
pub(super) fn deliver_plain(state: &mut State<'_>, id: usize, t_ns: u64, value: &ValueRef<'_>) -> Result<(), Error> {
    if !state.sink.rlog(id, t_ns, value)? {
        state.sink.sample(id, t_ns, &object(value))?;
    }
    state.outcome.samples += 1;
    Ok(())
}
