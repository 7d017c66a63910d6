//! The RLOG live stream over TCP: frames of `len: i32` big-endian and `len` payload bytes.
//!
//! (Server and client: being written; this file so far holds the frame reader.)

use std::io::{self, Read};

/// A [`Read`] over the payloads of a framed stream: frame headers are stripped and empty frames
/// (keep-alives) skipped, so the bytes read are an RLOG file (the first frame starts with the
/// revision byte). A negative length is an error naming its byte offset.
pub struct FrameReader<R> {
    inner: R,
    /// Payload bytes left in the current frame.
    left: u64,
    /// Absolute offset in the framed stream.
    offset: u64,
    frames: u64,
    keepalives: u64,
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader { inner, left: 0, offset: 0, frames: 0, keepalives: 0 }
    }

    /// Non-empty frames started so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Empty (keep-alive) frames seen so far.
    pub fn keepalives(&self) -> u64 {
        self.keepalives
    }

    /// Byte offset in the framed stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Reads the next frame header; `false` at a clean end of the stream.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let mut len = [0u8; 4];
            let mut got = 0;
            while got < 4 {
                match self.inner.read(&mut len[got..]) {
                    Ok(0) if got == 0 => return Ok(false),
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("stream ends inside the frame header at byte {}", self.offset),
                        ))
                    }
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            let n = i32::from_be_bytes(len);
            if n < 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("frame at byte {} has a negative length ({n})", self.offset),
                ));
            }
            self.offset += 4;
            if n == 0 {
                self.keepalives += 1;
                continue;
            }
            self.frames += 1;
            self.left = n as u64;
            return Ok(true);
        }
    }
}

impl<R: Read> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 && !self.next_frame()? {
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("stream ends inside a frame, {} payload byte(s) short, at byte {}", self.left, self.offset),
            ));
        }
        self.left -= n as u64;
        self.offset += n as u64;
        Ok(n)
    }
}
