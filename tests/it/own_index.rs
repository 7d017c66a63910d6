//! Logs that carry their own index of chunks (ROS bags: the chunk infos of the bag's index;
//! MCAP files: the chunk indexes of the summary; rosbag2 sqlite3 files: runs of row ids, their
//! times from SQLite's timestamp index) split into partitions at their chunks, with no index
//! file: every partition read alone, the rows together are the whole log's, with and without a
//! time window. A file whose chunks cannot each be read alone (an unindexed bag, an MCAP file
//! without a summary or with a message outside chunks, a `.db3` of no messages or with a
//! timestamp that is not an integer, a split rosbag2 bag) is one partition.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow_array::{Array, Int64Array, RecordBatch};
use logspec::log::{Open, Select};
use logspec_engine::logs::{partition, LogFile};
use logspec_engine::stream::{self, Part, Query};

use crate::fast_paths::generic;

fn how() -> Open {
    Open { map: true, ..Open::default() }
}

/// Each row as text (its columns' values), sorted: the rows as a multiset, since the parts of
/// a bag whose chunks overlap in time are each in time order, not the whole.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            (0..b.num_rows())
                .map(move |r| b.columns().iter().map(|c| format!("{:?}", c.slice(r, 1))).collect::<Vec<_>>().join("|"))
        })
        .collect();
    out.sort();
    out
}

fn whole(file: &LogFile, query: &Query) -> Vec<String> {
    let mut batches = Vec::new();
    let done = stream::scan(file, &how(), query, None, &mut |b| {
        batches.push(b);
        Ok(())
    })
    .unwrap();
    assert!(done.fault.is_none(), "{}: {:?}", file.file.display(), done.fault);
    rows(&batches)
}

fn in_parts(file: &LogFile, query: &Query, parts: &[Part]) -> Vec<String> {
    let mut batches = Vec::new();
    for &p in parts {
        let done = stream::scan_part(file, &how(), query, p, None, &mut |b| {
            batches.push(b);
            Ok(())
        })
        .unwrap();
        assert!(done.fault.is_none(), "{}: {p:?}: {:?}", file.file.display(), done.fault);
    }
    rows(&batches)
}

/// The log's time span in seconds since its origin (the largest `log_elapsed_ns` of its tables).
fn span(file: &LogFile, tables: &[String]) -> f64 {
    let mut last = 0i64;
    for t in tables {
        let q = Query { table: t.clone(), columns: Some(vec!["log_elapsed_ns".into()]), ..Query::default() };
        stream::scan(file, &how(), &q, None, &mut |b| {
            let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            last = last.max(c.values().iter().copied().max().unwrap_or(0));
            Ok(())
        })
        .unwrap();
    }
    last as f64 / 1e9
}

/// Every table of `path`, read whole and in one partition per chunk, with and without a window
/// over the middle of its time; the chunks its own index lists.
fn reads_the_same_in_parts(path: &Path, tables: &[String]) -> usize {
    let file = LogFile { file: path.to_path_buf(), log: partition(path) };
    let chunks = logspec::log::open(path, &how()).unwrap().index().map_or(0, |i| i.chunks.len());
    let end = span(&file, tables);
    for table in tables {
        for (since, until) in [(None, None), (Some(end * 0.3), Some(end * 0.6))] {
            let query = Query { table: table.clone(), since, until, ..Query::default() };
            let parts = stream::partitions(&file, &how(), &query, 1);
            if since.is_none() {
                assert_eq!(parts.len(), chunks.max(1), "{}: one partition per chunk", path.display());
            } else {
                assert!(parts.len() <= chunks.max(1), "{}: {parts:?}", path.display());
            }
            let want = whole(&file, &query);
            assert!(since.is_some() || !want.is_empty(), "{}: {table}: rows", path.display());
            assert_eq!(in_parts(&file, &query, &parts), want, "{}: {table} {since:?}..{until:?}", path.display());
        }
    }
    chunks
}

fn tables_of(path: &Path) -> Vec<String> {
    let (tables, _, _) = generic(path, &Select::default()).unwrap();
    tables.into_iter().map(|(name, _, _)| name).collect()
}

#[test]
fn bundled_bags_and_mcap_files_read_the_same_in_partitions_at_their_chunks() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut split = Vec::new();
    for dir in ["rosbag", "ros2"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(data.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "bag" || x == "mcap"))
            .collect();
        files.sort();
        for path in files {
            // Those without chunks to start at are read whole (below).
            let tables = tables_of(&path);
            if tables.is_empty() || logspec::log::open(&path, &how()).unwrap().index().is_none() {
                continue;
            }
            if reads_the_same_in_parts(&path, &tables) > 1 {
                split.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    // The bags of several chunks (one with chunks that overlap in time) and an MCAP file of three.
    for name in ["gen_unsorted.bag", "test_bz2.bag", "test_lz4.bag", "gen_mcapros2_zstd.mcap"] {
        assert!(split.iter().any(|s| s == name), "{name} was split: {split:?}");
    }
}

#[test]
fn unindexed_bags_are_read_whole() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rosbag");
    for name in ["test_unindexed.bag", "gen_roslz4_unindexed.bag"] {
        let path = data.join(name);
        assert!(logspec::log::open(&path, &how()).unwrap().index().is_none(), "{name}");
        let file = LogFile { file: path.clone(), log: partition(&path) };
        let query = Query { table: tables_of(&path)[0].clone(), ..Query::default() };
        assert_eq!(stream::partitions(&file, &how(), &query, 1), vec![Part::default()], "{name}");
    }
}

/// An MCAP file of `n` CDR `int32` messages on two topics, 1 ms apart, in chunks of about
/// `chunk` bytes, written by the `mcap` crate.
fn write_mcap(path: &Path, n: u32, chunk: u64, compression: Option<mcap::Compression>) {
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = mcap::WriteOptions::new().compression(compression).chunk_size(Some(chunk)).create(f).unwrap();
    let schema = w.add_schema("std_msgs/msg/Int32", "ros2msg", b"int32 data").unwrap();
    let topics = [
        w.add_channel(schema, "/a", "cdr", &BTreeMap::new()).unwrap(),
        w.add_channel(schema, "/b", "cdr", &BTreeMap::new()).unwrap(),
    ];
    for i in 0..n {
        let mut data = vec![0, 1, 0, 0];
        data.extend_from_slice(&(i as i32).to_le_bytes());
        let t = 1_000_000_000 + u64::from(i) * 1_000_000;
        let header = mcap::records::MessageHeader {
            channel_id: topics[(i % 3 == 0) as usize],
            sequence: i,
            log_time: t,
            publish_time: t,
        };
        w.write_to_known_channel(&header, &data).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_large_mcap_file_splits_at_its_chunks_and_a_window_reads_only_those_it_meets() {
    let dir = crate::scratch::temp_dir().join(format!("logspec-own-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, compression) in [("none.mcap", None), ("zstd.mcap", Some(mcap::Compression::Zstd))] {
        let path = dir.join(name);
        write_mcap(&path, 30_000, 16 * 1024, compression);
        let tables = vec!["/a".to_string(), "/b".to_string()];
        let chunks = reads_the_same_in_parts(&path, &tables);
        assert!(chunks > 10, "{name}: {chunks} chunks");
        // A window of a tenth of the time meets about a tenth of the chunks, and its rows are
        // the messages written in it.
        let file = LogFile { file: path.clone(), log: partition(&path) };
        let query = Query { table: "/b".into(), since: Some(10.0), until: Some(12.999), ..Query::default() };
        let parts = stream::partitions(&file, &how(), &query, u64::MAX);
        let read: u64 = parts.iter().map(|p| p.range.map_or(0, |r| r.end - r.start)).sum();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(read * 5 < size, "{name}: the window reads {read} bytes of {size}");
        let mut got = Vec::new();
        for &p in &parts {
            let q = Query { columns: Some(vec!["data".into()]), ..query.clone() };
            stream::scan_part(&file, &how(), &q, p, None, &mut |b| {
                let c = b.column(0).as_any().downcast_ref::<arrow_array::Int32Array>().unwrap();
                got.extend(c.values().iter().copied());
                Ok(())
            })
            .unwrap();
        }
        got.sort();
        let want: Vec<i32> = (10_000..13_000).filter(|i| i % 3 == 0).collect();
        assert!(got == want, "{name}: {} values from {:?} to {:?}", got.len(), got.first(), got.last());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_mcap_file_whose_chunks_cannot_be_read_alone_is_read_whole() {
    let dir = crate::scratch::temp_dir().join(format!("logspec-own-index-whole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.mcap");
    write_mcap(&path, 5_000, 4 * 1024, None);
    let bytes = std::fs::read(&path).unwrap();
    assert!(logspec::log::open(&path, &how()).unwrap().index().is_some_and(|i| i.chunks.len() > 1));
    // Without its summary (the footer's summary offset zeroed): the chunks' channels are not
    // known before the chunks.
    let mut cut = bytes.clone();
    let footer = cut.len() - 8 - 4 - 8 - 8;
    cut[footer..footer + 8].fill(0);
    let no_summary = dir.join("no_summary.mcap");
    std::fs::write(&no_summary, &cut).unwrap();
    // Messages outside chunks (a file written without chunks).
    let loose = dir.join("loose.mcap");
    write_loose(&loose);
    for path in [&no_summary, &loose] {
        assert!(logspec::log::open(path, &how()).unwrap().index().is_none(), "{}", path.display());
        let file = LogFile { file: path.clone(), log: partition(path) };
        let query = Query { table: "/a".into(), ..Query::default() };
        assert_eq!(stream::partitions(&file, &how(), &query, 1), vec![Part::default()], "{}", path.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An MCAP file whose messages are outside chunks.
fn write_loose(path: &Path) {
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = mcap::WriteOptions::new().use_chunks(false).create(f).unwrap();
    let schema = w.add_schema("std_msgs/msg/Int32", "ros2msg", b"int32 data").unwrap();
    let a = w.add_channel(schema, "/a", "cdr", &BTreeMap::new()).unwrap();
    for i in 0..2000u32 {
        let t = 1_000_000_000 + u64::from(i) * 1_000_000;
        let header = mcap::records::MessageHeader { channel_id: a, sequence: i, log_time: t, publish_time: t };
        w.write_to_known_channel(&header, &[0, 1, 0, 0, 1, 0, 0, 0]).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn bundled_db3_files_read_the_same_in_partitions_at_their_row_id_runs() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros2");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "db3"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    for path in files {
        let idx = logspec::log::open(&path, &how()).unwrap().index();
        let idx = idx.unwrap_or_else(|| panic!("{}: the index of its rows", path.display()));
        // Small files: one run of row ids, its first the least row id, all the rows counted.
        assert_eq!(idx.chunks.len(), 1, "{}: {idx:?}", path.display());
        assert_eq!(idx.chunks[0].first_record, 1, "{}", path.display());
        let info = logspec::log::open(&path, &how()).unwrap().info(&[], &mut Vec::new()).unwrap();
        let info: serde_json::Value = serde_json::from_str(&info.json()).unwrap();
        assert_eq!(serde_json::json!(idx.chunks[0].records), info["messages"], "{}", path.display());
        reads_the_same_in_parts(&path, &tables_of(&path));
    }
    // A split bag's files are one log: read whole, and a part of it is refused.
    let split = data.join("gen_split_db3");
    assert!(logspec::log::open(&split, &how()).unwrap().index().is_none());
    let range = logspec::log::index::Range { start: 0, end: 10, first_record: 1 };
    assert!(logspec::log::open(&split, &how()).unwrap().with_range(range).is_err());
}

/// A rosbag2 sqlite3 file (schema version 4) of `n` messages of a `Pad` type (`int32 data`, then
/// a string of `pad` bytes) on two topics, 1 ms apart, written through SQLite as rosbag2 writes
/// one, with its `timestamp_idx` index.
fn write_db3(path: &Path, n: u32, pad: usize) {
    let _ = std::fs::remove_file(path);
    let mut conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
         INSERT INTO schema VALUES (4, 'jazzy');
         CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
             serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
         INSERT INTO topics VALUES (1, '/a', 'test_msgs/msg/Pad', 'cdr', ''), (2, '/b', 'test_msgs/msg/Pad', 'cdr', '');
         CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL,
             encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL);
         INSERT INTO message_definitions VALUES (1, 'test_msgs/msg/Pad', 'ros2msg', 'int32 data
string pad');
         CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
             timestamp INTEGER NOT NULL, data BLOB NOT NULL);
         CREATE INDEX timestamp_idx ON messages (timestamp ASC);",
    )
    .unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut st = tx.prepare("INSERT INTO messages (topic_id, timestamp, data) VALUES (?1, ?2, ?3)").unwrap();
        for i in 0..n {
            let mut data = vec![0, 1, 0, 0];
            data.extend_from_slice(&(i as i32).to_le_bytes());
            data.extend_from_slice(&(pad as u32 + 1).to_le_bytes());
            data.extend(std::iter::repeat_n(b'x', pad));
            data.push(0);
            let t = 1_000_000_000 + i64::from(i) * 1_000_000;
            st.execute(rusqlite::params![if i % 3 == 0 { 2 } else { 1 }, t, data]).unwrap();
        }
    }
    tx.commit().unwrap();
}

/// The values of `/b`'s `data` column that `parts` of `file` read in the window.
fn db3_values(file: &LogFile, query: &Query, parts: &[Part]) -> Vec<i32> {
    let mut got = Vec::new();
    for &p in parts {
        let q = Query { columns: Some(vec!["data".into()]), ..query.clone() };
        let done = stream::scan_part(file, &how(), &q, p, None, &mut |b| {
            let c = b.column(0).as_any().downcast_ref::<arrow_array::Int32Array>().unwrap();
            got.extend(c.values().iter().copied());
            Ok(())
        })
        .unwrap();
        assert!(done.fault.is_none(), "{p:?}: {:?}", done.fault);
    }
    got.sort();
    got
}

#[test]
fn a_large_db3_splits_at_its_row_id_runs_and_a_window_reads_only_those_it_meets() {
    let dir = crate::scratch::temp_dir().join(format!("logspec-own-index-db3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.db3");
    write_db3(&path, 30_000, 300);
    let tables = vec!["/a".to_string(), "/b".to_string()];
    let chunks = reads_the_same_in_parts(&path, &tables);
    assert!(chunks > 5, "{chunks} chunks");
    let idx = logspec::log::open(&path, &how()).unwrap().index().unwrap();
    // The runs tile the rows: each starts where the one before ends, the counts add up.
    assert_eq!(idx.chunks.iter().map(|c| c.records).sum::<u64>(), 30_000);
    assert!(idx.chunks.windows(2).all(|w| w[0].offset + w[0].length == w[1].offset && w[0].t_max_ns < w[1].t_min_ns));
    // A window of a fifteenth of the time meets one or two runs, and its rows are the messages
    // written in it.
    let file = LogFile { file: path.clone(), log: partition(&path) };
    let query = Query { table: "/b".into(), since: Some(10.0), until: Some(11.999), ..Query::default() };
    let parts = stream::partitions(&file, &how(), &query, u64::MAX);
    let read: u64 = parts.iter().map(|p| p.range.map_or(u64::MAX, |r| r.end - r.start)).sum();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(read * 4 < size, "the window reads {read} of {size}");
    let want: Vec<i32> = (10_000..12_000).filter(|i| i % 3 == 0).collect();
    assert_eq!(db3_values(&file, &query, &parts), want);
    // One partition per run, each read alone: every message once.
    let all = Query { table: "/b".into(), ..Query::default() };
    let parts = stream::partitions(&file, &how(), &all, 1);
    assert_eq!(parts.len(), chunks);
    assert_eq!(db3_values(&file, &all, &parts), (0..30_000).filter(|i| i % 3 == 0).collect::<Vec<i32>>());
    // A part whose start is not a run's (an index of another file) is a fault, not other rows.
    let r = parts[1].range.unwrap();
    let wrong = Part { range: Some(logspec::log::index::Range { first_record: r.first_record + 1, ..r }) };
    let done = stream::scan_part(&file, &how(), &all, wrong, None, &mut |_| Ok(())).unwrap();
    let fault = done.fault.expect("a fault");
    assert!(fault.message.contains("not of this file"), "{}", fault.message);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_db3_of_no_messages_or_of_odd_rows_is_one_partition_and_reads_as_before() {
    let dir = crate::scratch::temp_dir().join(format!("logspec-own-index-db3-odd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros2/gen_rosbags_corner_sqlite3.db3");
    let altered = |name: &str, sql: &str| {
        let p = dir.join(format!("{name}.db3"));
        std::fs::write(&p, std::fs::read(&source).unwrap()).unwrap();
        rusqlite::Connection::open(&p).unwrap().execute_batch(sql).unwrap();
        p
    };
    let table = tables_of(&source)[0].clone();
    // No messages: no index, one partition, no rows.
    let empty = altered("empty", "DELETE FROM messages;");
    assert!(logspec::log::open(&empty, &how()).unwrap().index().is_none());
    let file = LogFile { file: empty.clone(), log: partition(&empty) };
    let query = Query { table: table.clone(), ..Query::default() };
    assert_eq!(stream::partitions(&file, &how(), &query, 1), vec![Part::default()]);
    assert!(whole(&file, &query).is_empty());
    // A timestamp that is text: no index (its times are not known), read whole as before.
    let text = altered("text-time", "UPDATE messages SET timestamp = 'late' WHERE id = 3;");
    assert!(logspec::log::open(&text, &how()).unwrap().index().is_none());
    let file = LogFile { file: text.clone(), log: partition(&text) };
    assert_eq!(stream::partitions(&file, &how(), &query, 1), vec![Part::default()]);
    // Without rosbag2's timestamp index, with gaps in the row ids and a row of a negative
    // timestamp: SQLite scans the table for the runs, and the parts read what the whole does.
    let bare = altered(
        "bare",
        "DROP INDEX timestamp_idx; DELETE FROM messages WHERE id IN (2, 5, 6);
         INSERT INTO messages (id, topic_id, timestamp, data) VALUES (1000, 1, -5, x'00010000');",
    );
    assert!(logspec::log::open(&bare, &how()).unwrap().index().is_some());
    reads_the_same_in_parts(&bare, &tables_of(&bare));
    let _ = std::fs::remove_dir_all(&dir);
}
