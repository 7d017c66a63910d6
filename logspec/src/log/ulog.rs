//! PX4 ULog (`.ulg`): `info`, `dump` and `scan` over [`crate::formats::ulog::Reader`].
//!
//! - Channels: one per subscription, named by its format, with `.N` for instance `multi_id`
//!   N > 0 (`vehicle_attitude`, `vehicle_attitude.1`); the values are the format's fields
//!   (nested formats as objects, `_padding` fields left out). Time is the `timestamp` field (µs
//!   since boot) in ns; a format without one takes the latest Data timestamp before it. The
//!   time filters count from the header's start time.
//! - Dump: one line per message in file order (`docs/output.md`): `header`, `flag_bits`,
//!   `format`, `info`, `info_multiple`, `param`, `param_default`, `param_changed`,
//!   `subscription`, `unsubscription`, `data`, `logging`, `logging_tagged`, `sync`, `dropout`,
//!   `unknown`. Information and parameter values decode by their key's type through the front
//!   end, like Data.
//! - Damage: a truncated file gives every complete message, then the offset; a corrupted
//!   region is skipped to the end of the next Sync message and counted, as are Data messages
//!   of no subscription, of an undefined format or of the wrong size.
//! - Time index (`super::index::Marks`): a whole scan notes chunks at messages and the state
//!   messages (flag bits, formats, subscriptions, unsubscriptions, the Data messages that set
//!   the latest time); a scan of a range reads those, then the range's messages.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::formats::ulog::{split_key, DataValue, Decoder, Event, Message, ReadError, Reader, Subscribed};
use crate::json::JsonWriter;
use crate::runtime::{Input, Visit, Visitor};
use crate::value::ValueSink;
use logspec_ir::ulog::FormatSet;

use super::fault::{Fault, Faults, Locate};
use super::index::{self, wrong, Marks, Range, Restarting};
use super::input::Source;
use super::records::Records;
use super::scan::{Channel, JsonSchema, State, ValueType};
use super::{Error, Select};

/// The problems a ULog reading counts.
mod kind {
    pub const CORRUPT: &str = "corrupted regions skipped to the next sync message";
    pub const NO_SUBSCRIPTION: &str = "Data messages of no subscription";
    pub const UNDECODABLE: &str = "messages that do not decode";
    pub const BAD_FORMAT: &str = "formats that do not compile";
}

impl Locate for ReadError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn record(&self) -> Option<u64> {
        self.index
    }
}

/// The channel name of a subscription.
pub fn channel_name(name: &str, multi_id: u8) -> String {
    if multi_id == 0 {
        name.to_string()
    } else {
        format!("{name}.{multi_id}")
    }
}

/// Decoders of Information and Parameter values by their key's type (`char[9]`, `float`), each
/// compiled once by the ULog front end as a one-field format.
#[derive(Default)]
struct Values {
    by_type: HashMap<String, Option<Arc<Decoder>>>,
}

impl Values {
    fn decoder(&mut self, ty: &str) -> Option<Arc<Decoder>> {
        self.by_type
            .entry(ty.to_string())
            .or_insert_with(|| {
                let mut set = FormatSet::default();
                set.add(&format!("value:{ty} value")).ok()?;
                set.lower("value").ok().map(|l| Arc::new(Decoder::new(l)))
            })
            .clone()
    }

    /// Writes `value` (the bytes decoded as `ty`, or `{"$hex": ..}` when they do not decode as
    /// it): whether they decoded.
    fn write(&mut self, w: &mut (impl ValueSink + ?Sized), name: &str, ty: &str, bytes: &[u8]) -> bool {
        // Text is all the value's bytes, whatever N says (writers count characters, not bytes:
        // `char[11]` for the 10 bytes of "héllo" and four NULs), as pyulog reads it.
        if ty.starts_with("char[") {
            match std::str::from_utf8(bytes) {
                Ok(s) => w.str(Some(name), s),
                Err(_) => hex(w, name, bytes),
            }
            return true;
        }
        if let Some(d) = self.decoder(ty) {
            if let Ok(crate::formats::rosbag::Value::Struct(fields)) = d.decode(bytes) {
                let s = d.lowered.schema.strukt(d.lowered.root);
                if let (Some(f), Some(v)) = (s.fields.first(), fields.first()) {
                    let view = crate::formats::rosbag::ValueView { schema: &d.lowered.schema, ty: &f.ty, value: v };
                    view.visit(Some(name), w);
                    return true;
                }
            }
        }
        hex(w, name, bytes);
        false
    }
}

fn hex(w: &mut (impl ValueSink + ?Sized), name: &str, bytes: &[u8]) {
    let mut h = String::with_capacity(bytes.len() * 2);
    crate::json::hex(&mut h, bytes);
    w.begin_struct(Some(name));
    w.str(Some("$hex"), &h);
    w.end_struct();
}

fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// What every reading keeps: the reader, the latest Data timestamp (for the messages that have
/// none of their own) and the problems counted.
struct Walk<R, I> {
    reader: Reader<R, I>,
    /// The latest Data timestamp (µs), or the header's: pyulog's time of a parameter change or
    /// a dropout.
    last: u64,
    faults: Faults,
}

/// What a problem was, for the fault.
fn problem(path: &str, m: &Message<'_>) -> Option<(&'static str, Fault)> {
    let at = |msg: String| {
        Fault::at(path, m.offset, Some(m.index), format!("{path}: byte {}, message {}: {msg}", m.offset, m.index))
    };
    Some(match &m.event {
        Event::Resynced { resumed: Some(r) } => (
            kind::CORRUPT,
            at(format!(
                "a corrupted message header; skipped {} bytes to the end of the next sync message",
                r - m.offset
            )),
        ),
        Event::Resynced { resumed: None } => (
            kind::CORRUPT,
            at("a corrupted message header and no sync message after it; skipped to the end of the file".into()),
        ),
        Event::Invalid { msg_type, error } => (
            kind::UNDECODABLE,
            at(format!("message of type '{}' does not fit its size: {error}; skipped", *msg_type as char)),
        ),
        Event::Format(Err(e)) => (kind::BAD_FORMAT, at(format!("{e}; its data cannot be decoded"))),
        Event::Subscription(s) => match &s.decoder {
            Err(e) => (
                kind::BAD_FORMAT,
                at(format!("subscription of msg_id {} to `{}`: {e}; its data cannot be decoded", s.msg_id, s.name)),
            ),
            Ok(_) => return None,
        },
        Event::Data { msg_id, subscription: None, .. } => {
            (kind::NO_SUBSCRIPTION, at(format!("Data message of msg_id {msg_id}, which no subscription has; skipped")))
        }
        Event::Data { subscription: Some(s), payload, .. } => match &s.decoder {
            Ok(d) => match d.data(payload) {
                Ok(_) => return None,
                Err(e) => {
                    (kind::UNDECODABLE, at(format!("Data message of `{}` (msg_id {}): {e}; skipped", s.name, s.msg_id)))
                }
            },
            // Reported once, with its subscription.
            Err(_) => return None,
        },
        _ => return None,
    })
}

/// Appended-data offsets the reading did not use: behind the message that declared them
/// (`behind`), or past the end of the file (`past`; a warning; the file is read as one section
/// up to them).
fn offset_notes<R, I: Input>(reader: &Reader<R, I>, path: &str, behind: bool, past: bool) -> Vec<String> {
    let mut notes = Vec::new();
    for o in reader.bad_offsets.iter().filter(|_| behind) {
        notes.push(format!("{path}: appended-data offset {o} lies behind the flag bits or an earlier offset; ignored"));
    }
    for o in reader.unreached_offsets().iter().filter(|_| past) {
        notes.push(format!("{path}: appended-data offset {o} lies past the end of the file; ignored"));
    }
    notes
}

impl<R, I: Input> Walk<R, I> {
    fn open(reader: Result<Reader<R, I>, ReadError>, path: &str) -> Result<Self, Error> {
        let reader = reader.map_err(|e| Error::at(Fault::read(path, &e)))?;
        let last = reader.header().timestamp;
        Ok(Walk { reader, last, faults: Faults::default() })
    }
}

/// The records of a ULog file as the dump writes them.
pub(super) fn records<R: Records>(input: Source, path: &str, select: &Select, out: &mut R) -> Result<(), Error> {
    // A mapped file is read in place, a window at a time; anything else through a buffer.
    match input {
        Source::Mapped(map) => records_in(Walk::open(Reader::from_window(map.window()), path)?, path, select, out),
        Source::Stream(s) => records_in(Walk::open(Reader::new(s), path)?, path, select, out),
    }
}

fn records_in<Rd, I: Input, R: Records>(
    mut walk: Walk<Rd, I>,
    path: &str,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let mut values = Values::default();
    let filtering = super::filter::Tally::needed(select);
    let mut tally = super::filter::Tally::default();
    let origin = walk.reader.header().timestamp;
    {
        let h = walk.reader.header();
        let w = out.writer();
        w.begin_struct(None);
        w.str(Some("kind"), "header");
        w.uint(Some("version"), u64::from(h.version));
        w.uint(Some("timestamp"), h.timestamp);
        w.end_struct();
        out.end_record().map_err(Error::Io)?;
    }
    let Walk { reader, last, faults } = &mut walk;
    let end = loop {
        let Some(m) = reader.next_message() else { break None };
        let m = match m {
            Ok(m) => m,
            Err(e) => break Some(e),
        };
        if let Some((k, f)) = problem(path, &m) {
            super::records::skip(out, faults, k, || f);
        }
        // The channel filters apply to Data; the time window to everything with a time.
        let (name, t_us) = match &m.event {
            Event::Data { subscription: Some(s), payload, .. } => {
                let t = s.decoder.as_ref().ok().and_then(|d| d.timestamp(payload)).unwrap_or(*last);
                *last = (*last).max(t);
                (Some(channel_name(&s.name, s.multi_id)), Some(t))
            }
            Event::Logging { timestamp, .. } => (None, Some(*timestamp)),
            _ => (None, None),
        };
        if filtering {
            let t_ns = t_us.map(|t| t.saturating_sub(origin).saturating_mul(1000));
            let keep = match &name {
                Some(n) => tally.note(select, n, t_ns),
                None => select.channels.is_empty() && t_ns.is_none_or(|t| select.wants_time(t)),
            };
            if !keep {
                continue;
            }
        }
        match write(out.writer(), &m, *last, &mut values) {
            Ok(true) => out.end_record().map_err(Error::Io)?,
            Ok(false) => out.discard(),
            Err(e) => {
                out.discard();
                let fault = || {
                    Fault::at(
                        path,
                        m.offset,
                        Some(m.index),
                        format!("{path}: byte {}, message {}: {e}; skipped", m.offset, m.index),
                    )
                };
                super::records::skip(out, faults, kind::UNDECODABLE, fault);
            }
        }
    };
    if let Some(e) = end {
        return Err(Error::at(Fault::read(path, &e)));
    }
    for n in offset_notes(reader, path, true, true) {
        out.warn(Fault::new(super::fault::FaultKind::Decode, path, n));
    }
    super::records::skipped(out, faults, path, "problem(s) were skipped")?;
    if filtering {
        tally.check(select, path).map_err(|m| Error::filter(path, m))?;
    }
    Ok(())
}

/// Writes a message's line; `false` when it has none (a problem, reported apart), an error for
/// a Data message that does not decode.
fn write(w: &mut (impl ValueSink + ?Sized), m: &Message<'_>, last: u64, values: &mut Values) -> Result<bool, String> {
    w.begin_struct(None);
    match &m.event {
        Event::FlagBits(b) => {
            w.str(Some("kind"), "flag_bits");
            for (name, a) in [("compat_flags", &b.compat_flags), ("incompat_flags", &b.incompat_flags)] {
                w.begin_array(Some(name), 8);
                for x in a.iter() {
                    w.uint(None, u64::from(x));
                }
                w.end_array();
            }
            w.begin_array(Some("appended_offsets"), 3);
            for x in b.appended_offsets.iter() {
                w.uint(None, x);
            }
            w.end_array();
        }
        Event::Format(Ok(_)) | Event::Subscription(_) => {
            return Ok(write_definition(w, m));
        }
        Event::Info { key, value } => {
            let (ty, name) = split_key(key);
            w.str(Some("kind"), "info");
            w.str(Some("key"), &name);
            w.str(Some("type"), &ty);
            values.write(w, "value", &ty, value);
        }
        Event::InfoMultiple { is_continued, key, value } => {
            let (ty, name) = split_key(key);
            w.str(Some("kind"), "info_multiple");
            w.str(Some("key"), &name);
            w.str(Some("type"), &ty);
            w.bool(Some("is_continued"), *is_continued);
            values.write(w, "value", &ty, value);
        }
        Event::Parameter { key, value, initial } => {
            let (ty, name) = split_key(key);
            w.str(Some("kind"), if *initial { "param" } else { "param_changed" });
            if !*initial {
                w.uint(Some("timestamp"), last);
            }
            w.str(Some("name"), &name);
            w.str(Some("type"), &ty);
            values.write(w, "value", &ty, value);
        }
        Event::ParameterDefault { default_types, key, value } => {
            let (ty, name) = split_key(key);
            w.str(Some("kind"), "param_default");
            w.uint(Some("default_types"), u64::from(*default_types));
            w.str(Some("name"), &name);
            w.str(Some("type"), &ty);
            values.write(w, "value", &ty, value);
        }
        Event::Unsubscription { msg_id } => {
            w.str(Some("kind"), "unsubscription");
            w.uint(Some("msg_id"), u64::from(*msg_id));
        }
        Event::Data { msg_id, subscription: Some(s), payload } => {
            let Ok(d) = &s.decoder else { return Ok(false) };
            if d.data(payload).is_err() {
                // Reported by `problem`.
                return Ok(false);
            }
            w.str(Some("kind"), "data");
            w.uint(Some("msg_id"), u64::from(*msg_id));
            w.str(Some("name"), &s.name);
            w.uint(Some("multi_id"), u64::from(s.multi_id));
            w.uint(Some("timestamp"), d.timestamp(payload).unwrap_or(last));
            d.visit_as(payload, Some("data"), w)
                .map_err(|e| format!("Data message of `{}` (msg_id {msg_id}): {e}", s.name))?;
        }
        Event::Logging { level, tag, timestamp, message } => {
            w.str(Some("kind"), if tag.is_some() { "logging_tagged" } else { "logging" });
            if let Some(t) = tag {
                w.uint(Some("tag"), u64::from(*t));
            }
            w.uint(Some("timestamp"), *timestamp);
            w.uint(Some("level"), u64::from(*level));
            w.str(Some("message"), &text(message));
        }
        Event::Sync => w.str(Some("kind"), "sync"),
        Event::Dropout { duration_ms } => {
            w.str(Some("kind"), "dropout");
            w.uint(Some("timestamp"), last);
            w.uint(Some("duration_ms"), u64::from(*duration_ms));
        }
        Event::Unknown { msg_type, payload } => {
            w.str(Some("kind"), "unknown");
            w.uint(Some("msg_type"), u64::from(*msg_type));
            w.uint(Some("size"), payload.len() as u64);
        }
        Event::Data { subscription: None, .. }
        | Event::Format(Err(_))
        | Event::Invalid { .. }
        | Event::Resynced { .. } => {
            return Ok(false);
        }
    }
    w.end_struct();
    Ok(true)
}

/// The line of a Format or Subscription message.
fn write_definition(w: &mut (impl ValueSink + ?Sized), m: &Message<'_>) -> bool {
    match &m.event {
        Event::Format(Ok(f)) => {
            w.str(Some("kind"), "format");
            w.str(Some("name"), &f.name);
            write_fields(w, f);
        }
        Event::Subscription(s) => {
            w.str(Some("kind"), "subscription");
            w.uint(Some("msg_id"), u64::from(s.msg_id));
            w.str(Some("name"), &s.name);
            w.uint(Some("multi_id"), u64::from(s.multi_id));
            w.str(Some("channel"), &channel_name(&s.name, s.multi_id));
        }
        _ => return false,
    }
    w.end_struct();
    true
}

/// The format's fields as the dump shows them: `[type, array length (0: none), name]`.
fn write_fields(w: &mut (impl ValueSink + ?Sized), f: &logspec_ir::ulog::UFormat) {
    w.begin_array(Some("fields"), f.fields.len());
    for x in &f.fields {
        w.begin_array(None, 3);
        w.str(None, &x.type_name);
        w.uint(None, u64::from(x.array.unwrap_or(0)));
        w.str(None, &x.name);
        w.end_array();
    }
    w.end_array();
}

/// The channel of a subscription: its JSON Schema and IR type from the lowered format.
fn channel(s: &Subscribed, d: &Decoder) -> Channel {
    let ty = ValueType { schema: Arc::new(d.lowered.schema.clone()), id: d.lowered.root };
    Channel {
        name: channel_name(&s.name, s.multi_id),
        schema_name: s.name.clone(),
        json_schema: JsonSchema::Struct { ty: ty.clone(), enum_names: false, list: None },
        units: BTreeMap::new(),
        ros1: None,
        ty: Some(ty),
        group: None,
    }
}

/// The samples of a ULog file: one channel per subscription. With a `range` (chunks of the
/// time index, and the state messages before it), only the messages that start in it; without,
/// every message, and the chunks and state messages of the time index are noted
/// ([`super::Outcome::index`]).
pub(super) fn scan(
    input: Source,
    path: &str,
    range: Option<(Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    match input {
        Source::Mapped(map) => scan_in(Walk::open(Reader::from_window(map.window()), path)?, path, range, state),
        Source::Stream(s) => scan_in(Walk::open(Reader::new(s), path)?, path, range, state),
    }
}

/// Whether a reader may start at a message (a chunk of the time index may start there): one
/// that reads as what it says it is, not a corrupted region, a message of an unknown type or
/// one that does not fit, nor a Data message of no subscription or of the wrong size.
fn boundary(e: &Event<'_>) -> bool {
    match e {
        Event::Resynced { .. } | Event::Invalid { .. } | Event::Unknown { .. } | Event::Format(Err(_)) => false,
        Event::Data { subscription: Some(s), payload, .. } => s.decoder.as_ref().is_ok_and(|d| d.data(payload).is_ok()),
        Event::Data { subscription: None, .. } => false,
        _ => true,
    }
}

/// Whether a message sets the reader's state for the time index: the flag bits (the
/// appended-data offsets), a format, a subscription or an unsubscription.
fn sets_state(e: &Event<'_>) -> bool {
    matches!(e, Event::FlagBits(_) | Event::Format(_) | Event::Subscription(_) | Event::Unsubscription { .. })
}

/// The time of a Data message of subscription `s` (its `timestamp` field, or the latest time
/// before it), the latest time `last` raised to it; `None` for a format that did not compile.
#[inline]
fn data_time(s: &Subscribed, payload: &[u8], last: &mut u64) -> Option<u64> {
    let d = s.decoder.as_ref().ok()?;
    let t_us = d.timestamp(payload).unwrap_or(*last);
    *last = (*last).max(t_us);
    Some(t_us)
}

/// Moves the reader to `range`'s start with the state a reader from the log's start has there
/// ([`index::start_at`]): the state messages before it (`states`, from the time index: formats,
/// subscriptions, unsubscriptions, the flag bits, and the Data messages that set the latest time
/// `last`) read first. A state message that is not one is a wrong index.
fn start_at<R, I: Input>(
    reader: &mut Reader<R, I>,
    last: &mut u64,
    range: Range,
    states: &[u64],
    path: &str,
    state: &mut State<'_>,
) -> Result<(), Fault> {
    let take = |m: &Message<'_>| match &m.event {
        Event::Subscription(s) => {
            state.tally.channel(&channel_name(&s.name, s.multi_id));
            true
        }
        Event::Data { subscription: Some(s), payload, .. } => {
            s.decoder.as_ref().is_ok_and(|d| d.timestamp(payload).is_some()) && data_time(s, payload, last).is_some()
        }
        e => sets_state(e),
    };
    let what = "not a format, subscription, unsubscription, flag bits or timed Data message";
    index::start_at(&mut Restarting { reader, take }, range, states, path, what).map(drop)
}

fn scan_in<R, I: Input>(
    mut walk: Walk<R, I>,
    path: &str,
    range: Option<(Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let origin = walk.reader.header().timestamp.saturating_mul(1000);
    state.origin_ns = origin;
    state.sink.origin(origin);
    let Walk { reader, last, .. } = &mut walk;
    let first = reader.position();
    let (mut marks, end) = match &range {
        None => (Some(Marks::default()), u64::MAX),
        Some((r, states)) => {
            // Nothing read yet: the wrong index is the scan's error (a fault, as a log that
            // does not open).
            start_at(reader, last, *r, states, path, state).map_err(Error::at)?;
            (None, r.end)
        }
    };
    // Where the reading stopped: the range's end, the end of the input, or a fault (`None`).
    let mut checked = range.as_ref().is_none_or(|(r, _)| r.start == first);
    let stopped = loop {
        if reader.position() >= end {
            break Some(reader.position());
        }
        let m = match reader.next_message() {
            None => break Some(reader.position()),
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                state.outcome.fail(Fault::read(path, &e));
                break None;
            }
        };
        if m.offset >= end {
            break Some(m.offset);
        }
        if !checked {
            // A chunk starts at a message a reader may start at.
            if !boundary(&m.event) {
                return Err(Error::at(wrong(path, m.offset, "no message a chunk may start at starts there")));
            }
            checked = true;
        }
        if let Some((k, f)) = problem(path, &m) {
            state.warn(k, || f.message);
        }
        let raised = *last;
        let timed = match &m.event {
            Event::Data { subscription: Some(s), payload, .. } => data_time(s, payload, last),
            _ => None,
        };
        if let Some(marks) = marks.as_mut() {
            if sets_state(&m.event) {
                marks.state(m.offset);
            }
            let t_ns = timed.unwrap_or(*last).saturating_mul(1000).saturating_sub(origin);
            marks.record(m.offset, m.index, t_ns, boundary(&m.event));
            // After the record: a chunk it starts reads it, not as a state message.
            if *last > raised {
                marks.raised(m.offset);
            }
        }
        match &m.event {
            Event::Subscription(s) => state.tally.channel(&channel_name(&s.name, s.multi_id)),
            Event::Data { subscription: Some(s), payload, .. } => {
                let (Ok(d), Some(t_us)) = (&s.decoder, timed) else { continue };
                if d.data(payload).is_err() {
                    continue;
                }
                let t_ns = t_us.saturating_mul(1000);
                // Found by the subscription's serial once settled, with no name made.
                let tag = s.serial as u64;
                let id = match state.settled_tag(tag, t_ns) {
                    Some(id) => id,
                    None => state.wanted_tag(tag, &channel_name(&s.name, s.multi_id), t_ns, || channel(s, d))?,
                };
                let Some(id) = id else { continue };
                match d.check(payload) {
                    Ok(()) => {
                        state.sink.visit(id, t_ns, &DataValue { decoder: d, payload })?;
                        state.outcome.samples += 1;
                    }
                    Err(e) => state.warn(kind::UNDECODABLE, || {
                        format!(
                            "{path}: byte {}, message {}: Data message of `{}`: {e}; skipped",
                            m.offset, m.index, s.name
                        )
                    }),
                }
            }
            _ => {}
        }
    };
    let mut to_end = true;
    match (&range, stopped) {
        (None, Some(at)) => state.outcome.index = marks.and_then(|m| m.finish(at, origin)),
        (Some((r, _)), Some(at)) if at != r.end => {
            state.outcome.fail(super::index::ended_elsewhere(path, at, r.end));
        }
        // Whether the range ends with the log.
        (Some(_), Some(_)) => to_end = reader.next_message().is_none(),
        _ => {}
    }
    // The appended-data offsets behind the flag bits are told by the part that holds them (the
    // first); those never reached, by the part that reads to the end of the log.
    let from_start = range.as_ref().is_none_or(|(r, _)| r.start == first);
    state.outcome.warnings.extend(offset_notes(reader, path, from_start, to_end));
    Ok(())
}

/// The kinds of message `info` counts, by name in the order it prints them.
const KINDS: [&str; 17] = [
    "corrupted",
    "data",
    "dropout",
    "flag_bits",
    "format",
    "info",
    "info_multiple",
    "invalid",
    "logging",
    "logging_tagged",
    "param",
    "param_changed",
    "param_default",
    "subscription",
    "sync",
    "unknown",
    "unsubscription",
];

/// The index of a kind in [`KINDS`] (a constant: the compiler folds the search; a name not
/// there fails to compile).
const fn kind_at(name: &str) -> usize {
    let mut i = 0;
    while i < KINDS.len() {
        let (a, b) = (KINDS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a kind of ULog message")
}

/// What `info` counts.
#[derive(Default)]
struct Counts {
    messages: u64,
    /// Messages by kind, as [`KINDS`].
    by_kind: [u64; KINDS.len()],
    flags: Option<([u8; 8], [u8; 8], Vec<u64>)>,
    /// Per msg_id, as first subscribed: format, multi_id, Data messages (`subs[at[msg_id]]`).
    subs: Vec<(String, u8, u64)>,
    at: HashMap<u16, usize>,
    /// The entry of `subs` of each subscription, by [`Subscribed::serial`].
    of_serial: Vec<usize>,
    data: u64,
    t_min: Option<u64>,
    t_max: Option<u64>,
    dropout_ms: u64,
    info: Vec<(String, String)>,
    info_at: HashMap<String, usize>,
    formats: u64,
}

impl Counts {
    /// A Data message of subscription `s` that fits its format `d`, counted.
    #[inline]
    fn data(&mut self, s: &Subscribed, d: &Decoder, payload: &[u8]) {
        if let Some(t) = d.timestamp(payload) {
            self.t_min = Some(self.t_min.map_or(t, |x| x.min(t)));
            self.t_max = Some(self.t_max.map_or(t, |x| x.max(t)));
        }
        self.messages += 1;
        self.data += 1;
        if let Some(&e) = self.of_serial.get(s.serial) {
            self.subs[e].2 += 1;
        }
        self.by_kind[const { kind_at("data") }] += 1;
    }
}

/// The summary of a ULog file.
pub(super) fn info(input: Source, path: &str, name: &str) -> Result<super::Info, Error> {
    match input {
        Source::Mapped(map) => info_in(Walk::open(Reader::from_window(map.window()), path)?, path, name),
        Source::Stream(s) => info_in(Walk::open(Reader::new(s), path)?, path, name),
    }
}

fn info_in<R, I: Input>(mut walk: Walk<R, I>, path: &str, name: &str) -> Result<super::Info, Error> {
    let header = (walk.reader.header().version, walk.reader.header().timestamp);
    let mut c = Counts::default();
    let mut errors: Vec<String> = Vec::new();
    let mut values = Values::default();
    let Walk { reader, faults, .. } = &mut walk;
    let end = loop {
        // The plain Data messages ahead, counted from their headers and timestamps, without a
        // look at their fields; then the next message of any other kind.
        reader.data_run(|s, d, payload| c.data(s, d, payload));
        let m = match reader.next_message() {
            None => break None,
            Some(Ok(m)) => m,
            Some(Err(e)) => break Some(e),
        };
        // One the run did not take (appended-data offsets lie ahead).
        if let Event::Data { subscription: Some(s), payload, .. } = &m.event {
            if let Ok(d) = &s.decoder {
                if d.data(payload).is_ok() {
                    c.data(s, d, payload);
                    continue;
                }
            }
        }
        c.messages += 1;
        if let Some((k, f)) = problem(path, &m) {
            if let Some(msg) = faults.note(k, || f.message) {
                errors.push(msg);
            }
        }
        let k = match &m.event {
            Event::FlagBits(b) => {
                let offsets = b.appended_offsets.iter().filter(|o| *o != 0).collect();
                c.flags = Some((b.compat_flags.to_array(), b.incompat_flags.to_array(), offsets));
                const { kind_at("flag_bits") }
            }
            Event::Format(_) => {
                c.formats += 1;
                const { kind_at("format") }
            }
            Event::Info { key, value } => {
                let (ty, key) = split_key(key);
                let mut w = JsonWriter::new();
                w.begin_struct(None);
                values.write(&mut w, "v", &ty, value);
                w.end_struct();
                // A repeated key keeps its place and takes the last value.
                match c.info_at.get(&key) {
                    Some(&i) => c.info[i].1 = w.take(),
                    None => {
                        c.info_at.insert(key.clone(), c.info.len());
                        c.info.push((key, w.take()));
                    }
                }
                const { kind_at("info") }
            }
            Event::InfoMultiple { .. } => const { kind_at("info_multiple") },
            Event::Parameter { initial: true, .. } => const { kind_at("param") },
            Event::Parameter { initial: false, .. } => const { kind_at("param_changed") },
            Event::ParameterDefault { .. } => const { kind_at("param_default") },
            Event::Subscription(s) => {
                // A msg_id subscribed again keeps its first entry.
                let e = *c.at.entry(s.msg_id).or_insert_with(|| {
                    c.subs.push((s.name.clone(), s.multi_id, 0));
                    c.subs.len() - 1
                });
                if c.of_serial.len() <= s.serial {
                    c.of_serial.resize(s.serial + 1, e);
                }
                c.of_serial[s.serial] = e;
                const { kind_at("subscription") }
            }
            Event::Unsubscription { .. } => const { kind_at("unsubscription") },
            // Those that fit their format were counted above.
            Event::Data { .. } => const { kind_at("data") },
            Event::Logging { tag: None, .. } => const { kind_at("logging") },
            Event::Logging { tag: Some(_), .. } => const { kind_at("logging_tagged") },
            Event::Sync => const { kind_at("sync") },
            Event::Dropout { duration_ms } => {
                c.dropout_ms += u64::from(*duration_ms);
                const { kind_at("dropout") }
            }
            Event::Unknown { .. } => const { kind_at("unknown") },
            Event::Invalid { .. } => const { kind_at("invalid") },
            Event::Resynced { .. } => const { kind_at("corrupted") },
        };
        c.by_kind[k] += 1;
    };
    errors.extend(faults.more(path));
    let stop = end.as_ref().map(|e| Fault::read(path, e).message);
    let unreached: Vec<u64> = reader.unreached_offsets().to_vec();
    let behind = reader.bad_offsets.clone();
    let ok = stop.is_none() && faults.total() == 0;
    let count = |k: &str| KINDS.iter().position(|x| *x == k).map_or(0, |i| c.by_kind[i]);
    // JSON: the keys of the reference summaries where they say the same.
    let mut w = JsonWriter::new();
    w.begin_struct(None);
    w.str(Some("file"), name);
    w.str(Some("format"), "ulog");
    w.bool(Some("ok"), ok);
    match &stop {
        Some(s) => w.str(Some("error"), s),
        None => w.null(Some("error")),
    }
    w.uint(Some("version"), u64::from(header.0));
    w.uint(Some("header_timestamp"), header.1);
    let (compat, incompat, offsets) = c.flags.clone().unwrap_or(([0; 8], [0; 8], Vec::new()));
    w.uint(Some("compat_flags0"), u64::from(compat[0]));
    w.uint(Some("incompat_flags0"), u64::from(incompat[0]));
    w.begin_array(Some("appended_offsets"), offsets.len());
    for o in &offsets {
        w.uint(None, *o);
    }
    w.end_array();
    w.uint(Some("messages"), c.messages);
    w.uint(Some("formats"), c.formats);
    w.uint(Some("sync_messages"), count("sync"));
    w.uint(Some("data_messages"), c.data);
    opt(&mut w, "data_timestamp_min", c.t_min);
    opt(&mut w, "data_timestamp_max", c.t_max);
    w.begin_struct(Some("message_counts"));
    for (k, n) in KINDS.iter().zip(&c.by_kind).filter(|(_, n)| **n > 0) {
        w.uint(Some(k), *n);
    }
    w.end_struct();
    w.uint(Some("dropout_ms"), c.dropout_ms);
    w.begin_struct(Some("messages_per_subscription"));
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for (name, multi, n) in &c.subs {
        *per.entry(format!("{name}[{multi}]")).or_default() += n;
    }
    for (k, n) in &per {
        w.uint(Some(k), *n);
    }
    w.end_struct();
    w.begin_struct(Some("info"));
    for (k, v) in &c.info {
        w.raw(Some(k), v.strip_prefix("{\"v\":").and_then(|v| v.strip_suffix('}')).unwrap_or("null"));
    }
    w.end_struct();
    w.begin_array(Some("unreached_appended_offsets"), unreached.len());
    for o in &unreached {
        w.uint(None, *o);
    }
    w.end_array();
    w.begin_array(Some("errors"), errors.len());
    for e in &errors {
        w.str(None, e);
    }
    w.end_array();
    w.end_struct();
    let mut json = w.take();
    json.push('\n');
    // Text.
    let mut t = String::new();
    let mut line = |k: &str, v: String| t.push_str(&format!("{k:<13}{v}\n"));
    line("file:", path.to_string());
    line("format:", format!("PX4 ULog, version {}", header.0));
    line("start:", format!("{} us", header.1));
    if let (Some(a), Some(z)) = (c.t_min, c.t_max) {
        line("time:", format!("{:.3} .. {:.3} s ({:.3} s)", a as f64 / 1e6, z as f64 / 1e6, (z - a) as f64 / 1e6));
    }
    line("messages:", format!("{} ({} data)", c.messages, c.data));
    line("flags:", format!("compat {:#04x}, incompat {:#04x}, appended offsets {:?}", compat[0], incompat[0], offsets));
    line(
        "contents:",
        format!(
            "{} formats, {} info, {} info_multiple, {} params ({} changed, {} defaults), {} logged strings ({} tagged), {} sync",
            c.formats,
            count("info"),
            count("info_multiple"),
            count("param"),
            count("param_changed"),
            count("param_default"),
            count("logging"),
            count("logging_tagged"),
            count("sync")
        ),
    );
    if count("dropout") > 0 {
        line("dropouts:", format!("{} ({} ms in all)", count("dropout"), c.dropout_ms));
    }
    let width = per.keys().map(|k| k.len()).max().unwrap_or(0);
    for (i, (k, n)) in per.iter().enumerate() {
        line(if i == 0 { "channels:" } else { "" }, format!("{k:<width$} {n}"));
    }
    for e in &errors {
        line("integrity:", e.clone());
    }
    for o in &unreached {
        line("integrity:", format!("appended-data offset {o} lies past the end of the file; ignored"));
    }
    for o in &behind {
        line("integrity:", format!("appended-data offset {o} lies behind the flag bits or an earlier offset; ignored"));
    }
    if let Some(s) = &stop {
        line("integrity:", s.clone());
    }
    Ok(super::Info::written(t, json, ok))
}

fn opt(w: &mut JsonWriter, name: &str, v: Option<u64>) {
    match v {
        Some(x) => w.uint(Some(name), x),
        None => w.null(Some(name)),
    }
}
