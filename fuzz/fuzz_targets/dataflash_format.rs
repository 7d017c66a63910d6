#![no_main]
//! Fuzz target `dataflash_format`: see `logspec::fuzz::dataflash_format` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::dataflash_format(data));
