//! Where a ROS 2 recording's records come from (an MCAP file, a rosbag2 sqlite3 file, a split
//! bag), behind one [`Store`] that hands `info`, `dump` and `scan` (`log/mcap.rs`) the same events.

use std::sync::Arc;

use crate::formats::mcap::{self as container, Blocks, Channel as McapChannel, Event, Message, Schema, Want};
#[cfg(feature = "sqlite")]
use crate::log::fault::{Fault, FaultKind};
#[cfg(feature = "sqlite")]
use crate::log::index::{Chunk, Index, CHUNK_BYTES};
use crate::log::input::Source;
use crate::log::Error;

/// A file's bytes: the map, or all of a stream read into memory.
pub(in crate::log) enum Bytes {
    Mapped(Arc<crate::log::input::Mapped>),
    Owned(Vec<u8>),
}

impl Bytes {
    pub(in crate::log) fn new(input: Source, path: &str) -> Result<Bytes, Error> {
        Ok(match input {
            Source::Mapped(m) => Bytes::Mapped(m),
            Source::Stream(mut r) => {
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut r, &mut v)
                    .map_err(|e| Error::Input(format!("{path}: cannot read: {e}")))?;
                Bytes::Owned(v)
            }
        })
    }

    /// The reading got to byte `at`: a map drops the pages behind it.
    pub(in crate::log) fn moved(&self, at: u64) {
        if let Bytes::Mapped(m) = self {
            m.advance(usize::try_from(at).unwrap_or(usize::MAX));
        }
    }

    pub(in crate::log) fn get(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m.bytes(),
            Bytes::Owned(v) => v,
        }
    }
}

/// Where a ROS 2 recording's records come from: an MCAP file, or a rosbag2 sqlite3 file (read
/// through SQLite, handing on the same events). Everything above this reads both the same way.
pub(in crate::log) enum Store {
    Mcap {
        bytes: Bytes,
        blocks: Blocks,
    },
    #[cfg(feature = "sqlite")]
    Db3(crate::formats::rosbag2::Db3),
    /// A split bag: several storage files and one `metadata.yaml`, read as one log.
    #[cfg(feature = "sqlite")]
    Split(super::split::Split),
}

impl Store {
    /// An MCAP file's store: its bytes and the first pass over them.
    pub(in crate::log) fn mcap(input: Source, path: &str) -> Result<Store, Error> {
        let bytes = Bytes::new(input, path)?;
        let blocks = Blocks::new(bytes.get());
        Ok(Store::Mcap { bytes, blocks })
    }

    /// A rosbag2 sqlite3 file's store (`file`: a path; SQLite reads no stream).
    #[cfg(feature = "sqlite")]
    pub(in crate::log) fn db3(file: &std::path::Path, path: &str) -> Result<Store, Error> {
        if file.as_os_str() == "-" {
            return Err(Error::Input(format!(
                "{path}: a rosbag2 sqlite3 bag (.db3) is read by SQLite, which needs a file: save the standard input to a file and name it"
            )));
        }
        let db = crate::formats::rosbag2::Db3::open(file, path)
            .map_err(|e| Error::at(Fault::new(FaultKind::Format, path, e)))?;
        Ok(Store::Db3(db))
    }

    /// A split bag's store: `file` is its directory or its `metadata.yaml`.
    #[cfg(feature = "sqlite")]
    pub(in crate::log) fn split(file: &std::path::Path, path: &str) -> Result<Store, Error> {
        super::split::Split::open(file, path).map(Store::Split)
    }

    /// The schemas and channels known before the messages (a summary's, or the tables').
    pub(in crate::log) fn known(&self) -> (&[Schema], &[McapChannel]) {
        match self {
            Store::Mcap { blocks, .. } => (&blocks.schemas, &blocks.channels),
            #[cfg(feature = "sqlite")]
            Store::Db3(db) => (&db.schemas, &db.channels),
            #[cfg(feature = "sqlite")]
            Store::Split(s) => (&s.schemas, &s.channels),
        }
    }

    /// Messages per channel as the store counts them before reading (an MCAP summary's
    /// statistics or its message indexes, the rows of a sqlite3 file's topics, a split bag's
    /// files' summed); `None` when it does not say.
    pub(in crate::log) fn counts(&self) -> Option<&std::collections::HashMap<u16, u64>> {
        match self {
            Store::Mcap { blocks, .. } => blocks.counts.as_ref(),
            #[cfg(feature = "sqlite")]
            Store::Db3(db) => db.counts(),
            #[cfg(feature = "sqlite")]
            Store::Split(s) => s.counts.as_ref(),
        }
    }

    /// The earliest log time (the log's origin).
    pub(in crate::log) fn start(&self) -> Option<u64> {
        match self {
            Store::Mcap { blocks, .. } => blocks.start,
            #[cfg(feature = "sqlite")]
            Store::Db3(db) => db.start,
            #[cfg(feature = "sqlite")]
            Store::Split(s) => s.start,
        }
    }

    /// The input's size in bytes.
    pub(in crate::log) fn size(&self) -> u64 {
        match self {
            Store::Mcap { bytes, .. } => bytes.get().len() as u64,
            #[cfg(feature = "sqlite")]
            Store::Db3(db) => db.size,
            #[cfg(feature = "sqlite")]
            Store::Split(s) => s.parts.iter().map(|p| p.store.size()).sum(),
        }
    }

    /// Whether messages are named by their row (sqlite3) or their file and place (a split bag)
    /// rather than by a byte offset alone.
    pub(in crate::log) fn rows(&self) -> bool {
        !matches!(self, Store::Mcap { .. })
    }

    /// The events of the store ([`container::read`] for MCAP).
    pub(in crate::log) fn read<'s, E>(
        &'s self,
        budget: u64,
        want: &Want<'_>,
        each: impl FnMut(Event<'_, 's>) -> Result<(), E>,
    ) -> Result<Result<container::Stats, (container::Stats, container::ReadError)>, E> {
        match self {
            Store::Mcap { bytes, blocks } => {
                container::read(bytes.get(), blocks, budget, want, &|at| bytes.moved(at), each)
            }
            #[cfg(feature = "sqlite")]
            Store::Db3(db) => db.read(want, each),
            #[cfg(feature = "sqlite")]
            Store::Split(s) => s.read(budget, want, each),
        }
    }

    /// The events of one storage file (not a split bag), for a split bag's threads: through a
    /// `dyn` callback, so that reading a split bag does not instantiate itself again.
    #[cfg(feature = "sqlite")]
    pub(in crate::log) fn read_file<'s>(
        &'s self,
        budget: u64,
        want: &Want<'_>,
        each: &mut dyn FnMut(Event<'_, 's>) -> Result<(), ()>,
    ) -> Result<Result<container::Stats, (container::Stats, container::ReadError)>, ()> {
        match self {
            Store::Mcap { bytes, blocks } => {
                container::read(bytes.get(), blocks, budget, want, &|at| bytes.moved(at), each)
            }
            Store::Db3(db) => db.read(want, each),
            Store::Split(_) => Ok(Ok(container::Stats::default())),
        }
    }

    /// Where a message is, when [`rows`](Self::rows): its row, or its file and place there.
    pub(in crate::log) fn place(&self, m: &Message<'_>) -> String {
        match self {
            #[cfg(feature = "sqlite")]
            Store::Split(s) => match s.parts.get(usize::from(m.file).wrapping_sub(1)) {
                Some(p) => format!("{}, {}", p.name, p.store.place(m)),
                None => format!("message {}", m.index),
            },
            _ if self.rows() => format!("table `messages`, row id {}", m.index),
            _ => format!("byte {}", m.offset),
        }
    }
}

/// The time index of a rosbag2 sqlite3 file (`file`): runs of row ids of about
/// [`CHUNK_BYTES`](crate::log::index::CHUNK_BYTES) of the file each, at the positions
/// [`rosbag2::Rows`](crate::formats::rosbag2::Rows) gives rows ([`rosbag2::spans`](crate::formats::rosbag2::spans)),
/// their times since the least timestamp; `None` for a file of no messages or one whose table
/// does not answer (read whole).
#[cfg(feature = "sqlite")]
pub(in crate::log) fn db3_index(file: &std::path::Path) -> Option<Index> {
    let (rows, spans) = crate::formats::rosbag2::spans(file, CHUNK_BYTES)?;
    // The origin a whole read takes (`Db3::start`): the least timestamp, not before 0.
    let origin = spans.iter().map(|s| s.start).min()?.max(0);
    let since = |t: i64| u64::try_from(t.saturating_sub(origin)).unwrap_or(0);
    let mut chunks: Vec<Chunk> = Vec::with_capacity(spans.len());
    for (i, s) in spans.iter().enumerate() {
        let offset = rows.position(s.first_id);
        let end = spans.get(i + 1).map_or(rows.end(), |n| rows.position(n.first_id));
        chunks.push(Chunk {
            offset,
            length: end.saturating_sub(offset),
            first_record: u64::try_from(s.first_id.max(0)).unwrap_or(0),
            records: s.messages,
            t_min_ns: since(s.start),
            t_max_ns: since(s.end),
        });
    }
    Some(Index { origin_ns: origin as u64, chunks, states: Vec::new(), schemas: Vec::new() })
}
