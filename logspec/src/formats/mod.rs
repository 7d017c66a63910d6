//! The bundled formats, generated at build time from `schemas/*.toml`.

/// USVLOG, the USV autopilot's `timeseries.bin` (`schemas/usvlog.toml`).
pub mod usvlog {
    /// The schema this module was generated from (`schemas/usvlog.toml`), for tools that need
    /// what only the schema says (units, docs).
    pub const SCHEMA_TOML: &str =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/usvlog.toml"));
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}

/// The time index of a log (`schemas/logidx.toml`), kept beside the log or in a cache directory
/// (`crate::log::index`).
pub mod logidx {
    /// The schema this module was generated from (`schemas/logidx.toml`).
    pub const SCHEMA_TOML: &str =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/logidx.toml"));
    include!(concat!(env!("OUT_DIR"), "/logidx.rs"));
}

/// The IR of a bundled format's schema, compiled once per process: what only the schema says
/// (units, docs, the timestamp's unit, which packets are counted), for the tools.
pub mod schemas {
    use std::sync::{Arc, OnceLock};

    use logspec_ir::ir::Schema;

    fn compiled(cell: &'static OnceLock<Arc<Schema>>, path: &str, toml: &str) -> &'static Arc<Schema> {
        // The build script generated this crate's code from the same text, so it compiles.
        cell.get_or_init(|| Arc::new(logspec_ir::compile_str(path, toml).expect("a bundled schema compiles")))
    }

    /// `schemas/usvlog.toml`.
    pub fn usvlog() -> &'static Arc<Schema> {
        static S: OnceLock<Arc<Schema>> = OnceLock::new();
        compiled(&S, "schemas/usvlog.toml", super::usvlog::SCHEMA_TOML)
    }

    /// `schemas/carla.toml`.
    pub fn carla() -> &'static Arc<Schema> {
        static S: OnceLock<Arc<Schema>> = OnceLock::new();
        compiled(&S, "schemas/carla.toml", super::carla::SCHEMA_TOML)
    }
}

// These modules carry their docs inside (`//!`) only: rustdoc resolves the links of a module
// documented in both places in the parent's scope.
pub mod carla;
pub mod dataflash;
pub mod mcap;
pub mod rlog;
pub mod rosbag;
#[cfg(feature = "sqlite")]
pub mod rosbag2;
pub mod ulog;
pub mod wpilog;
pub mod wpistruct;
