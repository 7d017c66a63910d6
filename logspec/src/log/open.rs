//! Opening a log: its [`Format`] detected from the first bytes ([`detect`]), and [`Log`], whose
//! methods each dispatch to the format's adapter (`usvlog.rs`, `rlog/`, `wpilog/`, `rosbag.rs`,
//! `carla/`, `ulog.rs`, `mcap.rs`, `schema.rs`) in one `match`.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fault::{Fault, FaultKind};
use super::filter::Select;
use super::framed::SchemaFormat;
use super::info::Info;
use super::input::{Mapped, Progress, Source};
use super::records::{Options, Records};
use super::scan::{Outcome, Samples, State};
use super::{carla, dataflash, mcap, rlog, rosbag, schema, sniff, ulog, usvlog, wpilog, Error};

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
    /// PX4 ULog (`.ulg`).
    Ulog,
    /// ArduPilot DataFlash (`.bin`).
    Dataflash,
    /// MCAP (`.mcap`): ROS 2 recordings (CDR), and ROS1 and JSON messages.
    Mcap,
    /// rosbag2 sqlite3 storage (`.db3`): ROS 2 recordings (CDR). Read by path (feature `sqlite`).
    Rosbag2,
    /// A log of a TOML schema's own framing ([`Open::schema`], or a project schema).
    Schema,
}

impl Format {
    /// Every bundled format, in the order of the command's `--format` values.
    pub const ALL: [Format; 10] = [
        Format::Usvlog,
        Format::Rlog,
        Format::RlogStream,
        Format::Carla,
        Format::Rosbag,
        Format::Wpilog,
        Format::Ulog,
        Format::Dataflash,
        Format::Mcap,
        Format::Rosbag2,
    ];

    /// The name `--format` takes and `info --json` prints (`rlog-stream`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Usvlog => "usvlog",
            Format::Rlog => "rlog",
            Format::RlogStream => "rlog-stream",
            Format::Carla => "carla",
            Format::Rosbag => "rosbag",
            Format::Wpilog => "wpilog",
            Format::Ulog => "ulog",
            Format::Dataflash => "dataflash",
            Format::Mcap => "mcap",
            Format::Rosbag2 => "rosbag2",
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
            Format::Ulog => "PX4 ULog (`.ulg`)",
            Format::Dataflash => "ArduPilot DataFlash (`.bin`)",
            Format::Mcap => "MCAP (`.mcap`): ROS 2 (CDR), ROS1 and JSON messages",
            Format::Rosbag2 => "rosbag2: a sqlite3 storage file (`.db3`), or a bag's directory or metadata.yaml (its storage files, `.db3` or `.mcap`, read as one log)",
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
            Format::Ulog => "PX4 ULog",
            Format::Dataflash => "ArduPilot DataFlash",
            Format::Mcap => "MCAP",
            Format::Rosbag2 => "rosbag2",
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
    /// ROS bags: the most decompressed chunk data held at once, in bytes (`None`: 256 MiB,
    /// [`crate::formats::rosbag::DEFAULT_CHUNK_BUDGET`]). A chunk that declares more is refused
    /// and skipped, and chunks that overlap in time are merged in time order when they hold at
    /// most an eighth of it ([`crate::formats::rosbag::Bag::open_with`]).
    pub chunk_budget: Option<u64>,
    /// Read a regular file through a memory map, in place, rather than through a buffer: the
    /// cheapest route for a reader that goes front to back (the command-line tool's choice).
    /// It installs a process-wide `SIGBUS` handler, so that a file another process truncates
    /// while it is read becomes an error ("the file was truncated while it was being read"),
    /// never a crash ([`input::Mapped`](super::input::Mapped)). Pipes and standard input are
    /// read through a buffer either way.
    pub map: bool,
    /// Told how far the reading got in a mapped file, every few MiB (a reader handed to
    /// [`Log::from_reader`] can count its bytes itself).
    pub progress: Option<Progress>,
}

/// What a reader of a whole log into tables may rely on, to take a faster path than
/// [`Log::scan`] (`logspec_engine::tables::read` chooses by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Framed records of the bundled generated reader whose payloads have fixed sizes: they can
    /// be counted in one pass and their columns filled in place in a second.
    FixedFramed,
    /// One pass through [`Log::scan`].
    Other,
}

/// The first bytes of a SQLite 3 database (a rosbag2 `.db3`), known with or without the
/// `sqlite` feature, so that a build without it names what it cannot read.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// The first bytes of a rosbag2 bag's `metadata.yaml`.
const BAG_METADATA: &[u8] = b"rosbag2_bagfile_information:";

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
    input: Source,
    /// The map of a mapped file, kept to ask after reading whether it was truncated meanwhile.
    mapped: Option<Arc<Mapped>>,
    assume_r1: bool,
    chunk_budget: Option<u64>,
    map: bool,
    progress: Option<Progress>,
    /// The part of the log [`Log::scan`] reads (a time index's chunks); `None`: all of it.
    range: Option<super::index::Range>,
    /// The state messages before the range's start, read first ([`super::index::Index::states`]).
    states: Vec<u64>,
    /// The log's schema messages, read first ([`super::index::Index::schemas`]).
    schemas: Vec<super::index::SchemaAt>,
}

/// Opens the log at `path` (`-`: standard input; a directory: a rosbag2 bag, its storage files
/// listed by its `metadata.yaml`) and detects its format.
pub fn open(path: &Path, how: &Open) -> Result<Log, Error> {
    if path.is_dir() {
        let how = Open { format: Some(Format::Rosbag2), schema: None, schema_format: None, ..how.clone() };
        return detected(path, Vec::new(), Source::Stream(Box::new(io::empty())), &how);
    }
    if how.map && path.as_os_str() != "-" {
        let file =
            std::fs::File::open(path).map_err(|e| Error::Input(format!("{}: cannot open: {e}", path.display())))?;
        return match Mapped::new(&file, how.progress.clone()) {
            Some(map) => {
                let map = Arc::new(map);
                let head = map.bytes()[..map.bytes().len().min(HEAD as usize)].to_vec();
                detected(path, head, Source::Mapped(map), how)
            }
            None => Log::from_reader(path, Box::new(file), how),
        };
    }
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
    let input = Box::new(io::Cursor::new(head.clone()).chain(input));
    detected(path, head, Source::Stream(input), how)
}

/// [`detect`], with the first bytes in `head` and the whole input (those bytes included) in
/// `input`.
fn detected(path: &Path, head: Vec<u8>, input: Source, how: &Open) -> Result<Log, Error> {
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
            } else if sniff::ulog(&head, HEAD as usize) {
                Format::Ulog
            } else if sniff::dataflash(&head) {
                Format::Dataflash
            } else if crate::formats::mcap::sniff(&head) {
                Format::Mcap
            } else if head.starts_with(SQLITE_MAGIC) || head.starts_with(BAG_METADATA) {
                Format::Rosbag2
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
                    "{}: unrecognised format: the file starts with [{}]{}; expected the USVLOG magic \"USVLOG\", a CARLA recorder header (u16 version, \"CARLA_RECORDER\"), \"#ROSBAG V2.0\", the WPILOG magic \"WPILOG\", the ULog magic \"ULog\" 01 12 35, a DataFlash FMT message (A3 95 80), the MCAP magic 89 \"MCAP0\" 0d 0a, the SQLite magic \"SQLite format 3\" 00 (a rosbag2 .db3), an RLOG revision byte (01 or 02) and timestamp, an RLOG stream frame, or the magic of a schema of this project (use --format to force one, or --schema FILE for a log of your own schema)",
                    path.display(),
                    shown.join(" "),
                    if head.is_empty() { " (empty file)" } else { "" }
                ))
                .into());
            }
        }
    };
    let mapped = match &input {
        Source::Mapped(m) => Some(Arc::clone(m)),
        Source::Stream(_) => None,
    };
    Ok(Log {
        format,
        schema,
        file: path.to_path_buf(),
        head,
        input,
        mapped,
        assume_r1: how.assume_r1,
        chunk_budget: how.chunk_budget,
        map: how.map,
        progress: how.progress.clone(),
        range: None,
        states: Vec::new(),
        schemas: Vec::new(),
    })
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

    /// The log's time index ([`super::index`]): the one a ROS bag, an MCAP file or a rosbag2
    /// sqlite3 file carries (a bag's chunk infos, an MCAP summary's chunks, runs of a `.db3`'s
    /// row ids found through its timestamp index, [`super::index::own`]), else the index file
    /// kept for it ([`super::index::load`]); `None` when it has none (an MCAP file read as a
    /// stream, a bag or MCAP file whose chunks cannot each be read alone, a `.db3` of no
    /// messages or with timestamps that are not integers, a split rosbag2 bag, a log whose index
    /// was not yet written or no longer matches it).
    pub fn index(&self) -> Option<super::index::Index> {
        match self.format {
            Format::Rosbag => rosbag::index(&self.file, self.chunk_budget()),
            Format::Mcap => match &self.input {
                Source::Mapped(m) => mcap::index(m.bytes()),
                Source::Stream(_) => None,
            },
            Format::Rosbag2 => rosbag2_index(&self.file),
            _ => super::index::load(&self.file, self.format),
        }
    }

    /// The log whose [`Log::scan`] reads only the records that start in `range` (chunks of its
    /// time index, [`Log::index`]), starting there with the chunk's reader state; an error for
    /// a format without a time index ([`super::index::format_number`], [`super::index::own`]).
    pub fn with_range(mut self, range: super::index::Range) -> Result<Log, Error> {
        if super::index::format_number(self.format).is_none() && !super::index::own(self.format) {
            return Err(Error::Usage(format!(
                "{}: {} logs have no time index; read them whole",
                self.shown(),
                self.format.title()
            )));
        }
        if self.format == Format::Rosbag2 && is_bag_listing(&self.file) {
            return Err(Error::Usage(format!(
                "{}: a split rosbag2 bag has no time index; read it whole",
                self.shown()
            )));
        }
        if super::index::keeps_state(self.format) {
            // The reader's state at the range's start: the index's state messages before it.
            let idx = super::index::load(&self.file, self.format).ok_or_else(|| {
                Error::Input(format!(
                    "{}: its time index is gone or no longer matches the log (did the log change?); read it whole",
                    self.shown()
                ))
            })?;
            self.states = idx.states_before(range.start).to_vec();
            self.schemas = idx.schemas;
        }
        self.range = Some(range);
        Ok(self)
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
            chunk_budget: self.chunk_budget,
            map: self.map,
            progress: self.progress.clone(),
        }
    }

    /// [`Open::chunk_budget`], or its default.
    fn chunk_budget(&self) -> u64 {
        self.chunk_budget.unwrap_or(crate::formats::rosbag::DEFAULT_CHUNK_BUDGET)
    }

    /// Whether the scan offers its messages as recorded, ROS1-serialised ([`Samples::raw`]), with
    /// their definitions ([`Channel::ros1`](super::Channel::ros1)).
    pub fn passes_ros1(&self) -> bool {
        self.format == Format::Rosbag
    }

    /// Whether the log's clock is Unix time (ROS bags), not time since the log's start.
    pub fn utc(&self) -> bool {
        matches!(self.format, Format::Rosbag | Format::Mcap | Format::Rosbag2)
    }

    /// Summarises the log: header, record counts, time span, integrity findings (ROS bags: like
    /// `rosbag info`, with md5 verdicts). `msg_path`: ROS bag `.msg` directories for connections
    /// whose embedded definition is empty or wrong. Notes on how the file was read, which do not
    /// make it fail (a bag scanned without its index), are pushed to `notes`.
    pub fn info(self, msg_path: &[PathBuf], notes: &mut Vec<Fault>) -> Result<Info, Error> {
        let path = self.shown();
        let name = self.file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let stream = self.format == Format::RlogStream;
        let chunk_budget = self.chunk_budget();
        let input = self.input;
        let info = match self.format {
            Format::Usvlog => usvlog::info(input, &self.head, &path),
            Format::Rlog | Format::RlogStream => rlog::info(input, &path, stream, self.assume_r1),
            Format::Wpilog => wpilog::info(input.into_read(), &path, &name),
            Format::Ulog => ulog::info(input, &path, &name),
            Format::Dataflash => dataflash::info(input, &path, &name),
            Format::Mcap => mcap::Store::mcap(input, &path).and_then(|s| mcap::info(s, &path, &name, chunk_budget)),
            Format::Rosbag2 => {
                drop(input);
                rosbag2(&self.file, &path).and_then(|s| mcap::info(s, &path, &name, chunk_budget))
            }
            Format::Carla => carla::info(input, &path, &name),
            Format::Rosbag => {
                let mut said = Vec::new();
                let info = rosbag::info(input, &self.file, &path, msg_path, chunk_budget, &mut said);
                notes.extend(said.into_iter().map(|n| Fault::new(FaultKind::Decode, &path, n)));
                info
            }
            Format::Schema => schema::info(&schema_of(&self.schema), input, &path),
        };
        whole(self.mapped, &path)?;
        info
    }

    /// Reads the log into `out`, record by record (the engine of `logspec dump`, and of the
    /// Python package's iteration): everything before an error first, then the error.
    pub fn records<R: Records>(self, opts: &Options, out: &mut R) -> Result<(), Error> {
        let path = self.shown();
        if opts.frames.is_some() && self.format != Format::Carla {
            return Err(Error::Usage(format!("--frames applies to CARLA recordings; {path} has no frames")));
        }
        let ros_only = !opts.msg_path.is_empty() || opts.file_order;
        if ros_only && self.format != Format::Rosbag {
            return Err(Error::Usage(format!(
                "--msg-path and --file-order apply to ROS bags; {path} is {}",
                self.format.title()
            )));
        }
        let (select, stream) = (&opts.select, self.format == Format::RlogStream);
        let chunk_budget = self.chunk_budget();
        let input = self.input;
        let done = match self.format {
            Format::Usvlog => usvlog::records(input, &self.head, &path, select, out),
            Format::Rlog | Format::RlogStream => {
                rlog::records(input, &self.file, &path, stream, self.assume_r1, select, out)
            }
            Format::Wpilog => wpilog::records(input.into_read(), &self.file, &path, select, out),
            Format::Ulog => ulog::records(input, &path, select, out),
            Format::Dataflash => dataflash::records(input, &path, select, out),
            Format::Mcap => {
                mcap::Store::mcap(input, &path).and_then(|s| mcap::records(s, &path, chunk_budget, select, out))
            }
            Format::Rosbag2 => {
                drop(input);
                rosbag2(&self.file, &path).and_then(|s| mcap::records(s, &path, chunk_budget, select, out))
            }
            Format::Carla => carla::records(input, &path, opts.frames.clone(), select, out),
            Format::Rosbag => {
                let opts =
                    rosbag::DumpOptions { select, msg_path: &opts.msg_path, file_order: opts.file_order, chunk_budget };
                rosbag::dump(input, &self.file, &path, &opts, out)
            }
            Format::Schema => schema::records(&schema_of(&self.schema), input, &path, select, out),
        };
        whole(self.mapped, &path)?;
        done
    }

    /// Reads the samples of the channels and time window `select` keeps into `sink`, in file
    /// order (ROS bags: in time order): each channel announced ([`Samples::channel`]) before its
    /// first sample. Problems that do not stop the reading are [`Outcome::warnings`]; the one
    /// that ends it early is [`Outcome::fault`], after every sample before it.
    pub fn scan(self, select: &Select, sink: &mut dyn Samples) -> Result<Outcome, Error> {
        let path = self.shown();
        let stream = self.format == Format::RlogStream;
        let mut state = State::new(select, sink);
        let chunk_budget = self.chunk_budget();
        let input = self.input;
        let done = match self.format {
            Format::Usvlog => usvlog::scan(input, &self.head, &path, self.range, &mut state),
            Format::Rlog | Format::RlogStream => {
                let range = self.range.map(|r| (r, self.states, self.schemas));
                rlog::scan(input, &self.file, &path, stream, self.assume_r1, range, &mut state)
            }
            Format::Wpilog => {
                let range = self.range.map(|r| (r, self.states, self.schemas));
                wpilog::scan(input, &self.file, &path, range, &mut state)
            }
            Format::Ulog => ulog::scan(input, &path, self.range.map(|r| (r, self.states)), &mut state),
            Format::Dataflash => dataflash::scan(input, &path, self.range.map(|r| (r, self.states)), &mut state),
            Format::Mcap => {
                mcap::Store::mcap(input, &path).and_then(|s| mcap::scan(s, &path, chunk_budget, self.range, &mut state))
            }
            Format::Rosbag2 => {
                drop(input);
                rosbag2(&self.file, &path).and_then(|s| mcap::scan(s, &path, chunk_budget, self.range, &mut state))
            }
            Format::Carla => carla::scan(input, &path, self.range.map(|r| (r, self.states)), &mut state),
            Format::Rosbag => rosbag::scan(input, &self.file, &path, chunk_budget, self.range, &mut state),
            Format::Schema => schema::scan(&schema_of(&self.schema), input, &path, &mut state),
        };
        whole(self.mapped, &path)?;
        done?;
        state.finish(&path)
    }

    /// Writes an RLOG file (or captured stream) as a WPILib DataLog; a WPILOG input is copied
    /// record by record (byte-identical without filters; with channels or a time window in
    /// `select`, only the wanted records). `logspec convert FILE -o OUT.wpilog`.
    pub fn to_wpilog(self, output: &Path, select: &Select) -> Result<wpilog::Written, Error> {
        let path = self.shown();
        match self.format {
            Format::Wpilog => wpilog::copy(self.input.into_read(), &path, output, select),
            Format::Rlog | Format::RlogStream => {
                let stream = self.format == Format::RlogStream;
                wpilog::from_rlog(self.input.into_read(), &path, stream, self.assume_r1, output, select)
            }
            other => Err(Error::Usage(format!(
                "{path} is {}; only RLOG and WPILOG inputs can be written as .wpilog (write .mcap for the others)",
                other.title()
            ))),
        }
        .and_then(|written| whole(self.mapped, &path).map(|()| written))
    }

    /// The RLOG reader of an RLOG file or captured stream (`logspec rlog serve`); an error for a
    /// log of another format.
    pub fn into_rlog(self) -> Result<crate::formats::rlog::Reader<Box<dyn Read>>, Error> {
        let path = self.shown();
        let stream = match self.format {
            Format::Rlog => false,
            Format::RlogStream => true,
            other => return Err(Error::Input(format!("{path}: this is a {} file, not RLOG", other.title()))),
        };
        rlog::reader(self.input.into_read(), stream, self.assume_r1, &path).map_err(Error::Input)
    }
}

/// An error if a mapped file was truncated while it was read (the reader saw zeros from there on).
fn whole(mapped: Option<Arc<Mapped>>, path: &str) -> Result<(), Error> {
    match mapped.and_then(|m| m.truncated()) {
        None => Ok(()),
        Some(at) => Err(Error::at(Fault::at(path, at, None, format!(
            "{path}: the file was truncated while it was being read: its bytes from offset {at} on were gone, so what was read past that offset is not the file's"
        )))),
    }
}

/// The store of a rosbag2 log (`file`: its path; SQLite reads no stream).
#[cfg(feature = "sqlite")]
fn rosbag2(file: &Path, path: &str) -> Result<mcap::Store, Error> {
    if is_bag_listing(file) {
        mcap::Store::split(file, path)
    } else {
        mcap::Store::db3(file, path)
    }
}

/// Whether `file` is a rosbag2 bag's directory or its `metadata.yaml` (a split bag, read as one
/// log), by the file's first bytes.
#[cfg(feature = "sqlite")]
fn is_bag_listing(file: &Path) -> bool {
    if file.is_dir() {
        return true;
    }
    let mut head = [0u8; 28];
    let n = std::fs::File::open(file).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    head[..n].starts_with(BAG_METADATA)
}

/// The time index of a rosbag2 sqlite3 file (none for a split bag, whose files' row ids do not
/// make one order: it is read whole).
#[cfg(feature = "sqlite")]
fn rosbag2_index(file: &Path) -> Option<super::index::Index> {
    if is_bag_listing(file) {
        None
    } else {
        mcap::db3_index(file)
    }
}

/// Without the `sqlite` feature, a rosbag2 log has no time index.
#[cfg(not(feature = "sqlite"))]
fn rosbag2_index(_file: &Path) -> Option<super::index::Index> {
    None
}

/// Without the `sqlite` feature, no file is a split bag's listing (a rosbag2 log is refused).
#[cfg(not(feature = "sqlite"))]
fn is_bag_listing(_file: &Path) -> bool {
    false
}

/// Without the `sqlite` feature, a rosbag2 log is refused.
#[cfg(not(feature = "sqlite"))]
fn rosbag2(_file: &Path, path: &str) -> Result<mcap::Store, Error> {
    Err(Error::Input(format!(
        "{path}: a rosbag2 sqlite3 bag, which this build of logspec does not read (the library's `sqlite` feature)"
    )))
}

/// The schema of a [`Format::Schema`] log.
fn schema_of(schema: &Option<Arc<SchemaFormat>>) -> Arc<SchemaFormat> {
    Arc::clone(schema.as_ref().expect("a schema's log is detected with its schema"))
}
