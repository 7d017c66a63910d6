//! A log of a TOML schema's own framing (`--schema FILE`, or a schema of the project), read
//! through the IR interpreter ([`super::framed`]): no code generation.

use std::sync::Arc;

use crate::json::{FrameFields, JsonWriter};

use super::fault::{kind, Fault};
use super::framed::{SchemaError, SchemaFormat, SchemaReader};
use super::info::{json, text, Form, Info, Summary, Tally};
use super::input::Source;
use super::records::{FrameNames, Records, Skips};
use super::scan::{record_channel, unknown_record, State};
use super::{Error, Select};
use crate::runtime::Input;

/// The samples of a schema's log: one channel per record type.
pub(super) fn scan(format: &Arc<SchemaFormat>, input: Source, path: &str, state: &mut State<'_>) -> Result<(), Error> {
    let opened = |e: SchemaError| Error::at(Fault::read(path, &e));
    match input {
        Source::Mapped(map) => read_schema(format.read_window(map.window()).map_err(opened)?, path, state),
        Source::Stream(s) => read_schema(format.read(s).map_err(opened)?, path, state),
    }
}

/// The records of a schema's log as the dump writes them.
pub(super) fn records<R: Records>(
    format: &Arc<SchemaFormat>,
    input: Source,
    path: &str,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let opened = |e: SchemaError| Error::at(Fault::read(path, &e));
    match input {
        Source::Mapped(map) => dump_schema(format.read_window(map.window()).map_err(opened)?, out, path, select),
        Source::Stream(s) => dump_schema(format.read(s).map_err(opened)?, out, path, select),
    }
}

/// The summary of a schema's log.
pub(super) fn info(format: &Arc<SchemaFormat>, input: Source, path: &str) -> Result<Info, Error> {
    let opened = |e: SchemaError| Error::at(Fault::read(path, &e));
    let s = match input {
        Source::Mapped(map) => summarise_schema(format, format.read_window(map.window()).map_err(opened)?),
        Source::Stream(s) => summarise_schema(format, format.read(s).map_err(opened)?),
    };
    let (format, path) = (Arc::clone(format), path.to_string());
    Ok(Info::new(s.ok(), move |form| match form {
        Form::Text => text(&s, format.title(), &path, super::framed::timestamp_scale(format.schema())),
        Form::Json => json(&s, format.name(), &path),
    }))
}

/// Reads a log of a schema's own framing through the IR interpreter. Channels are described by
/// the schema of the file's layout (an older one from the lock when the file says so), so each
/// record's payload is in the layout of its channel's type.
fn read_schema<R, I: Input>(mut reader: SchemaReader<R, I>, path: &str, state: &mut State<'_>) -> Result<(), Error> {
    let schema = Arc::clone(reader.schema());
    let ns_per_tick = reader.ns_per_tick();
    // Each record matched where `next_record` put it (see [`summarise_schema`]).
    loop {
        match &reader.next_record() {
            None => break,
            Some(Ok(rec)) => match &rec.value {
                // A record type the selection leaves out, once settled: not named.
                Some(_) if state.skips_tag(rec.header.tag) => {}
                Some(value) => {
                    let name = value.name();
                    let t_ns = rec.header.timestamp.unwrap_or(rec.index).saturating_mul(ns_per_tick);
                    let describe = || record_channel(&schema, name);
                    state.deliver_record(rec.header.tag, name, t_ns, rec.payload, value, describe)?;
                }
                None => state.warn(kind::UNKNOWN_TYPE, || unknown_record(path, rec.offset, rec.header.tag)),
            },
            Some(Err(e)) if e.is_recoverable() => state.warn(kind::UNDECODABLE, || format!("{path}: {e}; skipped")),
            Some(Err(e)) => {
                state.outcome.fail(super::fault::Fault::read(path, e));
                break;
            }
        }
    }
    Ok(())
}

/// Dumps a log of a schema's own framing, read through the IR interpreter: the lines and
/// messages of [`dump_framed`], with the header fields named by the schema.
fn dump_schema<R, I: Input>(
    mut reader: SchemaReader<R, I>,
    out: &mut impl Records,
    path: &str,
    select: &Select,
) -> Result<(), Error> {
    let ns_per_tick = reader.ns_per_tick();
    let names = FrameNames::of(reader.schema());
    let fields = FrameFields { tag: &names.tag, length: &names.length, timestamp: names.timestamp.as_deref() };
    let mut skips = Skips::new(select);
    // Each record matched where `next_record` put it (see [`summarise_schema`]).
    loop {
        match &reader.next_record() {
            None => break,
            Some(Ok(rec)) => {
                let name = rec.value.as_ref().map_or("", |v| v.name());
                let t_ns = rec.header.timestamp.map(|t| t.saturating_mul(ns_per_tick));
                if !skips.keeps(select, name, t_ns) {
                    continue;
                }
                let record = rec.value.as_ref().map(|v| (v.name(), v));
                crate::json::framed_record(out.writer(), &fields, &rec.header, rec.payload, record);
            }
            Some(Err(e)) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), e)?;
                continue;
            }
        }
        out.end_record().map_err(Error::Io)?;
    }
    skips.finish(out, select, path)
}

/// [`summarise`] of a log of a schema's own framing, read through the IR interpreter.
fn summarise_schema<R, I: Input>(format: &SchemaFormat, mut reader: SchemaReader<R, I>) -> Summary {
    let mut w = JsonWriter::new();
    reader.visit_header(&mut w);
    let mut s = Summary::new(w.take(), reader.schema_id(), format.schema_ids().first().copied());
    let mut t = Tally::new();
    // Each record matched where `next_record` put it, by reference: moved out of the `Option`
    // first, the whole result (176 bytes, the error's room included) was copied per record, a
    // third of the loop (BENCHMARKS.md, "A log of one's own schema").
    loop {
        match &reader.next_record() {
            None => break,
            Some(Ok(rec)) => {
                if !t.record(&rec.header, rec.value.is_some()) {
                    s.record(rec.header, rec.value.is_some(), || rec.value.as_ref().map(|v| v.name().to_string()));
                }
            }
            Some(Err(e)) if s.error(e, e.is_recoverable()) => {}
            Some(Err(_)) => break,
        }
    }
    s.bytes_consumed = reader.position();
    // The records of the file's layout (an older one from the lock when the file says so).
    let schema = reader.schema();
    s.settle(t, |tag| schema.records.iter().find(|r| r.id == tag).map(|r| r.name.clone()));
    s
}
