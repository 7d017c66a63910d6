//! `logspec dump` and `logspec info` for RLOG files and captured RLOG streams.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;

use super::info::Form;
use crate::formats::rlog::{self, net::FrameReader, EventRef, Reader, ReaderOptions, Revision};
use crate::json::JsonWriter;
use crate::runtime::{Input, Visitor};
use crate::value::ValueSink;

use super::fault::{kind, Fault, Faults};
use super::records::Records;
use std::sync::Arc;

use crate::ir::ir::{self, Schema, Ty, TypeDef, TypeId};

use super::filter::Select;
use super::input::Source;
use super::scan::{Channel, JsonSchema, State, ValueType};
use super::Error;

mod values;
pub(super) use values::value_bytes;

/// What runs over an RLOG reader of either kind ([`read`]).
pub(super) trait WithRlog {
    type Output;
    fn call<R, I: Input>(self, reader: Reader<R, I>) -> Self::Output;
}

/// Opens an RLOG reader over `input` and runs `job` over it: a mapped file is decoded in place,
/// a window at a time; anything else (and a captured stream, whose frames are taken apart
/// first) through a buffer.
pub(super) fn read<J: WithRlog>(
    input: Source,
    stream: bool,
    assume_r1: bool,
    path: &str,
    job: J,
) -> Result<J::Output, Error> {
    match input {
        Source::Mapped(map) if !stream => {
            let options = ReaderOptions { assume_revision: assume_r1.then_some(Revision::R1) };
            let r = Reader::from_window(map.window(), options).map_err(|e| Error::Input(format!("{path}: {e}")))?;
            Ok(job.call(r))
        }
        input => Ok(job.call(reader(input.into_read(), stream, assume_r1, path).map_err(Error::Input)?)),
    }
}

/// Opens an RLOG reader over a file (`stream = false`) or a captured stream of frames.
pub fn reader(
    input: Box<dyn Read>,
    stream: bool,
    assume_r1: bool,
    path: &str,
) -> Result<Reader<Box<dyn Read>>, String> {
    let input: Box<dyn Read> = if stream { Box::new(FrameReader::new(input)) } else { input };
    let options = ReaderOptions { assume_revision: assume_r1.then_some(Revision::R1) };
    Reader::with_options(input, options).map_err(|e| format!("{path}: {e}"))
}

/// One JSON object per value record: `{"t", "key", "type", "value"}`, and for struct and proto
/// values `decoded` or `decode_error`. Every value before an error is printed; a value that does
/// not decode as its declared type is reported and skipped.
pub fn dump<R, I: Input>(
    mut r: Reader<R, I>,
    out: &mut impl Records,
    path: &str,
    select: &super::filter::Select,
    structs: &mut super::structs::Decoder,
) -> Result<(), Error> {
    let mut faults = super::fault::Faults::default();
    let (filtering, mut tally) = (super::filter::Tally::needed(select), super::filter::Tally::default());
    // Every value through the reader's lending loop; a write error stops it.
    loop {
        let flow = r.try_for_each_event_ref(|ev| {
            let EventRef::Value { timestamp, key, value, .. } = ev else {
                return ControlFlow::Continue(());
            };
            let t_ns = super::scan::seconds_to_ns(timestamp);
            if filtering && !tally.note(select, key.map_or("", |k| k.name.as_str()), Some(t_ns)) {
                return ControlFlow::Continue(());
            }
            let value = value.to_value();
            let w = out.writer();
            w.begin_struct(None);
            w.f64(Some("t"), timestamp);
            match key {
                Some(k) => w.str(Some("key"), &k.name),
                None => w.null(Some("key")),
            }
            let type_name = value.type_name(key.and_then(|k| k.declared_type.as_deref()));
            w.str(Some("type"), type_name);
            rlog::write_value_sink(w, Some("value"), &value);
            if let Some(bytes) = super::structs::rlog_bytes(&value) {
                structs.write_json(w, key.map_or("", |k| k.name.as_str()), type_name, bytes);
            }
            w.end_struct();
            if let Err(e) = out.end_record() {
                return ControlFlow::Break(e);
            }
            structs.warnings_to(out);
            ControlFlow::Continue(())
        });
        match flow {
            Ok(ControlFlow::Continue(())) => break,
            Ok(ControlFlow::Break(e)) => return Err(Error::Io(e)),
            Err(e) if e.is_recoverable() => {
                super::records::skip(out, &mut faults, kind::UNDECODABLE_VALUE, || Fault::read(path, &e));
            }
            Err(e) => return Err(Error::at(Fault::read(path, &e))),
        }
    }
    super::records::skipped(out, &faults, path, "value(s) could not be decoded")?;
    tally.check(select, path).map_err(|m| Error::filter(path, m))?;
    Ok(())
}

/// Facts about an RLOG input, gathered in one pass.
pub struct Summary {
    pub revision: Revision,
    pub has_revision_byte: bool,
    pub cycles: u64,
    pub values: u64,
    pub keys_defined: u64,
    pub first_ts: Option<f64>,
    pub last_ts: Option<f64>,
    /// Timestamps not greater than the one before.
    pub non_monotonic: u64,
    /// Keys per type (R2 declared type, or R1 value code name of the key's first value).
    pub types: BTreeMap<String, u64>,
    pub bytes_consumed: u64,
    /// The first few problems of each kind, in full; all are counted in `faults`.
    pub errors: Vec<String>,
    pub faults: Faults,
}

fn summarise<R, I: Input>(mut r: Reader<R, I>) -> Summary {
    let mut s = Summary {
        revision: r.revision(),
        has_revision_byte: r.has_revision_byte(),
        cycles: 0,
        values: 0,
        keys_defined: 0,
        first_ts: None,
        last_ts: None,
        non_monotonic: 0,
        types: BTreeMap::new(),
        bytes_consumed: 0,
        errors: Vec::new(),
        faults: Faults::default(),
    };
    // Keys whose type was counted (R1: by the code of the key's first value), by id as u16.
    let mut typed_keys = vec![false; 1 << 16];
    let r1 = r.revision() == Revision::R1;
    loop {
        // Inlined into each of the reader's decoding paths, so that the event never goes
        // through memory (a call would take it by reference).
        let read = r.for_each_event_ref(
            #[inline(always)]
            |ev| match ev {
                EventRef::Timestamp(t) => {
                    s.cycles += 1;
                    if s.last_ts.is_some_and(|l| t <= l) {
                        s.non_monotonic += 1;
                    }
                    s.first_ts = s.first_ts.or(Some(t));
                    s.last_ts = Some(t);
                }
                EventRef::KeyDef { key, .. } => {
                    s.keys_defined += 1;
                    if let Some(t) = &key.declared_type {
                        *s.types.entry(t.clone()).or_default() += 1;
                    }
                }
                EventRef::Value { key_id, value, .. } => {
                    s.values += 1;
                    let seen = &mut typed_keys[usize::from(key_id as u16)];
                    if r1 && !*seen {
                        *seen = true;
                        *s.types.entry(value.type_name(None).to_string()).or_default() += 1;
                    }
                }
            },
        );
        match read {
            Ok(()) => break,
            Err(e) => {
                let recoverable = e.is_recoverable();
                super::info::note_error(&mut s.errors, &mut s.faults, kind::UNDECODABLE_VALUE, &e, recoverable);
                if !recoverable {
                    break;
                }
            }
        }
    }
    s.bytes_consumed = r.position();
    s
}

struct Summarise;

impl WithRlog for Summarise {
    type Output = Summary;
    fn call<R, I: Input>(self, reader: Reader<R, I>) -> Summary {
        summarise(reader)
    }
}

/// A time in seconds as the text summary shows it: as written for the times a log holds (a
/// robot's clock), in exponent form for the others (a denormal or a huge number, which would
/// otherwise print hundreds of digits).
fn seconds(t: f64) -> String {
    if t == 0.0 || (1e-6..1e15).contains(&t.abs()) {
        format!("{t}")
    } else {
        format!("{t:e}")
    }
}

pub fn text(s: &Summary, path: &str, stream: bool) -> String {
    let mut t = String::new();
    let fmt = if stream { "RLOG stream" } else { "RLOG" };
    t.push_str(&format!("file:        {path}\nformat:      {fmt} {}\n", s.revision));
    if !s.has_revision_byte {
        t.push_str("           (no revision byte; decoded as R1 on request)\n");
    }
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        t.push_str(&format!("time:        {} .. {} s ({:.3} s)\n", seconds(a), seconds(b), b - a));
    }
    t.push_str(&format!("cycles:      {}\nkeys:        {}\nvalues:      {}\n", s.cycles, s.keys_defined, s.values));
    if s.non_monotonic > 0 {
        t.push_str(&format!("timestamps:  {} not increasing (kept, not dropped)\n", s.non_monotonic));
    }
    t.push_str(if s.revision == Revision::R2 { "declared types:\n" } else { "value types (by key):\n" });
    for (ty, n) in &s.types {
        t.push_str(&format!("  {ty:<28} {n}\n"));
    }
    t.push_str(&format!("bytes:       {} read\n", s.bytes_consumed));
    super::info::integrity(&mut t, &s.errors, &s.faults);
    t
}

pub fn json(s: &Summary, path: &str, stream: bool) -> String {
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), path);
    w.str(Some("format"), if stream { "rlog-stream" } else { "rlog" });
    w.bool(Some("ok"), s.errors.is_empty());
    match s.errors.first() {
        Some(e) => w.str(Some("error"), e),
        None => w.null(Some("error")),
    }
    w.uint(Some("revision"), u64::from(s.revision.byte()));
    w.bool(Some("revision_byte"), s.has_revision_byte);
    w.uint(Some("cycles"), s.cycles);
    w.uint(Some("keys_defined"), s.keys_defined);
    w.uint(Some("values"), s.values);
    match (s.first_ts, s.last_ts) {
        (Some(a), Some(b)) => {
            w.f64(Some("first_timestamp"), a);
            w.f64(Some("last_timestamp"), b);
        }
        _ => {
            w.null(Some("first_timestamp"));
            w.null(Some("last_timestamp"));
        }
    }
    w.uint(Some("non_monotonic_timestamps"), s.non_monotonic);
    w.begin_object(Some("types"));
    for (ty, n) in &s.types {
        w.uint(Some(ty), *n);
    }
    w.end_object();
    super::info::json_faults(&mut w, &s.faults);
    w.uint(Some("bytes_consumed"), s.bytes_consumed);
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}

/// The samples of an RLOG file or captured stream: one channel per key. With a `range` (chunks
/// of the time index) and the state messages before it, only the messages that start in it;
/// without, every message, and the time index is noted ([`super::Outcome::index`]).
pub(super) fn scan(
    input: Source,
    file: &std::path::Path,
    path: &str,
    stream: bool,
    assume_r1: bool,
    range: Option<(super::index::Range, Vec<u64>, Vec<super::index::SchemaAt>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let (range, schemas) = match range {
        None => (None, schemas(file, stream, assume_r1, path)),
        Some((range, states, at)) => {
            let map = match &input {
                Source::Mapped(m) => Some(Arc::clone(m)),
                Source::Stream(_) => None,
            };
            let format = SchemaMessages { assume_r1 };
            let schemas = super::index::indexed_schemas(&format, file, map.as_deref(), path, &at).map_err(Error::at)?;
            (Some((range, states)), schemas)
        }
    };
    read(input, stream, assume_r1, path, values::ReadRlog { path, schemas, state, range })?
}

/// The records of an RLOG file as the dump writes them.
pub(super) fn records<R: Records>(
    input: Source,
    file: &std::path::Path,
    path: &str,
    stream: bool,
    assume_r1: bool,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let schemas = schemas(file, stream, assume_r1, path);
    let structs = super::structs::Decoder::new(schemas, path);
    read(input, stream, assume_r1, path, Dump { out, path, select, structs })?
}

struct Dump<'a, O> {
    out: &'a mut O,
    path: &'a str,
    select: &'a Select,
    structs: super::structs::Decoder,
}

impl<O: Records> WithRlog for Dump<'_, O> {
    type Output = Result<(), Error>;
    fn call<R, I: Input>(mut self, reader: Reader<R, I>) -> Self::Output {
        dump(reader, self.out, self.path, self.select, &mut self.structs)
    }
}

/// The summary of an RLOG file.
pub(super) fn info(input: Source, path: &str, stream: bool, assume_r1: bool) -> Result<super::Info, Error> {
    let s = read(input, stream, assume_r1, path, Summarise)?;
    let path = path.to_string();
    Ok(super::Info::new(s.errors.is_empty(), move |form| match form {
        Form::Text => text(&s, &path, stream),
        Form::Json => json(&s, &path, stream),
    }))
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
            rules: ir::Rules::PACKED,
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

/// RLOG's schema messages, for [`super::index::indexed_schemas`]: a key definition, and a
/// value of its key that carries a schema.
struct SchemaMessages {
    assume_r1: bool,
}

impl super::index::SchemaMessages for SchemaMessages {
    type Reader<'m> = Reader<&'m [u8], crate::runtime::WindowBuf<'m, fn(u64)>>;
    type Id = i16;
    const MESSAGE: &'static str = "message";
    const DEFINITION: &'static str = "a key definition";
    const VALUE: &'static str = "a value of the key its definition defines";
    fn open<'m>(&self, window: crate::runtime::WindowBuf<'m, fn(u64)>) -> Result<Self::Reader<'m>, String> {
        let options = ReaderOptions { assume_revision: self.assume_r1.then_some(Revision::R1) };
        Reader::from_window(window, options).map_err(|e| e.to_string())
    }
    fn seek(r: &mut Self::Reader<'_>, offset: u64) -> bool {
        r.seek(offset)
    }
    fn definition(r: &mut Self::Reader<'_>) -> Option<i16> {
        match r.next_event_ref() {
            Some(Ok(EventRef::KeyDef { key_id, .. })) => Some(key_id),
            _ => None,
        }
    }
    fn value(r: &mut Self::Reader<'_>, id: i16, reg: &mut crate::formats::wpistruct::TypeRegistry) -> bool {
        match r.next_event_ref() {
            Some(Ok(EventRef::Value { key_id, key: Some(k), value, .. })) if key_id == id => {
                if let (Some(t), Some(b)) = (k.declared_type.as_deref(), value_bytes(&value)) {
                    reg.offer(&k.name, t, b);
                }
                true
            }
            _ => false,
        }
    }
    fn whole(&self, file: &std::path::Path, path: &str) -> crate::formats::wpistruct::TypeRegistry {
        schemas(file, false, self.assume_r1, path)
    }
}

/// A registry with every schema of an RLOG file, read in a first pass; empty for standard input
/// (`-`), which cannot be read twice.
pub(super) fn schemas(
    file: &std::path::Path,
    stream: bool,
    assume_r1: bool,
    path: &str,
) -> crate::formats::wpistruct::TypeRegistry {
    let mut reg = crate::formats::wpistruct::TypeRegistry::new();
    if file.as_os_str() == "-" {
        return reg;
    }
    let Ok(f) = std::fs::File::open(file) else { return reg };
    let input: Box<dyn std::io::Read> = Box::new(std::io::BufReader::with_capacity(1 << 16, f));
    let Ok(mut r) = reader(input, stream, assume_r1, path) else { return reg };
    // Only R2 values carry bytes (and so schemas): an R1 file has none to find.
    if r.revision() == rlog::Revision::R1 {
        return reg;
    }
    while let Some(ev) = r.next_event_ref() {
        match ev {
            Ok(rlog::EventRef::Value { key: Some(k), value, .. }) => {
                if let (Some(t), Some(b)) = (k.declared_type.as_deref(), value_bytes(&value)) {
                    reg.offer(&k.name, t, b);
                }
            }
            Ok(_) => {}
            // The main pass reports errors; here they only end the search for schemas.
            Err(e) if e.is_recoverable() => {}
            Err(_) => break,
        }
    }
    reg
}
