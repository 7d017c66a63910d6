//! MCAP files (ROS 2 recordings and others): `info`, `dump` and `scan` over
//! [`crate::formats::mcap`].
//!
//! - Channels: one per MCAP channel, named by its topic (`topic#id` when a topic has channels of
//!   different types). Time is the message's `log_time` (Unix ns); the time filters count from
//!   the first message.
//! - Decoding by the channel's message encoding: `cdr` with a `ros2msg` schema through the ROS 2
//!   `.msg` front end (the byte order from each message's encapsulation header; XCDR1 only),
//!   `ros1` with a `ros1msg` schema through the ROS1 front end, `json` passed on as JSON. Other
//!   encodings, other schema encodings (`ros2idl`) and definitions the front end refuses
//!   (`wstring`) are listed, and their messages kept as bytes (`dump`: `"bytes"`, hex).
//! - Dump: topic lines (each with its messages as the file counts them), then one line per
//!   message in log-time order (`docs/output.md`).
//! - Damage: a chunk that does not read is skipped and counted; a message that does not decode
//!   is skipped and counted; a file cut inside a record gives every complete message, then the
//!   offset.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::formats::mcap::{self as container, Channel as McapChannel, Event, Message, Schema, Want};
use crate::formats::rosbag::MsgDecoder;
use crate::json::JsonWriter;
use crate::runtime::{Visit, Visitor};
use crate::value::ValueSink;
use logspec_ir::ir::Endian;
use logspec_ir::SchemaError;

use super::fault::{Fault, FaultKind, Faults};
use super::index::{Chunk, Index, Range};
use super::records::Records;
use super::scan::{Channel, JsonSchema, Ros1Type, State, ValueType};
use super::{Error, Select};

/// The problems an MCAP reading counts.
mod kind {
    pub const UNDECODABLE: &str = "messages that do not decode";
    pub const SKIPPED: &str = "chunks or records skipped";
    pub const NO_CHANNEL: &str = "messages of no channel";
    pub const OUT_OF_ORDER: &str = "messages out of log-time order";
}

mod store;
#[cfg(feature = "sqlite")]
pub(super) use store::db3_index;
pub(super) use store::Store;

#[cfg(feature = "sqlite")]
mod split;

/// How a channel's messages are read.
enum Decoding {
    /// CDR through the ROS 2 front end: one decoder per byte order.
    Cdr { le: Arc<MsgDecoder>, be: Arc<MsgDecoder> },
    /// ROS1 serialisation through the ROS1 front end.
    Ros1(Arc<MsgDecoder>),
    /// JSON text, passed on as JSON.
    Json,
    /// Kept as bytes, for the reason given (said once per channel).
    Bytes(String),
}

/// A channel, its schema, and how its messages decode.
struct Chan {
    channel: McapChannel,
    schema: Option<Schema>,
    decoding: Decoding,
    /// The scan's channel key (the topic, or `topic#id`).
    key: String,
}

impl Chan {
    fn new(path: &str, channel: &McapChannel, schema: Option<&Schema>) -> Chan {
        let decoding = decoding(path, channel, schema);
        Chan { channel: channel.clone(), schema: schema.cloned(), decoding, key: channel.topic.clone() }
    }

    fn type_name(&self) -> &str {
        self.schema.as_ref().map_or("", |s| s.name.as_str())
    }

    /// The decoder of a message's payload and the payload, or why it does not decode (`None`:
    /// not a decoded channel).
    #[allow(clippy::type_complexity)] // a decoder, its bytes and their offset: named nowhere else
    fn payload<'m>(&self, data: &'m [u8]) -> Option<Result<(&MsgDecoder, &'m [u8], usize), String>> {
        Some(match &self.decoding {
            Decoding::Cdr { le, be } => match data {
                [0, 1, _, _, rest @ ..] => Ok((le, rest, 4)),
                [0, 0, _, _, rest @ ..] => Ok((be, rest, 4)),
                [a, b, _, _, ..] => Err(format!(
                    "encapsulation kind {a:02x} {b:02x} is not plain CDR (00 00 big-endian, 00 01 little-endian)"
                )),
                _ => Err(format!("{} bytes, shorter than the 4-byte CDR encapsulation header", data.len())),
            },
            Decoding::Ros1(d) => Ok((d, data, 0)),
            Decoding::Json | Decoding::Bytes(_) => return None,
        })
    }
}

/// How a channel's messages decode: by the message encoding and the schema's encoding.
fn decoding(path: &str, c: &McapChannel, schema: Option<&Schema>) -> Decoding {
    let render =
        |errs: Vec<SchemaError>| errs.iter().map(SchemaError::render).collect::<String>().trim_end().to_string();
    let what = format!("{path}: channel {} ({})", c.id, c.topic);
    let text =
        |s: &Schema| String::from_utf8(s.data.clone()).map_err(|_| format!("{what}: its schema is not UTF-8 text"));
    match (c.message_encoding.as_str(), schema.map(|s| (s.encoding.as_str(), s))) {
        ("json", _) => Decoding::Json,
        ("cdr", Some(("ros2msg", s))) => {
            let compiled = text(s).and_then(|t| {
                let label = format!("{what} schema `{}`", s.name);
                logspec_ir::ros::compile_ros2_definition(&label, &s.name, &t).map_err(render)
            });
            let name = logspec_ir::ros::ros2_name(&s.name);
            match compiled {
                Ok(set) => {
                    match (MsgDecoder::cdr(&set, &name, Endian::Little), MsgDecoder::cdr(&set, &name, Endian::Big)) {
                        (Some(le), Some(be)) => Decoding::Cdr { le: Arc::new(le), be: Arc::new(be) },
                        _ => Decoding::Bytes(format!("{what}: the schema does not define `{}`", s.name)),
                    }
                }
                Err(e) => Decoding::Bytes(e),
            }
        }
        ("ros1", Some(("ros1msg", s))) => {
            let compiled = text(s).and_then(|t| {
                let label = format!("{what} schema `{}`", s.name);
                logspec_ir::ros::compile_definition(&label, &s.name, &t).map_err(render)
            });
            match compiled.map(|set| MsgDecoder::new(&set, &s.name)) {
                Ok(Some(d)) => Decoding::Ros1(Arc::new(d)),
                Ok(None) => Decoding::Bytes(format!("{what}: the schema does not define `{}`", s.name)),
                Err(e) => Decoding::Bytes(e),
            }
        }
        (_, Some(("", s))) => Decoding::Bytes(format!(
            "{what}: the bag holds no definition of its type `{}` (rosbag2 stores definitions from sqlite3 schema version 4 on)",
            s.name
        )),
        (enc, Some((senc, s))) => Decoding::Bytes(format!(
            "{what}: messages of encoding `{enc}` with a `{senc}` schema (`{}`) are not decoded",
            s.name
        )),
        (enc, None) => {
            Decoding::Bytes(format!("{what}: messages of encoding `{enc}` without a schema are not decoded"))
        }
    }
}

/// What a reading keeps: the channels and schemas seen, and the problems counted.
struct Walk<'p> {
    path: &'p str,
    /// Messages are named by row id (sqlite3) or file and place (a split bag), not by byte offset.
    rows: bool,
    /// The store, to name where a message is.
    store: Option<&'p Store>,
    schemas: HashMap<u16, Schema>,
    /// By id: a few channels, looked up for every message (a `BTreeMap` compares a few ids where
    /// a `HashMap` hashes each one with SipHash).
    chans: BTreeMap<u16, Chan>,
    /// The first channel of each topic, to tell a topic's channels of another type apart.
    topics: HashMap<String, (u16, String)>,
    faults: Faults,
    /// Messages delivered in log-time order so far (a lying chunk header is counted).
    out_of_order: u64,
}

impl<'p> Walk<'p> {
    fn new(path: &'p str) -> Self {
        Walk {
            path,
            rows: false,
            store: None,
            schemas: HashMap::new(),
            chans: BTreeMap::new(),
            topics: HashMap::new(),
            faults: Faults::default(),
            out_of_order: 0,
        }
    }

    /// A walk that knows the schemas and channels outside chunks (a summary's, in an indexed
    /// file: those of a chunk that does not read are still known, and channels are known before
    /// their first message); those channels, by id.
    fn with_summary(path: &'p str, store: &'p Store) -> (Self, Option<HashMap<u16, McapChannel>>) {
        let mut walk = Walk::new(path);
        walk.rows = store.rows();
        walk.store = Some(store);
        let (schemas, channels) = store.known();
        for s in schemas {
            walk.schemas.insert(s.id, s.clone());
        }
        for c in channels {
            walk.channel(c);
        }
        let chans: HashMap<u16, McapChannel> = channels.iter().map(|c| (c.id, c.clone())).collect();
        (walk, (!chans.is_empty()).then_some(chans))
    }

    /// Where a message is: its byte offset (the record's, or its chunk's), or its row.
    fn at(&self, m: &Message<'_>) -> String {
        match self.store {
            Some(s) => s.place(m),
            None => format!("byte {}", m.offset),
        }
    }

    /// Notes a schema (again): a schema of the data section stands over the summary's copy, and
    /// the channels of a changed schema are compiled again.
    fn schema(&mut self, s: &Schema) {
        if self.schemas.get(&s.id) == Some(s) {
            return;
        }
        self.schemas.insert(s.id, s.clone());
        let of: Vec<McapChannel> =
            self.chans.values().filter(|c| c.channel.schema_id == s.id).map(|c| c.channel.clone()).collect();
        for c in of {
            self.chans.remove(&c.id);
            self.channel(&c);
        }
    }

    /// Notes a channel (again); returns it when it is new or changed.
    fn channel(&mut self, c: &McapChannel) -> Option<&Chan> {
        if self.chans.get(&c.id).is_some_and(|k| &k.channel == c) {
            return None;
        }
        let mut chan = Chan::new(self.path, c, self.schemas.get(&c.schema_id));
        let ty = chan.type_name().to_string();
        let first = self.topics.entry(c.topic.clone()).or_insert((c.id, ty.clone()));
        if first.0 != c.id && first.1 != ty {
            chan.key = format!("{}#{}", c.topic, c.id);
        }
        self.chans.insert(c.id, chan);
        self.chans.get(&c.id)
    }

    fn undecodable(&self, m: &Message<'_>, c: &Chan, e: &dyn std::fmt::Display) -> Fault {
        Fault::at(
            self.path,
            m.offset,
            Some(m.index),
            format!(
                "{}: {}, message {} on {} ({}) at log time {}: {e}; skipped",
                self.path,
                if self.rows { self.at(m) } else { format!("byte {} (the message's record, or its chunk)", m.offset) },
                m.index,
                c.channel.topic,
                c.type_name(),
                m.log_time
            ),
        )
    }
}

/// What was skipped, and where: at a byte offset, or (sqlite3) where `why` says.
fn walk_skipped(path: &str, rows: bool, offset: u64, why: &str) -> String {
    if rows {
        format!("{path}: {why}")
    } else {
        format!("{path}: byte {offset}: {why}")
    }
}

/// The selection as the container reader takes it: the channels of `select`'s topics, and its
/// time window in log time.
fn want_of(
    select: &Select,
    chans: Option<&HashMap<u16, McapChannel>>,
    origin: u64,
) -> (Option<HashSet<u16>>, Want<'static>) {
    let time = (select.since.is_some() || select.until.is_some()).then(|| {
        let at = |s: f64| origin.saturating_add(super::scan::seconds_to_ns(s));
        (select.since.map_or(0, at), select.until.map_or(u64::MAX, at))
    });
    let channels = match chans {
        Some(c) if !select.channels.is_empty() => {
            Some(c.values().filter(|c| select.wants_channel(&c.topic)).map(|c| c.id).collect())
        }
        _ => None,
    };
    (channels, Want { channels: None, time, part: None })
}

/// The topic line of a channel, with its messages as the store counts them.
fn topic_line(w: &mut (impl ValueSink + ?Sized), c: &Chan, counts: Option<&HashMap<u16, u64>>) {
    w.begin_struct(None);
    w.str(Some("kind"), "topic");
    w.uint(Some("id"), u64::from(c.channel.id));
    w.str(Some("topic"), &c.channel.topic);
    w.str(Some("type"), c.type_name());
    w.str(Some("serialization_format"), &c.channel.message_encoding);
    match c.schema.as_ref().filter(|s| !s.encoding.is_empty()) {
        Some(s) => {
            w.str(Some("msgdef_encoding"), &s.encoding);
            w.str(Some("msgdef_sha256"), &sha256(&s.data));
        }
        None => {
            w.str(Some("msgdef_encoding"), "none");
            w.null(Some("msgdef_sha256"));
        }
    }
    match counts {
        Some(n) => w.uint(Some("messages"), n.get(&c.channel.id).copied().unwrap_or(0)),
        None => w.null(Some("messages")),
    }
    w.end_struct();
}

fn sha256(b: &[u8]) -> String {
    let mut h = String::with_capacity(64);
    crate::json::hex(&mut h, &Sha256::digest(b));
    h
}

/// A JSON value, visited as the dump's values are.
fn visit_json(v: &serde_json::Value, name: Option<&str>, w: &mut (impl ValueSink + ?Sized)) {
    use serde_json::Value as J;
    match v {
        J::Null => w.null(name),
        J::Bool(b) => w.bool(name, *b),
        J::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => w.uint(name, u),
            (_, Some(i), _) => w.int(name, i),
            (_, _, Some(f)) => w.f64(name, f),
            _ => w.null(name),
        },
        J::String(s) => w.str(name, s),
        J::Array(a) => {
            w.begin_array(name, a.len());
            for x in a {
                visit_json(x, None, w);
            }
            w.end_array();
        }
        J::Object(o) => {
            w.begin_struct(name);
            for (k, x) in o {
                visit_json(x, Some(k), w);
            }
            w.end_struct();
        }
    }
}

/// A message's `data` (and, for a channel kept as bytes, `bytes`); an error when it should
/// decode and does not (what of it was written, the caller discards).
fn write_data(w: &mut (impl ValueSink + ?Sized), c: &Chan, data: &[u8]) -> Result<(), String> {
    match c.payload(data) {
        // Decoded as it is written: on a fault the caller discards the record
        // ([`Records::discard`](super::Records::discard)).
        Some(Ok((d, payload, skip))) => {
            d.visit_as(payload, Some("data"), w).map_err(|mut f| {
                f.offset += skip;
                f.to_string()
            })?;
        }
        Some(Err(e)) => return Err(e),
        None => match &c.decoding {
            Decoding::Json => {
                let v: serde_json::Value =
                    serde_json::from_slice(data).map_err(|e| format!("the message is not JSON: {e}"))?;
                visit_json(&v, Some("data"), w);
            }
            _ => {
                w.null(Some("data"));
                let mut h = String::with_capacity(data.len() * 2);
                crate::json::hex(&mut h, data);
                w.str(Some("bytes"), &h);
            }
        },
    }
    Ok(())
}

/// Whether a message decodes (`Err`: why not), without showing it.
fn check(c: &Chan, data: &[u8]) -> Result<(), String> {
    match c.payload(data) {
        Some(Ok((d, payload, skip))) => d.checked(payload).map(|_| ()).map_err(|mut f| {
            f.offset += skip;
            f.to_string()
        }),
        Some(Err(e)) => Err(e),
        None => match &c.decoding {
            Decoding::Json => serde_json::from_slice::<serde::de::IgnoredAny>(data)
                .map(|_| ())
                .map_err(|e| format!("the message is not JSON: {e}")),
            _ => Ok(()),
        },
    }
}

/// The records of an MCAP file as the dump writes them.
pub(super) fn records<R: Records>(
    store: Store,
    path: &str,
    chunk_budget: u64,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let origin = store.start().unwrap_or(0);
    let (mut walk, summary) = Walk::with_summary(path, &store);
    let rows = walk.rows;
    let counts = store.counts();
    let (wanted, want) = want_of(select, summary.as_ref(), origin);
    let want = Want { channels: wanted.as_ref(), ..want };
    let mut listed: Vec<&Chan> = walk.chans.values().filter(|c| select.wants_channel(&c.channel.topic)).collect();
    listed.sort_by_key(|c| c.channel.id);
    for chan in listed {
        topic_line(out.writer(), chan, counts);
        out.end_record().map_err(Error::Io)?;
    }
    let filtering = super::filter::Tally::needed(select);
    let mut tally = super::filter::Tally::default();
    for c in walk.chans.values() {
        tally.channel(&c.channel.topic);
    }
    let mut told: HashSet<u16> = HashSet::new();
    let read = store.read(chunk_budget, &want, |e| -> Result<(), Error> {
        match e {
            Event::Schema(s) => walk.schema(s),
            Event::Channel(c) => {
                if let Some(chan) = walk.channel(c) {
                    tally.channel(&c.topic);
                    if select.wants_channel(&c.topic) {
                        topic_line(out.writer(), chan, counts);
                        out.end_record().map_err(Error::Io)?;
                    }
                }
            }
            Event::Message(m) => {
                let Some(c) = walk.chans.get(&m.channel) else {
                    let at = walk.at(m);
                    let fault = || {
                        Fault::at(
                            path,
                            m.offset,
                            Some(m.index),
                            format!(
                                "{path}: {}: message {} of channel {}, which no channel record defines; skipped",
                                at, m.index, m.channel
                            ),
                        )
                    };
                    super::records::skip(out, &mut walk.faults, kind::NO_CHANNEL, fault);
                    return Ok(());
                };
                if filtering && !tally.note(select, &c.channel.topic, Some(m.log_time.saturating_sub(origin))) {
                    return Ok(());
                }
                if let Decoding::Bytes(why) = &c.decoding {
                    if told.insert(c.channel.id) {
                        out.warn(Fault::new(FaultKind::Decode, path, format!("{why}; its messages are kept as bytes")));
                    }
                }
                let w = out.writer();
                w.begin_struct(None);
                w.str(Some("kind"), "message");
                w.uint(Some("topic_id"), u64::from(c.channel.id));
                w.str(Some("topic"), &c.channel.topic);
                w.str(Some("type"), c.type_name());
                w.uint(Some("log_time"), m.log_time);
                match write_data(w, c, &m.data) {
                    Ok(()) => {
                        w.end_struct();
                        out.end_record().map_err(Error::Io)?;
                    }
                    Err(e) => {
                        out.discard();
                        let f = walk.undecodable(m, c, &e);
                        super::records::skip(out, &mut walk.faults, kind::UNDECODABLE, || f);
                    }
                }
            }
            Event::Skipped { offset, why } => {
                let f = || Fault::at(path, offset, None, walk_skipped(path, rows, offset, &why));
                super::records::skip(out, &mut walk.faults, kind::SKIPPED, f);
            }
            Event::Header { .. } | Event::Metadata { .. } => {}
        }
        Ok(())
    })?;
    let (stats, end) = match read {
        Ok(s) => (s, None),
        Err((s, e)) => (s, Some(e)),
    };
    if stats.out_of_order > 0 {
        walk.out_of_order = stats.out_of_order;
        let n = stats.out_of_order;
        let f = || {
            Fault::new(FaultKind::Decode, path, format!(
            "{path}: {n} message(s) came after messages of a later log time (a chunk starts earlier than its header says); they are printed as they came"
        ))
        };
        super::records::skip(out, &mut walk.faults, kind::OUT_OF_ORDER, f);
    }
    if let Some(e) = end {
        return Err(Error::at(Fault::at(
            path,
            e.offset,
            None,
            format!("{path}: {e}; every complete message before it was printed"),
        )));
    }
    if !stats.footer {
        super::records::skipped(out, &walk.faults, path, "problem(s) were skipped")?;
        return Err(Error::at(Fault::at(path, store.size(), None, format!(
            "{path}: byte {}: the file ends without its footer and end magic (truncated); every complete message before it was printed",
            store.size()
        ))));
    }
    super::records::skipped(out, &walk.faults, path, "problem(s) were skipped")?;
    if filtering {
        tally.check(select, path).map_err(|m| Error::filter(path, m))?;
    }
    Ok(())
}

/// The channel of a scan: its JSON Schema and IR type from the compiled definition.
fn channel(c: &Chan) -> Channel {
    let d = match &c.decoding {
        Decoding::Cdr { le, .. } => Some(le),
        Decoding::Ros1(d) => Some(d),
        _ => None,
    };
    let ty = d.and_then(|d| {
        let id = *d.lowered.ids.get(&d.name)?;
        Some(ValueType { schema: Arc::new(d.lowered.schema.clone()), id })
    });
    let json_schema = match &ty {
        Some(t) => JsonSchema::Struct { ty: t.clone(), enum_names: false, list: None },
        None => JsonSchema::Text("{\"type\":\"object\"}".to_string()),
    };
    // ROS 2 messages are passed on as recorded, with their definition, where a sink takes them.
    let recorded = match (&c.decoding, &c.schema) {
        (Decoding::Cdr { .. }, Some(s)) => Some(Ros1Type {
            ty: s.name.clone(),
            md5sum: String::new(),
            definition: String::from_utf8_lossy(&s.data).into_owned(),
            encoding: "cdr",
            schema_encoding: "ros2msg",
            callerid: None,
            latching: None,
        }),
        _ => None,
    };
    Channel {
        name: c.key.clone(),
        schema_name: c.type_name().to_string(),
        json_schema,
        units: BTreeMap::new(),
        ros1: recorded,
        ty,
        group: None,
    }
}

/// A JSON message's value, for a scan.
struct JsonValue<'a>(&'a serde_json::Value);

impl Visit for JsonValue<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        visit_json(self.0, name, &mut NoNull(v));
    }
}

/// A visitor as a [`ValueSink`], a JSON `null` shown as an empty struct.
struct NoNull<'a, V: ?Sized>(&'a mut V);

impl<V: Visitor + ?Sized> ValueSink for NoNull<'_, V> {
    fn null(&mut self, name: Option<&str>) {
        self.0.begin_struct(name);
        self.0.end_struct();
    }
}

impl<V: Visitor + ?Sized> Visitor for NoNull<'_, V> {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.0.uint(name, v)
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.0.int(name, v)
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.0.f32(name, v)
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.0.f64(name, v)
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.0.bool(name, v)
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.0.str(name, v)
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.0.bytes(name, v)
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, label: Option<&'static str>) {
        self.0.enumeration(name, raw, label)
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.0.flags(name, raw)
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.0.begin_struct(name)
    }
    fn end_struct(&mut self) {
        self.0.end_struct()
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        self.0.begin_array(name, len)
    }
    fn end_array(&mut self) {
        self.0.end_array()
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, tag: i128) {
        self.0.begin_variant(name, variant, tag)
    }
    fn end_variant(&mut self) {
        self.0.end_variant()
    }
}

/// The time index an MCAP file carries: its chunks ([`container::chunk_spans`]), their times
/// since its first message; `None` for a file whose chunks cannot each be read alone.
pub(super) fn index(bytes: &[u8]) -> Option<Index> {
    let spans = container::chunk_spans(bytes)?;
    let held = |s: &&container::ChunkSpan| !(s.start == 0 && s.end == 0);
    let origin_ns = spans.iter().filter(held).map(|s| s.start).min().unwrap_or(0);
    let mut first_record = 0;
    let chunks = spans
        .iter()
        .map(|s| {
            let c = Chunk {
                offset: s.offset,
                length: s.length,
                first_record,
                records: s.messages,
                t_min_ns: s.start.saturating_sub(origin_ns),
                t_max_ns: s.end.saturating_sub(origin_ns),
            };
            first_record += s.messages;
            c
        })
        .collect();
    Some(Index { origin_ns, chunks, states: Vec::new(), schemas: Vec::new() })
}

/// The samples of an MCAP file: one channel per MCAP channel of a decoded encoding; with
/// `range`, of the chunks that start in it ([`index`]).
pub(super) fn scan(
    store: Store,
    path: &str,
    chunk_budget: u64,
    range: Option<Range>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let origin = store.start().unwrap_or(0);
    state.origin_ns = origin;
    state.sink.origin(origin);
    let (mut walk, summary) = Walk::with_summary(path, &store);
    let rows = walk.rows;
    let (wanted, want) = want_of(state.select, summary.as_ref(), origin);
    let part = range.map(|r| container::Part { start: r.start, end: r.end, first_message: r.first_record });
    let want = Want { channels: wanted.as_ref(), part, ..want };
    for c in walk.chans.values() {
        state.tally.channel(&c.channel.topic);
    }
    let read = store.read(chunk_budget, &want, |e| -> Result<(), Error> {
        match e {
            Event::Schema(s) => walk.schema(s),
            Event::Channel(c) => {
                if walk.channel(c).is_some() {
                    state.tally.channel(&c.topic);
                    // A channel id defined anew may stand for another key.
                    state.forget_tag(u64::from(c.id));
                }
            }
            Event::Message(m) => {
                let Some(c) = walk.chans.get(&m.channel) else {
                    state.warn(kind::NO_CHANNEL, || {
                        format!(
                            "{path}: byte {}: message {} of channel {}, which no channel record defines; skipped",
                            m.offset, m.index, m.channel
                        )
                    });
                    return Ok(());
                };
                if let Decoding::Bytes(why) = &c.decoding {
                    state.warn(kind::UNDECODABLE, || format!("{why}; its messages are not read"));
                    return Ok(());
                }
                // Found by the channel id once settled, without hashing the key.
                let Some(id) = state.wanted_tag(u64::from(m.channel), &c.key, m.log_time, || channel(c))? else {
                    return Ok(());
                };
                if state.sink.raw(id, m.log_time, &m.data)? {
                    state.outcome.samples += 1;
                    return Ok(());
                }
                match c.payload(&m.data) {
                    Some(Ok((d, payload, skip))) => {
                        if let Err(mut f) = state.deliver_message(id, m.log_time, d, payload)? {
                            f.offset += skip;
                            let f = walk.undecodable(m, c, &f);
                            state.warn(kind::UNDECODABLE, || f.message);
                        }
                        return Ok(());
                    }
                    Some(Err(e)) => {
                        let f = walk.undecodable(m, c, &e);
                        state.warn(kind::UNDECODABLE, || f.message);
                        return Ok(());
                    }
                    None => match serde_json::from_slice::<serde_json::Value>(&m.data) {
                        Ok(v) => state.sink.visit(id, m.log_time, &JsonValue(&v))?,
                        Err(e) => {
                            let f = walk.undecodable(m, c, &format!("the message is not JSON: {e}"));
                            state.warn(kind::UNDECODABLE, || f.message);
                            return Ok(());
                        }
                    },
                }
                state.outcome.samples += 1;
            }
            Event::Skipped { offset, why } => state.warn(kind::SKIPPED, || walk_skipped(path, rows, offset, &why)),
            Event::Header { .. } | Event::Metadata { .. } => {}
        }
        Ok(())
    })?;
    match read {
        Ok(stats) if !stats.footer => state.outcome.fail(Fault::at(
            path,
            store.size(),
            None,
            format!("{path}: byte {}: the file ends without its footer and end magic (truncated)", store.size()),
        )),
        Ok(stats) => {
            if stats.out_of_order > 0 {
                state.warn(kind::OUT_OF_ORDER, || format!(
                    "{path}: {} message(s) came after messages of a later log time (a chunk starts earlier than its header says)",
                    stats.out_of_order
                ));
            }
        }
        Err((_, e)) => state.outcome.fail(Fault::at(path, e.offset, None, format!("{path}: {e}"))),
    }
    Ok(())
}

/// What `info` counts per channel.
#[derive(Default)]
struct Count {
    messages: u64,
    undecodable: u64,
}

/// The summary of an MCAP file.
pub(super) fn info(store: Store, path: &str, name: &str, chunk_budget: u64) -> Result<super::Info, Error> {
    let mut errors: Vec<String> = Vec::new();
    let (mut walk, _) = Walk::with_summary(path, &store);
    let rows = walk.rows;
    let mut counts: BTreeMap<u16, Count> = walk.chans.keys().map(|id| (*id, Count::default())).collect();
    for c in walk.chans.values() {
        if let Decoding::Bytes(why) = &c.decoding {
            errors.push(why.clone());
        }
    }
    let mut header = (String::new(), String::new());
    let mut metadata: Vec<String> = Vec::new();
    let (mut t_min, mut t_max) = (None::<u64>, None::<u64>);
    let read = store.read(chunk_budget, &Want::default(), |e| -> Result<(), Error> {
        match e {
            Event::Header { profile, library } => header = (profile, library),
            Event::Schema(s) => walk.schema(s),
            Event::Channel(c) => {
                if let Some(chan) = walk.channel(c) {
                    if let Decoding::Bytes(why) = &chan.decoding {
                        errors.push(why.clone());
                    }
                }
                counts.entry(c.id).or_default();
            }
            Event::Message(m) => {
                t_min = Some(t_min.map_or(m.log_time, |t| t.min(m.log_time)));
                t_max = Some(t_max.map_or(m.log_time, |t| t.max(m.log_time)));
                let count = counts.entry(m.channel).or_default();
                count.messages += 1;
                let Some(c) = walk.chans.get(&m.channel) else {
                    let at = walk.at(m);
                    if let Some(msg) = walk.faults.note(kind::NO_CHANNEL, || {
                        format!(
                            "{path}: {}: message {} of channel {}, which no channel record defines",
                            at, m.index, m.channel
                        )
                    }) {
                        errors.push(msg);
                    }
                    return Ok(());
                };
                if let Err(e) = check(c, &m.data) {
                    count.undecodable += 1;
                    let f = walk.undecodable(m, c, &e);
                    if let Some(msg) = walk.faults.note(kind::UNDECODABLE, || f.message) {
                        errors.push(msg);
                    }
                }
            }
            Event::Metadata { name, .. } => metadata.push(name),
            Event::Skipped { offset, why } => {
                if let Some(msg) = walk.faults.note(kind::SKIPPED, || walk_skipped(path, rows, offset, &why)) {
                    errors.push(msg);
                }
            }
        }
        Ok(())
    })?;
    let (stats, stop) = match read {
        Ok(s) => (s, None),
        Err((s, e)) => (s, Some(format!("{path}: {e}"))),
    };
    errors.extend(walk.faults.more(path));
    let truncated = stop.is_some() || !stats.footer;
    // A type the bag holds no definition of (rosbag2 sqlite3 before schema version 4) is an error.
    let undefined = walk.chans.values().any(|c| c.schema.as_ref().is_some_and(|s| s.encoding.is_empty()));
    let ok = !truncated && !undefined && walk.faults.total() == 0 && stats.out_of_order == 0;
    let mut chans: Vec<&Chan> = walk.chans.values().collect();
    chans.sort_by_key(|c| c.channel.id);
    let messages: u64 = counts.values().map(|c| c.messages).sum();
    let mut w = JsonWriter::new();
    w.begin_struct(None);
    w.str(Some("file"), name);
    match &store {
        Store::Mcap { .. } => {
            w.str(Some("format"), "mcap");
            w.bool(Some("ok"), ok);
            w.str(Some("profile"), &header.0);
            w.str(Some("library"), &header.1);
            w.uint(Some("chunks"), stats.chunks);
            w.begin_array(Some("compression"), stats.compressions.len());
            for c in &stats.compressions {
                w.str(None, c);
            }
            w.end_array();
        }
        #[cfg(feature = "sqlite")]
        Store::Split(s) => {
            w.str(Some("format"), "rosbag2");
            w.bool(Some("ok"), ok);
            w.str(Some("storage"), &s.listing.storage);
            w.begin_array(Some("files"), s.parts.len());
            for p in &s.parts {
                w.str(None, &p.name);
            }
            w.end_array();
        }
        #[cfg(feature = "sqlite")]
        Store::Db3(db) => {
            w.str(Some("format"), "rosbag2");
            w.bool(Some("ok"), ok);
            w.str(Some("storage"), "sqlite3");
            opt_int(&mut w, "schema_version", db.schema_version);
            match &db.ros_distro {
                Some(d) => w.str(Some("ros_distro"), d),
                None => w.null(Some("ros_distro")),
            }
            opt_int(&mut w, "metadata_version", db.metadata_version);
            w.begin_array(Some("tables"), db.tables.len());
            for t in &db.tables {
                w.str(None, t);
            }
            w.end_array();
        }
    }
    w.bool(Some("truncated"), truncated);
    match &stop {
        Some(s) => w.str(Some("stop"), s),
        None if !stats.footer => w.str(Some("stop"), "the file ends without its footer and end magic"),
        None => w.null(Some("stop")),
    }
    w.uint(Some("schemas"), walk.schemas.len() as u64);
    w.uint(Some("channels"), chans.len() as u64);
    w.uint(Some("messages"), messages);
    opt(&mut w, "log_time_min", t_min);
    opt(&mut w, "log_time_max", t_max);
    w.begin_array(Some("topics"), chans.len());
    for c in &chans {
        let n = counts.get(&c.channel.id);
        w.begin_struct(None);
        w.uint(Some("id"), u64::from(c.channel.id));
        w.str(Some("topic"), &c.channel.topic);
        w.str(Some("type"), c.type_name());
        w.str(Some("message_encoding"), &c.channel.message_encoding);
        w.str(
            Some("schema_encoding"),
            c.schema.as_ref().filter(|s| !s.encoding.is_empty()).map_or("none", |s| s.encoding.as_str()),
        );
        w.bool(Some("decoded"), !matches!(c.decoding, Decoding::Bytes(_)));
        w.uint(Some("messages"), n.map_or(0, |n| n.messages));
        w.uint(Some("undecodable"), n.map_or(0, |n| n.undecodable));
        w.end_struct();
    }
    w.end_array();
    w.begin_array(Some("metadata"), metadata.len());
    for m in &metadata {
        w.str(None, m);
    }
    w.end_array();
    w.uint(Some("size"), store.size());
    w.begin_array(Some("errors"), errors.len());
    for e in &errors {
        w.str(None, e);
    }
    w.end_array();
    w.end_struct();
    let mut json = w.take();
    json.push('\n');
    let mut t = String::new();
    let mut line = |k: &str, v: String| t.push_str(&format!("{k:<13}{v}\n"));
    line("file:", path.to_string());
    match &store {
        Store::Mcap { .. } => {
            line("format:", format!("MCAP, profile `{}`, written by `{}`", header.0, header.1));
            line(
                "chunks:",
                format!(
                    "{} ({})",
                    stats.chunks,
                    if stats.compressions.is_empty() { "none".into() } else { stats.compressions.join(", ") }
                ),
            );
        }
        #[cfg(feature = "sqlite")]
        Store::Split(s) => {
            line("format:", format!("rosbag2 split bag, storage `{}`, {} files", s.listing.storage, s.parts.len()))
        }
        #[cfg(feature = "sqlite")]
        Store::Db3(db) => line(
            "format:",
            format!(
                "rosbag2 sqlite3, schema version {}, ROS 2 `{}`",
                db.schema_version.map_or("unknown (before 3)".into(), |v| v.to_string()),
                db.ros_distro.as_deref().unwrap_or("unknown")
            ),
        ),
    }
    if let (Some(a), Some(z)) = (t_min, t_max) {
        line("time:", format!("{a} .. {z} ns ({:.3} s)", (z - a) as f64 / 1e9));
    }
    line("messages:", messages.to_string());
    let width = chans.iter().map(|c| c.channel.topic.len()).max().unwrap_or(0);
    for (i, c) in chans.iter().enumerate() {
        let n = counts.get(&c.channel.id).map_or(0, |n| n.messages);
        line(
            if i == 0 { "topics:" } else { "" },
            format!("{:<width$} {n:>8} msgs : {} [{}]", c.channel.topic, c.type_name(), c.channel.message_encoding),
        );
    }
    for e in &errors {
        line("integrity:", e.clone());
    }
    if let Some(s) = &stop {
        line("integrity:", s.clone());
    } else if !stats.footer {
        line("integrity:", "the file ends without its footer and end magic (truncated)".into());
    }
    if stats.out_of_order > 0 {
        line("integrity:", format!("{} message(s) out of log-time order", stats.out_of_order));
    }
    Ok(super::Info::written(t, json, ok))
}

#[cfg(feature = "sqlite")]
fn opt_int(w: &mut JsonWriter, name: &str, v: Option<i64>) {
    match v {
        Some(x) => w.int(Some(name), x),
        None => w.null(Some(name)),
    }
}

fn opt(w: &mut JsonWriter, name: &str, v: Option<u64>) {
    match v {
        Some(x) => w.uint(Some(name), x),
        None => w.null(Some(name)),
    }
}
