//! The typed RLOG path of the tables (values appended from the reader's views, `Sink::rlog`)
//! against the generic path it replaces (a `Value` per value, `Sink::sample`): for every RLOG log
//! in `tests/data`, a larger file that fills several batches, a cut file, and the channel and
//! time filters, both paths give the same tables, schemas, batches (boundaries included, which is
//! what keeps `export --parquet` byte for byte), warnings and errors.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use logspec::value::Value;
use logspec_cli::cli::source::{self, Channel, DynVisit, Select, Sink};
use logspec_cli::cli::tables::{Table, Tables};
use logspec_cli::cli::{detect, CliError};

#[path = "common/scratch.rs"]
mod scratch;

/// A sink that takes every value as a `Value`: the sample source's generic path into the same
/// tables (it does not take RLOG views, so the source hands each value over as a `Value`).
struct Generic(Tables);

impl Sink for Generic {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), CliError> {
        self.0.channel(id, channel)
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), CliError> {
        self.0.sample(id, t_ns, value)
    }
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn DynVisit) -> Result<(), CliError> {
        self.0.visit(id, t_ns, value)
    }
    fn record(&mut self, id: usize, t_ns: u64, payload: &[u8], value: &dyn DynVisit) -> Result<(), CliError> {
        self.0.record(id, t_ns, payload, value)
    }
    fn origin(&mut self, origin_ns: u64) {
        self.0.origin(origin_ns)
    }
}

/// What reading gave: the tables, the warnings and the outcome (samples, warnings, error).
type Read = (Vec<Table>, Vec<String>, Result<(u64, Vec<String>, Option<String>), String>);

fn read(path: &Path, select: &Select, typed: bool) -> Read {
    read_into(path, select, typed, Tables::batched(false))
}

fn read_into(path: &Path, select: &Select, typed: bool, tables: Tables) -> Read {
    let bytes = std::fs::read(path).unwrap();
    let d = detect(path, Box::new(Cursor::new(bytes)), None).unwrap();
    let shown = path.display().to_string();
    let (outcome, tables) = if typed {
        let mut sink = tables;
        let o = source::read(d, path, &shown, false, select, &mut sink);
        (o, sink)
    } else {
        let mut sink = Generic(tables);
        let o = source::read(d, path, &shown, false, select, &mut sink);
        (o, sink.0)
    };
    let (tables, warnings) = tables.finish().unwrap();
    let outcome = outcome.map(|o| (o.samples, o.warnings, o.error)).map_err(|e| e.to_string());
    (tables, warnings, outcome)
}

/// Both paths read `path` alike, and the in-memory tables of the Python package (numbers joined
/// into one batch) hold the same rows as the export's batches; returns the rows and batches read.
fn same(path: &Path, select: &Select) -> (usize, usize) {
    let (a, wa, oa) = read(path, select, true);
    let (b, wb, ob) = read(path, select, false);
    let what = format!("{} ({select:?})", path.display());
    let (j, wj, oj) = read_into(path, select, true, Tables::new(false));
    assert_eq!((&oj, &wj), (&oa, &wa), "{what}: joined");
    assert_eq!(j.len(), a.len(), "{what}: joined tables");
    for (x, y) in j.iter().zip(&a) {
        assert_eq!(x.name, y.name, "{what}: joined");
        let mut at = Vec::new();
        let mut offset = 0;
        for batch in &x.batches {
            at.extend((0..batch.num_rows()).map(|r| (batch, r)));
            offset += batch.num_rows();
        }
        assert_eq!(offset, y.batches.iter().map(|b| b.num_rows()).sum::<usize>(), "{what}: {}: joined rows", x.name);
        let mut row = 0;
        for q in &y.batches {
            let (p, r) = at[row];
            // Each export batch lies within one joined batch (joining only concatenates).
            assert!(r + q.num_rows() <= p.num_rows(), "{what}: {}: joined batch boundaries", x.name);
            assert_eq!(&p.slice(r, q.num_rows()), q, "{what}: {}: joined rows {row}..", x.name);
            row += q.num_rows();
        }
    }
    assert_eq!(oa, ob, "{what}: outcome");
    assert_eq!(wa, wb, "{what}: warnings");
    assert_eq!(a.len(), b.len(), "{what}: tables");
    let (mut rows, mut batches) = (0, 0);
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
        batches += x.batches.len();
    }
    (rows, batches)
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
        Select { channels: vec!["/DriverStation/*".into()], since: None, until: None },
        Select { channels: Vec::new(), since: Some(5.0), until: Some(12.5) },
        Select { channels: vec!["/SystemStats/BatteryVoltage".into()], since: Some(20.0), until: None },
    ];
    for select in &selects {
        let (rows, _) = same(&log, select);
        assert!(rows > 0, "{select:?}");
    }
    // R1 keys whose values change type, and removed keys (null), filtered.
    let all = data().join("gen_akit_v1.8.1_r1_alltypes.rlog");
    same(&all, &Select { channels: vec!["/TypeChange".into(), "/Removed".into()], since: None, until: None });
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
