//! C <-> Rust through the generated headers, with the generated functions only (no struct is
//! ever copied to the wire as memory):
//!
//! - a C program writes a USVLOG file (`usvlog_write_file_header`, one `usvlog_write_<record>`
//!   per record type) and an RLOG R2 file (`rlog_write_file_header`, the R2 timestamp,
//!   key-definition and field-value writers, values encoded by `rlog_r2_value_<type>_encode`);
//!   `logspec dump` reads them back to exactly the values the program wrote, and the Rust writers
//!   produce the same bytes from those values; the same for an R1 file with the R1 writers;
//! - a C program reads a USVLOG file written by the Rust writer (`usvlog_read_file_header`,
//!   `usvlog_next_record`, `usvlog_<record>_decode`) and prints every field, which must equal
//!   what Rust wrote.
//!
//! The C program's field accesses are generated from the IR here, so every record and field of
//! the schema is covered. gcc is an external tool: without it the trials are reported as ignored
//! (under `CI=true`, failed).

use crate::common;
use crate::tools;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{json_diff, jsonl, logspec};
use logspec::formats::rlog::{self, R2Value, Revision, Utf8U32};
use logspec::formats::usvlog::*;
use logspec::ir::ir::{Schema, Ty, TypeDef};
use logspec::runtime::{Event, SliceReader, Visit, Visitor, Writer};
use serde_json::{json, Value};
use tools::Need;

fn schema() -> Schema {
    logspec::codegen::compile_file(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml")).unwrap()
}

/// The C type class of a field: float, or an integer (enums and flags are integers in C).
fn is_float(schema: &Schema, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(p) => p.is_float(),
        Ty::Named(id) => !matches!(schema.ty(*id), TypeDef::Enum(_) | TypeDef::Flags(_)),
        Ty::Bool => false,
        other => panic!("the round trip does not cover {other:?}"),
    }
}

/// One record of every type, with values that fill every byte of their fields.
fn records() -> Vec<UsvlogRecord> {
    vec![
        RecNavSolution { x: 1.5, y: -2.25, psi: 3.25, v: 0.1, r: -1e-7, b_g: 6.5e3 }.into(),
        RecGuidanceRef { psi_d: 0.5, v_d: 1.25, e_y: -0.75, e_psi: 1e-3 }.into(),
        RecActuatorReq { u_s_req: 0.3, u_d_req: -0.3, src: ActSrc::MANUAL }.into(),
        RecActuatorCmd { u_s_cmd: 1.0, u_d_cmd: -1.0 }.into(),
        RecEscOutput { u_L: 0.125, u_R: 0.875 }.into(),
        RecMissionState { idx: 65535, active: 1, done: 0, x0: 1.0, y0: 2.0, x1: 3.0, y1: 4.0, v_seg: 5.0, d_wp: 6.0 }
            .into(),
        RecMixerFeedback { u_s_ach: 0.5, u_d_ach: 0.25, sat_L: 1, sat_R: 0, sat_any: 1, u_L_ach: 0.75, u_R_ach: 0.25 }
            .into(),
        RecSpeedSchedDebug { v_seg: 1.0, v_cap: 2.0, v_d: 3.0, e_psi: 4.0, d_wp: 5.0, dv: 6.0, cap_wp: 1, cap_psi: 0 }
            .into(),
        RecSpeedCtrlDebug { v_d: 1.0, v_hat: 2.0, e_v: 3.0, u_s_raw: 4.0, u_s_req: 5.0, i_v: 6.0, sat_u_s: 1 }.into(),
        RecYawCtrlDebug { psi_d: 1.0, psi: 2.0, e_psi: 3.0, r_d: 4.0, r: 5.0, e_r: 6.0, u_d_req: 7.0, sat_u_d: 1 }
            .into(),
        RecEkfDiag {
            P_xx: 0.1,
            P_yy: 0.2,
            P_psi: 0.3,
            P_v: 0.4,
            P_r: 0.5,
            P_bg: 0.6,
            status_flags: EkfStatus(0x8000_0011),
        }
        .into(),
        RecSensorGnss { x: -100.5, y: 200.25, cog: 1.0, sog: 2.0, valid: 1 }.into(),
        RecSensorGyro { z_gyro: 0.01, b_g_est: -0.002, valid: 0 }.into(),
    ]
}

const T0_US: u64 = 77;

fn t_us(i: usize) -> u64 {
    500 + 1000 * i as u64
}

/// Collects `field -> value` of a visited record as text: integers in decimal, floats as Rust's
/// shortest round-trip text (which is also a valid C literal of the same value).
struct Collect(Vec<(String, String)>);
impl Visitor for Collect {
    fn uint(&mut self, n: Option<&str>, v: u64) {
        self.0.push((n.unwrap_or("").into(), v.to_string()));
    }
    fn int(&mut self, n: Option<&str>, v: i64) {
        self.0.push((n.unwrap_or("").into(), v.to_string()));
    }
    fn f32(&mut self, n: Option<&str>, v: f32) {
        self.0.push((n.unwrap_or("").into(), format!("{v:?}")));
    }
    fn f64(&mut self, n: Option<&str>, v: f64) {
        self.0.push((n.unwrap_or("").into(), format!("{v:?}")));
    }
    fn bool(&mut self, n: Option<&str>, v: bool) {
        self.0.push((n.unwrap_or("").into(), u8::from(v).to_string()));
    }
    fn str(&mut self, _: Option<&str>, _: &str) {}
    fn bytes(&mut self, _: Option<&str>, _: &[u8]) {}
    fn enumeration(&mut self, n: Option<&str>, raw: i128, _: Option<&'static str>) {
        self.0.push((n.unwrap_or("").into(), raw.to_string()));
    }
    fn flags(&mut self, n: Option<&str>, raw: u64) {
        self.0.push((n.unwrap_or("").into(), raw.to_string()));
    }
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, _: usize) {}
    fn end_array(&mut self) {}
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
    fn end_variant(&mut self) {}
}

fn fields_of(r: &UsvlogRecord) -> Vec<(String, String)> {
    let mut c = Collect(Vec::new());
    r.visit(None, &mut c);
    c.0
}

/// The C writer of the USVLOG file: every record of [`records`], through the generated writers.
fn usvlog_writer_c(schema: &Schema) -> String {
    let mut w = String::new();
    for (i, r) in records().iter().enumerate() {
        let rec = schema.records.iter().find(|x| x.name == r.name()).expect("a schema record");
        let body = schema.strukt(rec.body);
        let stem = rec.name.to_ascii_lowercase();
        let _ = writeln!(w, "  {{\n    usvlog_{stem}_t p;\n    size_t k;\n    memset(&p, 0, sizeof p);");
        for (name, v) in fields_of(r) {
            let f = body.fields.iter().find(|f| f.name == name).expect("a field");
            if is_float(schema, &f.ty) {
                let _ = writeln!(w, "    p.{name} = {v}f;");
            } else {
                let _ = writeln!(w, "    p.{name} = {v}u;");
            }
        }
        let _ = writeln!(
            w,
            "    k = usvlog_write_{stem}(buf + n, sizeof buf - n, {}u, &p);\n    if (k == 0) return 3;\n    n += k;\n  }}",
            t_us(i)
        );
    }
    format!(
        r#"#include <stdio.h>
#include <string.h>
#include "usvlog/record_types.h"

static uint8_t buf[4096];

int main(int argc, char **argv) {{
  size_t n = usvlog_write_file_header(buf, sizeof buf, {T0_US}u);
  FILE *f;
  if (argc != 2 || n == 0) return 2;
{w}  f = fopen(argv[1], "wb");
  if (!f || fwrite(buf, 1, n, f) != n) return 1;
  return fclose(f) != 0;
}}
"#
    )
}

/// The C reader: prints the header and every field of every record, through the generated reader
/// and decoders.
fn usvlog_reader_c(schema: &Schema) -> String {
    let mut cases = String::new();
    for rec in &schema.records {
        let stem = rec.name.to_ascii_lowercase();
        let _ = writeln!(
            cases,
            "      case {}: {{\n        usvlog_{stem}_t v;\n        if (usvlog_{stem}_decode(&v, rec.payload, rec.payload_len, NULL) != USVLOG_OK) return 3;",
            rec.name
        );
        for f in schema.strukt(rec.body).fields.iter().filter(|f| !f.is_padding()) {
            if is_float(schema, &f.ty) {
                let _ = writeln!(cases, "        printf(\"{} {} %.9g\\n\", (double)v.{});", rec.name, f.name, f.name);
            } else {
                let _ = writeln!(
                    cases,
                    "        printf(\"{} {} %llu\\n\", (unsigned long long)v.{});",
                    rec.name, f.name, f.name
                );
            }
        }
        let _ = writeln!(cases, "        break;\n      }}");
    }
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "usvlog/record_types.h"

int main(int argc, char **argv) {{
  static uint8_t buf[1 << 16];
  usvlog_file_header_t fh;
  usvlog_framed_record_t rec;
  size_t len, pos = USVLOG_FILE_HEADER_SIZE;
  int rc;
  FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
  if (!f) return 1;
  len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (usvlog_read_file_header(&fh, buf, len) != USVLOG_OK) return 4;
  printf("header t0_us %llu\n", (unsigned long long)fh.t0_us);
  while ((rc = usvlog_next_record(buf, len, &pos, &rec)) == 1) {{
    printf("record t_us %llu\n", (unsigned long long)rec.header.t_us);
    switch (rec.header.type) {{
{cases}      default: return 5;
    }}
  }}
  return rc == 0 ? 0 : 6;
}}
"#
    )
}

/// One RLOG R2 key the C program writes: name, declared type, the C statements that encode its
/// value into `val`/`vn`, the Rust value, and the value `logspec dump` must show.
struct Key {
    key: &'static str,
    ty: &'static str,
    c: &'static str,
    rust: R2Value,
    dump: Value,
}

#[allow(clippy::approx_constant)] // 3.14159 is test data, written by the C program as well
fn rlog_keys() -> Vec<Key> {
    let s = |t: &str| Utf8U32 { text: t.to_string() };
    vec![
        Key {
            key: "/Bool",
            ty: "boolean",
            c: "rlog_r2_value_boolean_t x; x.value = 1; rc = rlog_r2_value_boolean_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::Boolean { value: true },
            dump: json!(true),
        },
        Key {
            key: "/Int",
            ty: "int64",
            c: "rlog_r2_value_int64_t x; x.value = -1234567890123LL; rc = rlog_r2_value_int64_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::Int64 { value: -1_234_567_890_123 },
            dump: json!(-1_234_567_890_123i64),
        },
        Key {
            key: "/Float",
            ty: "float",
            c: "rlog_r2_value_float_t x; x.value = 0.1f; rc = rlog_r2_value_float_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::Float { value: 0.1 },
            dump: json!(f64::from(0.1f32)),
        },
        Key {
            key: "/Drive/Speed",
            ty: "double",
            c: "rlog_r2_value_double_t x; x.value = 3.14159; rc = rlog_r2_value_double_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::Double { value: 3.14159 },
            dump: json!(3.14159),
        },
        Key {
            key: "/Name",
            ty: "string",
            c: "rlog_r2_value_string_t x; x.value = \"r\\303\\251gion\"; x.value_len = 7u; rc = rlog_r2_value_string_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::String { value: "région".into() },
            dump: json!("région"),
        },
        Key {
            key: "/Doubles",
            ty: "double[]",
            c: "static const double d[] = {1.5, -2.25, 1e300}; rlog_r2_value_double_array_t x; x.value = d; x.value_count = 3u; rc = rlog_r2_value_double_array_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::DoubleArray { value: vec![1.5, -2.25, 1e300] },
            dump: json!([1.5, -2.25, 1e300]),
        },
        Key {
            key: "/Ints",
            ty: "int64[]",
            c: "static const int64_t d[] = {1, -2}; rlog_r2_value_int64_array_t x; x.value = d; x.value_count = 2u; rc = rlog_r2_value_int64_array_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::Int64Array { value: vec![1, -2] },
            dump: json!([1, -2]),
        },
        Key {
            key: "/Bools",
            ty: "boolean[]",
            c: "static const uint8_t d[] = {1, 0, 1}; rlog_r2_value_boolean_array_t x; x.value = d; x.value_count = 3u; rc = rlog_r2_value_boolean_array_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::BooleanArray { value: vec![true, false, true] },
            dump: json!([true, false, true]),
        },
        Key {
            key: "/Floats",
            ty: "float[]",
            c: "static const float d[] = {0.5f, -8.0f}; rlog_r2_value_float_array_t x; x.value = d; x.value_count = 2u; rc = rlog_r2_value_float_array_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::FloatArray { value: vec![0.5, -8.0] },
            dump: json!([0.5, -8.0]),
        },
        Key {
            key: "/Strings",
            ty: "string[]",
            c: "rlog_utf8_u32_t d[2]; rlog_r2_value_string_array_t x; d[0].text = \"ab\"; d[0].text_len = 2u; d[1].text = \"\"; d[1].text_len = 0u; x.value = d; x.value_count = 2u; rc = rlog_r2_value_string_array_encode(val, sizeof val, &x, &vn);",
            rust: R2Value::StringArray { value: vec![s("ab"), s("")] },
            dump: json!(["ab", ""]),
        },
    ]
}

const CYCLES: [f64; 2] = [0.02, 0.04];

/// The C writer of the RLOG R2 file: a revision byte, then per cycle a timestamp, the key
/// definitions (first cycle) and one value per key.
fn rlog_writer_c() -> String {
    let mut body = String::new();
    for (c, t) in CYCLES.iter().enumerate() {
        let _ = writeln!(body, "  {{\n    rlog_r2_body_timestamp_t ts;\n    ts.timestamp = {t:?};\n    ADD(rlog_r2_message_write_timestamp(buf + n, sizeof buf - n, &ts));\n  }}");
        for (i, k) in rlog_keys().iter().enumerate() {
            if c == 0 {
                let _ = writeln!(
                    body,
                    "  {{\n    rlog_r2_body_key_def_t d;\n    d.key_id = {i};\n    d.key = \"{}\";\n    d.key_len = {}u;\n    d.type = \"{}\";\n    d.type_len = {}u;\n    ADD(rlog_r2_message_write_key_def(buf + n, sizeof buf - n, &d));\n  }}",
                    k.key,
                    k.key.len(),
                    k.ty,
                    k.ty.len()
                );
            }
            let _ = writeln!(
                body,
                "  {{\n    uint8_t val[256];\n    size_t vn = 0;\n    int rc;\n    rlog_r2_body_field_t v;\n    {{ {} }}\n    if (rc != RLOG_OK) return 4;\n    v.key_id = {i};\n    v.value = val;\n    v.value_len = vn;\n    ADD(rlog_r2_message_write_field(buf + n, sizeof buf - n, &v));\n  }}",
                k.c
            );
        }
    }
    format!(
        r#"#include <stdio.h>
#include <string.h>
#include "rlog/record_types.h"

static uint8_t buf[4096];
#define ADD(k) do {{ size_t k_ = (k); if (k_ == 0) return 3; n += k_; }} while (0)

int main(int argc, char **argv) {{
  size_t n = rlog_write_file_header(buf, sizeof buf, 2u);
  FILE *f;
  if (argc != 2 || n != 1) return 2;
{body}  f = fopen(argv[1], "wb");
  if (!f || fwrite(buf, 1, n, f) != n) return 1;
  return fclose(f) != 0;
}}
"#
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_roundtrip").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles a C program against `include/` with every warning an error; returns the executable.
fn build_c(dir: &Path, name: &str, src: &str) -> PathBuf {
    let path = dir.join(format!("{name}.c"));
    std::fs::write(&path, src).unwrap();
    let exe = dir.join(name);
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let out = Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wsign-conversion", "-Werror"])
        .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I", include, "-o"])
        .arg(&exe)
        .arg(&path)
        .output()
        .expect("run gcc");
    assert!(out.status.success(), "gcc on {}:\n{}", path.display(), String::from_utf8_lossy(&out.stderr));
    exe
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Acceptance: the C-written USVLOG file dumps to exactly the values the program wrote, and the
/// Rust writer makes the same bytes from them.
fn c_writes_usvlog_dump_reads_it_rust_writes_the_same_bytes() {
    let schema = schema();
    let dir = scratch("usvlog-c-writes");
    let exe = build_c(&dir, "writer", &usvlog_writer_c(&schema));
    let file = dir.join("c.usvlog");
    run_ok(Command::new(&exe).arg(&file), "the C writer");
    let c_bytes = std::fs::read(&file).unwrap();

    let out = logspec(&["dump", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    let recs = records();
    assert_eq!(lines.len(), recs.len(), "one line per record the C program wrote");
    for (i, (line, r)) in lines.iter().zip(&recs).enumerate() {
        assert_eq!(line["t_us"], json!(t_us(i)));
        assert_eq!(line["name"], json!(r.name()));
        let fields = line["fields"].as_object().expect("fields");
        let want = fields_of(r);
        assert_eq!(fields.len(), want.len(), "{}", r.name());
        for (name, v) in want {
            let want: Value = serde_json::from_str(&v).unwrap();
            // Floats: dump widens the f32 exactly; compare as f32.
            let got = &fields[&name];
            let same = match (got.as_f64(), want.as_f64()) {
                (Some(g), Some(w)) if got.is_f64() || want.is_f64() => g as f32 == w as f32,
                _ => json_diff(got, &want, &name).is_none(),
            };
            assert!(same, "{}.{name}: dump shows {got}, the C program wrote {want}", r.name());
        }
    }

    let mut w =
        Writer::<_, Usvlog>::new(Vec::new(), &FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: T0_US }).unwrap();
    for (i, r) in recs.iter().enumerate() {
        w.write(t_us(i), r).unwrap();
    }
    assert_eq!(w.finish().unwrap(), c_bytes, "the Rust writer makes the bytes the C writers made");
}

/// Acceptance: the C-written RLOG R2 file dumps to exactly the values the program wrote, and the
/// Rust RLOG writer makes the same bytes from them.
fn c_writes_rlog_r2_dump_reads_it_rust_writes_the_same_bytes() {
    let dir = scratch("rlog-c-writes");
    let exe = build_c(&dir, "writer", &rlog_writer_c());
    let file = dir.join("c.rlog");
    run_ok(Command::new(&exe).arg(&file), "the C writer");
    let c_bytes = std::fs::read(&file).unwrap();

    let out = logspec(&["dump", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    let keys = rlog_keys();
    let mut want = Vec::new();
    for t in CYCLES {
        for k in &keys {
            want.push(json!({"t": t, "key": k.key, "type": k.ty, "value": k.dump}));
        }
    }
    assert_eq!(lines.len(), want.len(), "one line per value the C program wrote");
    for (i, (g, w)) in lines.iter().zip(&want).enumerate() {
        assert_eq!(json_diff(g, w, &format!("line {}", i + 1)), None, "dump: {g}\nwritten: {w}");
    }

    let mut w = rlog::Writer::new(Vec::new(), Revision::R2);
    for (c, t) in CYCLES.iter().enumerate() {
        w.timestamp(*t).unwrap();
        for (i, k) in keys.iter().enumerate() {
            if c == 0 {
                w.define(i as i16, k.key, Some(k.ty)).unwrap();
            }
            w.value(i as i16, rlog::Value::R2(k.rust.clone())).unwrap();
        }
    }
    assert_eq!(w.finish().unwrap(), c_bytes, "the Rust RLOG writer makes the bytes the C writers made");
}

/// R1 too: a C program writes an R1 file with the typed R1 field writers
/// (`rlog_r1_message_write_field_<type>`, which write the value's type code themselves), one key
/// of every R1 value type; dump and the Rust writer agree.
fn c_writes_rlog_r1_dump_reads_it_rust_writes_the_same_bytes() {
    use logspec::formats::rlog::{R1Value, Utf8U16};
    // (key, dump type, C statements writing key id KEY's value, Rust value, dump value)
    let keys: Vec<(&str, &str, &str, R1Value, Value)> = vec![
        (
            "/Speed",
            "double",
            "rlog_r1_value_double_t x; x.value = -2.5; ADD(rlog_r1_message_write_field_double(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::Double { value: -2.5 },
            json!(-2.5),
        ),
        (
            "/Mode",
            "string",
            "rlog_r1_value_string_t x; x.value = \"auto\"; x.value_len = 4u; ADD(rlog_r1_message_write_field_string(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::String { value: "auto".into() },
            json!("auto"),
        ),
        (
            "/Ids",
            "int[]",
            "static const int32_t d[] = {7, -8, 2147483647}; rlog_r1_value_integer_array_t x; x.value = d; x.value_count = 3u; ADD(rlog_r1_message_write_field_integer_array(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::IntegerArray { value: vec![7, -8, 2_147_483_647] },
            json!([7, -8, 2_147_483_647]),
        ),
        (
            "/Enabled",
            "boolean",
            "rlog_r1_value_boolean_t x; x.value = 1; ADD(rlog_r1_message_write_field_boolean(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::Boolean { value: true },
            json!(true),
        ),
        (
            "/Removed",
            "null",
            "ADD(rlog_r1_message_write_field_null(buf + n, sizeof buf - n, KEY));",
            R1Value::Null {},
            Value::Null,
        ),
        (
            "/Flags",
            "boolean[]",
            "static const uint8_t d[] = {1, 0, 1}; rlog_r1_value_boolean_array_t x; x.value = d; x.value_count = 3u; ADD(rlog_r1_message_write_field_boolean_array(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::BooleanArray { value: vec![true, false, true] },
            json!([true, false, true]),
        ),
        (
            "/Count",
            "int",
            "rlog_r1_value_integer_t x; x.value = -123456; ADD(rlog_r1_message_write_field_integer(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::Integer { value: -123_456 },
            json!(-123_456),
        ),
        (
            "/Gains",
            "double[]",
            "static const double d[] = {0.5, -1.25}; rlog_r1_value_double_array_t x; x.value = d; x.value_count = 2u; ADD(rlog_r1_message_write_field_double_array(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::DoubleArray { value: vec![0.5, -1.25] },
            json!([0.5, -1.25]),
        ),
        (
            "/Names",
            "string[]",
            "static const rlog_utf8_u16_t d[] = {{\"a\", 1u}, {\"bc\", 2u}}; rlog_r1_value_string_array_t x; x.value = d; x.value_count = 2u; ADD(rlog_r1_message_write_field_string_array(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::StringArray { value: vec![Utf8U16 { text: "a".into() }, Utf8U16 { text: "bc".into() }] },
            json!(["a", "bc"]),
        ),
        (
            "/Raw",
            "byte",
            "rlog_r1_value_byte_t x; x.value = 0xa5u; ADD(rlog_r1_message_write_field_byte(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::Byte { value: 0xa5 },
            json!("a5"),
        ),
        (
            "/Blob",
            "byte[]",
            "static const uint8_t d[] = {0x00, 0xff, 0x10}; rlog_r1_value_byte_array_t x; x.value = d; x.value_len = 3u; ADD(rlog_r1_message_write_field_byte_array(buf + n, sizeof buf - n, KEY, &x));",
            R1Value::ByteArray { value: vec![0x00, 0xff, 0x10] },
            json!("00ff10"),
        ),
    ];
    let mut body = String::new();
    for (c, t) in CYCLES.iter().enumerate() {
        let _ = writeln!(body, "  {{\n    rlog_r1_body_timestamp_t ts;\n    ts.timestamp = {t:?};\n    ADD(rlog_r1_message_write_timestamp(buf + n, sizeof buf - n, &ts));\n  }}");
        for (i, (key, _, fill, _, _)) in keys.iter().enumerate() {
            if c == 0 {
                let _ = writeln!(
                    body,
                    "  {{\n    rlog_r1_body_key_def_t d;\n    d.key_id = {i};\n    d.key = \"{key}\";\n    d.key_len = {}u;\n    ADD(rlog_r1_message_write_key_def(buf + n, sizeof buf - n, &d));\n  }}",
                    key.len()
                );
            }
            let _ = writeln!(body, "  {{\n    {}\n  }}", fill.replace("KEY", &i.to_string()));
        }
    }
    let prog = format!(
        "#include <stdio.h>\n#include <string.h>\n#include \"rlog/record_types.h\"\n\nstatic uint8_t buf[4096];\n#define ADD(k) do {{ size_t k_ = (k); if (k_ == 0) return 3; n += k_; }} while (0)\n\nint main(int argc, char **argv) {{\n  size_t n = rlog_write_file_header(buf, sizeof buf, 1u);\n  FILE *f;\n  if (argc != 2 || n != 1) return 2;\n{body}  f = fopen(argv[1], \"wb\");\n  if (!f || fwrite(buf, 1, n, f) != n) return 1;\n  return fclose(f) != 0;\n}}\n"
    );
    let dir = scratch("rlog-r1-c-writes");
    let exe = build_c(&dir, "writer", &prog);
    let file = dir.join("c.rlog");
    run_ok(Command::new(&exe).arg(&file), "the C writer");
    let c_bytes = std::fs::read(&file).unwrap();

    let out = logspec(&["dump", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    let mut want = Vec::new();
    for t in CYCLES {
        for (key, ty, _, _, dump) in &keys {
            want.push(json!({"t": t, "key": key, "type": ty, "value": dump}));
        }
    }
    assert_eq!(lines.len(), want.len(), "one line per value the C program wrote");
    for (i, (g, w)) in lines.iter().zip(&want).enumerate() {
        assert_eq!(json_diff(g, w, &format!("line {}", i + 1)), None, "dump: {g}\nwritten: {w}");
    }

    let mut w = rlog::Writer::new(Vec::new(), Revision::R1);
    for (c, t) in CYCLES.iter().enumerate() {
        w.timestamp(*t).unwrap();
        for (i, (key, _, _, value, _)) in keys.iter().enumerate() {
            if c == 0 {
                w.define(i as i16, key, None).unwrap();
            }
            w.value(i as i16, rlog::Value::R1(value.clone())).unwrap();
        }
    }
    assert_eq!(w.finish().unwrap(), c_bytes, "the Rust RLOG writer makes the bytes the C writers made");
}

/// A file the Rust writer made, read by C through the generated reader and decoders.
fn rust_writes_usvlog_c_reads_it() {
    let schema = schema();
    let dir = scratch("usvlog-rust-writes");
    let exe = build_c(&dir, "reader", &usvlog_reader_c(&schema));
    let recs = records();
    let mut w =
        Writer::<_, Usvlog>::new(Vec::new(), &FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: T0_US }).unwrap();
    let mut expected = format!("header t0_us {T0_US}\n");
    for (i, r) in recs.iter().enumerate() {
        w.write(t_us(i), r).unwrap();
        let _ = writeln!(expected, "record t_us {}", t_us(i));
        for (name, v) in fields_of(r) {
            let _ = writeln!(expected, "{} {name} {v}", r.name());
        }
    }
    let bytes = w.finish().unwrap();
    let file = dir.join("rust.usvlog");
    std::fs::write(&file, &bytes).unwrap();
    let got = run_ok(Command::new(&exe).arg(&file), "the C reader");
    // Floats: C prints %.9g, Rust the shortest round trip; compare as f32 values.
    for (g, e) in got.lines().zip(expected.lines()) {
        let (gp, gv) = g.rsplit_once(' ').unwrap();
        let (ep, ev) = e.rsplit_once(' ').unwrap();
        assert_eq!(gp, ep);
        if gv != ev {
            assert_eq!(gv.parse::<f32>().unwrap(), ev.parse::<f32>().unwrap(), "{g} vs {e}");
        }
    }
    assert_eq!(got.lines().count(), expected.lines().count());

    // The same file through the Rust reader, as a cross-check of the expected text.
    let (h, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    assert_eq!(h.t0_us, T0_US);
    let mut n = 0;
    while let Some(ev) = r.next_event() {
        let Event::Record { record, .. } = ev.unwrap() else { panic!("unknown record") };
        assert_eq!(record, recs[n]);
        n += 1;
    }
    assert_eq!(n, recs.len());
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let gcc = [Need::Program("gcc")];
    vec![
        tools::trial(
            "c_writes_usvlog_dump_reads_it_rust_writes_the_same_bytes",
            &gcc,
            c_writes_usvlog_dump_reads_it_rust_writes_the_same_bytes,
        ),
        tools::trial(
            "c_writes_rlog_r2_dump_reads_it_rust_writes_the_same_bytes",
            &gcc,
            c_writes_rlog_r2_dump_reads_it_rust_writes_the_same_bytes,
        ),
        tools::trial(
            "c_writes_rlog_r1_dump_reads_it_rust_writes_the_same_bytes",
            &gcc,
            c_writes_rlog_r1_dump_reads_it_rust_writes_the_same_bytes,
        ),
        tools::trial("rust_writes_usvlog_c_reads_it", &gcc, rust_writes_usvlog_c_reads_it),
    ]
}
