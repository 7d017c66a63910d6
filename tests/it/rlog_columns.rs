//! The typed RLOG path of the tables (values appended from the reader's views, `Samples::rlog`)
//! against the generic path it replaces (a `Value` per value, `Samples::sample`): for every RLOG log
//! in `tests/data`, a larger file that fills several batches, a cut file, and the channel and
//! time filters, both paths give the same tables, schemas, batches (boundaries included, which is
//! what keeps `export --parquet` byte for byte), warnings and errors.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use logspec::log::{detect, Error};
use logspec::log::{Channel, DynVisit, Samples, Select};
use logspec::value::Value;
use logspec_engine::tables::{table_name, Table, TableBuilder, Tables};

use crate::scratch;

/// A sink that takes every value as a `Value`: the sample source's generic path into the same
/// tables (it does not take RLOG views, so the source hands each value over as a `Value`).
struct Generic(Tables);

impl Samples for Generic {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        self.0.channel(id, channel)
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        self.0.sample(id, t_ns, value)
    }
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), Error> {
        self.0.visit(id, t_ns, value)
    }
    fn record(&mut self, id: usize, t_ns: u64, payload: &[u8], value: &dyn DynVisit) -> Result<(), Error> {
        self.0.record(id, t_ns, payload, value)
    }
    fn origin(&mut self, origin_ns: u64) {
        self.0.origin(origin_ns)
    }
}

/// The rows of each table as the Parquet export keeps them: a [`TableBuilder`] per table and its
/// batches as they fill (`typed`: taking RLOG views, as the export's sink does; else every value
/// as a `Value`), so that batch boundaries are compared too.
struct Batched {
    typed: bool,
    by_channel: Vec<usize>,
    tables: Vec<(String, TableBuilder, Vec<arrow_array::RecordBatch>)>,
}

impl Batched {
    fn full(&mut self, i: usize, full: bool) {
        if full {
            let t = &mut self.tables[i];
            t.2.extend(t.1.batch().unwrap());
        }
    }
}

impl Samples for Batched {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        assert_eq!(id, self.by_channel.len());
        let tables = &self.tables;
        let name = table_name(channel, |n| tables.iter().find(|t| t.0 == n).map(|t| t.1.schema_name.as_str()));
        let i = match self.tables.iter().position(|t| t.0 == name) {
            Some(i) => i,
            None => {
                self.tables.push((name, TableBuilder::new(channel, false), Vec::new()));
                self.tables.len() - 1
            }
        };
        self.by_channel.push(i);
        Ok(())
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        let i = self.by_channel[id];
        let full = self.tables[i].1.sample(t_ns, 0, value);
        self.full(i, full);
        Ok(())
    }
    fn rlog(&mut self, id: usize, t_ns: u64, value: &logspec::formats::rlog::ValueRef<'_>) -> Result<bool, Error> {
        let i = self.by_channel[id];
        if !self.typed {
            return Ok(false);
        }
        let Some(full) = self.tables[i].1.rlog(t_ns, 0, value) else { return Ok(false) };
        self.full(i, full);
        Ok(true)
    }
}

/// The rows of `ours` (in-memory tables, joined or kept in vectors) equal those of the export's
/// `batches`, row for row, wherever the batch boundaries of either fall.
fn same_rows(what: &str, ours: &[arrow_array::RecordBatch], batches: &[arrow_array::RecordBatch]) {
    let total = |b: &[arrow_array::RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
    assert_eq!(total(ours), total(batches), "{what}: rows");
    let (mut i, mut r, mut j, mut s) = (0, 0, 0, 0);
    while i < ours.len() && j < batches.len() {
        let n = (ours[i].num_rows() - r).min(batches[j].num_rows() - s);
        assert_eq!(ours[i].slice(r, n), batches[j].slice(s, n), "{what}: rows of batch {j} from {s}");
        (r, s) = (r + n, s + n);
        if r == ours[i].num_rows() {
            (i, r) = (i + 1, 0);
        }
        if s == batches[j].num_rows() {
            (j, s) = (j + 1, 0);
        }
    }
}

/// The export's batches of every table, typed and generic alike, and the in-memory tables `ours`
/// hold the same rows; returns the batches.
fn same_batches(path: &Path, select: &Select, ours: &[Table]) -> usize {
    let run = |typed: bool| {
        let bytes = std::fs::read(path).unwrap();
        let d = detect(path, Box::new(Cursor::new(bytes)), &Default::default()).unwrap();
        let mut sink = Batched { typed, by_channel: Vec::new(), tables: Vec::new() };
        let o = d.scan(select, &mut sink);
        for t in &mut sink.tables {
            t.2.extend(t.1.batch().unwrap());
        }
        let o = o.map(|o| (o.samples, o.warnings, o.error)).map_err(|e| e.to_string());
        (sink.tables, o)
    };
    let ((a, oa), (b, ob)) = (run(true), run(false));
    let what = format!("{} ({select:?})", path.display());
    assert_eq!(oa, ob, "{what}: outcome");
    assert_eq!(a.len(), b.len(), "{what}: tables");
    let mut batches = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, &x.1.schema, x.1.misfits), (&y.0, &y.1.schema, y.1.misfits), "{what}");
        assert_eq!(x.2, y.2, "{what}: {}: batches", x.0);
        batches += x.2.len();
    }
    assert_eq!(ours.len(), a.len(), "{what}: in-memory tables");
    for (x, y) in ours.iter().zip(&a) {
        assert_eq!(x.name, y.0, "{what}");
        same_rows(&format!("{what}: {} in memory", x.name), &x.batches, &y.2);
    }
    batches
}

/// What reading gave: the tables, the warnings and the outcome (samples, warnings, error).
type Read = (Vec<Table>, Vec<String>, Result<(u64, Vec<String>, Option<String>), String>);

fn read(path: &Path, select: &Select, typed: bool) -> Read {
    let bytes = std::fs::read(path).unwrap();
    let d = detect(path, Box::new(Cursor::new(bytes)), &Default::default()).unwrap();
    let (outcome, tables) = if typed {
        let mut sink = Tables::new(false);
        let o = d.scan(select, &mut sink);
        (o, sink)
    } else {
        let mut sink = Generic(Tables::new(false));
        let o = d.scan(select, &mut sink);
        (o, sink.0)
    };
    let (tables, warnings) = tables.finish().unwrap();
    let outcome = outcome.map(|o| (o.samples, o.warnings, o.error)).map_err(|e| e.to_string());
    (tables, warnings, outcome)
}

/// Both paths read `path` alike, into the in-memory tables and into the export's batches;
/// returns the rows read and the export's batches.
fn same(path: &Path, select: &Select) -> (usize, usize) {
    let (a, wa, oa) = read(path, select, true);
    let (b, wb, ob) = read(path, select, false);
    let what = format!("{} ({select:?})", path.display());
    assert_eq!(oa, ob, "{what}: outcome");
    assert_eq!(wa, wb, "{what}: warnings");
    assert_eq!(a.len(), b.len(), "{what}: tables");
    let mut rows = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.name, y.name, "{what}");
        assert_eq!(x.builder.schema, y.builder.schema, "{what}: {}", x.name);
        assert_eq!(x.builder.meta, y.builder.meta, "{what}: {}", x.name);
        assert_eq!(x.builder.misfits, y.builder.misfits, "{what}: {}", x.name);
        assert_eq!(x.batches.len(), y.batches.len(), "{what}: {}: batches", x.name);
        for (i, (p, q)) in x.batches.iter().zip(&y.batches).enumerate() {
            assert_eq!(p, q, "{what}: {}: batch {i}", x.name);
            rows += p.num_rows();
        }
    }
    (rows, same_batches(path, select, &a))
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rlog")
}

fn rlog_logs() -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            !name.contains(".expected") && [".rlog", ".bin"].iter().any(|x| name.ends_with(x))
        })
        .collect();
    logs.sort();
    logs
}

#[test]
fn every_sample_log_reads_alike() {
    let logs = rlog_logs();
    assert!(logs.len() >= 7, "{logs:?}");
    let mut rows = 0;
    for log in &logs {
        rows += same(log, &Select::default()).0;
    }
    assert!(rows > 20_000, "{rows} rows");
}

#[test]
fn filters_read_alike() {
    let log = data().join("akit_v1.8.1_robotlog.rlog");
    let selects = [
        Select { channels: vec!["/DriverStation/*".into()], tables: false, since: None, until: None },
        Select { channels: Vec::new(), tables: false, since: Some(5.0), until: Some(12.5) },
        Select { channels: vec!["/SystemStats/BatteryVoltage".into()], tables: false, since: Some(20.0), until: None },
    ];
    for select in &selects {
        let (rows, _) = same(&log, select);
        assert!(rows > 0, "{select:?}");
    }
    // R1 keys whose values change type, and removed keys (null), filtered.
    let all = data().join("gen_akit_v1.8.1_r1_alltypes.rlog");
    same(
        &all,
        &Select { channels: vec!["/TypeChange".into(), "/Removed".into()], tables: false, since: None, until: None },
    );
}

/// A file of the robot log's messages repeated (its keys defined again each time, which
/// forgets the kept routes) fills several batches per key; cut in the middle of a message, it
/// ends with an error after the same rows.
#[test]
fn batches_and_a_cut_file_read_alike() {
    let sample = std::fs::read(data().join("akit_v1.8.1_robotlog.rlog")).unwrap();
    let mut big = sample.clone();
    for _ in 0..12 {
        big.extend_from_slice(&sample[1..]);
    }
    let dir = scratch::temp_dir();
    let whole = dir.join("big.rlog");
    std::fs::write(&whole, &big).unwrap();
    let (rows, batches) = same(&whole, &Select::default());
    assert_eq!(rows, 13 * 9440);
    // The busiest keys pass 8192 rows (`tables::BATCH_ROWS`): more batches than tables.
    assert!(batches > 98 + 5, "{batches} batches");
    let cut = dir.join("cut.rlog");
    std::fs::write(&cut, &big[..big.len() / 2 + 3]).unwrap();
    let (_, _, outcome) = read(&cut, &Select::default(), true);
    assert!(outcome.as_ref().unwrap().2.as_ref().is_some_and(|e| e.contains("byte")), "{outcome:?}");
    same(&cut, &Select::default());
}
