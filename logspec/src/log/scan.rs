//! Any supported log as one stream of timestamped samples on named channels (a record type, an
//! RLOG key, ...), for the verbs that treat every format alike: `export`, `convert`, `plot`.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::formats::rlog;
use crate::formats::wpistruct::TypeRegistry;
use crate::ir::ir::{self, Schema, Ty, TypeDef, TypeId};
use crate::runtime::{with_file_format, Event, FramedFormat, Reader, WithFormat};
use crate::value::Value;

use super::{Error, Log, Format};

mod rlog_values;
pub(super) use rlog_values::value_bytes as rlog_value_bytes;

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
/// from the key's type name ([`rlog_value_type`]). A sample's [`Value`] is this struct's
/// visit: padding and union tags are left out, consts are shown, a union is an object whose
/// first field `variant` names the variant.
#[derive(Clone, Debug)]
pub struct ValueType {
    pub schema: Arc<Schema>,
    pub id: TypeId,
}

/// What a ROS bag says about the messages of a connection.
#[derive(Clone, Debug)]
pub struct Ros1Type {
    /// `pkg/Type`.
    pub ty: String,
    pub md5sum: String,
    /// The `message_definition` text, as recorded.
    pub definition: String,
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
    let whole = x as u64;
    // Exact: `whole` converts back exactly below 2^53, and `x - whole` is in [0, 1).
    whole + u64::from(x - whole as f64 >= 0.5)
}

/// Receives the samples of a log, in file order.
pub trait Sink {
    /// A channel appears for the first time (before its first sample).
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error>;
    /// One sample. Time is in nanoseconds, in the log's own clock: since boot (or the log's
    /// start) for USVLOG, RLOG and CARLA, since the Unix epoch for ROS bags (see
    /// [`Sink::origin`]).
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error>;
    /// One sample handed as a visit of its value (records of framed formats), so that a sink
    /// can take the fields without building a [`Value`] tree. The default builds the tree and
    /// calls [`Sink::sample`].
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        let mut b = crate::value::ValueBuilder::default();
        value.visit_dyn(&mut b);
        self.sample(id, t_ns, &b.finish())
    }
    /// One record of a framed format whose reader has the layout of the channel's IR type
    /// ([`Channel::ty`]): its payload bytes besides its visit, for a sink that takes the fields
    /// of a fixed-size struct straight from the bytes at the offsets the IR gives. The record
    /// decoded (its consts checked). The default hands the visit to [`Sink::visit`].
    fn record(&mut self, id: usize, t_ns: u64, _payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        self.visit(id, t_ns, value)
    }
    /// The log's time origin in the clock of the samples: 0 where the clock starts with the log,
    /// the time of the first message for ROS bags. Called once, before any channel.
    fn origin(&mut self, _origin_ns: u64) {}
    /// A ROS message as recorded, for a sink that passes messages through undecoded: it returns
    /// `true` when it took the bytes, `false` to be handed the decoded value through
    /// [`Sink::sample`] instead (the default).
    fn raw(&mut self, _id: usize, _t_ns: u64, _bytes: &[u8]) -> Result<bool, Error> {
        Ok(false)
    }
    /// An RLOG value of a channel typed by [`rlog_value_type`], as the reader lends it (the
    /// generated views), for a sink whose columns take it with no [`Value`] in between: it
    /// returns `true` when it took the value, `false` to be handed `{"value": ..}` through
    /// [`Sink::sample`] instead (the default).
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

/// Which samples to pass on.
#[derive(Clone, Debug, Default)]
pub struct Select {
    /// Channel names to keep (exact, or a prefix ending in `*`); empty keeps all.
    pub channels: Vec<String>,
    /// Whether `channels` also name tables (`logspec_engine::tables::table_name`), as the Python
    /// package's `table(name)` takes every name of `tables()`: a name keeps a channel whose group
    /// it matches (`Position` keeps the CARLA channels `Position/<id>`), and `<name>#<type>`
    /// keeps the channels of `<name>` (the table of those whose type changed is among them).
    pub tables: bool,
    /// Keep samples at or after this time (seconds since the log's time origin).
    pub since: Option<f64>,
    /// Keep samples at or before this time (seconds since the log's time origin).
    pub until: Option<f64>,
}

impl Select {
    /// Whether a channel named `name` (of no group) is kept.
    pub fn wants_channel(&self, name: &str) -> bool {
        self.wants(name, None)
    }

    /// Whether a channel named `name`, of the group `group` (the table it is part of, if any), is
    /// kept: a name matches it, or, with [`Select::tables`], its group or its table of another
    /// type (`<name>#<type>`, `<group>#<type>`).
    pub fn wants(&self, name: &str, group: Option<&str>) -> bool {
        let matches = |pattern: &str, name: &str| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pattern == name,
        };
        let table = |pattern: &str, base: &str| {
            matches(pattern, base) || pattern.strip_prefix(base).is_some_and(|rest| rest.starts_with('#'))
        };
        self.channels.is_empty()
            || self
                .channels
                .iter()
                .any(|c| matches(c, name) || (self.tables && (table(c, name) || group.is_some_and(|g| table(c, g)))))
    }

    /// Whether a sample at `t_ns` nanoseconds after the log's time origin is wanted.
    pub fn wants_time(&self, t_ns: u64) -> bool {
        let t = t_ns as f64 / 1e9;
        self.since.map_or(true, |s| t >= s) && self.until.map_or(true, |u| t <= u)
    }
}

/// What reading found besides the samples.
#[derive(Debug, Default)]
pub struct Outcome {
    pub samples: u64,
    /// Problems that did not stop the reading (a record that did not decode).
    pub warnings: Vec<String>,
    /// The problem that ended the reading early, after every sample before it was delivered.
    pub error: Option<String>,
    /// `error` with its place (file, byte offset, record, field), for the Python package.
    pub fault: Option<super::fault::Fault>,
}

impl Outcome {
    /// Ends the reading with `fault` (its message becomes `error`).
    fn fail(&mut self, fault: super::fault::Fault) {
        self.error = Some(fault.message.clone());
        self.fault = Some(fault);
    }
}

impl Log {
/// Reads the samples of the channels and time window `select` keeps into `sink`, in file order
/// (ROS bags: in time order): each channel announced ([`Sink::channel`]) before its first
/// sample. Problems that do not stop the reading are [`Outcome::warnings`]; the one that ends
/// it early is [`Outcome::fault`], after every sample before it.
pub fn scan(self, select: &Select, sink: &mut dyn Sink) -> Result<Outcome, Error> {
    let d = self;
    let file = &d.file.clone();
    let path = &d.shown();
    let assume_r1 = d.assume_r1;
    let mut state = State {
        select,
        sink,
        ids: HashMap::new(),
        by_tag: Vec::new(),
        selected: 0,
        origin_ns: 0,
        outcome: Outcome::default(),
        tally: super::filter::Tally::default(),
    };
    match d.format {
        Format::Usvlog => {
            type F = crate::formats::usvlog::Usvlog;
            let schema = Arc::clone(crate::formats::schemas::usvlog());
            let job = Framed { input: d.input, path, schema: &schema, state: &mut state };
            with_file_format::<F, _>(&d.head, job).map_err(|e| Error::Input(format!("{path}: {e}")))??;
        }
        Format::Rosbag => {
            drop(d.input);
            read_rosbag(file, path, &mut state)?;
        }
        Format::Carla => {
            let schema = Arc::clone(crate::formats::schemas::carla());
            let r = super::carla::reader(d.input, path).map_err(Error::Input)?;
            read_carla(r, path, &schema, &mut state)?;
        }
        Format::Rlog | Format::RlogStream => {
            let stream = d.format == Format::RlogStream;
            let schemas = super::structs::rlog_schemas(file, stream, assume_r1, path);
            let r = super::rlog::reader(d.input, stream, assume_r1, path).map_err(Error::Input)?;
            rlog_values::read_rlog(r, path, schemas, &mut state)?;
        }
        Format::Wpilog => {
            let schemas = super::structs::wpilog_schemas(file, path);
            let r = super::wpilog::reader(d.input, path).map_err(Error::Input)?;
            super::wpilog::read_samples(r, path, schemas, &mut state)?;
        }
        Format::Schema => {
            let format = d.schema.expect("a schema's log is detected with its schema");
            read_schema(&format, d.input, path, &mut state)?;
        }
    }
    // A filter that matched nothing is an error, not an empty output.
    state.tally.check(select, path).map_err(|m| super::fault::Fault::new(super::fault::FaultKind::Filter, path, m))?;
    Ok(state.outcome)
}
}

pub(super) struct State<'a> {
    select: &'a Select,
    sink: &'a mut dyn Sink,
    /// Channels by key: not selected, selected but not yet given a sample in the time window,
    /// or announced to the sink with an id.
    ids: HashMap<String, Slot>,
    /// The settled slots of framed records by record tag (`None`: not settled, or not seen),
    /// so that a record finds its channel without hashing its name ([`State::wanted_tag`]).
    by_tag: Vec<Option<Tagged>>,
    /// How many channels were selected so far (the next channel id).
    selected: usize,
    /// The time origin the time filters count from (nanoseconds in the samples' clock).
    origin_ns: u64,
    pub(super) outcome: Outcome,
    /// The channels met and samples kept, to tell a filter that matched nothing.
    tally: super::filter::Tally,
}

enum Slot {
    Skip,
    Pending(Box<Channel>),
    Id(usize),
}

/// A [`Slot`] that no longer changes.
#[derive(Clone, Copy)]
enum Tagged {
    Skip,
    Id(usize),
}

/// Record tags below this have their slots kept by tag.
const TAGS: u64 = 4096;

impl State<'_> {
    /// Delivers a sample, announcing its channel first if it is new. `describe` builds the
    /// channel description, only once per channel.
    pub(super) fn deliver(
        &mut self,
        name: &str,
        t_ns: u64,
        value: impl FnOnce() -> Value,
        describe: impl FnOnce() -> Channel,
    ) -> Result<(), Error> {
        if let Some(id) = self.wanted(name, t_ns, describe)? {
            self.sink.sample(id, t_ns, &value())?;
            self.outcome.samples += 1;
        }
        Ok(())
    }

    /// As [`State::deliver`], for a value handed as a visit ([`Sink::visit`]).
    fn deliver_visit(
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
    /// with the record's payload ([`Sink::record`]).
    fn deliver_record(
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
    fn wanted_tag(
        &mut self,
        tag: u64,
        key: &str,
        t_ns: u64,
        describe: impl FnOnce() -> Channel,
    ) -> Result<Option<usize>, Error> {
        let i = tag as usize;
        match self.by_tag.get(i).copied().flatten() {
            Some(Tagged::Skip) => Ok(None),
            Some(Tagged::Id(id)) => {
                let t = t_ns.saturating_sub(self.origin_ns);
                let kept = self.select.wants_time(t);
                self.tally.sample(Some(t), kept);
                Ok(kept.then_some(id))
            }
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

    /// As [`State::wanted`], for a sample of a channel already announced: whether the time
    /// window keeps it (noted in the tally).
    #[inline]
    fn wanted_settled(&mut self, t_ns: u64) -> bool {
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
    fn wanted(&mut self, key: &str, t_ns: u64, describe: impl FnOnce() -> Channel) -> Result<Option<usize>, Error> {
        let slot = match self.ids.get_mut(key) {
            Some(slot) => slot,
            None => {
                let channel = describe();
                self.tally.channel(&channel.name);
                if let Some(group) = channel.group.as_deref().filter(|_| self.select.tables) {
                    // A table's name is one a filter of tables matches.
                    self.tally.channel(group);
                }
                let slot = if self.select.wants(&channel.name, channel.group.as_deref()) {
                    Slot::Pending(Box::new(channel))
                } else {
                    Slot::Skip
                };
                self.ids.entry(key.to_string()).or_insert(slot)
            }
        };
        if matches!(slot, Slot::Skip) {
            return Ok(None);
        }
        let t = t_ns.saturating_sub(self.origin_ns);
        let kept = self.select.wants_time(t);
        self.tally.sample(Some(t), kept);
        if !kept {
            return Ok(None);
        }
        if let Slot::Pending(channel) = slot {
            let id = self.selected;
            self.sink.channel(id, channel)?;
            self.selected += 1;
            *slot = Slot::Id(id);
        }
        Ok(match slot {
            Slot::Id(id) => Some(*id),
            _ => None,
        })
    }
}

struct Framed<'a, 's> {
    input: Box<dyn Read>,
    path: &'a str,
    schema: &'a Arc<Schema>,
    state: &'a mut State<'s>,
}

impl WithFormat for Framed<'_, '_> {
    type Output = Result<(), Error>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        let Framed { input, path, schema, state } = self;
        let ns_per_tick = timestamp_scale(schema);
        // The payloads are in the layout of the schema's records when the reader is the one of
        // the schema's own schema id (not an older layout of the history).
        let current = schema.format.schema_id.as_ref().map(|s| s.value);
        let same_layout = F::KNOWN_SCHEMA_IDS == current.as_slice();
        let mut reader = Reader::<_, F>::new(input).map_err(|e| Error::Input(format!("{path}: {e}")))?;
        while let Some(ev) = reader.next_event() {
            match ev {
                Ok(Event::Record { raw, record }) => {
                    let name = F::record_name(raw.header.tag).unwrap_or("?");
                    let t_ns = raw.header.timestamp.unwrap_or(raw.index).saturating_mul(ns_per_tick);
                    let describe = || record_channel(schema, name);
                    if same_layout {
                        state.deliver_record(raw.header.tag, name, t_ns, raw.payload, &record, describe)?;
                    } else {
                        state.deliver_visit(name, t_ns, &record, describe)?;
                    }
                }
                Ok(Event::Unknown { raw }) => {
                    state.outcome.warnings.push(unknown_record(path, raw.offset, raw.header.tag));
                }
                Err(e) if e.is_recoverable() => state.outcome.warnings.push(format!("{path}: {e}; skipped")),
                Err(e) => {
                    state.outcome.fail(super::fault::Fault::read(path, &e));
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Reads a log of a schema's own framing through the IR interpreter. Channels are described by
/// the schema of the file's layout (an older one from the lock when the file says so), so each
/// record's payload is in the layout of its channel's type.
fn read_schema(
    format: &Arc<crate::log::SchemaFormat>,
    input: Box<dyn Read>,
    path: &str,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let mut reader = format.read(input).map_err(|e| super::fault::Fault::read(path, &e))?;
    let schema = Arc::clone(reader.schema());
    let ns_per_tick = reader.ns_per_tick();
    while let Some(rec) = reader.next_record() {
        match rec {
            Ok(rec) => match &rec.value {
                Some(value) => {
                    let name = value.name();
                    let t_ns = rec.header.timestamp.unwrap_or(rec.index).saturating_mul(ns_per_tick);
                    let describe = || record_channel(&schema, name);
                    state.deliver_record(rec.header.tag, name, t_ns, rec.payload, value, describe)?;
                }
                None => state.outcome.warnings.push(unknown_record(path, rec.offset, rec.header.tag)),
            },
            Err(e) if e.is_recoverable() => state.outcome.warnings.push(format!("{path}: {e}; skipped")),
            Err(e) => {
                state.outcome.fail(super::fault::Fault::read(path, &e));
                break;
            }
        }
    }
    Ok(())
}

/// The warning about a record whose type the schema does not know (skipped by its length).
pub fn unknown_record(path: &str, offset: u64, tag: u64) -> String {
    format!("{path}: offset {offset}: record type {tag} is not in the schema; skipped")
}

pub use crate::log::framed::timestamp_scale;

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
fn units_of(schema: &Schema, fields: &[ir::Field], prefix: &str, out: &mut BTreeMap<String, String>) {
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

/// The channel of a key of decoded WPILib struct or protobuf values: the JSON Schema of a
/// struct from its IR (enums as their names, as decoded), or of a protobuf message from its
/// descriptor.
pub fn struct_channel(schemas: &TypeRegistry, key: &str, type_name: &str) -> Channel {
    let name = type_name.strip_prefix("struct:").unwrap_or("");
    let (name, array) = match name.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (name, false),
    };
    let proto = type_name.strip_prefix("proto:").and_then(|p| schemas.proto_json_schema(p));
    let json_schema = match schemas.struct_ir(name) {
        _ if proto.is_some() => JsonSchema::Text(proto.unwrap_or_default()),
        Ok((l, id)) => JsonSchema::Struct {
            ty: ValueType { schema: Arc::new(l.schema.clone()), id },
            enum_names: true,
            list: array.then(|| type_name.to_string()),
        },
        Err(_) => {
            let mut title = String::new();
            crate::json::string(&mut title, type_name);
            JsonSchema::Text(format!(
                r#"{{"$schema":"https://json-schema.org/draft/2020-12/schema","title":{title},"type":"object"}}"#
            ))
        }
    };
    Channel {
        name: key.to_string(),
        schema_name: type_name.to_string(),
        json_schema,
        units: BTreeMap::new(),
        ros1: None,
        // Decoded struct values show enums by name and bit-fields as members, which is not the
        // shape of the struct's IR, so typed sinks get the values as JSON.
        ty: None,
        group: None,
    }
}

/// The channel of an RLOG key: the JSON Schema of its declared (R2) or first seen (R1) type.
pub fn rlog_channel(key: &str, type_name: &str) -> Channel {
    let number = r#"{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}"#;
    let item = match type_name.trim_end_matches("[]") {
        "boolean" => r#"{"type":"boolean"}"#,
        "int" | "int64" => r#"{"type":"integer"}"#,
        "double" | "float" => number,
        "string" | "json" => r#"{"type":"string"}"#,
        "null" => r#"{"type":"null"}"#,
        _ => r#"{"type":"string","contentEncoding":"base16"}"#,
    };
    let value = if type_name.ends_with("[]") && !type_name.starts_with("struct:") {
        format!(r#"{{"type":"array","items":{item}}}"#)
    } else {
        item.to_string()
    };
    let mut title = String::new();
    crate::json::string(&mut title, type_name);
    let json_schema = JsonSchema::Text(format!(
        r#"{{"$schema":"https://json-schema.org/draft/2020-12/schema","title":{title},"type":"object","properties":{{"value":{value}}},"required":["value"]}}"#
    ));
    Channel {
        name: key.to_string(),
        schema_name: type_name.to_string(),
        json_schema,
        units: BTreeMap::new(),
        ros1: None,
        ty: Some(rlog_value_type(type_name)),
        group: None,
    }
}

/// The IR of an RLOG key's values, `{ value: T }`, from its type name (the WPILOG type names of
/// R2, the LoggableType names of R1): numbers, booleans and strings as themselves, `T[]` as an
/// array, and what logspec keeps as bytes (`raw`, `struct:..`, `proto:..`, `byte`, any other
/// name) as bytes.
pub fn rlog_value_type(type_name: &str) -> ValueType {
    let scalar = |name: &str| match name {
        "boolean" => Ty::Bool,
        "int" | "int64" => Ty::Prim(ir::Prim::I64),
        "float" => Ty::Prim(ir::Prim::F32),
        "double" => Ty::Prim(ir::Prim::F64),
        "string" | "json" => Ty::Str(ir::Len::Rest),
        _ => Ty::Bytes(ir::Len::Rest),
    };
    let ty = match type_name.strip_suffix("[]") {
        Some("byte") => Ty::Bytes(ir::Len::Rest),
        Some(elem) if !type_name.starts_with("struct:") && !type_name.starts_with("proto:") => {
            Ty::Array { elem: Box::new(scalar(elem)), len: ir::Len::Rest }
        }
        _ => scalar(type_name),
    };
    let field = ir::Field {
        name: "value".to_string(),
        ty,
        endian: ir::Endian::Little,
        doc: None,
        unit: None,
        value: None,
        offset: None,
    };
    let body = ir::Struct {
        name: type_name.to_string(),
        doc: None,
        endian: ir::Endian::Little,
        fields: vec![field],
        size: None,
    };
    let schema = Schema {
        format: ir::Format {
            name: "rlog".to_string(),
            title: None,
            doc: None,
            endian: ir::Endian::Little,
            version: None,
            schema_id: None,
        },
        types: vec![TypeDef::Struct(body)],
        file_header: None,
        framing: None,
        records: Vec::new(),
        params: Vec::new(),
        source: None,
    };
    ValueType { schema: Arc::new(schema), id: TypeId(0) }
}

/// CARLA: a packet whose records each belong to an actor (`db_id`) gives one channel per packet
/// kind and actor (`Position/231`), so that an actor's path is one series; other packets give one
/// channel per kind. Time is the frame's `elapsed`.
fn read_carla(
    mut r: crate::formats::carla::Reader<Box<dyn Read>>,
    path: &str,
    schema: &Arc<Schema>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    use crate::formats::carla::Body;
    while let Some(p) = r.next_packet() {
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                state.outcome.fail(super::fault::Fault::read(path, &e));
                break;
            }
        };
        let t_ns = seconds_to_ns(r.frame().start.as_ref().map_or(0.0, |s| s.elapsed));
        let name = p.name().unwrap_or("?");
        match &p.body {
            Body::Record { record, .. } => {
                let value = Value::of(record);
                match per_actor(&value) {
                    Some(items) => {
                        for (id, item) in items {
                            let channel = format!("{name}/{id}");
                            state.deliver(
                                &channel,
                                t_ns,
                                || item.clone(),
                                || carla_actor_channel(schema, name, &channel),
                            )?;
                        }
                    }
                    None => state.deliver(name, t_ns, || value.clone(), || record_channel(schema, name))?,
                }
            }
            Body::Unknown(_) => state.outcome.warnings.push(format!(
                "{path}: offset {}: packet id {} is not a CARLA 0.9 packet; skipped by its size",
                p.offset, p.id
            )),
            Body::Mismatch { error, .. } => state.outcome.warnings.push(format!(
                "{path}: offset {}: packet {name} does not decode in its {} bytes ({error}); skipped",
                p.offset, p.size
            )),
        }
    }
    Ok(())
}

/// The records of a packet `{"records": [{"db_id": .., ..}, ..]}`, by actor id.
fn per_actor(v: &Value) -> Option<Vec<(u64, &Value)>> {
    let Value::Object(fields) = v else { return None };
    let [(name, Value::Array(items))] = fields.as_slice() else { return None };
    if name != "records" {
        return None;
    }
    items
        .iter()
        .map(|item| match item {
            Value::Object(f) => f.iter().find(|(k, _)| k == "db_id").and_then(|(_, id)| match id {
                Value::UInt(u) => Some((*u, item)),
                Value::Int(i) => u64::try_from(*i).ok().map(|u| (u, item)),
                _ => None,
            }),
            _ => None,
        })
        .collect()
}

/// The channel of one actor's records of a packet kind: the element type of the packet's
/// `records` array.
fn carla_actor_channel(schema: &Arc<Schema>, packet: &str, channel: &str) -> Channel {
    let elem = schema.records.iter().find(|r| r.name == packet).and_then(|r| {
        let f = schema.strukt(r.body).fields.first()?;
        match &f.ty {
            Ty::Array { elem, .. } => match **elem {
                Ty::Named(id) if matches!(schema.ty(id), TypeDef::Struct(_)) => Some(id),
                _ => None,
            },
            _ => None,
        }
    });
    match elem {
        Some(id) => {
            let mut units = BTreeMap::new();
            units_of(schema, &schema.strukt(id).fields, "", &mut units);
            Channel {
                name: channel.to_string(),
                schema_name: schema.ty(id).name().to_string(),
                json_schema: JsonSchema::Struct {
                    ty: ValueType { schema: schema.clone(), id },
                    enum_names: false,
                    list: None,
                },
                units,
                ros1: None,
                ty: Some(ValueType { schema: schema.clone(), id }),
                group: Some(packet.to_string()),
            }
        }
        None => Channel { name: channel.to_string(), ..record_channel(schema, packet) },
    }
}

/// ROS bags: one channel per topic, in time order (connections on one topic are one channel
/// when they agree on type, definition, caller id and latching, and one channel each otherwise,
/// all named by the topic); times are the messages' record times (Unix time), and the time
/// filters count from the bag's first message. A sink may take the messages' bytes as they are
/// ([`Sink::raw`]); others get them decoded from the connections' embedded definitions.
fn read_rosbag(file: &Path, path: &str, state: &mut State<'_>) -> Result<(), Error> {
    use super::rosbag::Walk;
    use crate::formats::rosbag::{Connection, Decoders, Order, Time};
    let (mut bag, notice) = super::rosbag::open_noting(file, path).map_err(Error::Input)?;
    state.outcome.warnings.extend(notice);
    let decoders = Decoders::new(path, &bag.connections, None);
    for (id, t) in &decoders.conns {
        if let Some(p) = &t.problem {
            let c = &bag.connections[id];
            state.outcome.warnings.push(format!("{path}: connection {id} ({}, {}): {p}", c.topic, c.ty));
        }
    }
    let same = |a: &Connection, b: &Connection| {
        (&a.ty, &a.md5sum, &a.message_definition, &a.callerid, &a.latching)
            == (&b.ty, &b.md5sum, &b.message_definition, &b.callerid, &b.latching)
    };
    let mut first: HashMap<&str, &Connection> = HashMap::new();
    let mut mixed: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for c in bag.connections.values() {
        match first.get(c.topic.as_str()) {
            Some(f) if !same(f, c) => {
                mixed.insert(&c.topic);
            }
            Some(_) => {}
            None => {
                first.insert(&c.topic, c);
            }
        }
    }
    let names: BTreeMap<u32, String> = bag
        .connections
        .values()
        .map(|c| {
            (c.id, if mixed.contains(c.topic.as_str()) { format!("{}#{}", c.topic, c.id) } else { c.topic.clone() })
        })
        .collect();
    let wanted: std::collections::BTreeSet<u32> =
        bag.connections.values().filter(|c| state.select.wants_channel(&c.topic)).map(|c| c.id).collect();
    // Topics of connections that are not read are still channels of the log.
    for c in bag.connections.values() {
        state.tally.channel(&c.topic);
    }
    state.origin_ns = super::rosbag::start(&bag).map_or(0, Time::as_nanos);
    state.sink.origin(state.origin_ns);
    let conns = bag.connections.clone();
    let walked = bag.for_each_message(Order::Time, Some(&wanted), |m| -> Result<(), Walk<Error>> {
        let (Some(c), Some(key)) = (conns.get(&m.conn), names.get(&m.conn)) else {
            state.outcome.warnings.push(super::rosbag::unknown_connection(path, &m));
            return Ok(());
        };
        let t_ns = m.time.as_nanos();
        let conn_type = decoders.get(m.conn);
        let describe = || ros_channel(c, conn_type.and_then(|t| t.decoder.as_deref()));
        let Some(id) = state.wanted(key, t_ns, describe).map_err(Walk::Out)? else { return Ok(()) };
        if !state.sink.raw(id, t_ns, m.data).map_err(Walk::Out)? {
            let Some(d) = conn_type.and_then(|t| t.decoder.as_ref()) else {
                // Reported once above, with the connection.
                return Ok(());
            };
            match d.decode(m.data) {
                Ok(v) => state.sink.sample(id, t_ns, &Value::of(&d.view(&v))).map_err(Walk::Out)?,
                Err(e) => {
                    state.outcome.warnings.push(super::rosbag::undecodable(path, &m, c, &e));
                    return Ok(());
                }
            }
        }
        state.outcome.samples += 1;
        Ok(())
    });
    match walked {
        Ok(()) => {}
        Err(Walk::Out(e)) => return Err(e),
        Err(Walk::Bag(e)) => state.outcome.fail(super::fault::Fault::read(path, &e)),
        Err(Walk::Stop(stop)) => state.outcome.fail(super::rosbag::stop_fault(&stop, &bag, path)),
    }
    Ok(())
}

/// The channel of a ROS connection: its JSON Schema from the compiled definition (an open object
/// when the definition did not compile), and the type for passing messages through.
fn ros_channel(
    c: &crate::formats::rosbag::Connection,
    decoder: Option<&crate::formats::rosbag::MsgDecoder>,
) -> Channel {
    let ty = decoder.and_then(|d| {
        let id = *d.lowered.ids.get(&d.name)?;
        Some(ValueType { schema: Arc::new(d.lowered.schema.clone()), id })
    });
    let json_schema = match &ty {
        Some(t) => JsonSchema::Struct { ty: t.clone(), enum_names: false, list: None },
        None => JsonSchema::Text("{\"type\":\"object\"}".to_string()),
    };
    Channel {
        name: c.topic.clone(),
        schema_name: c.ty.clone(),
        json_schema,
        units: BTreeMap::new(),
        ros1: Some(Ros1Type {
            ty: c.ty.clone(),
            md5sum: c.md5sum.clone(),
            definition: c.message_definition.clone(),
            callerid: c.callerid.clone(),
            latching: c.latching.clone(),
        }),
        ty,
        group: None,
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

#[cfg(test)]
mod select_tests {
    use super::*;

    /// A filter of tables keeps the channels of a group by its name and those of `<name>#<type>`
    /// by their name; a filter of channels keeps neither (the command's `--channel`).
    #[test]
    fn a_filter_of_tables_keeps_groups_and_changed_types() {
        let of = |names: &[&str], tables: bool| Select {
            channels: names.iter().map(|n| n.to_string()).collect(),
            tables,
            ..Default::default()
        };
        for tables in [false, true] {
            let s = of(&["Position"], tables);
            assert_eq!(s.wants("Position/231", Some("Position")), tables);
            assert!(s.wants("Position", None));
            assert!(!s.wants("State/231", Some("State")));
            let s = of(&["/Key#string"], tables);
            assert_eq!(s.wants("/Key", None), tables);
            assert_eq!(s.wants("Position/2", Some("/Key")), tables);
            assert!(!s.wants("/Keys", None) && !s.wants("/Key#", None));
            assert!(of(&["Pos*"], tables).wants("Position/231", Some("Position")));
            assert!(of(&["Position/231"], tables).wants("Position/231", Some("Position")));
            assert!(!of(&["Position/231"], tables).wants("Position/232", Some("Position")));
            assert!(of(&[], tables).wants("anything", None));
        }
        assert!(!of(&["Pos*"], false).wants("State/2", Some("Position")));
        assert!(of(&["Pos*"], true).wants("State/2", Some("Position")));
    }
}
