//! Real DataFusion SQL over `LogTable`, held to the engine's in-memory tables
//! (`logspec_engine::tables::read`, the Python package's `tables()`: another sink, another path
//! for USVLOG) of the same logs: per log, the rows, min and max of a value column and of
//! `log_elapsed_ns`, and the rows in a time window; the filters on `log` and the time window
//! reach the scan; a log that fails part-way keeps its complete rows or fails the query naming
//! the log; a log with a time index is several partitions; statistics say what is known; an
//! operator that waits for every partition's first batch gets them however many logs there are.

/// The benches' input builders (benches/common): large logs written by logspec's writers.
#[path = "../../benches/common/rlog_input.rs"]
mod rlog_input;
#[path = "../../benches/common/usvlog_input.rs"]
mod usvlog_input;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use datafusion::common::stats::Precision;
use datafusion::physical_expr::expressions::col;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use logspec::log::{Open, Select};
use logspec_datafusion::{LogScan, LogTable, OnError, BATCHES_AHEAD};
use logspec_engine::stream::Partition;
use logspec_engine::tables;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(rel)
}

/// Every bundled log of every format, copied into `to` (in a folder named as the log's): the
/// scans read the copies, so that the time index a whole scan writes beside a log of more than
/// one chunk goes there, never into tests/data.
fn bundled(to: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (dir, exts) in [
        ("usvlog", &["usvlog"][..]),
        ("rlog", &["rlog"][..]),
        ("wpilog", &["wpilog"][..]),
        ("rosbag", &["bag"][..]),
        ("carla", &["log"][..]),
        ("ulog", &["ulg"][..]),
        ("dataflash", &["bin", "BIN"][..]),
        ("ros2", &["mcap"][..]),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(data(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)))
            .collect();
        files.sort();
        std::fs::create_dir_all(to.join(dir)).unwrap();
        for f in files {
            let copy = to.join(dir).join(f.file_name().unwrap());
            std::fs::copy(&f, &copy).unwrap();
            out.push(copy);
        }
    }
    out
}

/// A column's values as `f64` (numbers and booleans), `None` for other types.
fn numbers(a: &ArrayRef) -> Option<Vec<Option<f64>>> {
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive::<$t>().iter().map(|v| v.map(|v| v as f64)).collect()
        };
    }
    Some(match a.data_type() {
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => prim!(Float32Type),
        DataType::Float64 => prim!(Float64Type),
        _ => return None,
    })
}

/// What the engine's in-memory read says of one table: (rows, min, max of `col` (no NaN),
/// min and max of `log_elapsed_ns`).
struct Want {
    rows: usize,
    lo: Option<f64>,
    hi: Option<f64>,
    elapsed: Vec<i64>,
}

fn want(t: &tables::Table, col: &str) -> Want {
    let mut w = Want { rows: 0, lo: None, hi: None, elapsed: Vec::new() };
    for b in &t.batches {
        w.rows += b.num_rows();
        let vals = numbers(b.column_by_name(col).unwrap()).unwrap();
        for v in vals.into_iter().flatten() {
            w.lo = Some(w.lo.map_or(v, |l: f64| l.min(v)));
            w.hi = Some(w.hi.map_or(v, |h: f64| h.max(v)));
        }
        let e = b.column_by_name("log_elapsed_ns").unwrap().as_primitive::<Int64Type>();
        w.elapsed.extend(e.iter().flatten());
    }
    w
}

/// The first table with rows and a numeric value column without NaN (`log_elapsed_ns` if none).
fn pick(read: &tables::Read) -> Option<(&tables::Table, String)> {
    let mut fallback = None;
    for t in &read.tables {
        if t.batches.iter().map(RecordBatch::num_rows).sum::<usize>() == 0 {
            continue;
        }
        let schema = t.batches[0].schema();
        for f in schema.fields() {
            if ["log_time", "log_elapsed_ns"].contains(&f.name().as_str()) {
                continue;
            }
            let nan = t.batches.iter().any(|b| {
                numbers(b.column_by_name(f.name()).unwrap()).is_none_or(|v| v.iter().flatten().any(|x| x.is_nan()))
            });
            if !nan {
                return Some((t, f.name().clone()));
            }
        }
        fallback.get_or_insert((t, "log_elapsed_ns".to_string()));
    }
    fallback
}

async fn sql(ctx: &SessionContext, q: &str) -> datafusion::error::Result<Vec<RecordBatch>> {
    ctx.sql(q).await?.collect().await
}

fn quoted(c: &str) -> String {
    format!("\"{}\"", c.replace('"', "\"\""))
}

fn f64_at(b: &RecordBatch, col: usize) -> Option<f64> {
    let a = b.column(col);
    if a.is_null(0) {
        return None;
    }
    Some(a.as_primitive::<Float64Type>().value(0))
}

fn i64_at(b: &RecordBatch, col: usize) -> i64 {
    b.column(col).as_primitive::<Int64Type>().value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bundled_log_gives_through_sql_what_the_engine_reads() {
    let mut checked = std::collections::BTreeSet::new();
    let mut warned = std::collections::BTreeSet::new();
    let dir = tempfile::tempdir().unwrap();
    for path in bundled(dir.path()) {
        let Ok(read) = tables::read(&path, &Open::default(), &Select::default()) else { continue };
        let Some((t, col)) = pick(&read) else { continue };
        let w = want(t, &col);
        let provider = LogTable::with_options(&[&path], &t.name, &Open::default(), OnError::Keep).unwrap();
        let ctx = SessionContext::new();
        ctx.register_table("t", Arc::new(provider.clone())).unwrap();
        let c = quoted(&col);
        let got = sql(
            &ctx,
            &format!(
                "SELECT count(*) AS n, CAST(min({c}) AS DOUBLE) AS lo, CAST(max({c}) AS DOUBLE) AS hi, min(log_elapsed_ns) AS a, max(log_elapsed_ns) AS z, min(log) AS l1, max(log) AS l2 FROM t"
            ),
        )
        .await
        .unwrap();
        let b = &got[0];
        let what = format!("{}: {} {col}", path.display(), t.name);
        assert_eq!(i64_at(b, 0) as usize, w.rows, "{what}: rows");
        assert_eq!(f64_at(b, 1), w.lo, "{what}: min");
        assert_eq!(f64_at(b, 2), w.hi, "{what}: max");
        assert_eq!(i64_at(b, 3), *w.elapsed.iter().min().unwrap(), "{what}");
        assert_eq!(i64_at(b, 4), *w.elapsed.iter().max().unwrap(), "{what}");
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(b.column(5).as_string::<i32>().value(0), stem, "{what}: log");
        // A tenth of the time span, from a tenth in.
        let (a, z) = (w.elapsed.iter().min().unwrap(), w.elapsed.iter().max().unwrap());
        let (lo, hi) = (a + (z - a) / 10, a + 2 * (z - a) / 10);
        let in_window = w.elapsed.iter().filter(|e| (lo..=hi).contains(*e)).count();
        let got =
            sql(&ctx, &format!("SELECT count(*) FROM t WHERE log_elapsed_ns BETWEEN {lo} AND {hi}")).await.unwrap();
        assert_eq!(i64_at(&got[0], 0) as usize, in_window, "{what}: window");
        // A log that fails part-way: its complete rows above, and the fault kept, naming it.
        let faults = provider.faults();
        assert_eq!(!faults.is_empty(), read.error.is_some(), "{what}: {faults:?}");
        if let Some(f) = faults.first() {
            assert_eq!(f.log, stem);
            assert!(f.fault.message.contains(&*path.file_name().unwrap().to_string_lossy()), "{}", f.fault.message);
        }
        // What did not stop the reading (a record skipped, a value kept as hex): kept, each
        // naming its log, as the reading's own warnings say (those of the other tables too).
        for w in provider.warnings() {
            assert_eq!(w.log, stem, "{what}");
            assert!(read.warnings.iter().any(|r| r == &w.fault.message), "{what}: {w:?} not in {:?}", read.warnings);
            warned.insert(stem.clone());
        }
        checked.insert(path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned());
    }
    // An unindexed bag (read whole, and said so), a DataFlash log whose FMT message disagrees
    // with its labels, a WPILOG struct kept as hex: their warnings reach the table.
    for stem in ["test_unindexed", "peterbarker_6", "gen_wpilib_structs"] {
        assert!(warned.contains(stem), "no warning of {stem}: {warned:?}");
    }
    for kind in ["usvlog", "rlog", "wpilog", "rosbag", "carla", "ulog", "dataflash", "ros2"] {
        assert!(checked.contains(kind), "no {kind} log checked: {checked:?}");
    }
}

/// The scan node of a physical plan.
fn log_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<&LogScan> {
    if let Some(s) = (plan.as_ref() as &dyn std::any::Any).downcast_ref::<LogScan>() {
        return Some(s);
    }
    plan.children().into_iter().find_map(log_scan)
}

/// Three copies of a USVLOG file, `a`, `b` and `c`, in a temporary directory.
fn copies() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let src = data("usvlog/step.usvlog");
    let files: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let p = dir.path().join(format!("{n}.usvlog"));
            std::fs::copy(&src, &p).unwrap();
            p
        })
        .collect();
    (dir, files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_log_and_time_and_the_projection_reach_the_scan() {
    let (dir, _) = copies();
    let table = LogTable::try_new(&[dir.path()], "REC_NAV_SOLUTION").unwrap();
    assert_eq!(table.logs().iter().map(|l| l.log.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
    let read = tables::read(&data("usvlog/step.usvlog"), &Open::default(), &Select::default()).unwrap();
    let one = want(read.tables.iter().find(|t| t.name == "REC_NAV_SOLUTION").unwrap(), "x");
    let ctx = SessionContext::new();
    ctx.register_table("nav", Arc::new(table)).unwrap();

    // `log`: only the logs named are read (one partition each).
    let q = "SELECT log, count(*) AS n FROM nav WHERE log IN ('a', 'c') GROUP BY log ORDER BY log";
    let plan = ctx.sql(q).await.unwrap().create_physical_plan().await.unwrap();
    let scan = log_scan(&plan).expect("a LogScan in the plan");
    assert_eq!(scan.logs().iter().map(|l| l.log.as_str()).collect::<Vec<_>>(), ["a", "c"]);
    let got = sql(&ctx, q).await.unwrap();
    let logs: Vec<String> =
        got.iter().flat_map(|b| b.column(0).as_string::<i32>().iter().map(|s| s.unwrap().to_string())).collect();
    assert_eq!(logs, ["a", "c"]);
    assert!(got.iter().all(|b| b.column(1).as_primitive::<Int64Type>().iter().all(|n| n == Some(one.rows as i64))));
    // Any expression of `log` alone.
    let got = sql(&ctx, "SELECT count(*) FROM nav WHERE log LIKE 'b%' OR (log <> 'a' AND log > 'b')").await.unwrap();
    assert_eq!(i64_at(&got[0], 0) as usize, 2 * one.rows);

    // The time window: handed to the readers, and DataFusion's filter still exact.
    let (a, z) = (*one.elapsed.iter().min().unwrap(), *one.elapsed.iter().max().unwrap());
    let (lo, hi) = (a + (z - a) / 3, a + 2 * (z - a) / 3);
    let q = format!("SELECT count(*) FROM nav WHERE log = 'b' AND log_elapsed_ns >= {lo} AND {hi} > log_elapsed_ns");
    let plan = ctx.sql(&q).await.unwrap().create_physical_plan().await.unwrap();
    let (since, until) = log_scan(&plan).unwrap().window();
    assert!((since.unwrap() - lo as f64 / 1e9).abs() < 1e-5 && (until.unwrap() - hi as f64 / 1e9).abs() < 1e-5);
    let want_rows = one.elapsed.iter().filter(|&&e| e >= lo && e < hi).count();
    assert!(want_rows > 0 && want_rows < one.rows);
    assert_eq!(i64_at(&sql(&ctx, &q).await.unwrap()[0], 0) as usize, want_rows);

    // The projection: only the columns asked for, in the query's order.
    let got = sql(&ctx, "SELECT log, x, log_elapsed_ns FROM nav WHERE log = 'a' LIMIT 3").await.unwrap();
    let schema = got[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["log", "x", "log_elapsed_ns"]);
    let plan = ctx.sql("SELECT x FROM nav").await.unwrap().create_physical_plan().await.unwrap();
    assert_eq!(log_scan(&plan).unwrap().schema().fields().len(), 1);
    // Filters the scan does not take are DataFusion's, and exact.
    let over = one.lo.unwrap() + (one.hi.unwrap() - one.lo.unwrap()) / 2.0;
    let n = read.tables.iter().find(|t| t.name == "REC_NAV_SOLUTION").unwrap().batches.iter().fold(0, |n, b| {
        n + numbers(b.column_by_name("x").unwrap()).unwrap().iter().flatten().filter(|&&v| v > over).count()
    });
    let got = sql(&ctx, &format!("SELECT count(*) FROM nav WHERE x > {over:?}")).await.unwrap();
    assert_eq!(i64_at(&got[0], 0) as usize, 3 * n);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_cut_short_fails_the_query_naming_it_or_keeps_its_complete_rows() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("rosbag").join(
        std::fs::read_dir(data("rosbag"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".bag"))
            .min()
            .unwrap(),
    );
    let bytes = std::fs::read(&src).unwrap();
    let cut = dir.path().join("cut_log.bag");
    std::fs::write(&cut, &bytes[..bytes.len() * 7 / 10]).unwrap();
    let read = tables::read(&cut, &Open::default(), &Select::default()).unwrap();
    assert!(read.error.is_some(), "the cut copy fails part-way");
    let t = read.tables.iter().find(|t| t.batches.iter().any(|b| b.num_rows() > 0)).unwrap();
    let rows: usize = t.batches.iter().map(RecordBatch::num_rows).sum();

    let kept = LogTable::with_options(&[&cut], &t.name, &Open::default(), OnError::Keep).unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(kept.clone())).unwrap();
    assert_eq!(i64_at(&sql(&ctx, "SELECT count(*) FROM t").await.unwrap()[0], 0) as usize, rows);
    let faults = kept.faults();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].log, "cut_log");
    assert!(faults[0].fault.message.contains("cut_log.bag") && faults[0].fault.offset.is_some(), "{:?}", faults[0]);

    let raised = LogTable::try_new(&[&cut], &t.name).unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(raised)).unwrap();
    let e = sql(&ctx, "SELECT count(*) FROM t").await.unwrap_err();
    assert!(e.to_string().contains("log=cut_log: ") && e.to_string().contains("cut_log.bag"), "{e}");

    // An input that is not a log: an error when raising, a fault when keeping.
    let notes = dir.path().join("notes.bag");
    std::fs::write(&notes, b"not a log at all").unwrap();
    let e = LogTable::try_new(&[&cut, &notes], &t.name).unwrap_err();
    assert!(e.to_string().contains("notes.bag"), "{e}");
    let kept = LogTable::with_options(&[&cut, &notes], &t.name, &Open::default(), OnError::Keep).unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(kept.clone())).unwrap();
    assert_eq!(i64_at(&sql(&ctx, "SELECT count(*) FROM t").await.unwrap()[0], 0) as usize, rows);
    let faults = kept.faults();
    assert!(faults.iter().any(|f| f.fault.message.contains("notes.bag")), "{faults:?}");
    // No log has the table: an error that says so.
    let e = LogTable::try_new(&[&cut], "/no/such").unwrap_err();
    assert!(e.to_string().contains("no log among the 1 has a table `/no/such`"), "{e}");
}

/// Small logs share a partition; a log cut short among them keeps its complete rows and is named
/// (kept, or failing the query), and the logs after it in the partition are still read when kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_log_packed_among_others_keeps_its_rows_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("usvlog/step.usvlog");
    let bytes = std::fs::read(&src).unwrap();
    for n in ["a", "c"] {
        std::fs::write(dir.path().join(format!("{n}.usvlog")), &bytes).unwrap();
    }
    std::fs::write(dir.path().join("b_cut.usvlog"), &bytes[..bytes.len() * 6 / 10]).unwrap();
    let rows_of = |f: &Path| {
        let read = tables::read(f, &Open::default(), &Select::default()).unwrap();
        want(read.tables.iter().find(|t| t.name == "REC_NAV_SOLUTION").unwrap(), "x").rows
    };
    let (whole, cut) = (rows_of(&src), rows_of(&dir.path().join("b_cut.usvlog")));
    assert!(cut > 0 && cut < whole, "{cut} of {whole}");

    let kept = LogTable::with_options(&[dir.path()], "REC_NAV_SOLUTION", &Open::default(), OnError::Keep).unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    ctx.register_table("t", Arc::new(kept.clone())).unwrap();
    let q = "SELECT log, count(*) FROM t GROUP BY log ORDER BY log";
    let plan = ctx.sql(q).await.unwrap().create_physical_plan().await.unwrap();
    let parts = log_scan(&plan).unwrap().partitions();
    // Three small logs, one reader: two partitions (twice the readers), the logs in order.
    let logs: Vec<Vec<&str>> = parts.iter().map(|p| p.parts.iter().map(|(l, _)| l.log.as_str()).collect()).collect();
    assert_eq!(logs.concat(), ["a", "b_cut", "c"]);
    assert_eq!(logs.len(), 2, "{logs:?}");
    let got = sql(&ctx, q).await.unwrap();
    let b = &got[0];
    let names: Vec<&str> = b.column(0).as_string::<i32>().iter().map(Option::unwrap).collect();
    let counts: Vec<i64> = b.column(1).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(names, ["a", "b_cut", "c"]);
    assert_eq!(counts, [whole as i64, cut as i64, whole as i64]);
    let faults = kept.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].log, "b_cut");

    let raised = LogTable::try_new(&[dir.path()], "REC_NAV_SOLUTION").unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    ctx.register_table("t", Arc::new(raised)).unwrap();
    let e = sql(&ctx, q).await.unwrap_err();
    assert!(e.to_string().contains("log=b_cut: ") && e.to_string().contains("b_cut.usvlog"), "{e}");
}

/// A hang guard, not a timing: `fut` run on the runtime, failing the test if it has not finished
/// in five minutes.
async fn guarded<T: Send + 'static>(what: &str, fut: impl std::future::Future<Output = T> + Send + 'static) -> T {
    const GUARD: Duration = Duration::from_secs(300);
    let (tx, rx) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let _ = tx.send(fut.await);
    });
    tokio::task::block_in_place(|| rx.recv_timeout(GUARD))
        .unwrap_or_else(|_| panic!("hang guard: {what} did not finish in {} s", GUARD.as_secs()))
}

/// The scan's statistics, of one partition or (`None`) of all.
fn stats(scan: &LogScan, partition: Option<usize>) -> (Precision<usize>, Precision<usize>) {
    let s = scan.statistics_from_inputs(&[], &StatisticsArgs::new().with_partition(partition)).unwrap();
    (s.num_rows, s.total_byte_size)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_with_a_time_index_is_several_partitions_and_statistics_say_what_is_known() {
    let dir = tempfile::tempdir().unwrap();
    // A log of several chunks with its time index, and one of a single chunk (no index).
    let big = dir.path().join("big.usvlog");
    std::fs::write(&big, usvlog_input::build(3.5)).unwrap();
    let built = logspec_engine::index::build(&big, &Open::default(), false).unwrap();
    assert!(matches!(built, logspec_engine::index::Built::Written { chunks, .. } if chunks >= 3), "{built:?}");
    let small = dir.path().join("small.usvlog");
    std::fs::copy(data("usvlog/step.usvlog"), &small).unwrap();
    let (big_size, small_size) = (std::fs::metadata(&big).unwrap().len(), std::fs::metadata(&small).unwrap().len());
    let gyro = |f: &Path| {
        let read = tables::read(f, &Open::default(), &Select::default()).unwrap();
        want(read.tables.iter().find(|t| t.name == "REC_SENSOR_GYRO").unwrap(), "z_gyro")
    };
    let (wb, ws) = (gyro(&big), gyro(&small));

    // Partitions of about 1 MiB, read one at a time: a partition per part, the small log's packed
    // with the big log's last one when the bytes say so.
    let table = LogTable::try_new(&[dir.path()], "REC_SENSOR_GYRO").unwrap().with_partition_bytes(1 << 20);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    ctx.register_table("g", Arc::new(table.clone())).unwrap();
    let plan = ctx.sql("SELECT z_gyro FROM g").await.unwrap().create_physical_plan().await.unwrap();
    let scan = log_scan(&plan).unwrap();
    let parts = scan.partitions();
    let logs_of = |p: &Partition| p.parts.iter().map(|(l, _)| l.log.clone()).collect::<Vec<_>>();
    let big_parts: Vec<usize> = (0..parts.len()).filter(|&i| logs_of(&parts[i]).contains(&"big".into())).collect();
    assert!(big_parts.len() >= 3, "{parts:?}");
    assert!(parts.iter().flat_map(|p| &p.parts).all(|(l, part)| (l.log == "big") == part.range.is_some()));
    let small_part = (0..parts.len()).find(|&i| logs_of(&parts[i]).contains(&"small".into())).unwrap();
    let pieces: usize = parts.iter().map(|p| p.parts.len()).sum();
    assert_eq!(pieces, big_parts.len() + 1, "{parts:?}");
    // Before any reading: the bytes of each partition's parts, no row count.
    let all_bytes: usize = (0..parts.len())
        .map(|i| match stats(scan, Some(i)) {
            (Precision::Absent, Precision::Inexact(b)) => b,
            s => panic!("partition {i}: {s:?}"),
        })
        .sum();
    // The big log's parts tile it from its first record (after the 32-byte header) to its end.
    let big_bytes: u64 =
        parts.iter().flat_map(|p| &p.parts).filter_map(|(_, p)| p.range).map(|r| r.end - r.start).sum();
    assert_eq!(big_bytes, big_size - 32);
    assert_eq!(all_bytes as u64, big_bytes + small_size);
    assert_eq!(stats(scan, None), (Precision::Absent, Precision::Inexact(all_bytes)));

    // The partitions' rows are the log's, once each.
    let q = "SELECT log, count(*), min(z_gyro), max(z_gyro), min(log_elapsed_ns), max(log_elapsed_ns) FROM g GROUP BY log ORDER BY log";
    let got = sql(&ctx, q).await.unwrap();
    let b = &got[0];
    for (row, w) in [(0, &wb), (1, &ws)] {
        assert_eq!(b.column(1).as_primitive::<Int64Type>().value(row) as usize, w.rows);
        assert_eq!(Some(b.column(2).as_primitive::<Float32Type>().value(row) as f64), w.lo);
        assert_eq!(Some(b.column(3).as_primitive::<Float32Type>().value(row) as f64), w.hi);
        assert_eq!(b.column(4).as_primitive::<Int64Type>().value(row), *w.elapsed.iter().min().unwrap());
        assert_eq!(b.column(5).as_primitive::<Int64Type>().value(row), *w.elapsed.iter().max().unwrap());
    }
    // A time window reads only the parts whose chunks it meets, and gives the rows in it.
    let (a, z) = (*wb.elapsed.iter().min().unwrap(), *wb.elapsed.iter().max().unwrap());
    let (lo, hi) = (a + (z - a) / 10, a + 2 * (z - a) / 10);
    let q = format!("SELECT count(*) FROM g WHERE log = 'big' AND log_elapsed_ns BETWEEN {lo} AND {hi}");
    let plan = ctx.sql(&q).await.unwrap().create_physical_plan().await.unwrap();
    let windowed = log_scan(&plan).unwrap();
    let windowed_parts: usize = windowed.partitions().iter().map(|p| p.parts.len()).sum();
    assert!(windowed_parts < big_parts.len(), "{:?}", windowed.partitions());
    assert_eq!(stats(windowed, None).0, Precision::Absent);
    let in_window = wb.elapsed.iter().filter(|e| (lo..=hi).contains(*e)).count();
    assert_eq!(i64_at(&sql(&ctx, &q).await.unwrap()[0], 0) as usize, in_window);

    // Read whole once: the row counts are known and exact, and `count(*)` reads nothing.
    let rows = wb.rows + ws.rows;
    let plan = ctx.sql("SELECT z_gyro FROM g").await.unwrap().create_physical_plan().await.unwrap();
    let scan = log_scan(&plan).unwrap();
    assert_eq!(stats(scan, None).0, Precision::Exact(rows));
    if parts[small_part].parts.len() == 1 {
        assert_eq!(stats(scan, Some(small_part)).0, Precision::Exact(ws.rows));
    }
    let plan = ctx.sql("SELECT count(*) FROM g").await.unwrap().create_physical_plan().await.unwrap();
    assert!(log_scan(&plan).is_none(), "count(*) answered from the statistics");
    assert_eq!(i64_at(&sql(&ctx, "SELECT count(*) FROM g").await.unwrap()[0], 0) as usize, rows);
    // A filter on `log` leaves the partitions of that log, with their counts.
    let plan = ctx.sql("SELECT z_gyro FROM g WHERE log = 'small'").await.unwrap().create_physical_plan().await.unwrap();
    assert_eq!(stats(log_scan(&plan).unwrap(), None).0, Precision::Exact(ws.rows));

    // A log that changed (the same bytes, written later) is counted again.
    let f = std::fs::File::options().write(true).open(&small).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(10)).unwrap();
    drop(f);
    let plan = ctx.sql("SELECT z_gyro FROM g").await.unwrap().create_physical_plan().await.unwrap();
    let scan = log_scan(&plan).unwrap();
    assert_eq!(stats(scan, None).0, Precision::Absent);
    let parts = scan.partitions();
    let small_part = (0..parts.len()).find(|&i| logs_of(&parts[i]).contains(&"small".into())).unwrap();
    assert_eq!(stats(scan, Some(small_part)).0, Precision::Absent);
    let only_big: Vec<usize> = (0..parts.len()).filter(|&i| logs_of(&parts[i]) == ["big"]).collect();
    assert!(!only_big.is_empty() && only_big.iter().all(|&i| stats(scan, Some(i)).0 != Precision::Absent));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_that_waits_for_every_partition_gets_more_logs_than_are_read_at_once() {
    const KEY: &str = "/SystemStats/BatteryVoltage";
    let dir = tempfile::tempdir().unwrap();
    let bytes = rlog_input::build_r1(6.0);
    for i in 0..3 {
        std::fs::write(dir.path().join(format!("robot_{i}.rlog")), &bytes).unwrap();
    }
    let read = tables::read(&dir.path().join("robot_0.rlog"), &Open::default(), &Select::default()).unwrap();
    let one = want(read.tables.iter().find(|t| t.name == KEY).unwrap(), "value");
    // Enough batches that a log's reading cannot end before the query takes them.
    assert!(one.rows > (BATCHES_AHEAD + 3) * tables::BATCH_ROWS, "{} rows", one.rows);

    // Three logs, one read at once, under a sort-preserving merge: it takes the first batch of
    // every partition before it drains any. (Partitions of a byte: a log each.)
    let table = LogTable::try_new(&[dir.path()], KEY).unwrap().with_partition_bytes(1);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    ctx.register_table("t", Arc::new(table)).unwrap();
    let scan = ctx.sql("SELECT log_elapsed_ns, log FROM t").await.unwrap().create_physical_plan().await.unwrap();
    assert!(log_scan(&scan).is_some());
    assert_eq!(scan.properties().partitioning.partition_count(), 3);
    let order =
        LexOrdering::new([PhysicalSortExpr::new_default(col("log_elapsed_ns", &scan.schema()).unwrap())]).unwrap();
    let merge: Arc<dyn ExecutionPlan> = Arc::new(SortPreservingMergeExec::new(order, scan));
    let got = guarded("a sort-preserving merge of 3 logs with target_partitions 1", collect(merge, ctx.task_ctx()))
        .await
        .unwrap();
    let elapsed: Vec<i64> =
        got.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
    let mut want_elapsed: Vec<i64> = one.elapsed.iter().flat_map(|&e| [e; 3]).collect();
    want_elapsed.sort_unstable();
    assert_eq!(elapsed, want_elapsed);
}
