//! `logspec dump` and `logspec info` for CARLA recorder logs, over either reader ([`Packets`]),
//! and their samples (`samples`: [`scan`], whole or a range of chunks of the time index).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::ops::{ControlFlow, Range};

use super::info::Form;
use crate::formats::carla::{
    attribute_type_byte_ref, packet_name, ActorType, BodyRef, CarlaError, CarlaErrorKind, CarlaRecordRef, EventAddRef,
    EventDelRef, FrameStart, FrameState, InfoHeader, PacketRef, Reader, SliceReader,
};
use crate::json::JsonWriter;
use crate::runtime::{Visit, Visitor};
use crate::value::{FlattenVariants, ValueSink};

use super::fault::{kind, Fault};
use super::filter::Select;
use super::index;
use super::input::Source;
use super::records::Records;
use super::Error;

mod samples;
pub(super) use samples::scan;

/// A CARLA reader of either kind: [`SliceReader`] over a mapped file, [`Reader`] over a stream.
trait Packets {
    fn header(&self) -> &InfoHeader;
    /// The header's length in bytes.
    fn header_len(&self) -> u64;
    /// Byte offset of the next packet.
    fn position(&self) -> u64;
    /// Each packet that starts before byte `end`, with the frame state after it, handed to `f`
    /// in turn (a reading error last) until `f` breaks, whose value it returns.
    fn each_in_frame<B>(
        &mut self,
        end: u64,
        f: impl FnMut(Result<(&PacketRef<'_>, &FrameState), CarlaError>) -> ControlFlow<B>,
    ) -> Option<B>;
    /// Moves to `range`'s start, after the header, with the reader's state there
    /// ([`index::start_at`]): a mapped reader reads the state messages `states` (the
    /// PhysicsControl packets where the wheel layout changed) and seeks to the start; a stream
    /// reads every packet up to it. Whether it moved (a range at the first packet needs nothing).
    fn start_at(&mut self, path: &str, range: index::Range, states: &[u64]) -> Result<bool, Fault>;
}

/// What a state message of a CARLA recording should be, in the faults.
const WHEELS: &str = "not a PhysicsControl packet that sets the wheel layout";

impl<R: Read> Packets for Reader<R> {
    fn header(&self) -> &InfoHeader {
        Reader::header(self)
    }
    fn header_len(&self) -> u64 {
        Reader::header_len(self)
    }
    fn position(&self) -> u64 {
        Reader::position(self)
    }
    fn each_in_frame<B>(
        &mut self,
        end: u64,
        mut f: impl FnMut(Result<(&PacketRef<'_>, &FrameState), CarlaError>) -> ControlFlow<B>,
    ) -> Option<B> {
        while Reader::position(self) < end {
            let flow = match self.next_packet_in_frame()? {
                Ok((p, state)) => f(Ok((&p, state))),
                Err(e) => f(Err(e)),
            };
            if let ControlFlow::Break(b) = flow {
                return Some(b);
            }
        }
        None
    }
    fn start_at(&mut self, path: &str, range: index::Range, _: &[u64]) -> Result<bool, Fault> {
        // Every packet is decoded on the way, as in a whole read: the wheel layout and the
        // frame count are the reader's own, so the state messages are not read apart (nor
        // checked: a stream gives the same rows whatever they are).
        if !index::start_at(self, range, &[], path, WHEELS)? {
            return Ok(false);
        }
        let frames = self.frame().index.map_or(0, |i| i + 1);
        if frames != range.first_record {
            let m = format!("{frames} frames start before it, not the {} the index says", range.first_record);
            return Err(index::wrong(path, range.start, &m));
        }
        Ok(true)
    }
}

/// A stream: it cannot seek, and reads every packet up to a chunk's start.
impl<R: Read> index::Restart for Reader<R> {
    const MESSAGE: &'static str = "packet";
    fn seek(&mut self, _: u64, _: u64) -> bool {
        false
    }
    fn position(&self) -> u64 {
        Reader::position(self)
    }
    fn next_taking(&mut self, _: Option<u64>, path: &str) -> Option<Result<(u64, bool), Fault>> {
        Some(match self.next_packet_ref()? {
            Ok(p) => Ok((p.offset, false)),
            // The whole read that wrote the index met no fault: one before a chunk is the index's.
            Err(e) => Err(index::wrong(path, e.offset, &e.to_string())),
        })
    }
}

/// A [`SliceReader`] over a mapped file, moving the map's window as it goes.
struct Mapped<'a> {
    reader: SliceReader<'a>,
    header_len: u64,
    map: &'a super::input::Mapped,
}

impl Packets for Mapped<'_> {
    fn header(&self) -> &InfoHeader {
        self.reader.header()
    }
    fn header_len(&self) -> u64 {
        self.header_len
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    fn each_in_frame<B>(
        &mut self,
        end: u64,
        f: impl FnMut(Result<(&PacketRef<'_>, &FrameState), CarlaError>) -> ControlFlow<B>,
    ) -> Option<B> {
        let map = self.map;
        self.reader.each_in_frame(end, |pos| map.advance(pos as usize), f)
    }
    fn start_at(&mut self, path: &str, range: index::Range, states: &[u64]) -> Result<bool, Fault> {
        index::start_at(self, range, states, path, WHEELS)
    }
}

/// A map: the reader goes to each state message, whose wheel layout it takes as it decodes it,
/// then to the chunk's start (its frame count from the index); the map's window stays where the
/// reading is.
impl index::Restart for Mapped<'_> {
    const MESSAGE: &'static str = "packet";
    fn seek(&mut self, offset: u64, index: u64) -> bool {
        self.reader.seek(offset, index);
        true
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    fn next_taking(&mut self, state: Option<u64>, _: &str) -> Option<Result<(u64, bool), Fault>> {
        // What does not read where the index says a state message is, is not one.
        Some(Ok(match self.reader.next()? {
            Ok(p) => {
                let sets = matches!(
                    p.body,
                    BodyRef::Record { record: CarlaRecordRef::PhysicsControl(_), wheel_size: Some(_) }
                );
                (p.offset, sets && state == Some(p.offset))
            }
            Err(e) => (e.offset, false),
        }))
    }
}

/// What runs over a CARLA reader ([`read`]): compiled for each kind of reader, not run over a
/// `dyn Packets`, so that its loop has the reader's calls in it and a packet (96 bytes) is not
/// handed back through a call per packet (`info` of the bench's 200 MB recording 1.3x faster).
trait Job {
    type Output;
    fn run(self, r: &mut impl Packets) -> Self::Output;
}

/// Opens the reader over `input` (its header checked) and runs `job` over it.
fn read<J: Job>(input: Source, path: &str, job: J) -> Result<J::Output, Error> {
    let fail = |e: CarlaError| Error::Input(format!("{path}: {e}"));
    match input {
        Source::Mapped(map) => {
            map.advance(0);
            let reader = SliceReader::new(map.bytes()).map_err(fail)?;
            let header_len = reader.position();
            Ok(job.run(&mut Mapped { reader, header_len, map: &map }))
        }
        Source::Stream(input) => Ok(job.run(&mut Reader::new(input).map_err(fail)?)),
    }
}

/// Parses `--frames A..B` (0-based frame ordinals, B excluded; `A..` and `..B` too).
pub fn parse_frames(s: &str) -> Result<Range<u64>, String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("`{s}` is not a range; write A..B, e.g. 0..3"))?;
    let num = |t: &str, default: u64| -> Result<u64, String> {
        if t.is_empty() {
            Ok(default)
        } else {
            t.parse().map_err(|_| format!("`{t}` in `{s}` is not a frame number (0 is the first frame)"))
        }
    };
    Ok(num(a, 0)?..num(b, u64::MAX)?)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (proleptic Gregorian calendar, UTC).
pub fn utc(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = super::info::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// The info header's magic, as the generated code shows it (a const field of the schema, so not
/// a member of the Rust struct).
fn magic(h: &InfoHeader) -> String {
    let crate::value::Value::Object(fields) = crate::value::Value::of(h) else { return String::new() };
    fields
        .into_iter()
        .find_map(|(k, v)| match v {
            crate::value::Value::Str(s) if k == "magic" => Some(s),
            _ => None,
        })
        .unwrap_or_default()
}

/// The info header's facts, as keys of the open object.
fn header_fields(w: &mut (impl ValueSink + ?Sized), h: &InfoHeader, len: u64) {
    w.uint(Some("version"), u64::from(h.version));
    w.str(Some("magic"), &magic(h));
    w.int(Some("date"), h.date);
    w.str(Some("date_utc"), &utc(h.date));
    w.str(Some("map"), &h.map);
    w.uint(Some("header_bytes"), len);
}

/// The u16 record count of a counted packet (the length of its `records`), if it has one.
fn record_count(r: &CarlaRecordRef<'_>) -> Option<usize> {
    struct Count(usize, Option<usize>);
    impl Visitor for Count {
        fn uint(&mut self, _: Option<&str>, _: u64) {}
        fn int(&mut self, _: Option<&str>, _: i64) {}
        fn f32(&mut self, _: Option<&str>, _: f32) {}
        fn f64(&mut self, _: Option<&str>, _: f64) {}
        fn bool(&mut self, _: Option<&str>, _: bool) {}
        fn str(&mut self, _: Option<&str>, _: &str) {}
        fn bytes(&mut self, _: Option<&str>, _: &[u8]) {}
        fn enumeration(&mut self, _: Option<&str>, _: i128, _: Option<&'static str>) {}
        fn flags(&mut self, _: Option<&str>, _: u64) {}
        fn begin_struct(&mut self, _: Option<&str>) {
            self.0 += 1;
        }
        fn end_struct(&mut self) {
            self.0 -= 1;
        }
        fn begin_array(&mut self, name: Option<&str>, len: usize) {
            if self.0 == 1 && name == Some("records") {
                self.1 = Some(len);
            }
            self.0 += 1;
        }
        fn elements(&self) -> bool {
            false
        }
        fn end_array(&mut self) {
            self.0 -= 1;
        }
        fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
        fn end_variant(&mut self) {}
    }
    let mut c = Count(0, None);
    // Only the top level matters: a shallow visit of the record struct.
    r.visit(None, &mut c);
    c.1
}

/// Writes one packet as a `logspec dump` line (see `*.expected.head.jsonl` in the test data).
fn packet_json(w: &mut (impl ValueSink + ?Sized), p: &PacketRef<'_>, frame: Option<(u64, &FrameStart)>) {
    w.begin_struct(None);
    w.str(Some("kind"), "packet");
    match frame {
        Some((i, fs)) => {
            w.uint(Some("frame"), i);
            w.uint(Some("frame_id"), fs.frame_id);
            w.f64(Some("elapsed"), fs.elapsed);
        }
        None => {
            w.int(Some("frame"), -1);
            w.null(Some("frame_id"));
            w.null(Some("elapsed"));
        }
    }
    w.uint(Some("offset"), p.offset);
    w.uint(Some("id"), u64::from(p.id));
    match p.name() {
        Some(n) => w.str(Some("name"), n),
        None => w.null(Some("name")),
    }
    w.uint(Some("size"), u64::from(p.size));
    match &p.body {
        BodyRef::Record { record, wheel_size } => {
            if let Some(n) = record_count(record) {
                w.uint(Some("count"), n as u64);
            }
            if let Some(ws) = wheel_size {
                w.uint(Some("wheel_size"), u64::from(ws.0));
            }
            record.visit(Some("fields"), &mut FlattenVariants(w));
        }
        BodyRef::Unknown(raw) => {
            w.null(Some("fields"));
            let mut h = String::with_capacity(raw.len() * 2);
            crate::json::hex(&mut h, raw);
            w.str(Some("payload_hex"), &h);
        }
        BodyRef::Mismatch { raw, error, .. } => {
            w.null(Some("fields"));
            w.str(Some("error"), &error.to_string());
            let mut h = String::with_capacity(raw.len() * 2);
            crate::json::hex(&mut h, raw);
            w.str(Some("payload_hex"), &h);
        }
    }
    w.end_struct();
}

/// A finding about one packet, for stderr and `info`.
fn mismatch_text(p: &PacketRef<'_>, consumed: Option<u64>, error: &crate::runtime::DecodeError) -> String {
    let name = p.name().unwrap_or("?");
    let used = consumed.map_or("does not fit in them".to_string(), |c| format!("decodes in {c}"));
    format!(
        "packet {} ({name}) at byte {}: declares {} bytes but its layout {used} ({error}); skipped by size",
        p.id, p.offset, p.size
    )
}

/// JSON Lines: a header line, then one line per packet of the selected frames.
fn dump(
    r: &mut impl Packets,
    out: &mut impl Records,
    path: &str,
    frames: Option<Range<u64>>,
    select: &super::filter::Select,
) -> Result<(), Error> {
    let w = out.writer();
    w.begin_struct(None);
    w.str(Some("kind"), "header");
    header_fields(w, r.header(), r.header_len());
    w.end_struct();
    out.end_record().map_err(Error::Io)?;
    let range = frames.unwrap_or(0..u64::MAX);
    let mut faults = super::fault::Faults::default();
    let (filtering, mut tally) = (super::filter::Tally::needed(select), super::filter::Tally::default());
    // Breaks with the error that ends the dump, or with none past the last frame asked for.
    let stop = r.each_in_frame(u64::MAX, |p| {
        let (p, state) = match p {
            Ok(p) => p,
            Err(e) => return ControlFlow::Break(Some(Error::at(Fault::read(path, &e)))),
        };
        let index = state.index;
        if index.is_some_and(|i| i >= range.end) {
            return ControlFlow::Break(None);
        }
        if let BodyRef::Mismatch { consumed, error, .. } = &p.body {
            let fault = || Fault::at(path, p.offset, None, format!("{path}: {}", mismatch_text(p, *consumed, error)));
            super::records::skip(out, &mut faults, kind::MISFIT_PACKET, fault);
        }
        if index.map_or(range.start > 0, |i| i < range.start) {
            return ControlFlow::Continue(());
        }
        let frame = index.zip(state.start.as_ref());
        let t_ns = super::scan::seconds_to_ns(state.start.as_ref().map_or(0.0, |s| s.elapsed));
        if filtering && !tally.note(select, p.name().unwrap_or(""), Some(t_ns)) {
            return ControlFlow::Continue(());
        }
        packet_json(out.writer(), p, frame);
        match out.end_record() {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(Some(Error::Io(e))),
        }
    });
    if let Some(Some(e)) = stop {
        return Err(e);
    }
    super::records::skipped(out, &faults, path, "packet(s) did not decode in their declared size")?;
    tally.check(select, path).map_err(|m| Error::filter(path, m))?;
    Ok(())
}

#[derive(Default)]
struct IdStats {
    packets: u64,
    records: u64,
    payload_bytes: u64,
}

/// Facts about a CARLA recording, gathered in one pass.
pub struct Summary {
    header: InfoHeader,
    header_len: u64,
    size: u64,
    frames: u64,
    first: Option<FrameStart>,
    last: Option<FrameStart>,
    ids: BTreeMap<u8, IdStats>,
    add_records: u64,
    /// First EventAdd of each distinct actor: type and blueprint.
    actors: BTreeMap<u32, (ActorType, String)>,
    attr_types: BTreeMap<u8, u64>,
    del_records: u64,
    deleted: BTreeSet<u32>,
    wheel_sizes: BTreeMap<u8, u64>,
    mismatches: u64,
    mismatch_examples: Vec<(u64, u8, u32, Option<u64>)>,
    findings: Vec<String>,
    outside: u64,
    open: bool,
    trailing: u64,
    /// A fatal error (truncation, I/O).
    error: Option<String>,
}

/// The ids of the packets whose body is a count of records (a `records` array), from the schema;
/// the others (FrameStart, FrameEnd, PlatformTime, ...) hold one value each.
fn counted_ids() -> BTreeSet<u8> {
    let schema = crate::formats::schemas::carla();
    let counts = |r: &&crate::ir::ir::Record| {
        let body = schema.strukt(r.body);
        body.fields.iter().any(|f| f.name == "records" && matches!(f.ty, crate::ir::ir::Ty::Array { .. }))
    };
    schema.records.iter().filter(counts).filter_map(|r| u8::try_from(r.id).ok()).collect()
}

fn summarise(r: &mut impl Packets) -> Summary {
    let mut s = Summary {
        header: r.header().clone(),
        header_len: r.header_len(),
        size: 0,
        frames: 0,
        first: None,
        last: None,
        ids: BTreeMap::new(),
        add_records: 0,
        actors: BTreeMap::new(),
        attr_types: BTreeMap::new(),
        del_records: 0,
        deleted: BTreeSet::new(),
        wheel_sizes: BTreeMap::new(),
        mismatches: 0,
        mismatch_examples: Vec::new(),
        findings: Vec::new(),
        outside: 0,
        open: false,
        trailing: 0,
        error: None,
    };
    // Per packet id, by index while reading; into `ids` at the end.
    let mut dense: Vec<IdStats> = (0..256).map(|_| IdStats::default()).collect();
    // Inlined into the reader's loop: called as a function once per packet, its saved
    // registers and the packet's result read back through memory were a tenth of the work.
    r.each_in_frame(u64::MAX, #[inline(always)] |p| {
        let (p, state) = match p {
            Ok(p) => p,
            Err(CarlaError { kind: CarlaErrorKind::Truncated { available, .. }, offset }) => {
                s.trailing = available;
                s.error = Some(format!(
                    "the file ends inside the packet at byte {offset}: {available} trailing bytes (every complete packet before it was read)"
                ));
                return ControlFlow::Break(());
            }
            Err(e) => {
                s.error = Some(e.to_string());
                return ControlFlow::Break(());
            }
        };
        let st = &mut dense[usize::from(p.id)];
        st.packets += 1;
        st.payload_bytes += u64::from(p.size);
        let was_open = s.open;
        match &p.body {
            BodyRef::Record { record, wheel_size } => {
                st.records += record_count(record).unwrap_or(0) as u64;
                if let Some(ws) = wheel_size {
                    *s.wheel_sizes.entry(ws.0).or_default() += 1;
                }
                s.record(record);
            }
            BodyRef::Unknown(_) => {}
            BodyRef::Mismatch { consumed, error, .. } => {
                s.mismatches += 1;
                if s.mismatch_examples.len() < 5 {
                    s.mismatch_examples.push((p.offset, p.id, p.size, *consumed));
                }
                if s.mismatches <= super::fault::SHOWN_PER_KIND {
                    s.findings.push(mismatch_text(p, *consumed, error));
                }
            }
        }
        if !was_open && p.id != 0 {
            s.outside += 1;
        }
        s.open = state.open;
        ControlFlow::Continue(())
    });
    s.size = r.position() + s.trailing;
    s.ids = dense.into_iter().enumerate().filter(|(_, st)| st.packets > 0).map(|(id, st)| (id as u8, st)).collect();
    s
}

impl Summary {
    /// Inlined into the reader's loop, where most packets (Position, State and the rest) take
    /// the empty arm: they add nothing beyond their counts. The events' loops are out of line.
    #[inline(always)]
    fn record(&mut self, record: &CarlaRecordRef<'_>) {
        match record {
            CarlaRecordRef::FrameStart(fs) => {
                let fs = fs.to_owned();
                self.frames += 1;
                self.first.get_or_insert(fs);
                self.last = Some(fs);
            }
            CarlaRecordRef::EventAdd(add) => self.actors_added(add),
            CarlaRecordRef::EventDel(del) => self.actors_deleted(del),
            _ => {}
        }
    }

    fn actors_added(&mut self, add: &EventAddRef<'_>) {
        for a in add.records {
            self.add_records += 1;
            self.actors.entry(a.db_id).or_insert_with(|| (a.r#type, a.desc_id.to_string()));
            for at in a.attributes {
                *self.attr_types.entry(attribute_type_byte_ref(&at.r#type)).or_default() += 1;
            }
        }
    }

    fn actors_deleted(&mut self, del: &EventDelRef<'_>) {
        for d in del.records {
            self.del_records += 1;
            self.deleted.insert(d.db_id);
        }
    }

    fn unknown_ids(&self) -> Vec<u8> {
        self.ids.keys().copied().filter(|id| packet_name(*id).is_none()).collect()
    }

    fn histograms(&self) -> (BTreeMap<u8, u64>, BTreeMap<&str, u64>) {
        let mut by_type = BTreeMap::new();
        let mut by_desc = BTreeMap::new();
        for (t, desc) in self.actors.values() {
            *by_type.entry(t.0).or_default() += 1;
            *by_desc.entry(desc.as_str()).or_default() += 1;
        }
        (by_type, by_desc)
    }

    fn wheel_size(&self) -> Option<String> {
        match self.wheel_sizes.len() {
            0 => None,
            1 => self.wheel_sizes.keys().next().map(u8::to_string),
            _ => Some("mixed".to_string()),
        }
    }

    /// Whether anything is wrong: a fatal error or a packet that did not decode in its size.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.mismatches == 0
    }
}

fn type_name(t: u8) -> String {
    ActorType(t).name().map_or_else(|| t.to_string(), str::to_string)
}

fn frame_json(w: &mut JsonWriter, name: &str, f: Option<&FrameStart>) {
    match f {
        Some(f) => f.visit(Some(name), w),
        None => w.null(Some(name)),
    }
}

/// The summary as `info --json` prints it (docs/output.md).
pub fn json(s: &Summary, file: &str) -> String {
    // Only the JSON shows which packets count records (text shows 0), so only it reads the schema.
    let counted = counted_ids();
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), file);
    w.str(Some("format"), "carla");
    w.bool(Some("ok"), s.ok());
    match &s.error {
        Some(e) => w.str(Some("error"), e),
        None => w.null(Some("error")),
    }
    w.uint(Some("size"), s.size);
    w.begin_object(Some("header"));
    header_fields(&mut w, &s.header, s.header_len);
    w.end_object();
    w.uint(Some("frames"), s.frames);
    frame_json(&mut w, "first_frame", s.first.as_ref());
    frame_json(&mut w, "last_frame", s.last.as_ref());
    match &s.last {
        Some(l) => w.f64(Some("duration"), l.elapsed),
        None => w.null(Some("duration")),
    }
    w.uint(Some("packets_total"), s.ids.values().map(|i| i.packets).sum());
    w.begin_object(Some("packets"));
    for (id, st) in &s.ids {
        w.begin_object(Some(&id.to_string()));
        let name = packet_name(*id);
        match name {
            Some(n) => w.str(Some("name"), n),
            None => w.null(Some("name")),
        }
        w.uint(Some("packets"), st.packets);
        // Packets without a record count (FrameStart, FrameEnd, PlatformTime, ...) show null.
        if name.is_some() && counted.contains(id) {
            w.uint(Some("records"), st.records);
        } else {
            w.null(Some("records"));
        }
        w.uint(Some("payload_bytes"), st.payload_bytes);
        w.end_object();
    }
    w.end_object();
    let (by_type, by_desc) = s.histograms();
    w.begin_object(Some("actors"));
    w.uint(Some("add_records"), s.add_records);
    w.uint(Some("distinct_ids"), s.actors.len() as u64);
    w.begin_object(Some("by_type"));
    for (t, n) in &by_type {
        w.uint(Some(&t.to_string()), *n);
    }
    w.end_object();
    w.begin_object(Some("by_type_name"));
    for (t, n) in &by_type {
        w.uint(Some(&type_name(*t)), *n);
    }
    w.end_object();
    w.begin_object(Some("by_desc_id"));
    for (d, n) in &by_desc {
        w.uint(Some(d), *n);
    }
    w.end_object();
    w.begin_object(Some("attribute_type_bytes"));
    for (t, n) in &s.attr_types {
        w.uint(Some(&t.to_string()), *n);
    }
    w.end_object();
    w.uint(Some("del_records"), s.del_records);
    w.uint(Some("deleted_distinct_ids"), s.deleted.len() as u64);
    w.end_object();
    match s.wheel_size() {
        Some(m) if m == "mixed" => w.str(Some("physics_wheel_size"), &m),
        Some(n) => w.raw(Some("physics_wheel_size"), &n),
        None => w.null(Some("physics_wheel_size")),
    }
    w.begin_object(Some("physics_wheel_size_packets"));
    for (ws, n) in &s.wheel_sizes {
        w.uint(Some(&ws.to_string()), *n);
    }
    w.end_object();
    w.uint(Some("size_mismatches"), s.mismatches);
    w.begin_array(Some("mismatch_examples"), s.mismatch_examples.len());
    for (offset, id, declared, consumed) in &s.mismatch_examples {
        w.begin_object(None);
        w.uint(Some("offset"), *offset);
        w.uint(Some("id"), u64::from(*id));
        w.uint(Some("declared"), u64::from(*declared));
        match consumed {
            Some(c) => w.uint(Some("consumed"), *c),
            None => w.null(Some("consumed")),
        }
        w.end_object();
    }
    w.end_array();
    let unknown = s.unknown_ids();
    w.begin_array(Some("unknown_packet_ids"), unknown.len());
    for id in unknown {
        w.uint(None, u64::from(id));
    }
    w.end_array();
    w.uint(Some("packets_outside_frames"), s.outside);
    w.bool(Some("ends_inside_frame"), s.open);
    w.uint(Some("trailing_bytes"), s.trailing);
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}

pub fn text(s: &Summary, path: &str) -> String {
    let mut t = String::new();
    let h = &s.header;
    t.push_str(&format!("file:        {path} ({} bytes)\n", s.size));
    t.push_str(&format!("format:      CARLA recorder, version {} (header {} bytes)\n", h.version, s.header_len));
    t.push_str(&format!("map:         {}\ndate:        {} ({})\n", h.map, utc(h.date), h.date));
    t.push_str(&format!("frames:      {}", s.frames));
    if let (Some(a), Some(b)) = (&s.first, &s.last) {
        t.push_str(&format!(" (ids {} .. {})", a.frame_id, b.frame_id));
    }
    t.push('\n');
    if let (Some(a), Some(b)) = (&s.first, &s.last) {
        // The frames' `elapsed` times, in seconds, as every format's `time:` line.
        t.push_str(&format!("time:        {:.3} .. {:.3} s ({:.3} s)\n", a.elapsed, b.elapsed, b.elapsed - a.elapsed));
    }
    t.push_str(&format!("packets:     {}\n", s.ids.values().map(|i| i.packets).sum::<u64>()));
    t.push_str("  id  name                  packets    records      bytes\n");
    for (id, st) in &s.ids {
        let name = packet_name(*id).unwrap_or("(unknown)");
        t.push_str(&format!("  {id:>2}  {name:<20} {:>8} {:>10} {:>10}\n", st.packets, st.records, st.payload_bytes));
    }
    let (by_type, by_desc) = s.histograms();
    t.push_str(&format!(
        "actors:      {} distinct ({} spawn records, {} deleted)\n",
        s.actors.len(),
        s.add_records,
        s.deleted.len()
    ));
    for (ty, n) in &by_type {
        t.push_str(&format!("  type {:<21} {n}\n", type_name(*ty)));
    }
    for (d, n) in &by_desc {
        t.push_str(&format!("  {d:<26} {n}\n"));
    }
    if let Some(ws) = s.wheel_size() {
        t.push_str(&format!("physics:     {ws}-byte PhysicsControl wheels\n"));
    }
    let unknown = s.unknown_ids();
    if !unknown.is_empty() {
        t.push_str(&format!("unknown packet ids (skipped by size): {unknown:?}\n"));
    }
    if s.outside > 0 {
        t.push_str(&format!("integrity:   {} packets outside frames\n", s.outside));
    }
    if s.open {
        t.push_str("integrity:   the file ends inside a frame (no FrameEnd)\n");
    }
    if s.mismatches > 0 {
        let first = s.findings.len();
        t.push_str(&format!(
            "integrity:   damaged: {} {} (the first {first} below)\n",
            s.mismatches,
            kind::MISFIT_PACKET
        ));
    }
    for f in &s.findings {
        t.push_str(&format!("integrity:   {f}\n"));
    }
    if let Some(e) = &s.error {
        t.push_str(&format!("integrity:   {e}\n"));
    }
    if s.ok() && unknown.is_empty() && s.outside == 0 && !s.open {
        t.push_str("integrity:   ok\n");
    }
    t
}

/// The records of a CARLA recording as the dump writes them (`frames`: only the packets of
/// those frames).
pub(super) fn records<R: Records>(
    input: Source,
    path: &str,
    frames: Option<Range<u64>>,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    struct Dump<'a, R> {
        out: &'a mut R,
        path: &'a str,
        frames: Option<Range<u64>>,
        select: &'a Select,
    }
    impl<R: Records> Job for Dump<'_, R> {
        type Output = Result<(), Error>;
        fn run(self, r: &mut impl Packets) -> Self::Output {
            dump(r, self.out, self.path, self.frames, self.select)
        }
    }
    read(input, path, Dump { out, path, frames, select })?
}

/// The summary of a CARLA recording.
pub(super) fn info(input: Source, path: &str, name: &str) -> Result<super::Info, Error> {
    struct Summarise;
    impl Job for Summarise {
        type Output = Summary;
        fn run(self, r: &mut impl Packets) -> Summary {
            summarise(r)
        }
    }
    let s = read(input, path, Summarise)?;
    let (path, name) = (path.to_string(), name.to_string());
    Ok(super::Info::new(s.ok(), move |form| match form {
        Form::Text => text(&s, &path),
        Form::Json => json(&s, &name),
    }))
}
