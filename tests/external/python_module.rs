//! The generated pure-Python module (`python/usvlog.py`) against independent references: its
//! `dump` must spell every line of every bundled USVLOG sample exactly as `logspec dump` does
//! (floats included), and its `read_usvlog` columns, with numpy and without, must equal the
//! reference reader's JSON Lines (from usv-autopilot's `read_timeseries_bin`) and `logspec dump`
//! value for value. Its fast whole-file walk must agree with its streaming `Reader` on cut and
//! corrupted files: same records, same error. The checks themselves are in `python_module.py`.
//!
//! python3 and numpy are external tools: a trial that needs a missing one is reported as ignored
//! (under `CI=true`, failed), never passed.

use crate::common;
use crate::tools;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{data, logspec};
use tools::Need;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `python3 tests/python_module.py VERB ARGS...` with `python/` on the module path.
fn check(args: &[&str], stdin: Option<&str>) -> Output {
    check_in(&root().join("python"), args, stdin)
}

/// `python3 tests/python_module.py VERB ARGS...` with `modules` on the module path.
fn check_in(modules: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new("python3")
        .arg(root().join("tests/python_module.py"))
        .args(args)
        .env("PYTHONPATH", modules)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python_module.py {args:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Every `.usvlog` sample in tests/data/usvlog (each comes with its reference outputs).
fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data("usvlog"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "usvlog"))
        .collect();
    v.sort();
    assert!(!v.is_empty());
    v
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python_module").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `python3 usvlog.py dump FILE` and `logspec dump FILE`: the same text, line for line.
fn dump_spells_every_line_as_logspec_dump() {
    for sample in samples() {
        let py = Command::new("python3")
            .arg(root().join("python/usvlog.py"))
            .arg("dump")
            .arg(&sample)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("run python3");
        assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
        let rust = logspec(&["dump", sample.to_str().unwrap()]);
        assert!(rust.status.success());
        let (py, rust) = (String::from_utf8(py.stdout).unwrap(), String::from_utf8(rust.stdout).unwrap());
        let (py, rust): (Vec<&str>, Vec<&str>) = (py.lines().collect(), rust.lines().collect());
        let differ: Vec<usize> = (0..py.len().max(rust.len())).filter(|&i| py.get(i) != rust.get(i)).collect();
        assert!(
            differ.is_empty(),
            "{}: {} of {} lines differ; first, line {}:\n  python:  {:?}\n  logspec: {:?}",
            sample.display(),
            differ.len(),
            rust.len(),
            differ[0] + 1,
            py.get(differ[0]),
            rust.get(differ[0])
        );
    }
}

/// A float's JSON spelling in the module equals `logspec dump`'s (`logspec::json::float`, Rust's
/// `{:?}`) for seeded random doubles, random floats widened (the USVLOG case, where two shortest
/// spellings can tie), and the edges of the decimal/exponent switch.
fn floats_spell_as_logspec_dump() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut values = vec![
        0.0,
        -0.0,
        1.0,
        2.0,
        0.1,
        1e-4,
        1e-5,
        9.999e-5,
        1e15,
        1e16,
        1e17,
        9_999_999_999_999_998.0,
        1e22,
        1e300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    values.extend(values.clone().iter().map(|v| -v));
    for _ in 0..20_000 {
        let bits = next();
        values.push(f64::from_bits(bits));
        values.push(f64::from(f32::from_bits(bits as u32)));
        // Small magnitudes, where USVLOG's values live.
        values.push(f64::from(f32::from_bits((bits as u32 & 0x807f_ffff) | (((bits >> 40) as u32 % 40 + 100) << 23))));
    }
    let input: String = values.iter().map(|v| format!("{}\n", hex(&v.to_le_bytes()))).collect();
    let out = check(&["floats"], Some(&input));
    let got = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), values.len());
    let mut bad = Vec::new();
    for (v, g) in values.iter().zip(&got) {
        let mut want = String::new();
        logspec::json::float(&mut want, *v);
        if want != *g {
            bad.push(format!("{v:e}: python {g}, logspec {want}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} floats differ:\n{}",
        bad.len(),
        values.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `read_usvlog(path, numpy=...)` against the reference JSON Lines, the reference summary and
/// `logspec dump`, for every sample.
fn columns(numpy: &str) {
    let dir = scratch(&format!("columns{numpy}"));
    for sample in samples() {
        let stem = sample.file_stem().unwrap().to_str().unwrap();
        let dump = dir.join(format!("{stem}.logspec.jsonl"));
        let rust = logspec(&["dump", sample.to_str().unwrap()]);
        assert!(rust.status.success());
        std::fs::write(&dump, &rust.stdout).unwrap();
        let expected = data(&format!("usvlog/{stem}.expected.jsonl"));
        let summary = data(&format!("usvlog/{stem}.expected.summary.json"));
        let out = check(
            &[
                "columns",
                sample.to_str().unwrap(),
                numpy,
                summary.to_str().unwrap(),
                expected.to_str().unwrap(),
                dump.to_str().unwrap(),
            ],
            None,
        );
        let said = String::from_utf8(out.stdout).unwrap();
        let values: usize = said.trim().strip_prefix("ok ").and_then(|n| n.parse().ok()).expect("ok N");
        // Two references, each with every value of every record (timestamps included).
        assert!(values > 2 * 5000, "{said}");
    }
}

fn read_without_numpy_equals_the_references() {
    columns("0");
}

fn read_with_numpy_equals_the_references() {
    columns("1");
}

/// Cut, corrupted and re-lengthed copies of the sample: `read` (the whole-file walk) returns the
/// records the streaming `Reader` yields and raises its error, with `partial` holding them.
fn faults(numpy: &str) {
    let out = check(&["faults", data("usvlog/step.usvlog").to_str().unwrap(), numpy], None);
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.starts_with("ok "), "{said}");
}

fn read_faults_match_the_reader_without_numpy() {
    faults("0");
}

fn read_faults_match_the_reader_with_numpy() {
    faults("1");
}

/// The module generated (by `logspec gen`) from `tests/data/history/usvlog.toml`: the USVLOG schema
/// bumped to schema id 2, whose lock keeps schema id 1, the layout of the real sample files.
/// Returns the folder holding `usvlog.py`.
fn history_module(dir: &Path) -> PathBuf {
    let schemas = root().join("tests/data/history");
    let out =
        logspec(&["gen", "--lang", "python", "--schemas", schemas.to_str().unwrap(), "--root", dir.to_str().unwrap()]);
    assert!(out.status.success(), "logspec gen: {}", String::from_utf8_lossy(&out.stderr));
    let module = dir.join("python");
    let text = std::fs::read_to_string(module.join("usvlog.py")).unwrap();
    assert!(text.contains("FW_MODEL_SCHEMA = 2\n") && text.contains("LAYOUTS = {2: RECORDS, 1: RECORDS_1}"));
    module
}

/// `python3 DIR/usvlog.py dump FILE`: its lines, or the message of its failure.
fn module_dump(module: &Path, file: &Path) -> Result<String, String> {
    module_dump_with(module, file, &[])
}

/// `python3 DIR/usvlog.py dump FILE ARGS...`.
fn module_dump_with(module: &Path, file: &Path, args: &[&str]) -> Result<String, String> {
    let py = Command::new("python3")
        .arg(module.join("usvlog.py"))
        .arg("dump")
        .arg(file)
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    if py.status.success() {
        Ok(String::from_utf8(py.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&py.stderr).into_owned())
    }
}

/// The real sample (written by the firmware under schema id 1) through the module generated from
/// the schema bumped to id 2: its dump is the Rust reader's (`logspec dump --schema`, which reads
/// it through `logspec_ir::history`) line for line, and `read_usvlog`'s columns equal the
/// independent reference reader's output and that dump (`numpy`: "1" numpy arrays, "0" lists).
/// An id the lock does not know is refused.
fn older_schema_id(numpy: &str) {
    let dir = scratch(&format!("history{numpy}"));
    let module = history_module(&dir);
    let schema = root().join("tests/data/history/usvlog.toml");
    for sample in samples() {
        let rust = logspec(&["dump", "--schema", schema.to_str().unwrap(), sample.to_str().unwrap()]);
        assert!(rust.status.success(), "{}", String::from_utf8_lossy(&rust.stderr));
        let rust = String::from_utf8(rust.stdout).unwrap();
        let py = module_dump(&module, &sample).unwrap();
        assert!(rust.contains("\"name\":\"REC_SENSOR_GNSS\"") && rust.contains("\"valid\":"), "the old GNSS layout");
        let (py, rust): (Vec<&str>, Vec<&str>) = (py.lines().collect(), rust.lines().collect());
        assert_eq!(py.len(), rust.len(), "{}", sample.display());
        if let Some(i) = (0..py.len()).find(|&i| py[i] != rust[i]) {
            panic!("{}: line {} differs:\n  python:  {}\n  logspec: {}", sample.display(), i + 1, py[i], rust[i]);
        }
        let stem = sample.file_stem().unwrap().to_str().unwrap();
        let dump = dir.join(format!("{stem}.logspec.jsonl"));
        std::fs::write(&dump, rust.join("\n") + "\n").unwrap();
        let expected = data(&format!("usvlog/{stem}.expected.jsonl"));
        let summary = data(&format!("usvlog/{stem}.expected.summary.json"));
        let args = [
            "columns",
            sample.to_str().unwrap(),
            numpy,
            summary.to_str().unwrap(),
            expected.to_str().unwrap(),
            dump.to_str().unwrap(),
        ];
        let said = String::from_utf8(check_in(&module, &args, None).stdout).unwrap();
        let values: usize = said.trim().strip_prefix("ok ").and_then(|n| n.parse().ok()).expect("ok N");
        assert!(values > 2 * 5000, "{said}");
    }
    // The same file with schema id 7 in its header: no layout for it.
    let mut bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    bytes[6..10].copy_from_slice(&7u32.to_le_bytes());
    let seven = dir.join("seven.usvlog");
    std::fs::write(&seven, bytes).unwrap();
    let err = module_dump(&module, &seven).unwrap_err();
    assert!(err.contains("fw_model_schema 7 is not one this reader knows (2, 1)"), "{err}");
}

fn a_file_of_an_older_schema_id_reads_with_the_lock_layout() {
    older_schema_id("0");
}

fn a_file_of_an_older_schema_id_reads_with_the_lock_layout_numpy() {
    older_schema_id("1");
}

/// A file of the current schema id (2) written with the module's `encode_record`, the changed
/// record included: `logspec dump --schema` reads it with the new layout and prints what the
/// module's own dump prints.
fn a_file_of_the_current_schema_id_reads_with_the_new_layout() {
    let dir = scratch("history_current");
    let module = history_module(&dir);
    let file = dir.join("v2.usvlog");
    let script = r#"
import sys, usvlog
out = usvlog.encode_struct("FileHeader", {"fw_model_schema": usvlog.FW_MODEL_SCHEMA, "t0_us": 7})
out += usvlog.encode_record(usvlog.REC_SENSOR_GNSS, {"x": 1.5, "y": -2.0, "cog": 0.25, "sog": 3.0,
    "status": usvlog.GnssStatus.VALID | usvlog.GnssStatus.RTK, "num_sats": 11, "hdop": 0.75}, 100)
out += usvlog.encode_record(usvlog.REC_ACTUATOR_REQ, {"u_s_req": 0.5, "u_d_req": -0.5, "src": usvlog.ActSrc.MANUAL}, 200)
open(sys.argv[1], "wb").write(out)
"#;
    let py = Command::new("python3")
        .args(["-c", script, file.to_str().unwrap()])
        .env("PYTHONPATH", &module)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let schema = root().join("tests/data/history/usvlog.toml");
    let rust = logspec(&["dump", "--schema", schema.to_str().unwrap(), file.to_str().unwrap()]);
    assert!(rust.status.success(), "{}", String::from_utf8_lossy(&rust.stderr));
    let rust = String::from_utf8(rust.stdout).unwrap();
    assert!(rust.contains("\"status\":3,\"num_sats\":11") && rust.contains("\"hdop\":0.75"), "{rust}");
    assert_eq!(module_dump(&module, &file).unwrap(), rust);
}

/// The schema of `tests/data/history/usvlog.toml` as the file with schema id `id` was written:
/// the current one (2) or the lock's (1), rebuilt by `logspec_ir::history`.
fn history_schema(id: u64) -> logspec::ir::ir::Schema {
    let path = root().join("tests/data/history/usvlog.toml");
    let current = logspec::codegen::compile_file(&path).unwrap_or_else(|e| panic!("{}", e.render()));
    if current.format.schema_id.as_ref().unwrap().value == id {
        return current;
    }
    let (_, lock) = logspec::ir::lock::read_next_to(&path).unwrap();
    let history = logspec::ir::history::history(&current, &lock.expect("the lock")).unwrap();
    history.into_iter().find(|s| s.format.schema_id.as_ref().unwrap().value == id).expect("the id in the lock")
}

/// A `logspec dump` line with its enum and flags fields by name, from the schema's own tables (the
/// IR): an enum value by its name (the number when unnamed), flags as the names of their set bits
/// in bit order, then the number of the unnamed bits when there are any.
fn with_names(schema: &logspec::ir::ir::Schema, mut line: serde_json::Value) -> serde_json::Value {
    use logspec::ir::ir::{Ty, TypeDef};
    use serde_json::Value;
    let Some(name) = line["name"].as_str() else { return line };
    let record = schema.records.iter().find(|r| r.name == name).expect("a record of the schema");
    let fields = line["fields"].as_object_mut().unwrap();
    for f in &schema.strukt(record.body).fields {
        let Ty::Named(id) = f.ty else { continue };
        let Some(v) = fields.get_mut(&f.name) else { continue };
        let n = v.as_u64().unwrap();
        match schema.ty(id) {
            TypeDef::Enum(e) => {
                if let Some(named) = e.values.iter().find(|x| x.value as u64 == n) {
                    *v = Value::from(named.name.clone());
                }
            }
            TypeDef::Flags(fl) => {
                let mut bits: Vec<_> = fl.flags.iter().collect();
                bits.sort_by_key(|b| b.bit);
                let mut out: Vec<Value> =
                    bits.iter().filter(|b| n >> b.bit & 1 == 1).map(|b| Value::from(b.name.clone())).collect();
                let rest = bits.iter().fold(n, |r, b| r & !(1u64 << b.bit));
                if rest != 0 {
                    out.push(Value::from(rest));
                }
                *v = Value::Array(out);
            }
            _ => {}
        }
    }
    line
}

/// `dump --names` of the module equals `logspec dump --schema` with the enum and flags numbers
/// replaced by the schema's names (`with_names`), line for line: the real schema-1 sample (its
/// enums and flags through the lock's layouts), and a schema-2 file with named values, a value the
/// schema does not name and flags bits it does not name. The records' repr shows them by name too.
fn enum_and_flags_values_by_name() {
    let dir = scratch("names");
    let module = history_module(&dir);
    let file = dir.join("v2.usvlog");
    let script = r#"
import sys, usvlog
out = usvlog.encode_struct("FileHeader", {"fw_model_schema": usvlog.FW_MODEL_SCHEMA, "t0_us": 7})
for src, status in [(usvlog.ActSrc.MANUAL, usvlog.GnssStatus.VALID | usvlog.GnssStatus.RTK), (7, 0), (2, 0x81)]:
    out += usvlog.encode_record(usvlog.REC_ACTUATOR_REQ, {"u_s_req": 0.5, "u_d_req": -0.5, "src": src}, 200)
    out += usvlog.encode_record(usvlog.REC_SENSOR_GNSS, {"x": 1.5, "y": -2.0, "cog": 0.25, "sog": 3.0,
        "status": status, "num_sats": 11, "hdop": 0.75}, 100)
open(sys.argv[1], "wb").write(out)
r = list(usvlog.Reader(sys.argv[1]))
print(repr(r[0]))
print(repr(r[1]))
print(repr(r[2]))
print(repr(r[3]))
print(repr(r[5]))
"#;
    let py = Command::new("python3")
        .args(["-c", script, file.to_str().unwrap()])
        .env("PYTHONPATH", &module)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let reprs = String::from_utf8(py.stdout).unwrap();
    let reprs: Vec<&str> = reprs.lines().collect();
    assert!(
        reprs[0].contains("name='REC_ACTUATOR_REQ', fields={'u_s_req': 0.5, 'u_d_req': -0.5, 'src': ActSrc.MANUAL}")
    );
    assert!(reprs[1].contains("'status': GnssStatus.VALID|GnssStatus.RTK, 'num_sats': 11"), "{}", reprs[1]);
    assert!(reprs[2].contains("'src': ActSrc(7)}"), "{}", reprs[2]);
    assert!(reprs[3].contains("'status': GnssStatus(0),"), "{}", reprs[3]);
    assert!(reprs[4].contains("'status': GnssStatus.VALID|GnssStatus(0x80),"), "{}", reprs[4]);

    let schema = root().join("tests/data/history/usvlog.toml");
    for (file, id) in [(data("usvlog/step.usvlog"), 1), (file, 2)] {
        let layout = history_schema(id);
        let rust = logspec(&["dump", "--schema", schema.to_str().unwrap(), file.to_str().unwrap()]);
        assert!(rust.status.success(), "{}", String::from_utf8_lossy(&rust.stderr));
        let want: Vec<serde_json::Value> = String::from_utf8(rust.stdout)
            .unwrap()
            .lines()
            .map(|l| with_names(&layout, serde_json::from_str(l).unwrap()))
            .collect();
        let got = module_dump_with(&module, &file, &["--names"]).unwrap();
        let got: Vec<serde_json::Value> = got.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(got.len(), want.len(), "{}", file.display());
        let named = want.iter().filter(|l| l.to_string().contains("\"src\":\"")).count();
        assert!(named > 0, "{}: no enum value by name", file.display());
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!("{} line {}:\n  python:    {}\n  reference: {}", file.display(), i + 1, got[i], want[i]);
        }
    }
}

/// The module of the CDR test schema (`codegen/tests/schemas/cdr.toml`: natural alignment,
/// strings with their NUL) against mcap-ros2-support's CDR encoder and decoder on an equivalent
/// ROS 2 definition: `encode_struct` writes the reference's payload (after its encapsulation
/// header), `decode_struct` reads it back to the values, the reference decodes what the module
/// wrote; and a file of framed records reads the same through the module's `dump` as through
/// `logspec dump --schema` (the IR interpreter). In the schema's byte order, little-endian, and
/// again with the schema big-endian against the reference's big-endian CDR.
fn the_cdr_module_agrees_with_mcap_ros2_support() {
    for big in [false, true] {
        cdr_module(big);
    }
}

fn cdr_module(big: bool) {
    let mut text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/cdr.toml")).unwrap();
    if big {
        text = text.replace("endian = \"little\"", "endian = \"big\"");
    }
    let dir = scratch(if big { "cdr-be" } else { "cdr" });
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let schema_path = schemas.join("cdr.toml");
    std::fs::write(&schema_path, &text).unwrap();
    let schema = schema_path.to_str().unwrap();
    let out =
        logspec(&["gen", "--lang", "python", "--schemas", schemas.to_str().unwrap(), "--root", dir.to_str().unwrap()]);
    assert!(out.status.success(), "logspec gen: {}", String::from_utf8_lossy(&out.stderr));
    let file = dir.join("records.cdr");
    let code = format!(
        "{}\n{}",
        crate::c_cdr::PYTHON.replace("sys.stdout.buffer.write(enc(msg))", ""),
        r#"
import cdr
from mcap_ros2._dynamic import generate_dynamic
ref = enc(msg)
payload = ref[4:]
vals = dict(flag=1, value=2.5, label="hi", level=1, items=[dict(tag=3, value=-1.0)],
            header=dict(stamp=dict(sec=-2, nanosec=7), frame_id="map"), fixed=[1, -2, 3], tail=9, samples=[0.5],
            last=0x0102030405060708)
mine = cdr.encode_struct("Sample", vals)
assert mine == payload[:len(mine)] and set(payload[len(mine):]) <= {0} and len(payload) - len(mine) <= 3, (mine.hex(), payload.hex())
assert cdr.decode_struct("Sample", payload) == vals
dec = generate_dynamic("cdr/Sample", DEF)["cdr/Sample"]
big = os.environ.get("CDR_BE") == "1"
back = dec((b"\x00\x00\x00\x00" if big else b"\x00\x01\x00\x00") + mine)
assert (back.flag, back.value, back.label, back.level, back.items[0].tag, back.items[0].value) == (1, 2.5, "hi", 1, 3, -1.0)
assert (back.header.stamp.sec, back.header.stamp.nanosec, back.header.frame_id) == (-2, 7, "map")
assert (list(back.fixed), back.tail, list(back.samples), back.last) == ([1, -2, 3], 9, [0.5], 0x0102030405060708)
assert cdr.encode_struct("Text", {"text": "hello"}) == (b"\x00\x00\x00\x06" if big else b"\x06\x00\x00\x00") + b"hello\x00"
assert cdr.encode_struct("Text", {"text": ""}) == (b"\x00\x00\x00\x01" if big else b"\x01\x00\x00\x00") + b"\x00"
assert cdr.decode_struct("Text", b"\x00\x00\x00\x00") == {"text": ""}
with open(sys.argv[1], "wb") as f:
    f.write(b"CDR1" + cdr.encode_record(1, vals) + cdr.encode_record(2, {"text": "h\u00e9"}) + cdr.encode_record(1, vals))
"#
    );
    let run = Command::new("python3")
        .args(["-c", &code, file.to_str().unwrap()])
        .env("PYTHONPATH", dir.join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CDR_BE", if big { "1" } else { "0" })
        .output()
        .expect("run python3");
    assert!(run.status.success(), "big-endian {big}: {}", String::from_utf8_lossy(&run.stderr));
    let p = file.to_str().unwrap();
    let ours = logspec(&["dump", "--schema", schema, p]);
    assert!(ours.status.success(), "logspec dump: {}", String::from_utf8_lossy(&ours.stderr));
    let theirs = Command::new("python3").arg(dir.join("python").join("cdr.py")).args(["dump", p]).output().unwrap();
    assert!(theirs.status.success(), "{}", String::from_utf8_lossy(&theirs.stderr));
    let ours = String::from_utf8_lossy(&ours.stdout);
    assert_eq!(ours.lines().count(), 3, "{ours}");
    assert_eq!(String::from_utf8_lossy(&theirs.stdout), ours, "the module's dump against the interpreter's");
}

/// This module's trials, run by `tests/external/main.rs`.
/// The module of a schema with a sync and a CRC (`codegen/tests/schemas/checked.toml`):
/// `encode_record` makes the bytes built independently (tests/common/checked.rs, its own
/// CRC-32C), the `Reader` verifies every CRC, and a corrupted length field, a flipped byte or
/// garbage between records costs that region only: the module's `dump` prints the lines
/// `logspec dump --schema` prints, reports the region it passed over at the same offset, and
/// fails at its end as `logspec dump` does; a cut file still ends in a truncation.
fn a_checked_framing_resynchronises_as_logspec_does() {
    use common::checked::{file, record, sample, SCHEMA};
    let dir = scratch("checked");
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    std::fs::copy(SCHEMA, schemas.join("checked.toml")).unwrap();
    let out =
        logspec(&["gen", "--lang", "python", "--schemas", schemas.to_str().unwrap(), "--root", dir.to_str().unwrap()]);
    assert!(out.status.success(), "logspec gen: {}", String::from_utf8_lossy(&out.stderr));
    let module = dir.join("python").join("checked.py");

    let py = |code: &str| {
        let out = Command::new("python3")
            .args(["-c", code])
            .env("PYTHONPATH", dir.join("python"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("run python3");
        assert!(out.status.success(), "{code}:\n{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    // The writer: the module's records against the independent bytes.
    let got = py("import checked, sys; sys.stdout.buffer.write(checked.encode_record(1, {'value': 2.0, 'count': 2}, 200) + checked.encode_record(2, {'text': 'hi'}, 250))");
    assert_eq!(got, [record(1, 200, &sample(2.0, 2)), record(2, 250, b"\x02hi")].concat());

    let (good, at) = file(6);
    let mut cases = Vec::new();
    let mut bad = good.clone();
    bad[at[2] + 3..at[2] + 5].copy_from_slice(&0xFFFFu16.to_le_bytes());
    cases.push(("length", bad));
    let mut bad = good.clone();
    bad[at[4] + 14] ^= 0x10;
    cases.push(("flipped", bad));
    let garbage = [0xA3, 0x95, 0x01, 0x06, 0x00, 1, 2, 0xA3, 0x00, 0xFF, 0xA3];
    cases.push(("garbage", [&good[..at[2]], &garbage[..], &good[at[2]..]].concat()));
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    cases.push(("last", bad));
    cases.push(("cut", good[..good.len() - 2].to_vec()));
    cases.push(("good", good));
    for (what, bytes) in cases {
        let path = dir.join(format!("{what}.chk"));
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let ours = logspec(&["dump", "--schema", SCHEMA, p]);
        let theirs = Command::new("python3").arg(&module).args(["dump", p]).output().expect("run python3");
        let (ours_out, theirs_out) = (String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&theirs.stdout));
        assert_eq!(theirs_out, ours_out, "{what}: the module's dump against logspec's");
        assert_eq!(theirs.status.success(), ours.status.success(), "{what}: exit status");
        let (ours_err, theirs_err) = (String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
        if what == "good" {
            assert!(ours.status.success() && theirs_err.is_empty(), "{what}: {ours_err}{theirs_err}");
            continue;
        }
        // The same place, and the same count of bytes passed over.
        let place = |err: &str| {
            let i = err.find("byte ").map(|i| i + 5).unwrap_or_else(|| panic!("{what}: no offset in {err}"));
            let tail = &err[i..];
            let offset = tail.split(|c: char| !c.is_ascii_digit()).next().unwrap().to_string();
            let passed = tail.find(" bytes passed over").map(|j| {
                let head = &tail[..j];
                head[head.rfind(' ').unwrap() + 1..].to_string()
            });
            (offset, passed)
        };
        assert_eq!(place(&theirs_err), place(&ours_err), "{what}:\nlogspec: {ours_err}\nmodule: {theirs_err}");
        if what == "cut" {
            assert!(ours_err.contains("truncated") && theirs_err.contains("truncated"), "{ours_err}{theirs_err}");
        }
    }
}

/// The MCAP module (`python/mcap.py`, from `schemas/mcap.toml` with its `[framing] trailer`)
/// reads every record of each MCAP test file and stops cleanly at the end magic; a cut or wrong
/// end magic is an error at its offset (the file's length less 8), after every record, as
/// `logspec dump --schema` reports it.
fn the_mcap_module_stops_at_the_end_magic() {
    const READ: &str = "import mcap, sys\nn = 0\ntry:\n    for r in mcap.Reader(sys.argv[1]):\n        n += 1\n    print(n, 'end')\nexcept mcap.DecodeError as e:\n    print(n, e.offset, e)";
    let dir = scratch("mcap-trailer");
    for stem in ["rosbag2_mcap_talker", "gen_mcapros2_zstd", "gen_rosbags_corner"] {
        let good = std::fs::read(data(&format!("ros2/{stem}.mcap"))).unwrap();
        let at = good.len() - 8;
        let mut wrong = good.clone();
        wrong[at + 2] = b'X';
        for (what, bytes) in [("good", good.clone()), ("cut", good[..good.len() - 3].to_vec()), ("wrong", wrong)] {
            let path = dir.join(format!("{stem}-{what}.mcap"));
            std::fs::write(&path, &bytes).unwrap();
            let p = path.to_str().unwrap();
            let ours = logspec(&["dump", "--schema", "schemas/mcap.toml", p]);
            let records = String::from_utf8_lossy(&ours.stdout).lines().count();
            let out = Command::new("python3")
                .args(["-c", READ, p])
                .env("PYTHONPATH", root().join("python"))
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .expect("run python3");
            let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert!(out.status.success(), "{stem} {what}: {}", String::from_utf8_lossy(&out.stderr));
            let want = if what == "good" { format!("{records} end") } else { format!("{records} {at} ") };
            assert!(line.starts_with(&want), "{stem} {what}: {line} (want {want}...)");
            assert_eq!(ours.status.success(), what == "good", "{stem} {what}");
            if what == "wrong" {
                assert!(line.contains("should be 89 4D 43 41 50 30 0D 0A"), "{line}");
            }
        }
    }
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let py = [Need::Program("python3")];
    let numpy = [Need::Program("python3"), Need::PyModule("numpy")];
    vec![
        tools::trial("dump_spells_every_line_as_logspec_dump", &py, dump_spells_every_line_as_logspec_dump),
        tools::trial("floats_spell_as_logspec_dump", &py, floats_spell_as_logspec_dump),
        tools::trial("read_without_numpy_equals_the_references", &py, read_without_numpy_equals_the_references),
        tools::trial("read_with_numpy_equals_the_references", &numpy, read_with_numpy_equals_the_references),
        tools::trial("read_faults_match_the_reader_without_numpy", &py, read_faults_match_the_reader_without_numpy),
        tools::trial("read_faults_match_the_reader_with_numpy", &numpy, read_faults_match_the_reader_with_numpy),
        tools::trial(
            "a_file_of_an_older_schema_id_reads_with_the_lock_layout",
            &py,
            a_file_of_an_older_schema_id_reads_with_the_lock_layout,
        ),
        tools::trial(
            "a_file_of_an_older_schema_id_reads_with_the_lock_layout_numpy",
            &numpy,
            a_file_of_an_older_schema_id_reads_with_the_lock_layout_numpy,
        ),
        tools::trial("enum_and_flags_values_by_name", &py, enum_and_flags_values_by_name),
        tools::trial(
            "the_cdr_module_agrees_with_mcap_ros2_support",
            &[Need::Program("python3"), Need::PyModule("mcap_ros2")],
            the_cdr_module_agrees_with_mcap_ros2_support,
        ),
        tools::trial(
            "a_checked_framing_resynchronises_as_logspec_does",
            &py,
            a_checked_framing_resynchronises_as_logspec_does,
        ),
        tools::trial("the_mcap_module_stops_at_the_end_magic", &py, the_mcap_module_stops_at_the_end_magic),
        tools::trial(
            "a_file_of_the_current_schema_id_reads_with_the_new_layout",
            &py,
            a_file_of_the_current_schema_id_reads_with_the_new_layout,
        ),
    ]
}
