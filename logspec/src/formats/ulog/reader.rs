//! The ULog reader: the file header and every message's fixed part decoded by the generated
//! views of `schemas/ulog.toml`, the state a schema cannot hold (formats, subscriptions, the
//! appended-data offsets), and messages lent one at a time: from a read buffer that grows only
//! to the largest message, or in place from bytes in memory (a mapped file).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::sync::Arc;

use logspec_ir::ir::{Prim, Ty};
use logspec_ir::ulog::{FormatSet, Lowered, UFormat, UlogError};
use logspec_runtime::{
    resync, Cursor, Decode, DecodeError, DecodeErrorKind, Encode, Endian, Fixed, Input, ReadBuf, Resync, SliceBuf,
    Visitor, WindowBuf,
};

use super::{FileHeader, FlagBitsRef, MessageHeader, Sync, UlogRecordRef};
use crate::dynamic::Plan;
use crate::formats::rosbag::{Value, ValueView, Visiting};

/// A header whose type is unknown and whose size is above this is taken for corruption, not
/// skipped (pyulog's rule, `_check_packet_corruption`), as is a type byte of 0 or a size of 0.
pub const CORRUPT_SIZE: u16 = 10_000;

/// The IR types the reader may compile for subscriptions, beyond one per 8 bytes read: real
/// logs compile a few hundred; a file that redefines a deeply nested format before each of its
/// subscriptions would otherwise compile it again each time.
const COMPILE_BUDGET: u64 = 4096;

/// How much the resynchronisation reads ahead at a time while it looks for a Sync message.
const SEARCH: usize = 64 * 1024;

/// A subscribed format, compiled: its IR and the plan that decodes Data messages.
#[derive(Debug)]
pub struct Decoder {
    pub lowered: Lowered,
    root: Ty,
    min: Vec<u64>,
    plan: Plan,
    /// Where the root format's `uint64_t timestamp` field is, if it has one.
    timestamp: Option<usize>,
}

impl Decoder {
    pub fn new(lowered: Lowered) -> Decoder {
        let root = Ty::Named(lowered.root);
        let min = logspec_ir::layout::min_sizes(&lowered.schema);
        let plan = Plan::new(&lowered.schema, &min, &root);
        let timestamp = lowered
            .schema
            .strukt(lowered.root)
            .fields
            .iter()
            .find(|f| f.name == "timestamp" && f.ty == Ty::Prim(Prim::U64))
            .and_then(|f| f.offset)
            .map(|o| o as usize);
        Decoder { lowered, root, min, plan, timestamp }
    }

    /// The `timestamp` field of a Data payload (microseconds), if the format has one.
    #[inline]
    pub fn timestamp(&self, payload: &[u8]) -> Option<u64> {
        let at = self.timestamp?;
        u64::decode_fixed(payload.get(at..)?, Endian::Little).ok()
    }

    /// The IR of the root format (and the formats it nests).
    pub fn ty(&self) -> &Ty {
        &self.root
    }

    /// The bytes of a Data payload that hold the format: all of them, when the payload is the
    /// format's size without its trailing padding or with it (the PX4 description lets writers leave it out).
    #[inline]
    pub fn data<'a>(&self, payload: &'a [u8]) -> Result<&'a [u8], String> {
        let (size, pad) = (self.lowered.size, self.lowered.trailing_padding);
        let n = payload.len() as u64;
        if n == size || (pad > 0 && n == size + pad) {
            Ok(&payload[..size as usize])
        } else if pad > 0 {
            Err(format!("{n} bytes of data; the format takes {size} ({} with its trailing padding)", size + pad))
        } else {
            Err(format!("{n} bytes of data; the format takes {size}"))
        }
    }

    /// A Data payload as a value tree.
    pub fn decode(&self, payload: &[u8]) -> Result<Value, String> {
        let data = self.data(payload)?;
        crate::formats::rosbag::decode_value(&self.lowered.schema, &self.min, &self.root, data)
            .map_err(|e| e.to_string())
    }

    /// A Data payload straight into a visitor (as [`Decoder::view`] of [`Decoder::decode`] shows it).
    pub fn visit(&self, payload: &[u8], v: &mut impl Visitor) -> Result<(), String> {
        let data = self.data(payload)?;
        self.plan.decode(&self.lowered.schema, &self.min, data, &mut Visiting::new(v, None)).map_err(|e| e.to_string())
    }

    /// A Data payload straight into a visitor as a struct named `name` (the dump's `"data"`).
    pub fn visit_as(&self, payload: &[u8], name: Option<&str>, v: &mut (impl Visitor + ?Sized)) -> Result<(), String> {
        let data = self.data(payload)?;
        let mut sink = Visiting::new(v, name);
        self.plan.decode(&self.lowered.schema, &self.min, data, &mut sink).map_err(|e| e.to_string())
    }

    /// Whether a Data payload decodes (its size, and every count its format claims), keeping
    /// nothing.
    pub fn check(&self, payload: &[u8]) -> Result<(), String> {
        let data = self.data(payload)?;
        self.plan.check(&self.lowered.schema, &self.min, data).map_err(|e| e.to_string())
    }

    /// A decoded value with its field names, for a visitor.
    pub fn view<'a>(&'a self, v: &'a Value) -> ValueView<'a> {
        ValueView { schema: &self.lowered.schema, ty: &self.root, value: v }
    }
}

/// A subscription (`A`): a msg_id bound to a format and an instance.
#[derive(Debug)]
pub struct Subscribed {
    pub msg_id: u16,
    pub multi_id: u8,
    /// The format's name.
    pub name: String,
    /// The compiled format, or why it does not compile (an undefined or circular format).
    pub decoder: Result<Arc<Decoder>, UlogError>,
    /// Cleared by an Unsubscription (`R`).
    pub active: bool,
    /// The subscription's number among those read, from 0: a reader of the messages may keep a
    /// table by it, whose size the subscriptions justify (msg_ids may be re-subscribed).
    pub serial: usize,
}

/// What a message is, lent until the next call.
#[derive(Debug)]
pub enum Event<'a> {
    /// The flag bits (boxed, as the format error below: each comes once or seldom, and a small
    /// `Event` is what every Data message is lent in).
    FlagBits(Box<FlagBitsRef<'a>>),
    /// A Format message: the format, or why its text does not parse.
    Format(Result<&'a UFormat, Box<UlogError>>),
    Info {
        key: &'a [u8],
        value: &'a [u8],
    },
    InfoMultiple {
        is_continued: bool,
        key: &'a [u8],
        value: &'a [u8],
    },
    /// A parameter: an initial value in the definitions section, a change in the data section.
    Parameter {
        key: &'a [u8],
        value: &'a [u8],
        initial: bool,
    },
    ParameterDefault {
        default_types: u8,
        key: &'a [u8],
        value: &'a [u8],
    },
    Subscription(&'a Subscribed),
    Unsubscription {
        msg_id: u16,
    },
    /// A Data message, with its subscription (`None`: no subscription has its msg_id).
    Data {
        msg_id: u16,
        subscription: Option<&'a Subscribed>,
        payload: &'a [u8],
    },
    /// A logged string (`L`), or a tagged one (`C`, with its tag).
    Logging {
        level: u8,
        tag: Option<u16>,
        timestamp: u64,
        message: &'a [u8],
    },
    Sync,
    Dropout {
        duration_ms: u16,
    },
    /// A message of a type this reader does not know, skipped by its size.
    Unknown {
        msg_type: u8,
        payload: &'a [u8],
    },
    /// A message of a known type whose fixed part does not fit its size: skipped by its size.
    Invalid {
        msg_type: u8,
        error: DecodeError,
    },
    /// Not a message: a corrupted region (a header no writer makes: type 0, size 0, or an unknown
    /// type over [`CORRUPT_SIZE`] bytes) skipped up to the end of the next Sync message
    /// (`resumed`), or to the end of the file (`None`).
    Resynced {
        resumed: Option<u64>,
    },
}

/// A message as [`Reader::next_message`] lends it.
#[derive(Debug)]
pub struct Message<'a> {
    /// Absolute byte offset of the message header (of the corrupted region for
    /// [`Event::Resynced`]).
    pub offset: u64,
    /// 0-based index among the messages read.
    pub index: u64,
    pub event: Event<'a>,
}

/// An error that ends reading.
#[derive(Debug)]
pub struct ReadError {
    pub offset: u64,
    /// The index of the message that failed, when past the file header.
    pub index: Option<u64>,
    pub kind: ReadErrorKind,
}

#[derive(Debug)]
pub enum ReadErrorKind {
    Io(io::Error),
    /// The file does not start with the ULog magic.
    NotUlog(DecodeError),
    /// The flag bits set an incompatible flag other than DATA_APPENDED: the file cannot be read.
    Incompatible([u8; 8]),
    /// The input ends inside the file header or a message.
    Truncated {
        what: &'static str,
        needed: u64,
        available: u64,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}", self.offset)?;
        if let Some(i) = self.index {
            write!(f, ", message {i}")?;
        }
        f.write_str(": ")?;
        match &self.kind {
            ReadErrorKind::Io(e) => write!(f, "read error: {e}"),
            ReadErrorKind::NotUlog(e) => write!(f, "not a ULog file: {e}"),
            ReadErrorKind::Incompatible(flags) => write!(
                f,
                "the flag bits set incompatible flags {flags:?} that this reader does not know (only bit 0 of byte 0, DATA_APPENDED); the file cannot be read"
            ),
            ReadErrorKind::Truncated { what, needed, available } => {
                write!(f, "the file ends inside a {what}: it needs {needed} bytes, {available} are left")?;
                if self.index.is_some() {
                    f.write_str("; every message before it was read")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            ReadErrorKind::NotUlog(e) => Some(e),
            _ => None,
        }
    }
}

/// A streaming ULog reader over any `Read`, in constant memory (one buffer, grown only to the
/// largest message), or, made by [`Reader::from_slice`] or [`Reader::from_window`], over bytes
/// already in memory, read in place. `I` is where the bytes come from (the runtime's [`Input`]);
/// one loop reads every kind.
pub struct Reader<R, I = ReadBuf<R>> {
    buf: I,
    _input: PhantomData<R>,
    header: FileHeader,
    /// Bytes of the message last lent, consumed at the next call.
    pos: usize,
    formats: FormatSet,
    /// Compiled formats by name, shared by their subscriptions; cleared when a format is
    /// redefined.
    compiled: HashMap<String, Arc<Decoder>>,
    /// The subscriptions by msg_id, as an index: grown to the largest msg_id subscribed, so at
    /// most 65,536 entries of 8 bytes whatever the input (PX4 numbers msg_ids from 0).
    subscriptions: Vec<Option<Box<Subscribed>>>,
    /// Subscriptions read so far (the next one's [`Subscribed::serial`]).
    serials: usize,
    /// IR types compiled so far (bounded by [`COMPILE_BUDGET`] and the bytes read).
    compiled_types: u64,
    /// The appended-data offsets of the flag bits not yet reached, in file order.
    cuts: Vec<u64>,
    /// Appended-data offsets that were behind the reader when it learnt them (ignored).
    pub bad_offsets: Vec<u64>,
    /// Messages cut by an appended-data offset (the writer stopped inside them), discarded.
    pub cut_messages: u64,
    /// The last format name parsed (lent by [`Event::Format`]).
    last_format: String,
    definitions: bool,
    index: u64,
    done: bool,
    sync: [u8; Sync::SIZE],
}

/// A ULog reader of bytes in memory, read in place ([`Reader::from_slice`]).
pub type SliceReader<'a> = Reader<&'a [u8], SliceBuf<'a>>;

impl<R: Read> Reader<R> {
    /// Reads and checks the file header.
    pub fn new(inner: R) -> Result<Self, ReadError> {
        Self::over(ReadBuf::new(inner))
    }
}

impl<'a> SliceReader<'a> {
    /// A reader of a ULog file already in memory (read whole, or mapped): as [`Reader::new`]
    /// over the slice, but nothing is copied: the payloads it lends point into `bytes`.
    pub fn from_slice(bytes: &'a [u8]) -> Result<Self, ReadError> {
        Self::over(SliceBuf::new(bytes))
    }
}

impl<'a, A: FnMut(u64)> Reader<&'a [u8], WindowBuf<'a, A>> {
    /// A reader of ULog bytes in memory lent a window at a time (a mapped file, see
    /// [`WindowBuf`]): read in place, as [`Reader::from_slice`].
    pub fn from_window(buf: WindowBuf<'a, A>) -> Result<Self, ReadError> {
        Self::over(buf)
    }
}

impl<R, I: Input> Reader<R, I> {
    /// Reads and checks the file header from `buf`.
    fn over(mut buf: I) -> Result<Self, ReadError> {
        let fail = |kind| ReadError { offset: 0, index: None, kind };
        buf.fill(FileHeader::SIZE).map_err(|e| fail(ReadErrorKind::Io(e)))?;
        let header = match FileHeader::decode(&mut Cursor::new(buf.bytes()), Endian::Little) {
            Ok(h) => h,
            Err(e) => match e.kind {
                DecodeErrorKind::BadConst { .. } => return Err(fail(ReadErrorKind::NotUlog(e))),
                DecodeErrorKind::UnexpectedEof { .. } if buf.available() < super::MAGIC.len() => {
                    return Err(fail(ReadErrorKind::NotUlog(e)))
                }
                _ => {
                    let (needed, available) = (FileHeader::SIZE as u64, buf.available() as u64);
                    return Err(fail(ReadErrorKind::Truncated { what: "ULog file header", needed, available }));
                }
            },
        };
        buf.take(FileHeader::SIZE);
        let mut sync = [0u8; Sync::SIZE];
        let mut v = Vec::with_capacity(Sync::SIZE);
        // The Sync message's bytes, from its schema (a const field); encoding it cannot fail.
        let encoded = (Sync {}).encode(&mut v, Endian::Little);
        if encoded.is_ok() && v.len() == Sync::SIZE {
            sync.copy_from_slice(&v);
        }
        Ok(Reader {
            buf,
            _input: PhantomData,
            header,
            pos: 0,
            formats: FormatSet::default(),
            compiled: HashMap::new(),
            subscriptions: Vec::new(),
            serials: 0,
            compiled_types: 0,
            cuts: Vec::new(),
            bad_offsets: Vec::new(),
            cut_messages: 0,
            last_format: String::new(),
            definitions: true,
            index: 0,
            done: false,
            sync,
        })
    }

    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The formats read so far.
    pub fn formats(&self) -> &FormatSet {
        &self.formats
    }

    /// The subscriptions read so far (the latest of each msg_id), in the order of their msg_ids.
    pub fn subscriptions(&self) -> impl Iterator<Item = &Subscribed> {
        self.subscriptions.iter().flatten().map(|s| &**s)
    }

    /// The active subscription of `msg_id`, if any.
    #[inline]
    pub fn subscription(&self, msg_id: u16) -> Option<&Subscribed> {
        self.subscriptions.get(usize::from(msg_id)).and_then(Option::as_deref).filter(|s| s.active)
    }

    /// The appended-data offsets not reached (past the end of the file, when reading ended).
    pub fn unreached_offsets(&self) -> &[u64] {
        &self.cuts
    }

    /// Absolute offset of the next message.
    pub fn position(&self) -> u64 {
        self.buf.position() + self.pos as u64
    }

    /// Moves the reader to byte offset `offset` of the same bytes, where the message numbered
    /// `index` starts (a state message, or a chunk of a time index), keeping its state (formats,
    /// subscriptions, the appended-data offsets: those at or before `offset` are dropped as
    /// reached); `false`, and nothing moved, where the input cannot go back and forth (a
    /// stream). An offset that is not a message's start reads whatever is there as messages.
    pub fn seek(&mut self, offset: u64, index: u64) -> bool {
        if !self.buf.seek(offset) {
            return false;
        }
        self.pos = 0;
        self.index = index;
        self.done = false;
        true
    }

    fn fail(&mut self, offset: u64, kind: ReadErrorKind) -> ReadError {
        self.done = true;
        ReadError { offset, index: Some(self.index), kind }
    }

    /// Skips to the next appended-data offset when the message at the reader's position would
    /// cross it (`end`: where the message ends, as far as is known). Returns whether it skipped.
    #[inline]
    fn cut(&mut self, end: u64) -> io::Result<bool> {
        match self.cuts.first() {
            Some(&c) if end > c => self.cut_to(c),
            _ => Ok(false),
        }
    }

    /// The message at the reader's position crosses the appended-data offset `c`: the writer
    /// stopped inside it.
    #[cold]
    fn cut_to(&mut self, c: u64) -> io::Result<bool> {
        self.cut_messages += 1;
        self.skip_to(c)?;
        self.cuts.remove(0);
        Ok(true)
    }

    /// Consumes input up to absolute offset `to` (or the end of the input).
    fn skip_to(&mut self, to: u64) -> io::Result<()> {
        while self.buf.position() < to {
            let want = usize::try_from(to - self.buf.position()).unwrap_or(usize::MAX).min(SEARCH);
            self.buf.fill(want)?;
            let n = want.min(self.buf.available());
            if n == 0 {
                break;
            }
            self.buf.take(n);
        }
        Ok(())
    }

    /// Searches for the Sync message's bytes from one byte past `at` ([`resync`], the one search
    /// for the next good record, as the schema framings and DataFlash use it: the Sync message's
    /// magic is what vouches for a position) and consumes input up to their end; `None` when the
    /// input ends first.
    fn resync(&mut self) -> io::Result<Option<u64>> {
        self.buf.take(1);
        loop {
            self.buf.fill(SEARCH)?;
            match resync(self.buf.bytes(), 0, &self.sync, |_, _| Some(true)) {
                Resync::Found(i) => {
                    self.buf.take(i + self.sync.len());
                    return Ok(Some(self.buf.position()));
                }
                Resync::More(_) if self.buf.is_eof() => {
                    let n = self.buf.available();
                    self.buf.take(n);
                    return Ok(None);
                }
                // Before `k` no Sync message begins; from `k` on, one may be cut by the window.
                Resync::More(k) => {
                    self.buf.take(k);
                }
            }
        }
    }

    /// Lends the Data messages from the reader's position on to `f` (each one's subscription,
    /// compiled format and payload, as [`Event::Data`] would lend them) without making a
    /// [`Message`] of each, for as long as they are plain: whole in the input, of an active
    /// subscription whose format compiled, and of that format's size. Stops before the first
    /// message that is anything else, which [`next_message`](Self::next_message) reads, and
    /// lends nothing while appended-data offsets lie ahead. Each message lent takes its index,
    /// as `next_message` would have; returns how many. What `info` needs to count Data messages
    /// (their headers and timestamps); `tests/it/ulog.rs` holds it to `next_message`.
    pub fn data_run(&mut self, mut f: impl FnMut(&Subscribed, &Decoder, &[u8])) -> u64 {
        if self.done || !self.cuts.is_empty() {
            return 0;
        }
        self.buf.take(std::mem::take(&mut self.pos));
        let h = MessageHeader::SIZE;
        let mut n = 0;
        loop {
            if self.buf.fill(h).is_err() {
                break;
            }
            let Ok(header) = MessageHeader::decode_fixed(self.buf.bytes(), Endian::Little) else { break };
            if u64::from(header.msg_type) != super::UlogRecord::ID_DATA {
                break;
            }
            let total = h + usize::from(header.msg_size);
            if self.buf.fill(total).is_err() || self.buf.available() < total {
                break;
            }
            let payload = &self.buf.bytes()[h..total];
            let Some(Ok(UlogRecordRef::Data(d))) = UlogRecordRef::decode(super::UlogRecord::ID_DATA, payload) else {
                break;
            };
            let Some(s) = self.subscription(d.msg_id) else { break };
            let Ok(decoder) = &s.decoder else { break };
            if decoder.data(d.data).is_err() {
                break;
            }
            f(s, decoder, d.data);
            n += 1;
            self.index += 1;
            self.buf.take(total);
        }
        n
    }

    /// The next message, `None` at the end of the input, or the error that ends reading (a
    /// message cut by the end of the input, a read error). Every complete message before it is
    /// returned first.
    pub fn next_message(&mut self) -> Option<Result<Message<'_>, ReadError>> {
        if self.done {
            return None;
        }
        self.buf.take(std::mem::take(&mut self.pos));
        let h = MessageHeader::SIZE;
        let (offset, header, total) = loop {
            let offset = self.buf.position();
            // Offsets reached are dropped; a header that would cross one is cut by it.
            while self.cuts.first().is_some_and(|&c| c <= offset) {
                self.cuts.remove(0);
            }
            if let Err(e) = self.buf.fill(h) {
                return Some(Err(self.fail(offset, ReadErrorKind::Io(e))));
            }
            if self.buf.available() == 0 {
                self.done = true;
                return None;
            }
            if self.buf.available() < h {
                match self.cut(offset + h as u64) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => return Some(Err(self.fail(offset, ReadErrorKind::Io(e)))),
                }
                let kind = ReadErrorKind::Truncated {
                    what: "message header",
                    needed: h as u64,
                    available: self.buf.available() as u64,
                };
                return Some(Err(self.fail(offset, kind)));
            }
            let header = match MessageHeader::decode_fixed(self.buf.bytes(), Endian::Little) {
                Ok(h) => h,
                // Three bytes are there and the header has no consts: this does not happen.
                Err(_) => {
                    let kind = ReadErrorKind::Truncated { what: "message header", needed: h as u64, available: 0 };
                    return Some(Err(self.fail(offset, kind)));
                }
            };
            let total = h + usize::from(header.msg_size);
            match self.cut(offset + total as u64) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => return Some(Err(self.fail(offset, ReadErrorKind::Io(e)))),
            }
            // Whether the type is known is asked only of a size no writer makes (the view of an
            // empty payload is an error, which costs an allocation).
            let unlikely = header.msg_size == 0 || header.msg_size > CORRUPT_SIZE;
            let corrupt =
                header.msg_type == 0 || (unlikely && UlogRecordRef::decode(u64::from(header.msg_type), &[]).is_none());
            if corrupt && !self.cuts.is_empty() {
                // What a writer left before an appended-data offset when it stopped (a cut
                // message, unwritten space): the section ends here, and reading goes on at the
                // offset. The search for a sync message must not pass it.
                let c = self.cuts.remove(0);
                self.cut_messages += 1;
                if let Err(e) = self.skip_to(c) {
                    return Some(Err(self.fail(offset, ReadErrorKind::Io(e))));
                }
                continue;
            }
            if corrupt {
                let index = self.index;
                self.index += 1;
                return Some(match self.resync() {
                    Ok(resumed) => Ok(Message { offset, index, event: Event::Resynced { resumed } }),
                    Err(e) => Err(self.fail(offset, ReadErrorKind::Io(e))),
                });
            }
            if let Err(e) = self.buf.fill(total) {
                return Some(Err(self.fail(offset, ReadErrorKind::Io(e))));
            }
            if self.buf.available() < total {
                let kind = ReadErrorKind::Truncated {
                    what: "message",
                    needed: total as u64,
                    available: self.buf.available() as u64,
                };
                return Some(Err(self.fail(offset, kind)));
            }
            break (offset, header, total);
        };
        let index = self.index;
        self.index += 1;
        self.pos = total;
        // State first (formats, subscriptions, offsets), from the message's view; then the
        // message is lent.
        let tag = u64::from(header.msg_type);
        if tag == super::UlogRecord::ID_DATA {
            // A Data message changes no state: lent at once.
            let payload = &self.buf.bytes()[h..total];
            let event = match UlogRecordRef::decode(tag, payload) {
                Some(Ok(UlogRecordRef::Data(d))) => {
                    Event::Data { msg_id: d.msg_id, subscription: self.subscription(d.msg_id), payload: d.data }
                }
                Some(Err(error)) => Event::Invalid { msg_type: header.msg_type, error },
                // The schema's Data view, and no other, has this tag.
                _ => Event::Unknown { msg_type: header.msg_type, payload },
            };
            return Some(Ok(Message { offset, index, event }));
        }
        let payload = &self.buf.bytes()[h..total];
        let mut format: Option<Result<String, UlogError>> = None;
        let mut subscribed: Option<u16> = None;
        let mut incompatible = None;
        match UlogRecordRef::decode(tag, payload) {
            Some(Ok(UlogRecordRef::FlagBits(b))) => {
                let incompat = b.incompat_flags.to_array::<8>();
                let mut others = incompat;
                others[0] &= !1;
                if others.iter().any(|x| *x != 0) {
                    incompatible = Some(incompat);
                } else if incompat[0] & 1 != 0 {
                    for o in b.appended_offsets.iter().filter(|o| *o != 0) {
                        // Offsets must lie ahead, in order.
                        if o <= offset || self.cuts.last().is_some_and(|l| o <= *l) {
                            self.bad_offsets.push(o);
                        } else {
                            self.cuts.push(o);
                        }
                    }
                }
            }
            Some(Ok(UlogRecordRef::Format(f))) => {
                let text = String::from_utf8_lossy(f.format);
                let known = self.formats.len();
                format = Some(self.formats.add(&text).map(|f| f.name.clone()));
                // A format redefined changes the layouts compiled with it; a new one changes none.
                if self.formats.len() == known {
                    self.compiled.clear();
                }
            }
            Some(Ok(UlogRecordRef::Subscription(a))) => {
                self.definitions = false;
                let name = String::from_utf8_lossy(a.message_name).trim_end_matches('\0').to_string();
                let budget = COMPILE_BUDGET.saturating_add(offset / 8);
                let decoder = match self.compiled.get(&name) {
                    Some(d) => Ok(Arc::clone(d)),
                    None if self.compiled_types > budget => Err(UlogError {
                        format: name.clone(),
                        field: None,
                        message: format!(
                            "the formats compiled so far hold {} types, more than a file of {offset} bytes can justify (formats redefined between subscriptions)",
                            self.compiled_types
                        ),
                    }),
                    None => self.formats.lower(&name).map(|l| {
                        self.compiled_types += l.schema.types.len() as u64;
                        let d = Arc::new(Decoder::new(l));
                        self.compiled.insert(name.clone(), Arc::clone(&d));
                        d
                    }),
                };
                let serial = self.serials;
                self.serials += 1;
                let s = Subscribed { msg_id: a.msg_id, multi_id: a.multi_id, name, decoder, active: true, serial };
                let at = usize::from(a.msg_id);
                if self.subscriptions.len() <= at {
                    self.subscriptions.resize_with(at + 1, || None);
                }
                self.subscriptions[at] = Some(Box::new(s));
                subscribed = Some(a.msg_id);
            }
            Some(Ok(UlogRecordRef::Unsubscription(r))) => {
                if let Some(Some(s)) = self.subscriptions.get_mut(usize::from(r.msg_id)) {
                    s.active = false;
                }
            }
            Some(Ok(UlogRecordRef::Logging(_) | UlogRecordRef::LoggingTagged(_))) => self.definitions = false,
            _ => {}
        }
        if let Some(flags) = incompatible {
            return Some(Err(self.fail(offset, ReadErrorKind::Incompatible(flags))));
        }
        if let Some(f) = &format {
            self.last_format = f.as_ref().map_or(String::new(), Clone::clone);
        }
        let payload = &self.buf.bytes()[h..total];
        let event = match UlogRecordRef::decode(tag, payload) {
            None => Event::Unknown { msg_type: header.msg_type, payload },
            Some(Err(error)) => Event::Invalid { msg_type: header.msg_type, error },
            Some(Ok(r)) => match r {
                UlogRecordRef::FlagBits(b) => Event::FlagBits(Box::new(b)),
                UlogRecordRef::Format(_) => match (format, self.formats.get(&self.last_format)) {
                    (Some(Err(e)), _) => Event::Format(Err(Box::new(e))),
                    (_, Some(f)) => Event::Format(Ok(f)),
                    (_, None) => Event::Unknown { msg_type: header.msg_type, payload },
                },
                UlogRecordRef::Info(i) => Event::Info { key: i.key, value: i.value },
                UlogRecordRef::InfoMultiple(m) => {
                    Event::InfoMultiple { is_continued: m.is_continued != 0, key: m.key, value: m.value }
                }
                UlogRecordRef::Parameter(p) => {
                    Event::Parameter { key: p.key, value: p.value, initial: self.definitions }
                }
                UlogRecordRef::ParameterDefault(q) => {
                    Event::ParameterDefault { default_types: q.default_types, key: q.key, value: q.value }
                }
                UlogRecordRef::Subscription(_) => match subscribed.and_then(|id| self.subscription(id)) {
                    Some(s) => Event::Subscription(s),
                    None => Event::Unknown { msg_type: header.msg_type, payload },
                },
                UlogRecordRef::Unsubscription(r) => Event::Unsubscription { msg_id: r.msg_id },
                UlogRecordRef::Data(d) => {
                    Event::Data { msg_id: d.msg_id, subscription: self.subscription(d.msg_id), payload: d.data }
                }
                UlogRecordRef::Logging(l) => {
                    Event::Logging { level: l.log_level, tag: None, timestamp: l.timestamp, message: l.message }
                }
                UlogRecordRef::LoggingTagged(c) => {
                    Event::Logging { level: c.log_level, tag: Some(c.tag), timestamp: c.timestamp, message: c.message }
                }
                UlogRecordRef::Sync(_) => Event::Sync,
                UlogRecordRef::Dropout(o) => Event::Dropout { duration_ms: o.duration },
            },
        };
        Some(Ok(Message { offset, index, event }))
    }
}

/// Splits an Information, Parameter or default key, `<type> <name>`, into its type and name.
pub fn split_key(key: &[u8]) -> (String, String) {
    let key = String::from_utf8_lossy(key);
    match key.split_once(' ') {
        Some((t, n)) => (t.to_string(), n.to_string()),
        None => (String::new(), key.into_owned()),
    }
}

/// Reads every message of `bytes` (for fuzzing and tests): how many were read, and the error
/// that ended reading, if any.
pub fn read_all(bytes: &[u8]) -> (u64, Option<ReadError>) {
    let mut r = match Reader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (0, Some(e)),
    };
    let mut n = 0;
    while let Some(m) = r.next_message() {
        match m {
            Ok(m) => {
                if let Event::Data { subscription: Some(s), payload, .. } = m.event {
                    if let Ok(d) = &s.decoder {
                        let _ = d.decode(payload);
                    }
                }
                n += 1;
            }
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// A Data payload that [`Decoder::check`] accepted, as a [`logspec_runtime::Visit`] value.
pub struct DataValue<'a> {
    pub decoder: &'a Decoder,
    pub payload: &'a [u8],
}

impl logspec_runtime::Visit for DataValue<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        // Checked when made: a fault here leaves the value as far as it decoded.
        let _ = self.decoder.visit_as(self.payload, name, v);
    }
}
