//! WPILib struct and protobuf values against AdvantageScope's own decoders: every value of
//! `tests/data/rlog/*.expected.structs.jsonl` (RLOG files) and of
//! `tests/data/wpilog/gen_wpilib_structs.expected.structs.jsonl` (the bytes taken from WPILib's
//! own reader's dump of that file, `gen_wpilib_structs.expected.jsonl`) decodes to the value
//! AdvantageScope shows, with its documented differences allowed: 64-bit integers are exact
//! here (compared as f64, as AdvantageScope rounds them), `-0`, `NaN` and infinities are numbers
//! here and strings there. `logspec dump` carries the same values under `decoded`.

use crate::scratch;

use std::fs;
use std::path::Path;
use std::process::Command;

use logspec::formats::rlog::{Event, Reader, Value as RlogValue};
use logspec::formats::wpistruct::TypeRegistry;
use serde_json::Value as Json;

fn data(p: &str) -> String {
    format!("{}/tests/data/{p}", env!("CARGO_MANIFEST_DIR"))
}

/// Whether our JSON value equals AdvantageScope's, under the documented differences.
fn same(ours: &Json, theirs: &Json) -> Result<(), String> {
    match (ours, theirs) {
        (Json::Number(a), Json::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            // AdvantageScope converts 64-bit integers with Number(BigInt): compare as f64.
            if a == b && a.is_sign_negative() == b.is_sign_negative() || (a == 0.0 && b == 0.0 && a.is_sign_positive())
            {
                Ok(())
            } else {
                Err(format!("{a} != {b}"))
            }
        }
        (Json::String(a), Json::String(b)) if a == b => Ok(()),
        (Json::Number(_) | Json::String(_), Json::String(s)) if s == "-0" => {
            let v = match ours {
                Json::Number(n) => n.as_f64().unwrap(),
                _ => return Err(format!("{ours} != -0")),
            };
            if v == 0.0 && v.is_sign_negative() {
                Ok(())
            } else {
                Err(format!("{v} != -0"))
            }
        }
        (Json::Bool(a), Json::Bool(b)) if a == b => Ok(()),
        (Json::Null, Json::Null) => Ok(()),
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().try_for_each(|(i, (x, y))| same(x, y).map_err(|e| format!("[{i}]: {e}")))
        }
        (Json::Object(a), Json::Object(b)) => {
            let ka: Vec<&String> = a.keys().collect();
            let kb: Vec<&String> = b.keys().collect();
            if ka != kb {
                return Err(format!("members {ka:?} != {kb:?}"));
            }
            a.iter().try_for_each(|(k, x)| same(x, &b[k]).map_err(|e| format!(".{k}: {e}")))
        }
        _ => Err(format!("{ours} != {theirs}")),
    }
}

/// One expected line against a decode result.
fn check(line: &Json, got: Result<String, String>, at: &str) {
    match (got, line.get("value"), line.get("error")) {
        (Ok(json), Some(want), _) => {
            let ours: Json = serde_json::from_str(&json).unwrap();
            if let Err(e) = same(&ours, want) {
                panic!("{at}: {e}\n ours: {ours}\nthem: {want}");
            }
        }
        (Err(e), None, Some(want)) => {
            let want = want.as_str().unwrap().to_lowercase();
            assert!(e.to_lowercase().contains(&want), "{at}: error {e:?} does not say {want:?}");
        }
        (got, want, err) => panic!("{at}: got {got:?}, want value {want:?} / error {err:?}"),
    }
}

fn lines(p: &str) -> Vec<Json> {
    fs::read_to_string(data(p)).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn bytes_of(v: &RlogValue) -> Option<Vec<u8>> {
    use logspec::formats::rlog::R2Value as R;
    match v {
        RlogValue::R2(R::Raw { value } | R::Struct { value } | R::Proto { value } | R::Other { value }) => {
            Some(value.clone())
        }
        _ => None,
    }
}

/// Every `(timestamp, key, type, bytes)` of an RLOG file, in file order.
fn rlog_values(file: &str) -> Vec<(f64, String, String, Vec<u8>)> {
    let raw = fs::read(data(file)).unwrap();
    let input: Box<dyn std::io::Read> = if file.ends_with(".bin") {
        Box::new(logspec::formats::rlog::net::FrameReader::new(std::io::Cursor::new(raw)))
    } else {
        Box::new(std::io::Cursor::new(raw))
    };
    let mut r = Reader::new(input).unwrap();
    let mut out = Vec::new();
    while let Some(ev) = r.next_event() {
        if let Event::Value { timestamp, key_id, value } = ev.unwrap() {
            let k = r.key(key_id).unwrap();
            if let (Some(t), Some(b)) = (k.declared_type.clone(), bytes_of(&value)) {
                out.push((timestamp, k.name.clone(), t, b));
            }
        }
    }
    out
}

#[test]
fn rlog_struct_values_equal_advantagescope() {
    for stem in ["gen_akit_head_r2_alltypes", "gen_akit_head_r2_stream", "psikit_core_logs_testLog"] {
        let file = if stem.ends_with("stream") { format!("rlog/{stem}.bin") } else { format!("rlog/{stem}.rlog") };
        let values = rlog_values(&file);
        // Every schema of the log first (EXPECTED-FORMAT.md), then the values.
        let mut reg = TypeRegistry::new();
        for (_, k, t, b) in &values {
            reg.offer(k, t, b);
        }
        type Decoded = (f64, String, usize, String, Result<String, String>);
        let mut decoded: Vec<Decoded> = values
            .iter()
            .enumerate()
            .filter(|(_, (_, _, t, _))| TypeRegistry::decodes(t))
            .map(|(i, (ts, k, t, b))| {
                (*ts, k.clone(), i, t.clone(), reg.decode(t, b).map(|v| v.to_json()).map_err(|e| e.to_string()))
            })
            .collect();
        // AdvantageScope's order: timestamp, then key, then record order.
        decoded.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let want = lines(&format!("rlog/{stem}.expected.structs.jsonl"));
        assert_eq!(decoded.len(), want.len(), "{stem}: number of struct values");
        for (n, (line, (ts, k, _, t, got))) in want.iter().zip(decoded).enumerate() {
            assert_eq!(line["name"], k.as_str(), "{stem} line {}", n + 1);
            assert_eq!(line["type"], t.as_str(), "{stem} line {}", n + 1);
            assert_eq!(line["ts"].as_f64().unwrap(), ts, "{stem} line {}", n + 1);
            check(line, got, &format!("{stem} line {} ({k})", n + 1));
        }
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// The 34 struct and proto values of `gen_wpilib_structs.wpilog`: every type width, an enum with
/// an unnamed value, bit-fields, `char[8]`, nested and array structs, a value before its schema,
/// a schema that never appears, and protobuf messages. The bytes are those WPILib's own reader
/// gives (its dump of the file), so this holds without a WPILOG reader.
#[test]
fn wpilib_struct_and_proto_values_equal_advantagescope() {
    let records: Vec<Json> =
        lines("wpilog/gen_wpilib_structs.expected.jsonl").into_iter().filter(|r| r["rec"] == "data").collect();
    let mut reg = TypeRegistry::new();
    for r in &records {
        let (Some(k), Some(t), Some(v)) = (r["name"].as_str(), r["type"].as_str(), r["value"].as_str()) else {
            continue;
        };
        // Values of other types are not hex in this dump (numbers, text).
        if t == "structschema" || t.starts_with("proto:") {
            reg.offer(k, t, &hex(v));
        }
    }
    let want = lines("wpilog/gen_wpilib_structs.expected.structs.jsonl");
    let ours: Vec<&Json> = records.iter().filter(|r| r["type"].as_str().is_some_and(TypeRegistry::decodes)).collect();
    assert_eq!(ours.len(), 34);
    assert_eq!(ours.len(), want.len());
    for (n, (r, line)) in ours.iter().zip(&want).enumerate() {
        assert_eq!(r["name"], line["name"]);
        assert_eq!(r["ts"], line["ts"]);
        let t = r["type"].as_str().unwrap();
        let got = reg.decode(t, &hex(r["value"].as_str().unwrap())).map(|v| v.to_json()).map_err(|e| e.to_string());
        check(line, got, &format!("gen_wpilib_structs value {} ({t})", n + 1));
    }
}

/// A comma between declarations (PsiKit's `int32 pos,double vel`) is read as `;`, with a
/// warning, so the value decodes with both members.
#[test]
fn comma_between_declarations_is_read_as_semicolon() {
    let mut reg = TypeRegistry::new();
    assert!(reg.offer("/.schema/struct:Motor", "structschema", b"int32 pos,double vel"));
    let w = reg.take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("comma"), "{w:?}");
    let mut bytes = (-7i32).to_le_bytes().to_vec();
    bytes.extend(2.5f64.to_le_bytes());
    assert_eq!(reg.decode("struct:Motor", &bytes).unwrap().to_json(), r#"{"pos":-7,"vel":2.5}"#);
}

/// Signed bit-fields are sign-extended (struct.adoc's C semantics; AdvantageScope does not), a
/// wrong size is an error that says what was expected, and a bad schema's error reaches values.
#[test]
fn bit_fields_sizes_and_bad_schemas() {
    let mut reg = TypeRegistry::new();
    reg.offer("/.schema/struct:B", "structschema", b"int8 a:3;uint8 b:4;bool c:1;int16 d");
    assert_eq!(
        reg.decode("struct:B", &[0b1001_1101, 0xff, 0xff]).unwrap().to_json(),
        r#"{"a":-3,"b":3,"c":true,"d":-1}"#
    );
    let e = reg.decode("struct:B", &[0, 0]).unwrap_err().to_string();
    assert!(e.contains("expected 3 bytes") && e.contains("found 2"), "{e}");
    let e = reg.decode("struct:B[]", &[0, 0, 0, 0]).unwrap_err().to_string();
    assert!(e.contains("4 bytes are not a whole number"), "{e}");
    reg.offer("/.schema/struct:Bad", "structschema", b"double x y");
    let e = reg.decode("struct:Bad", &[0; 8]).unwrap_err().to_string();
    assert!(e.contains("does not parse") && e.contains("E0801"), "{e}");
    reg.offer("/.schema/struct:Loop", "structschema", b"Loop next");
    let e = reg.decode("struct:Loop", &[]).unwrap_err().to_string();
    assert!(e.contains("contains itself"), "{e}");
}

/// A log cannot make the decoder recurse without bound: structs nest at most 64 deep, and a
/// cycle through several structs is an error, not a hang.
#[test]
fn deep_and_cyclic_schemas_are_errors() {
    let mut reg = TypeRegistry::new();
    for i in 0..100 {
        reg.offer(&format!("/.schema/struct:S{i}"), "structschema", format!("S{} next;uint8 v", i + 1).as_bytes());
    }
    reg.offer("/.schema/struct:S100", "structschema", b"uint8 v");
    let e = reg.decode("struct:S0", &[0; 101]).unwrap_err().to_string();
    assert!(e.contains("nest more than 64"), "{e}");
    assert_eq!(reg.decode("struct:S90", &[1; 11]).unwrap().to_json().matches("\"v\":1").count(), 11);
    reg.offer("/.schema/struct:A", "structschema", b"B b");
    reg.offer("/.schema/struct:B", "structschema", b"C c");
    reg.offer("/.schema/struct:C", "structschema", b"A a");
    let e = reg.decode("struct:A", &[]).unwrap_err().to_string();
    assert!(e.contains("contains itself (A -> B -> C -> A)"), "{e}");
}

/// `logspec dump` keeps the hex `value` and adds `decoded`, equal to AdvantageScope's values.
#[test]
fn dump_has_decoded_values() {
    let out = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", &data("rlog/psikit_core_logs_testLog.rlog")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let ours: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .filter(|j| j["type"].as_str().is_some_and(|t| t.starts_with("struct:")))
        .collect();
    let want = lines("rlog/psikit_core_logs_testLog.expected.structs.jsonl");
    assert_eq!(ours.len(), want.len());
    for (o, w) in ours.iter().zip(&want) {
        assert!(o["value"].is_string(), "the hex value stays: {o}");
        same(&o["decoded"], &w["value"]).unwrap_or_else(|e| panic!("{o}: {e}"));
    }
    assert!(Path::new(&data("rlog/psikit_core_logs_testLog.rlog")).exists());
}

#[allow(dead_code, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/wpistruct_test.rs"));
}

/// The static Rust types `Builder::compile_struct_schemas` generates decode the first `Custom`
/// value of the test file to the values AdvantageScope shows, as the dynamic decoder does.
#[test]
fn generated_types_decode_custom() {
    use logspec::runtime::Decode;
    let records = lines("wpilog/gen_wpilib_structs.expected.jsonl");
    let first = records.iter().find(|r| r["rec"] == "data" && r["type"] == "struct:Custom").unwrap();
    let bytes = hex(first["value"].as_str().unwrap());
    let c = generated::Custom::decode_exact(&bytes).unwrap();
    assert_eq!(c.state, generated::CustomState::run);
    assert_eq!((c.bits0.a(), c.bits0.b(), c.bits0.flag()), (3, 7, true));
    assert_eq!((c.bits1.c(), c.bits1.d()), (31, 2047));
    assert_eq!((c.bits2.e(), c.bits2.f()), (true, false));
    assert_eq!((c.i32, c.u32, c.i64, c.u64), (-2, 4_000_000_000, -4611686018427387904, u64::MAX));
    assert_eq!(c.inner.id, -1);
    assert_eq!(c.pair[0].id, 2);
    assert!(c.ok);
}

fn logspec(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).output().unwrap();
    assert!(out.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stderr).unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-wpistruct-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// `export` writes a struct's members as columns (`translation.x`), with AdvantageScope's values.
#[test]
fn export_has_struct_columns() {
    let dir = temp_dir("export");
    let rlog = data("rlog/psikit_core_logs_testLog.rlog");
    logspec(&["export", &rlog, "--channel", "TestInput/pose", "--csv", dir.to_str().unwrap()]);
    let csv = fs::read_to_string(dir.join("TestInput_pose.csv")).unwrap();
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("t [s],translation.x,translation.y,rotation.value"));
    let want = lines("rlog/psikit_core_logs_testLog.expected.structs.jsonl");
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), want.len());
    for (row, w) in rows.iter().zip(&want) {
        let cells: Vec<f64> = row.split(',').map(|c| c.parse().unwrap()).collect();
        let v = &w["value"];
        let expected = [
            w["ts"].as_f64().unwrap(),
            v["translation"]["x"].as_f64().unwrap(),
            v["translation"]["y"].as_f64().unwrap(),
            v["rotation"]["value"].as_f64().unwrap(),
        ];
        assert_eq!(cells, expected, "{row}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// MCAP channels of struct keys carry the JSON Schema of the struct (from its IR) and the
/// decoded values; `plot` finds a struct member by `KEY.member`.
#[test]
fn mcap_and_plot_use_struct_members() {
    let dir = temp_dir("mcap");
    let rlog = data("rlog/gen_akit_head_r2_alltypes.rlog");
    let out = dir.join("a.mcap");
    logspec(&["convert", &rlog, "-o", out.to_str().unwrap()]);
    let bytes = fs::read(&out).unwrap();
    let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
    let want = lines("rlog/gen_akit_head_r2_alltypes.expected.structs.jsonl");
    for topic in ["/Pose/Translation", "/Pose/TranslationArr"] {
        let ours: Vec<&mcap::Message> = messages.iter().filter(|m| m.channel.topic == topic).collect();
        let theirs: Vec<&Json> = want.iter().filter(|w| w["name"] == topic).collect();
        assert_eq!(ours.len(), theirs.len(), "{topic}");
        let schema: Json = serde_json::from_slice(&ours[0].channel.schema.as_ref().unwrap().data).unwrap();
        let props = if topic.ends_with("Arr") { &schema["properties"]["value"]["items"] } else { &schema };
        assert_eq!(props["required"], serde_json::json!(["x", "y"]), "{topic}: {schema}");
        for (m, w) in ours.iter().zip(theirs) {
            let v: Json = serde_json::from_slice(&m.data).unwrap();
            let v = if topic.ends_with("Arr") { v["value"].clone() } else { v };
            same(&v, &w["value"]).unwrap_or_else(|e| panic!("{topic}: {e}"));
        }
    }
    let svg = dir.join("p.svg");
    let note = logspec(&["plot", &rlog, "-f", "/Pose/Translation.x", "-o", svg.to_str().unwrap()]);
    let points = want.iter().filter(|w| w["name"] == "/Pose/Translation").count();
    assert!(note.contains(&format!("{points} point(s)")), "{note}");
    let _ = fs::remove_dir_all(&dir);
}

/// `logspec dump` of the WPILOG file made by WPILib's own writer: all 34 struct and proto
/// values carry `decoded` equal to AdvantageScope's values (the first `Custom` value comes before
/// its schema, and before the schema of `Inner` it uses), and the struct type whose schema never
/// appears carries `decode_error`.
#[test]
fn wpilog_dump_has_decoded_values() {
    let out = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", &data("wpilog/gen_wpilib_structs.wpilog")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let ours: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .filter(|j| j["rec"] == "data" && j["type"].as_str().is_some_and(TypeRegistry::decodes))
        .collect();
    let want = lines("wpilog/gen_wpilib_structs.expected.structs.jsonl");
    assert_eq!(ours.len(), 34);
    assert_eq!(ours.len(), want.len());
    for (n, (o, w)) in ours.iter().zip(&want).enumerate() {
        assert_eq!((&o["name"], &o["ts"]), (&w["name"], &w["ts"]));
        assert!(o["value"].is_string(), "the hex value stays: {o}");
        let got = match (&o.get("decoded"), o.get("decode_error")) {
            (Some(d), None) => Ok(d.to_string()),
            (None, Some(Json::String(e))) => Err(e.clone()),
            _ => panic!("line {}: neither decoded nor decode_error: {o}", n + 1),
        };
        check(w, got, &format!("dump line {} ({})", n + 1, o["name"]));
    }
}

/// `export` of a WPILOG file: struct members are columns, nested structs and arrays flattened.
#[test]
fn wpilog_export_has_struct_columns() {
    let dir = temp_dir("wpilog-export");
    let file = data("wpilog/gen_wpilib_structs.wpilog");
    logspec(&["export", &file, "--channel", "/Robot/Pose3d", "--csv", dir.to_str().unwrap()]);
    let csv = fs::read_to_string(dir.join("Robot_Pose3d.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "t [s],translation.x,translation.y,translation.z,rotation.q.w,rotation.q.x,rotation.q.y,rotation.q.z"
    );
    let want: Vec<Json> = lines("wpilog/gen_wpilib_structs.expected.structs.jsonl")
        .into_iter()
        .filter(|w| w["name"] == "/Robot/Pose3d")
        .collect();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), want.len());
    for (row, w) in rows.iter().zip(&want) {
        let cells: Vec<f64> = row.split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cells[0], w["ts"].as_f64().unwrap() / 1e6);
        assert_eq!(cells[1], w["value"]["translation"]["x"].as_f64().unwrap());
        assert_eq!(cells[7], w["value"]["rotation"]["q"]["z"].as_f64().unwrap());
    }
    let _ = fs::remove_dir_all(&dir);
}
