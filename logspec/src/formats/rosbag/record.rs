//! The record layer of a bag: `u32 header_len, header, u32 data_len, data`, header fields
//! `u32 len, name=value` in any order, and the typed headers of the six op codes.

use std::fmt;

use super::{BagError, Time};

pub const OP_MESSAGE: u8 = 0x02;
pub const OP_BAG_HEADER: u8 = 0x03;
pub const OP_INDEX_DATA: u8 = 0x04;
pub const OP_CHUNK: u8 = 0x05;
pub const OP_CHUNK_INFO: u8 = 0x06;
pub const OP_CONNECTION: u8 = 0x07;

/// The name of an op code, for messages.
pub fn op_name(op: u8) -> &'static str {
    match op {
        OP_MESSAGE => "message data",
        OP_BAG_HEADER => "bag header",
        OP_INDEX_DATA => "index data",
        OP_CHUNK => "chunk",
        OP_CHUNK_INFO => "chunk info",
        OP_CONNECTION => "connection",
        0x01 => "message definition (bag format 1.2)",
        _ => "unknown record",
    }
}

/// The fields of a record header (or of a connection record's data), in file order.
#[derive(Clone, Debug, Default)]
pub struct Fields<'a>(pub Vec<(&'a [u8], &'a [u8])>);

impl<'a> Fields<'a> {
    /// Splits `h` into `name=value` fields. `at` is the absolute offset of `h`, for errors.
    pub fn parse(h: &'a [u8], at: u64) -> Result<Self, BagError> {
        let mut out = Vec::new();
        let mut rest = h;
        while !rest.is_empty() {
            let here = at + (h.len() - rest.len()) as u64;
            let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                return Err(BagError::at(here, format!("header field length: expected 4 bytes, found {}", rest.len())));
            };
            let len = u32::from_le_bytes(*len) as usize;
            if len > tail.len() {
                return Err(BagError::at(
                    here,
                    format!("header field of {len} bytes runs past the end of its header ({} bytes left)", tail.len()),
                ));
            }
            let (field, tail) = tail.split_at(len);
            let Some(eq) = field.iter().position(|b| *b == b'=') else {
                return Err(BagError::at(
                    here,
                    format!("header field without `=`: {:?}", String::from_utf8_lossy(field)),
                ));
            };
            out.push((&field[..eq], &field[eq + 1..]));
            rest = tail;
        }
        Ok(Fields(out))
    }

    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.0.iter().find(|(n, _)| *n == name.as_bytes()).map(|(_, v)| *v)
    }

    /// A required field; `what` names the record for errors.
    pub fn need(&self, name: &str, what: &Ctx) -> Result<&'a [u8], BagError> {
        self.get(name).ok_or_else(|| what.err(format!("missing header field `{name}`")))
    }

    pub fn u32(&self, name: &str, what: &Ctx) -> Result<u32, BagError> {
        let v = self.need(name, what)?;
        v.try_into().map(u32::from_le_bytes).map_err(|_| what.bad(name, "4 bytes", v.len()))
    }

    pub fn u64(&self, name: &str, what: &Ctx) -> Result<u64, BagError> {
        let v = self.need(name, what)?;
        v.try_into().map(u64::from_le_bytes).map_err(|_| what.bad(name, "8 bytes", v.len()))
    }

    pub fn time(&self, name: &str, what: &Ctx) -> Result<Time, BagError> {
        let v = self.need(name, what)?;
        Time::from_bytes(v).ok_or_else(|| what.bad(name, "8 bytes", v.len()))
    }

    pub fn op(&self, what: &Ctx) -> Result<u8, BagError> {
        match self.need("op", what)? {
            [op] => Ok(*op),
            v => Err(what.bad("op", "1 byte", v.len())),
        }
    }

    /// A text field (lossy for invalid UTF-8, which bag writers never produce for these fields).
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name).map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// Where a record is, for errors: its absolute offset, its kind, and the enclosing chunk.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub offset: u64,
    pub op: Option<u8>,
    /// The chunk record's file offset and the record's offset inside the uncompressed chunk.
    pub chunk: Option<(u64, usize)>,
}

impl Ctx {
    pub fn err(&self, m: impl fmt::Display) -> BagError {
        let what = self.op.map(|op| format!("{} record: ", op_name(op))).unwrap_or_default();
        match self.chunk {
            Some((pos, inner)) => BagError::at(pos, format!("in the chunk, at byte {inner} of its data: {what}{m}")),
            None => BagError::at(self.offset, format!("{what}{m}")),
        }
    }

    fn bad(&self, field: &str, expected: &str, found: usize) -> BagError {
        self.err(format!("header field `{field}`: expected {expected}, found {found}"))
    }
}

/// One record of a byte buffer (an uncompressed chunk).
pub struct Record<'a> {
    /// Offset of the record inside the buffer.
    pub offset: usize,
    pub header: &'a [u8],
    pub data: &'a [u8],
}

/// Splits the records of an uncompressed chunk. A record that does not fit ends the walk with an
/// error naming it; every record before it has been handed out.
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    chunk_pos: u64,
}

impl<'a> Records<'a> {
    pub fn new(buf: &'a [u8], chunk_pos: u64) -> Self {
        Records { buf, pos: 0, chunk_pos }
    }
}

impl<'a> Records<'a> {
    /// The error of the record at `self.pos`, which does not fit (the slow path of [`Records::next`]);
    /// ends the walk.
    #[cold]
    #[inline(never)]
    fn fault(&mut self) -> BagError {
        let start = self.pos;
        let ctx = Ctx { offset: self.chunk_pos, op: None, chunk: Some((self.chunk_pos, start)) };
        let mut at = start;
        let mut part = |what: &str| -> Result<(), BagError> {
            let len = self.buf.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
            let len = len
                .ok_or_else(|| ctx.err(format!("{what} length: expected 4 bytes, found {}", self.buf.len() - at)))?
                as usize;
            if self.buf.get(at + 4..at + 4 + len).is_none() {
                return Err(ctx.err(format!(
                    "{what} of {len} bytes runs past the end of the chunk ({} bytes left)",
                    self.buf.len() - at - 4
                )));
            }
            at += 4 + len;
            Ok(())
        };
        let e = part("record header")
            .and_then(|()| part("record data"))
            .err()
            .unwrap_or_else(|| ctx.err("the record does not fit the chunk"));
        self.pos = self.buf.len();
        e
    }
}

/// The header, data and end of the record at `at` of `buf`, when it fits.
#[inline(always)]
fn split_record(buf: &[u8], at: usize) -> Option<(&[u8], &[u8], usize)> {
    let len = |at: usize| -> Option<usize> {
        let b: [u8; 4] = buf.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(u32::from_le_bytes(b) as usize)
    };
    let h0 = at.checked_add(4)?;
    let h1 = h0.checked_add(len(at)?)?;
    let header = buf.get(h0..h1)?;
    let d0 = h1.checked_add(4)?;
    let d1 = d0.checked_add(len(h1)?)?;
    let data = buf.get(d0..d1)?;
    Some((header, data, d1))
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, BagError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        match split_record(self.buf, self.pos) {
            Some((header, data, next)) => {
                let rec = Record { offset: self.pos, header, data };
                self.pos = next;
                Some(Ok(rec))
            }
            None => Some(Err(self.fault())),
        }
    }
}

/// The `conn` and `time` of a message data record, read straight from its header without
/// building the field list (the hot path of every dump); `None` for a record of another op.
#[inline(always)]
pub fn message_header(h: &[u8], ctx: &Ctx) -> Result<Option<(u32, Time)>, BagError> {
    let (mut op, mut conn, mut time) = (None, None, None);
    let mut rest = h;
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let Some(field) = tail.get(..len) else { break };
        match field {
            [b'o', b'p', b'=', v] => op = Some(*v),
            [b'c', b'o', b'n', b'n', b'=', v @ ..] => conn = v.try_into().ok().map(u32::from_le_bytes),
            [b't', b'i', b'm', b'e', b'=', v @ ..] => time = Time::from_bytes(v),
            _ => {}
        }
        rest = &tail[len..];
    }
    match (op, conn, time) {
        (Some(OP_MESSAGE), Some(c), Some(t)) if rest.is_empty() => Ok(Some((c, t))),
        (Some(op), _, _) if op != OP_MESSAGE && rest.is_empty() => Ok(None),
        _ => message_header_slow(h, ctx),
    }
}

/// [`message_header`] by the full parse, for a precise message (or a header whose fields repeat).
#[cold]
#[inline(never)]
fn message_header_slow(h: &[u8], ctx: &Ctx) -> Result<Option<(u32, Time)>, BagError> {
    let f = Fields::parse(h, ctx.offset)?;
    let ctx = Ctx { op: Some(f.op(ctx)?), ..*ctx };
    if ctx.op != Some(OP_MESSAGE) {
        return Ok(None);
    }
    Ok(Some((f.u32("conn", &ctx)?, f.time("time", &ctx)?)))
}

/// The size of one entry of an index data record's data: `time` (8 bytes), `offset: u32`.
pub const INDEX_ENTRY: usize = 12;

/// Entry `e` of an index data record's data (version 1): the record time and the offset of a
/// message record of one connection inside the uncompressed chunk; `None` past the last whole
/// entry (the caller checks the length against `count`).
#[inline(always)]
pub fn index_entry(data: &[u8], e: usize) -> Option<(Time, u32)> {
    let entry = data.get(e.checked_mul(INDEX_ENTRY)?..)?.get(..INDEX_ENTRY)?;
    let (t, off) = entry.split_at(8);
    Some((Time::from_bytes(t)?, u32::from_le_bytes(off.try_into().ok()?)))
}

/// The `ver`, `conn` and `count` of an index data record's header, read straight from it
/// without building the field list: `None` unless the header splits into fields as
/// [`Fields::parse`] splits it, its `op` is [`OP_INDEX_DATA`] and the three are 4 bytes each
/// (the first of a repeated field counts, as for [`Fields::get`]).
pub fn index_data_header(h: &[u8]) -> Option<(u32, u32, u32)> {
    let (mut op, mut ver, mut conn, mut count) = (None, None, None, None);
    let mut rest = h;
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let field = tail.get(..len)?;
        let eq = field.iter().position(|b| *b == b'=')?;
        let (name, value) = (&field[..eq], &field[eq + 1..]);
        let slot = match name {
            b"op" => &mut op,
            b"ver" => &mut ver,
            b"conn" => &mut conn,
            b"count" => &mut count,
            _ => {
                rest = &tail[len..];
                continue;
            }
        };
        slot.get_or_insert(value);
        rest = &tail[len..];
    }
    if !rest.is_empty() || op? != [OP_INDEX_DATA] {
        return None;
    }
    let u32_of = |v: Option<&[u8]>| v?.try_into().ok().map(u32::from_le_bytes);
    Some((u32_of(ver)?, u32_of(conn)?, u32_of(count)?))
}
