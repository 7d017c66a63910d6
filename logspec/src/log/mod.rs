//! Logs as one face: every format logspec reads behind one type, [`Log`], whatever its format.
//!
//! [`open`] (a path) or [`Log::from_reader`] (any reader) detects the format from the first
//! bytes and gives a [`Log`], which offers what every tool needs and nothing format-specific:
//!
//! - [`Log::info`]: its summary (header, record counts, time span, integrity findings);
//! - [`Log::records`]: its records in file order, into a [`Records`] sink (`logspec dump`);
//! - [`Log::scan`]: the samples of a [`Select`]ion (channels, time window) into a [`Samples`], each
//!   channel announced first with its IR type, units and JSON Schema ([`Channel`]).
//!
//! Every problem with the input is one [`Fault`] (kind, message, file, byte offset, record,
//! field), inside one [`Error`].
//!
//! ```
//! # fn main() -> Result<(), logspec::log::Error> {
//! # let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/usvlog/timeseries.bin"));
//! # if !path.is_file() { return Ok(()) }
//! let log = logspec::log::open(path, &logspec::log::Open::default())?;
//! println!("{} ({})", log.name(), log.title());
//! # Ok(()) }
//! ```
//!
//! A format is one adapter file here (its reader comes from its schema in `formats`): `usvlog`
//! is the bundled framed schema, `rlog`, `wpilog`, `rosbag`, `carla` read their own framing, and
//! [`framed`] reads any TOML schema with a `[framing]` at run time, through the IR interpreter:
//! a project's own schemas, and `--schema FILE` in the tools. [`Format`] lists them; detection
//! ([`detect`]) tries each one's magic.

mod carla;
mod dataflash;
mod error;
pub mod fault;
pub mod filter;
pub mod framed;
pub mod index;
mod info;
pub mod input;
mod mapped;
mod mcap;
mod open;
pub mod records;
mod rlog;
mod rosbag;
pub mod scan;
mod schema;
mod sniff;
mod structs;
mod ulog;
mod usvlog;
mod wpilog;

pub use carla::parse_frames;
pub use error::Error;
pub use fault::{Fault, FaultKind, Locate};
pub use filter::Select;
pub use framed::{SchemaError, SchemaFormat, SchemaReader};
pub use info::Info;
pub use open::{detect, open, reader, schema_format, shown, Format, Log, Open, Shape};
pub use records::{JsonLines, Records};
pub use rlog::{rlog_channel, rlog_value_type};
pub use scan::{Channel, DynVisit, JsonSchema, Outcome, Ros1Type, Samples, TryVisit, ValueType};
pub use wpilog::Written;

/// The threads a read may use: `LOGSPEC_THREADS` if set (`1` keeps a read on the calling
/// thread), else the available cores.
pub fn threads() -> usize {
    std::env::var("LOGSPEC_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}
