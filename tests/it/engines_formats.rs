//! The engines' scan of large logs of each format with a time index (RLOG, WPILOG, ULog,
//! DataFlash, CARLA), written here with values the tests know: a partition of the log and a
//! time window through its index read exactly the rows the whole log holds there
//! (`tests/it/engines.rs` holds the scan against the generic path on every bundled log).

use arrow_array::{Array, RecordBatch, StringArray};
use logspec::log::{Format, Open};
use logspec_engine::logs::{partition, LogFile};
use logspec_engine::stream::{self, Query};

use crate::index_harness::{hows, index_dir, joined, scan, scan_parts, Large, Times, Window, Windows};

/// An RLOG file of `n` cycles written here, whose values the tests know without reading it:
/// cycle `i` at `i` ms; `/a`, a double, is `i` in every cycle; `/b` is `i` as a double in every
/// other cycle of the first half, then a string (`s<i>`: in R1 a value of another type, a
/// channel of its own; in R2 the key id defined again as a string) in the second half; `/late`,
/// an integer `i`, is defined three quarters in and written every cycle from there. About 27
/// bytes a cycle: 200 000 cycles are about 5 MiB, five chunks of the time index, with key
/// definitions and first values in several of them.
fn write_rlog(path: &std::path::Path, revision: logspec::formats::rlog::Revision, n: u64) {
    use logspec::formats::rlog::{R1Value, R2Value, Revision, Value, Writer};
    let r1 = revision == Revision::R1;
    let double =
        |x: f64| if r1 { Value::R1(R1Value::Double { value: x }) } else { Value::R2(R2Value::Double { value: x }) };
    let string =
        |s: String| if r1 { Value::R1(R1Value::String { value: s }) } else { Value::R2(R2Value::String { value: s }) };
    let int = |x: u64| {
        if r1 {
            Value::R1(R1Value::Integer { value: x as i32 })
        } else {
            Value::R2(R2Value::Int64 { value: x as i64 })
        }
    };
    let ty = |t: &'static str| (!r1).then_some(t);
    let mut w = Writer::new(Vec::new(), revision);
    for i in 0..n {
        w.timestamp(i as f64 / 1e3).unwrap();
        if i == 0 {
            w.define(1, "/a", ty("double")).unwrap();
            w.define(2, "/b", ty("double")).unwrap();
        }
        w.value(1, double(i as f64)).unwrap();
        if i == n / 2 && !r1 {
            w.define(2, "/b", ty("string")).unwrap();
        }
        if i % 2 == 0 {
            w.value(2, if i < n / 2 { double(i as f64) } else { string(format!("s{i}")) }).unwrap();
        }
        if i == 3 * n / 4 {
            w.define(3, "/late", ty("int64")).unwrap();
        }
        if i >= 3 * n / 4 {
            w.value(3, int(i)).unwrap();
        }
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

/// The time windows of a log of `n` cycles a millisecond apart: the middle tenth and the last
/// three tenths, their ends half a millisecond off the cycles.
fn cycle_windows(n: u64) -> [Window; 2] {
    let span = (n - 1) as f64 / 1e3;
    [(Some(0.45 * span + 5e-4), Some(0.55 * span + 5e-4)), (Some(0.7 * span + 5e-4), None)]
}

/// The time windows of a table, as fractions of the span of its elapsed times: the middle tenth
/// and the last three tenths.
const FRACTIONS: [Window; 2] = [(Some(0.45), Some(0.55)), (Some(0.7), None)];

/// An RLOG file's first whole scan writes its time index (chunks at cycles, the key definitions
/// and first values as its state messages); then every table of the log, read in partitions of
/// a chunk each and in time windows (whole and in partitions), over a map and over a stream,
/// gives the whole log's rows (filtered by their `log_elapsed_ns`), though a partition starts
/// after key definitions and after `/b` changed type; `/a` gives the values written. A state
/// message the index puts where none is reads as a fault, never as wrong rows.
#[test]
fn a_large_rlog_reads_the_same_in_partitions_and_windows_with_its_index() {
    use logspec::formats::rlog::Revision;
    for revision in [Revision::R1, Revision::R2] {
        let dir = index_dir(&format!("rlog-{revision}"));
        let path = dir.join("big.rlog");
        let n = 200_000u64;
        write_rlog(&path, revision, n);
        let mut log = Large::new(&path, Format::Rlog);
        let got = log.first_scan("/a");
        let values = got.column(got.schema().index_of("value").unwrap());
        let values = values.as_any().downcast_ref::<arrow_array::Float64Array>().unwrap();
        assert_eq!(values.values().to_vec(), (0..n).map(|i| i as f64).collect::<Vec<_>>(), "{revision}: /a");
        let names = log.names();
        assert_eq!(names.len(), 4, "{revision}: /a, /b, /b of strings, /late: {names:?}");
        // A chunk a cycle, after the revision byte.
        log.chunks(4, 1, Some(n), Times::Rise);
        // Key definitions (3, and /b's again in R2) and the first value of /a, /b, /b's
        // strings (R1: a type of its own, not a state: the key name has its first type) and /late.
        let defs = if revision == Revision::R1 { 3 } else { 4 };
        assert_eq!(log.idx().states.len(), defs + 3, "{revision}: {:?}", log.idx().states);
        log.states_past_the_first_chunks(1);
        log.reads_the_same(&names, Windows::At(&cycle_windows(n)));
        // A state message moved off a message start; a chunk boundary moved into a cycle's
        // timestamp.
        log.a_moved_state_is_a_fault("/late");
        log.a_moved_chunk_boundary_is_a_fault("/a");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `LOGSPEC_INDEX` says where index files are written: `cache` only in the cache directory,
/// never beside the log; `off` nowhere (`logspec index` refuses, and says why); any other value
/// is refused with the values it takes.
#[test]
fn logspec_index_says_where_index_files_may_be_written() {
    let dir = index_dir("keep");
    let run = |keep: &str, args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
            .args(args)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("LOGSPEC_INDEX", keep)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let log = dir.join("a.rlog");
    write_rlog(&log, logspec::formats::rlog::Revision::R1, 100_000);
    let beside = dir.join("a.rlog.logspec-idx");
    let cached = || std::fs::read_dir(dir.join("cache/logspec")).map_or(0, |d| d.count());
    let (code, err) = run("off", &["index", log.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("LOGSPEC_INDEX=off") && !beside.exists() && cached() == 0, "{err}");
    let (code, err) = run("elsewhere", &["index", log.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("LOGSPEC_INDEX=elsewhere: expected `beside`"), "{err}");
    let (code, err) = run("cache", &["index", log.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!beside.exists() && cached() == 1, "{err}");
    let (code, err) = run("", &["index", log.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("index current") && !beside.exists(), "the index in the cache is found: {err}");
    let (code, err) = run("beside", &["index", "--force", log.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(beside.is_file(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A WPILOG file of `n` cycles, a millisecond apart: `/a` (doubles, `i`) every cycle; `/p`
/// (`struct:Point`, `x = i`, `y = -i`) every tenth, whose struct schema is logged only a third
/// in, after values that use it; `/r` (integers) every third cycle until halfway, where its
/// entry id is finished and started again as `/r2` (strings); `/late` (integers), started three
/// quarters in with its metadata set a cycle later, every cycle from there. About 25 bytes a
/// cycle: 200 000 cycles are about 5 MiB, five chunks of the time index, with control records
/// in several of them. Returns the records written and the control records among them.
fn write_wpilog(path: &std::path::Path, n: u64) -> (u64, u64) {
    use logspec::formats::wpilog::{DataValue, Writer};
    let mut w = Writer::new(Vec::new(), "").unwrap();
    let (mut records, mut control) = (0u64, 0u64);
    let mut ctl = |w: &mut Writer<Vec<u8>>, f: &dyn Fn(&mut Writer<Vec<u8>>)| {
        f(w);
        records += 1;
        control += 1;
    };
    let mut data = 0u64;
    for i in 0..n {
        let t = i as i64 * 1000;
        if i == 0 {
            ctl(&mut w, &|w| w.start(1, "/a", "double", "", t).unwrap());
            ctl(&mut w, &|w| w.start(2, "/p", "struct:Point", "", t).unwrap());
            ctl(&mut w, &|w| w.start(3, "/r", "int64", "", t).unwrap());
        }
        if i == n / 3 {
            ctl(&mut w, &|w| w.start(4, "/.schema/struct:Point", "structschema", "", t).unwrap());
            w.raw(4, t, b"double x;double y").unwrap();
            data += 1;
        }
        if i == n / 2 {
            ctl(&mut w, &|w| w.finish(3, t).unwrap());
            ctl(&mut w, &|w| w.start(3, "/r2", "string", "", t).unwrap());
        }
        if i == 3 * n / 4 {
            ctl(&mut w, &|w| w.start(5, "/late", "int64", "", t).unwrap());
        }
        if i == 3 * n / 4 + 1 {
            ctl(&mut w, &|w| w.set_metadata(5, "{\"late\":true}", t).unwrap());
        }
        w.value(1, t, &DataValue::Double { value: i as f64 }).unwrap();
        data += 1;
        if i % 10 == 0 {
            let point: Vec<u8> = [i as f64, -(i as f64)].iter().flat_map(|x| x.to_le_bytes()).collect();
            w.raw(2, t, &point).unwrap();
            data += 1;
        }
        if i % 3 == 0 {
            let v = if i < n / 2 {
                DataValue::Int64 { value: i as i64 }
            } else {
                DataValue::String { value: format!("s{i}") }
            };
            w.value(3, t, &v).unwrap();
            data += 1;
        }
        if i >= 3 * n / 4 {
            w.value(5, t, &DataValue::Int64 { value: i as i64 }).unwrap();
            data += 1;
        }
    }
    std::fs::write(path, w.finish_file().unwrap()).unwrap();
    (records + data, control)
}

/// A WPILOG file's first whole scan writes its time index (chunks at any record, the control
/// records as its state messages, the struct schema's record as a schema message); then every
/// table of the log, read in partitions of a chunk each and in time windows (whole and in
/// partitions), over a map and over a stream, gives the whole log's rows (filtered by their
/// `log_elapsed_ns`), though a partition starts after Start records, after an entry id was
/// finished and started again, and before or after the struct schema its values need. A state
/// or schema message, or a chunk, the index puts where none is reads as a fault that says the
/// index is wrong, never as wrong rows; an index of the log as it was (stale) is not used.
#[test]
fn a_large_wpilog_reads_the_same_in_partitions_and_windows_with_its_index() {
    let dir = index_dir("wpilog");
    let path = dir.join("big.wpilog");
    let n = 200_000u64;
    let (records, control) = write_wpilog(&path, n);
    let mut log = Large::new(&path, Format::Wpilog);
    let got = log.first_scan("/p");
    // Struct values reach typed sinks as JSON, decoded through the schema logged after them.
    let json = got.column(got.schema().index_of("json").unwrap()).clone();
    let json = json.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(json.len() as u64, n / 10, "/p");
    let row = json.value(1).replace(' ', "");
    assert!(row.contains("\"x\":10") && row.contains("\"y\":-10"), "/p decoded: {row}");
    let names = log.names();
    for name in ["/a", "/p", "/r", "/r2", "/late"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    // A chunk at any record, after the file header.
    log.chunks(4, 12, Some(records), Times::Rise);
    let idx = log.idx();
    assert_eq!(idx.states.len() as u64, control, "the control records: {:?}", idx.states);
    log.states_past_the_first_chunks(1);
    assert_eq!(idx.schemas.len(), 1, "{:?}", idx.schemas);
    assert!(idx.schemas[0].offset > idx.chunks[1].offset, "the schema comes after the values that use it");
    log.reads_the_same(&names, Windows::At(&cycle_windows(n)));
    // The last state message (`/late`'s Set Metadata) moved off a record start.
    log.a_moved_state_is_a_fault("/late");
    // The schema message moved off its record: every partition reads as a fault.
    log.wrong(&log.changed(&[(log.schema_at(0), 1)]), "/p", |parts| vec![parts[0], *parts.last().unwrap()]);
    log.a_moved_chunk_boundary_is_a_fault("/a");
    // The log written again (the same bytes, a new modification time).
    let rows = log.stale("/a", |path| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_wpilog(path, n);
    });
    assert_eq!(rows.num_rows() as u64, n);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An R2 RLOG file whose struct schema is logged halfway, after values that use it, read in
/// partitions of a chunk each: every partition decodes `/p` through the schema the time index
/// lists (`Index::schemas`), as the whole read does through its first pass, and a partition
/// reads nothing of the log outside its chunks but the state and schema messages.
#[test]
fn a_partition_of_an_rlog_decodes_structs_whose_schema_comes_later() {
    use logspec::formats::rlog::{R2Value, Revision, Value, Writer};
    use logspec::log::index::{self, CHUNK_BYTES};
    use logspec::log::Format;
    let dir = index_dir("rlog-structs");
    let path = dir.join("structs.rlog");
    let n = 150_000u64;
    let mut w = Writer::new(Vec::new(), Revision::R2);
    for i in 0..n {
        w.timestamp(i as f64 / 1e3).unwrap();
        if i == 0 {
            w.define(1, "/p", Some("struct:Point")).unwrap();
        }
        if i == n / 2 {
            w.define(2, "/.schema/struct:Point", Some("structschema")).unwrap();
            w.value(2, Value::R2(R2Value::Raw { value: b"double x;double y".to_vec() })).unwrap();
        }
        let point: Vec<u8> = [i as f64, -(i as f64)].iter().flat_map(|x| x.to_le_bytes()).collect();
        w.value(1, Value::R2(R2Value::Struct { value: point })).unwrap();
    }
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    let file = LogFile { file: path.clone(), log: partition(&path) };
    let p = Query { table: "/p".into(), ..Query::default() };
    let (whole, done) = scan(&file, &p);
    assert!(done.fault.is_none(), "{:?}", done.fault);
    let whole = joined(&whole, &file.log).unwrap();
    assert_eq!(whole.num_rows() as u64, n);
    let json = whole.column(whole.schema().index_of("json").unwrap()).clone();
    let row = json.as_any().downcast_ref::<StringArray>().unwrap().value(1).replace(' ', "");
    assert!(row.contains("\"x\":1") && row.contains("\"y\":-1"), "decoded: {row}");
    let idx = index::load(&path, Format::Rlog).expect("the whole scan wrote the index");
    assert!(idx.chunks.len() >= 3, "{} chunks", idx.chunks.len());
    assert_eq!(idx.schemas.len(), 1, "{:?}", idx.schemas);
    assert!(idx.schemas[0].offset > idx.chunks[1].offset, "the schema comes after the values that use it");
    for how in [Open { map: true, ..Open::default() }, Open::default()] {
        let parts = stream::partitions(&file, &how, &p, CHUNK_BYTES);
        assert_eq!(parts.len(), idx.chunks.len(), "a partition per chunk");
        let got = joined(&scan_parts(&file, &how, &p, &parts), &file.log).unwrap();
        assert_eq!(got.columns(), whole.columns(), "map {}", how.map);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ULog message: its header (`msg_size`, `msg_type`) and payload.
fn ulog_message(ty: u8, payload: &[u8]) -> Vec<u8> {
    let mut m = (payload.len() as u16).to_le_bytes().to_vec();
    m.push(ty);
    m.extend_from_slice(payload);
    m
}

/// A ULog file of about 6 MB written here: the bundled log with tagged strings and default
/// parameters, then the messages of its data section (Data, logged strings, sync, dropouts)
/// repeated, as `benches/ulog.rs` grows it. Two formats are defined and subscribed two fifths
/// in (`late_topic`, with a `timestamp` rising past every other; `notime`, without one, whose
/// samples take the latest Data time before them), each given a Data message after every
/// repetition (`value` = its number); `notime` is unsubscribed seven tenths in. The flag bits
/// say DATA_APPENDED, with an appended-data offset three fifths in that a Data message written
/// before it crosses (the writer stopped inside it): the reader skips to the offset; and a
/// corrupted message header thirteen twentieths in, which the reader skips to the end of the
/// next sync message. So the index's chunks start after formats, subscriptions and an
/// unsubscription, across a cut, and around a resynchronisation.
fn write_ulog(path: &std::path::Path) {
    use logspec::formats::ulog::{Event, Reader};
    let file = crate::common::data("ulog/pyulog_sample_logging_tagged_and_default_params.ulg");
    let file = std::fs::read(file).unwrap();
    let mut spans = Vec::new();
    let mut prev: Option<u64> = None;
    let mut flags = None;
    let mut t_max = 0u64;
    let mut r = Reader::new(&file[..]).unwrap();
    while let Some(m) = r.next_message() {
        let m = m.unwrap();
        if let Some(p) = prev.take() {
            spans.push((p as usize, m.offset as usize));
        }
        match &m.event {
            Event::FlagBits(_) => flags = Some(m.offset as usize),
            Event::Data { subscription: Some(s), payload, .. } => {
                if let Some(t) = s.decoder.as_ref().ok().and_then(|d| d.timestamp(payload)) {
                    t_max = t_max.max(t);
                }
            }
            _ => {}
        }
        if matches!(m.event, Event::Data { .. } | Event::Logging { .. } | Event::Sync | Event::Dropout { .. }) {
            prev = Some(m.offset);
        }
    }
    if let Some(p) = prev {
        spans.push((p as usize, file.len()));
    }
    let flags = flags.expect("the log has flag bits") + 3;
    let want = 6_000_000usize;
    let mut buf = file.clone();
    let (mut n, mut subscribed, mut unsubscribed, mut corrupted, mut cut) = (0u64, false, false, false, None);
    'fill: loop {
        for (a, z) in &spans {
            if buf.len() >= want {
                break 'fill;
            }
            buf.extend_from_slice(&file[*a..*z]);
            if !subscribed && buf.len() >= want * 2 / 5 {
                subscribed = true;
                buf.extend(ulog_message(b'F', b"late_topic:uint64_t timestamp;uint32_t value;"));
                buf.extend(ulog_message(b'F', b"notime:uint32_t value;"));
                buf.extend(ulog_message(b'A', &[&[0u8][..], &900u16.to_le_bytes(), b"late_topic"].concat()));
                buf.extend(ulog_message(b'A', &[&[0u8][..], &901u16.to_le_bytes(), b"notime"].concat()));
            }
            if cut.is_none() && buf.len() >= want * 3 / 5 {
                // A Data message of 200 bytes of which 50 were written.
                buf.extend(&ulog_message(b'D', &[&900u16.to_le_bytes()[..], &[7u8; 198]].concat())[..53]);
                cut = Some(buf.len() as u64);
            }
            if !corrupted && buf.len() >= want * 13 / 20 {
                // A header no writer makes: the reader skips to the end of the next sync message.
                corrupted = true;
                buf.extend([0u8; 5]);
            }
            if subscribed && !unsubscribed && buf.len() >= want * 7 / 10 {
                unsubscribed = true;
                buf.extend(ulog_message(b'R', &901u16.to_le_bytes()));
            }
            if subscribed {
                n += 1;
                let t = t_max + n * 1000;
                let late = [&900u16.to_le_bytes()[..], &t.to_le_bytes(), &(n as u32).to_le_bytes()].concat();
                buf.extend(ulog_message(b'D', &late));
                if !unsubscribed {
                    buf.extend(ulog_message(b'D', &[&901u16.to_le_bytes()[..], &(n as u32).to_le_bytes()].concat()));
                }
            }
        }
    }
    // DATA_APPENDED, and the offset of the data appended after the cut message.
    buf[flags + 8] |= 1;
    buf[flags + 16..flags + 24].copy_from_slice(&cut.unwrap().to_le_bytes());
    let mut r = Reader::new(&buf[..]).unwrap();
    while r.next_message().is_some_and(|m| m.is_ok()) {}
    assert_eq!(r.cut_messages, 1, "the message the appended-data offset cuts");
    std::fs::write(path, buf).unwrap();
}

/// The column `name` of `rows`, of `u32`s.
fn u32s(rows: &RecordBatch, name: &str) -> Vec<u32> {
    let values = rows.column(rows.schema().index_of(name).unwrap());
    values.as_any().downcast_ref::<arrow_array::UInt32Array>().unwrap().values().to_vec()
}

/// The checks of the ULog and DataFlash tests, whose logs are a bundled log's messages repeated
/// (their times again in each chunk) with formats defined `late`: state messages past the
/// first chunks; the three largest tables, the smallest and the late ones read the same in
/// partitions and windows; the largest (with rows in every chunk: a query that matches nothing
/// in a part is no fault) read in parts that each tell the whole read's warnings that say
/// `told` once, and with a wrong index. How many warnings say `told`.
fn repeated_messages_read_the_same(log: &Large, late: [&str; 2], told: &str) -> usize {
    log.states_past_the_first_chunks(3);
    let tables = log.largest_smallest_and(&late);
    log.reads_the_same(&tables, Windows::OfEach(&FRACTIONS));
    let told = log.told_once(tables[0], told);
    log.a_moved_state_is_a_fault(tables[0]);
    log.a_moved_chunk_boundary_is_a_fault(tables[0]);
    told
}

/// A large ULog file's first whole scan writes its time index (chunks at messages, the formats,
/// subscriptions, unsubscription, flag bits and the Data messages that set the latest time as
/// its state messages); then its tables, read in partitions of a chunk each and in time
/// windows, over a map and over a stream, give the whole log's rows (filtered by their
/// `log_elapsed_ns`), though parts start after a late subscription, an unsubscription and an
/// appended-data offset; `late_topic` gives the values written and `notime` the latest time
/// before each of its samples. A log changed since is read whole and indexed again; a wrong
/// index reads as a fault, never as wrong rows.
#[test]
fn a_large_ulog_reads_the_same_in_partitions_and_windows_with_its_index() {
    let dir = index_dir("ulog");
    let path = dir.join("big.ulg");
    write_ulog(&path);
    let mut log = Large::new(&path, Format::Ulog);
    let values = u32s(&log.first_scan("late_topic"), "value");
    assert!(values.len() > 1000 && values.windows(2).all(|w| w[0] < w[1]), "late_topic: the values written, in order");
    // A chunk at any message, after the file header.
    log.chunks(5, 16, None, Times::Repeat);
    // The corrupted region is told once, by the part that holds it, as by the whole read.
    let corrupt = repeated_messages_read_the_same(&log, ["late_topic", "notime"], "a corrupted message header");
    assert_eq!(corrupt, 1, "{:?}", log.whole.warnings);
    // The log changed (a sync message appended).
    log.stale("notime", |path| {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        let sync = ulog_message(b'S', &[0x2f, 0x73, 0x13, 0x20, 0x25, 0x0c, 0xbb, 0x12]);
        std::io::Write::write_all(&mut f, &sync).unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A DataFlash message: the header (`A3 95`, its id) and body.
fn df_message(id: u8, body: &[u8]) -> Vec<u8> {
    [&[0xa3, 0x95, id][..], body].concat()
}

/// The FMT message that defines id `id` as `name` with `format` and `labels`, `length` bytes a
/// message.
fn df_fmt(id: u8, length: u8, name: &str, format: &str, labels: &str) -> Vec<u8> {
    let pad = |s: &str, n: usize| {
        let mut b = s.as_bytes().to_vec();
        b.resize(n, 0);
        b
    };
    df_message(128, &[&[id, length][..], &pad(name, 4), &pad(format, 16), &pad(labels, 64)].concat())
}

/// A DataFlash log of about 6 MB written here: the bundled `wlichon_00000001.BIN`, then its
/// messages other than FMT, FMTU, UNIT and MULT repeated. Two ids are defined two fifths in
/// (`LATE`, with a `TimeUS` rising past every other; `NOTM`, without one, whose samples take
/// the latest time before them), each given a message after every repetition (`Value` = its
/// number); thirteen twentieths in, seven bytes of garbage, which the reader skips to the next
/// header of a known id. So the index's chunks start after FMT messages and around skipped bytes.
fn write_dataflash(path: &std::path::Path) {
    use logspec::formats::dataflash::{Event, Reader};
    let file = std::fs::read(crate::common::data("dataflash/wlichon_00000001.BIN")).unwrap();
    let mut spans = Vec::new();
    let mut used = std::collections::HashSet::new();
    let mut t_max = 0u64;
    let mut r = Reader::new(&file[..]);
    let mut prev: Option<u64> = None;
    while let Some(m) = r.next_message() {
        let m = m.unwrap();
        if let Some(p) = prev.take() {
            spans.push((p as usize, m.offset as usize));
        }
        if let Event::Message { id, decoder, body, .. } = &m.event {
            used.insert(*id);
            t_max = t_max.max(decoder.time_us(body).unwrap_or(0));
            if *id != 128 && !matches!(decoder.name(), "FMTU" | "UNIT" | "MULT") {
                prev = Some(m.offset);
            }
        }
    }
    if let Some(p) = prev {
        spans.push((p as usize, file.len()));
    }
    let mut free = (1..128u8).filter(|id| !used.contains(id));
    let (late, notm) = (free.next().unwrap(), free.next().unwrap());
    let want = 6_000_000usize;
    let mut buf = file.clone();
    let (mut n, mut defined, mut garbage) = (0u64, false, false);
    'fill: loop {
        for (a, z) in &spans {
            if buf.len() >= want {
                break 'fill;
            }
            buf.extend_from_slice(&file[*a..*z]);
            if !defined && buf.len() >= want * 2 / 5 {
                defined = true;
                buf.extend(df_fmt(late, 15, "LATE", "QI", "TimeUS,Value"));
                buf.extend(df_fmt(notm, 7, "NOTM", "I", "Value"));
            }
            if !garbage && buf.len() >= want * 13 / 20 {
                garbage = true;
                buf.extend([0u8; 7]);
            }
            if defined {
                n += 1;
                let t = t_max + n * 1000;
                buf.extend(df_message(late, &[&t.to_le_bytes()[..], &(n as u32).to_le_bytes()].concat()));
                buf.extend(df_message(notm, &(n as u32).to_le_bytes()));
            }
        }
    }
    std::fs::write(path, buf).unwrap();
}

/// A large DataFlash log's first whole scan writes its time index (chunks at messages, FMT,
/// FMTU, UNIT and MULT messages and the messages that set the latest time as its state
/// messages); then its tables, read in partitions of a chunk each and in time windows, over a
/// map and over a stream, give the whole log's rows (filtered by their `log_elapsed_ns`),
/// though parts start after late FMT messages and skipped bytes; `LATE` gives the values
/// written and `NOTM` the latest time before each of its samples. The skipped bytes are told
/// once, by the part that holds them. A log changed since is read whole and indexed again; a
/// wrong index reads as a fault, never as wrong rows.
#[test]
fn a_large_dataflash_log_reads_the_same_in_partitions_and_windows_with_its_index() {
    let dir = index_dir("dataflash");
    let path = dir.join("big.bin");
    write_dataflash(&path);
    let mut log = Large::new(&path, Format::Dataflash);
    let values = u32s(&log.first_scan("LATE"), "Value");
    assert_eq!(values, (1..=values.len() as u32).collect::<Vec<_>>(), "LATE: every value once, in order");
    // A chunk at any message, from the start (a DataFlash log has no header).
    log.chunks(5, 0, None, Times::Repeat);
    let skipped = repeated_messages_read_the_same(&log, ["LATE", "NOTM"], "that are not a message of a known id");
    assert!(skipped >= 1, "{:?}", log.whole.warnings);
    // The log changed (a message appended).
    log.stale("NOTM", |path| {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        std::io::Write::write_all(&mut f, &df_fmt(255, 7, "MORE", "I", "Value")).unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log that fails before any row of the table asked for: the scan says the fault (the bad log
/// named), as the export does; it is not taken for a log without the table and passed over.
#[test]
fn a_fault_before_any_row_of_the_table_is_said_not_passed_over() {
    let src = std::fs::read(crate::common::data("usvlog/step.usvlog")).unwrap();
    let dir = crate::scratch::temp_dir().join("engines-fault-before-rows");
    std::fs::create_dir_all(&dir).unwrap();
    // Cut inside the third record; REC_SENSOR_GYRO's first record is the thirteenth.
    let path = dir.join("cut.usvlog");
    std::fs::write(&path, &src[..120]).unwrap();
    let file = LogFile { file: path.clone(), log: "cut".into() };
    for table in ["REC_SENSOR_GYRO", "/no/such"] {
        let (batches, done) = scan(&file, &Query { table: table.into(), ..Query::default() });
        assert!(batches.is_empty() && done.rows == 0, "{table}");
        let fault = done.fault.unwrap_or_else(|| panic!("{table}: the fault is said"));
        assert!(fault.message.contains("file truncated inside the payload"), "{table}: {}", fault.message);
    }
    // The table's rows before the fault are kept, with the fault.
    let (batches, done) = scan(&file, &Query { table: "REC_NAV_SOLUTION".into(), ..Query::default() });
    assert_eq!((batches.iter().map(RecordBatch::num_rows).sum::<usize>(), done.rows), (1, 1));
    assert!(done.fault.is_some());
}

#[path = "../../benches/common/carla_input.rs"]
mod carla_input;

/// A CARLA recording of about 5 MB, about five chunks of the time index, written here: the
/// benchmarks' input (`benches/common/carla_input.rs`, the bundled scenario_runner recording,
/// whose PhysicsControl wheels are 48 bytes, its steady frames repeated), with a PhysicsControl
/// packet of 36-byte wheels (taken from the 2020 recording) put after the FrameStart of the
/// frame half-way in, and one of 48-byte wheels (the recording's own) 70% in: the reader's wheel
/// layout changes twice past the first chunks. Returns the frames and where the two packets are.
fn write_carla(path: &std::path::Path) -> (u64, [u64; 2]) {
    use logspec::formats::carla::{BodyRef, CarlaRecordRef, PacketRef, SliceReader, PACKET_HEADER};
    let (big, frames) = carla_input::build(5.0);
    let physics = |bytes: &[u8]| -> Vec<u8> {
        let p = SliceReader::new(bytes)
            .unwrap()
            .map(Result::unwrap)
            .find(|p| matches!(p.body, BodyRef::Record { record: CarlaRecordRef::PhysicsControl(_), .. }))
            .expect("a PhysicsControl packet");
        let at = p.offset as usize;
        bytes[at..at + PACKET_HEADER + p.size as usize].to_vec()
    };
    let old = std::fs::read(crate::common::data("carla/scenario_runner_DistanceToLaneCenter_2020.log")).unwrap();
    let (p36, p48) = (physics(&old), physics(&big));
    let starts: Vec<usize> = SliceReader::new(&big)
        .unwrap()
        .map(Result::unwrap)
        .filter(|p| matches!(p.body, BodyRef::Record { record: CarlaRecordRef::FrameStart(_), .. }))
        .map(|p: PacketRef<'_>| p.offset as usize + PACKET_HEADER + p.size as usize)
        .collect();
    let (a, b) = (starts[starts.len() / 2], starts[starts.len() * 7 / 10]);
    let out = [&big[..a], &p36, &big[a..b], &p48, &big[b..]].concat();
    std::fs::write(path, out).unwrap();
    (frames as u64, [a as u64, (b + p36.len()) as u64])
}

/// The tables a CARLA test reads: `FrameStart`, the largest, and those of the packets that set
/// state or come rarely (EventAdd, EventDel, PhysicsControl), where the recording has them.
fn carla_tables(whole: &logspec_engine::tables::Read) -> Vec<&str> {
    let rows = |t: &logspec_engine::tables::Table| t.batches.iter().map(RecordBatch::num_rows).sum::<usize>();
    let largest = whole.tables.iter().max_by_key(|t| rows(t)).map(|t| t.name.clone());
    let picked = |t: &&logspec_engine::tables::Table| {
        ["FrameStart", "EventAdd", "EventDel", "PhysicsControl"].contains(&t.name.as_str())
            || Some(&t.name) == largest.as_ref()
    };
    whole.tables.iter().filter(picked).filter(|t| rows(t) > 0).map(|t| t.name.as_str()).collect()
}

/// The time windows of a CARLA test, as fractions of the span of its frames: those of the other
/// formats, and the first tenth.
const CARLA_WINDOWS: Windows<'static> = Windows::Of("FrameStart", &[FRACTIONS[0], FRACTIONS[1], (None, Some(0.1))]);

/// A CARLA recording's first whole scan writes its time index (chunks at FrameStarts, a frame
/// a record; the PhysicsControl packets where the wheel layout changes as its state messages);
/// then its tables read in partitions and time windows, over a map and over a stream, give the
/// whole log's rows, though partitions start after the wheel layout changed. An index that no
/// longer matches the log is ignored and written again; a state message or a chunk boundary
/// the index puts where none is reads as a fault that says the index is wrong, never as wrong
/// rows.
#[test]
fn a_large_carla_recording_reads_the_same_in_partitions_and_windows_with_its_index() {
    use logspec::log::index::CHUNK_BYTES;
    let dir = index_dir("carla");
    let path = dir.join("big.log");
    let (frames, switches) = write_carla(&path);
    let mut log = Large::new(&path, Format::Carla);
    assert!(log.whole.error.is_none(), "{:?}", log.whole.error);
    let got = log.first_scan("FrameStart");
    assert_eq!(got.num_rows() as u64, frames, "a row per frame");
    // A chunk at a FrameStart, after the header; a frame a record.
    log.chunks(4, 34, Some(frames), Times::Rise);
    assert_eq!(log.idx().states, switches, "the wheel layout changes");
    log.states_past_the_first_chunks(switches.len());
    let tables = carla_tables(&log.whole);
    let physics = tables.iter().find(|t| t.starts_with("PhysicsControl")).expect("PhysicsControl tables").to_string();
    log.reads_the_same(&tables, CARLA_WINDOWS);

    // The log touched (its modification time).
    let chunks = log.idx().chunks.clone();
    let rows = log.stale(&physics, |path| {
        let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
        let later = mtime + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(later).unwrap();
    });
    assert_eq!(log.idx().chunks, chunks, "written again");

    // A state message moved off a packet's start: over a map, the partitions after it read as
    // a fault; a stream reads every packet up to a part, the state messages among them, and
    // gives the rows.
    let last = log.idx().states.len() - 1;
    let bad = log.put_index(&log.changed(&[(log.state_at(last), 1)]));
    assert_eq!(bad.states[last], log.idx().states[last] + 1);
    let physics = Query { table: physics, ..Query::default() };
    let parts = stream::partitions(&log.file, &Open::default(), &physics, CHUNK_BYTES);
    let end = *parts.last().unwrap();
    let done = stream::scan_part(&log.file, &hows()[0], &physics, end, None, &mut |_| Ok(())).unwrap();
    let fault = done.fault.expect("a fault");
    assert!(fault.message.contains("the time index is wrong"), "{}", fault.message);
    assert!(fault.message.contains("not a PhysicsControl packet"), "{}", fault.message);
    let got = joined(&scan_parts(&log.file, &Open::default(), &physics, &parts), &log.file.log).unwrap();
    assert_eq!(got.num_rows(), rows.num_rows(), "a stream");

    // A chunk boundary moved a byte into a FrameStart packet.
    log.a_moved_chunk_boundary_is_a_fault("FrameStart");
    // A chunk that claims more frames before it than there are: a stream counts them.
    let (one, two) = (log.chunk_at(1), log.chunk_at(2));
    let bad = log.put_index(&log.changed(&[(two + 16, 1), (one + 24, 1), (two + 24, -1)]));
    assert_eq!(bad.chunks[2].first_record, log.idx().chunks[2].first_record + 1);
    let frame = Query { table: "FrameStart".into(), ..Query::default() };
    let parts = stream::partitions(&log.file, &Open::default(), &frame, CHUNK_BYTES);
    let done = stream::scan_part(&log.file, &Open::default(), &frame, parts[2], None, &mut |_| Ok(())).unwrap();
    let fault = done.fault.expect("a fault");
    assert!(
        fault.message.contains("frames start before it") && fault.message.contains("the time index is wrong"),
        "{}",
        fault.message
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bundled CARLA recordings, copied and indexed (`logspec index`'s [`build`]): chunks at
/// FrameStarts, a frame a record, the 2020 recording's change to 36-byte PhysicsControl wheels a
/// state message; their tables read in partitions and time windows with the index give the
/// whole read's rows.
#[test]
fn the_bundled_carla_recordings_read_the_same_with_their_index() {
    let dir = index_dir("carla-bundled");
    let mut ranged = 0;
    for name in
        ["scenario_runner_DistanceToLaneCenter", "scenario_runner_DistanceToLaneCenter_2020", "878-supp-mat_crash"]
    {
        let copy = dir.join(format!("{name}.log"));
        std::fs::copy(crate::common::data(&format!("carla/{name}.log")), &copy).unwrap();
        let mut log = Large::new(&copy, Format::Carla);
        log.build();
        let idx = log.idx();
        let summary =
            std::fs::read_to_string(crate::common::data(&format!("carla/{name}.expected.summary.json"))).unwrap();
        let frames = serde_json::from_str::<serde_json::Value>(&summary).unwrap()["frames"].as_u64().unwrap();
        assert_eq!(idx.chunks.iter().map(|c| c.records).sum::<u64>(), frames, "{name}: a record per frame");
        assert_eq!(idx.states.len(), usize::from(name.ends_with("2020")), "{name}: {:?}", idx.states);
        if idx.chunks.len() > 1 {
            log.reads_the_same(&carla_tables(&log.whole), CARLA_WINDOWS);
            ranged += 1;
        }
    }
    assert_eq!(ranged, 1, "scenario_runner_DistanceToLaneCenter has two chunks");
    let _ = std::fs::remove_dir_all(&dir);
}
