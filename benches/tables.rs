//! Every fast path into in-memory tables against its generic path, measured in the same run: the
//! rule is that a fast path stays only where it is at least 1.3x its generic path.
//!
//! `cargo bench --bench tables` (optionally `-- --usvlog-mb 200 --rlog-mb 97 --carla-mb 200
//! --rounds 5`; 0 leaves an input out). The inputs are the USVLOG stream of the `usvlog` bench,
//! the R1 file of the `rlog` bench and the recording of the `carla` bench, written to temporary
//! files (in the page cache). Each line is a median of `rounds` reads of
//! the whole file into tables, each in a new process (as a user's program reads: its memory is
//! fresh, so page faults count), the lines' order rotated every round:
//!
//! - `tables::read`: the path `logspec_engine::tables::read` chooses (the Python package's
//!   `tables()`): USVLOG by the two passes, the others by the `Tables` sink;
//! - the `Tables` sink (`Log::scan`): typed records, RLOG views, direct columns;
//! - the same without direct columns (`Tables::without_direct`);
//! - the same with every record handed as a visit, never as its payload bytes, so no fixed
//!   layout (`TableBuilder`'s columns gathered from the bytes): USVLOG records, CARLA actor
//!   records of numbers;
//! - the generic path: every sample as a value tree, no direct columns (what
//!   `tests/it/fast_paths.rs` holds every path to).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{arg, median};
use logspec::log::{Channel, Error, Open, Samples, Select};
use logspec::value::Value;
use logspec_engine::tables::{self, Tables};

/// Hands every sample over as a value tree.
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

fn rows(t: &[tables::Table]) -> usize {
    t.iter().map(|t| t.batches.iter().map(|b| b.num_rows()).sum::<usize>()).sum()
}

fn scan(path: &Path, sink: &mut dyn Samples) {
    let log = logspec::log::open(path, &Open::default()).unwrap();
    let o = log.scan(&Select::default(), sink).unwrap();
    assert!(o.error.is_none(), "{:?}", o.error);
}

/// Hands every record over as a visit (no payload bytes: no fixed layout).
struct Visits(Tables);

impl Samples for Visits {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        self.0.channel(id, channel)
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        self.0.sample(id, t_ns, value)
    }
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn logspec::log::DynVisit) -> Result<(), Error> {
        self.0.visit(id, t_ns, value)
    }
    fn origin(&mut self, origin_ns: u64) {
        self.0.origin(origin_ns)
    }
}

/// The lines: name, label, and the line it is measured against.
const LINES: [(&str, &str, &str); 5] = [
    ("chosen", "tables::read (the chosen path)", "sink"),
    ("sink", "the Tables sink", "no-direct"),
    ("no-direct", "the same without direct columns", "visits"),
    ("visits", "the same, records as visits", "generic"),
    ("generic", "the generic path (value trees)", "generic"),
];

/// Reads `path` into tables once by `line`; returns the rows.
fn read_once(line: &str, path: &Path) -> usize {
    match line {
        "chosen" => {
            let r = tables::read(path, &Open::default(), &Select::default()).unwrap();
            assert!(r.error.is_none());
            rows(&r.tables)
        }
        "sink" => {
            let mut t = Tables::new(false);
            scan(path, &mut t);
            rows(&t.finish().unwrap().0)
        }
        "no-direct" => {
            let mut t = Tables::new(false).without_direct();
            scan(path, &mut t);
            rows(&t.finish().unwrap().0)
        }
        "visits" => {
            let mut v = Visits(Tables::new(false).without_direct());
            scan(path, &mut v);
            rows(&v.0.finish().unwrap().0)
        }
        _ => {
            let mut g = Generic(Tables::new(false).without_direct());
            scan(path, &mut g);
            rows(&g.0.finish().unwrap().0)
        }
    }
}

/// One cold read in a new process (this binary with `--line`), as a user's process reads: its
/// wall time and rows.
fn in_new_process(line: &str, path: &Path) -> (Duration, usize) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--line", line, "--file"])
        .arg(path)
        .output()
        .expect("run the bench binary");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let secs: f64 = it.next().and_then(|x| x.parse().ok()).expect("the child's time");
    let rows: usize = it.next().and_then(|x| x.parse().ok()).expect("the child's rows");
    (Duration::from_secs_f64(secs), rows)
}

fn measure(name: &str, path: &Path, rounds: usize) {
    let mb = std::fs::metadata(path).unwrap().len() as f64 / 1e6;
    println!("{name}: {mb:.1} MB, median of {rounds} new processes per line, the order rotated each round");
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); LINES.len()];
    let mut counts = vec![0; LINES.len()];
    for r in 0..rounds {
        for k in 0..LINES.len() {
            let i = (k + r) % LINES.len();
            let (d, n) = in_new_process(LINES[i].0, path);
            times[i].push(d);
            counts[i] = n;
        }
    }
    assert!(counts.iter().all(|n| *n == counts[0]), "rows differ: {counts:?}");
    let med: Vec<Duration> = times.into_iter().map(median).collect();
    for (i, (_, label, base)) in LINES.iter().enumerate() {
        let j = LINES.iter().position(|(l, ..)| l == base).unwrap();
        let base_label = LINES[j].1;
        println!(
            "  {label:<36} {:>8.3} s  {:>7.1} MB/s  {:.2}x {}",
            med[i].as_secs_f64(),
            mb / med[i].as_secs_f64(),
            med[j].as_secs_f64() / med[i].as_secs_f64(),
            if i == j { "itself".to_string() } else { base_label.to_string() }
        );
    }
    println!("  rows: {}", counts[0]);
}

fn main() {
    let line = arg("--line", "");
    if !line.is_empty() {
        let path = std::path::PathBuf::from(arg("--file", ""));
        let t = std::time::Instant::now();
        let n = read_once(&line, &path);
        println!("{} {n}", t.elapsed().as_secs_f64());
        return;
    }
    let usvlog_mb: f64 = arg("--usvlog-mb", "200").parse().expect("--usvlog-mb N");
    let rlog_mb: f64 = arg("--rlog-mb", "97").parse().expect("--rlog-mb N");
    let carla_mb: f64 = arg("--carla-mb", "200").parse().expect("--carla-mb N");
    let runs: usize = arg("--rounds", "5").parse().expect("--rounds N");
    // `--write DIR`: only write the inputs there (`bench.usvlog`, `bench.rlog`), for benchmarks
    // of whole processes (BENCHMARKS.md, "Before and after").
    let keep = arg("--write", "");
    let dir = if keep.is_empty() {
        std::env::temp_dir().join(format!("logspec-bench-tables-{}", std::process::id()))
    } else {
        std::path::PathBuf::from(&keep)
    };
    std::fs::create_dir_all(&dir).unwrap();
    if !keep.is_empty() {
        if usvlog_mb > 0.0 {
            std::fs::write(dir.join("bench.usvlog"), common::usvlog_input::build(usvlog_mb)).unwrap();
        }
        if rlog_mb > 0.0 {
            std::fs::write(dir.join("bench.rlog"), common::rlog_input::build_r1(rlog_mb)).unwrap();
        }
        return;
    }
    if usvlog_mb > 0.0 {
        let p = dir.join("bench.usvlog");
        std::fs::write(&p, common::usvlog_input::build(usvlog_mb)).unwrap();
        measure("USVLOG", &p, runs);
    }
    if rlog_mb > 0.0 {
        let p = dir.join("bench.rlog");
        std::fs::write(&p, common::rlog_input::build_r1(rlog_mb)).unwrap();
        measure("RLOG R1", &p, runs);
    }
    if carla_mb > 0.0 {
        let p = dir.join("bench.log");
        std::fs::write(&p, common::carla_input::build(carla_mb).0).unwrap();
        measure("CARLA", &p, runs);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
