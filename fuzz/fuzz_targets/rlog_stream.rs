#![no_main]
//! Fuzz target `rlog_stream`: see `logspec::fuzz::rlog_stream` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::rlog_stream(data));
