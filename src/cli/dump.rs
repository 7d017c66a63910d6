//! `logspec dump`: JSON Lines, one object per record, in file order.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::formats::wpilog::NegZero;
use logspec::json::{FrameFields, JsonWriter};
use logspec::runtime::{with_file_format, Event, FramedFormat, Reader, WithFormat};
use logspec::value::ValueSink;

use super::fault::{Fault, FaultKind};
use super::source::Select;

use super::{detect, open, shown, CliError, FormatKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// CARLA: only the packets of frames A..B (0-based frame ordinals, B excluded; `A..` and
    /// `..B` too), e.g. `--frames 0..3` for the first three frames.
    #[arg(long, value_name = "A..B", value_parser = super::carla::parse_frames)]
    pub frames: Option<std::ops::Range<u64>>,
    #[command(flatten)]
    pub select: super::export::SelectArgs,
    /// ROS bag: a directory of `.msg` files (`<package>/msg/<Type>.msg`) for connections whose
    /// embedded definition is empty or does not match their md5sum; repeat for several.
    #[arg(long, value_name = "DIR")]
    pub msg_path: Vec<PathBuf>,
    /// ROS bag: messages in file order instead of time order.
    #[arg(long)]
    pub file_order: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let opts = Options {
        input: args.input,
        frames: args.frames,
        select: args.select.select(),
        msg_path: args.msg_path,
        file_order: args.file_order,
    };
    let d = detect(&args.file, open(&args.file)?, &opts.input)?;
    write(d, &args.file, &opts, &mut out)
}

/// What to dump besides the file (the options of `logspec dump`).
#[derive(Debug, Default)]
pub struct Options {
    pub input: super::InputArgs,
    pub frames: Option<std::ops::Range<u64>>,
    pub select: Select,
    pub msg_path: Vec<PathBuf>,
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

/// Dumps a detected log as JSON Lines into `out` (the engine of `logspec dump`). A closed pipe
/// (`| head`) ends it quietly.
pub fn write(d: super::Detected, file: &Path, opts: &Options, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let mut lines = JsonLines::new(out);
    let result = records(d, file, opts, &mut lines);
    match result.and_then(|code| lines.out.flush().map(|_| code).map_err(Failure::Io)) {
        Ok(code) => Ok(code),
        // A closed pipe (`| head`) is how a reader says it has seen enough.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
    }
}

impl From<Failure> for CliError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Io(e) => CliError::Input(format!("writing output: {e}")),
            Failure::Input(m) => CliError::Input(m),
            Failure::At(f) => CliError::At(Box::new(f)),
            Failure::Usage(m) => CliError::Usage(m),
        }
    }
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        match e {
            CliError::Input(m) => Failure::Input(m),
            CliError::Usage(m) => Failure::Usage(m),
            CliError::At(f) => Failure::At(*f),
        }
    }
}

/// Reads a detected log into `out`, record by record (the engine of `logspec dump`, and of the
/// Python package's iteration): everything before an error first, then the error.
pub fn records<R: Records>(d: super::Detected, file: &Path, opts: &Options, out: &mut R) -> Result<ExitCode, Failure> {
    if opts.frames.is_some() && d.kind != FormatKind::Carla {
        return Err(Failure::Usage(format!("--frames applies to CARLA recordings; {} has no frames", shown(file))));
    }
    let path = shown(file);
    let select = &opts.select;
    let ros_only = !opts.msg_path.is_empty() || opts.file_order;
    if ros_only && d.kind != FormatKind::Rosbag {
        return Err(Failure::Usage(format!(
            "--msg-path and --file-order apply to ROS bags; {path} is {}",
            d.kind.title()
        )));
    }
    match d.kind {
        FormatKind::Usvlog => {
            // The file's schema id picks the layout: the current one or an older one from the lock.
            let ns_per_tick = super::source::timestamp_scale(logspec::formats::schemas::usvlog());
            let job = Dump { input: d.input, out, path: &path, select, ns_per_tick };
            with_file_format::<logspec::formats::usvlog::Usvlog, _>(&d.head, job)
                .map_err(|e| Failure::At(Fault::read(&path, &e)))
                .and_then(|r| r)
        }
        FormatKind::Carla => super::carla::reader(d.input, &path)
            .map_err(Failure::Input)
            .and_then(|r| super::carla::dump(r, out, &path, opts.frames.clone(), select)),
        FormatKind::Rlog | FormatKind::RlogStream => {
            let stream = d.kind == FormatKind::RlogStream;
            let schemas = super::structs::rlog_schemas(file, stream, opts.input.assume_r1, &path);
            let mut structs = super::structs::Decoder::new(schemas, &path);
            super::rlogfile::reader(d.input, stream, opts.input.assume_r1, &path)
                .map_err(Failure::Input)
                .and_then(|r| super::rlogfile::dump(r, out, &path, select, &mut structs))
        }
        FormatKind::Wpilog => {
            let schemas = super::structs::wpilog_schemas(file, &path);
            let mut structs = super::structs::Decoder::new(schemas, &path);
            super::wpilog::reader(d.input, &path)
                .map_err(Failure::Input)
                .and_then(|r| super::wpilog::dump(r, out, &path, select, &mut structs))
        }
        FormatKind::Rosbag => {
            drop(d.input);
            let opts = super::rosbag::DumpOptions { select, msg_path: &opts.msg_path, file_order: opts.file_order };
            super::rosbag::dump(file, &path, &opts, out)
        }
        FormatKind::Schema => {
            let format = d.schema.expect("a schema's log is detected with its schema");
            dump_schema(&format, d.input, out, &path, select)
        }
    }
}

/// Dumps a log of a schema's own framing, read through the IR interpreter: the lines and
/// messages of [`dump_framed`], with the header fields named by the schema.
fn dump_schema(
    format: &std::sync::Arc<logspec::log::SchemaFormat>,
    input: Box<dyn io::Read>,
    out: &mut impl Records,
    path: &str,
    select: &Select,
) -> Result<ExitCode, Failure> {
    let mut reader = format.read(input).map_err(|e| Failure::At(Fault::read(path, &e)))?;
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
                logspec::json::framed_record(out.writer(), &fields, &rec.header, rec.payload, record);
            }
            Err(e) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), &e)?;
                continue;
            }
        }
        out.end_record().map_err(Failure::Io)?;
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
    ) -> Result<(), Failure> {
        if !recoverable {
            return Err(Failure::At(Fault::read(path, e)));
        }
        out.warn(Fault::read_with(path, e, "; skipped"));
        self.bad += 1;
        Ok(())
    }

    /// The end of a dump that read to the end: an error if a record was skipped or a filter
    /// matched nothing.
    fn finish(self, select: &Select, path: &str) -> Result<ExitCode, Failure> {
        if self.bad > 0 {
            let message = format!("{path}: {} record(s) could not be decoded (see above)", self.bad);
            return Err(Failure::At(Fault::new(FaultKind::Decode, path, message)));
        }
        self.tally.check(select, path).map_err(|m| Failure::filter(path, m))?;
        Ok(ExitCode::SUCCESS)
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
    fn of(schema: &logspec::ir::ir::Schema) -> FrameNames {
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
    type Output = Result<ExitCode, Failure>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        dump_framed::<F>(self.input, self.out, self.path, self.select, self.ns_per_tick)
    }
}

/// Why a dump stopped: its output failed, or the input (a message, or a located fault).
#[derive(Debug)]
pub enum Failure {
    Io(io::Error),
    Input(String),
    At(Fault),
    /// The options do not apply to this input.
    Usage(String),
}

impl Failure {
    /// A filter that matched nothing (`filter::Tally::check`, `filter::no_match`).
    pub fn filter(path: &str, message: String) -> Failure {
        Failure::At(Fault::new(FaultKind::Filter, path, message))
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
) -> Result<ExitCode, Failure> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| Failure::At(Fault::read(path, &e)))?;
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
                logspec::json::framed_event::<F>(out.writer(), &ev)
            }
            Err(e) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), &e)?;
                continue;
            }
        }
        out.end_record().map_err(Failure::Io)?;
    }
    skips.finish(select, path)
}
