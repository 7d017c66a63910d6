#![no_main]
//! Fuzz target `framed`: see `logspec::fuzz::framed` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::framed(data));
