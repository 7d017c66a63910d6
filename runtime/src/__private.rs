//! Helpers for generated code. Not a public API: names and signatures may change at any time.

use crate::cursor::Cursor;
use crate::error::DecodeError;
#[cfg(feature = "alloc")]
use crate::error::DecodeErrorKind;

/// `N` bytes of `b` starting at `off`. Generated code only calls it with constant offsets inside
/// an array whose length it has already checked, so the slice indexing compiles away.
#[inline(always)]
pub fn sub<const N: usize>(b: &[u8], off: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[off..off + N]);
    a
}

/// A reference to the `N` bytes of `b` at `off`. Generated code calls it with constant offsets
/// inside bytes whose length it has checked, so the error never happens and the check compiles
/// away.
#[inline(always)]
pub fn sub_ref<const N: usize>(b: &[u8], off: usize) -> Result<&[u8; N], DecodeError> {
    match b.get(off..).and_then(|r| r.first_chunk::<N>()) {
        Some(a) => Ok(a),
        None => Err(DecodeError::eof(N, b.len().saturating_sub(off)).at(off)),
    }
}

/// Takes `len` bytes from the cursor if they are all there, without making an error when they
/// are not: the counted tail of a view's one-check path, whose caller then falls through to the
/// field-by-field decoder (which reports the cut).
#[inline(always)]
pub fn take_len<'a>(c: &mut Cursor<'a>, len: u64) -> Option<&'a [u8]> {
    let n = usize::try_from(len).ok()?;
    if n <= c.remaining() {
        c.take(n).ok()
    } else {
        None
    }
}

/// Builds an array from a fallible element constructor, stopping at the first error.
#[inline]
pub fn try_array<T, E, const N: usize>(mut f: impl FnMut(usize) -> Result<T, E>) -> Result<[T; N], E> {
    let mut err = None;
    let arr: [Option<T>; N] = core::array::from_fn(|i| {
        if err.is_some() {
            return None;
        }
        match f(i) {
            Ok(x) => Some(x),
            Err(e) => {
                err = Some(e);
                None
            }
        }
    });
    match err {
        Some(e) => Err(e),
        // Every element is `Some` when no error was recorded.
        None => Ok(arr.map(|x| x.unwrap_or_else(|| unreachable!()))),
    }
}

/// Reads an unsigned length prefix of `W` bytes.
#[inline(always)]
pub fn prefix<const W: usize>(c: &mut Cursor<'_>, big: bool) -> Result<u64, DecodeError> {
    let a = c.array::<W>()?;
    let mut v: u64 = 0;
    for i in 0..W {
        let byte = if big { a[i] } else { a[W - 1 - i] };
        v = (v << 8) | u64::from(byte);
    }
    Ok(v)
}

/// The byte count that bits `lo..lo + bits` of a width field announce: their value plus one.
#[inline]
pub fn width(w: u64, lo: u32, bits: u32) -> usize {
    ((w >> lo) & ((1u64 << bits) - 1)) as usize + 1
}

/// The fewest bytes (at least one) that hold `v`: what a writer announces for a variable-width
/// integer.
#[inline]
pub fn min_bytes(v: u64) -> u64 {
    u64::from((64 - v.leading_zeros()).div_ceil(8).max(1))
}

/// Reads an `n`-byte unsigned integer (`n` at most 8, as the front end checks), zero-extended.
#[inline(always)]
pub fn var_uint(c: &mut Cursor<'_>, n: usize, big: bool) -> Result<u64, DecodeError> {
    // With 8 bytes at hand, one unaligned load and a mask instead of a byte loop.
    if let (false, Some(eight)) = (big, c.rest().first_chunk::<8>()) {
        let v = u64::from_le_bytes(*eight);
        let v = if n >= 8 { v } else { v & ((1u64 << (8 * n)) - 1) };
        c.take(n)?;
        return Ok(v);
    }
    let b = c.take(n)?;
    let mut v: u64 = 0;
    for i in 0..b.len() {
        let byte = if big { b[i] } else { b[b.len() - 1 - i] };
        v = (v << 8) | u64::from(byte);
    }
    Ok(v)
}

/// Reads an `n`-byte unsigned integer (`n` from 1 to 8) at `off` of `b`, where 8 bytes are at
/// hand: one unaligned load, then a shift or a mask. The fast path of variable-width headers.
#[inline(always)]
pub fn var_uint_at<const N: usize>(b: &[u8; N], off: usize, n: usize, big: bool) -> u64 {
    let eight = sub::<8>(b, off);
    let drop = 64 - 8 * (n.clamp(1, 8) as u32);
    if big {
        u64::from_be_bytes(eight) >> drop
    } else {
        u64::from_le_bytes(eight) & (u64::MAX >> drop)
    }
}

/// Writes `v` as an `n`-byte unsigned integer, failing when it does not fit.
#[inline]
pub fn put_var_uint<S: crate::Sink + ?Sized>(
    out: &mut S,
    v: u64,
    n: usize,
    big: bool,
    field: &'static str,
) -> Result<(), crate::EncodeError> {
    if n < 8 && v >> (8 * n) != 0 {
        return Err(crate::EncodeError::TooWide { field, value: v, bytes: n as u8 });
    }
    let mut a = [0u8; 8];
    for (i, slot) in a.iter_mut().enumerate().take(n) {
        *slot = (v >> (8 * if big { n - 1 - i } else { i })) as u8;
    }
    out.put(&a[..n]);
    Ok(())
}

/// Converts a length read from the input to `usize`, failing (not truncating) where it cannot be.
#[inline]
pub fn len(n: u64, c: &Cursor<'_>) -> Result<usize, DecodeError> {
    usize::try_from(n).map_err(|_| DecodeError::eof(usize::MAX, c.remaining()).at(c.position()))
}

#[cfg(feature = "alloc")]
pub use alloc_helpers::*;

#[cfg(feature = "alloc")]
mod alloc_helpers {
    use super::*;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// Decodes `n` elements. The capacity reserved up front is bounded by what the remaining input
    /// can hold (`min_size` bytes per element at least), so a corrupt count cannot make us
    /// allocate more than the input justifies.
    #[inline]
    pub fn vec<T>(
        c: &mut Cursor<'_>,
        n: usize,
        min_size: usize,
        mut f: impl FnMut(&mut Cursor<'_>) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let bound = c.remaining().checked_div(min_size).unwrap_or(n.min(4096));
        let mut v = Vec::with_capacity(n.min(bound));
        for _ in 0..n {
            v.push(f(c)?);
        }
        Ok(v)
    }

    /// Decodes elements until the cursor is empty (byte-length-prefixed and rest-of-payload arrays).
    #[inline]
    pub fn vec_to_end<T>(
        mut c: Cursor<'_>,
        elem_size: Option<usize>,
        mut f: impl FnMut(&mut Cursor<'_>) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        if let Some(es) = elem_size {
            if es > 0 && c.remaining() % es != 0 {
                return Err(DecodeError::new(DecodeErrorKind::RaggedLength {
                    size: c.remaining() as u64,
                    element: es as u64,
                })
                .at(c.position()));
            }
        }
        let mut v = Vec::with_capacity(elem_size.filter(|s| *s > 0).map_or(0, |s| c.remaining() / s));
        while !c.is_empty() {
            v.push(f(&mut c)?);
        }
        Ok(v)
    }

    /// Decodes UTF-8 text.
    #[inline]
    pub fn string(b: &[u8], at: usize) -> Result<String, DecodeError> {
        match core::str::from_utf8(b) {
            Ok(s) => Ok(String::from(s)),
            Err(e) => {
                Err(DecodeError::new(DecodeErrorKind::InvalidUtf8 { valid_up_to: e.valid_up_to() as u64 }).at(at))
            }
        }
    }
}

/// Writes an unsigned length prefix of `W` bytes, failing if `n` does not fit.
#[inline]
pub fn put_prefix<S: crate::Sink + ?Sized, const W: usize>(
    out: &mut S,
    n: usize,
    big: bool,
    field: &'static str,
) -> Result<(), crate::EncodeError> {
    let max: u64 = if W >= 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    if n as u64 > max {
        return Err(crate::EncodeError::TooLong { field, len: n as u64, max });
    }
    let mut a = [0u8; W];
    for i in 0..W {
        let byte = ((n as u64) >> (8 * i)) as u8;
        if big {
            a[W - 1 - i] = byte;
        } else {
            a[i] = byte;
        }
    }
    out.put(&a);
    Ok(())
}

#[cfg(feature = "alloc")]
pub use alloc::{string::String, vec::Vec};

/// Decodes a record payload of a fixed-layout type: the payload must be exactly `T::SIZE` bytes.
#[inline(always)]
pub fn payload_fixed<T: crate::Fixed>(payload: &[u8], name: &'static str) -> Result<T, DecodeError> {
    if payload.len() == T::SIZE {
        T::decode_fixed(payload, crate::Endian::Little).map_err(|e| e.in_type(name))
    } else {
        Err(length_mismatch(payload.len(), T::SIZE, name))
    }
}

#[cold]
fn length_mismatch(len: usize, size: usize, name: &'static str) -> DecodeError {
    if len < size {
        DecodeError::eof(size, len).in_type(name)
    } else {
        DecodeError::new(crate::DecodeErrorKind::TrailingBytes { extra: (len - size) as u64 }).at(size).in_type(name)
    }
}

/// Decodes a record payload of a variable-layout type, which must use the whole payload.
#[inline]
pub fn payload_var<T: crate::Decode>(payload: &[u8], name: &'static str) -> Result<T, DecodeError> {
    whole(payload, &[], name, |c| T::decode(c, crate::Endian::Little))
}

/// [`payload_var`] with reader parameter values (see `Cursor::with_params`).
#[inline]
pub fn payload_var_with<T: crate::Decode>(
    payload: &[u8],
    params: &[i128],
    name: &'static str,
) -> Result<T, DecodeError> {
    whole(payload, params, name, |c| T::decode(c, crate::Endian::Little))
}

/// Decodes a value of a union selected by name: variant `index`, from exactly `bytes`.
#[inline]
pub fn named_exact<T: crate::Union>(index: i128, bytes: &[u8], name: &'static str) -> Result<T, DecodeError> {
    whole(bytes, &[], name, |c| T::decode_variant(index, c))
}

/// Runs `decode` over `bytes`, which it must use up: bytes left over are an error.
#[inline(always)]
fn whole<T>(
    bytes: &[u8],
    params: &[i128],
    name: &'static str,
    decode: impl FnOnce(&mut Cursor<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut c = Cursor::with_params(bytes, params);
    let v = decode(&mut c).map_err(|e| e.in_type(name))?;
    at_end(&c, name)?;
    Ok(v)
}

/// The view of a value that fills `bytes` exactly (a record payload), with reader parameters.
#[inline]
pub fn view_whole<'a, V: crate::View<'a>>(
    bytes: &'a [u8],
    params: &'a [i128],
    name: &'static str,
) -> Result<V, DecodeError> {
    let mut c = Cursor::with_params(bytes, params);
    let v = V::decode_view(&mut c, crate::Endian::Little).map_err(|e| e.in_type(name))?;
    at_end(&c, name)?;
    Ok(v)
}

/// Fails with `TrailingBytes` unless the cursor is used up.
#[inline]
pub fn at_end(c: &Cursor<'_>, name: &'static str) -> Result<(), DecodeError> {
    if c.is_empty() {
        Ok(())
    } else {
        Err(DecodeError::new(crate::DecodeErrorKind::TrailingBytes { extra: c.remaining() as u64 })
            .at(c.position())
            .in_type(name))
    }
}

/// The error for a type name that selects no variant.
#[cold]
pub fn unknown_type_name(type_name: &str, ty: &'static str) -> DecodeError {
    DecodeError::new(crate::DecodeErrorKind::UnknownTypeName { name: crate::Shown::bytes(type_name.as_bytes()) })
        .in_type(ty)
}

/// The error for a const field that holds the wrong value.
#[cold]
pub fn bad_const(expected: crate::Shown, found: crate::Shown, at: usize, field: &'static str) -> DecodeError {
    DecodeError::new(crate::DecodeErrorKind::BadConst { expected, found }).at(at).in_field(field)
}

/// The error for a union tag that selects no variant.
#[cold]
pub fn unknown_variant(tag: i128, at: usize, ty: &'static str) -> DecodeError {
    DecodeError::new(crate::DecodeErrorKind::UnknownVariant { tag }).at(at).in_type(ty)
}

/// The tag of a union selected by reader parameter `index` (named `name`), from the cursor.
#[inline]
pub fn param(c: &Cursor<'_>, index: usize, name: &'static str) -> Result<i128, DecodeError> {
    match c.param(index) {
        Some(v) => Ok(v),
        None => Err(DecodeError::new(crate::DecodeErrorKind::MissingParam { name }).at(c.position())),
    }
}

/// The error for a value outside a hand-written Rust enum.
#[cold]
pub fn invalid_value(value: i128, ty: &'static str) -> DecodeError {
    DecodeError::new(crate::DecodeErrorKind::InvalidValue { value }).in_type(ty)
}

/// Under natural alignment (schema `[format] align = "natural"`), skips the padding before a
/// number of `size` bytes: up to a multiple of `size` counted from `base`, the cursor position
/// where the value being decoded starts (for CDR, the payload after its encapsulation header).
#[inline(always)]
pub fn align(c: &mut Cursor<'_>, base: usize, size: usize) -> Result<(), DecodeError> {
    let pad = pad_len(c.position() - base, size);
    if pad > 0 {
        c.take(pad)?;
    }
    Ok(())
}

/// The padding that puts position `pos` at a multiple of `size` (0 for `size` of 0 or 1).
#[inline(always)]
pub fn pad_len(pos: usize, size: usize) -> usize {
    if size > 1 {
        (size - pos % size) % size
    } else {
        0
    }
}

/// Position `pos` moved up to a multiple of `size`: where a number of `size` bytes starts under
/// natural alignment.
#[inline(always)]
pub fn pad_to(pos: usize, size: usize) -> usize {
    pos + pad_len(pos, size)
}

/// The text of a counted string whose length includes one terminating NUL (schema `[format]
/// string_nul = true`): all but its last byte (a length of 0 is the empty string too).
#[inline(always)]
pub fn nul_text(b: &[u8]) -> &[u8] {
    &b[..b.len().saturating_sub(1)]
}

/// A sink that counts what it has written, so that an encoder under natural alignment can pad
/// each number to a multiple of its size, counted from where the value's encoding started.
pub struct Aligned<'s, S: crate::Sink + ?Sized> {
    out: &'s mut S,
    pos: usize,
}

impl<'s, S: crate::Sink + ?Sized> Aligned<'s, S> {
    /// Counting from 0 at the start of the value.
    #[inline]
    pub fn new(out: &'s mut S) -> Self {
        Aligned { out, pos: 0 }
    }

    /// Writes the zero bytes that put the next number of `size` bytes at a multiple of `size`.
    #[inline]
    pub fn align(&mut self, size: usize) {
        let pad = pad_len(self.pos, size);
        if pad > 0 {
            self.put(&[0u8; 8][..pad.min(8)]);
        }
    }

    /// Writes `bytes` and counts them (also as [`crate::Sink`], for code that takes a sink).
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        self.out.put(bytes);
        self.pos += bytes.len();
    }
}

impl<S: crate::Sink + ?Sized> crate::Sink for Aligned<'_, S> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        Aligned::put(self, bytes);
    }
}
