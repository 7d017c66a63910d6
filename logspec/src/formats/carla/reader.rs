//! The readers: the info header, then packets decoded as generated views (or, for the owned API,
//! typed records), frame by frame.
//!
//! Framing is the runtime's (`logspec_runtime::framed`: the same rule for a byte slice and a
//! stream); this module adds only the state CARLA carries between packets ([`Packets`]): the
//! reader-parameter values (header version, PhysicsControl wheel layout) and the frame the reader
//! is in.

use std::fmt;
use std::io::{self, Read};

use logspec_runtime::framed::{RawRecord, ReadError, ReadErrorDetail};
use logspec_runtime::{
    Cursor, Decode, DecodeError, DecodeErrorKind, Endian, Fixed, ReadBuf, ReadErrorKind, Record as _, View,
};

use super::{
    ActorPosition, Carla, CarlaRecord, CarlaRecordRef, FrameStart, InfoHeader, PacketHeader, PhysicsControl,
    PositionRef, RecorderVersion, Ue5ActorPosition, Ue5PositionRef, WheelSize, PARAMS, PARAM_VERSION, PARAM_WHEEL_SIZE,
};

/// The size of the packet header (`PacketHeader`: `u8 id`, `u32 size`), from the schema.
pub const PACKET_HEADER: usize = <PacketHeader as Fixed>::SIZE;
/// The header versions whose layouts the schema describes: the values of its `RecorderVersion`
/// enum, the type of the `version` reader parameter (whose unions must have a variant for each).
pub const KNOWN_VERSIONS: [u16; RecorderVersion::ALL.len()] = {
    let mut v = [0; RecorderVersion::ALL.len()];
    let mut i = 0;
    while i < v.len() {
        v[i] = RecorderVersion::ALL[i].0;
        i += 1;
    }
    v
};
/// How far the reader looks ahead, at open, for a Position packet that tells UE4 from UE5 files.
const SNIFF: usize = 1 << 20;

/// Every combination of reader-parameter values the readers use (each known version with each
/// wheel layout of the schema), so that views borrow their parameters for `'static` and only
/// their bytes from the input.
const WHEELS: usize = WheelSize::ALL.len();
static PARAM_SETS: [[i128; PARAMS.len()]; KNOWN_VERSIONS.len() * WHEELS] = {
    let mut t = [[0i128; PARAMS.len()]; KNOWN_VERSIONS.len() * WHEELS];
    let mut i = 0;
    while i < t.len() {
        t[i][PARAM_VERSION] = KNOWN_VERSIONS[i / WHEELS] as i128;
        t[i][PARAM_WHEEL_SIZE] = WheelSize::ALL[i % WHEELS].0 as i128;
        i += 1;
    }
    t
};

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

/// One packet borrowed from the reader's input: its body as a generated view
/// ([`CarlaRecordRef`]), checked when it was made, with no allocation.
/// [`to_owned`](Self::to_owned) gives the [`Packet`].
#[derive(Clone, Debug, PartialEq)]
pub struct PacketRef<'a> {
    /// Absolute byte offset of the 5-byte packet header.
    pub offset: u64,
    pub id: u8,
    /// The declared body size.
    pub size: u32,
    pub body: BodyRef<'a>,
}

/// A packet's body, borrowed: [`Body`] with views and byte slices.
#[derive(Clone, Debug, PartialEq)]
pub enum BodyRef<'a> {
    /// Decoded, using exactly `size` bytes (see [`Body::Record`]).
    Record { record: CarlaRecordRef<'a>, wheel_size: Option<WheelSize> },
    /// An id the schema does not know: the body's bytes.
    Unknown(&'a [u8]),
    /// A known id whose body does not decode in exactly `size` bytes (see [`Body::Mismatch`]).
    Mismatch { raw: &'a [u8], consumed: Option<u64>, error: DecodeError },
}

impl<'a> PacketRef<'a> {
    /// The packet's name in CARLA's sources (`Position`), or `None` for unknown ids.
    pub fn name(&self) -> Option<&'static str> {
        super::packet_name(self.id)
    }

    pub fn record(&self) -> Option<&CarlaRecordRef<'a>> {
        match &self.body {
            BodyRef::Record { record, .. } => Some(record),
            _ => None,
        }
    }

    /// The owned packet.
    #[allow(clippy::wrong_self_convention)]
    pub fn to_owned(&self) -> Packet {
        let body = match &self.body {
            BodyRef::Record { record, wheel_size } => {
                Body::Record { record: record.to_owned(), wheel_size: *wheel_size }
            }
            BodyRef::Unknown(raw) => Body::Unknown(raw.to_vec()),
            BodyRef::Mismatch { raw, consumed, error } => {
                Body::Mismatch { raw: raw.to_vec(), consumed: *consumed, error: error.clone() }
            }
        };
        Packet { offset: self.offset, id: self.id, size: self.size, body }
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
            CarlaErrorKind::UnsupportedVersion(v) => {
                write!(f, "unsupported CARLA recorder version {v} (the schema describes")?;
                for (i, k) in RecorderVersion::ALL.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{sep}{} = {}", k.0, k.name().unwrap_or("?"))?;
                }
                write!(f, "); its layouts are unknown, so nothing was decoded")
            }
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

/// Checks the info header at the start of `bytes` with the generated decoder, so that a bad one
/// is reported with the field that is wrong or cut; `Ok(Some(n))` when the bytes end inside it
/// and more may come (`n`: how many it needs so far).
fn check_header(bytes: &[u8], eof: bool) -> Result<Option<usize>, CarlaError> {
    let not = |why: String| CarlaError { offset: 0, kind: CarlaErrorKind::NotCarla(why) };
    let Err(e) = InfoHeader::decode(&mut Cursor::new(bytes), Endian::Little) else { return Ok(None) };
    match e.kind {
        DecodeErrorKind::UnexpectedEof { needed, .. } => {
            let want = usize::try_from(e.offset + needed).unwrap_or(usize::MAX);
            if eof || want <= bytes.len() {
                Err(not(format!("the file has {} bytes; its info header needs at least {want} ({e})", bytes.len())))
            } else {
                Ok(Some(want))
            }
        }
        _ => Err(not(format!(
            "the info header does not decode ({e}); expected u16 version, \"CARLA_RECORDER\", date, map"
        ))),
    }
}

impl CarlaError {
    /// A failure of the runtime's framed reader, in CARLA's terms: lengths of a cut packet count
    /// from its header, like the packet offset.
    #[cold]
    fn framing(e: ReadError) -> Self {
        let ReadErrorDetail { kind, offset, record_index, tag, .. } = e.into_detail();
        let header = record_index.is_none();
        let kind = match kind {
            ReadErrorKind::Io(e) => CarlaErrorKind::Io(e),
            ReadErrorKind::Truncated { needed, available, .. } if header => CarlaErrorKind::NotCarla(format!(
                "the file has {available} bytes; its info header needs at least {needed} \
                 (u16 version, \"CARLA_RECORDER\" with its length, date, map name with its length)"
            )),
            ReadErrorKind::Truncated { needed, available, .. } => {
                // A cut payload (its tag is known) is reported with the packet header counted in.
                let h = if tag.is_some() { PACKET_HEADER as u64 } else { 0 };
                CarlaErrorKind::Truncated { needed: needed + h, available: available + h }
            }
            ReadErrorKind::Decode(e) if header => CarlaErrorKind::NotCarla(format!(
                "the info header does not decode ({e}); expected u16 version, \"CARLA_RECORDER\", date, map"
            )),
            ReadErrorKind::Decode(e) | ReadErrorKind::BadRecordHeader(e) => {
                CarlaErrorKind::NotCarla(format!("the packet header does not decode: {e}"))
            }
            // CARLA's framing declares neither a sync nor a checksum, so it never resynchronises.
            other @ (ReadErrorKind::UnknownSchemaId { .. }
            | ReadErrorKind::OtherSchemaId { .. }
            | ReadErrorKind::Corrupt { .. }) => CarlaErrorKind::NotCarla(format!("{other:?}")),
        };
        CarlaError { offset, kind }
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

/// What CARLA carries from packet to packet, shared by [`Reader`] and [`SliceReader`]: the
/// reader-parameter values and the frame the reader is in.
#[derive(Clone, Debug)]
struct Packets {
    /// Index into [`PARAM_SETS`] of the header's version with the first wheel layout.
    version_set: usize,
    /// The wheel layout to try first: the last one that decoded a PhysicsControl packet.
    wheel: usize,
    frame: FrameState,
}

impl Packets {
    /// Checks the header's version (the UE5 check needs the bytes after the header).
    fn new(header: &InfoHeader) -> Result<Self, CarlaError> {
        let Some(v) = KNOWN_VERSIONS.iter().position(|v| *v == header.version) else {
            return Err(CarlaError { offset: 0, kind: CarlaErrorKind::UnsupportedVersion(header.version) });
        };
        Ok(Packets { version_set: v * WHEELS, wheel: 0, frame: FrameState::default() })
    }

    fn params(&self, wheel: usize) -> &'static [i128] {
        &PARAM_SETS[self.version_set + wheel]
    }

    /// A PhysicsControl packet that did not decode with the wheel layout tried first
    /// (`decoded`), with the other layouts: the first that decodes it, taken from then on.
    #[cold]
    #[inline(never)]
    fn other_wheels<'a>(
        &mut self,
        tag: u64,
        payload: &'a [u8],
        decoded: Option<Result<CarlaRecordRef<'a>, DecodeError>>,
    ) -> Option<Result<CarlaRecordRef<'a>, DecodeError>> {
        if let Some(Err(e)) = &decoded {
            if matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. } | DecodeErrorKind::TrailingBytes { .. }) {
                let other = (0..WHEELS).filter(|w| *w != self.wheel).find_map(|w| {
                    CarlaRecordRef::decode_with(tag, payload, self.params(w)).and_then(Result::ok).map(|r| (w, r))
                });
                if let Some((w, record)) = other {
                    self.wheel = w;
                    return Some(Ok(record));
                }
            }
        }
        decoded
    }

    /// Decodes one framed packet as a view. PhysicsControl is tried with each wheel layout the
    /// schema declares (the last one that worked first); the one that uses exactly `size` bytes
    /// wins and is tried first from then on. Always inlined, with the retry out of line: called
    /// once per packet, its packet (96 bytes) handed back through a call was copied through the
    /// stack in pieces (`info` of the bench's 200 MB recording 1.4x slower).
    #[inline(always)]
    fn decode<'a>(&mut self, raw: RawRecord<'a>) -> PacketRef<'a> {
        let (tag, payload) = (raw.header.tag, raw.payload);
        let (id, size) = (tag as u8, raw.header.len as u32);
        let packet = |body| PacketRef { offset: raw.offset, id, size, body };
        let mut decoded = CarlaRecordRef::decode_with(tag, payload, self.params(self.wheel));
        if tag == PhysicsControl::ID && matches!(decoded, Some(Err(_))) {
            decoded = self.other_wheels(tag, payload, decoded);
        }
        let record = match decoded {
            None => return packet(BodyRef::Unknown(payload)),
            Some(Ok(record)) => record,
            Some(Err(error)) => {
                let consumed = match error.kind {
                    DecodeErrorKind::TrailingBytes { extra } => Some(payload.len() as u64 - extra),
                    _ => None,
                };
                return packet(BodyRef::Mismatch { raw: payload, consumed, error });
            }
        };
        let wheel_size = match &record {
            CarlaRecordRef::FrameStart(fs) => {
                self.frame.index = Some(self.frame.index.map_or(0, |i| i + 1));
                self.frame.start = Some(fs.to_owned());
                self.frame.open = true;
                None
            }
            CarlaRecordRef::FrameEnd(_) => {
                self.frame.open = false;
                None
            }
            CarlaRecordRef::PhysicsControl(p) if p.records.iter().any(|v| !v.wheels.is_empty()) => {
                Some(WheelSize::ALL[self.wheel])
            }
            _ => None,
        };
        packet(BodyRef::Record { record, wheel_size })
    }
}

/// Looks at the first non-empty Position packet in `bytes` (the packets after the header, read
/// ahead; `at` is the offset of their start): one that does not decode with the UE4 layout
/// (`Position`) but does with the UE5 one (`Ue5Position`, both from the schema) makes this a UE5
/// recording.
fn sniff_ue5(bytes: &[u8], at: u64) -> Result<(), CarlaError> {
    for raw in logspec_runtime::SliceReader::<Carla>::records(bytes) {
        let Ok(raw) = raw else { break };
        if raw.header.tag != super::Position::ID {
            continue;
        }
        match PositionRef::view_exact(raw.payload) {
            Ok(p) if p.records.is_empty() => continue,
            Ok(_) => break,
            Err(_) => {
                if let Ok(ue5) = Ue5PositionRef::view_exact(raw.payload) {
                    if !ue5.records.is_empty() {
                        let records = u16::try_from(ue5.records.len()).unwrap_or(u16::MAX);
                        let offset = at + raw.offset;
                        let kind =
                            CarlaErrorKind::Ue5 { position_offset: offset, records, size: raw.header.len as u32 };
                        return Err(CarlaError { offset, kind });
                    }
                }
                break;
            }
        }
    }
    Ok(())
}

/// Reads a CARLA recording from any [`Read`], in constant memory (one buffer, grown only to the
/// largest packet actually present), on the runtime's framed reader.
pub struct Reader<R> {
    inner: logspec_runtime::Reader<R, Carla>,
    header_len: u64,
    packets: Packets,
    done: bool,
    /// For `next_frame`: a packet read ahead (the next frame's FrameStart), or an error to report
    /// after the packets before it.
    pending: Option<Result<Packet, CarlaError>>,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the info header, and tells UE5 recordings apart (see
    /// [`CarlaErrorKind::Ue5`]).
    pub fn new(inner: R) -> Result<Self, CarlaError> {
        // The header is checked by the generated decoder first, for errors that name its fields;
        // the buffer then goes to the runtime's reader, which reads the header from it again.
        let mut buf = ReadBuf::new(inner);
        let mut want = 1;
        loop {
            buf.fill(want).map_err(|e| CarlaError { offset: 0, kind: CarlaErrorKind::Io(e) })?;
            match check_header(buf.bytes(), buf.is_eof())? {
                Some(n) => want = n,
                None => break,
            }
        }
        let mut inner = logspec_runtime::Reader::<R, Carla>::from_buf(buf).map_err(CarlaError::framing)?;
        let packets = Packets::new(inner.file_header())?;
        let header_len = inner.position();
        let ahead = inner.peek(SNIFF).map_err(|e| CarlaError { offset: header_len, kind: CarlaErrorKind::Io(e) })?;
        sniff_ue5(ahead, header_len)?;
        Ok(Reader { inner, header_len, packets, done: false, pending: None })
    }

    pub fn header(&self) -> &InfoHeader {
        self.inner.file_header()
    }

    /// The header's length in bytes (its fixed part and the map name).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Byte offset of the next packet.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// Where the reader is in the frame structure (after the last packet returned).
    pub fn frame(&self) -> &FrameState {
        &self.packets.frame
    }

    /// The next packet, its body a view into the reader's buffer, or `None` at the end. A
    /// truncated last packet (or an I/O error) is returned as an error once, after every
    /// complete packet; then `None`.
    #[inline]
    pub fn next_packet_ref(&mut self) -> Option<Result<PacketRef<'_>, CarlaError>> {
        if self.done {
            return None;
        }
        let next = self.inner.next_raw();
        lend(&mut self.packets, &mut self.done, next)
    }

    /// [`next_packet_ref`](Self::next_packet_ref), with the frame state after it (what
    /// [`frame`](Self::frame) says, which the borrow of the packet would otherwise keep out of
    /// reach until the packet is dropped).
    #[inline]
    pub fn next_packet_in_frame(&mut self) -> Option<Result<(PacketRef<'_>, &FrameState), CarlaError>> {
        if self.done {
            return None;
        }
        let next = self.inner.next_raw();
        let packet = lend(&mut self.packets, &mut self.done, next)?;
        Some(packet.map(|p| (p, &self.packets.frame)))
    }

    /// [`next_packet_ref`](Self::next_packet_ref), owned.
    pub fn next_packet(&mut self) -> Option<Result<Packet, CarlaError>> {
        self.next_packet_ref().map(|p| p.map(|p| p.to_owned()))
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
                        let index = self.packets.frame.index.unwrap_or(0);
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

/// One framed packet (or the reader's end or failure) decoded as a view, for the streaming
/// reader's two lending calls.
#[inline(always)]
fn lend<'a>(
    packets: &mut Packets,
    done: &mut bool,
    next: Option<Result<RawRecord<'a>, ReadError>>,
) -> Option<Result<PacketRef<'a>, CarlaError>> {
    match next {
        Some(Ok(raw)) => Some(Ok(packets.decode(raw))),
        Some(Err(e)) => {
            *done = true;
            Some(Err(CarlaError::framing(e)))
        }
        None => {
            *done = true;
            None
        }
    }
}

/// Reads a CARLA recording held in memory, lending every packet as a view of the input itself
/// (nothing is copied): the fastest way through a recording. Same framing, checks and errors as
/// [`Reader`].
pub struct SliceReader<'a> {
    inner: logspec_runtime::SliceReader<'a, Carla>,
    header: InfoHeader,
    packets: Packets,
}

impl<'a> SliceReader<'a> {
    /// Decodes and checks the info header, and tells UE5 recordings apart, like [`Reader::new`].
    pub fn new(bytes: &'a [u8]) -> Result<Self, CarlaError> {
        check_header(bytes, true)?;
        let (header, inner) = logspec_runtime::SliceReader::<Carla>::new(bytes).map_err(CarlaError::framing)?;
        let packets = Packets::new(&header)?;
        let at = inner.position();
        let start = usize::try_from(at).unwrap_or(bytes.len()).min(bytes.len());
        sniff_ue5(&bytes[start..bytes.len().min(start.saturating_add(SNIFF))], at)?;
        Ok(SliceReader { inner, header, packets })
    }

    pub fn header(&self) -> &InfoHeader {
        &self.header
    }

    /// Byte offset of the next packet.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// Where the reader is in the frame structure (after the last packet returned).
    pub fn frame(&self) -> &FrameState {
        &self.packets.frame
    }

    /// Each packet that starts before byte `end`, with the frame state after it, handed to `f`
    /// in turn (a reading error last) until `f` breaks, whose value it returns; `at` is told
    /// each packet's offset first. Each packet is made where `f` reads it, not returned (as
    /// [`next`](Iterator::next) returns one: 96 bytes copied on the way, once per packet).
    #[inline]
    pub fn each_in_frame<B>(
        &mut self,
        end: u64,
        mut at: impl FnMut(u64),
        mut f: impl FnMut(Result<(&PacketRef<'a>, &FrameState), CarlaError>) -> core::ops::ControlFlow<B>,
    ) -> Option<B> {
        while self.inner.position() < end {
            at(self.inner.position());
            let flow = match self.inner.next()? {
                Ok(raw) => {
                    let p = self.packets.decode(raw);
                    f(Ok((&p, &self.packets.frame)))
                }
                Err(e) => f(Err(CarlaError::framing(e))),
            };
            if let core::ops::ControlFlow::Break(b) = flow {
                return Some(b);
            }
        }
        None
    }

    /// Moves the reader to byte offset `pos` of the same bytes, where a packet starts after
    /// `frames` frames (a chunk of a time index, at its first frame's FrameStart): the frame
    /// state is that of a reader between frame `frames - 1` and the next, the wheel layout kept.
    /// A position that is not a packet's start reads whatever is there as packets, with the
    /// errors that gives; one past the end ends the reading.
    pub fn seek(&mut self, pos: u64, frames: u64) {
        self.inner.seek(pos, 0);
        self.packets.frame = FrameState { index: frames.checked_sub(1), start: None, open: false };
    }
}

impl<'a> Iterator for SliceReader<'a> {
    type Item = Result<PacketRef<'a>, CarlaError>;

    /// The next packet, or `None` at the end; a truncated last packet is an error, once.
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.inner.next()? {
            Ok(raw) => Ok(self.packets.decode(raw)),
            Err(e) => Err(CarlaError::framing(e)),
        })
    }
}
