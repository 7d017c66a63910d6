//! Record integrity: the per-record CRC a framing can declare (`[framing] checksum`) and the
//! search for the next good record after a corrupted region (`[framing] sync`). Both are used by
//! the runtime's framed reader and by the IR interpreter, and [`resync`] by any front end whose
//! format re-synchronises on header bytes (DataFlash's `A3 95`). No allocation, no `std`.

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

/// Searches `bytes` from offset `from` for the start of the next good record: an offset where
/// `sync` (the bytes that begin every record; empty for none, when every offset is tried)
/// begins and where `check`, given the bytes from there, says a record checks out (`Some(true)`),
/// does not (`Some(false)`), or needs more bytes than `bytes` holds to tell (`None`, which stops
/// the search there). Runs in time linear in the bytes passed over times the cost of `check`.
pub fn resync(bytes: &[u8], from: usize, sync: &[u8], mut check: impl FnMut(&[u8]) -> Option<bool>) -> Resync {
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
        match check(&bytes[k..]) {
            Some(true) => return Resync::Found(k),
            Some(false) => k += 1,
            None => return Resync::More(k),
        }
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
        assert_eq!(resync(&bytes, 0, &[0xA3, 0x95], check), Resync::Found(6));
        // After it, only a cut pattern: more bytes are needed from its start.
        assert_eq!(resync(&bytes, 7, &[0xA3, 0x95], check), Resync::More(10));
        // Without a sync, every offset is tried.
        assert_eq!(resync(&[9, 9, 1, 7], 0, &[], |b: &[u8]| Some(b[0] == 1)), Resync::Found(2));
        assert_eq!(resync(&[9, 9], 0, &[], |_: &[u8]| Some(false)), Resync::More(2));
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
}
