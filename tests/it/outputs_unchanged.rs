//! `dump`, `info --json`, `export --csv` and `convert` (MCAP: its messages, channels and schemas)
//! print and write exactly what they did
//! before the readers moved onto generated views: for every log in `tests/data`, the SHA-256 of
//! each output is held to `tests/data/outputs.sha256`, which was captured with the `logspec`
//! binary of the commit before that change (`cargo test --test it outputs_unchanged -- --ignored
//! capture` rewrites it, from the binary `LOGSPEC_CAPTURE_BIN` names if set; do that only for an intended output change, and
//! say why in the commit). The ULog, DataFlash and ROS 2 logs joined the list later, captured
//! from the binary that first read all three in place (their outputs compared by hand with the
//! build before that change, and MCAP's topic lines given their `messages` counts on purpose).

use crate::scratch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn digests_file() -> PathBuf {
    data_dir().join("outputs.sha256")
}

/// Every log in `tests/data`, relative to it.
fn logs() -> Vec<String> {
    let mut v = Vec::new();
    let logs: [(&str, &[&str]); 8] = [
        ("usvlog", &[".usvlog"]),
        ("rlog", &[".rlog", "_stream.bin", "_newcomer.bin"]),
        ("carla", &[".log"]),
        ("wpilog", &[".wpilog"]),
        ("rosbag", &[".bag"]),
        ("ulog", &[".ulg"]),
        ("dataflash", &[".bin", ".BIN"]),
        ("ros2", &[".mcap", ".db3"]),
    ];
    for (dir, exts) in logs {
        for e in std::fs::read_dir(data_dir().join(dir)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let log = exts.iter().any(|ext| name.ends_with(ext));
            if log {
                v.push(format!("{dir}/{name}"));
            }
        }
    }
    v.sort();
    v
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest of one output: the exit code, stdout and stderr, and the files written (by name).
/// Runs in `cwd`, where `data` links to `tests/data`, so that every path printed is relative.
fn run(bin: &Path, cwd: &Path, args: &[&str], out_dir: Option<&Path>) -> String {
    let out = Command::new(bin).current_dir(cwd).args(args).output().unwrap();
    let mut h = Sha256::new();
    h.update(out.status.code().unwrap_or(-1).to_le_bytes());
    h.update(&out.stdout);
    h.update(b"\0stderr\0");
    h.update(&out.stderr);
    if let Some(dir) = out_dir {
        let mut files: Vec<PathBuf> = walk(dir);
        files.sort();
        for f in files {
            h.update(f.strip_prefix(dir).unwrap().to_string_lossy().as_bytes());
            h.update(b"\0");
            let bytes = std::fs::read(&f).unwrap();
            if f.extension().is_some_and(|e| e == "mcap") {
                h.update(mcap_content(&bytes));
            } else {
                h.update(bytes);
            }
        }
    }
    hex(&h.finalize())
}

/// What an MCAP file holds, independent of the order the writer puts channels and schemas in
/// (which follows a hash map's): every message with its channel and schema, in file order, and
/// the set of channels.
fn mcap_content(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut channels = std::collections::BTreeSet::new();
    for m in mcap::MessageStream::new(bytes).expect("an MCAP file") {
        let m = m.expect("an MCAP message");
        let c = &m.channel;
        let schema = c.schema.as_ref().map(|s| (s.name.clone(), s.encoding.clone(), s.data.to_vec()));
        channels.insert(format!("{} {} {:?} {:?}", c.topic, c.message_encoding, c.metadata, schema));
        out.extend_from_slice(format!("{} {} {} {}\0", c.topic, m.sequence, m.log_time, m.publish_time).as_bytes());
        out.extend_from_slice(&m.data);
    }
    for c in channels {
        out.extend_from_slice(c.as_bytes());
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                v.extend(walk(&p));
            } else {
                v.push(p);
            }
        }
    }
    v
}

/// `verb file` -> digest, for every log and verb, with the `logspec` binary `bin`.
fn outputs(bin: &Path) -> BTreeMap<String, String> {
    let tmp = scratch::temp_dir().join(format!("logspec-outputs-unchanged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::os::unix::fs::symlink(data_dir(), tmp.join("data")).unwrap();
    let mut m = BTreeMap::new();
    for log in logs() {
        let path = format!("data/{log}");
        m.insert(format!("dump {log}"), run(bin, &tmp, &["dump", &path], None));
        m.insert(format!("info --json {log}"), run(bin, &tmp, &["info", "--json", &path], None));
        let csv = tmp.join("csv");
        let _ = std::fs::remove_dir_all(&csv);
        m.insert(format!("export --csv {log}"), run(bin, &tmp, &["export", &path, "--csv", "csv"], Some(&csv)));
        let mcap = tmp.join("mcap");
        let _ = std::fs::remove_dir_all(&mcap);
        std::fs::create_dir_all(&mcap).unwrap();
        m.insert(format!("convert {log}"), run(bin, &tmp, &["convert", &path, "-o", "mcap/out.mcap"], Some(&mcap)));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    m
}

fn this_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_logspec"))
}

#[test]
fn outputs_are_unchanged() {
    let text = std::fs::read_to_string(digests_file()).expect("tests/data/outputs.sha256");
    let want: BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (d, what) = l.split_once("  ").unwrap();
            (what.to_string(), d.to_string())
        })
        .collect();
    let got = outputs(&this_binary());
    let keys: Vec<&String> = got.keys().collect();
    assert_eq!(keys, want.keys().collect::<Vec<_>>(), "the logs in tests/data changed; capture again");
    let differ: Vec<&String> = got.iter().filter(|(k, v)| want.get(*k) != Some(v)).map(|(k, _)| k).collect();
    assert!(differ.is_empty(), "outputs differ from the captured ones: {differ:#?}");
}

/// Rewrites `tests/data/outputs.sha256` from the current binary, or from the binary named by
/// `LOGSPEC_CAPTURE_BIN` (a build of an earlier commit).
#[test]
#[ignore = "rewrites the captured digests"]
fn capture() {
    let bin = std::env::var_os("LOGSPEC_CAPTURE_BIN").map_or_else(this_binary, PathBuf::from);
    let mut text = String::from(
        "# SHA-256 of each CLI output (exit code, stdout, stderr, files written) per log in tests/data;\n\
         # see tests/it/outputs_unchanged.rs.\n",
    );
    for (what, d) in outputs(&bin) {
        text.push_str(&format!("{d}  {what}\n"));
    }
    std::fs::write(digests_file(), text).unwrap();
}
