//! Command-line verbs. Each verb lives in its own module; this one holds the argument definitions,
//! the error type and format detection.

/// `println!` to standard output through [`write_stdout`]: a closed pipe (`logspec diff | head -1`)
/// ends the output quietly instead of panicking; any other write error is returned with `?`.
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::cli::write_stdout(format!("{}\n", format_args!($($t)*)).as_bytes())?
    };
}

mod carla;
mod check;
pub mod columns;
mod convert;
mod diff;
mod doc;
pub mod dump;
mod export;
pub mod fault;
mod filter;
mod gen;
pub mod info;
mod init;
mod lock;
mod meta;
mod output;
mod parquet;
mod plot;
pub mod progress;
mod project;
mod rlog;
mod rlogfile;
mod rosbag;
mod sniff;
pub mod source;
mod structs;
pub mod tables;
mod wpilog;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use logspec::log::SchemaFormat;

/// Describe binary robot and simulation logs once; read, dump and generate code for them.
#[derive(Parser, Debug)]
#[command(
    name = "logspec",
    version,
    about,
    long_about = None,
    after_help = "Examples:\n  logspec info run.bin                       what a log holds (any format: USVLOG, RLOG, WPILOG, ROS bag, CARLA)\n  logspec dump run.bin | head                every record as JSON Lines\n  logspec export run.bin --csv out/          one CSV per record type, units in the headers\n  logspec plot run.bin -f REC_NAV_SOLUTION.x -o x.png\n  logspec convert run.bin -o run.mcap        open it in Foxglove\n  logspec init                               start schemas/ and logspec.toml in your repository\n  logspec gen && logspec check               regenerate C, Python, docs; CI fails on stale files\n\n`logspec <command> --help` shows a command's options and examples; docs/cli.md has them all."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// No progress bars or summary lines on standard error (errors still print).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Start logspec in a repository: a starter schema in schemas/, its lock file and a
    /// logspec.toml that says where each generated file goes; prints the line for CI.
    ///
    /// Example: `logspec init --header firmware/src/logging/record_types.h`
    Init(init::Args),
    /// Regenerate the checked-in artifacts (C headers, Python modules, golden vectors) from the
    /// schemas.
    ///
    /// Example: `logspec gen` (from the project root) rewrites include/<format>/record_types.h,
    /// python/<format>.py and golden/<format>.json for every schemas/*.toml;
    /// `logspec gen --lang python` only the Python modules.
    Gen(gen::Args),
    /// Fail, with a unified diff, when a checked-in generated file is stale or was edited by hand.
    ///
    /// Example: `logspec check` (from the project root; CI runs it).
    Check(check::Args),
    /// Record each schema's wire layout in its lock file (schemas/<format>.lock), keeping history.
    ///
    /// Example: `logspec lock` after adding a record or bumping the schema id.
    Lock(lock::Args),
    /// Classify every schema change since a git revision; exit 1 on a breaking change without a
    /// schema-id bump.
    ///
    /// Example: `logspec diff --against origin/main` (in pull-request CI).
    Diff(diff::Args),
    /// Convert a log to MCAP for Foxglove: one channel per record type / key / topic, JSON
    /// messages with JSON Schemas generated from the schema (units and docs included).
    ///
    /// Example: `logspec convert timeseries.bin -o run.mcap`
    Convert(convert::Args),
    /// Write a format's documentation, generated from its schema, as Markdown: per-record tables
    /// of offset, field, type, unit and description, with sizes and layout fingerprints.
    ///
    /// Example: `logspec doc schemas/usvlog.toml -o usvlog.md`
    Doc(doc::Args),
    /// Print a log file as JSON Lines, one object per record, in file order (ROS bags: the
    /// connections, then every message in time order, decoded from the bag's own definitions).
    ///
    /// Examples: `logspec dump timeseries.bin | head`, `logspec dump recording.log --frames 0..3`
    /// (the first three frames of a CARLA recording), `logspec dump run.bag --topic /imu`,
    /// `logspec dump robot.wpilog --key 'NT:/SmartDashboard/*'`
    ///
    /// The keys of each line, per format: docs/output.md.
    Dump(dump::Args),
    /// Export a log to CSV: one file per record type / key / topic, with units in the column
    /// names, or one time-aligned table resampled at a fixed rate.
    ///
    /// Example: `logspec export timeseries.bin --csv out/ --aligned 50`
    Export(export::Args),
    /// Summarise log files: header, record counts, time span, integrity findings (ROS bags: like
    /// `rosbag info`, with md5 verdicts).
    ///
    /// Examples: `logspec info timeseries.bin --json`, `logspec info recording.log` (a CARLA
    /// recording's frames, duration, packets and actors), `logspec info --json logs/*.rlog` (one
    /// JSON object per line)
    Info(info::Args),
    /// Plot fields over time to a PNG or SVG image, with axis labels, units and a legend.
    ///
    /// Example: `logspec plot timeseries.bin --field REC_NAV_SOLUTION.x --field REC_SENSOR_GNSS.x -o x.png`
    Plot(plot::Args),
    /// Print a shell completion script.
    ///
    /// Example: `logspec completions bash > ~/.local/share/bash-completion/completions/logspec`
    Completions(meta::CompletionsArgs),
    /// Print the command-line reference (every verb and option) as Markdown; `docs/cli.md` is
    /// this output.
    ///
    /// Example: `logspec cli-reference > docs/cli.md`
    CliReference,
    /// Serve a log file as an AdvantageKit RLOG live stream, or record a live stream to a file.
    ///
    /// Example: `logspec rlog serve robot.rlog` (then connect AdvantageScope to 127.0.0.1:5800),
    /// and `logspec rlog record 10.12.34.2 -o match.rlog` to record a robot's stream.
    Rlog(rlog::Args),
}

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    progress::set_quiet(cli.quiet);
    match cli.command {
        Command::Init(a) => init::run(a),
        Command::Gen(a) => gen::run(a),
        Command::Check(a) => check::run(a),
        Command::Lock(a) => lock::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Doc(a) => doc::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Export(a) => export::run(a),
        Command::Info(a) => info::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Completions(a) => meta::completions(a),
        Command::CliReference => meta::reference(),
        Command::Rlog(a) => rlog::run(a),
    }
}

/// A failure, with the exit code it maps to: 1 for bad input, 2 for bad usage.
#[derive(Debug)]
pub enum CliError {
    /// The input is bad (a message that already names the file and where).
    Input(String),
    /// The command was used wrongly.
    Usage(String),
    /// Bad input whose place is known (file, byte offset, record, field): printed as its
    /// message, like `Input`; the Python package builds its exceptions from the parts.
    At(Box<fault::Fault>),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) | CliError::At(_) => 1,
            CliError::Usage(_) => 2,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::Usage(m) => f.write_str(m),
            CliError::At(fault) => f.write_str(&fault.message),
        }
    }
}

impl From<fault::Fault> for CliError {
    fn from(f: fault::Fault) -> Self {
        CliError::At(Box::new(f))
    }
}

/// How the verbs that read a log open it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Skip format detection.
    #[arg(long, value_enum, conflicts_with = "schema")]
    pub format: Option<FormatKind>,
    /// Read the log with this TOML schema (one with a `[framing]`): its file header, record
    /// framing and records, and the older layouts of its lock file. Without it, the schemas of
    /// the project (logspec.toml in the current directory or above) are tried after the bundled
    /// formats.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// A schema's format already compiled (for a program that opens many logs of it, or opens
    /// one again): used instead of `schema`.
    #[arg(skip)]
    pub schema_format: Option<Arc<SchemaFormat>>,
    /// RLOG: decode a file that starts without a revision byte as R1 (AdvantageKit#15).
    #[arg(long)]
    pub assume_r1: bool,
}

/// The log formats the CLI knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatKind {
    /// USVLOG `timeseries.bin`.
    Usvlog,
    /// AdvantageKit RLOG file (R1 or R2).
    Rlog,
    /// A captured RLOG TCP stream: i32 big-endian length-prefixed frames.
    RlogStream,
    /// CARLA recorder log (UE4, 0.9.4-0.9.16).
    Carla,
    /// ROS1 bag, format 2.0.
    Rosbag,
    /// WPILib DataLog (`.wpilog`), version 1.0.
    Wpilog,
    /// A log of a TOML schema's own framing (`--schema FILE`, or a project schema).
    #[value(skip)]
    Schema,
}

impl FormatKind {
    /// Every format, in the order of `--format`'s values.
    pub const ALL: [FormatKind; 6] = [
        FormatKind::Usvlog,
        FormatKind::Rlog,
        FormatKind::RlogStream,
        FormatKind::Carla,
        FormatKind::Rosbag,
        FormatKind::Wpilog,
    ];

    /// The name `--format` takes and `info --json` prints (`rlog-stream`).
    pub fn name(self) -> &'static str {
        match self {
            FormatKind::Usvlog => "usvlog",
            FormatKind::Rlog => "rlog",
            FormatKind::RlogStream => "rlog-stream",
            FormatKind::Carla => "carla",
            FormatKind::Rosbag => "rosbag",
            FormatKind::Wpilog => "wpilog",
            FormatKind::Schema => "schema",
        }
    }

    /// The format of a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<FormatKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn title(self) -> &'static str {
        match self {
            FormatKind::Usvlog => "USVLOG",
            FormatKind::Rlog => "RLOG",
            FormatKind::RlogStream => "RLOG stream",
            FormatKind::Carla => "CARLA recorder",
            FormatKind::Rosbag => "ROS bag",
            FormatKind::Wpilog => "WPILOG",
            FormatKind::Schema => "schema",
        }
    }
}

/// Writes text to standard output; a closed pipe (`| head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::Input(format!("writing output: {e}"))),
        _ => Ok(()),
    }
}

/// Opens a path, or standard input for `-`.
pub fn open(path: &Path) -> Result<Box<dyn Read>, CliError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    let file =
        std::fs::File::open(path).map_err(|e| CliError::Input(format!("{}: cannot open: {e}", path.display())))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let label = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(Box::new(progress::Progress::new(file, len, &label)))
}

/// How many bytes [`detect`] reads ahead: enough for every format's magic and file header.
const HEAD: u64 = 4096;

/// An opened input: its detected format, its first bytes (at most [`HEAD`]) and all of it.
pub struct Detected {
    pub kind: FormatKind,
    /// The schema of a [`FormatKind::Schema`] log.
    pub schema: Option<Arc<SchemaFormat>>,
    pub head: Vec<u8>,
    pub input: Box<dyn Read>,
}

impl Detected {
    /// The format's name as `info --json` prints it (a schema's own name for a schema's log).
    pub fn name(&self) -> &str {
        match &self.schema {
            Some(s) => s.name(),
            None => self.kind.name(),
        }
    }

    /// The format's title (a schema's `[format] title`).
    pub fn title(&self) -> &str {
        match &self.schema {
            Some(s) => s.title(),
            None => self.kind.title(),
        }
    }
}

/// Compiles a `--schema` file into a format.
pub fn schema_format(path: &Path) -> Result<Arc<SchemaFormat>, CliError> {
    SchemaFormat::from_file(path).map(Arc::new).map_err(|e| CliError::Input(format!("--schema: {e}")))
}

/// The framed schemas of the project around the current directory (logspec.toml there or
/// above; none without one), each with its lock's older layouts. A schema that does not compile
/// or has no framing is not a log format, and is left out here (`logspec check` reports it).
fn project_formats() -> Vec<Arc<SchemaFormat>> {
    let Ok(cwd) = std::env::current_dir() else { return Vec::new() };
    let Some(config) = project::find(&cwd) else { return Vec::new() };
    let args = project::Args { config: Some(config), ..Default::default() };
    let Ok(p) = args.resolve() else { return Vec::new() };
    let Ok(paths) = schema_paths(&p.schemas) else { return Vec::new() };
    paths.iter().filter_map(|path| SchemaFormat::from_file(path).ok().map(Arc::new)).collect()
}

/// Detects the format from the first bytes, which are read and handed back in front of the rest.
/// `--schema` names the format; `--format` forces a bundled one; otherwise the bundled formats
/// with a magic are tried first, then the project's own schemas, then RLOG (which has none).
pub fn detect(path: &Path, mut input: Box<dyn Read>, args: &InputArgs) -> Result<Detected, CliError> {
    let mut head = Vec::with_capacity(HEAD as usize);
    (&mut input)
        .take(HEAD)
        .read_to_end(&mut head)
        .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", path.display())))?;
    let whole = (head.len() as u64) < HEAD;
    let mut schema = match (&args.schema_format, &args.schema) {
        (Some(f), _) => Some(Arc::clone(f)),
        (None, Some(p)) => Some(schema_format(p)?),
        (None, None) => None,
    };
    let kind = match args.format {
        _ if schema.is_some() => FormatKind::Schema,
        Some(FormatKind::Schema) => {
            return Err(CliError::Usage("a schema's log needs its schema (--schema FILE)".into()))
        }
        Some(k) => k,
        None => {
            // Each format's generated header decoder decides (`sniff.rs`).
            if sniff::usvlog(&head) {
                FormatKind::Usvlog
            } else if sniff::carla(&head, HEAD as usize) {
                FormatKind::Carla
            } else if sniff::rosbag(&head) {
                FormatKind::Rosbag
            } else if sniff::wpilog(&head, HEAD as usize) {
                FormatKind::Wpilog
            } else if let Some(s) = project_formats().into_iter().find(|s| s.claims(&head, whole)) {
                schema = Some(s);
                FormatKind::Schema
            } else if sniff::rlog_stream(&head) {
                FormatKind::RlogStream
            } else if sniff::rlog(&head) {
                FormatKind::Rlog
            } else {
                let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
                let file = path.display().to_string();
                return Err(fault::Fault::new(fault::FaultKind::Format, &file, format!(
                    "{}: unrecognised format: the file starts with [{}]{}; expected the USVLOG magic \"USVLOG\", a CARLA recorder header (u16 version, \"CARLA_RECORDER\"), \"#ROSBAG V2.0\", the WPILOG magic \"WPILOG\", an RLOG revision byte (01 or 02) and timestamp, an RLOG stream frame, or the magic of a schema of this project (use --format to force one, or --schema FILE for a log of your own schema)",
                    path.display(),
                    shown.join(" "),
                    if head.is_empty() { " (empty file)" } else { "" }
                ))
                .into());
            }
        }
    };
    let input = Box::new(io::Cursor::new(head.clone()).chain(input));
    Ok(Detected { kind, schema, head, input })
}

/// The path shown in messages.
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Every `*.toml` of a schema directory, sorted.
pub fn schema_paths(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::Usage(format!("{}: cannot list schemas: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(CliError::Usage(format!("{}: no *.toml schemas found", dir.display())));
    }
    Ok(paths)
}
