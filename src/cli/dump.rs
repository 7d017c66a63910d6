//! `logspec dump`: JSON Lines, one object per record, in file order.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::json::JsonWriter;
use logspec::runtime::{with_file_format, Event, FramedFormat, Reader, WithFormat};

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
    let d = detect(&args.file, open(&args.file)?, opts.input.format)?;
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

/// Dumps a detected log as JSON Lines into `out` (the engine of `logspec dump`, and of the
/// Python package's iteration). A closed pipe (`| head`) ends it quietly.
pub fn write(d: super::Detected, file: &Path, opts: &Options, mut out: &mut dyn Write) -> Result<ExitCode, CliError> {
    if opts.frames.is_some() && d.kind != FormatKind::Carla {
        return Err(CliError::Usage(format!("--frames applies to CARLA recordings; {} has no frames", shown(file))));
    }
    let path = shown(file);
    let select = &opts.select;
    let ros_only = !opts.msg_path.is_empty() || opts.file_order;
    if ros_only && d.kind != FormatKind::Rosbag {
        return Err(CliError::Usage(format!(
            "--msg-path and --file-order apply to ROS bags; {path} is {}",
            d.kind.title()
        )));
    }
    let out = &mut out;
    let result = match d.kind {
        FormatKind::Usvlog => {
            // The file's schema id picks the layout: the current one or an older one from the lock.
            let schema = super::source::bundled_schema("schemas/usvlog.toml", logspec::formats::usvlog::SCHEMA_TOML)?;
            let ns_per_tick = super::source::timestamp_scale(&schema);
            let job = Dump { input: d.input, out, path: &path, select, ns_per_tick };
            with_file_format::<logspec::formats::usvlog::Usvlog, _>(&d.head, job)
                .map_err(|e| Failure::Input(format!("{path}: {e}")))
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
    };
    match result.and_then(|code| out.flush().map(|_| code).map_err(Failure::Io)) {
        Ok(code) => Ok(code),
        // A closed pipe (`| head`) is how a reader says it has seen enough.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(Failure::Io(e)) => Err(CliError::Input(format!("writing output: {e}"))),
        Err(Failure::Input(m)) => Err(CliError::Input(m)),
    }
}

struct Dump<'a, W> {
    input: Box<dyn io::Read>,
    out: &'a mut W,
    path: &'a str,
    select: &'a Select,
    ns_per_tick: u64,
}

impl<W: Write> WithFormat for Dump<'_, W> {
    type Output = Result<ExitCode, Failure>;
    fn call<F: FramedFormat>(self) -> Self::Output {
        dump_framed::<F>(self.input, self.out, self.path, self.select, self.ns_per_tick)
    }
}

pub enum Failure {
    Io(io::Error),
    Input(String),
}

/// Dumps any framed format. Every complete record is printed; a record that fails to decode is
/// reported on stderr and skipped; a truncation or read error ends the dump with an error after
/// everything before it was printed. `select` keeps records by name and by time (the header's
/// timestamp times `ns_per_tick`).
pub fn dump_framed<F: FramedFormat>(
    input: impl io::Read,
    out: &mut impl Write,
    path: &str,
    select: &Select,
    ns_per_tick: u64,
) -> Result<ExitCode, Failure> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| Failure::Input(format!("{path}: {e}")))?;
    let mut w = JsonWriter::new();
    let mut bad = 0u64;
    let (filtering, mut tally) = (super::filter::Tally::needed(select), super::filter::Tally::default());
    while let Some(ev) = reader.next_event() {
        match ev {
            Ok(ev) => {
                let raw = match &ev {
                    Event::Record { raw, .. } | Event::Unknown { raw } => raw,
                };
                let name = F::record_name(raw.header.tag).unwrap_or("");
                let t_ns = raw.header.timestamp.map(|t| t.saturating_mul(ns_per_tick));
                if filtering && !tally.note(select, name, t_ns) {
                    continue;
                }
                logspec::json::framed_event::<F>(&mut w, &ev)
            }
            Err(e) if e.is_recoverable() => {
                eprintln!("logspec: {path}: {e}; skipped");
                bad += 1;
                continue;
            }
            Err(e) => return Err(Failure::Input(format!("{path}: {e}"))),
        }
        let mut line = w.take();
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(Failure::Io)?;
    }
    if bad > 0 {
        return Err(Failure::Input(format!("{path}: {bad} record(s) could not be decoded (see above)")));
    }
    tally.check(select, path).map_err(Failure::Input)?;
    Ok(ExitCode::SUCCESS)
}
