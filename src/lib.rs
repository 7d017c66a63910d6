//! The engine of the `logspec` command: format detection, the sample source, `info`, the Arrow
//! columns and every verb. The binary (`src/main.rs`) parses the command line and calls
//! [`cli::run`]; the Python package (`py/`) calls the engine's modules directly.
//!
//! Not a stable API: a Rust program reads logs through the `logspec` library crate.

// `unsafe` only where ARCHITECTURE.md names it (an `#[allow(unsafe_code)]` on the item, its reason beside it).
#![deny(unsafe_code)]
// The verbs' doc comments are clap's help text (`<format>` is a placeholder, not HTML), and the
// engine's docs link items that are private to it.
#[doc(hidden)]
#[allow(rustdoc::invalid_html_tags, rustdoc::private_intra_doc_links)]
pub mod cli;
