//! ArduPilot DataFlash (`.bin`): `info`, `dump` and `scan` over
//! [`crate::formats::dataflash::Reader`].
//!
//! - Channels: one per message name (`ATT`, `GPS`), or per instance where FMTU marks an
//!   instance column (`IMU`, `IMU.1`, as ULog names instances); the values are the message's columns, with the units
//!   FMTU, UNIT and MULT give. Time is the `TimeUS` column (or `TimeMS`), from boot; a message
//!   without one takes the latest time before it.
//! - Dump: one line per message in file order (`docs/output.md`): `{"kind":"msg","ofs":..,
//!   "type":..,"id":..,"data":{..}}`, FMT, FMTU, UNIT, MULT and PARM included.
//! - Damage: bytes that are not a message of a known id (garbage, erased flash, a message
//!   before its FMT) are skipped to the next header of a known id and reported with their
//!   offset and length; a FMT with a wrong length or labels is reported and its layout used; a
//!   last message cut by the end of the file is reported with its offset, after every complete
//!   message.
//! - Time index (`super::index::Marks`): a whole scan notes chunks at messages and the state
//!   messages (FMT, FMTU, UNIT, MULT, the messages that set the latest time); a scan of a range
//!   reads those, then the range's messages.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::formats::dataflash::{Decoder, Event, Fmt, Message, ReadError, Reader, Record};
use crate::json::JsonWriter;
use crate::runtime::Visitor;
use crate::runtime::{Endian, Fixed, Input};
use crate::value::ValueSink;

use super::fault::{Fault, Faults, Locate};
use super::index::{self, wrong, Marks, Range, Restarting};
use super::input::Source;
use super::records::Records;
use super::scan::{units_of, Channel, JsonSchema, State, ValueType};
use super::{Error, Select};

/// The problems a DataFlash reading counts.
mod kind {
    pub const SKIPPED: &str = "regions of bytes that are not messages, skipped to the next message header";
    pub const BAD_FORMAT: &str = "FMT messages that are wrong";
    pub const MENDED: &str = "FMT messages whose length or labels were mended";
}

impl Locate for ReadError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn record(&self) -> Option<u64> {
        self.index
    }
}

/// The channel of a message: its name, with `.N` for instance N > 0 where FMTU marks an
/// instance column (as ULog names its multi-instance topics).
pub fn channel_name<'a>(d: &'a Decoder, body: &[u8]) -> Cow<'a, str> {
    match d.instance(body) {
        Some(i) if i > 0 => Cow::Owned(format!("{}.{i}", d.name())),
        _ => Cow::Borrowed(d.name()),
    }
}

/// What a problem was, for the fault.
fn problem(path: &str, m: &Message<'_>) -> Option<(&'static str, Fault)> {
    let at = |msg: String| {
        Fault::at(path, m.offset, Some(m.index), format!("{path}: byte {}, message {}: {msg}", m.offset, m.index))
    };
    Some(match &m.event {
        Event::Skipped { len } => (
            kind::SKIPPED,
            at(format!(
                "{len} bytes that are not a message of a known id (no A3 95 header, or an id no FMT defined); skipped"
            )),
        ),
        Event::Message { problem: Some(p), .. } if p.unreadable => (kind::BAD_FORMAT, at(p.message.clone())),
        _ => return None,
    })
}

/// A FMT whose length or labels were mended: a note, which does not fail the reading (the
/// layout of its format characters is used).
fn note(path: &str, m: &Message<'_>) -> Option<Fault> {
    match &m.event {
        Event::Message { problem: Some(p), .. } if !p.unreadable => Some(Fault::at(
            path,
            m.offset,
            Some(m.index),
            format!("{path}: byte {}, message {}: {}", m.offset, m.index, p.message),
        )),
        _ => None,
    }
}

/// Writes a message's line.
fn write(w: &mut (impl ValueSink + ?Sized), m: &Message<'_>) -> Result<bool, String> {
    let Event::Message { id, decoder, body, .. } = &m.event else { return Ok(false) };
    w.begin_struct(None);
    w.str(Some("kind"), "msg");
    w.uint(Some("ofs"), m.offset);
    w.str(Some("type"), decoder.name());
    w.uint(Some("id"), u64::from(*id));
    decoder.visit_as(body, Some("data"), w)?;
    w.end_struct();
    Ok(true)
}

/// The records of a DataFlash log as the dump writes them.
pub(super) fn records<R: Records>(input: Source, path: &str, select: &Select, out: &mut R) -> Result<(), Error> {
    // A mapped file is read in place, a window at a time; anything else through a buffer.
    match input {
        Source::Mapped(map) => records_in(Reader::from_window(map.window()), path, select, out),
        Source::Stream(s) => records_in(Reader::new(s), path, select, out),
    }
}

fn records_in<Rd, I: Input, R: Records>(
    mut reader: Reader<Rd, I>,
    path: &str,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let mut faults = Faults::default();
    let mut noted = Faults::default();
    let filtering = super::filter::Tally::needed(select);
    let mut tally = super::filter::Tally::default();
    let mut last = 0u64;
    let end = loop {
        let Some(m) = reader.next_message() else { break None };
        let m = match m {
            Ok(m) => m,
            Err(e) => break Some(e),
        };
        if let Some((k, f)) = problem(path, &m) {
            super::records::skip(out, &mut faults, k, || f);
        }
        if let Some(f) = note(path, &m) {
            if let Some(f) = noted.note(kind::MENDED, || f) {
                out.warn(f);
            }
        }
        if filtering {
            let Event::Message { decoder, body, .. } = &m.event else { continue };
            let t = decoder.time_us(body).unwrap_or(last);
            last = last.max(t);
            if !tally.note(select, &channel_name(decoder, body), Some(t.saturating_mul(1000))) {
                continue;
            }
        }
        match write(out.writer(), &m) {
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
                super::records::skip(out, &mut faults, kind::BAD_FORMAT, fault);
            }
        }
    };
    for n in noted.more(path) {
        out.warn(Fault::new(super::fault::FaultKind::Decode, path, n));
    }
    if let Some(e) = end {
        return Err(Error::at(Fault::read(path, &e)));
    }
    super::records::skipped(out, &faults, path, "problem(s) were skipped")?;
    if filtering {
        tally.check(select, path).map_err(|m| Error::filter(path, m))?;
    }
    Ok(())
}

/// The channel of a message: its JSON Schema, IR type and units from the lowered FMT.
fn channel(name: String, d: &Decoder) -> Channel {
    let schema = Arc::new(d.values().clone());
    let mut units = BTreeMap::new();
    units_of(&schema, &schema.strukt(d.root()).fields, "", &mut units);
    let ty = ValueType { schema, id: d.root() };
    Channel {
        name,
        schema_name: d.name().to_string(),
        json_schema: JsonSchema::Struct { ty: ty.clone(), enum_names: false, list: None },
        units,
        ros1: None,
        ty: Some(ty),
        group: None,
    }
}

/// The samples of a DataFlash log: one channel per message name (and instance). With a `range`
/// (chunks of the time index, and the state messages before it), only the messages that start
/// in it; without, every message, and the chunks and state messages of the time index are
/// noted ([`super::Outcome::index`]).
pub(super) fn scan(
    input: Source,
    path: &str,
    range: Option<(Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    match input {
        Source::Mapped(map) => scan_in(Reader::from_window(map.window()), path, range, state),
        Source::Stream(s) => scan_in(Reader::new(s), path, range, state),
    }
}

/// Whether a message sets the reader's state for the time index: a FMT, or a UNIT, MULT or
/// FMTU message (found by name, as the reader finds them).
fn sets_state(e: &Event<'_>) -> bool {
    matches!(e, Event::Message { id, decoder, .. }
        if *id == logspec_ir::dataflash::FMT_ID || matches!(decoder.name(), "UNIT" | "MULT" | "FMTU"))
}

/// The time of a message (its `TimeUS` or `TimeMS` column, or the latest time before it), the
/// latest time `last` raised to it.
#[inline]
fn time_us(decoder: &Decoder, body: &[u8], last: &mut u64) -> u64 {
    let t_us = decoder.time_us(body).unwrap_or(*last);
    *last = (*last).max(t_us);
    t_us
}

/// Moves the reader to `range`'s start with the state a reader from the log's start has there
/// ([`index::start_at`]): the state messages before it (`states`, from the time index: FMT,
/// UNIT, MULT, FMTU, and the messages that set the latest time `last`) read first. A state
/// message that is not one is a wrong index.
fn start_at<R, I: Input>(
    reader: &mut Reader<R, I>,
    last: &mut u64,
    range: Range,
    states: &[u64],
    path: &str,
) -> Result<(), Fault> {
    let take = |m: &Message<'_>| match &m.event {
        Event::Message { decoder, body, .. } => {
            let timed = decoder.time_us(body).is_some();
            time_us(decoder, body, last);
            timed || sets_state(&m.event)
        }
        Event::Skipped { .. } => false,
    };
    let what = "not a FMT, UNIT, MULT, FMTU or timed message";
    index::start_at(&mut Restarting { reader, take }, range, states, path, what).map(drop)
}

fn scan_in<R, I: Input>(
    mut reader: Reader<R, I>,
    path: &str,
    range: Option<(Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    state.origin_ns = 0;
    state.sink.origin(0);
    let mut last = 0u64;
    let (mut marks, end) = match &range {
        None => (Some(Marks::default()), u64::MAX),
        Some((r, states)) => {
            // Nothing read yet: the wrong index is the scan's error.
            start_at(&mut reader, &mut last, *r, states, path).map_err(Error::at)?;
            (None, r.end)
        }
    };
    let mut checked = range.as_ref().is_none_or(|(r, _)| r.start == 0);
    // Where the reading stopped: the range's end, the end of the input, or a fault (`None`).
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
        let boundary = matches!(m.event, Event::Message { .. });
        if !checked {
            // A chunk starts at a message, not at bytes skipped.
            if !boundary {
                return Err(Error::at(wrong(path, m.offset, "no message starts there")));
            }
            checked = true;
        }
        if let Some((k, f)) = problem(path, &m) {
            state.warn(k, || f.message);
        }
        if let Some(f) = note(path, &m) {
            state.warn(kind::MENDED, || f.message);
        }
        let raised = last;
        let t_us = match &m.event {
            Event::Message { decoder, body, .. } => time_us(decoder, body, &mut last),
            Event::Skipped { .. } => last,
        };
        if let Some(marks) = marks.as_mut() {
            if sets_state(&m.event) {
                marks.state(m.offset);
            }
            marks.record(m.offset, m.index, t_us.saturating_mul(1000), boundary);
            // After the record: a chunk it starts reads it, not as a state message.
            if last > raised {
                marks.raised(m.offset);
            }
        }
        let Event::Message { decoder, body, .. } = &m.event else { continue };
        let name = channel_name(decoder, body);
        let t_ns = t_us.saturating_mul(1000);
        let d: &Decoder = decoder;
        let Some(id) = state.wanted(&name, t_ns, || channel(name.to_string(), d))? else { continue };
        match d.check(body) {
            Ok(()) => {
                state.sink.visit(id, t_ns, &Record { decoder: d, body })?;
                state.outcome.samples += 1;
            }
            Err(e) => state.warn(kind::BAD_FORMAT, || {
                format!("{path}: byte {}, message {}: `{}`: {e}; skipped", m.offset, m.index, d.name())
            }),
        }
    };
    match (&range, stopped) {
        (None, Some(at)) => state.outcome.index = marks.and_then(|m| m.finish(at, 0)),
        (Some((r, _)), Some(at)) if at != r.end => {
            state.outcome.fail(super::index::ended_elsewhere(path, at, r.end));
        }
        _ => {}
    }
    Ok(())
}

/// The summary of a DataFlash log.
pub(super) fn info(input: Source, path: &str, name: &str) -> Result<super::Info, Error> {
    match input {
        Source::Mapped(map) => info_in(Reader::from_window(map.window()), path, name),
        Source::Stream(s) => info_in(Reader::new(s), path, name),
    }
}

fn info_in<R, I: Input>(mut reader: Reader<R, I>, path: &str, name: &str) -> Result<super::Info, Error> {
    let mut faults = Faults::default();
    let mut errors: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut noted = Faults::default();
    let mut messages = 0u64;
    let mut per_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut fmt_ids: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut t_min, mut t_max): (Option<u64>, Option<u64>) = (None, None);
    let (mut skipped, mut skipped_bytes) = (0u64, 0u64);
    let end = loop {
        let m = match reader.next_message() {
            None => break None,
            Some(Ok(m)) => m,
            Some(Err(e)) => break Some(e),
        };
        if let Some((k, f)) = problem(path, &m) {
            if let Some(msg) = faults.note(k, || f.message) {
                errors.push(msg);
            }
        }
        if let Some(f) = note(path, &m) {
            if let Some(msg) = noted.note(kind::MENDED, || f.message) {
                notes.push(msg);
            }
        }
        match &m.event {
            Event::Skipped { len } => {
                skipped += 1;
                skipped_bytes += len;
            }
            Event::Message { id, decoder, body, .. } => {
                messages += 1;
                *per_type.entry(decoder.name().to_string()).or_default() += 1;
                if *id == logspec_ir::dataflash::FMT_ID {
                    // The id a FMT defines, by the schema's FMT record.
                    if let Ok(f) = Fmt::decode_fixed(body, Endian::Little) {
                        *fmt_ids.entry(u64::from(f.msg_type)).or_default() += 1;
                    }
                }
                if let Some(t) = decoder.time_us_column(body) {
                    t_min = Some(t_min.map_or(t, |x| x.min(t)));
                    t_max = Some(t_max.map_or(t, |x| x.max(t)));
                }
            }
        }
    };
    errors.extend(faults.more(path));
    notes.extend(noted.more(path));
    let end_offset = end.as_ref().map_or(reader.position(), |e| e.offset);
    let stop = end.as_ref().map(|e| Fault::read(path, e).message);
    let ok = stop.is_none() && faults.total() == 0;
    let count = |k: &str| per_type.get(k).copied().unwrap_or(0);
    let redefined: Vec<u64> = fmt_ids.iter().filter(|(_, n)| **n > 1).map(|(t, _)| *t).collect();
    let mut units: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in reader.entries() {
        if let (Some(_), Ok(d)) = (&e.unit_ids, &e.decoder) {
            let s = d.values().strukt(d.root());
            units.insert(e.format.name.clone(), s.fields.iter().map(|f| f.unit.clone().unwrap_or_default()).collect());
        }
    }
    let mut w = JsonWriter::new();
    w.begin_struct(None);
    w.str(Some("file"), name);
    w.str(Some("format"), "dataflash");
    w.bool(Some("ok"), ok);
    match &stop {
        Some(s) => w.str(Some("error"), s),
        None => w.null(Some("error")),
    }
    w.uint(Some("messages"), messages);
    w.uint(Some("fmt_messages"), count("FMT"));
    w.uint(Some("types_defined"), fmt_ids.len() as u64);
    w.begin_array(Some("types_redefined"), redefined.len());
    for t in &redefined {
        w.uint(None, *t);
    }
    w.end_array();
    for (k, n) in
        [("unit_messages", "UNIT"), ("mult_messages", "MULT"), ("fmtu_messages", "FMTU"), ("parm_messages", "PARM")]
    {
        w.uint(Some(k), count(n));
    }
    opt(&mut w, "timeus_min", t_min);
    opt(&mut w, "timeus_max", t_max);
    w.uint(Some("end_offset"), end_offset);
    w.uint(Some("skipped_regions"), skipped);
    w.uint(Some("skipped_bytes"), skipped_bytes);
    w.begin_struct(Some("messages_per_type"));
    for (k, n) in &per_type {
        w.uint(Some(k), *n);
    }
    w.end_struct();
    w.begin_struct(Some("units"));
    for (k, us) in &units {
        w.begin_array(Some(k), us.len());
        for u in us {
            w.str(None, u);
        }
        w.end_array();
    }
    w.end_struct();
    w.begin_array(Some("errors"), errors.len());
    for e in &errors {
        w.str(None, e);
    }
    w.end_array();
    w.begin_array(Some("notes"), notes.len());
    for n in &notes {
        w.str(None, n);
    }
    w.end_array();
    w.end_struct();
    let mut json = w.take();
    json.push('\n');
    let mut t = String::new();
    let mut line = |k: &str, v: String| t.push_str(&format!("{k:<13}{v}\n"));
    line("file:", path.to_string());
    line("format:", "ArduPilot DataFlash".to_string());
    if let (Some(a), Some(z)) = (t_min, t_max) {
        line("time:", format!("{:.3} .. {:.3} s ({:.3} s)", a as f64 / 1e6, z as f64 / 1e6, (z - a) as f64 / 1e6));
    }
    line(
        "messages:",
        format!(
            "{messages} ({} FMT for {} ids, {} FMTU, {} UNIT, {} MULT, {} PARM)",
            count("FMT"),
            fmt_ids.len(),
            count("FMTU"),
            count("UNIT"),
            count("MULT"),
            count("PARM")
        ),
    );
    let width = per_type.keys().map(|k| k.len()).max().unwrap_or(0);
    for (i, (k, n)) in per_type.iter().enumerate() {
        line(if i == 0 { "types:" } else { "" }, format!("{k:<width$} {n}"));
    }
    if skipped > 0 {
        line("integrity:", format!("{skipped} regions of bytes that are not messages ({skipped_bytes} bytes) skipped"));
    }
    for e in &errors {
        line("integrity:", e.clone());
    }
    for n in &notes {
        line("note:", n.clone());
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
