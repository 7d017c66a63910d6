//! The DataFlash reader: the message header and FMT decoded by the generated code of
//! `schemas/dataflash.toml`, the state a schema cannot hold (the FMT table by id, the UNIT and
//! MULT tables, the FMTU unit strings), and messages lent one at a time from a read buffer that
//! grows only to the largest message (a FMT layout is at most 16 × 64 bytes), or in place from
//! bytes in memory (a mapped file).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::sync::Arc;

use logspec_ir::dataflash::{self as front, Conv, DfError, DfFormat, Lowered};
use logspec_ir::ir::{Prim, Ty};
use logspec_runtime::{resync, Encode, Endian, Fixed, Input, ReadBuf, Resync, SliceBuf, Visitor, WindowBuf};

use super::{Fmt, MessageHeader};
use crate::dynamic::{Plan, Sink};
use crate::formats::rosbag::Visiting;

/// How much the search for the next header reads ahead at a time.
const SEARCH: usize = 64 * 1024;

/// A FMT layout compiled: its IR and the plan that decodes its messages.
#[derive(Debug)]
pub struct Decoder {
    pub lowered: Lowered,
    min: Vec<u64>,
    plan: Plan,
    /// The time column: its offset, type and microseconds per unit (`TimeUS`: 1, `TimeMS`: 1000).
    time: Option<(usize, Prim, u64)>,
    /// The instance column (FMTU's `#`): its offset and type.
    instance: Option<(usize, Prim)>,
}

/// An integer column of a body at `at`, as `u64` (a negative value as 0).
fn int_at(body: &[u8], at: usize, p: Prim) -> Option<u64> {
    let b = body.get(at..)?;
    let e = Endian::Little;
    Some(match p {
        Prim::U8 => u64::from(u8::decode_fixed(b, e).ok()?),
        Prim::U16 => u64::from(u16::decode_fixed(b, e).ok()?),
        Prim::U32 => u64::from(u32::decode_fixed(b, e).ok()?),
        Prim::U64 => u64::decode_fixed(b, e).ok()?,
        Prim::I8 => u64::try_from(i8::decode_fixed(b, e).ok()?).unwrap_or(0),
        Prim::I16 => u64::try_from(i16::decode_fixed(b, e).ok()?).unwrap_or(0),
        Prim::I32 => u64::try_from(i32::decode_fixed(b, e).ok()?).unwrap_or(0),
        Prim::I64 => u64::try_from(i64::decode_fixed(b, e).ok()?).unwrap_or(0),
        Prim::F32 | Prim::F64 => return None,
    })
}

impl Decoder {
    pub fn new(lowered: Lowered, instance: Option<usize>) -> Decoder {
        let root = Ty::Named(lowered.root());
        let min = logspec_ir::layout::min_sizes(&lowered.wire);
        let plan = Plan::new(&lowered.wire, &min, &root);
        let fields = &lowered.wire.strukt(lowered.root()).fields;
        let int = |f: &logspec_ir::ir::Field| match f.ty {
            Ty::Prim(p) if !matches!(p, Prim::F32 | Prim::F64) => Some((f.offset? as usize, p)),
            _ => None,
        };
        let time = fields.iter().enumerate().find_map(|(i, f)| {
            let per = match f.name.as_str() {
                "TimeUS" => 1,
                "TimeMS" => 1000,
                _ => return None,
            };
            // Only a column with no conversion (not a scaled character).
            (lowered.conv[i] == Conv::Same).then_some(())?;
            int(f).map(|(o, p)| (o, p, per))
        });
        let instance = instance.and_then(|i| fields.get(i)).and_then(int);
        Decoder { lowered, min, plan, time, instance }
    }

    /// The message's name.
    pub fn name(&self) -> &str {
        &self.lowered.values.strukt(self.lowered.root()).name
    }

    /// The `TimeUS` column of a body, if the format has one (not `TimeMS`).
    pub fn time_us_column(&self, body: &[u8]) -> Option<u64> {
        self.time.filter(|t| t.2 == 1)?;
        self.time_us(body)
    }

    /// The time column of a body in microseconds (`TimeUS`, or `TimeMS` × 1000), if the format
    /// has one.
    pub fn time_us(&self, body: &[u8]) -> Option<u64> {
        let (at, p, per) = self.time?;
        int_at(body, at, p).map(|t| t.saturating_mul(per))
    }

    /// The instance column's value, if FMTU marks one (`#`).
    pub fn instance(&self, body: &[u8]) -> Option<u64> {
        let (at, p) = self.instance?;
        int_at(body, at, p)
    }

    /// The value IR (the struct a reader shows, with units), at [`Decoder::root`].
    pub fn values(&self) -> &logspec_ir::ir::Schema {
        &self.lowered.values
    }

    pub fn root(&self) -> logspec_ir::ir::TypeId {
        self.lowered.root()
    }

    /// A body straight into a visitor as a struct named `name` (the dump's `"data"`), its
    /// columns converted as the front end says.
    pub fn visit_as(&self, body: &[u8], name: Option<&str>, v: &mut (impl Visitor + ?Sized)) -> Result<(), String> {
        let mut sink = Converting { inner: Visiting::new(v, name), conv: &self.lowered.conv, depth: 0, col: 0 };
        self.plan.decode(&self.lowered.wire, &self.min, body, &mut sink).map_err(|e| e.to_string())
    }

    /// Whether a body decodes, keeping nothing.
    pub fn check(&self, body: &[u8]) -> Result<(), String> {
        self.plan.check(&self.lowered.wire, &self.min, body).map_err(|e| e.to_string())
    }
}

/// The plan's sink with the front end's conversions: a scaled integer divided, a half float
/// widened, NUL-padded bytes as text; everything else as [`Visiting`] shows it.
struct Converting<'c, 'v, 'n, V: ?Sized> {
    inner: Visiting<'v, 'n, V>,
    conv: &'c [Conv],
    depth: u32,
    col: usize,
}

impl<V: Visitor + ?Sized> Converting<'_, '_, '_, V> {
    fn conv(&self) -> Conv {
        if self.depth == 1 {
            self.conv.get(self.col).copied().unwrap_or(Conv::Same)
        } else {
            Conv::Same
        }
    }

    fn next(&mut self) {
        if self.depth == 1 {
            self.col += 1;
        }
    }
}

impl<V: Visitor + ?Sized> Sink for Converting<'_, '_, '_, V> {
    fn begin_struct(&mut self, name: Option<&str>) {
        self.inner.begin_struct(name);
        self.depth += 1;
    }
    fn end_struct(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.inner.end_struct();
        self.next();
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        self.inner.begin_array(name, len);
        self.depth += 1;
    }
    fn end_array(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.inner.end_array();
        self.next();
    }
    fn number(&mut self, name: Option<&str>, p: Prim, raw: u64) {
        match self.conv() {
            Conv::Div(d) => {
                let x = match p {
                    Prim::I8 => raw as u8 as i8 as f64,
                    Prim::I16 => raw as u16 as i16 as f64,
                    Prim::I32 => raw as u32 as i32 as f64,
                    Prim::I64 => raw as i64 as f64,
                    _ => raw as f64,
                };
                self.inner.visitor().f64(name, x / d);
            }
            Conv::Half => self.inner.visitor().f32(name, front::half(raw as u16)),
            _ => self.inner.number(name, p, raw),
        }
        self.next();
    }
    fn numbers(&mut self, name: Option<&str>, p: Prim, e: logspec_ir::ir::Endian, bytes: &[u8]) {
        self.inner.numbers(name, p, e, bytes);
        self.next();
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.inner.bool(name, v);
        self.next();
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.inner.str(name, v);
        self.next();
    }
    fn raw_str(&mut self, name: Option<&str>, v: &[u8]) {
        self.inner.raw_str(name, v);
        self.next();
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        match self.conv() {
            Conv::Text => self.inner.visitor().str(name, &front::text(v)),
            _ => self.inner.visitor().bytes(name, v),
        }
        self.next();
    }
}

/// A message id's FMT: the format as logged, its compiled layout or why it has none, and the
/// units FMTU gave it.
#[derive(Debug)]
pub struct Entry {
    pub format: DfFormat,
    /// The compiled layout, or why the FMT cannot be read (an unknown format character).
    pub decoder: Result<Arc<Decoder>, DfError>,
    /// FMTU's unit and multiplier ids for this id, if one came.
    pub unit_ids: Option<(String, String)>,
}

/// What a message is, lent until the next call.
#[derive(Debug)]
pub enum Event<'a> {
    /// A message of an id with a layout: its FMT and body, and what a FMT message got wrong.
    Message { id: u8, decoder: &'a Arc<Decoder>, body: &'a [u8], problem: Option<Problem> },
    /// Bytes that are not a message of a known id: skipped to the next header of a known id
    /// (or to the end of the input).
    Skipped { len: u64 },
}

/// What a FMT message got wrong.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Its id cannot be read (an unknown format character; a FMT for FMT itself), or only a
    /// length or labels were mended (the layout of the format characters is used).
    pub unreadable: bool,
    pub message: String,
}

/// A message as [`Reader::next_message`] lends it.
#[derive(Debug)]
pub struct Message<'a> {
    /// Absolute byte offset of the message header (of the skipped bytes for
    /// [`Event::Skipped`]).
    pub offset: u64,
    /// 0-based index among the messages and skipped regions read.
    pub index: u64,
    pub event: Event<'a>,
}

/// An error that ends reading.
#[derive(Debug)]
pub struct ReadError {
    pub offset: u64,
    pub index: Option<u64>,
    pub kind: ReadErrorKind,
}

#[derive(Debug)]
pub enum ReadErrorKind {
    Io(io::Error),
    /// The input is empty.
    Empty,
    /// The input ends inside a message header (its first bytes are the header's).
    TruncatedHeader {
        available: u64,
    },
    /// The input ends inside a message.
    Truncated {
        name: String,
        id: u8,
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
            ReadErrorKind::Empty => f.write_str("the file is empty; a DataFlash log holds at least one FMT message"),
            ReadErrorKind::TruncatedHeader { available } => write!(
                f,
                "the file ends inside a message header: {available} of its 3 bytes are there; every message before it was read"
            ),
            ReadErrorKind::Truncated { name, id, needed, available } => write!(
                f,
                "the file ends inside a `{name}` message (id {id}): it needs {needed} bytes, {available} are left; every message before it was read"
            ),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// A streaming DataFlash reader over any `Read`, or, made by [`Reader::from_slice`] or
/// [`Reader::from_window`], over bytes already in memory, read in place. `I` is where the bytes
/// come from (the runtime's [`Input`]); one loop reads every kind.
pub struct Reader<R, I = ReadBuf<R>> {
    buf: I,
    _input: PhantomData<R>,
    /// Bytes of the message last lent, consumed at the next call.
    pos: usize,
    /// The FMT of each id; FMT's own (id 128) from the start.
    table: Vec<Option<Entry>>,
    /// UNIT labels and MULT multipliers by their one-character id.
    units: BTreeMap<u8, String>,
    mults: BTreeMap<u8, f64>,
    /// The header bytes (`A3 95`), from the schema's const field.
    head: [u8; 2],
    index: u64,
    done: bool,
    started: bool,
    problem: Option<Problem>,
}

/// The compiled FMT of FMT itself: DFReader's hard-coded `BBnNZ`.
fn fmt_entry() -> Entry {
    let size = 3 + <Fmt as Fixed>::SIZE as u8;
    let format = DfFormat::new(front::FMT_ID, size, b"FMT", front::FMT_FORMAT.as_bytes(), front::FMT_LABELS.as_bytes());
    let decoder = front::lower(&format, &[]).map(|l| Arc::new(Decoder::new(l, None)));
    Entry { format, decoder, unit_ids: None }
}

/// A DataFlash reader of bytes in memory, read in place ([`Reader::from_slice`]).
pub type SliceReader<'a> = Reader<&'a [u8], SliceBuf<'a>>;

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader::over(ReadBuf::new(inner))
    }
}

impl<'a> SliceReader<'a> {
    /// A reader of a log already in memory (read whole, or mapped): as [`Reader::new`] over the
    /// slice, but nothing is copied: the bodies it lends point into `bytes`.
    pub fn from_slice(bytes: &'a [u8]) -> Self {
        Reader::over(SliceBuf::new(bytes))
    }
}

impl<'a, A: FnMut(u64)> Reader<&'a [u8], WindowBuf<'a, A>> {
    /// A reader of a log in memory lent a window at a time (a mapped file, see [`WindowBuf`]):
    /// read in place, as [`Reader::from_slice`].
    pub fn from_window(buf: WindowBuf<'a, A>) -> Self {
        Reader::over(buf)
    }
}

impl<R, I: Input> Reader<R, I> {
    fn over(buf: I) -> Self {
        let mut table: Vec<Option<Entry>> = (0..256).map(|_| None).collect();
        table[usize::from(front::FMT_ID)] = Some(fmt_entry());
        let mut head = [0xffu8; 2];
        let mut v = Vec::with_capacity(MessageHeader::SIZE);
        // The header's const bytes, from its schema; encoding it cannot fail.
        if (MessageHeader { id: 0 }).encode(&mut v, Endian::Little).is_ok() && v.len() >= 2 {
            head.copy_from_slice(&v[..2]);
        }
        Reader {
            buf,
            _input: PhantomData,
            pos: 0,
            table,
            units: BTreeMap::new(),
            mults: BTreeMap::new(),
            head,
            index: 0,
            done: false,
            started: false,
            problem: None,
        }
    }

    /// The FMT of every id read so far.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.table.iter().flatten()
    }

    /// Absolute offset of the next message.
    pub fn position(&self) -> u64 {
        self.buf.position() + self.pos as u64
    }

    /// Moves the reader to byte offset `offset` of the same bytes, where the message numbered
    /// `index` starts (a state message, or a chunk of a time index), keeping its state (the FMT,
    /// UNIT and MULT tables); `false`, and nothing moved, where the input cannot go back and
    /// forth (a stream). An offset that is not a message's start reads as skipped bytes up to
    /// the next header of a known id.
    pub fn seek(&mut self, offset: u64, index: u64) -> bool {
        if !self.buf.seek(offset) {
            return false;
        }
        self.pos = 0;
        self.index = index;
        self.done = false;
        self.started = true;
        true
    }

    fn fail(&mut self, offset: u64, kind: ReadErrorKind) -> ReadError {
        self.done = true;
        ReadError { offset, index: Some(self.index), kind }
    }

    fn known(&self, id: u8) -> Option<&Arc<Decoder>> {
        self.table[usize::from(id)].as_ref().and_then(|e| e.decoder.as_ref().ok())
    }

    /// Where the next header of a known id starts in `bytes` (the resynchronisation rule: the
    /// header bytes, then an id that has a layout); `None` when no whole header is there.
    fn find_header(&self, bytes: &[u8]) -> Option<usize> {
        let known = |b: &[u8], _| {
            let m = b.get(..MessageHeader::SIZE).and_then(|h| MessageHeader::decode_fixed(h, Endian::Little).ok());
            Some(m.is_some_and(|m| self.known(m.id).is_some()))
        };
        match resync(bytes, 0, &self.head, known) {
            Resync::Found(at) => Some(at),
            Resync::More(_) => None,
        }
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
        let offset = self.buf.position();
        if let Err(e) = self.buf.fill(h) {
            return Some(Err(self.fail(offset, ReadErrorKind::Io(e))));
        }
        if !self.started {
            self.started = true;
            if self.buf.available() == 0 {
                return Some(Err(self.fail(0, ReadErrorKind::Empty)));
            }
        }
        let n = self.buf.available();
        if n == 0 {
            self.done = true;
            return None;
        }
        if n < h && self.buf.bytes()[..n] == self.head[..n] {
            return Some(Err(self.fail(offset, ReadErrorKind::TruncatedHeader { available: n as u64 })));
        }
        // A header of a known id here, or the bytes up to the next one are skipped.
        if self.find_header(&self.buf.bytes()[..n.min(h)]) != Some(0) {
            return Some(match self.skip() {
                Ok(len) => {
                    let index = self.index;
                    self.index += 1;
                    Ok(Message { offset, index, event: Event::Skipped { len } })
                }
                Err(e) => Err(self.fail(offset, ReadErrorKind::Io(e))),
            });
        }
        let id = self.buf.bytes()[2];
        let d = self.known(id).map(Arc::clone)?;
        let total = h + d.lowered.size as usize;
        if let Err(e) = self.buf.fill(total) {
            return Some(Err(self.fail(offset, ReadErrorKind::Io(e))));
        }
        if self.buf.available() < total {
            let name = d.name().to_string();
            let kind =
                ReadErrorKind::Truncated { name, id, needed: total as u64, available: self.buf.available() as u64 };
            return Some(Err(self.fail(offset, kind)));
        }
        let index = self.index;
        self.index += 1;
        self.pos = total;
        self.problem = None;
        self.register(id, total);
        let body = &self.buf.bytes()[h..total];
        let problem = self.problem.take();
        match self.table[usize::from(id)].as_ref().map(|e| &e.decoder) {
            Some(Ok(decoder)) => {
                Some(Ok(Message { offset, index, event: Event::Message { id, decoder, body, problem } }))
            }
            // A FMT that redefined its own id with a layout that cannot be read: the message
            // was read with the old one.
            _ => Some(Ok(Message { offset, index, event: Event::Skipped { len: total as u64 } })),
        }
    }

    /// Consumes bytes up to the next header of a known id (or the end of the input): how many.
    fn skip(&mut self) -> io::Result<u64> {
        let start = self.buf.position();
        // The byte here is not a header of a known id.
        self.buf.take(1);
        loop {
            self.buf.fill(SEARCH)?;
            let bytes = &self.buf.bytes()[..self.buf.available()];
            if let Some(i) = self.find_header(bytes) {
                self.buf.take(i);
                break;
            }
            if self.buf.is_eof() {
                // No header of a known id before the end: the rest is skipped.
                let n = self.buf.available();
                self.buf.take(n);
                break;
            }
            let keep = (MessageHeader::SIZE - 1).min(bytes.len());
            let n = bytes.len() - keep;
            self.buf.take(n);
        }
        Ok(self.buf.position() - start)
    }

    /// The state a message changes: a FMT defines its id; UNIT, MULT and FMTU (found by name)
    /// give units.
    fn register(&mut self, id: u8, total: usize) {
        let h = MessageHeader::SIZE;
        let Some(Ok(d)) = self.table[usize::from(id)].as_ref().map(|e| &e.decoder) else { return };
        let d = Arc::clone(d);
        let body = &self.buf.bytes()[h..total];
        if id == front::FMT_ID {
            let Ok(f) = Fmt::decode_fixed(body, Endian::Little) else { return };
            let format = DfFormat::new(f.msg_type, f.length, &f.name, &f.format, &f.labels);
            self.define(format);
            return;
        }
        let name = d.name();
        if !matches!(name, "UNIT" | "MULT" | "FMTU") {
            return;
        }
        let mut cols = Columns::default();
        if d.visit_as(body, None, &mut cols).is_err() {
            return;
        }
        let c = &cols.0;
        match (name, c.get(1), c.get(2), c.get(3)) {
            ("UNIT", Some(Col::Int(uid)), Some(Col::Text(label)), _) => {
                self.units.insert(*uid as u8, label.clone());
            }
            ("MULT", Some(Col::Int(mid)), Some(Col::Float(m)), _) => {
                self.mults.insert(*mid as u8, front::multiplier(*m));
            }
            ("FMTU", Some(Col::Int(ty)), Some(Col::Text(u)), Some(Col::Text(m))) => {
                let Ok(ty) = u8::try_from(*ty) else { return };
                if let Some(e) = self.table[usize::from(ty)].as_mut() {
                    e.unit_ids = Some((u.clone(), m.clone()));
                    let format = e.format.clone();
                    self.compile(format, false);
                }
            }
            _ => {}
        }
    }

    /// A FMT read: its id's layout from here on.
    fn define(&mut self, format: DfFormat) {
        if format.id == front::FMT_ID {
            let fixed = fmt_entry().format;
            if (format.format.as_str(), format.length) != (fixed.format.as_str(), fixed.length) {
                self.problem = Some(Problem {
                    unreadable: true,
                    message: format!(
                        "a FMT for id 128 (FMT itself) with format `{}` and Length {}: FMT's layout is fixed (`{}`, {}); ignored",
                        format.format, format.length, fixed.format, fixed.length
                    ),
                });
            }
            return;
        }
        // A redefined id keeps the units FMTU gave it (as DFReader carries them over).
        let unit_ids = self.table[usize::from(format.id)].as_ref().and_then(|e| e.unit_ids.clone());
        self.table[usize::from(format.id)] = Some(Entry {
            format: format.clone(),
            decoder: Err(DfError { id: format.id, name: format.name.clone(), column: None, message: String::new() }),
            unit_ids,
        });
        self.compile(format, true);
    }

    /// Compiles an id's layout with its units; `report`: a FMT message is being read, whose
    /// problems are its own.
    fn compile(&mut self, format: DfFormat, report: bool) {
        let i = usize::from(format.id);
        let Some(entry) = self.table[i].as_ref() else { return };
        let chars: Vec<u8> = format.format.bytes().collect();
        let (units, instance) = match &entry.unit_ids {
            Some((u, m)) => front::unit_strings(&chars, u, m, &self.units, &self.mults),
            None => (Vec::new(), None),
        };
        let lowered = front::lower(&format, &units);
        if report {
            self.problem = match &lowered {
                Err(e) => Some(Problem {
                    unreadable: true,
                    message: format!("{e}; its messages cannot be read and are skipped"),
                }),
                Ok(l) if !l.notes.is_empty() => Some(Problem {
                    unreadable: false,
                    message: format!("FMT of message id {} (`{}`): {}", format.id, format.name, l.notes.join("; ")),
                }),
                Ok(_) => None,
            };
        }
        let decoder = lowered.map(|l| Arc::new(Decoder::new(l, instance)));
        if let Some(e) = self.table[i].as_mut() {
            e.decoder = decoder;
        }
    }
}

/// A column's value, for the UNIT, MULT and FMTU messages the reader keeps.
#[derive(Debug)]
enum Col {
    Int(i64),
    Float(f64),
    Text(String),
    Other,
}

/// The top-level columns of a message, for [`Reader::register`].
#[derive(Default)]
struct Columns(Vec<Col>, u32);

impl Columns {
    fn push(&mut self, c: Col) {
        if self.1 == 1 {
            self.0.push(c);
        }
    }
}

impl Visitor for Columns {
    fn uint(&mut self, _: Option<&str>, v: u64) {
        self.push(Col::Int(v as i64));
    }
    fn int(&mut self, _: Option<&str>, v: i64) {
        self.push(Col::Int(v));
    }
    fn f32(&mut self, _: Option<&str>, v: f32) {
        self.push(Col::Float(f64::from(v)));
    }
    fn f64(&mut self, _: Option<&str>, v: f64) {
        self.push(Col::Float(v));
    }
    fn bool(&mut self, _: Option<&str>, _: bool) {
        self.push(Col::Other);
    }
    fn str(&mut self, _: Option<&str>, v: &str) {
        self.push(Col::Text(v.to_string()));
    }
    fn bytes(&mut self, _: Option<&str>, _: &[u8]) {
        self.push(Col::Other);
    }
    fn enumeration(&mut self, _: Option<&str>, _: i128, _: Option<&'static str>) {
        self.push(Col::Other);
    }
    fn flags(&mut self, _: Option<&str>, _: u64) {
        self.push(Col::Other);
    }
    fn begin_struct(&mut self, _: Option<&str>) {
        self.push(Col::Other);
        self.1 += 1;
    }
    fn end_struct(&mut self) {
        self.1 = self.1.saturating_sub(1);
    }
    fn begin_array(&mut self, _: Option<&str>, _: usize) {
        self.push(Col::Other);
        self.1 += 1;
    }
    fn end_array(&mut self) {
        self.1 = self.1.saturating_sub(1);
    }
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
    fn end_variant(&mut self) {}
}

/// A message with its decoder, as a [`logspec_runtime::Visit`] value.
pub struct Record<'a> {
    pub decoder: &'a Decoder,
    pub body: &'a [u8],
}

impl logspec_runtime::Visit for Record<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        // Every body of its layout's size decodes: the layout has no counts or consts.
        let _ = self.decoder.visit_as(self.body, name, v);
    }
}

/// Reads every message of `bytes` (for fuzzing and tests): how many were read, and the error
/// that ended reading, if any.
pub fn read_all(bytes: &[u8]) -> (u64, Option<ReadError>) {
    let mut r = Reader::new(bytes);
    let mut n = 0;
    let mut sink = crate::json::JsonWriter::new();
    while let Some(m) = r.next_message() {
        match m {
            Ok(m) => {
                if let Event::Message { decoder, body, .. } = m.event {
                    let _ = decoder.visit_as(body, None, &mut sink);
                    sink.take();
                }
                n += 1;
            }
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}
