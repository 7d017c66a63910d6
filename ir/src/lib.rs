//! The light half of the logspec schema compiler: the IR, its byte layout and fingerprint, the
//! front ends that produce it (TOML schemas, ROS1 `.msg` definitions, WPILib struct schemas),
//! their diagnostics, and schema lock files and history.
//!
//! Run-time decoding that compiles schemas found in a log (ROS bags, WPILOG struct schemas)
//! needs only this crate; the back ends that generate code (and the `syn`/`quote`/`prettyplease`
//! they use) are in `logspec-codegen`, which re-exports every module here under the same path.
//!
//! Stages: [`schema`] (spanned mirror of the TOML) -> [`lower`] (resolve and validate) ->
//! [`ir`] (immutable). See `ARCHITECTURE.md` at the repository root. The keys a schema file may
//! hold are one table, [`language`], which the parser follows and [`language::json_schema`]
//! writes as the JSON Schema editors check schema files with.
//!
//! ```
//! let schema = logspec_ir::compile_str(
//!     "demo.toml",
//!     r#"
//! [format]
//! name = "demo"
//! endian = "little"
//!
//! [framing]
//! name = "RecordHeader"
//! tag = "type"
//! length = "len"
//! fields = [{ name = "type", type = "u8" }, { name = "len", type = "u16" }]
//!
//! [[record]]
//! name = "PING"
//! id = 1
//! fields = [{ name = "seq", type = "u32" }]
//! "#,
//! )?;
//! assert_eq!(schema.records.len(), 1);
//! assert_eq!(schema.records[0].name, "PING");
//! # Ok::<(), logspec_ir::SchemaError>(())
//! ```

#![forbid(unsafe_code)]
pub mod dataflash;
pub mod diag;
pub mod fingerprint;
pub mod history;
pub mod ir;
pub mod json;
pub mod language;
pub mod layout;
pub mod lock;
pub mod lower;
pub mod ros;
pub mod schema;
pub mod ulog;
pub mod wpistruct;

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
