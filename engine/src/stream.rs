//! One table of a set of logs as a stream of Arrow record batches, for the query engines
//! (the Python package's Polars, DuckDB and Spark sources; docs/engines.md). A query names one
//! table ([`crate::tables::table_name`]: a channel, a CARLA packet kind, `<name>#<type>`) and
//! pushes down what the engine hands it:
//!
//! - the set of logs: [`crate::logs::find`] names each log `log=<name>` as the Parquet export
//!   does, and a query filtered on `log` reads only the logs it names (the others are not opened);
//! - the channels: the scan's [`Select`] keeps only the table's channels, so that the readers
//!   skip every other channel's records without decoding them (an RLOG key's value is skipped by
//!   its length, a framed record by its tag);
//! - the time window: [`Query::since`] and [`Query::until`] (seconds since the log's time origin,
//!   the `log_elapsed_ns` column) go to the scan's [`Select`];
//! - the columns: a batch holds only [`Query::columns`], and only those are built
//!   ([`TableBuilder::with_columns`]): a visit of a value passes over the members of the others,
//!   a fixed layout gathers only theirs, and a query of no value column (`count(*)`) takes each
//!   row's times alone, its value not visited.
//!
//! Partitions ([`plan`], the one planner of every engine's partitions): parts of logs, a large
//! log split at its time index's chunks ([`partitions`]) and consecutive small logs packed
//! together, of about [`crate::index::PARTITION_BYTES`] each and never fewer than the engine's
//! parallelism asks. [`scan_part`] reads one part of one log (a partition reads its parts one
//! after the other), on the caller's thread, and hands each batch as it fills (at most
//! [`crate::tables::BATCH_ROWS`] rows or [`crate::tables::BATCH_BYTES`] of values), so that
//! memory per partition is a batch or two whatever the log's size.
//!
//! Every batch has the table's columns, then `log` (the partition name), the columns the Parquet
//! export writes under `<table>/log=<name>/` read with Hive partitioning.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use logspec::log::fault::FaultKind;
use logspec::log::index::Range;
use logspec::log::{Channel, DynVisit, Error, Fault, Open, Samples, Select, TryVisit};
use logspec::value::Value;

use crate::logs::LogFile;
use crate::tables::{table_name, TableBuilder};

/// The name of the partition column.
pub const LOG_COLUMN: &str = "log";

/// What to read of one table.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// The table: its name as [`crate::tables::table_name`] gives it (the Python package's
    /// `tables()` names, the Parquet export's `logspec.table`).
    pub table: String,
    /// The columns to give, in the order of the table's schema ([`schema`]); `None` gives all.
    pub columns: Option<Vec<String>>,
    /// Samples at or after this time (seconds since the log's time origin).
    pub since: Option<f64>,
    /// Samples at or before this time (seconds since the log's time origin).
    pub until: Option<f64>,
}

impl Query {
    fn select(&self) -> Select {
        Select { channels: vec![self.table.clone()], tables: true, since: self.since, until: self.until }
    }
}

/// What scanning one log gave besides its batches.
#[derive(Debug, Default)]
pub struct Scanned {
    pub rows: u64,
    /// Problems that did not stop the reading.
    pub warnings: Vec<String>,
    /// The problem that ended the reading early, after every complete row before it (a log that
    /// could not be opened is this too, with no rows).
    pub fault: Option<Fault>,
}

/// The schema of `table` in the log `file` (its columns, then `log`), from the first channel of
/// the table the log announces; `None` when the log has no such table. The scan stops at that
/// channel.
pub fn schema(file: &Path, how: &Open, table: &str) -> Result<Option<SchemaRef>, Error> {
    let log = logspec::log::open(file, how)?;
    let utc = log.utc();
    let query = Query { table: table.to_string(), ..Query::default() };
    let mut found: Option<SchemaRef> = None;
    let mut sink = Stream::new(&query, utc, None);
    sink.on_schema = Some(&mut found);
    // The sink stops the scan at the table's first channel (with an error that means only that).
    let result = log.scan(&query.select(), &mut sink);
    drop(sink);
    if let Some(s) = found {
        return Ok(Some(with_log(&s)));
    }
    match result {
        Err(e) if !is_filter(&e) => Err(e),
        _ => Ok(None),
    }
}

/// A part of a log a scan reads ([`partitions`], [`scan_part`]): all of it, or the records that
/// start in a byte range of chunks of its time index ([`logspec::log::index`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// `None`: the whole log.
    pub range: Option<Range>,
}

/// The parts of `log` that hold the samples of `query`'s time window, each of about
/// `target_bytes` (groups of whole chunks; [`crate::index::PARTITION_BYTES`] is the engines'
/// choice): with a time index ([`logspec::log::Log::index`]: the one a ROS bag or an MCAP file
/// carries, or a current index file), the runs of chunks whose times meet the window, split
/// where a run passes `target_bytes` (none when no chunk meets it); without one (not yet built,
/// stale, or a format that has none), the whole log as one part. Every sample is in exactly one
/// part, so that the parts' rows together are the log's.
///
/// Cheap for a log that has nothing to split: without a time window, a log of at most
/// `target_bytes` is whole by its size alone; otherwise the log is opened (its first bytes, to
/// know its format) and its index read: an index file, or a bag's index or an MCAP file's
/// summary at its end, and no message.
pub fn partitions(log: &LogFile, how: &Open, query: &Query, target_bytes: u64) -> Vec<Part> {
    let whole = vec![Part::default()];
    let windowed = query.since.is_some() || query.until.is_some();
    if !windowed && std::fs::metadata(&log.file).is_ok_and(|m| m.len() <= target_bytes) {
        return whole;
    }
    let Ok(opened) = logspec::log::open(&log.file, how) else { return whole };
    let Some(idx) = opened.index() else { return whole };
    let mut parts: Vec<Part> = Vec::new();
    let mut last_end = None;
    for c in idx.chunks.iter().filter(|c| c.meets(query.since, query.until)) {
        let grow = parts
            .last_mut()
            .and_then(|p| p.range.as_mut())
            .filter(|r| last_end == Some(c.offset) && r.end - r.start + c.length <= target_bytes.max(c.length));
        match grow {
            Some(r) => r.end = c.offset + c.length,
            None => parts.push(Part {
                range: Some(Range { start: c.offset, end: c.offset + c.length, first_record: c.first_record }),
            }),
        }
        last_end = Some(c.offset + c.length);
    }
    parts
}

/// A partition of a scan over a set of logs ([`plan`]): parts of consecutive logs, read one
/// after the other ([`scan_part`] each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Partition {
    /// Each log and the part of it read, in the order of the logs.
    pub parts: Vec<(LogFile, Part)>,
    /// The bytes of the logs the parts span (a part's byte range, a whole log's size).
    pub bytes: u64,
}

/// The partitions of a scan of `query` over `logs`: every log's [`partitions`] (a log larger
/// than a partition split at its time index's chunks, a log whose chunks all miss the time
/// window left out), and consecutive parts packed together, so that a fleet of small logs is a
/// few partitions, not one per log.
///
/// The partitions are as many as the parts' bytes need at `target_bytes` each, and at least
/// twice `parallelism` (the partitions the engine reads at once), rounded up to a multiple of
/// `parallelism` so that the last round of partitions keeps every reader busy; never more than
/// the parts (a log is split at no more than the total bytes over twice `parallelism`, so that
/// one large log still makes enough parts). Parts are dealt out in order, each partition about
/// the same bytes. A log that cannot be read (its size unknown)
/// is planned whole, and its scan says why. The planning reads no message: a log's size, and
/// the index of a log that has one (those larger than a partition, or any under a time window).
pub fn plan(logs: &[LogFile], how: &Open, query: &Query, target_bytes: u64, parallelism: usize) -> Vec<Partition> {
    let target_bytes = target_bytes.max(1);
    let parallelism = parallelism.max(1) as u64;
    let min_partitions = 2 * parallelism;
    let sizes: Vec<u64> = logs.iter().map(|l| std::fs::metadata(&l.file).map_or(0, |m| m.len())).collect();
    let total: u64 = sizes.iter().sum();
    // A large log splits finer when the logs together are too few bytes to fill the partitions.
    let split = target_bytes.min(total.div_ceil(min_partitions)).max(1);
    let mut parts: Vec<(LogFile, Part, u64)> = Vec::new();
    for (log, size) in logs.iter().zip(sizes) {
        for part in partitions(log, how, query, split) {
            let bytes = part.range.map_or(size, |r| r.end.saturating_sub(r.start));
            parts.push((log.clone(), part, bytes));
        }
    }
    if parts.is_empty() {
        return Vec::new();
    }
    let total: u64 = parts.iter().map(|p| p.2).sum();
    let n = parts.len() as u64;
    let k = total.div_ceil(target_bytes).max(min_partitions).next_multiple_of(parallelism).clamp(1, n);
    // Each part to the partition its middle byte falls in, of `k` of equal bytes (by count
    // when the parts have no bytes).
    let mut groups: Vec<Vec<(LogFile, Part, u64)>> = Vec::new();
    let mut at = 0u64;
    let mut last = None;
    for (i, p) in parts.into_iter().enumerate() {
        let slot = if total == 0 {
            i as u64 * k / n
        } else {
            ((u128::from(at) + u128::from(p.2) / 2) * u128::from(k) / u128::from(total)) as u64
        };
        at += p.2;
        if last != Some(slot) {
            groups.push(Vec::new());
            last = Some(slot);
        }
        groups.last_mut().expect("a group was pushed").push(p);
    }
    // A part larger than a share leaves the next shares empty: the fullest group of several
    // parts halves (by bytes) until there are `k`.
    let bytes = |g: &[(LogFile, Part, u64)]| g.iter().map(|p| p.2).sum::<u64>();
    let want = k as usize;
    while groups.len() < want {
        let Some(i) = (0..groups.len()).filter(|&i| groups[i].len() > 1).max_by_key(|&i| bytes(&groups[i])) else {
            break;
        };
        let half = bytes(&groups[i]) / 2;
        let mut acc = 0;
        let cut = groups[i].iter().position(|p| {
            acc += p.2;
            acc > half
        });
        let cut = cut.unwrap_or(0).clamp(1, groups[i].len() - 1);
        let tail = groups[i].split_off(cut);
        groups.insert(i + 1, tail);
    }
    groups
        .into_iter()
        .map(|g| Partition { bytes: bytes(&g), parts: g.into_iter().map(|(l, p, _)| (l, p)).collect() })
        .collect()
}

/// Reads the table of `query` from one log, handing each batch to `each` with the columns of
/// `schema` (the table's schema over every log, [`schema`] of the first log that has it; a
/// column this log lacks or types otherwise is null, and said in a warning) or, with no
/// `schema`, of the log's own table and `log`, projected to `query.columns`. Every complete row
/// comes before the fault that ends a reading early. A log without the table, or without
/// samples in the window, gives no rows and no fault. An error of `each` stops the scan and is
/// returned.
///
/// With a time window and a current time index, only the chunks from the first to the last that
/// meet the window are read; a log read whole without an index has its index written
/// ([`crate::index::keep`]) for the next query.
pub fn scan(
    log: &LogFile,
    how: &Open,
    query: &Query,
    schema: Option<&SchemaRef>,
    each: &mut dyn FnMut(RecordBatch) -> Result<(), Error>,
) -> Result<Scanned, Error> {
    let part = if query.since.is_some() || query.until.is_some() {
        let parts = partitions(log, how, query, u64::MAX);
        let ranges: Vec<Range> = parts.iter().filter_map(|p| p.range).collect();
        match (ranges.first(), ranges.last()) {
            (Some(a), Some(b)) if ranges.len() == parts.len() => {
                Part { range: Some(Range { start: a.start, end: b.end, first_record: a.first_record }) }
            }
            _ if parts.is_empty() => return Ok(Scanned::default()),
            _ => Part::default(),
        }
    } else {
        Part::default()
    };
    scan_part(log, how, query, part, schema, each)
}

/// [`scan`] of one part of a log ([`partitions`]): the rows of the samples whose records start
/// in the part. A whole log read without an index has its index written for the next query.
pub fn scan_part(
    log: &LogFile,
    how: &Open,
    query: &Query,
    part: Part,
    schema: Option<&SchemaRef>,
    each: &mut dyn FnMut(RecordBatch) -> Result<(), Error>,
) -> Result<Scanned, Error> {
    let mut done = Scanned::default();
    let opened = match logspec::log::open(&log.file, how) {
        Ok(l) => l,
        Err(e) => {
            done.fault = Some(fault_of(e, &log.file));
            return Ok(done);
        }
    };
    let format = opened.format();
    let opened = match part.range {
        Some(r) => opened.with_range(r)?,
        None => opened,
    };
    let mut out = match schema {
        Some(s) => Some(Projection::new(s, query.columns.as_deref(), &log.log)?),
        None => None,
    };
    let mut failed = None;
    let mut rows = 0u64;
    let mut warned = false;
    let mut warnings = Vec::new();
    let outcome = {
        let mut hand = |b: RecordBatch| -> Result<(), Error> {
            rows += b.num_rows() as u64;
            if out.is_none() {
                // The log's own columns, those asked for that it has.
                let own = with_log(b.schema_ref());
                let have: Option<Vec<String>> = query
                    .columns
                    .as_ref()
                    .map(|c| c.iter().filter(|c| own.field_with_name(c).is_ok()).cloned().collect());
                out = Some(Projection::new(&own, have.as_deref(), &log.log)?);
            }
            let Some(out) = out.as_ref() else { return Ok(()) };
            let (b, misfit) = out.apply(&b)?;
            if misfit && !warned {
                warned = true;
                warnings.push(format!(
                    "{}: table `{}`: the log's columns differ from the table's schema (taken from the first log that has the table); the columns that differ are null",
                    log.file.display(),
                    query.table
                ));
            }
            each(b).inspect_err(|e| failed = Some(e.to_string()))
        };
        let mut sink = Stream::new(query, opened.utc(), Some(&mut hand));
        let outcome = opened.scan(&query.select(), &mut sink);
        let finished = sink.finish();
        match (outcome, finished) {
            (Ok(o), Ok(more)) => Ok((o, more)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    };
    if let Some(e) = failed {
        return Err(Error::Input(e));
    }
    done.rows = rows;
    done.warnings = warnings;
    match outcome {
        Ok((o, more)) => {
            let mut kept = None;
            if part.range.is_none() && o.index.is_some() && logspec::log::index::load(&log.file, format).is_none() {
                kept = crate::index::keep(&log.file, format, o.index);
            }
            // A filter that matched nothing in the part a fault left is an empty answer there.
            let warnings = o.warnings.into_iter().filter(|w| o.filter.as_ref() != Some(w));
            done.warnings.splice(0..0, warnings);
            done.warnings.extend(kept);
            done.warnings.extend(more);
            done.fault = o.fault.or_else(|| o.error.map(|m| Fault::new(FaultKind::Decode, &shown(&log.file), m)));
        }
        Err(e) if is_filter(&e) => {}
        Err(e) => done.fault = Some(fault_of(e, &log.file)),
    }
    Ok(done)
}

/// Whether `e` says only that the query's filter matched nothing in this log.
fn is_filter(e: &Error) -> bool {
    matches!(e, Error::At(f) if f.kind == FaultKind::Filter)
}

fn shown(file: &Path) -> String {
    logspec::log::shown(file)
}

/// An error as a fault of the log `file`.
fn fault_of(e: Error, file: &Path) -> Fault {
    match e {
        Error::At(f) => *f,
        e => Fault::new(FaultKind::Decode, &shown(file), e.to_string()),
    }
}

/// A table's schema with the `log` column after its columns.
fn with_log(s: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Field> = s.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(
        Field::new(LOG_COLUMN, DataType::Utf8, false).with_metadata(
            [(
                "doc".to_string(),
                "The log's name: its file name without the extension (`log=` of the Parquet export)".to_string(),
            )]
            .into(),
        ),
    );
    Arc::new(Schema::new_with_metadata(fields, s.metadata().clone()))
}

/// How a log's batches become the query's: the columns of the table's schema that were asked
/// for, by name, and the log's name.
struct Projection {
    schema: SchemaRef,
    log: String,
}

impl Projection {
    fn new(full: &SchemaRef, columns: Option<&[String]>, log: &str) -> Result<Projection, Error> {
        let schema = match columns {
            None => full.clone(),
            Some(cols) => {
                for c in cols {
                    if full.field_with_name(c).is_err() {
                        let names: Vec<&str> = full.fields().iter().map(|f| f.name().as_str()).collect();
                        return Err(Error::Usage(format!("no column `{c}`; the columns are {}", names.join(", "))));
                    }
                }
                let keep: Vec<usize> =
                    (0..full.fields().len()).filter(|&i| cols.iter().any(|c| c == full.field(i).name())).collect();
                Arc::new(full.project(&keep).map_err(|e| Error::Usage(e.to_string()))?)
            }
        };
        Ok(Projection { schema, log: log.to_string() })
    }

    /// The batch with the query's columns; true when a column was missing or of another type.
    fn apply(&self, b: &RecordBatch) -> Result<(RecordBatch, bool), Error> {
        let n = b.num_rows();
        let mut misfit = false;
        let arrays: Vec<ArrayRef> = self
            .schema
            .fields()
            .iter()
            .map(|f| {
                if f.name() == LOG_COLUMN {
                    return Arc::new(StringArray::from(vec![self.log.as_str(); n])) as ArrayRef;
                }
                match b.column_by_name(f.name()) {
                    Some(a) if a.data_type() == f.data_type() => a.clone(),
                    _ => {
                        misfit = true;
                        new_null_array(f.data_type(), n)
                    }
                }
            })
            .collect();
        // Columns that are null where the schema says they never are: the schema made nullable.
        let schema = if misfit {
            Arc::new(Schema::new_with_metadata(
                self.schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect::<Vec<_>>(),
                self.schema.metadata().clone(),
            ))
        } else {
            self.schema.clone()
        };
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(schema, arrays, &options)
            .map(|b| (b, misfit))
            .map_err(|e| Error::Input(format!("log={}: {e}", self.log)))
    }
}

type Hand<'a> = &'a mut dyn FnMut(RecordBatch) -> Result<(), Error>;

/// The sink of one table's samples: its rows into a [`TableBuilder`], each full batch handed on.
struct Stream<'a, 'q> {
    query: &'q Query,
    utc: bool,
    origin_ns: u64,
    /// The type name of each table met (to name a table whose type changed as `tables` does).
    names: HashMap<String, String>,
    /// Whether each channel id is of the query's table.
    ours: Vec<bool>,
    builder: Option<TableBuilder>,
    hand: Option<Hand<'a>>,
    /// Set by [`schema`]: the table's schema goes here and the scan stops.
    on_schema: Option<&'a mut Option<SchemaRef>>,
}

impl<'a, 'q> Stream<'a, 'q> {
    fn new(query: &'q Query, utc: bool, hand: Option<Hand<'a>>) -> Stream<'a, 'q> {
        Stream {
            query,
            utc,
            origin_ns: 0,
            names: HashMap::new(),
            ours: Vec::new(),
            builder: None,
            hand,
            on_schema: None,
        }
    }

    fn full(&mut self, full: bool) -> Result<(), Error> {
        if !full {
            return Ok(());
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), Error> {
        let Some(b) = self.builder.as_mut() else { return Ok(()) };
        let batch = b.batch().map_err(|e| Error::Input(format!("{}: {e}", self.query.table)))?;
        match (batch, self.hand.as_mut()) {
            (Some(batch), Some(hand)) => hand(batch),
            _ => Ok(()),
        }
    }

    /// The last batch; the warning about values that did not fit their columns.
    fn finish(&mut self) -> Result<Vec<String>, Error> {
        self.flush()?;
        Ok(match &self.builder {
            Some(b) if b.misfits > 0 => vec![format!(
                "{}: {} value(s) did not fit the column types of the channel's first description and were made null",
                self.query.table, b.misfits
            )],
            _ => Vec::new(),
        })
    }
}

impl Samples for Stream<'_, '_> {
    fn origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
    }

    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.ours.len());
        let names = &self.names;
        let name = table_name(channel, |n| names.get(n).map(String::as_str));
        self.names.entry(name.clone()).or_insert_with(|| channel.schema_name.clone());
        let ours = name == self.query.table;
        self.ours.push(ours);
        if ours && self.builder.is_none() {
            if let Some(found) = self.on_schema.as_mut() {
                **found = Some(TableBuilder::new(channel, self.utc).schema);
                return Err(Error::Io(std::io::Error::from(std::io::ErrorKind::Interrupted)));
            }
            // Only the columns asked for are built.
            self.builder = Some(TableBuilder::with_columns(channel, self.utc, self.query.columns.as_deref()));
        }
        Ok(())
    }

    fn record(&mut self, id: usize, t_ns: u64, payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        if !self.ours[id] {
            return Ok(());
        }
        let origin = self.origin_ns;
        let full = self.builder.as_mut().is_some_and(|b| b.record(t_ns, origin, payload, value));
        self.full(full)
    }

    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        if !self.ours[id] {
            return Ok(());
        }
        let origin = self.origin_ns;
        let full = self.builder.as_mut().is_some_and(|b| b.visit(t_ns, origin, value));
        self.full(full)
    }

    fn try_visit(&mut self, id: usize, t_ns: u64, value: &dyn TryVisit) -> Result<bool, Error> {
        if !self.ours[id] {
            // Checked whole, as every message is, then passed over.
            return Ok(false);
        }
        let origin = self.origin_ns;
        match self.builder.as_mut().and_then(|b| b.try_visit(t_ns, origin, value)) {
            Some(full) => self.full(full).map(|()| true),
            None => Ok(false),
        }
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        if !self.ours[id] {
            return Ok(());
        }
        let origin = self.origin_ns;
        let full = self.builder.as_mut().is_some_and(|b| b.sample(t_ns, origin, value));
        self.full(full)
    }

    fn rlog(&mut self, id: usize, t_ns: u64, value: &logspec::formats::rlog::ValueRef<'_>) -> Result<bool, Error> {
        if !self.ours[id] {
            return Ok(true);
        }
        let origin = self.origin_ns;
        let Some(b) = self.builder.as_mut() else { return Ok(true) };
        match b.rlog(t_ns, origin, value) {
            Some(full) => self.full(full).map(|()| true),
            None => Ok(false),
        }
    }
}
