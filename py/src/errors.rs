//! The package's exceptions, and the one place where an engine error becomes one: its class
//! from what went wrong, and the file, byte offset, record and field as attributes, read from
//! the engine's message (which names them in the runtime's fixed wording: `at byte N`,
//! `offset N`, `record #N`, `Type.field: `).

use logspec_cli::cli::CliError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _logspec,
    LogspecError,
    PyException,
    "Any error of logspec. Attributes: `file`, `offset` (byte), `record` (index), `field` (`Type.field`), each None when the message does not say."
);
create_exception!(
    _logspec,
    DecodeError,
    LogspecError,
    "The log's bytes are bad: truncated, corrupted, or not the layout the schema describes. Every complete record before the fault was delivered."
);
create_exception!(
    _logspec,
    FormatError,
    LogspecError,
    "The file is none of the formats logspec reads (or not the one forced)."
);
create_exception!(
    _logspec,
    FilterError,
    LogspecError,
    "A channel filter matched no channel of the log, or the time window held no sample; the message lists the channels."
);
create_exception!(
    _logspec,
    UsageError,
    LogspecError,
    "An option does not apply to this log (e.g. `frames` for a non-CARLA file)."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LogspecError", py.get_type::<LogspecError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("FilterError", py.get_type::<FilterError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    Ok(())
}

/// Where an error message says the fault is.
#[derive(Debug, Default, PartialEq)]
pub struct Place {
    pub offset: Option<u64>,
    pub record: Option<u64>,
    pub field: Option<String>,
}

/// The number right after the first occurrence of `key` in `msg`.
fn number_after(msg: &str, key: &str) -> Option<u64> {
    let rest = &msg[msg.find(key)? + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Reads the place out of an engine message.
pub fn place(msg: &str) -> Place {
    let offset = ["at byte ", "offset ", "byte "].iter().find_map(|k| number_after(msg, k));
    let record = number_after(msg, "record #");
    // `Type.field: ` before the runtime's `(at byte N)`.
    let field = msg.split(": ").find_map(|part| {
        let (t, f) = part.rsplit_once(' ').map_or(part, |(_, w)| w).split_once('.')?;
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        (ident(t) && ident(f) && t.starts_with(|c: char| c.is_ascii_uppercase())).then(|| format!("{t}.{f}"))
    });
    Place { offset, record, field }
}

/// A Python exception of the class `msg` calls for, with its attributes set.
pub fn exception(py: Python<'_>, msg: &str, file: &str, usage: bool) -> PyErr {
    let err = if usage {
        UsageError::new_err(msg.to_string())
    } else if msg.contains("unrecognised format") {
        FormatError::new_err(msg.to_string())
    } else if msg.contains(": no channel matches")
        || msg.contains(": no topic matches")
        || msg.contains(": no sample in the time window")
    {
        FilterError::new_err(msg.to_string())
    } else {
        DecodeError::new_err(msg.to_string())
    };
    let p = place(msg);
    let v = err.value(py);
    let set = || -> PyResult<()> {
        v.setattr("file", file)?;
        v.setattr("offset", p.offset)?;
        v.setattr("record", p.record)?;
        v.setattr("field", p.field)?;
        v.setattr("message", msg)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The exception of an engine error.
pub fn from_cli(py: Python<'_>, e: &CliError, file: &str) -> PyErr {
    exception(py, &e.to_string(), file, matches!(e, CliError::Usage(_)))
}
