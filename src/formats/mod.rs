//! The bundled formats, generated at build time from `schemas/*.toml`.

/// USVLOG, the USV autopilot's `timeseries.bin` (`schemas/usvlog.toml`).
pub mod usvlog {
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}
