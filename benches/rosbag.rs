//! ROS1 bag decoding throughput: full dynamic decoding of every message (every field of every
//! message into a value tree, from the definitions embedded in the bag), for an uncompressed, a
//! bz2 and an lz4 bag holding the same messages, against `memcpy` of the same bytes measured in
//! the same run.
//!
//! The bags are written by `bench-inputs/gen_rosbag.py` (it needs the Python `rosbags` library,
//! so they are not built here): in a directory DIR,
//!
//! ```text
//! gen_rosbag.py DIR/big_none.bag --mb 100 --compression none    (and bz2, lz4)
//! gen_rosbag.py DIR/small_none.bag --mb 25 --compression none
//! cargo bench --bench rosbag -- --dir DIR
//! ```
//!
//! First, each reader in turn (interleaved rounds, medians) on `DIR/big_none.bag`: the `rosbag`
//! crate's raw framing of the mapped bag against logspec's decode plan (every message through
//! its compiled plan, each value handed to `black_box`, arrays of numbers lent) in time and file order, and the
//! owned `Value` trees; fresh and on an opened bag; and every message through the one interface
//! (`logspec::log::open` with `Open::map`, as the CLI opens a file, then `Log::scan` of every
//! channel into a sink that visits each value, handing every number to `black_box` and taking
//! a `uint8[]` as its slice: `common::touch::Touch`), each message decoded once as it is shown
//! (`Samples::try_visit`, as the export's and the engines' sinks take it) and, the generic path,
//! checked whole first; and the same scan with every message taken as its recorded bytes
//! (`Samples::raw`, as a sink that passes messages through does): the one interface's framing
//! with no value decoded, the floor under the scan. `--crate-only` stops after that;
//! `--only crate|plan|plan-file|owned|scan|check|raw` runs one reader alone, 20 times (for `perf`).
//!
//! Then, as medians: memcpy (the baseline); full decode (owned `Value` trees, the bag read through a
//! `BufReader`) in time order per compression as MB/s
//! of uncompressed message data and x memcpy; a single-threaded bzip2 pass over the bz2 bag's
//! chunks (what the parallel chunk pipeline must beat); whole-process `logspec dump > /dev/null`
//! and `logspec info` with their peak RSS on the 25 MB and 100 MB bags (memory must not grow
//! with the bag); and the Python `rosbags` reference figure (62 MB/s with memcpy at 5.2 GB/s on a
//! 2-core machine, `bench-inputs/README.md`) scaled by this run's memcpy. With
//! `ROSBAGS_PYTHON=/path/to/python` (a Python with rosbags 0.11.9), rosbags is also timed here.

mod common;

use std::hint::black_box;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::touch::{scan_all, scan_raw};
use common::{mbps, median, memcpy_time, process, time};
use logspec::dynamic::Sink;
use logspec::formats::rosbag::{Bag, BagError, Decoders, Order};
use logspec::ir::ir::{Endian, Prim};

/// The Python `rosbags` library's full decode and memcpy on the reference machine, MB/s.
const ROSBAGS_MBPS: f64 = 62.0;
const REFERENCE_MEMCPY_MBPS: f64 = 5200.0;

fn open(p: &Path) -> Bag<std::io::BufReader<std::fs::File>> {
    Bag::open(std::io::BufReader::new(std::fs::File::open(p).unwrap())).unwrap()
}

/// The bag mapped into memory, as the `rosbag` crate reads it: uncompressed chunks are read in
/// place (see `rosbag::Source`).
// Maps the bench's own input, as the `rosbag` crate it is measured against does.
#[allow(unsafe_code)]
fn open_mapped(p: &Path) -> Bag<Cursor<memmap2::Mmap>> {
    let file = std::fs::File::open(p).unwrap();
    // SAFETY: the bench's input files are not modified while it runs.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("maps the bag");
    Bag::open(Cursor::new(map)).unwrap()
}

/// Decodes every message; returns (messages, message bytes).
fn decode_all(p: &Path) -> (u64, u64) {
    decode_bag(open(p))
}

/// [`decode_all`] of the mapped bag.
fn decode_all_mapped(p: &Path) -> (u64, u64) {
    decode_bag(open_mapped(p))
}

/// What the plan decode of the bench does with a message's parts: every number, bool, string
/// length and array length is handed to `black_box` (so each is read, in its byte order), and
/// nothing is kept, as `common::touch::Touch` does for the scan line; arrays of numbers are taken as the
/// packed bytes the plan lends (their length checked, elements not read), as a borrowed view
/// hands them out.
#[derive(Default)]
struct PlanTouch;

impl Sink for PlanTouch {
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, len: usize) {
        black_box(len);
    }
    fn end_array(&mut self) {}
    #[inline]
    fn number(&mut self, _: Option<&str>, _: Prim, raw: u64) {
        black_box(raw);
    }
    fn bool(&mut self, _: Option<&str>, v: bool) {
        black_box(v);
    }
    fn str(&mut self, _: Option<&str>, v: &str) {
        black_box(v.len());
    }
    fn raw_str(&mut self, _: Option<&str>, v: &[u8]) {
        black_box(v.len());
    }
    fn numbers(&mut self, _: Option<&str>, _: Prim, _: Endian, bytes: &[u8]) {
        black_box(bytes.len());
    }
    fn bools(&mut self, _: Option<&str>, bytes: &[u8]) {
        black_box(bytes.len());
    }
}

/// Every message of the mapped bag through its decode plan into [`PlanTouch`]; returns
/// (messages, message bytes).
fn plan_all_mapped(p: &Path, order: Order) -> (u64, u64) {
    plan_bag(&mut open_mapped(p), None, order)
}

fn plan_bag<R: logspec::formats::rosbag::Source>(
    bag: &mut Bag<R>,
    decoders: Option<&Decoders>,
    order: Order,
) -> (u64, u64) {
    let own;
    let decoders = match decoders {
        Some(d) => d,
        None => {
            own = Decoders::new("bench", &bag.connections, None);
            &own
        }
    };
    let (mut n, mut bytes) = (0u64, 0u64);
    bag.for_each_message(order, None, |m| -> Result<(), BagError> {
        let d = decoders.get(m.conn).and_then(|t| t.decoder.as_ref()).expect("a decoder");
        d.decode_into(m.data, &mut PlanTouch).expect("decodes");
        n += 1;
        bytes += m.data.len() as u64;
        Ok(())
    })
    .unwrap();
    (n, bytes)
}

fn decode_bag<R: logspec::formats::rosbag::Source>(mut bag: Bag<R>) -> (u64, u64) {
    let decoders = Decoders::new("bench", &bag.connections, None);
    let (mut n, mut bytes) = (0u64, 0u64);
    bag.for_each_message(Order::Time, None, |m| -> Result<(), BagError> {
        let d = decoders.get(m.conn).and_then(|t| t.decoder.as_ref()).expect("a decoder");
        black_box(d.decode(m.data).expect("decodes"));
        n += 1;
        bytes += m.data.len() as u64;
        Ok(())
    })
    .unwrap();
    (n, bytes)
}

/// Decompresses every chunk on one thread.
fn decompress_sequential(p: &Path) -> u64 {
    let mut bag = open(p);
    let chunks = bag.chunks.clone();
    chunks.iter().map(|c| bag.chunk_records(c).unwrap().len() as u64).sum()
}

fn arg_dir() -> Option<PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == "--dir").and_then(|i| args.get(i + 1)).map(PathBuf::from)
}

/// rosbags' full decode (AnyReader + deserialize of every message), if a Python with it is given.
fn rosbags_time(python: &str, bag: &Path) -> Option<f64> {
    let script = "import sys,time\nfrom pathlib import Path\nfrom rosbags.highlevel import AnyReader\nt=time.perf_counter()\nwith AnyReader([Path(sys.argv[1])]) as r:\n    for c,ts,raw in r.messages():\n        r.deserialize(raw,c.msgtype)\nprint(time.perf_counter()-t)";
    let out = std::process::Command::new(python).args(["-c", script, bag.to_str()?]).output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

/// The `rosbag` crate's raw record framing: every chunk record, and every message record in
/// every chunk, found and lent out (it decodes no message). Returns the message bytes.
fn rosbag_crate_framing(p: &Path) -> u64 {
    let bag = rosbag::RosBag::new(p).expect("the rosbag crate opens the bag");
    let mut bytes = 0u64;
    for record in bag.chunk_records() {
        if let rosbag::ChunkRecord::Chunk(chunk) = record.expect("chunk record") {
            for msg in chunk.messages() {
                if let rosbag::MessageRecord::MessageData(m) = msg.expect("message record") {
                    bytes += black_box(m.data).len() as u64;
                }
            }
        }
    }
    bytes
}

/// [`rosbag_crate_framing`] of a bag the crate has opened (mapped) already.
fn rosbag_crate_framing_of(bag: &rosbag::RosBag) -> u64 {
    let mut bytes = 0u64;
    for record in bag.chunk_records() {
        if let rosbag::ChunkRecord::Chunk(chunk) = record.expect("chunk record") {
            for msg in chunk.messages() {
                if let rosbag::MessageRecord::MessageData(m) = msg.expect("message record") {
                    bytes += black_box(m.data).len() as u64;
                }
            }
        }
    }
    bytes
}

/// Times each reader `runs` times, taking turns (one run of each, then the next round), so that
/// a shared machine's load falls on all of them alike; returns each one's median.
fn interleaved(runs: usize, readers: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    for r in readers.iter_mut() {
        r();
    }
    let mut times = vec![Vec::with_capacity(runs); readers.len()];
    for _ in 0..runs {
        for (r, t) in readers.iter_mut().zip(&mut times) {
            let start = Instant::now();
            r();
            t.push(start.elapsed());
        }
    }
    times.into_iter().map(median).collect()
}

/// Full decode of every message of an uncompressed bag against the `rosbag` crate's raw framing
/// of the same bag, in this run, each reader in turn.
fn against_rosbag_crate(p: &Path, runs: usize) {
    let (msgs, msg_bytes) = decode_all(p);
    assert_eq!(rosbag_crate_framing(p), msg_bytes, "both read the same messages");
    assert_eq!(decode_all_mapped(p), (msgs, msg_bytes), "both read the same messages");
    let (pm, pb) = plan_all_mapped(p, Order::Time);
    assert_eq!((pm, pb), (msgs, msg_bytes), "both read the same messages");
    assert_eq!(scan_all(p, true), msgs, "the scan has every message");
    assert_eq!(scan_all(p, false), msgs, "the scan has every message");
    assert_eq!(scan_raw(p), msgs, "the scan has every message");
    // Opened once, outside the timing (the mapping's pages stay mapped): what a large bag
    // amortises, for the crate and for logspec (definitions compiled once too).
    let crate_bag = rosbag::RosBag::new(p).expect("the rosbag crate opens the bag");
    let mut bag = open_mapped(p);
    let decoders = Decoders::new("bench", &bag.connections, None);
    let mut bag2 = open_mapped(p);
    let t = interleaved(
        runs,
        &mut [
            &mut || {
                black_box(rosbag_crate_framing(p));
            },
            &mut || {
                black_box(plan_all_mapped(p, Order::Time));
            },
            &mut || {
                black_box(plan_all_mapped(p, Order::File));
            },
            &mut || {
                black_box(decode_all_mapped(p));
            },
            &mut || {
                black_box(decode_all(p));
            },
            &mut || {
                black_box(rosbag_crate_framing_of(&crate_bag));
            },
            &mut || {
                black_box(plan_bag(&mut bag, Some(&decoders), Order::Time));
            },
            &mut || {
                bag2.for_each_message(Order::Time, None, |m| -> Result<(), BagError> {
                    let d = decoders.get(m.conn).and_then(|t| t.decoder.as_ref()).expect("a decoder");
                    black_box(d.decode(m.data).expect("decodes"));
                    Ok(())
                })
                .unwrap()
            },
            &mut || {
                black_box(scan_all(p, true));
            },
            &mut || {
                black_box(scan_all(p, false));
            },
            &mut || {
                black_box(scan_raw(p));
            },
        ],
    );
    println!("input: {} ({msgs} messages, {msg_bytes} message bytes), medians of {runs} interleaved runs", p.display());
    let line = |what: &str, i: usize, base: usize| {
        let ratio = t[base].as_secs_f64() / t[i].as_secs_f64();
        let tail = if i == base { "(baseline)".to_string() } else { format!("the crate on line {}", base + 1) };
        println!("{}. {what:<52} {:>7.0} MB/s   {ratio:.2}x {tail}", i + 1, mbps(msg_bytes as usize, t[i]));
    };
    line("rosbag crate 0.6, raw framing (mapped; open included)", 0, 0);
    line("logspec, decode plan, time order (mapped; open+compile)", 1, 0);
    line("logspec, decode plan, file order (mapped; open+compile)", 2, 0);
    line("logspec, Value trees, time order (mapped; open+compile)", 3, 0);
    line("logspec, Value trees, time order (read(); open+compile)", 4, 0);
    line("rosbag crate 0.6, raw framing, opened bag", 5, 5);
    line("logspec, decode plan, time order, opened bag", 6, 5);
    line("logspec, Value trees, time order, opened bag", 7, 5);
    line("logspec, every message through Log::scan (open+compile)", 8, 0);
    line("the same, each message checked whole first (no try_visit)", 9, 0);
    line("the same, each message taken undecoded (Samples::raw)", 10, 0);
    println!(
        "   the one pass (line 9) is {:.2}x the check, then the visit (line 10); decoding and visiting every value is \
         {:.0}% of line 9's time (line 11: the scan's framing alone)",
        t[9].as_secs_f64() / t[8].as_secs_f64(),
        100.0 * (1.0 - t[10].as_secs_f64() / t[8].as_secs_f64())
    );
}

fn main() {
    let Some(dir) = arg_dir() else {
        // Without generated inputs, the comparison with the `rosbag` crate runs on the largest
        // uncompressed sample bag of the test data.
        let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/rosbag/rosbagjs-example.bag");
        against_rosbag_crate(&sample, 21);
        eprintln!("for the full set: cargo bench --bench rosbag -- --dir DIR (see the top of benches/rosbag.rs for the inputs)");
        return;
    };
    let bag = |name: &str| dir.join(name);
    let runs = 5;
    let none = bag("big_none.bag");
    let crate_runs = 21;
    let args: Vec<String> = std::env::args().collect();
    if let Some(only) = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)) {
        for _ in 0..20 {
            match only.as_str() {
                "plan" => drop(black_box(plan_all_mapped(&none, Order::Time))),
                "plan-file" => drop(black_box(plan_all_mapped(&none, Order::File))),
                "crate" => drop(black_box(rosbag_crate_framing(&none))),
                "scan" => drop(black_box(scan_all(&none, true))),
                "check" => drop(black_box(scan_all(&none, false))),
                "raw" => drop(black_box(scan_raw(&none))),
                _ => drop(black_box(decode_all_mapped(&none))),
            }
        }
        return;
    }
    let file = std::fs::read(&none).expect("DIR/big_none.bag");
    against_rosbag_crate(&none, crate_runs);
    if std::env::args().any(|a| a == "--crate-only") {
        return;
    }
    let (msgs, msg_bytes) = decode_all(&none);
    println!("input: {} ({} bytes), {msgs} messages, {msg_bytes} message bytes", none.display(), file.len());
    let memcpy = mbps(file.len(), memcpy_time(&file, runs));
    drop(file);
    let rosbags_ref = ROSBAGS_MBPS * memcpy / REFERENCE_MEMCPY_MBPS;
    println!("memcpy                              {memcpy:>7.0} MB/s   1.00x (baseline)");
    println!("rosbags (reference, scaled)         {rosbags_ref:>7.0} MB/s   {:.4}x memcpy", rosbags_ref / memcpy);
    for c in ["none", "bz2", "lz4"] {
        let p = bag(&format!("big_{c}.bag"));
        let stored = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        let t = time(runs, || decode_all(&p));
        let m = mbps(msg_bytes as usize, t);
        println!(
            "full decode, {c:<4} ({:>4} MB stored)   {m:>7.0} MB/s   {:.3}x memcpy   {:.1}x rosbags   {:.2} M messages/s",
            stored / 1_000_000,
            m / memcpy,
            m / rosbags_ref,
            msgs as f64 / t.as_secs_f64() / 1e6
        );
    }
    let bz2 = bag("big_bz2.bag");
    let seq = time(3, || decompress_sequential(&bz2));
    println!(
        "bzip2 decompression, one thread     {:>7.0} MB/s   (full decode of the bz2 bag above must beat it)",
        mbps(msg_bytes as usize, seq)
    );
    for (label, p) in [("25 MB", bag("small_none.bag")), ("100 MB", none.clone())] {
        let len = std::fs::metadata(&p).unwrap().len() as usize;
        let p = p.to_str().unwrap();
        let _ = process(&["dump", p]);
        let (t, rss) = process(&["dump", p]);
        let (ti, rssi) = process(&["info", p]);
        println!(
            "logspec dump > /dev/null, {label:<6}   {:>7.0} MB/s   peak RSS {} kB;   logspec info {:.3} s, peak RSS {} kB",
            mbps(len, t),
            rss.unwrap_or(0),
            ti.as_secs_f64(),
            rssi.unwrap_or(0)
        );
    }
    for c in ["bz2", "lz4"] {
        let p = bag(&format!("big_{c}.bag"));
        let (t, rss) = process(&["dump", p.to_str().unwrap()]);
        println!(
            "logspec dump > /dev/null, 100 MB {c:<3} {:>7.0} MB/s   peak RSS {} kB",
            mbps(msg_bytes as usize, t),
            rss.unwrap_or(0)
        );
    }
    if let Ok(py) = std::env::var("ROSBAGS_PYTHON") {
        let start = Instant::now();
        if let Some(s) = rosbags_time(&py, &none) {
            let m = msg_bytes as f64 / 1e6 / s;
            println!("rosbags 0.11.9, measured here       {m:>7.0} MB/s   {:.4}x memcpy", m / memcpy);
        } else {
            println!("rosbags: could not run {py} ({:?})", start.elapsed());
        }
    }
}
