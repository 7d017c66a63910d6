#![no_main]
//! Fuzz target `ulog_format`: see `logspec::fuzz::ulog_format` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::ulog_format(data));
