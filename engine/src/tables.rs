//! A channel's samples as Arrow record batches, typed from the IR: the columns that
//! `export --parquet` writes and the Python package hands to pyarrow. [`TableBuilder`] owns the
//! rows of one table until they become a batch; [`table_name`] says which table a channel
//! belongs to; [`Tables`] is a sink of the sample source that keeps every batch in memory.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, TimestampNanosecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use logspec::value::Value;

use crate::columns::{arrow_fields, only, Col, FixedLayout, FlatRow, NestedRow};
use logspec::log::scan::{Channel, DynVisit, Samples, TryVisit};
use logspec::log::Error;
use logspec::runtime::Visitor;

mod direct;
mod fixed;
mod joined;
pub mod passes;
mod rlog;

pub use fixed::{read_usvlog, FixedRead};

/// Every table of a log, in memory: what [`read`] gives.
pub struct Read {
    /// The tables, in the order their channels first appear.
    pub tables: Vec<Table>,
    /// Problems that did not stop the reading.
    pub warnings: Vec<String>,
    /// The problem that ended the reading early, after every row before it.
    pub error: Option<Error>,
}

/// Reads the tables of the log at `path` that `select` keeps (the Python package's `tables()`),
/// by the fastest path that applies to it ([`logspec::log::Shape`]): a USVLOG file in two passes
/// ([`read_usvlog`]), any other log in one [`Log::scan`](logspec::log::Log::scan) into
/// [`Tables`]. Each gives the tables of that scan.
pub fn read(path: &std::path::Path, how: &logspec::log::Open, select: &logspec::log::Select) -> Result<Read, Error> {
    use logspec::log::Shape;
    let log = logspec::log::open(path, how)?;
    let utc = log.utc();
    let log = if log.shape() == Shape::FixedFramed {
        drop(log);
        let shown = logspec::log::shown(path);
        if let Some(r) = read_usvlog(path, &shown, select, None, None)? {
            return Ok(Read { tables: r.tables, warnings: r.warnings, error: r.error });
        }
        // The two passes decline the file: one scan.
        logspec::log::open(path, how)?
    } else {
        log
    };
    let mut sink = Tables::new(utc);
    let outcome = log.scan(select, &mut sink);
    let (tables, mut warnings) = sink.finish()?;
    let (error, more) = match outcome {
        Ok(o) => (o.fault.map(Error::from).or(o.error.map(Error::Input)), o.warnings),
        Err(e) => (Some(e), Vec::new()),
    };
    warnings.splice(0..0, more);
    Ok(Read { tables, warnings, error })
}

/// Rows buffered per table before they become a batch.
pub const BATCH_ROWS: usize = 8192;
/// Bytes of values buffered per table before they become a batch (large ROS messages). A few
/// batches of a log are alive at once when it is exported on two threads (one filling, one
/// queued, one encoding); at 4 MiB, issue 34's overlapping bag took 84 MB to export, over its
/// 64 MiB bound (`tests/bounded.rs`).
pub const BATCH_BYTES: usize = 1 << 20;

/// The rows of one table not yet in a batch.
pub struct TableBuilder {
    /// The channel's type name (`REC_NAV_SOLUTION`, `double[]`, `pkg/Type`).
    pub schema_name: String,
    /// `log_time`, `log_elapsed_ns`, then the value's columns (or `json`).
    pub schema: SchemaRef,
    /// What the IR says of the table besides its columns: `logspec.schema_id`,
    /// `logspec.fingerprint`.
    pub meta: Vec<(String, String)>,
    time: TimestampNanosecondBuilder,
    elapsed: Int64Builder,
    /// The typed columns (those a projection kept); `None` for a channel with no type
    /// description, whose values are one JSON text column (empty when a projection left `json`
    /// out).
    cols: Option<Vec<(String, Col)>>,
    json: StringBuilder,
    /// Whether every column is a scalar, so that a visit fills them directly ([`FlatRow`]).
    flat: bool,
    /// Whether a visit fills the columns directly though some are nested ([`NestedRow`]).
    nested: bool,
    /// Scratch for [`FlatRow`].
    filled: Vec<bool>,
    /// For a struct of fixed size (numbers, or nested structs of numbers): rows kept as their
    /// bytes until the batch is made.
    fixed: Option<FixedRows>,
    /// Rows and about how many bytes of values are buffered.
    pub rows: usize,
    /// Rows of the batch whose visit stopped partway ([`TableBuilder::try_visit`]): in the
    /// builders (each column has every row), left out of the batch.
    dropped: Vec<usize>,
    bytes: usize,
    /// Values that did not fit their column's type and were appended as null.
    pub misfits: u64,
}

/// The rows of a fixed-layout table not yet in its batch, as their bytes: they come after the
/// rows in the column builders.
struct FixedRows {
    layout: FixedLayout,
    buf: Vec<u8>,
    rows: usize,
}

impl FixedRows {
    /// Moves the kept rows into the column builders (when a row comes as a visit).
    fn drain(&mut self, cols: &mut [(String, Col)]) -> u64 {
        if self.rows == 0 {
            return 0;
        }
        let misfits = self.layout.append_to(&self.buf, cols);
        self.buf.clear();
        self.rows = 0;
        misfits
    }
}

/// The table a channel's samples go to: its group (a CARLA packet kind) or its name; a second
/// channel of one name with another type (an R1 key whose type changed) is its own table,
/// `<name>#<type>`. `existing` gives the type name of a table already made.
pub fn table_name<'a>(channel: &Channel, existing: impl Fn(&str) -> Option<&'a str>) -> String {
    let name = channel.group.clone().unwrap_or_else(|| channel.name.clone());
    match existing(&name) {
        Some(ty) if ty != channel.schema_name => format!("{name}#{}", channel.schema_name),
        _ => name,
    }
}

impl TableBuilder {
    /// An empty table for a channel's samples. `utc`: the log's clock is Unix time (ROS bags),
    /// so `log_time` carries the UTC time zone.
    pub fn new(channel: &Channel, utc: bool) -> TableBuilder {
        Self::with_columns(channel, utc, None)
    }

    /// [`TableBuilder::new`] whose batches hold only the value columns named in `columns` (by
    /// their names in the table's schema; `None`: every one) besides `log_time` and
    /// `log_elapsed_ns`: what an engine's projection asks for. The values of the other columns
    /// are not built: a visit passes over their members, a fixed layout gathers only the
    /// columns kept, and with no value column kept a row is its times alone (its value not
    /// visited).
    pub fn with_columns(channel: &Channel, utc: bool, columns: Option<&[String]>) -> TableBuilder {
        let tz: Option<Arc<str>> = utc.then(|| Arc::from("UTC"));
        let mut fields = vec![
            Field::new("log_time", DataType::Timestamp(TimeUnit::Nanosecond, tz), false).with_metadata(
                [(
                    "doc".to_string(),
                    if utc {
                        "The sample's time: the log's clock (ROS bags: Unix time)."
                    } else {
                        "The sample's time: the log's own clock (since its clock's zero, e.g. boot)."
                    }
                    .to_string(),
                )]
                .into(),
            ),
            Field::new("log_elapsed_ns", DataType::Int64, false).with_metadata(
                [
                    ("unit".to_string(), "ns".to_string()),
                    (
                        "doc".to_string(),
                        "Nanoseconds since the log's time origin (its clock's zero; a ROS bag's first message)."
                            .to_string(),
                    ),
                ]
                .into(),
            ),
        ];
        let mut meta = Vec::new();
        let cols = match &channel.ty {
            Some(t) => {
                let body = arrow_fields(&t.schema, &t.schema.strukt(t.id).fields, None);
                let mut cols = Vec::with_capacity(body.len());
                for f in body {
                    // A field named like a column of ours (`log_time`) gets a `_` appended.
                    let mut name = f.name().to_string();
                    while fields.iter().any(|g| g.name() == &name) {
                        name.push('_');
                    }
                    cols.push((f.name().to_string(), Col::new(f.data_type())));
                    fields.push(f.with_name(name));
                }
                if let Some(id) = &t.schema.format.schema_id {
                    meta.push(("logspec.schema_id".to_string(), id.value.to_string()));
                }
                if let Some(r) = t.schema.record_for(t.id) {
                    meta.push(("logspec.fingerprint".to_string(), format!("{:016x}", r.fingerprint)));
                }
                Some(cols)
            }
            None => {
                fields.push(
                    Field::new("json", DataType::Utf8, true).with_metadata(
                        [(
                            "doc".to_string(),
                            "The value as `logspec dump` prints it (no type description)".to_string(),
                        )]
                        .into(),
                    ),
                );
                None
            }
        };
        if let Some(r) = channel.ros1.as_ref().filter(|r| !r.md5sum.is_empty()) {
            meta.push(("logspec.fingerprint".to_string(), r.md5sum.clone()));
        }
        // The value columns kept (indexes after the two time columns), all without a projection.
        let kept: Vec<usize> = (0..fields.len() - 2)
            .filter(|k| columns.is_none_or(|want| want.iter().any(|w| w == fields[k + 2].name())))
            .collect();
        let all = kept.len() == fields.len() - 2;
        let mut cols = cols;
        if !all {
            let values = fields.split_off(2);
            fields.extend(only(values, &kept));
            // An untyped table not asked for `json` has no value column either.
            cols = Some(cols.map_or_else(Vec::new, |c| only(c, &kept)));
        }
        let values = !kept.is_empty();
        let schema = Arc::new(ArrowSchema::new(fields));
        let flat = cols.as_ref().is_some_and(|c: &Vec<(String, Col)>| c.iter().all(|(_, c)| c.is_scalar()));
        let nested = !flat && cols.as_ref().is_some_and(|c| NestedRow::streams(c));
        // Rows straight from their bytes where the IR gives every column a fixed place, and the
        // layout's arrays have the columns' types.
        let fixed = match &channel.ty {
            Some(t) if values && (flat || nested) => FixedLayout::of(&t.schema, t.id)
                .map(|l| if all { l } else { l.select(&kept) })
                .and_then(|l| l.bind(&schema.fields()[2..])),
            _ => None,
        };
        TableBuilder {
            schema_name: channel.schema_name.clone(),
            schema,
            meta,
            time: TimestampNanosecondBuilder::with_capacity(0).with_timezone_opt(utc.then_some("UTC")),
            elapsed: Int64Builder::with_capacity(0),
            cols,
            json: StringBuilder::with_capacity(0, 0),
            flat,
            nested,
            filled: Vec::new(),
            fixed: fixed.map(|layout| FixedRows { layout, buf: Vec::new(), rows: 0 }),
            rows: 0,
            dropped: Vec::new(),
            bytes: 0,
            misfits: 0,
        }
    }

    /// Whether the table has a value column ([`TableBuilder::with_columns`]: one the query
    /// asked for, or `json`); without one, a row is its time columns and its value is not
    /// looked at.
    #[inline]
    fn values(&self) -> bool {
        self.cols.as_ref().is_none_or(|c| !c.is_empty())
    }

    /// Ends a row whose columns are appended: its time columns (`t_ns` and the time since
    /// `origin_ns`, saturating at `i64::MAX`) and the count. True when the batch is full.
    #[inline]
    fn end_row(&mut self, t_ns: u64, origin_ns: u64) -> bool {
        self.time.append_value(i64::try_from(t_ns).unwrap_or(i64::MAX));
        self.elapsed.append_value(i64::try_from(t_ns.saturating_sub(origin_ns)).unwrap_or(i64::MAX));
        self.rows += 1;
        self.rows >= BATCH_ROWS || self.bytes >= BATCH_BYTES
    }

    /// Appends a record's row from its payload bytes when the table has a fixed layout (else
    /// from its visit, [`TableBuilder::visit`]). True when the batch is full.
    pub fn record(&mut self, t_ns: u64, origin_ns: u64, payload: &[u8], value: &dyn DynVisit) -> bool {
        if !self.values() {
            return self.end_row(t_ns, origin_ns);
        }
        let Some(fx) = self.fixed.as_mut() else { return self.visit(t_ns, origin_ns, value) };
        let Some(bytes) = payload.get(..fx.layout.size) else { return self.visit(t_ns, origin_ns, value) };
        fx.buf.extend_from_slice(bytes);
        fx.rows += 1;
        self.bytes += bytes.len() + 16;
        self.end_row(t_ns, origin_ns)
    }

    /// Appends a row from a visit of its value. True when the batch is full.
    pub fn visit(&mut self, t_ns: u64, origin_ns: u64, value: &dyn DynVisit) -> bool {
        if !self.values() {
            return self.end_row(t_ns, origin_ns);
        }
        self.row(t_ns, origin_ns, |v| {
            value.visit_dyn(v);
            true
        })
    }

    /// Appends a row from a visit that may stop partway (a message decoded as it is shown); a
    /// row whose visit stopped is left out of the batch. `Some(true)` when the batch is full;
    /// `None` when the table has no value column, and the value is not visited (the caller
    /// checks it whole instead: [`Samples::try_visit`]).
    pub fn try_visit(&mut self, t_ns: u64, origin_ns: u64, value: &dyn TryVisit) -> Option<bool> {
        self.values().then(|| self.row(t_ns, origin_ns, |v| value.try_visit_dyn(v)))
    }

    /// A row of the table's value columns, from `show`, which visits the value (false: it
    /// stopped partway, and the row is left out). True when the batch is full.
    fn row(&mut self, t_ns: u64, origin_ns: u64, show: impl FnOnce(&mut dyn Visitor) -> bool) -> bool {
        if let (Some(fx), Some(cols)) = (self.fixed.as_mut(), self.cols.as_mut()) {
            self.misfits += fx.drain(cols);
        }
        let (whole, bytes, misfits) = if let Some(cols) = self.cols.as_mut().filter(|_| self.nested) {
            let mut row = NestedRow::new(cols, &mut self.filled);
            let whole = show(&mut row);
            (whole, row.bytes, row.finish())
        } else if let Some(cols) = self.cols.as_mut().filter(|_| self.flat) {
            let mut row = FlatRow::new(cols, &mut self.filled);
            let whole = show(&mut row);
            (whole, row.bytes + 8 * row.cols.len(), row.finish())
        } else {
            let mut b = logspec::value::ValueBuilder::default();
            if !show(&mut b) {
                return false;
            }
            return self.sample(t_ns, origin_ns, &b.finish());
        };
        if whole {
            self.bytes += bytes;
            self.misfits += misfits;
        } else {
            self.dropped.push(self.rows);
        }
        self.end_row(t_ns, origin_ns)
    }

    /// Appends a row from a decoded value. True when the batch is full.
    pub fn sample(&mut self, t_ns: u64, origin_ns: u64, value: &Value) -> bool {
        if !self.values() {
            return self.end_row(t_ns, origin_ns);
        }
        if let (Some(fx), Some(cols)) = (self.fixed.as_mut(), self.cols.as_mut()) {
            self.misfits += fx.drain(cols);
        }
        self.bytes += approx_size(value);
        match &mut self.cols {
            Some(cols) => {
                let members = match value {
                    Value::Object(m) => m.as_slice(),
                    _ => &[],
                };
                for (k, (name, c)) in cols.iter_mut().enumerate() {
                    let found = match members.get(k) {
                        Some((n, v)) if n == name => Some(v),
                        _ => members.iter().find(|(n, _)| n == name).map(|(_, v)| v),
                    };
                    self.misfits += c.append(found);
                }
            }
            None => self.json.append_value(value.to_json()),
        }
        self.end_row(t_ns, origin_ns)
    }

    /// The buffered rows as a batch (`None` when there are none); the builder is empty after.
    pub fn batch(&mut self) -> Result<Option<RecordBatch>, String> {
        if self.rows == 0 {
            return Ok(None);
        }
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(self.time.finish()), Arc::new(self.elapsed.finish())];
        match (&mut self.cols, &mut self.fixed) {
            // Every row of the batch as bytes: the arrays straight from them.
            (Some(_), Some(fx)) if fx.rows == self.rows => {
                arrays.extend((0..fx.layout.columns()).map(|i| fx.layout.column(i, &fx.buf)));
                fx.buf.clear();
                fx.rows = 0;
            }
            (Some(cols), fixed) => {
                if let Some(fx) = fixed {
                    self.misfits += fx.drain(cols);
                }
                arrays.extend(cols.iter_mut().map(|(_, c)| c.finish()));
            }
            (None, _) => arrays.push(Arc::new(self.json.finish())),
        }
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| format!("building a batch: {e}"))?;
        if self.dropped.is_empty() {
            return Ok(Some(batch));
        }
        // The rows whose visit stopped partway, left out.
        let mut keep = vec![true; rows];
        for i in self.dropped.drain(..) {
            keep[i] = false;
        }
        let batch = arrow_select::filter::filter_record_batch(&batch, &keep.into())
            .map_err(|e| format!("leaving out undecodable rows: {e}"))?;
        Ok((batch.num_rows() > 0).then_some(batch))
    }
}

/// About how many bytes a value takes in column builders.
fn approx_size(v: &Value) -> usize {
    match v {
        Value::Str(s) => s.len() + 4,
        Value::Bytes(b) => b.len() + 4,
        Value::Array(items) => 4 + items.iter().map(approx_size).sum::<usize>(),
        Value::Object(fields) => fields.iter().map(|(_, x)| approx_size(x)).sum(),
        _ => 8,
    }
}

/// One table of a log in memory: its name, schema and batches (one, when its columns are
/// numbers, timestamps and bools: `joined`).
pub struct Table {
    pub name: String,
    pub builder: TableBuilder,
    pub batches: Vec<RecordBatch>,
    /// The batches so far joined into one, when the columns allow it.
    joined: Option<joined::Joined>,
    /// The rows of an RLOG key of numbers or booleans, kept without batches ([`direct`]).
    direct: Option<direct::Direct>,
}

impl Table {
    /// Makes a batch of the rows buffered, joined to the table's column or kept.
    fn full(&mut self) -> Result<(), Error> {
        let fail = |e: String| Error::Input(format!("{}: {e}", self.name));
        if let Some(b) = self.builder.batch().map_err(fail)? {
            match &mut self.joined {
                Some(j) => j.push(&b).map_err(fail)?,
                None => self.batches.push(b),
            }
        }
        Ok(())
    }
}

/// A sink that keeps every table of a log in memory as record batches (the Python package's
/// `.table()`/`.tables()`), in the order the channels first appear.
pub struct Tables {
    /// Whether the log's clock is Unix time (ROS bags).
    pub utc: bool,
    origin_ns: u64,
    /// Table index of each channel id.
    by_channel: Vec<usize>,
    by_name: HashMap<String, usize>,
    pub tables: Vec<Table>,
    /// Whether an RLOG key of numbers or booleans keeps its rows in vectors (`direct`) instead
    /// of the builder's batches.
    direct: bool,
}

impl Tables {
    pub fn new(utc: bool) -> Tables {
        Tables { utc, origin_ns: 0, by_channel: Vec::new(), by_name: HashMap::new(), tables: Vec::new(), direct: true }
    }

    /// The same sink with every table in the builder's batches: the generic path that the
    /// direct columns are held to (`tests/it/fast_paths.rs`) and measured against
    /// (`benches/tables.rs`).
    pub fn without_direct(mut self) -> Tables {
        self.direct = false;
        self
    }

    fn full(&mut self, i: usize) -> Result<(), Error> {
        self.tables[i].full()
    }

    /// Makes the last batch of every table; returns the tables and the warnings about values
    /// that did not fit their columns.
    pub fn finish(mut self) -> Result<(Vec<Table>, Vec<String>), Error> {
        let mut warnings = Vec::new();
        for i in 0..self.tables.len() {
            self.full(i)?;
            let t = &mut self.tables[i];
            if let Some(d) = t.direct.take() {
                t.builder.misfits += d.misfits;
                let fail = |e: String| Error::Input(format!("{}: {e}", t.name));
                t.batches.extend(d.finish().map_err(fail)?);
            }
            if let Some(j) = t.joined.take() {
                let fail = |e: String| Error::Input(format!("{}: {e}", t.name));
                t.batches.extend(j.finish().map_err(fail)?);
            }
            if t.builder.misfits > 0 {
                warnings.push(format!(
                    "{}: {} value(s) did not fit the column types of the channel's first description and were made null",
                    t.name, t.builder.misfits
                ));
            }
        }
        Ok((self.tables, warnings))
    }
}

impl Samples for Tables {
    fn origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
    }

    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.by_channel.len());
        let tables = &self.tables;
        let by_name = &self.by_name;
        let name = table_name(channel, |n| by_name.get(n).map(|i| tables[*i].builder.schema_name.as_str()));
        let i = match self.by_name.get(&name) {
            Some(i) => *i,
            None => {
                let builder = TableBuilder::new(channel, self.utc);
                let joined = joined::Joined::new(&builder.schema);
                let direct =
                    if self.direct { direct::Direct::of(channel, &builder.schema, self.origin_ns) } else { None };
                self.tables.push(Table { name: name.clone(), builder, batches: Vec::new(), joined, direct });
                self.by_name.insert(name, self.tables.len() - 1);
                self.tables.len() - 1
            }
        };
        self.by_channel.push(i);
        Ok(())
    }

    fn record(&mut self, id: usize, t_ns: u64, payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        let i = self.by_channel[id];
        if self.tables[i].direct.is_some() {
            return self.visit(id, t_ns, value);
        }
        if self.tables[i].builder.record(t_ns, self.origin_ns, payload, value) {
            self.full(i)?;
        }
        Ok(())
    }

    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        let i = self.by_channel[id];
        if self.tables[i].direct.is_some() {
            let mut b = logspec::value::ValueBuilder::default();
            value.visit_dyn(&mut b);
            return self.sample(id, t_ns, &b.finish());
        }
        if self.tables[i].builder.visit(t_ns, self.origin_ns, value) {
            self.full(i)?;
        }
        Ok(())
    }

    fn try_visit(&mut self, id: usize, t_ns: u64, value: &dyn TryVisit) -> Result<bool, Error> {
        let i = self.by_channel[id];
        if self.tables[i].direct.is_some() {
            return Ok(false);
        }
        match self.tables[i].builder.try_visit(t_ns, self.origin_ns, value) {
            Some(full) => {
                if full {
                    self.full(i)?;
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        let i = self.by_channel[id];
        if let Some(d) = &mut self.tables[i].direct {
            d.sample(t_ns, value);
            return Ok(());
        }
        if self.tables[i].builder.sample(t_ns, self.origin_ns, value) {
            self.full(i)?;
        }
        Ok(())
    }

    fn rlog(&mut self, id: usize, t_ns: u64, value: &logspec::formats::rlog::ValueRef<'_>) -> Result<bool, Error> {
        let i = self.by_channel[id];
        let t = &mut self.tables[i];
        if let Some(d) = &mut t.direct {
            d.rlog(t_ns, value);
            return Ok(true);
        }
        match t.builder.rlog(t_ns, self.origin_ns, value) {
            Some(full) => {
                if full {
                    self.full(i)?;
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Calls `f` with every value of the bundled RLOG logs (`tests/data/rlog`), in file order, for
/// tests that hold two paths to each other.
#[cfg(test)]
fn each_bundled_rlog_value(mut f: impl FnMut(&logspec::formats::rlog::ValueRef<'_>)) {
    use logspec::formats::rlog;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/rlog");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths.iter().filter(|p| p.extension().is_some_and(|x| x == "rlog")) {
        let bytes = std::fs::read(p).unwrap();
        let Ok(mut r) = rlog::Reader::new(&bytes[..]) else { continue };
        while let Some(ev) = r.next_event_ref() {
            if let Ok(rlog::EventRef::Value { value, .. }) = ev {
                f(&value);
            }
        }
    }
}
