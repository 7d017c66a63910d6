//! PX4 ULog (`.ulg`) files.
//!
//! The container's layouts (the file header, the message header, the fixed part of every message
//! type) are generated from `schemas/ulog.toml`; the layouts of Data messages travel in the log
//! as Format messages and are lowered into the IR by the ULog front end
//! ([`logspec_ir::ulog`]). This module adds what a schema cannot say: the format table, the
//! subscriptions by msg_id, the appended-data offsets and the resynchronisation at the next Sync
//! message ([`Reader`]). Data messages decode through the IR interpreter with the value tree of
//! ROS messages ([`crate::formats::rosbag::Value`]), which any front end's packed layouts fit.

/// The schema the message types were generated from (`schemas/ulog.toml`).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/ulog.toml"));

mod generated {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/ulog.rs"));
}

pub use generated::*;
mod reader;

pub use reader::{
    read_all, split_key, DataValue, Decoder, Event, Message, ReadError, ReadErrorKind, Reader, SliceReader, Subscribed,
    CORRUPT_SIZE,
};
