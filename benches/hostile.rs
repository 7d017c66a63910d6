//! The hostile inputs of issue 34 at full size, through every verb and Python `tables()`,
//! against the bounds the project holds itself to: wall time within 2 s per 100 MB of input (at
//! least 2 s) and peak RSS within 64 MiB (plus twice the bytes of definitions the reader must
//! keep, for the files made of definitions), standard error no larger than a constant.
//!
//! `cargo bench --bench hostile` (options: `--dir DIR` keeps the inputs there, `--only NAME`,
//! `--no-python`). Python `tables()` runs in the `python3` on PATH, which must import the
//! `logspec` package (`cd py && maturin develop --release`); its RSS is reported above the RSS
//! of the same interpreter that only imported the package.
//!
//! A line is `PASS` when within every bound, else `OVER` with what is over; the bench ends with a
//! non-zero status if any line is over, so that a regression shows.

#[path = "../tests/common/hostile.rs"]
mod hostile;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use hostile::{measure, Run};

/// Standard error may hold this much: the first few faults of each kind and the counts.
const STDERR_MAX: u64 = 16 * 1024;
const RSS_MAX_KIB: u64 = 64 * 1024;

struct Input {
    name: &'static str,
    file: &'static str,
    /// Bytes of definitions the reader must keep (key names, Start records, actors), from the
    /// file's length.
    definitions: fn(u64) -> u64,
    make: fn(&mut BufWriter<File>),
    /// The TOML schema the file is read with (`--schema`), for a format that is not bundled.
    schema: Option<&'static str>,
}

/// The test schema with a sync and a CRC.
const CHECKED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/checked.toml");

fn inputs() -> Vec<Input> {
    vec![
        Input {
            name: "usvlog-known-empty-1e6",
            file: "known1e6.usvlog",
            definitions: |_| 0,
            make: |w| {
                hostile::usvlog_empty_records(w, 1_000_000, 1);
            },
            schema: None,
        },
        Input {
            name: "usvlog-known-empty-1e7",
            file: "known1e7.usvlog",
            definitions: |_| 0,
            make: |w| {
                hostile::usvlog_empty_records(w, 10_000_000, 1);
            },
            schema: None,
        },
        Input {
            name: "usvlog-unknown-empty-1e7",
            file: "unknown1e7.usvlog",
            definitions: |_| 0,
            make: |w| {
                hostile::usvlog_empty_records(w, 10_000_000, 200);
            },
            schema: None,
        },
        Input {
            name: "carla-false-counts",
            file: "counts.log",
            definitions: |_| 0,
            make: |w| {
                hostile::carla_false_counts(w, 22_000, 100);
            },
            schema: None,
        },
        Input {
            name: "carla-1.3M-actors",
            file: "actors.log",
            definitions: |len| len,
            make: |w| {
                hostile::carla_many_actors(w, 131, 10_000);
            },
            schema: None,
        },
        Input {
            name: "wpilog-3M-starts",
            file: "starts.wpilog",
            definitions: |len| len,
            make: |w| {
                hostile::wpilog_starts(w, 3_000_000);
            },
            schema: None,
        },
        Input {
            name: "rlog-65535-long-keys",
            file: "keys.rlog",
            definitions: |_| 65_535 * 1030,
            make: |w| {
                hostile::rlog_long_keys(w, 65_535, 1024, 2);
            },
            schema: None,
        },
        Input {
            name: "checked-sync-run-200MB",
            file: "syncrun.chk",
            definitions: |_| 0,
            make: |w| {
                hostile::checked_sync_run(w, 200_000_000);
            },
            schema: Some(CHECKED),
        },
    ]
}

fn verdict(input_bytes: u64, definitions: u64, r: &Run, base_kib: u64) -> String {
    let mut over = Vec::new();
    let limit_s = (2.0 * input_bytes as f64 / 100e6).max(2.0);
    if r.seconds > limit_s {
        over.push(format!("time > {limit_s:.1} s"));
    }
    let rss = r.max_rss_kib.saturating_sub(base_kib);
    if rss > RSS_MAX_KIB + 2 * definitions / 1024 {
        over.push(format!("RSS > {} MiB", (RSS_MAX_KIB + 2 * definitions / 1024) / 1024));
    }
    if r.stderr_bytes > STDERR_MAX {
        over.push(format!("stderr > {} KiB", STDERR_MAX / 1024));
    }
    if over.is_empty() {
        "PASS".into()
    } else {
        format!("OVER: {}", over.join(", "))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let dir = arg("--dir").map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join("logspec-hostile"));
    let only = arg("--only");
    let python = !args.iter().any(|a| a == "--no-python");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_logspec");
    let base_py = python.then(|| measure("python3", &["-c", "import logspec"]));
    if let Some(b) = &base_py {
        assert!(b.success, "python3 cannot import logspec: {}", b.stderr_head);
    }

    println!("| input | MB | verb | s | peak RSS MiB | stdout lines | stderr KiB | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut failed = 0;
    for input in inputs() {
        if only.as_deref().is_some_and(|o| !input.name.contains(o)) {
            continue;
        }
        let path = dir.join(input.file);
        if !path.exists() {
            let mut w = BufWriter::new(File::create(&path).unwrap());
            (input.make)(&mut w);
            w.flush().unwrap();
        }
        let len = std::fs::metadata(&path).unwrap().len();
        let p = path.to_str().unwrap();
        let out = dir.join(format!("{}.parquet.d", input.file));
        let _ = std::fs::remove_dir_all(&out);
        let schema: Vec<&str> = input.schema.map(|s| vec!["--schema", s]).unwrap_or_default();
        let verb = |args: &[&str]| measure(bin, &[args, &schema[..], &[p]].concat());
        let mut runs: Vec<(&str, Run, u64)> = vec![
            ("info", verb(&["info"]), 0),
            ("dump", verb(&["dump"]), 0),
            ("export --parquet", verb(&["export", "--parquet", out.to_str().unwrap()]), 0),
        ];
        if let Some(b) = &base_py {
            let script = "import logspec, sys, warnings\nwarnings.simplefilter('ignore')\n\
                          logspec.open(sys.argv[1], schema=(sys.argv[2] if len(sys.argv) > 2 else None)).tables()";
            let args: Vec<&str> = ["-c", script, p].into_iter().chain(input.schema).collect();
            runs.push(("python tables()", measure("python3", &args), b.max_rss_kib));
        }
        let _ = std::fs::remove_dir_all(&out);
        for (verb, r, base) in runs {
            let v = verdict(len, (input.definitions)(len), &r, base);
            if v != "PASS" {
                failed += 1;
            }
            println!(
                "| {} | {:.0} | {verb} | {:.2} | {:.0} | {} | {:.1} | {v}{} |",
                input.name,
                len as f64 / 1e6,
                r.seconds,
                r.max_rss_kib.saturating_sub(base) as f64 / 1024.0,
                r.stdout_lines,
                r.stderr_bytes as f64 / 1024.0,
                if r.success { "" } else { " (exit status not 0)" },
            );
        }
    }
    if failed > 0 {
        eprintln!("{failed} line(s) over their bounds");
        std::process::exit(1);
    }
}
