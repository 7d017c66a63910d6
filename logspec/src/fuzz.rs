//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`), here so that the committed
//! regression corpus (`fuzz/corpus/<target>/`) is replayed by an ordinary `cargo test`
//! (`tests/bounded.rs`) through exactly the code the fuzzer ran.
//!
//! Each function takes arbitrary bytes, must never panic, and must never allocate more than the
//! input can justify; decoders are driven the way the CLI drives them. Not a stable API.

use std::collections::BTreeMap;
use std::io::Cursor;

use logspec_runtime::{with_file_format, Event, FramedFormat, Reader, WithFormat};

use crate::formats::rlog::net::FrameReader;
use crate::formats::rlog::{Reader as RlogReader, ReaderOptions};
use crate::formats::rosbag::{Bag, BagError, Decoders, Order};
use crate::formats::{carla, usvlog};
use crate::json::JsonWriter;

/// Every target, by the name of its `fuzz/fuzz_targets/<name>.rs` and corpus folder.
#[allow(clippy::type_complexity)] // a name and a function; an alias would hide no more than it shows
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("usvlog", usvlog),
    ("rlog", rlog),
    ("rlog_stream", rlog_stream),
    ("carla", carla),
    ("rosbag", rosbag),
    #[cfg(feature = "codegen")]
    ("schema", schema),
    ("msg", msg),
    ("wpilog", wpilog),
    ("wpistruct", wpistruct),
    ("framed", framed),
    ("ulog", ulog),
    ("ulog_format", ulog_format),
    ("dataflash", dataflash),
    ("dataflash_format", dataflash_format),
    ("ros2msg", ros2msg),
    ("mcap", mcap),
];

/// Records of a framed format, each written as JSON as `dump` does.
struct Drain<'a>(&'a [u8]);

impl WithFormat for Drain<'_> {
    type Output = ();
    fn call<F: FramedFormat>(self) {
        let Ok(mut r) = Reader::<_, F>::new(self.0) else { return };
        let mut w = JsonWriter::new();
        while let Some(ev) = r.next_event() {
            match ev {
                Ok(ev) => {
                    if let Event::Record { .. } = ev {
                        crate::json::framed_event::<F>(&mut w, &ev);
                        w.take();
                    }
                }
                Err(e) if e.is_recoverable() => {}
                Err(_) => break,
            }
        }
    }
}

/// USVLOG: the header's schema id picks the layout (current or locked history), then every
/// record is decoded and written as JSON.
pub fn usvlog(data: &[u8]) {
    let _ = with_file_format::<usvlog::Usvlog, _>(data, Drain(data));
}

/// RLOG files: every event through the owned path, then through the borrowed path and the lending
/// loop (which must agree with it), then by cycles; with and without an assumed revision.
pub fn rlog(data: &[u8]) {
    for opts in [ReaderOptions::default(), ReaderOptions { assume_revision: Some(crate::formats::rlog::Revision::R1) }]
    {
        let owned = rlog_events(data, opts, false);
        let borrowed = rlog_events(data, opts, true);
        assert_eq!(owned, borrowed, "next_event and next_event_ref disagree");
        assert_eq!(owned, rlog_events_each(data, opts), "next_event and for_each_event_ref disagree");
        if let Ok(mut r) = RlogReader::with_options(data, opts) {
            while let Some(c) = r.next_cycle() {
                if c.is_err() {
                    break;
                }
            }
        }
    }
}

/// As [`rlog_events`], through the lending loop `for_each_event_ref`.
fn rlog_events_each(data: &[u8], opts: ReaderOptions) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(mut r) = RlogReader::with_options(data, opts) else { return out };
    loop {
        match r.for_each_event_ref(|e| out.push(format!("{:?}", e.to_event()))) {
            Ok(()) => break,
            Err(e) => {
                out.push(format!("error at {}: {e}", e.offset));
                if !e.is_recoverable() {
                    break;
                }
            }
        }
    }
    out
}

/// The events of an RLOG input as text (values by their debug form), up to the first fatal error.
fn rlog_events(data: &[u8], opts: ReaderOptions, by_ref: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(mut r) = RlogReader::with_options(data, opts) else { return out };
    loop {
        let ev = if by_ref {
            match r.next_event_ref() {
                None => break,
                Some(e) => e.map(|e| e.to_event()),
            }
        } else {
            match r.next_event() {
                None => break,
                Some(e) => e,
            }
        };
        match ev {
            Ok(e) => out.push(format!("{e:?}")),
            Err(e) => {
                out.push(format!("error at {}: {e}", e.offset));
                if !e.is_recoverable() {
                    break;
                }
            }
        }
    }
    out
}

/// The RLOG live stream: length-prefixed frames, the messages inside them decoded.
pub fn rlog_stream(data: &[u8]) {
    let Ok(mut r) = RlogReader::new(FrameReader::new(data)) else { return };
    while let Some(ev) = r.next_event() {
        if ev.is_err_and(|e| !e.is_recoverable()) {
            break;
        }
    }
}

/// CARLA recordings: every frame, every packet decoded; and every packet viewed in place by the
/// slice reader, read through every field.
pub fn carla(data: &[u8]) {
    if let Ok(r) = carla::SliceReader::new(data) {
        for p in r {
            match p {
                Ok(p) => {
                    let _ = p.to_owned();
                }
                Err(_) => break,
            }
        }
    }
    let Ok(mut r) = carla::Reader::new(data) else { return };
    while let Some(f) = r.next_frame() {
        if f.is_err() {
            break;
        }
    }
}

/// ROS bags from memory, in time and file order, every message decoded with its connection's
/// embedded definition and written as JSON, by the owned decode and by the decode plan, which
/// must agree.
pub fn rosbag(data: &[u8]) {
    for order in [Order::Time, Order::File] {
        let Ok(mut bag) = Bag::open(Cursor::new(data)) else { return };
        let decoders = Decoders::new("fuzz", &bag.connections, None);
        let _ = bag.for_each_message(order, None, |m| -> Result<(), BagError> {
            if let Some(d) = decoders.get(m.conn).and_then(|t| t.decoder.as_ref()) {
                owned_and_planned(d, m.data);
            }
            Ok(())
        });
    }
}

/// Decodes `bytes` into JSON through the owned `Value` and through the decode plan; panics when
/// they differ (in the JSON, or in the fault).
fn owned_and_planned(d: &crate::formats::rosbag::MsgDecoder, bytes: &[u8]) {
    let owned = d.decode(bytes).map(|v| {
        let mut w = JsonWriter::new();
        logspec_runtime::Visit::visit(&d.view(&v), None, &mut w);
        w.take()
    });
    let mut w = JsonWriter::new();
    let planned = d.visit(bytes, &mut w).map(|()| w.take());
    assert_eq!(owned, planned, "{}: the decode plan and the owned decode differ", d.name);
    // The plan's check, then the visit of the checked message (what dump and scan use).
    let mut w = JsonWriter::new();
    let checked = d.checked(bytes).map(|m| {
        logspec_runtime::Visit::visit(&m, None, &mut w);
        w.take()
    });
    assert_eq!(owned, checked, "{}: the checked decode and the owned decode differ", d.name);
    // Decoded once as it is shown (a scan's `Samples::try_visit`): the same JSON, or a visit
    // that stops with the same fault.
    let mut w = JsonWriter::new();
    let unchecked = d.unchecked(bytes);
    let once = match crate::log::TryVisit::try_visit_dyn(&unchecked, &mut w) {
        true => Ok(w.take()),
        false => Err(unchecked.fault().expect("a visit that stopped keeps its fault")),
    };
    assert_eq!(owned, once, "{}: the decode as shown and the owned decode differ", d.name);
}

/// The TOML schema compiler and every back end of a schema it accepts.
#[cfg(feature = "codegen")]
pub fn schema(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(s) = logspec_codegen::compile_str("fuzz.toml", text) else { return };
    let _ = logspec_codegen::backend::rust::RustBackend::default().source(&s);
    let _ = logspec_codegen::backend::c::header(&s);
    let _ = logspec_codegen::backend::python::module(&s);
    let _ = logspec_codegen::backend::golden::vectors(&s);
    let _ = logspec_codegen::backend::doc::markdown(&s);
}

/// The `.msg` front end: a `message_definition` (the input up to the first NUL byte) of type
/// `fuzz/Msg`, its md5, and the bytes after the NUL decoded as one message of it.
pub fn msg(data: &[u8]) {
    let (def, body) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(def) = std::str::from_utf8(def) else { return };
    let conn = crate::formats::rosbag::Connection {
        id: 0,
        topic: "/fuzz".into(),
        ty: "fuzz/Msg".into(),
        md5sum: String::new(),
        message_definition: def.to_string(),
        callerid: None,
        latching: None,
        offset: 0,
    };
    let decoders = Decoders::new("fuzz", &BTreeMap::from([(0, conn)]), None);
    if let Some(d) = decoders.get(0).and_then(|t| t.decoder.as_ref()) {
        owned_and_planned(d, body);
    }
}

/// WPILOG: every record as `dump` reads it, with `struct:` and `proto:` values decoded through
/// the schemas the log carries.
pub fn wpilog(data: &[u8]) {
    use crate::formats::wpilog::{to_value, Body, Reader};
    use crate::formats::wpistruct::TypeRegistry;
    let Ok(mut r) = Reader::new(data) else { return };
    let mut schemas = TypeRegistry::new();
    while let Some(rec) = r.next_record() {
        let Ok(rec) = rec else { break };
        let Body::Data(Some(entry)) = rec.body else { continue };
        schemas.offer(entry.name(), entry.type_name(), rec.payload);
        schemas.take_warnings();
        if TypeRegistry::decodes(entry.type_name()) {
            let _ = schemas.decode(entry.type_name(), rec.payload);
        }
        let _ = to_value(Some(entry), rec.payload);
    }
}

/// The WPILib struct-schema front end: the input up to the first NUL byte is the schema of
/// `struct:Fuzz`, parsed and lowered; the bytes after it are decoded as one value and as an
/// array of them.
pub fn wpistruct(data: &[u8]) {
    use crate::formats::wpistruct::TypeRegistry;
    let (schema, body) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    if let Ok(text) = std::str::from_utf8(schema) {
        let _ = logspec_ir::wpistruct::parse::parse(text);
    }
    let mut schemas = TypeRegistry::new();
    schemas.offer("/.schema/struct:Fuzz", "structschema", schema);
    let _ = schemas.decode("struct:Fuzz", body);
    let _ = schemas.decode("struct:Fuzz[]", body);
}

/// The schema of the `framed` target: every kind of field the interpreter's framed reader meets
/// in a project's own schema (consts in the file header and in a record, an enum, flags, fixed
/// arrays of numbers and of structs, counted strings, bytes and arrays, a byte-size prefix,
/// big-endian fields, padding, and a payload that runs to the end of the record).
const FRAMED_SCHEMA: &str = r#"
[format]
name = "fz"
endian = "little"
schema_id = { value = 2, name = "FZ_SCHEMA", field = "schema" }

[file_header]
fields = [
  { name = "magic", type = "bytes[2]", const = "FZ" },
  { name = "schema", type = "u16" },
  { pad = 2 },
]

[framing]
tag = "kind"
length = "len"
timestamp = "t_us"
fields = [
  { name = "t_us", type = "u32", unit = "us" },
  { name = "kind", type = "u8" },
  { name = "len", type = "u16" },
]

[[enum]]
name = "Mode"
base = "u8"
values = [{ name = "A", value = 0 }, { name = "B", value = 1 }]

[[flags]]
name = "Bits"
base = "u16"
flags = [{ name = "X", bit = 0 }, { name = "Y", bit = 3 }]

[[struct]]
name = "Vec2"
fields = [{ name = "x", type = "f32" }, { name = "y", type = "i16", endian = "big" }]

[[record]]
name = "FIXED"
id = 1
fields = [
  { name = "version", type = "u8", const = 7 },
  { name = "mode", type = "Mode" },
  { name = "bits", type = "Bits" },
  { name = "v", type = "Vec2[2]" },
  { name = "name", type = "string[4]" },
  { pad = 1 },
  { name = "ok", type = "bool" },
]

[[record]]
name = "VAR"
id = 2
fields = [
  { name = "text", type = "string", count = "u8" },
  { name = "pts", type = "Vec2[]", count = "u16" },
  { name = "raw", type = "bytes", size = "u8" },
  { name = "tail", type = "u16[]", count = "rest" },
]
"#;

/// A project's own schema read through the IR interpreter (`logspec::log::framed`): detection
/// of the file, then every record checked and written as JSON, as `dump --schema` does.
pub fn framed(data: &[u8]) {
    use crate::runtime::Visit;
    static FORMAT: std::sync::OnceLock<std::sync::Arc<crate::log::SchemaFormat>> = std::sync::OnceLock::new();
    let format = FORMAT.get_or_init(|| {
        let schema = logspec_ir::compile_str("fz.toml", FRAMED_SCHEMA).expect("the fuzz schema compiles");
        std::sync::Arc::new(crate::log::SchemaFormat::new(schema, Vec::new()).expect("a framed schema"))
    });
    let _ = format.claims(&data[..data.len().min(4096)], data.len() <= 4096);
    let Ok(mut r) = format.read(data) else { return };
    let mut w = JsonWriter::new();
    r.visit_header(&mut w);
    while let Some(rec) = r.next_record() {
        match rec {
            Ok(rec) => {
                if let Some(v) = &rec.value {
                    v.visit(Some("fields"), &mut w);
                }
                w.take();
            }
            Err(e) if e.is_recoverable() => {}
            Err(_) => break,
        }
    }
}

/// A dump's records, written and dropped; its warnings dropped.
struct Discard(JsonWriter);

impl crate::log::Records for Discard {
    type Writer = JsonWriter;
    fn writer(&mut self) -> &mut JsonWriter {
        &mut self.0
    }
    fn end_record(&mut self) -> std::io::Result<()> {
        self.0.clear();
        Ok(())
    }
    fn discard(&mut self) {
        self.0.clear();
    }
    fn warn(&mut self, _warning: crate::log::Fault) {}
}

/// PX4 ULog: the file as `dump` and `info` read it (formats lowered, Data, Information and
/// Parameter values decoded, corrupted regions skipped to the next sync message).
pub fn ulog(data: &[u8]) {
    use crate::log::{Format, Log, Open};
    let how = Open { format: Some(Format::Ulog), ..Default::default() };
    let open = || Log::from_reader(std::path::Path::new("fuzz.ulg"), Box::new(Cursor::new(data.to_vec())), &how);
    if let Ok(log) = open() {
        let _ = log.records(&crate::log::records::Options::default(), &mut Discard(JsonWriter::new()));
    }
    if let Ok(log) = open() {
        let _ = log.info(&[], &mut Vec::new());
    }
}

/// The ULog front end: each line of the input is a Format message's text; every format is
/// lowered as a subscription would, and the input decoded as a Data payload of it.
pub fn ulog_format(data: &[u8]) {
    use crate::formats::ulog::Decoder;
    let text = String::from_utf8_lossy(data);
    let mut set = logspec_ir::ulog::FormatSet::default();
    for line in text.lines() {
        let _ = set.add(line);
    }
    let names: Vec<String> = set.iter().map(|f| f.name.clone()).collect();
    for n in names {
        if let Ok(l) = set.lower(&n) {
            let d = Decoder::new(l);
            same_data(&d, data);
            same_data(&d, &vec![0; d.lowered.size as usize]);
        }
    }
}

/// A Data payload decoded by the IR walk (a value tree, shown) and by the decode plan (the
/// dump's path): the same JSON, or the same fault.
fn same_data(d: &crate::formats::ulog::Decoder, payload: &[u8]) {
    use crate::runtime::Visit;
    let mut walked = JsonWriter::new();
    let a = d.decode(payload).map(|v| d.view(&v).visit(None, &mut walked));
    let mut planned = JsonWriter::new();
    let b = d.visit_as(payload, None, &mut planned);
    match (a, b) {
        (Ok(()), Ok(())) => assert_eq!(walked.as_str(), planned.as_str(), "walk and plan disagree"),
        (Err(x), Err(y)) => assert_eq!(x, y, "walk and plan fail differently"),
        (x, y) => panic!("walk {x:?}, plan {y:?}"),
    }
    assert_eq!(d.check(payload).is_ok(), d.decode(payload).is_ok());
}

/// ArduPilot DataFlash: the log as `dump`, `info` and a scan read it (FMT layouts lowered, units
/// from FMTU/UNIT/MULT, garbage skipped to the next header of a known id).
pub fn dataflash(data: &[u8]) {
    use crate::log::{Format, Log, Open, Select};
    let how = Open { format: Some(Format::Dataflash), ..Default::default() };
    let open = || Log::from_reader(std::path::Path::new("fuzz.bin"), Box::new(Cursor::new(data.to_vec())), &how);
    if let Ok(log) = open() {
        let _ = log.records(&crate::log::records::Options::default(), &mut Discard(JsonWriter::new()));
    }
    if let Ok(log) = open() {
        let _ = log.info(&[], &mut Vec::new());
    }
    if let Ok(log) = open() {
        let _ = log.scan(&Select::default(), &mut Visits(JsonWriter::new(), false));
    }
}

/// Samples written as JSON and dropped (channels taken as they come); with `.1`, ROS messages
/// taken as visits that may stop partway ([`crate::log::Samples::try_visit`]).
struct Visits(JsonWriter, bool);

impl crate::log::Samples for Visits {
    fn channel(&mut self, _id: usize, _channel: &crate::log::Channel) -> Result<(), crate::log::Error> {
        Ok(())
    }
    fn sample(&mut self, _id: usize, _t_ns: u64, value: &crate::value::Value) -> Result<(), crate::log::Error> {
        value.write_to(&mut self.0, None);
        self.0.take();
        Ok(())
    }
    fn visit(&mut self, _id: usize, _t_ns: u64, value: &dyn crate::log::DynVisit) -> Result<(), crate::log::Error> {
        value.visit_dyn(&mut self.0);
        self.0.take();
        Ok(())
    }
    fn try_visit(
        &mut self,
        _id: usize,
        _t_ns: u64,
        value: &dyn crate::log::TryVisit,
    ) -> Result<bool, crate::log::Error> {
        if self.1 {
            value.try_visit_dyn(&mut self.0);
            self.0.take();
        }
        Ok(self.1)
    }
}

/// The DataFlash front end: the input cut into FMT bodies (the schema's `FMT` record, 86 bytes
/// each), each lowered with units built from its own name and labels as unit and multiplier
/// ids; the input and a zero body decoded as a message of it, which must decode whenever the
/// body has the layout's size.
pub fn dataflash_format(data: &[u8]) {
    use crate::formats::dataflash::{Decoder, Fmt};
    use logspec_ir::dataflash::{self as front, DfFormat};
    use logspec_runtime::{Endian, Fixed};
    let units: BTreeMap<u8, String> = (b'!'..=b'~').map(|u| (u, (u as char).to_string())).collect();
    let mults: BTreeMap<u8, f64> = (b'!'..=b'~').map(|m| (m, front::multiplier(f64::from(m) / 1e3))).collect();
    for chunk in data.chunks(<Fmt as Fixed>::SIZE) {
        let Ok(f) = Fmt::decode_fixed(chunk, Endian::Little) else { continue };
        let format = DfFormat::new(f.msg_type, f.length, &f.name, &f.format, &f.labels);
        let chars: Vec<u8> = format.format.bytes().collect();
        let (u, instance) = front::unit_strings(&chars, &front::text(&f.labels), &front::text(&f.name), &units, &mults);
        let Ok(l) = front::lower(&format, &u) else { continue };
        let d = Decoder::new(l, instance);
        let size = d.lowered.size as usize;
        for body in [&data[..size.min(data.len())], &vec![0; size][..]] {
            let mut w = JsonWriter::new();
            let decoded = d.visit_as(body, None, &mut w);
            assert_eq!(decoded.is_ok(), d.check(body).is_ok(), "visit and check disagree");
            if body.len() == size {
                assert!(decoded.is_ok(), "a body of the layout's size does not decode: {decoded:?}");
            }
            let _ = (d.time_us(body), d.instance(body));
        }
    }
}

/// The ROS 2 `.msg` front end and CDR: a `ros2msg` definition (the input up to the first NUL
/// byte) of type `fuzz/msg/Msg`, and the bytes after the NUL decoded as one CDR payload of it in
/// either byte order, by the owned decode and by the decode plan, which must agree.
pub fn ros2msg(data: &[u8]) {
    use crate::formats::rosbag::MsgDecoder;
    use logspec_ir::ir::Endian;
    let (def, body) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(def) = std::str::from_utf8(def) else { return };
    let Ok(set) = logspec_ir::ros::compile_ros2_definition("fuzz", "fuzz/msg/Msg", def) else { return };
    for e in [Endian::Little, Endian::Big] {
        if let Some(d) = MsgDecoder::cdr(&set, "fuzz/Msg", e) {
            owned_and_planned(&d, body);
        }
    }
}

/// MCAP: the file as `dump`, `info` and a scan read it (chunks decompressed within a budget of
/// 1 MiB, messages ordered, each decoded by its channel's encoding).
pub fn mcap(data: &[u8]) {
    use crate::log::{Format, Log, Open, Select};
    let how = Open { format: Some(Format::Mcap), chunk_budget: Some(1 << 20), ..Default::default() };
    let open = || Log::from_reader(std::path::Path::new("fuzz.mcap"), Box::new(Cursor::new(data.to_vec())), &how);
    if let Ok(log) = open() {
        let _ = log.records(&crate::log::records::Options::default(), &mut Discard(JsonWriter::new()));
    }
    if let Ok(log) = open() {
        let _ = log.info(&[], &mut Vec::new());
    }
    // Each message checked whole, then shown; and decoded once as it is shown.
    for once in [false, true] {
        if let Ok(log) = open() {
            let _ = log.scan(&Select::default(), &mut Visits(JsonWriter::new(), once));
        }
    }
}
