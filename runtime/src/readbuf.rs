//! The input buffer of every streaming reader: bytes read ahead from a [`Read`], in constant
//! memory.

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
