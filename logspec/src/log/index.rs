//! The time index of a log: chunks of about [`CHUNK_BYTES`] that each start at a record boundary
//! where a reader needs no state but the log's header, with the times each holds, so that a scan
//! reads only the chunks a time window meets ([`Log::with_range`](super::Log::with_range)) and a
//! large log splits into several partitions (`logspec_engine::stream::partitions`).
//!
//! A scan of a whole log notes the chunks at the record boundaries it passes (no extra pass:
//! [`Outcome::index`](super::Outcome::index)); the engine stores them ([`encode`], through its
//! `output` module) beside the log as `<log>.logspec-idx`, or in
//! `$XDG_CACHE_HOME/logspec/<sha256 of the log's absolute path>.idx` when the log's folder is not
//! writable ([`places`]). The file's layout is `schemas/logidx.toml` (`formats::logidx`), read
//! and written by its generated reader and writer. An index is used only when its header matches
//! the log ([`Stamp`]: size, modification time, SHA-256 of the first and last 64 KiB) and its
//! chunks tile the log from its first record to its end; anything else (stale, cut, hostile) is
//! ignored ([`load`] gives `None`) and the next whole scan writes it again. Nothing is allocated
//! for a count the index file states: chunks are kept as they decode, bounded by the file's size.
//!
//! Formats with chunks today: USVLOG (no state beyond the file header); RLOG files, whose
//! chunks start at a cycle's timestamp and whose reader state (the key table, and the type of
//! each key name's first value, which names its channel) is the log's own messages that set it,
//! listed once in [`Index::states`]: a reader that starts at a chunk reads those before it first
//! (`Log::with_range`); and WPILOG files, whose chunks start at any record and whose reader state
//! is the entry table, set by the control records (Start, Finish, Set Metadata), listed as
//! state messages likewise. Both carry WPILib struct and protobuf schemas, which a whole read
//! finds in a first pass over the whole log (a schema may come after the values that use it):
//! the index lists those messages ([`Index::schemas`]), so that a reader that starts at a chunk
//! reads them, and nothing else of the log outside its chunks. PX4 ULog and ArduPilot DataFlash
//! files likewise (`Marks`): chunks start at messages, and the state messages are ULog's flag
//! bits (the appended-data offsets), formats, subscriptions and unsubscriptions, DataFlash's FMT,
//! FMTU, UNIT and MULT messages, and the messages that set the latest time a message without a
//! time of its own takes. CARLA recordings too: chunks start at a frame's FrameStart and count
//! frames, and the state messages are the PhysicsControl packets where the reader's wheel layout
//! changed (the samples depend on no actor table). ROS bags, MCAP files and rosbag2 sqlite3
//! files carry an index of their own, which [`Log::index`](super::Log::index) gives in the same
//! form ([`own`]; a `.db3`'s positions are scaled row ids, [`Range`]). Every other format is read
//! whole by each scan (the same answers, without the skipping).

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::formats::logidx::{self, Logidx, LogidxRecord};
use crate::formats::wpistruct::TypeRegistry;
use crate::runtime::{Input, SliceReader, WindowBuf, Writer};

use super::fault::{Fault, Locate};
use super::input::Mapped;
use super::Format;

/// The bytes a chunk spans before the next one starts (at the next record boundary after this
/// many bytes).
pub const CHUNK_BYTES: u64 = 1 << 20;

/// The bytes hashed at each end of a log for its [`Stamp`].
const ENDS: u64 = 64 * 1024;

/// A part of a log to read: records whose first byte is at `start` or after and before `end`.
/// `start` is a chunk's offset, where the record numbered `first_record` starts.
///
/// A rosbag2 sqlite3 file (`.db3`) has no byte offset per message: its positions are row ids of
/// its `messages` table scaled by the file's bytes per row id (`formats::rosbag2::Rows`: row id
/// `id` at `(id - least id) * bytes per row id`), so that offsets and lengths are about the
/// bytes of the file, as for every other log, and a range is the rows whose ids its positions
/// span; its `first_record` is the row id `start` stands for (a `.db3`'s record index is its row
/// id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub end: u64,
    pub first_record: u64,
}

/// A chunk of a log (a `CHUNK` record of `schemas/logidx.toml`). In a rosbag2 sqlite3 file, a
/// run of row ids, its offset and length positions as [`Range`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Byte offset of its first record (a `.db3`: the position of its first row id).
    pub offset: u64,
    /// Its bytes: up to the next chunk's offset, or the log's end (a `.db3`: the file's bytes
    /// per row id times its row ids, an estimate of the bytes its rows take).
    pub length: u64,
    /// The record index of its first record (a `.db3`: its first row id).
    pub first_record: u64,
    pub records: u64,
    /// The earliest and latest sample time, in nanoseconds since the log's time origin.
    pub t_min_ns: u64,
    pub t_max_ns: u64,
}

impl Chunk {
    /// Whether a sample of this chunk may lie in the window (seconds since the log's origin).
    pub fn meets(&self, since: Option<f64>, until: Option<f64>) -> bool {
        let (a, b) = (self.t_min_ns as f64 / 1e9, self.t_max_ns as f64 / 1e9);
        since.is_none_or(|s| b >= s) && until.is_none_or(|u| a <= u)
    }
}

/// The index of a log: its chunks, in file order, tiling it from its first record to its end,
/// and the messages that set its reader's state (`STATE` records of `schemas/logidx.toml`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    pub origin_ns: u64,
    pub chunks: Vec<Chunk>,
    /// The byte offsets, increasing, of the log's messages that set its reader's state (RLOG:
    /// key definitions and the first value of each key name; WPILOG: control records); empty
    /// for a format without state.
    pub states: Vec<u64>,
    /// The log's messages that carry a struct or protobuf schema (the first of each name), in
    /// file order, wherever they are: a reader that starts at a chunk reads them all first.
    pub schemas: Vec<SchemaAt>,
}

/// A message that carries a schema, and the one before it that names its entry and type (a
/// `SCHEMA` record of `schemas/logidx.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemaAt {
    /// Byte offset of the message that carries the schema.
    pub offset: u64,
    /// Byte offset of the message that names its entry (WPILOG: a Start record; RLOG: a key
    /// definition).
    pub definition: u64,
}

impl Index {
    /// The state messages a reader starting at `offset` reads first: those before it.
    pub fn states_before(&self, offset: u64) -> &[u64] {
        &self.states[..self.states.partition_point(|&s| s < offset)]
    }
}

/// What says that an index is of this log as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub head: [u8; 32],
    pub tail: [u8; 32],
}

/// The log's stamp: its size, modification time, and the SHA-256 of its first and last 64 KiB.
pub fn stamp(log: &Path) -> std::io::Result<Stamp> {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(log)?;
    let meta = f.metadata()?;
    let size = meta.len();
    let mtime_ns = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    let mut hash = |from: u64| -> std::io::Result<[u8; 32]> {
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::with_capacity(ENDS.min(size) as usize);
        (&mut f).take(ENDS).read_to_end(&mut buf)?;
        Ok(Sha256::digest(&buf).into())
    };
    let head = hash(0)?;
    let tail = hash(size.saturating_sub(ENDS))?;
    Ok(Stamp { size, mtime_ns, head, tail })
}

/// What the fault of a ranged read says when its time index does not fit the log.
pub(super) const WRONG: &str = "the time index is wrong (rebuild it: `logspec index --force`)";

/// The fault of a ranged read whose time index does not fit the log `path`: at byte `at`,
/// `what`.
pub(super) fn wrong(path: &str, at: u64, what: &str) -> Fault {
    Fault::at(path, at, None, format!("{path}: byte {at}: {what}; {WRONG}"))
}

/// The fault of a ranged read that ended at byte `at`, not at `end`, where its chunk ends.
pub(super) fn ended_elsewhere(path: &str, at: u64, end: u64) -> Fault {
    wrong(path, at, &format!("the reading ended here, not at byte {end}, where the time index says a chunk ends"))
}

/// A reader of messages that a ranged read moves to a chunk's start ([`start_at`]).
pub(super) trait Restart {
    /// What the format calls a message, in the faults (`no record starts there`).
    const MESSAGE: &'static str = "message";
    /// Moves to byte `offset`, where message number `index` starts; `false` when the reader
    /// cannot (a stream) or no message starts there.
    fn seek(&mut self, offset: u64, index: u64) -> bool;
    /// The byte offset of the next message.
    fn position(&self) -> u64;
    /// Reads the next message: its offset, and whether it is at `state` and is a state message,
    /// whose state it then takes; or the fault (of the log `path`) that ends the reading.
    fn next_taking(&mut self, state: Option<u64>, path: &str) -> Option<Result<(u64, bool), Fault>>;
}

/// Moves `r` to `range`'s start with the state a reader from the log's start has there: the
/// state messages before it (`states`, from the time index) read first, in file order (a reader
/// that seeks, a mapped file, goes to each; a stream reads every message up to the start,
/// taking them as it passes them). A range that starts where `r` is (at the first message)
/// needs nothing: `Ok(false)`; `Ok(true)` when `r` moved. A start before the first message, a
/// state message that is not one (`what` says what it should be), or a start where no message
/// starts, is a wrong index.
pub(super) fn start_at<R: Restart>(
    r: &mut R,
    range: Range,
    states: &[u64],
    path: &str,
    what: &str,
) -> Result<bool, Fault> {
    let first = r.position();
    if range.start == first {
        return Ok(false);
    }
    if range.start < first {
        return Err(wrong(path, range.start, &format!("a chunk starts before the first {}", R::MESSAGE)));
    }
    let nothing = format!("no {} starts there", R::MESSAGE);
    if r.seek(range.start, range.first_record) {
        for &at in states {
            if !r.seek(at, 0) {
                return Err(wrong(path, at, &nothing));
            }
            match r.next_taking(Some(at), path) {
                Some(Ok((_, true))) => {}
                Some(Err(f)) => return Err(f),
                _ => return Err(wrong(path, at, what)),
            }
        }
        r.seek(range.start, range.first_record);
    } else {
        let mut next = states.iter().copied().peekable();
        while r.position() < range.start {
            let (at, taken) = match r.next_taking(next.peek().copied(), path) {
                None => break,
                Some(Ok(m)) => m,
                Some(Err(f)) => return Err(f),
            };
            if next.peek() == Some(&at) {
                next.next();
                if !taken {
                    return Err(wrong(path, at, what));
                }
            }
        }
        if let Some(at) = next.next() {
            return Err(wrong(path, at, &nothing));
        }
        if r.position() != range.start {
            return Err(wrong(path, range.start, &nothing));
        }
    }
    Ok(true)
}

/// What a reader lends as a message ([`Messages`]). Apart from the reading methods, so that the
/// type needs no `where Self: 'm` (which a lending method in the same trait would require, and
/// which a closure bound over the message, [`Restarting`]'s, would turn into `Self: 'static`).
pub(super) trait Lends {
    type Message<'m>;
}

/// A reader that lends its messages one by one, and seeks where its input can (ULog's and
/// DataFlash's), for [`Restarting`].
pub(super) trait Messages: Lends {
    type Error: Locate;
    /// Moves to byte `offset`, where message number `index` starts; `false` for a stream.
    fn seek(&mut self, offset: u64, index: u64) -> bool;
    /// The byte offset of the next message.
    fn position(&self) -> u64;
    fn next_message(&mut self) -> Option<Result<Self::Message<'_>, Self::Error>>;
    /// The byte offset of a message.
    fn offset(m: &Self::Message<'_>) -> u64;
}

/// A reader of [`Messages`], with what makes a message a state message (`take`, which then
/// takes its state), for [`start_at`]. A reading error ends the move with the reader's fault.
pub(super) struct Restarting<'r, M, F> {
    pub(super) reader: &'r mut M,
    pub(super) take: F,
}

impl<M: Messages, F: FnMut(&M::Message<'_>) -> bool> Restart for Restarting<'_, M, F> {
    fn seek(&mut self, offset: u64, index: u64) -> bool {
        self.reader.seek(offset, index)
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    fn next_taking(&mut self, state: Option<u64>, path: &str) -> Option<Result<(u64, bool), Fault>> {
        Some(match self.reader.next_message()? {
            Ok(m) => {
                let at = M::offset(&m);
                Ok((at, state == Some(at) && (self.take)(&m)))
            }
            Err(e) => Err(Fault::read(path, &e)),
        })
    }
}

/// [`Lends`] and [`Messages`] for the reader of `formats::$format`, whose own `seek`, `position`
/// and `next_message` lend messages with their `offset`: the readers of ULog and DataFlash,
/// alike but for their types.
macro_rules! messages {
    ($($format:ident),*) => {$(
        impl<R, I: Input> Lends for crate::formats::$format::Reader<R, I> {
            type Message<'m> = crate::formats::$format::Message<'m>;
        }

        impl<R, I: Input> Messages for crate::formats::$format::Reader<R, I> {
            type Error = crate::formats::$format::ReadError;
            fn seek(&mut self, offset: u64, index: u64) -> bool {
                Self::seek(self, offset, index)
            }
            fn position(&self) -> u64 {
                Self::position(self)
            }
            fn next_message(&mut self) -> Option<Result<Self::Message<'_>, Self::Error>> {
                Self::next_message(self)
            }
            fn offset(m: &Self::Message<'_>) -> u64 {
                m.offset
            }
        }
    )*};
}

messages!(ulog, dataflash);

/// A format whose logs carry WPILib struct and protobuf schemas (RLOG, WPILOG), for
/// [`indexed_schemas`]: its reader in place over a map, and how it reads a message that names
/// an entry and one that carries a schema.
pub(super) trait SchemaMessages {
    /// A reader over the bytes of a map, that seeks.
    type Reader<'m>;
    /// The id a message names its entry by (RLOG: a key id; WPILOG: an entry id).
    type Id: PartialEq;
    /// What the format calls a message, the message that names an entry and a value of the
    /// entry, in the faults (`no record starts there`, `not a Start record`).
    const MESSAGE: &'static str;
    const DEFINITION: &'static str;
    const VALUE: &'static str;
    /// A reader over the whole log (`window`), or what is wrong with its header.
    fn open<'m>(&self, window: WindowBuf<'m, fn(u64)>) -> Result<Self::Reader<'m>, String>;
    /// Moves to byte `offset`, where a message starts.
    fn seek(r: &mut Self::Reader<'_>, offset: u64) -> bool;
    /// Reads a message: the id of the entry it names, when it is a definition.
    fn definition(r: &mut Self::Reader<'_>) -> Option<Self::Id>;
    /// Reads a message: whether it is a value of entry `id`; a schema it carries is offered to
    /// `reg`.
    fn value(r: &mut Self::Reader<'_>, id: Self::Id, reg: &mut TypeRegistry) -> bool;
    /// A registry with every schema of `file`, read in a first pass (a file that cannot be
    /// mapped).
    fn whole(&self, file: &Path, path: &str) -> TypeRegistry;
}

/// A registry with the schemas the time index lists (`at`: every schema message of the log and
/// the message that names its entry), read where they are in the map (`map`, or the file mapped
/// here), nothing else; a message that is not a value of the entry its definition names is a
/// wrong index: a fault. A file that cannot be mapped is searched whole
/// ([`SchemaMessages::whole`]).
pub(super) fn indexed_schemas<S: SchemaMessages>(
    format: &S,
    file: &Path,
    map: Option<&Mapped>,
    path: &str,
    at: &[SchemaAt],
) -> Result<TypeRegistry, Fault> {
    let mut reg = TypeRegistry::new();
    if at.is_empty() {
        return Ok(reg);
    }
    let own;
    let map = match map {
        Some(m) => m,
        None => {
            own = std::fs::File::open(file).ok().and_then(|f| Mapped::new(&f, None));
            match &own {
                Some(m) => m,
                None => return Ok(format.whole(file, path)),
            }
        }
    };
    // Read in place, without moving the map's window (the scan's reader has it).
    let window = WindowBuf::new(map.bytes(), 1 << 16, (|_| {}) as fn(u64));
    let mut r = format.open(window).map_err(|e| Fault::at(path, 0, None, format!("{path}: {e}")))?;
    let nothing = format!("no {} starts there", S::MESSAGE);
    for s in at {
        if !S::seek(&mut r, s.definition) {
            return Err(wrong(path, s.definition, &nothing));
        }
        let Some(id) = S::definition(&mut r) else {
            return Err(wrong(path, s.definition, &format!("not {}", S::DEFINITION)));
        };
        if !S::seek(&mut r, s.offset) {
            return Err(wrong(path, s.offset, &nothing));
        }
        if !S::value(&mut r, id, &mut reg) {
            return Err(wrong(path, s.offset, &format!("not {}", S::VALUE)));
        }
    }
    Ok(reg)
}

/// The number a format has in an index's header; `None` for a format without chunks.
pub fn format_number(format: Format) -> Option<u32> {
    match format {
        Format::Usvlog => Some(1),
        Format::Rlog => Some(2),
        Format::Wpilog => Some(3),
        Format::Ulog => Some(7),
        Format::Carla => Some(6),
        Format::Dataflash => Some(8),
        _ => None,
    }
}

/// Whether logs of `format` carry their own index of chunks, which a reader can start at with no
/// state from before them ([`super::Log::index`]): ROS bags (the chunk infos of the bag's index),
/// MCAP files (the chunk indexes of the summary) and rosbag2 sqlite3 files (runs of row ids,
/// with their times from the `timestamp` index SQLite keeps). No index file is written for them.
pub fn own(format: Format) -> bool {
    matches!(format, Format::Rosbag | Format::Mcap | Format::Rosbag2)
}

/// Whether a reader of `format` that starts at a chunk needs state from before it (the index's
/// `STATE` messages, [`Index::states_before`]): every format with chunks but USVLOG, whose fixed
/// framing has none beyond the file header.
pub fn keeps_state(format: Format) -> bool {
    format_number(format).is_some() && format != Format::Usvlog
}

/// Where the index of `log` is kept: beside it, then in the cache directory
/// (`$XDG_CACHE_HOME/logspec/`, else `$HOME/.cache/logspec/`), named by the SHA-256 of the log's
/// absolute path.
pub fn places(log: &Path) -> Vec<PathBuf> {
    let mut beside = log.as_os_str().to_os_string();
    beside.push(".logspec-idx");
    let mut out = vec![PathBuf::from(beside)];
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache")));
    if let (Some(cache), Ok(abs)) = (cache, std::path::absolute(log)) {
        let name: String =
            Sha256::digest(abs.as_os_str().as_encoded_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        out.push(cache.join("logspec").join(format!("{name}.idx")));
    }
    out
}

/// The index of `log` (of format `format`) if one of [`places`] holds one that matches the log
/// as it is now; `None` otherwise (none, stale, or not an index that checks out).
pub fn load(log: &Path, format: Format) -> Option<Index> {
    let number = format_number(format)?;
    let now = stamp(log).ok()?;
    places(log).iter().find_map(|p| {
        // An index is a header, 53 bytes a chunk, 13 a state message and 21 a schema message,
        // and a log has at most a chunk and a message per byte.
        let cap = 112 + 87 * now.size.saturating_add(1);
        let f = std::fs::File::open(p).ok()?;
        if f.metadata().ok()?.len() > cap {
            return None;
        }
        let mut bytes = Vec::new();
        f.take(cap).read_to_end(&mut bytes).ok()?;
        decode(&bytes, number, &now)
    })
}

/// The index in `bytes` if it is of format `number`, matches `now` and its chunks tile the log.
pub fn decode(bytes: &[u8], number: u32, now: &Stamp) -> Option<Index> {
    let (h, mut reader) = SliceReader::<Logidx>::new(bytes).ok()?;
    let fits = h.version == logidx::LOGIDX_VERSION
        && h.format == number
        && h.log_size == now.size
        && h.log_mtime_ns == now.mtime_ns
        && h.head_sha256 == now.head
        && h.tail_sha256 == now.tail;
    if !fits {
        return None;
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut states: Vec<u64> = Vec::new();
    let mut schemas: Vec<SchemaAt> = Vec::new();
    while let Some(ev) = reader.next_event() {
        let c = match ev.ok()? {
            crate::runtime::Event::Record { record: LogidxRecord::Chunk(c), .. }
                if states.is_empty() && schemas.is_empty() =>
            {
                c
            }
            // State messages come after the chunks, each after the one before, inside the log.
            crate::runtime::Event::Record { record: LogidxRecord::State(s), .. } if schemas.is_empty() => {
                if states.last().is_some_and(|&p| p >= s.offset) || s.offset >= now.size {
                    return None;
                }
                states.push(s.offset);
                continue;
            }
            // Schema messages come last, each after the one before and after its definition.
            crate::runtime::Event::Record { record: LogidxRecord::Schema(s), .. } => {
                if schemas.last().is_some_and(|p| p.offset >= s.offset)
                    || s.offset >= now.size
                    || s.definition >= s.offset
                {
                    return None;
                }
                schemas.push(SchemaAt { offset: s.offset, definition: s.definition });
                continue;
            }
            _ => return None,
        };
        let c = Chunk {
            offset: c.offset,
            length: c.length,
            first_record: c.first_record,
            records: c.records,
            t_min_ns: c.t_min_ns,
            t_max_ns: c.t_max_ns,
        };
        let follows = match chunks.last() {
            None => true,
            Some(p) => p.offset.checked_add(p.length) == Some(c.offset) && p.first_record + p.records == c.first_record,
        };
        if !follows || c.length == 0 || c.records == 0 || c.t_min_ns > c.t_max_ns {
            return None;
        }
        chunks.push(c);
    }
    let ends = chunks.last().is_some_and(|c| c.offset.checked_add(c.length) == Some(now.size));
    (ends && chunks.len() as u64 == h.chunks).then_some(Index { origin_ns: h.origin_ns, chunks, states, schemas })
}

/// The bytes of the index `index` of a log of format `number` stamped `stamp`.
pub fn encode(index: &Index, number: u32, stamp: &Stamp) -> Vec<u8> {
    let header = logidx::FileHeader {
        version: logidx::LOGIDX_VERSION,
        format: number,
        log_size: stamp.size,
        log_mtime_ns: stamp.mtime_ns,
        head_sha256: stamp.head,
        tail_sha256: stamp.tail,
        origin_ns: index.origin_ns,
        chunks: index.chunks.len() as u64,
    };
    let mut w = Writer::<_, Logidx>::new(Vec::new(), &header).expect("writing to memory");
    for c in &index.chunks {
        let rec = LogidxRecord::Chunk(logidx::Chunk {
            offset: c.offset,
            length: c.length,
            first_record: c.first_record,
            records: c.records,
            t_min_ns: c.t_min_ns,
            t_max_ns: c.t_max_ns,
        });
        w.write(0, &rec).expect("writing to memory");
    }
    for &offset in &index.states {
        w.write(0, &LogidxRecord::State(logidx::State { offset })).expect("writing to memory");
    }
    for s in &index.schemas {
        let rec = LogidxRecord::Schema(logidx::Schema { offset: s.offset, definition: s.definition });
        w.write(0, &rec).expect("writing to memory");
    }
    w.finish().expect("writing to memory")
}

/// Notes chunks at the record boundaries a whole scan passes.
#[derive(Debug, Default)]
pub(super) struct Chunker {
    chunks: Vec<Chunk>,
    open: Option<Chunk>,
}

impl Chunker {
    /// A record at `offset`, numbered `index`, with a sample time of `t_ns` since the origin.
    #[inline]
    pub(super) fn note(&mut self, offset: u64, index: u64, t_ns: u64) {
        match &mut self.open {
            Some(c) if offset < c.offset.saturating_add(CHUNK_BYTES) => {
                c.records += 1;
                c.t_min_ns = c.t_min_ns.min(t_ns);
                c.t_max_ns = c.t_max_ns.max(t_ns);
            }
            _ => self.start(offset, index, t_ns),
        }
    }

    /// A record at `offset` that a reader should not start at (WPILOG: a data record of no
    /// entry, which a reader that starts there cannot tell from a wrong index): it joins the open
    /// chunk, or starts the first one.
    pub(super) fn join(&mut self, offset: u64, index: u64, t_ns: u64) {
        match &mut self.open {
            Some(c) => {
                c.records += 1;
                c.t_min_ns = c.t_min_ns.min(t_ns);
                c.t_max_ns = c.t_max_ns.max(t_ns);
            }
            None => self.start(offset, index, t_ns),
        }
    }

    #[cold]
    fn start(&mut self, offset: u64, index: u64, t_ns: u64) {
        if let Some(mut c) = self.open.take() {
            c.length = offset - c.offset;
            self.chunks.push(c);
        }
        self.open = Some(Chunk { offset, length: 0, first_record: index, records: 1, t_min_ns: t_ns, t_max_ns: t_ns });
    }

    /// The chunks of a log read whole to `end` (its size).
    pub(super) fn finish(mut self, end: u64) -> Vec<Chunk> {
        if let Some(mut c) = self.open.take() {
            c.length = end.saturating_sub(c.offset);
            self.chunks.push(c);
        }
        self.chunks
    }
}

/// Notes the chunks of an RLOG file at the cycles a whole scan passes: a chunk starts at a
/// cycle's timestamp message (the first one at the start of the messages, whatever they are:
/// values before the first timestamp are at 0.0 s, a cycle of their own). Times are kept as
/// the log has them (seconds) and converted when a chunk closes, so that a cycle costs two
/// comparisons.
#[derive(Debug)]
pub(super) struct Cycles {
    chunks: Vec<Chunk>,
    /// The open chunk: its offset, first cycle and cycles, and its earliest and latest time.
    open: Option<(u64, u64, u64, f64, f64)>,
    /// Where the messages start (after the revision byte).
    first: u64,
    /// A cycle at or after this offset starts a new chunk.
    next: u64,
    /// Cycles before the open chunk's.
    cycles: u64,
}

impl Cycles {
    /// The messages start at `first`.
    pub(super) fn new(first: u64) -> Cycles {
        Cycles { chunks: Vec::new(), open: None, first, next: first, cycles: 0 }
    }

    /// A cycle starts at `offset` at `t` seconds.
    #[inline]
    pub(super) fn cycle(&mut self, offset: u64, t: f64) {
        // A NaN timestamp is at 0 ns, as `seconds_to_ns` makes it.
        let t = if t.is_nan() { 0.0 } else { t };
        match &mut self.open {
            Some((_, _, n, lo, hi)) if offset < self.next => {
                *n += 1;
                *lo = lo.min(t);
                *hi = hi.max(t);
            }
            _ => self.start(offset, t),
        }
    }

    #[cold]
    fn start(&mut self, offset: u64, t: f64) {
        if self.open.is_none() && offset > self.first {
            // Messages before the first timestamp: a cycle at 0.0 s, in a chunk of its own
            // start, which this timestamp's cycle joins.
            self.open = Some((self.first, 0, 1, 0.0, 0.0));
            self.next = self.first.saturating_add(CHUNK_BYTES);
            return self.cycle(offset, t);
        }
        self.close(offset);
        self.open = Some((offset, self.cycles, 1, t, t));
        self.next = offset.saturating_add(CHUNK_BYTES);
    }

    fn close(&mut self, end: u64) {
        if let Some((offset, first_record, records, lo, hi)) = self.open.take() {
            let (t_min_ns, t_max_ns) = (super::scan::seconds_to_ns(lo), super::scan::seconds_to_ns(hi));
            let length = end.saturating_sub(offset);
            self.chunks.push(Chunk { offset, length, first_record, records, t_min_ns, t_max_ns });
            self.cycles = first_record + records;
        }
    }

    /// The chunks of a log read whole to `end` (its size).
    pub(super) fn finish(mut self, end: u64) -> Vec<Chunk> {
        if self.open.is_none() && end > self.first {
            // No timestamp: the messages are one cycle at 0.0 s.
            self.open = Some((self.first, 0, 1, 0.0, 0.0));
        }
        self.close(end);
        self.chunks
    }
}

/// Notes the time index of a log whose reader keeps state from messages anywhere in it and
/// whose samples without a time of their own take the latest time before them (ULog,
/// DataFlash): every message is a record, a chunk starts only at a message a reader can start
/// at (a `boundary`: not a corrupted region or skipped bytes), and the state messages are those
/// the format's scan names ([`Marks::state`]) and, at each chunk's start, the message that last
/// raised the latest time ([`Marks::raised`]), so that a reader starting there reads the same
/// latest time before its first message as a reader from the log's start.
#[derive(Debug, Default)]
pub(super) struct Marks {
    chunker: Chunker,
    states: Vec<u64>,
    /// The message that last raised the latest time, not yet among `states`.
    raised: Option<u64>,
}

impl Marks {
    /// A message at `offset`, numbered `index`, at `t_ns` since the origin (its sample's time,
    /// or the latest time before it).
    #[inline]
    pub(super) fn record(&mut self, offset: u64, index: u64, t_ns: u64, boundary: bool) {
        match &mut self.chunker.open {
            Some(c) if !boundary || offset < c.offset.saturating_add(CHUNK_BYTES) => {
                c.records += 1;
                c.t_min_ns = c.t_min_ns.min(t_ns);
                c.t_max_ns = c.t_max_ns.max(t_ns);
            }
            _ => {
                self.states.extend(self.raised.take());
                self.chunker.start(offset, index, t_ns);
            }
        }
    }

    /// A message at `offset` that sets the reader's state.
    #[inline]
    pub(super) fn state(&mut self, offset: u64) {
        self.states.push(offset);
    }

    /// A message at `offset` that raised the latest time.
    #[inline]
    pub(super) fn raised(&mut self, offset: u64) {
        self.raised = Some(offset);
    }

    /// The index of a log read whole to `end` (its size), `None` for a log of no message.
    pub(super) fn finish(mut self, end: u64, origin_ns: u64) -> Option<Index> {
        let chunks = self.chunker.finish(end);
        self.states.sort_unstable();
        self.states.dedup();
        (!chunks.is_empty()).then_some(Index { origin_ns, chunks, states: self.states, ..Index::default() })
    }
}
