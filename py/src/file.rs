//! `logspec.open`: a log file, its format detected as the command line detects it
//! (`logspec::log`), and what the library and the engine (`logspec_engine`) give for it: the `info --json` summary, the `dump` records as
//! Python objects (walked on a reader thread into flat batches, `records.rs`, no JSON between),
//! and its tables as Arrow record batches.

use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use logspec::formats::wpilog::NegZero;
use logspec::log::records::Options;
use logspec::log::{Error, Fault, Format, Log, Open, Select};
use logspec_engine::tables;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors;
use crate::records::{Batch, Tokens};
use crate::tables::ArrowStream;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeLog>()?;
    m.add_class::<Batches>()?;
    m.add_function(wrap_pyfunction!(open_log, m)?)?;
    Ok(())
}

/// An opened log: its path and detected (or forced) format. Every read opens the file again,
/// so a log can be read any number of times, from any thread.
#[pyclass(module = "logspec._logspec", frozen)]
pub struct NativeLog {
    path: PathBuf,
    /// The format's name (a schema's own name for a log of a schema).
    name: String,
    /// How the log is opened again: its format forced, or its schema compiled.
    input: Open,
}

impl NativeLog {
    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    fn input(&self) -> Open {
        self.input.clone()
    }

    /// Opens and detects the file again (the format is known: detection only reads its head).
    fn detected(&self) -> Result<Log, Error> {
        reopened(&self.path, &self.input, &self.shown())
    }
}

/// A log opened again as detected (a rosbag2 bag's directory by its path, any other file as a stream).
fn reopened(path: &std::path::Path, input: &Open, shown: &str) -> Result<Log, Error> {
    if path.is_dir() {
        return logspec::log::open(path, input);
    }
    let f = std::fs::File::open(path).map_err(|e| Error::Input(format!("{shown}: cannot open: {e}")))?;
    Log::from_reader(path, Box::new(f), input)
}

/// Opens a log and detects its format (`format`: one of `usvlog`, `rlog`, `rlog-stream`,
/// `carla`, `rosbag`, `wpilog`, `ulog`, `dataflash` to skip detection; `schema`: a TOML schema file whose framing the
/// log has; `chunk_budget`: ROS bags, the most decompressed chunk data held at once, in MiB).
#[pyfunction]
#[pyo3(name = "open", signature = (path, format = None, assume_r1 = false, schema = None, chunk_budget = None))]
fn open_log(
    py: Python<'_>,
    #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
    format: Option<&str>,
    assume_r1: bool,
    #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
    chunk_budget: Option<u64>,
) -> PyResult<NativeLog> {
    if chunk_budget.is_some_and(|mib| mib == 0 || mib > 1 << 20) {
        return Err(pyo3::exceptions::PyValueError::new_err("chunk_budget is in MiB and must be from 1 to 1048576"));
    }
    if format.is_some() && schema.is_some() {
        return Err(errors::UsageError::new_err("give `format` or `schema`, not both"));
    }
    let forced = match format {
        None => None,
        Some(name) => Some(Format::from_name(name).ok_or_else(|| {
            errors::UsageError::new_err(format!(
                "unknown format {name:?}; expected one of usvlog, rlog, rlog-stream, carla, rosbag, wpilog, ulog, dataflash, mcap, rosbag2"
            ))
        })?),
    };
    // A missing or unreadable file is the OSError Python code expects (FileNotFoundError, ...).
    let file = std::fs::File::open(&path)?;
    // A directory is a log only as a rosbag2 bag (its metadata.yaml lists its storage files).
    let bag = file.metadata()?.is_dir();
    if bag && !path.join("metadata.yaml").is_file() {
        return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!("{}: is a directory", path.display())));
    }
    let shown = path.display().to_string();
    let chunk_budget = chunk_budget.map(|mib| mib << 20);
    let input = Open { format: forced, assume_r1, schema, chunk_budget, ..Open::default() };
    // Opened again as detected: the format forced, or the schema kept compiled.
    let (name, input) = py
        .detach(|| {
            let log =
                if bag { logspec::log::open(&path, &input) } else { Log::from_reader(&path, Box::new(file), &input) };
            log.map(|d| (d.name().to_string(), d.reopen()))
        })
        .map_err(|e| errors::from_cli(py, &e, &shown))?;
    Ok(NativeLog { path, name, input })
}

#[pymethods]
impl NativeLog {
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The format's name (a schema's own name for a log of a schema).
    #[getter]
    fn format(&self) -> String {
        self.name.clone()
    }

    /// The `logspec info --json` object as JSON text and whether the file read cleanly (or the
    /// error that stopped the summary), with the `LogspecWarning`s of what the command notes on
    /// standard error (a bag scanned without its index), to be warned before either.
    #[allow(clippy::type_complexity)]
    fn info_json(&self, py: Python<'_>) -> PyResult<(Option<(String, bool)>, Vec<Py<PyAny>>, Option<PyErr>)> {
        let (summary, notes) = py.detach(|| {
            let mut notes = Vec::new();
            let info = self.detected().and_then(|log| log.info(&[], &mut notes));
            (info.map(|i| (i.json(), i.ok)), notes)
        });
        let warnings = notes.iter().map(|n| errors::warning(py, n).map(Bound::unbind)).collect::<PyResult<Vec<_>>>()?;
        Ok(match summary {
            Ok(s) => (Some(s), warnings, None),
            Err(e) => (None, warnings, Some(errors::from_cli(py, &e, &self.shown()))),
        })
    }

    /// The records of `logspec dump` as Python objects, streamed: an iterator of lists of
    /// records (dicts), with a `LogspecWarning` between them where the dump warns.
    #[pyo3(signature = (channels = Vec::new(), since = None, until = None, frames = None, file_order = false))]
    fn records(
        &self,
        channels: Vec<String>,
        since: Option<f64>,
        until: Option<f64>,
        frames: Option<(u64, u64)>,
        file_order: bool,
    ) -> PyResult<Batches> {
        let opts = Options {
            frames: frames.map(|(a, b)| a..b),
            select: Select { channels, tables: false, since, until },
            msg_path: Vec::new(),
            file_order,
        };
        let (path, input, shown) = (self.path.clone(), self.input(), self.shown());
        // A few batches in flight: the reader stays ahead of Python without holding the file.
        let (tx, rx) = sync_channel::<Msg>(4);
        std::thread::Builder::new()
            .name("logspec-records".into())
            .spawn(move || {
                let mut out = Batcher { tokens: Tokens::default(), tx };
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let d = reopened(&path, &input, &shown)?;
                    // A failed send (`Error::Io`) means that the iterator was dropped; its
                    // error goes nowhere, like the end below.
                    d.records(&opts, &mut out)
                }))
                .unwrap_or_else(|_| Err(Error::Input("internal error: the reader panicked".into())));
                // Every complete record first, then the end; the receiver may be gone (the
                // iterator was dropped): nothing to tell then.
                if out.send().is_ok() {
                    let _ = out.tx.send(Msg::End(result));
                }
            })
            .map_err(|e| errors::LogspecError::new_err(format!("cannot start the reader thread: {e}")))?;
        Ok(Batches { state: Mutex::new(State::Ready(rx)), file: self.shown(), keys: Mutex::new(Vec::new()) })
    }

    /// The log's tables as Arrow streams (`[(name, stream)]`, in the order the channels first
    /// appear), the warnings, and the error that ended the reading early (message, usage?).
    /// `by_table`: the names in `channels` also name tables (`Select::tables`), for `table(name)`.
    #[pyo3(signature = (channels = Vec::new(), since = None, until = None, by_table = false))]
    #[allow(clippy::type_complexity)]
    fn tables(
        &self,
        py: Python<'_>,
        channels: Vec<String>,
        since: Option<f64>,
        until: Option<f64>,
        by_table: bool,
    ) -> PyResult<(Vec<(String, ArrowStream)>, Vec<String>, Option<PyErr>)> {
        let select = Select { channels, tables: by_table, since, until };
        let read = || tables::read(&self.path, &self.input, &select).map(|r| (r.tables, r.warnings, r.error));
        let (tables, warnings, error) = py.detach(read).map_err(|e| errors::from_cli(py, &e, &self.shown()))?;
        let streams = tables.into_iter().map(|t| (t.name, ArrowStream::new(t.builder.schema, t.batches))).collect();
        Ok((streams, warnings, error.map(|e| errors::from_cli(py, &e, &self.shown()))))
    }

    fn __repr__(&self) -> String {
        format!("<logspec log {:?} ({})>", self.shown(), self.format())
    }
}

/// Records sent to Python at a time, and the bytes a batch may hold before it is sent anyway.
const BATCH: usize = 1024;
const BATCH_BYTES: usize = 1 << 22;

enum Msg {
    Records(Batch),
    Warning(Fault),
    End(Result<(), Error>),
}

/// The dump's records, handed on in batches; its warnings in order between them.
struct Batcher {
    tokens: Tokens,
    tx: SyncSender<Msg>,
}

impl Batcher {
    /// Sends the records gathered; a gone receiver ends the dump quietly (like a closed pipe).
    fn send(&mut self) -> io::Result<()> {
        // An empty batch stays: it may hold keys (of a record that was discarded) that the
        // records of the next batch are numbered after.
        // A record being written stays too (the dump warns between records; this keeps a batch
        // whole if one did not).
        if self.tokens.batch().records() == 0 || self.tokens.in_record() {
            return Ok(());
        }
        let batch = self.tokens.take();
        self.tx.send(Msg::Records(batch)).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

impl logspec::log::Records for Batcher {
    type Writer = Tokens;
    fn writer(&mut self) -> &mut Tokens {
        &mut self.tokens
    }
    fn end_record(&mut self) -> io::Result<()> {
        self.tokens.end_record();
        let b = self.tokens.batch();
        if b.records() >= BATCH || b.size() >= BATCH_BYTES {
            self.send()?;
        }
        Ok(())
    }
    fn discard(&mut self) {
        self.tokens.discard();
    }
    fn warn(&mut self, warning: Fault) {
        // A gone receiver shows at the next record.
        if self.send().is_ok() {
            let _ = self.tx.send(Msg::Warning(warning));
        }
    }
    fn neg_zero(&self) -> NegZero {
        // Python has a negative zero; the dump's `"-0"` string is for JSON readers.
        NegZero::Number
    }
}

/// The records of a log, in lists (a batch at a time), with `LogspecWarning`s between them,
/// then the end: a clean one (StopIteration) or the error that ended the reading, raised after
/// every complete record.
#[pyclass(module = "logspec._logspec")]
pub struct Batches {
    state: Mutex<State>,
    file: String,
    /// The dict keys of the batches so far, by number.
    keys: Mutex<Vec<Py<PyString>>>,
}

/// Where a [`Batches`] iterator is. The receiver is taken out while a thread waits on it
/// without the GIL, so that no lock is held across the wait.
enum State {
    Ready(Receiver<Msg>),
    Waiting,
    Done,
}

#[pymethods]
impl Batches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let poisoned = || errors::LogspecError::new_err("the record iterator was poisoned");
        let rx = {
            let mut state = self.state.lock().map_err(|_| poisoned())?;
            match std::mem::replace(&mut *state, State::Waiting) {
                State::Ready(rx) => rx,
                State::Waiting => {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "the records of one iterator are being read by two threads at once",
                    ))
                }
                State::Done => {
                    *state = State::Done;
                    return Ok(None);
                }
            }
        };
        let (rx, msg) = py.detach(move || {
            let msg = rx.recv();
            (rx, msg)
        });
        let mut state = self.state.lock().map_err(|_| poisoned())?;
        match msg {
            Ok(Msg::Records(batch)) => {
                *state = State::Ready(rx);
                drop(state);
                let mut keys = self.keys.lock().map_err(|_| poisoned())?;
                Ok(Some(batch.to_py(py, &mut keys)?.into_any().unbind()))
            }
            Ok(Msg::Warning(w)) => {
                *state = State::Ready(rx);
                Ok(Some(errors::warning(py, &w)?.unbind()))
            }
            Ok(Msg::End(result)) => {
                *state = State::Done;
                match result {
                    Ok(()) => Ok(None),
                    Err(e) => Err(errors::from_cli(py, &e, &self.file)),
                }
            }
            Err(_) => {
                *state = State::Done;
                Err(errors::LogspecError::new_err(format!("{}: the reader stopped without a result", self.file)))
            }
        }
    }
}
