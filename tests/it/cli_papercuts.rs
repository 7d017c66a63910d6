//! The data user's papercuts (issue 33, point 7), each found by trying the tools on real logs and
//! held here by a test: `export --parquet` names every input it did not export and says so in
//! its exit status.

use std::path::{Path, PathBuf};

use crate::common::{data, logspec};
use crate::scratch;

fn tmp(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-papercuts-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the command: its exit code and standard error.
fn run(args: &[&str]) -> (i32, String) {
    let out = logspec(args);
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stderr).unwrap())
}

/// A JSON document of exactly 321 bytes: what a download page saved under a `.bag` name.
fn json_321() -> Vec<u8> {
    let mut text = String::from("{\"error\": \"not found\", \"detail\": \"the bag was moved\", \"pad\": \"");
    while text.len() < 321 - 3 {
        text.push('x');
    }
    text.push_str("\"}\n");
    assert_eq!(text.len(), 321);
    text.into_bytes()
}

/// The folders of the dataset's tables that hold a partition `log=<log>`.
fn tables_of(out: &Path, log: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().join(format!("log={log}")).is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A directory holding a log, a JSON file named `.bag`, an empty `.rlog`, notes and a log named
/// without a log extension: the two files with a log extension that are not logs are named with
/// their reason, the notes are passed over (counted), the log without a log extension is found by
/// its content, and the exit status is 1.
#[test]
fn export_names_every_log_file_it_did_not_export() {
    let dir = tmp("export-dir");
    let logs = dir.join("logs");
    std::fs::create_dir_all(logs.join("sub")).unwrap();
    std::fs::copy(data("usvlog/step.usvlog"), logs.join("step.usvlog")).unwrap();
    std::fs::copy(data("usvlog/step.usvlog"), logs.join("sub/run.dat")).unwrap();
    std::fs::write(logs.join("download.bag"), json_321()).unwrap();
    std::fs::write(logs.join("sub/empty.rlog"), b"").unwrap();
    std::fs::write(logs.join("README.md"), b"# Logs of the 3rd of May\n").unwrap();
    std::fs::write(logs.join("sub/notes.txt"), b"the battery was low\n").unwrap();
    let out = dir.join("out");
    let (code, err) = run(&["export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 1, "an input was not exported: {err}");
    let bag = logs.join("download.bag").display().to_string();
    let rlog = logs.join("sub/empty.rlog").display().to_string();
    assert!(
        err.contains(&format!(
            "logspec: error: {bag}: not exported: unrecognised format: the file starts with [7b 22 65 72 72 6f 72 22]"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "logspec: error: {rlog}: not exported: unrecognised format: the file starts with [] (empty file)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "from 2 log(s) to {} (13 table(s) in the dataset); 2 file(s) not exported, not logs logspec reads: {bag}, {rlog}; 2 other file(s) in the directories passed over (no log extension, and not a log)",
            out.display()
        )),
        "{err}"
    );
    assert!(!err.contains("README") && !err.contains("notes.txt"), "notes are passed over silently: {err}");
    // Both logs are in the dataset, the files that are not logs nowhere.
    assert!(out.join("REC_NAV_SOLUTION/log=step/part-0.parquet").is_file());
    assert!(out.join("REC_NAV_SOLUTION/log=run/part-0.parquet").is_file());
    assert_eq!(tables_of(&out, "step").len(), 13);
    assert!(tables_of(&out, "download").is_empty() && tables_of(&out, "empty").is_empty());

    // --quiet keeps the summary of a run that left inputs out.
    let (code, err) = run(&["-q", "export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("2 file(s) not exported") && !err.contains("log=step ("), "{err}");

    // Without the two files, the same directory exports cleanly.
    std::fs::remove_file(logs.join("download.bag")).unwrap();
    std::fs::remove_file(logs.join("sub/empty.rlog")).unwrap();
    let (code, err) = run(&["export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("not exported"), "{err}");
    assert!(err.contains("from 2 log(s)") && err.contains("2 other file(s) in the directories passed over"), "{err}");
}

/// A file named on the command line is an input whatever its name: one that is not a log is
/// named, the others are exported, exit 1; when no input is a log, nothing is written.
#[test]
fn export_names_a_named_file_that_is_not_a_log() {
    let dir = tmp("export-named");
    let fake = dir.join("notes.txt");
    std::fs::write(&fake, b"the battery was low\n").unwrap();
    let step = data("usvlog/step.usvlog");
    let out = dir.join("out");
    let (code, err) =
        run(&["export", "--parquet", out.to_str().unwrap(), fake.to_str().unwrap(), step.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: not exported: unrecognised format: the file starts with [74 68 65 20 62 61 74 74]",
            fake.display()
        )),
        "{err}"
    );
    assert!(err.contains("from 1 log(s)") && err.contains("1 file(s) not exported"), "{err}");
    assert!(out.join("REC_NAV_SOLUTION/log=step/part-0.parquet").is_file());

    let empty = dir.join("empty.rlog");
    std::fs::write(&empty, b"").unwrap();
    let out2 = dir.join("out2");
    let (code, err) = run(&["export", "--parquet", out2.to_str().unwrap(), empty.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "no log to export: {}: unrecognised format: the file starts with [] (empty file)",
            empty.display()
        )),
        "{err}"
    );
    assert!(!out2.exists(), "nothing is written when no input is a log");
}
