#![no_main]
//! Fuzz target `rosbag`: see `logspec::fuzz::rosbag` (the body, shared with the corpus replay test).

libfuzzer_sys::fuzz_target!(|data: &[u8]| logspec::fuzz::rosbag(data));
