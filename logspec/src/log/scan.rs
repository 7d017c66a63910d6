//! Any supported log as one stream of timestamped samples on named channels (a record type, an
//! RLOG key, ...), for the verbs that treat every format alike: `export`, `convert`, `plot`.

use std::collections::BTreeMap;

use hashbrown::HashMap;
use std::sync::Arc;

use crate::formats::rlog;
use crate::ir::ir::{self, Schema, Ty, TypeDef, TypeId};
use crate::value::Value;

use super::filter::Select;
use super::Error;

/// A named stream of samples of one shape.
#[derive(Clone, Debug)]
pub struct Channel {
    /// The record type name, RLOG key, ...
    pub name: String,
    /// The name of the values' type (`REC_NAV_SOLUTION`, `double[]`).
    pub schema_name: String,
    /// The JSON Schema of the values.
    pub json_schema: JsonSchema,
    /// Units of flattened columns (see [`Value::flatten`]), with array indices removed.
    pub units: BTreeMap<String, String>,
    /// A ROS bag connection's type, for sinks that pass its messages through as they are.
    pub ros1: Option<Ros1Type>,
    /// The IR type of the values, for sinks that write typed columns (`None` when the source
    /// has no description of them).
    pub ty: Option<ValueType>,
    /// Channels that are parts of one table: the packet kind of a CARLA per-actor channel
    /// (`Position` for `Position/231`), whose values carry the actor id themselves.
    pub group: Option<String>,
}

/// The JSON Schema of a channel's values (what `convert` writes into MCAP): text, or the
/// schema of an IR struct, which the JSON Schema back end writes (`logspec::codegen`).
#[derive(Clone, Debug)]
pub enum JsonSchema {
    Text(String),
    /// The schema of the struct `ty`.
    Struct {
        ty: ValueType,
        /// Enums as their names (decoded WPILib structs), not numbers.
        enum_names: bool,
        /// The values are `{"value": [ty, ..]}`, an object titled this.
        list: Option<String>,
    },
}

/// The IR type of a channel's values: a struct of a schema (a record's payload, a CARLA
/// packet's element type, a ROS message), or for RLOG a one-field struct `{ value: T }` made
/// from the key's type name ([`rlog_value_type`](super::rlog_value_type)). A sample's [`Value`] is this struct's
/// visit: padding and union tags are left out, consts are shown, a union is an object whose
/// first field `variant` names the variant.
#[derive(Clone, Debug)]
pub struct ValueType {
    pub schema: Arc<Schema>,
    pub id: TypeId,
}

/// What a ROS bag says about the messages of a connection (or an MCAP file about a channel of
/// ROS 2 messages), for sinks that pass the messages on as recorded.
#[derive(Clone, Debug)]
pub struct Ros1Type {
    /// `pkg/Type` (`pkg/msg/Type` for ROS 2, as the file names it).
    pub ty: String,
    /// genmsg's md5 (ROS1); empty for ROS 2, which has none.
    pub md5sum: String,
    /// The `message_definition` text, as recorded.
    pub definition: String,
    /// How the messages are serialised and the definition written, as MCAP names them:
    /// `ros1` and `ros1msg`, or `cdr` and `ros2msg`.
    pub encoding: &'static str,
    pub schema_encoding: &'static str,
    pub callerid: Option<String>,
    pub latching: Option<String>,
}

impl Channel {
    /// The unit of a flattened column, if the schema gives one.
    pub fn unit(&self, column: &str) -> Option<&str> {
        let mut key = String::with_capacity(column.len());
        let mut depth = 0;
        for c in column.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                c if depth == 0 => key.push(c),
                _ => {}
            }
        }
        self.units.get(&key).map(String::as_str)
    }
}

/// Nanoseconds of a time in seconds (RLOG timestamps, CARLA `elapsed`); negative times are 0.
pub fn seconds_to_ns(t: f64) -> u64 {
    if t > 0.0 {
        round_positive(t * 1e9)
    } else {
        0
    }
}

/// `x.round() as u64` for `x > 0`, without the call to the C library's `round` that
/// `f64::round` is on x86-64's baseline (every RLOG timestamp comes here).
#[inline]
fn round_positive(x: f64) -> u64 {
    // From 2^53 on every `f64` is an integer (and `as` saturates as before).
    if x >= 9_007_199_254_740_992.0 {
        return x as u64;
    }
    // Through `i64`, whose conversions are one instruction each way on x86-64 (those of `u64`
    // are a few, with a branch); the same value, since `x` is below 2^53 here.
    let whole = x as i64;
    // Exact: `whole` converts back exactly below 2^53, and `x - whole` is in [0, 1).
    whole as u64 + u64::from(x - whole as f64 >= 0.5)
}

/// Receives the samples of a log, in file order.
pub trait Samples {
    /// A channel appears for the first time (before its first sample).
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error>;
    /// One sample. Time is in nanoseconds, in the log's own clock: since boot (or the log's
    /// start) for USVLOG, RLOG and CARLA, since the Unix epoch for ROS bags (see
    /// [`Samples::origin`]).
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error>;
    /// One sample handed as a visit of its value (records of framed formats, ROS messages
    /// visited through their decode plans), so that a sink can take the fields without building
    /// a [`Value`] tree. The default builds the tree and
    /// calls [`Samples::sample`].
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        let mut b = crate::value::ValueBuilder::default();
        value.visit_dyn(&mut b);
        self.sample(id, t_ns, &b.finish())
    }
    /// One sample handed as a visit that may stop partway ([`TryVisit`]: a ROS message decoded
    /// by its plan as it is shown, not checked whole first), for a sink that keeps nothing of a
    /// value whose visit stopped. It returns `Ok(true)` when it took the sample so (the value
    /// kept whole, or nothing of it kept when [`TryVisit::try_visit_dyn`] said it stopped), and
    /// `Ok(false)` (the default) without visiting it, to be handed the value checked whole
    /// through [`Samples::visit`] instead. Taken, the message is read once instead of twice.
    fn try_visit(&mut self, _id: usize, _t_ns: u64, _value: &dyn TryVisit) -> Result<bool, Error> {
        Ok(false)
    }
    /// One record of a framed format whose reader has the layout of the channel's IR type
    /// ([`Channel::ty`]): its payload bytes besides its visit, for a sink that takes the fields
    /// of a fixed-size struct straight from the bytes at the offsets the IR gives. The record
    /// decoded (its consts checked). The default hands the visit to [`Samples::visit`].
    fn record(&mut self, id: usize, t_ns: u64, _payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        self.visit(id, t_ns, value)
    }
    /// The log's time origin in the clock of the samples: 0 where the clock starts with the log,
    /// the time of the first message for ROS bags. Called once, before any channel.
    fn origin(&mut self, _origin_ns: u64) {}
    /// A ROS message as recorded, for a sink that passes messages through undecoded: it returns
    /// `true` when it took the bytes, `false` to be handed the decoded value through
    /// [`Samples::sample`] instead (the default).
    fn raw(&mut self, _id: usize, _t_ns: u64, _bytes: &[u8]) -> Result<bool, Error> {
        Ok(false)
    }
    /// An RLOG value of a channel typed by [`rlog_value_type`](super::rlog_value_type), as the reader lends it (the
    /// generated views), for a sink whose columns take it with no [`Value`] in between: it
    /// returns `true` when it took the value, `false` to be handed `{"value": ..}` through
    /// [`Samples::sample`] instead (the default).
    fn rlog(&mut self, _id: usize, _t_ns: u64, _value: &rlog::ValueRef<'_>) -> Result<bool, Error> {
        Ok(false)
    }
}

/// A [`crate::runtime::Visit`] value behind a `dyn` pointer.
pub trait DynVisit {
    fn visit_dyn(&self, v: &mut dyn crate::runtime::Visitor);
}

impl<T: crate::runtime::Visit> DynVisit for T {
    fn visit_dyn(&self, v: &mut dyn crate::runtime::Visitor) {
        self.visit(None, v);
    }
}

/// A value whose visit may stop partway ([`Samples::try_visit`]): a message that did not
/// decode shows what came before its fault, then nothing more.
pub trait TryVisit {
    /// Shows the value to `v`; `false` when the visit stopped partway (the value does not
    /// decode). Called at most once.
    fn try_visit_dyn(&self, v: &mut dyn crate::runtime::Visitor) -> bool;
}

/// What reading found besides the samples.
#[derive(Debug, Default)]
pub struct Outcome {
    pub samples: u64,
    /// Problems that did not stop the reading (a record that did not decode): the first few of
    /// each kind in full, then one line per kind with its count.
    pub warnings: Vec<String>,
    /// The problem that ended the reading early, after every sample before it was delivered.
    pub error: Option<String>,
    /// `error` with its place (file, byte offset, record, field), for the Python package.
    pub fault: Option<super::fault::Fault>,
    /// The time index a whole reading noted on its way, for a format that has one
    /// ([`super::index`]); `None` after a fault that ended the reading early.
    pub index: Option<super::index::Index>,
    /// After a fault that ended the reading early: what the filter found in the part read when
    /// it matched nothing there (also among `warnings`), which a query engine answers with no
    /// rows rather than a warning.
    pub filter: Option<String>,
}

impl Outcome {
    /// Ends the reading with `fault` (its message becomes `error`).
    pub(super) fn fail(&mut self, fault: super::fault::Fault) {
        self.error = Some(fault.message.clone());
        self.fault = Some(fault);
    }
}

pub(super) struct State<'a> {
    pub(super) select: &'a Select,
    pub(super) sink: &'a mut dyn Samples,
    /// Channels by key: not selected, selected but not yet given a sample in the time window,
    /// or announced to the sink with an id.
    pub(super) ids: HashMap<String, Slot>,
    /// Channels found by number instead ([`State::wanted_numbered`]).
    numbered: HashMap<(u8, u64), Slot>,
    /// The settled slots of framed records by record tag (`None`: not settled, or not seen),
    /// so that a record finds its channel without hashing its name ([`State::wanted_tag`]).
    pub(super) by_tag: Vec<Option<Tagged>>,
    /// How many channels were selected so far (the next channel id).
    pub(super) selected: usize,
    /// The time origin the time filters count from (nanoseconds in the samples' clock).
    pub(super) origin_ns: u64,
    pub(super) outcome: Outcome,
    /// The problems that did not stop the scan, counted; the first few of each kind are in
    /// `outcome.warnings`.
    pub(super) faults: super::fault::Faults,
    /// The channels met and samples kept, to tell a filter that matched nothing.
    pub(super) tally: super::filter::Tally,
}

pub(super) enum Slot {
    Skip,
    Pending(Box<Channel>),
    Id(usize),
}

/// A [`Slot`] that no longer changes.
#[derive(Clone, Copy)]
pub(super) enum Tagged {
    Skip,
    Id(usize),
}

/// Record tags below this have their slots kept by tag.
const TAGS: u64 = 4096;

impl<'a> State<'a> {
    pub(super) fn new(select: &'a Select, sink: &'a mut dyn Samples) -> State<'a> {
        State {
            select,
            sink,
            ids: HashMap::new(),
            numbered: HashMap::new(),
            by_tag: Vec::new(),
            selected: 0,
            origin_ns: 0,
            outcome: Outcome::default(),
            faults: super::fault::Faults::default(),
            tally: super::filter::Tally::default(),
        }
    }

    /// The end of a scan: a filter that matched nothing is an error, not an empty output.
    pub(super) fn finish(mut self, path: &str) -> Result<Outcome, Error> {
        match self.tally.check(self.select, path) {
            Ok(()) => {}
            // A reading ended early by a fault saw only part of the log: the fault is the
            // answer (a caller that passes over a log its filter does not match must not lose
            // it), and the filter's finding a warning about the part read.
            Err(m) if self.outcome.fault.is_some() => {
                self.outcome.filter = Some(m.clone());
                self.outcome.warnings.push(m);
            }
            Err(m) => return Err(Error::filter(path, m)),
        }
        self.outcome.warnings.extend(self.faults.more(path));
        Ok(self.outcome)
    }

    /// A problem that does not stop the scan, of `kind` (a [`super::fault`] phrase): the first
    /// few of each kind become warnings, the rest are counted.
    pub(super) fn warn(&mut self, kind: &'static str, message: impl FnOnce() -> String) {
        if let Some(m) = self.faults.note(kind, message) {
            self.outcome.warnings.push(m);
        }
    }

    /// Delivers a sample, announcing its channel first if it is new. `describe` builds the
    /// channel description, only once per channel.
    pub(super) fn deliver(
        &mut self,
        name: &str,
        t_ns: u64,
        value: impl FnOnce() -> Value,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        let id = self.wanted(name, t_ns, describe)?;
        self.take(id, t_ns, value)
    }

    /// As [`State::deliver`], for a record of tag `tag` whose channel is `name` (one tag, one
    /// channel while the tag stands for it: see [`State::forget_tag`]), so that a reader can pass
    /// over the records of a skipped channel before it decodes them ([`State::skips_tag`]).
    pub(super) fn deliver_tagged(
        &mut self,
        tag: u64,
        name: &str,
        t_ns: u64,
        value: impl FnOnce() -> Value,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        let id = self.wanted_tag(tag, name, t_ns, describe)?;
        self.take(id, t_ns, value)
    }

    /// The sample of channel `id` (none when the channel or its time is not wanted), its value
    /// made only then.
    fn take(&mut self, id: Option<usize>, t_ns: u64, value: impl FnOnce() -> Value) -> Result<(), Error> {
        if let Some(id) = id {
            self.sink.sample(id, t_ns, &value())?;
            self.outcome.samples += 1;
        }
        Ok(())
    }

    /// A ROS message (ROS1 or CDR) of channel `id`, decoded by `d` from `bytes`: read once as it
    /// is shown to a sink that takes a visit that may stop ([`Samples::try_visit`]), else
    /// checked whole, then shown. `Ok(Err(fault))` when it does not decode: nothing of it kept,
    /// no sample counted.
    pub(super) fn deliver_message(
        &mut self,
        id: usize,
        t_ns: u64,
        d: &crate::formats::rosbag::MsgDecoder,
        bytes: &[u8],
    ) -> Result<Result<(), crate::dynamic::Fault>, Error> {
        let once = d.unchecked(bytes);
        let shown = if self.sink.try_visit(id, t_ns, &once)? {
            once.fault().map_or(Ok(()), Err)
        } else {
            match d.checked(bytes) {
                Ok(msg) => {
                    self.sink.visit(id, t_ns, &msg)?;
                    Ok(())
                }
                Err(f) => Err(f),
            }
        };
        if shown.is_ok() {
            self.outcome.samples += 1;
        }
        Ok(shown)
    }

    /// As [`State::deliver_record`], for a channel found by number ([`State::wanted_numbered`]):
    /// a value of the channel's IR type decoded from `payload`.
    pub(super) fn deliver_numbered(
        &mut self,
        key: (u8, u64),
        t_ns: u64,
        payload: &[u8],
        value: &dyn DynVisit,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        if let Some(id) = self.wanted_numbered(key, t_ns, describe)? {
            self.sink.record(id, t_ns, payload, value)?;
            self.outcome.samples += 1;
        }
        Ok(())
    }

    /// As [`State::deliver`], for a value handed as a visit ([`Samples::visit`]).
    pub(super) fn deliver_visit(
        &mut self,
        name: &str,
        t_ns: u64,
        value: &dyn DynVisit,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        if let Some(id) = self.wanted(name, t_ns, describe)? {
            self.sink.visit(id, t_ns, value)?;
            self.outcome.samples += 1;
        }
        Ok(())
    }

    /// As [`State::deliver_visit`], for a framed record of tag `tag` whose channel is `name`,
    /// with the record's payload ([`Samples::record`]).
    pub(super) fn deliver_record(
        &mut self,
        tag: u64,
        name: &str,
        t_ns: u64,
        payload: &[u8],
        value: &dyn DynVisit,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        if let Some(id) = self.wanted_tag(tag, name, t_ns, describe)? {
            self.sink.record(id, t_ns, payload, value)?;
            self.outcome.samples += 1;
        }
        Ok(())
    }

    /// As [`State::wanted`], for a framed record of tag `tag` (one tag, one channel `key`): once
    /// the channel is announced or skipped, its slot is found by the tag.
    pub(super) fn wanted_tag(
        &mut self,
        tag: u64,
        key: &str,
        t_ns: u64,
        describe: impl FnOnce() -> Channel,
    ) -> Result<Option<usize>, Error> {
        let i = tag as usize;
        match self.settled_tag(tag, t_ns) {
            Some(id) => Ok(id),
            None => {
                let id = self.wanted(key, t_ns, describe)?;
                if tag < TAGS {
                    let settled = match self.ids.get(key) {
                        Some(Slot::Skip) => Some(Tagged::Skip),
                        Some(Slot::Id(id)) => Some(Tagged::Id(*id)),
                        _ => None,
                    };
                    if settled.is_some() {
                        if self.by_tag.len() <= i {
                            self.by_tag.resize(i + 1, None);
                        }
                        self.by_tag[i] = settled;
                    }
                }
                Ok(id)
            }
        }
    }

    /// [`State::wanted_tag`] for a tag whose channel is settled (announced or skipped), with
    /// no key: `None` when it is not, and the reader then names the channel for
    /// [`State::wanted_tag`] (a name made only for a channel's first samples).
    #[inline]
    pub(super) fn settled_tag(&mut self, tag: u64, t_ns: u64) -> Option<Option<usize>> {
        match self.by_tag.get(tag as usize).copied().flatten()? {
            Tagged::Skip => Some(None),
            Tagged::Id(id) => {
                let t = t_ns.saturating_sub(self.origin_ns);
                let kept = self.select.wants_time(t);
                self.tally.sample(Some(t), kept);
                Some(kept.then_some(id))
            }
        }
    }

    /// Whether records of tag `tag` are known to be skipped ([`State::wanted_tag`] settled them
    /// so): a reader passes over them without naming them.
    #[inline(always)]
    pub(super) fn skips_tag(&self, tag: u64) -> bool {
        matches!(self.by_tag.get(tag as usize), Some(Some(Tagged::Skip)))
    }

    /// Forgets what the record tag `tag` settled to ([`State::wanted_tag`]): the tag now
    /// stands for another channel (an MCAP channel id defined anew).
    pub(super) fn forget_tag(&mut self, tag: u64) {
        if let Some(slot) = self.by_tag.get_mut(tag as usize) {
            *slot = None;
        }
    }

    /// As [`State::wanted`], for a sample of a channel already announced: whether the time
    /// window keeps it (noted in the tally).
    #[inline]
    pub(super) fn wanted_settled(&mut self, t_ns: u64) -> bool {
        let t = t_ns.saturating_sub(self.origin_ns);
        let kept = (self.select.since.is_none() && self.select.until.is_none()) || self.select.wants_time(t);
        self.tally.sample(Some(t), kept);
        kept
    }

    /// The channel id of a sample that passes the filters, announcing the channel first if it
    /// is new; `None` for a sample that is not wanted.
    /// `key` tells channels apart (the channel name, except for ROS connections that share a
    /// topic); the channel filter applies to the described channel's name.
    /// A channel is announced to the sink with its first sample in the time window.
    pub(super) fn wanted(
        &mut self,
        key: &str,
        t_ns: u64,
        describe: impl FnOnce() -> Channel,
    ) -> Result<Option<usize>, Error> {
        // One lookup for a channel met before (every sample but its first).
        if let Some(slot) = self.ids.get_mut(key) {
            return settle(
                slot,
                t_ns,
                self.origin_ns,
                self.select,
                &mut self.tally,
                &mut *self.sink,
                &mut self.selected,
            );
        }
        let slot = new_slot(self.select, &mut self.tally, describe());
        let slot = self.ids.entry(key.to_string()).or_insert(slot);
        settle(slot, t_ns, self.origin_ns, self.select, &mut self.tally, &mut *self.sink, &mut self.selected)
    }

    /// As [`State::wanted`], for the channels of a log that numbers them (a CARLA packet kind
    /// and an actor id): found by number, with no name formatted or kept, so that a recording
    /// of a million actors costs a few words per actor.
    pub(super) fn wanted_numbered(
        &mut self,
        key: (u8, u64),
        t_ns: u64,
        describe: impl FnOnce() -> Channel,
    ) -> Result<Option<usize>, Error> {
        let slot = match self.numbered.entry(key) {
            hashbrown::hash_map::Entry::Occupied(o) => o.into_mut(),
            hashbrown::hash_map::Entry::Vacant(v) => v.insert(new_slot(self.select, &mut self.tally, describe())),
        };
        settle(slot, t_ns, self.origin_ns, self.select, &mut self.tally, &mut *self.sink, &mut self.selected)
    }
}

/// The slot of a channel met for the first time: pending (selected, not yet announced) or
/// skipped.
fn new_slot(select: &Select, tally: &mut super::filter::Tally, channel: Channel) -> Slot {
    // The channels' names are kept only to tell a channel filter that matched none of them (a
    // recording of a million actors has a million channels).
    if !select.channels.is_empty() {
        tally.channel(&channel.name);
        if let Some(group) = channel.group.as_deref().filter(|_| select.tables) {
            // A table's name is one a filter of tables matches.
            tally.channel(group);
        }
    }
    if select.wants(&channel.name, channel.group.as_deref()) {
        Slot::Pending(Box::new(channel))
    } else {
        Slot::Skip
    }
}

/// A sample on a channel's slot at `t_ns`: its id when the time window keeps it, the channel
/// announced to the sink with its first such sample.
fn settle(
    slot: &mut Slot,
    t_ns: u64,
    origin_ns: u64,
    select: &Select,
    tally: &mut super::filter::Tally,
    sink: &mut dyn Samples,
    selected: &mut usize,
) -> Result<Option<usize>, Error> {
    if matches!(slot, Slot::Skip) {
        return Ok(None);
    }
    let t = t_ns.saturating_sub(origin_ns);
    let kept = select.wants_time(t);
    tally.sample(Some(t), kept);
    if !kept {
        return Ok(None);
    }
    if let Slot::Pending(channel) = slot {
        let id = *selected;
        sink.channel(id, channel)?;
        *selected += 1;
        *slot = Slot::Id(id);
    }
    Ok(match slot {
        Slot::Id(id) => Some(*id),
        _ => None,
    })
}

/// The warning about a record whose type the schema does not know (skipped by its length).
pub fn unknown_record(path: &str, offset: u64, tag: u64) -> String {
    format!("{path}: offset {offset}: record type {tag} is not in the schema; skipped")
}

/// The channel of a record type: its JSON Schema and the units of its columns, from the IR.
pub fn record_channel(schema: &Arc<Schema>, name: &str) -> Channel {
    let record = schema.records.iter().find(|r| r.name == name);
    let (json_schema, units) = match record {
        Some(r) => {
            let mut units = BTreeMap::new();
            units_of(schema, &schema.strukt(r.body).fields, "", &mut units);
            let ty = ValueType { schema: schema.clone(), id: r.body };
            (JsonSchema::Struct { ty, enum_names: false, list: None }, units)
        }
        // A record of an older schema id that the current schema no longer has.
        None => (JsonSchema::Text("{\"type\":\"object\"}".to_string()), BTreeMap::new()),
    };
    let ty = record.map(|r| ValueType { schema: schema.clone(), id: r.body });
    Channel { name: name.to_string(), schema_name: name.to_string(), json_schema, units, ros1: None, ty, group: None }
}

/// Units of the leaf columns of a field list; a struct-typed field's unit (a `Vec3` in `cm`)
/// applies to its fields that have none of their own.
pub(super) fn units_of(schema: &Schema, fields: &[ir::Field], prefix: &str, out: &mut BTreeMap<String, String>) {
    units_inherited(schema, fields, prefix, None, out);
}

fn units_inherited(
    schema: &Schema,
    fields: &[ir::Field],
    prefix: &str,
    inherited: Option<&str>,
    out: &mut BTreeMap<String, String>,
) {
    for f in fields.iter().filter(|f| !f.is_padding()) {
        let path = if prefix.is_empty() { f.name.clone() } else { format!("{prefix}.{}", f.name) };
        let unit = f.unit.as_deref().or(inherited);
        let mut t = &f.ty;
        while let Ty::Array { elem, .. } = t {
            t = elem;
        }
        if let Ty::Named(id) = t {
            if let TypeDef::Struct(s) = schema.ty(*id) {
                units_inherited(schema, &s.fields, &path, unit, out);
                continue;
            }
        }
        if let Some(u) = unit {
            out.insert(path, u.to_string());
        }
    }
}

#[cfg(test)]
mod seconds_tests {
    use super::*;

    /// Rounding without `f64::round` gives what it gives, at halves, near them and at the ends.
    #[test]
    fn seconds_round_as_f64_round() {
        let mut xs =
            vec![0.5, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5, 4503599627370496.5, 9007199254740991.0];
        xs.extend([9007199254740992.0, 1.8446744073709552e19, 1e300, f64::INFINITY, f64::MIN_POSITIVE, 1e-300]);
        let mut seed = 0x9e3779b97f4a7c15u64;
        for _ in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let x = f64::from_bits(seed >> 2); // positive, any exponent up to about 2^512
            xs.push(x);
            xs.push((seed % 10_000_000) as f64 / 8.0);
            xs.push(x.fract() + (seed % 1000) as f64);
        }
        for x in xs.into_iter().filter(|x| *x > 0.0) {
            assert_eq!(round_positive(x), x.round() as u64, "{x:e}");
        }
        assert_eq!(seconds_to_ns(1.0000000005), 1_000_000_001);
        assert_eq!(seconds_to_ns(-1.0), 0);
        assert_eq!(seconds_to_ns(f64::NAN), 0);
    }
}
