//! R1 messages decoded in place: values borrowed from the reader's buffer ([`R1ValueRef`]), so
//! that doubles, strings and arrays are decoded without allocating or copying.
//!
//! This is the one place outside the generated code that knows the R1 message layout, for speed
//! (a double value taken with one length check, no intermediate enums, no large `Result`s). It accepts exactly what the
//! generated `R1Message` decoder accepts and decodes it to the same values: whatever it does not
//! take (a message cut by the end of the buffer, or one that does not decode) goes to the
//! generated decoder, which refills or reports the error. `tests/rlog.rs` holds the two to each
//! other on every sample file and on corrupted and truncated copies of them.

use std::fmt;
use std::marker::PhantomData;

use super::{R1Value, Utf8U16};

/// An element of a big-endian array decoded lazily from its bytes.
pub trait BeElement: Copy + 'static {
    /// Bytes per element.
    const SIZE: usize;
    /// Decodes one element from exactly `SIZE` bytes.
    fn from_be(b: &[u8]) -> Self;
}

impl BeElement for bool {
    const SIZE: usize = 1;
    #[inline(always)]
    fn from_be(b: &[u8]) -> Self {
        b[0] != 0
    }
}

impl BeElement for i32 {
    const SIZE: usize = 4;
    #[inline(always)]
    fn from_be(b: &[u8]) -> Self {
        i32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl BeElement for f64 {
    const SIZE: usize = 8;
    #[inline(always)]
    fn from_be(b: &[u8]) -> Self {
        f64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

/// A big-endian array borrowed from the input: its elements are decoded as they are read.
#[derive(Clone, Copy)]
pub struct BeArray<'a, T> {
    bytes: &'a [u8],
    _elem: PhantomData<T>,
}

impl<'a, T: BeElement> BeArray<'a, T> {
    /// `bytes.len()` must be a multiple of `T::SIZE` (extra bytes are ignored).
    #[inline(always)]
    fn new(bytes: &'a [u8]) -> Self {
        BeArray { bytes, _elem: PhantomData }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / T::SIZE
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        self.bytes.get(i * T::SIZE..(i + 1) * T::SIZE).map(T::from_be)
    }

    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + 'a {
        self.bytes.chunks_exact(T::SIZE).map(T::from_be)
    }

    /// The elements' bytes as they are in the input (big-endian).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

impl<T: BeElement + fmt::Debug> fmt::Debug for BeArray<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: BeElement + PartialEq> PartialEq for BeArray<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// An R1 string array borrowed from the input (`u16` length and UTF-8 bytes per string),
/// checked when its message was decoded.
#[derive(Clone, Copy, PartialEq)]
pub struct StrArray<'a> {
    bytes: &'a [u8],
    len: usize,
}

impl<'a> StrArray<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn iter(&self) -> StrIter<'a> {
        StrIter { rest: self.bytes, left: self.len }
    }

    pub fn to_vec(&self) -> Vec<Utf8U16> {
        self.iter().map(|s| Utf8U16 { text: s.to_owned() }).collect()
    }
}

impl fmt::Debug for StrArray<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The strings of a [`StrArray`].
#[derive(Clone, Debug)]
pub struct StrIter<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for StrIter<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (n, rest) = self.rest.split_first_chunk::<2>()?;
        let (s, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes(*n)))?;
        self.rest = rest;
        // Checked when the message was decoded; a string that were not UTF-8 would not be here.
        std::str::from_utf8(s).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for StrIter<'_> {}

/// An R1 value borrowed from the input: [`R1Value`] without allocation. Arrays are decoded as
/// they are iterated; strings are checked UTF-8.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum R1ValueRef<'a> {
    /// The key was removed this cycle (v1.x only).
    Null,
    Boolean {
        value: bool,
    },
    BooleanArray {
        value: BeArray<'a, bool>,
    },
    Integer {
        value: i32,
    },
    IntegerArray {
        value: BeArray<'a, i32>,
    },
    Double {
        value: f64,
    },
    DoubleArray {
        value: BeArray<'a, f64>,
    },
    String {
        value: &'a str,
    },
    StringArray {
        value: StrArray<'a>,
    },
    Byte {
        value: u8,
    },
    ByteArray {
        value: &'a [u8],
    },
}

impl R1ValueRef<'_> {
    /// The owned value.
    #[inline]
    pub fn to_value(&self) -> R1Value {
        match *self {
            R1ValueRef::Null => R1Value::Null {},
            R1ValueRef::Boolean { value } => R1Value::Boolean { value },
            R1ValueRef::BooleanArray { value } => R1Value::BooleanArray { value: value.to_vec() },
            R1ValueRef::Integer { value } => R1Value::Integer { value },
            R1ValueRef::IntegerArray { value } => R1Value::IntegerArray { value: value.to_vec() },
            R1ValueRef::Double { value } => R1Value::Double { value },
            R1ValueRef::DoubleArray { value } => R1Value::DoubleArray { value: value.to_vec() },
            R1ValueRef::String { value } => R1Value::String { value: value.to_owned() },
            R1ValueRef::StringArray { value } => R1Value::StringArray { value: value.to_vec() },
            R1ValueRef::Byte { value } => R1Value::Byte { value },
            R1ValueRef::ByteArray { value } => R1Value::ByteArray { value: value.to_vec() },
        }
    }

    /// The value code's name, as [`super::r1_type_name`].
    pub fn type_name(&self) -> &'static str {
        match self {
            R1ValueRef::Null => "null",
            R1ValueRef::Boolean { .. } => "boolean",
            R1ValueRef::BooleanArray { .. } => "boolean[]",
            R1ValueRef::Integer { .. } => "int",
            R1ValueRef::IntegerArray { .. } => "int[]",
            R1ValueRef::Double { .. } => "double",
            R1ValueRef::DoubleArray { .. } => "double[]",
            R1ValueRef::String { .. } => "string",
            R1ValueRef::StringArray { .. } => "string[]",
            R1ValueRef::Byte { .. } => "byte",
            R1ValueRef::ByteArray { .. } => "byte[]",
        }
    }
}

/// A decoded R1 message, holding no borrow (plain scalars, so that it stays in registers):
/// variable-length values are at a known place in the message's bytes, which [`value`] borrows
/// them from.
#[derive(Clone, Copy, Debug)]
pub(super) struct Msg {
    /// The message's length in bytes.
    pub len: usize,
    /// The timestamp's bits (kind 0); a fixed-size value's bytes, big-endian, right-aligned, or
    /// the element count of a string array (kind 2).
    pub bits: u64,
    pub key_id: i16,
    /// The message kind: 0 timestamp, 1 key definition (the key's name is `bytes[KEY_START..]`,
    /// checked UTF-8), 2 value.
    pub kind: u8,
    /// The R1 value code (kind 2).
    pub code: u8,
}

/// Kind, key id, key length: the key's bytes follow.
pub(super) const KEY_START: usize = 5;
/// Kind, key id, value code, element count or byte length: the elements follow.
const VAR_START: usize = 6;

/// A double value message: kind 2, key id, value code 5, the double.
pub(super) const DOUBLE_LEN: usize = 12;

/// A double value.
#[derive(Clone, Copy, Debug)]
pub(super) struct Double {
    pub key_id: i16,
    pub value: f64,
}

/// Decodes the message at the start of `b` if it is a double value: most are, and one length
/// check and two byte compares take them.
#[inline(always)]
pub(super) fn double(b: &[u8]) -> Option<Double> {
    let h = b.first_chunk::<DOUBLE_LEN>()?;
    if h[0] != 2 || h[3] != 5 {
        return None;
    }
    let value = f64::from_be_bytes([h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11]]);
    Some(Double { key_id: i16::from_be_bytes([h[1], h[2]]), value })
}

/// Decodes the R1 message at the start of `b`, or returns `None` when `b` does not hold a whole
/// message or the message does not decode (the generated decoder then tells which, and where).
#[inline(always)]
pub(super) fn decode(b: &[u8]) -> Option<Msg> {
    let (&kind, _) = b.split_first()?;
    match kind {
        2 => {
            let h = b.first_chunk::<4>()?;
            let key_id = i16::from_be_bytes([h[1], h[2]]);
            let code = h[3];
            let (bits, len) = match code {
                5 => (u64::from_be_bytes(*b.get(4..)?.first_chunk::<8>()?), 12),
                0 => (0, 4),
                1 | 9 => (u64::from(*b.get(4)?), 5),
                3 => (u64::from(u32::from_be_bytes(*b.get(4..)?.first_chunk::<4>()?)), 8),
                _ => return variable(b, key_id, code),
            };
            Some(Msg { len, bits, key_id, kind, code })
        }
        0 => {
            let bits = u64::from_be_bytes(*b.get(1..)?.first_chunk::<8>()?);
            Some(Msg { len: 9, bits, key_id: 0, kind, code: 0 })
        }
        1 => {
            let h = b.first_chunk::<KEY_START>()?;
            let key_id = i16::from_be_bytes([h[1], h[2]]);
            let len = KEY_START + usize::from(u16::from_be_bytes([h[3], h[4]]));
            std::str::from_utf8(b.get(KEY_START..len)?).ok()?;
            Some(Msg { len, bits: 0, key_id, kind, code: 0 })
        }
        _ => None,
    }
}

/// A value with a `u16` element count or byte length.
#[inline(never)]
fn variable(b: &[u8], key_id: i16, code: u8) -> Option<Msg> {
    let h = b.first_chunk::<VAR_START>()?;
    let n = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let len = match code {
        2 | 10 => VAR_START + n,
        4 => VAR_START + 4 * n,
        6 => VAR_START + 8 * n,
        7 => {
            std::str::from_utf8(b.get(VAR_START..VAR_START + n)?).ok()?;
            VAR_START + n
        }
        8 => {
            let mut at = VAR_START;
            for _ in 0..n {
                let l = usize::from(u16::from_be_bytes(*b.get(at..)?.first_chunk::<2>()?));
                std::str::from_utf8(b.get(at + 2..at + 2 + l)?).ok()?;
                at += 2 + l;
            }
            at
        }
        _ => return None,
    };
    if b.len() < len {
        return None;
    }
    Some(Msg { len, bits: n as u64, key_id, kind: 2, code })
}

/// The value of a field message `m` whose bytes (exactly) are `bytes`.
#[inline(always)]
pub(super) fn value(m: Msg, bytes: &[u8]) -> R1ValueRef<'_> {
    let var = bytes.get(VAR_START..).unwrap_or_default();
    match m.code {
        5 => R1ValueRef::Double { value: f64::from_bits(m.bits) },
        0 => R1ValueRef::Null,
        1 => R1ValueRef::Boolean { value: m.bits != 0 },
        3 => R1ValueRef::Integer { value: m.bits as u32 as i32 },
        9 => R1ValueRef::Byte { value: m.bits as u8 },
        2 => R1ValueRef::BooleanArray { value: BeArray::new(var) },
        4 => R1ValueRef::IntegerArray { value: BeArray::new(var) },
        6 => R1ValueRef::DoubleArray { value: BeArray::new(var) },
        // Checked by `decode`.
        7 => R1ValueRef::String { value: std::str::from_utf8(var).unwrap_or_default() },
        8 => R1ValueRef::StringArray { value: StrArray { bytes: var, len: m.bits as usize } },
        _ => R1ValueRef::ByteArray { value: var },
    }
}
