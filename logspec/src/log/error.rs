//! [`Error`]: why reading a log stopped.

use std::fmt;
use std::io;

use super::fault::{Fault, FaultKind};

/// Why reading a log stopped: bad input (with its place when known), options that do not apply
/// to it, or a failed write of the output.
#[derive(Debug)]
pub enum Error {
    /// The input is bad (a message that already names the file and where).
    Input(String),
    /// The options do not apply (a CARLA option for a bag, a filter that cannot match).
    Usage(String),
    /// Bad input whose place is known (file, byte offset, record, field).
    At(Box<Fault>),
    /// Writing the output failed (a closed pipe is how a reader says it has seen enough).
    Io(io::Error),
}

impl Error {
    /// An input problem with its place.
    pub fn at(fault: Fault) -> Error {
        Error::At(Box::new(fault))
    }

    /// A filter that matched nothing (`filter::Tally::check`).
    pub fn filter(path: &str, message: String) -> Error {
        Error::at(Fault::new(FaultKind::Filter, path, message))
    }

    /// The exit status a command gives for it: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) | Error::Usage(m) => f.write_str(m),
            Error::At(fault) => f.write_str(&fault.message),
            Error::Io(e) => write!(f, "writing output: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        Error::at(f)
    }
}
