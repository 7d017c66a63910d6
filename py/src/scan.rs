//! The query engines' door (`logspec.scan`, `logspec.spark`; docs/engines.md): the logs named by
//! files, directories and patterns with their `log=` names (`find_logs`), a table's schema
//! (`table_schema`), and one table of one log streamed as Arrow record batches (`scan_table`),
//! read on a thread of its own a few batches ahead of the consumer, over `logspec_engine::stream`.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use logspec::log::{Error, Fault, Format, Open};
use logspec_engine::logs::LogFile;
use logspec_engine::stream::{self, Query, Scanned};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors;
use crate::tables::ArrowStream;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TableScan>()?;
    m.add_function(wrap_pyfunction!(find_logs, m)?)?;
    m.add_function(wrap_pyfunction!(table_schema, m)?)?;
    m.add_function(wrap_pyfunction!(scan_table, m)?)?;
    m.add_function(wrap_pyfunction!(plan_parts, m)?)?;
    m.add_function(wrap_pyfunction!(plan_partitions, m)?)?;
    Ok(())
}

/// How each log is opened: its format forced, or a schema's framing.
pub(crate) fn how(format: Option<&str>, schema: Option<PathBuf>) -> PyResult<Open> {
    let format = match format {
        None => None,
        Some(name) => Some(Format::from_name(name).ok_or_else(|| {
            errors::UsageError::new_err(format!(
                "unknown format {name:?}; expected one of usvlog, rlog, rlog-stream, carla, rosbag, wpilog, ulog"
            ))
        })?),
    };
    if format.is_some() && schema.is_some() {
        return Err(errors::UsageError::new_err("give `format` or `schema`, not both"));
    }
    // Mapped and read in place, as the command reads (a file truncated underneath is an error).
    Ok(Open { format, schema, map: true, ..Open::default() })
}

/// The logs among `inputs` (files, directories searched recursively, glob patterns) as
/// `[(file, log)]`, and the inputs that are not logs as `[(file, reason)]`.
#[pyfunction]
#[pyo3(signature = (inputs, format = None, schema = None))]
#[allow(clippy::type_complexity)]
fn find_logs(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    format: Option<&str>,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
) -> PyResult<(Vec<(PathBuf, String)>, Vec<(String, String)>)> {
    let how = how(format, schema)?;
    let found =
        py.detach(|| logspec_engine::logs::find(&inputs, &how, None)).map_err(|e| errors::from_cli(py, &e, ""))?;
    Ok((
        found.logs.into_iter().map(|l| (l.file, l.log)).collect(),
        found.not_logs.into_iter().map(|n| (n.file, n.reason)).collect(),
    ))
}

/// The schema of `table` in the log `path` (its columns, then `log`) as an empty Arrow stream, or
/// `None` when the log has no such table.
#[pyfunction]
#[pyo3(signature = (path, table, format = None, schema = None))]
fn table_schema(
    py: Python<'_>,
    #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
    table: String,
    format: Option<&str>,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
) -> PyResult<Option<ArrowStream>> {
    let how = how(format, schema)?;
    let shown = path.display().to_string();
    let s = py.detach(|| stream::schema(&path, &how, &table)).map_err(|e| errors::from_cli(py, &e, &shown))?;
    Ok(s.map(|s| ArrowStream::new(s, Vec::new())))
}

/// One table of one log as a stream of record batches (`__arrow_c_stream__`, once), read on a
/// thread of its own; after the stream ends, `outcome()` gives the warnings and the fault that
/// ended the log early (every complete row came before it).
///
/// With `part` (`(start, end, first_record)`, one of `plan_parts`), only the records that start
/// in that byte range of the log are read.
#[pyfunction]
#[pyo3(signature = (path, log, table, columns = None, since = None, until = None, format = None, schema = None, part = None))]
#[allow(clippy::too_many_arguments)]
fn scan_table(
    #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
    log: String,
    table: String,
    columns: Option<Vec<String>>,
    since: Option<f64>,
    until: Option<f64>,
    format: Option<&str>,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
    part: Option<(u64, u64, u64)>,
) -> PyResult<TableScan> {
    let how = how(format, schema)?;
    let query = Query { table, columns, since, until };
    let part = stream::Part {
        range: part.map(|(start, end, first_record)| logspec::log::index::Range { start, end, first_record }),
    };
    let shown = path.display().to_string();
    let file = LogFile { file: path, log };
    // A few batches ahead of the consumer, so memory stays a few batches per log.
    let (tx, rx) = sync_channel::<Msg>(2);
    std::thread::Builder::new()
        .name("logspec-scan".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let each =
                    &mut |b| tx.send(Msg::Batch(b)).map_err(|_| Error::Io(std::io::ErrorKind::BrokenPipe.into()));
                match part.range {
                    Some(_) => stream::scan_part(&file, &how, &query, part, None, each),
                    None => stream::scan(&file, &how, &query, None, each),
                }
            }))
            .unwrap_or_else(|_| {
                Err(Error::Input(format!("{}: internal error: the reader panicked", file.file.display())))
            });
            let _ = tx.send(Msg::End(result));
        })
        .map_err(|e| errors::LogspecError::new_err(format!("cannot start the reader thread: {e}")))?;
    Ok(TableScan { rx: Mutex::new(Some(rx)), end: std::sync::Arc::new(Mutex::new(None)), file: shown })
}

/// The parts of one log that hold the samples of the time window, each of about `target_bytes`
/// (`logspec_engine::stream::partitions`): `[(start, end, first_record)]` from the log's time
/// index, `[None]` for the whole log when it has none (yet), `[]` when no part meets the window.
#[pyfunction]
#[pyo3(signature = (path, table, since = None, until = None, target_bytes = None, format = None, schema = None))]
#[allow(clippy::too_many_arguments)]
fn plan_parts(
    py: Python<'_>,
    #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
    table: String,
    since: Option<f64>,
    until: Option<f64>,
    target_bytes: Option<u64>,
    format: Option<&str>,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
) -> PyResult<Vec<Option<(u64, u64, u64)>>> {
    let how = how(format, schema)?;
    let query = Query { table, columns: None, since, until };
    let file = LogFile { file: path, log: String::new() };
    let target = target_bytes.unwrap_or(logspec_engine::index::PARTITION_BYTES);
    let parts = py.detach(|| stream::partitions(&file, &how, &query, target));
    Ok(parts.into_iter().map(|p| p.range.map(|r| (r.start, r.end, r.first_record))).collect())
}

/// One part of a log in a partition: `(file, log, part)`, `part` as `plan_parts` gives it.
type PlannedPart = (PathBuf, String, Option<(u64, u64, u64)>);

/// The partitions of a scan of `table` over `logs` (`[(file, log)]`, as `find_logs` gives them)
/// (`logspec_engine::stream::plan`): each a list of parts of logs, consecutive small logs packed
/// together and a log with a time index split at its chunks, of about `target_bytes` each (64
/// MiB by default); at least twice `parallelism` partitions (the tasks the engine runs at once)
/// and a multiple of it, when there are that many parts.
#[pyfunction]
#[pyo3(signature = (logs, table, since = None, until = None, target_bytes = None, parallelism = 1, format = None, schema = None))]
#[allow(clippy::too_many_arguments)]
fn plan_partitions(
    py: Python<'_>,
    logs: Vec<(PathBuf, String)>,
    table: String,
    since: Option<f64>,
    until: Option<f64>,
    target_bytes: Option<u64>,
    parallelism: usize,
    format: Option<&str>,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
) -> PyResult<Vec<Vec<PlannedPart>>> {
    let how = how(format, schema)?;
    let query = Query { table, columns: None, since, until };
    let logs: Vec<LogFile> = logs.into_iter().map(|(file, log)| LogFile { file, log }).collect();
    let target = target_bytes.unwrap_or(logspec_engine::index::PARTITION_BYTES);
    let planned = py.detach(|| stream::plan(&logs, &how, &query, target, parallelism));
    Ok(planned
        .into_iter()
        .map(|p| {
            p.parts
                .into_iter()
                .map(|(l, part)| (l.file, l.log, part.range.map(|r| (r.start, r.end, r.first_record))))
                .collect()
        })
        .collect())
}

enum Msg {
    Batch(RecordBatch),
    End(Result<Scanned, Error>),
}

/// One log's table as it is read: a stream of batches, then its outcome.
#[pyclass(module = "logspec._logspec", frozen)]
pub struct TableScan {
    rx: Mutex<Option<Receiver<Msg>>>,
    end: std::sync::Arc<Mutex<Option<Result<Scanned, Error>>>>,
    file: String,
}

/// The batches of a [`TableScan`] as an Arrow reader: its schema is the first batch's (a log
/// with no rows has the empty schema).
struct Batches {
    rx: Receiver<Msg>,
    first: Option<RecordBatch>,
    schema: SchemaRef,
    end: std::sync::Arc<Mutex<Option<Result<Scanned, Error>>>>,
}

impl Batches {
    fn new(rx: Receiver<Msg>, end: std::sync::Arc<Mutex<Option<Result<Scanned, Error>>>>) -> Batches {
        let mut b = Batches { rx, first: None, schema: std::sync::Arc::new(Schema::empty()), end };
        if let Some(first) = b.next_batch() {
            b.schema = first.schema();
            b.first = Some(first);
        }
        b
    }

    fn next_batch(&mut self) -> Option<RecordBatch> {
        match self.rx.recv() {
            Ok(Msg::Batch(b)) => Some(b),
            Ok(Msg::End(r)) => {
                if let Ok(mut end) = self.end.lock() {
                    *end = Some(r);
                }
                None
            }
            Err(_) => None,
        }
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.first.take().or_else(|| self.next_batch()).map(Ok)
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[pymethods]
impl TableScan {
    /// The batches as an Arrow C stream (a PyCapsule `arrow_array_stream`); the first call takes
    /// them, a second is an error. Waits for the first batch (its schema is the stream's).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let rx =
            self.rx.lock().ok().and_then(|mut r| r.take()).ok_or_else(|| {
                errors::LogspecError::new_err(format!("{}: the batches were taken already", self.file))
            })?;
        let end = self.end.clone();
        let reader = py.detach(move || Batches::new(rx, end));
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, stream, Some(std::ffi::CString::new("arrow_array_stream").expect("no NUL in the name")))
    }

    /// After the stream: `(rows, warnings, error)`: the warnings as `LogspecWarning`s, and the
    /// fault that ended the log early as the `LogspecError` it would raise (or `None`).
    #[allow(clippy::type_complexity)]
    fn outcome(&self, py: Python<'_>) -> PyResult<(u64, Vec<Py<PyAny>>, Option<PyErr>)> {
        let end = self.end.lock().map_err(|_| errors::LogspecError::new_err("poisoned"))?.take();
        match end {
            None => Err(errors::LogspecError::new_err(format!("{}: the stream was not read to its end", self.file))),
            Some(Err(e)) => Ok((0, Vec::new(), Some(errors::from_cli(py, &e, &self.file)))),
            Some(Ok(s)) => {
                let warnings = s
                    .warnings
                    .iter()
                    .map(|w| {
                        errors::warning(py, &Fault::new(logspec::log::fault::FaultKind::Decode, &self.file, w.clone()))
                            .map(Bound::unbind)
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                let error = s.fault.map(|f| errors::from_cli(py, &Error::at(f), &self.file));
                Ok((s.rows, warnings, error))
            }
        }
    }
}
