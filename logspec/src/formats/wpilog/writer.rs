//! The WPILOG writer: the file header, then records, each encoded by the generated types.

use std::fmt;
use std::io::{self, Write};

use logspec_runtime::{Encode, EncodeError, Endian};

use super::{ControlBody, ControlRecord, DataValue, FileHeader, RecordHeader, VERSION};

/// A failed write.
#[derive(Debug)]
pub enum WpilogWriteError {
    Io(io::Error),
    /// A value the layout cannot hold (a payload over 4 GiB, a header field wider than its
    /// `lengths` bits announce).
    Encode(EncodeError),
    /// A record header whose `size` is not its payload's length.
    SizeMismatch {
        size: u32,
        payload: usize,
    },
}

impl fmt::Display for WpilogWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WpilogWriteError::Io(e) => write!(f, "write error: {e}"),
            WpilogWriteError::Encode(e) => write!(f, "{e}"),
            WpilogWriteError::SizeMismatch { size, payload } => {
                write!(f, "record header says {size} payload bytes, the payload has {payload}")
            }
        }
    }
}

impl std::error::Error for WpilogWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WpilogWriteError::Io(e) => Some(e),
            WpilogWriteError::Encode(e) => Some(e),
            WpilogWriteError::SizeMismatch { .. } => None,
        }
    }
}

impl From<io::Error> for WpilogWriteError {
    fn from(e: io::Error) -> Self {
        WpilogWriteError::Io(e)
    }
}

impl From<EncodeError> for WpilogWriteError {
    fn from(e: EncodeError) -> Self {
        WpilogWriteError::Encode(e)
    }
}

/// Writes a WPILOG file record by record. Records written with [`Writer::record`] keep the
/// header widths they were read with, so a file read and written back is byte-identical; the
/// other methods build new records with the fewest header bytes, as WPILib's writer does.
pub struct Writer<W: Write> {
    out: W,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Writes the file header (version 1.0 and `extra_header`).
    pub fn new(out: W, extra_header: &str) -> Result<Self, WpilogWriteError> {
        let header = FileHeader { version: VERSION, extra_header: extra_header.to_string() };
        Self::with_header(out, &header)
    }

    /// Writes the given file header as it is (a header read from a file, for a copy).
    pub fn with_header(mut out: W, header: &FileHeader) -> Result<Self, WpilogWriteError> {
        let mut scratch = Vec::with_capacity(64);
        header.encode(&mut scratch, Endian::Little)?;
        out.write_all(&scratch)?;
        Ok(Writer { out, scratch })
    }

    /// Writes a record: `header` as given (its widths included) and the payload.
    pub fn record(&mut self, header: &RecordHeader, payload: &[u8]) -> Result<(), WpilogWriteError> {
        if header.size as usize != payload.len() {
            return Err(WpilogWriteError::SizeMismatch { size: header.size, payload: payload.len() });
        }
        self.scratch.clear();
        header.encode(&mut self.scratch, Endian::Little)?;
        self.out.write_all(&self.scratch)?;
        self.out.write_all(payload)?;
        Ok(())
    }

    /// Writes a new record for `entry` at `timestamp` (µs) with the fewest header bytes.
    pub fn raw(&mut self, entry: u32, timestamp: i64, payload: &[u8]) -> Result<(), WpilogWriteError> {
        let size = u32::try_from(payload.len()).map_err(|_| EncodeError::TooLong {
            field: "size",
            len: payload.len() as u64,
            max: u64::from(u32::MAX),
        })?;
        let mut header = RecordHeader { lengths: 0, entry, size, timestamp };
        header.fit_widths();
        self.record(&header, payload)
    }

    /// Writes a control record.
    pub fn control(&mut self, timestamp: i64, body: ControlBody) -> Result<(), WpilogWriteError> {
        let mut payload = Vec::new();
        ControlRecord { body }.encode(&mut payload, Endian::Little)?;
        self.raw(0, timestamp, &payload)
    }

    /// Starts `entry` with its name, type and metadata.
    pub fn start(
        &mut self,
        entry: u32,
        name: &str,
        type_name: &str,
        metadata: &str,
        timestamp: i64,
    ) -> Result<(), WpilogWriteError> {
        let body = ControlBody::Start {
            entry,
            name: name.to_string(),
            r#type: type_name.to_string(),
            metadata: metadata.to_string(),
        };
        self.control(timestamp, body)
    }

    /// Finishes `entry`.
    pub fn finish(&mut self, entry: u32, timestamp: i64) -> Result<(), WpilogWriteError> {
        self.control(timestamp, ControlBody::Finish { entry })
    }

    /// Replaces the metadata of `entry`.
    pub fn set_metadata(&mut self, entry: u32, metadata: &str, timestamp: i64) -> Result<(), WpilogWriteError> {
        self.control(timestamp, ControlBody::SetMetadata { entry, metadata: metadata.to_string() })
    }

    /// Writes a data record: `value` encoded as its variant's layout. The caller keeps `value`'s
    /// variant consistent with the entry's type ([`super::Entry::decode`] gives it back).
    pub fn value(&mut self, entry: u32, timestamp: i64, value: &DataValue) -> Result<(), WpilogWriteError> {
        let mut payload = std::mem::take(&mut self.scratch);
        payload.clear();
        let r = value.encode(&mut payload, Endian::Little).map_err(WpilogWriteError::from);
        let r = r.and_then(|()| self.raw(entry, timestamp, &payload));
        self.scratch = payload;
        r
    }

    /// Flushes and returns the output.
    pub fn finish_file(mut self) -> Result<W, WpilogWriteError> {
        self.out.flush()?;
        Ok(self.out)
    }
}
