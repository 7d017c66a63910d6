//! The engines' selective scans (`logspec_engine::stream`, what `logspec.scan` and
//! `logspec.spark` read) against the same question answered by decoding every channel, measured
//! side by side in one run (issue 31's selective-query goals; BENCHMARKS.md).
//!
//! `cargo bench --bench engines` (optionally `-- --rlog-mb 100 --usvlog-mb 200 --carla-mb 200 --bag PATH --mcap PATH --rounds 5`). Every line opens
//! the log mapped (`Open::map`, as the command and the engines do). The input is the R1 file of the `rlog` bench (the bundled AdvantageKit robot log's cycles written again and
//! again, 98 keys), written to a temporary file (in the page cache). Lines, each a median of
//! `rounds` in-process runs, the order rotated each round:
//!
//! - `one channel`: `stream::scan` of one key's table (the other keys skipped by their length);
//! - `every channel (tables::read)`: `tables::read` of every table (what a reader without a
//!   channel pushdown does before it can pick the table; its fastest path, direct columns),
//!   then the one table;
//! - `every channel (table builders)`: every channel into the table builders the stream itself
//!   fills (the same query without the channel pushdown), then the one table;
//! - `one channel, 10% window, no index`: the first scan with a time window of a tenth of the
//!   log, without the log's time index (every message read, the values outside the window
//!   skipped);
//! - `one channel, 10% window, index`: the same with the index (written by the first whole scan):
//!   only the chunks the window meets are read, after the key definitions and first values
//!   before them;
//! - `one channel, 64 MiB partitions`: the whole log as its partitions, read one after the other;
//! - `no channel (the walk alone)`: a table the log does not have: every message walked, every
//!   value skipped by its length, no row made (the floor of the one-channel line);
//! - `every line of the map (the floor)`: the log mapped as the readers map it, its every 64-byte
//!   line read and nothing decoded (`common::window`): the floor of any one-thread pass that
//!   looks at every message;
//! - `R1 message walk by hand (the floor)`: the same map, each message's kind and length read
//!   by a walk written for this bench from the specification (`r1_walk`), nothing decoded: the
//!   chain of dependent loads any one-thread reader of every message pays.
//!
//! The index file is put in place (or removed) before each line as the line says, outside the
//! time measured.
//!
//! With `--log PATH --table NAME` (and `--reps N`, the reads of the log per run, for a small
//! log), first the selective lines of any log: its table streamed alone against every table of
//! the log read (`--rlog-mb 0` for those alone).
//!
//! The window lines, first, of the `usvlog` bench's input (`--usvlog-mb`, 0 for none; table
//! `REC_SENSOR_GYRO`), the CARLA bench input (`--carla-mb`, 0 for none; table `Position`) and,
//! with `--bag PATH`, a ROS bag (table `/imu`: `gen_rosbag.py` of the bench-input generators,
//! e.g. `--mb 200 --compression none`) and, with `--mcap PATH`, an MCAP file (table `/imu`: the
//! `mcap` bench's input, kept with its `--keep DIR`): one table, the whole log; a 10% window
//! without the time index and with it (`logspec_engine::index`, written by the first whole scan;
//! a bag's or an MCAP file's window reads through its own chunk index); the whole log read as its
//! 64 MiB partitions one after the other; and the whole log as the partitions the engines plan
//! for two readers (`stream::plan`), read by two threads. Then the RLOG lines (`--rlog-mb`, 0 for
//! none).

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::window::Window;
use common::{arg, median};
use logspec::log::{Open, Select};
use logspec_engine::logs::LogFile;
use logspec_engine::stream::{self, Query};

/// The limit of a one-thread walk over every message of an R1 log, written by hand from the
/// specification (`specs/rlog.md` §2-3) for this bench only: the file mapped as the readers map
/// it ([`Window`]), each message's kind read and its length found (a value's from its type code
/// and, for the arrays and strings, its count), nothing decoded. Each message's place depends
/// on the one before, so this chain of loads is what any one-thread reader pays per message.
/// Returns the messages walked.
fn r1_walk(path: &std::path::Path) -> u64 {
    let w = Window::open(path);
    let b: &[u8] = &w.map;
    let u16_at = |p: usize| b.get(p..p + 2).map_or(0, |x| usize::from(u16::from_be_bytes([x[0], x[1]])));
    let (mut pos, mut n) = (1usize, 0u64);
    while pos < b.len() {
        w.advance(pos);
        pos += match b[pos] {
            0 => 9,
            1 => 5 + u16_at(pos + 3),
            2 => {
                let at = pos + 4;
                4 + match b.get(pos + 3).copied().unwrap_or(0) {
                    0 => 0,
                    1 | 9 => 1,
                    3 => 4,
                    5 => 8,
                    2 | 7 | 10 => 2 + u16_at(at),
                    4 => 2 + 4 * u16_at(at),
                    6 => 2 + 8 * u16_at(at),
                    8 => {
                        let mut q = at + 2;
                        for _ in 0..u16_at(at) {
                            q += 2 + u16_at(q);
                        }
                        q - at
                    }
                    t => panic!("byte {pos}: value type {t} is not R1's"),
                }
            }
            k => panic!("byte {pos}: message kind {k} is not R1's"),
        };
        n += 1;
    }
    assert_eq!(pos, b.len(), "the walk ends at the end of the log");
    n
}

/// The key the selective lines ask for: a double, written in most cycles.
const KEY: &str = "/SystemStats/BatteryVoltage";

/// How every line opens the log: mapped, read in place (the command's and the engines' choice).
fn how() -> Open {
    Open { map: true, ..Open::default() }
}

fn one(file: &LogFile, since: Option<f64>, until: Option<f64>) -> usize {
    let query = Query { table: KEY.to_string(), columns: None, since, until };
    let mut rows = 0;
    let done = stream::scan(file, &how(), &query, None, &mut |b| {
        rows += b.num_rows();
        Ok(())
    })
    .expect("scan");
    assert!(done.fault.is_none(), "{:?}", done.fault);
    rows
}

/// A table the log does not have: every value's header walked and its value skipped, the
/// floor of a one-channel scan.
fn nothing(file: &LogFile) -> usize {
    let query = Query { table: "/No/Such/Key".to_string(), columns: None, since: None, until: None };
    let mut rows = 0;
    stream::scan(file, &how(), &query, None, &mut |b| {
        rows += b.num_rows();
        Ok(())
    })
    .expect("scan");
    rows
}

fn every(file: &LogFile) -> usize {
    let read = logspec_engine::tables::read(&file.file, &how(), &Select::default()).expect("read");
    let t = read.tables.iter().find(|t| t.name == KEY).expect("the key's table");
    t.batches.iter().map(|b| b.num_rows()).sum()
}

/// Every channel into the table builders the stream uses (no direct columns), then the one table.
fn every_builders(file: &LogFile) -> usize {
    let log = logspec::log::open(&file.file, &how()).expect("open");
    let mut sink = logspec_engine::tables::Tables::new(log.utc()).without_direct();
    log.scan(&Select::default(), &mut sink).expect("scan");
    let (tables, _) = sink.finish().expect("finish");
    let t = tables.iter().find(|t| t.name == KEY).expect("the key's table");
    t.batches.iter().map(|b| b.num_rows()).sum()
}

/// The window lines of one log (`label`), its table `table`: the whole log, a 10% time window
/// without the log's time index and with it (`logspec_engine::index`, written by the first whole
/// scan), and the whole log read as its 64 MiB partitions one after the other. A format that
/// keeps its own index (a bag's chunk infos) writes no index file: its window line reads with
/// that index, and it has no line without one.
fn window_lines(label: &str, path: &std::path::Path, table: &str, rounds: usize) {
    let file = LogFile { file: path.to_path_buf(), log: "bench".into() };
    let place = logspec::log::index::places(path)[0].clone();
    let all = Query { table: table.to_string(), ..Query::default() };
    // The log's span, read whole once (which writes the index of a format that has one).
    let _ = std::fs::remove_file(&place);
    let end = {
        let q = Query { columns: Some(vec!["log_elapsed_ns".into()]), ..all.clone() };
        let mut last = 0i64;
        stream::scan(&file, &how(), &q, None, &mut |b| {
            let c = b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>().expect("int64");
            last = last.max(c.values().iter().copied().max().unwrap_or(0));
            Ok(())
        })
        .expect("scan");
        last as f64 / 1e9
    };
    let index = std::fs::read(&place).ok();
    let window = Query { since: Some(end * 0.45), until: Some(end * 0.55), ..all.clone() };
    let rows = |q: &Query, parts: Option<Vec<stream::Part>>| -> usize {
        let mut n = 0;
        let parts = parts.unwrap_or_else(|| vec![stream::Part::default()]);
        for p in parts {
            stream::scan_part(&file, &how(), q, p, None, &mut |b| {
                n += b.num_rows();
                Ok(())
            })
            .expect("scan");
        }
        n
    };
    let windowed = || {
        let mut n = 0;
        stream::scan(&file, &how(), &window, None, &mut |b| {
            n += b.num_rows();
            Ok(())
        })
        .expect("scan");
        n
    };
    // (label, with the index, what to run)
    type Line<'a> = (&'a str, bool, Box<dyn Fn() -> usize + 'a>);
    let mut lines: Vec<Line<'_>> = vec![("whole log (stream::scan)", true, Box::new(|| rows(&all, None)))];
    if index.is_some() {
        lines.push(("10% window, no index", false, Box::new(|| rows(&window, None))));
        lines.push(("10% window, index", true, Box::new(windowed)));
    } else {
        lines.push(("10% window (its own index)", true, Box::new(windowed)));
    }
    lines.push((
        "whole log, 64 MiB partitions",
        true,
        Box::new(|| {
            let parts = stream::partitions(&file, &how(), &all, logspec_engine::index::PARTITION_BYTES);
            rows(&all, Some(parts))
        }),
    ));
    // The partitions the engines plan for two readers (`stream::plan`), read by two threads:
    // what a big file gains from its partitions on this machine's two cores.
    lines.push((
        "whole log, planned, 2 threads",
        true,
        Box::new(|| {
            let planned =
                stream::plan(std::slice::from_ref(&file), &how(), &all, logspec_engine::index::PARTITION_BYTES, 2);
            let next = std::sync::atomic::AtomicUsize::new(0);
            let read = || {
                let mut n = 0;
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(p) = planned.get(i) else { return n };
                    for (f, part) in &p.parts {
                        stream::scan_part(f, &how(), &all, *part, None, &mut |b| {
                            n += b.num_rows();
                            Ok(())
                        })
                        .expect("scan");
                    }
                }
            };
            std::thread::scope(|s| {
                let other = s.spawn(read);
                read() + other.join().expect("the second reader")
            })
        }),
    ));
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); lines.len()];
    let mut got = vec![0; lines.len()];
    for r in 0..rounds {
        for k in 0..lines.len() {
            let i = (k + r) % lines.len();
            // The index is there or not as the line says (a read without it writes none: its
            // window is read whole, but the log is then read whole only in part of the lines).
            match (&index, lines[i].1) {
                (Some(index), true) => std::fs::write(&place, index).expect("the index"),
                _ => {
                    let _ = std::fs::remove_file(&place);
                }
            }
            let t = Instant::now();
            got[i] = (lines[i].2)();
            times[i].push(t.elapsed());
        }
    }
    let last = lines.len() - 1;
    assert_eq!(got[0], got[last], "partitions give the whole log's rows");
    assert_eq!(got[0], got[last - 1], "partitions give the whole log's rows");
    if index.is_some() {
        assert_eq!(got[1], got[2], "the window's rows with and without the index");
    }
    let med: Vec<Duration> = times.into_iter().map(median).collect();
    let mbytes = std::fs::metadata(path).expect("the input").len() as f64 / 1e6;
    let parts = stream::partitions(&file, &how(), &all, logspec_engine::index::PARTITION_BYTES).len();
    let planned =
        stream::plan(std::slice::from_ref(&file), &how(), &all, logspec_engine::index::PARTITION_BYTES, 2).len();
    println!(
        "{label} {mbytes:.1} MB, table {table}, {parts} partitions of 64 MiB, {planned} planned for 2 readers; median of {rounds} runs per line, the order rotated each round"
    );
    for (i, (label, _, _)) in lines.iter().enumerate() {
        println!(
            "  {label:<32} {:>7.3} s {:>8.1} MB/s  rows {:>8}  whole log / this {:.2}x",
            med[i].as_secs_f64(),
            mbytes / med[i].as_secs_f64(),
            got[i],
            med[0].as_secs_f64() / med[i].as_secs_f64(),
        );
    }
    let _ = std::fs::remove_file(&place);
}

/// The selective lines of any log (`--log PATH --table NAME`, repeatable as pairs): its table
/// `table` streamed alone (`stream::scan`, every other channel passed over) against every
/// table of the log read (`tables::read`, what a reader without a channel pushdown does before
/// it can pick the table), each line `reps` reads of the log per run.
fn selective_lines(path: &std::path::Path, table: &str, rounds: usize, reps: usize) {
    let file = LogFile { file: path.to_path_buf(), log: "bench".into() };
    let query = Query { table: table.to_string(), ..Query::default() };
    let one = || {
        let mut n = 0;
        for _ in 0..reps {
            let done = stream::scan(&file, &how(), &query, None, &mut |b| {
                n += b.num_rows();
                Ok(())
            })
            .expect("scan");
            assert!(done.fault.is_none(), "{:?}", done.fault);
        }
        n
    };
    let every = || {
        let mut n = 0;
        for _ in 0..reps {
            let read = logspec_engine::tables::read(path, &how(), &Select::default()).expect("read");
            let Some(t) = read.tables.iter().find(|t| t.name == table) else {
                let names: Vec<&str> = read.tables.iter().map(|t| t.name.as_str()).collect();
                panic!("{}: no table `{table}`; its tables: {}", path.display(), names.join(", "));
            };
            n += t.batches.iter().map(|b| b.num_rows()).sum::<usize>();
        }
        n
    };
    let lines: [(&str, &dyn Fn() -> usize); 2] =
        [("one table (stream::scan)", &one), ("every table (tables::read)", &every)];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); lines.len()];
    let mut rows = [0; 2];
    for r in 0..rounds {
        for k in 0..lines.len() {
            let i = (k + r) % lines.len();
            let t = Instant::now();
            rows[i] = (lines[i].1)();
            times[i].push(t.elapsed());
        }
    }
    assert_eq!(rows[0], rows[1], "the table's rows, streamed and read");
    let med: Vec<Duration> = times.into_iter().map(median).collect();
    let mbytes = std::fs::metadata(path).expect("the input").len() as f64 / 1e6 * reps as f64;
    println!(
        "{} ({:.1} MB read {reps} times a run), table {table}; median of {rounds} runs per line, the order rotated each round",
        path.display(),
        mbytes / reps as f64
    );
    for (i, (label, _)) in lines.iter().enumerate() {
        println!(
            "  {label:<28} {:>7.3} s {:>8.1} MB/s  rows {:>8}  every table / this {:.2}x",
            med[i].as_secs_f64(),
            mbytes / med[i].as_secs_f64(),
            rows[i],
            med[1].as_secs_f64() / med[i].as_secs_f64(),
        );
    }
}

/// Writes `bytes` to a scratch file named `name` and runs its [`window_lines`].
fn window_lines_of(label: &str, name: &str, bytes: &[u8], table: &str, rounds: usize) {
    let dir = std::env::temp_dir().join(format!("logspec-bench-engines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write the input");
    window_lines(label, &path, table, rounds);
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let mb: f64 = arg("--rlog-mb", "100").parse().expect("--rlog-mb N");
    let rounds: usize = arg("--rounds", "5").parse().expect("--rounds N");
    let log = arg("--log", "");
    if !log.is_empty() {
        let reps: usize = arg("--reps", "1").parse().expect("--reps N");
        selective_lines(std::path::Path::new(&log), &arg("--table", ""), rounds, reps);
        if mb <= 0.0 {
            return;
        }
    }
    let usvlog_mb: f64 = arg("--usvlog-mb", "200").parse().expect("--usvlog-mb N");
    let carla_mb: f64 = arg("--carla-mb", "200").parse().expect("--carla-mb N");
    let bag = arg("--bag", "");
    if usvlog_mb > 0.0 {
        window_lines_of("USVLOG", "bench.usvlog", &common::usvlog_input::build(usvlog_mb), "REC_SENSOR_GYRO", rounds);
    }
    if carla_mb > 0.0 {
        window_lines_of("CARLA", "bench.log", &common::carla_input::build(carla_mb).0, "Position", rounds);
    }
    if !bag.is_empty() {
        window_lines("ROS bag", std::path::Path::new(&bag), "/imu", rounds);
    }
    let mcap = arg("--mcap", "");
    if !mcap.is_empty() {
        window_lines("MCAP", std::path::Path::new(&mcap), "/imu", rounds);
    }
    if mb <= 0.0 {
        // `--rlog-mb 0`: the lines above alone.
        return;
    }
    let bytes = common::rlog_input::build_r1(mb);
    let path = std::env::temp_dir().join(format!("logspec-bench-engines-{}.rlog", std::process::id()));
    std::fs::write(&path, &bytes).expect("write the input");
    let file = LogFile { file: path.clone(), log: "bench".into() };
    // The log's time span, for the window.
    let end = {
        let q =
            Query { table: KEY.to_string(), columns: Some(vec!["log_elapsed_ns".into()]), since: None, until: None };
        let mut last = 0i64;
        stream::scan(&file, &how(), &q, None, &mut |b| {
            let c = b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>().expect("int64");
            last = last.max(c.values().iter().copied().max().unwrap_or(0));
            Ok(())
        })
        .expect("scan");
        last as f64 / 1e9
    };
    let (a, b) = (end * 0.45, end * 0.55);
    let place = logspec::log::index::places(&path)[0].clone();
    let index = std::fs::read(&place).expect("the whole scan wrote the index");
    let parts = || {
        let all = Query { table: KEY.to_string(), ..Query::default() };
        let mut n = 0;
        for p in stream::partitions(&file, &how(), &all, logspec_engine::index::PARTITION_BYTES) {
            stream::scan_part(&file, &how(), &all, p, None, &mut |b| {
                n += b.num_rows();
                Ok(())
            })
            .expect("scan");
        }
        n
    };
    // (label, with the index, what to run)
    type Line<'a> = (&'a str, bool, Box<dyn Fn() -> usize + 'a>);
    let lines: Vec<Line<'_>> = vec![
        ("one channel (stream::scan)", true, Box::new(|| one(&file, None, None))),
        ("every channel (tables::read)", true, Box::new(|| every(&file))),
        ("every channel (table builders)", true, Box::new(|| every_builders(&file))),
        ("one channel, 10% window, no index", false, Box::new(|| one(&file, Some(a), Some(b)))),
        ("one channel, 10% window, index", true, Box::new(|| one(&file, Some(a), Some(b)))),
        ("one channel, 64 MiB partitions", true, Box::new(parts)),
        ("no channel (the walk alone)", true, Box::new(|| nothing(&file))),
        // The floor of a one-thread pass over the mapped log: its every 64-byte line read
        // (R1 messages average 13 bytes, several to a line), no message decoded.
        (
            "every line of the map (the floor)",
            true,
            Box::new(|| {
                common::window::every_line(&path);
                0
            }),
        ),
        (
            "R1 message walk by hand (the floor)",
            true,
            Box::new(|| {
                black_box(r1_walk(&path));
                0
            }),
        ),
    ];
    // `--only N`: run line N alone, many times (for a profiler), and print nothing else.
    if let Ok(only) = arg("--only", "").parse::<usize>() {
        for _ in 0..rounds {
            (lines[only].2)();
        }
        let _ = std::fs::remove_file(&place);
        let _ = std::fs::remove_file(&path);
        return;
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); lines.len()];
    let mut rows = vec![0; lines.len()];
    for r in 0..rounds {
        for k in 0..lines.len() {
            let i = (k + r) % lines.len();
            // The index is there or not as the line says (a read without it writes none: the
            // line's window is read whole, but not the whole log).
            if lines[i].1 {
                std::fs::write(&place, &index).expect("the index");
            } else {
                let _ = std::fs::remove_file(&place);
            }
            let t = Instant::now();
            rows[i] = (lines[i].2)();
            times[i].push(t.elapsed());
        }
    }
    assert_eq!(rows[3], rows[4], "the window's rows with and without the index");
    assert_eq!(rows[0], rows[5], "the partitions give the whole log's rows");
    assert!(rows[0] == rows[1] && rows[1] == rows[2], "the whole-log lines give the same rows: {rows:?}");
    let med: Vec<Duration> = times.into_iter().map(median).collect();
    let mbytes = bytes.len() as f64 / 1e6;
    println!(
        "RLOG R1 {mbytes:.1} MB, 98 keys, key {KEY}; median of {rounds} runs per line, the order rotated each round"
    );
    for (i, (label, _, _)) in lines.iter().enumerate() {
        println!(
            "  {label:<34} {:>7.3} s {:>8.1} MB/s  rows {:>7}  tables::read / this {:.2}x  builders / this {:.2}x  one channel / this {:.2}x",
            med[i].as_secs_f64(),
            mbytes / med[i].as_secs_f64(),
            rows[i],
            med[1].as_secs_f64() / med[i].as_secs_f64(),
            med[2].as_secs_f64() / med[i].as_secs_f64(),
            med[0].as_secs_f64() / med[i].as_secs_f64(),
        );
    }
    let _ = std::fs::remove_file(&place);
    let _ = std::fs::remove_file(&path);
}
