//! A log's summary ([`Log::info`](super::Log::info)): what a log file is and what it holds.

use std::collections::BTreeMap;

use crate::json::JsonWriter;
use crate::runtime::Visitor;

use super::fault::{kind, Faults, SHOWN_PER_KIND};

/// Facts about a framed log, gathered in one pass.
pub(super) struct Summary {
    pub(super) header: String,
    /// The schema id of the layout the records were decoded with.
    pub(super) schema_id: Option<u64>,
    pub(super) current_schema_id: Option<u64>,
    pub(super) records_total: u64,
    pub(super) counts: BTreeMap<u64, (Option<String>, u64)>,
    /// The first few records of unknown type (timestamp, tag, length); all are counted in
    /// `faults`.
    pub(super) unknown: Vec<(Option<u64>, u64, u64)>,
    pub(super) first_ts: Option<u64>,
    pub(super) last_ts: Option<u64>,
    pub(super) bytes_consumed: u64,
    /// The first few problems of each kind, in full; all are counted in `faults`.
    pub(super) errors: Vec<String>,
    pub(super) faults: Faults,
}

/// Tags below this are counted by index while reading ([`Tally`]), and a schema's record types
/// found by index (`framed::Layout::record`).
pub(super) const DENSE: usize = 256;

/// What a summary counts of every record while reading, kept apart from the [`Summary`] so that
/// the reading loop holds it in registers and on its own stack (a summary is handed to calls
/// out of the loop, which would make the loop store and reload each count): the records of a
/// known type by tag (below [`DENSE`]) and the time span. A record it does not count (of an
/// unknown type, or a larger tag) goes to [`Summary::record`]; [`Summary::settle`] adds it up.
pub(super) struct Tally {
    dense: [u64; DENSE],
    first_ts: Option<u64>,
    last_ts: Option<u64>,
}

impl Tally {
    pub(super) fn new() -> Tally {
        Tally { dense: [0; DENSE], first_ts: None, last_ts: None }
    }

    /// Notes a record's time and counts it when its type is `known` and its tag below
    /// [`DENSE`]; `false` when the summary must count it ([`Summary::record`]).
    #[inline(always)]
    pub(super) fn record(&mut self, h: &crate::runtime::RecordHeader, known: bool) -> bool {
        self.first_ts = self.first_ts.or(h.timestamp);
        self.last_ts = h.timestamp.or(self.last_ts);
        match self.dense.get_mut(h.tag as usize) {
            Some(n) if known => {
                *n += 1;
                true
            }
            _ => false,
        }
    }
}

/// A log's summary: whether the log read cleanly, and its two forms, each written when it is
/// asked for: the text of `logspec info` and the JSON object of `info --json` (one line). A form
/// can need what the other does not (CARLA's JSON reads the bundled schema, compiled at run
/// time), so a command pays only for the form it prints.
pub struct Info {
    pub ok: bool,
    forms: Box<dyn Fn(Form) -> String>,
}

/// One of the two forms of an [`Info`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    Text,
    Json,
}

impl Info {
    /// A summary whose forms `forms` writes.
    pub(super) fn new(ok: bool, forms: impl Fn(Form) -> String + 'static) -> Info {
        Info { ok, forms: Box::new(forms) }
    }

    /// A summary whose forms were written together.
    pub(super) fn written(text: String, json: String, ok: bool) -> Info {
        Info::new(ok, move |form| match form {
            Form::Text => text.clone(),
            Form::Json => json.clone(),
        })
    }

    /// The text of `logspec info`.
    pub fn text(&self) -> String {
        (self.forms)(Form::Text)
    }

    /// The JSON object of `logspec info --json`, one line.
    pub fn json(&self) -> String {
        (self.forms)(Form::Json)
    }
}

impl std::fmt::Debug for Info {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Info").field("ok", &self.ok).finish_non_exhaustive()
    }
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
            faults: Faults::default(),
        }
    }

    /// Counts a record that the [`Tally`] did not (`known`: of a type the schema has, named by
    /// `name` the first time); its time the tally noted. Out of the reading loop.
    #[cold]
    #[inline(never)]
    pub(super) fn record(
        &mut self,
        h: crate::runtime::RecordHeader,
        known: bool,
        name: impl FnOnce() -> Option<String>,
    ) {
        if known {
            self.records_total += 1;
            self.counts.entry(h.tag).or_insert_with(|| (name(), 0)).1 += 1;
        } else if let Some(u) = self.faults.note(kind::UNKNOWN_TYPE, || (h.timestamp, h.tag, h.len)) {
            self.unknown.push(u);
        }
    }

    /// Adds the tally's counts and time span; called once, when the reading is done. `name`
    /// names a record type by its tag.
    pub(super) fn settle(&mut self, t: Tally, name: impl Fn(u64) -> Option<String>) {
        for (tag, n) in t.dense.into_iter().enumerate().filter(|(_, n)| *n > 0) {
            let tag = tag as u64;
            self.records_total += n;
            self.counts.entry(tag).or_insert_with(|| (name(tag), 0)).1 += n;
        }
        self.first_ts = t.first_ts;
        self.last_ts = t.last_ts;
    }

    /// Notes a reader's error; whether reading goes on after it. A recoverable one (a record
    /// skipped) is counted, and kept in full only among the first few.
    pub(super) fn error(&mut self, e: &impl std::fmt::Display, recoverable: bool) -> bool {
        note_error(&mut self.errors, &mut self.faults, kind::UNDECODABLE, e, recoverable);
        recoverable
    }

    /// Whether the log read cleanly: no record skipped, nothing that stopped the reading.
    pub(super) fn ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Notes a reader's error in a summary's `errors`: the one that stopped the reading always; one
/// it went on past (of `kind`) only among the first few of its kind, all counted in `faults`.
pub(super) fn note_error(
    errors: &mut Vec<String>,
    faults: &mut Faults,
    kind: &'static str,
    e: &impl std::fmt::Display,
    recoverable: bool,
) {
    if !recoverable {
        errors.push(e.to_string());
    } else if let Some(m) = faults.note(kind, || e.to_string()) {
        errors.push(m);
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
    let unknown = s.faults.count(kind::UNKNOWN_TYPE);
    if unknown > 0 {
        t.push_str(&format!("unknown:     {unknown} record(s) of unknown type, skipped\n"));
    }
    t.push_str(&format!("bytes:       {} read\n", s.bytes_consumed));
    integrity(&mut t, &s.errors, &s.faults);
    t
}

/// The `integrity:` lines of `logspec info`: `ok`, or how damaged the file is (one line, every
/// kind of problem counted), then the first few problems of each kind in full.
pub(super) fn integrity(t: &mut String, errors: &[String], faults: &Faults) {
    if errors.is_empty() {
        t.push_str("integrity:   ok\n");
        return;
    }
    let damage: Vec<String> =
        faults.kinds().filter(|(k, _)| *k != kind::UNKNOWN_TYPE).map(|(k, n)| format!("{n} {k}")).collect();
    if !damage.is_empty() {
        let more = if faults.kinds().any(|(_, n)| n > SHOWN_PER_KIND) {
            format!(" (the first {SHOWN_PER_KIND} of each kind below)")
        } else {
            String::new()
        };
        t.push_str(&format!("integrity:   damaged: {}{more}\n", damage.join(", ")));
    }
    for e in errors {
        t.push_str(&format!("integrity:   {e}\n"));
    }
}

/// The `faults` object of `info --json`: every kind of problem with its count.
pub(super) fn json_faults(w: &mut JsonWriter, faults: &Faults) {
    w.begin_object(Some("faults"));
    for (k, n) in faults.kinds() {
        w.uint(Some(k), n);
    }
    w.end_object();
}

pub(super) fn json(s: &Summary, format: &str, path: &str) -> String {
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), path);
    w.str(Some("format"), format);
    w.bool(Some("ok"), s.ok());
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
    w.uint(Some("unknown_records_total"), s.faults.count(kind::UNKNOWN_TYPE));
    json_faults(&mut w, &s.faults);
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

/// The civil date (year, month 1-12, day 1-31) of a day counted from 1970-01-01 (proleptic
/// Gregorian calendar; Howard Hinnant's `civil_from_days`: eras of 400 years, March-based
/// years), for the summaries that print a UTC time.
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RecordHeader;

    /// A tally and its summary count what was read: small and large tags of known types, and
    /// unknown ones, with the time span of them all.
    #[test]
    fn a_tally_and_its_summary_count_every_record() {
        let mut s = Summary::new("{}".into(), None, None);
        let mut t = Tally::new();
        // (tag, timestamp, known)
        let records = [(3, 10, true), (300, 11, true), (3, 12, true), (7, 13, false), (255, 14, true), (300, 15, true)];
        for (tag, ts, known) in records {
            let h = RecordHeader { tag, len: 4, timestamp: Some(ts) };
            if !t.record(&h, known) {
                s.record(h, known, || Some(format!("T{tag}")));
            }
        }
        s.settle(t, |tag| Some(format!("T{tag}")));
        let counts: Vec<(u64, &str, u64)> =
            s.counts.iter().map(|(tag, (name, n))| (*tag, name.as_deref().unwrap_or(""), *n)).collect();
        assert_eq!(counts, [(3, "T3", 2), (255, "T255", 1), (300, "T300", 2)]);
        assert_eq!(s.records_total, 5);
        assert_eq!((s.first_ts, s.last_ts), (Some(10), Some(15)));
        assert_eq!(s.faults.count(kind::UNKNOWN_TYPE), 1);
        assert_eq!(s.unknown, [(Some(13), 7, 4)]);
    }
}
