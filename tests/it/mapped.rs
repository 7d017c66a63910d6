//! The oracle over reading a file through a map (`Open::map`, what the command-line tool does)
//! against reading it through a buffer (every other input): on every bundled log of every
//! format, and on cut and corrupted copies of each, the same summary, the same dump (lines and
//! error) and the same samples (tables, warnings and error).

use std::path::Path;

use logspec::log::records::Options;
use logspec::log::{Error, JsonLines, Open, Select};
use logspec_engine::tables::Tables;

use crate::fast_paths::{bundled, small_bundled, write};

fn shown(e: Error) -> String {
    match e {
        Error::At(f) => format!("{f:?}"),
        other => other.to_string(),
    }
}

/// The tables of a scan: name, schema, batches.
type Table = (String, arrow_schema::SchemaRef, Vec<arrow_array::RecordBatch>);

/// What reading `path` gives, every way: the summary, the dump, the samples as tables.
fn read(path: &Path, map: bool) -> (Vec<String>, Vec<Table>) {
    let how = Open { map, ..Open::default() };
    let (mut out, mut all) = (Vec::new(), Vec::new());
    match logspec::log::open(path, &how).and_then(|log| log.info(&[], &mut Vec::new())) {
        Ok(info) => out.extend([info.text(), info.json(), info.ok.to_string()]),
        Err(e) => out.push(shown(e)),
    }
    let mut lines = Vec::new();
    let dumped = logspec::log::open(path, &how).and_then(|log| {
        let mut sink = JsonLines::new(&mut lines);
        let r = log.records(&Options::default(), &mut sink);
        sink.flush().map_err(Error::Io)?;
        r
    });
    out.push(String::from_utf8_lossy(&lines).into_owned());
    out.push(format!("{:?}", dumped.map_err(shown)));
    match logspec::log::open(path, &how) {
        Ok(log) => {
            let mut tables = Tables::new(log.utc());
            let outcome = log.scan(&Select::default(), &mut tables);
            out.push(format!("{:?}", outcome.map(|o| (o.samples, o.warnings, o.error)).map_err(shown)));
            match tables.finish() {
                Ok((tables, warnings)) => {
                    all.extend(tables.into_iter().map(|t| (t.name, t.builder.schema.clone(), t.batches)));
                    out.push(format!("{warnings:?}"));
                }
                Err(e) => out.push(shown(e)),
            }
        }
        Err(e) => out.push(shown(e)),
    }
    (out, all)
}

fn assert_same(path: &Path, what: &str) {
    let ((buffered, want), (mapped, got)) = (read(path, false), read(path, true));
    assert_eq!(buffered.len(), mapped.len(), "{what}: what was read");
    for (b, m) in buffered.iter().zip(&mapped) {
        assert!(b == m, "{what}: read through a buffer:\n{b:.2000}\nthrough a map:\n{m:.2000}");
    }
    assert_eq!(want.len(), got.len(), "{what}: tables");
    for (w, g) in want.iter().zip(&got) {
        assert!(w == g, "{what}: table {} differs through a map", w.0);
    }
}

#[test]
fn every_bundled_log_reads_alike_mapped_and_buffered() {
    for p in bundled() {
        assert_same(&p, &p.display().to_string());
    }
}

#[test]
fn cut_and_corrupted_copies_read_alike_mapped_and_buffered() {
    for (name, bytes) in small_bundled() {
        let n = bytes.len();
        for cut in [0, 1, n / 3, n / 2, n.saturating_sub(1)] {
            let q = write(&format!("mapped_cut_{cut}_{name}"), &bytes[..cut]);
            assert_same(&q, &format!("{name} cut at {cut}"));
        }
        for at in [n / 4, n / 2, n * 3 / 4] {
            let mut bad = bytes.clone();
            bad[at] ^= 0xA5;
            let q = write(&format!("mapped_flip_{at}_{name}"), &bad);
            assert_same(&q, &format!("{name} with byte {at} flipped"));
        }
    }
}

#[test]
fn a_file_truncated_underneath_while_mapped_is_an_error_not_a_crash() {
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/usvlog/step.usvlog");
    let bytes = std::fs::read(data).unwrap();
    for what in ["info", "dump", "dump on two threads", "scan"] {
        let path = write(&format!("mapped_shrinking_{}.usvlog", what.replace(' ', "_")), &bytes);
        let log = logspec::log::open(&path, &Open { map: true, ..Open::default() }).unwrap();
        // Another process cuts the file after it was opened (and mapped), before it is read.
        let cut = bytes.len() / 2;
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut as u64).unwrap();
        let err = match what {
            "info" => log.info(&[], &mut Vec::new()).err(),
            "dump" => log.records(&Options::default(), &mut JsonLines::new(&mut std::io::sink())).err(),
            "dump on two threads" => logspec::log::records::TwoThreads::run(&mut std::io::sink(), |lines| {
                log.records(&Options::default(), lines)
            })
            .err(),
            _ => log.scan(&Select::default(), &mut Tables::new(false)).err(),
        };
        let Some(Error::At(fault)) = err else { panic!("{what}: the truncation is an error, got {err:?}") };
        assert!(fault.message.contains("truncated while it was being read"), "{what}: {}", fault.message);
        let page = 4096;
        let gone = fault.offset.expect("the offset where the bytes were gone");
        assert!(gone >= cut as u64 && gone < (cut + page) as u64 + page as u64, "{what}: {gone} vs the cut at {cut}");
    }
}
