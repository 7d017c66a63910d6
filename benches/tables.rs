//! Every fast path into in-memory tables against its generic path, measured in the same run: the
//! rule is that a fast path stays only where it is at least 1.3x its generic path.
//!
//! `cargo bench --bench tables` (optionally `-- --usvlog-mb 200 --rlog-mb 97 --runs 5`). The
//! inputs are the USVLOG stream of the `usvlog` bench and the R1 file of the `rlog` bench,
//! written to temporary files (in the page cache). Each line is a median of `runs` reads of the
//! whole file into tables, in this process:
//!
//! - `tables::read`: the path `logspec_engine::tables::read` chooses (the Python package's
//!   `tables()`): USVLOG by the two passes, the others by the `Tables` sink;
//! - the `Tables` sink (`Log::scan`): typed records and RLOG views;
//! - the generic path: every sample as a value tree (what `tests/it/fast_paths.rs` holds every
//!   path to).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{arg, median};
use logspec::log::{Channel, Error, Open, Select, Samples};
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

fn timed(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut n = 0;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        n = f();
        times.push(t.elapsed());
    }
    (median(times), n)
}

fn measure(name: &str, path: &Path, runs: usize) {
    let mb = std::fs::metadata(path).unwrap().len() as f64 / 1e6;
    println!("{name}: {mb:.1} MB, median of {runs}");
    let chosen = timed(runs, || {
        let r = tables::read(path, &Open::default(), &Select::default()).unwrap();
        assert!(r.error.is_none());
        rows(&r.tables)
    });
    let one = timed(runs, || {
        let mut t = Tables::new(false);
        scan(path, &mut t);
        rows(&t.finish().unwrap().0)
    });
    let generic = timed(runs, || {
        let mut g = Generic(Tables::new(false));
        scan(path, &mut g);
        rows(&g.0.finish().unwrap().0)
    });
    assert!(chosen.1 == one.1 && one.1 == generic.1, "rows differ");
    let line = |what: &str, d: Duration, base: Duration, base_name: &str| {
        println!(
            "  {what:<44} {:>8.3} s  {:>7.1} MB/s  {:.2}x {base_name}",
            d.as_secs_f64(),
            mb / d.as_secs_f64(),
            base.as_secs_f64() / d.as_secs_f64()
        );
    };
    line("tables::read (the chosen path)", chosen.0, one.0, "the Tables sink");
    line("the Tables sink (typed records, RLOG views)", one.0, generic.0, "the generic path");
    line("the generic path (value trees)", generic.0, generic.0, "itself");
    println!("  rows: {}", chosen.1);
}

fn main() {
    let usvlog_mb: f64 = arg("--usvlog-mb", "200").parse().expect("--usvlog-mb N");
    let rlog_mb: f64 = arg("--rlog-mb", "97").parse().expect("--rlog-mb N");
    let runs: usize = arg("--runs", "5").parse().expect("--runs N");
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
    let _ = std::fs::remove_dir_all(&dir);
}
