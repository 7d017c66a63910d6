//! The bundled formats, generated at build time from `schemas/*.toml`.

/// USVLOG, the USV autopilot's `timeseries.bin` (`schemas/usvlog.toml`).
pub mod usvlog {
    /// The schema this module was generated from (`schemas/usvlog.toml`), for tools that need
    /// what only the schema says (units, docs).
    pub const SCHEMA_TOML: &str = include_str!(concat!(env!("LOGSPEC_SCHEMAS"), "/usvlog.toml"));
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}

// These modules carry their docs inside (`//!`) only: rustdoc resolves the links of a module
// documented in both places in the parent's scope.
pub mod carla;
pub mod rlog;
pub mod rosbag;
pub mod wpilog;
pub mod wpistruct;
