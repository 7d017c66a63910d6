//! A log's records in file order ([`Log::records`](super::Log::records)), into a [`Records`] sink:
//! JSON Lines for `logspec dump` ([`JsonLines`]), value trees for the Python package.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::formats::wpilog::NegZero;
use crate::json::{FrameFields, JsonWriter};
use crate::runtime::{with_file_format, Event, FramedFormat, Reader, WithFormat};
use crate::value::ValueSink;

use super::fault::{Fault, FaultKind};
use super::scan::Select;

use super::{shown, Error, Format};

/// What to read besides the log (the options of `logspec dump`).
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// CARLA: only the packets of frames A..B (0-based frame ordinals, B excluded).
    pub frames: Option<std::ops::Range<u64>>,
    pub select: Select,
    /// ROS bag: directories of `.msg` files for connections whose embedded definition is empty
    /// or does not match their md5sum.
    pub msg_path: Vec<PathBuf>,
    /// ROS bag: messages in file order instead of time order.
    pub file_order: bool,
}

/// Where the dump puts what it reads: JSON Lines for the command ([`JsonLines`]), value trees
/// for the Python package. Each record is written into [`writer`](Records::writer) as one
/// object (`begin_struct(None)` .. `end_struct()`) and handed on by
/// [`end_record`](Records::end_record); problems that do not stop the dump go to
/// [`warn`](Records::warn), in order with the records.
pub trait Records {
    type Writer: ValueSink;
    /// The writer the next record is written into.
    fn writer(&mut self) -> &mut Self::Writer;
    /// The record written into the writer is complete: hand it on.
    fn end_record(&mut self) -> io::Result<()>;
    /// Forgets what was written into the writer since the last record.
    fn discard(&mut self);
    /// A problem that does not stop the dump (a record skipped, a value kept as hex), told
    /// between records (never while one is being written). The command prints
    /// `logspec: {message}` on standard error.
    fn warn(&mut self, warning: Fault);
    /// How a WPILOG float of negative zero is shown: the dump's string `"-0"`, or a number.
    fn neg_zero(&self) -> NegZero {
        NegZero::String
    }
}

/// The dump's records as JSON Lines (`logspec dump`), its warnings on standard error.
pub struct JsonLines<'a> {
    w: JsonWriter,
    out: &'a mut dyn Write,
}

impl<'a> JsonLines<'a> {
    pub fn new(out: &'a mut dyn Write) -> Self {
        JsonLines { w: JsonWriter::new(), out }
    }

    /// Flushes the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Records for JsonLines<'_> {
    type Writer = JsonWriter;
    fn writer(&mut self) -> &mut JsonWriter {
        &mut self.w
    }
    fn end_record(&mut self) -> io::Result<()> {
        // `out` is buffered: two writes cost what one did, and the line's buffer is reused.
        let written = self.out.write_all(self.w.as_str().as_bytes()).and_then(|_| self.out.write_all(b"\n"));
        self.w.clear();
        written
    }
    fn discard(&mut self) {
        self.w.clear();
    }
    fn warn(&mut self, warning: Fault) {
        eprintln!("logspec: {warning}");
    }
}

impl super::Log {
/// Reads the log into `out`, record by record (the engine of `logspec dump`, and of the
/// Python package's iteration): everything before an error first, then the error.
pub fn records<R: Records>(self, opts: &Options, out: &mut R) -> Result<(), Error> {
    let d = self;
    let file = &d.file;
    if opts.frames.is_some() && d.format != Format::Carla {
        return Err(Error::Usage(format!("--frames applies to CARLA recordings; {} has no frames", shown(file))));
    }
    let path = shown(file);
    let select = &opts.select;
    let ros_only = !opts.msg_path.is_empty() || opts.file_order;
    if ros_only && d.format != Format::Rosbag {
        return Err(Error::Usage(format!(
            "--msg-path and --file-order apply to ROS bags; {path} is {}",
            d.format.title()
        )));
    }
    match d.format {
        Format::Usvlog => {
            // The file's schema id picks the layout: the current one or an older one from the lock.
            let ns_per_tick = super::scan::timestamp_scale(crate::formats::schemas::usvlog());
            let job = Dump { input: d.input, out, path: &path, select, ns_per_tick };
            with_file_format::<crate::formats::usvlog::Usvlog, _>(&d.head, job)
                .map_err(|e| Error::at(Fault::read(&path, &e)))
                .and_then(|r| r)
        }
        Format::Carla => super::carla::reader(d.input, &path)
            .map_err(Error::Input)
            .and_then(|r| super::carla::dump(r, out, &path, opts.frames.clone(), select)),
        Format::Rlog | Format::RlogStream => {
            let stream = d.format == Format::RlogStream;
            let schemas = super::structs::rlog_schemas(file, stream, d.assume_r1, &path);
            let mut structs = super::structs::Decoder::new(schemas, &path);
            super::rlog::reader(d.input, stream, d.assume_r1, &path)
                .map_err(Error::Input)
                .and_then(|r| super::rlog::dump(r, out, &path, select, &mut structs))
        }
        Format::Wpilog => {
            let schemas = super::structs::wpilog_schemas(file, &path);
            let mut structs = super::structs::Decoder::new(schemas, &path);
            super::wpilog::reader(d.input, &path)
                .map_err(Error::Input)
                .and_then(|r| super::wpilog::dump(r, out, &path, select, &mut structs))
        }
        Format::Rosbag => {
            drop(d.input);
            let opts = super::rosbag::DumpOptions { select, msg_path: &opts.msg_path, file_order: opts.file_order };
            super::rosbag::dump(file, &path, &opts, out)
        }
        Format::Schema => {
            let format = d.schema.expect("a schema's log is detected with its schema");
            dump_schema(&format, d.input, out, &path, select)
        }
    }
}
}

/// Dumps a log of a schema's own framing, read through the IR interpreter: the lines and
/// messages of [`dump_framed`], with the header fields named by the schema.
fn dump_schema(
    format: &std::sync::Arc<crate::log::SchemaFormat>,
    input: Box<dyn io::Read>,
    out: &mut impl Records,
    path: &str,
    select: &Select,
) -> Result<(), Error> {
    let mut reader = format.read(input).map_err(|e| Error::at(Fault::read(path, &e)))?;
    let ns_per_tick = reader.ns_per_tick();
    let names = FrameNames::of(reader.schema());
    let fields = FrameFields { tag: &names.tag, length: &names.length, timestamp: names.timestamp.as_deref() };
    let mut skips = Skips::new(select);
    while let Some(rec) = reader.next_record() {
        match rec {
            Ok(rec) => {
                let name = rec.value.as_ref().map_or("", |v| v.name());
                let t_ns = rec.header.timestamp.map(|t| t.saturating_mul(ns_per_tick));
                if !skips.keeps(select, name, t_ns) {
                    continue;
                }
                let record = rec.value.as_ref().map(|v| (v.name(), v));
                crate::json::framed_record(out.writer(), &fields, &rec.header, rec.payload, record);
            }
            Err(e) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), &e)?;
                continue;
            }
        }
        out.end_record().map_err(Error::Io)?;
    }
    skips.finish(select, path)
}

/// What the framed dumps ([`dump_framed`], [`dump_schema`]) keep between records: the records
/// that did not decode (warned about, skipped, counted) and the filters' tally.
struct Skips {
    bad: u64,
    filtering: bool,
    tally: super::filter::Tally,
}

impl Skips {
    fn new(select: &Select) -> Skips {
        Skips { bad: 0, filtering: super::filter::Tally::needed(select), tally: super::filter::Tally::default() }
    }

    /// Whether the filters keep a record of type `name` at `t_ns`.
    fn keeps(&mut self, select: &Select, name: &str, t_ns: Option<u64>) -> bool {
        !self.filtering || self.tally.note(select, name, t_ns)
    }

    /// A reader's error: a record that did not decode is warned about and skipped; anything
    /// else ends the dump.
    fn fault(
        &mut self,
        out: &mut impl Records,
        path: &str,
        recoverable: bool,
        e: &impl super::fault::Locate,
    ) -> Result<(), Error> {
        if !recoverable {
            return Err(Error::at(Fault::read(path, e)));
        }
        out.warn(Fault::read_with(path, e, "; skipped"));
        self.bad += 1;
        Ok(())
    }

    /// The end of a dump that read to the end: an error if a record was skipped or a filter
    /// matched nothing.
    fn finish(self, select: &Select, path: &str) -> Result<(), Error> {
        if self.bad > 0 {
            let message = format!("{path}: {} record(s) could not be decoded (see above)", self.bad);
            return Err(Error::at(Fault::new(FaultKind::Decode, path, message)));
        }
        self.tally.check(select, path).map_err(|m| Error::filter(path, m))?;
        Ok(())
    }
}

/// The names of a schema's record-header fields that hold the tag, length and timestamp
/// (owned, for [`FrameFields`]; `len` where the framing has no length field).
struct FrameNames {
    tag: String,
    length: String,
    timestamp: Option<String>,
}

impl FrameNames {
    fn of(schema: &crate::ir::ir::Schema) -> FrameNames {
        let f = schema.framing.as_ref().expect("a schema format has a framing");
        let h = schema.strukt(f.header);
        let name = |i: usize| h.fields[i].name.clone();
        FrameNames {
            tag: name(f.tag),
            length: f.length.map_or_else(|| "len".into(), name),
            timestamp: f.timestamp.map(name),
        }
    }
}

struct Dump<'a, R> {
    input: Box<dyn io::Read>,
    out: &'a mut R,
    path: &'a str,
    select: &'a Select,
    ns_per_tick: u64,
}

impl<R: Records> WithFormat for Dump<'_, R> {
    type Output = Result<(), Error>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        dump_framed::<F>(self.input, self.out, self.path, self.select, self.ns_per_tick)
    }
}

/// Dumps any framed format. Every complete record is printed; a record that fails to decode is
/// reported on stderr and skipped; a truncation or read error ends the dump with an error after
/// everything before it was printed. `select` keeps records by name and by time (the header's
/// timestamp times `ns_per_tick`).
pub fn dump_framed<F: FramedFormat>(
    input: impl io::Read,
    out: &mut impl Records,
    path: &str,
    select: &Select,
    ns_per_tick: u64,
) -> Result<(), Error> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| Error::at(Fault::read(path, &e)))?;
    let mut skips = Skips::new(select);
    while let Some(ev) = reader.next_event() {
        match ev {
            Ok(ev) => {
                let raw = match &ev {
                    Event::Record { raw, .. } | Event::Unknown { raw } => raw,
                };
                let name = F::record_name(raw.header.tag).unwrap_or("");
                let t_ns = raw.header.timestamp.map(|t| t.saturating_mul(ns_per_tick));
                if !skips.keeps(select, name, t_ns) {
                    continue;
                }
                crate::json::framed_event::<F>(out.writer(), &ev)
            }
            Err(e) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), &e)?;
                continue;
            }
        }
        out.end_record().map_err(Error::Io)?;
    }
    skips.finish(select, path)
}
