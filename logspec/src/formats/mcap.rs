//! MCAP files (`.mcap`): the container read through the `mcap` crate (records, chunks
//! decompressed with zstd or lz4, their CRCs checked), with the state this reader adds: the
//! schemas and channels seen, the messages handed on in log-time order, the chunk budget, and
//! what is left of a damaged file.
//!
//! - **Order.** Messages come out by `log_time`, ties in file order. A first pass reads the
//!   top-level records without decompressing anything and notes when each block (a chunk, or
//!   a message outside chunks) starts (a chunk's header says); the second pass holds the
//!   messages of the blocks read so far in a heap and hands on those no later block can
//!   precede. Chunks written out of order or overlapping in time cost only the messages they
//!   hold at once; a chunk whose header lies about its start time is still read whole, its
//!   messages handed on as they come and counted ([`Stats::out_of_order`]).
//! - **Selection.** A chunk whose time range misses the wanted window, or (with the summary's
//!   chunk indexes) that holds none of the wanted channels, is not decompressed; where a file
//!   has no summary, the schemas and channels it holds are needed, and it is read.
//! - **Damage.** A chunk that declares more decompressed bytes than the budget, whose
//!   compression is unknown, or whose CRC or records are wrong, is skipped and reported
//!   ([`Event::Skipped`]); the reading goes on with the next record. A record cut by the end of
//!   the file, or one whose length runs past it, ends the reading ([`ReadError`]) after every
//!   complete message; a file that ends between records without its footer is reported too
//!   ([`Stats::footer`]).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use mcap::records::Record;
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

/// The MCAP magic, at both ends of a file.
pub const MAGIC: &[u8] = mcap::MAGIC;

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

/// A message, with where it is: the byte offset of its record, or of the chunk that holds it.
#[derive(Clone, Debug)]
pub struct Message<'a> {
    pub channel: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Cow<'a, [u8]>,
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
}

impl Want<'_> {
    fn time(&self, t: u64) -> bool {
        self.time.is_none_or(|(a, z)| (a..=z).contains(&t))
    }
}

/// The top-level records of a file, each with its byte offset and body, lent from the file's
/// bytes.
struct Records<'a> {
    buf: &'a [u8],
    fed: usize,
    reader: LinearReader,
}

impl<'a> Records<'a> {
    fn new(buf: &'a [u8]) -> Self {
        let options = LinearReaderOptions::default()
            .with_skip_end_magic(true)
            .with_emit_chunks(true)
            .with_validate_chunk_crcs(false)
            // A record longer than the file is damage, never an allocation.
            .with_record_length_limit(buf.len());
        Records { buf, fed: 0, reader: LinearReader::new_with_options(options) }
    }

    /// The next record: its offset, opcode and body; or where and why the file cannot be read
    /// on.
    fn next(&mut self) -> Option<Result<(u64, u8, &'a [u8]), ReadError>> {
        loop {
            let at = self.fed as u64;
            match self.reader.next_event()? {
                Ok(LinearReadEvent::ReadRequest(n)) => {
                    let n = n.min(self.buf.len() - self.fed);
                    self.reader.insert(n).copy_from_slice(&self.buf[self.fed..self.fed + n]);
                    self.reader.notify_read(n);
                    self.fed += n;
                }
                Ok(LinearReadEvent::Record { data, opcode }) => {
                    // The reader asks for each record whole and no more: it ends where the
                    // bytes fed end (the footer's body, read in place, included).
                    let len = data.len();
                    let end = self.fed;
                    let body = &self.buf[end - len..end];
                    let start = end.saturating_sub(len + 9);
                    return Some(Ok((start as u64, opcode, body)));
                }
                Err(e) => {
                    let message = match e {
                        mcap::McapError::UnexpectedEof => "the file ends inside a record (truncated)".to_string(),
                        mcap::McapError::BadMagic => "not an MCAP file: the magic \\x89MCAP0\\r\\n is missing".into(),
                        mcap::McapError::RecordTooLarge { opcode, len } => format!(
                            "a record (opcode {opcode:#04x}) of {len} bytes runs past the end of the file ({} bytes)",
                            self.buf.len()
                        ),
                        other => other.to_string(),
                    };
                    return Some(Err(ReadError { offset: at.min(self.fed as u64), message }));
                }
            }
        }
    }
}

/// What a record body holds before and between its strings, for [`fits`].
#[derive(Clone, Copy)]
enum Part {
    /// Bytes of fixed size.
    Fixed(usize),
    /// A `u32` length, then that many bytes (a string, or bytes).
    Counted,
    /// A `u32` byte length, then pairs of strings within it (a string map).
    Map,
}

/// Whether every string, byte array and string map in a record body lies within it. The `mcap`
/// crate's parser (`binrw`, `count = len`) allocates a string's declared length before it reads
/// it, so a record is checked before it is parsed: a 10 KB file declaring a 1.8 GB string must
/// not allocate 1.8 GB. The parts are the MCAP records' fields up to their last string
/// (`docs/formats/mcap.md`); records without strings need no check.
fn fits(op: u8, body: &[u8]) -> bool {
    use Part::*;
    let parts: &[Part] = match op {
        0x01 => &[Counted, Counted],                      // Header: profile, library
        0x03 => &[Fixed(2), Counted, Counted, Counted],   // Schema: id, name, encoding, data
        0x04 => &[Fixed(4), Counted, Counted, Map],       // Channel: ids, topic, encoding, metadata
        0x06 => &[Fixed(28), Counted],                    // Chunk: times, sizes, crc, compression
        0x08 => &[Fixed(32), Counted, Fixed(8), Counted], // ChunkIndex: ..., offsets, length, compression
        0x09 => &[Fixed(16), Counted, Counted],           // Attachment: times, name, media type
        0x0A => &[Fixed(40), Counted, Counted],           // AttachmentIndex: ..., name, media type
        0x0C => &[Counted, Map],                          // Metadata: name, map
        0x0D => &[Fixed(16), Counted],                    // MetadataIndex: offset, length, name
        _ => &[],
    };
    let len = |at: usize| -> Option<usize> {
        let n = crate::dynamic::load(body, at, logspec_ir::ir::Prim::U32, logspec_ir::ir::Endian::Little)?;
        usize::try_from(n).ok()
    };
    let mut at = 0usize;
    for p in parts {
        at = match p {
            Fixed(n) => at.checked_add(*n),
            Counted => len(at).and_then(|n| (at + 4).checked_add(n)),
            Map => len(at).and_then(|n| {
                let end = (at + 4).checked_add(n)?;
                let mut i = at + 4;
                while i < end {
                    i = (i + 4).checked_add(len(i)?)?;
                    i = (i + 4).checked_add(len(i)?)?;
                }
                (i <= body.len()).then_some(end)
            }),
        }
        .filter(|a| *a <= body.len())
        .map_or(usize::MAX, |a| a);
        if at == usize::MAX {
            return false;
        }
    }
    true
}

/// A record body parsed by the `mcap` crate, once [`fits`] holds.
fn parse(op: u8, body: &[u8]) -> Result<Record<'_>, String> {
    if !fits(op, body) {
        return Err(format!("a record (opcode {op:#04x}) whose strings run past its end"));
    }
    mcap::parse_record(op, body).map_err(|e| format!("a record (opcode {op:#04x}) that does not parse: {e}"))
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

/// Whether `buf` starts like an MCAP file.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// What the first pass gathers: the start time of each block (a chunk, or a message outside
/// chunks) in file order, `None` for a chunk that announces no messages; the schemas and
/// channels outside chunks (a summary repeats them all); and the chunk indexes' channels by chunk
/// offset. Ends where the file cannot be read on.
#[derive(Default)]
struct FirstPass {
    starts: Vec<Option<u64>>,
    schemas: Vec<Schema>,
    channels: Vec<Channel>,
    chunk_index: HashMap<u64, HashSet<u16>>,
}

fn first_pass(buf: &[u8]) -> FirstPass {
    let mut out = FirstPass::default();
    let mut records = Records::new(buf);
    while let Some(Ok((_, op, body))) = records.next() {
        match parse(op, body) {
            Ok(Record::Chunk { header, .. }) => {
                let empty = header.message_start_time == 0 && header.message_end_time == 0;
                out.starts.push((!empty).then_some(header.message_start_time));
            }
            Ok(Record::Message { header, .. }) => out.starts.push(Some(header.log_time)),
            Ok(Record::Schema { header, data }) => out.schemas.push(Schema {
                id: header.id,
                name: header.name,
                encoding: header.encoding,
                data: data.into_owned(),
            }),
            Ok(Record::Channel(c)) => out.channels.push(Channel {
                id: c.id,
                schema_id: c.schema_id,
                topic: c.topic,
                message_encoding: c.message_encoding,
                metadata: c.metadata,
            }),
            Ok(Record::ChunkIndex(c)) => {
                out.chunk_index.insert(c.chunk_start_offset, c.message_index_offsets.keys().copied().collect());
            }
            Err(_) if op == mcap::records::op::CHUNK || op == mcap::records::op::MESSAGE => out.starts.push(None),
            _ => {}
        }
    }
    out
}

/// When the blocks of a file (chunks, and messages outside chunks) start, as their headers say:
/// what [`read`] orders messages by. From a first pass over the top-level records that
/// decompresses nothing.
#[derive(Clone, Debug)]
pub struct Blocks {
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
}

impl Blocks {
    pub fn new(buf: &[u8]) -> Blocks {
        let first = first_pass(buf);
        let starts = first.starts;
        let mut later: Vec<u64> = vec![u64::MAX; starts.len() + 1];
        for i in (0..starts.len()).rev() {
            later[i] = later[i + 1].min(starts[i].unwrap_or(u64::MAX));
        }
        let last = |v: Vec<(u16, usize)>| -> Vec<usize> {
            let by_id: BTreeMap<u16, usize> = v.into_iter().collect();
            by_id.into_values().collect()
        };
        let keep_s = last(first.schemas.iter().enumerate().map(|(i, x)| (x.id, i)).collect());
        let keep_c = last(first.channels.iter().enumerate().map(|(i, x)| (x.id, i)).collect());
        Blocks {
            start: later.first().copied().filter(|t| *t != u64::MAX),
            later,
            schemas: keep_s.into_iter().map(|i| first.schemas[i].clone()).collect(),
            channels: keep_c.into_iter().map(|i| first.channels[i].clone()).collect(),
            chunk_index: first.chunk_index,
        }
    }
}

/// Reads the file's records and hands them to `each`: the header, schemas and channels as they
/// come, messages of `want` in log-time order (each after its channel), metadata, and the
/// chunks skipped. `budget` bounds the decompressed size of one chunk. Stops at the first
/// error `each` returns; a file that cannot be read on ends with its [`ReadError`], after
/// every complete message.
pub fn read<'a, E>(
    buf: &'a [u8],
    blocks: &Blocks,
    budget: u64,
    want: &Want<'_>,
    mut each: impl FnMut(Event<'_, 'a>) -> Result<(), E>,
) -> Result<Result<Stats, (Stats, ReadError)>, E> {
    let mut stats = Stats { start: blocks.start, ..Stats::default() };
    let later = &blocks.later;
    let chunk_index = (!blocks.chunk_index.is_empty()).then_some(&blocks.chunk_index);
    stats.summary = chunk_index.is_some();
    let mut schemas: HashMap<u16, Schema> = HashMap::new();
    let mut channels: HashMap<u16, Channel> = HashMap::new();
    let mut heap: BinaryHeap<Reverse<Pending<'a>>> = BinaryHeap::new();
    let mut last_out = 0u64;
    let mut index = 0u64;
    let mut block = 0usize;
    let mut records = Records::new(buf);

    // Hands on the pending messages no later block can precede.
    macro_rules! release {
        ($upto:expr) => {
            while heap.peek().is_some_and(|p| p.0 .0.log_time <= $upto) {
                let Reverse(Pending(m)) = heap.pop().expect("peeked");
                if m.log_time < last_out {
                    stats.out_of_order += 1;
                }
                last_out = last_out.max(m.log_time);
                stats.messages += 1;
                each(Event::Message(&m))?;
            }
        };
    }

    let end = loop {
        let (offset, op, body) = match records.next() {
            None => break None,
            Some(Ok(r)) => r,
            Some(Err(e)) => break Some(e),
        };
        let record = match parse(op, body) {
            Ok(r) => r,
            Err(why) => {
                each(Event::Skipped { offset, why })?;
                continue;
            }
        };
        let mut inner: Vec<Record<'_>> = Vec::new();
        let is_block = matches!(record, Record::Chunk { .. } | Record::Message { .. });
        match record {
            Record::Header(h) => each(Event::Header { profile: h.profile, library: h.library })?,
            Record::Footer(_) => stats.footer = buf.ends_with(MAGIC),
            Record::Chunk { header, .. } => {
                stats.chunks += 1;
                if !stats.compressions.contains(&header.compression) {
                    stats.compressions.push(header.compression.clone());
                }
                let span = (header.message_start_time, header.message_end_time);
                let misses_time = want.time.is_some_and(|(a, z)| span.1 < a || span.0 > z);
                let misses_channels = match (&chunk_index, want.channels) {
                    (Some(idx), Some(w)) => idx.get(&offset).is_some_and(|held| held.is_disjoint(w)),
                    _ => false,
                };
                if chunk_index.is_some() && (misses_time || misses_channels) {
                    stats.chunks_unread += 1;
                } else if header.uncompressed_size > budget {
                    each(Event::Skipped {
                        offset,
                        why: format!(
                            "a chunk that declares {} bytes decompressed, more than the chunk budget of {budget} bytes; skipped",
                            header.uncompressed_size
                        ),
                    })?;
                } else {
                    // The chunk record whole (opcode, length, body), read as a file of one record.
                    let whole = &buf[offset as usize..offset as usize + 9 + body.len()];
                    match chunk_records(whole, &header.compression, budget) {
                        Ok(rs) => inner = rs,
                        Err(why) => each(Event::Skipped { offset, why })?,
                    }
                }
            }
            Record::Metadata(m) => each(Event::Metadata { name: m.name, metadata: m.metadata })?,
            other => inner.push(other),
        }
        for r in inner {
            match r {
                Record::Schema { header, data } => {
                    let s =
                        Schema { id: header.id, name: header.name, encoding: header.encoding, data: data.into_owned() };
                    if schemas.get(&s.id) != Some(&s) {
                        each(Event::Schema(&s))?;
                        schemas.insert(s.id, s);
                    }
                }
                Record::Channel(c) => {
                    let c = Channel {
                        id: c.id,
                        schema_id: c.schema_id,
                        topic: c.topic,
                        message_encoding: c.message_encoding,
                        metadata: c.metadata,
                    };
                    if channels.get(&c.id) != Some(&c) {
                        each(Event::Channel(&c))?;
                        channels.insert(c.id, c);
                    }
                }
                Record::Message { header, data } => {
                    let i = index;
                    index += 1;
                    // The channels wanted only skip whole chunks (by the summary's index): the
                    // caller picks the messages of a chunk it reads by their topic, which a
                    // channel the summary does not list may share.
                    if !want.time(header.log_time) {
                        continue;
                    }
                    heap.push(Reverse(Pending(Message {
                        channel: header.channel_id,
                        sequence: header.sequence,
                        log_time: header.log_time,
                        publish_time: header.publish_time,
                        data: match data {
                            Cow::Borrowed(_) if op == mcap::records::op::MESSAGE => {
                                // Lent from the file: the message record's own bytes.
                                Cow::Borrowed(&body[body.len() - data.len()..])
                            }
                            d => Cow::Owned(d.into_owned()),
                        },
                        offset,
                        index: i,
                        file: 0,
                    })));
                }
                _ => {}
            }
        }
        if is_block {
            block += 1;
            release!(later.get(block).copied().unwrap_or(u64::MAX));
        }
    };
    release!(u64::MAX);
    Ok(match end {
        None => Ok(stats),
        Some(e) => Err((stats, e)),
    })
}

/// The records of a chunk (its record whole: opcode, length and body), decompressed and
/// CRC-checked when it has a CRC, each record inside no longer than `budget` (a length read
/// from the chunk never drives a larger allocation; the caller bounded the size the chunk
/// declares).
fn chunk_records(whole: &[u8], compression: &str, budget: u64) -> Result<Vec<Record<'static>>, String> {
    let what =
        if compression.is_empty() { "an uncompressed chunk".to_string() } else { format!("a {compression} chunk") };
    let records = chunk_data(whole, &what, budget)?;
    let options = LinearReaderOptions::default()
        .with_skip_start_magic(true)
        .with_skip_end_magic(true)
        // A chunk inside a chunk comes out as a record (refused below), never through the
        // crate's decompressor, which can loop forever on a damaged one.
        .with_emit_chunks(true)
        .with_record_length_limit(usize::try_from(budget).unwrap_or(usize::MAX));
    let mut reader = LinearReader::new_with_options(options);
    let mut fed = 0usize;
    let mut out = Vec::new();
    let fail = |e: mcap::McapError| match e {
        mcap::McapError::UnsupportedCompression(c) => format!("a chunk of unknown compression `{c}`; skipped"),
        other => format!("{what} that does not read whole: {other}; its messages are skipped"),
    };
    while let Some(event) = reader.next_event() {
        match event {
            Ok(LinearReadEvent::ReadRequest(n)) => {
                let n = n.min(records.len() - fed);
                reader.insert(n).copy_from_slice(&records[fed..fed + n]);
                reader.notify_read(n);
                fed += n;
            }
            Ok(LinearReadEvent::Record { opcode: mcap::records::op::CHUNK, .. }) => {
                return Err(format!("{what} holding a chunk (chunks hold schemas, channels and messages only); its messages are skipped"));
            }
            Ok(LinearReadEvent::Record { data, opcode }) => {
                let r = parse(opcode, data).map_err(|why| format!("{what} holding {why}; its messages are skipped"))?;
                out.push(r.into_owned());
            }
            Err(e) => return Err(fail(e)),
        }
    }
    Ok(out)
}

/// A chunk's records, decompressed here rather than by the `mcap` crate, whose streaming
/// decompressor loops forever on a zstd frame that ends before the size the chunk declares: the
/// output is bounded by that size (which the caller held to the budget), a frame that ends early
/// or runs past it is an error, and the CRC of the records is checked when the chunk has one.
fn chunk_data<'a>(whole: &'a [u8], what: &str, budget: u64) -> Result<std::borrow::Cow<'a, [u8]>, String> {
    use std::borrow::Cow;
    use std::io::Read;
    let body = whole.get(9..).ok_or_else(|| format!("{what} cut short"))?;
    let (header, data) = match parse(mcap::records::op::CHUNK, body) {
        Ok(Record::Chunk { header, data }) => (header, data),
        Ok(_) => return Err(format!("{what} that is not a chunk")),
        Err(why) => return Err(format!("{what} holding {why}; its messages are skipped")),
    };
    let size = header.uncompressed_size;
    if size > budget {
        return Err(format!(
            "{what} that declares {size} bytes decompressed, more than the chunk budget of {budget} bytes; skipped"
        ));
    }
    let size = usize::try_from(size).map_err(|_| format!("{what} too large for this machine"))?;
    let bad = |e: &dyn std::fmt::Display| format!("{what} that does not read whole: {e}; its messages are skipped");
    let out: Cow<'a, [u8]> = match header.compression.as_str() {
        "" => data,
        "zstd" => Cow::Owned(zstd::bulk::decompress(&data, size).map_err(|e| bad(&e))?),
        "lz4" => {
            let mut out = Vec::with_capacity(size);
            let limit = u64::try_from(size).unwrap_or(u64::MAX).saturating_add(1);
            lz4_flex::frame::FrameDecoder::new(&data[..]).take(limit).read_to_end(&mut out).map_err(|e| bad(&e))?;
            Cow::Owned(out)
        }
        other => return Err(format!("a chunk of unknown compression `{other}`; skipped")),
    };
    if out.len() != size {
        return Err(bad(&format_args!("{} bytes decompressed where the chunk declares {size}", out.len())));
    }
    if header.uncompressed_crc != 0 {
        let crc = crc32fast::hash(&out);
        if crc != header.uncompressed_crc {
            return Err(bad(&format_args!("its CRC is {crc:#010x}, the chunk says {:#010x}", header.uncompressed_crc)));
        }
    }
    Ok(out)
}
