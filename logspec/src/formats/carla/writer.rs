//! The writer: files that CARLA's replayer accepts, packet by packet or frame by frame.

use std::io::{self, Write};

use logspec_runtime::{Encode, EncodeError, Endian, Fixed};

use super::{CarlaRecord, FrameEnd, FrameStart, InfoHeader, PacketHeader};

/// Bytes buffered before they are written out (when no FrameStart waits for its duration).
const FLUSH_AT: usize = 64 * 1024;

/// A write failure.
#[derive(Debug)]
pub enum CarlaWriteError {
    Io(io::Error),
    /// A record that cannot be encoded (a string or array longer than its length prefix allows).
    Encode(EncodeError),
    /// A packet body larger than the u32 `size` field.
    TooLarge {
        id: u8,
        len: usize,
    },
}

impl std::fmt::Display for CarlaWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CarlaWriteError::Io(e) => write!(f, "I/O error: {e}"),
            CarlaWriteError::Encode(e) => write!(f, "cannot encode: {e}"),
            CarlaWriteError::TooLarge { id, len } => {
                write!(f, "packet {id} would be {len} bytes long; the u32 size field holds at most {}", u32::MAX)
            }
        }
    }
}

impl std::error::Error for CarlaWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CarlaWriteError::Io(e) => Some(e),
            CarlaWriteError::Encode(e) => Some(e),
            CarlaWriteError::TooLarge { .. } => None,
        }
    }
}

impl From<io::Error> for CarlaWriteError {
    fn from(e: io::Error) -> Self {
        CarlaWriteError::Io(e)
    }
}

/// Writes a CARLA recording: the info header, then packets.
///
/// Two ways to write frames:
/// - [`Writer::packet`] with explicit FrameStart records writes them as given (a decoded file
///   re-encodes byte for byte);
/// - [`Writer::begin_frame`] does what CARLA's recorder does: it numbers frames from 1, writes
///   `duration_this = -1.0` and, when the next frame begins, patches in the time between them
///   (so the last frame keeps -1.0), with `elapsed` the sum of the durations before.
///
/// Memory is bounded by one frame (the bytes after a FrameStart that waits for its duration).
///
/// Like [`std::io::BufWriter`], a writer that is dropped writes out what it buffered (the last
/// frame keeps `duration_this = -1.0`), silently; [`finish`](Self::finish) is the way to see a
/// write error.
#[must_use = "packets are buffered; call `finish` to write them out and see any error"]
pub struct Writer<W: Write> {
    /// `None` only once `finish` has taken it.
    out: Option<W>,
    buf: Vec<u8>,
    /// Where in `buf` the body of the last `begin_frame` FrameStart is, until its
    /// `duration_this` is patched.
    patch_at: Option<usize>,
    /// `frame_id` and `elapsed` of the last `begin_frame`.
    last: Option<(u64, f64)>,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Writes the info header. The magic is written from the schema; `version` picks the
    /// attribute type numbering readers will assume.
    pub fn new(out: W, header: &InfoHeader) -> Result<Self, CarlaWriteError> {
        let mut buf = Vec::with_capacity(FLUSH_AT);
        header.encode(&mut buf, Endian::Little).map_err(CarlaWriteError::Encode)?;
        Ok(Writer { out: Some(out), buf, patch_at: None, last: None, scratch: Vec::new() })
    }

    /// Writes one packet: its header (id, size) and the record.
    pub fn packet(&mut self, record: &CarlaRecord) -> Result<(), CarlaWriteError> {
        let id = record.id() as u8;
        let mut body = std::mem::take(&mut self.scratch);
        body.clear();
        let encoded = record.encode(&mut body, Endian::Little).map_err(CarlaWriteError::Encode);
        let written = encoded.and_then(|()| self.raw(id, &body));
        self.scratch = body;
        written
    }

    /// Writes one packet from its id and body bytes, as they are (unknown ids, packets kept raw).
    pub fn raw(&mut self, id: u8, body: &[u8]) -> Result<(), CarlaWriteError> {
        let size = u32::try_from(body.len()).map_err(|_| CarlaWriteError::TooLarge { id, len: body.len() })?;
        let mut header = [0u8; <PacketHeader as Fixed>::SIZE];
        PacketHeader { id, size }.encode_fixed(&mut header, Endian::Little);
        self.buf.extend_from_slice(&header);
        self.buf.extend_from_slice(body);
        if self.patch_at.is_none() && self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Starts a frame the way CARLA's recorder does. `since_last` is the time since the previous
    /// frame began (ignored for the first frame): it becomes the previous FrameStart's
    /// `duration_this` and is added to `elapsed`. Returns the new frame's FrameStart.
    pub fn begin_frame(&mut self, since_last: f64) -> Result<FrameStart, CarlaWriteError> {
        let (frame_id, elapsed) = match self.last {
            None => (1, 0.0),
            Some((id, elapsed)) => (id + 1, elapsed + since_last),
        };
        if let (Some(at), Some((id, elapsed))) = (self.patch_at.take(), self.last) {
            // The previous FrameStart is encoded again, by the generated code, with its duration.
            let start = FrameStart { frame_id: id, duration_this: since_last, elapsed };
            start.encode_fixed(&mut self.buf[at..at + <FrameStart as Fixed>::SIZE], Endian::Little);
        }
        self.flush_buf()?;
        let start = FrameStart { frame_id, duration_this: -1.0, elapsed };
        self.patch_at = Some(self.buf.len() + <PacketHeader as Fixed>::SIZE);
        self.packet(&CarlaRecord::FrameStart(start))?;
        self.last = Some((frame_id, elapsed));
        Ok(start)
    }

    /// Ends the current frame (a FrameEnd packet).
    pub fn end_frame(&mut self) -> Result<(), CarlaWriteError> {
        self.packet(&CarlaRecord::FrameEnd(FrameEnd {}))
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if let Some(out) = self.out.as_mut() {
            out.write_all(&self.buf)?;
        }
        self.buf.clear();
        Ok(())
    }

    /// Writes out everything (the last frame keeps `duration_this = -1.0`) and returns the output.
    pub fn finish(mut self) -> Result<W, CarlaWriteError> {
        self.flush_buf()?;
        let Some(mut out) = self.out.take() else {
            return Err(io::Error::other("the writer was already finished").into());
        };
        out.flush()?;
        Ok(out)
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if let Some(out) = self.out.as_mut() {
            // Errors cannot be reported from drop; `finish` is the way to see them.
            let _ = out.write_all(&self.buf).and_then(|_| out.flush());
        }
    }
}
