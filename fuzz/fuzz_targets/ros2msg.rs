#![no_main]
//! Fuzz target `ros2msg`: see `logspec::fuzz::ros2msg` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::ros2msg(data));
