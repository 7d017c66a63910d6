//! rosbag2 sqlite3 bags (`.db3`): every test file dumps equal to the references' canonical dump
//! (`tests/data/ros2/`: rosbags 0.11.9 and mcap-ros2-support 0.6.0 agree byte for byte), the
//! summaries hold the reference facts, and hostile databases (definitions missing or lying,
//! rows that are not messages, ids out of range, a cut file) give clear errors, never a panic.

use std::path::{Path, PathBuf};

use crate::common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use crate::scratch;
use serde_json::Value;

const FILES: [&str; 2] = ["rosbag2_sqlite3_cdr_test_0", "gen_rosbags_corner_sqlite3"];

fn input(stem: &str) -> PathBuf {
    data(&format!("ros2/{stem}.db3"))
}

/// The reference's lines, the topic lines' `messages` counts included.
fn expected(stem: &str) -> Vec<Value> {
    jsonl(&std::fs::read_to_string(data(&format!("ros2/{stem}.expected.jsonl"))).unwrap())
}

fn summary(stem: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(&format!("ros2/{stem}.expected.summary.json"))).unwrap())
        .unwrap()
}

/// The dump of a file: its lines, its exit status and its standard error.
fn dump(path: &Path, extra: &[&str]) -> (Vec<Value>, bool, String) {
    let mut args = vec!["dump", path.to_str().unwrap()];
    args.extend(extra);
    let out = logspec(&args);
    (jsonl(&String::from_utf8(out.stdout).unwrap()), out.status.success(), String::from_utf8(out.stderr).unwrap())
}

fn kind(lines: &[Value], k: &str) -> Vec<Value> {
    lines.iter().filter(|l| l["kind"] == k).cloned().collect()
}

fn info(path: &Path) -> (Value, bool, String) {
    let out = logspec(&["info", "--json", path.to_str().unwrap()]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (v, out.status.success(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn every_db3_dumps_as_the_references() {
    for stem in FILES {
        let (ours, ok, err) = dump(&input(stem), &[]);
        assert!(ok, "{stem}: {err}");
        assert!(err.is_empty(), "{stem}: {err}");
        let exp = expected(stem);
        assert_lines_eq(&kind(&ours, "topic"), &kind(&exp, "topic"));
        assert_lines_eq(&kind(&ours, "message"), &kind(&exp, "message"));
    }
}

#[test]
fn db3_summaries_hold_the_reference_facts() {
    for stem in FILES {
        let (ours, ok, err) = info(&input(stem));
        assert!(ok, "{stem}: {err}");
        let exp = summary(stem);
        assert_eq!(ours["format"], "rosbag2", "{stem}");
        assert_eq!(ours["storage"], "sqlite3", "{stem}");
        assert_eq!(ours["ok"], true, "{stem}: {ours}");
        for (a, b) in [
            ("schema_version", "schema_version"),
            ("ros_distro", "ros_distro"),
            ("metadata_version", "embedded_metadata_version"),
            ("tables", "tables"),
            ("messages", "messages"),
            ("log_time_min", "log_time_min"),
            ("log_time_max", "log_time_max"),
            ("channels", "topics"),
        ] {
            if let Some(d) = json_diff(&ours[a], &exp[b], a) {
                panic!("{stem}: {d}");
            }
        }
        assert_eq!(ours["size"], exp["bytes"], "{stem}");
        for t in ours["topics"].as_array().unwrap() {
            let n = &exp["messages_per_topic"][t["topic"].as_str().unwrap()];
            let n = if n.is_null() { Value::from(0) } else { n.clone() };
            assert_eq!(t["messages"], n, "{stem}: {t}");
            assert_eq!(t["undecodable"], 0, "{stem}: {t}");
            assert_eq!(t["decoded"], true, "{stem}: {t}");
        }
    }
}

#[test]
fn a_db3_dumps_as_its_mcap_twin() {
    // The same recording in both storages (the references' own writer, rosbags).
    let (db3, ok, err) = dump(&input("gen_rosbags_corner_sqlite3"), &[]);
    assert!(ok, "{err}");
    let (mcap, ok, err) = dump(&data("ros2/gen_rosbags_corner.mcap"), &[]);
    assert!(ok, "{err}");
    assert_lines_eq(&kind(&db3, "message"), &kind(&mcap, "message"));
}

#[test]
fn db3_channel_and_time_selection() {
    let stem = "gen_rosbags_corner_sqlite3";
    let exp = kind(&expected(stem), "message");
    let (ours, ok, err) = dump(&input(stem), &["--topic", "/chatter"]);
    assert!(ok, "{err}");
    let want: Vec<Value> = exp.iter().filter(|m| m["topic"] == "/chatter").cloned().collect();
    assert_eq!(want.len(), 6);
    assert_lines_eq(&kind(&ours, "message"), &want);
    // The time window counts from the first message.
    let t0 = exp[0]["log_time"].as_u64().unwrap();
    let (ours, ok, err) = dump(&input(stem), &["--since", "0.15", "--until", "0.3"]);
    assert!(ok, "{err}");
    let want: Vec<Value> = exp
        .iter()
        .filter(|m| {
            let t = m["log_time"].as_u64().unwrap() - t0;
            (150_000_000..=300_000_000).contains(&t)
        })
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_lines_eq(&kind(&ours, "message"), &want);
}

#[test]
fn standard_input_is_refused_clearly() {
    use std::io::Write;
    let bytes = std::fs::read(input("rosbag2_sqlite3_cdr_test_0")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader may stop reading before all is written.
    let _ = child.stdin.take().unwrap().write_all(&bytes);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("<stdin>") && err.contains("SQLite") && err.contains("file"), "{err}");
}

/// A copy of a test bag in the scratch directory, changed by `sql`.
fn altered(stem: &str, name: &str, sql: &str) -> PathBuf {
    let dir = scratch::temp_dir().join("rosbag2-hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.db3"));
    std::fs::copy(input(stem), &p).unwrap();
    let mut perms = std::fs::metadata(&p).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&p, perms).unwrap();
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    p
}

#[test]
fn types_without_definitions_are_named_and_kept_as_bytes() {
    // A bag of schema version 3 and before: no `message_definitions`.
    let p = altered("gen_rosbags_corner_sqlite3", "no-defs", "DROP TABLE message_definitions;");
    let (ours, ok, err) = dump(&p, &[]);
    assert!(ok, "{err}");
    for t in kind(&ours, "topic") {
        assert_eq!(t["msgdef_encoding"], "none", "{t}");
        assert_eq!(t["msgdef_sha256"], Value::Null, "{t}");
    }
    for ty in ["logspec_test_msgs/msg/Corner", "std_msgs/msg/String", "sensor_msgs/msg/Imu"] {
        assert!(err.contains(&format!("no definition of its type `{ty}`")), "{ty}: {err}");
    }
    let msgs = kind(&ours, "message");
    assert_eq!(msgs.len(), 19);
    assert!(msgs.iter().all(|m| m["data"].is_null() && m["bytes"].is_string()));
    let (v, ok, _) = info(&p);
    assert!(!ok || v["ok"] == false, "{v}");
    let errors = v["errors"].to_string();
    assert!(errors.contains("std_msgs/msg/String"), "{errors}");
}

#[test]
fn hostile_definitions_and_rows_are_reported_and_bounded() {
    // A definition that claims a huge fixed array, a definition that does not parse, a row whose
    // data is text, a row with a negative timestamp, a row of a topic that does not exist.
    let p = altered(
        "gen_rosbags_corner_sqlite3",
        "lies",
        "UPDATE message_definitions SET encoded_message_definition = 'uint8[4000000000] big' WHERE topic_type = 'std_msgs/msg/String';
         UPDATE message_definitions SET encoded_message_definition = 'not a ) definition' WHERE topic_type = 'sensor_msgs/msg/Imu';
         INSERT INTO messages (topic_id, timestamp, data) VALUES (1, 1700000000500000000, 'text');
         INSERT INTO messages (topic_id, timestamp, data) VALUES (1, -5, x'00010000');
         INSERT INTO messages (topic_id, timestamp, data) VALUES (999, 1700000000600000000, x'00010000');",
    );
    let (ours, _, err) = dump(&p, &[]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("not a blob"), "{err}");
    assert!(err.contains("out of range"), "{err}");
    assert!(err.contains("row id"), "{err}");
    // The other topics' messages are all there.
    let corner: Vec<Value> = kind(&ours, "message").into_iter().filter(|m| m["topic"] == "/corner").collect();
    let exp: Vec<Value> = kind(&expected("gen_rosbags_corner_sqlite3"), "message")
        .into_iter()
        .filter(|m| m["topic"] == "/corner")
        .collect();
    assert_lines_eq(&corner, &exp);
    let (_, _, err) = info(&p);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn ids_out_of_range_and_other_databases_are_refused_clearly() {
    let p = altered("rosbag2_sqlite3_cdr_test_0", "big-id", "UPDATE topics SET id = 70000 WHERE id = 1;");
    let (_, ok, err) = dump(&p, &[]);
    assert!(!ok);
    assert!(err.contains("id 70000") && err.contains("big-id.db3"), "{err}");
    let p = altered("rosbag2_sqlite3_cdr_test_0", "not-a-bag", "DROP TABLE topics;");
    let (_, ok, err) = dump(&p, &[]);
    assert!(!ok);
    assert!(err.contains("not a rosbag2 bag") && err.contains("`topics`"), "{err}");
}

#[test]
fn cut_and_corrupted_db3_files_fail_clearly() {
    let dir = scratch::temp_dir().join("rosbag2-cut");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(input("gen_rosbags_corner_sqlite3")).unwrap();
    let exp = kind(&expected("gen_rosbags_corner_sqlite3"), "message");
    for cut in (100..bytes.len()).step_by(4096).chain([bytes.len() - 1]) {
        let p = dir.join(format!("cut-{cut}.db3"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let (ours, _, err) = dump(&p, &[]);
        assert!(!err.contains("panicked"), "cut at {cut}: {err}");
        // Whatever is printed is the reference's.
        for m in kind(&ours, "message") {
            assert!(exp.iter().any(|e| json_diff(&m, e, "").is_none()), "cut at {cut}: {m}");
        }
    }
    for at in (100..bytes.len()).step_by(1999) {
        let mut b = bytes.clone();
        for x in &mut b[at..(at + 64).min(bytes.len())] {
            *x ^= 0x5a;
        }
        let p = dir.join(format!("flip-{at}.db3"));
        std::fs::write(&p, &b).unwrap();
        let (_, _, err) = dump(&p, &[]);
        assert!(!err.contains("panicked"), "corrupted at {at}: {err}");
        let (_, _, err) = info(&p);
        assert!(!err.contains("panicked"), "corrupted at {at}: {err}");
    }
}

/// The split bags of `tests/data/ros2/` (`tools/make_split.py`): three storage files each, which
/// overlap in time, and one `metadata.yaml`; the reference is rosbags' `AnyReader` on the
/// directory.
const SPLIT: [&str; 2] = ["gen_split_db3", "gen_split_mcap"];

#[test]
fn split_bags_read_as_one_log_in_log_time_order() {
    for stem in SPLIT {
        let exp = expected(stem);
        let dir = data(&format!("ros2/{stem}"));
        // The directory, and its metadata.yaml, are the same log.
        for p in [dir.clone(), dir.join("metadata.yaml")] {
            let (ours, ok, err) = dump(&p, &[]);
            assert!(ok, "{}: {err}", p.display());
            assert!(err.is_empty(), "{}: {err}", p.display());
            assert_lines_eq(&kind(&ours, "topic"), &kind(&exp, "topic"));
            assert_lines_eq(&kind(&ours, "message"), &kind(&exp, "message"));
        }
        let (v, ok, err) = info(&dir);
        assert!(ok, "{stem}: {err}");
        assert_eq!(v["format"], "rosbag2");
        assert_eq!(v["storage"], if stem.ends_with("db3") { "sqlite3" } else { "mcap" });
        assert_eq!(v["files"].as_array().unwrap().len(), 3, "{v}");
        assert_eq!(v["messages"], 9);
        assert_eq!(v["channels"], 3);
        // A time window across the files.
        let (ours, ok, err) = dump(&dir, &["--until", "0.00000004"]);
        assert!(ok, "{err}");
        let want: Vec<Value> = kind(&exp, "message")
            .into_iter()
            .filter(|m| m["log_time"].as_u64().unwrap() <= 1_700_000_000_000_000_040)
            .collect();
        assert_lines_eq(&kind(&ours, "message"), &want);
    }
}

/// A split bag copied into the scratch directory, its `metadata.yaml` and files changed by `edit`.
fn split_copy(stem: &str, name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
    let src = data(&format!("ros2/{stem}"));
    let dir = scratch::temp_dir().join("rosbag2-split").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    edit(&dir);
    dir
}

#[test]
fn a_damaged_split_bag_gives_every_other_message_then_names_the_file() {
    // The middle file cut: the other two files' messages all come, then the fault names it.
    let dir = split_copy("gen_split_mcap", "cut", |d| {
        let p = d.join("gen_split_mcap_1.mcap");
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() / 2]).unwrap();
    });
    let (ours, ok, err) = dump(&dir, &[]);
    assert!(!ok);
    assert!(err.contains("gen_split_mcap_1.mcap") && !err.contains("panicked"), "{err}");
    let exp = kind(&expected("gen_split_mcap"), "message");
    let others: Vec<Value> =
        exp.iter().filter(|m| !m["data"]["data"].as_str().unwrap().starts_with("p1")).cloned().collect();
    let got: Vec<Value> =
        kind(&ours, "message").into_iter().filter(|m| !m["data"]["data"].as_str().unwrap().starts_with("p1")).collect();
    assert_lines_eq(&got, &others);
    // A file the metadata lists but the directory lacks; a path outside the bag; no metadata.
    let dir = split_copy("gen_split_db3", "missing", |d| std::fs::remove_file(d.join("gen_split_db3_2.db3")).unwrap());
    let (_, ok, err) = dump(&dir, &[]);
    assert!(!ok && err.contains("gen_split_db3_2.db3") && err.contains("cannot open"), "{err}");
    let dir = split_copy("gen_split_db3", "escape", |d| {
        let y = std::fs::read_to_string(d.join("metadata.yaml")).unwrap();
        std::fs::write(d.join("metadata.yaml"), y.replace("  - gen_split_db3_2.db3", "  - ../../x.db3")).unwrap();
    });
    let (_, ok, err) = dump(&dir, &[]);
    assert!(!ok && err.contains("not a path inside the bag's directory"), "{err}");
    let dir = split_copy("gen_split_db3", "twice", |d| {
        let y = std::fs::read_to_string(d.join("metadata.yaml")).unwrap();
        std::fs::write(d.join("metadata.yaml"), y.replace("  - gen_split_db3_2.db3", "  - gen_split_db3_0.db3"))
            .unwrap();
    });
    let (_, ok, err) = dump(&dir, &[]);
    assert!(!ok && err.contains("listed twice"), "{err}");
    let dir = split_copy("gen_split_db3", "no-metadata", |d| std::fs::remove_file(d.join("metadata.yaml")).unwrap());
    let (_, ok, err) = dump(&dir, &[]);
    assert!(!ok && err.contains("metadata.yaml"), "{err}");
}

/// The static Rust type `Builder::compile_ros2_msgs` generates from
/// `tests/data/ros2/msg/test_msgs/msg/BasicTypes.msg` (the definition the rosbag2 test bag
/// carries) decodes the bag's first `/test_topic` message (its CDR payload after the 4-byte
/// encapsulation header) to the reference's values.
#[test]
fn a_generated_ros2_type_decodes_a_real_cdr_message() {
    #[allow(dead_code)]
    mod ros2_test {
        include!(concat!(env!("OUT_DIR"), "/test_schemas/ros2_test.rs"));
    }
    use logspec::runtime::{Decode, Visit};
    let conn = rusqlite::Connection::open(input("rosbag2_sqlite3_cdr_test_0")).unwrap();
    let data: Vec<u8> = conn
        .query_row(
            "SELECT data FROM messages JOIN topics ON topics.id = topic_id WHERE name = '/test_topic' ORDER BY timestamp LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(&data[..2], [0, 1], "little-endian CDR");
    let msg = ros2_test::BasicTypes::decode_exact(&data[4..]).unwrap();
    let mut w = logspec::json::JsonWriter::new();
    msg.visit(None, &mut w);
    let ours: Value = serde_json::from_str(&w.take()).unwrap();
    let exp = kind(&expected("rosbag2_sqlite3_cdr_test_0"), "message");
    assert_eq!(ours, exp[0]["data"]);
}
