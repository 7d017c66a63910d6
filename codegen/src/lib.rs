//! The logspec schema compiler: TOML schemas (and `#[derive(Record)]` input) lowered into one
//! validated IR, and the back ends that generate code from it.
//!
//! Stages: `logspec_ir::schema` (spanned mirror of the TOML) -> `logspec_ir::lower` (resolve and
//! validate) -> `logspec_ir::ir` (immutable) -> [`backend`] (Rust, C, Python, docs, golden
//! vectors, JSON Schema). See `ARCHITECTURE.md` at the repository root.

#![forbid(unsafe_code)]
pub mod backend;
pub mod build;
pub mod derive;
pub mod ros;
pub mod wpistruct;

pub use build::Builder;
// The IR, its front ends and diagnostics live in the light crate `logspec-ir` (one path:
// `logspec_ir::ir`, `logspec::ir::ir`), which run-time decoding uses without this crate's
// syn/quote/prettyplease. The compiler's entry points are re-exported for build scripts.
pub use logspec_ir::{compile_file, compile_str, Diagnostic, SchemaError};
