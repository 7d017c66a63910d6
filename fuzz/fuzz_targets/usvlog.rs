#![no_main]
//! Fuzz target `usvlog`: see `logspec::fuzz::usvlog` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::usvlog(data));
