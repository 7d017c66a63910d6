//! Opening a bag (from its index, or by a linear scan when it has none or it is unusable) and
//! walking its messages in time or file order, a chunk at a time.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom};

use super::chunk::{pipeline, Compression, RawChunk};
use super::record::{self, Ctx, Fields, Records};
use super::{BagError, Time, MAGIC};

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

/// The order of [`Bag::for_each_message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// By record time, ties by connection id, then file position (an index-merged read).
    Time,
    /// As stored.
    File,
}

/// One message: its connection, record time and serialized bytes.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    pub conn: u32,
    pub time: Time,
    pub data: &'a [u8],
    /// File offset of its chunk, and its record's offset inside the uncompressed chunk.
    pub chunk_pos: u64,
    pub offset: usize,
}

/// What a bag is read from: any `Read + Seek`. A source that holds the whole file in memory (a
/// [`std::io::Cursor`] over bytes, or over a memory map) also lends it, so that uncompressed
/// chunks are read in place instead of being copied into a buffer first.
pub trait Source: Read + Seek {
    /// The whole file, when the source holds it in memory.
    fn lend(&self) -> Option<&[u8]> {
        None
    }
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
}

impl<S: Source + ?Sized> Source for Box<S> {
    fn lend(&self) -> Option<&[u8]> {
        (**self).lend()
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
}

/// The largest record header accepted (connection headers hold a topic and little else; the
/// definition is in the data).
const MAX_HEADER: usize = 1 << 20;

impl<R: Source> Bag<R> {
    /// Opens a bag: from its index when it has a usable one, otherwise by scanning every record.
    pub fn open(mut src: R) -> Result<Self, BagError> {
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

    /// Whether chunk `i` of [`Bag::chunks`] stores its messages in time order (see
    /// [`ChunkInfo::in_order`]). For an indexed bag this reads the index data records after the
    /// chunk once: one per connection of its chunk info, each `count` x (time, offset), which
    /// must match the chunk info (connections and counts, times inside its span, offsets inside
    /// the chunk and rising); merged by offset, their (time, connection) must never decrease.
    /// Index data that is missing or does not match gives `false`: the chunk is then sorted from
    /// its records, as without an index.
    pub fn in_order(&mut self, i: usize) -> bool {
        if let Some(known) = self.chunks[i].in_order {
            return known;
        }
        let info = &self.chunks[i];
        let mut check = std::mem::take(&mut self.index_check);
        check.start(info);
        let mut at = info.data_pos + info.stored;
        let n = info.counts.len();
        let walked = (|| -> Result<bool, BagError> {
            if let Some(file) = self.src.lend() {
                let rest = usize::try_from(at).ok().and_then(|a| file.get(a..)).unwrap_or_default();
                let mut lists = Vec::with_capacity(n);
                for r in Records::new(rest, at).take(n) {
                    let r = r?;
                    let Some(conn) = check.add(r.header, r.data) else { return Ok(false) };
                    lists.push((conn, r.data));
                }
                Ok(check.merged_in_order(&lists))
            } else {
                let mut owned = Vec::with_capacity(n);
                for _ in 0..n {
                    let (_, fields, data, next) = self.read_record(at)?;
                    let Some(conn) = check.add(&fields.bytes, &data) else { return Ok(false) };
                    owned.push((conn, data));
                    at = next;
                }
                let lists: Vec<(u32, &[u8])> = owned.iter().map(|(c, d)| (*c, &d[..])).collect();
                Ok(check.merged_in_order(&lists))
            }
        })();
        self.index_check = check;
        let known = walked.unwrap_or(false);
        self.chunks[i].in_order = Some(known);
        known
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
        Ok(self.raw_chunk(info)?.decompress()?.into_owned())
    }

    /// Reads the stored bytes of a chunk.
    fn raw_chunk(&mut self, info: &ChunkInfo) -> Result<RawChunk<'static>, BagError> {
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
                let bytes = self.raw_chunk(&info)?.decompress()?;
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

    /// Calls `f` for every message of the selected connections (all when `conns` is `None`), in
    /// `order`. Chunks holding none of them are not read. Memory: the chunks being decompressed
    /// (a bounded window) and, in time order, one group of chunks whose time spans overlap.
    /// Every message before a fault has been handed to `f` when the fault is returned: a bad
    /// record in a chunk ([`BagError`]), or, for a bag whose scan stopped early (truncated, or at
    /// a bad record: [`Bag::stop`]), that [`Stop`], after every message of the complete chunks
    /// before it, whichever connections were selected.
    pub fn for_each_message<E: From<BagError> + From<Stop>>(
        &mut self,
        order: Order,
        conns: Option<&BTreeSet<u32>>,
        mut f: impl FnMut(Message<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let wanted = |c: &u32| conns.map_or(true, |s| s.contains(c));
        let mut list: Vec<ChunkInfo> = self.chunks.iter().filter(|c| c.counts.keys().any(wanted)).cloned().collect();
        if order == Order::Time {
            list.sort_by_key(|c| (c.start, c.pos));
        }
        // Group ids: in time order, chunks whose spans overlap (or touch) are merged together.
        let mut group_end: Vec<usize> = Vec::with_capacity(list.len());
        let mut i = 0;
        while i < list.len() {
            let mut j = i + 1;
            let mut end = list[i].end;
            while order == Order::Time && j < list.len() && list[j].start <= end {
                end = end.max(list[j].end);
                j += 1;
            }
            group_end.extend(std::iter::repeat(j).take(j - i));
            i = j;
        }
        // A chunk alone in its group is read in one walk when its messages are stored in time
        // order.
        for i in 0..list.len() {
            if order == Order::Time && group_end[i] == i + 1 && (i == 0 || group_end[i - 1] == i) {
                if let Ok(j) = self.chunks.binary_search_by_key(&list[i].pos, |c| c.pos) {
                    list[i].in_order = Some(self.in_order(j));
                }
            }
        }
        let compressed = list.iter().any(|c| c.compression != Compression::None);
        let plan = Plan { list: &list, group_end: &group_end, order, compressed };
        if let Some(file) = self.src.lend() {
            // Uncompressed chunks are read in place; compressed ones are decompressed from the
            // lent bytes.
            plan.run(|i| lent_chunk(file, &list[i]), &wanted, &mut f)?;
        } else {
            let src = &mut *self;
            plan.run(|i| src.raw_chunk(&list[i]), &wanted, &mut f)?;
        }
        match &self.stop {
            Some(stop) => Err(stop.clone().into()),
            None => Ok(()),
        }
    }
}

/// The chunks [`Bag::for_each_message`] reads, in reading order, and where each time-order
/// group ends.
struct Plan<'l> {
    list: &'l [ChunkInfo],
    /// For chunk `i`, the index after the last chunk of its group.
    group_end: &'l [usize],
    order: Order,
    compressed: bool,
}

impl Plan<'_> {
    /// Reads the chunks with `read` through the decompression pipeline and hands their messages
    /// to `f`.
    fn run<'a, E: From<BagError>>(
        &self,
        read: impl FnMut(usize) -> Result<RawChunk<'a>, BagError>,
        wanted: &impl Fn(&u32) -> bool,
        f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut group: Vec<(u64, Cow<'a, [u8]>)> = Vec::new();
        pipeline(
            self.list.len(),
            read,
            |i, bytes| {
                let pos = self.list[i].pos;
                if self.order == Order::File {
                    return emit_file_order(pos, &bytes, wanted, f);
                }
                if group.is_empty() && self.group_end[i] == i + 1 && self.list[i].in_order == Some(true) {
                    // A chunk alone in its group whose messages are stored in time order: one walk.
                    return emit_in_order(pos, &bytes, wanted, f);
                }
                group.push((pos, bytes));
                if self.group_end[i] == i + 1 {
                    let r = emit_time_order(&group, wanted, f);
                    group.clear();
                    r?;
                }
                Ok(())
            },
            self.compressed,
        )
    }
}

/// The stored bytes of a chunk, lent from the whole file.
fn lent_chunk<'a>(file: &'a [u8], info: &ChunkInfo) -> Result<RawChunk<'a>, BagError> {
    let range = usize::try_from(info.data_pos)
        .ok()
        .and_then(|at| Some(at..at.checked_add(usize::try_from(info.stored).ok()?)?));
    let data = range.and_then(|r| file.get(r)).ok_or_else(|| {
        BagError::at(
            info.pos,
            format!(
                "chunk data of {} bytes at byte {} runs past the end of the file ({} bytes)",
                info.stored,
                info.data_pos,
                file.len()
            ),
        )
    })?;
    Ok(RawChunk { pos: info.pos, compression: info.compression, size: info.size, data: Cow::Borrowed(data) })
}

/// Every message of one chunk, as stored.
fn emit_file_order<E: From<BagError>>(
    pos: u64,
    bytes: &[u8],
    wanted: &impl Fn(&u32) -> bool,
    f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
) -> Result<(), E> {
    for r in Records::new(bytes, pos) {
        if let Some(m) = message(r?, pos)? {
            if wanted(&m.conn) {
                f(m)?;
            }
        }
    }
    Ok(())
}

/// Every message of one chunk whose messages are stored in time order (its [`ChunkInfo::in_order`]),
/// as stored, in one walk: what [`emit_time_order`] gives for it. Each message is checked against
/// the one before; should one be older (an index that does not match its chunk), it and the
/// rest of the chunk are sorted among themselves and handed out, then the mismatch is returned.
fn emit_in_order<E: From<BagError>>(
    pos: u64,
    bytes: &[u8],
    wanted: &impl Fn(&u32) -> bool,
    f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
) -> Result<(), E> {
    // The least key there is: the first message is never older.
    let mut last = (Time::default(), 0u32);
    let mut records = Records::new(bytes, pos);
    for r in records.by_ref() {
        let Some(m) = message(r?, pos)? else { continue };
        if !wanted(&m.conn) {
            continue;
        }
        if last > (m.time, m.conn) {
            return out_of_order(pos, records, m, last, wanted, f);
        }
        last = (m.time, m.conn);
        f(m)?;
    }
    Ok(())
}

/// What [`emit_in_order`] does when message `m` of the chunk at `pos` is older than the one
/// before it, (time, connection) `last`: `m` and the rest of the chunk (`records`) are sorted
/// among themselves and handed out, then the mismatch is returned.
#[cold]
#[inline(never)]
fn out_of_order<'b, E: From<BagError>>(
    pos: u64,
    records: Records<'b>,
    m: Message<'b>,
    last: (Time, u32),
    wanted: &impl Fn(&u32) -> bool,
    f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let (time, conn) = last;
    let mismatch = BagError::at(
        pos,
        format!(
            "in the chunk, at byte {} of its data: message record (connection {}, time {}.{:09}) is older than the \
             message before it (connection {conn}, time {}.{:09}), although the bag's index lists the chunk's messages \
             in time order: the index does not match the chunk; every message of the chunk was read, those from this \
             record on in time order among themselves",
            m.offset, m.conn, m.time.sec, m.time.nsec, time.sec, time.nsec
        ),
    );
    emit_sorted([(pos, records)], Some(m), wanted, f)?;
    Err(mismatch.into())
}

/// Every message of a group of chunks, by (time, connection, file position). Records before a
/// bad one in the group are still emitted, then the fault is returned.
fn emit_time_order<E: From<BagError>>(
    group: &[(u64, Cow<'_, [u8]>)],
    wanted: &impl Fn(&u32) -> bool,
    f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
) -> Result<(), E> {
    emit_sorted(group.iter().map(|(pos, bytes)| (*pos, Records::new(bytes, *pos))), None, wanted, f)
}

/// `first` and the messages of each chunk's remaining records, by (time, connection, file
/// position). Records before a bad one are still emitted, then the fault is returned.
fn emit_sorted<'b, E: From<BagError>>(
    chunks: impl IntoIterator<Item = (u64, Records<'b>)>,
    first: Option<Message<'b>>,
    wanted: &impl Fn(&u32) -> bool,
    f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut msgs: Vec<Message<'b>> = first.into_iter().collect();
    let mut fault = None;
    'chunks: for (pos, records) in chunks {
        for r in records {
            match r.and_then(|r| message(r, pos)) {
                Ok(Some(m)) if wanted(&m.conn) => msgs.push(m),
                Ok(_) => {}
                Err(e) => {
                    fault = Some(e);
                    break 'chunks;
                }
            }
        }
    }
    msgs.sort_by_key(|m| (m.time, m.conn, m.chunk_pos, m.offset));
    for m in msgs {
        f(m)?;
    }
    match fault {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// The message of a chunk record, or `None` for other records (connections, in chunks).
#[inline(always)]
fn message(r: record::Record<'_>, pos: u64) -> Result<Option<Message<'_>>, BagError> {
    let ctx = Ctx { offset: pos, op: Some(record::OP_MESSAGE), chunk: Some((pos, r.offset)) };
    match record::message_header(r.header, &ctx)? {
        Some((conn, time)) => Ok(Some(Message { conn, time, data: r.data, chunk_pos: pos, offset: r.offset })),
        None => Ok(None),
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

/// The check of [`Bag::in_order`] over a chunk's index data records: each record's header
/// against the chunk info ([`IndexCheck::add`]), then their entries, read in place and merged by
/// offset ([`IndexCheck::merged_in_order`]). Its buffer is kept from one chunk to the next.
#[derive(Default)]
struct IndexCheck {
    start: u64,
    end: u64,
    size: u32,
    /// The chunk info's connections (ascending) with their message counts, and whether an index
    /// data record of each was seen.
    counts: Vec<(u32, u32, bool)>,
}

/// A time as one number of the same order: seconds in the high half.
#[inline]
fn time_key(t: Time) -> u64 {
    (u64::from(t.sec) << 32) | u64::from(t.nsec)
}

/// Bits of a merge head ([`IndexCheck::merged_in_order`]) that say which connection it is, and
/// the bits below them that say which of its entries.
const LIST_BITS: u32 = 3;
const ENTRY_BITS: u32 = 32 - LIST_BITS;
/// A merge head of a connection whose entries are all taken (above every real head: offsets are
/// below the chunk's u32 size).
const DONE: u64 = u64::MAX;

impl IndexCheck {
    /// Empties the check for the chunk `info`.
    fn start(&mut self, info: &ChunkInfo) {
        (self.start, self.end, self.size) = (time_key(info.start), time_key(info.end), info.size);
        self.counts.clear();
        self.counts.extend(info.counts.iter().map(|(&conn, &count)| (conn, count, false)));
    }

    /// Checks one index data record's header and data length against the chunk info; its
    /// connection, or `None` when it does not match.
    fn add(&mut self, header: &[u8], data: &[u8]) -> Option<u32> {
        let (ver, conn, count) = record::index_data_header(header)?;
        // Each connection of the chunk info once.
        let c = self.counts.binary_search_by_key(&conn, |c| c.0).ok()?;
        let (_, want, seen) = &mut self.counts[c];
        if ver != 1 || *seen || *want != count || data.len() as u64 != u64::from(count) * record::INDEX_ENTRY as u64 {
            return None;
        }
        *seen = true;
        Some(conn)
    }

    /// Whether the entries of `lists` (connection, index data: `count` x (time, offset)) are
    /// each inside the chunk (times inside its span, offsets below its size and rising), and,
    /// merged by offset, never decrease in (time, connection). Each connection's next entry is a
    /// head, (offset, connection, entry) in one number; the next entry in offset order is the
    /// least head: for the few connections of a chunk as recorders write them, the least of a
    /// row held in registers; through a heap for many.
    fn merged_in_order(&self, lists: &[(u32, &[u8])]) -> bool {
        if lists.iter().any(|(_, d)| d.len() / record::INDEX_ENTRY >= 1 << ENTRY_BITS) {
            // More entries than a head can number (and than a u32 chunk holds records): sorting
            // the chunk is always right.
            return false;
        }
        let mut merge = Merge { check: self, lists, last: 0 };
        match lists.len() {
            0..=4 => merge.row::<4>(),
            5..=8 => merge.row::<8>(),
            _ => merge.heap(),
        }
    }
}

/// The state of [`IndexCheck::merged_in_order`].
struct Merge<'c> {
    check: &'c IndexCheck,
    lists: &'c [(u32, &'c [u8])],
    /// The (time, connection) of the entry taken last, as one number.
    last: u128,
}

impl Merge<'_> {
    /// The head of entry `e` of list `l` (untagged: (offset, entry)): `Some(DONE)` past its end,
    /// `None` for an entry outside the chunk or not after the entry before it (`prev`, the
    /// offset of the head it follows).
    #[inline(always)]
    fn head(&self, l: usize, e: usize, prev: Option<u32>) -> Option<u64> {
        let Some((_, offset)) = record::index_entry(self.lists[l].1, e) else { return Some(DONE) };
        if offset >= self.check.size || prev.is_some_and(|p| offset <= p) {
            return None;
        }
        Some((u64::from(offset) << 32) | e as u64)
    }

    /// Takes the entry of `head` (not [`DONE`]): `None` when it is outside the chunk's span or
    /// less than the one before, else the (untagged) head after it in its list.
    #[inline(always)]
    fn take(&mut self, head: u64, l: usize) -> Option<u64> {
        let e = (head as u32 & ((1 << ENTRY_BITS) - 1)) as usize;
        let (conn, data) = self.lists[l];
        let (time, _) = record::index_entry(data, e).expect("the entry of a head");
        let time = time_key(time);
        let key = (u128::from(time) << 32) | u128::from(conn);
        if time < self.check.start || time > self.check.end || key < self.last {
            return None;
        }
        self.last = key;
        self.head(l, e + 1, Some((head >> 32) as u32))
    }

    /// The merge for at most `N` (at most 2 ^ [`LIST_BITS`]) connections, each head tagged with
    /// its connection's place.
    fn row<const N: usize>(&mut self) -> bool {
        let tag = |h: u64, l: usize| if h == DONE { DONE } else { h | ((l as u64) << ENTRY_BITS) };
        let mut row = [DONE; N];
        for (l, r) in row.iter_mut().enumerate().take(self.lists.len()) {
            let Some(h) = self.head(l, 0, None) else { return false };
            *r = tag(h, l);
        }
        loop {
            let least = row.iter().fold(DONE, |a, &b| a.min(b));
            if least == DONE {
                return true;
            }
            let l = ((least >> ENTRY_BITS) as u32 & ((1 << LIST_BITS) - 1)) as usize;
            let Some(next) = self.take(least, l) else { return false };
            let next = tag(next, l);
            for r in &mut row {
                *r = if *r == least { next } else { *r };
            }
        }
    }

    /// The merge for any number of connections (the connection's place beside the head, which
    /// also breaks ties of offsets as the row's tag does).
    fn heap(&mut self) -> bool {
        use std::cmp::Reverse;
        let mut heap = std::collections::BinaryHeap::with_capacity(self.lists.len());
        for l in 0..self.lists.len() {
            match self.head(l, 0, None) {
                Some(DONE) => {}
                Some(h) => heap.push(Reverse((h, l))),
                None => return false,
            }
        }
        while let Some(Reverse((least, l))) = heap.pop() {
            match self.take(least, l) {
                Some(DONE) => {}
                Some(next) => heap.push(Reverse((next, l))),
                None => return false,
            }
        }
        true
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A bag record: header fields, then data.
    fn record(fields: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
        let mut h = Vec::new();
        for (k, v) in fields {
            h.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
            h.extend_from_slice(k.as_bytes());
            h.push(b'=');
            h.extend_from_slice(v);
        }
        let mut r = (h.len() as u32).to_le_bytes().to_vec();
        r.extend_from_slice(&h);
        r.extend_from_slice(&(data.len() as u32).to_le_bytes());
        r.extend_from_slice(data);
        r
    }

    /// A bag without an index (`index_pos` 0, as a recorder that was killed leaves it): a
    /// connection record of connection `c` on `/t<c>` for each of `conns`, then one uncompressed
    /// chunk per entry of `chunks`, each holding its messages (connection, second, data).
    fn unindexed_bag(conns: &[u32], chunks: &[&[(u32, u32, &[u8])]]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let zero = 0u32.to_le_bytes();
        out.extend(record(
            &[("op", &[record::OP_BAG_HEADER]), ("index_pos", &[0; 8]), ("conn_count", &zero), ("chunk_count", &zero)],
            &[b' '; 64],
        ));
        for c in conns {
            let topic = format!("/t{c}");
            let mut data = Vec::new();
            for (k, v) in [("topic", topic.as_str()), ("type", "std_msgs/UInt8"), ("md5sum", "*")] {
                let f = record(&[(k, v.as_bytes())], b"");
                data.extend_from_slice(&f[4..f.len() - 4]);
            }
            let op = [record::OP_CONNECTION];
            out.extend(record(&[("op", &op), ("conn", &c.to_le_bytes()), ("topic", topic.as_bytes())], &data));
        }
        for messages in chunks {
            let mut chunk = Vec::new();
            for (conn, sec, data) in *messages {
                let time = [sec.to_le_bytes(), 0u32.to_le_bytes()].concat();
                let op = [record::OP_MESSAGE];
                chunk.extend(record(&[("op", &op), ("conn", &conn.to_le_bytes()), ("time", &time)], data));
            }
            let size = (chunk.len() as u32).to_le_bytes();
            out.extend(record(&[("op", &[record::OP_CHUNK]), ("compression", b"none"), ("size", &size)], &chunk));
        }
        out
    }

    /// (connection, second, data) of every message `bag` hands out in `order`, and how the walk
    /// ended.
    fn walk<R: Source>(
        bag: &mut Bag<R>,
        order: Order,
        conns: Option<&BTreeSet<u32>>,
    ) -> (Vec<(u32, u32, Vec<u8>)>, Result<(), BagError>) {
        let mut got = Vec::new();
        let r = bag.for_each_message(order, conns, |m| -> Result<(), BagError> {
            got.push((m.conn, m.time.sec, m.data.to_vec()));
            Ok(())
        });
        (got, r)
    }

    /// Why a walk stopped, told apart by the caller (as the command does).
    #[derive(Debug, PartialEq)]
    enum Ended {
        Bad(BagError),
        Stopped(Stop),
    }

    impl From<BagError> for Ended {
        fn from(e: BagError) -> Self {
            Ended::Bad(e)
        }
    }

    impl From<Stop> for Ended {
        fn from(s: Stop) -> Self {
            Ended::Stopped(s)
        }
    }

    /// A bag cut inside its last chunk: the walk hands out every message of the complete chunks
    /// (in time and in file order, read from memory and through reads, for any connections
    /// selected), then returns the truncation, which is the bag's [`Bag::stop`]; the same bag
    /// whole walks to `Ok`, and so does one cut where a record ends (nothing is cut short).
    #[test]
    fn a_truncated_bag_walks_every_complete_message_then_returns_the_truncation() {
        let chunks: [&[(u32, u32, &[u8])]; 3] =
            [&[(1, 10, b"a"), (2, 11, b"b")], &[(2, 12, b"c"), (1, 13, b"d")], &[(1, 14, b"e"), (2, 15, b"f")]];
        let whole = unindexed_bag(&[1, 2], &chunks);
        let complete = unindexed_bag(&[1, 2], &chunks[..2]);
        // Cut inside the last chunk's data: its record runs past the end of the file.
        let cut = &whole[..complete.len() + 40];
        let expected: Vec<(u32, u32, Vec<u8>)> =
            chunks[..2].iter().flat_map(|c| c.iter().map(|(conn, sec, d)| (*conn, *sec, d.to_vec()))).collect();
        let only_2: BTreeSet<u32> = [2].into();
        let none = BTreeSet::new();
        for order in [Order::Time, Order::File] {
            for lent in [true, false] {
                fn open(bytes: &[u8], lent: bool) -> Bag<Box<dyn Source + '_>> {
                    let src: Box<dyn Source + '_> = if lent {
                        Box::new(std::io::Cursor::new(bytes))
                    } else {
                        Box::new(std::io::BufReader::new(std::io::Cursor::new(bytes)))
                    };
                    Bag::open(src).expect("opens")
                }
                let mut bag = open(cut, lent);
                let stop = bag.stop.clone().expect("the scan stopped at the cut");
                assert!(stop.truncated && stop.error.offset == complete.len() as u64, "{stop:?}");
                assert_eq!(bag.chunks.len(), 2);
                let (got, r) = walk(&mut bag, order, None);
                assert_eq!(got, expected, "{order:?}, lent: {lent}");
                assert_eq!(r, Err(stop.error.clone()), "{order:?}, lent: {lent}");
                // A caller that tells a stop from a bad record is given the stop itself.
                let r = bag.for_each_message(order, None, |_| -> Result<(), Ended> { Ok(()) });
                assert_eq!(r, Err(Ended::Stopped(stop.clone())));
                // Whichever connections are read, even none: the file is cut all the same.
                let (got, r) = walk(&mut bag, order, Some(&only_2));
                assert_eq!(got, expected.iter().filter(|m| m.0 == 2).cloned().collect::<Vec<_>>());
                assert_eq!(r, Err(stop.error.clone()));
                let (got, r) = walk(&mut bag, order, Some(&none));
                assert!(got.is_empty());
                assert_eq!(r, Err(stop.error.clone()));
                // The bag whole, and cut after its second chunk (at a record's end): no stop.
                for (what, bytes) in [("whole", &whole[..]), ("complete chunks", &complete[..])] {
                    let mut bag = open(bytes, lent);
                    assert!(bag.stop.is_none(), "{what}");
                    let (got, r) = walk(&mut bag, order, None);
                    assert_eq!(r, Ok(()), "{what}");
                    assert_eq!(got.len(), if what == "whole" { 6 } else { 4 }, "{what}");
                }
            }
        }
        // A bad record after the chunks (a message outside any chunk; not a cut): a stop too,
        // after every message.
        let mut bad = complete.clone();
        let time = [16u32.to_le_bytes(), 0u32.to_le_bytes()].concat();
        bad.extend(record(&[("op", &[record::OP_MESSAGE]), ("conn", &1u32.to_le_bytes()), ("time", &time)], b"g"));
        bad.extend(&whole[complete.len()..]);
        let mut bag = Bag::open(std::io::Cursor::new(&bad[..])).expect("opens");
        let stop = bag.stop.clone().expect("the scan stopped at the bad record");
        assert!(!stop.truncated);
        let (got, r) = walk(&mut bag, Order::Time, None);
        assert_eq!((got, r), (expected, Err(stop.error)));
    }

    /// What [`IndexCheck::merged_in_order`] must say, the plain way: every entry checked, all of
    /// them sorted by (offset, connection's place), their keys never decreasing.
    fn reference(check: &IndexCheck, lists: &[(u32, Vec<(Time, u32)>)]) -> bool {
        let mut all = Vec::new();
        for (l, (conn, entries)) in lists.iter().enumerate() {
            let mut prev = None;
            for &(time, offset) in entries {
                let t = time_key(time);
                if t < check.start || t > check.end || offset >= check.size || prev.is_some_and(|p| offset <= p) {
                    return false;
                }
                prev = Some(offset);
                all.push((offset, l, (time, *conn)));
            }
        }
        all.sort();
        all.windows(2).all(|w| w[0].2 <= w[1].2)
    }

    #[test]
    fn the_index_merge_agrees_with_sorting_for_any_number_of_connections() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut agreed, mut in_order) = (0, 0);
        for case in 0..3000 {
            let conns = 1 + rand(12) as usize;
            let size = 4000;
            let check = IndexCheck {
                start: time_key(Time { sec: 10, nsec: 0 }),
                end: time_key(Time { sec: 20, nsec: 0 }),
                size,
                counts: Vec::new(),
            };
            // Records of the chunk: each a connection, a rising offset and a time that mostly rises.
            let mut lists: Vec<(u32, Vec<(Time, u32)>)> = (0..conns).map(|c| (c as u32 * 3 + 1, Vec::new())).collect();
            let (mut offset, mut sec) = (0u32, 10u32);
            for _ in 0..rand(40) {
                offset += 1 + rand(190) as u32;
                if rand(8) == 0 {
                    sec += 1;
                }
                let mut time = Time { sec, nsec: 0 };
                match rand(if case % 3 == 0 { 40 } else { 400 }) {
                    0 => time.sec -= 1,
                    1 => time.sec = 25,
                    2 => offset = size + 1,
                    _ => {}
                }
                let l = rand(conns as u64) as usize;
                lists[l].1.push((time, offset));
            }
            if case % 50 == 0 && conns > 1 {
                // An entry out of its connection's offset order.
                if let Some(e) = lists[0].1.first_mut() {
                    e.1 = 3999;
                }
            }
            let bytes: Vec<(u32, Vec<u8>)> = lists
                .iter()
                .map(|(c, es)| {
                    let mut b = Vec::new();
                    for (t, o) in es {
                        b.extend_from_slice(&t.sec.to_le_bytes());
                        b.extend_from_slice(&t.nsec.to_le_bytes());
                        b.extend_from_slice(&o.to_le_bytes());
                    }
                    (*c, b)
                })
                .collect();
            let slices: Vec<(u32, &[u8])> = bytes.iter().map(|(c, b)| (*c, &b[..])).collect();
            let want = reference(&check, &lists);
            assert_eq!(check.merged_in_order(&slices), want, "case {case}: {lists:?}");
            let mut merge = Merge { check: &check, lists: &slices, last: 0 };
            assert_eq!(merge.heap(), want, "case {case}, through the heap");
            agreed += 1;
            in_order += usize::from(want);
        }
        assert!(in_order > 300 && agreed - in_order > 300, "both verdicts are tried ({in_order} of {agreed} in order)");
    }
}
