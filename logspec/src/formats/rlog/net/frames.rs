//! The framing of the live stream: each frame a big-endian `i32` length then that many payload
//! bytes. [`FrameReader`] reads the concatenated payloads (an RLOG file) from a framed stream;
//! `seal` writes a frame's length for the server.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use logspec_runtime::{Endian, Fixed};

use crate::formats::rlog::StreamFrameHeader;
// For the links in the docs.
#[cfg(doc)]
use crate::formats::rlog::Reader;

/// The size of a frame's header (`StreamFrameHeader` of `schemas/rlog.toml`).
pub(super) const FRAME_HEADER: usize = <StreamFrameHeader as Fixed>::SIZE;

/// The largest frame payload a [`FrameReader`] accepts, and a [`Server`](super::Server) sends:
/// 64 MiB.
///
/// The format itself bounds nothing below the `i32` length: a frame is one cycle, and a cycle
/// may define every one of the 65,536 key ids (a name and a type of up to 65,535 bytes each) and
/// give each a value of up to 65,535 bytes, about 12.9 GB. So the bound is a documented ceiling,
/// chosen far above what a robot sends: the largest frame of a stream is the newcomer frame, the
/// whole state (every key defined, with its value), which for an AdvantageKit robot of a few
/// thousand keys is well under 1 MiB. A frame announced larger is refused at its length, before
/// any of its bytes is read: it is not a stream this protocol's producers write.
pub const MAX_FRAME: u32 = 64 << 20;

/// A [`Read`] adapter over a framed stream that yields the concatenated payloads of its frames:
/// an RLOG file. Keep-alive (empty) frames are skipped and counted.
///
/// A negative length, or one over [`MAX_FRAME`] (see [`FrameReader::with_max_frame`]), is an
/// `InvalidData` error naming the byte offset of the frame in the stream; a stream that ends inside a frame or a length is an `UnexpectedEof` error. Both are sticky.
/// Other I/O errors (a read timeout) are passed through and reading can be retried. Offsets in
/// a [`Reader`]'s errors count payload bytes; [`FrameReader::offset`] counts stream bytes.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    /// Payload bytes of the current frame not yet read.
    remaining: u32,
    /// The declared length of the current frame.
    frame_len: u32,
    /// The bytes of a frame length read so far.
    header: [u8; FRAME_HEADER],
    header_len: usize,
    /// Stream bytes taken from `inner`.
    offset: u64,
    /// Stream offset of the current frame's length.
    frame_start: u64,
    /// The largest payload accepted.
    max_frame: u32,
    counters: FrameCounters,
    failed: Option<(io::ErrorKind, String)>,
}

/// Progress counters of a [`FrameReader`], shared: they stay readable while a [`Reader`] owns the
/// frame reader.
#[derive(Clone, Debug, Default)]
pub struct FrameCounters(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    frames: AtomicU64,
    keepalives: AtomicU64,
    payload: AtomicU64,
    /// Whether no frame is partly read.
    boundary: AtomicBool,
}

impl FrameCounters {
    /// Non-empty frames started.
    pub fn frames(&self) -> u64 {
        self.0.frames.load(Ordering::Relaxed)
    }

    /// Keep-alive (empty) frames skipped.
    pub fn keepalives(&self) -> u64 {
        self.0.keepalives.load(Ordering::Relaxed)
    }

    /// Payload bytes yielded so far.
    pub fn payload_bytes(&self) -> u64 {
        self.0.payload.load(Ordering::Relaxed)
    }

    /// Whether every frame started was read to its end.
    pub fn at_frame_boundary(&self) -> bool {
        self.0.boundary.load(Ordering::Relaxed)
    }
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        let counters = FrameCounters::default();
        counters.0.boundary.store(true, Ordering::Relaxed);
        FrameReader {
            inner,
            remaining: 0,
            frame_len: 0,
            header: [0; FRAME_HEADER],
            header_len: 0,
            offset: 0,
            frame_start: 0,
            max_frame: MAX_FRAME,
            counters,
            failed: None,
        }
    }

    /// Accepts frames of at most `max` payload bytes instead of [`MAX_FRAME`].
    pub fn with_max_frame(mut self, max: u32) -> Self {
        self.max_frame = max;
        self
    }

    /// Non-empty frames started.
    pub fn frames(&self) -> u64 {
        self.counters.frames()
    }

    /// Keep-alive (empty) frames skipped.
    pub fn keepalives(&self) -> u64 {
        self.counters.keepalives()
    }

    /// Stream bytes read (lengths and payloads).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// A handle on the counters that stays valid after this reader is moved into a [`Reader`].
    pub fn counters(&self) -> FrameCounters {
        self.counters.clone()
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    fn fail(&mut self, kind: io::ErrorKind, msg: String) -> io::Error {
        self.failed = Some((kind, msg.clone()));
        io::Error::new(kind, msg)
    }

    /// Reads the next frame length. `Ok(false)` at a clean end (no byte of a length).
    fn read_header(&mut self) -> io::Result<bool> {
        while self.header_len < FRAME_HEADER {
            let n = self.inner.read(&mut self.header[self.header_len..])?;
            if n == 0 {
                if self.header_len == 0 {
                    return Ok(false);
                }
                let at = self.offset - self.header_len as u64;
                let msg = format!(
                    "rlog stream: the stream ends inside the length of the frame at byte {at} ({} of {FRAME_HEADER} bytes)",
                    self.header_len
                );
                return Err(self.fail(io::ErrorKind::UnexpectedEof, msg));
            }
            self.header_len += n;
            self.offset += n as u64;
            self.counters.0.boundary.store(false, Ordering::Relaxed);
        }
        self.header_len = 0;
        self.frame_start = self.offset - FRAME_HEADER as u64;
        // The whole header is there, so decoding it cannot fail.
        let len = StreamFrameHeader::decode_fixed(&self.header, Endian::Big).map_or(0, |h| h.length);
        if len < 0 {
            let h = self.header;
            let msg = format!(
                "rlog stream: the frame at byte {} has a negative length, {len} ({:02x} {:02x} {:02x} {:02x}): \
                 this is not an RLOG live stream, or it is corrupt",
                self.frame_start, h[0], h[1], h[2], h[3]
            );
            return Err(self.fail(io::ErrorKind::InvalidData, msg));
        }
        if len as u32 > self.max_frame {
            let msg = format!(
                "rlog stream: the frame at byte {} announces {len} bytes, more than the {} bytes ({} MiB) a frame \
                 may hold (logspec's ceiling: a frame is one cycle, and a robot's largest, its whole state, is \
                 well under 1 MiB); refused before reading it: this is not an RLOG live stream, or it is corrupt",
                self.frame_start,
                self.max_frame,
                self.max_frame >> 20
            );
            return Err(self.fail(io::ErrorKind::InvalidData, msg));
        }
        if len == 0 {
            self.counters.0.keepalives.fetch_add(1, Ordering::Relaxed);
            self.counters.0.boundary.store(true, Ordering::Relaxed);
        } else {
            self.counters.0.frames.fetch_add(1, Ordering::Relaxed);
            self.remaining = len as u32;
            self.frame_len = len as u32;
        }
        Ok(true)
    }

    /// The payload of the next non-empty frame (or the rest of the current one, if [`Read::read`]
    /// stopped inside it); `None` at a clean end of the stream. After an error, what was read of
    /// the frame is lost.
    pub fn next_frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        if let Some((kind, msg)) = &self.failed {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        while self.remaining == 0 {
            if !self.read_header()? {
                return Ok(None);
            }
        }
        // Grown as bytes arrive, so a corrupt length cannot make it allocate what is not there.
        let mut out = Vec::with_capacity((self.remaining as usize).min(CHUNK));
        while self.remaining > 0 {
            let start = out.len();
            out.resize(start + (self.remaining as usize).min(CHUNK), 0);
            match self.read(&mut out[start..]) {
                Ok(n) => out.truncate(start + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => out.truncate(start),
                Err(e) => return Err(e),
            }
        }
        Ok(Some(out))
    }
}

const CHUNK: usize = 64 * 1024;

impl<R: Read> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((kind, msg)) = &self.failed {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.remaining > 0 {
                let want = buf.len().min(self.remaining as usize);
                let n = self.inner.read(&mut buf[..want])?;
                if n == 0 {
                    let msg = format!(
                        "rlog stream: the stream ends inside the frame at byte {}: it declares {} payload bytes, the last {} are missing",
                        self.frame_start, self.frame_len, self.remaining
                    );
                    return Err(self.fail(io::ErrorKind::UnexpectedEof, msg));
                }
                self.remaining -= n as u32;
                self.offset += n as u64;
                self.counters.0.payload.fetch_add(n as u64, Ordering::Relaxed);
                if self.remaining == 0 {
                    self.counters.0.boundary.store(true, Ordering::Relaxed);
                }
                return Ok(n);
            }
            if !self.read_header()? {
                return Ok(0);
            }
        }
    }
}

/// Writes the header of the frame `frame[FRAME_HEADER..]` into `frame[..FRAME_HEADER]`, reserved
/// for it.
/// A payload over [`MAX_FRAME`] is refused: no client of this protocol would accept it.
pub(super) fn seal(frame: &mut [u8]) -> io::Result<()> {
    let len = frame.len() - FRAME_HEADER;
    let length = i32::try_from(len).ok().filter(|&l| l as u32 <= MAX_FRAME).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("rlog stream: a frame of {len} bytes, over the {MAX_FRAME}-byte ceiling of a frame"),
        )
    })?;
    StreamFrameHeader { length }.encode_fixed(&mut frame[..FRAME_HEADER], Endian::Big);
    Ok(())
}
