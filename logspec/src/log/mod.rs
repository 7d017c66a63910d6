//! Logs as one face: every format logspec reads behind one type, [`Log`], whatever its format.
//!
//! [`open`] (a path) or [`Log::from_reader`] (any reader) detects the format from the first
//! bytes and gives a [`Log`], which offers what every tool needs and nothing format-specific:
//!
//! - [`Log::info`]: its summary (header, record counts, time span, integrity findings);
//! - [`Log::records`]: its records in file order, into a [`Records`] sink (`logspec dump`);
//! - [`Log::scan`]: the samples of a [`Select`]ion (channels, time window) into a [`Sink`], each
//!   channel announced first with its IR type, units and JSON Schema ([`Channel`]).
//!
//! Every problem with the input is one [`Fault`] (kind, message, file, byte offset, record,
//! field), inside one [`Error`].
//!
//! ```
//! # fn main() -> Result<(), logspec::log::Error> {
//! # let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/usvlog/timeseries.bin"));
//! # if !path.is_file() { return Ok(()) }
//! let log = logspec::log::open(path, &logspec::log::Open::default())?;
//! println!("{} ({})", log.name(), log.title());
//! # Ok(()) }
//! ```
//!
//! A format is one adapter file here (its reader comes from its schema in `formats`): `usvlog`
//! is the bundled framed schema, `rlog`, `wpilog`, `rosbag`, `carla` read their own framing, and
//! [`framed`] reads any TOML schema with a `[framing]` at run time, through the IR interpreter:
//! a project's own schemas, and `--schema FILE` in the tools. [`Format`] lists them; detection
//! ([`detect`]) tries each one's magic.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod carla;
pub mod fault;
pub mod filter;
pub mod framed;
pub mod info;
pub mod records;
pub mod rlog;
pub mod rosbag;
pub mod scan;
mod sniff;
pub mod structs;
pub mod wpilog;

pub use fault::{Fault, FaultKind, Locate};
pub use framed::{SchemaError, SchemaFormat, SchemaReader};
pub use records::{JsonLines, Records};
pub use scan::{Channel, DynVisit, Outcome, Select, Sink, ValueType};

/// Why reading a log stopped: bad input (with its place when known), options that do not apply
/// to it, or a failed write of the output.
#[derive(Debug)]
pub enum Error {
    /// The input is bad (a message that already names the file and where).
    Input(String),
    /// The options do not apply (a CARLA option for a bag, a filter that cannot match).
    Usage(String),
    /// Bad input whose place is known (file, byte offset, record, field).
    At(Box<Fault>),
    /// Writing the output failed (a closed pipe is how a reader says it has seen enough).
    Io(io::Error),
}

impl Error {
    /// An input problem with its place.
    pub fn at(fault: Fault) -> Error {
        Error::At(Box::new(fault))
    }

    /// A filter that matched nothing (`filter::Tally::check`).
    pub fn filter(path: &str, message: String) -> Error {
        Error::at(Fault::new(FaultKind::Filter, path, message))
    }

    /// The exit status a command gives for it: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) | Error::Usage(m) => f.write_str(m),
            Error::At(fault) => f.write_str(&fault.message),
            Error::Io(e) => write!(f, "writing output: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        Error::at(f)
    }
}

/// The log formats logspec reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
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
    /// A log of a TOML schema's own framing ([`Open::schema`], or a project schema).
    Schema,
}

impl Format {
    /// Every bundled format, in the order of the command's `--format` values.
    pub const ALL: [Format; 6] =
        [Format::Usvlog, Format::Rlog, Format::RlogStream, Format::Carla, Format::Rosbag, Format::Wpilog];

    /// The name `--format` takes and `info --json` prints (`rlog-stream`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Usvlog => "usvlog",
            Format::Rlog => "rlog",
            Format::RlogStream => "rlog-stream",
            Format::Carla => "carla",
            Format::Rosbag => "rosbag",
            Format::Wpilog => "wpilog",
            Format::Schema => "schema",
        }
    }

    /// The bundled format of a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What `--format`'s help says of it.
    pub fn help(self) -> &'static str {
        match self {
            Format::Usvlog => "USVLOG `timeseries.bin`",
            Format::Rlog => "AdvantageKit RLOG file (R1 or R2)",
            Format::RlogStream => "A captured RLOG TCP stream: i32 big-endian length-prefixed frames",
            Format::Carla => "CARLA recorder log (UE4, 0.9.4-0.9.16)",
            Format::Rosbag => "ROS1 bag, format 2.0",
            Format::Wpilog => "WPILib DataLog (`.wpilog`), version 1.0",
            Format::Schema => "A log of a TOML schema's own framing",
        }
    }

    /// The name shown to people (`RLOG stream`).
    pub fn title(self) -> &'static str {
        match self {
            Format::Usvlog => "USVLOG",
            Format::Rlog => "RLOG",
            Format::RlogStream => "RLOG stream",
            Format::Carla => "CARLA recorder",
            Format::Rosbag => "ROS bag",
            Format::Wpilog => "WPILOG",
            Format::Schema => "schema",
        }
    }
}

/// How to open a log.
#[derive(Debug, Clone, Default)]
pub struct Open {
    /// Skip detection: read the log as this bundled format.
    pub format: Option<Format>,
    /// Read the log with this TOML schema (one with a `[framing]`): its file header, record
    /// framing and records, and the older layouts of its lock file. Without it, the schemas of
    /// the project (`logspec.toml` in the current directory or above) are tried after the
    /// bundled formats.
    pub schema: Option<PathBuf>,
    /// A schema's format already compiled (for a program that opens many logs of it): used
    /// instead of `schema`.
    pub schema_format: Option<Arc<SchemaFormat>>,
    /// RLOG: decode a file that starts without a revision byte as R1 (AdvantageKit#15).
    pub assume_r1: bool,
}

/// What a reader of a whole log into tables may rely on, to take a faster path than
/// [`Log::scan`] (`logspec_engine::tables::read` chooses by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Framed records of the bundled generated reader whose payloads have fixed sizes: they can
    /// be counted in one pass and their columns filled in place in a second.
    FixedFramed,
    /// A stream of keyed values whose decoding, not the reading, costs: reading it on two threads,
    /// each filling its share of the tables, pays.
    KeyedValues,
    /// One pass through [`Log::scan`].
    Other,
}

/// How many bytes detection reads ahead: enough for every format's magic and file header.
const HEAD: u64 = 4096;

/// A log, opened: its format, its first bytes (at most 4 KiB) and the reader of all of it.
pub struct Log {
    format: Format,
    /// The schema of a [`Format::Schema`] log.
    schema: Option<Arc<SchemaFormat>>,
    /// The file (`-`: standard input), for the formats that read it again (a bag's index, the
    /// struct schemas of an RLOG file).
    file: PathBuf,
    head: Vec<u8>,
    input: Box<dyn Read>,
    assume_r1: bool,
}

/// Opens the log at `path` (`-`: standard input) and detects its format.
pub fn open(path: &Path, how: &Open) -> Result<Log, Error> {
    Log::from_reader(path, reader(path)?, how)
}

/// Opens a path for reading, or standard input for `-`.
pub fn reader(path: &Path) -> Result<Box<dyn Read>, Error> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    let file = std::fs::File::open(path).map_err(|e| Error::Input(format!("{}: cannot open: {e}", path.display())))?;
    Ok(Box::new(file))
}

/// The path shown in messages (`<stdin>` for `-`).
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Compiles a schema file into a format.
pub fn schema_format(path: &Path) -> Result<Arc<SchemaFormat>, Error> {
    SchemaFormat::from_file(path).map(Arc::new).map_err(|e| Error::Input(format!("--schema: {e}")))
}

/// The framed schemas of the project around the current directory (logspec.toml there or
/// above; none without one), each with its lock's older layouts. A schema that does not compile
/// or has no framing is not a log format, and is left out here (`logspec check` reports it).
fn project_formats() -> Vec<Arc<SchemaFormat>> {
    let Ok(cwd) = std::env::current_dir() else { return Vec::new() };
    let Some(config) = crate::project::find(&cwd) else { return Vec::new() };
    let places = crate::project::Overrides { config: Some(config), ..Default::default() };
    let Ok(p) = places.resolve() else { return Vec::new() };
    let Ok(paths) = crate::project::schema_paths(&p.schemas) else { return Vec::new() };
    paths.iter().filter_map(|path| SchemaFormat::from_file(path).ok().map(Arc::new)).collect()
}

/// Detects the format from the first bytes of `input`, which are read and handed back in front
/// of the rest. [`Open::schema`] names the format; [`Open::format`] forces a bundled one;
/// otherwise the bundled formats with a magic are tried first, then the project's own schemas,
/// then RLOG (which has none).
pub fn detect(path: &Path, mut input: Box<dyn Read>, how: &Open) -> Result<Log, Error> {
    let mut head = Vec::with_capacity(HEAD as usize);
    (&mut input)
        .take(HEAD)
        .read_to_end(&mut head)
        .map_err(|e| Error::Input(format!("{}: cannot read: {e}", path.display())))?;
    let whole = (head.len() as u64) < HEAD;
    let mut schema = match (&how.schema_format, &how.schema) {
        (Some(f), _) => Some(Arc::clone(f)),
        (None, Some(p)) => Some(schema_format(p)?),
        (None, None) => None,
    };
    let format = match how.format {
        _ if schema.is_some() => Format::Schema,
        Some(Format::Schema) => return Err(Error::Usage("a schema's log needs its schema (--schema FILE)".into())),
        Some(k) => k,
        None => {
            // Each format's generated header decoder decides (`sniff.rs`).
            if sniff::usvlog(&head) {
                Format::Usvlog
            } else if sniff::carla(&head, HEAD as usize) {
                Format::Carla
            } else if sniff::rosbag(&head) {
                Format::Rosbag
            } else if sniff::wpilog(&head, HEAD as usize) {
                Format::Wpilog
            } else if let Some(s) = project_formats().into_iter().find(|s| s.claims(&head, whole)) {
                schema = Some(s);
                Format::Schema
            } else if sniff::rlog_stream(&head) {
                Format::RlogStream
            } else if sniff::rlog(&head) {
                Format::Rlog
            } else {
                let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
                let file = path.display().to_string();
                return Err(Fault::new(FaultKind::Format, &file, format!(
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
    Ok(Log { format, schema, file: path.to_path_buf(), head, input, assume_r1: how.assume_r1 })
}

impl Log {
    /// A log read from `input` (whose file, for messages and for the formats that read the
    /// file again, is `path`), its format detected ([`detect`]).
    pub fn from_reader(path: &Path, input: Box<dyn Read>, how: &Open) -> Result<Log, Error> {
        detect(path, input, how)
    }

    /// The format's name as `info --json` prints it (a schema's own name for a schema's log).
    pub fn name(&self) -> &str {
        match &self.schema {
            Some(s) => s.name(),
            None => self.format.name(),
        }
    }

    /// The format's title (a schema's `[format] title`).
    pub fn title(&self) -> &str {
        match &self.schema {
            Some(s) => s.title(),
            None => self.format.title(),
        }
    }

    /// The format detected.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file as shown in messages.
    pub fn shown(&self) -> String {
        shown(&self.file)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// What a reader of the whole log may rely on ([`Shape`]).
    pub fn shape(&self) -> Shape {
        match self.format {
            Format::Usvlog => Shape::FixedFramed,
            Format::Rlog | Format::RlogStream => Shape::KeyedValues,
            _ => Shape::Other,
        }
    }

    /// How to open this log again with no detection: its format forced, or its schema kept
    /// compiled.
    pub fn reopen(&self) -> Open {
        Open {
            format: (self.format != Format::Schema).then_some(self.format),
            schema: None,
            schema_format: self.schema.clone(),
            assume_r1: self.assume_r1,
        }
    }

    /// Whether the scan offers its messages as recorded, ROS1-serialised ([`Sink::raw`]), with
    /// their definitions ([`Channel::ros1`]).
    pub fn passes_ros1(&self) -> bool {
        self.format == Format::Rosbag
    }

    /// Whether the log's clock is Unix time (ROS bags), not time since the log's start.
    pub fn utc(&self) -> bool {
        self.format == Format::Rosbag
    }
}
