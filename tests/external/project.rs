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

use crate::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::tools;

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
    #[allow(clippy::incompatible_msrv)] // a test: the MSRV is the library's, tests use a newer toolchain
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

/// A firmware team's own schema, v1 and then v2.
const BOAT_V1: &str = r#"[format]
name = "boat"
title = "Boat log"
endian = "little"
schema_id = { value = 1, name = "BOAT_SCHEMA", field = "schema" }

[file_header]
name = "FileHeader"
fields = [
  { name = "magic", type = "bytes[4]", const = "BOAT" },
  { name = "schema", type = "u16" },
]

[framing]
name = "RecordHeader"
tag = "kind"
length = "len"
timestamp = "t_ms"
fields = [
  { name = "t_ms", type = "u32", unit = "ms" },
  { name = "kind", type = "u8" },
  { name = "len", type = "u16", unit = "B" },
]

[[enum]]
name = "Mode"
base = "u8"
values = [
  { name = "IDLE", value = 0 },
  { name = "AUTO", value = 1 },
  { name = "MANUAL", value = 2 },
]

[[record]]
name = "REC_STATE"
id = 1
fields = [
  { name = "mode", type = "Mode" },
  { name = "rpm", type = "i16[3]", unit = "rpm" },
]

[[record]]
name = "REC_NOTE"
id = 2
fields = [
  { name = "level", type = "u8" },
  { name = "text", type = "string", count = "u8" },
]
"#;

/// A C program that writes a log with the generated writers (`boat_write_*`) and prints, as JSON
/// Lines, what it wrote: the independent side of the comparison. `HEADING` is whether the
/// schema (v2) has REC_STATE's `heading`.
fn boat_writer(heading: bool) -> String {
    let set_heading = if heading { "s.heading = (float)i * 0.25f;" } else { "" };
    let print_heading = if heading { r#"printf(",\"heading\":%.2f", (double)s.heading);"# } else { "" };
    format!(
        r#"
#include <stdio.h>
#include <string.h>
#include "boat/record_types.h"
int main(int argc, char **argv) {{
    static uint8_t buf[1 << 16];
    size_t n = boat_write_file_header(buf, sizeof buf);
    if (n == 0) return 2;
    for (int i = 0; i < 40; i++) {{
        boat_rec_state_t s;
        memset(&s, 0, sizeof s);
        s.mode = (boat_mode_t)(i % 3);
        s.rpm[0] = (int16_t)(i * 100); s.rpm[1] = (int16_t)(-i); s.rpm[2] = (int16_t)(i * i);
        {set_heading}
        size_t k = boat_write_rec_state(buf + n, sizeof buf - n, (uint32_t)(i * 50), &s);
        if (k == 0) return 3;
        n += k;
        printf("{{\"t_ms\":%d,\"name\":\"REC_STATE\",\"fields\":{{\"mode\":%d,\"rpm\":[%d,%d,%d]", i * 50, (int)s.mode, s.rpm[0], s.rpm[1], s.rpm[2]);
        {print_heading}
        printf("}}}}\n");
        if (i % 10 == 9) {{
            char text[32];
            snprintf(text, sizeof text, "lap %d done", i / 10);
            boat_rec_note_t note = {{ (uint8_t)(i / 10), text, strlen(text) }};
            k = boat_write_rec_note(buf + n, sizeof buf - n, (uint32_t)(i * 50 + 1), &note);
            if (k == 0) return 4;
            n += k;
            printf("{{\"t_ms\":%d,\"name\":\"REC_NOTE\",\"fields\":{{\"level\":%d,\"text\":\"%s\"}}}}\n", i * 50 + 1, i / 10, text);
        }}
    }}
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) return 5;
    (void)argc;
    return 0;
}}
"#
    )
}

/// Compiles the writer against the project's generated header, runs it into `log`, and returns
/// the records it says it wrote.
fn write_boat_log(dir: &Path, heading: bool, log: &str) -> Vec<serde_json::Value> {
    std::fs::write(dir.join("writer.c"), boat_writer(heading)).unwrap();
    let cc = Command::new("gcc")
        .current_dir(dir)
        .args(["-std=c99", "-Wall", "-Werror", "-Iinclude", "writer.c", "-o", "writer"])
        .output()
        .expect("gcc");
    assert!(cc.status.success(), "gcc: {}", String::from_utf8_lossy(&cc.stderr));
    let run = Command::new(dir.join("writer")).current_dir(dir).arg(log).output().expect("writer");
    assert!(run.status.success(), "the writer failed: {:?}", run.status);
    String::from_utf8(run.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn dump_of(dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let out = ok_stdout(dir, args);
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn ok_stdout(dir: &Path, args: &[&str]) -> String {
    let o = logspec_in(dir, args);
    assert!(o.status.success(), "logspec {args:?} failed:\n{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The dump's lines as the C program prints what it wrote: time, name and fields.
fn as_written(dumped: &[serde_json::Value]) -> Vec<serde_json::Value> {
    dumped.iter().map(|d| serde_json::json!({"t_ms": d["t_ms"], "name": d["name"], "fields": d["fields"]})).collect()
}

/// The firmware journey with the team's own schema: `init`, a schema with an enum, a fixed array
/// and a length-prefixed string, `gen`, a C program writing a log with the generated writers,
/// then every reading verb on that log (found by the project's logspec.toml, and by `--schema`
/// from elsewhere), with the values the C program wrote; a log written under the previous schema
/// id decodes with the old layout from the lock.
fn own_schema() {
    let dir = scratch("own-schema");
    git(&dir, &["init", "-q"]);
    ok(&dir, &["init"]);
    for f in std::fs::read_dir(dir.join("schemas")).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    std::fs::write(dir.join("schemas/boat.toml"), BOAT_V1).unwrap();
    ok(&dir, &["lock"]);
    ok(&dir, &["gen"]);
    let old = write_boat_log(&dir, false, "old.bin");

    // v2: REC_STATE gains `heading`; the schema id is bumped and locked.
    let v2 = BOAT_V1
        .replace("value = 1, name", "value = 2, name")
        .replace(r#"{ name = "rpm", type = "i16[3]", unit = "rpm" },"#, "{ name = \"rpm\", type = \"i16[3]\", unit = \"rpm\" },\n  { name = \"heading\", type = \"f32\", unit = \"rad\" },");
    std::fs::write(dir.join("schemas/boat.toml"), v2).unwrap();
    ok(&dir, &["lock"]);
    ok(&dir, &["gen"]);
    ok(&dir, &["check"]);
    let written = write_boat_log(&dir, true, "boat.bin");
    assert_eq!(written.len(), 44);

    // info, found by the project's schemas.
    let info = ok_stdout(&dir, &["info", "boat.bin"]);
    assert!(info.contains("format:      Boat log") && info.contains("schema id 2 (current)"), "{info}");
    assert!(
        info.contains("REC_STATE") && info.contains("records:     44") && info.contains("integrity:   ok"),
        "{info}"
    );
    let j: serde_json::Value = serde_json::from_str(&ok_stdout(&dir, &["info", "--json", "boat.bin"])).unwrap();
    assert_eq!(j["format"], "boat");
    assert_eq!(j["header"], serde_json::json!({"magic": "BOAT", "schema": 2}));
    assert_eq!(j["record_counts"], serde_json::json!({"REC_STATE": 40, "REC_NOTE": 4}));
    assert_eq!((j["first_timestamp"].as_u64(), j["last_timestamp"].as_u64()), (Some(0), Some(1951)));

    // dump: every value as the C program wrote it; the same with --schema from another directory.
    let dumped = dump_of(&dir, &["dump", "boat.bin"]);
    assert_eq!(as_written(&dumped), written);
    let elsewhere = dir.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let schema = dir.join("schemas/boat.toml");
    let log = dir.join("boat.bin");
    let again = dump_of(&elsewhere, &["dump", "--schema", schema.to_str().unwrap(), log.to_str().unwrap()]);
    assert_eq!(again, dumped);
    // Without the project or --schema, the file is nobody's: a clear error, not a guess.
    let o = logspec_in(&elsewhere, &["info", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--schema"), "{}", text(&o));

    // The log under the previous schema id: v1's layout from the lock (no heading).
    let info = ok_stdout(&dir, &["info", "old.bin"]);
    assert!(info.contains("schema id 1 (an older layout, from the lock history)"), "{info}");
    assert_eq!(as_written(&dump_of(&dir, &["dump", "old.bin"])), old);

    // CSV: one file per record type, units in the headers, the C program's values.
    ok(&dir, &["export", "boat.bin", "--csv", "csv"]);
    let csv = std::fs::read_to_string(dir.join("csv/REC_STATE.csv")).unwrap();
    let mut lines = csv.lines();
    let head = lines.next().unwrap();
    assert!(head.contains("heading [rad]") && head.contains("rpm[0] [rpm]"), "{head}");
    assert_eq!(lines.count(), 40);

    // Parquet (read by pyarrow), MCAP (read by the mcap package), a plot.
    ok(&dir, &["export", "boat.bin", "--parquet", "pq"]);
    ok(&dir, &["convert", "boat.bin", "-o", "boat.mcap"]);
    ok(&dir, &["plot", "boat.bin", "-f", "REC_STATE.heading", "-o", "heading.png"]);
    assert!(std::fs::read(dir.join("heading.png")).unwrap().starts_with(b"\x89PNG"));
    let script = r#"
import glob, json, sys
import pyarrow.parquet as pq
from mcap.reader import make_reader
files = sorted(glob.glob("pq/**/*.parquet", recursive=True))
state = pq.read_table([f for f in files if "REC_STATE" in f][0])
note = pq.read_table([f for f in files if "REC_NOTE" in f][0])
with open("boat.mcap", "rb") as f:
    msgs = [(ch.topic, json.loads(m.data)) for _, ch, m in make_reader(f).iter_messages()]
print(json.dumps({
    "state_rows": state.num_rows,
    "heading_sum": sum(state.column("heading").to_pylist()),
    "rpm2": state.column("rpm").to_pylist()[3],
    "notes": note.column("text").to_pylist(),
    "mcap": len(msgs),
    "mcap_first": msgs[0],
}))
"#;
    let out = Command::new("python3").current_dir(&dir).args(["-c", script]).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let heading_sum: f64 = (0..40).map(|i| f64::from(i as f32 * 0.25)).sum();
    assert_eq!(got["state_rows"], 40);
    assert_eq!(got["heading_sum"].as_f64(), Some(heading_sum));
    assert_eq!(got["rpm2"], serde_json::json!([300, -3, 9]));
    assert_eq!(got["notes"], serde_json::json!(["lap 0 done", "lap 1 done", "lap 2 done", "lap 3 done"]));
    assert_eq!(got["mcap"], 44);
    assert_eq!(got["mcap_first"][0], "/REC_STATE", "{got}");
    assert_eq!(got["mcap_first"][1], serde_json::json!({"mode": 0, "rpm": [0, 0, 0], "heading": 0.0}));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let needs = [Need::Program("git"), Need::Program("python3")];
    vec![
        trial("journey_in_a_scratch_repository", &needs, journey),
        trial("flags_override_the_project_file", &[], overrides_and_errors),
        trial(
            "own_schema_logs_in_every_tool",
            &[Need::Program("git"), Need::Program("gcc"), Need::PyModule("pyarrow"), Need::PyModule("mcap")],
            own_schema,
        ),
    ]
}
