//! `logspec info`: what a log file is and what it holds.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::json::JsonWriter;
use logspec::runtime::{with_file_format, FramedFormat, Reader, Versioned, Visit, Visitor, WithFormat};

use super::fault::{Fault, FaultKind};
use super::{detect, open, shown, CliError, FormatKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log files (`-` for standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON object per file, one per line, instead of text (its keys per format:
    /// docs/output.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// ROS bag: a directory of `.msg` files for connections whose embedded definition is empty
    /// or does not match their md5sum; repeat for several.
    #[arg(long, value_name = "DIR")]
    pub msg_path: Vec<PathBuf>,
}

/// Facts about a framed log, gathered in one pass.
struct Summary {
    header: String,
    /// The schema id of the layout the records were decoded with.
    schema_id: Option<u64>,
    current_schema_id: Option<u64>,
    records_total: u64,
    counts: BTreeMap<u64, (Option<String>, u64)>,
    unknown: Vec<(Option<u64>, u64, u64)>,
    first_ts: Option<u64>,
    last_ts: Option<u64>,
    bytes_consumed: u64,
    errors: Vec<String>,
}

/// Summarises each file in turn. With several files, a file that cannot be read is reported on
/// stderr and the others are still summarised (text separated by a blank line; `--json` gives
/// one object per line); the exit status is 1 when any file had a problem.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(CliError::Usage("standard input (`-`) can be read only once".into()));
    }
    // The notes on how a file was read (a bag scanned without its index) go to standard error
    // before its summary (or its error).
    let summary_of = |file: &Path| {
        let mut notes = Vec::new();
        let summary = one(file, &args, &mut notes);
        for n in notes {
            eprintln!("logspec: {n}");
        }
        summary
    };
    if args.files.len() == 1 {
        let (text, ok) = summary_of(&args.files[0])?;
        super::write_stdout(text.as_bytes())?;
        return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    let mut all_ok = true;
    for (i, file) in args.files.iter().enumerate() {
        match summary_of(file) {
            Ok((text, ok)) => {
                all_ok &= ok;
                let sep = if i > 0 && !args.json { "\n" } else { "" };
                super::write_stdout(format!("{sep}{text}").as_bytes())?;
            }
            Err(CliError::Input(m)) => {
                all_ok = false;
                eprintln!("logspec: {m}");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The `info --json` object of one file (one line) and whether the file read cleanly: what the
/// Python package's `.info()` returns; and the notes that `info` prints on standard error (a bag
/// scanned without its index), which come even when the summary fails.
pub fn json_of(file: &Path, input: super::InputArgs) -> (Result<(String, bool), CliError>, Vec<Fault>) {
    let args = Args { files: vec![file.to_path_buf()], json: true, input, msg_path: Vec::new() };
    let mut notes = Vec::new();
    let summary = one(file, &args, &mut notes);
    let path = shown(file);
    (summary, notes.into_iter().map(|n| Fault::new(FaultKind::Decode, &path, n)).collect())
}

/// The summary of one file (text or one JSON line) and whether the file read cleanly. Notes on
/// how the file was read, which do not make it fail, are pushed to `notes`.
fn one(file: &Path, args: &Args, notes: &mut Vec<String>) -> Result<(String, bool), CliError> {
    let path = shown(file);
    let d = detect(file, open(file)?, &args.input)?;
    let kind = d.kind;
    if kind == FormatKind::Carla {
        let s = super::carla::summarise(d.input, &path)?;
        let name = file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let text = if args.json { super::carla::json(&s, &name)? } else { super::carla::text(&s, &path) };
        return Ok((text, s.ok()));
    }
    if kind == FormatKind::Rosbag {
        drop(d.input);
        let s = super::rosbag::summarise(file, &path, &args.msg_path, notes)?;
        let text = if args.json { super::rosbag::json(&s, &path) } else { super::rosbag::text(&s, &path) };
        return Ok((text, super::rosbag::ok(&s)));
    }
    if kind == FormatKind::Wpilog {
        let s = super::wpilog::summarise(d.input, &path)?;
        let name = file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let text = if args.json { super::wpilog::json(&s, &name) } else { super::wpilog::text(&s, &path) };
        return Ok((text, s.errors.is_empty()));
    }
    if matches!(kind, FormatKind::Rlog | FormatKind::RlogStream) {
        let stream = kind == FormatKind::RlogStream;
        let s = super::rlogfile::summarise(d.input, stream, args.input.assume_r1, &path)?;
        let text =
            if args.json { super::rlogfile::json(&s, &path, stream) } else { super::rlogfile::text(&s, &path, stream) };
        return Ok((text, s.errors.is_empty()));
    }
    if let Some(format) = &d.schema {
        let s = summarise_schema(format, d.input, &path)?;
        let (name, title) = (format.name(), format.title());
        let ns_per_tick = logspec::log::framed::timestamp_scale(format.schema());
        let text = if args.json { json(&s, name, &path) } else { text(&s, title, &path, ns_per_tick) };
        return Ok((text, s.errors.is_empty()));
    }
    // The file's schema id picks the layout: the current one or an older one from the lock.
    type F = logspec::formats::usvlog::Usvlog;
    let job = Summarise { input: d.input, path: &path, current: F::SCHEMA_IDS.first().copied() };
    let s = with_file_format::<F, _>(&d.head, job);
    let s = s.map_err(|e| CliError::Input(format!("{path}: {e}")))??;
    // The timestamp's unit is the schema's (USVLOG: `t_us`, microseconds).
    let schema = logspec::formats::schemas::usvlog();
    let ns_per_tick = super::source::timestamp_scale(&schema);
    let text = if args.json { json(&s, kind.name(), &path) } else { text(&s, kind.title(), &path, ns_per_tick) };
    Ok((text, s.errors.is_empty()))
}

struct Summarise<'a> {
    input: Box<dyn Read>,
    path: &'a str,
    /// The schema id of the format's current layout.
    current: Option<u64>,
}

impl WithFormat for Summarise<'_> {
    type Output = Result<Summary, CliError>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        summarise::<F>(self.input, self.path, self.current)
    }
}

fn summarise<F: FramedFormat>(input: impl Read, path: &str, current: Option<u64>) -> Result<Summary, CliError> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| CliError::Input(format!("{path}: {e}")))?;
    let mut w = JsonWriter::new();
    reader.file_header().visit(None, &mut w);
    let mut s = Summary::new(w.take(), F::schema_id(reader.file_header()), current);
    // `decode_each` is the reader's fast path; it stops at each error, and resumes after a bad
    // record when called again.
    loop {
        let result = reader.decode_each(|raw, record| {
            s.record(&raw.header, record.is_some(), || F::record_name(raw.header.tag).map(str::to_string));
        });
        match result {
            Ok(()) => break,
            Err(e) if s.error(&e, e.is_recoverable()) => {}
            Err(_) => break,
        }
    }
    s.bytes_consumed = reader.position();
    Ok(s)
}

/// [`summarise`] of a log of a schema's own framing, read through the IR interpreter.
fn summarise_schema(
    format: &std::sync::Arc<logspec::log::SchemaFormat>,
    input: Box<dyn Read>,
    path: &str,
) -> Result<Summary, CliError> {
    let mut reader = format.read(input).map_err(|e| super::fault::Fault::read(path, &e))?;
    let mut w = JsonWriter::new();
    reader.visit_header(&mut w);
    let mut s = Summary::new(w.take(), reader.schema_id(), format.schema_ids().first().copied());
    while let Some(rec) = reader.next_record() {
        match rec {
            Ok(rec) => s.record(&rec.header, rec.value.is_some(), || rec.value.as_ref().map(|v| v.name().to_string())),
            Err(e) if s.error(&e, e.is_recoverable()) => {}
            Err(_) => break,
        }
    }
    s.bytes_consumed = reader.position();
    Ok(s)
}

impl Summary {
    fn new(header: String, schema_id: Option<u64>, current_schema_id: Option<u64>) -> Summary {
        Summary {
            header,
            schema_id,
            current_schema_id,
            records_total: 0,
            counts: BTreeMap::new(),
            unknown: Vec::new(),
            first_ts: None,
            last_ts: None,
            bytes_consumed: 0,
            errors: Vec::new(),
        }
    }

    /// Counts a record (`known`: of a type the schema has, named by `name` the first time).
    #[inline]
    fn record(&mut self, h: &logspec::runtime::RecordHeader, known: bool, name: impl FnOnce() -> Option<String>) {
        if known {
            self.records_total += 1;
            self.counts.entry(h.tag).or_insert_with(|| (name(), 0)).1 += 1;
        } else {
            self.unknown.push((h.timestamp, h.tag, h.len));
        }
        self.first_ts = self.first_ts.or(h.timestamp);
        self.last_ts = h.timestamp.or(self.last_ts);
    }

    /// Notes a reader's error; whether reading goes on after it.
    fn error(&mut self, e: &impl std::fmt::Display, recoverable: bool) -> bool {
        self.errors.push(e.to_string());
        recoverable
    }
}

/// The symbol of a clock tick of `ns_per_tick` nanoseconds.
fn tick_unit(ns_per_tick: u64) -> &'static str {
    match ns_per_tick {
        1 => "ns",
        1_000 => "us",
        1_000_000 => "ms",
        _ => "s",
    }
}

fn text(s: &Summary, fmt: &str, path: &str, ns_per_tick: u64) -> String {
    let mut t = String::new();
    t.push_str(&format!("file:        {path}\nformat:      {fmt}\nheader:      {}\n", s.header));
    if let (Some(id), Some(current)) = (s.schema_id, s.current_schema_id) {
        if id == current {
            t.push_str(&format!("layout:      schema id {id} (current)\n"));
        } else {
            t.push_str(&format!("layout:      schema id {id} (an older layout, from the lock history)\n"));
        }
    }
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        let unit = tick_unit(ns_per_tick);
        let secs = b.saturating_sub(a) as f64 * ns_per_tick as f64 * 1e-9;
        t.push_str(&format!("time:        {a} .. {b} {unit} ({secs:.3} s)\n"));
    }
    t.push_str(&format!("records:     {}\n", s.records_total));
    for (id, (name, n)) in &s.counts {
        t.push_str(&format!("  {:>4}  {:<28} {n}\n", id, name.as_deref().unwrap_or("?")));
    }
    if !s.unknown.is_empty() {
        t.push_str(&format!("unknown:     {} record(s) of unknown type, skipped\n", s.unknown.len()));
    }
    t.push_str(&format!("bytes:       {} read\n", s.bytes_consumed));
    if s.errors.is_empty() {
        t.push_str("integrity:   ok\n");
    }
    for e in &s.errors {
        t.push_str(&format!("integrity:   {e}\n"));
    }
    t
}

fn json(s: &Summary, format: &str, path: &str) -> String {
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), path);
    w.str(Some("format"), format);
    w.bool(Some("ok"), s.errors.is_empty());
    match s.errors.first() {
        Some(e) => w.str(Some("error"), e),
        None => w.null(Some("error")),
    }
    w.raw(Some("header"), &s.header);
    match s.schema_id {
        Some(id) => w.uint(Some("schema_id"), id),
        None => w.null(Some("schema_id")),
    }
    w.uint(Some("records_total"), s.records_total);
    w.begin_object(Some("record_counts"));
    for (id, (name, n)) in &s.counts {
        let key = name.clone().unwrap_or_else(|| id.to_string());
        w.uint(Some(&key), *n);
    }
    w.end_object();
    w.begin_array(Some("unknown_records"), s.unknown.len());
    for (ts, tag, len) in &s.unknown {
        w.begin_object(None);
        match ts {
            Some(t) => w.uint(Some("t_us"), *t),
            None => w.null(Some("t_us")),
        }
        w.uint(Some("type"), *tag);
        w.uint(Some("len"), *len);
        w.end_object();
    }
    w.end_array();
    w.uint(Some("bytes_consumed"), s.bytes_consumed);
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        w.uint(Some("first_timestamp"), a);
        w.uint(Some("last_timestamp"), b);
    }
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}
