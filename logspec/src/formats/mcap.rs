//! MCAP files (`.mcap`): the container's records read in place from the file's bytes through
//! the views generated from `schemas/mcap.toml` ([`wire`]: the magic, the record framing and
//! every record type; zero-copy, each length checked against the bytes there before anything is
//! taken), chunks decompressed with zstd or lz4 and their CRCs checked, with the state this
//! reader adds: the schemas and channels seen, the messages handed on in log-time order, the
//! chunk budget, and what is left of a damaged file.
//!
//! - **One pass.** A file with a summary is opened from its end: the footer, the summary's
//!   schemas, channels, chunk indexes and statistics (checked by the summary's CRC when it has
//!   one). The reading then walks the top-level records once, in place. A file without a summary,
//!   or whose summary does not check out (a cut file, a damaged one), has its top-level records
//!   walked once first for what the summary would say; that walk reads record headers only.
//! - **Copies.** Messages are lent: from the file for a message record or an uncompressed chunk,
//!   from the chunk's decompressed bytes (shared by its messages, dropped with the last of them)
//!   for a zstd or lz4 chunk. Only the chunks whose messages are waiting for their turn are held.
//! - **Order.** Messages come out by `log_time`, ties in file order. The blocks of a file (its
//!   chunks, and messages outside chunks) each have a start time (a chunk index or chunk header
//!   says it); the messages of the blocks read so far wait in a heap until no later block can
//!   precede them, and a chunk whose messages are in order and end before any later block starts
//!   is handed on directly. Chunks written out of order or overlapping in time cost only the
//!   messages they hold at once; a chunk whose header lies about its start time is still read
//!   whole, its messages handed on as they come and counted ([`Stats::out_of_order`]).
//! - **Selection.** A chunk whose time range misses the wanted window, or (with the summary's
//!   chunk indexes) that holds none of the wanted channels, is not decompressed; where a file
//!   has no summary, the schemas and channels it holds are needed, and it is read.
//! - **Damage.** A chunk that declares more decompressed bytes than the budget, whose
//!   compression is unknown, or whose CRC or records are wrong, is skipped and reported
//!   ([`Event::Skipped`]); the reading goes on with the next record. A record cut by the end of
//!   the file, or one whose length runs past it, ends the reading ([`ReadError`]) after every
//!   complete message; a file that ends between records without its footer is reported too
//!   ([`Stats::footer`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use logspec_runtime::{Endian, Fixed, View};

/// The schema the container's layouts are generated from (`schemas/mcap.toml`).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/mcap.toml"));

/// The container's layouts, generated from `schemas/mcap.toml`: the magic ([`wire::Magic`]), the
/// record header ([`wire::RecordHeader`]) and every record type, each with its borrowed view
/// (`...Ref`).
pub mod wire {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/mcap.rs"));
}

use wire::{McapRecord as Op, RecordHeader};

/// A schema record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub id: u16,
    /// `pkg/msg/Type` for ROS 2.
    pub name: String,
    /// `ros2msg`, `ros2idl`, `ros1msg`, `jsonschema`, ...
    pub encoding: String,
    pub data: Vec<u8>,
}

/// A channel record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    pub id: u16,
    /// 0: no schema.
    pub schema_id: u16,
    pub topic: String,
    /// `cdr`, `ros1`, `json`, ...
    pub message_encoding: String,
    pub metadata: BTreeMap<String, String>,
}

/// A message's bytes.
#[derive(Clone, Debug)]
pub enum Data<'a> {
    /// Lent from the file: a message record's, or an uncompressed chunk's.
    Lent(&'a [u8]),
    /// A range of a decompressed chunk, shared by its messages.
    Shared(Arc<Vec<u8>>, usize, usize),
    /// Its own (a rosbag2 sqlite3 row's).
    Owned(Vec<u8>),
}

impl std::ops::Deref for Data<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Data::Lent(b) => b,
            Data::Shared(buf, a, z) => &buf[*a..*z],
            Data::Owned(v) => v,
        }
    }
}

/// A message, with where it is: the byte offset of its record, or of the chunk that holds it.
#[derive(Clone, Debug)]
pub struct Message<'a> {
    pub channel: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Data<'a>,
    /// The byte offset of the message record, or of its chunk record.
    pub offset: u64,
    /// Its index in file order (0 for the first message of the file).
    pub index: u64,
    /// Which storage file of a split bag holds it (1 for the first), 0 for a file read alone.
    pub file: u16,
}

/// What the reader hands on, in this order for each message: its channel and schema first.
#[derive(Debug)]
pub enum Event<'m, 'a> {
    Header {
        profile: String,
        library: String,
    },
    Schema(&'m Schema),
    Channel(&'m Channel),
    Message(&'m Message<'a>),
    /// A Metadata record: its name and its map.
    Metadata {
        name: String,
        metadata: BTreeMap<String, String>,
    },
    /// A chunk (or record) skipped, at this byte offset, and why; the reading goes on.
    Skipped {
        offset: u64,
        why: String,
    },
}

/// Why the reading stopped before the end of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

/// What a reading saw of the container.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Chunk records, and their compressions (`""`: none).
    pub chunks: u64,
    pub compressions: Vec<String>,
    /// Chunks that were not decompressed because the selection does not need them.
    pub chunks_unread: u64,
    /// Messages handed on (of the selection).
    pub messages: u64,
    /// Messages that came later than one with a later log time (a chunk's header said it starts
    /// later than it does).
    pub out_of_order: u64,
    /// Whether the file has its footer and end magic (a file cut between records has neither).
    pub footer: bool,
    /// Whether the summary was read (and its chunk indexes used for selection).
    pub summary: bool,
    /// The earliest log time the chunk headers and loose messages announce (the log's origin).
    pub start: Option<u64>,
}

/// What to read.
#[derive(Clone, Debug, Default)]
pub struct Want<'s> {
    /// Chunks that hold none of these channels (by the summary's chunk index) are not read
    /// (all are: `None`). The messages of the chunks read are handed on whatever their channel.
    pub channels: Option<&'s HashSet<u16>>,
    /// Only messages with `log_time` in this inclusive range.
    pub time: Option<(u64, u64)>,
    /// Only the top-level records that start in this part of the file (chunks of
    /// [`chunk_spans`]); all: `None`.
    pub part: Option<Part>,
}

/// A part of a file to read ([`Want::part`]): the records that start at `start` or after and
/// before `end`, `start` a chunk's offset, its first message numbered `first_message` (the
/// messages before it in the file, by [`ChunkSpan::messages`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub start: u64,
    pub end: u64,
    pub first_message: u64,
}

impl Want<'_> {
    fn time(&self, t: u64) -> bool {
        self.time.is_none_or(|(a, z)| (a..=z).contains(&t))
    }
}

/// The view of a record's body: its fields from the start of the body (bytes after them are
/// ignored, as the MCAP specification lets later versions add fields). Every length is checked
/// against the body before anything is taken, so a hostile length allocates nothing.
fn view<'a, V: View<'a>>(op: u8, body: &'a [u8]) -> Result<V, String> {
    V::view(body).map_err(|e| format!("a record (opcode {op:#04x}) that does not parse: {e}"))
}

/// Checks the body of a record of a known opcode that this reader does not otherwise read (an
/// attachment, an index) by the generated dispatch on its opcode; `Ok` for an unknown opcode,
/// skipped by its length, and for bytes after a record type's fields (as [`view`]).
fn check(op: u8, body: &[u8]) -> Result<(), String> {
    match wire::McapRecordRef::decode(u64::from(op), body) {
        None | Some(Ok(_)) => Ok(()),
        Some(Err(e)) if matches!(e.kind, logspec_runtime::DecodeErrorKind::TrailingBytes { .. }) => Ok(()),
        Some(Err(e)) => Err(format!("a record (opcode {op:#04x}) that does not parse: {e}")),
    }
}

/// A message waiting for its turn, by (log time, file order).
struct Pending<'a>(Message<'a>);

impl PartialEq for Pending<'_> {
    fn eq(&self, o: &Self) -> bool {
        (self.0.log_time, self.0.index) == (o.0.log_time, o.0.index)
    }
}
impl Eq for Pending<'_> {}
impl PartialOrd for Pending<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0.log_time, self.0.index).cmp(&(o.0.log_time, o.0.index))
    }
}

/// Whether `buf` starts like an MCAP file: with the magic.
pub fn sniff(head: &[u8]) -> bool {
    wire::Magic::decode_fixed(head, Endian::Little).is_ok()
}

/// Whether `buf` ends with the magic.
fn end_magic(buf: &[u8]) -> bool {
    buf.len().checked_sub(wire::Magic::SIZE).is_some_and(|at| sniff(&buf[at..]))
}

/// A record: its offset, opcode and body.
type Raw<'a, At> = (At, u8, &'a [u8]);

/// Records framed in place (an opcode, a `u64` length, the body): the top-level records of a
/// file, or the records of a chunk.
struct Framed<'a> {
    buf: &'a [u8],
    at: usize,
    /// After the footer (top level), nothing more is read.
    done: bool,
}

/// Why framing stopped: the record's offset in the buffer, and whether its length runs past the
/// buffer's end by more than the buffer holds (rather than a record cut by the end).
struct Unframed {
    at: usize,
    op: u8,
    len: Option<u64>,
}

impl<'a> Framed<'a> {
    fn new(buf: &'a [u8], at: usize) -> Self {
        Framed { buf, at, done: false }
    }

    /// The next record: its offset, opcode and body; `None` at the end of the buffer.
    fn next(&mut self) -> Option<Result<Raw<'a, usize>, Unframed>> {
        if self.done || self.at == self.buf.len() {
            return None;
        }
        let at = self.at;
        let Ok(header) = RecordHeader::decode_fixed(&self.buf[at..], Endian::Little) else {
            self.done = true;
            let op = self.buf[at + RecordHeader::OFFSET_OPCODE];
            return Some(Err(Unframed { at, op, len: None }));
        };
        let (op, len) = (header.opcode, header.length);
        let body = at + RecordHeader::SIZE;
        let end = usize::try_from(len).ok().and_then(|n| body.checked_add(n)).filter(|e| *e <= self.buf.len());
        let Some(end) = end else {
            self.done = true;
            return Some(Err(Unframed { at, op, len: Some(len) }));
        };
        self.at = end;
        Some(Ok((at, op, &self.buf[body..end])))
    }
}

/// The top-level records of a file, each with its byte offset and body, lent from the file's
/// bytes; the reading ends after the footer (the end magic is not a record).
struct Records<'a> {
    framed: Framed<'a>,
}

impl<'a> Records<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Records::at(buf, wire::Magic::SIZE as u64)
    }

    /// The records from the one at `offset` on (a record boundary, inside the buffer).
    fn at(buf: &'a [u8], offset: u64) -> Self {
        let at = usize::try_from(offset).unwrap_or(usize::MAX).clamp(wire::Magic::SIZE.min(buf.len()), buf.len());
        let mut framed = Framed::new(buf, at);
        framed.done = !sniff(buf);
        Records { framed }
    }

    /// The next record: its offset, opcode and body; or where and why the file cannot be read
    /// on.
    fn next(&mut self) -> Option<Result<Raw<'a, u64>, ReadError>> {
        let buf = self.framed.buf;
        if !sniff(buf) {
            if self.framed.at == 0 {
                return None;
            }
            self.framed.at = 0;
            return Some(Err(ReadError {
                offset: 0,
                message: "not an MCAP file: the magic \\x89MCAP0\\r\\n is missing".into(),
            }));
        }
        match self.framed.next()? {
            Ok((at, o, body)) => {
                if u64::from(o) == Op::ID_FOOTER {
                    self.framed.done = true;
                }
                Some(Ok((at as u64, o, body)))
            }
            Err(Unframed { at, op, len }) => Some(Err(ReadError {
                offset: at as u64,
                message: match len {
                    Some(len) if len > buf.len() as u64 => format!(
                        "a record (opcode {op:#04x}) of {len} bytes runs past the end of the file ({} bytes)",
                        buf.len()
                    ),
                    _ => "the file ends inside a record (truncated)".to_string(),
                },
            })),
        }
    }
}

/// When the blocks of a file (chunks, and messages outside chunks) start, and what the file
/// says before its messages are read: what [`read`] orders messages by, from the summary when
/// it checks out, else from a walk over the top-level records that decompresses nothing.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// The byte offsets of the blocks, ascending.
    offsets: Vec<u64>,
    /// The start of each block (`u64::MAX`: none announced).
    firsts: Vec<u64>,
    /// The earliest start of the blocks from each one on (`u64::MAX` past the last).
    later: Vec<u64>,
    /// The earliest start of all: the log's time origin.
    pub start: Option<u64>,
    /// The schemas and channels outside chunks (those of the summary, in an indexed file), each
    /// id once, the last record of an id standing.
    pub schemas: Vec<Schema>,
    pub channels: Vec<Channel>,
    /// The summary's chunk indexes: the channels of each chunk, by the chunk's offset.
    chunk_index: HashMap<u64, HashSet<u16>>,
    /// Messages per channel as the file counts them (the summary's statistics, or the message
    /// indexes after the chunks and the messages outside chunks); `None` when it does not say.
    pub counts: Option<HashMap<u16, u64>>,
    /// Where the summary starts (the data section's end), when the blocks are the summary's.
    summary_start: Option<u64>,
}

impl Blocks {
    pub fn new(buf: &[u8]) -> Blocks {
        summary(buf).unwrap_or_else(|| first_pass(buf))
    }

    /// Blocks from their offsets and start times (`None`: a block that announces no messages).
    fn of(mut starts: Vec<(u64, Option<u64>)>) -> Blocks {
        starts.sort_by_key(|s| s.0);
        let mut later: Vec<u64> = vec![u64::MAX; starts.len() + 1];
        for i in (0..starts.len()).rev() {
            later[i] = later[i + 1].min(starts[i].1.unwrap_or(u64::MAX));
        }
        Blocks {
            start: later.first().copied().filter(|t| *t != u64::MAX),
            offsets: starts.iter().map(|s| s.0).collect(),
            firsts: starts.iter().map(|s| s.1.unwrap_or(u64::MAX)).collect(),
            later,
            ..Blocks::default()
        }
    }

    /// The blocks that start in `part`, for the order of a reading of that part alone.
    fn within(&self, part: &Part) -> Blocks {
        let starts = self
            .offsets
            .iter()
            .zip(&self.firsts)
            .filter(|(o, _)| (part.start..part.end).contains(*o))
            .map(|(o, t)| (*o, Some(*t).filter(|t| *t != u64::MAX)))
            .collect();
        Blocks { start: self.start, ..Blocks::of(starts) }
    }

    /// The earliest a message of a block after the one at `offset` can be.
    fn after(&self, offset: u64) -> u64 {
        self.later[self.offsets.partition_point(|o| *o <= offset)]
    }

    /// Each id once, the last record of an id standing.
    fn known(&mut self, schemas: Vec<Schema>, channels: Vec<Channel>) {
        let last = |v: Vec<(u16, usize)>| -> Vec<usize> {
            let by_id: BTreeMap<u16, usize> = v.into_iter().collect();
            by_id.into_values().collect()
        };
        let keep_s = last(schemas.iter().enumerate().map(|(i, x)| (x.id, i)).collect());
        let keep_c = last(channels.iter().enumerate().map(|(i, x)| (x.id, i)).collect());
        self.schemas = keep_s.into_iter().map(|i| schemas[i].clone()).collect();
        self.channels = keep_c.into_iter().map(|i| channels[i].clone()).collect();
    }
}

fn schema_of(s: wire::SchemaRef<'_>) -> Schema {
    Schema { id: s.id, name: s.name.into(), encoding: s.encoding.into(), data: s.data.to_vec() }
}

fn channel_of(c: wire::ChannelRef<'_>) -> Channel {
    Channel {
        id: c.id,
        schema_id: c.schema_id,
        topic: c.topic.into(),
        message_encoding: c.message_encoding.into(),
        metadata: map_of(&c.metadata),
    }
}

/// A `Map<string, string>` (a channel's metadata, a Metadata record's), the last value of a key
/// standing.
fn map_of(m: &logspec_runtime::view::Seq<'_, wire::StringPairRef<'_>>) -> BTreeMap<String, String> {
    m.iter().map(|p| (p.key.to_string(), p.value.to_string())).collect()
}

/// The channels of a chunk, by its chunk index's message index offsets.
fn chunk_channels(c: &wire::ChunkIndexRef<'_>) -> HashSet<u16> {
    c.message_index_offsets.iter().map(|e| e.channel_id).collect()
}

/// What the summary says, when the file has one that checks out and lists its chunks: its
/// footer in place, the summary's records whole, its CRC right (when it has one), every chunk
/// index inside the data section. `None` sends the reading to [`first_pass`].
fn summary(buf: &[u8]) -> Option<Blocks> {
    use wire::{Footer, Magic};
    // The footer record (its header, then the footer's fields), then the end magic.
    let f = buf.len().checked_sub(Magic::SIZE + RecordHeader::SIZE + Footer::SIZE)?;
    let header = RecordHeader::decode_fixed(&buf[f..], Endian::Little).ok()?;
    if !end_magic(buf)
        || f < Magic::SIZE
        || u64::from(header.opcode) != Op::ID_FOOTER
        || header.length != Footer::SIZE as u64
    {
        return None;
    }
    let footer = Footer::decode_fixed(&buf[f + RecordHeader::SIZE..], Endian::Little).ok()?;
    let start = usize::try_from(footer.summary_start).ok()?;
    if start < Magic::SIZE || start > f {
        return None;
    }
    // The CRC covers the summary and the footer up to its `summary_crc` field.
    let crc_end = f + RecordHeader::SIZE + Footer::OFFSET_SUMMARY_CRC;
    if footer.summary_crc != 0 && crc32fast::hash(&buf[start..crc_end]) != footer.summary_crc {
        return None;
    }
    let (mut schemas, mut channels, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    let mut chunk_index = HashMap::new();
    let mut counts = None;
    let mut records = Framed::new(&buf[..f], start);
    while let Some(r) = records.next() {
        let (_, o, body) = r.ok()?;
        match u64::from(o) {
            Op::ID_SCHEMA => schemas.push(schema_of(view(o, body).ok()?)),
            Op::ID_CHANNEL => channels.push(channel_of(view(o, body).ok()?)),
            Op::ID_CHUNK_INDEX => {
                let c: wire::ChunkIndexRef = view(o, body).ok()?;
                let end = c.chunk_start_offset.checked_add(c.chunk_length)?;
                if c.chunk_start_offset < Magic::SIZE as u64 || end > start as u64 {
                    return None;
                }
                let empty = c.message_start_time == 0 && c.message_end_time == 0;
                starts.push((c.chunk_start_offset, (!empty).then_some(c.message_start_time)));
                chunk_index.insert(c.chunk_start_offset, chunk_channels(&c));
            }
            Op::ID_STATISTICS => {
                let s: wire::StatisticsRef = view(o, body).ok()?;
                counts = Some(s.channel_message_counts.iter().map(|c| (c.channel_id, c.message_count)).collect());
            }
            _ => {}
        }
    }
    if starts.is_empty() {
        return None;
    }
    let mut blocks = Blocks::of(starts);
    blocks.known(schemas, channels);
    blocks.chunk_index = chunk_index;
    blocks.counts = counts;
    blocks.summary_start = Some(start as u64);
    Some(blocks)
}

/// A chunk of the data section as a reader of a part of the file takes it ([`Want::part`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSpan {
    /// The chunk record's offset, and its bytes up to the next chunk (its message indexes and
    /// any records between included) or the summary.
    pub offset: u64,
    pub length: u64,
    /// The earliest and latest log time of its messages (its header's).
    pub start: u64,
    pub end: u64,
    /// Its messages, as its message indexes count them.
    pub messages: u64,
}

/// The chunks of a file that a reading can start at, each read without the others, in file
/// order: `Some` only when the summary checks out (so that its schemas and channels are known
/// before any chunk is read, [`Blocks::new`]) and names every channel its chunk indexes name, and
/// the data section holds no message outside chunks and message indexes after every chunk
/// that holds messages (which count them). Reads the summary and the top-level records' headers,
/// no chunk.
pub fn chunk_spans(buf: &[u8]) -> Option<Vec<ChunkSpan>> {
    let blocks = summary(buf)?;
    let known: HashSet<u16> = blocks.channels.iter().map(|c| c.id).collect();
    if blocks.chunk_index.values().any(|held| !held.is_subset(&known)) {
        return None;
    }
    let data_end = blocks.summary_start?;
    let mut spans: Vec<ChunkSpan> = Vec::new();
    // Whether the last chunk holds messages and no message index has followed it yet.
    let mut waiting = false;
    let mut records = Records::new(buf.get(..usize::try_from(data_end).ok()?)?);
    while let Some(r) = records.next() {
        let (offset, o, body) = r.ok()?;
        match u64::from(o) {
            Op::ID_MESSAGE => return None,
            Op::ID_CHUNK => {
                let c: wire::ChunkRef = view(o, body).ok()?;
                if waiting {
                    return None;
                }
                if let Some(last) = spans.last_mut() {
                    last.length = offset - last.offset;
                }
                waiting = !(c.message_start_time == 0 && c.message_end_time == 0);
                let (start, end) = (c.message_start_time, c.message_end_time);
                spans.push(ChunkSpan { offset, length: 0, start, end, messages: 0 });
            }
            Op::ID_MESSAGE_INDEX => {
                let m: wire::MessageIndexRef = view(o, body).ok()?;
                spans.last_mut()?.messages += m.records.len() as u64;
                waiting = false;
            }
            _ => {}
        }
    }
    if waiting {
        return None;
    }
    let last = spans.last_mut()?;
    last.length = data_end - last.offset;
    Some(spans)
}

/// A walk over the top-level records that decompresses nothing, for a file without a summary
/// (or with one that does not check out): the start time of each block (a chunk, or a message
/// outside chunks), the schemas and channels outside chunks, the chunk indexes' channels by chunk
/// offset, and the messages per channel that the message indexes after each chunk and the
/// messages outside chunks count (unknown when a chunk that holds messages has no message
/// index). Ends where the file cannot be read on.
fn first_pass(buf: &[u8]) -> Blocks {
    let (mut schemas, mut channels, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    let mut chunk_index = HashMap::new();
    let mut counts: HashMap<u16, u64> = HashMap::new();
    // Whether every chunk that holds messages has message indexes, and whether the last one
    // met has had one yet.
    let (mut indexed, mut waiting) = (true, false);
    let mut records = Records::new(buf);
    while let Some(Ok((offset, o, body))) = records.next() {
        let o64 = u64::from(o);
        if o64 != Op::ID_MESSAGE_INDEX && waiting {
            indexed = false;
            waiting = false;
        }
        match o64 {
            Op::ID_MESSAGE_INDEX => {
                waiting = false;
                match view::<wire::MessageIndexRef>(o, body) {
                    Ok(m) => *counts.entry(m.channel_id).or_default() += m.records.len() as u64,
                    // A message index that does not read: the file no longer says the counts.
                    Err(_) => indexed = false,
                }
            }
            Op::ID_MESSAGE => match view::<wire::MessageRef>(o, body) {
                Ok(m) => {
                    starts.push((offset, Some(m.log_time)));
                    *counts.entry(m.channel_id).or_default() += 1;
                }
                Err(_) => starts.push((offset, None)),
            },
            Op::ID_CHUNK => match view::<wire::ChunkRef>(o, body) {
                Ok(c) => {
                    let empty = c.message_start_time == 0 && c.message_end_time == 0;
                    starts.push((offset, (!empty).then_some(c.message_start_time)));
                    waiting = !empty;
                }
                Err(_) => starts.push((offset, None)),
            },
            Op::ID_SCHEMA => {
                if let Ok(s) = view(o, body) {
                    schemas.push(schema_of(s));
                }
            }
            Op::ID_CHANNEL => {
                if let Ok(c) = view(o, body) {
                    channels.push(channel_of(c));
                }
            }
            Op::ID_CHUNK_INDEX => {
                if let Ok(c) = view::<wire::ChunkIndexRef>(o, body) {
                    chunk_index.insert(c.chunk_start_offset, chunk_channels(&c));
                }
            }
            _ => {}
        }
    }
    let mut blocks = Blocks::of(starts);
    blocks.known(schemas, channels);
    blocks.chunk_index = chunk_index;
    blocks.counts = (indexed && !waiting).then_some(counts);
    blocks
}

/// A message of a block, before its turn: its header, and where its data is in the block's bytes.
struct Entry {
    channel: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    data: (usize, usize),
    index: u64,
}

/// A message record's fields and its data's range in `records` (`at`: the record's body there).
fn entry(body: &[u8], at: usize, index: u64) -> Result<Entry, String> {
    let m: wire::MessageRef = view(Op::ID_MESSAGE as u8, body)?;
    // The data runs to the end of the body.
    let end = at + body.len();
    Ok(Entry {
        channel: m.channel_id,
        sequence: m.sequence,
        log_time: m.log_time,
        publish_time: m.publish_time,
        data: (end - m.data.len(), end),
        index,
    })
}

/// Where a block's messages' bytes are.
enum Bytes<'a> {
    Lent(&'a [u8]),
    Shared(Arc<Vec<u8>>),
}

impl<'a> Bytes<'a> {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Lent(b) => b,
            Bytes::Shared(v) => v,
        }
    }

    fn data(&self, (a, z): (usize, usize)) -> Data<'a> {
        match self {
            Bytes::Lent(b) => Data::Lent(&b[a..z]),
            Bytes::Shared(v) => Data::Shared(Arc::clone(v), a, z),
        }
    }
}

/// Reads the file's records and hands them to `each`: the header, schemas and channels as they
/// come, messages of `want` in log-time order (each after its channel), metadata, and the
/// chunks skipped. `budget` bounds the decompressed size of one chunk. `moved` is told the
/// offset of each top-level record as the reading gets there (a map drops the pages behind).
/// Stops at the first error `each` returns; a file that cannot be read on ends with its
/// [`ReadError`], after every complete message.
pub fn read<'a, E>(
    buf: &'a [u8],
    blocks: &Blocks,
    budget: u64,
    want: &Want<'_>,
    moved: &dyn Fn(u64),
    mut each: impl FnMut(Event<'_, 'a>) -> Result<(), E>,
) -> Result<Result<Stats, (Stats, ReadError)>, E> {
    let mut stats = Stats { start: blocks.start, ..Stats::default() };
    let chunk_index = (!blocks.chunk_index.is_empty()).then_some(&blocks.chunk_index);
    stats.summary = chunk_index.is_some();
    // A part of the file: its records alone, ordered among themselves. Its parts come from a
    // summary that checked out, footer and end magic included.
    let within;
    let (blocks, mut records, end_at) = match &want.part {
        Some(part) => {
            within = blocks.within(part);
            stats.footer = end_magic(buf);
            (&within, Records::at(buf, part.start), part.end)
        }
        None => (blocks, Records::new(buf), u64::MAX),
    };
    let mut schemas: HashMap<u16, Schema> = HashMap::new();
    let mut channels: HashMap<u16, Channel> = HashMap::new();
    let mut heap: BinaryHeap<Reverse<Pending<'a>>> = BinaryHeap::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut inner: Vec<Inner> = Vec::new();
    let mut last_out = 0u64;
    let mut index = want.part.map_or(0, |p| p.first_message);

    // Hands on one message, in its turn.
    macro_rules! hand {
        ($m:expr) => {{
            let m = $m;
            if m.log_time < last_out {
                stats.out_of_order += 1;
            }
            last_out = last_out.max(m.log_time);
            stats.messages += 1;
            each(Event::Message(&m))?;
        }};
    }
    // Hands on the pending messages no later block can precede.
    macro_rules! release {
        ($upto:expr) => {
            while heap.peek().is_some_and(|p| p.0 .0.log_time <= $upto) {
                let Reverse(Pending(m)) = heap.pop().expect("peeked");
                hand!(m);
            }
        };
    }

    let end = loop {
        let (offset, o, body) = match records.next() {
            None => break None,
            Some(Ok((offset, ..))) if offset >= end_at => break None,
            Some(Ok(r)) => r,
            Some(Err(e)) => break Some(e),
        };
        moved(offset);
        // A block's messages and where their bytes are.
        let mut block: Option<Bytes<'a>> = None;
        entries.clear();
        // Hands on a schema or channel the first time it is seen (or seen changed).
        macro_rules! known {
            ($x:expr) => {
                match $x {
                    Inner::Schema(s) => {
                        if schemas.get(&s.id) != Some(&s) {
                            each(Event::Schema(&s))?;
                            schemas.insert(s.id, s);
                        }
                    }
                    Inner::Channel(c) => {
                        if channels.get(&c.id) != Some(&c) {
                            each(Event::Channel(&c))?;
                            channels.insert(c.id, c);
                        }
                    }
                }
            };
        }
        match u64::from(o) {
            Op::ID_MESSAGE => {
                let e = match entry(body, 0, index) {
                    Ok(e) => e,
                    Err(why) => {
                        each(Event::Skipped { offset, why })?;
                        continue;
                    }
                };
                index += 1;
                if want.time(e.log_time) {
                    entries.push(e);
                }
                block = Some(Bytes::Lent(body));
            }
            Op::ID_CHUNK => {
                let header: wire::ChunkRef = match view(o, body) {
                    Ok(h) => h,
                    Err(why) => {
                        each(Event::Skipped { offset, why })?;
                        continue;
                    }
                };
                stats.chunks += 1;
                if !stats.compressions.iter().any(|c| c == header.compression) {
                    stats.compressions.push(header.compression.to_string());
                }
                let span = (header.message_start_time, header.message_end_time);
                let misses_time = want.time.is_some_and(|(a, z)| span.1 < a || span.0 > z);
                let misses_channels = match (&chunk_index, want.channels) {
                    (Some(idx), Some(w)) => idx.get(&offset).is_some_and(|held| held.is_disjoint(w)),
                    _ => false,
                };
                if chunk_index.is_some() && (misses_time || misses_channels) {
                    stats.chunks_unread += 1;
                } else {
                    match chunk(&header, budget, &mut inner, &mut entries, &mut index, want) {
                        Ok(bytes) => block = Some(bytes),
                        Err(why) => each(Event::Skipped { offset, why })?,
                    }
                    for x in inner.drain(..) {
                        known!(x);
                    }
                }
            }
            Op::ID_HEADER => match view::<wire::HeaderRef>(o, body) {
                Ok(h) => each(Event::Header { profile: h.profile.into(), library: h.library.into() })?,
                Err(why) => each(Event::Skipped { offset, why })?,
            },
            Op::ID_FOOTER => match view::<wire::FooterRef>(o, body) {
                Ok(_) => stats.footer = end_magic(buf),
                Err(why) => each(Event::Skipped { offset, why })?,
            },
            Op::ID_METADATA => match view::<wire::MetadataRef>(o, body) {
                Ok(m) => each(Event::Metadata { name: m.name.into(), metadata: map_of(&m.metadata) })?,
                Err(why) => each(Event::Skipped { offset, why })?,
            },
            Op::ID_SCHEMA => match view(o, body) {
                Ok(s) => known!(Inner::Schema(schema_of(s))),
                Err(why) => each(Event::Skipped { offset, why })?,
            },
            Op::ID_CHANNEL => match view(o, body) {
                Ok(c) => known!(Inner::Channel(channel_of(c))),
                Err(why) => each(Event::Skipped { offset, why })?,
            },
            // The summary's and index records are not read again; others are checked.
            Op::ID_MESSAGE_INDEX | Op::ID_CHUNK_INDEX | Op::ID_STATISTICS | Op::ID_SUMMARY_OFFSET => {}
            _ => {
                if let Err(why) = check(o, body) {
                    each(Event::Skipped { offset, why })?;
                }
            }
        }
        let Some(bytes) = block else { continue };
        let upto = blocks.after(offset);
        let direct = heap.is_empty()
            && entries.windows(2).all(|w| w[0].log_time <= w[1].log_time)
            && entries.last().is_none_or(|e| e.log_time <= upto);
        for e in entries.drain(..) {
            let m = Message {
                channel: e.channel,
                sequence: e.sequence,
                log_time: e.log_time,
                publish_time: e.publish_time,
                data: bytes.data(e.data),
                offset,
                index: e.index,
                file: 0,
            };
            if direct {
                hand!(m);
            } else {
                heap.push(Reverse(Pending(m)));
            }
        }
        release!(upto);
    };
    release!(u64::MAX);
    Ok(match end {
        None => Ok(stats),
        Some(e) => Err((stats, e)),
    })
}

/// A schema or channel record of a chunk, handed on after the chunk checks out whole.
enum Inner {
    Schema(Schema),
    Channel(Channel),
}

/// A chunk's records: its schemas and channels into `inner`, its messages of `want`'s time
/// window into `entries` (numbered from `index` on, in file order), and where their bytes are:
/// lent from the file for an uncompressed chunk, decompressed otherwise. The chunk is checked
/// whole first (budget, decompression, CRC, every record framed and read): a chunk that is not
/// gives nothing but the reason. A record inside is never longer than the chunk.
fn chunk<'a>(
    header: &wire::ChunkRef<'a>,
    budget: u64,
    inner: &mut Vec<Inner>,
    entries: &mut Vec<Entry>,
    index: &mut u64,
    want: &Want<'_>,
) -> Result<Bytes<'a>, String> {
    let compression = header.compression;
    let what =
        if compression.is_empty() { "an uncompressed chunk".to_string() } else { format!("a {compression} chunk") };
    let bytes = chunk_data(header, &what, budget)?;
    let records = bytes.get();
    let mut framed = Framed::new(records, 0);
    let first = *index;
    let mut n = first;
    let fail = |why: String, inner: &mut Vec<Inner>, entries: &mut Vec<Entry>| {
        inner.clear();
        entries.clear();
        Err(why)
    };
    while let Some(r) = framed.next() {
        let (at, o, body) = match r {
            Ok(r) => r,
            Err(Unframed { at, op, .. }) => {
                return fail(
                    format!("{what} that does not read whole: a record (opcode {op:#04x}) at byte {at} of its records runs past their end; its messages are skipped"),
                    inner,
                    entries,
                );
            }
        };
        let read = match u64::from(o) {
            Op::ID_MESSAGE => entry(body, at + RecordHeader::SIZE, n).map(|e| {
                n += 1;
                if want.time(e.log_time) {
                    entries.push(e);
                }
            }),
            Op::ID_CHUNK => {
                return fail(
                    format!("{what} holding a chunk (chunks hold schemas, channels and messages only); its messages are skipped"),
                    inner,
                    entries,
                )
            }
            Op::ID_SCHEMA => view(o, body).map(|s| inner.push(Inner::Schema(schema_of(s)))),
            Op::ID_CHANNEL => view(o, body).map(|c| inner.push(Inner::Channel(channel_of(c)))),
            _ => check(o, body),
        };
        if let Err(why) = read {
            return fail(format!("{what} holding {why}; its messages are skipped"), inner, entries);
        }
    }
    *index = n;
    Ok(bytes)
}

/// A chunk's records, decompressed here rather than by the `mcap` crate, whose streaming
/// decompressor loops forever on a zstd frame that ends before the size the chunk declares: the
/// output is bounded by that size (held to the budget), a frame that ends early or runs past it
/// is an error, and the CRC of the records is checked when the chunk has one. An uncompressed
/// chunk's records are lent from the file.
fn chunk_data<'a>(header: &wire::ChunkRef<'a>, what: &str, budget: u64) -> Result<Bytes<'a>, String> {
    use std::io::Read;
    let size = header.uncompressed_size;
    if size > budget {
        return Err(format!(
            "a chunk that declares {size} bytes decompressed, more than the chunk budget of {budget} bytes; skipped"
        ));
    }
    let size = usize::try_from(size).map_err(|_| format!("{what} too large for this machine"))?;
    let data = header.records;
    let bad = |e: &dyn std::fmt::Display| format!("{what} that does not read whole: {e}; its messages are skipped");
    let out = match header.compression {
        "" => Bytes::Lent(data),
        "zstd" => Bytes::Shared(Arc::new(zstd::bulk::decompress(data, size).map_err(|e| bad(&e))?)),
        "lz4" => {
            let mut out = Vec::with_capacity(size);
            let limit = u64::try_from(size).unwrap_or(u64::MAX).saturating_add(1);
            lz4_flex::frame::FrameDecoder::new(data).take(limit).read_to_end(&mut out).map_err(|e| bad(&e))?;
            Bytes::Shared(Arc::new(out))
        }
        other => return Err(format!("a chunk of unknown compression `{other}`; skipped")),
    };
    let got = out.get();
    if got.len() != size {
        return Err(bad(&format_args!("{} bytes decompressed where the chunk declares {size}", got.len())));
    }
    if header.uncompressed_crc != 0 {
        let crc = crc32fast::hash(got);
        if crc != header.uncompressed_crc {
            return Err(bad(&format_args!("its CRC is {crc:#010x}, the chunk says {:#010x}", header.uncompressed_crc)));
        }
    }
    Ok(out)
}
