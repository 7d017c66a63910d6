//! Reading from a byte slice with bounds checks that become errors, and writing to a sink.

use crate::error::DecodeError;

/// A position in a byte slice. Every read is checked; running out of bytes is an error that
/// records the offset, never a panic.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Reader parameters (schema `[[param]]`), by declaration index; see [`Cursor::with_params`].
    params: &'a [i128],
}

impl<'a> Cursor<'a> {
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0, params: &[] }
    }

    /// A cursor that carries reader parameters: the values of a schema's `[[param]]`s, in
    /// declaration order (the generated `PARAM_<NAME>` consts are the indices). Unions selected
    /// by a parameter read their variant's tag from here.
    #[inline]
    pub fn with_params(buf: &'a [u8], params: &'a [i128]) -> Self {
        Cursor { buf, pos: 0, params }
    }

    /// The value of reader parameter `index`, if the cursor was given one.
    #[inline]
    pub fn param(&self, index: usize) -> Option<i128> {
        self.params.get(index).copied()
    }

    /// Every reader parameter value the cursor carries (see [`Cursor::with_params`]).
    #[inline]
    pub fn params(&self) -> &'a [i128] {
        self.params
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet consumed.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Consumes `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let rest = &self.buf[self.pos..];
        if n > rest.len() {
            return Err(DecodeError::eof(n, rest.len()).at(self.pos));
        }
        let (head, _) = rest.split_at(n);
        self.pos += n;
        Ok(head)
    }

    /// Consumes `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.buf[self.pos..].first_chunk::<N>() {
            Some(a) => {
                self.pos += N;
                Ok(*a)
            }
            None => Err(DecodeError::eof(N, self.remaining()).at(self.pos)),
        }
    }

    /// Consumes everything left.
    #[inline]
    pub fn take_rest(&mut self) -> &'a [u8] {
        let r = &self.buf[self.pos..];
        self.pos = self.buf.len();
        r
    }

    /// Consumes `n` bytes and returns a cursor over just them; errors inside it report offsets
    /// relative to this cursor.
    #[inline]
    pub fn sub(&mut self, n: usize) -> Result<Cursor<'a>, DecodeError> {
        let start = self.pos;
        let bytes = self.take(n)?;
        Ok(Cursor { buf: &self.buf[..start + bytes.len()], pos: start, params: self.params })
    }
}

/// Where encoders write bytes.
pub trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

#[cfg(feature = "alloc")]
impl Sink for alloc::vec::Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A sink over a caller's buffer, for encoding without allocation. Writing past the end sets
/// [`SliceSink::overflowed`] instead of panicking.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
    overflowed: bool,
}

impl<'a> SliceSink<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceSink { buf, len: 0, overflowed: false }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// True when a write did not fit.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }
}

impl Sink for SliceSink<'_> {
    fn put(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.overflowed = true,
        }
    }
}
