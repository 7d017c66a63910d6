//! Command-line verbs. Each verb lives in its own module; this one holds the argument definitions
//! and what the verbs share: opening a log with a progress bar, writing to standard output.

mod check;
mod convert;
mod diff;
mod doc;
mod dump;
mod export;
mod gen;
mod index;
mod info;
mod init;
mod lock;
mod meta;
mod plot;
pub mod progress;
mod project;
mod report;
mod rlog;

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use logspec::log::input::Progress;
use logspec::log::{Format, Open};

pub use logspec::log::Error;

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
    ///
    /// On a machine with a second core the text is made on two threads (the same bytes);
    /// `LOGSPEC_THREADS=1` keeps the dump on one.
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
    /// Write the time index of logs: where a scan may start and which times each chunk of about
    /// 1 MiB holds, so that a query's time window reads only the chunks it meets and a large log
    /// splits into several partitions (docs/engines.md). Kept beside the log as
    /// `<log>.logspec-idx`, or in `$XDG_CACHE_HOME/logspec/` when its folder is not writable;
    /// ignored and rebuilt when the log changes. The query engines' scans write it too, when they
    /// read a large log whole. `LOGSPEC_INDEX=cache` writes index files only in the cache
    /// directory, `LOGSPEC_INDEX=off` none (for this verb and the scans). Formats with a time
    /// index: USVLOG, RLOG, WPILOG, ULog and DataFlash files, CARLA recordings; ROS bags, MCAP
    /// files and rosbag2 `.db3` files carry their own (no file is written, this verb says how
    /// many chunks it lists); the others are read whole.
    ///
    /// Example: `logspec index logs/` (every log under `logs/`)
    Index(index::Args),
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

pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    progress::set_quiet(cli.quiet);
    if matches!(cli.command, Command::Convert(_) | Command::Export(_) | Command::Plot(_)) {
        remove_temps_on_interrupt();
    }
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
        Command::Index(a) => index::run(a),
        Command::Info(a) => info::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Completions(a) => meta::completions(a),
        Command::CliReference => meta::reference(),
        Command::Rlog(a) => rlog::run(a),
    }
}

/// Makes Ctrl-C (and SIGTERM, SIGHUP) remove the temporary files the verb made (an existing
/// output stays as it was) and exit with status 130. `rlog record` handles them itself: it stops
/// and keeps what it recorded.
fn remove_temps_on_interrupt() {
    let handler = || {
        let n = logspec_engine::output::remove_temps();
        eprintln!("logspec: interrupted; {n} temporary file(s) removed, existing outputs left as they were");
        std::process::exit(130);
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("logspec: warning: cannot handle Ctrl-C: {e}");
    }
}

/// How the verbs that read a log open it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Skip format detection.
    #[arg(long, value_parser = format_parser(), conflicts_with = "schema")]
    pub format: Option<Format>,
    /// Read the log with this TOML schema (one with a `[framing]`): its file header, record
    /// framing and records, and the older layouts of its lock file. Without it, the schemas of
    /// the project (logspec.toml in the current directory or above) are tried after the bundled
    /// formats.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// RLOG: decode a file that starts without a revision byte as R1 (AdvantageKit#15).
    #[arg(long)]
    pub assume_r1: bool,
    /// ROS bags: the most decompressed chunk data held at once, in MiB [default: 256]. A chunk
    /// whose header declares more is refused and skipped (every message of the other chunks is
    /// read); chunks that overlap in time are merged in time order when they hold at most an
    /// eighth of it, and read chunk by chunk otherwise (with a warning).
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub chunk_budget: Option<u64>,
}

/// `--format`'s values: the bundled formats by name.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.help()));
    PossibleValuesParser::new(values).map(|name| Format::from_name(&name).expect("a possible value"))
}

impl InputArgs {
    /// How to open the log.
    pub fn open(&self) -> Open {
        Open {
            format: self.format,
            schema: self.schema.clone(),
            schema_format: None,
            assume_r1: self.assume_r1,
            chunk_budget: self.chunk_budget.map(|mib| mib << 20),
            map: true,
            progress: None,
        }
    }
}

/// Writes text to standard output; a closed pipe (`| head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::Input(format!("writing output: {e}"))),
        _ => Ok(()),
    }
}

/// Opens a log (`-`: standard input) and detects its format, with a progress bar over its bytes.
/// A regular file is read in place through a map; anything else through a buffer.
pub fn open(path: &Path, input: &InputArgs) -> Result<logspec::log::Log, Error> {
    let mut how = input.open();
    let meta = (path.as_os_str() != "-").then(|| std::fs::metadata(path).ok()).flatten();
    let label = || path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let bar = meta.as_ref().and_then(|m| progress::Bar::new(m.len(), &label()));
    if meta.as_ref().is_some_and(std::fs::Metadata::is_dir) {
        // A rosbag2 bag's directory: its storage files, read by path.
        return logspec::log::open(path, &how);
    }
    if meta.as_ref().is_some_and(std::fs::Metadata::is_file) {
        // Mapped: the reader tells the bar how far it got.
        how.progress = bar.map(|bar| Progress(std::sync::Arc::new(move |pos| bar.at(pos))));
        return logspec::log::open(path, &how);
    }
    let mut reader = logspec::log::reader(path)?;
    if let Some(bar) = bar {
        reader = Box::new(progress::Progress::new(reader, bar));
    }
    logspec::log::Log::from_reader(path, reader, &how)
}

pub use logspec::log::shown;
pub use logspec::project::schema_paths;
