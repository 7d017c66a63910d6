//! The messages of an open bag, in time or file order ([`Bag::for_each_message`]): which chunks
//! to read and in what groups, read through the decompression pipeline, and their messages
//! handed out as stored, in one walk, or sorted by time.

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::{Bag, ChunkInfo, Refused, Source, Stop, Unmerged};
use crate::formats::rosbag::chunk::{pipeline, Compression, RawChunk};
use crate::formats::rosbag::record::{self, Ctx, Records};
use crate::formats::rosbag::{BagError, Time};

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

impl<R: Source> Bag<R> {
    /// Calls `f` for every message of the selected connections (all when `conns` is `None`), in
    /// `order`. Chunks holding none of them are not read. Memory: the chunks being decompressed
    /// (a window within [`Bag::chunk_budget`]) and, in time order, one group of chunks whose
    /// time spans overlap, merged when they hold at most [`Bag::merge_window`] bytes; a larger
    /// group is read chunk by chunk, each chunk in time order, and [`Bag::unmerged`] says so.
    /// A chunk over the budget, or whose data does not decompress, is skipped, and the walk goes
    /// on with the next. Every message before a fault has been handed to `f` when the fault is
    /// returned: a bad record in a chunk ([`BagError`]), or, for a bag whose scan stopped early
    /// (truncated, or at a bad record: [`Bag::stop`]), that [`Stop`], after every message of the
    /// complete chunks before it, whichever connections were selected; otherwise the chunks
    /// refused (by the scan or by this walk: [`Refused::error`]), after every other message.
    pub fn for_each_message<E: From<BagError> + From<Stop>>(
        &mut self,
        order: Order,
        conns: Option<&BTreeSet<u32>>,
        mut f: impl FnMut(Message<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let wanted = |c: &u32| conns.is_none_or(|s| s.contains(c));
        let mut list: Vec<ChunkInfo> = self.chunks.iter().filter(|c| c.counts.keys().any(wanted)).cloned().collect();
        if order == Order::Time {
            list.sort_by_key(|c| (c.start, c.pos));
        }
        // Group ids: in time order, chunks whose spans overlap (or touch) are merged together,
        // when they fit the merge window; a group that does not is read chunk by chunk.
        let window = self.merge_window();
        // What a chunk adds to a merge: none when it is refused by its size.
        let held = |c: &ChunkInfo| if u64::from(c.size) > self.chunk_budget { 0 } else { u64::from(c.size) };
        let mut unmerged: Option<Unmerged> = None;
        let mut group_end: Vec<usize> = Vec::with_capacity(list.len());
        let mut i = 0;
        while i < list.len() {
            let mut j = i + 1;
            let mut end = list[i].end;
            let mut bytes = held(&list[i]);
            while order == Order::Time && j < list.len() && list[j].start <= end {
                end = end.max(list[j].end);
                bytes += held(&list[j]);
                j += 1;
            }
            if j - i > 1 && bytes > window {
                let u = unmerged.get_or_insert(Unmerged {
                    runs: 0,
                    chunks: 0,
                    first_pos: list[i].pos,
                    first_chunks: (j - i) as u64,
                    first_bytes: bytes,
                    window,
                });
                u.runs += 1;
                u.chunks += (j - i) as u64;
                group_end.extend(i + 1..=j);
            } else {
                group_end.extend(std::iter::repeat_n(j, j - i));
            }
            i = j;
        }
        self.unmerged = unmerged;
        // A source that lends the file lends the chunks of a walk that goes forward through it
        // (every walk of a bag whose chunks do not overlap in time): a map's window then only
        // moves forward, dropping the pages behind. Chunks read in another order (by start time
        // across overlapping chunks) are read from the source, so that memory stays flat.
        let forward = list.windows(2).all(|w| w[0].pos < w[1].pos);
        let compressed = list.iter().any(|c| c.compression != Compression::None);
        // A chunk alone in its group is read in one walk when its messages are stored in time
        // order (read from its index data).
        let alone = |i: usize| order == Order::Time && group_end[i] == i + 1 && (i == 0 || group_end[i - 1] == i);
        let lent = self.src.lend().is_some() && forward;
        if !lent {
            for i in (0..list.len()).filter(|i| alone(*i)) {
                if let Ok(j) = self.chunks.binary_search_by_key(&list[i].pos, |c| c.pos) {
                    list[i].in_order = Some(self.in_order_read(j, false));
                }
            }
        }
        let budget = self.chunk_budget;
        let plan = Plan { list: &list, group_end: &group_end, order, compressed, budget, threads: self.threads };
        let mut refused = self.refused.clone();
        if let Some(file) = self.src.lend().filter(|_| lent) {
            // Uncompressed chunks are read in place; compressed ones are decompressed from the
            // lent bytes. A chunk's index data (right after it) is checked as the walk reaches
            // the chunk, not all before the walk: touching every chunk's index first maps pages
            // all over the file (a whole large folio of the page cache at a touch), which the
            // map's window only drops once the walk has passed them.
            let src = &self.src;
            let read = |i: usize| {
                src.moved(list[i].data_pos);
                lent_chunk(file, &list[i], budget)
            };
            let (chunks, check) = (&mut self.chunks, &mut self.index_check);
            let mut found: Vec<Option<bool>> = list.iter().map(|c| c.in_order).collect();
            let known = |i: usize| {
                alone(i)
                    && *found[i].get_or_insert_with(|| {
                        let known = check.lent(file, &list[i]);
                        if let Ok(j) = chunks.binary_search_by_key(&list[i].pos, |c| c.pos) {
                            chunks[j].in_order = Some(known);
                        }
                        known
                    })
            };
            plan.run(read, known, &wanted, &mut refused, &mut f)?;
        } else {
            let known = |i: usize| list[i].in_order == Some(true);
            let src = &mut *self;
            plan.run(|i| src.raw_chunk(&list[i]), known, &wanted, &mut refused, &mut f)?;
        }
        match (&self.stop, refused.error()) {
            (Some(stop), _) => Err(stop.clone().into()),
            (None, Some(e)) => Err(e.into()),
            (None, None) => Ok(()),
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
    /// [`Bag::chunk_budget`].
    budget: u64,
    /// [`Bag::threads`].
    threads: usize,
}

impl Plan<'_> {
    /// Reads the chunks with `read` through the decompression pipeline and hands their messages
    /// to `f`; a chunk that cannot be decompressed is added to `refused` and skipped. A chunk
    /// alone in its time-order group for which `in_order` says true is read in one walk.
    fn run<'a, E: From<BagError>>(
        &self,
        read: impl FnMut(usize) -> Result<RawChunk<'a>, BagError>,
        mut in_order: impl FnMut(usize) -> bool,
        wanted: &impl Fn(&u32) -> bool,
        refused: &mut Refused,
        f: &mut impl FnMut(Message<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut group: Vec<(u64, Cow<'a, [u8]>)> = Vec::new();
        // What a chunk takes in the pipeline: its bytes, none when it is refused by its size.
        let cost = |i: usize| {
            let c = &self.list[i];
            if u64::from(c.size) > self.budget {
                0
            } else {
                u64::from(c.size).max(c.stored)
            }
        };
        pipeline(
            self.list.len(),
            read,
            |i, bytes| {
                let pos = self.list[i].pos;
                let bytes = match bytes {
                    Ok(bytes) => Some(bytes),
                    Err(e) => {
                        refused.add(e);
                        None
                    }
                };
                if let Some(bytes) = bytes {
                    if self.order == Order::File {
                        return emit_file_order(pos, &bytes, wanted, f);
                    }
                    if group.is_empty() && self.group_end[i] == i + 1 && in_order(i) {
                        // A chunk alone in its group whose messages are stored in time order: one walk.
                        return emit_in_order(pos, &bytes, wanted, f);
                    }
                    group.push((pos, bytes));
                }
                if self.group_end[i] == i + 1 && !group.is_empty() {
                    let r = emit_time_order(&group, wanted, f);
                    group.clear();
                    r?;
                }
                Ok(())
            },
            (self.compressed, self.threads),
            (self.budget, &cost),
        )
    }
}

/// The stored bytes of a chunk, lent from the whole file.
fn lent_chunk<'a>(file: &'a [u8], info: &ChunkInfo, budget: u64) -> Result<RawChunk<'a>, BagError> {
    if u64::from(info.size) > budget {
        // Refused by its size alone (`RawChunk::decompress`).
        return Ok(RawChunk {
            pos: info.pos,
            compression: info.compression,
            size: info.size,
            data: Cow::Borrowed(&[]),
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::rosbag::MAGIC;

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
    #[allow(clippy::type_complexity)] // the tuple the doc comment names, for one test helper
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
}
