//! An R1 RLOG file read into tables in two halves at once (`tables::read_rlog_split`: part B
//! from a guessed message start, joined to part A when A finds a message starting exactly
//! there) gives exactly what one read from the start gives: the same tables (names, schemas,
//! metadata, batches, misfits), warnings, samples, error and fault (offset included). Checked
//! for every bundled RLOG file cut at many offsets (true message starts and not), for cut and
//! corrupted copies, for a guess inside a string that looks like messages, for second halves
//! whose keys were defined in the first half, or that define keys, or that redefine them, or
//! whose keys change type; R2 files and small files are not split.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use logspec::formats::rlog::{self, R1Value, Revision, Value, Writer};
use logspec_cli::cli::source::{self, Select};
use logspec_cli::cli::tables::{find_cut, read_rlog_split, Cut, Table, Tables};
use logspec_cli::cli::{detect, CliError};

use crate::scratch;

/// The tables, their warnings, and the outcome (samples, warnings, error, fault).
type Read = (Vec<Table>, Vec<String>, Result<(u64, Vec<String>, Option<String>, String), String>);

fn finish(tables: Tables, outcome: Result<source::Outcome, CliError>) -> Read {
    let (tables, warnings) = tables.finish().unwrap();
    let outcome =
        outcome.map(|o| (o.samples, o.warnings, o.error, format!("{:?}", o.fault))).map_err(|e| e.to_string());
    (tables, warnings, outcome)
}

/// The read on one thread.
fn one(path: &Path) -> Read {
    let bytes = std::fs::read(path).unwrap();
    let d = detect(path, Box::new(Cursor::new(bytes)), &Default::default()).unwrap();
    let mut sink = Tables::new(false);
    let o = source::read(d, path, &path.display().to_string(), false, &Select::default(), &mut sink);
    finish(sink, o)
}

/// The read in halves with part B at `cut`; `None` when the file is not split. Also whether
/// B was joined.
fn halves(path: &Path, cut: Cut) -> Option<(Read, bool)> {
    let r = read_rlog_split(path, &path.display().to_string(), false, &Select::default(), cut).unwrap()?;
    Some((finish(r.tables, r.outcome), r.joined))
}

fn assert_same(what: &str, (a, wa, oa): &Read, (b, wb, ob): &Read) {
    assert_eq!(oa, ob, "{what}: outcome");
    assert_eq!(wa, wb, "{what}: warnings");
    assert_eq!(a.iter().map(|t| &t.name).collect::<Vec<_>>(), b.iter().map(|t| &t.name).collect::<Vec<_>>(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.builder.schema, y.builder.schema, "{what}: {}", x.name);
        assert_eq!(x.builder.meta, y.builder.meta, "{what}: {}", x.name);
        assert_eq!(x.builder.misfits, y.builder.misfits, "{what}: {}", x.name);
        if x.batches != y.batches {
            let rows = |b: &[arrow_array::RecordBatch]| b.iter().map(|b| b.num_rows()).collect::<Vec<_>>();
            let (p, q) = (&x.batches[0], &y.batches[0]);
            let first = (0..p.num_rows().min(q.num_rows())).find(|&i| p.slice(i, 1) != q.slice(i, 1));
            let show = |b: &arrow_array::RecordBatch, i: Option<usize>| {
                i.map(|i| format!("{:?}", b.slice(i.saturating_sub(1), 3.min(b.num_rows() - i + 1)).columns()))
            };
            panic!(
                "{what}: {}: batches of {:?} rows against {:?}; first different row {first:?}: {:?} against {:?}",
                x.name,
                rows(&x.batches),
                rows(&y.batches),
                show(&p, first),
                show(&q, first)
            );
        }
    }
}

/// Reads `path` in halves at each of `cuts` and compares with one read; returns how many of
/// the reads joined B.
fn same_at(path: &Path, cuts: impl IntoIterator<Item = u64>) -> usize {
    let want = one(path);
    let mut joined = 0;
    for cut in cuts {
        let Some((got, j)) = halves(path, Cut::At(cut)) else { continue };
        assert_same(&format!("{} cut at {cut}", path.display()), &got, &want);
        joined += usize::from(j);
    }
    joined
}

/// Offsets to cut at: every `00` byte of a window after the middle (each a candidate
/// timestamp, true or not), and offsets spread over the file.
fn cuts(bytes: &[u8]) -> Vec<u64> {
    let mid = bytes.len() / 2;
    let mut cuts: Vec<u64> = (mid..bytes.len().min(mid + 3000)).filter(|&i| bytes[i] == 0).map(|i| i as u64).collect();
    cuts.extend((1..40).map(|k| (bytes.len() * k / 40) as u64));
    cuts
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rlog")
}

#[test]
fn every_bundled_rlog_file_reads_alike_in_halves() {
    let mut files = 0;
    for e in std::fs::read_dir(data()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "rlog") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let r1 = bytes[0] == 1;
        let joined = same_at(&p, cuts(&bytes));
        // Small files are split only when told where; R2 files never.
        assert!(halves(&p, Cut::Guess).is_none(), "{}", p.display());
        if r1 {
            assert!(joined > 0, "{}: no cut joined", p.display());
        } else {
            assert!(halves(&p, Cut::At(bytes.len() as u64 / 2)).is_none(), "{}: R2 is not split", p.display());
        }
        files += 1;
    }
    assert!(files >= 6, "{files} files");
}

/// The bundled robot log's cycles written again and again (keys defined once, at the start, as
/// AdvantageKit writes them), so that the second half uses only keys of the first.
fn repeated(times: u32) -> Vec<u8> {
    let sample = std::fs::read(data().join("akit_v1.8.1_robotlog.rlog")).unwrap();
    let mut r = rlog::Reader::new(&sample[..]).unwrap();
    let mut events = Vec::new();
    while let Some(ev) = r.next_event() {
        events.push(ev.unwrap());
    }
    let keys: Vec<(i16, String)> = r.keys().map(|(id, k)| (id, k.name.clone())).collect();
    let mut w = Writer::new(Vec::new(), Revision::R1);
    for rep in 0..times {
        for ev in &events {
            match ev {
                rlog::Event::Timestamp(t) => w.timestamp(t + f64::from(rep) * 200.0).unwrap(),
                rlog::Event::KeyDef { key_id } if rep == 0 => {
                    w.define(*key_id, &keys.iter().find(|(id, _)| id == key_id).unwrap().1, None).unwrap()
                }
                rlog::Event::KeyDef { .. } => {}
                rlog::Event::Value { key_id, value, .. } => w.value(*key_id, value.clone()).unwrap(),
            }
        }
    }
    w.finish().unwrap()
}

#[test]
fn a_second_half_of_keys_defined_in_the_first_is_joined() {
    let bytes = repeated(4);
    let dir = scratch::temp_dir();
    let p = dir.join("repeated.rlog");
    std::fs::write(&p, &bytes).unwrap();
    // The guess near the middle is a true message start: joined.
    let cut = find_cut(&bytes, 1).expect("a candidate");
    let want = one(&p);
    let (got, joined) = halves(&p, Cut::At(cut)).unwrap();
    assert!(joined, "the guess at {cut} was joined");
    assert_same("repeated", &got, &want);
    assert!(same_at(&p, cuts(&bytes)) > 10);
}

/// A file of the benchmark's kind above the split size: the guess joins.
#[test]
fn a_large_file_is_split_at_the_guess_and_joined() {
    let bytes = repeated(32);
    assert!(bytes.len() as u64 > logspec_cli::cli::tables::MIN_SPLIT);
    let dir = scratch::temp_dir();
    let p = dir.join("large.rlog");
    std::fs::write(&p, &bytes).unwrap();
    let (got, joined) = halves(&p, Cut::Guess).unwrap();
    assert!(joined);
    assert_same("large", &got, &one(&p));
}

#[test]
fn cut_and_corrupted_copies_read_alike_in_halves() {
    let bytes = repeated(3);
    let dir = scratch::temp_dir();
    let mid = find_cut(&bytes, 1).unwrap() as usize;
    let mut joined = 0;
    // Cut inside part A, just after the cut, and in part B.
    for end in [mid / 2 + 5, mid + 3, mid + 11, mid + (bytes.len() - mid) / 2 + 7, bytes.len() - 1] {
        let p = dir.join(format!("cut{end}.rlog"));
        std::fs::write(&p, &bytes[..end]).unwrap();
        joined += same_at(&p, [mid as u64]);
    }
    // A bad message kind at a message start in part A (B is not used) and in part B.
    let mut starts = Vec::new();
    let mut r = rlog::Reader::new(&bytes[..]).unwrap();
    loop {
        let at = r.position();
        match r.next_event_ref() {
            Some(Ok(rlog::EventRef::Value { .. })) => starts.push(at as usize),
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    for near in [mid / 3, mid + 1000, bytes.len() - 2000] {
        let at = *starts.iter().find(|&&s| s >= near).unwrap();
        let mut bad = bytes.clone();
        bad[at] = 0x7f;
        let p = dir.join(format!("bad{at}.rlog"));
        std::fs::write(&p, &bad).unwrap();
        joined += same_at(&p, [mid as u64]);
        let (_, _, outcome) = one(&p);
        let fault = outcome.unwrap().3;
        assert!(fault.contains(&format!("offset: Some({at})")), "the fault is at {at}: {fault}");
    }
    assert!(joined >= 4, "{joined} joined");
}

/// A timestamp as 8 ASCII bytes (a string of them is valid UTF-8): 4.0 s.
const PLAUSIBLE: f64 = 4.0;

/// A guess inside a string value whose bytes are R1 messages (`00` and a plausible time, then
/// values): the candidate search takes it, part A steps over it, and reads on alone.
#[test]
fn a_wrong_guess_gives_the_one_thread_read() {
    assert!(PLAUSIBLE.to_be_bytes().iter().all(u8::is_ascii));
    // The fake messages: timestamps and values of key 0, all ASCII.
    let mut fake = Writer::without_revision(Vec::new(), Revision::R1);
    for _ in 0..40 {
        fake.timestamp(PLAUSIBLE).unwrap();
        fake.value(0, Value::R1(R1Value::Double { value: PLAUSIBLE })).unwrap();
    }
    let fake = String::from_utf8(fake.finish().unwrap()).unwrap();
    let mut w = Writer::new(Vec::new(), Revision::R1);
    w.timestamp(1.0).unwrap();
    w.define(0, "/x", None).unwrap();
    w.define(1, "/s", None).unwrap();
    for i in 0..400 {
        w.timestamp(10.0 + f64::from(i)).unwrap();
        w.value(0, Value::R1(R1Value::Double { value: f64::from(i) })).unwrap();
        if i == 200 {
            w.value(1, Value::R1(R1Value::String { value: fake.clone() })).unwrap();
        }
    }
    let bytes = w.finish().unwrap();
    let dir = scratch::temp_dir();
    let p = dir.join("fake.rlog");
    std::fs::write(&p, &bytes).unwrap();
    let start = bytes.windows(fake.len()).position(|x| x == fake.as_bytes()).unwrap();
    // The search, with the middle at the string's first byte, takes its `00` and time.
    assert_eq!(find_cut(&bytes[..2 * start - 1], 1), Some(start as u64));
    let guess = find_cut(&bytes, 1).unwrap();
    let want = one(&p);
    // The guess at the string's first byte, and at the search's pick near it.
    for cut in [start as u64, guess] {
        let (got, joined) = halves(&p, Cut::At(cut)).unwrap();
        assert_same(&format!("cut at {cut}"), &got, &want);
        if cut == start as u64 {
            assert!(!joined, "a cut inside a string is never joined");
        }
    }
    // Every `00` inside the string (each followed by a plausible time).
    let inside: Vec<u64> = (start..start + fake.len()).filter(|&i| bytes[i] == 0).map(|i| i as u64).collect();
    assert!(inside.len() > 40);
    assert_eq!(same_at(&p, inside), 0, "no cut inside the string is joined");
}

/// A second half that defines new keys (joined), redefines a key of the first half (not joined),
/// or whose keys change type and are removed (R1 `null`), reads as one read does.
#[test]
fn keys_defined_redefined_and_changing_type_in_the_second_half() {
    let dir = scratch::temp_dir();
    // The first half: keys /a and /b, 300 cycles.
    let first = |w: &mut Writer<Vec<u8>>| {
        w.timestamp(1.0).unwrap();
        w.define(0, "/a", None).unwrap();
        w.define(1, "/b", None).unwrap();
        for i in 0..300 {
            w.timestamp(2.0 + f64::from(i)).unwrap();
            w.value(0, Value::R1(R1Value::Double { value: f64::from(i) })).unwrap();
            w.value(1, Value::R1(R1Value::Integer { value: i })).unwrap();
        }
    };
    let write = |name: &str, second: &dyn Fn(&mut Writer<Vec<u8>>)| -> (PathBuf, u64) {
        let mut w = Writer::new(Vec::new(), Revision::R1);
        first(&mut w);
        let mid = w.finish().unwrap().len() as u64;
        let mut w = Writer::new(Vec::new(), Revision::R1);
        // The same first half again, then the second.
        first(&mut w);
        w.timestamp(400.0).unwrap();
        second(&mut w);
        let p = dir.join(name);
        std::fs::write(&p, w.finish().unwrap()).unwrap();
        (p, mid)
    };
    let double = |v: f64| Value::R1(R1Value::Double { value: v });
    let cases: [(&str, bool, &dyn Fn(&mut Writer<Vec<u8>>)); 5] = [
        ("new_keys.rlog", true, &|w| {
            w.define(2, "/c", None).unwrap();
            for i in 0..50 {
                w.timestamp(500.0 + f64::from(i)).unwrap();
                w.value(2, Value::R1(R1Value::Boolean { value: i % 3 == 0 })).unwrap();
                w.value(0, double(-f64::from(i))).unwrap();
                w.value(2, Value::R1(R1Value::String { value: format!("s{i}") })).unwrap();
            }
        }),
        ("redefined.rlog", false, &|w| {
            w.define(1, "/b2", None).unwrap();
            w.value(1, double(1.5)).unwrap();
        }),
        ("type_change.rlog", true, &|w| {
            for i in 0..50 {
                w.timestamp(500.0 + f64::from(i)).unwrap();
                w.value(0, Value::R1(R1Value::Integer { value: i })).unwrap();
                w.value(0, if i % 7 == 0 { Value::R1(R1Value::Null {}) } else { double(0.25) }).unwrap();
                w.value(1, Value::R1(R1Value::DoubleArray { value: vec![1.0, f64::from(i)] })).unwrap();
            }
        }),
        // Lists in the second half: of one type per key, mixed with nulls, other lists and
        // numbers, empty, and of a key whose table (from the first half) holds integers.
        ("lists.rlog", true, &|w| {
            let doubles = |v: Vec<f64>| Value::R1(R1Value::DoubleArray { value: v });
            let ints = |v: Vec<i32>| Value::R1(R1Value::IntegerArray { value: v });
            w.define(3, "/d", None).unwrap();
            w.define(4, "/e", None).unwrap();
            for i in 0..60 {
                w.timestamp(500.0 + f64::from(i)).unwrap();
                w.value(3, doubles((0..i % 5).map(f64::from).collect())).unwrap();
                w.value(4, ints(vec![i, -i])).unwrap();
                match i % 6 {
                    0 => w.value(3, Value::R1(R1Value::Null {})).unwrap(),
                    1 => w.value(3, ints(vec![i])).unwrap(),
                    2 => w.value(4, double(0.5)).unwrap(),
                    3 => w.value(4, doubles(vec![])).unwrap(),
                    _ => {}
                }
                w.value(1, if i % 2 == 0 { ints(vec![i; 3]) } else { doubles(vec![f64::from(i)]) }).unwrap();
            }
        }),
        ("undefined.rlog", true, &|w| {
            w.value(7, double(3.0)).unwrap();
            w.value(0, double(4.0)).unwrap();
        }),
    ];
    for (name, joins, second) in cases {
        let (p, mid) = write(name, second);
        let want = one(&p);
        let (got, joined) = halves(&p, Cut::At(mid)).unwrap();
        assert_same(name, &got, &want);
        assert_eq!(joined, joins, "{name}: joined");
    }
}

/// The reader's API under the split: `stop_at` stops before the first message at or after the
/// offset (at it exactly when a message starts there), reading goes on after `stop_at(None)`,
/// and `resume` from a message start reads the rest as the reader from the start does, at the
/// same offsets, with values of keys defined before it keyless.
#[test]
fn the_reader_stops_at_an_offset_and_resumes_from_one() {
    let bytes = std::fs::read(data().join("akit_v1.8.1_robotlog.rlog")).unwrap();
    // Every message's offset and event, from the start.
    let mut r = rlog::Reader::new(&bytes[..]).unwrap();
    let mut all = Vec::new();
    let flow = r.try_for_each_event_at(|at, ev| {
        all.push((at, ev.to_event()));
        std::ops::ControlFlow::<()>::Continue(())
    });
    assert!(flow.unwrap().is_continue());
    assert!(all.len() > 9000);
    let (starts, events): (Vec<u64>, Vec<rlog::Event>) = all.into_iter().unzip();
    for &cut in &[starts[1], starts[starts.len() / 2], starts[starts.len() / 2] + 1, starts[starts.len() - 1]] {
        let mut r = rlog::Reader::new(&bytes[..]).unwrap();
        r.stop_at(Some(cut));
        let mut before = Vec::new();
        r.for_each_event_ref(|ev| before.push(ev.to_event())).unwrap();
        assert!(r.stopped());
        let next = starts.iter().position(|&s| s >= cut).unwrap();
        assert_eq!(r.position(), starts[next], "stopped at the first message at or after {cut}");
        assert_eq!(before, events[..next]);
        assert!(r.next_event_ref().is_none(), "stopped: no event");
        r.stop_at(None);
        let mut after = Vec::new();
        r.for_each_event_ref(|ev| after.push(ev.to_event())).unwrap();
        assert!(!r.stopped());
        assert_eq!(after, events[next..]);
        // Resumed at that message: the same events, timestamps and offsets.
        let at = starts[next];
        let mut r = rlog::Reader::resume(&bytes[at as usize..], Revision::R1, at);
        let mut resumed = Vec::new();
        let flow = r.try_for_each_event_at(|a, ev| {
            resumed.push((a, ev.to_event()));
            std::ops::ControlFlow::<()>::Continue(())
        });
        assert!(flow.unwrap().is_continue());
        assert_eq!(r.position(), bytes.len() as u64);
        assert_eq!(resumed.iter().map(|(a, _)| *a).collect::<Vec<_>>(), starts[next..]);
        // The same values once the first timestamp set the cycle time (every key was defined
        // before: the reader from `at` knows none of them).
        if let Some(ts) = resumed.iter().position(|(_, e)| matches!(e, rlog::Event::Timestamp(_))) {
            let same: Vec<rlog::Event> = resumed[ts..].iter().map(|(_, e)| e.clone()).collect();
            assert_eq!(same, events[next + ts..]);
        }
    }
}
