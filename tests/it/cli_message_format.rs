//! `--message-format github|json` of `check`, `gen`, `lock` and `diff` in a scratch project made
//! by `logspec init --format demo`: schema errors, stale generated files, a missing or stale lock
//! file and a breaking change without a schema id bump, each as the GitHub Actions workflow
//! commands and the JSON Lines that docs/output.md ("Diagnostics of the project verbs")
//! specifies. The expected lines are written out here from that spec; the starter schema's lines
//! are counted by hand (REC_HEARTBEAT's `name` is line 39, its `battery` field line 44).

use crate::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary in `dir`, with no `GITHUB_WORKSPACE` unless `workspace` gives one.
fn run(dir: &Path, workspace: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_logspec"));
    c.current_dir(dir).args(args).env_remove("GITHUB_WORKSPACE");
    if let Some(w) = workspace {
        c.env("GITHUB_WORKSPACE", w);
    }
    c.output().expect("run logspec")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn both(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git is needed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A fresh project `<scratch>/<name>/demo` made by `logspec init --format demo`, generated once.
fn project(name: &str) -> PathBuf {
    let base = scratch::temp_dir().join(format!("msgfmt-{name}"));
    let _ = std::fs::remove_dir_all(&base);
    let dir = base.join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    let o = run(&dir, None, &["init", "--format", "demo"]);
    assert!(o.status.success(), "{}", both(&o));
    let o = run(&dir, None, &["gen"]);
    assert!(o.status.success(), "{}", both(&o));
    dir
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The 1-based line of `path` that holds `needle`.
fn line_of(path: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} in {}", path.display())) + 1
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn human_is_the_default_and_machine_formats_print_nothing_when_clean() {
    let dir = project("clean");
    for f in ["github", "json"] {
        for verb in ["check", "lock", "gen"] {
            let o = run(&dir, None, &[verb, "--message-format", f]);
            assert!(o.status.success(), "{verb} {f}: {}", both(&o));
            assert_eq!(stdout(&o), "", "{verb} --message-format {f}: standard output is the diagnostics only");
        }
    }
    // The human text of `gen` is still there, on standard error.
    let o = run(&dir, None, &["gen", "--message-format", "json"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("unchanged include/demo/record_types.h\n"), "{}", both(&o));
    let human = run(&dir, None, &["gen"]);
    let explicit = run(&dir, None, &["gen", "--message-format", "human"]);
    assert_eq!(stdout(&human), stdout(&explicit));
    assert!(stdout(&human).starts_with("unchanged include/demo/record_types.h\n"), "{}", both(&human));
    let o = run(&dir, None, &["check", "--message-format", "xml"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("[possible values: human, github, json]"), "{}", both(&o));
}

#[test]
fn schema_errors_in_every_verb() {
    let dir = project("schema-error");
    let schema = dir.join("schemas/demo.toml");
    edit(&schema, "{ name = \"battery\", type = \"f32\"", "{ name = \"battery\", type = \"f31\"");
    git(&dir, &["init", "-q"]);
    let github = "::error file=schemas/demo.toml,line=44,col=31,endLine=44,endColumn=33,title=schema error E0101::unknown type `f31`%0Anot a built-in or declared type%0Ahelp: did you mean `f32`?\n";
    let json = r#"{"level":"error","code":"E0101","file":"schemas/demo.toml","line":44,"column":31,"end_line":44,"end_column":33,"title":"schema error E0101","message":"unknown type `f31`\nnot a built-in or declared type\nhelp: did you mean `f32`?"}"#.to_string() + "\n";
    for verb in [&["check"][..], &["gen"], &["lock"], &["diff", "--against", "HEAD"]] {
        let o = run(&dir, None, &[verb, &["--message-format", "github"]].concat());
        assert_eq!(o.status.code(), Some(1), "{verb:?}: {}", both(&o));
        assert_eq!(stdout(&o), github, "{verb:?}");
        let o = run(&dir, None, &[verb, &["--message-format", "json"]].concat());
        assert_eq!(o.status.code(), Some(1), "{verb:?}: {}", both(&o));
        assert_eq!(stdout(&o), json, "{verb:?}");
    }
    // The human format reports it as before: the rendered diagnostic, as an error.
    let o = run(&dir, None, &["check"]);
    assert_eq!(stdout(&o), "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[E0101]: unknown type `f31`"), "{}", both(&o));
}

#[test]
fn stale_file_and_missing_lock_in_check() {
    let dir = project("stale");
    let py = dir.join("python/demo.py");
    edit(&py, "REC_HEARTBEAT = 1", "REC_HEARTBEAT = 10");
    let line = line_of(&py, "REC_HEARTBEAT = 10");
    std::fs::remove_file(dir.join("schemas/demo.lock")).unwrap();
    std::fs::remove_file(dir.join("golden/demo.json")).unwrap();

    let o = run(&dir, None, &["check", "--message-format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let expected = [
        format!("::error file=python/demo.py,line={line},title=stale generated file::this file differs from what the schemas generate; run `logspec gen` to regenerate it (generated files must not be edited by hand)"),
        "::error file=golden/demo.json,title=stale generated file::this generated file is missing; run `logspec gen` to write it".to_string(),
        "::error file=schemas/demo.toml,title=missing lock file::no lock file schemas/demo.lock; run `logspec lock` to create it".to_string(),
    ];
    assert_eq!(lines(&stdout(&o)), expected);
    // The unified diff a person reads moves to standard error.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("+REC_HEARTBEAT = 1\n") && err.contains("-REC_HEARTBEAT = 10\n"), "{err}");

    let o = run(&dir, None, &["check", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let expected = [
        format!(r#"{{"level":"error","code":null,"file":"python/demo.py","line":{line},"column":null,"end_line":null,"end_column":null,"title":"stale generated file","message":"this file differs from what the schemas generate; run `logspec gen` to regenerate it (generated files must not be edited by hand)"}}"#),
        r#"{"level":"error","code":null,"file":"golden/demo.json","line":null,"column":null,"end_line":null,"end_column":null,"title":"stale generated file","message":"this generated file is missing; run `logspec gen` to write it"}"#.to_string(),
        r#"{"level":"error","code":null,"file":"schemas/demo.toml","line":null,"column":null,"end_line":null,"end_column":null,"title":"missing lock file","message":"no lock file schemas/demo.lock; run `logspec lock` to create it"}"#.to_string(),
    ];
    assert_eq!(lines(&stdout(&o)), expected);

    // From a subdirectory, paths are relative to where logspec runs; under GitHub Actions, to
    // the workspace (the repository's root).
    let o = run(&dir.join("python"), None, &["check", "--message-format", "json"]);
    assert!(stdout(&o).contains(r#""file":"demo.py","#), "{}", both(&o));
    let o = run(&dir.join("python"), Some(dir.parent().unwrap()), &["check", "--message-format", "github"]);
    assert!(stdout(&o).starts_with(&format!("::error file=demo/python/demo.py,line={line},")), "{}", both(&o));
}

#[test]
fn breaking_change_without_a_bump_in_gen_check_lock_and_diff() {
    let dir = project("breaking");
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "demo"]);
    let schema = dir.join("schemas/demo.toml");
    edit(&schema, "name = \"REC_HEARTBEAT\"\nid = 1", "name = \"REC_HEARTBEAT\"\nid = 7");
    let change = "record REC_HEARTBEAT was renumbered from id 1 to id 7";
    let title = "breaking change without a schema id bump";

    let o = run(&dir, None, &["gen", "--message-format", "github"]);
    assert!(o.status.success(), "{}", both(&o));
    assert_eq!(
        stdout(&o),
        format!("::warning file=schemas/demo.toml,line=39,title={title}::{change}; breaking under unchanged DEMO_SCHEMA = 1: `logspec check` will fail until you bump DEMO_SCHEMA in the schema and run `logspec lock`\n")
    );

    let check = format!(
        "{change}; breaking under unchanged DEMO_SCHEMA = 1: bump DEMO_SCHEMA in the schema, then run `logspec lock`"
    );
    let o = run(&dir, None, &["check", "--message-format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(stdout(&o), format!("::error file=schemas/demo.toml,line=39,title={title}::{check}\n"));
    let o = run(&dir, None, &["check", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(
        stdout(&o),
        format!("{{\"level\":\"error\",\"code\":null,\"file\":\"schemas/demo.toml\",\"line\":39,\"column\":null,\"end_line\":null,\"end_column\":null,\"title\":\"{title}\",\"message\":\"{check}\"}}\n")
    );

    let lock =
        format!("{change}; breaking under unchanged DEMO_SCHEMA = 1: not locked; bump DEMO_SCHEMA in the schema first");
    let o = run(&dir, None, &["lock", "--message-format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(stdout(&o), format!("::error file=schemas/demo.toml,line=39,title={title}::{lock}\n"));
    let o = run(&dir, None, &["lock", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(
        stdout(&o),
        format!("{{\"level\":\"error\",\"code\":null,\"file\":\"schemas/demo.toml\",\"line\":39,\"column\":null,\"end_line\":null,\"end_column\":null,\"title\":\"{title}\",\"message\":\"{lock}\"}}\n")
    );

    let diff = format!("{change}; breaking since HEAD under unchanged DEMO_SCHEMA = 1: bump DEMO_SCHEMA");
    let o = run(&dir, None, &["diff", "--against", "HEAD", "--message-format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(stdout(&o), format!("::error file=schemas/demo.toml,line=39,title={title}::{diff}\n"));
    let o = run(&dir, None, &["diff", "--against", "HEAD", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(
        stdout(&o),
        format!("{{\"level\":\"error\",\"code\":null,\"file\":\"schemas/demo.toml\",\"line\":39,\"column\":null,\"end_line\":null,\"end_column\":null,\"title\":\"{title}\",\"message\":\"{diff}\"}}\n")
    );
    // The classification a person reads is on standard error.
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("breaking: {change}")), "{}", both(&o));

    // Bumped and locked: nothing to report.
    edit(&schema, "schema_id = { value = 1,", "schema_id = { value = 2,");
    for verb in [&["lock"][..], &["gen"], &["check"], &["diff", "--against", "HEAD"]] {
        let o = run(&dir, None, &[verb, &["--message-format", "github"]].concat());
        assert!(o.status.success(), "{verb:?}: {}", both(&o));
        assert_eq!(stdout(&o), "", "{verb:?}");
    }
}

#[test]
fn new_record_without_gen_leaves_files_and_lock_stale() {
    let dir = project("lock-stale");
    let schema = dir.join("schemas/demo.toml");
    let text = std::fs::read_to_string(&schema).unwrap();
    std::fs::write(
        &schema,
        text + "\n[[record]]\nname = \"REC_BATTERY\"\nid = 2\nfields = [{ name = \"volts\", type = \"f32\" }]\n",
    )
    .unwrap();
    let o = run(&dir, None, &["check", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let out = stdout(&o);
    let got: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    // Every generated file is stale (at some line: where depends on the back end), in the order
    // of the back ends; then the lock, which does not record REC_BATTERY yet.
    let files: Vec<(&str, &str)> =
        got.iter().map(|v| (v["file"].as_str().unwrap(), v["title"].as_str().unwrap())).collect();
    assert_eq!(
        files,
        [
            ("include/demo/record_types.h", "stale generated file"),
            ("python/demo.py", "stale generated file"),
            ("golden/demo.json", "stale generated file"),
            ("docs/formats/demo.md", "stale generated file"),
            ("schemas/demo.lock", "lock file out of date"),
        ],
        "{out}"
    );
    assert!(got[..4].iter().all(|v| v["line"].as_u64().is_some_and(|l| l > 1)), "{out}");
    assert_eq!(
        out.lines().last().unwrap(),
        r#"{"level":"error","code":null,"file":"schemas/demo.lock","line":null,"column":null,"end_line":null,"end_column":null,"title":"lock file out of date","message":"the lock file does not record the schema as it is; run `logspec lock` and commit it"}"#
    );
    // `gen` brings both up to date.
    assert!(run(&dir, None, &["gen", "--message-format", "json"]).status.success());
    let o = run(&dir, None, &["check", "--message-format", "json"]);
    assert!(o.status.success() && o.stdout.is_empty(), "{}", both(&o));
}
