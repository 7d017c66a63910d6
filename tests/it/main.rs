//! The integration tests, one module per area, in one test binary (one link of the crates they
//! use instead of one per file). Tests that need a machine's tools (compilers, emulators, Python
//! packages) are in `tests/external/`; `tests/bounded.rs` is its own binary because it counts
//! every allocation through its own global allocator.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/scratch.rs"]
mod scratch;

mod carla;
mod cdr;
mod checksum;
mod cli_check;
mod cli_diff;
mod cli_filters;
mod cli_message_format;
mod cli_outputs;
mod cli_papercuts;
mod cli_rough_edges;
mod cli_tools;
mod dataflash;
mod derive;
mod detect;
mod engines;
mod engines_formats;
mod fast_paths;
mod generated;
mod history;
mod index_harness;
mod interrupted;
mod mapped;
mod mcap;
mod no_hand_layout;
mod output_doc;
mod outputs_unchanged;
mod own_index;
mod parquet_threads;
mod readme;
mod rlog;
mod rlog_columns;
mod rlog_net;
mod rosbag;
mod rosbag2;
mod ulog;
mod usvlog;
mod usvlog_tables;
mod views;
mod wpilog;
mod wpistruct;
mod writers;
