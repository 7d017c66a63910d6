#![no_main]
//! Fuzz target `mcap`: see `logspec::fuzz::mcap` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::mcap(data));
