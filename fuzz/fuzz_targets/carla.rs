#![no_main]
//! Fuzz target `carla`: see `logspec::fuzz::carla` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::carla(data));
