//! Foxglove's own Python MCAP reader (`mcap` with `mcap-ros1-support`) reads what `logspec
//! convert` writes from a ROS bag. Needs python3 and those packages (`.ci/run` installs them): a
//! missing one shows as **ignored** (see `tests/common/tools.rs`); under `CI=true` it fails.

use crate::scratch;

use crate::common;
use crate::tools;

use std::path::PathBuf;

use common::{data, jsonl, logspec};
use serde_json::Value;
use tools::Need;

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let needs = [Need::Program("python3"), Need::PyModule("mcap"), Need::PyModule("mcap_ros1")];
    vec![tools::trial(
        "rosbag_mcap_decodes_with_foxglove_python_reader",
        &needs,
        rosbag_mcap_decodes_with_foxglove_python_reader,
    )]
}

fn tmp(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-foxglove-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(args: &[&str]) {
    let out = logspec(args);
    assert!(out.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The message lines of a bag's reference dump.
fn bag_expected(stem: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(data(&format!("rosbag/{stem}.expected.jsonl"))).unwrap();
    jsonl(&text).into_iter().filter(|v| v["kind"] == "message").collect()
}

fn ros_time_ns(t: &Value) -> u64 {
    t["sec"].as_u64().unwrap() * 1_000_000_000 + t["nsec"].as_u64().unwrap()
}

/// Foxglove's own Python reader (`mcap` with `mcap-ros1-support`, installed by `.ci/run`)
/// decodes every message of the converted bag to the reference values.
fn rosbag_mcap_decodes_with_foxglove_python_reader() {
    let dir = tmp("rosbag-py");
    let out = dir.join("bag.mcap");
    let file = data("rosbag/test_none.bag");
    ok(&["convert", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let script = r#"
import json, math, sys
from mcap.reader import make_reader
from mcap_ros1.decoder import DecoderFactory

def plain(x):
    if hasattr(x, "secs") and hasattr(x, "nsecs"):
        return {"sec": x.secs, "nsec": x.nsecs}
    if hasattr(x, "__slots__") and hasattr(x, "_slot_types"):
        return {k: plain(getattr(x, k)) for k in x.__slots__}
    if isinstance(x, (bytes, bytearray)):
        return list(x)
    if isinstance(x, (list, tuple)):
        return [plain(i) for i in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x

with open(sys.argv[1], "rb") as f:
    reader = make_reader(f, decoder_factories=[DecoderFactory()])
    for schema, channel, message, msg in reader.iter_decoded_messages(log_time_order=False):
        print(json.dumps({"topic": channel.topic, "t": message.log_time, "data": plain(msg)}))
"#;
    let run = std::process::Command::new("python3").arg("-c").arg(script).arg(&out).output().expect("run python3");
    assert!(
        run.status.success(),
        "python3 with the mcap and mcap-ros1-support packages (`.ci/run` installs them): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got = jsonl(&String::from_utf8(run.stdout).unwrap());
    let expected = bag_expected("test_none");
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g["topic"], e["topic"]);
        assert_eq!(g["t"].as_u64().unwrap(), ros_time_ns(&e["time"]));
        // genpy normalises durations (-1 s -5 ns reads as -2 s 999999995 ns): times and
        // durations are compared as nanoseconds.
        let (g, e) = (total_ns(&g["data"]), total_ns(&e["data"]));
        if let Some(diff) = common::json_diff(&g, &e, &format!("message {i}")) {
            panic!("{diff}");
        }
    }
}

/// Every `{"sec", "nsec"}` object as its total nanoseconds.
fn total_ns(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.len() == 2 && m.contains_key("sec") && m.contains_key("nsec") => {
            let ns = m["sec"].as_i64().unwrap() * 1_000_000_000 + m["nsec"].as_i64().unwrap();
            Value::from(ns)
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), total_ns(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(total_ns).collect()),
        _ => v.clone(),
    }
}
