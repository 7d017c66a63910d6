#![no_main]
//! Fuzz target `wpilog`: see `logspec::fuzz::wpilog` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::wpilog(data));
