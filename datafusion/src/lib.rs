//! Raw logs as a DataFusion table: [`LogTable`], a [`TableProvider`] over one table (a channel,
//! as `logspec_engine::tables::table_name` names it) of a set of logs, read where they sit by
//! logspec's readers (docs/engines.md).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use logspec_datafusion::LogTable;
//!
//! # let logs = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/usvlog");
//! // Files, directories (searched recursively) and glob patterns, as `logspec export` takes them.
//! let table = LogTable::try_new(&[logs], "REC_NAV_SOLUTION")?;
//! let ctx = SessionContext::new();
//! ctx.register_table("nav", Arc::new(table))?;
//! let df = ctx
//!     .sql("SELECT log, count(*) AS n, max(x) FROM nav WHERE log_elapsed_ns < 2000000000 GROUP BY log")
//!     .await?;
//! let batches = df.collect().await?;
//! assert!(batches.iter().map(|b| b.num_rows()).sum::<usize>() > 0);
//! # Ok(())
//! # }
//! ```
//!
//! The table's columns are those of the Parquet export's table read with Hive partitioning
//! (docs/parquet.md): the channel's columns (`log_time`, `log_elapsed_ns`, the values), then
//! `log`, the log's name (its file name without the extension, `log=<name>` in the export).
//! The schema is the table's in the first log that has it; a log whose table differs has nulls
//! where it differs (every column is nullable).
//!
//! What the scan does itself, and what DataFusion is told ([`TableProvider::supports_filters_pushdown`]):
//!
//! - the projection: only the columns asked for are built, and only the table's channels are
//!   decoded (a log's other channels are skipped undecoded);
//! - a filter on `log` alone (any expression of that column only: `=`, `IN`, `LIKE`, ...):
//!   evaluated on each log's name at planning time, so the other logs are never opened; exact;
//! - bounds on `log_elapsed_ns` against a literal (`<`, `<=`, `>`, `>=`, `=`, `BETWEEN`): the
//!   scan's time window, widened by a microsecond (the readers compare seconds as `f64`); inexact,
//!   so DataFusion applies the filter again to the rows it gets;
//! - every other filter: unsupported (DataFusion applies it).
//!
//! Partitions ([`logspec_engine::stream::plan`]): parts of logs of about
//! [`logspec_engine::index::PARTITION_BYTES`] each ([`LogTable::with_partition_bytes`]):
//! consecutive small logs packed together, a log with a current time index (`logspec index`, or
//! written by an earlier scan that read it whole) split at its chunks among those the time window
//! meets; at least twice `target_partitions` of them (as many as there are parts, if fewer), a
//! multiple of it. Planning reads no log but the index of one that has one: a log's size says
//! whether it needs splitting. A partition is read on a thread of its own, its logs one after
//! the other, that hands its batches over a channel of [`BATCHES_AHEAD`] batches; at most
//! `target_partitions` threads decode at once. A thread whose channel is full (the query is not
//! taking its batches yet) gives its turn up until the query takes one, so that an operator that
//! waits for the first batch of every partition before draining any (a sort-preserving merge)
//! gets them all, however many partitions there are.
//!
//! Statistics ([`ExecutionPlan::statistics_from_inputs`], per partition and overall): the bytes
//! of the logs each partition reads (inexact: an upper bound of what one table's columns take);
//! the row count, exact, of a partition whose parts this table (any clone of it) read whole
//! before without a fault and without a time window, while each log's stamp (size, modification
//! time, SHA-256 of its first and last 64 KiB, as the time index checks it) is unchanged, so
//! that a second `count(*)` is answered without reading; otherwise absent (the time index
//! counts a chunk's records, not one table's rows).
//!
//! A log that fails part-way (cut short, corrupted) has its complete rows read first. Then, with
//! [`OnError::Raise`] (the default) the query fails with a [`LogError`] (DataFusion's
//! `External` error) that names the log, file, byte offset and field; with [`OnError::Keep`] the
//! rows are kept, as `logspec export` keeps them, and the fault is kept in [`LogTable::faults`]
//! and handed to the [`LogTable::with_on_fault`] hook. An input that is not a log is the same.
//! What did not stop a log's reading (a record skipped, a value kept as hex, a log whose
//! columns differ from the table's), which `logspec export` prints as warnings, is kept in
//! [`LogTable::warnings`] and handed to the [`LogTable::with_on_warning`] hook, whatever the
//! [`OnError`]: the query's answer leaves those records out, and this says so.

#![deny(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion_catalog::{Session, TableProvider};
use datafusion_common::stats::Precision;
use datafusion_common::tree_node::TreeNodeRecursion;
use datafusion_common::{DFSchema, DataFusionError, Result, ScalarValue, Statistics};
use datafusion_execution::{SendableRecordBatchStream, TaskContext};
use datafusion_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown, TableType};
use datafusion_physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion_physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion_physical_plan::statistics::StatisticsArgs;
use datafusion_physical_plan::stream::RecordBatchStreamAdapter;
use datafusion_physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties};
use futures::StreamExt;
use logspec::log::index::{self, Stamp};
use logspec::log::{Fault, Open};
use logspec_engine::logs::{self, LogFile};
use logspec_engine::stream::{self, Part, Partition, Query, LOG_COLUMN};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// The batches a log's reading thread may have ready before the query takes them.
pub const BATCHES_AHEAD: usize = 2;

/// The column the time window is on: nanoseconds since the log's time origin.
const ELAPSED: &str = "log_elapsed_ns";

/// What a log that fails part-way, or an input that is not a log, does to the query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// The query fails with a [`LogError`] naming the log (after the rows before the fault were
    /// handed on: an aggregate over them is not returned).
    #[default]
    Raise,
    /// The log's complete rows are kept, as `logspec export` keeps them; the fault goes to
    /// [`LogTable::faults`] and the [`LogTable::with_on_fault`] hook.
    Keep,
}

/// A problem of one input: the log's name (`log=`; the file name for an input that is not a
/// log) and the fault (its message names the file; offset, record and field where known).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError {
    pub log: String,
    pub fault: Fault,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log={}: {}", self.log, self.fault.message)
    }
}

impl std::error::Error for LogError {}

/// Called with each fault kept under [`OnError::Keep`] (or each warning), on the thread that
/// read the log.
pub type OnFault = Arc<dyn Fn(&LogError) + Send + Sync>;

/// One table of a set of logs, as a DataFusion table (see the crate's documentation).
#[derive(Clone)]
pub struct LogTable {
    table: String,
    logs: Vec<LogFile>,
    how: Open,
    /// The table's schema (every column nullable), `log` last.
    schema: SchemaRef,
    on_error: OnError,
    faults: Kept,
    warnings: Kept,
    /// The rows of each part read whole without a fault or a time window, with the log's stamp
    /// then (the statistics' exact row counts).
    counted: Arc<Mutex<Counted>>,
    /// The bytes of a partition of a log with a time index.
    partition_bytes: u64,
}

/// A part of a log: its file and the byte range of its chunks (`None`: the whole log).
type PartKey = (PathBuf, Option<(u64, u64)>);

/// The rows of the parts read whole, with the log's stamp before the reading.
type Counted = HashMap<PartKey, (Stamp, u64)>;

fn part_key(log: &LogFile, part: &Part) -> PartKey {
    (log.file.clone(), part.range.map(|r| (r.start, r.end)))
}

impl fmt::Debug for LogTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogTable").field("table", &self.table).field("logs", &self.logs.len()).finish_non_exhaustive()
    }
}

impl LogTable {
    /// The table `table` of the logs named by `inputs` (files, directories searched
    /// recursively, glob patterns), each log detected and mapped as the `logspec` command does.
    pub fn try_new<P: AsRef<std::path::Path>>(inputs: &[P], table: &str) -> Result<LogTable, logspec::log::Error> {
        LogTable::with_options(inputs, table, &Open { map: true, ..Open::default() }, OnError::default())
    }

    /// [`LogTable::try_new`] with how to open the logs (a format, a schema) and what a fault does.
    /// An input that is not a log is an error here with [`OnError::Raise`], and the first of
    /// [`LogTable::faults`] with [`OnError::Keep`].
    pub fn with_options<P: AsRef<std::path::Path>>(
        inputs: &[P],
        table: &str,
        how: &Open,
        on_error: OnError,
    ) -> Result<LogTable, logspec::log::Error> {
        use logspec::log::Error;
        if table.is_empty() {
            return Err(Error::Usage("name one table (a channel, as `logspec info` lists them)".into()));
        }
        let inputs: Vec<PathBuf> = inputs.iter().map(|p| p.as_ref().to_path_buf()).collect();
        let found = logs::find(&inputs, how, None)?;
        let not_logs: Vec<LogError> = found
            .not_logs
            .iter()
            .map(|n| LogError {
                log: n.file.clone(),
                fault: Fault::new(
                    logspec::log::fault::FaultKind::Decode,
                    &n.file,
                    format!("{}: not read: {}", n.file, n.reason),
                ),
            })
            .collect();
        if let (OnError::Raise, Some(first)) = (on_error, not_logs.first()) {
            return Err(Error::Input(first.fault.message.clone()));
        }
        let mut schema = None;
        for log in &found.logs {
            // A log that cannot be read says so when it is scanned.
            if let Ok(Some(s)) = stream::schema(&log.file, how, table) {
                schema = Some(s);
                break;
            }
        }
        let Some(schema) = schema else {
            return Err(Error::Usage(format!("no log among the {} has a table `{table}`", found.logs.len())));
        };
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .map(|f| {
                let f = f.as_ref().clone();
                if f.name() == LOG_COLUMN {
                    f
                } else {
                    f.with_nullable(true)
                }
            })
            .collect();
        Ok(LogTable {
            table: table.to_string(),
            logs: found.logs,
            how: how.clone(),
            schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            on_error,
            faults: Kept::new(not_logs.clone()),
            warnings: Kept::new(Vec::new()),
            counted: Arc::new(Mutex::new(HashMap::new())),
            partition_bytes: logspec_engine::index::PARTITION_BYTES,
        })
    }

    /// Calls `hook` with each log's fault kept under [`OnError::Keep`], when its reading ends.
    pub fn with_on_fault(mut self, hook: OnFault) -> LogTable {
        self.faults.hook = Some(hook);
        self
    }

    /// Calls `hook` with each warning of a log's reading (what did not stop it: a record
    /// skipped, a value kept as hex, columns that differ from the table's), when its reading
    /// ends, under either [`OnError`].
    pub fn with_on_warning(mut self, hook: OnFault) -> LogTable {
        self.warnings.hook = Some(hook);
        self
    }

    /// Makes partitions of about `bytes` ([`logspec_engine::index::PARTITION_BYTES`] by
    /// default): small logs packed together up to it, a log with a current time index split into
    /// parts of about it (whole chunks of about 1 MiB).
    pub fn with_partition_bytes(mut self, bytes: u64) -> LogTable {
        self.partition_bytes = bytes.max(1);
        self
    }

    /// The logs, each with its name (`log`).
    pub fn logs(&self) -> &[LogFile] {
        &self.logs
    }

    /// The faults kept so far under [`OnError::Keep`] (taken: a second call gives only newer ones).
    pub fn faults(&self) -> Vec<LogError> {
        self.faults.take()
    }

    /// The warnings of the logs read so far, each naming its log (taken: a second call gives
    /// only newer ones); see [`LogTable::with_on_warning`].
    pub fn warnings(&self) -> Vec<LogError> {
        self.warnings.take()
    }

    /// The logs whose name satisfies every filter on `log` alone.
    fn logs_for(&self, state: &dyn Session, filters: &[Expr]) -> Result<Vec<LogFile>> {
        let on_log: Vec<&Expr> = filters.iter().filter(|f| only_log(f)).collect();
        if on_log.is_empty() {
            return Ok(self.logs.clone());
        }
        let names = Arc::new(Schema::new(vec![Field::new(LOG_COLUMN, DataType::Utf8, false)]));
        let df_schema = DFSchema::try_from(names.as_ref().clone())?;
        let exprs: Vec<Arc<dyn PhysicalExpr>> =
            on_log.iter().map(|f| state.create_physical_expr((*f).clone(), &df_schema)).collect::<Result<_>>()?;
        let column: ArrayRef = Arc::new(StringArray::from_iter_values(self.logs.iter().map(|l| l.log.as_str())));
        let batch = RecordBatch::try_new(names, vec![column])?;
        let mut keep = vec![true; self.logs.len()];
        for e in &exprs {
            let out = e.evaluate(&batch)?.into_array(batch.num_rows())?;
            let out = out
                .as_any()
                .downcast_ref::<arrow_array::BooleanArray>()
                .ok_or_else(|| DataFusionError::Internal(format!("a filter on `log` gave {}", out.data_type())))?;
            for (k, v) in keep.iter_mut().zip(out.iter()) {
                *k &= v == Some(true);
            }
        }
        Ok(self.logs.iter().zip(keep).filter(|(_, k)| *k).map(|(l, _)| l.clone()).collect())
    }
}

/// Problems of the logs read, shared by a table's clones and scans, and the hook each is handed
/// to as it is kept (a clone's own).
#[derive(Clone)]
struct Kept {
    list: Arc<Mutex<Vec<LogError>>>,
    hook: Option<OnFault>,
}

impl Kept {
    fn new(list: Vec<LogError>) -> Kept {
        Kept { list: Arc::new(Mutex::new(list)), hook: None }
    }

    fn keep(&self, e: LogError) {
        if let Some(h) = &self.hook {
            h(&e);
        }
        lock(&self.list).push(e);
    }

    /// Those kept so far (a second call gives only newer ones).
    fn take(&self) -> Vec<LogError> {
        std::mem::take(&mut *lock(&self.list))
    }
}

/// Whether `e` refers to the `log` column and no other.
fn only_log(e: &Expr) -> bool {
    let cols = e.column_refs();
    !cols.is_empty() && cols.iter().all(|c| c.name == LOG_COLUMN)
}

/// The time window a filter gives, in ns since the log's origin (inclusive), if it is a bound on
/// `log_elapsed_ns` against a literal.
fn window(e: &Expr) -> Option<(Option<i128>, Option<i128>)> {
    fn lit(e: &Expr) -> Option<i128> {
        let e = match e {
            Expr::Cast(c) => c.expr.as_ref(),
            Expr::TryCast(c) => c.expr.as_ref(),
            e => e,
        };
        match e {
            Expr::Literal(v, _) => match v {
                ScalarValue::Int8(Some(v)) => Some(i128::from(*v)),
                ScalarValue::Int16(Some(v)) => Some(i128::from(*v)),
                ScalarValue::Int32(Some(v)) => Some(i128::from(*v)),
                ScalarValue::Int64(Some(v)) => Some(i128::from(*v)),
                ScalarValue::UInt8(Some(v)) => Some(i128::from(*v)),
                ScalarValue::UInt16(Some(v)) => Some(i128::from(*v)),
                ScalarValue::UInt32(Some(v)) => Some(i128::from(*v)),
                ScalarValue::UInt64(Some(v)) => Some(i128::from(*v)),
                ScalarValue::Float64(Some(v)) if v.is_finite() => Some(*v as i128),
                ScalarValue::Float32(Some(v)) if v.is_finite() => Some(*v as i128),
                _ => None,
            },
            _ => None,
        }
    }
    fn is_elapsed(e: &Expr) -> bool {
        let e = match e {
            Expr::Cast(c) => c.expr.as_ref(),
            e => e,
        };
        matches!(e, Expr::Column(c) if c.name == ELAPSED)
    }
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (v, op) = if is_elapsed(left) {
                (lit(right)?, *op)
            } else if is_elapsed(right) {
                (lit(left)?, op.swap()?)
            } else {
                return None;
            };
            // Float literals are rounded: the bounds stay inclusive (the window is inexact).
            match op {
                Operator::Lt | Operator::LtEq => Some((None, Some(v))),
                Operator::Gt | Operator::GtEq => Some((Some(v), None)),
                Operator::Eq => Some((Some(v), Some(v))),
                _ => None,
            }
        }
        Expr::Between(b) if !b.negated && is_elapsed(&b.expr) => Some((Some(lit(&b.low)?), Some(lit(&b.high)?))),
        _ => None,
    }
}

#[async_trait]
impl TableProvider for LogTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if only_log(f) {
                    TableProviderFilterPushDown::Exact
                } else if window(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let logs = self.logs_for(state, filters)?;
        let (mut lo, mut hi): (Option<i128>, Option<i128>) = (None, None);
        for (a, b) in filters.iter().filter_map(window) {
            if let Some(a) = a {
                lo = Some(lo.map_or(a, |l| l.max(a)));
            }
            if let Some(b) = b {
                hi = Some(hi.map_or(b, |h| h.min(b)));
            }
        }
        // Widened by a microsecond: the readers compare `t_ns as f64 / 1e9` with the bounds.
        let since = lo.map(|v| (v as f64 - 1e3) / 1e9);
        let until = hi.map(|v| (v as f64 + 1e3) / 1e9);
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let out = Arc::new(self.schema.project(&projection)?);
        // The scan gives the columns in the table's order; the plan's order is the projection's.
        let mut ordered = projection.clone();
        ordered.sort_unstable();
        ordered.dedup();
        let columns: Vec<String> = ordered.iter().map(|&i| self.schema.field(i).name().clone()).collect();
        let order: Vec<usize> =
            projection.iter().map(|i| ordered.iter().position(|o| o == i).unwrap_or_default()).collect();
        let query = Query { table: self.table.clone(), columns: Some(columns), since, until };
        let permits = state.config().target_partitions().max(1);
        // The partitions, each with what is known of it: the bytes its parts span, and its rows
        // when every part was counted before (same log stamp, no time window).
        let parts = stream::plan(&logs, &self.how, &query, self.partition_bytes, permits);
        let counted = lock(&self.counted).clone();
        let mut stamps: HashMap<PathBuf, Option<Stamp>> = HashMap::new();
        let stats = parts
            .iter()
            .map(|p| {
                let rows = p
                    .parts
                    .iter()
                    .map(|(log, part)| {
                        let (then, rows) = counted.get(&part_key(log, part))?;
                        let now = stamps.entry(log.file.clone()).or_insert_with(|| index::stamp(&log.file).ok());
                        (since.is_none() && until.is_none() && now.as_ref() == Some(then)).then_some(*rows)
                    })
                    .sum();
                Known { bytes: Some(p.bytes), rows }
            })
            .collect();
        Ok(Arc::new(LogScan {
            properties: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(out.clone()),
                Partitioning::UnknownPartitioning(parts.len().max(1)),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )),
            shared: Arc::new(Shared {
                logs,
                parts,
                stats,
                counted: self.counted.clone(),
                how: self.how.clone(),
                query,
                schema: self.schema.clone(),
                out,
                order,
                on_error: self.on_error,
                faults: self.faults.clone(),
                warnings: self.warnings.clone(),
                permits: Arc::new(Semaphore::new(permits)),
            }),
        }))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What is known of a partition before reading it.
#[derive(Clone, Copy, Debug)]
struct Known {
    /// The bytes of the log it reads.
    bytes: Option<u64>,
    /// Its rows, from an earlier reading of the same bytes.
    rows: Option<u64>,
}

/// What every partition of a scan reads from.
struct Shared {
    /// The logs a filter on `log` left.
    logs: Vec<LogFile>,
    /// The partitions: the logs and the part of each that each reads.
    parts: Vec<Partition>,
    /// What is known of each partition.
    stats: Vec<Known>,
    counted: Arc<Mutex<Counted>>,
    how: Open,
    query: Query,
    /// The table's schema (the scan's columns are of it).
    schema: SchemaRef,
    /// The plan's schema (the projection's columns in its order).
    out: SchemaRef,
    /// For each column of `out`, its place among the scan's columns.
    order: Vec<usize>,
    on_error: OnError,
    faults: Kept,
    warnings: Kept,
    /// The partitions decoding at once.
    permits: Arc<Semaphore>,
}

/// The scan of [`LogTable`]: partitions of parts of logs ([`logspec_engine::stream::plan`]).
pub struct LogScan {
    properties: Arc<PlanProperties>,
    shared: Arc<Shared>,
}

impl fmt::Debug for LogScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogScan")
            .field("table", &self.shared.query.table)
            .field("logs", &self.shared.logs.len())
            .finish()
    }
}

impl LogScan {
    /// The logs the scan reads (those a filter on `log` left).
    pub fn logs(&self) -> &[LogFile] {
        &self.shared.logs
    }

    /// The partitions: each one's logs and the part of each (a byte range of chunks of its time
    /// index, or the whole log).
    pub fn partitions(&self) -> &[Partition] {
        &self.shared.parts
    }

    /// The time window handed to the readers (seconds since each log's origin).
    pub fn window(&self) -> (Option<f64>, Option<f64>) {
        (self.shared.query.since, self.shared.query.until)
    }
}

impl DisplayAs for LogScan {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let q = &self.shared.query;
        write!(
            f,
            "LogScan: table={}, logs={}, partitions={}",
            q.table,
            self.shared.logs.len(),
            self.shared.parts.len()
        )?;
        if let Some(c) = &q.columns {
            write!(f, ", columns=[{}]", c.join(", "))?;
        }
        if q.since.is_some() || q.until.is_some() {
            write!(f, ", window=[{:?}, {:?}] s", q.since, q.until)?;
        }
        Ok(())
    }
}

impl ExecutionPlan for LogScan {
    fn name(&self) -> &str {
        "LogScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal("LogScan has no children".into()))
        }
    }

    fn statistics_from_inputs(&self, _input: &[Arc<Statistics>], args: &StatisticsArgs) -> Result<Arc<Statistics>> {
        let all = &self.shared.stats;
        let known: &[Known] = match args.partition() {
            Some(p) => all.get(p..=p).unwrap_or_default(),
            None => all,
        };
        let mut s = Statistics::new_unknown(&self.shared.out);
        // Sums over the partitions, exact or inexact as the least of them.
        let rows: Option<u64> = known.iter().map(|k| k.rows).sum();
        s.num_rows = match rows.and_then(|r| usize::try_from(r).ok()) {
            Some(r) => Precision::Exact(r),
            None => Precision::Absent,
        };
        let bytes: Option<u64> = known.iter().map(|k| k.bytes).sum();
        s.total_byte_size = match bytes.and_then(|b| usize::try_from(b).ok()) {
            Some(b) => Precision::Inexact(b),
            None => Precision::Absent,
        };
        Ok(Arc::new(s))
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let shared = self.shared.clone();
        let out = shared.out.clone();
        let Some(parts) = shared.parts.get(partition).map(|p| p.parts.clone()) else {
            // No log left by the filters: the one partition is empty.
            return Ok(Box::pin(RecordBatchStreamAdapter::new(out, futures::stream::empty())));
        };
        let permits = shared.permits.clone();
        let batches = futures::stream::once(async move {
            let permit = permits.acquire_owned().await.ok();
            let (tx, rx) = mpsc::channel::<Result<RecordBatch>>(BATCHES_AHEAD);
            let name = parts.first().map_or("", |(log, _)| log.log.as_str());
            let spawned = std::thread::Builder::new().name(format!("logspec {name}")).spawn(move || {
                let mut turn = Turn { permit, permits: shared.permits.clone(), tx };
                for (log, part) in &parts {
                    if !read(&shared, log, *part, &mut turn) {
                        break;
                    }
                }
            });
            let rx = match spawned {
                Ok(_) => rx,
                Err(e) => {
                    let (tx, rx) = mpsc::channel(1);
                    let _ = tx.try_send(Err(DataFusionError::External(Box::new(e))));
                    rx
                }
            };
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) })
        })
        .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(out, batches)))
    }
}

/// A partition's reading thread's channel to the query, and its turn among the threads decoding
/// at once (a permit of the scan's semaphore).
struct Turn {
    permit: Option<OwnedSemaphorePermit>,
    permits: Arc<Semaphore>,
    tx: mpsc::Sender<Result<RecordBatch>>,
}

impl Turn {
    /// Hands `item` to the query; false when the query stopped reading. When the channel is full
    /// the thread gives its turn up while it waits (the query may be waiting for another
    /// partition's first batch), and takes a turn again before decoding on.
    fn send(&mut self, item: Result<RecordBatch>) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(TrySendError::Closed(_)) => false,
            Err(TrySendError::Full(item)) => {
                self.permit = None;
                if self.tx.blocking_send(item).is_err() {
                    return false;
                }
                self.permit = futures::executor::block_on(self.permits.clone().acquire_owned()).ok();
                true
            }
        }
    }
}

/// Reads one part of a log into the query (on the partition's own thread): its batches in the
/// plan's schema, then its fault as [`OnError`] says. A closed channel (the query stopped) stops
/// the reading. A whole part read without a fault or a time window has its rows counted. False
/// when the partition ends here (the query stopped, or failed with this log's fault).
fn read(shared: &Shared, log: &LogFile, part: Part, turn: &mut Turn) -> bool {
    const GONE: &str = "the query stopped reading";
    let mut each = |b: RecordBatch| -> Result<(), logspec::log::Error> {
        let columns: Vec<ArrayRef> = shared.order.iter().map(|&i| b.column(i).clone()).collect();
        let options = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        let batch = RecordBatch::try_new_with_options(shared.out.clone(), columns, &options)
            .map_err(|e| logspec::log::Error::Input(format!("log={}: {e}", log.log)))?;
        if turn.send(Ok(batch)) {
            Ok(())
        } else {
            Err(logspec::log::Error::Input(GONE.into()))
        }
    };
    let whole = shared.query.since.is_none() && shared.query.until.is_none();
    let stamp = if whole { index::stamp(&log.file).ok() } else { None };
    let scanned = stream::scan_part(log, &shared.how, &shared.query, part, Some(&shared.schema), &mut each);
    let fault = match scanned {
        Ok(done) => {
            if let (None, Some(stamp)) = (&done.fault, stamp) {
                lock(&shared.counted).insert(part_key(log, &part), (stamp, done.rows));
            }
            let file = log.file.display().to_string();
            for w in done.warnings {
                let fault = Fault::new(logspec::log::fault::FaultKind::Decode, &file, w);
                shared.warnings.keep(LogError { log: log.log.clone(), fault });
            }
            done.fault
        }
        Err(e) if e.to_string() == GONE => return false,
        Err(e) => {
            Some(Fault::new(logspec::log::fault::FaultKind::Decode, &log.file.display().to_string(), e.to_string()))
        }
    };
    if let Some(fault) = fault {
        let e = LogError { log: log.log.clone(), fault };
        match shared.on_error {
            OnError::Raise => {
                turn.send(Err(DataFusionError::External(Box::new(e))));
                return false;
            }
            OnError::Keep => shared.faults.keep(e),
        }
    }
    true
}
