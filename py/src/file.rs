//! `logspec.open`: a log file, its format detected as the command line detects it, and what the
//! engine (`logspec_cli::cli`) gives for it: the `info --json` summary, the `dump` lines
//! (streamed from a reader thread), and its tables as Arrow record batches.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use logspec_cli::cli::source::Select;
use logspec_cli::cli::{detect, dump, info, source, tables, CliError, Detected, FormatKind, InputArgs};
use pyo3::prelude::*;

use crate::errors;
use crate::tables::ArrowStream;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // No progress bars on the terminal of a Python program, and no summary lines.
    logspec_cli::cli::progress::set_quiet(true);
    m.add_class::<NativeLog>()?;
    m.add_class::<Lines>()?;
    m.add_function(wrap_pyfunction!(open_log, m)?)?;
    Ok(())
}

/// An opened log: its path and detected (or forced) format. Every read opens the file again,
/// so a log can be read any number of times, from any thread.
#[pyclass(module = "logspec._logspec", frozen)]
pub struct NativeLog {
    path: PathBuf,
    kind: FormatKind,
    assume_r1: bool,
}

impl NativeLog {
    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    fn input(&self) -> InputArgs {
        InputArgs { format: Some(self.kind), assume_r1: self.assume_r1 }
    }

    /// Opens and detects the file again (the format is known: detection only reads its head).
    fn detected(&self) -> Result<Detected, CliError> {
        let f = std::fs::File::open(&self.path)
            .map_err(|e| CliError::Input(format!("{}: cannot open: {e}", self.shown())))?;
        detect(&self.path, Box::new(f), Some(self.kind))
    }
}

/// Opens a log and detects its format (`format`: one of `usvlog`, `rlog`, `rlog-stream`,
/// `carla`, `rosbag`, `wpilog` to skip detection).
#[pyfunction]
#[pyo3(name = "open", signature = (path, format = None, assume_r1 = false))]
fn open_log(py: Python<'_>, path: PathBuf, format: Option<&str>, assume_r1: bool) -> PyResult<NativeLog> {
    let forced = match format {
        None => None,
        Some(name) => Some(FormatKind::from_name(name).ok_or_else(|| {
            errors::UsageError::new_err(format!(
                "unknown format {name:?}; expected one of usvlog, rlog, rlog-stream, carla, rosbag, wpilog"
            ))
        })?),
    };
    // A missing or unreadable file is the OSError Python code expects (FileNotFoundError, ...).
    let file = std::fs::File::open(&path)?;
    if file.metadata()?.is_dir() {
        return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!("{}: is a directory", path.display())));
    }
    let shown = path.display().to_string();
    let kind = py
        .detach(|| detect(&path, Box::new(file), forced).map(|d| d.kind))
        .map_err(|e| errors::from_cli(py, &e, &shown))?;
    Ok(NativeLog { path, kind, assume_r1 })
}

#[pymethods]
impl NativeLog {
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.kind.name()
    }

    /// The `logspec info --json` object as JSON text, and whether the file read cleanly.
    fn info_json(&self, py: Python<'_>) -> PyResult<(String, bool)> {
        let (path, input) = (self.path.clone(), self.input());
        py.detach(|| info::json_of(&path, input)).map_err(|e| errors::from_cli(py, &e, &self.shown()))
    }

    /// The `logspec dump` lines, streamed: an iterator of chunks of whole lines.
    #[pyo3(signature = (channels = Vec::new(), since = None, until = None, frames = None, file_order = false))]
    fn dump_lines(
        &self,
        channels: Vec<String>,
        since: Option<f64>,
        until: Option<f64>,
        frames: Option<(u64, u64)>,
        file_order: bool,
    ) -> PyResult<Lines> {
        let opts = dump::Options {
            input: self.input(),
            frames: frames.map(|(a, b)| a..b),
            select: Select { channels, since, until },
            msg_path: Vec::new(),
            file_order,
        };
        let (path, kind, shown) = (self.path.clone(), self.kind, self.shown());
        // A few chunks in flight: the reader stays ahead of Python without holding the file.
        let (tx, rx) = sync_channel::<Msg>(4);
        let end = tx.clone();
        std::thread::Builder::new()
            .name("logspec-dump".into())
            .spawn(move || {
                let mut out = Chunks { buf: Vec::with_capacity(CHUNK), tx };
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let f = std::fs::File::open(&path)
                        .map_err(|e| CliError::Input(format!("{shown}: cannot open: {e}")))?;
                    let d = detect(&path, Box::new(f), Some(kind))?;
                    dump::write(d, &path, &opts, &mut out).map(|_| ())
                }))
                .unwrap_or_else(|_| Err(CliError::Input("internal error: the reader panicked".into())));
                // Every complete line first, then the end; the receiver may be gone (the
                // iterator was dropped): nothing to tell then.
                if out.send_all().is_ok() {
                    let _ = end.send(Msg::End(result));
                }
            })
            .map_err(|e| errors::LogspecError::new_err(format!("cannot start the reader thread: {e}")))?;
        Ok(Lines { state: Mutex::new(State::Ready(rx)), file: self.shown() })
    }

    /// The log's tables as Arrow streams (`[(name, stream)]`, in the order the channels first
    /// appear), the warnings, and the error that ended the reading early (message, usage?).
    #[pyo3(signature = (channels = Vec::new(), since = None, until = None))]
    #[allow(clippy::type_complexity)]
    fn tables(
        &self,
        py: Python<'_>,
        channels: Vec<String>,
        since: Option<f64>,
        until: Option<f64>,
    ) -> PyResult<(Vec<(String, ArrowStream)>, Vec<String>, Option<PyErr>)> {
        let select = Select { channels, since, until };
        let read = || -> Result<_, CliError> {
            let d = self.detected()?;
            let mut sink = tables::Tables::new(self.kind == FormatKind::Rosbag);
            let outcome = source::read(d, &self.path, &self.shown(), self.assume_r1, &select, &mut sink);
            let (tables, mut warnings) = sink.finish()?;
            let (error, more) = match outcome {
                Ok(o) => (o.error.map(CliError::Input), o.warnings),
                Err(e) => (Some(e), Vec::new()),
            };
            warnings.splice(0..0, more);
            Ok((tables, warnings, error))
        };
        let (tables, warnings, error) = py.detach(read).map_err(|e| errors::from_cli(py, &e, &self.shown()))?;
        let streams = tables.into_iter().map(|t| (t.name, ArrowStream::new(t.builder.schema, t.batches))).collect();
        Ok((streams, warnings, error.map(|e| errors::from_cli(py, &e, &self.shown()))))
    }

    fn __repr__(&self) -> String {
        format!("<logspec log {:?} ({})>", self.shown(), self.kind.name())
    }
}

/// Bytes of lines sent to Python at a time.
const CHUNK: usize = 1 << 16;

enum Msg {
    Lines(String),
    End(Result<(), CliError>),
}

/// The dump's output, handed on in chunks of whole lines.
struct Chunks {
    buf: Vec<u8>,
    tx: SyncSender<Msg>,
}

impl Chunks {
    /// Sends the whole lines buffered; a gone receiver is a closed pipe (ends the dump quietly).
    fn send_lines(&mut self) -> io::Result<()> {
        let Some(end) = self.buf.iter().rposition(|b| *b == b'\n') else { return Ok(()) };
        let rest = self.buf.split_off(end + 1);
        let lines = std::mem::replace(&mut self.buf, rest);
        let text = String::from_utf8(lines).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        self.tx.send(Msg::Lines(text)).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }

    /// Sends everything, a last line without its newline too.
    fn send_all(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() && self.buf.last() != Some(&b'\n') {
            self.buf.push(b'\n');
        }
        self.send_lines()
    }
}

impl Write for Chunks {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.send_lines()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The dump lines of a log, as chunks of whole lines (`str`), then the end: a clean one
/// (StopIteration) or the error that ended the reading, raised after every complete line.
#[pyclass(module = "logspec._logspec")]
pub struct Lines {
    state: Mutex<State>,
    file: String,
}

/// Where a [`Lines`] iterator is. The receiver is taken out while a thread waits on it without
/// the GIL, so that no lock is held across the wait.
enum State {
    Ready(Receiver<Msg>),
    Waiting,
    Done,
}

#[pymethods]
impl Lines {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let poisoned = || errors::LogspecError::new_err("the line iterator was poisoned");
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
            Ok(Msg::Lines(text)) => {
                *state = State::Ready(rx);
                Ok(Some(text))
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
