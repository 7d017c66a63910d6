//! The streaming reader: the info header, then packets decoded into typed records, frame by frame.

use std::fmt;
use std::io::{self, Read};

use logspec_runtime::{Cursor, Decode, DecodeError, DecodeErrorKind, Endian, Fixed, ReadBuf, Record as _};

use super::{
    ActorPosition, Carla, CarlaRecord, FrameStart, InfoHeader, PacketHeader, Position, Ue5ActorPosition, Ue5Position,
    WheelSize, PARAMS, PARAM_VERSION, PARAM_WHEEL_SIZE,
};

/// The size of the packet header (`PacketHeader`: `u8 id`, `u32 size`), from the schema.
pub const PACKET_HEADER: usize = <PacketHeader as Fixed>::SIZE;
/// The header versions whose layouts the schema describes.
pub const KNOWN_VERSIONS: [u16; 2] = [1, 2];
/// How far the reader looks ahead, at open, for a Position packet that tells UE4 from UE5 files.
const SNIFF: usize = 1 << 20;

/// One packet, where it is, and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// Absolute byte offset of the 5-byte packet header.
    pub offset: u64,
    pub id: u8,
    /// The declared body size.
    pub size: u32,
    pub body: Body,
}

/// A packet's body.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// Decoded, using exactly `size` bytes. `wheel_size` is the PhysicsControl wheel layout that
    /// did, for PhysicsControl packets with at least one wheel.
    Record { record: CarlaRecord, wheel_size: Option<WheelSize> },
    /// An id the schema does not know (a newer CARLA, a fork): skipped by `size`, bytes kept.
    Unknown(Vec<u8>),
    /// A known id whose body does not decode in exactly `size` bytes: skipped by `size`, bytes
    /// kept. `consumed` is how many bytes the layout used, when it decoded at all.
    Mismatch { raw: Vec<u8>, consumed: Option<u64>, error: DecodeError },
}

impl Packet {
    /// The packet's name in CARLA's sources (`Position`), or `None` for unknown ids.
    pub fn name(&self) -> Option<&'static str> {
        super::packet_name(self.id)
    }

    pub fn record(&self) -> Option<&CarlaRecord> {
        match &self.body {
            Body::Record { record, .. } => Some(record),
            _ => None,
        }
    }
}

/// Why reading stopped (or could not start).
#[derive(Debug)]
pub struct CarlaError {
    /// Absolute byte offset: of the packet (or header) that failed.
    pub offset: u64,
    pub kind: CarlaErrorKind,
}

#[derive(Debug)]
pub enum CarlaErrorKind {
    Io(io::Error),
    /// The file does not start with a CARLA info header (or the header is cut short).
    NotCarla(String),
    /// A header version whose layouts are not known.
    UnsupportedVersion(u16),
    /// A UE5 (CARLA 0.10) recording: 3 x f64 vectors under the same version number.
    Ue5 {
        position_offset: u64,
        records: u16,
        size: u32,
    },
    /// The input ends inside a packet: `needed` bytes from `offset`, only `available` there.
    Truncated {
        needed: u64,
        available: u64,
    },
}

impl fmt::Display for CarlaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CarlaErrorKind::Io(e) => write!(f, "at byte {}: I/O error: {e}", self.offset),
            CarlaErrorKind::NotCarla(why) => write!(f, "not a CARLA recorder file: {why}"),
            CarlaErrorKind::UnsupportedVersion(v) => write!(
                f,
                "unsupported CARLA recorder version {v} (known: 1 = CARLA 0.9.4-0.9.15, 2 = 0.9.16); \
                 its layouts are unknown, so nothing was decoded"
            ),
            CarlaErrorKind::Ue5 { position_offset, records, size } => write!(
                f,
                "this is a UE5 (CARLA 0.10) recording, which stores vectors as 3 x f64 under the same version \
                 number: the Position packet at byte {position_offset} holds {records} records in {size} bytes \
                 ({} bytes each; UE4 files use {}). logspec reads the UE4 layout of CARLA 0.9.x only",
                <Ue5ActorPosition as Fixed>::SIZE,
                <ActorPosition as Fixed>::SIZE,
            ),
            CarlaErrorKind::Truncated { needed, available } => write!(
                f,
                "at byte {}: the file ends inside a packet: it needs {needed} bytes, only {available} are left \
                 (every complete packet before it was read)",
                self.offset
            ),
        }
    }
}

impl std::error::Error for CarlaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CarlaErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Where the reader is in the frame structure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameState {
    /// 0-based ordinal of the current (or last) frame; `None` before the first FrameStart.
    pub index: Option<u64>,
    /// The current (or last) frame's FrameStart.
    pub start: Option<FrameStart>,
    /// Between a FrameStart and its FrameEnd.
    pub open: bool,
}

/// One frame: its FrameStart and every packet up to and including its FrameEnd.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// 0-based ordinal.
    pub index: u64,
    pub start: FrameStart,
    /// Every packet after the FrameStart, in file order (the FrameEnd last, when `complete`).
    pub packets: Vec<Packet>,
    /// Whether the frame ended with a FrameEnd (false when the file ends inside it).
    pub complete: bool,
}

/// Reads a CARLA recording from any [`Read`], in constant memory (one buffer, grown only to the
/// largest packet actually present).
pub struct Reader<R> {
    buf: ReadBuf<R>,
    header: InfoHeader,
    header_len: u64,
    /// Values of the schema's reader parameters, by index (`PARAMS`).
    params: [i128; PARAMS.len()],
    frame: FrameState,
    done: bool,
    /// For `next_frame`: a packet read ahead (the next frame's FrameStart), or an error to report
    /// after the packets before it.
    pending: Option<Result<Packet, CarlaError>>,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the info header, and tells UE5 recordings apart (see
    /// [`CarlaErrorKind::Ue5`]).
    pub fn new(inner: R) -> Result<Self, CarlaError> {
        let mut buf = ReadBuf::new(inner);
        let io = |e| CarlaError { offset: 0, kind: CarlaErrorKind::Io(e) };
        let not = |why: String| CarlaError { offset: 0, kind: CarlaErrorKind::NotCarla(why) };
        // The generated decoder reads the header; when the bytes run out it says how many it
        // needs (the map name's length comes from its prefix), so the buffer grows only to that.
        let mut want = 0usize;
        let (header, header_len) = loop {
            buf.fill(want).map_err(io)?;
            let mut c = Cursor::new(buf.bytes());
            match InfoHeader::decode(&mut c, Endian::Little) {
                Ok(h) => break (h, c.position() as u64),
                Err(e) => match e.kind {
                    DecodeErrorKind::UnexpectedEof { needed, .. }
                        if buf.available() >= want && (e.offset + needed) as usize > want =>
                    {
                        want = (e.offset + needed) as usize;
                    }
                    DecodeErrorKind::UnexpectedEof { .. } => {
                        return Err(not(format!(
                            "the file has {} bytes; its info header needs at least {want} ({e})",
                            buf.available()
                        )));
                    }
                    _ => {
                        return Err(not(format!(
                            "the info header does not decode ({e}); expected u16 version, \"CARLA_RECORDER\", date, map"
                        )))
                    }
                },
            }
        };
        if !KNOWN_VERSIONS.contains(&header.version) {
            return Err(CarlaError { offset: 0, kind: CarlaErrorKind::UnsupportedVersion(header.version) });
        }
        buf.take(header_len as usize);
        let mut params = [0i128; PARAMS.len()];
        params[PARAM_VERSION] = i128::from(header.version);
        params[PARAM_WHEEL_SIZE] = i128::from(WheelSize::ALL[0].0);
        let mut r =
            Reader { buf, header, header_len, params, frame: FrameState::default(), done: false, pending: None };
        r.sniff_ue5()?;
        Ok(r)
    }

    /// Looks at the first non-empty Position packet within [`SNIFF`] bytes: one that does not
    /// decode with the UE4 layout (`Position`) but does with the UE5 one (`Ue5Position`, both
    /// from the schema) makes this a UE5 recording.
    fn sniff_ue5(&mut self) -> Result<(), CarlaError> {
        let at = self.buf.position();
        self.buf.fill(SNIFF).map_err(|e| CarlaError { offset: at, kind: CarlaErrorKind::Io(e) })?;
        let b = self.buf.bytes();
        let mut o = 0usize;
        while let Ok(h) = PacketHeader::decode_fixed(&b[o..], Endian::Little) {
            let start = o + PACKET_HEADER;
            let Some(body) = b.get(start..start + h.size as usize) else { break };
            if u64::from(h.id) == Position::ID {
                match Position::decode_exact(body) {
                    Ok(p) if p.records.is_empty() => {}
                    Ok(_) => break,
                    Err(_) => {
                        if let Ok(ue5) = Ue5Position::decode_exact(body) {
                            if !ue5.records.is_empty() {
                                let records = u16::try_from(ue5.records.len()).unwrap_or(u16::MAX);
                                let kind =
                                    CarlaErrorKind::Ue5 { position_offset: at + o as u64, records, size: h.size };
                                return Err(CarlaError { offset: at + o as u64, kind });
                            }
                        }
                        break;
                    }
                }
            }
            o = start + h.size as usize;
        }
        Ok(())
    }

    pub fn header(&self) -> &InfoHeader {
        &self.header
    }

    /// The header's length in bytes (its fixed part and the map name).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Byte offset of the next packet.
    pub fn position(&self) -> u64 {
        self.buf.position()
    }

    /// Where the reader is in the frame structure (after the last packet returned).
    pub fn frame(&self) -> &FrameState {
        &self.frame
    }

    /// The next packet, or `None` at the end. A truncated last packet (or an I/O error) is
    /// returned as an error once, after every complete packet; then `None`.
    pub fn next_packet(&mut self) -> Option<Result<Packet, CarlaError>> {
        if self.done {
            return None;
        }
        let offset = self.buf.position();
        if let Err(e) = self.buf.fill(PACKET_HEADER) {
            return Some(Err(self.fail(offset, CarlaErrorKind::Io(e))));
        }
        let avail = self.buf.available();
        if avail == 0 {
            self.done = true;
            return None;
        }
        if avail < PACKET_HEADER {
            let kind = CarlaErrorKind::Truncated { needed: PACKET_HEADER as u64, available: avail as u64 };
            return Some(Err(self.fail(offset, kind)));
        }
        let h = match PacketHeader::decode_fixed(self.buf.bytes(), Endian::Little) {
            Ok(h) => h,
            Err(e) => {
                let kind = CarlaErrorKind::NotCarla(format!("the packet header does not decode: {e}"));
                return Some(Err(self.fail(offset, kind)));
            }
        };
        let (id, size) = (h.id, h.size);
        let total = PACKET_HEADER + size as usize;
        if let Err(e) = self.buf.fill(total) {
            return Some(Err(self.fail(offset, CarlaErrorKind::Io(e))));
        }
        if self.buf.available() < total {
            let kind = CarlaErrorKind::Truncated { needed: total as u64, available: self.buf.available() as u64 };
            return Some(Err(self.fail(offset, kind)));
        }
        let params = self.params;
        let payload = &self.buf.bytes()[PACKET_HEADER..total];
        let (body, wheel_param) = decode_body(id, payload, params);
        if let Some(w) = wheel_param {
            // The next PhysicsControl packet most likely has the same layout: try it first.
            self.params[PARAM_WHEEL_SIZE] = w;
        }
        self.buf.take(total);
        match &body {
            Body::Record { record: CarlaRecord::FrameStart(fs), .. } => {
                self.frame.index = Some(self.frame.index.map_or(0, |i| i + 1));
                self.frame.start = Some(*fs);
                self.frame.open = true;
            }
            Body::Record { record: CarlaRecord::FrameEnd(_), .. } => self.frame.open = false,
            _ => {}
        }
        Some(Ok(Packet { offset, id, size, body }))
    }

    #[cold]
    fn fail(&mut self, offset: u64, kind: CarlaErrorKind) -> CarlaError {
        self.done = true;
        CarlaError { offset, kind }
    }

    /// The next whole frame: a FrameStart and the packets up to its FrameEnd. Packets before the
    /// first FrameStart or between a FrameEnd and the next FrameStart (which CARLA never writes)
    /// are returned in a frame of their own only if they are all there is: they are skipped, and
    /// counted by `info`. On an error, the frame read so far comes first (`complete = false`),
    /// then the error.
    pub fn next_frame(&mut self) -> Option<Result<Frame, CarlaError>> {
        let mut frame: Option<Frame> = None;
        loop {
            let next = match self.pending.take() {
                Some(p) => Some(p),
                None => self.next_packet(),
            };
            match next {
                None => return frame.map(Ok),
                Some(Err(e)) => match frame {
                    Some(f) => {
                        self.pending = Some(Err(e));
                        return Some(Ok(f));
                    }
                    None => return Some(Err(e)),
                },
                Some(Ok(p)) => match (&p.body, frame.as_mut()) {
                    (Body::Record { record: CarlaRecord::FrameStart(fs), .. }, None) => {
                        let index = self.frame.index.unwrap_or(0);
                        frame = Some(Frame { index, start: *fs, packets: Vec::new(), complete: false });
                    }
                    (Body::Record { record: CarlaRecord::FrameStart(_), .. }, Some(_)) => {
                        self.pending = Some(Ok(p));
                        return frame.map(Ok);
                    }
                    (Body::Record { record: CarlaRecord::FrameEnd(_), .. }, Some(f)) => {
                        f.packets.push(p);
                        f.complete = true;
                        return frame.map(Ok);
                    }
                    (_, Some(f)) => f.packets.push(p),
                    (_, None) => {}
                },
            }
        }
    }
}

/// Decodes one packet body with the reader parameters `params`. PhysicsControl is tried with each
/// wheel layout the schema declares (the current one first); the one that uses exactly `size`
/// bytes wins, and is returned as the new preferred layout.
fn decode_body(id: u8, payload: &[u8], mut params: [i128; PARAMS.len()]) -> (Body, Option<i128>) {
    let tag = u64::from(id);
    let Some(first) = Carla::decode_record_with(tag, payload, &params) else {
        return (Body::Unknown(payload.to_vec()), None);
    };
    let first_err = match first {
        Ok(record) => {
            let wheel_size = wheel_size_of(&record, params[PARAM_WHEEL_SIZE]);
            return (Body::Record { record, wheel_size }, None);
        }
        Err(e) => e,
    };
    if matches!(first_err.kind, DecodeErrorKind::UnexpectedEof { .. } | DecodeErrorKind::TrailingBytes { .. })
        && tag == super::PhysicsControl::ID
    {
        let tried = params[PARAM_WHEEL_SIZE];
        for w in WheelSize::ALL.iter().map(|w| i128::from(w.0)).filter(|w| *w != tried) {
            params[PARAM_WHEEL_SIZE] = w;
            if let Some(Ok(record)) = Carla::decode_record_with(tag, payload, &params) {
                let wheel_size = wheel_size_of(&record, w);
                return (Body::Record { record, wheel_size }, Some(w));
            }
        }
    }
    let consumed = match first_err.kind {
        DecodeErrorKind::TrailingBytes { extra } => Some(payload.len() as u64 - extra),
        _ => None,
    };
    (Body::Mismatch { raw: payload.to_vec(), consumed, error: first_err }, None)
}

/// The wheel layout of a PhysicsControl record that has wheels.
fn wheel_size_of(record: &CarlaRecord, param: i128) -> Option<WheelSize> {
    match record {
        CarlaRecord::PhysicsControl(p) if p.records.iter().any(|v| !v.wheels.is_empty()) => {
            u8::try_from(param).ok().map(WheelSize)
        }
        _ => None,
    }
}
