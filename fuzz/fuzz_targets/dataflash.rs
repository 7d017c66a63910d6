#![no_main]
//! Fuzz target `dataflash`: see `logspec::fuzz::dataflash` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::dataflash(data));
