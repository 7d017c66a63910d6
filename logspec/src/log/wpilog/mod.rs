//! `logspec dump` and `logspec info` for WPILOG files, their copies and conversions from RLOG
//! ([`Written`]), and their samples (`samples`: [`scan`], whole or a range of chunks of the time
//! index).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use super::info::Form;
use crate::formats::wpilog::{self, Body, ControlBody, Reader, RecordRef};
use crate::json::JsonWriter;
use crate::runtime::Visitor;

use super::fault::{Fault, FaultKind};
use super::filter::Select;
use super::records::Records;
use super::Error;

mod samples;
pub(super) use samples::scan;

pub fn reader(input: Box<dyn Read>, path: &str) -> Result<Reader<Box<dyn Read>>, String> {
    Reader::new(input).map_err(|e| format!("{path}: {e}"))
}

/// Seconds since the log's zero, for `--since`/`--until`.
fn seconds(ts: i64) -> f64 {
    ts as f64 / 1e6
}

fn wants_time(select: &Select, ts: i64) -> bool {
    let t = seconds(ts);
    select.since.is_none_or(|s| t >= s) && select.until.is_none_or(|u| t <= u)
}

/// The name a record is selected by (`--key`): the name of its entry, for data and control
/// records alike; `None` for orphans and invalid control records.
fn channel_of<'a>(rec: &RecordRef<'a>) -> Option<&'a str> {
    match rec.body {
        Body::Data(e) | Body::Control { entry: e, .. } => e.map(|e| e.name()),
        Body::ControlInvalid(_) => None,
    }
}

/// Writes one record as its dump line (without the newline). Returns whether the value was
/// invalid (a standard-typed payload that did not decode).
pub fn record_json(
    w: &mut (impl crate::value::ValueSink + ?Sized),
    rec: &RecordRef<'_>,
    structs: Option<&mut super::structs::Decoder>,
    neg_zero: wpilog::NegZero,
) -> bool {
    let mut invalid = false;
    w.begin_struct(None);
    let ts = rec.header.timestamp;
    match rec.body {
        Body::Control { record, .. } => match &record.body {
            ControlBody::Start { entry, name, r#type, metadata } => {
                w.str(Some("rec"), "start");
                w.int(Some("ts"), ts);
                w.uint(Some("entry"), u64::from(*entry));
                w.str(Some("name"), name);
                w.str(Some("type"), r#type);
                w.str(Some("metadata"), metadata);
            }
            ControlBody::Finish { entry } => {
                w.str(Some("rec"), "finish");
                w.int(Some("ts"), ts);
                w.uint(Some("entry"), u64::from(*entry));
            }
            ControlBody::SetMetadata { entry, metadata } => {
                w.str(Some("rec"), "set_metadata");
                w.int(Some("ts"), ts);
                w.uint(Some("entry"), u64::from(*entry));
                w.str(Some("metadata"), metadata);
            }
        },
        Body::ControlInvalid(_) => {
            w.str(Some("rec"), "control_invalid");
            w.int(Some("ts"), ts);
            wpilog::write_hex(w, Some("payload"), rec.payload);
        }
        Body::Data(entry) => {
            w.str(Some("rec"), "data");
            w.int(Some("ts"), ts);
            w.uint(Some("entry"), u64::from(rec.header.entry));
            match entry {
                Some(e) => {
                    w.str(Some("name"), e.name());
                    w.str(Some("type"), e.type_name());
                }
                None => {
                    w.null(Some("name"));
                    w.null(Some("type"));
                }
            }
            // The one place a value is shown: `write_value` (hex for every non-standard type).
            if wpilog::write_value(w, Some("value"), entry, rec.payload, neg_zero).is_err() {
                invalid = true;
                w.null(Some("value"));
                wpilog::write_hex(w, Some("invalid"), rec.payload);
            }
            // `struct:` and `proto:` values: `decoded` or `decode_error` beside the hex value.
            if let (Some(e), Some(structs)) = (entry, structs) {
                structs.write_json(w, e.name(), e.type_name(), rec.payload);
            }
        }
    }
    w.end_struct();
    invalid
}

/// The file header line, then one JSON object per record in file order (docs/output.md).
/// Orphans (data records of an entry that is not started) are printed with null name and type,
/// and reported on stderr; a standard-typed value that does not decode is printed as `invalid`
/// and makes the exit status 1; a truncated record ends the dump with an error after every
/// complete record.
pub fn dump(
    mut r: Reader<Box<dyn Read>>,
    out: &mut impl Records,
    path: &str,
    select: &Select,
    structs: &mut super::structs::Decoder,
) -> Result<(), Error> {
    let w = out.writer();
    w.begin_struct(None);
    w.str(Some("rec"), "header");
    w.uint(Some("version"), u64::from(r.header().version));
    w.str(Some("extra_header"), &r.header().extra_header);
    w.end_struct();
    out.end_record().map_err(Error::Io)?;
    let neg_zero = out.neg_zero();
    let mut invalid = 0u64;
    let mut orphans = 0u64;
    let mut first_orphan = None;
    let mut first_invalid = None;
    let filtering = !select.channels.is_empty();
    loop {
        let rec = match r.next_record() {
            None => break,
            Some(Ok(rec)) => rec,
            Some(Err(e)) => {
                report(out, path, orphans, first_orphan, invalid, first_invalid);
                return Err(Error::at(Fault::read(path, &e)));
            }
        };
        // Schemas are offered even when their records are filtered out, so values still decode.
        if let Body::Data(Some(e)) = rec.body {
            structs.reg.offer(e.name(), e.type_name(), rec.payload);
        }
        if !wants_time(select, rec.header.timestamp) {
            continue;
        }
        if filtering && !channel_of(&rec).is_some_and(|n| select.wants_channel(n)) {
            continue;
        }
        if let Body::Data(None) = rec.body {
            orphans += 1;
            first_orphan.get_or_insert((rec.offset, rec.header.entry));
        }
        if record_json(out.writer(), &rec, Some(&mut *structs), neg_zero) {
            invalid += 1;
            first_invalid.get_or_insert((rec.offset, rec.header.entry));
        }
        out.end_record().map_err(Error::Io)?;
        structs.warnings_to(out);
    }
    report(out, path, orphans, first_orphan, invalid, first_invalid);
    if invalid > 0 {
        return Err(Error::at(Fault::new(
            FaultKind::Decode,
            path,
            format!("{path}: {invalid} value(s) could not be decoded as their entry's type"),
        )));
    }
    Ok(())
}

fn report(
    out: &mut impl Records,
    path: &str,
    orphans: u64,
    first_orphan: Option<(u64, u32)>,
    invalid: u64,
    first_invalid: Option<(u64, u32)>,
) {
    if let Some((at, entry)) = first_orphan {
        out.warn(Fault::at(path, at, None, format!(
            "{path}: {orphans} data record(s) of entries that were not started (the first at byte {at}, entry {entry}); their values are shown as hex"
        )));
    }
    if let Some((at, entry)) = first_invalid {
        out.warn(Fault::at(path, at, None, format!(
            "{path}: {invalid} value(s) do not decode as their entry's type (the first at byte {at}, entry {entry}); shown as `invalid` hex"
        )));
    }
}

/// Facts about a WPILOG file, gathered in one pass (the keys of `info --json`, docs/output.md).
#[derive(Debug, Default)]
pub struct Summary {
    pub version: u16,
    pub extra_header: String,
    pub records: u64,
    pub start: u64,
    pub finish: u64,
    pub set_metadata: u64,
    pub control_invalid: u64,
    pub data_records: u64,
    pub orphan_data_records: u64,
    pub invalid_values: u64,
    /// Every name started, with the types it was started with.
    pub names: Names,
    pub timestamp_min: Option<i64>,
    pub timestamp_max: Option<i64>,
    pub data_records_by_type: BTreeMap<String, u64>,
    /// Bytes of complete records and the header.
    pub bytes_consumed: u64,
    pub trailing_bytes: u64,
    pub errors: Vec<String>,
}

impl Summary {
    pub fn control_records(&self) -> u64 {
        self.start + self.finish + self.set_metadata + self.control_invalid
    }

    /// For each type, the number of distinct names started with it.
    pub fn entries_by_declared_type(&self) -> BTreeMap<&str, u64> {
        self.names.by_type()
    }

    fn types_with_prefix(&self, prefix: &str) -> BTreeSet<&str> {
        self.names.types().into_iter().filter(|t| t.starts_with(prefix)).collect()
    }
}

pub fn summarise(input: Box<dyn Read>, path: &str) -> Result<Summary, Error> {
    let mut r = reader(input, path).map_err(Error::Input)?;
    let mut s =
        Summary { version: r.header().version, extra_header: r.header().extra_header.clone(), ..Summary::default() };
    let mut tally = Tally::default();
    loop {
        let rec = match r.next_record() {
            None => break,
            Some(Ok(rec)) => rec,
            Some(Err(e)) => {
                if let wpilog::WpilogErrorKind::Truncated { available, .. } = e.kind {
                    s.trailing_bytes = available;
                }
                s.errors.push(e.to_string());
                break;
            }
        };
        s.records += 1;
        let ts = rec.header.timestamp;
        s.timestamp_min = Some(s.timestamp_min.map_or(ts, |m| m.min(ts)));
        s.timestamp_max = Some(s.timestamp_max.map_or(ts, |m| m.max(ts)));
        match rec.body {
            Body::Control { record, .. } => match &record.body {
                ControlBody::Start { entry, name, r#type, .. } => {
                    let t = s.names.start(name, r#type);
                    tally.start(*entry, Some(t));
                    s.start += 1;
                }
                ControlBody::Finish { entry } => {
                    tally.start(*entry, None);
                    s.finish += 1;
                }
                ControlBody::SetMetadata { .. } => s.set_metadata += 1,
            },
            Body::ControlInvalid(_) => s.control_invalid += 1,
            Body::Data(None) => {
                s.data_records += 1;
                s.orphan_data_records += 1;
            }
            Body::Data(Some(e)) => {
                s.data_records += 1;
                tally.count(e.id());
                if e.is_standard() && e.decode_ref(rec.payload).is_err() {
                    s.invalid_values += 1;
                }
            }
        }
    }
    s.data_records_by_type = tally.finish(&s.names);
    s.bytes_consumed = r.position();
    Ok(s)
}

/// Data records per type, counted per entry id while the entry is active (an integer index per
/// record, not a lookup by type name) and added to the per-type totals when the id is started
/// again, finished, or the file ends.
#[derive(Default)]
struct Tally {
    /// Per entry id: its data records so far and its type ([`Names`] id, [`Tally::NONE`] when
    /// not active), in a vector while the ids stay below twice the number of ids started (or
    /// [`Tally::DENSE`]), else in a map: 8 bytes per id.
    dense: Vec<(u32, u32)>,
    sparse: std::collections::HashMap<u32, (u32, u32)>,
    /// Ids given a slot.
    ids: usize,
    /// Data records per type id.
    totals: Vec<u64>,
}

impl Tally {
    const DENSE: usize = 1024;
    const NONE: u32 = u32::MAX;

    #[inline]
    fn count(&mut self, id: u32) {
        let slot = match self.dense.get_mut(id as usize) {
            Some(s) if s.1 != Self::NONE => Some(s),
            _ if self.sparse.is_empty() => None,
            _ => self.sparse.get_mut(&id),
        };
        if let Some(slot) = slot {
            if slot.0 == u32::MAX {
                Self::add(&mut self.totals, u64::from(slot.0), slot.1);
                slot.0 = 0;
            }
            slot.0 += 1;
        }
    }

    /// Closes the count of `id` and starts one for the type `ty` (`None`: the id finished).
    fn start(&mut self, id: u32, ty: Option<u32>) {
        let i = id as usize;
        let ty = ty.unwrap_or(Self::NONE);
        // An id keeps the slot it has; the dense range may have grown past a sparse one.
        let in_sparse = !self.sparse.is_empty() && self.sparse.contains_key(&id);
        let slot = if in_sparse {
            self.sparse.entry(id).or_insert((0, Self::NONE))
        } else if i < self.dense.len() {
            &mut self.dense[i]
        } else if ty == Self::NONE {
            // A Finish of an id never started: nothing to close, nothing to keep.
            return;
        } else {
            self.ids += 1;
            if i < Self::DENSE.max(2 * self.ids) {
                self.dense.resize(i + 1, (0, Self::NONE));
                &mut self.dense[i]
            } else {
                self.sparse.entry(id).or_insert((0, Self::NONE))
            }
        };
        let (n, old) = std::mem::replace(slot, (0, ty));
        Self::add(&mut self.totals, u64::from(n), old);
    }

    #[cold]
    fn add(totals: &mut Vec<u64>, n: u64, ty: u32) {
        if n > 0 && ty != Self::NONE {
            let t = ty as usize;
            if totals.len() <= t {
                totals.resize(t + 1, 0);
            }
            totals[t] += n;
        }
    }
    /// The data records per type name, every count closed.
    fn finish(mut self, names: &Names) -> BTreeMap<String, u64> {
        for (n, t) in std::mem::take(&mut self.dense).into_iter().chain(std::mem::take(&mut self.sparse).into_values())
        {
            Self::add(&mut self.totals, u64::from(n), t);
        }
        let mut by_type = BTreeMap::new();
        for (t, n) in self.totals.iter().enumerate().filter(|(_, n)| **n > 0) {
            *by_type.entry(names.type_name(t as u32).to_string()).or_default() += n;
        }
        by_type
    }
}

/// Every entry name started, with the types it was started with, in little memory per name (a
/// file of millions of Start records keeps millions of names): names and types are kept once
/// each in an [`Interner`]; a name's first type is a type id beside it, and the rare (name,
/// type) pairs beyond the first are kept aside as pairs of ids.
#[derive(Debug, Default)]
pub struct Names {
    names: Interner,
    types: Interner,
    /// Per name id: the type id it was first started with.
    first: Vec<u32>,
    /// (name id, type id) for each other type a name was started with.
    more: std::collections::HashSet<(u32, u32)>,
}

impl Names {
    /// Notes that `name` was started with type `ty`; returns the type's id.
    fn start(&mut self, name: &str, ty: &str) -> u32 {
        let t = self.types.intern(ty);
        let n = self.names.intern(name);
        match self.first.get(n as usize) {
            None => self.first.push(t),
            Some(&f) if f != t => {
                self.more.insert((n, t));
            }
            Some(_) => {}
        }
        t
    }

    fn type_name(&self, t: u32) -> &str {
        self.types.get(t)
    }

    /// How many distinct names were started.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// The names started with more than one type, sorted.
    pub fn with_several_types(&self) -> impl Iterator<Item = &str> {
        self.more.iter().map(|&(n, _)| self.names.get(n)).collect::<BTreeSet<&str>>().into_iter()
    }

    /// For each type, the number of distinct names started with it.
    pub fn by_type(&self) -> BTreeMap<&str, u64> {
        let mut per_id = vec![0u64; self.types.len()];
        for t in self.first.iter().chain(self.more.iter().map(|(_, t)| t)) {
            per_id[*t as usize] += 1;
        }
        let mut m = BTreeMap::new();
        for (t, n) in per_id.into_iter().enumerate().filter(|(_, n)| *n > 0) {
            *m.entry(self.type_name(t as u32)).or_default() += n;
        }
        m
    }

    /// The types names were started with, sorted.
    pub fn types(&self) -> BTreeSet<&str> {
        self.types.iter().collect()
    }

    /// The names that hold struct schemas (`/.schema/` in them), sorted.
    pub fn schema_entries(&self) -> BTreeSet<&str> {
        self.names.iter().filter(|n| n.contains("/.schema/")).collect()
    }
}

/// Distinct strings, each kept once in one buffer and numbered in the order they came: about
/// 17 bytes per string beside its text, where a map of boxed strings takes some 60.
#[derive(Debug, Default)]
struct Interner {
    text: String,
    /// Where each string ends in `text`.
    ends: Vec<usize>,
    /// (string number, 32 bits of its hash), by that hash: growing the table rehashes from the
    /// stored bits, without reading the strings again.
    table: hashbrown::HashTable<(u32, u32)>,
    hasher: std::hash::RandomState,
}

impl Interner {
    fn get(&self, i: u32) -> &str {
        Self::at(&self.text, &self.ends, i)
    }

    fn at<'a>(text: &'a str, ends: &[usize], i: u32) -> &'a str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { ends[i - 1] };
        &text[start..ends[i]]
    }

    /// The table's 64-bit hash from the stored 32 bits (spread to the top bits, which the
    /// table also uses).
    fn spread(h: u32) -> u64 {
        u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The number of `s`, given it if new.
    fn intern(&mut self, s: &str) -> u32 {
        use std::hash::BuildHasher;
        let h = self.hasher.hash_one(s) as u32;
        let Interner { text, ends, table, .. } = self;
        if let Some(&(i, _)) = table.find(Self::spread(h), |&(i, hi)| hi == h && Self::at(text, ends, i) == s) {
            return i;
        }
        // More than u32::MAX distinct strings would take a file of over 70 GB.
        let i = u32::try_from(ends.len()).unwrap_or(u32::MAX);
        text.push_str(s);
        ends.push(text.len());
        table.insert_unique(Self::spread(h), (i, h), |&(_, h)| Self::spread(h));
        i
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len() as u32).map(|i| self.get(i))
    }
}

pub fn text(s: &Summary, path: &str) -> String {
    let mut t = String::new();
    t.push_str(&format!("file:        {path}\nformat:      WPILOG {}.{}\n", s.version >> 8, s.version & 0xff));
    if !s.extra_header.is_empty() {
        t.push_str(&format!("header:      {}\n", s.extra_header));
    }
    if let (Some(a), Some(b)) = (s.timestamp_min, s.timestamp_max) {
        t.push_str(&format!("time:        {} .. {} s ({:.3} s)\n", seconds(a), seconds(b), seconds(b) - seconds(a)));
    }
    t.push_str(&format!(
        "records:     {} ({} control: {} start, {} finish, {} set metadata, {} invalid; {} data)\n",
        s.records,
        s.control_records(),
        s.start,
        s.finish,
        s.set_metadata,
        s.control_invalid,
        s.data_records
    ));
    t.push_str(&format!("entries:     {} names\n", s.names.len()));
    if s.orphan_data_records > 0 {
        t.push_str(&format!(
            "orphans:     {} data records of entries not started (shown as hex)\n",
            s.orphan_data_records
        ));
    }
    if s.invalid_values > 0 {
        t.push_str(&format!("invalid:     {} values that do not decode as their type\n", s.invalid_values));
    }
    t.push_str("types (names, data records):\n");
    for (ty, n) in s.entries_by_declared_type() {
        let d = s.data_records_by_type.get(ty).copied().unwrap_or(0);
        t.push_str(&format!("  {ty:<32} {n:>5} {d:>9}\n"));
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

/// One JSON object: the keys of the reference summaries (`.expected.summary.json`) and the
/// common `format`, `ok`, `error`.
pub fn json(s: &Summary, file_name: &str) -> String {
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), file_name);
    w.str(Some("format"), "wpilog");
    w.bool(Some("ok"), s.errors.is_empty());
    match s.errors.first() {
        Some(e) => w.str(Some("error"), e),
        None => w.null(Some("error")),
    }
    w.uint(Some("bytes"), s.bytes_consumed + s.trailing_bytes);
    w.uint(Some("version"), u64::from(s.version));
    w.str(Some("extra_header"), &s.extra_header);
    w.uint(Some("records"), s.records);
    w.uint(Some("control_records"), s.control_records());
    w.uint(Some("start"), s.start);
    w.uint(Some("finish"), s.finish);
    w.uint(Some("set_metadata"), s.set_metadata);
    w.uint(Some("control_invalid"), s.control_invalid);
    w.uint(Some("data_records"), s.data_records);
    w.uint(Some("orphan_data_records"), s.orphan_data_records);
    w.uint(Some("invalid_values"), s.invalid_values);
    w.uint(Some("distinct_entry_names"), s.names.len() as u64);
    strings(&mut w, "names_with_several_types", s.names.with_several_types());
    match (s.timestamp_min, s.timestamp_max) {
        (Some(a), Some(b)) => {
            w.int(Some("timestamp_min_us"), a);
            w.int(Some("timestamp_max_us"), b);
        }
        _ => {
            w.null(Some("timestamp_min_us"));
            w.null(Some("timestamp_max_us"));
        }
    }
    w.begin_object(Some("entries_by_declared_type"));
    for (ty, n) in s.entries_by_declared_type() {
        w.uint(Some(ty), n);
    }
    w.end_object();
    w.begin_object(Some("data_records_by_type"));
    for (ty, n) in &s.data_records_by_type {
        w.uint(Some(ty), *n);
    }
    w.end_object();
    strings(&mut w, "struct_types", s.types_with_prefix("struct:"));
    strings(&mut w, "proto_types", s.types_with_prefix("proto:"));
    strings(&mut w, "schema_entries", s.names.schema_entries());
    w.uint(Some("trailing_bytes"), s.trailing_bytes);
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}

fn strings<'a>(w: &mut JsonWriter, key: &str, items: impl IntoIterator<Item = &'a str>) {
    let items: Vec<&str> = items.into_iter().collect();
    w.begin_array(Some(key), items.len());
    for i in items {
        w.str(None, i);
    }
    w.end_array();
}

/// What [`Log::to_wpilog`](super::Log::to_wpilog) wrote.
#[derive(Debug)]
pub struct Written {
    /// Values that could not be written as they were (each names the file).
    pub warnings: Vec<String>,
    /// What was written (`wrote 12 record(s) to out.wpilog`).
    pub note: String,
    /// The input problem that ended the reading, after everything before it was written.
    pub error: Option<String>,
}

/// Creates the `.wpilog` output (never the input).
fn create(path: &str, output: &std::path::Path) -> Result<std::io::BufWriter<std::fs::File>, Error> {
    if same_file(std::path::Path::new(path), output) {
        return Err(Error::Usage(format!("{}: the output would overwrite the input", output.display())));
    }
    let file = std::fs::File::create(output).map_err(|e| out_err(output, &e))?;
    Ok(std::io::BufWriter::new(file))
}

fn out_err(output: &std::path::Path, e: &dyn std::fmt::Display) -> Error {
    Error::Input(format!("{}: {e}", output.display()))
}

/// A WPILOG file copied record by record (byte-identical without filters; with channels or a
/// time window in `select`, only the wanted records).
pub(super) fn copy(
    input: Box<dyn Read>,
    path: &str,
    output: &std::path::Path,
    select: &Select,
) -> Result<Written, Error> {
    let out_err = |e: &dyn std::fmt::Display| out_err(output, e);
    let mut r = reader(input, path).map_err(Error::Input)?;
    let mut w = wpilog::Writer::with_header(create(path, output)?, r.header()).map_err(|e| out_err(&e))?;
    let mut n = 0u64;
    let mut error = None;
    while let Some(rec) = r.next_record() {
        match rec {
            Ok(rec) => {
                let keep = wants_time(select, rec.header.timestamp)
                    && (select.channels.is_empty() || channel_of(&rec).is_some_and(|c| select.wants_channel(c)));
                if keep {
                    w.record(&rec.header, rec.payload).map_err(|e| out_err(&e))?;
                    n += 1;
                }
            }
            Err(e) => {
                error = Some(format!("{path}: {e}"));
                break;
            }
        }
    }
    w.finish_file().map_err(|e| out_err(&e))?;
    Ok(Written { warnings: Vec::new(), note: format!("wrote {n} record(s) to {}", output.display()), error })
}

/// An RLOG file (or captured stream) as a WPILib DataLog ([`wpilog::from_rlog`]): one entry per
/// key.
pub(super) fn from_rlog(
    input: Box<dyn Read>,
    path: &str,
    stream: bool,
    assume_r1: bool,
    output: &std::path::Path,
    select: &Select,
) -> Result<Written, Error> {
    let out_err = |e: &dyn std::fmt::Display| out_err(output, e);
    let mut r = super::rlog::reader(input, stream, assume_r1, path).map_err(Error::Input)?;
    let header = format!("logspec {} (from RLOG {})", env!("CARGO_PKG_VERSION"), r.revision());
    let mut w = wpilog::Writer::new(create(path, output)?, &header).map_err(|e| out_err(&e))?;
    let mut wanted = |key: &str, t: f64| {
        select.wants_channel(key) && select.since.is_none_or(|s| t >= s) && select.until.is_none_or(|u| t <= u)
    };
    let c = wpilog::from_rlog::from_rlog(&mut r, &mut w, &mut wanted).map_err(|e| out_err(&e))?;
    w.finish_file().map_err(|e| out_err(&e))?;
    let warnings = c.warnings.iter().map(|w| format!("{path}: {w}")).collect();
    let note = format!("wrote {} value(s) of {} entries to {}", c.values, c.entries, output.display());
    Ok(Written { warnings, note, error: c.error.map(|e| format!("{path}: {e}")) })
}

/// The records of a WPILOG file as the dump writes them.
pub(super) fn records<R: Records>(
    input: Box<dyn Read>,
    file: &std::path::Path,
    path: &str,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    let schemas = schemas(file, path);
    let mut structs = super::structs::Decoder::new(schemas, path);
    let r = reader(input, path).map_err(Error::Input)?;
    dump(r, out, path, select, &mut structs)
}

/// The summary of a WPILOG file.
pub(super) fn info(input: Box<dyn Read>, path: &str, name: &str) -> Result<super::Info, Error> {
    let s = summarise(input, path)?;
    let (path, name) = (path.to_string(), name.to_string());
    Ok(super::Info::new(s.errors.is_empty(), move |form| match form {
        Form::Text => text(&s, &path),
        Form::Json => json(&s, &name),
    }))
}

/// Whether two paths name one existing file (so writing one would destroy the other).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// A registry with every schema of a WPILOG file, read in a first pass; empty for standard
/// input (`-`), which cannot be read twice.
pub(super) fn schemas(file: &std::path::Path, path: &str) -> crate::formats::wpistruct::TypeRegistry {
    use crate::formats::wpilog::Body;
    let mut reg = crate::formats::wpistruct::TypeRegistry::new();
    if file.as_os_str() == "-" {
        return reg;
    }
    let Ok(f) = std::fs::File::open(file) else { return reg };
    let input: Box<dyn std::io::Read> = Box::new(std::io::BufReader::with_capacity(1 << 16, f));
    let Ok(mut r) = reader(input, path) else { return reg };
    // The main pass reports errors; here they only end the search for schemas.
    while let Some(Ok(rec)) = r.next_record() {
        if let Body::Data(Some(e)) = rec.body {
            reg.offer(e.name(), e.type_name(), rec.payload);
        }
    }
    reg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_by_type_across_restarts_and_sparse_ids() {
        let mut names = Names::default();
        let mut t = Tally::default();
        let d = names.start("/a", "double");
        let i = names.start("/b", "int64");
        t.start(1, Some(d));
        t.start(4_000_000_000, Some(i));
        for _ in 0..3 {
            t.count(1);
            t.count(4_000_000_000);
        }
        // Restarted with another type: the three doubles stay doubles.
        let i2 = names.start("/a", "int64");
        t.start(1, Some(i2));
        t.count(1);
        t.start(4_000_000_000, None);
        t.count(4_000_000_000); // finished: not counted
        t.count(77); // never started
                     // Finishes of ids never started keep nothing.
        for id in 5_000..100_000 {
            t.start(id, None);
        }
        assert_eq!(t.dense.len(), 2);
        assert_eq!(t.sparse.len(), 1);
        let by_type = t.finish(&names);
        assert_eq!(by_type, BTreeMap::from([("double".to_string(), 3), ("int64".to_string(), 4)]));
        assert_eq!(names.len(), 2);
        assert_eq!(names.with_several_types().collect::<Vec<_>>(), ["/a"]);
        assert_eq!(names.by_type(), BTreeMap::from([("double", 1), ("int64", 2)]));
    }

    #[test]
    fn interned_strings_are_kept_once() {
        let mut s = Interner::default();
        let words = ["", "a", "double", "a", "", "double", "ab"];
        let ids: Vec<u32> = words.iter().map(|w| s.intern(w)).collect();
        assert_eq!(ids, [0, 1, 2, 1, 0, 2, 3]);
        assert_eq!(s.iter().collect::<Vec<_>>(), ["", "a", "double", "ab"]);
        assert_eq!(s.text, "adoubleab");
    }
}
