//! Interrupted writes: SIGINT and SIGKILL to the real binary in the middle of `export --parquet`
//! of a directory and of `convert -o x.mcap`. An existing output stays as it was; SIGINT removes
//! every temporary file the run made (and the folders it made for them); after SIGKILL the
//! temporary files are named as docs/command-line.md says, and the next run over the same output
//! removes those (and nothing else).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use logspec::formats::rlog::{Encoder, R2Value, Revision, Value};

use crate::scratch;

/// An RLOG file of `keys` keys (channels) over `cycles` cycles, each cycle changing every key.
fn rlog(keys: usize, cycles: u32) -> Vec<u8> {
    let names: Vec<String> = (0..keys).map(|k| format!("/Robot/Key{k:03}")).collect();
    let mut enc = Encoder::new(Revision::R2);
    let mut out = vec![Revision::R2.byte()];
    for i in 0..cycles {
        let values = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.as_str(), Some("double"), Value::R2(R2Value::Double { value: f64::from(i) + k as f64 })));
        enc.encode_cycle(f64::from(i) * 0.02, values, &mut out).unwrap();
    }
    out
}

/// The log that the interrupted runs read: large enough that a debug build is still writing
/// when the signal comes (the test fails, saying so, if the run ends first).
fn big_log() -> &'static Path {
    static BIG: OnceLock<PathBuf> = OnceLock::new();
    BIG.get_or_init(|| {
        let p = scratch::temp_dir().join("interrupted-big.rlog");
        std::fs::write(&p, rlog(120, 25_000)).unwrap();
        p
    })
}

/// A fresh directory for one test.
fn fresh(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file and folder under `dir`, relative, with each file's bytes (`None` for a folder).
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(rel, None);
                walk(root, &p, out);
            } else {
                out.insert(rel, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn names(t: &BTreeMap<String, Option<Vec<u8>>>) -> Vec<&str> {
    t.keys().map(String::as_str).collect()
}

fn logspec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_logspec"))
}

/// Waits until a file under `dir` is named as a temporary file of `child` (`is_temp(name, pid)`),
/// failing if the child ends first; returns its path.
fn wait_for_temp(child: &mut Child, dir: &Path, is_temp: impl Fn(&str, u32) -> bool) -> PathBuf {
    let start = Instant::now();
    let pid = child.id();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before a temporary file appeared: make the log larger");
        }
        let found = walkdir(dir).into_iter().find(|p| is_temp(&p.file_name().unwrap().to_string_lossy(), pid));
        if let Some(p) = found {
            return p;
        }
        // A hang guard, not a timing.
        assert!(start.elapsed() < Duration::from_secs(300), "no temporary file appeared in {}", dir.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The documented name of a Parquet table's temporary file: `.part-0.parquet.logspec-PID.tmp`.
fn parquet_temp(name: &str, pid: u32) -> bool {
    name == format!(".part-0.parquet.logspec-{pid}.tmp")
}

/// The documented name of an output's temporary file: `.x.mcap.logspec-PID-XXXXXX.tmp.mcap`.
fn mcap_temp(name: &str, pid: u32) -> bool {
    name.strip_prefix(&format!(".x.mcap.logspec-{pid}-"))
        .and_then(|r| r.strip_suffix(".tmp.mcap"))
        .is_some_and(|r| r.len() == 6 && r.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn sigint(child: &Child) {
    let ok = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
}

/// Waits for the child (with a hang guard); returns its exit code and stderr.
fn finish(mut child: Child) -> (Option<i32>, String) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(300), "the run did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `logs/run.rlog` (small) exported to `out/`: the existing output the interrupted run must keep.
fn parquet_setup(dir: &Path) -> (PathBuf, PathBuf) {
    let (logs, out) = (dir.join("logs"), dir.join("out"));
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("run.rlog"), rlog(3, 10)).unwrap();
    let r = logspec().args(["export", "--parquet"]).arg(&out).arg(&logs).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // The big log under the same name: the interrupted run would replace run's partitions.
    std::fs::copy(big_log(), logs.join("run.rlog")).unwrap();
    (logs, out)
}

fn export(out: &Path, logs: &Path) -> Child {
    logspec().args(["export", "--parquet"]).arg(out).arg(logs).stderr(Stdio::piped()).spawn().unwrap()
}

#[test]
fn sigint_during_export_parquet_removes_its_temporary_files() {
    let dir = fresh("interrupted-export-int");
    let (logs, out) = parquet_setup(&dir);
    let before = tree(&out);
    assert_eq!(before.keys().filter(|k| k.ends_with("part-0.parquet")).count(), 3);

    let mut child = export(&out, &logs);
    wait_for_temp(&mut child, &out, parquet_temp);
    sigint(&child);
    let (code, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted;"), "{err}");
    // Every file as it was, no temporary file, no folder the run made.
    let after = tree(&out);
    assert_eq!(names(&after), names(&before));
    assert!(after == before, "an existing output changed");

    // Into a dataset folder that did not exist: nothing is left, the folder neither.
    let new = dir.join("new").join("dataset");
    let mut child = export(&new, &logs);
    wait_for_temp(&mut child, &dir.join("new"), parquet_temp);
    sigint(&child);
    let (code, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(!dir.join("new").exists());

    // A rerun succeeds.
    std::fs::write(logs.join("run.rlog"), rlog(3, 10)).unwrap();
    let r = logspec().args(["export", "--parquet"]).arg(&out).arg(&logs).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(names(&tree(&out)), names(&before));
}

#[test]
fn sigkill_during_export_parquet_leaves_named_temporary_files_the_next_run_removes() {
    let dir = fresh("interrupted-export-kill");
    let (logs, out) = parquet_setup(&dir);
    let before = tree(&out);

    let mut child = export(&out, &logs);
    let pid = child.id();
    wait_for_temp(&mut child, &out, parquet_temp);
    child.kill().unwrap(); // SIGKILL: no handler runs.
    let _ = finish(child);
    // The old files as they were; the run's temporary files named as documented.
    let killed = tree(&out);
    for (k, v) in &before {
        assert_eq!(killed.get(k), Some(v), "{k} changed");
    }
    let temps: Vec<&String> = killed.keys().filter(|k| !before.contains_key(*k) && k.ends_with(".tmp")).collect();
    assert!(!temps.is_empty());
    for t in &temps {
        assert!(parquet_temp(Path::new(t).file_name().unwrap().to_str().unwrap(), pid), "{t}");
    }

    // Files that are not a gone process's temporary files: kept by the next run. (This test
    // process is running, so its id marks a live writer.)
    let table = out.join("Robot.Key000").join("log=run");
    let decoys = [
        format!(".part-0.parquet.logspec-{}.tmp", std::process::id()),
        format!(".part-0.parquet.logspec-{pid}.tmp.keep"),
        "notes.tmp".to_string(),
    ];
    for d in &decoys {
        std::fs::write(table.join(d), b"not logspec's").unwrap();
    }

    std::fs::write(logs.join("run.rlog"), rlog(3, 10)).unwrap();
    let r = logspec().args(["export", "--parquet"]).arg(&out).arg(&logs).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let after = tree(&out);
    let mut want: Vec<String> = before.keys().cloned().collect();
    want.extend(decoys.iter().map(|d| format!("Robot.Key000/log=run/{d}")));
    want.sort();
    assert_eq!(names(&after), want.iter().map(String::as_str).collect::<Vec<_>>());
}

/// `x.mcap` converted from a small log: the existing output.
fn mcap_setup(dir: &Path) -> PathBuf {
    let small = dir.join("small.rlog");
    std::fs::write(&small, rlog(3, 10)).unwrap();
    let out = dir.join("x.mcap");
    let r = logspec().arg("convert").arg(&small).arg("-o").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    out
}

fn convert(out: &Path) -> Child {
    logspec().arg("convert").arg(big_log()).arg("-o").arg(out).stderr(Stdio::piped()).spawn().unwrap()
}

#[test]
fn sigint_during_convert_removes_its_temporary_file() {
    let dir = fresh("interrupted-convert-int");
    let out = mcap_setup(&dir);
    let before = tree(&dir);
    let mut child = convert(&out);
    wait_for_temp(&mut child, &dir, mcap_temp);
    sigint(&child);
    let (code, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted; 1 temporary file(s) removed"), "{err}");
    assert!(tree(&dir) == before, "{:?}", names(&tree(&dir)));

    let r = logspec().arg("convert").arg(dir.join("small.rlog")).arg("-o").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(names(&tree(&dir)), names(&before));
}

#[test]
fn sigkill_during_convert_leaves_a_named_temporary_file_the_next_run_removes() {
    let dir = fresh("interrupted-convert-kill");
    let out = mcap_setup(&dir);
    let before = tree(&dir);
    let mut child = convert(&out);
    let temp = wait_for_temp(&mut child, &dir, mcap_temp);
    child.kill().unwrap();
    let _ = finish(child);
    assert_eq!(tree(&dir).get("x.mcap"), before.get("x.mcap"));
    assert!(temp.exists());

    let decoys = [
        format!(".x.mcap.logspec-{}-abcdef.tmp.mcap", std::process::id()),
        ".x.mcap.abcdef.tmp.mcap".to_string(),
        ".y.mcap.logspec-1-abcdef.tmp.mcap".to_string(),
    ];
    for d in &decoys {
        std::fs::write(dir.join(d), b"not logspec's").unwrap();
    }
    let r = logspec().arg("convert").arg(dir.join("small.rlog")).arg("-o").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(!temp.exists(), "the killed run's temporary file is left");
    let mut want: Vec<String> = before.keys().cloned().collect();
    want.extend(decoys.iter().cloned());
    want.sort();
    assert_eq!(names(&tree(&dir)), want.iter().map(String::as_str).collect::<Vec<_>>());
}
