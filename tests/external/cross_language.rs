//! The generated Python module (`python/usvlog.py`) run with the machine's python3: it decodes the
//! bundled sample to the independent reference decoder's values and to exactly what the Rust
//! decoder (`logspec dump`) prints, reports faults where they are, and agrees with Rust and C on the
//! golden vectors (`golden/<format>.json`) byte for byte.
//!
//! python3, numpy and gcc are external tools: a trial that needs a missing one is reported as
//! ignored (under `CI=true`, failed), never passed.

use crate::common;
use crate::tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use logspec::codegen::backend::c::struct_type_name;
use logspec::formats::usvlog::{FileHeader, Usvlog};
use logspec::ir::ir::{Field, Prim, Schema, Ty};
use logspec::json::JsonWriter;
use logspec::runtime::{Event, SliceReader, Visit, Writer};
use serde_json::Value;
use tools::Need;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a Python snippet with `python/` on the module path.
fn python(script: &str, args: &[&str]) -> Output {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .env("PYTHONPATH", root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3")
}

fn python_dump(file: &Path) -> Output {
    Command::new("python3").arg(root().join("python/usvlog.py")).arg("dump").arg(file).output().expect("run python3")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cross_language").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python_decodes_the_sample_to_the_reference_and_the_rust_values() {
    let sample = data("usvlog/step.usvlog");
    let out = python_dump(&sample);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let py = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    assert_lines_eq(&py, &expected);
    let rust = logspec(&["dump", sample.to_str().unwrap()]);
    assert!(rust.status.success());
    assert_lines_eq(&py, &jsonl(&String::from_utf8(rust.stdout).unwrap()));
}

/// `read_usvlog` (the shape of upstream's `read_timeseries_bin`): header, counts and columns
/// against the reference summary and the reference dump's values.
fn python_columns_match_the_reference_summary() {
    let script = r#"
import json, sys, usvlog
log = usvlog.read_usvlog(sys.argv[1])
print(json.dumps({
    "header": {"magic": log.header["magic"].decode(), "fw_model_schema": log.header["fw_model_schema"], "t0_us": log.header["t0_us"]},
    "records_total": log.records_total, "record_counts": log.counts, "bytes_consumed": log.bytes_consumed,
    "unknown_records": log.unknown, "yaw_psi_d": log.columns["REC_YAW_CTRL_DEBUG"]["psi_d"],
    "yaw_t_us": log.columns["REC_YAW_CTRL_DEBUG"]["t_us"],
}))
"#;
    let out = python(script, &[data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("usvlog/step.expected.summary.json")).unwrap()).unwrap();
    for key in ["records_total", "record_counts", "bytes_consumed", "unknown_records"] {
        assert_eq!(got[key], summary[key], "{key}");
    }
    for key in ["magic", "fw_model_schema", "t0_us"] {
        assert_eq!(got["header"][key], summary["header"][key], "header.{key}");
    }
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    let yaw: Vec<_> = expected.iter().filter(|r| r["name"] == "REC_YAW_CTRL_DEBUG").collect();
    let psi_d: Vec<_> = yaw.iter().map(|r| r["fields"]["psi_d"].as_f64().unwrap()).collect();
    let t_us: Vec<_> = yaw.iter().map(|r| r["t_us"].as_u64().unwrap()).collect();
    let got_psi: Vec<f64> = got["yaw_psi_d"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let got_t: Vec<u64> = got["yaw_t_us"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(got_psi, psi_d);
    assert_eq!(got_t, t_us);
}

/// Corrupted and cut copies of the sample (seeded): the Python reader only ever raises its
/// `DecodeError`, never another exception, and always after the records before the fault.
fn python_survives_corrupted_input() {
    let script = r#"
import io, random, sys, usvlog
data = open(sys.argv[1], "rb").read()
rng = random.Random(8)
faults = 0
for trial in range(300):
    b = bytearray(data[:rng.randrange(0, 4000)])
    for _ in range(rng.randrange(1, 6)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    n = 0
    try:
        for rec in usvlog.Reader(io.BytesIO(bytes(b))):
            n += 1
    except usvlog.DecodeError as e:
        faults += 1
        assert e.record_index is None or e.record_index >= n - 1, (e.record_index, n)
        assert str(e).startswith("<stream>: byte "), str(e)
print(faults)
"#;
    let out = python(script, &[data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let faults: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(faults > 100, "most corrupted copies should be rejected, {faults} were");
}

/// `numpy=True` keeps each field's wire type (float32 stays float32) and its values. numpy is an
/// optional extra of the module; the trial needs it (ignored without it, failed under CI).
fn python_numpy_columns_keep_wire_types() {
    let script = r#"
import sys, usvlog
import numpy
log = usvlog.read_usvlog(sys.argv[1], numpy=True)
plain = usvlog.read_usvlog(sys.argv[1])
m = log.columns["REC_MISSION_STATE"]
assert {k: str(v.dtype) for k, v in m.items()} == {"t_us": "uint64", "idx": "uint16", "active": "uint8",
    "done": "uint8", "x0": "float32", "y0": "float32", "x1": "float32", "y1": "float32", "v_seg": "float32",
    "d_wp": "float32"}, m
for name, cols in plain.columns.items():
    for k, v in cols.items():
        assert log.columns[name][k].tolist() == v, (name, k)
print("ok")
"#;
    let out = python(script, &[data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
}

/// A truncated file and a corrupt length: every complete record first, then an error that names
/// the file, byte offset, record index and what was expected and found.
fn python_reports_faults_after_every_complete_record() {
    let dir = scratch("faults");
    let bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    // Header (32) + NAV (12 + 24) + GUIDANCE (12 + 16) = 96, then 10 bytes of MISSION_STATE.
    let cut = dir.join("cut.usvlog");
    std::fs::write(&cut, &bytes[..96 + 12 + 10]).unwrap();
    let out = python_dump(&cut);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(jsonl(&String::from_utf8(out.stdout).unwrap()).len(), 2);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.usvlog: byte 96: record #2 (REC_MISSION_STATE): truncated payload: 10 of 32 bytes"),
        "{err}"
    );

    // A known record whose length disagrees with its layout (strict, like the reference reader).
    let mut bad = bytes[..96 + 12 + 32].to_vec();
    bad[96 + 10] = 31;
    let f = dir.join("len.usvlog");
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("byte 96: record #2 (REC_MISSION_STATE): payload length 31, expected 32"), "{err}");

    // An unknown schema id fails fast, naming the field.
    let mut bad = bytes[..96].to_vec();
    bad[6] = 7;
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("field fw_model_schema: fw_model_schema 7 is not one this reader knows (1)"), "{err}");

    // A bad magic names the field, what was expected and what was found.
    let mut bad = bytes[..96].to_vec();
    bad[0] = b'X';
    std::fs::write(&f, &bad).unwrap();
    let err = String::from_utf8(python_dump(&f).stderr).unwrap();
    assert!(err.contains("field magic: FileHeader: expected b'USVLOG', found b'XSVLOG'"), "{err}");

    // An unknown id is skipped by its length and kept; then a record whose payload is missing.
    let mut bad = bytes[..32].to_vec();
    bad.extend_from_slice(&[0; 8]);
    bad.extend_from_slice(&200u16.to_le_bytes());
    bad.extend_from_slice(&3u16.to_le_bytes());
    bad.extend_from_slice(&[0xde, 0xad, 0xbe]);
    bad.extend_from_slice(&bytes[32..32 + 12]);
    std::fs::write(&f, &bad).unwrap();
    let out = python_dump(&f);
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines[0]["payload_hex"], "deadbe");
    assert_eq!(lines[0]["name"], serde_json::Value::Null);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("byte 47: record #1 (REC_NAV_SOLUTION): truncated payload: 0 of 24 bytes"), "{err}");
}

/// The golden vectors of a project schema: (IR, parsed `golden/<format>.json`).
fn golden(format: &str) -> (Schema, Vec<Value>) {
    let schema = logspec::codegen::compile_file(root().join(format!("schemas/{format}.toml"))).expect("schema");
    let text = std::fs::read_to_string(root().join(format!("golden/{format}.json"))).expect("golden vectors");
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    (schema, doc["vectors"].as_array().expect("vectors").clone())
}

fn hex(s: &Value) -> Vec<u8> {
    let s = s.as_str().expect("hex string");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// What the Rust side prints for a value, as JSON (the `logspec dump` visitor).
fn visited(v: &impl Visit) -> Value {
    let mut w = JsonWriter::new();
    v.visit(None, &mut w);
    serde_json::from_str(&w.take()).expect("visitor JSON")
}

/// Every key the Rust value shows has the golden value. Rust shows a text magic as text where
/// the vectors hold hex; the byte comparison covers the rest of the constant fields.
fn assert_values(what: &str, rust: &Value, golden: &Value) {
    for (k, v) in rust.as_object().expect("an object") {
        let v = match (v, &golden[k]) {
            (Value::String(text), Value::String(h)) if text != h => {
                Value::String(text.bytes().map(|b| format!("{b:02x}")).collect())
            }
            _ => v.clone(),
        };
        assert_eq!(json_diff(&v, &golden[k], k), None, "{what}.{k}");
    }
}

/// Rust: the generated codecs decode every USVLOG vector to its values and encode them back to its
/// bytes; the header vectors and the first record form a file start that the reader accepts and the
/// writer reproduces.
fn golden_vectors_in_rust() {
    use logspec::runtime::{Decode, Encode, FramedFormat, Framing};
    let (schema, vectors) = golden("usvlog");
    let by_name = |n: &str| vectors.iter().find(|v| v["struct"] == n).expect("a vector");
    let mut checked = 0;
    for v in &vectors {
        let Some(id) = v["id"].as_u64() else { continue };
        let bytes = hex(&v["bytes"]);
        let record = Usvlog::decode_record(id, &bytes).expect("a known id").expect("decodes");
        assert_values(v["record"].as_str().unwrap(), &visited(&record), &v["values"]);
        assert_eq!(record.to_bytes().unwrap(), bytes, "{} re-encodes to the golden bytes", v["struct"]);
        checked += 1;
    }
    assert_eq!(checked, schema.records.len(), "a vector for every record type");

    let fh = by_name("FileHeader");
    let header = FileHeader::decode_exact(&hex(&fh["bytes"])).expect("file header decodes");
    assert_values("FileHeader", &visited(&header), &fh["values"]);
    let rh = by_name("RecordHeader");
    let parsed = Usvlog::parse_record_header(&hex(&rh["bytes"])).expect("record header parses");
    assert_eq!(parsed.tag, rh["values"]["type"].as_u64().unwrap());
    assert_eq!(parsed.len, rh["values"]["len"].as_u64().unwrap());
    assert_eq!(parsed.timestamp, rh["values"]["t_us"].as_u64());
    let first = vectors.iter().find(|v| v["id"].as_u64() == Some(parsed.tag)).expect("the announced record");
    let file = [hex(&fh["bytes"]), hex(&rh["bytes"]), hex(&first["bytes"])].concat();
    let (_, mut reader) = SliceReader::<Usvlog>::new(&file).expect("a valid file start");
    let Some(Ok(Event::Record { record, .. })) = reader.next_event() else { panic!("the golden record") };
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    w.write(parsed.timestamp.unwrap(), &record).unwrap();
    assert_eq!(w.finish().unwrap(), file, "the writer reproduces the golden header and record bytes");

    // RLOG has no framed records; its fixed structs are the revision byte and the live stream's
    // frame header.
    let (_, rlog) = golden("rlog");
    assert_eq!(rlog.len(), 2);
    for v in &rlog {
        let bytes = hex(&v["bytes"]);
        match v["struct"].as_str() {
            Some("FileHeader") => {
                let h = logspec::formats::rlog::FileHeader::decode_exact(&bytes).expect("decodes");
                assert_values("rlog FileHeader", &visited(&h), &v["values"]);
                assert_eq!(h.to_bytes().unwrap(), bytes);
            }
            Some("StreamFrameHeader") => {
                let h = logspec::formats::rlog::StreamFrameHeader::decode_exact(&bytes).expect("decodes");
                assert_values("rlog StreamFrameHeader", &visited(&h), &v["values"]);
                assert_eq!(h.to_bytes().unwrap(), bytes);
            }
            other => panic!("an unexpected vector {other:?}"),
        }
    }

    // Its messages and R2 values (variable size): the generated Rust decodes every vector's bytes
    // whole and encodes the value back to exactly those bytes.
    use logspec::formats::rlog::{R1Message, R2Message, R2Value, Utf8U16, Utf8U32};
    let text = std::fs::read_to_string(root().join("golden/rlog.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut n = 0;
    for v in doc["variable_vectors"].as_array().expect("variable vectors") {
        let bytes = hex(&v["bytes"]);
        let again = match (v["struct"].as_str(), v["select"].as_str()) {
            (Some("R1Message"), _) => R1Message::decode_exact(&bytes).expect("R1Message").to_bytes(),
            (Some("R2Message"), _) => R2Message::decode_exact(&bytes).expect("R2Message").to_bytes(),
            (Some("Utf8U16"), _) => Utf8U16::decode_exact(&bytes).expect("Utf8U16").to_bytes(),
            (Some("Utf8U32"), _) => Utf8U32::decode_exact(&bytes).expect("Utf8U32").to_bytes(),
            (None, Some(name)) => R2Value::decode_named(name, &bytes).expect("R2Value").to_bytes(),
            other => panic!("an unexpected vector {other:?}"),
        };
        assert_eq!(again.unwrap(), bytes, "{v}");
        n += 1;
    }
    assert!(n > 30, "every R1/R2 message and value variant has a vector ({n})");
}

/// C: a program compiled against the generated header stores each vector's values into the
/// generated struct and compares the memory with the golden bytes, then loads the bytes into the
/// struct and compares every member with the values.
fn golden_vectors_in_c() {
    for format in ["usvlog", "rlog", "carla"] {
        let (schema, vectors) = golden(format);
        let mut body = String::new();
        let mut n = 0;
        for v in &vectors {
            let name = v["struct"].as_str().unwrap();
            let id = schema.type_by_name(name).expect("a schema struct");
            let c_type = struct_type_name(&schema, id).expect("every vector has a C struct");
            let s = schema.strukt(id);
            let bytes = hex(&v["bytes"]);
            let lit: String = bytes.iter().map(|b| format!("\\x{b:02x}")).collect();
            body.push_str(&format!("  {{\n    {c_type} v, w;\n    memset(&v, 0, sizeof v);\n"));
            c_fields(&schema, &s.fields, &v["values"], "v", Mode::Store, &mut body);
            if s.endian == logspec::ir::ir::Endian::Big {
                // The struct holds host-order numbers; the generated functions write and read the
                // big-endian wire bytes.
                let stem = c_type.trim_end_matches("_t");
                body.push_str(&format!(
                    "    uint8_t buf[{len}];\n    size_t used = 0;\n    if ({stem}_encode(buf, sizeof buf, &v, &used) != 0 || used != {len} || memcmp(buf, \"{lit}\", {len}) != 0) {{ printf(\"store {name}\\n\"); bad++; }}\n    if ({stem}_decode(&w, (const uint8_t *)\"{lit}\", {len}, &used) != 0) {{ printf(\"load {name}\\n\"); bad++; }}\n",
                    len = bytes.len()
                ));
            } else {
                body.push_str(&format!(
                    "    if (sizeof v != {len} || memcmp(&v, \"{lit}\", {len}) != 0) {{ printf(\"store {name}\\n\"); bad++; }}\n    memcpy(&w, \"{lit}\", sizeof w);\n",
                    len = bytes.len()
                ));
            }
            c_fields(&schema, &s.fields, &v["values"], "w", Mode::Compare(name), &mut body);
            body.push_str("  }\n");
            n += 1;
        }
        let prog = format!(
            "#include <stdio.h>\n#include <string.h>\n#include \"{format}/record_types.h\"\n\nint main(void) {{\n  int bad = 0;\n{body}  printf(\"%d\\n\", {n} - bad);\n  return bad != 0;\n}}\n"
        );
        let dir = scratch(&format!("golden-c-{format}"));
        std::fs::write(dir.join("golden.c"), prog).unwrap();
        let exe = dir.join("golden");
        let out = Command::new("gcc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I"])
            .arg(root().join("include"))
            .arg(dir.join("golden.c"))
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run gcc");
        assert!(out.status.success(), "gcc: {}", String::from_utf8_lossy(&out.stderr));
        let out = Command::new(&exe).output().expect("run the golden program");
        assert!(
            out.status.success(),
            "{format}: C disagrees with the golden vectors:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), n.to_string());
    }
}

/// Python: the generated module checks every vector both ways (`python3 usvlog.py golden`).
fn golden_vectors_in_python() {
    let out = Command::new("python3")
        .arg(root().join("python/usvlog.py"))
        .arg("golden")
        .arg(root().join("golden/usvlog.json"))
        .output()
        .expect("run python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, vectors) = golden("usvlog");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("{} golden vectors agree", vectors.len()));
}

#[derive(Clone, Copy)]
enum Mode<'a> {
    /// Assign the values to the struct's members.
    Store,
    /// Compare the members with the values, naming the struct on a mismatch.
    Compare(&'a str),
}

fn c_fields(schema: &Schema, fields: &[Field], values: &Value, lhs: &str, mode: Mode, out: &mut String) {
    for f in fields.iter().filter(|f| !f.is_padding()) {
        c_value(schema, &f.ty, &values[&f.name], &format!("{lhs}.{}", f.name), mode, out);
    }
}

fn c_value(schema: &Schema, ty: &Ty, v: &Value, lhs: &str, mode: Mode, out: &mut String) {
    let literal = match ty {
        Ty::Prim(Prim::F32) => format!("(float){}", v.as_f64().unwrap()),
        Ty::Prim(Prim::F64) => format!("{:?}", v.as_f64().unwrap()),
        Ty::Bool => u8::from(v.as_bool().unwrap()).to_string(),
        Ty::Prim(_) | Ty::Named(_) if v.is_i64() && v.as_i64().unwrap() < 0 => {
            let i = v.as_i64().unwrap();
            if i == i64::MIN {
                "(-9223372036854775807LL - 1)".into()
            } else {
                format!("({i}LL)")
            }
        }
        Ty::Prim(_) | Ty::Named(_) if v.is_u64() => format!("{}ULL", v.as_u64().unwrap()),
        Ty::Named(id) => {
            return c_fields(schema, &schema.strukt(*id).fields, v, lhs, mode, out);
        }
        Ty::Array { elem, .. } => {
            for (i, e) in v.as_array().unwrap().iter().enumerate() {
                c_value(schema, elem, e, &format!("{lhs}[{i}]"), mode, out);
            }
            return;
        }
        Ty::Bytes(_) | Ty::Str(_) => {
            let n = schema.size_of(ty).expect("fixed") as usize;
            let mut b = if matches!(ty, Ty::Bytes(_)) { hex(v) } else { v.as_str().unwrap().as_bytes().to_vec() };
            b.resize(n, 0);
            let lit: String = b.iter().map(|x| format!("\\x{x:02x}")).collect();
            match mode {
                Mode::Store => out.push_str(&format!("    memcpy({lhs}, \"{lit}\", {n});\n")),
                Mode::Compare(s) => out.push_str(&format!(
                    "    if (memcmp({lhs}, \"{lit}\", {n}) != 0) {{ printf(\"load {s} {lhs}\\n\"); bad++; }}\n"
                )),
            }
            return;
        }
        other => panic!("{lhs}: {other:?} has no golden value"),
    };
    match mode {
        Mode::Store => out.push_str(&format!("    {lhs} = {literal};\n")),
        Mode::Compare(s) => {
            out.push_str(&format!("    if (!({lhs} == {literal})) {{ printf(\"load {s} {lhs}\\n\"); bad++; }}\n"))
        }
    }
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let py = [Need::Program("python3")];
    let numpy = [Need::Program("python3"), Need::PyModule("numpy")];
    vec![
        tools::trial(
            "python_decodes_the_sample_to_the_reference_and_the_rust_values",
            &py,
            python_decodes_the_sample_to_the_reference_and_the_rust_values,
        ),
        tools::trial("python_columns_match_the_reference_summary", &py, python_columns_match_the_reference_summary),
        tools::trial("python_survives_corrupted_input", &py, python_survives_corrupted_input),
        tools::trial("python_numpy_columns_keep_wire_types", &numpy, python_numpy_columns_keep_wire_types),
        tools::trial(
            "python_reports_faults_after_every_complete_record",
            &py,
            python_reports_faults_after_every_complete_record,
        ),
        tools::trial("golden_vectors_in_rust", &[], golden_vectors_in_rust),
        tools::trial("golden_vectors_in_c", &[Need::Program("gcc")], golden_vectors_in_c),
        tools::trial("golden_vectors_in_python", &py, golden_vectors_in_python),
    ]
}
