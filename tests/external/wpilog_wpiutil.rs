//! WPILOG against WPILib's own writer and reader (robotpy-wpiutil's `DataLogWriter` and
//! `DataLogReader`, the C++ implementation, driven by `tests/wpilog_wpiutil.py`):
//!
//! - a log of every type written by `DataLogWriter` dumps equal to what `DataLogReader` reads;
//! - every test file reads the same through both;
//! - what logspec's writer writes, `DataLogReader` reads back as written;
//! - RLOG files converted to `.wpilog` read back by `DataLogReader` with the values of
//!   `logspec dump` of the RLOG.
//!
//! Needs python3 with robotpy-wpiutil: without it the trials are reported as ignored (under
//! `CI=true`, as failures).

use crate::scratch;

use crate::common;
use crate::tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_lines_eq, data, jsonl, logspec};
use logspec::formats::wpilog::{DataValue, RecordHeader, Utf8U32, Writer};
use serde_json::{json, Value};
use tools::Need;

const NEEDS: &[Need] = &[Need::PyModule("wpiutil")];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wpilog_wpiutil.py")
}

fn python(args: &[&str]) -> String {
    let out = Command::new("python3").arg(script()).args(args).output().expect("run python3");
    assert!(out.status.success(), "wpilog_wpiutil.py {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// What WPILib's reader reads from `file`, in the dump's shape.
fn wpiutil_read(file: &Path) -> Vec<Value> {
    jsonl(&python(&["read", file.to_str().unwrap()]))
}

/// Our dump without the keys WPILib's reader has no counterpart for: `decoded` and
/// `decode_error` of struct and proto values (checked against AdvantageScope in
/// tests/it/wpistruct.rs).
fn our_dump(file: &Path) -> Vec<Value> {
    let out = logspec(&["dump", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    without_decoded(jsonl(&String::from_utf8(out.stdout).unwrap()))
}

fn without_decoded(mut lines: Vec<Value>) -> Vec<Value> {
    for l in &mut lines {
        if let Some(m) = l.as_object_mut() {
            m.remove("decoded");
            m.remove("decode_error");
        }
    }
    lines
}

fn temp_dir(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-wpiutil-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn wpiutil_writer_files_read_back_equal() {
    let dir = temp_dir("writer");
    let f = dir.join("py.wpilog");
    python(&["write", f.to_str().unwrap()]);
    let theirs = wpiutil_read(&f);
    assert!(theirs.len() > 50, "the Python log has every type");
    assert_lines_eq(&our_dump(&f), &theirs);
    std::fs::remove_dir_all(&dir).ok();
}

fn wpiutil_reads_the_test_files_as_we_do() {
    for e in std::fs::read_dir(data("wpilog")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "wpilog") {
            assert_lines_eq(&our_dump(&p), &wpiutil_read(&p));
        }
    }
}

fn our_writer_read_back_by_wpiutil() {
    let dir = temp_dir("ours");
    let f = dir.join("ours.wpilog");
    let mut w = Writer::new(std::fs::File::create(&f).unwrap(), "logspec").unwrap();
    let values: Vec<(&str, DataValue, Value)> = vec![
        ("boolean", DataValue::Boolean { value: true }, json!(true)),
        ("int64", DataValue::Int64 { value: i64::MIN }, json!(i64::MIN)),
        ("float", DataValue::Float { value: -0.0 }, json!("-0")),
        ("double", DataValue::Double { value: 0.1 }, json!(0.1)),
        ("string", DataValue::String { value: "ü\n".into() }, json!("ü\n")),
        ("boolean[]", DataValue::BooleanArray { value: vec![false, true] }, json!([false, true])),
        ("int64[]", DataValue::Int64Array { value: vec![i64::MAX, -2] }, json!([i64::MAX, -2])),
        ("float[]", DataValue::FloatArray { value: vec![0.5, f32::NAN] }, json!([0.5, "NaN"])),
        ("double[]", DataValue::DoubleArray { value: vec![f64::NEG_INFINITY] }, json!(["-Infinity"])),
        (
            "string[]",
            DataValue::StringArray { value: vec![Utf8U32 { text: "x".into() }, Utf8U32 { text: String::new() }] },
            json!(["x", ""]),
        ),
        ("raw", DataValue::Other { value: vec![1, 2, 254] }, json!("0102fe")),
        ("struct:Pose2d", DataValue::Other { value: vec![0; 24] }, json!("00".repeat(24))),
    ];
    let mut expected = vec![json!({"rec":"header","version":256,"extra_header":"logspec"})];
    for (i, (ty, v, shown)) in values.iter().enumerate() {
        // Ids and times across every header width, a negative time (all 8 bytes).
        let id = [1u32, 300, 70_000, 20_000_000][i % 4] + i as u32;
        let ts = if i == 3 { -1_000_000 } else { 1i64 << (5 * i) };
        let name = format!("/t/{ty}");
        w.start(id, &name, ty, "{}", ts).unwrap();
        w.value(id, ts, v).unwrap();
        expected.push(json!({"rec":"start","ts":ts,"entry":id,"name":name,"type":ty,"metadata":"{}"}));
        expected.push(json!({"rec":"data","ts":ts,"entry":id,"name":name,"type":ty,"value":shown}));
    }
    w.set_metadata(1, "m", 5).unwrap();
    w.finish(1, 6).unwrap();
    // A record written with wider header fields than it needs, as a file may hold them.
    w.record(&RecordHeader { lengths: 0b0111_1111, entry: 301, size: 1, timestamp: 7 }, &[0]).unwrap();
    expected.push(json!({"rec":"set_metadata","ts":5,"entry":1,"metadata":"m"}));
    expected.push(json!({"rec":"finish","ts":6,"entry":1}));
    // A 1-byte int64 does not decode, in WPILib's reader as in ours.
    expected
        .push(json!({"rec":"data","ts":7,"entry":301,"name":"/t/int64","type":"int64","value":null,"invalid":"00"}));
    w.finish_file().unwrap();
    assert_lines_eq(&wpiutil_read(&f), &expected);
    let dump = logspec(&["dump", f.to_str().unwrap()]);
    assert_eq!(dump.status.code(), Some(1), "the invalid value is an error");
    // The struct value has no schema in this file: `decode_error`, and the hex value as WPILib shows it.
    let ours = jsonl(&String::from_utf8(dump.stdout).unwrap());
    assert!(ours.iter().any(|l| l["type"] == "struct:Pose2d" && l["decode_error"].is_string()));
    assert_lines_eq(&without_decoded(ours), &expected);
    std::fs::remove_dir_all(&dir).ok();
}

/// The RLOG value as the WPILOG data line shows it, and the WPILOG type it gets.
fn rlog_to_wpilog_read_by_wpiutil() {
    let dir = temp_dir("rlog");
    for e in std::fs::read_dir(data("rlog")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "rlog") {
            continue;
        }
        let out_file = dir.join(format!("{}.wpilog", p.file_stem().unwrap().to_string_lossy()));
        let conv = logspec(&["convert", p.to_str().unwrap(), "-o", out_file.to_str().unwrap()]);
        assert!(conv.status.success(), "{}: {}", p.display(), String::from_utf8_lossy(&conv.stderr));
        let rlog = logspec(&["dump", p.to_str().unwrap()]);
        assert!(rlog.status.success());
        let rlog = jsonl(&String::from_utf8(rlog.stdout).unwrap());
        let theirs = wpiutil_read(&out_file);
        // The data records and finishes WPILib reads, in order, against the RLOG values
        // (a null value, R1's "key removed", is a Finish).
        // A Finish right before a Start of the same name is an R1 key changing its value type.
        let name_of = |l: &Value| {
            theirs.iter().find(|s| s["rec"] == "start" && s["entry"] == l["entry"]).map(|s| s["name"].clone())
        };
        let read: Vec<&Value> = theirs
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                l["rec"] == "data"
                    || (l["rec"] == "finish"
                        && !theirs
                            .get(i + 1)
                            .is_some_and(|n| n["rec"] == "start" && Some(n["name"].clone()) == name_of(l)))
            })
            .map(|(_, l)| l)
            .collect();
        assert_eq!(read.len(), rlog.len(), "{}: one record per RLOG value", p.display());
        let mut names = std::collections::HashMap::new();
        for l in &theirs {
            if l["rec"] == "start" {
                names.insert(l["entry"].as_u64().unwrap(), l["name"].as_str().unwrap().to_string());
            }
        }
        for (ours, value) in read.iter().zip(&rlog) {
            let t_us = (value["t"].as_f64().unwrap() * 1e6).round() as i64;
            let ctx = format!("{}: {value} -> {ours}", p.display());
            assert_eq!(ours["ts"].as_i64(), Some(t_us), "{ctx}");
            let name = &names[&ours["entry"].as_u64().unwrap()];
            assert_eq!(Some(name.as_str()), value["key"].as_str(), "{ctx}");
            if value["value"].is_null() {
                assert_eq!(ours["rec"], "finish", "{ctx}");
                continue;
            }
            let want = match value["type"].as_str().unwrap() {
                "int" => "int64",
                "int[]" => "int64[]",
                "byte" | "byte[]" => "raw",
                "integer" => "int64",
                "integer[]" => "int64[]",
                t => t,
            };
            assert_eq!(ours["type"].as_str(), Some(want), "{ctx}");
            let text_hex;
            let mut v = &value["value"];
            if want == "json" {
                // JSON text: the RLOG dump shows the text, a WPILOG dump (not a standard type) hex.
                text_hex = Value::from(v.as_str().unwrap().bytes().map(|b| format!("{b:02x}")).collect::<String>());
                v = &text_hex;
            }
            // The RLOG dump shows -0.0 as a number; WPILib's reader, as the dump form "-0".
            let same = common::json_diff(&ours["value"], v, "value").is_none()
                || (ours["value"] == "-0" && v.as_f64() == Some(0.0));
            assert!(same, "{ctx}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        tools::trial("wpiutil_writer_files_read_back_equal", NEEDS, wpiutil_writer_files_read_back_equal),
        tools::trial("wpiutil_reads_the_test_files_as_we_do", NEEDS, wpiutil_reads_the_test_files_as_we_do),
        tools::trial("our_writer_read_back_by_wpiutil", NEEDS, our_writer_read_back_by_wpiutil),
        tools::trial("rlog_to_wpilog_read_by_wpiutil", NEEDS, rlog_to_wpilog_read_by_wpiutil),
    ]
}
