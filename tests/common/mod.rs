//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod checked;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

pub fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// A fixed pseudo-random sequence (xorshift64) from `seed`, for the tests' corrupted copies.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

pub fn logspec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).output().expect("run logspec")
}

/// Compares two JSON values the way the reference outputs ask: numbers by value (an integer and
/// a float are equal when they are the same number), everything else exactly. Returns the path of
/// the first difference.
pub fn json_diff(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let same = match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            };
            (!same).then(|| format!("{path}: {x} != {y}"))
        }
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<_> = x.keys().collect();
            let ky: Vec<_> = y.keys().collect();
            if kx != ky {
                return Some(format!("{path}: keys {kx:?} != {ky:?}"));
            }
            x.iter().find_map(|(k, v)| json_diff(v, &y[k], &format!("{path}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: length {} != {}", x.len(), y.len()));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| json_diff(p, q, &format!("{path}[{i}]")))
        }
        _ => (a != b).then(|| format!("{path}: {a} != {b}")),
    }
}

/// Asserts that two JSON Lines dumps are equal line for line, by [`json_diff`].
pub fn assert_lines_eq(ours: &[Value], expected: &[Value]) {
    assert_eq!(ours.len(), expected.len(), "record count");
    for (i, (a, b)) in ours.iter().zip(expected).enumerate() {
        if let Some(d) = json_diff(a, b, &format!("line {}", i + 1)) {
            panic!("{d}\nours:     {a}\nexpected: {b}");
        }
    }
}

/// Parses JSON Lines.
pub fn jsonl(text: &str) -> Vec<Value> {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("valid JSON line")).collect()
}

/// `struct.pack(fmt, args)` computed by Python, the independent reference for byte layouts.
pub fn python_pack(fmt: &str, args: &str) -> Vec<u8> {
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("import struct,sys; sys.stdout.buffer.write(struct.pack({fmt:?}, {args}))")])
        .output()
        .expect("python3 is needed for the cross-check");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}
