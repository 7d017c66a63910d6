#![no_main]
//! Fuzz target `rlog`: see `logspec::fuzz::rlog` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::rlog(data));
