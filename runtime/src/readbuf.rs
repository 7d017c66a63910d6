//! The input buffer of every streaming reader: bytes read ahead from a [`Read`], in constant
//! memory ([`ReadBuf`]), or input already in memory, decoded in place ([`SliceBuf`]); a reader
//! that takes either is generic over [`Input`].

use std::io::{self, Read};
use std::vec;
use std::vec::Vec;

pub(crate) const CHUNK: usize = 64 * 1024;

/// Bytes read ahead from a [`Read`]: one reusable buffer that only grows to the largest unit (a
/// record, a message) actually present, and only as its bytes arrive.
pub struct ReadBuf<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Absolute offset of `buf[start]`.
    offset: u64,
    eof: bool,
}

impl<R: Read> ReadBuf<R> {
    pub fn new(inner: R) -> Self {
        ReadBuf::starting_at(inner, 0)
    }

    /// A buffer over input whose first byte is at absolute offset `offset` of a larger whole
    /// (a reader that starts in the middle of a file), so that [`position`](Self::position)
    /// and the offsets of errors are the whole's.
    pub fn starting_at(inner: R, offset: u64) -> Self {
        ReadBuf { inner, buf: vec![0; CHUNK], start: 0, end: 0, offset, eof: false }
    }

    /// The bytes read and not yet consumed.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    #[inline(always)]
    pub fn available(&self) -> usize {
        self.end - self.start
    }

    /// Absolute offset of the first byte of [`bytes`](Self::bytes).
    #[inline(always)]
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Whether the input has ended: [`bytes`](Self::bytes) is all there is.
    #[inline(always)]
    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// Makes at least `min` bytes available unless the input ends first.
    #[inline(always)]
    pub fn fill(&mut self, min: usize) -> io::Result<()> {
        if self.available() >= min {
            return Ok(());
        }
        self.refill(min)
    }

    #[inline(never)]
    fn refill(&mut self, min: usize) -> io::Result<()> {
        while self.available() < min && !self.eof {
            if self.end == self.buf.len() {
                if self.start > 0 {
                    self.buf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    // The buffer is full of real data and still too small: grow it, at most
                    // doubling, so its size is always justified by bytes actually read.
                    let new_len = (self.buf.len() * 2).min(self.buf.len() + min.max(CHUNK));
                    self.buf.resize(new_len, 0);
                }
                continue;
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Consumes the first `n` available bytes (at most all of them) and returns them.
    #[inline(always)]
    pub fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.available());
        let s = self.start;
        self.start += n;
        self.offset += n as u64;
        &self.buf[s..s + n]
    }
}

/// What a reader decodes from: the bytes available, consumed from the front, with more made
/// available on demand. [`ReadBuf`] reads them ahead from a [`Read`] into one reusable buffer;
/// [`SliceBuf`] lends a slice in memory whole, so that a reader decodes it in place and copies
/// nothing; [`WindowBuf`] lends one a window at a time. A reader's loop is written once, over
/// `Input`, and serves all three.
///
/// Sealed: these three are all there are, so a reader may rely on what they promise: the bytes
/// [`bytes`](Input::bytes) returns stay where they are until the next `fill` or `take`.
pub trait Input: sealed::Sealed {
    /// The bytes available and not yet consumed.
    fn bytes(&self) -> &[u8];
    /// How many bytes are available (`bytes().len()`).
    fn available(&self) -> usize;
    /// Absolute offset of the first byte of [`bytes`](Input::bytes).
    fn position(&self) -> u64;
    /// Whether the input has ended: [`bytes`](Input::bytes) is all there is.
    fn is_eof(&self) -> bool;
    /// Makes at least `min` bytes available unless the input ends first.
    fn fill(&mut self, min: usize) -> io::Result<()>;
    /// Consumes the first `n` available bytes (at most all of them) and returns them.
    fn take(&mut self, n: usize) -> &[u8];
    /// Moves to absolute offset `pos`, with nothing available until the next
    /// [`fill`](Input::fill), where the input can go back and forth (a [`WindowBuf`]: the time
    /// index's chunks); `false`, and nothing moved, where it cannot.
    fn seek(&mut self, pos: u64) -> bool {
        let _ = pos;
        false
    }
}

mod sealed {
    pub trait Sealed {}
    impl<R: std::io::Read> Sealed for super::ReadBuf<R> {}
    impl Sealed for super::SliceBuf<'_> {}
    impl<A: FnMut(u64)> Sealed for super::WindowBuf<'_, A> {}
}

impl<R: Read> Input for ReadBuf<R> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        ReadBuf::bytes(self)
    }
    #[inline(always)]
    fn available(&self) -> usize {
        ReadBuf::available(self)
    }
    #[inline(always)]
    fn position(&self) -> u64 {
        ReadBuf::position(self)
    }
    #[inline(always)]
    fn is_eof(&self) -> bool {
        ReadBuf::is_eof(self)
    }
    #[inline(always)]
    fn fill(&mut self, min: usize) -> io::Result<()> {
        ReadBuf::fill(self, min)
    }
    #[inline(always)]
    fn take(&mut self, n: usize) -> &[u8] {
        ReadBuf::take(self, n)
    }
}

/// Input already in memory (a file read whole, or mapped), lent whole: every byte is available
/// from the start and the input has ended, so [`fill`](Input::fill) never reads and nothing is
/// copied.
#[derive(Clone, Debug)]
pub struct SliceBuf<'a> {
    /// The bytes not yet consumed.
    rest: &'a [u8],
    /// Absolute offset of `rest[0]`.
    offset: u64,
}

impl<'a> SliceBuf<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        SliceBuf::starting_at(bytes, 0)
    }

    /// Bytes whose first is at absolute offset `offset` of a larger whole (a reader that starts
    /// in the middle of a file), as [`ReadBuf::starting_at`].
    pub fn starting_at(bytes: &'a [u8], offset: u64) -> Self {
        SliceBuf { rest: bytes, offset }
    }
}

impl Input for SliceBuf<'_> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.rest
    }
    #[inline(always)]
    fn available(&self) -> usize {
        self.rest.len()
    }
    #[inline(always)]
    fn position(&self) -> u64 {
        self.offset
    }
    #[inline(always)]
    fn is_eof(&self) -> bool {
        true
    }
    #[inline(always)]
    fn fill(&mut self, _min: usize) -> io::Result<()> {
        Ok(())
    }
    #[inline(always)]
    fn take(&mut self, n: usize) -> &[u8] {
        let (taken, rest) = self.rest.split_at(n.min(self.rest.len()));
        self.rest = rest;
        self.offset += taken.len() as u64;
        taken
    }
}

/// Input in memory lent a window at a time (a mapped file): like [`SliceBuf`], nothing is
/// copied, but the bytes are made available in windows of at least `window` bytes as the reader
/// asks for them, and `moved` is told the position each time a window opens, so that what holds
/// the bytes can follow the reader (a map drops the pages behind it).
pub struct WindowBuf<'a, A: FnMut(u64)> {
    all: &'a [u8],
    /// The bytes available are `all[start..end]`.
    start: usize,
    end: usize,
    window: usize,
    moved: A,
}

impl<'a, A: FnMut(u64)> WindowBuf<'a, A> {
    pub fn new(all: &'a [u8], window: usize, moved: A) -> Self {
        WindowBuf { all, start: 0, end: 0, window: window.max(1), moved }
    }
}

impl<A: FnMut(u64)> Input for WindowBuf<'_, A> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        &self.all[self.start..self.end]
    }
    #[inline(always)]
    fn available(&self) -> usize {
        self.end - self.start
    }
    #[inline(always)]
    fn position(&self) -> u64 {
        self.start as u64
    }
    #[inline(always)]
    fn is_eof(&self) -> bool {
        self.end == self.all.len()
    }
    #[inline]
    fn fill(&mut self, min: usize) -> io::Result<()> {
        if self.end - self.start < min && self.end < self.all.len() {
            self.end = self.all.len().min(self.start.saturating_add(min.max(self.window)));
            (self.moved)(self.start as u64);
        }
        Ok(())
    }
    #[inline(always)]
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.end - self.start);
        let taken = &self.all[self.start..self.start + n];
        self.start += n;
        taken
    }
    fn seek(&mut self, pos: u64) -> bool {
        match usize::try_from(pos) {
            Ok(pos) if pos <= self.all.len() => {
                (self.start, self.end) = (pos, pos);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice lent whole and the same bytes read through a reader that hands out 3 bytes at a
    /// time give the same bytes, offsets and end, whatever is taken and asked for.
    #[test]
    fn slice_and_read_buffers_agree() {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = out.len().min(self.0.len()).min(3);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let mut lent = SliceBuf::new(&data);
        let mut read = ReadBuf::new(Trickle(&data));
        let mut moves = Vec::new();
        let mut window = WindowBuf::new(&data, 64, |at| moves.push(at));
        for (want, take) in [(1, 0), (10, 4), (7, 7), (500, 300), (2000, 100), (0, 2000)] {
            read.fill(want).unwrap();
            lent.fill(want).unwrap();
            window.fill(want).unwrap();
            let n = want.min(lent.available());
            assert_eq!(&Input::bytes(&read)[..n], &lent.bytes()[..n]);
            assert_eq!(&window.bytes()[..n], &lent.bytes()[..n]);
            assert_eq!(Input::position(&read), lent.position());
            assert_eq!(window.position(), lent.position());
            let t = Input::take(&mut read, take).to_vec();
            assert_eq!(window.take(take), &t[..]);
            assert_eq!(t, lent.take(take));
        }
        assert!(window.is_eof());
        assert_eq!(moves, [0, 11, 311], "a window opens where more is asked for than is lent");
        read.fill(1).unwrap();
        assert!(lent.is_eof() && Input::is_eof(&read));
        assert_eq!((Input::available(&read), lent.available()), (0, 0));
        assert_eq!((Input::position(&read), lent.position()), (1000, 1000));
    }

    /// A window goes back and forth to any offset within its bytes (nothing available until
    /// the next fill); a buffer over a reader and a slice lent whole do not move.
    #[test]
    fn only_a_window_seeks() {
        let data: Vec<u8> = (0..=255u8).collect();
        let mut window = WindowBuf::new(&data, 16, |_| {});
        window.fill(1).unwrap();
        window.take(100);
        assert!(window.seek(10));
        assert_eq!((window.position(), window.available()), (10, 0));
        window.fill(4).unwrap();
        assert_eq!(&window.bytes()[..4], &[10, 11, 12, 13]);
        assert!(window.seek(256) && window.is_eof());
        assert!(!window.seek(257));
        assert_eq!(window.position(), 256, "a refused seek moves nothing");
        let mut lent = SliceBuf::new(&data);
        assert!(!lent.seek(0));
        let mut read = ReadBuf::new(&data[..]);
        assert!(!Input::seek(&mut read, 0));
    }
}
