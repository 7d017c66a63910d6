//! The logspec schema compiler: TOML schemas (and `#[derive(Record)]` input) lowered into one
//! validated IR, and the back ends that generate code from it.
//!
//! Stages: [`schema`] (spanned mirror of the TOML) -> [`lower`] (resolve and validate) ->
//! [`ir`] (immutable) -> [`backend`] (Rust, C). See `ARCHITECTURE.md` at the repository root.

pub mod backend;
pub mod build;
pub mod derive;
pub mod diag;
pub mod fingerprint;
pub mod history;
pub mod ir;
pub mod layout;
pub mod lock;
pub mod lower;
pub mod ros;
pub mod schema;
pub mod wpistruct;

pub use build::Builder;
pub use diag::{Diagnostic, SchemaError};

/// Compiles schema text into the IR. `path` is only used in messages and "generated from" lines.
pub fn compile_str(path: &str, source: &str) -> Result<ir::Schema, SchemaError> {
    let (file, mut diagnostics) = schema::parse(source);
    if diagnostics.is_empty() {
        match lower::lower(&file, Some(path)) {
            Ok(schema) => return Ok(schema),
            Err(d) => diagnostics = d,
        }
    } else if file.format.is_some() {
        // Shape errors were found; still report meaning errors where the shape allows.
        if let Err(d) = lower::lower(&file, Some(path)) {
            for x in d {
                if !diagnostics.iter().any(|y| y.span == x.span && y.code == x.code) {
                    diagnostics.push(x);
                }
            }
        }
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.code));
    Err(SchemaError { path: path.to_string(), source: source.to_string(), diagnostics })
}

/// Reads and compiles a schema file.
pub fn compile_file(path: impl AsRef<std::path::Path>) -> Result<ir::Schema, SchemaError> {
    let path = path.as_ref();
    let shown = path.display().to_string().replace('\\', "/");
    match std::fs::read_to_string(path) {
        Ok(source) => compile_str(&shown, &source),
        Err(e) => Err(SchemaError {
            path: shown,
            source: String::new(),
            diagnostics: vec![Diagnostic::new(diag::Code::TomlSyntax, 0..0, format!("cannot read the schema: {e}"))],
        }),
    }
}
