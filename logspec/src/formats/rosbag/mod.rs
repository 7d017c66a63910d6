//! ROS1 bags (format 2.0): the container, and every message decoded dynamically from the
//! connections' embedded `message_definition` through the `.msg` front end of the schema
//! compiler (`logspec::ir::ros`).
//!
//! - [`Bag`] opens a bag from its index (connections and chunk infos at `index_pos`), or, for an
//!   unindexed or truncated bag, by a linear scan that recovers every complete chunk and says
//!   where it stopped (`rosbag reindex` semantics);
//! - [`Bag::for_each_message`] walks the messages in time order (like `rosbag play`) or file
//!   order, one chunk (or one group of time-overlapping chunks) in memory at a time, with bz2
//!   and lz4 chunks decompressed on worker threads; a chunk whose index data lists its
//!   messages in time order ([`Bag::in_order`]) is read as stored, in one walk; for a bag whose
//!   scan stopped early (cut short, or at a bad record) it returns that [`Stop`] after every
//!   message of the complete chunks;
//! - [`Decoders`] checks each connection's md5 against genmsg's and decodes messages into
//!   [`Value`] trees ([`MsgDecoder::decode`]), or, building no value, straight into a visitor or
//!   any [`crate::dynamic::Sink`] through the type's compiled decode plan
//!   ([`MsgDecoder::visit`], [`MsgDecoder::decode_into`], and [`MsgDecoder::checked`], a message
//!   checked whole before any of it is shown, which `dump`, `export` and every scan of a bag
//!   use); a [`Registry`] of `.msg` files fills in missing definitions.

mod chunk;
mod decode;
mod reader;
pub mod record;
mod value;

use std::fmt;

pub use chunk::{mib as chunk_mib, Compression, DEFAULT_CHUNK_BUDGET, RAISE_BUDGET};
pub use decode::{Checked, ConnType, Decoders, MsgDecoder, Registry, Unchecked};
pub use reader::{Bag, ChunkInfo, Connection, Message, Order, Refused, Source, Stop, Unmerged};
pub use value::{decode as decode_value, Prims, Value, ValueView, Visiting};

/// The first line of every bag.
pub const MAGIC: &[u8] = b"#ROSBAG V2.0\n";
/// The start of the first line in every version of the bag format.
pub const MAGIC_PREFIX: &[u8] = b"#ROSBAG V";

/// A ROS time: seconds and nanoseconds since the epoch (the record time of a message).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    pub sec: u32,
    pub nsec: u32,
}

impl Time {
    pub fn from_bytes(b: &[u8]) -> Option<Time> {
        let b: &[u8; 8] = b.try_into().ok()?;
        Some(Time {
            sec: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            nsec: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        })
    }

    pub fn as_secs_f64(self) -> f64 {
        f64::from(self.sec) + f64::from(self.nsec) * 1e-9
    }

    /// Nanoseconds since the epoch.
    pub fn as_nanos(self) -> u64 {
        u64::from(self.sec) * 1_000_000_000 + u64::from(self.nsec)
    }
}

/// A bag that cannot be read (further): the absolute byte offset of the record at fault and what
/// was expected and found there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BagError {
    pub offset: u64,
    pub message: String,
}

impl BagError {
    pub fn at(offset: u64, message: impl Into<String>) -> Self {
        BagError { offset, message: message.into() }
    }

    pub fn io(offset: u64, e: &std::io::Error) -> Self {
        BagError::at(offset, format!("read error: {e}"))
    }
}

impl fmt::Display for BagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for BagError {}
