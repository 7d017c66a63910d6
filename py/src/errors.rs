//! The package's exceptions and warnings, and the one place where an engine error becomes one:
//! its class from the kind of the engine's [`Fault`] (or `Error::Usage`), and the file, byte
//! offset, record and field as attributes, taken from the fault's fields (nothing is read back
//! out of the message text).

use logspec::log::{Error, Fault, FaultKind};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning};
use pyo3::prelude::*;

create_exception!(
    _logspec,
    LogspecError,
    PyException,
    "Any error of logspec. Attributes: `file`, `offset` (byte), `record` (index), `field` (`Type.field`), each None when the engine does not know it, and `message` (the text the command prints)."
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
create_exception!(
    _logspec,
    LogspecWarning,
    PyUserWarning,
    "Something in the log was skipped, kept as hex or cut short, and reading went on (`warnings.warn` with this class; `on_error=\"warn\"` turns the error that ends a read into one). Attributes as LogspecError's: `file`, `offset`, `record`, `field`, `message`, and `error`: the LogspecError that would have been raised, if any."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LogspecError", py.get_type::<LogspecError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("FilterError", py.get_type::<FilterError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("LogspecWarning", py.get_type::<LogspecWarning>())?;
    // Where an error is, when the engine does not know it (and for errors raised from Python).
    for ty in [py.get_type::<LogspecError>(), py.get_type::<LogspecWarning>()] {
        for name in ["file", "offset", "record", "field", "message"] {
            ty.setattr(name, py.None())?;
        }
    }
    py.get_type::<LogspecWarning>().setattr("error", py.None())?;
    Ok(())
}

/// Sets the place attributes of an exception or warning object.
fn set_place(v: &Bound<'_, PyAny>, f: &Fault, file: &str) -> PyResult<()> {
    v.setattr("file", f.file.as_deref().unwrap_or(file))?;
    v.setattr("offset", f.offset)?;
    v.setattr("record", f.record)?;
    v.setattr("field", f.field.as_deref())?;
    v.setattr("message", &f.message)?;
    Ok(())
}

/// The Python exception of an engine error: the class from its kind, the attributes from its
/// place (`file` is the log's path when the error does not name one).
pub fn from_cli(py: Python<'_>, e: &Error, file: &str) -> PyErr {
    let plain = |kind| Fault::new(kind, file, e.to_string());
    let (err, fault) = match e {
        Error::Usage(m) => (UsageError::new_err(m.clone()), plain(FaultKind::Decode)),
        Error::Input(m) => (DecodeError::new_err(m.clone()), plain(FaultKind::Decode)),
        Error::Io(e) => (DecodeError::new_err(format!("writing output: {e}")), plain(FaultKind::Decode)),
        Error::At(f) => {
            let err = match f.kind {
                FaultKind::Decode => DecodeError::new_err(f.message.clone()),
                FaultKind::Format => FormatError::new_err(f.message.clone()),
                FaultKind::Filter => FilterError::new_err(f.message.clone()),
            };
            (err, (**f).clone())
        }
    };
    match set_place(err.value(py).as_any(), &fault, file) {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A `LogspecWarning` object for a warning of the engine, with its place.
pub fn warning<'py>(py: Python<'py>, w: &Fault) -> PyResult<Bound<'py, PyAny>> {
    let v = py.get_type::<LogspecWarning>().call1((w.message.clone(),))?;
    set_place(&v, w, "")?;
    Ok(v)
}
