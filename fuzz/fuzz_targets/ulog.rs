#![no_main]
//! Fuzz target `ulog`: see `logspec::fuzz::ulog` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::ulog(data));
