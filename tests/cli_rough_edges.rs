//! The small things a new user trips over (issue 18, item 8), each held by a test: negative
//! `--since`, CSV file names that are never hidden, distinct `--aligned` column names, plots of a
//! single sample, tick labels and the legend, a missing output directory, `info` labels, `diff`
//! with nothing to say, the top-level help and `gen`'s verdict on an unbumped breaking change.

mod common;

use std::path::PathBuf;

use common::{data, jsonl, logspec};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("logspec-rough-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(args: &[&str]) -> (String, String) {
    let out = logspec(args);
    assert!(out.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// `--since -1` is a time (before the log's origin, so it keeps every sample), not a flag.
#[test]
fn negative_since_is_a_time() {
    let dir = tmp("since");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    let (all, with) = (dir.join("all"), dir.join("since"));
    ok(&["-q", "export", f, "--csv", all.to_str().unwrap()]);
    ok(&["-q", "export", f, "--csv", with.to_str().unwrap(), "--since", "-1", "--until", "1e9"]);
    let a = std::fs::read(all.join("REC_NAV_SOLUTION.csv")).unwrap();
    let b = std::fs::read(with.join("REC_NAV_SOLUTION.csv")).unwrap();
    assert!(a.len() > 100);
    assert_eq!(a, b, "--since -1 keeps every sample");
    let png = dir.join("p.png");
    ok(&["-q", "plot", f, "-f", "REC_NAV_SOLUTION.x", "--since", "-1", "-o", png.to_str().unwrap()]);
    assert!(png.is_file());
    // And a window that ends before the origin is the usual error of a filter matching nothing.
    let out = logspec(&["export", f, "--csv", dir.join("none").to_str().unwrap(), "--until", "-1"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--until -1"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// RLOG keys under `/.schema/` are written to visible files.
#[test]
fn no_hidden_csv_files() {
    let dir = tmp("hidden");
    let file = data("rlog/gen_akit_head_r2_alltypes.rlog");
    ok(&["-q", "export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap()]);
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.len() > 5, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')), "hidden files: {names:?}");
    assert!(names.iter().any(|n| n == "_schema_struct_Translation2d.csv"), "{names:?}");
}

/// Two publishers on one ROS topic get a column each, named by the publisher, holding that
/// publisher's messages (as the reference dump of the bag attributes them).
#[test]
fn aligned_columns_have_distinct_names() {
    let dir = tmp("aligned");
    let file = data("rosbag/test_none.bag");
    ok(&["-q", "export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap(), "--aligned", "100"]);
    let rows = parse_csv(&std::fs::read_to_string(dir.join("aligned.csv")).unwrap());
    let header: Vec<&str> = rows[0].iter().map(String::as_str).collect();
    let mut sorted = header.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), header.len(), "duplicate column names in {header:?}");
    // The reference dump says which connection (publisher) sent what.
    let expected = jsonl(&std::fs::read_to_string(data("rosbag/test_none.expected.jsonl")).unwrap());
    let callers: Vec<&str> = expected
        .iter()
        .filter(|v| v["kind"] == "connection" && v["topic"] == "/chatter")
        .map(|v| v["callerid"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["/talker_a", "/talker_b"]);
    for (conn, caller) in callers.iter().enumerate() {
        let column = format!("/chatter@{caller}.data");
        let i = header.iter().position(|h| *h == column).unwrap_or_else(|| panic!("{column} in {header:?}"));
        let sent: Vec<&str> = expected
            .iter()
            .filter(|v| v["kind"] == "message" && v["conn"] == conn)
            .map(|v| v["data"]["data"].as_str().unwrap())
            .collect();
        assert!(!sent.is_empty());
        let cells: Vec<String> = rows[1..].iter().map(|r| r[i].clone()).collect();
        assert!(cells.iter().all(|c| c.is_empty() || sent.contains(&c.as_str())), "{column}: {cells:?} vs {sent:?}");
        assert!(sent.iter().all(|s| cells.iter().any(|c| c == s)), "{column}: {cells:?} vs {sent:?}");
    }
}

/// RFC 4180 CSV: quoted cells may hold commas, quotes (doubled) and line breaks.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell, mut quoted) = (Vec::new(), Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut cell)),
            ('\n', false) => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (c, _) => cell.push(c),
        }
    }
    rows
}

/// An output in a directory that does not exist is a usage error that names the directory,
/// before the log is read, with no temporary path or debug text in it.
#[test]
fn missing_output_directory_is_a_clean_error() {
    let dir = tmp("nodir");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    let missing = dir.join("not-there");
    for (verb, out) in [("plot", "x.png"), ("convert", "x.mcap"), ("doc", "x.md")] {
        let out = missing.join(out);
        let o = out.to_str().unwrap();
        let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/usvlog.toml");
        let args: Vec<&str> = match verb {
            "plot" => vec!["plot", f, "-f", "REC_NAV_SOLUTION.x", "-o", o],
            "convert" => vec!["convert", f, "-o", o],
            _ => vec!["doc", schema.to_str().unwrap(), "-o", o],
        };
        let res = logspec(&args);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{verb}: {err}");
        assert_eq!(
            err.trim(),
            format!(
                "logspec: {}: the output directory {} does not exist (create it first, or choose another path)",
                out.display(),
                missing.display()
            ),
            "{verb}"
        );
        assert!(!missing.exists(), "{verb} created the directory");
    }
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git is needed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `diff` with nothing changed says so, per schema, instead of printing nothing.
#[test]
fn diff_without_changes_says_so() {
    let dir = tmp("diff");
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let head = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml")).unwrap();
    std::fs::write(schemas.join("usvlog.toml"), head).unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "base"]);
    let (stdout, _) = ok(&["diff", "--against", "HEAD", "--schemas", schemas.to_str().unwrap()]);
    assert_eq!(stdout.trim(), format!("{}: no schema changes since HEAD", schemas.join("usvlog.toml").display()));
}
