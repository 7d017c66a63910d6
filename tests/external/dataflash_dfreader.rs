//! DataFlash against pymavlink's DFReader (2.4.50, the reference decoder of
//! `tests/data/dataflash`), run in the test on the same files through the folder's own
//! `tools/dump_df.py`:
//!
//! - the small test files read as their stored expected dumps say (the reference and the stored
//!   files agree) and as logspec reads them;
//! - damaged copies of a real log (cut inside a message, garbage and erased pages between
//!   messages) read the same messages through both, at the same offsets.
//!
//! Needs python3 with pymavlink: without it the trials are reported as ignored (under
//! `CI=true`, as failures).

use crate::scratch;

use crate::common;
use crate::tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_lines_eq, data, jsonl, logspec};
use serde_json::{json, Value};
use tools::Need;

const NEEDS: &[Need] = &[Need::PyModule("pymavlink.DFReader")];

/// DFReader's dump of `file`, in the canonical form of `tests/data/dataflash/EXPECTED-FORMAT.md`.
fn dfreader(file: &Path) -> Vec<Value> {
    let script = data("dataflash/tools/dump_df.py");
    let out = Command::new("python3").arg(script).arg(file).output().expect("run python3");
    assert!(out.status.success(), "dump_df.py {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    jsonl(&String::from_utf8(out.stdout).expect("UTF-8"))
}

/// logspec's dump of `file` in the same form (the `Z` of `FILE` as `{"$hex": ..}`).
fn ours(file: &Path) -> Vec<Value> {
    let out = logspec(&["dump", file.to_str().unwrap()]);
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    let mut formats: BTreeMap<u64, (String, String)> = BTreeMap::new();
    lines
        .into_iter()
        .map(|mut l| {
            if l["type"] == "FMT" {
                let d = &l["data"];
                let f = (d["Format"].as_str().unwrap().to_string(), d["Columns"].as_str().unwrap().to_string());
                formats.insert(d["Type"].as_u64().unwrap(), f);
            }
            if l["type"] == "FILE" {
                let (f, cols) = formats[&l["id"].as_u64().unwrap()].clone();
                for (c, name) in f.chars().zip(cols.split(',')) {
                    if c == 'Z' {
                        let hex = l["data"][name].clone();
                        l["data"][name] = json!({ "$hex": hex });
                    }
                }
            }
            l
        })
        .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-dfreader-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dfreader_reads_the_test_files_as_we_do() {
    for (stem, ext) in [("gen_df_corner", "bin"), ("peterbarker_5", "BIN"), ("pymavlink_test", "BIN")] {
        let f = data(&format!("dataflash/{stem}.{ext}"));
        let theirs = dfreader(&f);
        let stored =
            jsonl(&std::fs::read_to_string(data(&format!("dataflash/{stem}.expected.jsonl"))).unwrap_or_else(|_| {
                let bz = std::fs::File::open(data(&format!("dataflash/{stem}.expected.jsonl.bz2"))).unwrap();
                let mut s = String::new();
                std::io::Read::read_to_string(&mut bzip2::read::BzDecoder::new(bz), &mut s).unwrap();
                s
            }));
        assert_lines_eq(&theirs, &stored);
        assert_lines_eq(&ours(&f), &theirs);
    }
}

/// The header offsets of a log's messages, from logspec's dump.
fn offsets(file: &Path) -> Vec<usize> {
    ours(file).iter().map(|l| l["ofs"].as_u64().unwrap() as usize).collect()
}

fn dfreader_reads_damaged_copies_as_we_do() {
    let src = data("dataflash/peterbarker_6.BIN");
    let bytes = std::fs::read(&src).unwrap();
    let all = offsets(&src);
    let dir = temp_dir("damaged");
    // Garbage and erased pages between messages, far from the end (DFReader takes a failure
    // within 528 bytes of the end for the end of the log).
    let mut b = Vec::new();
    let mut prev = 0;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for (k, region) in [(100, 0u8), (1500, 0xff), (3000, 1)].into_iter() {
        let o = all[k];
        b.extend_from_slice(&bytes[prev..o]);
        for _ in 0..700 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Region 1: random bytes that never form a header (no A3).
            b.push(if region == 1 { (seed as u8) & 0x7f } else { region });
        }
        prev = o;
    }
    b.extend_from_slice(&bytes[prev..]);
    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, &b).unwrap();
    let theirs = dfreader(&garbage);
    assert_eq!(theirs.len(), all.len(), "DFReader reads every message past the garbage");
    assert_lines_eq(&ours(&garbage), &theirs);
    // Cut inside a message, at several places: every complete message before the cut.
    for k in [200usize, 2000, 4000] {
        let cut = dir.join(format!("cut{k}.bin"));
        std::fs::write(&cut, &bytes[..all[k] + 7]).unwrap();
        let theirs = dfreader(&cut);
        assert_eq!(theirs.len(), k, "cut in message {k}");
        assert_lines_eq(&ours(&cut), &theirs);
    }
    std::fs::remove_dir_all(&dir).ok();
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        tools::trial("dfreader_reads_the_test_files_as_we_do", NEEDS, dfreader_reads_the_test_files_as_we_do),
        tools::trial("dfreader_reads_damaged_copies_as_we_do", NEEDS, dfreader_reads_damaged_copies_as_we_do),
    ]
}
