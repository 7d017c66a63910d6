//! Rust back end.
