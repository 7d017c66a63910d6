//! build.rs API.
