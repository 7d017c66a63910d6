//! The harness of the engines' time-index tests (`tests/it/engines_formats.rs`), so that a format's test
//! says only what differs: how its log is written, what its index holds, which tables and time
//! windows it reads, how its index is made wrong. A [`Large`] log, written in a scratch folder,
//! is read whole with no index (the answer every other read is held to), then indexed by its
//! first whole scan; read in partitions of a chunk each and in time windows, over a map and over
//! a stream (which skips the records before a part instead of seeking), it gives the whole
//! read's rows; an index that points where no message of its kind starts reads as a fault that
//! says the index is wrong, and an index of the log as it was is not used. The stream helpers the
//! engines' other tests share are here too.

use std::path::{Path, PathBuf};

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use logspec::log::index::{self, Index, CHUNK_BYTES};
use logspec::log::{Format, Open, Select};
use logspec_engine::logs::{partition, LogFile};
use logspec_engine::stream::{self, Part, Query, LOG_COLUMN};

use crate::fast_paths::arrow_select_concat;

/// The two ways a log is read: over a map, and over a stream.
pub(crate) fn hows() -> [Open; 2] {
    [Open { map: true, ..Open::default() }, Open::default()]
}

/// A scratch folder of this process for one test, empty.
pub(crate) fn index_dir(name: &str) -> PathBuf {
    let dir = crate::scratch::temp_dir().join(format!("logspec-index-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The table of `query` streamed from `file` whole (or, with a window, the chunks it meets).
pub(crate) fn scan(file: &LogFile, query: &Query) -> (Vec<RecordBatch>, stream::Scanned) {
    let mut batches = Vec::new();
    let done = stream::scan(file, &Open::default(), query, None, &mut |b| {
        batches.push(b);
        Ok(())
    })
    .unwrap();
    (batches, done)
}

/// The table of `query` streamed from `parts` of `file`, one after the other, none with a fault.
pub(crate) fn scan_parts(file: &LogFile, how: &Open, query: &Query, parts: &[Part]) -> Vec<RecordBatch> {
    let mut batches = Vec::new();
    for &p in parts {
        let done = stream::scan_part(file, how, query, p, None, &mut |b| {
            batches.push(b);
            Ok(())
        })
        .unwrap();
        assert!(done.fault.is_none(), "{:?}", done.fault);
    }
    batches
}

/// The batches without their `log` column (checked to be the log's name), as one.
pub(crate) fn without_log(batches: &[RecordBatch], log: &str) -> Option<RecordBatch> {
    if batches.is_empty() {
        return None;
    }
    let parts: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let i = b.schema().index_of(LOG_COLUMN).unwrap();
            let names = b.column(i).as_any().downcast_ref::<StringArray>().unwrap();
            assert!(names.iter().all(|n| n == Some(log)), "the log column names the log");
            let mut b = b.clone();
            b.remove_column(i);
            b
        })
        .collect();
    Some(arrow_select_concat(&parts[0].schema(), &parts))
}

/// The rows of `batches` (without `log`) as one batch, or `None` for none.
pub(crate) fn joined(batches: &[RecordBatch], log: &str) -> Option<RecordBatch> {
    without_log(batches, log).filter(|b| b.num_rows() > 0)
}

/// The rows of `b` where `keep` is true.
pub(crate) fn arrow_select_filter(b: &RecordBatch, keep: &BooleanArray) -> RecordBatch {
    // A slice per run of kept rows (a time window keeps one run of a log in time order).
    let mut parts: Vec<RecordBatch> = Vec::new();
    let mut i = 0;
    while i < keep.len() {
        let start = i;
        while i < keep.len() && keep.value(i) {
            i += 1;
        }
        if i > start {
            parts.push(b.slice(start, i - start));
        }
        i += 1;
    }
    if parts.is_empty() {
        return b.slice(0, 0);
    }
    arrow_select_concat(&b.schema(), &parts)
}

/// A time window: since and until, in seconds of elapsed time (or fractions of a span, as
/// [`Windows`] says).
pub(crate) type Window = (Option<f64>, Option<f64>);

/// The time windows [`Large::reads_the_same`] reads each table in, besides the whole log.
pub(crate) enum Windows<'a> {
    /// These, in seconds.
    At(&'a [Window]),
    /// At these fractions of the span of each table's own elapsed times.
    OfEach(&'a [Window]),
    /// At these fractions of the span of the elapsed times of the table named.
    Of(&'a str, &'a [Window]),
}

/// How the times of an index's chunks go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Times {
    /// Each chunk's after the one's before it: a time window meets fewer chunks than the log has.
    Rise,
    /// Not so (a log whose messages, and their times, repeat): a window may meet every chunk.
    Repeat,
}

/// A large log under test: its file, and every table of it read whole with no index.
pub(crate) struct Large {
    pub path: PathBuf,
    pub file: LogFile,
    format: Format,
    /// Every table, read whole with no index (and writing none): what the other reads give.
    pub whole: logspec_engine::tables::Read,
    /// The index written ([`Large::first_scan`], [`Large::build`]), and its file's bytes.
    written: Option<(Index, Vec<u8>)>,
}

impl Large {
    /// The log `path` (of `format`), with no index yet, read whole.
    pub fn new(path: &Path, format: Format) -> Large {
        let whole = logspec_engine::tables::read(path, &Open::default(), &Select::default()).unwrap();
        let file = LogFile { file: path.to_path_buf(), log: partition(path) };
        let log = Large { path: path.to_path_buf(), file, format, whole, written: None };
        assert!(!log.place().exists(), "{}: no index, and the whole read writes none", path.display());
        log
    }

    /// Where the index is written: beside the log.
    pub fn place(&self) -> PathBuf {
        index::places(&self.path)[0].clone()
    }

    /// The rows of `table` in the first whole scan of the log, which has no fault and writes the
    /// log's index beside it.
    pub fn first_scan(&mut self, table: &str) -> RecordBatch {
        assert!(!self.place().exists(), "no index before the first whole scan");
        let (b, done) = scan(&self.file, &Query { table: table.into(), ..Query::default() });
        assert!(done.fault.is_none(), "{table}: {:?}", done.fault);
        assert!(self.place().is_file(), "the whole scan wrote the index beside the log");
        self.keep_index();
        joined(&b, &self.file.log).unwrap_or_else(|| panic!("{table}: no rows"))
    }

    /// The log indexed by `logspec index` ([`logspec_engine::index::build`]).
    pub fn build(&mut self) {
        use logspec_engine::index::{build, Built};
        let built = build(&self.path, &hows()[0], false).unwrap();
        assert!(matches!(built, Built::Written { .. }), "{}: {built:?}", self.path.display());
        self.keep_index();
    }

    fn keep_index(&mut self) {
        let idx = index::load(&self.path, self.format).expect("a current index");
        self.written = Some((idx, std::fs::read(self.place()).unwrap()));
    }

    /// The index written.
    pub fn idx(&self) -> &Index {
        &self.written.as_ref().expect("the log indexed").0
    }

    /// The index has `at_least` chunks, the first at `first` (after the log's header), holding
    /// `records` records between them where that is known, their times as `times` says.
    pub fn chunks(&self, at_least: usize, first: u64, records: Option<u64>, times: Times) {
        let chunks = &self.idx().chunks;
        assert!(chunks.len() >= at_least, "{} chunks", chunks.len());
        assert_eq!(chunks[0].offset, first, "the first chunk, after the header");
        if let Some(records) = records {
            assert_eq!(chunks.iter().map(|c| c.records).sum::<u64>(), records, "the records of the chunks");
        }
        assert_eq!(self.times_rise(), times == Times::Rise, "the chunks' times: {chunks:?}");
    }

    /// Whether each chunk's times come after the one's before it.
    fn times_rise(&self) -> bool {
        self.idx().chunks.windows(2).all(|w| w[0].t_max_ns <= w[1].t_min_ns)
    }

    /// At least `at_least` of the index's state messages are past its first chunks (the third
    /// chunk's start), where a partition that starts later must read them first.
    pub fn states_past_the_first_chunks(&self, at_least: usize) {
        let idx = self.idx();
        let past = idx.states.iter().filter(|&&s| s > idx.chunks[2].offset).count();
        assert!(past >= at_least, "state messages past the first chunks: {:?}", idx.states);
    }

    /// The names of the whole read's tables.
    pub fn names(&self) -> Vec<&str> {
        self.whole.tables.iter().map(|t| t.name.as_str()).collect()
    }

    /// The rows of the whole read's table `name`, as one batch.
    pub fn table(&self, name: &str) -> RecordBatch {
        let t = self.whole.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table {name}"));
        arrow_select_concat(&t.batches[0].schema(), &t.batches)
    }

    /// The three largest tables of the whole read, the smallest, and the tables `late` (defined
    /// late in the log).
    pub fn largest_smallest_and<'a>(&'a self, late: &[&'a str]) -> Vec<&'a str> {
        let mut by_rows: Vec<(usize, &str)> = self
            .whole
            .tables
            .iter()
            .map(|t| (t.batches.iter().map(RecordBatch::num_rows).sum(), t.name.as_str()))
            .collect();
        by_rows.retain(|t| !late.contains(&t.1));
        by_rows.sort();
        let mut tables: Vec<&str> = by_rows.iter().rev().take(3).map(|t| t.1).collect();
        tables.push(by_rows[0].1);
        tables.extend(late);
        tables
    }

    /// The elapsed times of the whole read's table `name`.
    fn elapsed(&self, name: &str) -> Int64Array {
        let rows = self.table(name);
        let elapsed = rows.column(rows.schema().index_of("log_elapsed_ns").unwrap());
        elapsed.as_any().downcast_ref::<Int64Array>().unwrap().clone()
    }

    /// Each of `tables`, read whole and in `windows`, gives the whole read's rows (those whose
    /// `log_elapsed_ns` the window holds): in partitions of a chunk each (the whole log a
    /// partition per chunk, or one when they may be large; a window fewer chunks, where the
    /// index has more than two and their times rise) over a map and over a stream, and in one
    /// scan. A window past the end is no partition and no rows.
    pub fn reads_the_same(&self, tables: &[&str], windows: Windows<'_>) {
        let (chunks, rise) = (self.idx().chunks.len(), self.times_rise());
        let fractions = |name: &str, at: &[Window]| -> Vec<Window> {
            let e = self.elapsed(name);
            let (lo, hi) = (e.iter().flatten().min().unwrap(), e.iter().flatten().max().unwrap());
            let of = |x: Option<f64>| x.map(|x| (lo as f64 + x * (hi - lo) as f64) / 1e9);
            at.iter().map(|&(since, until)| (of(since), of(until))).collect()
        };
        for &name in tables {
            let rows = self.table(name);
            let elapsed = self.elapsed(name);
            let at = match windows {
                Windows::At(at) => at.to_vec(),
                Windows::OfEach(at) => fractions(name, at),
                Windows::Of(table, at) => fractions(table, at),
            };
            for (since, until) in std::iter::once((None, None)).chain(at) {
                let keep: BooleanArray = elapsed
                    .iter()
                    .map(|e| {
                        let e = e.unwrap() as f64 / 1e9;
                        Some(since.is_none_or(|s| e >= s) && until.is_none_or(|u| e <= u))
                    })
                    .collect();
                let want = arrow_select_filter(&rows, &keep);
                let q = Query { table: name.into(), since, until, ..Query::default() };
                let what = format!("{} {name} {since:?}..{until:?}", self.path.display());
                // One scan of the window (the same for both ways: it reads the file).
                let (b, done) = scan(&self.file, &q);
                assert!(done.fault.is_none(), "{what}: {:?}", done.fault);
                let one = joined(&b, &self.file.log);
                for how in hows() {
                    let what = format!("{what} map {}", how.map);
                    let parts = stream::partitions(&self.file, &how, &q, CHUNK_BYTES);
                    if since.is_none() && until.is_none() {
                        assert_eq!(parts.len(), chunks, "{what}: a partition per chunk");
                        let large = stream::partitions(&self.file, &how, &q, u64::MAX);
                        assert_eq!(large.len(), 1, "{what}: one partition when they may be large");
                    } else if chunks > 2 && rise {
                        assert!(parts.len() < chunks, "{what}: the chunks the window meets");
                    }
                    let got = joined(&scan_parts(&self.file, &how, &q, &parts), &self.file.log);
                    match &got {
                        Some(g) => assert_eq!(g.columns(), want.columns(), "{what}: in partitions"),
                        None => assert_eq!(want.num_rows(), 0, "{what}: in partitions"),
                    }
                    assert_eq!(
                        one.as_ref().map(|b| b.columns().to_vec()),
                        got.map(|b| b.columns().to_vec()),
                        "{what}: one scan"
                    );
                }
            }
            let late = Query { table: name.into(), since: Some(1e6), ..Query::default() };
            for how in hows() {
                assert!(stream::partitions(&self.file, &how, &late, CHUNK_BYTES).is_empty(), "{name}: past the end");
            }
            let (b, done) = scan(&self.file, &late);
            assert!(b.is_empty() && done.fault.is_none(), "{name}: past the end");
        }
    }

    /// How many of the whole read's warnings say `what`: each is told once, by the part of
    /// `table` that holds it, over a map and over a stream.
    pub fn told_once(&self, table: &str, what: &str) -> usize {
        let count = |w: &[String]| w.iter().filter(|w| w.contains(what)).count();
        let q = Query { table: table.into(), ..Query::default() };
        for how in hows() {
            let told: usize = stream::partitions(&self.file, &how, &q, 1)
                .into_iter()
                .map(|p| count(&stream::scan_part(&self.file, &how, &q, p, None, &mut |_| Ok(())).unwrap().warnings))
                .sum();
            assert_eq!(told, count(&self.whole.warnings), "{what}: map {}", how.map);
        }
        count(&self.whole.warnings)
    }

    /// The log changed by `change` (its index written back as it was): the index is stale and
    /// not used (the log one part, over a map and over a stream); the next whole scan of
    /// `table` gives the whole read's rows, with no fault, and writes the index again. The rows.
    pub fn stale(&mut self, table: &str, change: impl FnOnce(&Path)) -> RecordBatch {
        std::fs::write(self.place(), &self.written.as_ref().expect("the log indexed").1).unwrap();
        change(&self.path);
        assert_eq!(index::load(&self.path, self.format), None, "a stale index");
        let q = Query { table: table.into(), ..Query::default() };
        for how in hows() {
            let parts = stream::partitions(&self.file, &how, &q, CHUNK_BYTES);
            assert_eq!(parts, vec![Part::default()], "map {}: the whole log, one part", how.map);
        }
        let (b, done) = scan(&self.file, &q);
        assert!(done.fault.is_none(), "{:?}", done.fault);
        let got = joined(&b, &self.file.log).unwrap_or_else(|| panic!("{table}: no rows"));
        assert_eq!(got.columns(), self.table(table).columns(), "{table}: the whole log's rows");
        self.keep_index();
        got
    }

    /// Where chunk `i`'s record is in the index file: its `offset`, then `length` (+8),
    /// `first_record` (+16), `records` (+24) and the times (`schemas/logidx.toml`).
    pub fn chunk_at(&self, i: usize) -> usize {
        112 + 53 * i + 5
    }

    /// Where state message `i`'s offset is in the index file.
    pub fn state_at(&self, i: usize) -> usize {
        112 + 53 * self.idx().chunks.len() + 13 * i + 5
    }

    /// Where schema message `i`'s offset is in the index file.
    pub fn schema_at(&self, i: usize) -> usize {
        self.state_at(self.idx().states.len()) + 21 * i
    }

    /// The index file written, each number at a place of `changes` moved by its amount.
    pub fn changed(&self, changes: &[(usize, i64)]) -> Vec<u8> {
        let mut bytes = self.written.as_ref().expect("the log indexed").1.clone();
        for &(at, by) in changes {
            let field = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            bytes[at..at + 8].copy_from_slice(&field.wrapping_add_signed(by).to_le_bytes());
        }
        bytes
    }

    /// `bytes` put in place of the index, which they must pass the checks of an index file as;
    /// the index they say.
    pub fn put_index(&self, bytes: &[u8]) -> Index {
        let number = index::format_number(self.format).unwrap();
        let stamp = index::stamp(&self.path).unwrap();
        let bad = index::decode(bytes, number, &stamp).expect("passes the checks an index file gets");
        std::fs::write(self.place(), bytes).unwrap();
        bad
    }

    /// With the index `bytes`, the parts of `table` that `which` picks (of a partition per
    /// chunk) read as a fault that says the index is wrong, over a map and over a stream.
    pub fn wrong(&self, bytes: &[u8], table: &str, which: impl Fn(&[Part]) -> Vec<Part>) {
        self.put_index(bytes);
        let q = Query { table: table.into(), ..Query::default() };
        for how in hows() {
            for part in which(&stream::partitions(&self.file, &how, &q, CHUNK_BYTES)) {
                let done = stream::scan_part(&self.file, &how, &q, part, None, &mut |_| Ok(())).unwrap();
                let fault = done.fault.unwrap_or_else(|| panic!("{table} map {}: {part:?}: a fault", how.map));
                assert!(fault.message.contains("the time index is wrong"), "{table}: {}", fault.message);
            }
        }
    }

    /// The index's last state message moved a byte, off a message start: the last part of
    /// `table`, which starts after it, reads as a fault.
    pub fn a_moved_state_is_a_fault(&self, table: &str) {
        let idx = self.idx();
        let last = idx.states.len() - 1;
        let bytes = self.changed(&[(self.state_at(last), 1)]);
        let bad = self.put_index(&bytes);
        assert_eq!(bad.states[last], idx.states[last] + 1);
        assert!(bad.chunks.last().unwrap().offset > bad.states[last], "the last chunk starts after it");
        self.wrong(&bytes, table, |parts| vec![*parts.last().unwrap()]);
    }

    /// The boundary between the index's second and third chunks moved a byte into a record
    /// (the chunks still tile the log): the chunk before it ends, and the one after starts,
    /// where no record does; parts 1 and 2 of `table` read as a fault.
    pub fn a_moved_chunk_boundary_is_a_fault(&self, table: &str) {
        let (one, two) = (self.chunk_at(1), self.chunk_at(2));
        let bytes = self.changed(&[(one + 8, 1), (two, 1), (two + 8, -1)]);
        assert_eq!(self.put_index(&bytes).chunks[2].offset, self.idx().chunks[2].offset + 1);
        self.wrong(&bytes, table, |parts| parts[1..3].to_vec());
    }
}
