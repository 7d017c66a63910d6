//! A log's summary ([`Log::info`](super::Log::info)): what a log file is and what it holds.

use std::collections::BTreeMap;

use crate::json::JsonWriter;
use crate::runtime::Visitor;

/// Facts about a framed log, gathered in one pass.
pub(super) struct Summary {
    pub(super) header: String,
    /// The schema id of the layout the records were decoded with.
    pub(super) schema_id: Option<u64>,
    pub(super) current_schema_id: Option<u64>,
    pub(super) records_total: u64,
    pub(super) counts: BTreeMap<u64, (Option<String>, u64)>,
    pub(super) unknown: Vec<(Option<u64>, u64, u64)>,
    pub(super) first_ts: Option<u64>,
    pub(super) last_ts: Option<u64>,
    pub(super) bytes_consumed: u64,
    pub(super) errors: Vec<String>,
}

/// A log's summary: its text (`logspec info`), its JSON object (`info --json`, one line), and
/// whether the log read cleanly.
#[derive(Debug, Clone)]
pub struct Info {
    pub text: String,
    pub json: String,
    pub ok: bool,
}

impl Summary {
    pub(super) fn new(header: String, schema_id: Option<u64>, current_schema_id: Option<u64>) -> Summary {
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
    pub(super) fn record(
        &mut self,
        h: &crate::runtime::RecordHeader,
        known: bool,
        name: impl FnOnce() -> Option<String>,
    ) {
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
    pub(super) fn error(&mut self, e: &impl std::fmt::Display, recoverable: bool) -> bool {
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

pub(super) fn text(s: &Summary, fmt: &str, path: &str, ns_per_tick: u64) -> String {
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

pub(super) fn json(s: &Summary, format: &str, path: &str) -> String {
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
