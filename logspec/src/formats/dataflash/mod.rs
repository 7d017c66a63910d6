//! ArduPilot DataFlash (`.bin`) logs.
//!
//! The container's layouts (the message header, the FMT message) are generated from
//! `schemas/dataflash.toml`; the layouts of every other message id travel in the log as FMT
//! messages and are lowered into the IR by the DataFlash front end
//! ([`logspec_ir::dataflash`]). This module adds what a schema cannot say: the table of FMT
//! layouts by id, the units of FMTU/UNIT/MULT, and the resynchronisation on the header bytes
//! after garbage ([`Reader`]). Messages decode through the IR interpreter, with the front end's
//! conversions (scaled integers, half floats, texts) applied on the way to the visitor.

/// The schema the container was generated from (`schemas/dataflash.toml`).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/dataflash.toml"));

mod generated {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/dataflash.rs"));
}

pub use generated::*;
mod reader;

pub use reader::{
    read_all, Decoder, Entry, Event, Message, Problem, ReadError, ReadErrorKind, Reader, Record, SliceReader,
};
