//! The traits that generated and derived types implement, and their implementations for the
//! built-in types.

use crate::cursor::{Cursor, Sink};
use crate::error::{DecodeError, EncodeError};
use crate::visit::{Visit, Visitor};

/// Byte order of a multi-byte number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    Little,
    Big,
}

/// A type whose every value encodes to exactly [`Fixed::SIZE`] bytes.
///
/// `order` is the byte order of the field that holds the value; it matters for enums and flags,
/// which take their field's byte order, and is ignored by structs, which have their own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no fixed wire size",
    label = "this type does not implement `Fixed`",
    note = "derive `Record` on `{Self}` with only fixed-size fields, or mark the field `#[record(variable)]`"
)]
pub trait Fixed: Sized {
    const SIZE: usize;
    /// Decodes from the first `SIZE` bytes of `b`.
    fn decode_fixed(b: &[u8], order: Endian) -> Result<Self, DecodeError>;
    /// Encodes into the first `SIZE` bytes of `out`. Panics if `out` is shorter: that is a bug in
    /// the caller, not bad input.
    fn encode_fixed(&self, out: &mut [u8], order: Endian);
}

/// Decoding from a cursor, for every type (fixed or not).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded by logspec",
    label = "`{Self}` does not implement `Decode`",
    note = "add `#[derive(logspec::Record)]` to `{Self}`, or describe it in a schema"
)]
pub trait Decode: Sized {
    fn decode(c: &mut Cursor<'_>, order: Endian) -> Result<Self, DecodeError>;

    /// Decodes a whole buffer, which must hold exactly one value.
    fn decode_exact(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut c = Cursor::new(bytes);
        let v = Self::decode(&mut c, Endian::Little)?;
        if c.is_empty() {
            Ok(v)
        } else {
            Err(DecodeError::new(crate::DecodeErrorKind::TrailingBytes { extra: c.remaining() as u64 })
                .at(c.position()))
        }
    }
}

/// Encoding to a sink, for every type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be encoded by logspec",
    label = "`{Self}` does not implement `Encode`",
    note = "add `#[derive(logspec::Record)]` to `{Self}`, or describe it in a schema"
)]
pub trait Encode {
    /// The number of bytes [`Encode::encode`] writes.
    fn encoded_len(&self) -> usize;
    fn encode<S: Sink + ?Sized>(&self, out: &mut S, order: Endian) -> Result<(), EncodeError>;

    /// Encodes into a new vector.
    #[cfg(feature = "alloc")]
    fn to_bytes(&self) -> Result<alloc::vec::Vec<u8>, EncodeError> {
        let mut v = alloc::vec::Vec::with_capacity(self.encoded_len());
        self.encode(&mut v, Endian::Little)?;
        Ok(v)
    }
}

/// A record type of a format: a payload struct with an id.
pub trait Record {
    /// The record's contract name, e.g. `REC_NAV_SOLUTION`.
    const NAME: &'static str;
    /// The tag value that announces it in the record stream.
    const ID: u64;
    /// The layout fingerprint (see the schema-language reference).
    const FINGERPRINT: u64;
}

/// A tagged union: its variant is chosen by a tag stored in an earlier field of the enclosing
/// struct, so it cannot decode on its own.
pub trait Union: Sized {
    /// The tag value of this variant.
    fn tag(&self) -> i128;
    fn decode_variant(tag: i128, c: &mut Cursor<'_>) -> Result<Self, DecodeError>;
    fn encode_variant<S: Sink + ?Sized>(&self, out: &mut S) -> Result<(), EncodeError>;
    fn variant_len(&self) -> usize;
}

macro_rules! prim {
    ($($t:ty => $visit:ident as $as:ty),* $(,)?) => {$(
        impl Fixed for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn decode_fixed(b: &[u8], order: Endian) -> Result<Self, DecodeError> {
                match b.first_chunk::<{ core::mem::size_of::<$t>() }>() {
                    Some(a) => Ok(match order {
                        Endian::Little => <$t>::from_le_bytes(*a),
                        Endian::Big => <$t>::from_be_bytes(*a),
                    }),
                    None => Err(DecodeError::eof(Self::SIZE, b.len())),
                }
            }
            #[inline(always)]
            fn encode_fixed(&self, out: &mut [u8], order: Endian) {
                let bytes = match order {
                    Endian::Little => self.to_le_bytes(),
                    Endian::Big => self.to_be_bytes(),
                };
                out[..Self::SIZE].copy_from_slice(&bytes);
            }
        }
        impl Visit for $t {
            #[inline]
            fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
                v.$visit(name, *self as $as);
            }
        }
    )*};
}

prim! {
    u8 => uint as u64, u16 => uint as u64, u32 => uint as u64, u64 => uint as u64,
    i8 => int as i64, i16 => int as i64, i32 => int as i64, i64 => int as i64,
    f32 => f32 as f32, f64 => f64 as f64,
}

impl Fixed for bool {
    const SIZE: usize = 1;
    #[inline(always)]
    fn decode_fixed(b: &[u8], _order: Endian) -> Result<Self, DecodeError> {
        match b.first() {
            Some(x) => Ok(*x != 0),
            None => Err(DecodeError::eof(1, 0)),
        }
    }
    #[inline(always)]
    fn encode_fixed(&self, out: &mut [u8], _order: Endian) {
        out[0] = u8::from(*self);
    }
}

impl Visit for bool {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.bool(name, *self);
    }
}

impl<T: Fixed, const N: usize> Fixed for [T; N] {
    const SIZE: usize = T::SIZE * N;
    #[inline]
    fn decode_fixed(b: &[u8], order: Endian) -> Result<Self, DecodeError> {
        if b.len() < Self::SIZE {
            return Err(DecodeError::eof(Self::SIZE, b.len()));
        }
        crate::__private::try_array(|i| T::decode_fixed(&b[i * T::SIZE..], order).map_err(|e| e.at(i * T::SIZE)))
    }
    #[inline]
    fn encode_fixed(&self, out: &mut [u8], order: Endian) {
        for (i, x) in self.iter().enumerate() {
            x.encode_fixed(&mut out[i * T::SIZE..], order);
        }
    }
}

impl<T: Visit, const N: usize> Visit for [T; N] {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.begin_array(name, N);
        if v.elements() {
            for x in self {
                x.visit(None, v);
            }
        }
        v.end_array();
    }
}

#[cfg(feature = "alloc")]
impl<T: Visit> Visit for alloc::vec::Vec<T> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.begin_array(name, self.len());
        if v.elements() {
            for x in self {
                x.visit(None, v);
            }
        }
        v.end_array();
    }
}

#[cfg(feature = "alloc")]
impl Visit for alloc::string::String {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.str(name, self);
    }
}

/// Every fixed type decodes and encodes through a cursor too.
macro_rules! via_fixed {
    ($($t:ty),*) => {$(
        impl Decode for $t {
            #[inline(always)]
            fn decode(c: &mut Cursor<'_>, order: Endian) -> Result<Self, DecodeError> {
                let at = c.position();
                let b = c.take(<$t as Fixed>::SIZE)?;
                <$t as Fixed>::decode_fixed(b, order).map_err(|e| e.at(at))
            }
        }
        impl Encode for $t {
            #[inline(always)]
            fn encoded_len(&self) -> usize {
                <$t as Fixed>::SIZE
            }
            #[inline(always)]
            fn encode<S: Sink + ?Sized>(&self, out: &mut S, order: Endian) -> Result<(), EncodeError> {
                let mut b = [0u8; <$t as Fixed>::SIZE];
                self.encode_fixed(&mut b, order);
                out.put(&b);
                Ok(())
            }
        }
    )*};
}

via_fixed!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, bool);

impl<T: Fixed, const N: usize> Decode for [T; N] {
    #[inline]
    fn decode(c: &mut Cursor<'_>, order: Endian) -> Result<Self, DecodeError> {
        let at = c.position();
        let b = c.take(Self::SIZE)?;
        Self::decode_fixed(b, order).map_err(|e| e.at(at))
    }
}

impl<T: Fixed + Encode, const N: usize> Encode for [T; N] {
    fn encoded_len(&self) -> usize {
        Self::SIZE
    }
    fn encode<S: Sink + ?Sized>(&self, out: &mut S, order: Endian) -> Result<(), EncodeError> {
        for x in self {
            x.encode(out, order)?;
        }
        Ok(())
    }
}

/// A NUL-padded fixed-size character field (`string[N]` in a schema, `char name[N]` in C).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedStr<const N: usize>(pub [u8; N]);

impl<const N: usize> FixedStr<N> {
    /// The bytes up to the first NUL.
    pub fn as_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|b| *b == 0).unwrap_or(N);
        &self.0[..end]
    }

    /// The text up to the first NUL, if it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        core::str::from_utf8(self.as_bytes()).ok()
    }

    /// Copies `s` in, NUL-padded; `None` if it is longer than `N` bytes.
    pub fn new(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() > N {
            return None;
        }
        let mut a = [0u8; N];
        a[..b.len()].copy_from_slice(b);
        Some(FixedStr(a))
    }
}

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        FixedStr([0; N])
    }
}

impl<const N: usize> core::fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.as_str() {
            Some(s) => core::fmt::Debug::fmt(s, f),
            None => core::fmt::Debug::fmt(self.as_bytes(), f),
        }
    }
}

impl<const N: usize> Fixed for FixedStr<N> {
    const SIZE: usize = N;
    fn decode_fixed(b: &[u8], _order: Endian) -> Result<Self, DecodeError> {
        match b.first_chunk::<N>() {
            Some(a) => Ok(FixedStr(*a)),
            None => Err(DecodeError::eof(N, b.len())),
        }
    }
    fn encode_fixed(&self, out: &mut [u8], _order: Endian) {
        out[..N].copy_from_slice(&self.0);
    }
}

impl<const N: usize> Visit for FixedStr<N> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        match self.as_str() {
            Some(s) => v.str(name, s),
            None => v.bytes(name, self.as_bytes()),
        }
    }
}

/// `()` stands for "no file header" in formats that have none.
impl Decode for () {
    fn decode(_c: &mut Cursor<'_>, _order: Endian) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl Encode for () {
    fn encoded_len(&self) -> usize {
        0
    }
    fn encode<S: Sink + ?Sized>(&self, _out: &mut S, _order: Endian) -> Result<(), EncodeError> {
        Ok(())
    }
}

impl Visit for () {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.begin_struct(name);
        v.end_struct();
    }
}
