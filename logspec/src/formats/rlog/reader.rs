//! The RLOG reader: messages decoded by the generated types, the key table, and cycles.

use std::convert::Infallible;
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::ops::ControlFlow;

use logspec_runtime::{Cursor, DecodeError, DecodeErrorKind, Endian, Input, ReadBuf, SliceBuf, View, WindowBuf};

use super::{R1BodyRef, R1MessageRef, R1ValueRef, R2BodyRef, R2MessageRef, R2Value, R2ValueRef, Revision, Value};

/// A key: its name and, in R2, its declared type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub name: String,
    /// The R2 declared type (`double`, `struct:Pose2d`); `None` in R1.
    pub declared_type: Option<String>,
    /// The `R2Value` variant the declared type selects, looked up once.
    variant: Option<i128>,
}

/// What a reader yields, message by message.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A cycle starts at this time (seconds).
    Timestamp(f64),
    /// A key was defined (see [`Reader::key`]).
    KeyDef { key_id: i16 },
    /// A value, with the timestamp of its cycle (0.0 before the first timestamp).
    Value { timestamp: f64, key_id: i16, value: Value },
}

/// A message as [`Reader::next_event_ref`] yields it: borrowed from the reader until the next
/// call, with the key it refers to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventRef<'a> {
    /// A cycle starts at this time (seconds).
    Timestamp(f64),
    /// A key was defined.
    KeyDef { key_id: i16, key: &'a Key },
    /// A value, with the timestamp of its cycle (0.0 before the first timestamp) and its key
    /// (`None` for a key id that was never defined).
    Value { timestamp: f64, key_id: i16, key: Option<&'a Key>, value: ValueRef<'a> },
}

impl EventRef<'_> {
    /// The owned event, as [`Reader::next_event`] yields it.
    #[inline]
    pub fn to_event(&self) -> Event {
        match *self {
            EventRef::Timestamp(t) => Event::Timestamp(t),
            EventRef::KeyDef { key_id, .. } => Event::KeyDef { key_id },
            EventRef::Value { timestamp, key_id, value, .. } => {
                Event::Value { timestamp, key_id, value: value.to_value() }
            }
        }
    }
}

/// A value of either revision, borrowed from the input: the generated views, R2 values decoded
/// in place by their key's declared type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    R1(R1ValueRef<'a>),
    R2(R2ValueRef<'a>),
}

impl ValueRef<'_> {
    /// The owned value.
    #[inline]
    pub fn to_value(&self) -> Value {
        match self {
            ValueRef::R1(v) => Value::R1(v.to_owned()),
            ValueRef::R2(v) => Value::R2(v.to_owned()),
        }
    }

    /// As [`Value::type_name`].
    pub fn type_name<'t>(&self, declared: Option<&'t str>) -> &'t str {
        match self {
            ValueRef::R1(v) => super::r1_code_name(v.tag()),
            ValueRef::R2(_) => declared.unwrap_or("raw"),
        }
    }
}

/// One cycle: its timestamp and every value record in it, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cycle {
    pub timestamp: f64,
    /// `(key id, value)`; key names are in [`Reader::key`].
    pub values: Vec<(i16, Value)>,
}

/// Reading options.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReaderOptions {
    /// Decode a file that starts without a revision byte (its first byte is the `00` of a
    /// timestamp) with this revision. AdvantageKit#15 left such files in the wild; they are R1.
    pub assume_revision: Option<Revision>,
}

/// A read failure: where, in which key, and what. Boxed, so that results on the hot path stay
/// small; its fields are reached through `Deref` (`err.offset`, `err.kind`).
#[derive(Debug)]
pub struct RlogError(Box<RlogErrorDetail>);

impl RlogError {
    #[cold]
    pub fn new(offset: u64, key: Option<String>, kind: RlogErrorKind) -> Self {
        RlogError(Box::new(RlogErrorDetail { offset, key, kind }))
    }
}

impl std::ops::Deref for RlogError {
    type Target = RlogErrorDetail;
    fn deref(&self) -> &RlogErrorDetail {
        &self.0
    }
}

/// The parts of an [`RlogError`].
#[derive(Debug)]
pub struct RlogErrorDetail {
    /// Absolute byte offset of the start of the failing message (of the file for a header error).
    pub offset: u64,
    /// The key of the failing value, when known.
    pub key: Option<String>,
    pub kind: RlogErrorKind,
}

#[derive(Debug)]
pub enum RlogErrorKind {
    Io(io::Error),
    /// The input is empty.
    Empty,
    /// The first byte is `00`: a timestamp, not a revision byte.
    NoRevision,
    /// The first byte is neither 1 nor 2 nor 0.
    UnsupportedRevision(u8),
    /// The input ends inside a message that needs at least `needed` bytes; `available` are left.
    Truncated {
        needed: u64,
        available: u64,
    },
    /// A message does not decode (an unknown message kind or R1 value code, bad UTF-8, ...).
    Decode(DecodeError),
    /// An R2 value for a key id that was never defined: its type, hence its layout, is unknown.
    UndefinedKey {
        key_id: i16,
    },
}

impl RlogError {
    /// Whether reading can go on after this error: the failing message's length was known (an R2
    /// value that does not decode as its declared type, or whose key is undefined).
    pub fn is_recoverable(&self) -> bool {
        matches!(self.kind, RlogErrorKind::UndefinedKey { .. })
            || (matches!(self.kind, RlogErrorKind::Decode(_)) && self.key.is_some())
    }
}

impl fmt::Display for RlogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rlog: at byte {}", self.offset)?;
        if let Some(k) = &self.key {
            write!(f, " (key {k:?})")?;
        }
        f.write_str(": ")?;
        match &self.kind {
            RlogErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            RlogErrorKind::Empty => f.write_str("the input is empty; expected a revision byte (1 or 2)"),
            RlogErrorKind::NoRevision => f.write_str(
                "the file starts without a revision byte: its first byte is 00, a timestamp message \
                 (files like this were written by AdvantageKit before v1.8.1 fixed #15); decode it as \
                 R1 with `--assume-r1` (ReaderOptions::assume_revision)",
            ),
            RlogErrorKind::UnsupportedRevision(b) => {
                write!(f, "unsupported revision byte {b:#04x}; expected 1 (R1) or 2 (R2)")
            }
            RlogErrorKind::Truncated { needed, available } => write!(
                f,
                "the input ends inside a message that needs at least {needed} bytes; only {available} are left \
                 (every message before it was read)"
            ),
            RlogErrorKind::Decode(e) => write!(f, "{e}"),
            RlogErrorKind::UndefinedKey { key_id } => {
                write!(f, "value for key id {key_id}, which was never defined, so its R2 type is unknown; skipped")
            }
        }
    }
}

impl std::error::Error for RlogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            RlogErrorKind::Io(e) => Some(e),
            RlogErrorKind::Decode(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads an RLOG file or stream from any [`Read`], in constant memory (one buffer, grown only to
/// the largest message actually present), or, made by [`Reader::from_slice`], from bytes already
/// in memory, decoded in place. `I` is where the bytes come from (the runtime's [`Input`]: a
/// [`ReadBuf`] over `R`, or a [`SliceBuf`]); one loop reads both.
pub struct Reader<R, I = ReadBuf<R>> {
    buf: I,
    _input: PhantomData<R>,
    /// Bytes at the front of `buf.bytes()` already decoded and not yet consumed from `buf`: R1
    /// messages are decoded one after the other from the bytes already read, and given back to
    /// the buffer only when it must read more.
    pos: usize,
    done: bool,
    revision: Revision,
    /// Whether the input had a revision byte.
    has_revision_byte: bool,
    /// The key table and the cycle time.
    table: KeyTable,
    /// For `next_cycle`: a timestamp that starts the next cycle, or an error to report after the
    /// values before it.
    pending_ts: Option<f64>,
    pending_err: Option<RlogError>,
    /// The number of values of the last cycle, to size the next one's vector.
    cycle_len: usize,
    /// Reading stops before the first message that starts at or after this offset
    /// ([`Reader::stop_at`]); `u64::MAX` when it does not.
    stop: u64,
}

/// A reader of RLOG bytes in memory, decoded in place ([`Reader::from_slice`]).
pub type SliceReader<'a> = Reader<&'a [u8], SliceBuf<'a>>;

impl<'a> SliceReader<'a> {
    /// A reader of an RLOG file or stream already in memory (read whole, or mapped): as
    /// [`Reader::new`] over the slice, but the messages are decoded in place from `bytes`, which
    /// is never copied into a read buffer, so the views it lends point into `bytes` itself.
    pub fn from_slice(bytes: &'a [u8]) -> Result<Self, RlogError> {
        Self::from_slice_with_options(bytes, ReaderOptions::default())
    }

    /// [`Reader::from_slice`] with options, as [`Reader::with_options`].
    pub fn from_slice_with_options(bytes: &'a [u8], options: ReaderOptions) -> Result<Self, RlogError> {
        Self::over(SliceBuf::new(bytes), options)
    }

    /// [`Reader::resume`] in place: `bytes`, whose first byte is at absolute offset `offset` of
    /// the whole, is decoded where it is.
    pub fn resume_in_place(bytes: &'a [u8], revision: Revision, offset: u64) -> Self {
        Self::resumed(SliceBuf::starting_at(bytes, offset), revision)
    }
}

impl<'a, A: FnMut(u64)> Reader<&'a [u8], WindowBuf<'a, A>> {
    /// A reader of RLOG bytes in memory lent a window at a time (a mapped file: see
    /// [`WindowBuf`]): decoded in place, as [`Reader::from_slice`].
    pub fn from_window(buf: WindowBuf<'a, A>, options: ReaderOptions) -> Result<Self, RlogError> {
        Self::over(buf, options)
    }
}

impl<R: Read> Reader<R> {
    /// Reads the revision byte. A file without one is an error that says so; see
    /// [`ReaderOptions::assume_revision`].
    pub fn new(inner: R) -> Result<Self, RlogError> {
        Self::with_options(inner, ReaderOptions::default())
    }

    pub fn with_options(inner: R, options: ReaderOptions) -> Result<Self, RlogError> {
        Self::over(ReadBuf::new(inner), options)
    }

    /// A reader of messages of `revision` that starts in the middle of a file or stream: the
    /// input's first byte is at absolute offset `offset` (so positions and error offsets are the
    /// whole's) and is the start of a message, not a revision byte. Its key table is empty: a
    /// value of a key defined before `offset` comes with no key (`EventRef::Value { key: None
    /// }`; in R2, where the key's type gives the value's layout, it is the recoverable error
    /// [`RlogErrorKind::UndefinedKey`]), and the cycle time is 0.0 until the first timestamp.
    ///
    /// RLOG messages frame themselves, so from a true message start the rest of the input reads
    /// as it would from the beginning; a reader on two threads can read a file's halves at once
    /// (the Python package's `tables()`, which checks the guess of where a message starts by
    /// reading up to it from the front, see [`stop_at`](Self::stop_at)). Started anywhere
    /// else, it reads garbage or fails: where a message starts cannot be told from the bytes.
    pub fn resume(inner: R, revision: Revision, offset: u64) -> Self {
        Self::resumed(ReadBuf::starting_at(inner, offset), revision)
    }
}

impl<R, I: Input> Reader<R, I> {
    /// A reader over `buf` (read from a `Read`, or lent, [`Reader::from_slice`]): reads the
    /// revision byte.
    fn over(buf: I, options: ReaderOptions) -> Result<Self, RlogError> {
        // R1 until the revision byte says otherwise.
        let mut r = Self::resumed(buf, Revision::R1);
        r.buf.fill(1).map_err(|e| r.error(0, RlogErrorKind::Io(e)))?;
        let Some(&first) = r.buf.bytes().first() else {
            return Err(r.error(0, RlogErrorKind::Empty));
        };
        match (Revision::from_byte(first), first, options.assume_revision) {
            (Some(rev), ..) => {
                r.revision = rev;
                r.buf.take(1);
            }
            (None, 0, Some(rev)) => {
                r.revision = rev;
                r.has_revision_byte = false;
            }
            (None, 0, None) => return Err(r.error(0, RlogErrorKind::NoRevision)),
            (None, b, _) => return Err(r.error(0, RlogErrorKind::UnsupportedRevision(b))),
        }
        Ok(r)
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// A reader over `buf` from its first byte, a message start: what [`Reader::resume`] and
    /// [`SliceReader::resume_in_place`] make, and [`over`](Self::over) before the revision byte.
    fn resumed(buf: I, revision: Revision) -> Self {
        Reader {
            buf,
            _input: PhantomData,
            pos: 0,
            done: false,
            revision,
            has_revision_byte: true,
            table: KeyTable { keys: Vec::new(), skip: Vec::new(), timestamp: 0.0 },
            pending_ts: None,
            pending_err: None,
            cycle_len: 0,
            stop: u64::MAX,
        }
    }

    /// Makes the reading methods stop before the first message that starts at or after
    /// absolute offset `offset` (`None`: read to the end), as at a clean end of the input
    /// (`next_event_ref` returns `None`, `try_for_each_event_ref` `Ok(ControlFlow::Continue(()))`);
    /// [`stopped`](Self::stopped) then tells the two apart, and [`position`](Self::position)
    /// says where the next message starts: `offset` itself exactly when a message starts there.
    /// Reading goes on from there after `stop_at(None)` (or a later offset).
    pub fn stop_at(&mut self, offset: Option<u64>) {
        self.stop = offset.unwrap_or(u64::MAX);
    }

    /// Moves to absolute offset `offset`, which must be a message start (the time index's
    /// chunks and state messages, `logspec::log::index`), keeping the key table, where the input
    /// can go back and forth (a mapped file, [`Reader::from_window`]); `false`, and nothing
    /// moved, where it cannot. Reading goes on from there, until [`stop_at`](Self::stop_at).
    pub fn seek(&mut self, offset: u64) -> bool {
        if !self.buf.seek(offset) {
            return false;
        }
        self.pos = 0;
        self.done = false;
        self.pending_ts = None;
        self.pending_err = None;
        true
    }

    /// Whether reading stopped at the offset given to [`stop_at`](Self::stop_at) (not at the
    /// end of the input or at an error).
    pub fn stopped(&self) -> bool {
        !self.done && self.position() >= self.stop
    }

    /// Whether the input started with a revision byte (false for a headerless file read with
    /// [`ReaderOptions::assume_revision`]).
    pub fn has_revision_byte(&self) -> bool {
        self.has_revision_byte
    }

    /// Byte offset of the next message.
    pub fn position(&self) -> u64 {
        self.buf.position() + self.pos as u64
    }

    /// A defined key.
    pub fn key(&self, key_id: i16) -> Option<&Key> {
        self.table.key(key_id)
    }

    /// Makes the reading loops ([`try_for_each_event_at`](Self::try_for_each_event_at) and the
    /// methods over it) pass over the values of key `key_id` whose R1 value code is `code` (R2:
    /// any value, `code` 0), until the key is defined again: such a value is read only as far
    /// as its length (R2: not decoded as its declared type, so one that would not decode is not
    /// reported either) and reaches no callback. The test is one load from a table by key id,
    /// before the key is looked up; a scan that wants a few keys of many sets it for the others
    /// as it meets them. [`next_event_ref`](Self::next_event_ref) and
    /// [`next_cycle`](Self::next_cycle) still return every value.
    pub fn skip_values(&mut self, key_id: i16, code: u8) {
        let Some(bit) = 1u16.checked_shl(u32::from(code)) else { return };
        let i = usize::from(key_id as u16);
        if self.table.skip.len() <= i {
            self.table.skip.resize(i + 1, 0);
        }
        self.table.skip[i] |= bit;
    }

    /// Every defined key, with its id.
    pub fn keys(&self) -> impl Iterator<Item = (i16, &Key)> {
        self.table.keys.iter().enumerate().filter_map(|(i, k)| Some((i as u16 as i16, k.as_deref()?)))
    }

    fn error(&self, offset: u64, kind: RlogErrorKind) -> RlogError {
        RlogError::new(offset, None, kind)
    }

    /// The next message, or `None` at a clean end. After an error that is not recoverable
    /// (truncation, I/O, a message that does not decode), every later call returns `None`.
    #[inline(always)]
    pub fn next_event(&mut self) -> Option<Result<Event, RlogError>> {
        Some(self.next_event_ref()?.map(|e| e.to_event()))
    }

    /// The next message, borrowed from the reader until the next call: as [`Reader::next_event`]
    /// (the same messages, values, key table and errors), but values are the generated views
    /// ([`R1ValueRef`], [`R2ValueRef`]) decoded once, in place, from the bytes read (no
    /// allocation for strings and arrays), and each value comes with its key. To read a whole
    /// input, [`for_each_event_ref`](Self::for_each_event_ref) is faster.
    // Always inlined into the caller's loop (with the generated decoders, which are too): the
    // event then reaches the caller's match in registers instead of as an 80-byte
    // `Option<Result<..>>` written and read back through memory.
    #[inline(always)]
    pub fn next_event_ref(&mut self) -> Option<Result<EventRef<'_>, RlogError>> {
        loop {
            if self.done || self.position() >= self.stop {
                return None;
            }
            if self.pos == self.buf.available() {
                if let Err(end) = self.refill(1) {
                    return end.map(Err);
                }
            }
            let bytes = self.unread();
            let mut c = Cursor::new(bytes);
            let decoded = match self.revision {
                Revision::R1 => R1MessageRef::decode_view(&mut c, Endian::Big).map(Message::R1),
                Revision::R2 => R2MessageRef::decode_view(&mut c, Endian::Big).map(Message::R2),
            };
            match decoded {
                Ok(m) => {
                    let at = self.position();
                    self.pos += c.position();
                    return Some(self.apply(m, at));
                }
                Err(e) => {
                    if let Err(end) = self.want_more(e).and_then(|n| self.refill(n)) {
                        return end.map(Err);
                    }
                }
            }
        }
    }

    /// Reads every message to the end of the input, lending each to `f` as [`next_event_ref`]
    /// would: the same events, values, key table and errors, in the same order. This is the
    /// fastest way through a file: the loop over the bytes read stays inside the reader and each
    /// event goes to `f` as it is decoded, so it never has to be returned through memory.
    ///
    /// Returns `Ok(())` at a clean end. On an error, every complete message before it has been
    /// given to `f`, and the error (with its byte offset) is returned; after a recoverable one
    /// ([`RlogError::is_recoverable`]: an R2 value of an undefined key or that does not decode as
    /// its declared type) calling again goes on after that message, after any other every later
    /// call returns `Ok(())`. To stop early, see [`try_for_each_event_ref`].
    ///
    /// `f` is called from each of the reader's decoding paths (one per fixed-size message shape,
    /// and the general one), so that each hands over the event it built without merging them
    /// first. A small closure should be marked `#[inline(always)]` (as `logspec info` does),
    /// and so should the helpers it hands the value to: called as a function, it takes the
    /// event through memory and loses most of the gain (in `cargo bench --bench rlog`, R2 at
    /// about 0.15x memcpy instead of 0.25x), while inlined, its own match on the value's
    /// variant folds away on each path.
    ///
    /// ```
    /// # use logspec::formats::rlog::{EventRef, Reader};
    /// let bytes = [1u8, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]; // R1, one timestamp: 1.0 s
    /// let mut r = Reader::new(&bytes[..]).unwrap();
    /// let mut timestamps = Vec::new();
    /// r.for_each_event_ref(|ev| {
    ///     if let EventRef::Timestamp(t) = ev {
    ///         timestamps.push(t);
    ///     }
    /// })
    /// .unwrap();
    /// assert_eq!(timestamps, [1.0]);
    /// ```
    ///
    /// [`next_event_ref`]: Self::next_event_ref
    /// [`try_for_each_event_ref`]: Self::try_for_each_event_ref
    #[inline]
    pub fn for_each_event_ref(&mut self, mut f: impl FnMut(EventRef<'_>)) -> Result<(), RlogError> {
        match self.try_for_each_event_ref(
            #[inline(always)]
            |ev| {
                f(ev);
                ControlFlow::<Infallible>::Continue(())
            },
        )? {
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    /// As [`for_each_event_ref`](Self::for_each_event_ref), but `f` can stop the reading:
    /// `ControlFlow::Break(b)` returns `Ok(ControlFlow::Break(b))` at once, and the next call
    /// (of this or any other reading method) goes on with the message after the one `f` stopped
    /// at. `Ok(ControlFlow::Continue(()))` is a clean end of the input.
    #[inline]
    pub fn try_for_each_event_ref<B>(
        &mut self,
        mut f: impl FnMut(EventRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, RlogError> {
        self.try_for_each_event_at(
            #[inline(always)]
            |_, ev| f(ev),
        )
    }

    /// As [`try_for_each_event_ref`](Self::try_for_each_event_ref), with the absolute byte
    /// offset at which each message starts, so that a caller can find a message again (the
    /// Python package's `tables()` keeps where the rare values of a second half are, and decodes
    /// them again when the halves are joined).
    #[inline]
    pub fn try_for_each_event_at<B>(
        &mut self,
        mut f: impl FnMut(u64, EventRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, RlogError> {
        match self.revision {
            Revision::R1 => self.run(&mut f, |table, c, at, f| {
                R1MessageRef::decode_view_then(
                    c,
                    Endian::Big,
                    #[inline(always)]
                    |m| {
                        let n = m.as_bytes().len();
                        // A value the caller passes over ends here, by its key id and code
                        // ([`Reader::skip_values`]): no event, no key looked up.
                        if let R1BodyRef::Field { key_id, value } = &m.body {
                            if table.skips(*key_id, value.tag()) {
                                return (n, Ok(ControlFlow::Continue(())));
                            }
                        }
                        (n, Ok(f(at, table.apply_r1(m))))
                    },
                )
            }),
            Revision::R2 => self.run(&mut f, |table, c, at, f| {
                R2MessageRef::decode_view_then(
                    c,
                    Endian::Big,
                    #[inline(always)]
                    |m| {
                        let n = m.as_bytes().len();
                        // As in R1; the value's bytes are not decoded as its type.
                        if let R2BodyRef::Field { key_id, .. } = &m.body {
                            if table.skips(*key_id, 0) {
                                return (n, Ok(ControlFlow::Continue(())));
                            }
                        }
                        (
                            n,
                            table.apply_r2_then(
                                m,
                                at,
                                #[inline(always)]
                                |ev| f(at, ev),
                            ),
                        )
                    },
                )
            }),
        }
    }

    /// The loop of [`try_for_each_event_ref`](Self::try_for_each_event_ref): decodes the
    /// messages in the bytes read one after the other with `step` (which decodes one at the
    /// cursor, hands it on to `f` and says its length), and reads more only when they end
    /// inside a message.
    #[inline(always)]
    fn run<B, F, S>(&mut self, f: &mut F, step: S) -> Result<ControlFlow<B>, RlogError>
    where
        F: FnMut(u64, EventRef<'_>) -> ControlFlow<B>,
        S: Fn(
            &mut KeyTable,
            &mut Cursor<'_>,
            u64,
            &mut F,
        ) -> Result<(usize, Result<ControlFlow<B>, RlogError>), DecodeError>,
    {
        loop {
            if self.done || self.position() >= self.stop {
                return Ok(ControlFlow::Continue(()));
            }
            if self.pos == self.buf.available() {
                match self.refill(1) {
                    Ok(()) => {}
                    Err(None) => return Ok(ControlFlow::Continue(())),
                    Err(Some(e)) => return Err(e),
                }
            }
            let base = self.buf.position();
            let bytes = self.buf.bytes();
            let mut pos = self.pos;
            // Messages are decoded up to the end of the bytes read, or until one ends at or
            // after the stop offset (the loop above then returns).
            let end = bytes.len().min(usize::try_from(self.stop - base).unwrap_or(usize::MAX));
            // Every message that the bytes read hold whole, without touching `self.pos`.
            let fault = loop {
                let mut c = Cursor::new(&bytes[pos..]);
                let at = base + pos as u64;
                // The message's length as the step says it (its view's bytes), not read back
                // from the cursor in memory: the next message's place waits on it.
                let r = step(&mut self.table, &mut c, at, f);
                debug_assert!(r.as_ref().map_or(true, |(n, _)| *n == c.position()), "a view's bytes are what it took");
                if let Ok((n, Ok(ControlFlow::Continue(())))) = r {
                    // Nothing to free in it, so no call of its drop glue per message (that call
                    // was 5-9% of the walk).
                    std::mem::forget(r);
                    pos += n;
                    if pos >= end {
                        break None;
                    }
                    continue;
                }
                match r {
                    Ok((n, flow)) => {
                        self.pos = pos + n;
                        return flow;
                    }
                    Err(e) => break Some(e),
                }
            };
            self.pos = pos;
            if let Some(e) = fault {
                if let Err(end) = self.want_more(e).and_then(|n| self.refill(n)) {
                    return end.map_or(Ok(ControlFlow::Continue(())), Err);
                }
            }
        }
    }

    /// The bytes read and not yet decoded, with a lifetime not tied to this borrow of `self`, so
    /// that `next_event_ref` can lend a message decoded from them and still read more (into
    /// `self.buf`) when they end inside a message: the borrow checker cannot yet see that the two
    /// happen on different paths ("NLL problem case 3").
    #[inline(always)]
    // The crate's one `unsafe` (ARCHITECTURE.md): the safe alternative decodes every message twice.
    #[allow(unsafe_code)]
    fn unread<'b>(&self) -> &'b [u8] {
        let bytes: &[u8] = &self.buf.bytes()[self.pos..];
        // SAFETY: the slice points into `self.buf`'s storage (a `ReadBuf`'s buffer, or the slice
        // a `SliceBuf` or a `WindowBuf` lends, which never changes), which only `Input::fill` and `Input::take`
        // change (`Input` is sealed: the runtime's two inputs are all there are).
        // `next_event_ref` uses the slice (and views of it) only until it calls `refill` (on the
        // path where decoding failed, after which it takes a new slice), or returns views of it
        // in an `EventRef` that borrows `self` mutably, so `self.buf` cannot change while they
        // live.
        unsafe { &*(bytes as *const [u8]) }
    }

    /// Gives the decoded bytes back to the buffer and reads until `want` bytes are there (or the
    /// input ends).
    #[cold]
    #[inline(never)]
    fn refill(&mut self, want: usize) -> Result<(), Option<RlogError>> {
        self.buf.take(std::mem::take(&mut self.pos));
        if let Err(e) = self.buf.fill(want) {
            return Err(Some(self.fail(RlogErrorKind::Io(e))));
        }
        if self.buf.available() == 0 {
            self.done = true;
            return Err(None);
        }
        Ok(())
    }

    /// After a decode error: the bytes to read for a message cut by the end of the bytes read, or
    /// the error that ends reading.
    #[cold]
    fn want_more(&mut self, e: DecodeError) -> Result<usize, Option<RlogError>> {
        match e.kind {
            DecodeErrorKind::UnexpectedEof { needed, available } => {
                let offset = e.offset;
                if self.buf.is_eof() {
                    let kind = RlogErrorKind::Truncated { needed: offset + needed, available: offset + available };
                    return Err(Some(self.fail(kind)));
                }
                // At least the bytes the cut field needs, and always more than we have.
                let have = (self.buf.available() - self.pos) as u64;
                let need = (offset + needed).max(have + 1);
                Ok(usize::try_from(need).unwrap_or(usize::MAX))
            }
            _ => Err(Some(self.fail(RlogErrorKind::Decode(e)))),
        }
    }

    /// Ends the stream with an error at the next message.
    #[cold]
    fn fail(&mut self, kind: RlogErrorKind) -> RlogError {
        self.done = true;
        self.error(self.position(), kind)
    }

    /// Applies a decoded message (which started at byte `at`) to the key table and the cycle
    /// time, and lends it as an event.
    #[inline(always)]
    fn apply<'b>(&'b mut self, m: Message<'b>, at: u64) -> Result<EventRef<'b>, RlogError> {
        match m {
            Message::R1(m) => Ok(self.table.apply_r1(m)),
            Message::R2(m) => self.table.apply_r2(m, at),
        }
    }

    /// The next whole cycle: a timestamp and the values up to the next timestamp. Values before
    /// the first timestamp (a file that starts mid-cycle) form a cycle of their own, at 0.0. On an
    /// error, the values read before it are returned first, then the error.
    pub fn next_cycle(&mut self) -> Option<Result<Cycle, RlogError>> {
        if let Some(e) = self.pending_err.take() {
            return Some(Err(e));
        }
        let mut cycle = Cycle { timestamp: 0.0, values: Vec::with_capacity(self.cycle_len) };
        let mut have = false;
        if let Some(t) = self.pending_ts.take() {
            cycle.timestamp = t;
            have = true;
        }
        while let Some(ev) = self.next_event() {
            match ev {
                Ok(Event::Timestamp(t)) => {
                    if have || !cycle.values.is_empty() {
                        self.pending_ts = Some(t);
                        self.cycle_len = cycle.values.len();
                        return Some(Ok(cycle));
                    }
                    cycle.timestamp = t;
                    have = true;
                }
                Ok(Event::KeyDef { .. }) => {}
                Ok(Event::Value { key_id, value, timestamp }) => {
                    if !have {
                        cycle.timestamp = timestamp;
                    }
                    have = true;
                    cycle.values.push((key_id, value));
                }
                Err(e) => {
                    if have {
                        self.pending_err = Some(e);
                        return Some(Ok(cycle));
                    }
                    return Some(Err(e));
                }
            }
        }
        have.then_some(Ok(cycle))
    }
}

/// What the reader carries from message to message: the key table and the cycle time.
struct KeyTable {
    /// Keys by id (`id as u16` as index), boxed so that looking one up reads a pointer.
    keys: Vec<Option<Box<Key>>>,
    /// By key id: the value codes (bits; R2: bit 0) whose values the reading loops pass over
    /// ([`Reader::skip_values`]); cleared when the key is defined again.
    skip: Vec<u16>,
    timestamp: f64,
}

impl KeyTable {
    #[inline(always)]
    fn key(&self, key_id: i16) -> Option<&Key> {
        self.keys.get(usize::from(key_id as u16)).and_then(Option::as_deref)
    }

    /// Whether the values of `key_id` with value code `code` are passed over.
    #[inline(always)]
    fn skips(&self, key_id: i16, code: i128) -> bool {
        self.skip.get(usize::from(key_id as u16)).is_some_and(|m| (u32::from(*m) >> (code as u32 & 15)) & 1 != 0)
    }

    /// Defines a key.
    fn define(&mut self, key_id: i16, key: Key) -> &Key {
        let i = usize::from(key_id as u16);
        if let Some(m) = self.skip.get_mut(i) {
            *m = 0;
        }
        if self.keys.len() <= i {
            self.keys.resize(i + 1, None);
        }
        self.keys[i].insert(Box::new(key))
    }

    /// Applies an R1 message to the key table and the cycle time, and lends it as an event.
    #[inline(always)]
    fn apply_r1<'b>(&'b mut self, m: R1MessageRef<'b>) -> EventRef<'b> {
        match m.body {
            R1BodyRef::Field { key_id, value } => {
                EventRef::Value { timestamp: self.timestamp, key_id, key: self.key(key_id), value: ValueRef::R1(value) }
            }
            R1BodyRef::Timestamp { timestamp } => {
                self.timestamp = timestamp;
                EventRef::Timestamp(timestamp)
            }
            R1BodyRef::KeyDef { key_id, key } => {
                let key = Key { name: key.to_owned(), declared_type: None, variant: None };
                EventRef::KeyDef { key_id, key: self.define(key_id, key) }
            }
        }
    }

    /// Applies an R2 message (which started at byte `at`): its value is decoded in place by its
    /// key's declared type. A value of an undefined key, or one that does not decode as its
    /// type, is an error after which reading can go on (the message's length is known).
    #[inline(always)]
    fn apply_r2<'b>(&'b mut self, m: R2MessageRef<'b>, at: u64) -> Result<EventRef<'b>, RlogError> {
        self.apply_r2_then(m, at, |ev| ev)
    }

    /// [`apply_r2`](Self::apply_r2), handing the event to `k`: a value goes to `k` from the
    /// decoder of its own variant (`decode_variant_exact_then`), so the event is never merged
    /// from the variants, and a consumer's match on the value's variant folds away.
    #[inline(always)]
    fn apply_r2_then<'b, T>(
        &'b mut self,
        m: R2MessageRef<'b>,
        at: u64,
        k: impl FnOnce(EventRef<'b>) -> T,
    ) -> Result<T, RlogError> {
        match m.body {
            R2BodyRef::Field { key_id, value } => {
                let timestamp = self.timestamp;
                let Some(key) = self.key(key_id) else {
                    return Err(RlogError::new(at, None, RlogErrorKind::UndefinedKey { key_id }));
                };
                // The schema's default variant takes every other type, so an index always exists.
                let variant = key.variant.unwrap_or(i128::MAX);
                R2ValueRef::decode_variant_exact_then(
                    variant,
                    value,
                    #[inline(always)]
                    |value| k(EventRef::Value { timestamp, key_id, key: Some(key), value: ValueRef::R2(value) }),
                )
                // Relative to the message: kind, key id and length come first.
                .map_err(|e| RlogError::new(at, Some(key.name.clone()), RlogErrorKind::Decode(e.at(5))))
            }
            R2BodyRef::Timestamp { timestamp } => {
                self.timestamp = timestamp;
                Ok(k(EventRef::Timestamp(timestamp)))
            }
            R2BodyRef::KeyDef { key_id, key, r#type } => {
                let variant = R2Value::variant_index(r#type);
                let key = Key { name: key.to_owned(), declared_type: Some(r#type.to_owned()), variant };
                Ok(k(EventRef::KeyDef { key_id, key: self.define(key_id, key) }))
            }
        }
    }
}

/// A message view of either revision.
enum Message<'a> {
    R1(R1MessageRef<'a>),
    R2(R2MessageRef<'a>),
}
