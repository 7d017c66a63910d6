//! Any TOML schema with a `[framing]` read as a log format at run time: the file header and the
//! record framing found from the IR, every payload decoded by the IR interpreter's
//! [`Plan`], no code generated. A firmware team's own schema
//! (`schemas/boat.toml`) reads its logs this way in every tool, and a file written under an older
//! schema id decodes with that id's layout from the schema's lock file, as the generated
//! `history` module does for the bundled formats.
//!
//! The rules are the generated reader's ([`crate::runtime::Reader`]): the file header's consts
//! (its magic) and schema id are checked; each record is a fixed-size record header (its consts
//! checked) and a payload of the header's length; a record whose tag the schema does not know is
//! skipped by its length; a payload that does not decode is a recoverable error (the record is
//! skipped); a bad record header, a truncation or a read error ends the stream. With a
//! `[framing] trailer`, the input's last bytes at a record boundary must be exactly the
//! trailer's: fewer are a truncation, other bytes a bad trailer, each at its offset.
//!
//! What the interpreter does not read yet is refused when the schema is loaded, with the type's
//! name: unions, a file header of variable size, and records without a length field whose
//! payloads are not of a fixed size.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use logspec_ir::ir::{ConstValue, Endian, Prim, Schema, Ty, TypeDef, TypeId};
use logspec_ir::layout;

use crate::dynamic::{self, Plan, Sink};
use crate::runtime::{
    resync, Crc, CrcShifts, End, Input, ReadBuf, RecordChecksum, RecordHeader, Resync, SpanCrc, Visit, Visitor,
    WindowBuf,
};
use logspec_ir::ir::ChecksumSpan;

use super::info::DENSE;

/// A framed format described by a schema (and the older layouts of its lock).
#[derive(Debug)]
pub struct SchemaFormat {
    /// The current layout first, then the lock's older ones by ascending schema id.
    layouts: Vec<Layout>,
}

#[derive(Debug)]
struct Layout {
    schema: Arc<Schema>,
    min: Vec<u64>,
    /// The file header: its size and its plan (consts shown, as a header is).
    header_size: usize,
    header: Option<Plan>,
    /// Where the schema id is in the file header.
    schema_id: Option<Number>,
    frame: Frame,
    /// Record tags, sorted, with their index in `records`.
    tags: Vec<(u64, usize)>,
    /// The index in `records` of each tag below [`DENSE`] (`u32::MAX`: none), looked up without
    /// a search: every record asks, and a binary search's branches on the tags of interleaved
    /// records mispredict.
    dense: Box<[u32; DENSE]>,
    records: Vec<RecordType>,
}

#[derive(Debug)]
struct Frame {
    size: usize,
    /// The record header's plan, for its consts (`None` when it has none: any bytes frame).
    check: Option<Plan>,
    tag: Number,
    len: Option<Number>,
    timestamp: Option<Number>,
    /// The bytes that begin every record (`[framing] sync`), empty without one.
    sync: Vec<u8>,
    /// The per-record CRC (`[framing] checksum`), verified as the runtime's reader does.
    checksum: Option<RecordChecksum>,
    /// The bytes that end the file (`[framing] trailer`) and the trailer struct's name; empty
    /// without one.
    trailer: (Vec<u8>, String),
    /// Its zero-byte shifts, made at the first resynchronisation.
    shifts: std::sync::OnceLock<CrcShifts>,
}

impl Frame {
    /// Whether a record that does not check out is passed over to the next good one.
    fn resyncs(&self) -> bool {
        !self.sync.is_empty() || self.checksum.is_some()
    }
}

/// A number field at a fixed offset of a fixed-size struct.
#[derive(Clone, Copy, Debug)]
struct Number {
    at: usize,
    p: Prim,
    e: Endian,
}

impl Number {
    fn read(&self, b: &[u8]) -> u64 {
        dynamic::load(b, self.at, self.p, self.e).unwrap_or(0)
    }
}

#[derive(Debug)]
struct RecordType {
    name: String,
    body: TypeId,
    plan: Plan,
    /// The payload size, for framings without a length field.
    size: Option<usize>,
    /// The payload size when its length is all there is to check (a fixed size, no const
    /// anywhere in it: any bytes of that size decode), as the generated readers'
    /// `Framing::exact_size`: such a payload is checked without running the plan, and, as every
    /// record's value ([`RecordValue`]), decoded only when visited.
    exact_size: Option<usize>,
}

/// Whether a value of type `ty` can fail to decode from bytes of its size: a const somewhere
/// in it, or a size that is not fixed.
fn can_fail(schema: &Schema, ty: &Ty) -> bool {
    if schema.size_of(ty).is_none() {
        return true;
    }
    match ty {
        Ty::Array { elem, .. } => can_fail(schema, elem),
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => s.fields.iter().any(|f| f.value.is_some() || can_fail(schema, &f.ty)),
            _ => false,
        },
        _ => false,
    }
}

impl RecordType {
    /// Checks a payload against the record's type (the plan into a sink that keeps nothing).
    #[inline]
    fn check(&self, layout: &Layout, payload: &[u8]) -> Result<(), dynamic::Fault> {
        if self.exact_size == Some(payload.len()) {
            return Ok(());
        }
        self.plan.check(&layout.schema, &layout.min, payload)
    }
}

impl SchemaFormat {
    /// Compiles a schema file and the lock file beside it (`<name>.lock`, if there is one) into
    /// a format. Errors name the file and what is wrong.
    pub fn from_file(path: &Path) -> Result<SchemaFormat, String> {
        let schema = logspec_ir::compile_file(path).map_err(|e| e.render())?;
        let (lock_path, lock) = logspec_ir::lock::read_next_to(path)?;
        let history = match &lock {
            Some(lock) => {
                logspec_ir::history::history(&schema, lock).map_err(|e| format!("{}: {e}", lock_path.display()))?
            }
            None => Vec::new(),
        };
        SchemaFormat::new(schema, history).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A format from a compiled schema and the schemas of its older layouts
    /// ([`logspec_ir::history::history`]).
    pub fn new(current: Schema, history: Vec<Schema>) -> Result<SchemaFormat, String> {
        let layouts = std::iter::once(current).chain(history).map(Layout::new).collect::<Result<_, _>>()?;
        Ok(SchemaFormat { layouts })
    }

    /// The format's name (`[format] name`).
    pub fn name(&self) -> &str {
        &self.current().schema.format.name
    }

    /// The format's title, or its name.
    pub fn title(&self) -> &str {
        let f = &self.current().schema.format;
        f.title.as_deref().unwrap_or(&f.name)
    }

    /// The current schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.current().schema
    }

    /// Every schema id this format decodes: the current one first, then the locked older ones.
    pub fn schema_ids(&self) -> Vec<u64> {
        self.layouts.iter().filter_map(|l| l.schema.format.schema_id.as_ref().map(|s| s.value)).collect()
    }

    fn current(&self) -> &Layout {
        &self.layouts[0]
    }

    /// Whether `head`, the first bytes of a file (all of it when `whole`), is a log of this
    /// format: its file header has a const (a magic) and the consts hold, its schema id is one
    /// this format knows, and every record inside `head` frames and decodes. A schema whose
    /// file header has no const never claims a file on its own (name it with `--schema`).
    pub fn claims(&self, head: &[u8], whole: bool) -> bool {
        let cur = self.current();
        let has_const =
            cur.schema.file_header.is_some_and(|h| cur.schema.strukt(h).fields.iter().any(|f| f.value.is_some()));
        if !has_const || head.len() < cur.header_size {
            return false;
        }
        let Ok(layout) = self.layout_of(head) else { return false };
        let mut pos = layout.header_size;
        while pos < head.len() {
            match layout.frame(&head[pos..]) {
                Framed::Whole { total, tag, payload_at } => {
                    if let Some(r) = layout.record(tag) {
                        let payload = &head[pos + payload_at..pos + total];
                        if r.check(layout, payload).is_err() {
                            return false;
                        }
                    }
                    pos += total;
                }
                Framed::Short { .. } => return !whole,
                Framed::Bad(_) => return false,
            }
        }
        true
    }

    /// The layout of a file whose first bytes (at least its file header) are `head`: checked
    /// header consts, and the layout of its schema id.
    #[allow(clippy::result_large_err)] // once per file opened; boxing SchemaError would change the API
    fn layout_of(&self, head: &[u8]) -> Result<&Layout, SchemaError> {
        let cur = self.current();
        let err = |kind: ErrorKind| SchemaError::new(cur, kind, 0, None, None);
        let bytes = head.get(..cur.header_size).ok_or_else(|| {
            err(ErrorKind::Truncated {
                what: "file header",
                needed: cur.header_size as u64,
                available: head.len() as u64,
            })
        })?;
        if let (Some(h), Some(plan)) = (cur.schema.file_header, &cur.header) {
            if let Err(f) = plan.check(&cur.schema, &cur.min, bytes) {
                let name = &cur.schema.strukt(h).name;
                return Err(err(ErrorKind::Decode { field: field_path(name, &f.path), fault: f, base: 0 }));
            }
        }
        let Some(at) = cur.schema_id else { return Ok(cur) };
        let id = at.read(bytes);
        self.layouts
            .iter()
            .find(|l| l.schema.format.schema_id.as_ref().is_some_and(|s| s.value == id))
            .ok_or_else(|| err(ErrorKind::UnknownSchemaId { found: id, known: self.schema_ids() }))
    }

    /// Reads the file header from `input` and gives a reader of the records after it.
    #[allow(clippy::result_large_err)] // once per file opened; boxing SchemaError would change the API
    pub fn read<R: Read>(self: &Arc<Self>, input: R) -> Result<SchemaReader<R>, SchemaError> {
        self.over(ReadBuf::new(input))
    }

    /// [`read`](Self::read) of bytes in memory lent a window at a time (a mapped file), decoded
    /// in place.
    #[allow(clippy::result_large_err)] // once per file opened; boxing SchemaError would change the API
    pub fn read_window<'a, A: FnMut(u64)>(
        self: &Arc<Self>,
        input: WindowBuf<'a, A>,
    ) -> Result<SchemaReader<&'a [u8], WindowBuf<'a, A>>, SchemaError> {
        self.over(input)
    }

    #[allow(clippy::result_large_err)] // once per file opened; boxing SchemaError would change the API
    fn over<R, I: Input>(self: &Arc<Self>, mut buf: I) -> Result<SchemaReader<R, I>, SchemaError> {
        let cur = self.current();
        buf.fill(cur.header_size).map_err(|e| SchemaError::new(cur, ErrorKind::Io(e), 0, None, None))?;
        let layout = self.layout_of(buf.bytes())?;
        let header = buf.take(cur.header_size).to_vec();
        let layout = self.layouts.iter().position(|l| std::ptr::eq(l, layout)).unwrap_or(0);
        let format = Arc::clone(self);
        Ok(SchemaReader { format, layout, buf, header, index: 0, done: false, input: std::marker::PhantomData })
    }
}

/// How the record at the start of some bytes is framed.
enum Framed {
    Whole { total: usize, tag: u64, payload_at: usize },
    Short { what: &'static str, needed: u64, available: u64, tag: Option<u64> },
    Bad(dynamic::Fault),
}

impl Layout {
    fn new(schema: Schema) -> Result<Layout, String> {
        let min = layout::min_sizes(&schema);
        if let Some(u) = schema.types.iter().find(|t| matches!(t, TypeDef::Union(_))) {
            return Err(format!(
                "union `{}`: unions are not yet read without generated code (use the bundled reader or the generated Rust types)",
                u.name()
            ));
        }
        let Some(framing) = schema.framing.clone() else {
            return Err("the schema has no [framing], so it describes no record stream to read".into());
        };
        let (header_size, header) = match schema.file_header {
            None => (0, None),
            Some(h) => {
                let ty = Ty::Named(h);
                let size = schema.size_of(&ty).ok_or_else(|| {
                    format!("file header `{}`: a header of variable size is not read yet", schema.strukt(h).name)
                })?;
                (size as usize, Some(Plan::showing_consts(&schema, &min, &ty)))
            }
        };
        let number = |s: TypeId, i: usize| -> Result<Number, String> {
            let st = schema.strukt(s);
            let f = &st.fields[i];
            let p = match &f.ty {
                Ty::Prim(p) if !p.is_float() => *p,
                Ty::Named(id) => match schema.ty(*id) {
                    TypeDef::Enum(e) => e.base,
                    _ => return Err(format!("`{}.{}` is not an integer", st.name, f.name)),
                },
                _ => return Err(format!("`{}.{}` is not an integer", st.name, f.name)),
            };
            let at = f.offset.ok_or_else(|| format!("`{}.{}` is not at a fixed offset", st.name, f.name))?;
            Ok(Number { at: at as usize, p, e: f.endian })
        };
        let schema_id = match (&schema.format.schema_id, schema.file_header) {
            (Some(sid), Some(h)) => sid.field.map(|i| number(h, i)).transpose()?,
            _ => None,
        };
        let fh = framing.header;
        let hty = Ty::Named(fh);
        let size = schema
            .size_of(&hty)
            .ok_or_else(|| format!("record header `{}` is not of a fixed size", schema.strukt(fh).name))?;
        let frame = Frame {
            size: size as usize,
            check: can_fail(&schema, &hty).then(|| Plan::new(&schema, &min, &hty)),
            tag: number(fh, framing.tag)?,
            len: framing.length.map(|i| number(fh, i)).transpose()?,
            timestamp: framing.timestamp.map(|i| number(fh, i)).transpose()?,
            sync: framing.sync_bytes(&schema).unwrap_or_default(),
            checksum: framing.checksum.map(|c| {
                let p = c.algorithm.params();
                let f = &schema.strukt(fh).fields[c.field];
                RecordChecksum {
                    crc: Crc::new(p.width, p.poly, p.init, p.reflect, p.xorout),
                    // The message names the field; the schema outlives every reader of it.
                    field: "",
                    at: f.offset.unwrap_or(0) as usize,
                    endian: crate::dynamic::runtime_endian(f.endian),
                    over_header: c.over == ChecksumSpan::Record,
                }
            }),
            shifts: std::sync::OnceLock::new(),
            trailer: match framing.trailer {
                Some(t) => (
                    framing.trailer_bytes(&schema).ok_or("the trailer's bytes are not all consts")?,
                    schema.strukt(t).name.clone(),
                ),
                None => Default::default(),
            },
        };
        let mut records = Vec::with_capacity(schema.records.len());
        let mut tags = Vec::with_capacity(schema.records.len());
        for r in &schema.records {
            let ty = Ty::Named(r.body);
            let size = schema.size_of(&ty).map(|s| s as usize);
            if frame.len.is_none() && size.is_none() {
                return Err(format!(
                    "record {}: a payload of variable size needs a length field in the framing to be read without generated code",
                    r.name
                ));
            }
            tags.push((r.id, records.len()));
            let exact_size = size.filter(|_| !can_fail(&schema, &ty));
            records.push(RecordType {
                name: r.name.clone(),
                body: r.body,
                plan: Plan::new(&schema, &min, &ty),
                size,
                exact_size,
            });
        }
        tags.sort_unstable();
        let mut dense = Box::new([u32::MAX; DENSE]);
        for &(tag, i) in &tags {
            if let (Ok(t @ 0..DENSE), Ok(i)) = (usize::try_from(tag), u32::try_from(i)) {
                dense[t] = i;
            }
        }
        Ok(Layout { schema: Arc::new(schema), min, header_size, header, schema_id, frame, tags, dense, records })
    }

    #[inline]
    fn record(&self, tag: u64) -> Option<&RecordType> {
        if let Some(&i) = usize::try_from(tag).ok().and_then(|t| self.dense.get(t)) {
            return self.records.get(i as usize);
        }
        let i = self.tags.binary_search_by_key(&tag, |t| t.0).ok()?;
        Some(&self.records[self.tags[i].1])
    }

    /// Frames the record at the start of `b`.
    fn frame(&self, b: &[u8]) -> Framed {
        let f = &self.frame;
        let Some(hb) = b.get(..f.size) else {
            return Framed::Short {
                what: "record header",
                needed: f.size as u64,
                available: b.len() as u64,
                tag: None,
            };
        };
        if let Some(Err(fault)) = f.check.as_ref().map(|c| c.check(&self.schema, &self.min, hb)) {
            return Framed::Bad(fault);
        }
        let tag = f.tag.read(hb);
        let len = match f.len {
            Some(l) => l.read(hb),
            // Checked when the layout was made: a known record has a fixed size without one.
            None => self.record(tag).and_then(|r| r.size).map_or(u64::MAX, |s| s as u64),
        };
        match usize::try_from(len).ok().and_then(|l| l.checked_add(f.size)) {
            Some(total) if total <= b.len() => Framed::Whole { total, tag, payload_at: f.size },
            _ => Framed::Short { what: "payload", needed: len, available: (b.len() - f.size) as u64, tag: Some(tag) },
        }
    }
}

impl Layout {
    /// Whether the record at the start of `b` checks out, for [`resync`]: it frames, its CRC
    /// matches, and (without a CRC to vouch for it) its type is known and its payload checks.
    /// `None`: `b` ends inside it and more may come. `at` is where `b` starts in `spans`' bytes
    /// (present when the framing has a CRC).
    fn checks_out(&self, b: &[u8], at: usize, eof: bool, spans: &mut Option<SpanCrc<'_>>) -> Option<bool> {
        match self.frame(b) {
            Framed::Whole { total, tag, payload_at } => Some(match (&self.frame.checksum, spans) {
                (Some(c), Some(spans)) => c.verify_in(spans, at, payload_at, total),
                _ => self.record(tag).is_some_and(|r| r.check(self, &b[payload_at..total]).is_ok()),
            }),
            Framed::Short { .. } if !eof => None,
            Framed::Short { .. } | Framed::Bad(_) => Some(false),
        }
    }

    /// The name of the record header's checksum field, `RecordHeader.crc`.
    fn checksum_field(&self) -> Option<String> {
        let fr = self.schema.framing.as_ref()?;
        let h = self.schema.strukt(fr.header);
        Some(format!("{}.{}", h.name, h.fields[fr.checksum?.field].name))
    }
}

/// The records of a log of a [`SchemaFormat`], read from any [`Read`] in constant memory (the
/// buffer grows only to the largest record present), or from bytes in memory in place
/// ([`SchemaFormat::read_window`]). `I` is where the bytes come from (the runtime's [`Input`]).
pub struct SchemaReader<R, I = ReadBuf<R>> {
    format: Arc<SchemaFormat>,
    /// The index of the file's layout in the format's layouts.
    layout: usize,
    buf: I,
    input: std::marker::PhantomData<R>,
    header: Vec<u8>,
    index: u64,
    done: bool,
}

/// One record as framed, with its type when the schema knows its tag.
pub struct Record<'a> {
    /// Absolute byte offset of the record header.
    pub offset: u64,
    /// 0-based index of the record in the stream.
    pub index: u64,
    pub header: RecordHeader,
    pub payload: &'a [u8],
    /// The record's type and value (its payload decoded); `None` for a tag the schema does not
    /// know.
    pub value: Option<RecordValue<'a>>,
}

/// A record's payload, checked against its type: walked into a [`Visitor`] as the generated
/// types are (padding and consts left out).
#[derive(Clone, Copy)]
pub struct RecordValue<'a> {
    layout: &'a Layout,
    record: &'a RecordType,
    payload: &'a [u8],
}

impl<'a> RecordValue<'a> {
    /// The record type's name (`REC_NAV_SOLUTION`).
    pub fn name(&self) -> &'a str {
        &self.record.name
    }

    /// The payload struct's type.
    pub fn body(&self) -> TypeId {
        self.record.body
    }
}

impl Visit for RecordValue<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        let mut to = ToVisitor { v, top: name, depth: 0 };
        // Checked when the record was read: this decode succeeds.
        let _ = self.record.plan.decode(&self.layout.schema, &self.layout.min, self.payload, &mut to);
    }
}

impl<R, I: Input> SchemaReader<R, I> {
    /// The schema of the file's layout (an older one from the lock for a file written under an
    /// older schema id).
    pub fn schema(&self) -> &Arc<Schema> {
        &self.layout().schema
    }

    /// Whether the file's layout is the schema's current one.
    pub fn is_current(&self) -> bool {
        self.layout == 0
    }

    /// The schema id in the file header.
    pub fn schema_id(&self) -> Option<u64> {
        self.layout().schema_id.map(|n| n.read(&self.header))
    }

    /// The file header's fields (consts included) into `v`, as one struct.
    pub fn visit_header(&self, v: &mut (impl Visitor + ?Sized)) {
        let l = self.layout();
        match &l.header {
            Some(plan) => {
                let mut to = ToVisitor { v, top: None, depth: 0 };
                let _ = plan.decode(&l.schema, &l.min, &self.header, &mut to);
            }
            None => {
                v.begin_struct(None);
                v.end_struct();
            }
        }
    }

    /// Byte offset of the next record.
    pub fn position(&self) -> u64 {
        self.buf.position()
    }

    /// Nanoseconds per tick of the record header's timestamp, from its unit (1 without one).
    pub fn ns_per_tick(&self) -> u64 {
        timestamp_scale(self.schema())
    }

    fn layout(&self) -> &Layout {
        &self.format.layouts[self.layout]
    }

    /// The next record; `None` at the end. After an error that [`SchemaError::is_recoverable`]
    /// (a payload that did not decode), reading goes on with the next record.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, SchemaError>> {
        if self.done {
            return None;
        }
        let layout = &self.format.layouts[self.layout];
        let (offset, index) = (self.buf.position(), self.index);
        // One byte past a trailer, to tell the input's last bytes from a record's first.
        let (trailer, trailer_name) = &layout.frame.trailer;
        let mut want = layout.frame.size.max(trailer.len() + 1);
        let (total, tag) = loop {
            if let Err(e) = self.buf.fill(want) {
                self.done = true;
                return Some(Err(SchemaError::new(layout, ErrorKind::Io(e), offset, Some(index), None)));
            }
            // The end: nothing left, or (with a trailer) no more than the trailer's bytes.
            if self.buf.available() <= trailer.len() && self.buf.is_eof() {
                self.done = true;
                let found = self.buf.bytes().to_vec();
                let kind = match End::of(trailer, &found) {
                    End::Clean => {
                        // Read: the trailer's bytes count among the bytes read.
                        self.buf.take(found.len());
                        return None;
                    }
                    End::Short => ErrorKind::Truncated {
                        what: "file trailer",
                        needed: trailer.len() as u64,
                        available: found.len() as u64,
                    },
                    End::Wrong => ErrorKind::Trailer { name: trailer_name.clone(), expected: trailer.clone(), found },
                };
                return Some(Err(SchemaError::new(layout, kind, offset, Some(index), None)));
            }
            match layout.frame(self.buf.bytes()) {
                Framed::Whole { total, tag, .. } => break (total, tag),
                Framed::Short { needed, tag, .. } if !self.buf.is_eof() => {
                    // Read more, but never more than the bytes that arrive justify (`fill` grows
                    // its buffer only as they do).
                    let h = layout.frame.size;
                    want = match usize::try_from(needed).ok().and_then(|n| n.checked_add(h)) {
                        Some(n) if tag.is_some() => n,
                        _ if tag.is_some() => usize::MAX,
                        _ => h,
                    };
                }
                Framed::Short { what, needed, available, tag } => {
                    let kind = ErrorKind::Truncated { what, needed, available };
                    if layout.frame.resyncs() && tag.is_some() {
                        let why = format!("the length field says {needed} payload bytes, only {available} follow");
                        return Some(Err(resume(
                            At { buf: &mut self.buf, index: &mut self.index, done: &mut self.done },
                            layout,
                            why,
                            None,
                            Some(kind),
                            tag,
                        )));
                    }
                    self.done = true;
                    return Some(Err(SchemaError::new(layout, kind, offset, Some(index), tag)));
                }
                Framed::Bad(fault) => {
                    let name = &layout.schema.strukt(layout.schema.framing.as_ref().expect("framed").header).name;
                    let field = field_path(name, &fault.path);
                    if layout.frame.resyncs() {
                        let why = format!("bad record header: {}", fault.message);
                        return Some(Err(resume(
                            At { buf: &mut self.buf, index: &mut self.index, done: &mut self.done },
                            layout,
                            why,
                            field,
                            None,
                            None,
                        )));
                    }
                    self.done = true;
                    let kind = ErrorKind::BadRecordHeader { field, fault };
                    return Some(Err(SchemaError::new(layout, kind, offset, Some(index), None)));
                }
            }
        };
        let h = layout.frame.size;
        if let Some(c) = &layout.frame.checksum {
            let b = &self.buf.bytes()[..total];
            if let Err((stored, computed)) = c.verify(&b[..h], &b[h..]) {
                let field = layout.checksum_field();
                let why = format!(
                    "checksum mismatch: `{}` holds {stored:#x}, the record's bytes give {computed:#x}",
                    field.as_deref().unwrap_or("")
                );
                return Some(Err(resume(
                    At { buf: &mut self.buf, index: &mut self.index, done: &mut self.done },
                    layout,
                    why,
                    field,
                    None,
                    Some(tag),
                )));
            }
        }
        self.index += 1;
        let bytes = self.buf.take(total);
        let (hb, payload) = bytes.split_at(h);
        let header =
            RecordHeader { tag, len: (total - h) as u64, timestamp: layout.frame.timestamp.map(|t| t.read(hb)) };
        let value = match layout.record(tag) {
            None => None,
            Some(record) => {
                if let Err(fault) = record.check(layout, payload) {
                    let kind = ErrorKind::Decode {
                        field: field_path(&record.name, &fault.path),
                        fault,
                        base: offset + h as u64,
                    };
                    return Some(Err(SchemaError::new(layout, kind, offset, Some(index), Some(tag))));
                }
                Some(RecordValue { layout, record, payload })
            }
        };
        Some(Ok(Record { offset, index, header, payload, value }))
    }
}

/// The reading state [`resume`] moves on.
struct At<'s, I> {
    buf: &'s mut I,
    index: &'s mut u64,
    done: &'s mut bool,
}

/// After a record that does not check out (`why`), passes over the bytes up to the next good
/// record ([`resync`], as the runtime's reader does), reading on until one is found or the input
/// ends, and reports them. A record cut by the end with nothing good after it stays a truncation
/// (`truncated`). The buffer holds at most a candidate record and 64 KiB.
#[cold]
fn resume<I: Input>(
    at: At<'_, I>,
    layout: &Layout,
    why: String,
    field: Option<String>,
    truncated: Option<ErrorKind>,
    tag: Option<u64>,
) -> SchemaError {
    let At { buf, index, done } = at;
    let (offset, i) = (buf.position(), *index);
    *index += 1;
    let mut from = 1;
    loop {
        let eof = buf.is_eof();
        let shifts = layout.frame.checksum.map(|c| layout.frame.shifts.get_or_init(|| CrcShifts::new(c.crc)));
        let mut spans = shifts.map(|s| SpanCrc::new(s, buf.bytes(), from));
        match resync(buf.bytes(), from, &layout.frame.sync, |b, at| layout.checks_out(b, at, eof, &mut spans)) {
            Resync::Found(k) => {
                buf.take(k);
                break;
            }
            Resync::More(k) if !eof => {
                buf.take(k);
                from = 0;
                if let Err(e) = buf.fill(buf.available().saturating_add(1 << 16)) {
                    *done = true;
                    return SchemaError::new(layout, ErrorKind::Io(e), offset, Some(i), tag);
                }
            }
            Resync::More(_) => {
                *done = true;
                if let Some(kind) = truncated {
                    return SchemaError::new(layout, kind, offset, Some(i), tag);
                }
                let n = buf.available();
                buf.take(n);
                break;
            }
        }
    }
    let skipped = buf.position() - offset;
    SchemaError::new(layout, ErrorKind::Corrupt { why, field, skipped }, offset, Some(i), tag)
}

/// Nanoseconds per tick of a schema's record timestamp, from the timestamp field's unit
/// (`us` is 1000); 1 for a schema without one.
pub fn timestamp_scale(schema: &Schema) -> u64 {
    let unit = schema.framing.as_ref().and_then(|f| {
        let h = schema.strukt(f.header);
        f.timestamp.and_then(|i| h.fields[i].unit.as_deref())
    });
    match unit {
        Some("ns") => 1,
        Some("us" | "µs") => 1_000,
        Some("ms") => 1_000_000,
        Some("s") => 1_000_000_000,
        _ => 1,
    }
}

fn field_path(ty: &str, path: &[String]) -> Option<String> {
    let mut s = ty.to_string();
    for p in path {
        if !p.starts_with('[') {
            s.push('.');
        }
        s.push_str(p);
    }
    Some(s)
}

/// Why a log of a [`SchemaFormat`] did not read: where (byte offset, record index and tag) and
/// what.
#[derive(Debug)]
pub struct SchemaError {
    pub kind: ErrorKind,
    /// Absolute byte offset of the header or record at fault.
    pub offset: u64,
    /// The record's index, `None` for the file header.
    pub record_index: Option<u64>,
    pub tag: Option<u64>,
    /// The record type's name, when its tag is known.
    pub record: Option<String>,
    format: String,
}

/// What went wrong in a [`SchemaError`].
#[derive(Debug)]
pub enum ErrorKind {
    Io(io::Error),
    Truncated {
        what: &'static str,
        needed: u64,
        available: u64,
    },
    /// A payload (or the file header, `base` 0) did not decode; `base` is the absolute offset of
    /// the decoded bytes.
    Decode {
        fault: dynamic::Fault,
        field: Option<String>,
        base: u64,
    },
    BadRecordHeader {
        fault: dynamic::Fault,
        field: Option<String>,
    },
    UnknownSchemaId {
        found: u64,
        known: Vec<u64>,
    },
    /// The input's last bytes are not the file trailer (`[framing] trailer`) they should be.
    Trailer {
        name: String,
        expected: Vec<u8>,
        found: Vec<u8>,
    },
    /// A record that did not check out (`why`: a checksum mismatch, a bad header, a length past
    /// the end), and the bytes passed over to the next good record (or the end).
    Corrupt {
        why: String,
        field: Option<String>,
        skipped: u64,
    },
}

impl SchemaError {
    fn new(layout: &Layout, kind: ErrorKind, offset: u64, record_index: Option<u64>, tag: Option<u64>) -> SchemaError {
        let record = tag.and_then(|t| layout.record(t)).map(|r| r.name.clone());
        SchemaError { kind, offset, record_index, tag, record, format: layout.schema.format.name.clone() }
    }

    /// Whether reading can go on after this error (a payload that did not decode, or a
    /// corrupted region passed over).
    pub fn is_recoverable(&self) -> bool {
        matches!(self.kind, ErrorKind::Decode { .. } | ErrorKind::Corrupt { .. }) && self.record_index.is_some()
    }

    /// The field at fault (`REC_NAV_SOLUTION.x`), where one is.
    pub fn field(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Decode { field, .. }
            | ErrorKind::BadRecordHeader { field, .. }
            | ErrorKind::Corrupt { field, .. } => field.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at byte {}", self.format, self.offset)?;
        match (self.record_index, &self.record, self.tag) {
            (Some(i), Some(name), _) => write!(f, " (record #{i}, {name})")?,
            (Some(i), None, Some(t)) => write!(f, " (record #{i}, type {t})")?,
            (Some(i), None, None) => write!(f, " (record #{i})")?,
            (None, ..) => write!(f, " (file header)")?,
        }
        f.write_str(": ")?;
        match &self.kind {
            ErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            ErrorKind::Truncated { what, needed, available } => {
                write!(f, "file truncated inside the {what}: needed {needed} bytes, only {available} left")
            }
            // As the generated decoders say it: `Type.field: what (at byte N)`.
            ErrorKind::Decode { fault, field, base } => {
                let at = base + fault.offset as u64;
                match field {
                    Some(field) => write!(f, "{field}: {} (at byte {at})", fault.message),
                    None => write!(f, "{} (at byte {at})", fault.message),
                }
            }
            ErrorKind::BadRecordHeader { fault, field } => {
                let at = self.offset + fault.offset as u64;
                match field {
                    Some(field) => write!(f, "{field}: {} (at byte {at})", fault.message),
                    None => write!(f, "{} (at byte {at})", fault.message),
                }
            }
            ErrorKind::Corrupt { why, skipped, .. } => {
                write!(f, "{why}; {skipped} bytes passed over to ")?;
                match self.offset.checked_add(*skipped) {
                    Some(at) => write!(f, "the next good record at byte {at}"),
                    None => f.write_str("the end"),
                }
            }
            ErrorKind::Trailer { name, expected, found } => {
                let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<Vec<_>>().join(" ");
                write!(f, "the file trailer `{name}` should be {}, found {}", hex(expected), hex(found))
            }
            ErrorKind::UnknownSchemaId { found, known } => {
                let known: Vec<String> = known.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "the file's schema id is {found}, but the schema and its lock know only {}; refusing to guess the layout",
                    known.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for SchemaError {}

impl super::fault::Locate for SchemaError {
    fn offset(&self) -> Option<u64> {
        Some(self.offset)
    }
    fn record(&self) -> Option<u64> {
        self.record_index
    }
    fn field(&self) -> Option<String> {
        SchemaError::field(self).map(str::to_string)
    }
}

/// A plan's parts handed to a runtime [`Visitor`] as the generated `Visit` impls hand them:
/// numbers by their type, fixed strings up to their first NUL (text, or bytes when not UTF-8),
/// padding left out. `top` names the value itself (the plan's root struct has no name).
struct ToVisitor<'v, 'n, V: Visitor + ?Sized> {
    v: &'v mut V,
    top: Option<&'n str>,
    depth: usize,
}

impl<V: Visitor + ?Sized> Sink for ToVisitor<'_, '_, V> {
    fn begin_struct(&mut self, name: Option<&str>) {
        let name = if self.depth == 0 { self.top } else { name };
        self.depth += 1;
        self.v.begin_struct(name);
    }
    fn end_struct(&mut self) {
        self.depth -= 1;
        self.v.end_struct();
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        self.depth += 1;
        self.v.begin_array(name, len);
    }
    fn end_array(&mut self) {
        self.depth -= 1;
        self.v.end_array();
    }
    fn number(&mut self, name: Option<&str>, p: Prim, raw: u64) {
        match p {
            Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => self.v.uint(name, raw),
            Prim::I8 => self.v.int(name, i64::from(raw as u8 as i8)),
            Prim::I16 => self.v.int(name, i64::from(raw as u16 as i16)),
            Prim::I32 => self.v.int(name, i64::from(raw as u32 as i32)),
            Prim::I64 => self.v.int(name, raw as i64),
            Prim::F32 => self.v.f32(name, f32::from_bits(raw as u32)),
            Prim::F64 => self.v.f64(name, f64::from_bits(raw)),
        }
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.v.bool(name, v);
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.v.str(name, v);
    }
    fn raw_str(&mut self, name: Option<&str>, v: &[u8]) {
        self.v.bytes(name, v);
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.v.bytes(name, v);
    }
    fn fixed_str(&mut self, name: Option<&str>, v: &[u8]) {
        let end = v.iter().position(|b| *b == 0).unwrap_or(v.len());
        match std::str::from_utf8(&v[..end]) {
            Ok(s) => self.v.str(name, s),
            Err(_) => self.v.bytes(name, &v[..end]),
        }
    }
    fn padding(&mut self, _: Option<&str>) {}
    fn constant(&mut self, name: Option<&str>, value: &ConstValue) {
        match value {
            ConstValue::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => self.v.str(name, s),
                Err(_) => self.v.bytes(name, b),
            },
            ConstValue::Int(i) if *i < 0 => self.v.int(name, *i as i64),
            ConstValue::Int(i) => self.v.uint(name, *i as u64),
        }
    }
}

#[cfg(test)]
mod tests;
