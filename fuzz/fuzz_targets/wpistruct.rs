#![no_main]
//! Fuzz target `wpistruct`: see `logspec::fuzz::wpistruct` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::wpistruct(data));
