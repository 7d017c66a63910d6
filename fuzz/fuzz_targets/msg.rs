#![no_main]
//! Fuzz target `msg`: see `logspec::fuzz::msg` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::msg(data));
