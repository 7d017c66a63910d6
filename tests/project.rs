//! A firmware team's own repository, start to finish, with the built `logspec` binary in a scratch
//! git repository outside this workspace: `init` (header at usv-autopilot's path), add a record,
//! `gen`, `check` passes; a layout change without a bump fails `check` naming the record (and
//! `gen` warns with the same verdict); bump and `lock`, `check` passes; `diff --against HEAD~1`;
//! and the upstream usv-autopilot contract test's regex, run by Python's `re`, finds exactly the
//! records of the schema in the header at the configured path, equal to the generated Python
//! module's `{name: type_id}` table.
//!
//! The regex and what the contract test asserts: `shared/specs/usvlog.md`, "The firmware contract
//! test" (from danielflataker/usv-autopilot's contract test of
//! `firmware/src/logging/record_types.h`).

#[path = "common/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "common/tools.rs"]
mod tools;

use tools::{trial, Need};

/// The contract test's regex, as the spec gives it.
const CONTRACT_REGEX: &str = r"#define\s+(REC_[A-Z0-9_]+)\s+(\d+)";
const HEADER: &str = "firmware/src/logging/record_types.h";

fn logspec_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_logspec")).current_dir(dir).args(args).output().expect("run logspec")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = logspec_in(dir, args);
    assert!(o.status.success(), "logspec {args:?} failed:\n{}", text(&o));
    text(&o)
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn scratch(name: &str) -> PathBuf {
    let base = scratch::temp_dir().join(format!("logspec-project-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let dir = base.join("usv-autopilot");
    std::fs::create_dir_all(&dir).unwrap();
    assert!(!dir.starts_with(env!("CARGO_MANIFEST_DIR")), "the scratch repository must be outside the workspace");
    dir
}

/// `{name: id}` by the contract regex over the header, and the generated Python module's table,
/// both computed by Python.
fn contract(dir: &Path) -> (String, String) {
    let script = format!(
        r#"
import re, sys, json
sys.path.insert(0, "python")
import usvlog
header = open({HEADER:?}).read()
found = {{name: int(v) for name, v in re.findall(r"{CONTRACT_REGEX}", header)}}
assert len(found) == len(re.findall(r"{CONTRACT_REGEX}", header)), "a REC_ macro defined twice"
table = {{name: type_id for type_id, (name, *_rest) in usvlog.RECORDS.items()}}
print(json.dumps(found, sort_keys=True))
print(json.dumps(table, sort_keys=True))
"#
    );
    let out = Command::new("python3").current_dir(dir).args(["-c", &script]).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines().map(str::to_string);
    (lines.next().unwrap(), lines.next().unwrap())
}

fn journey() {
    let dir = scratch("journey");
    git(&dir, &["init", "-q"]);
    let said = ok(&dir, &["init", "--format", "usvlog", "--header", HEADER]);
    assert!(said.contains("logspec check"), "init prints the CI line:\n{said}");
    let config = std::fs::read_to_string(dir.join("logspec.toml")).unwrap();
    assert!(config.contains(&format!("c = \"{HEADER}\"")), "{config}");
    let schema_path = dir.join("schemas/usvlog.toml");
    let schema = std::fs::read_to_string(&schema_path).unwrap();

    // Add a record, generate, check.
    let added = schema.clone()
        + "\n[[record]]\nname = \"REC_BATTERY\"\nid = 2\ndoc = \"Battery state.\"\nfields = [\n  { name = \"volts\", type = \"f32\", unit = \"V\" },\n  { name = \"amps\", type = \"f32\", unit = \"A\" },\n]\n";
    std::fs::write(&schema_path, &added).unwrap();
    let said = ok(&dir, &["gen"]);
    assert!(said.contains(&format!("wrote     {HEADER}")), "{said}");
    assert!(dir.join(HEADER).is_file() && dir.join("python/usvlog.py").is_file());
    assert!(!dir.join("include").exists(), "the header goes where logspec.toml says, not to include/");
    ok(&dir, &["check"]);
    // From a subdirectory, the project file is found above it.
    ok(&dir.join("firmware"), &["check"]);
    let (found, table) = contract(&dir);
    assert_eq!(found, r#"{"REC_BATTERY": 2, "REC_HEARTBEAT": 1}"#, "the contract regex over {HEADER}");
    assert_eq!(found, table, "the header's REC_ macros equal the Python table");
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "battery record"]);

    // A layout change without a bump: gen warns, check fails, both naming the record.
    let changed = added.replace(
        "{ name = \"battery\", type = \"f32\", unit = \"V\"",
        "{ name = \"battery\", type = \"u16\", unit = \"mV\"",
    );
    assert_ne!(changed, added);
    std::fs::write(&schema_path, &changed).unwrap();
    let said = ok(&dir, &["gen"]);
    assert!(said.contains("warning: breaking layout changes under unchanged USVLOG_SCHEMA = 1"), "{said}");
    assert!(said.contains("breaking: REC_HEARTBEAT"), "{said}");
    let o = logspec_in(&dir, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let said = text(&o);
    assert!(said.contains("breaking: REC_HEARTBEAT: "), "{said}");
    assert!(said.contains("bump USVLOG_SCHEMA"), "{said}");
    let o = logspec_in(&dir, &["lock"]);
    assert_eq!(o.status.code(), Some(1), "lock refuses: {}", text(&o));

    // Bump, lock, check.
    let bumped = changed.replace("schema_id = { value = 1,", "schema_id = { value = 2,");
    assert_ne!(bumped, changed);
    std::fs::write(&schema_path, &bumped).unwrap();
    ok(&dir, &["lock"]);
    ok(&dir, &["gen"]);
    ok(&dir, &["check"]);
    let lock = std::fs::read_to_string(dir.join("schemas/usvlog.lock")).unwrap();
    assert!(lock.contains("[[schema]]\nid = 1\n") && lock.contains("[[schema]]\nid = 2\n"), "{lock}");
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "battery in mV, USVLOG_SCHEMA 2"]);

    // The pull request's view of the last commit.
    let said = ok(&dir, &["diff", "--against", "HEAD~1"]);
    assert!(said.contains("breaking: REC_HEARTBEAT: field `battery` changed type from f32le to u16le"), "{said}");
    assert!(said.contains("USVLOG_SCHEMA bumped to 2"), "{said}");
    let said = ok(&dir, &["diff", "--against", "HEAD"]);
    assert!(said.contains("no schema changes since HEAD"), "{said}");
    let (found, table) = contract(&dir);
    assert_eq!(found, r#"{"REC_BATTERY": 2, "REC_HEARTBEAT": 1}"#);
    assert_eq!(found, table);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// Flags override the project file; a bad project file is an error that names it; `init` never
/// overwrites.
fn overrides_and_errors() {
    let dir = scratch("flags");
    ok(&dir, &["init", "--format", "rov"]);
    assert!(dir.join("schemas/rov.toml").is_file());
    let o = logspec_in(&dir, &["init", "--format", "rov"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("already exists"), "{}", text(&o));
    // --root moves every generated file.
    ok(&dir, &["gen", "--root", "elsewhere"]);
    assert!(dir.join("elsewhere/include/rov/record_types.h").is_file());
    // `logspec gen | head -0`: a closed standard output ends the listing quietly, not in a panic.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .current_dir(&dir)
        .args(["gen", "--root", "elsewhere"])
        .stdout(writer)
        .output()
        .unwrap();
    assert!(o.status.success(), "gen into a closed pipe: {}", text(&o));
    assert!(!text(&o).contains("internal error"), "{}", text(&o));
    assert!(!dir.join("include").exists());
    // A project file that turns the Python module off, and one with a typo.
    let config = std::fs::read_to_string(dir.join("logspec.toml")).unwrap();
    std::fs::write(dir.join("logspec.toml"), config.replace("python = \"python/{format}.py\"", "python = false"))
        .unwrap();
    ok(&dir, &["gen"]);
    assert!(dir.join("include/rov/record_types.h").is_file());
    assert!(!dir.join("python").exists());
    std::fs::write(dir.join("logspec.toml"), config.replace("[output]", "[outputs]")).unwrap();
    let o = logspec_in(&dir, &["check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("logspec.toml") && text(&o).contains("outputs"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

fn main() {
    let needs = [Need::Program("git"), Need::Program("python3")];
    tools::run(vec![
        trial("journey_in_a_scratch_repository", &needs, journey),
        trial("flags_override_the_project_file", &[], overrides_and_errors),
    ]);
}
