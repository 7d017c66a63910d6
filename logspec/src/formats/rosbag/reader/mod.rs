//! Opening a bag (from its index, or by a linear scan when it has none or it is unusable) and
//! walking its messages in time or file order, a chunk at a time.
//!
//! This file opens the bag: the record walk over the file, the index section and the linear
//! scan. `messages` walks the messages of the chunks ([`Bag::for_each_message`]), and
//! `in_order` checks a chunk's index data for messages stored in time order ([`Bag::in_order`]).

mod in_order;
mod messages;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom};

use super::chunk::{Compression, RawChunk, DEFAULT_CHUNK_BUDGET};
use super::record::{self, Ctx, Fields, Records};
use super::{BagError, Time, MAGIC};
use in_order::IndexCheck;
pub use messages::{Message, Order};

/// One connection: a topic published with one type (and, for `rosbag record`, one publisher).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub id: u32,
    pub topic: String,
    /// `pkg/Type`.
    pub ty: String,
    pub md5sum: String,
    pub message_definition: String,
    pub callerid: Option<String>,
    pub latching: Option<String>,
    /// File offset of the record it was read from.
    pub offset: u64,
}

/// A chunk: where it is, its time span and how many messages of each connection it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// File offset of the chunk record.
    pub pos: u64,
    pub start: Time,
    pub end: Time,
    /// Messages per connection id.
    pub counts: BTreeMap<u32, u32>,
    pub compression: Compression,
    /// Uncompressed and stored sizes.
    pub size: u32,
    pub stored: u64,
    /// File offset of the chunk's stored data (after its record header).
    pub data_pos: u64,
    /// Whether the chunk's messages are stored in time order (record time, ties by connection
    /// id), so that time order reads them in one walk (which checks it as it goes). For a
    /// scanned bag, what its records showed; for an indexed bag, `None` until [`Bag::in_order`]
    /// (or time order) reads the index data records after the chunk.
    pub in_order: Option<bool>,
}

/// Where a linear scan stopped before the end of the file, and why: [`Bag::stop`], and the
/// error [`Bag::for_each_message`] returns after every message of the complete chunks before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    pub error: BagError,
    /// Whether the file ends inside a record (a truncated bag), rather than holding a bad one.
    pub truncated: bool,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.truncated { "the file is truncated" } else { "a bad record" };
        write!(f, "{what}: {}", self.error)
    }
}

impl std::error::Error for Stop {}

/// A caller whose errors are [`BagError`]s sees a stop as its error.
impl From<Stop> for BagError {
    fn from(stop: Stop) -> Self {
        stop.error
    }
}

/// What a bag is read from: any `Read + Seek`. A source that holds the whole file in memory (a
/// [`std::io::Cursor`] over bytes, or over a memory map) also lends it, so that uncompressed
/// chunks are read in place instead of being copied into a buffer first.
pub trait Source: Read + Seek {
    /// The whole file, when the source holds it in memory.
    fn lend(&self) -> Option<&[u8]> {
        None
    }
    /// A walk is about to read the lent bytes from offset `at` on (a chunk's data): a source
    /// over a memory map moves its window along, dropping the pages behind. The default does
    /// nothing.
    fn moved(&self, _at: u64) {}
}

impl Source for std::fs::File {}

impl<R: Read + Seek> Source for std::io::BufReader<R> {}

impl<T: AsRef<[u8]>> Source for std::io::Cursor<T> {
    fn lend(&self) -> Option<&[u8]> {
        Some(self.get_ref().as_ref())
    }
}

impl<S: Source + ?Sized> Source for &mut S {
    fn lend(&self) -> Option<&[u8]> {
        (**self).lend()
    }
    fn moved(&self, at: u64) {
        (**self).moved(at);
    }
}

impl<S: Source + ?Sized> Source for Box<S> {
    fn lend(&self) -> Option<&[u8]> {
        (**self).lend()
    }
    fn moved(&self, at: u64) {
        (**self).moved(at);
    }
}

/// An open bag: its header facts, connections and chunks. Holds no message data.
pub struct Bag<R> {
    src: R,
    pub len: u64,
    pub index_pos: u64,
    pub conn_count: u32,
    pub chunk_count: u32,
    /// `encryptor` of the bag header, if any (encrypted bags are not decoded).
    pub encryptor: Option<String>,
    pub connections: BTreeMap<u32, Connection>,
    /// In file order.
    pub chunks: Vec<ChunkInfo>,
    /// Whether the connections and chunks come from the index (rather than a scan).
    pub indexed: bool,
    /// Why the index was not used, when the bag has one.
    pub index_problem: Option<BagError>,
    /// Where the scan stopped, for a bag read by scanning.
    pub stop: Option<Stop>,
    /// Chunk info records of the index that name a chunk an earlier one already named: each
    /// chunk is listed (and read) once.
    pub duplicate_chunk_refs: u32,
    /// The buffers of [`Bag::in_order`]'s check, kept from one chunk to the next.
    index_check: IndexCheck,
    /// The most decompressed chunk data held at once, in bytes ([`Bag::open_with`]).
    pub chunk_budget: u64,
    /// Chunks the scan refused (over the chunk budget, or data that does not decompress): it
    /// went on with the record after each.
    pub refused: Refused,
    /// What the last walk in time order could not merge within its window
    /// ([`Bag::for_each_message`]).
    pub unmerged: Option<Unmerged>,
    /// The threads a walk may use ([`crate::log::threads`] when the bag is opened): 1 keeps it
    /// on the calling thread. With more, compressed chunks are decompressed on worker threads
    /// ([`Bag::for_each_message`]).
    pub threads: usize,
}

/// Chunks refused (over the chunk budget, or data that does not decompress), each skipped:
/// the first few errors in full, and how many in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refused {
    pub first: Vec<BagError>,
    pub count: u64,
}

impl Refused {
    /// How many refusals are kept in full.
    const KEPT: usize = 4;

    pub fn add(&mut self, e: BagError) {
        if self.first.len() < Self::KEPT {
            self.first.push(e);
        }
        self.count += 1;
    }

    /// One error that says it all: the first refusal, and how many more there were.
    pub fn error(&self) -> Option<BagError> {
        let first = self.first.first()?;
        let mut e = first.clone();
        if self.count > 1 {
            let more: Vec<String> = self.first[1..].iter().map(|e| e.offset.to_string()).collect();
            let more = if more.is_empty() { String::new() } else { format!(" (at bytes {}", more.join(", ")) };
            let close = if more.is_empty() {
                ""
            } else if self.count as usize > self.first.len() {
                ", ...)"
            } else {
                ")"
            };
            e.message.push_str(&format!(
                "; {} more chunk(s) refused{more}{close}; every message of the other chunks was read",
                self.count - 1
            ));
        } else {
            e.message.push_str("; every message of the other chunks was read");
        }
        Some(e)
    }
}

/// Chunks that overlap in time but hold together more than the merge window
/// ([`Bag::merge_window`]): a walk in time order hands out their messages chunk by chunk (each
/// chunk in time order, the chunks by start time) instead of merging them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmerged {
    /// How many such runs of overlapping chunks, and chunks in them.
    pub runs: u64,
    pub chunks: u64,
    /// The first run: its first chunk's offset, its chunks and their uncompressed bytes.
    pub first_pos: u64,
    pub first_chunks: u64,
    pub first_bytes: u64,
    /// The window they exceeded.
    pub window: u64,
}

impl std::fmt::Display for Unmerged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::chunk::mib;
        write!(
            f,
            "{} chunk(s) in {} run(s) overlap in time but hold more than the merge window of {} (the first run: {} \
             chunks from byte {}, {}): their messages are given chunk by chunk, each chunk in time order, not merged; \
             raise the chunk budget (the window is an eighth of it: `--chunk-budget MIB`, Python \
             `chunk_budget=MIB`) to merge them",
            self.chunks,
            self.runs,
            mib(self.window),
            self.first_chunks,
            self.first_pos,
            mib(self.first_bytes)
        )
    }
}

/// The largest record header accepted (connection headers hold a topic and little else; the
/// definition is in the data).
const MAX_HEADER: usize = 1 << 20;

impl<R: Source> Bag<R> {
    /// Opens a bag: from its index when it has a usable one, otherwise by scanning every record;
    /// with the default chunk budget ([`DEFAULT_CHUNK_BUDGET`]).
    pub fn open(src: R) -> Result<Self, BagError> {
        Self::open_with(src, DEFAULT_CHUNK_BUDGET)
    }

    /// Opens a bag (as [`Bag::open`]) that holds at most `chunk_budget` bytes of decompressed
    /// chunk data at once: a chunk that declares more is refused (the scan and the walks go on
    /// with the next one), the decompression pipeline reads ahead within it, and chunks that
    /// overlap in time are merged when they hold at most an eighth of it ([`Bag::merge_window`]).
    pub fn open_with(mut src: R, chunk_budget: u64) -> Result<Self, BagError> {
        let len = src.seek(SeekFrom::End(0)).map_err(|e| BagError::io(0, &e))?;
        src.seek(SeekFrom::Start(0)).map_err(|e| BagError::io(0, &e))?;
        let mut magic = [0u8; 13];
        let got = read_up_to(&mut src, &mut magic).map_err(|e| BagError::io(0, &e))?;
        if magic[..got] != MAGIC[..] {
            let found = String::from_utf8_lossy(&magic[..got]);
            let hint =
                if magic[..got].starts_with(super::MAGIC_PREFIX) { " (only bag format 2.0 is supported)" } else { "" };
            return Err(BagError::at(0, format!("expected the line \"#ROSBAG V2.0\", found {found:?}{hint}")));
        }
        let mut bag = Bag {
            src,
            len,
            index_pos: 0,
            conn_count: 0,
            chunk_count: 0,
            encryptor: None,
            connections: BTreeMap::new(),
            chunks: Vec::new(),
            indexed: false,
            index_problem: None,
            stop: None,
            duplicate_chunk_refs: 0,
            index_check: IndexCheck::default(),
            chunk_budget,
            refused: Refused::default(),
            unmerged: None,
            threads: crate::log::threads(),
        };
        let (op, header, data_end) = bag.read_record_header(13)?;
        let ctx = Ctx { offset: 13, op: Some(op), chunk: None };
        if op != record::OP_BAG_HEADER {
            return Err(ctx.err("expected the bag header record (op 0x03) first"));
        }
        let header = header.borrow();
        bag.index_pos = header.u64("index_pos", &ctx)?;
        bag.conn_count = header.u32("conn_count", &ctx)?;
        bag.chunk_count = header.u32("chunk_count", &ctx)?;
        bag.encryptor = header.text("encryptor").filter(|e| !e.is_empty());
        if let Some(e) = &bag.encryptor {
            return Err(ctx.err(format!("the bag is encrypted ({e}); encrypted bags are not supported")));
        }
        if bag.index_pos != 0 {
            match bag.read_index() {
                Ok(()) => {
                    bag.indexed = true;
                    return Ok(bag);
                }
                Err(e) => {
                    bag.connections.clear();
                    bag.chunks.clear();
                    bag.index_problem = Some(e);
                }
            }
        }
        bag.scan(data_end)?;
        Ok(bag)
    }

    /// Reads a record's length-checked header at `at`; returns its op, fields and the offset of
    /// the end of its data. The header bytes are leaked into the fields' lifetime by copying.
    fn read_record_header(&mut self, at: u64) -> Result<(u8, OwnedFields, u64), BagError> {
        let (header, data_len) = self.read_lengths(at)?;
        let fields = OwnedFields::parse(header, at + 4)?;
        let ctx = Ctx { offset: at, op: None, chunk: None };
        let op = fields.borrow().op(&ctx)?;
        let data_at = at + 4 + fields.bytes.len() as u64 + 4;
        Ok((op, fields, data_at + u64::from(data_len)))
    }

    /// The header bytes and the data length of the record at `at`, checked against the file size.
    fn read_lengths(&mut self, at: u64) -> Result<(Vec<u8>, u32), BagError> {
        let ctx = Ctx { offset: at, op: None, chunk: None };
        let left = self.len.saturating_sub(at);
        let header_len = u64::from(self.u32_at(at)?);
        if header_len > left.saturating_sub(4) {
            return Err(ctx.err(format!(
                "record header of {header_len} bytes runs past the end of the file ({} bytes left)",
                left.saturating_sub(4)
            )));
        }
        if header_len as usize > MAX_HEADER {
            return Err(ctx.err(format!("record header of {header_len} bytes exceeds the limit of {MAX_HEADER}")));
        }
        let mut header = vec![0u8; header_len as usize];
        self.src.read_exact(&mut header).map_err(|e| BagError::io(at, &e))?;
        let data_len = self.u32_at(at + 4 + header_len)?;
        let data_left = left - 4 - header_len - 4;
        if u64::from(data_len) > data_left {
            return Err(ctx.err(format!(
                "record data of {data_len} bytes runs past the end of the file ({data_left} bytes left)"
            )));
        }
        Ok((header, data_len))
    }

    fn u32_at(&mut self, at: u64) -> Result<u32, BagError> {
        let ctx = Ctx { offset: at, op: None, chunk: None };
        if self.len.saturating_sub(at) < 4 {
            return Err(
                ctx.err(format!("expected a 4-byte length, the file ends {} bytes later", self.len.saturating_sub(at)))
            );
        }
        self.src.seek(SeekFrom::Start(at)).map_err(|e| BagError::io(at, &e))?;
        let mut b = [0u8; 4];
        self.src.read_exact(&mut b).map_err(|e| BagError::io(at, &e))?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads `len` bytes at the current position (data of a record just read).
    fn read_data(&mut self, at: u64, len: usize) -> Result<Vec<u8>, BagError> {
        let mut data = vec![0u8; len];
        self.src.read_exact(&mut data).map_err(|e| BagError::io(at, &e))?;
        Ok(data)
    }

    /// Reads a whole record at `at` (header fields, data) and returns the next record's offset.
    fn read_record(&mut self, at: u64) -> Result<(u8, OwnedFields, Vec<u8>, u64), BagError> {
        let (op, fields, end) = self.read_record_header(at)?;
        let data_at = at + 8 + fields.bytes.len() as u64;
        let data = self.read_data(data_at, (end - data_at) as usize)?;
        Ok((op, fields, data, end))
    }

    /// Connections and chunk infos from the index section, and each chunk's header.
    fn read_index(&mut self) -> Result<(), BagError> {
        let mut at = self.index_pos;
        for _ in 0..self.conn_count {
            let (op, fields, data, next) = self.read_record(at)?;
            let ctx = Ctx { offset: at, op: Some(op), chunk: None };
            if op != record::OP_CONNECTION {
                return Err(ctx.err(format!("expected a connection record (op 0x07) in the index, found op {op:#04x}")));
            }
            let c = connection(&fields.borrow(), &data, &ctx)?;
            self.connections.insert(c.id, c);
            at = next;
        }
        let mut seen = BTreeSet::new();
        for _ in 0..self.chunk_count {
            let (op, fields, data, next) = self.read_record(at)?;
            let ctx = Ctx { offset: at, op: Some(op), chunk: None };
            if op != record::OP_CHUNK_INFO {
                return Err(ctx.err(format!("expected a chunk info record (op 0x06) in the index, found op {op:#04x}")));
            }
            let f = fields.borrow();
            let pos = f.u64("chunk_pos", &ctx)?;
            let start = f.time("start_time", &ctx)?;
            let end = f.time("end_time", &ctx)?;
            let count = f.u32("count", &ctx)? as usize;
            if data.len() != count * 8 {
                return Err(ctx.err(format!("expected {count} x 8 bytes of connection counts, found {}", data.len())));
            }
            let counts = data
                .chunks_exact(8)
                .map(|c| {
                    (u32::from_le_bytes(c[..4].try_into().unwrap()), u32::from_le_bytes(c[4..].try_into().unwrap()))
                })
                .collect();
            if !seen.insert(pos) {
                // A hostile (or broken) index may name one chunk many times; reading it once per
                // reference would cost time and, in time order, memory per reference.
                self.duplicate_chunk_refs += 1;
                at = next;
                continue;
            }
            let (compression, size, stored, data_pos) = self.chunk_header(pos)?;
            let in_order = None;
            self.chunks.push(ChunkInfo { pos, start, end, counts, compression, size, stored, data_pos, in_order });
            at = next;
        }
        self.chunks.sort_by_key(|c| c.pos);
        Ok(())
    }

    /// The compression, uncompressed size, stored size and data offset of the chunk record at
    /// `pos`.
    fn chunk_header(&mut self, pos: u64) -> Result<(Compression, u32, u64, u64), BagError> {
        let (op, fields, end) = self.read_record_header(pos)?;
        let ctx = Ctx { offset: pos, op: Some(op), chunk: None };
        if op != record::OP_CHUNK {
            return Err(ctx.err(format!("expected a chunk record (op 0x05), found op {op:#04x}")));
        }
        let f = fields.borrow();
        let c = f.need("compression", &ctx)?;
        let compression = Compression::parse(c).ok_or_else(|| {
            ctx.err(format!("unknown compression {:?} (expected none, bz2 or lz4)", String::from_utf8_lossy(c)))
        })?;
        let size = f.u32("size", &ctx)?;
        let data_pos = pos + 8 + fields.bytes.len() as u64;
        Ok((compression, size, end - data_pos, data_pos))
    }

    /// The uncompressed records of one chunk, decompressed on this thread.
    pub fn chunk_records(&mut self, info: &ChunkInfo) -> Result<Vec<u8>, BagError> {
        Ok(self.raw_chunk(info)?.decompress(self.chunk_budget)?.into_owned())
    }

    /// The most decompressed chunk data a walk in time order merges at once: an eighth of the
    /// chunk budget (32 MiB by default). Merging takes the chunks and an entry per message
    /// (about as many bytes again, for the smallest messages), and the pipeline reads ahead
    /// within the budget besides.
    pub fn merge_window(&self) -> u64 {
        self.chunk_budget / 8
    }

    /// Reads the stored bytes of a chunk (none for a chunk over the chunk budget, which
    /// [`RawChunk::decompress`] refuses by its size alone).
    fn raw_chunk(&mut self, info: &ChunkInfo) -> Result<RawChunk<'static>, BagError> {
        if u64::from(info.size) > self.chunk_budget {
            return Ok(RawChunk {
                pos: info.pos,
                compression: info.compression,
                size: info.size,
                data: Cow::Owned(Vec::new()),
            });
        }
        let (header, data_len) = self.read_lengths(info.pos)?;
        let data = self.read_data(info.pos + 8 + header.len() as u64, data_len as usize)?;
        Ok(RawChunk { pos: info.pos, compression: info.compression, size: info.size, data: Cow::Owned(data) })
    }

    /// A linear scan from `at` (`rosbag reindex`): every chunk is decompressed to learn its
    /// connections, times and counts; connection records outside chunks are taken too. Stops at
    /// the first record that is incomplete or bad and records why.
    fn scan(&mut self, mut at: u64) -> Result<(), BagError> {
        while at < self.len {
            let step = self.scan_record(at);
            match step {
                Ok(next) => at = next,
                Err(error) => {
                    let truncated = self.past_eof(at);
                    self.stop = Some(Stop { error, truncated });
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether the record at `at` claims more bytes than the file has left.
    fn past_eof(&mut self, at: u64) -> bool {
        let Ok(header_len) = self.u32_at(at) else { return true };
        let data_len_at = at + 4 + u64::from(header_len);
        match self.u32_at(data_len_at) {
            Ok(data_len) => data_len_at + 4 + u64::from(data_len) > self.len,
            Err(_) => true,
        }
    }

    fn scan_record(&mut self, at: u64) -> Result<u64, BagError> {
        let (op, fields, end) = self.read_record_header(at)?;
        let ctx = Ctx { offset: at, op: Some(op), chunk: None };
        match op {
            record::OP_CHUNK => {
                let (compression, size, stored, data_pos) = self.chunk_header(at)?;
                let mut info = ChunkInfo {
                    pos: at,
                    start: Time::default(),
                    end: Time::default(),
                    counts: BTreeMap::new(),
                    compression,
                    size,
                    stored,
                    data_pos,
                    in_order: Some(true),
                };
                // A chunk over the budget, or whose data does not decompress, is refused and
                // listed without messages; the scan goes on with the next record.
                let bytes = match self.raw_chunk(&info)?.decompress(self.chunk_budget) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        self.refused.add(e);
                        self.chunks.push(info);
                        return Ok(end);
                    }
                };
                let mut times: Option<(Time, Time)> = None;
                let mut last: Option<(Time, u32)> = None;
                let mut walk = || -> Result<(), BagError> {
                    for r in Records::new(&bytes, at) {
                        let r = r?;
                        let rctx = Ctx { offset: at, op: None, chunk: Some((at, r.offset)) };
                        let f = Fields::parse(r.header, at)?;
                        let rop = f.op(&rctx)?;
                        let rctx = Ctx { op: Some(rop), ..rctx };
                        match rop {
                            record::OP_CONNECTION => {
                                let c = connection(&f, r.data, &rctx)?;
                                self.connections.entry(c.id).or_insert(c);
                            }
                            record::OP_MESSAGE => {
                                let (conn, t) = (f.u32("conn", &rctx)?, f.time("time", &rctx)?);
                                *info.counts.entry(conn).or_default() += 1;
                                times = Some(times.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
                                if last.is_some_and(|k| k > (t, conn)) {
                                    info.in_order = Some(false);
                                }
                                last = Some((t, conn));
                            }
                            _ => {}
                        }
                    }
                    Ok(())
                };
                // The messages before a bad record inside a chunk are kept: the chunk is listed
                // with what was read, and reading it again stops at the same record.
                let walked = walk();
                if let Some((a, b)) = times {
                    (info.start, info.end) = (a, b);
                }
                self.chunks.push(info);
                walked?;
            }
            record::OP_CONNECTION => {
                let (_, f, data, _) = self.read_record(at)?;
                let c = connection(&f.borrow(), &data, &ctx)?;
                self.connections.entry(c.id).or_insert(c);
            }
            record::OP_MESSAGE => {
                return Err(ctx.err("a message record outside any chunk (a chunk header that was never written?)"));
            }
            _ => {}
        }
        let _ = fields;
        Ok(end)
    }
}

/// A connection record: `conn` and `topic` in the header, the connection header in the data.
fn connection(header: &Fields<'_>, data: &[u8], ctx: &Ctx) -> Result<Connection, BagError> {
    let id = header.u32("conn", ctx)?;
    let d = Fields::parse(data, ctx.offset)?;
    let text = |n: &str| d.text(n);
    Ok(Connection {
        id,
        topic: header.text("topic").or_else(|| text("topic")).unwrap_or_default(),
        ty: text("type").ok_or_else(|| ctx.err(format!("connection {id}: missing `type`")))?,
        md5sum: text("md5sum").ok_or_else(|| ctx.err(format!("connection {id}: missing `md5sum`")))?,
        message_definition: text("message_definition").unwrap_or_default(),
        callerid: text("callerid"),
        latching: text("latching"),
        offset: ctx.offset,
    })
}

/// Header bytes with their parsed fields (which borrow them).
struct OwnedFields {
    bytes: Vec<u8>,
    at: u64,
}

impl OwnedFields {
    fn parse(bytes: Vec<u8>, at: u64) -> Result<Self, BagError> {
        Fields::parse(&bytes, at)?;
        Ok(OwnedFields { bytes, at })
    }

    fn borrow(&self) -> Fields<'_> {
        Fields::parse(&self.bytes, self.at).expect("checked when built")
    }
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
