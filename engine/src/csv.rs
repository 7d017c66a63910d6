//! A log as CSV (`logspec export --csv`): one file per channel with units in the column names
//! ([`per_channel`]), or one time-aligned table resampled at a fixed rate ([`aligned`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use logspec::log::{Channel, Error, Log, Outcome, Samples, Select};
use logspec::value::Value;

use crate::output::OutFile;

/// A file [`per_channel`] wrote.
#[derive(Debug)]
pub struct CsvFile {
    pub channel: String,
    pub path: PathBuf,
    /// Values that did not fit the columns of the channel's first sample (its shape changed),
    /// left out.
    pub dropped: u64,
}

/// What [`per_channel`] wrote.
#[derive(Debug)]
pub struct PerChannelWritten {
    pub files: Vec<CsvFile>,
    pub outcome: Outcome,
}

/// Writes one CSV file per channel of the log at `file` into `dir` (created if missing):
/// `t [s]` and every column, units in the headers. From a file, a first pass finds every column
/// of every channel (an RLOG array can grow); from standard input (`-`), a channel's columns are
/// those of its first sample. `open` opens the log for each pass.
pub fn per_channel(
    file: &Path,
    dir: &Path,
    open: impl Fn() -> Result<Log, Error>,
    select: &Select,
) -> Result<PerChannelWritten, Error> {
    crate::output::create_dir(dir).map_err(|e| Error::Input(format!("{}: cannot create: {e}", dir.display())))?;
    let scan = if file.as_os_str() == "-" {
        None
    } else {
        let mut scan = Scan::default();
        open()?.scan(select, &mut scan)?;
        Some(scan)
    };
    let known = scan.map(|s| s.channels.into_iter().map(|(_, cols)| cols).collect());
    let mut sink = PerChannel {
        dir: dir.to_path_buf(),
        input: file.to_path_buf(),
        channels: Vec::new(),
        names: BTreeMap::new(),
        known,
    };
    let outcome = open()?.scan(select, &mut sink)?;
    let files = sink.finish()?;
    Ok(PerChannelWritten { files, outcome })
}

/// What [`aligned`] wrote.
#[derive(Debug)]
pub struct AlignedWritten {
    pub path: PathBuf,
    pub rows: u64,
    pub outcome: Outcome,
}

/// Writes `dir/aligned.csv`: the log resampled at `rate` rows per second, each row the last
/// value of every column at or before its time, columns named `CHANNEL.COLUMN` (a topic with two
/// publishers gets `TOPIC@CALLERID.COLUMN` for each). Reads the log twice, so it needs a file.
pub fn aligned(
    file: &Path,
    dir: &Path,
    open: impl Fn() -> Result<Log, Error>,
    select: &Select,
    rate: f64,
) -> Result<AlignedWritten, Error> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(Error::Usage(format!("--aligned: the rate must be a positive number, not {rate}")));
    }
    if file.as_os_str() == "-" {
        return Err(Error::Usage("--aligned reads the file twice, so it needs a path, not `-`".into()));
    }
    crate::output::create_dir(dir).map_err(|e| Error::Input(format!("{}: cannot create: {e}", dir.display())))?;
    // Pass 1: every column and the time span.
    let mut scan = Scan::default();
    open()?.scan(select, &mut scan)?;
    let path = dir.join("aligned.csv");
    let mut sink = Aligned::new(&scan, rate, &path, file)?;
    let outcome = open()?.scan(select, &mut sink)?;
    let rows = sink.finish()?;
    Ok(AlignedWritten { path, rows, outcome })
}

/// A CSV cell: quoted when it holds a comma, quote or line break.
fn cell(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// A column header: the name and, when the schema gives one, the unit (`x [m]`).
fn header(channel: &Channel, column: &str) -> String {
    match channel.unit(column) {
        Some(u) => format!("{column} [{u}]"),
        None => column.to_string(),
    }
}

/// Seconds with nanosecond precision and no float noise.
fn seconds(t_ns: u64) -> String {
    let s = format!("{}.{:09}", t_ns / 1_000_000_000, t_ns % 1_000_000_000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Input(format!("{}: cannot write: {e}", path.display()))
}

/// One file per channel, with the columns found by a first pass or those of its first sample.
struct PerChannel {
    dir: PathBuf,
    /// The log, which no output may be.
    input: PathBuf,
    channels: Vec<ChannelFile>,
    /// File names in use, to keep two channels from sharing one.
    names: BTreeMap<String, usize>,
    /// Every channel's columns, when a first pass found them.
    known: Option<Vec<Vec<String>>>,
}

struct ChannelFile {
    name: String,
    path: PathBuf,
    out: BufWriter<OutFile>,
    channel: Channel,
    columns: Option<Vec<String>>,
    /// Each column's place in `columns`, by name (a sample's values found in one look each).
    index: HashMap<String, usize>,
    /// For each column, the sample's value in it (an index into the sample's leaves).
    cells: Vec<Option<usize>>,
    dropped: u64,
    line: String,
}

impl PerChannel {
    fn file_name(&mut self, channel: &str) -> String {
        let mut base: String = channel
            .trim_start_matches('/')
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
            .collect();
        // A leading dot would hide the file (`/.schema/struct:Pose`): it becomes `_`.
        let dots = base.len() - base.trim_start_matches('.').len();
        base.replace_range(..dots, &"_".repeat(dots));
        if base.is_empty() {
            base = "channel".into();
        }
        // Room for `_N.csv` with a counter of up to 10 digits.
        let base = crate::names::fit(&base, "_".len() + 10 + ".csv".len());
        let n = self.names.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            format!("{base}.csv")
        } else {
            format!("{base}_{n}.csv")
        }
    }

    /// Flushes every file.
    fn finish(self) -> Result<Vec<CsvFile>, Error> {
        let mut done = Vec::new();
        for f in self.channels {
            let file = f.out.into_inner().map_err(|e| io_err(&f.path)(e.into_error()))?;
            file.commit()?;
            done.push(CsvFile { channel: f.name, path: f.path, dropped: f.dropped });
        }
        Ok(done)
    }
}

impl Samples for PerChannel {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.channels.len());
        let name = self.file_name(&channel.name);
        let path = self.dir.join(name);
        let file = OutFile::create(&path, &[&self.input])?;
        self.channels.push(ChannelFile {
            name: channel.name.clone(),
            path,
            out: BufWriter::new(file),
            channel: channel.clone(),
            columns: None,
            index: HashMap::new(),
            cells: Vec::new(),
            dropped: 0,
            line: String::new(),
        });
        Ok(())
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        let f = &mut self.channels[id];
        let mut leaves = Vec::new();
        value.flatten("", &mut leaves);
        f.line.clear();
        if f.columns.is_none() {
            let columns: Vec<String> = match &self.known {
                Some(known) => known[id].clone(),
                None => leaves.iter().map(|(n, _)| n.clone()).collect(),
            };
            f.line.push_str("t [s]");
            for c in &columns {
                f.line.push(',');
                cell(&mut f.line, &header(&f.channel, c));
            }
            f.line.push('\n');
            for (i, c) in columns.iter().enumerate() {
                f.index.entry(c.clone()).or_insert(i);
            }
            f.columns = Some(columns);
        }
        let columns = f.columns.as_ref().expect("set above");
        f.line.push_str(&seconds(t_ns));
        // Each column takes the first value of its name.
        f.cells.clear();
        f.cells.resize(columns.len(), None);
        let mut used = 0;
        for (k, (n, _)) in leaves.iter().enumerate() {
            if let Some(&i) = f.index.get(n) {
                if f.cells[i].is_none() {
                    f.cells[i] = Some(k);
                    used += 1;
                }
            }
        }
        for at in &f.cells {
            f.line.push(',');
            if let Some(k) = at {
                cell(&mut f.line, &leaves[*k].1.cell_text());
            }
        }
        f.dropped += (leaves.len() - used) as u64;
        f.line.push('\n');
        f.out.write_all(f.line.as_bytes()).map_err(io_err(&f.path))
    }
}

/// Pass 1 of `--aligned`: every channel's columns (in order of appearance) and the time span.
#[derive(Default)]
struct Scan {
    channels: Vec<(Channel, Vec<String>)>,
    /// Each channel's columns as a set (a sample's values looked up in one step each).
    seen: Vec<HashSet<String>>,
    first: Option<u64>,
    last: Option<u64>,
}

impl Samples for Scan {
    fn channel(&mut self, _id: usize, channel: &Channel) -> Result<(), Error> {
        self.channels.push((channel.clone(), Vec::new()));
        self.seen.push(HashSet::new());
        Ok(())
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        self.first = Some(self.first.map_or(t_ns, |f| f.min(t_ns)));
        self.last = Some(self.last.map_or(t_ns, |l| l.max(t_ns)));
        let mut leaves = Vec::new();
        value.flatten("", &mut leaves);
        let (cols, seen) = (&mut self.channels[id].1, &mut self.seen[id]);
        for (n, _) in leaves {
            if !seen.contains(&n) {
                seen.insert(n.clone());
                cols.push(n);
            }
        }
        Ok(())
    }
}

/// Pass 2 of `--aligned`: the last value of every column, written out at each grid time.
struct Aligned {
    path: PathBuf,
    out: BufWriter<OutFile>,
    /// Per channel: its columns' indices in the row, by column name.
    index: Vec<BTreeMap<String, usize>>,
    row: Vec<String>,
    step_ns: f64,
    start: u64,
    /// Index of the next grid time to write, and how many there are.
    next: u64,
    rows: u64,
    line: String,
}

/// At most this many rows: more means the rate does not suit the log's length.
const MAX_ROWS: u64 = 50_000_000;

impl Aligned {
    fn new(scan: &Scan, rate: f64, path: &Path, input: &Path) -> Result<Self, Error> {
        let (start, end) = (scan.first.unwrap_or(0), scan.last.unwrap_or(0));
        let step_ns = 1e9 / rate;
        let span = (end - start) as f64;
        let rows = if scan.first.is_some() { (span / step_ns).floor() as u64 + 1 } else { 0 };
        if rows > MAX_ROWS {
            return Err(Error::Usage(format!(
                "--aligned {rate}: {rows} rows for {} s of log; choose a lower rate (at most {MAX_ROWS} rows)",
                seconds(end - start)
            )));
        }
        let file = OutFile::create(path, &[input])?;
        let mut out = BufWriter::new(file);
        let mut line = String::from("t [s]");
        let mut index = Vec::new();
        let mut n = 0;
        let prefixes = column_prefixes(&scan.channels);
        for ((channel, cols), prefix) in scan.channels.iter().zip(&prefixes) {
            let mut map = BTreeMap::new();
            for c in cols {
                line.push(',');
                cell(&mut line, &format!("{prefix}.{}", header(channel, c)));
                map.insert(c.clone(), n);
                n += 1;
            }
            index.push(map);
        }
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(io_err(path))?;
        line.clear();
        Ok(Aligned {
            path: path.to_path_buf(),
            out,
            index,
            row: vec![String::new(); n],
            step_ns,
            start,
            next: 0,
            rows,
            line,
        })
    }
}

/// The name that stands before each column of a channel in the aligned table: the channel's name,
/// or where several channels share it (two publishers on one ROS topic) the name and the
/// publisher (`/chatter@/talker_b`), or failing that the name and its occurrence (`/chatter#2`),
/// so that no two columns have one name.
fn column_prefixes(channels: &[(Channel, Vec<String>)]) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (c, _)) in channels.iter().enumerate() {
        by_name.entry(c.name.as_str()).or_default().push(i);
    }
    let mut out: Vec<String> = channels.iter().map(|(c, _)| c.name.clone()).collect();
    for (name, ids) in by_name.into_iter().filter(|(_, ids)| ids.len() > 1) {
        let callers: Vec<Option<&str>> =
            ids.iter().map(|&i| channels[i].0.ros1.as_ref().and_then(|r| r.callerid.as_deref())).collect();
        let distinct = callers.iter().all(Option::is_some)
            && callers.iter().collect::<std::collections::BTreeSet<_>>().len() == callers.len();
        for (k, &i) in ids.iter().enumerate() {
            out[i] = match callers[k] {
                Some(caller) if distinct => format!("{name}@{caller}"),
                _ => format!("{name}#{}", k + 1),
            };
        }
    }
    out
}

impl Aligned {
    /// Writes every grid row whose time is before `until_ns` (all of them for `None`).
    fn emit_until(&mut self, until_ns: Option<u64>) -> Result<(), Error> {
        while self.next < self.rows {
            let t = self.start + (self.next as f64 * self.step_ns).round() as u64;
            if until_ns.is_some_and(|u| t >= u) {
                break;
            }
            self.line.push_str(&seconds(t));
            for v in &self.row {
                self.line.push(',');
                cell(&mut self.line, v);
            }
            self.line.push('\n');
            self.out.write_all(self.line.as_bytes()).map_err(io_err(&self.path))?;
            self.line.clear();
            self.next += 1;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<u64, Error> {
        self.emit_until(None)?;
        let file = self.out.into_inner().map_err(|e| io_err(&self.path)(e.into_error()))?;
        file.commit()?;
        Ok(self.rows)
    }
}

impl Samples for Aligned {
    fn channel(&mut self, _id: usize, _channel: &Channel) -> Result<(), Error> {
        Ok(())
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        // Rows strictly before this sample hold the values before it; a row at its very time
        // includes it.
        self.emit_until(Some(t_ns))?;
        let mut leaves = Vec::new();
        value.flatten("", &mut leaves);
        for (n, v) in leaves {
            if let Some(&i) = self.index[id].get(&n) {
                self.row[i] = v.cell_text();
            }
        }
        Ok(())
    }
}
