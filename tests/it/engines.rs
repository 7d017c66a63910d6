//! The engines' scan (`logspec_engine::stream`: one table of one log, streamed) held to the
//! generic path of `tests/it/fast_paths.rs` (every sample as a value tree into the `Tables`
//! sink) on every bundled log: each table's rows alike, with the `log` column; a time window
//! keeps exactly the rows whose `log_elapsed_ns` the window holds; a projection keeps the
//! columns asked for; a log without the table gives no rows and no fault.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use logspec::log::{Format, Open, Select};
use logspec_engine::logs::{partition, LogFile};
use logspec_engine::stream::{self, Query, LOG_COLUMN};

use crate::fast_paths::{bundled, generic};
use crate::index_harness::{
    arrow_select_filter, hows, index_dir, scan, scan_parts, without_log, Large, Times, Window, Windows,
};

#[test]
fn every_table_of_every_bundled_log_streams_as_the_generic_path_reads_it() {
    let mut tables = 0;
    for (path, file) in bundled_copies(&index_dir("streams")) {
        let Ok((want, _, error)) = generic(&path, &Select::default()) else { continue };
        for (name, schema, rows) in &want {
            // The whole table, then projections built with only their columns: no value column
            // (a row's times alone, as for `count(*)`), and a time column with the first and the
            // last value column (the columns between left out).
            let values: Vec<&str> = schema.fields()[2..].iter().map(|f| f.name().as_str()).collect();
            let mut some: Vec<&str> = vec!["log_time"];
            some.extend(values.first());
            some.extend(values.last().filter(|_| values.len() > 1));
            let asks: Vec<Option<Vec<&str>>> = vec![None, Some(vec![]), Some(some)];
            for ask in asks {
                let what = format!("{}: {name} {ask:?}", path.display());
                let columns =
                    ask.as_ref().map(|a| a.iter().map(|c| c.to_string()).chain([LOG_COLUMN.into()]).collect());
                let (batches, done) = scan(&file, &Query { table: name.clone(), columns, ..Query::default() });
                let got = without_log(&batches, &file.log);
                assert_eq!(got.as_ref().map_or(0, RecordBatch::num_rows) as u64, done.rows, "{what}: rows counted");
                // A log that fails part-way fails the same way for one table.
                assert_eq!(done.fault.is_some(), error.is_some(), "{what}: the fault");
                let want = rows.as_ref().map(|w| match &ask {
                    None => w.clone(),
                    Some(a) => {
                        w.project(&a.iter().map(|c| w.schema().index_of(c).unwrap()).collect::<Vec<_>>()).unwrap()
                    }
                });
                match (&got, &want) {
                    (Some(g), Some(w)) => {
                        assert_eq!(g.num_rows(), w.num_rows(), "{what}: rows");
                        assert_eq!(g.schema().fields(), w.schema().fields(), "{what}: columns");
                        assert_eq!(g.columns(), w.columns(), "{what}: values");
                    }
                    (None, None) => {}
                    (g, w) => panic!(
                        "{what}: {} rows streamed, {} read",
                        g.as_ref().map_or(0, |b| b.num_rows()),
                        w.as_ref().map_or(0, |b| b.num_rows())
                    ),
                }
            }
            tables += 1;
        }
    }
    assert!(tables > 100, "{tables} tables");
}

/// The bundled logs, each with a copy in the scratch folder `dir` (in a folder named as the
/// log's) for the engines to read: the time index that a whole scan writes beside a log of more
/// than one chunk goes beside the copy, never into tests/data.
fn bundled_copies(dir: &Path) -> Vec<(PathBuf, LogFile)> {
    let copy = |path: &Path| {
        let folder = dir.join(path.parent().unwrap().file_name().unwrap());
        std::fs::create_dir_all(&folder).unwrap();
        let copy = folder.join(path.file_name().unwrap());
        std::fs::copy(path, &copy).unwrap();
        LogFile { log: partition(&copy), file: copy }
    };
    bundled().into_iter().map(|path| (path.clone(), copy(&path))).collect()
}

/// The largest table of a generic read (its name and rows), the middle third of its time span
/// (since, until), and the rows whose elapsed time that holds.
fn largest_middle_third(
    want: &[(String, SchemaRef, Option<RecordBatch>)],
) -> Option<(&str, &RecordBatch, Window, RecordBatch)> {
    let Some((name, _, Some(rows))) = want.iter().max_by_key(|t| t.2.as_ref().map_or(0, |r| r.num_rows())) else {
        return None;
    };
    let elapsed = rows.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
    let (lo, hi) = (elapsed.iter().flatten().min().unwrap(), elapsed.iter().flatten().max().unwrap());
    let (since, until) = ((lo + (hi - lo) / 3) as f64 / 1e9, (lo + 2 * (hi - lo) / 3) as f64 / 1e9);
    let keep: BooleanArray =
        elapsed.iter().map(|e| e.map(|e| e as f64 / 1e9 >= since && e as f64 / 1e9 <= until)).collect();
    Some((name, rows, (Some(since), Some(until)), arrow_select_filter(rows, &keep)))
}

/// The largest table of each bundled log, its middle third, streamed twice: first with no time
/// index (a log of more than one chunk read whole, which writes its index), then with one where
/// that was written (only the chunks the window meets read).
#[test]
fn a_time_window_keeps_the_rows_whose_elapsed_time_it_holds() {
    let mut checked = 0;
    for (path, file) in bundled_copies(&index_dir("window")) {
        let Ok((want, _, _)) = generic(&path, &Select::default()) else { continue };
        let Some((name, _, (since, until), expected)) = largest_middle_third(&want) else { continue };
        let query = Query { table: name.into(), since, until, ..Query::default() };
        for _ in 0..2 {
            let (batches, _) = scan(&file, &query);
            match without_log(&batches, &file.log) {
                Some(g) => assert_eq!(g.columns(), expected.columns(), "{}: {name}", path.display()),
                None => assert_eq!(expected.num_rows(), 0, "{}: {name}", path.display()),
            }
        }
        checked += 1;
    }
    assert!(checked > 20);
}

#[test]
fn a_projection_keeps_the_columns_asked_for_and_another_table_gives_nothing() {
    let path = crate::common::data("usvlog/step.usvlog");
    let file = LogFile { file: path.clone(), log: partition(&path) };
    let query =
        Query { table: "REC_NAV_SOLUTION".into(), columns: Some(vec!["x".into(), "log".into()]), ..Query::default() };
    let (batches, done) = scan(&file, &query);
    assert!(done.fault.is_none());
    let names: Vec<String> = batches[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["x", "log"]);
    let full = stream::schema(&path, &Open::default(), "REC_NAV_SOLUTION").unwrap().unwrap();
    assert_eq!(full.fields().last().unwrap().name(), LOG_COLUMN);
    assert_eq!(stream::schema(&path, &Open::default(), "/no/such").unwrap(), None);
    let (batches, done) = scan(&file, &Query { table: "/no/such".into(), ..Query::default() });
    assert!(batches.is_empty() && done.fault.is_none() && done.rows == 0);
    // The full schema given: the columns asked for, in its order.
    let mut got = Vec::new();
    stream::scan(&file, &Open::default(), &query, Some(&Arc::clone(&full)), &mut |b| {
        got.push(b);
        Ok(())
    })
    .unwrap();
    assert_eq!(got[0].schema().fields().len(), 2);
    assert_eq!(got.iter().map(|b| b.column(0).len()).sum::<usize>(), batches_rows(&path));
}

fn batches_rows(path: &std::path::Path) -> usize {
    let (want, _, _) = generic(path, &Select::default()).unwrap();
    want.iter().find(|t| t.0 == "REC_NAV_SOLUTION").unwrap().2.as_ref().unwrap().num_rows()
}

/// A USVLOG of `n` records written here, whose values the tests know without reading it: record
/// `i` at `i` ms, a navigation solution (`x = i`) when `i % 3 == 0`, else a gyro sample
/// (`z_gyro = i`). 21 or 36 bytes a record: 200 000 records are about 5 MiB, five chunks of the
/// time index.
fn write_usvlog(path: &std::path::Path, n: u64) {
    use logspec::formats::usvlog::{FileHeader, RecNavSolution, RecSensorGyro, Usvlog, UsvlogRecord, FW_MODEL_SCHEMA};
    let mut bytes = Vec::new();
    let mut w = logspec::runtime::Writer::<_, Usvlog>::new(
        &mut bytes,
        &FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 0 },
    )
    .unwrap();
    for i in 0..n {
        let rec: UsvlogRecord = if i % 3 == 0 {
            RecNavSolution { x: i as f32, y: 0.0, psi: 0.0, v: 0.0, r: 0.0, b_g: 0.0 }.into()
        } else {
            RecSensorGyro { z_gyro: i as f32, b_g_est: 0.5, valid: 1 }.into()
        };
        w.write(i * 1000, &rec).unwrap();
    }
    drop(w);
    std::fs::write(path, bytes).unwrap();
}

/// The gyro values (`z_gyro`) record `i` of [`write_usvlog`] gives in the window, in order.
fn gyro_expected(n: u64, since: Option<f64>, until: Option<f64>) -> Vec<f32> {
    (0..n)
        .filter(|i| i % 3 != 0)
        .filter(|&i| {
            let t = (i * 1_000_000) as f64 / 1e9;
            since.is_none_or(|s| t >= s) && until.is_none_or(|u| t <= u)
        })
        .map(|i| i as f32)
        .collect()
}

fn z_gyro(batches: &[RecordBatch]) -> Vec<f32> {
    batches
        .iter()
        .flat_map(|b| {
            let c = b.column(b.schema().index_of("z_gyro").unwrap());
            c.as_any().downcast_ref::<arrow_array::Float32Array>().unwrap().values().to_vec()
        })
        .collect()
}

/// The first whole scan of a large log writes its time index; then a time window reads only the
/// chunks it meets and the log splits into partitions, and every way gives the rows written,
/// over a map and over a stream (which skips the records before a part instead of seeking).
#[test]
fn a_large_usvlog_reads_the_same_with_and_without_its_index_and_in_several_partitions() {
    use logspec::log::index::CHUNK_BYTES;
    let dir = index_dir("parts");
    let path = dir.join("big.usvlog");
    let n = 200_000;
    write_usvlog(&path, n);
    let mut log = Large::new(&path, Format::Usvlog);
    let all = Query { table: "REC_SENSOR_GYRO".into(), ..Query::default() };
    // Without an index: one partition, the whole log; a window is read whole too.
    assert_eq!(stream::partitions(&log.file, &hows()[0], &all, CHUNK_BYTES), vec![stream::Part::default()]);
    let (since, until) = (Some(0.45 * n as f64 / 1e3), Some(0.55 * n as f64 / 1e3));
    let window = Query { since, until, ..all.clone() };
    let (b, _) = scan(&log.file, &window);
    assert_eq!(z_gyro(&b), gyro_expected(n, since, until), "a window without an index");
    assert!(log.place().is_file(), "a scan that read the log whole wrote its index");
    std::fs::remove_file(log.place()).unwrap();
    let rows = log.first_scan("REC_SENSOR_GYRO");
    assert_eq!(z_gyro(&[rows]), gyro_expected(n, None, None));
    log.chunks(4, 32, Some(n), Times::Rise);
    log.reads_the_same(&["REC_SENSOR_GYRO"], Windows::At(&[(since, until)]));
    // The values written, with the index; another table in partitions of two chunks.
    let (b, _) = scan(&log.file, &window);
    assert_eq!(z_gyro(&b), gyro_expected(n, since, until), "a window with the index");
    for how in hows() {
        let parts = stream::partitions(&log.file, &how, &all, CHUNK_BYTES);
        assert_eq!(z_gyro(&scan_parts(&log.file, &how, &all, &parts)), gyro_expected(n, None, None));
        let parts = stream::partitions(&log.file, &how, &window, CHUNK_BYTES);
        assert!(!parts.is_empty(), "the chunks the window meets");
        assert_eq!(z_gyro(&scan_parts(&log.file, &how, &window, &parts)), gyro_expected(n, since, until));
        let nav = Query { table: "REC_NAV_SOLUTION".into(), ..Query::default() };
        let parts = stream::partitions(&log.file, &how, &nav, 2 * CHUNK_BYTES);
        let rows: usize = scan_parts(&log.file, &how, &nav, &parts).iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows as u64, n.div_ceil(3));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The one planner of the engines' partitions (`stream::plan`): small logs packed in order,
/// about the target bytes a partition, at least twice the readers and a multiple of them (a log
/// each when there are fewer logs); a large indexed log split at its chunks among the others;
/// every sample read once whichever way the logs are packed, and a log that cannot be read
/// planned whole, its fault its own.
#[test]
fn logs_pack_into_partitions_of_about_the_target_bytes_and_a_large_one_splits() {
    use logspec::log::index::CHUNK_BYTES;
    let dir = index_dir("plan");
    let how = Open { map: true, ..Open::default() };
    let all = Query { table: "REC_SENSOR_GYRO".into(), ..Query::default() };
    // Twelve small logs (a chunk each: no index), the same size.
    let small: Vec<LogFile> = (0..12)
        .map(|i| {
            let p = dir.join(format!("s{i:02}.usvlog"));
            write_usvlog(&p, 3_000);
            LogFile { file: p.clone(), log: partition(&p) }
        })
        .collect();
    let size = std::fs::metadata(&small[0].file).unwrap().len();
    assert!(size < CHUNK_BYTES);
    let names = |plan: &[stream::Partition]| -> Vec<Vec<String>> {
        plan.iter()
            .map(|p| {
                assert_eq!(p.bytes, p.parts.len() as u64 * size);
                p.parts
                    .iter()
                    .map(|(l, part)| {
                        assert_eq!(*part, stream::Part::default(), "a small log is read whole");
                        l.log.clone()
                    })
                    .collect()
            })
            .collect()
    };
    let order: Vec<String> = (0..12).map(|i| format!("s{i:02}")).collect();
    let groups = |n: usize| order.chunks(n).map(<[String]>::to_vec).collect::<Vec<_>>();
    // Four logs' bytes a partition: three partitions for one reader, four (a multiple of two)
    // for two readers, six for three, a log each for eight.
    assert_eq!(names(&stream::plan(&small, &how, &all, 4 * size, 1)), groups(4));
    assert_eq!(names(&stream::plan(&small, &how, &all, 4 * size, 2)), groups(3));
    assert_eq!(names(&stream::plan(&small, &how, &all, 4 * size, 3)), groups(2));
    assert_eq!(names(&stream::plan(&small, &how, &all, 4 * size, 8)), groups(1));
    // 64 MiB a partition: the twelve fill two, the fewest one reader is given.
    assert_eq!(names(&stream::plan(&small, &how, &all, logspec_engine::index::PARTITION_BYTES, 1)), groups(6));
    assert!(stream::plan(&[], &how, &all, size, 1).is_empty());

    // A large log with its index among them: split at its chunks, in its place among the logs.
    let n = 300_000;
    let big_path = dir.join("big.usvlog");
    write_usvlog(&big_path, n);
    assert!(matches!(
        logspec_engine::index::build(&big_path, &how, false).unwrap(),
        logspec_engine::index::Built::Written { .. }
    ));
    let big = LogFile { file: big_path.clone(), log: "big".into() };
    let big_size = std::fs::metadata(&big_path).unwrap().len();
    assert!(big_size > 4 * CHUNK_BYTES, "{big_size}");
    let logs = vec![small[0].clone(), big.clone(), small[1].clone()];
    let plan = stream::plan(&logs, &how, &all, 2 * CHUNK_BYTES, 1);
    let flat: Vec<(String, stream::Part)> =
        plan.iter().flat_map(|p| p.parts.iter().map(|(l, part)| (l.log.clone(), *part))).collect();
    assert_eq!(flat.first().unwrap().0, "s00");
    assert_eq!(flat.last().unwrap().0, "s01");
    let big_parts: Vec<_> =
        flat.iter().filter(|(l, _)| l == "big").map(|(_, p)| p.range.expect("a byte range")).collect();
    assert_eq!(big_parts.len(), flat.len() - 2, "the large log's parts between the small logs");
    assert!(big_parts.len() as u64 >= big_size / (2 * CHUNK_BYTES), "{big_parts:?}");
    assert_eq!(big_parts.first().unwrap().start, 32, "after the 32-byte header");
    assert_eq!(big_parts.last().unwrap().end, big_size);
    assert!(big_parts.windows(2).all(|w| w[0].end == w[1].start), "the parts tile the log");
    assert!(big_parts.iter().all(|r| r.end - r.start <= 2 * CHUNK_BYTES + CHUNK_BYTES), "{big_parts:?}");
    assert_eq!(plan.iter().map(|p| p.bytes).sum::<u64>(), 2 * size + big_size - 32);
    // Every sample once, each under its own log's name.
    let read = |plan: &[stream::Partition]| {
        let mut by_log: std::collections::BTreeMap<String, Vec<f32>> = Default::default();
        for p in plan {
            for (log, part) in &p.parts {
                let b = scan_parts(log, &how, &all, &[*part]);
                for b in &b {
                    let names = b
                        .column(b.schema().index_of(LOG_COLUMN).unwrap())
                        .as_any()
                        .downcast_ref::<StringArray>()
                        .unwrap()
                        .clone();
                    assert!(names.iter().all(|x| x == Some(log.log.as_str())));
                }
                by_log.entry(log.log.clone()).or_default().extend(z_gyro(&b));
            }
        }
        by_log
    };
    let got = read(&plan);
    assert_eq!(got["big"], gyro_expected(n, None, None));
    assert_eq!(got["s00"], gyro_expected(3_000, None, None));
    assert_eq!(got["s01"], gyro_expected(3_000, None, None));
    // Two readers with 64 MiB partitions: the large log splits finer (at most the total over
    // four), so that there are four partitions.
    let plan = stream::plan(&logs, &how, &all, logspec_engine::index::PARTITION_BYTES, 2);
    assert_eq!(plan.len(), 4, "{plan:?}");
    assert_eq!(read(&plan)["big"], gyro_expected(n, None, None));

    // A log that is not there is planned whole; its fault is its own.
    let gone = LogFile { file: dir.join("gone.usvlog"), log: "gone".into() };
    let plan = stream::plan(&[small[0].clone(), gone.clone(), small[1].clone()], &how, &all, 1 << 30, 1);
    let parts: Vec<_> = plan.iter().flat_map(|p| p.parts.clone()).collect();
    assert_eq!(parts.iter().map(|(l, _)| l.log.as_str()).collect::<Vec<_>>(), ["s00", "gone", "s01"]);
    let done = stream::scan_part(&gone, &how, &all, parts[1].1, None, &mut |_| Ok(())).unwrap();
    let fault = done.fault.expect("the log that is not there fails");
    assert!(format!("{:?} {}", fault.file, fault.message).contains("gone.usvlog"), "{fault:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An index is used only while it matches its log: a log rewritten (another size), or changed at
/// its end under the same size and modification time, has its index ignored and rebuilt; an
/// index file cut, tampered with or not an index at all is ignored, and the answers stay those
/// of the log.
#[test]
fn a_stale_or_bad_index_is_ignored_and_rebuilt() {
    use logspec::log::index::{self, CHUNK_BYTES};
    use logspec::log::Format;
    use logspec_engine::index::{build, Built};
    let dir = index_dir("stale");
    let path = dir.join("log.usvlog");
    let file = LogFile { file: path.clone(), log: partition(&path) };
    let how = Open { map: true, ..Open::default() };
    let all = Query { table: "REC_SENSOR_GYRO".into(), ..Query::default() };
    write_usvlog(&path, 150_000);
    assert!(matches!(build(&path, &how, false).unwrap(), Built::Written { .. }));
    assert!(matches!(build(&path, &how, false).unwrap(), Built::Current { .. }));
    // Rewritten with more records: the old index is stale, the scan right, the index rebuilt.
    write_usvlog(&path, 160_000);
    assert_eq!(index::load(&path, Format::Usvlog), None, "another size");
    assert_eq!(stream::partitions(&file, &how, &all, CHUNK_BYTES).len(), 1);
    let (b, _) = scan(&file, &all);
    assert_eq!(z_gyro(&b), gyro_expected(160_000, None, None));
    let idx = index::load(&path, Format::Usvlog).expect("rebuilt by the whole scan");
    assert_eq!(idx.chunks.iter().map(|c| c.records).sum::<u64>(), 160_000);
    // The last record's value changed in place, the modification time put back: the tail's hash.
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    assert_eq!(index::load(&path, Format::Usvlog), None, "the last 64 KiB changed");
    // Bad index files beside a log whose index they claim to be.
    write_usvlog(&path, 150_000);
    assert!(matches!(build(&path, &how, false).unwrap(), Built::Written { .. }));
    let good = std::fs::read(&index::places(&path)[0]).unwrap();
    let stamp = index::stamp(&path).unwrap();
    let idx = index::decode(&good, 1, &stamp).expect("the index of the log as it is");
    assert_eq!(index::decode(&good, 2, &stamp), None, "another format's");
    let mut bad: Vec<(String, Vec<u8>)> = vec![
        ("cut".into(), good[..good.len() - 7].to_vec()),
        ("header only".into(), good[..112].to_vec()),
        ("not an index".into(), b"USVLOG not an index at all".to_vec()),
        ("empty".into(), Vec::new()),
    ];
    // A chunk's offset moved, a chunk count of 2^60, a chunk past the log's end.
    let chunk0 = 112 + 5;
    let mut moved = good.clone();
    moved[chunk0] ^= 1;
    bad.push(("a chunk moved".into(), moved));
    let mut count = good.clone();
    count[104..112].copy_from_slice(&(1u64 << 60).to_le_bytes());
    bad.push(("a huge count".into(), count));
    let mut long = good.clone();
    let last_len = good.len() - 48 + 8;
    long[last_len..last_len + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    bad.push(("a chunk past the end".into(), long));
    for (what, bytes) in &bad {
        assert_eq!(index::decode(bytes, 1, &stamp), None, "{what}");
        std::fs::write(&index::places(&path)[0], bytes).unwrap();
        assert_eq!(index::load(&path, Format::Usvlog), None, "{what}");
        let parts = stream::partitions(&file, &how, &all, CHUNK_BYTES);
        assert_eq!(parts, vec![stream::Part::default()], "{what}: read whole");
        assert_eq!(z_gyro(&scan_parts(&file, &how, &all, &parts)), gyro_expected(150_000, None, None), "{what}");
    }
    assert!(idx.chunks.len() > 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every bundled log, copied and indexed (`logspec index`'s [`build`]; the formats without a
/// time index say so): its largest table read in partitions of a chunk each, whole and in a time
/// window, equals the generic path's rows.
#[test]
fn every_bundled_log_reads_the_same_in_partitions() {
    use logspec_engine::index::{build, Built};
    let dir = index_dir("bundled");
    let mut indexed = 0;
    let mut formats = std::collections::BTreeSet::new();
    let mut own = std::collections::BTreeSet::new();
    for (path, file) in bundled_copies(&dir) {
        let Ok((want, _, error)) = generic(&path, &Select::default()) else { continue };
        let how = Open { map: true, ..Open::default() };
        let ext = path.extension().unwrap_or_default().to_string_lossy().into_owned();
        match build(&file.file, &how, false) {
            Ok(Built::Written { .. }) => {
                indexed += 1;
                formats.insert(ext);
            }
            Ok(Built::Own { chunks: Some(_) }) => {
                own.insert(ext);
            }
            Ok(Built::NoIndex | Built::Own { .. }) => {}
            Ok(Built::Current { .. }) => panic!("{}: an index before any was written", path.display()),
            Err(e) => assert!(error.is_some(), "{}: {e}", path.display()),
        }
        let Some((name, rows, (since, until), in_window)) = largest_middle_third(&want) else { continue };
        for (query, expected) in [
            (Query { table: name.into(), ..Query::default() }, rows.clone()),
            (Query { table: name.into(), since, until, ..Query::default() }, in_window),
        ] {
            let parts = stream::partitions(&file, &how, &query, 1);
            let mut batches = Vec::new();
            for p in parts {
                stream::scan_part(&file, &how, &query, p, None, &mut |b| {
                    batches.push(b);
                    Ok(())
                })
                .unwrap();
            }
            match without_log(&batches, &file.log) {
                Some(g) => assert_eq!(g.columns(), expected.columns(), "{}: {name}", path.display()),
                None => assert_eq!(expected.num_rows(), 0, "{}: {name}", path.display()),
            }
        }
    }
    assert!(indexed >= 1, "{indexed} bundled logs indexed");
    for ext in ["rlog", "wpilog"] {
        assert!(formats.contains(ext), "a bundled .{ext} indexed: {formats:?}");
    }
    // Those that carry their own index are read in parts of it (a `.db3`: runs of row ids).
    for ext in ["bag", "mcap", "db3"] {
        assert!(own.contains(ext), "a bundled .{ext} with its own index: {own:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `logspec index` writes the index beside the log, or in `$XDG_CACHE_HOME/logspec/` when it
/// cannot be written there (here: a folder holds its name), and finds it there the next time.
#[test]
fn the_index_verb_writes_beside_the_log_or_in_the_cache_directory() {
    let dir = index_dir("verb");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
            .args(args)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let beside = dir.join("a.usvlog");
    write_usvlog(&beside, 100_000);
    let (code, err) = run(&["index", beside.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("chunk(s), index written to") && dir.join("a.usvlog.logspec-idx").is_file(), "{err}");
    let (code, err) = run(&["index", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("index current"), "a folder's logs, the index files passed over: {err}");
    let cached = dir.join("b.usvlog");
    write_usvlog(&cached, 100_000);
    std::fs::create_dir(dir.join("b.usvlog.logspec-idx")).unwrap();
    let (code, err) = run(&["index", cached.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let in_cache: Vec<_> = std::fs::read_dir(dir.join("cache/logspec")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(in_cache.len(), 1, "{err}");
    assert!(
        in_cache[0].extension().is_some_and(|x| x == "idx") && err.contains(&in_cache[0].display().to_string()),
        "{err}"
    );
    let (code, err) = run(&["index", cached.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("index current"), "{err}");
    // A log that carries its own index says so, and so does a format without one.
    let bag = crate::common::data("rosbag/test_lz4.bag");
    let (code, err) = run(&["index", bag.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("5 chunk(s) in the log's own index; no index file is needed"), "{err}");
    let unindexed = crate::common::data("rosbag/test_unindexed.bag");
    let (code, err) = run(&["index", unindexed.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no usable index of its own"), "{err}");
    let db3 = crate::common::data("ros2/rosbag2_sqlite3_cdr_test_0.db3");
    let (code, err) = run(&["index", db3.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 chunk(s) in the log's own index; no index file is needed"), "{err}");
    let stream = crate::common::data("rlog/gen_akit_head_r2_stream.bin");
    let (code, err) = run(&["index", stream.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("has no time index"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
