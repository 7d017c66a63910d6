//! The ROS 2 references run on what logspec writes: `logspec convert` of a ROS 2 MCAP file,
//! read back by Foxglove's `mcap` with `mcap-ros2-support` through the test data's own dump tool
//! (`tests/data/ros2/tools/dump_ros2.py --engine mcap`), gives the reference's dump of the source.
//! Needs python3 and those packages (`.ci/run` installs them): a missing one shows as
//! **ignored** (see `tests/common/tools.rs`); under `CI=true` it fails.

use crate::scratch;

use crate::common;
use crate::tools;

use common::{data, jsonl, logspec};
use serde_json::Value;
use tools::Need;

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let needs = [Need::Program("python3"), Need::PyModule("mcap"), Need::PyModule("mcap_ros2")];
    vec![tools::trial(
        "ros2_mcap_convert_decodes_with_mcap_ros2_support",
        &needs,
        ros2_mcap_convert_decodes_with_mcap_ros2_support,
    )]
}

/// The message lines of a dump, without the channel id (the copy numbers its channels anew, and
/// the tool orders messages of one log time by it), by log time and topic.
fn messages(lines: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = lines
        .into_iter()
        .filter(|v| v["kind"] == "message")
        .map(|mut v| {
            v.as_object_mut().unwrap().remove("topic_id");
            v
        })
        .collect();
    out.sort_by_key(|v| (v["log_time"].as_u64(), v["topic"].as_str().map(str::to_string)));
    out
}

fn ros2_mcap_convert_decodes_with_mcap_ros2_support() {
    let dir = scratch::temp_dir().join(format!("logspec-ros2-mcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stem in ["gen_rosbags_corner", "rosbag2_mcap_cdr_test_0"] {
        let out = dir.join(format!("{stem}.mcap"));
        let src = data(&format!("ros2/{stem}.mcap"));
        let run = logspec(&["convert", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let tool = data("ros2/tools/dump_ros2.py");
        let run = std::process::Command::new("python3")
            .args([tool.to_str().unwrap(), "--engine", "mcap", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(run.status.success(), "{stem}: {}", String::from_utf8_lossy(&run.stderr));
        let got = messages(jsonl(&String::from_utf8(run.stdout).unwrap()));
        let want = messages(jsonl(&std::fs::read_to_string(data(&format!("ros2/{stem}.expected.jsonl"))).unwrap()));
        assert_eq!(got.len(), want.len(), "{stem}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if let Some(d) = common::json_diff(g, w, &format!("{stem} message {i}")) {
                panic!("{d}");
            }
        }
    }
}
