//! MCAP output of struct and protobuf values, checked by independent readers: Foxglove's Python
//! MCAP reader reads every message, and the `jsonschema` package validates each against its
//! channel's JSON Schema (generated from the struct's IR or the protobuf descriptor). Needs the
//! Python modules `mcap` and `jsonschema` (reported as ignored without them; under CI=true it
//! runs and fails).

use crate::scratch;

#[allow(dead_code)]
use crate::common;
use crate::tools;

use std::process::Command;

use common::{data, logspec};
use tools::Need;

const NEEDS: &[Need] = &[Need::PyModule("mcap"), Need::PyModule("jsonschema")];

const CHECK: &str = r#"
import json, sys, jsonschema
from mcap.reader import make_reader
n = 0
structs = 0
with open(sys.argv[1], "rb") as f:
    for schema, channel, message in make_reader(f).iter_messages():
        jsonschema.validate(json.loads(message.data), json.loads(schema.data))
        n += 1
        if schema.name.startswith(("struct:", "proto:")):
            structs += 1
print(n, structs)
"#;

fn every_message_matches_its_channel_schema() {
    let dir = scratch::temp_dir().join(format!("logspec-wpistruct-mcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (input, min_structs) in [
        ("wpilog/gen_wpilib_structs.wpilog", 34),
        ("rlog/psikit_core_logs_testLog.rlog", 49),
        ("rlog/gen_akit_head_r2_alltypes.rlog", 16),
    ] {
        let out = dir.join("out.mcap");
        let conv = logspec(&["convert", data(input).to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(conv.status.success(), "{input}: {}", String::from_utf8_lossy(&conv.stderr));
        let py = Command::new("python3").args(["-c", CHECK, out.to_str().unwrap()]).output().unwrap();
        assert!(py.status.success(), "{input}: {}", String::from_utf8_lossy(&py.stderr));
        let text = String::from_utf8(py.stdout).unwrap();
        let counts: Vec<u64> = text.split_whitespace().map(|n| n.parse().unwrap()).collect();
        assert!(counts[1] >= min_structs, "{input}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![tools::trial("every_message_matches_its_channel_schema", NEEDS, every_message_matches_its_channel_schema)]
}
