//! Logs as one face: what every reader of a log shares, whatever its format.
//!
//! - [`Fault`]: an input problem with its place (file, byte offset, record, field), which every
//!   format's reader error converts into ([`fault::Locate`]).
//! - [`framed`]: any TOML schema with a `[framing]` as a format read at run time, through the IR
//!   interpreter: a project's own schemas, and `--schema FILE` in the tools.

pub mod fault;
pub mod framed;

pub use fault::{Fault, FaultKind};
pub use framed::{SchemaError, SchemaFormat, SchemaReader};
