//! RLOG writers: [`Writer`] writes messages with explicit key ids (so a decoded file re-encodes
//! byte for byte); [`Encoder`] is the producer side of a live stream (key ids by first
//! appearance, changed values only, and the catch-up data for new clients).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};

use logspec_runtime::{Encode, EncodeError, Endian, Union};

use super::{r2_default_type, R1Body, R1Message, R1Value, R2Body, R2Message, R2Value, Revision, Value};

/// The longest key, type name, R2 value or R1 element count a writer accepts. AdvantageScope reads
/// every RLOG length as a signed 16-bit integer, so 32768 and more would break it, and Java's
/// `(short)` cast would wrap it silently.
pub const MAX_LEN: usize = 32767;

/// A write failure. Nothing of the failing message is written.
#[derive(Debug)]
pub enum RlogWriteError {
    Io(io::Error),
    /// A length beyond [`MAX_LEN`].
    TooLong {
        key: String,
        what: &'static str,
        len: usize,
    },
    /// A value of the other revision.
    WrongRevision {
        key: String,
        writer: Revision,
    },
    /// An R2 value whose variant is not the one its key's declared type selects.
    TypeMismatch {
        key: String,
        declared: String,
    },
    /// An R2 key defined without a type, for a value whose variant does not imply one.
    NoType {
        key: String,
    },
    /// A value for a key id that was never defined.
    UndefinedKey {
        key_id: i16,
    },
    /// More keys than 16-bit key ids can number.
    TooManyKeys,
    Encode(EncodeError),
}

impl fmt::Display for RlogWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RlogWriteError::Io(e) => write!(f, "rlog: I/O error: {e}"),
            RlogWriteError::TooLong { key, what, len } => write!(
                f,
                "rlog: key {key:?}: {what} is {len} long, over the limit of {MAX_LEN} (AdvantageScope reads RLOG lengths as signed 16-bit)"
            ),
            RlogWriteError::WrongRevision { key, writer } => {
                write!(f, "rlog: key {key:?}: the value is not an {writer} value, and the stream is {writer}")
            }
            RlogWriteError::TypeMismatch { key, declared } => {
                write!(f, "rlog: key {key:?}: the value does not have the layout of its declared type {declared:?}")
            }
            RlogWriteError::NoType { key } => {
                write!(f, "rlog: key {key:?}: an R2 key needs a declared type (e.g. \"struct:Pose2d\") for this value")
            }
            RlogWriteError::UndefinedKey { key_id } => write!(f, "rlog: a value for key id {key_id}, which is not defined"),
            RlogWriteError::TooManyKeys => f.write_str("rlog: more than 65536 keys; 16-bit key ids cannot number them"),
            RlogWriteError::Encode(e) => write!(f, "rlog: {e}"),
        }
    }
}

impl std::error::Error for RlogWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RlogWriteError::Io(e) => Some(e),
            RlogWriteError::Encode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for RlogWriteError {
    fn from(e: io::Error) -> Self {
        RlogWriteError::Io(e)
    }
}

impl From<EncodeError> for RlogWriteError {
    fn from(e: EncodeError) -> Self {
        RlogWriteError::Encode(e)
    }
}

fn check_len(key: &str, what: &'static str, len: usize) -> Result<(), RlogWriteError> {
    if len > MAX_LEN {
        return Err(RlogWriteError::TooLong { key: key.to_string(), what, len });
    }
    Ok(())
}

/// Every length an R1 value writes, checked against [`MAX_LEN`].
fn check_r1(key: &str, v: &R1Value) -> Result<(), RlogWriteError> {
    match v {
        R1Value::BooleanArray { value } => check_len(key, "the array", value.len()),
        R1Value::IntegerArray { value } => check_len(key, "the array", value.len()),
        R1Value::DoubleArray { value } => check_len(key, "the array", value.len()),
        R1Value::String { value } => check_len(key, "the string", value.len()),
        R1Value::ByteArray { value } => check_len(key, "the byte array", value.len()),
        R1Value::StringArray { value } => {
            check_len(key, "the array", value.len())?;
            value.iter().try_for_each(|s| check_len(key, "a string of the array", s.text.len()))
        }
        _ => Ok(()),
    }
}

/// Appends a timestamp message.
fn put_timestamp(out: &mut Vec<u8>, rev: Revision, timestamp: f64) -> Result<(), RlogWriteError> {
    match rev {
        Revision::R1 => R1Message { body: R1Body::Timestamp { timestamp } }.encode(out, Endian::Big)?,
        Revision::R2 => R2Message { body: R2Body::Timestamp { timestamp } }.encode(out, Endian::Big)?,
    }
    Ok(())
}

/// Appends a key definition.
fn put_keydef(
    out: &mut Vec<u8>,
    rev: Revision,
    key_id: i16,
    key: &str,
    ty: Option<&str>,
) -> Result<(), RlogWriteError> {
    check_len(key, "the key", key.len())?;
    match rev {
        Revision::R1 => R1Message { body: R1Body::KeyDef { key_id, key: key.to_string() } }.encode(out, Endian::Big)?,
        Revision::R2 => {
            let Some(ty) = ty else { return Err(RlogWriteError::NoType { key: key.to_string() }) };
            check_len(key, "the type name", ty.len())?;
            let body = R2Body::KeyDef { key_id, key: key.to_string(), r#type: ty.to_string() };
            R2Message { body }.encode(out, Endian::Big)?
        }
    }
    Ok(())
}

/// Appends a value message; `declared` is the key's R2 declared type.
fn put_value(
    out: &mut Vec<u8>,
    rev: Revision,
    key_id: i16,
    key: &str,
    declared: Option<&str>,
    value: Value,
) -> Result<(), RlogWriteError> {
    match (rev, value) {
        (Revision::R1, Value::R1(value)) => {
            check_r1(key, &value)?;
            R1Message { body: R1Body::Field { key_id, value } }.encode(out, Endian::Big)?;
        }
        (Revision::R2, Value::R2(value)) => {
            let declared = declared.unwrap_or("raw");
            if R2Value::variant_index(declared) != Some(value.tag()) {
                return Err(RlogWriteError::TypeMismatch { key: key.to_string(), declared: declared.to_string() });
            }
            let len = value.encoded_len();
            check_len(key, "the value", len)?;
            let mut bytes = Vec::with_capacity(len);
            value.encode(&mut bytes, Endian::Big)?;
            R2Message { body: R2Body::Field { key_id, value: bytes } }.encode(out, Endian::Big)?;
        }
        (writer, _) => return Err(RlogWriteError::WrongRevision { key: key.to_string(), writer }),
    }
    Ok(())
}

const CHUNK: usize = 64 * 1024;

/// Writes RLOG messages as given: timestamps, key definitions with explicit ids, and values.
/// Re-encoding the events of a [`Reader`](super::Reader) reproduces its input byte for byte.
///
/// Messages are buffered (64 KiB). Like [`std::io::BufWriter`], a writer that is dropped writes
/// out what it buffered, silently; [`finish`](Self::finish) is the way to see a write error.
#[must_use = "messages are buffered; call `finish` to write them out and see any error"]
pub struct Writer<W: Write> {
    /// `None` only once `finish` has taken it.
    inner: Option<W>,
    revision: Revision,
    buf: Vec<u8>,
    /// Key names and R2 declared types, by `id as u16`.
    keys: Vec<Option<(String, Option<String>)>>,
}

impl<W: Write> Writer<W> {
    /// Starts a file: writes the revision byte.
    pub fn new(inner: W, revision: Revision) -> Self {
        let mut w = Self::without_revision(inner, revision);
        w.buf.push(revision.byte());
        w
    }

    /// Writes messages only, with no revision byte (a stream frame after the first, or a
    /// headerless file).
    pub fn without_revision(inner: W, revision: Revision) -> Self {
        Writer { inner: Some(inner), revision, buf: Vec::with_capacity(CHUNK), keys: Vec::new() }
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    pub fn timestamp(&mut self, timestamp: f64) -> Result<(), RlogWriteError> {
        put_timestamp(&mut self.buf, self.revision, timestamp)?;
        self.maybe_flush()
    }

    /// Defines a key id (R2: with its declared type, required).
    pub fn define(&mut self, key_id: i16, key: &str, declared_type: Option<&str>) -> Result<(), RlogWriteError> {
        put_keydef(&mut self.buf, self.revision, key_id, key, declared_type)?;
        let i = usize::from(key_id as u16);
        if self.keys.len() <= i {
            self.keys.resize(i + 1, None);
        }
        self.keys[i] = Some((key.to_string(), declared_type.map(str::to_string)));
        self.maybe_flush()
    }

    /// Writes a value of a defined key. R1 values of keys never defined are written too (R1 values
    /// describe themselves, and headerless files have them); R2 values need their key's type.
    pub fn value(&mut self, key_id: i16, value: Value) -> Result<(), RlogWriteError> {
        let (key, declared) = match self.keys.get(usize::from(key_id as u16)).and_then(Option::as_ref) {
            Some((k, t)) => (k.as_str(), t.as_deref()),
            None if self.revision == Revision::R1 => ("", None),
            None => return Err(RlogWriteError::UndefinedKey { key_id }),
        };
        let start = self.buf.len();
        if let Err(e) = put_value(&mut self.buf, self.revision, key_id, key, declared, value) {
            self.buf.truncate(start);
            return Err(e);
        }
        self.maybe_flush()
    }

    fn maybe_flush(&mut self) -> Result<(), RlogWriteError> {
        if self.buf.len() >= CHUNK {
            if let Some(inner) = self.inner.as_mut() {
                inner.write_all(&self.buf)?;
            }
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes out everything buffered and returns the inner writer.
    pub fn finish(mut self) -> Result<W, RlogWriteError> {
        let Some(mut inner) = self.inner.take() else {
            return Err(std::io::Error::other("the writer was already finished").into());
        };
        inner.write_all(&self.buf)?;
        self.buf.clear();
        inner.flush()?;
        Ok(inner)
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            // Errors cannot be reported from drop; `finish` is the way to see them.
            let _ = inner.write_all(&self.buf).and_then(|_| inner.flush());
        }
    }
}

/// The producer side of RLOG: what AdvantageKit's `RLOGEncoder` does. Keys get ids in order of
/// first appearance and are defined just before their first value; a value is sent only when its
/// bytes differ from the last ones sent for its key (so NaN repeats are dropped, and 0.0 after
/// -0.0 is sent, as Java's `equals` does); and the catch-up data for a late client holds every key
/// and every current value.
#[derive(Clone, Debug)]
pub struct Encoder {
    revision: Revision,
    ids: HashMap<String, i16>,
    /// Name and declared type, by id order.
    keys: Vec<(String, Option<String>)>,
    /// The last value message sent per key, by id order.
    last: Vec<Option<Vec<u8>>>,
    last_timestamp: f64,
    scratch: Vec<u8>,
}

impl Encoder {
    pub fn new(revision: Revision) -> Self {
        Encoder {
            revision,
            ids: HashMap::new(),
            keys: Vec::new(),
            last: Vec::new(),
            last_timestamp: 0.0,
            scratch: Vec::new(),
        }
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The timestamp of the last encoded cycle (0.0 before the first).
    pub fn last_timestamp(&self) -> f64 {
        self.last_timestamp
    }

    /// Appends one cycle to `out` (a frame payload): its timestamp, then, per value that differs
    /// from the last one sent for its key, the key's definition if it is new and the value.
    /// `values` are `(key, R2 declared type, value)`; the type is only read when a key is new,
    /// and may be `None` where the value implies it. Returns how many values were written. On an
    /// error nothing of the failing value is written, and the values before it stay in `out`.
    pub fn encode_cycle<'a>(
        &mut self,
        timestamp: f64,
        values: impl IntoIterator<Item = (&'a str, Option<&'a str>, Value)>,
        out: &mut Vec<u8>,
    ) -> Result<usize, RlogWriteError> {
        put_timestamp(out, self.revision, timestamp)?;
        self.last_timestamp = timestamp;
        let mut written = 0;
        for (key, ty, value) in values {
            let (id, new) = match self.ids.get(key) {
                Some(&id) => (id, None),
                None => {
                    if self.keys.len() > usize::from(u16::MAX) {
                        return Err(RlogWriteError::TooManyKeys);
                    }
                    let ty = match (&value, ty) {
                        (_, Some(t)) => Some(t.to_string()),
                        (Value::R2(v), None) => match r2_default_type(v) {
                            Some(t) => Some(t.to_string()),
                            None => return Err(RlogWriteError::NoType { key: key.to_string() }),
                        },
                        (Value::R1(_), None) => None,
                    };
                    (self.keys.len() as u16 as i16, Some(ty))
                }
            };
            let index = usize::from(id as u16);
            let declared = match &new {
                Some(t) => t.as_deref(),
                None => self.keys[index].1.as_deref(),
            };
            self.scratch.clear();
            put_value(&mut self.scratch, self.revision, id, key, declared, value)?;
            if new.is_none() && self.last[index].as_deref() == Some(&self.scratch[..]) {
                continue;
            }
            if let Some(ty) = new {
                put_keydef(out, self.revision, id, key, ty.as_deref())?;
                self.ids.insert(key.to_string(), id);
                self.keys.push((key.to_string(), ty));
                self.last.push(None);
            }
            out.extend_from_slice(&self.scratch);
            self.last[index] = Some(self.scratch.clone());
            written += 1;
        }
        Ok(written)
    }

    /// Appends the catch-up data a client gets when it connects: the revision byte, the last
    /// timestamp, every key definition, and every key's current value.
    pub fn newcomer(&self, out: &mut Vec<u8>) {
        out.push(self.revision.byte());
        // These were all encoded once already, so they cannot fail now.
        let _ = put_timestamp(out, self.revision, self.last_timestamp);
        for (id, (key, ty)) in self.keys.iter().enumerate() {
            let _ = put_keydef(out, self.revision, id as u16 as i16, key, ty.as_deref());
        }
        for v in self.last.iter().flatten() {
            out.extend_from_slice(v);
        }
    }
}
