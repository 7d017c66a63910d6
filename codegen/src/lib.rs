//! The logspec schema compiler: TOML schemas (and `#[derive(Record)]` input) lowered into one
//! validated IR, and the back ends that generate code from it.
//!
//! Stages: [`schema`] (spanned mirror of the TOML) -> [`lower`] (resolve and validate) ->
//! [`ir`] (immutable) -> [`backend`] (Rust, C). See `ARCHITECTURE.md` at the repository root.

#![forbid(unsafe_code)]
pub mod backend;
pub mod build;
pub mod derive;
pub mod ros;
pub mod wpistruct;

pub use build::Builder;
// The IR, its front ends and diagnostics live in the light crate `logspec-ir`, which run-time
// decoding uses without this crate's syn/quote/prettyplease; re-exported under their old paths.
pub use logspec_ir::{compile_file, compile_str, diag, fingerprint, history, ir, layout, lock, lower, schema};
pub use logspec_ir::{Diagnostic, SchemaError};
