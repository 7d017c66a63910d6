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

/// The CRC of any span of a run of bytes in time logarithmic in the span's length, so that
/// a resynchronisation stays linear when hostile bytes offer a candidate record at every sync
/// pattern, each claiming a long record: checking each candidate's CRC byte by byte would cost
/// the bytes passed over times the longest record (about 3,000 times a clean read of the same
/// bytes with 38 KiB records).
///
/// A table-driven CRC register is linear over GF(2) in the register and the bytes, so the
/// register after a span `a..b` from register `r` is `Z^(b-a)(r ^ P(a)) ^ P(b)`, where `P(i)` is
/// the register from 0 after the first `i` bytes and `Z` one zero byte's step, whose powers
/// `Z^(2^j)` are kept as 32x32 bit matrices. `P` is kept at every [`SpanCrc::STRIDE`]-th byte,
/// computed only from where spans may start as far as the spans asked for reach: memory is a
/// sixteenth of the bytes examined.
#[cfg(feature = "alloc")]
pub struct SpanCrc<'a> {
    crc: Crc,
    bytes: &'a [u8],
    /// Where the spans may start: prefix registers are kept from here on.
    base: usize,
    /// `marks[i]`: the register from 0 after `bytes[base..base + i * STRIDE]`.
    marks: alloc::vec::Vec<u32>,
    /// `zeros[j]`: the columns of `Z^(2^j)`, made as far as the spans' lengths need.
    zeros: alloc::vec::Vec<[u32; 32]>,
}

#[cfg(feature = "alloc")]
impl<'a> SpanCrc<'a> {
    /// The bytes between two kept prefix registers.
    pub const STRIDE: usize = 64;

    /// Spans of `bytes` under `crc` that start at `base` or later. Costs nothing until asked.
    pub fn new(crc: Crc, bytes: &'a [u8], base: usize) -> SpanCrc<'a> {
        SpanCrc { crc, bytes, base, marks: alloc::vec![0], zeros: alloc::vec::Vec::new() }
    }

    /// The bytes the spans are in.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// `Z^n(x)`: the register `x` after `n` zero bytes.
    fn shift(&mut self, mut x: u32, n: usize) -> u32 {
        let mut n = n as u64;
        let mut j = 0;
        while n != 0 {
            if n & 1 != 0 {
                while self.zeros.len() <= j {
                    let next = match self.zeros.last() {
                        None => core::array::from_fn(|i| self.crc.update(1 << i, &[0])),
                        Some(prev) => core::array::from_fn(|i| apply(prev, prev[i])),
                    };
                    self.zeros.push(next);
                }
                x = apply(&self.zeros[j], x);
            }
            n >>= 1;
            j += 1;
        }
        x
    }

    /// `P(i)`: the register from 0 after `bytes[base..i]` (`base <= i`).
    fn prefix(&mut self, i: usize) -> u32 {
        let m = (i - self.base) / Self::STRIDE;
        while self.marks.len() <= m {
            let j = self.marks.len();
            let at = self.base + (j - 1) * Self::STRIDE;
            let reg = self.crc.update(self.marks[j - 1], &self.bytes[at..at + Self::STRIDE]);
            self.marks.push(reg);
        }
        self.crc.update(self.marks[m], &self.bytes[self.base + m * Self::STRIDE..i])
    }

    /// The register `reg` after `bytes[a..b]` (`base <= a <= b <= bytes.len()`).
    pub fn update(&mut self, reg: u32, a: usize, b: usize) -> u32 {
        let pa = self.prefix(a);
        let pb = self.prefix(b);
        self.shift(reg ^ pa, b - a) ^ pb
    }
}

/// A 32x32 bit matrix (its columns) times a vector.
#[cfg(feature = "alloc")]
fn apply(m: &[u32; 32], x: u32) -> u32 {
    let mut r = 0;
    let mut x = x;
    let mut j = 0;
    while x != 0 {
        if x & 1 != 0 {
            r ^= m[j];
        }
        x >>= 1;
        j += 1;
    }
    r
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
            let mut spans = SpanCrc::new(crc, &bytes, 2);
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
        let mut spans = SpanCrc::new(c.crc, &record, 0);
        assert!(c.verify_in(&mut spans, 0, 7, 10));
        let over_payload = RecordChecksum { over_header: false, ..c };
        assert!(!over_payload.verify_in(&mut spans, 0, 7, 10));
    }
}
