#![no_main]
//! Fuzz target `schema`: see `logspec::fuzz::schema` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::schema(data));
