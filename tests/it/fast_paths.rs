//! The one oracle over every fast path into in-memory tables: `logspec_engine::tables::read`,
//! which chooses the fastest path a log allows (the USVLOG two passes; the RLOG direct columns),
//! against the generic path: one `Log::scan` whose samples reach the `Tables` sink only as value
//! trees (`Samples::sample`, never a view, a payload or an RLOG value), every table in the
//! builder's batches (`Tables::without_direct`). On every bundled log of every format, and on
//! cut and corrupted copies of each: the same tables in the same order, the same schemas with
//! their metadata, the same rows, the same warnings and the same error.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use logspec::log::{Channel, Error, Open, Samples, Select};
use logspec::value::Value;
use logspec_engine::tables::{self, Tables};

use crate::scratch;

/// A sink that hands the tables every sample as a value tree: the generic path.
struct Generic(Tables);

impl Samples for Generic {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        self.0.channel(id, channel)
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        self.0.sample(id, t_ns, value)
    }
    fn origin(&mut self, origin_ns: u64) {
        self.0.origin(origin_ns)
    }
}

/// What a read gave: the tables (name, schema, rows as one batch), the warnings, the error.
pub(crate) type Read = (Vec<(String, SchemaRef, Option<RecordBatch>)>, Vec<String>, Option<String>);

fn shown(e: Error) -> String {
    match e {
        Error::At(f) => format!("{f:?}"),
        other => other.to_string(),
    }
}

fn rows(schema: &SchemaRef, batches: &[RecordBatch]) -> Option<RecordBatch> {
    (!batches.is_empty()).then(|| arrow_select_concat(schema, batches))
}

/// The batches of a table as one (their boundaries differ between the paths).
pub(crate) fn arrow_select_concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    let columns = (0..schema.fields().len())
        .map(|i| {
            let parts: Vec<&dyn arrow_array::Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
            concat(&parts)
        })
        .collect();
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema.clone(), columns, &options).unwrap()
}

fn concat(parts: &[&dyn arrow_array::Array]) -> arrow_array::ArrayRef {
    let data: Vec<arrow_data::ArrayData> = parts.iter().map(|a| a.to_data()).collect();
    let refs: Vec<&arrow_data::ArrayData> = data.iter().collect();
    let mut m = arrow_data::transform::MutableArrayData::new(refs, false, 0);
    for (i, a) in parts.iter().enumerate() {
        m.try_extend(i, 0, a.len()).expect("the parts fit one array");
    }
    arrow_array::make_array(m.freeze())
}

pub(crate) fn generic(path: &Path, select: &Select) -> Result<Read, String> {
    let log = logspec::log::open(path, &Open::default()).map_err(shown)?;
    let mut sink = Generic(Tables::new(log.utc()).without_direct());
    let outcome = log.scan(select, &mut sink);
    let (tables, mut warnings) = sink.0.finish().map_err(shown)?;
    let (error, more) = match outcome {
        Ok(o) => (o.fault.map(Error::from).or(o.error.map(Error::Input)), o.warnings),
        Err(e) => (Some(e), Vec::new()),
    };
    warnings.splice(0..0, more);
    let tables = tables.into_iter().map(|t| (t.name, t.builder.schema.clone(), rows(&t.builder.schema, &t.batches)));
    Ok((tables.collect(), warnings, error.map(shown)))
}

fn chosen(path: &Path, select: &Select) -> Result<Read, String> {
    let r = tables::read(path, &Open::default(), select).map_err(shown)?;
    let tables = r.tables.into_iter().map(|t| (t.name, t.builder.schema.clone(), rows(&t.builder.schema, &t.batches)));
    Ok((tables.collect(), r.warnings, r.error.map(shown)))
}

fn assert_same(path: &Path, select: &Select, what: &str) {
    let (want, got) = (generic(path, select), chosen(path, select));
    let (want, got) = match (want, got) {
        (Err(a), Err(b)) => return assert_eq!(a, b, "{what}: the error that kept it from being read"),
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => panic!("{what}: generic {:?} but chosen {:?}", a.map(|_| ()), b.map(|_| ())),
    };
    assert_eq!(got.0.len(), want.0.len(), "{what}: tables");
    for (g, w) in got.0.iter().zip(&want.0) {
        assert_eq!(g.0, w.0, "{what}: table order");
        assert_eq!(g.1, w.1, "{what}: {}: schema and metadata", w.0);
        assert_eq!(g.2, w.2, "{what}: {}: rows", w.0);
    }
    assert_eq!(got.1, want.1, "{what}: warnings");
    assert_eq!(got.2, want.2, "{what}: error");
}

/// Every bundled log of every format.
pub(crate) fn bundled() -> Vec<PathBuf> {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut logs = Vec::new();
    for (dir, exts) in [
        ("usvlog", &["usvlog", "bin"][..]),
        ("rlog", &["rlog", "bin"][..]),
        ("wpilog", &["wpilog"][..]),
        ("rosbag", &["bag"][..]),
        ("carla", &["log"][..]),
        ("ulog", &["ulg"][..]),
        ("dataflash", &["bin", "BIN"][..]),
        ("ros2", &["mcap", "db3"][..]),
    ] {
        for e in std::fs::read_dir(data.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                logs.push(p);
            }
        }
    }
    logs.sort();
    assert!(logs.len() >= 10, "{logs:?}");
    logs
}

#[test]
fn every_bundled_log_reads_alike_on_every_path() {
    for p in bundled() {
        assert_same(&p, &Select::default(), &p.display().to_string());
    }
}

/// The bundled logs small enough for cut and corrupted copies (the larger ones' copies cost
/// minutes; they are held whole), by file name, with their bytes.
pub(crate) fn small_bundled() -> Vec<(String, Vec<u8>)> {
    let small = |p: PathBuf| {
        let bytes = std::fs::read(&p).unwrap();
        (bytes.len() <= 4 << 20).then(|| (p.file_name().unwrap().to_string_lossy().into_owned(), bytes))
    };
    bundled().into_iter().filter_map(small).collect()
}

#[test]
fn cut_and_corrupted_copies_read_alike_on_every_path() {
    for (name, bytes) in small_bundled() {
        let n = bytes.len();
        for cut in [n / 3, n / 2, n * 2 / 3, n.saturating_sub(1)] {
            let q = write(&format!("fast_paths_cut_{cut}_{name}"), &bytes[..cut]);
            assert_same(&q, &Select::default(), &format!("{name} cut at {cut}"));
        }
        for at in [n / 4, n / 2, n * 3 / 4] {
            let mut bad = bytes.clone();
            bad[at] ^= 0xA5;
            let q = write(&format!("fast_paths_flip_{at}_{name}"), &bad);
            assert_same(&q, &Select::default(), &format!("{name} with byte {at} flipped"));
        }
    }
}

#[test]
fn filters_read_alike_on_every_path() {
    for p in bundled() {
        let Ok((tables, ..)) = generic(&p, &Select::default()) else { continue };
        let Some((first, ..)) = tables.first() else { continue };
        let one = Select { channels: vec![first.clone()], tables: true, ..Default::default() };
        assert_same(&p, &one, &format!("{} --channel {first}", p.display()));
        let window = Select { since: Some(0.5), until: Some(2.0), ..Default::default() };
        assert_same(&p, &window, &format!("{} --since 0.5 --until 2", p.display()));
    }
}

pub(crate) fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch::temp_dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `logspec dump` on two threads (the text made from tapes, `LOGSPEC_THREADS=2`) prints what
/// it prints on one (`LOGSPEC_THREADS=1`, the lines written as they are made): the same lines,
/// warnings and exit status, for every bundled log and a cut and a corrupted copy of each small
/// one.
#[test]
fn dump_on_two_threads_prints_what_one_thread_prints() {
    let dump = |path: &Path, threads: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
            .arg("dump")
            .arg(path)
            .env("LOGSPEC_THREADS", threads)
            .output()
            .unwrap();
        (out.status.code(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let mut logs = bundled();
    for (name, bytes) in small_bundled() {
        let n = bytes.len();
        logs.push(write(&format!("dump_threads_cut_{name}"), &bytes[..n / 2]));
        let mut bad = bytes.clone();
        bad[n / 2] ^= 0xA5;
        logs.push(write(&format!("dump_threads_flip_{name}"), &bad));
    }
    for p in logs {
        let (one, two) = (dump(&p, "1"), dump(&p, "2"));
        assert_eq!(one.0, two.0, "{}: exit status", p.display());
        assert_eq!(one.2, two.2, "{}: standard error", p.display());
        assert!(one.1 == two.1, "{}: the lines differ", p.display());
    }
}

/// `good` whole, cut at seven places (an eighth to seven eighths) and with a byte changed at about
/// forty places all over, each named (`whole`, `cutK`, `byteN`).
fn cut_and_changed(good: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = good.len();
    let mut variants = vec![("whole".to_string(), good.to_vec())];
    for k in 1..8 {
        variants.push((format!("cut{k}"), good[..n * k / 8].to_vec()));
    }
    for at in (0..n).step_by((n / 40).max(1)) {
        let mut bad = good.to_vec();
        bad[at] = bad[at].wrapping_add(0x41);
        variants.push((format!("byte{at}"), bad));
    }
    variants
}

/// What a scan showed a sink, as JSON text: each sample, in order.
struct Shown {
    /// Whether the sink takes a message decoded once as it is shown (`Samples::try_visit`).
    once: bool,
    lines: Vec<String>,
    w: logspec::json::JsonWriter,
    /// Visits that stopped partway (each taken back).
    stopped: usize,
}

impl Samples for Shown {
    fn channel(&mut self, id: usize, c: &Channel) -> Result<(), Error> {
        self.lines.push(format!("channel {id} {} {}", c.name, c.schema_name));
        Ok(())
    }
    fn sample(&mut self, id: usize, t: u64, value: &Value) -> Result<(), Error> {
        value.write_to(&mut self.w, None);
        self.lines.push(format!("{id} {t} {}", self.w.take()));
        Ok(())
    }
    fn visit(&mut self, id: usize, t: u64, value: &dyn logspec::log::DynVisit) -> Result<(), Error> {
        value.visit_dyn(&mut self.w);
        self.lines.push(format!("{id} {t} {}", self.w.take()));
        Ok(())
    }
    fn try_visit(&mut self, id: usize, t: u64, value: &dyn logspec::log::TryVisit) -> Result<bool, Error> {
        if !self.once {
            return Ok(false);
        }
        let whole = value.try_visit_dyn(&mut self.w);
        let text = self.w.take();
        match whole {
            true => self.lines.push(format!("{id} {t} {text}")),
            false => self.stopped += 1,
        }
        Ok(true)
    }
}

/// The samples a scan of every channel showed, with its outcome, and how many visits stopped.
fn scan_shown(path: &Path, once: bool) -> (Vec<String>, String, usize) {
    let mut sink = Shown { once, lines: Vec::new(), w: Default::default(), stopped: 0 };
    let how = Open { map: true, ..Default::default() };
    let got = logspec::log::open(path, &how)
        .and_then(|log| log.scan(&Select::default(), &mut sink))
        .map(|o| format!("{} {:?} {:?}", o.samples, o.warnings, o.error));
    (sink.lines, got.unwrap_or_else(|e| format!("error: {e}")), sink.stopped)
}

/// A ROS message decoded once as it is shown (`Samples::try_visit`: the tables', the export's
/// and the engines' sinks take it so) and left out when its visit stops partway reads as the
/// message checked whole first, then shown: the same tables, rows, warnings and error as the
/// generic path, and the same samples in a sink of JSON text; and `dump`, which writes each
/// message as it decodes it, prints each line whole and every message the scan delivers. On the
/// MCAP and ROS bag test files and fuzz corpora, cut and with bytes changed all over.
#[test]
fn messages_decoded_once_read_as_checked_first() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut inputs: Vec<(String, Vec<u8>)> = small_bundled()
        .into_iter()
        .filter(|(name, _)| name.ends_with(".mcap") || name.ends_with(".bag"))
        .filter(|(_, bytes)| bytes.len() <= 64 << 10)
        .collect();
    for (dir, ext) in [("mcap", "mcap"), ("rosbag", "bag")] {
        let corpus = root.join("fuzz/corpus").join(dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for p in files {
            inputs.push((format!("{}.{ext}", p.file_name().unwrap().to_string_lossy()), std::fs::read(&p).unwrap()));
        }
    }
    let (mut copies, mut stopped) = (0, 0);
    for (name, good) in &inputs {
        let variants = cut_and_changed(good);
        for (what, bytes) in variants {
            let path = write(&format!("once_{what}_{name}"), &bytes);
            let what = format!("{name} {what}");
            assert_same(&path, &Select::default(), &what);
            let (once, once_end, stops) = scan_shown(&path, true);
            let (checked, checked_end, _) = scan_shown(&path, false);
            assert_eq!(once_end, checked_end, "{what}: the outcome");
            assert!(once == checked, "{what}: the samples differ");
            // The dump: whole lines, a decoded message for each sample.
            let mut out = Vec::new();
            if let Ok(log) = logspec::log::open(&path, &Open::default()) {
                let mut lines = logspec::log::JsonLines::new(&mut out);
                let _ = log.records(&Default::default(), &mut lines);
                lines.flush().unwrap();
            }
            let mut decoded = 0;
            for line in String::from_utf8(out).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{what}: {e}: {line}"));
                decoded += usize::from(v["kind"] == "message" && !v["data"].is_null());
            }
            let samples = checked.iter().filter(|l| !l.starts_with("channel ")).count();
            assert_eq!(decoded, samples, "{what}: the dump's decoded messages");
            (copies, stopped) = (copies + 1, stopped + stops);
            std::fs::remove_file(&path).unwrap();
        }
    }
    // Visits stopped partway: the oracle covers leaving a message out.
    assert!(copies > 400 && stopped > 0, "{copies} copies, {stopped} visits stopped");
}
