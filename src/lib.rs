//! logspec: describe a binary log format once, in a TOML schema, and get readers, writers,
//! C headers and tools from it.
//!
//! This facade re-exports the runtime (`logspec::runtime`), the schema compiler
//! (`logspec::codegen`) and `#[derive(Record)]`, and holds the formats bundled with logspec,
//! generated at build time from `schemas/`.

pub use logspec_codegen as codegen;
pub use logspec_derive::Record;
pub use logspec_runtime as runtime;

pub mod formats;
#[doc(hidden)]
pub mod fuzz;
pub mod json;
pub mod value;
