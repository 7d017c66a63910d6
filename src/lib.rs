//! The engine of the `logspec` command: format detection, the sample source, `info`, the Arrow
//! columns and every verb. The binary (`src/main.rs`) parses the command line and calls
//! [`cli::run`]; the Python package (`py/`) calls the engine's modules directly.
//!
//! Not a stable API: a Rust program reads logs through the `logspec` library crate.

#[doc(hidden)]
pub mod cli;
