//! A log's summary ([`Log::info`](super::Log::info)): what a log file is and what it holds.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use crate::json::JsonWriter;
use crate::runtime::{with_file_format, FramedFormat, Reader, Versioned, Visit, Visitor, WithFormat};

use super::fault::{Fault, FaultKind};
use super::{Error, Format};

/// Facts about a framed log, gathered in one pass.
struct Summary {
    header: String,
    /// The schema id of the layout the records were decoded with.
    schema_id: Option<u64>,
    current_schema_id: Option<u64>,
    records_total: u64,
    counts: BTreeMap<u64, (Option<String>, u64)>,
    unknown: Vec<(Option<u64>, u64, u64)>,
    first_ts: Option<u64>,
    last_ts: Option<u64>,
    bytes_consumed: u64,
    errors: Vec<String>,
}

/// A log's summary: its text (`logspec info`), its JSON object (`info --json`, one line), and
/// whether the log read cleanly.
#[derive(Debug, Clone)]
pub struct Info {
    pub text: String,
    pub json: String,
    pub ok: bool,
}

impl super::Log {
    /// Summarises the log: header, record counts, time span, integrity findings (ROS bags: like
    /// `rosbag info`, with md5 verdicts). `msg_path`: ROS bag `.msg` directories for connections
    /// whose embedded definition is empty or wrong. Notes on how the file was read, which do not
    /// make it fail (a bag scanned without its index), are pushed to `notes`.
    pub fn info(self, msg_path: &[PathBuf], notes: &mut Vec<Fault>) -> Result<Info, Error> {
        let path = self.shown();
        let file = self.file.clone();
        let d = self;
        let name = file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        match d.format {
            Format::Carla => {
                let s = super::carla::summarise(d.input, &path)?;
                Ok(Info { json: super::carla::json(&s, &name)?, text: super::carla::text(&s, &path), ok: s.ok() })
            }
            Format::Rosbag => {
                drop(d.input);
                let mut said = Vec::new();
                let s = super::rosbag::summarise(&file, &path, msg_path, &mut said);
                notes.extend(said.into_iter().map(|n| Fault::new(FaultKind::Decode, &path, n)));
                let s = s?;
                Ok(Info { json: super::rosbag::json(&s, &path), text: super::rosbag::text(&s, &path), ok: super::rosbag::ok(&s) })
            }
            Format::Wpilog => {
                let s = super::wpilog::summarise(d.input, &path)?;
                Ok(Info { json: super::wpilog::json(&s, &name), text: super::wpilog::text(&s, &path), ok: s.errors.is_empty() })
            }
            Format::Rlog | Format::RlogStream => {
                let stream = d.format == Format::RlogStream;
                let s = super::rlog::summarise(d.input, stream, d.assume_r1, &path)?;
                Ok(Info {
                    json: super::rlog::json(&s, &path, stream),
                    text: super::rlog::text(&s, &path, stream),
                    ok: s.errors.is_empty(),
                })
            }
            Format::Schema => {
                let format = d.schema.expect("a schema's log is detected with its schema");
                let s = summarise_schema(&format, d.input, &path)?;
                let ns_per_tick = super::framed::timestamp_scale(format.schema());
                Ok(Info {
                    json: json(&s, format.name(), &path),
                    text: text(&s, format.title(), &path, ns_per_tick),
                    ok: s.errors.is_empty(),
                })
            }
            Format::Usvlog => {
                // The file's schema id picks the layout: the current one or an older one from the lock.
                type F = crate::formats::usvlog::Usvlog;
                let job = Summarise { input: d.input, path: &path, current: F::SCHEMA_IDS.first().copied() };
                let s = with_file_format::<F, _>(&d.head, job);
                let s = s.map_err(|e| Error::Input(format!("{path}: {e}")))??;
                // The timestamp's unit is the schema's (USVLOG: `t_us`, microseconds).
                let ns_per_tick = super::framed::timestamp_scale(crate::formats::schemas::usvlog());
                let f = d.format;
                Ok(Info { json: json(&s, f.name(), &path), text: text(&s, f.title(), &path, ns_per_tick), ok: s.errors.is_empty() })
            }
        }
    }
}

struct Summarise<'a> {
    input: Box<dyn Read>,
    path: &'a str,
    /// The schema id of the format's current layout.
    current: Option<u64>,
}

impl WithFormat for Summarise<'_> {
    type Output = Result<Summary, Error>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        summarise::<F>(self.input, self.path, self.current)
    }
}

fn summarise<F: FramedFormat>(input: impl Read, path: &str, current: Option<u64>) -> Result<Summary, Error> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| Error::Input(format!("{path}: {e}")))?;
    let mut w = JsonWriter::new();
    reader.file_header().visit(None, &mut w);
    let mut s = Summary::new(w.take(), F::schema_id(reader.file_header()), current);
    // `decode_each` is the reader's fast path; it stops at each error, and resumes after a bad
    // record when called again.
    loop {
        let result = reader.decode_each(|raw, record| {
            s.record(&raw.header, record.is_some(), || F::record_name(raw.header.tag).map(str::to_string));
        });
        match result {
            Ok(()) => break,
            Err(e) if s.error(&e, e.is_recoverable()) => {}
            Err(_) => break,
        }
    }
    s.bytes_consumed = reader.position();
    Ok(s)
}

/// [`summarise`] of a log of a schema's own framing, read through the IR interpreter.
fn summarise_schema(
    format: &std::sync::Arc<crate::log::SchemaFormat>,
    input: Box<dyn Read>,
    path: &str,
) -> Result<Summary, Error> {
    let mut reader = format.read(input).map_err(|e| Fault::read(path, &e))?;
    let mut w = JsonWriter::new();
    reader.visit_header(&mut w);
    let mut s = Summary::new(w.take(), reader.schema_id(), format.schema_ids().first().copied());
    while let Some(rec) = reader.next_record() {
        match rec {
            Ok(rec) => s.record(&rec.header, rec.value.is_some(), || rec.value.as_ref().map(|v| v.name().to_string())),
            Err(e) if s.error(&e, e.is_recoverable()) => {}
            Err(_) => break,
        }
    }
    s.bytes_consumed = reader.position();
    Ok(s)
}

impl Summary {
    fn new(header: String, schema_id: Option<u64>, current_schema_id: Option<u64>) -> Summary {
        Summary {
            header,
            schema_id,
            current_schema_id,
            records_total: 0,
            counts: BTreeMap::new(),
            unknown: Vec::new(),
            first_ts: None,
            last_ts: None,
            bytes_consumed: 0,
            errors: Vec::new(),
        }
    }

    /// Counts a record (`known`: of a type the schema has, named by `name` the first time).
    #[inline]
    fn record(&mut self, h: &crate::runtime::RecordHeader, known: bool, name: impl FnOnce() -> Option<String>) {
        if known {
            self.records_total += 1;
            self.counts.entry(h.tag).or_insert_with(|| (name(), 0)).1 += 1;
        } else {
            self.unknown.push((h.timestamp, h.tag, h.len));
        }
        self.first_ts = self.first_ts.or(h.timestamp);
        self.last_ts = h.timestamp.or(self.last_ts);
    }

    /// Notes a reader's error; whether reading goes on after it.
    fn error(&mut self, e: &impl std::fmt::Display, recoverable: bool) -> bool {
        self.errors.push(e.to_string());
        recoverable
    }
}

/// The symbol of a clock tick of `ns_per_tick` nanoseconds.
fn tick_unit(ns_per_tick: u64) -> &'static str {
    match ns_per_tick {
        1 => "ns",
        1_000 => "us",
        1_000_000 => "ms",
        _ => "s",
    }
}

fn text(s: &Summary, fmt: &str, path: &str, ns_per_tick: u64) -> String {
    let mut t = String::new();
    t.push_str(&format!("file:        {path}\nformat:      {fmt}\nheader:      {}\n", s.header));
    if let (Some(id), Some(current)) = (s.schema_id, s.current_schema_id) {
        if id == current {
            t.push_str(&format!("layout:      schema id {id} (current)\n"));
        } else {
            t.push_str(&format!("layout:      schema id {id} (an older layout, from the lock history)\n"));
        }
    }
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        let unit = tick_unit(ns_per_tick);
        let secs = b.saturating_sub(a) as f64 * ns_per_tick as f64 * 1e-9;
        t.push_str(&format!("time:        {a} .. {b} {unit} ({secs:.3} s)\n"));
    }
    t.push_str(&format!("records:     {}\n", s.records_total));
    for (id, (name, n)) in &s.counts {
        t.push_str(&format!("  {:>4}  {:<28} {n}\n", id, name.as_deref().unwrap_or("?")));
    }
    if !s.unknown.is_empty() {
        t.push_str(&format!("unknown:     {} record(s) of unknown type, skipped\n", s.unknown.len()));
    }
    t.push_str(&format!("bytes:       {} read\n", s.bytes_consumed));
    if s.errors.is_empty() {
        t.push_str("integrity:   ok\n");
    }
    for e in &s.errors {
        t.push_str(&format!("integrity:   {e}\n"));
    }
    t
}

fn json(s: &Summary, format: &str, path: &str) -> String {
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), path);
    w.str(Some("format"), format);
    w.bool(Some("ok"), s.errors.is_empty());
    match s.errors.first() {
        Some(e) => w.str(Some("error"), e),
        None => w.null(Some("error")),
    }
    w.raw(Some("header"), &s.header);
    match s.schema_id {
        Some(id) => w.uint(Some("schema_id"), id),
        None => w.null(Some("schema_id")),
    }
    w.uint(Some("records_total"), s.records_total);
    w.begin_object(Some("record_counts"));
    for (id, (name, n)) in &s.counts {
        let key = name.clone().unwrap_or_else(|| id.to_string());
        w.uint(Some(&key), *n);
    }
    w.end_object();
    w.begin_array(Some("unknown_records"), s.unknown.len());
    for (ts, tag, len) in &s.unknown {
        w.begin_object(None);
        match ts {
            Some(t) => w.uint(Some("t_us"), *t),
            None => w.null(Some("t_us")),
        }
        w.uint(Some("type"), *tag);
        w.uint(Some("len"), *len);
        w.end_object();
    }
    w.end_array();
    w.uint(Some("bytes_consumed"), s.bytes_consumed);
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        w.uint(Some("first_timestamp"), a);
        w.uint(Some("last_timestamp"), b);
    }
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}
