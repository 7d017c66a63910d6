//! Record integrity: the per-record CRC a framing can declare (`[framing] checksum`) and the
//! search for the next good record after a corrupted region (`[framing] sync`). Both are used by
//! the runtime's framed reader and by the IR interpreter, and [`resync`] by any front end whose
//! format re-synchronises on header bytes (DataFlash's `A3 95`). No `std`; only [`SpanCrc`]
//! allocates (feature `alloc`).

use crate::traits::Endian;

/// A CRC in the Rocksoft model with refin = refout (every CRC a schema can name), computed a
/// byte at a time from a 256-entry table built at compile time. The parameters come from the
/// IR's catalogue (`logspec_ir::ir::Crc::params`), which also holds each check value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crc {
    width: u32,
    init: u32,
    reflect: bool,
    xorout: u32,
    table: [u32; 256],
}

impl Crc {
    /// A CRC of `width` bits (8..=32) with polynomial `poly` (normal form, without the top bit),
    /// initial register `init`, reflected input and output when `reflect`, final XOR `xorout`.
    pub const fn new(width: u32, poly: u32, init: u32, reflect: bool, xorout: u32) -> Crc {
        let mut table = [0u32; 256];
        let mut i = 0;
        if reflect {
            let rpoly = poly.reverse_bits() >> (32 - width);
            while i < 256 {
                let mut r = i as u32;
                let mut k = 0;
                while k < 8 {
                    r = if r & 1 != 0 { (r >> 1) ^ rpoly } else { r >> 1 };
                    k += 1;
                }
                table[i] = r;
                i += 1;
            }
        } else {
            // The register is kept top-aligned in 32 bits, so one table serves every width.
            let tpoly = poly << (32 - width);
            while i < 256 {
                let mut r = (i as u32) << 24;
                let mut k = 0;
                while k < 8 {
                    r = if r & 0x8000_0000 != 0 { (r << 1) ^ tpoly } else { r << 1 };
                    k += 1;
                }
                table[i] = r;
                i += 1;
            }
        }
        let init = if reflect { init.reverse_bits() >> (32 - width) } else { init << (32 - width) };
        Crc { width, init, reflect, xorout, table }
    }

    /// The register before any byte.
    pub const fn start(&self) -> u32 {
        self.init
    }

    /// The register after `bytes`.
    #[inline]
    pub fn update(&self, mut reg: u32, bytes: &[u8]) -> u32 {
        if self.reflect {
            for &b in bytes {
                reg = (reg >> 8) ^ self.table[((reg ^ u32::from(b)) & 0xFF) as usize];
            }
        } else {
            for &b in bytes {
                reg = (reg << 8) ^ self.table[((reg >> 24) ^ u32::from(b)) as usize];
            }
        }
        reg
    }

    /// The CRC value of a register.
    pub const fn finish(&self, reg: u32) -> u32 {
        if self.reflect {
            reg ^ self.xorout
        } else {
            (reg >> (32 - self.width)) ^ self.xorout
        }
    }

    /// The CRC of `bytes`.
    pub fn checksum(&self, bytes: &[u8]) -> u32 {
        self.finish(self.update(self.start(), bytes))
    }

    /// The width in bits.
    pub const fn width(&self) -> u32 {
        self.width
    }
}

/// A framing's per-record checksum: a CRC stored in a record-header field, over the header
/// (without that field's bytes) and the payload, or over the payload alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordChecksum {
    pub crc: Crc,
    /// The CRC field's name, for messages.
    pub field: &'static str,
    /// The CRC field's offset in the record header; its size is the CRC's width in bytes.
    pub at: usize,
    pub endian: Endian,
    /// Whether the header (without the CRC field) is covered, before the payload.
    pub over_header: bool,
}

impl RecordChecksum {
    fn size(&self) -> usize {
        (self.crc.width / 8) as usize
    }

    /// The CRC of a record, `header` its record header's bytes.
    pub fn compute(&self, header: &[u8], payload: &[u8]) -> u32 {
        let mut reg = self.crc.start();
        if self.over_header {
            let end = self.at + self.size();
            reg = self.crc.update(reg, &header[..self.at]);
            reg = self.crc.update(reg, &header[end..]);
        }
        self.crc.finish(self.crc.update(reg, payload))
    }

    /// The CRC stored in a record header.
    pub fn stored(&self, header: &[u8]) -> u32 {
        let b = &header[self.at..self.at + self.size()];
        let mut v = 0u32;
        match self.endian {
            Endian::Big => b.iter().for_each(|x| v = (v << 8) | u32::from(*x)),
            Endian::Little => b.iter().rev().for_each(|x| v = (v << 8) | u32::from(*x)),
        }
        v
    }

    /// `Err((stored, computed))` when a record's CRC does not match its bytes.
    #[inline]
    pub fn verify(&self, header: &[u8], payload: &[u8]) -> Result<(), (u32, u32)> {
        let (stored, computed) = (self.stored(header), self.compute(header, payload));
        if stored == computed {
            Ok(())
        } else {
            Err((stored, computed))
        }
    }

    /// Whether the record at `start` of `spans`' bytes (`header_len` bytes of header, `total`
    /// bytes in all) holds the CRC of its bytes: [`verify`](Self::verify) in time independent
    /// of the record's length, for [`resync`].
    #[cfg(feature = "alloc")]
    pub fn verify_in(&self, spans: &mut SpanCrc<'_>, start: usize, header_len: usize, total: usize) -> bool {
        spans.forget_before(start);
        let stored = self.stored(&spans.bytes[start..start + header_len]);
        let mut reg = self.crc.start();
        if self.over_header {
            reg = spans.update(reg, start, start + self.at);
            reg = spans.update(reg, start + self.at + self.size(), start + total);
        } else {
            reg = spans.update(reg, start + header_len, start + total);
        }
        self.crc.finish(reg) == stored
    }

    /// Writes a record's CRC into its header (whose other fields are written).
    pub fn fill(&self, header: &mut [u8], payload: &[u8]) {
        let v = self.compute(header, payload);
        let n = self.size();
        let field = &mut header[self.at..self.at + n];
        for (i, b) in field.iter_mut().enumerate() {
            let shift = match self.endian {
                Endian::Little => 8 * i,
                Endian::Big => 8 * (n - 1 - i),
            };
            *b = (v >> shift) as u8;
        }
    }
}

/// What [`resync`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resync {
    /// A good record starts at this offset.
    Found(usize),
    /// No good record starts before this offset; from it on, the bytes are too few to tell
    /// (more may follow, or at the end of the input nothing good does).
    More(usize),
}

/// Searches `bytes` from offset `from` for the start of the next good record: an offset `k` where
/// `sync` (the bytes that begin every record; empty for none, when every offset is tried)
/// begins and where `check(&bytes[k..], k)` says a record checks out (`Some(true)`), does not
/// (`Some(false)`), or needs more bytes than `bytes` holds to tell (`None`, which stops the
/// search there). Runs in time linear in the bytes passed over times the cost of `check`; a
/// check that verifies a CRC keeps that cost independent of the record's length with
/// [`SpanCrc`].
pub fn resync(bytes: &[u8], from: usize, sync: &[u8], mut check: impl FnMut(&[u8], usize) -> Option<bool>) -> Resync {
    let mut k = from;
    loop {
        if k >= bytes.len() {
            return Resync::More(bytes.len().max(from));
        }
        if let Some((&first, rest)) = sync.split_first() {
            // The next place the whole pattern begins; a pattern cut by the end needs more bytes.
            let mut found = None;
            let mut i = k;
            while let Some(p) = bytes[i..].iter().position(|b| *b == first) {
                let at = i + p;
                if at + sync.len() > bytes.len() {
                    return Resync::More(at);
                }
                if &bytes[at + 1..at + sync.len()] == rest {
                    found = Some(at);
                    break;
                }
                i = at + 1;
            }
            match found {
                Some(at) => k = at,
                None => return Resync::More(bytes.len()),
            }
        }
        match check(&bytes[k..], k) {
            Some(true) => return Resync::Found(k),
            Some(false) => k += 1,
            None => return Resync::More(k),
        }
    }
}

/// The shifts of a CRC register by any number of zero bytes, for [`SpanCrc`]: `Z^(d*16^p)` (`Z`
/// one zero byte's step, linear over GF(2)) for every hex digit `d` and digit position `p` below
/// 12, each as four byte tables, so that a shift by `n` costs four lookups per non-zero hex digit
/// of `n`. Made once per reader (720 KiB, about 200,000 steps), not per resynchronisation, since
/// a file can hold a corrupted region per record.
#[cfg(feature = "alloc")]
pub struct CrcShifts {
    crc: Crc,
    /// `tables[15 * p + d - 1]`: `Z^(d * 16^p)`.
    tables: alloc::vec::Vec<[[u32; 256]; 4]>,
}

#[cfg(feature = "alloc")]
impl core::fmt::Debug for CrcShifts {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CrcShifts").field("width", &self.crc.width).finish_non_exhaustive()
    }
}

#[cfg(feature = "alloc")]
impl CrcShifts {
    /// Spans are shorter than 16^12 = 2^48 bytes.
    const DIGITS: usize = 12;

    /// The shifts of `crc`.
    pub fn new(crc: Crc) -> CrcShifts {
        let mut tables = alloc::vec::Vec::with_capacity(15 * Self::DIGITS);
        // The columns of `Z^(16^p)`: where each register bit goes.
        let mut base: [u32; 32] = core::array::from_fn(|i| crc.update(1 << i, &[0]));
        for _ in 0..Self::DIGITS {
            let mut cols = base;
            for _d in 1..16 {
                let t = tables_of(&cols);
                // `Z^((d + 1) * 16^p)`: `Z^(d * 16^p)` applied to the columns of `Z^(16^p)`.
                cols = core::array::from_fn(|i| apply(&t, base[i]));
                tables.push(t);
            }
            // `Z^(16^(p + 1))`.
            base = cols;
        }
        CrcShifts { crc, tables }
    }

    /// `Z^n(x)`: the register `x` after `n` zero bytes.
    fn shift(&self, mut x: u32, n: usize) -> u32 {
        let mut n = n as u64;
        let mut p = 0;
        while n != 0 {
            let d = (n & 15) as usize;
            if d != 0 {
                x = apply(&self.tables[15 * p + d - 1], x);
            }
            n >>= 4;
            p += 1;
        }
        x
    }
}

/// A 32x32 bit matrix given by its columns as four byte tables.
#[cfg(feature = "alloc")]
fn tables_of(cols: &[u32; 32]) -> [[u32; 256]; 4] {
    let mut t = [[0u32; 256]; 4];
    for (q, table) in t.iter_mut().enumerate() {
        for b in 1..256usize {
            table[b] = table[b & (b - 1)] ^ cols[8 * q + b.trailing_zeros() as usize];
        }
    }
    t
}

/// A 32x32 bit matrix, as four byte tables, times a register.
#[cfg(feature = "alloc")]
#[inline]
fn apply(t: &[[u32; 256]; 4], x: u32) -> u32 {
    t[0][(x & 0xFF) as usize]
        ^ t[1][((x >> 8) & 0xFF) as usize]
        ^ t[2][((x >> 16) & 0xFF) as usize]
        ^ t[3][(x >> 24) as usize]
}

/// The CRC of any span of a run of bytes in time logarithmic in the span's length, so that
/// a resynchronisation stays linear when hostile bytes offer a candidate record at every sync
/// pattern, each claiming a long record: checking each candidate's CRC byte by byte would cost
/// the bytes passed over times the longest record (about 3,000 times a clean read of the same
/// bytes with 38 KiB records).
///
/// A table-driven CRC register is linear over GF(2) in the register and the bytes, so the
/// register after a span `a..b` from register `r` is `Z^(b-a)(r ^ P(a)) ^ P(b)`, where `P(i)` is
/// the register from 0 after the bytes before `i` ([`CrcShifts`] has the powers of `Z`). `P` is
/// kept at every [`SpanCrc::STRIDE`]-th byte from where the spans start to as far as they
/// reach, and forgotten behind the candidates as [`resync`] moves on: memory is about the longest
/// record's bytes, not the bytes passed over. A short span is run byte by byte.
#[cfg(feature = "alloc")]
pub struct SpanCrc<'a> {
    shifts: &'a CrcShifts,
    bytes: &'a [u8],
    /// Where the spans may start: prefix registers are kept from here on.
    base: usize,
    /// `marks[i]`: the register from 0 after `bytes[base..base + (first + i) * STRIDE]`.
    marks: alloc::vec::Vec<u32>,
    /// The stride index of `marks[0]`.
    first: usize,
}

#[cfg(feature = "alloc")]
impl<'a> SpanCrc<'a> {
    /// The bytes between two kept prefix registers.
    pub const STRIDE: usize = 4;

    /// Spans of `bytes` that start at `base` or later, under the shifts' CRC. Costs nothing
    /// until asked.
    pub fn new(shifts: &'a CrcShifts, bytes: &'a [u8], base: usize) -> SpanCrc<'a> {
        SpanCrc { shifts, bytes, base, marks: alloc::vec![0], first: 0 }
    }

    /// No span will start before `at` (`at` only grows): the prefix registers behind it go.
    pub fn forget_before(&mut self, at: usize) {
        let m = (at - self.base) / Self::STRIDE;
        let stale = m.saturating_sub(self.first).min(self.marks.len() - 1);
        if stale >= 4096 && stale * 2 >= self.marks.len() {
            self.marks.drain(..stale);
            self.first += stale;
        }
    }

    /// `P(i)`: the register from 0 after `bytes[base..i]` (`i` not before what was forgotten).
    fn prefix(&mut self, i: usize) -> u32 {
        let crc = &self.shifts.crc;
        let m = (i - self.base) / Self::STRIDE;
        while self.first + self.marks.len() <= m {
            let j = self.first + self.marks.len();
            let at = self.base + (j - 1) * Self::STRIDE;
            let last = self.marks[self.marks.len() - 1];
            self.marks.push(crc.update(last, &self.bytes[at..at + Self::STRIDE]));
        }
        crc.update(self.marks[m - self.first], &self.bytes[self.base + m * Self::STRIDE..i])
    }

    /// The register `reg` after `bytes[a..b]` (`base <= a <= b <= bytes.len()`).
    pub fn update(&mut self, reg: u32, a: usize, b: usize) -> u32 {
        if b - a <= 2 * Self::STRIDE {
            return self.shifts.crc.update(reg, &self.bytes[a..b]);
        }
        let pa = self.prefix(a);
        let pb = self.prefix(b);
        self.shifts.shift(reg ^ pa, b - a) ^ pb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resync_finds_the_next_sync_whose_record_checks_out() {
        // Records are `A3 95 n` followed by n bytes; one checks out when its bytes are all 7.
        let bytes = [0, 0xA3, 0x95, 1, 0, 0xA3, 0xA3, 0x95, 1, 7, 0xA3];
        let check = |b: &[u8]| {
            let n = *b.get(2)? as usize;
            let body = b.get(3..3 + n)?;
            Some(body.iter().all(|x| *x == 7))
        };
        assert_eq!(resync(&bytes, 0, &[0xA3, 0x95], |b, _| check(b)), Resync::Found(6));
        // After it, only a cut pattern: more bytes are needed from its start.
        assert_eq!(resync(&bytes, 7, &[0xA3, 0x95], |b, _| check(b)), Resync::More(10));
        // Without a sync, every offset is tried.
        assert_eq!(resync(&[9, 9, 1, 7], 0, &[], |b: &[u8], _| Some(b[0] == 1)), Resync::Found(2));
        assert_eq!(resync(&[9, 9], 0, &[], |_: &[u8], _| Some(false)), Resync::More(2));
    }

    #[test]
    fn checksum_fill_and_verify_skip_the_crc_field() {
        let crc = Crc::new(16, 0x1021, 0xFFFF, false, 0);
        let c = RecordChecksum { crc, field: "crc", at: 2, endian: Endian::Big, over_header: true };
        let mut header = [1, 2, 0xEE, 0xEE, 3];
        c.fill(&mut header, b"xyz");
        let want = crc.checksum(&[1, 2, 3, b'x', b'y', b'z']);
        assert_eq!(header[2..4], [(want >> 8) as u8, want as u8]);
        assert!(c.verify(&header, b"xyz").is_ok());
        assert_eq!(c.verify(&header, b"xyZ").map_err(|(s, _)| s), Err(want));
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn span_crc_equals_the_bytewise_crc_of_every_span() {
        // Every catalogue shape: reflected and not, 8 to 32 bits, spans across and inside strides.
        let crcs = [
            Crc::new(16, 0x1021, 0xFFFF, false, 0),
            Crc::new(16, 0x1021, 0, false, 0),
            Crc::new(32, 0x04C1_1DB7, 0xFFFF_FFFF, true, 0xFFFF_FFFF),
            Crc::new(32, 0x1EDC_6F41, 0xFFFF_FFFF, true, 0xFFFF_FFFF),
            Crc::new(8, 0x07, 0, false, 0),
        ];
        let bytes: alloc::vec::Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for crc in crcs {
            let shifts = CrcShifts::new(crc);
            let mut spans = SpanCrc::new(&shifts, &bytes, 2);
            for a in (2..bytes.len()).step_by(7) {
                for b in (a..=bytes.len()).step_by(11) {
                    let reg = crc.update(crc.start(), &bytes[..3]);
                    assert_eq!(spans.update(reg, a, b), crc.update(reg, &bytes[a..b]), "{a}..{b}");
                }
            }
        }
        let c = RecordChecksum { crc: crcs[3], field: "crc", at: 2, endian: Endian::Little, over_header: true };
        let mut record = [1u8, 2, 0, 0, 0, 0, 3, b'x', b'y', b'z'];
        let (h, p) = record.split_at_mut(7);
        c.fill(h, p);
        let shifts = CrcShifts::new(c.crc);
        let mut spans = SpanCrc::new(&shifts, &record, 0);
        assert!(c.verify_in(&mut spans, 0, 7, 10));
        let over_payload = RecordChecksum { over_header: false, ..c };
        assert!(!over_payload.verify_in(&mut spans, 0, 7, 10));
        // Candidates moving on through 400 KB, each span 5,000 bytes: the registers behind them
        // are forgotten, and what is kept gives the same CRCs.
        let long: alloc::vec::Vec<u8> = (0..400_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let crc = crcs[2];
        let shifts = CrcShifts::new(crc);
        let mut spans = SpanCrc::new(&shifts, &long, 1);
        for k in (1..long.len() - 5_000).step_by(97) {
            spans.forget_before(k);
            assert_eq!(spans.update(crc.start(), k, k + 5_000), crc.update(crc.start(), &long[k..k + 5_000]), "{k}");
        }
        assert!(spans.marks.len() < 2 * (5_000 / SpanCrc::STRIDE + 4096), "{}", spans.marks.len());
    }
}
