//! Whether a chunk of an indexed bag stores its messages in time order ([`Bag::in_order`]): the
//! index data records after the chunk, checked against its chunk info and merged by offset.

use super::{Bag, ChunkInfo, Source};
use crate::formats::rosbag::record::{self, Records};
use crate::formats::rosbag::{BagError, Time};

impl<R: Source> Bag<R> {
    /// Whether chunk `i` of [`Bag::chunks`] stores its messages in time order (see
    /// [`ChunkInfo::in_order`]). For an indexed bag this reads the index data records after the
    /// chunk once: one per connection of its chunk info, each `count` x (time, offset), which
    /// must match the chunk info (connections and counts, times inside its span, offsets inside
    /// the chunk and rising); merged by offset, their (time, connection) must never decrease.
    /// Index data that is missing or does not match gives `false`: the chunk is then sorted from
    /// its records, as without an index.
    pub fn in_order(&mut self, i: usize) -> bool {
        self.in_order_read(i, true)
    }

    /// [`Bag::in_order`], the index data read in place when the source lends the file and `lend`
    /// says so (else through reads: a walk that jumps about a mapped file does not map it all).
    pub(super) fn in_order_read(&mut self, i: usize, lend: bool) -> bool {
        if let Some(known) = self.chunks[i].in_order {
            return known;
        }
        let mut check = std::mem::take(&mut self.index_check);
        let known = match self.src.lend().filter(|_| lend) {
            Some(file) => check.lent(file, &self.chunks[i]),
            None => self.read_in_order(i, &mut check).unwrap_or(false),
        };
        self.index_check = check;
        self.chunks[i].in_order = Some(known);
        known
    }

    /// [`IndexCheck::lent`] of chunk `i`, its index data records read from the source.
    fn read_in_order(&mut self, i: usize, check: &mut IndexCheck) -> Result<bool, BagError> {
        let info = &self.chunks[i];
        check.start(info);
        let mut at = info.data_pos.saturating_add(info.stored);
        let n = info.counts.len();
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
}

/// The check of [`Bag::in_order`] over a chunk's index data records: each record's header
/// against the chunk info ([`IndexCheck::add`]), then their entries, read in place and merged by
/// offset ([`IndexCheck::merged_in_order`]). Its buffer is kept from one chunk to the next.
#[derive(Default)]
pub(super) struct IndexCheck {
    start: u64,
    end: u64,
    size: u32,
    /// The chunk info's connections (ascending) with their message counts, and whether an index
    /// data record of each was seen.
    counts: Vec<(u32, u32, bool)>,
}

impl IndexCheck {
    /// [`Bag::in_order`] of the chunk `info`, its index data records read in place from `file`
    /// (the whole bag).
    pub(super) fn lent(&mut self, file: &[u8], info: &ChunkInfo) -> bool {
        self.start(info);
        let at = info.data_pos.saturating_add(info.stored);
        let n = info.counts.len();
        let rest = usize::try_from(at).ok().and_then(|a| file.get(a..)).unwrap_or_default();
        let mut lists = Vec::with_capacity(n);
        for r in Records::new(rest, at).take(n) {
            let Ok(r) = r else { return false };
            let Some(conn) = self.add(r.header, r.data) else { return false };
            lists.push((conn, r.data));
        }
        self.merged_in_order(&lists)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
