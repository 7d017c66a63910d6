//! Files of the test schema with a sync and a CRC (`codegen/tests/schemas/checked.toml`), built
//! byte by byte with a CRC-32C of their own, independent of every reader and writer under test.

/// The schema, from the repository root.
pub const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/checked.toml");

/// CRC-32C bit by bit (reflected polynomial 0x82F63B78), independent of the runtime's tables.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82F6_3B78 } else { c >> 1 };
        }
    }
    !c
}

/// The file header: `CHKD`, schema id 1, two bytes of padding.
pub fn file_header() -> Vec<u8> {
    b"CHKD\x01\x00\x00\x00".to_vec()
}

/// One record as the schema says it: `A3 95`, kind, length (u16 le), t_us (u32 le), then the
/// CRC-32C (u32 le) of those 9 bytes and the payload, then the payload.
pub fn record(kind: u8, t_us: u32, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0xA3, 0x95, kind];
    h.extend((payload.len() as u16).to_le_bytes());
    h.extend(t_us.to_le_bytes());
    let mut covered = h.clone();
    covered.extend(payload);
    h.extend(crc32c(&covered).to_le_bytes());
    h.extend(payload);
    h
}

pub fn sample(value: f32, count: u16) -> Vec<u8> {
    let mut p = value.to_le_bytes().to_vec();
    p.extend(count.to_le_bytes());
    p
}

/// A file of `n` samples (t_us = 100 i, value = i, count = i), and the offset of each record.
pub fn file(n: u16) -> (Vec<u8>, Vec<usize>) {
    let mut out = file_header();
    let mut at = Vec::new();
    for i in 0..n {
        at.push(out.len());
        out.extend(record(1, 100 * u32::from(i), &sample(f32::from(i), i)));
    }
    (out, at)
}
