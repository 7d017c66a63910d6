//! `logspec export --parquet OUT FILE...`: logs as one typed Parquet dataset, a sink of the
//! sample source. Each channel is a table, `OUT/<channel>/log=<name>/part-0.parquet`
//! (Hive-style partitions): columns typed from the IR ([`super::columns`]), row groups streamed so
//! that a log is never held in memory, files converted in parallel. docs/parquet.md.
//!
//! A log is read on one thread and its tables written by others: the reading thread fills the
//! tables' column builders and queues each full batch on its table; a writing thread
//! that is free takes the next table with queued batches and writes them (parquet's
//! `ArrowWriter`), one thread at a time per table, as many writing threads as the log has cores.
//! Where a row group ends depends on the table's own batches and on the reading thread's count of
//! the log's open data, never on the threads: the files are the same bytes on any number of cores.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use logspec::value::Value;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::logs::{find, Found, LogFile};
pub use crate::logs::{has_log_extension, NotExported, LOG_EXTENSIONS};
use crate::tables::{table_name, TableBuilder};
use logspec::log::Error;
use logspec::log::{Channel, DynVisit, Samples, Select, TryVisit};

/// A table's open row group is closed when its encoded size passes this.
const ROW_GROUP_BYTES: usize = 4 << 20;
/// ... or when the Arrow data written into it passes this: the writer holds each encoded page in a
/// buffer sized for the page's worst case (its Snappy output), so data that compresses well would
/// otherwise buffer many times its encoded size; and a byte of Arrow data may take four in a page
/// (`u8` and `u16` are stored as INT32). A `uint8[]` of repeated bytes (the 400,000 messages of
/// issue 34's overlapping bag) took 159 MB at 4 MiB encoded; 50 MB with this.
const ROW_GROUP_DATA: usize = 2 << 20;
/// A column's page is closed when its data passes this.
const PAGE_BYTES: usize = 128 << 10;
/// The open row groups of one log together hold at most this much Arrow data; past it the table
/// that holds the most has its row group closed. The reading thread counts it, in the order of the
/// reading, so that where row groups end depends on the log alone, not on which writing thread
/// encodes which table or how fast. (The writers' buffers take about as much again: the Snappy
/// output of a page is allocated for its worst case, and float pages barely compress.)
const LOG_DATA: usize = 12 << 20;
/// The Arrow data of a log queued for its writing threads: past it, the reading thread waits.
/// Enough to keep every thread busy (the reading thread goes on while a writing thread closes a
/// row group or writes a file), little enough that memory stays flat (a batch is at most
/// [`crate::tables::BATCH_BYTES`] of values). The 200 MB USVLOG input on two cores, alternated:
/// 0.591 s with 8 MiB, 0.622 s with 4 MiB (the peak RSS 3-6 MB less); BENCHMARKS.md.
const QUEUE_DATA: usize = 8 << 20;
/// The most writing threads of one log: past a few, the reading thread bounds the log.
const MAX_WRITERS: usize = 4;

/// The compression of the Parquet pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    /// Snappy: fast, and what Spark writes by default.
    #[default]
    Snappy,
    /// LZ4 (the LZ4_RAW codec).
    Lz4,
    /// No compression.
    None,
}

impl Codec {
    fn parquet(self) -> Compression {
        match self {
            Codec::Snappy => Compression::SNAPPY,
            Codec::Lz4 => Compression::LZ4_RAW,
            Codec::None => Compression::UNCOMPRESSED,
        }
    }
}

/// What `export --parquet` was asked to do.
pub struct Options {
    pub out: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub select: Select,
    /// How each log is opened (`--format`, `--schema`, `--assume-r1`).
    pub input: logspec::log::Open,
    pub jobs: usize,
    pub codec: Codec,
}

/// What converting one log gave.
#[derive(Debug)]
pub struct Done {
    /// The log's partition name (`log=<name>`).
    pub log: String,
    /// The file, as shown in messages.
    pub file: String,
    pub tables: usize,
    pub rows: u64,
    pub warnings: Vec<String>,
    /// The problem that stopped the log early (its complete rows are written), or that kept it
    /// from being read at all.
    pub error: Option<String>,
}

/// What [`export`] wrote.
#[derive(Debug)]
pub struct Exported {
    /// Each log, in the order of the inputs.
    pub logs: Vec<Done>,
    /// The inputs that are not logs of a format logspec reads: every file named on the command
    /// line (or by a pattern), and every file with a log extension ([`LOG_EXTENSIONS`]) found in
    /// a directory, whose format was not recognised. Nothing of them is written.
    pub not_exported: Vec<NotExported>,
    /// Files without a log extension found in directories that are not logs either (notes,
    /// expected outputs, `.msg` files): passed over, only counted.
    pub passed_over: usize,
    /// The table folders in the dataset now.
    pub tables: usize,
}

/// The kind of warning ([`logspec::log::fault::Faults`]) of a table whose name was shortened.
const LONG_NAME: &str = "tables whose names are too long for a folder name";

/// Converts the logs of `opts.inputs` into the Parquet dataset `opts.out`, `opts.jobs` logs at
/// a time: each log's complete rows are written even when it fails part-way.
pub fn export(opts: Options) -> Result<Exported, Error> {
    let Found { logs: jobs, not_logs: not_exported, passed_over } = find(&opts.inputs, &opts.input, Some(&opts.out))?;
    if jobs.is_empty() {
        let why: Vec<String> = not_exported.iter().map(|n| format!("{}: {}", n.file, n.reason)).collect();
        return Err(Error::Input(format!("no log to export: {}", why.join("; "))));
    }
    crate::output::create_dir(&opts.out)
        .map_err(|e| Error::Input(format!("{}: cannot create: {e}", opts.out.display())))?;
    remove_stale(&opts.out, &jobs);
    keep_freed_memory();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Done>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let workers = opts.jobs.clamp(1, jobs.len().max(1));
    // Each log is read on one thread; its tables are written by as many threads as its share of
    // the cores (the reading thread keeps a core only about half busy). `LOGSPEC_THREADS` sets
    // the cores; the files are the same bytes on any number.
    let cores = logspec::log::threads();
    let writers = (cores / workers).clamp(1, MAX_WRITERS);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let done = convert(&opts, job, writers);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(done);
                }
            });
        }
    });
    let results = results.into_inner().map_err(|_| Error::Input("a conversion thread panicked".into()))?;
    Ok(Exported {
        logs: results.into_iter().flatten().collect(),
        not_exported,
        passed_over,
        tables: count_tables(&opts.out),
    })
}

/// Removes the temporary files that killed runs left in the partitions of these logs, and the
/// partition and table folders left empty ([`crate::output::remove_stale_parquet`]).
fn remove_stale(out: &Path, jobs: &[LogFile]) {
    let Ok(tables) = std::fs::read_dir(out) else { return };
    for t in tables.filter_map(Result::ok).filter(|t| t.file_type().is_ok_and(|f| f.is_dir())) {
        for job in jobs {
            crate::output::remove_stale_parquet(&t.path().join(format!("log={}", job.log)));
        }
        // An empty table folder (a run killed before it made the partition's).
        let _ = std::fs::remove_dir(t.path());
    }
}

/// The number of table folders under the output directory.
fn count_tables(out: &Path) -> usize {
    std::fs::read_dir(out).map_or(0, |d| d.filter_map(Result::ok).filter(|e| e.path().is_dir()).count())
}

/// A name as a path component and Hive partition value: `/` and characters that engines or file
/// systems treat specially are percent-encoded (Spark decodes them in partition values).
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-' || (c == '.' && i > 0);
        if keep {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}

/// A channel name as its table folder: a leading `/` dropped (ROS topics, RLOG keys), the other
/// `/` as `.` (`/imu/data` is `imu.data`), a `.` of the name as `%2E`, the rest as [`escape`].
/// A name too long for the file system is shortened ([`crate::names::fit`]); the file's
/// `logspec.table` metadata keeps it whole.
pub fn table_dir(channel: &str) -> String {
    crate::names::fit(&escaped_table(channel), 0)
}

/// [`table_dir`] before it is fitted to the file system's limit.
fn escaped_table(channel: &str) -> String {
    let name = channel.strip_prefix('/').unwrap_or(channel);
    name.split('/').map(|part| escape(part).replace('.', "%2E")).collect::<Vec<_>>().join(".")
}

/// Converts one log: read on this thread, its tables written by `writers` (at least one) others
/// ([`write_tables`]).
fn convert(opts: &Options, job: &LogFile, writers: usize) -> Done {
    let handoff = Handoff::new();
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..writers).map(|_| s.spawn(|| write_tables(&handoff))).collect();
        let mut done = {
            // The writing threads end once the reading is over, however it ends.
            let _ends = Ends(&handoff);
            read_log(opts, job, &handoff)
        };
        let mut rows = 0;
        let mut closing: Option<(usize, Error)> = None;
        for thread in threads {
            let (n, failed) = match thread.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            rows += n;
            // The first table's error, as one writing thread would have met them.
            if let Some((i, e)) = failed {
                if closing.as_ref().is_none_or(|(first, _)| i < *first) {
                    closing = Some((i, e));
                }
            }
        }
        // A batch that failed to be written stopped the reading where it was noticed; one noticed
        // only now (the reading had ended) is the log's error as well.
        if let Some(e) = handoff.lock().ok().and_then(|mut q| q.error.take()) {
            done.error = Some(e.to_string());
        }
        match closing {
            None => done.rows = rows,
            Some((_, e)) => {
                done.tables = 0;
                done.error = Some(match done.error.take() {
                    Some(first) => format!("{first}; then {e}"),
                    None => e.to_string(),
                })
            }
        }
        done
    })
}

/// The reading half of [`convert`]: the log's samples into its tables' builders, each full batch
/// queued for the writing threads, then the rest of every table and the order to close it.
fn read_log(opts: &Options, job: &LogFile, handoff: &Handoff) -> Done {
    let shown = job.file.display().to_string();
    let mut sink = LogSink {
        out: opts.out.clone(),
        log: job.log.clone(),
        file: job.file.file_name().map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned()),
        format: String::new(),
        codec: opts.codec,
        utc: false,
        origin_ns: 0,
        by_channel: Vec::new(),
        by_table: HashMap::new(),
        tables: Vec::new(),
        open_data: 0,
        warnings: Vec::new(),
        long_names: Default::default(),
        handoff,
    };
    let mut read = || -> Result<logspec::log::scan::Outcome, Error> {
        // A regular file through a memory map where the caller asks for one (the command line
        // does: `Open::map`), else through a buffer; a rosbag2 bag's directory as a bag.
        let d = logspec::log::open(&job.file, &opts.input)?;
        sink.format = d.name().to_string();
        sink.utc = d.utc();
        d.scan(&opts.select, &mut sink)
    };
    let outcome = read();
    let mut done =
        Done { log: job.log.clone(), file: shown.clone(), tables: 0, rows: 0, warnings: Vec::new(), error: None };
    let (warnings, error) = match outcome {
        Ok(o) => (o.warnings, o.error),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    done.warnings = warnings;
    done.error = error;
    done.tables = sink.finish();
    done.warnings.extend(std::mem::take(&mut sink.warnings));
    done.warnings.extend(sink.long_names.more(&format!("log={}", job.log)));
    done
}

/// What the reading thread queues on a table for the writing threads, in the order of the reading.
enum Msg {
    /// A full batch.
    Batch(RecordBatch),
    /// The order to close the open row group (the reading thread's count of its data).
    CloseGroup,
    /// The last rows (or the error that making their batch gave): write them and the footer, and
    /// put the file in place.
    Close(Result<Option<RecordBatch>, Error>),
}

/// The tables of a log between its reading thread and its writing threads.
struct Handoff {
    queued: Mutex<Queued>,
    /// Writing threads wait here for a table with queued messages, or the end of the reading.
    work: Condvar,
    /// The reading thread waits here for the queued data to fall under [`QUEUE_DATA`].
    room: Condvar,
}

struct Queued {
    tables: Vec<Queue>,
    /// The tables with queued messages and no writing thread, in the order they got them.
    ready: VecDeque<usize>,
    /// The Arrow data of the queued batches.
    data: usize,
    /// Whether the reading thread may queue more.
    reading: bool,
    /// A writing thread stopped (panicked): the reading stops.
    stopped: bool,
    /// The first error of a writing thread while the log is read, for the reading thread to
    /// stop at (the messages after it are still written: every row the reading made is kept, as
    /// when it stopped at once).
    error: Option<Error>,
}

/// One table's messages, and its file while no writing thread has it.
struct Queue {
    msgs: VecDeque<(Msg, usize)>,
    file: Option<Box<TableWriter>>,
    /// Whether it is in [`Queued::ready`] or a writing thread has it.
    taken: bool,
}

impl Handoff {
    fn new() -> Handoff {
        let queued =
            Queued { tables: Vec::new(), ready: VecDeque::new(), data: 0, reading: true, stopped: false, error: None };
        Handoff { queued: Mutex::new(queued), work: Condvar::new(), room: Condvar::new() }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Queued>, Error> {
        self.queued.lock().map_err(|_| stopped())
    }

    /// A new table, numbered by the tables before it.
    fn add(&self, file: TableWriter) -> Result<(), Error> {
        self.lock()?.tables.push(Queue { msgs: VecDeque::new(), file: Some(Box::new(file)), taken: false });
        Ok(())
    }

    /// Queues a message on table `i`, which hands on `data` bytes of Arrow data; first waits while
    /// the queued data is over [`QUEUE_DATA`]. Fails only when a writing thread stopped.
    fn send(&self, i: usize, msg: Msg, data: usize) -> Result<(), Error> {
        let mut q = self.lock()?;
        while q.data > QUEUE_DATA && !q.stopped {
            q = self.room.wait(q).map_err(|_| stopped())?;
        }
        if q.stopped {
            return Err(stopped());
        }
        q.data += data;
        let t = &mut q.tables[i];
        t.msgs.push_back((msg, data));
        if !t.taken {
            t.taken = true;
            q.ready.push_back(i);
            self.work.notify_one();
        }
        Ok(())
    }

    /// The reading is over: the writing threads end once every queue is empty.
    fn end(&self) {
        if let Ok(mut q) = self.queued.lock() {
            q.reading = false;
        }
        self.work.notify_all();
    }
}

fn stopped() -> Error {
    Error::Input("a Parquet writing thread stopped".into())
}

/// Ends the reading of a log when dropped ([`Handoff::end`]).
struct Ends<'a>(&'a Handoff);

impl Drop for Ends<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Marks a writing thread stopped when it unwinds, so that the reading thread does not wait on it.
struct Stops<'a>(&'a Handoff);

impl Drop for Stops<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Ok(mut q) = self.0.queued.lock() {
                q.stopped = true;
            }
            self.0.room.notify_all();
        }
    }
}

/// A writing half of [`convert`]: takes the next table with queued messages and writes them, until
/// the reading is over and every queue is empty. Returns the rows in the files put in place, and
/// the first error closing them gave (with its table's number); an error while the log is read
/// goes to [`Queued::error`].
fn write_tables(handoff: &Handoff) -> (u64, Option<(usize, Error)>) {
    yield_to_the_reading_thread();
    let _stops = Stops(handoff);
    let mut rows = 0;
    let mut closing = None;
    let Ok(mut q) = handoff.queued.lock() else { return (rows, closing) };
    loop {
        let Some(i) = q.ready.pop_front() else {
            if !q.reading {
                break;
            }
            match handoff.work.wait(q) {
                Ok(next) => q = next,
                Err(_) => return (rows, closing),
            }
            continue;
        };
        let mut file = q.tables[i].file.take();
        // The table's messages, one at a time, until it has none.
        while let Some((msg, data)) = q.tables[i].msgs.pop_front() {
            drop(q);
            let failed = match msg {
                Msg::Batch(batch) => file.as_deref_mut().map_or(Ok(()), |t| {
                    // A row group whose encoded size passes the limit is closed here: that
                    // depends on the table's own batches alone.
                    t.write(&batch).and_then(|()| match t.in_progress() > ROW_GROUP_BYTES {
                        true => t.close_row_group(),
                        false => Ok(()),
                    })
                }),
                Msg::CloseGroup => file.as_deref_mut().map_or(Ok(()), TableWriter::close_row_group),
                Msg::Close(batch) => {
                    match file.take().map(|t| t.close(batch)) {
                        Some(Ok(n)) => rows += n,
                        Some(Err(e)) if closing.as_ref().is_none_or(|(first, _)| i < *first) => closing = Some((i, e)),
                        _ => {}
                    }
                    Ok(())
                }
            };
            let Ok(next) = handoff.queued.lock() else { return (rows, closing) };
            q = next;
            if let Err(e) = failed {
                q.error.get_or_insert(e);
            }
            q.data -= data;
            handoff.room.notify_one();
        }
        let t = &mut q.tables[i];
        t.file = file;
        t.taken = false;
    }
    (rows, closing)
}

/// The tables of one log, as the reading thread fills them.
struct LogSink<'a> {
    out: PathBuf,
    log: String,
    /// The source file's name, for the file metadata.
    file: String,
    format: String,
    codec: Codec,
    /// Whether the log's clock is Unix time (ROS bags), so `time` carries the UTC time zone.
    utc: bool,
    origin_ns: u64,
    /// Table index of each channel id.
    by_channel: Vec<usize>,
    /// Table index by table name (a channel, or a group of channels).
    by_table: HashMap<String, usize>,
    tables: Vec<TableRows>,
    /// The Arrow data of the tables' open row groups ([`LOG_DATA`]).
    open_data: usize,
    warnings: Vec<String>,
    /// Table names too long for a folder name (shortened; counted, the first few warned about).
    long_names: logspec::log::fault::Faults,
    handoff: &'a Handoff,
}

/// A table's rows not yet handed to a writing thread.
struct TableRows {
    name: String,
    /// The table's temporary file, as named in messages.
    tmp: PathBuf,
    /// The rows not yet encoded ([`super::tables`], shared with the Python package).
    rows: TableBuilder,
    /// The Arrow data handed on since the table's row group was last closed ([`ROW_GROUP_DATA`]).
    open_data: usize,
}

/// A table's file, on the writing thread.
struct TableWriter {
    /// `OUT/<table>/`.
    table: PathBuf,
    /// `OUT/<table>/log=<log>/`.
    dir: PathBuf,
    /// Written under a hidden name, renamed to `part-0.parquet` when complete.
    tmp: PathBuf,
    props: WriterProperties,
    schema: arrow_schema::SchemaRef,
    /// Opened with the table's first full batch (or at the end): a log of 65,535 keys of a few
    /// values each holds no open file or writer per key while it is read.
    writer: Option<ArrowWriter<File>>,
    written: u64,
    /// The Arrow data written into the open row group (what closing it frees, at least).
    open_data: usize,
}

impl LogSink<'_> {
    /// A table's rows, and its file for the writing threads.
    fn new_table(&mut self, name: &str, channel: &Channel) -> (TableRows, TableWriter) {
        let rows = TableBuilder::new(channel, self.utc);
        let mut meta = vec![
            kv("logspec.version", env!("CARGO_PKG_VERSION")),
            kv("logspec.source", &self.file),
            kv("logspec.format", &self.format),
            kv("logspec.log", &self.log),
            kv("logspec.table", name),
            kv("logspec.type", &channel.schema_name),
        ];
        meta.extend(rows.meta.iter().map(|(k, v)| kv(k, v)));
        let schema = rows.schema.clone();
        let escaped = escaped_table(name);
        let folder = crate::names::fit(&escaped, 0);
        if folder != escaped {
            let note = || {
                format!("log={}: table `{name}` is in the folder {folder} (its name is too long for a folder name; each file's `logspec.table` metadata keeps it)", self.log)
            };
            if let Some(w) = self.long_names.note(LONG_NAME, note) {
                self.warnings.push(w);
            }
        }
        let table = self.out.join(&folder);
        let dir = table.join(format!("log={}", self.log));
        let tmp = crate::output::parquet_temp(&dir);
        // Dictionary encoding costs a hash per value and pays off only for repeated text
        // (frame ids, names): on for string columns outside lists, off for the rest.
        let mut props = WriterProperties::builder()
            .set_compression(self.codec.parquet())
            .set_key_value_metadata(Some(meta))
            .set_dictionary_enabled(false)
            // Each column buffers a page before encoding it into the row group: small pages keep
            // a log of many tables and columns within its memory budget.
            .set_data_page_size_limit(PAGE_BYTES)
            // Min/max per row group (what engines prune by); no per-page index, which the
            // writer would hold for the whole file.
            .set_statistics_enabled(EnabledStatistics::Chunk);
        for path in string_paths(schema.fields(), &mut Vec::new()) {
            props = props.set_column_dictionary_enabled(ColumnPath::new(path), true);
        }
        let props = props.build();
        let file = TableWriter { table, dir, tmp: tmp.clone(), props, schema, writer: None, written: 0, open_data: 0 };
        (TableRows { name: name.to_string(), tmp, rows, open_data: 0 }, file)
    }

    /// Hands a table's buffered rows to the writing threads, and closes row groups to keep the
    /// log's memory bounded; stops at an error a writing thread had.
    fn flush(&mut self, i: usize) -> Result<(), Error> {
        if let Some(e) = self.handoff.lock()?.error.take() {
            return Err(e);
        }
        let t = &mut self.tables[i];
        let Some(batch) = t.rows.batch().map_err(|e| Error::Input(format!("{}: {e}", t.tmp.display())))? else {
            return Ok(());
        };
        let data = batch.get_array_memory_size();
        self.handoff.send(i, Msg::Batch(batch), data)?;
        self.tables[i].open_data += data;
        self.open_data += data;
        if self.tables[i].open_data > ROW_GROUP_DATA {
            self.close_group(i)?;
        }
        if self.open_data > LOG_DATA {
            let most = (0..self.tables.len()).max_by_key(|t| self.tables[*t].open_data).unwrap_or(i);
            self.close_group(most)?;
        }
        Ok(())
    }

    /// Orders table `i`'s open row group closed.
    fn close_group(&mut self, i: usize) -> Result<(), Error> {
        self.open_data -= std::mem::take(&mut self.tables[i].open_data);
        self.handoff.send(i, Msg::CloseGroup, 0)
    }

    /// Hands the rest of every table to the writing threads, which write it and put the file in
    /// place; returns the number of tables.
    fn finish(&mut self) -> usize {
        for (i, mut t) in std::mem::take(&mut self.tables).into_iter().enumerate() {
            if t.rows.misfits > 0 {
                self.warnings.push(format!(
                    "log={}: {}: {} value(s) did not fit the column types of the channel's first description and were written as null",
                    self.log, t.name, t.rows.misfits
                ));
            }
            let batch = t.rows.batch().map_err(|e| Error::Input(format!("{}: {e}", t.tmp.display())));
            if self.handoff.send(i, Msg::Close(batch), 0).is_err() {
                break;
            }
        }
        self.by_table.len()
    }
}

/// The Parquet column paths of the string leaves of some fields, not inside lists.
fn string_paths(fields: &arrow_schema::Fields, prefix: &mut Vec<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for f in fields {
        prefix.push(f.name().clone());
        match f.data_type() {
            DataType::Utf8 => out.push(prefix.clone()),
            DataType::Struct(inner) => out.extend(string_paths(inner, prefix)),
            _ => {}
        }
        prefix.pop();
    }
    out
}

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue::new(key.to_string(), value.to_string())
}

impl TableWriter {
    /// The encoded size of the open row group.
    fn in_progress(&self) -> usize {
        self.writer.as_ref().map_or(0, ArrowWriter::in_progress_size)
    }

    /// The table's writer, its temporary file created the first time.
    fn writer(&mut self) -> Result<&mut ArrowWriter<File>, Error> {
        if self.writer.is_none() {
            let (table, dir, tmp) = (&self.table, &self.dir, &self.tmp);
            let file = crate::output::create_temp(|| {
                // The folders this run makes go with the temporary file when it is removed (Ctrl-C).
                let made: Vec<PathBuf> = [table, dir].into_iter().filter(|d| !d.exists()).cloned().collect();
                std::fs::create_dir_all(dir)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: cannot create: {e}", dir.display())))?;
                let file = File::create(tmp)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: cannot create: {e}", tmp.display())))?;
                Ok((file, tmp.clone(), made))
            })
            .map_err(|e| Error::Input(e.to_string()))?;
            let writer = ArrowWriter::try_new(file, self.schema.clone(), Some(self.props.clone()))
                .map_err(|e| Error::Input(format!("{}: {e}", self.tmp.display())))?;
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("opened above"))
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let tmp = self.tmp.display().to_string();
        self.writer()?.write(batch).map_err(|e| Error::Input(format!("{tmp}: {e}")))?;
        self.written += batch.num_rows() as u64;
        self.open_data += batch.get_array_memory_size();
        Ok(())
    }

    fn close_row_group(&mut self) -> Result<(), Error> {
        // What the open row group holds: its encoded size, or the buffers of data that compresses well.
        let Some(writer) = self.writer.as_mut() else { return Ok(()) };
        let size = writer.in_progress_size().max(self.open_data);
        writer.flush().map_err(|e| Error::Input(format!("{}: {e}", self.tmp.display())))?;
        self.open_data = 0;
        // Every so many bytes of closed row groups (of any log: the allocator is the process's).
        let closed = CLOSED_BYTES.fetch_add(size, Ordering::Relaxed) + size;
        if closed >= TRIM_BYTES {
            CLOSED_BYTES.store(0, Ordering::Relaxed);
            release_free_memory();
        }
        Ok(())
    }

    /// Writes the last rows and the footer, then renames the file to `part-0.parquet`. The
    /// temporary file is removed when that fails.
    fn close(self, last: Result<Option<RecordBatch>, Error>) -> Result<u64, Error> {
        let tmp = self.tmp.clone();
        let done = self.write_and_rename(last);
        if done.is_err() && std::fs::remove_file(&tmp).is_ok() {
            crate::output::forget_temp(&tmp);
        }
        done
    }

    fn write_and_rename(mut self, last: Result<Option<RecordBatch>, Error>) -> Result<u64, Error> {
        if let Some(batch) = last? {
            self.write(&batch)?;
        }
        let tmp = self.tmp.display().to_string();
        self.writer()?;
        let writer = self.writer.take().expect("opened above");
        writer.close().map_err(|e| Error::Input(format!("{tmp}: {e}")))?;
        let part = self.dir.join("part-0.parquet");
        crate::output::persist_temp(&self.tmp, || std::fs::rename(&self.tmp, &part))
            .map_err(|e| Error::Input(format!("{}: cannot rename to {}: {e}", self.tmp.display(), part.display())))?;
        Ok(self.written)
    }
}

impl Samples for LogSink<'_> {
    fn origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
    }

    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.by_channel.len());
        let (tables, by_table) = (&self.tables, &self.by_table);
        let name = table_name(channel, |n| by_table.get(n).map(|i| tables[*i].rows.schema_name.as_str()));
        let i = match self.by_table.get(&name) {
            Some(i) => *i,
            None => {
                let (rows, file) = self.new_table(&name, channel);
                self.handoff.add(file)?;
                self.tables.push(rows);
                self.by_table.insert(name, self.tables.len() - 1);
                self.tables.len() - 1
            }
        };
        self.by_channel.push(i);
        Ok(())
    }

    fn record(&mut self, id: usize, t_ns: u64, payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        let i = self.by_channel[id];
        if self.tables[i].rows.record(t_ns, self.origin_ns, payload, value) {
            self.flush(i)?;
        }
        Ok(())
    }

    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        let i = self.by_channel[id];
        if self.tables[i].rows.visit(t_ns, self.origin_ns, value) {
            self.flush(i)?;
        }
        Ok(())
    }

    fn try_visit(&mut self, id: usize, t_ns: u64, value: &dyn TryVisit) -> Result<bool, Error> {
        let i = self.by_channel[id];
        match self.tables[i].rows.try_visit(t_ns, self.origin_ns, value) {
            Some(full) => {
                if full {
                    self.flush(i)?;
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        let i = self.by_channel[id];
        if self.tables[i].rows.sample(t_ns, self.origin_ns, value) {
            self.flush(i)?;
        }
        Ok(())
    }

    fn rlog(&mut self, id: usize, t_ns: u64, value: &logspec::formats::rlog::ValueRef<'_>) -> Result<bool, Error> {
        let i = self.by_channel[id];
        match self.tables[i].rows.rlog(t_ns, self.origin_ns, value) {
            Some(full) => {
                if full {
                    self.flush(i)?;
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Bytes of row groups closed since the allocator last gave memory back ([`release_free_memory`]).
static CLOSED_BYTES: AtomicUsize = AtomicUsize::new(0);
/// Free memory is given back after this many bytes of closed row groups: often enough that
/// what piles up in between stays small, seldom enough that the pages given back and taken
/// again cost little (trimming after every row group took 30% more CPU time).
const TRIM_BYTES: usize = 32 << 20;

/// Keeps the memory that encoding frees and takes again (page buffers of a few hundred KB, the
/// column chunks of a row group) in the allocator, instead of giving it back to the system at
/// every free and faulting it in again: glibc maps each allocation past its mmap threshold
/// apart (unmapped when freed, re-faulted when taken again), and returns a freed top of its
/// arenas past its trim threshold at once. Both raised, the kernel's share of an export's CPU
/// time fell by about half (BENCHMARKS.md, "Parquet export"); the resident size stays flat, as
/// [`release_free_memory`] gives the free memory back every [`TRIM_BYTES`] of closed row groups.
/// Process-wide, set once: the export is the command that runs.
// A call into the C library (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only sets allocator parameters; it is thread-safe.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 8 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
        });
    }
}

/// Gives the memory freed by closed row groups back to the system. glibc keeps freed pages
/// mapped in its arenas, and the row groups' pages, freed between longer-lived allocations (the
/// file's metadata as it grows), would otherwise add to the resident size a little more with
/// every row group: peak RSS grew with the input (51 MB for 50 MB of USVLOG, 70 MB for 400 MB;
/// trimmed, it is flat). BENCHMARKS.md.
// A call into the C library (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator to the system; it is
    // thread-safe and touches no memory that is in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How much lower than the reading thread's the writing threads' priority is (Linux's per-thread
/// nice value): the reading thread bounds a log, and when a log's threads outnumber the cores
/// (one reading and two writing on two cores) the scheduler then runs it first, rather than
/// letting a writing thread, which waits on it for batches soon after, take its core. One
/// core to two, alternated on the 200 MB USVLOG input: 0.602-0.611 s against 0.624-0.664 s
/// at the same priority (BENCHMARKS.md, "Parquet export").
const WRITER_NICE: i32 = 6;

/// Makes the calling writing thread a batch thread (`SCHED_BATCH`: one that does not take a
/// running thread's core when it wakes) and lowers its priority by [`WRITER_NICE`] (Linux;
/// elsewhere nothing). A writing thread woken for a batch took the reading thread's core 13
/// times in one export of the 200 MB USVLOG input (19 ms of it); as a batch thread, never
/// (BENCHMARKS.md, "Tables queued for whichever writing thread is free"). A failure changes
/// nothing but the speed, and is not reported.
// Calls into the C library (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
fn yield_to_the_reading_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; sched_setscheduler with a thread id sets that thread's
    // policy (SCHED_BATCH takes priority 0 and no privilege), and setpriority with PRIO_PROCESS
    // and a thread id its nice value (Linux's threads each have one); neither touches memory
    // but the `sched_param` read.
    unsafe {
        let tid = libc::gettid();
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(tid, libc::SCHED_BATCH, &param);
        let now = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, now.saturating_add(WRITER_NICE));
    }
}
