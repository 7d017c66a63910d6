//! RLOG against AdvantageScope's own decoder (the `.expected.json` files in tests/data/rlog),
//! through `logspec dump`; byte-identical round trips through the writer; files written from
//! scratch; and the error behaviour on bad input.

use crate::scratch;

use crate::common;

use std::collections::BTreeMap;

use common::{data, json_diff, jsonl, logspec};
use logspec::formats::rlog::{
    Encoder, Event, R1Value, R2Value, Reader, ReaderOptions, Revision, RlogErrorKind, RlogWriteError, Utf8U32, Value,
    Writer, MAX_LEN,
};
use serde_json::{json, Value as Json};

const FILES: [&str; 8] = [
    "akit_v1.8.1_robotlog.rlog",
    "akit_v1.8.1_robotlog_simulated.rlog",
    "gen_akit_head_r2_alltypes.rlog",
    "gen_akit_head_r2_stream.bin",
    "gen_akit_v1.8.1_r1_alltypes.rlog",
    "gen_akit_v1.8.1_r1_alltypes_newcomer.bin",
    "psikit_core_logs_testLog.rlog",
    "tervay_loggerSwerve2_temp_a.rlog",
];

fn stem(file: &str) -> &str {
    file.rsplit_once('.').map_or(file, |(s, _)| s)
}

/// AdvantageScope's value form for a number: f64, with NaN, the infinities and -0 as strings.
fn number(x: f64) -> Json {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else if x == 0.0 && x.is_sign_negative() {
        json!("-0")
    } else {
        json!(x)
    }
}

/// The kind AdvantageScope's decoder records, and its value form, for one dumped value
/// (`{"type", "value"}` as `logspec dump` prints it). R1 nulls take the key's previous kind.
fn advantagescope_form(ty: &str, value: &Json, previous_kind: Option<&str>) -> (String, Json) {
    let num = |v: &Json| match v {
        Json::String(s) => json!(s), // "NaN", "Infinity", "-Infinity"
        v => number(v.as_f64().expect("a number")),
    };
    let nums = |v: &Json| Json::Array(v.as_array().expect("array").iter().map(num).collect());
    let kind = match ty {
        "null" => {
            let kind = previous_kind.expect("a null after a value").to_string();
            let default = match kind.as_str() {
                "boolean" => json!(false),
                "number" => json!(0),
                "string" | "raw" => json!(""),
                _ => json!([]),
            };
            return (kind, default);
        }
        "boolean" | "boolean[]" | "string" | "string[]" | "json" | "msgpack" => ty.to_string(),
        "int" | "int64" | "double" | "float" => return ("number".into(), num(value)),
        "int[]" | "int64[]" | "double[]" | "float[]" => return ("number[]".into(), nums(value)),
        t if t.starts_with("struct:") => "struct".into(),
        t if t.starts_with("proto:") => "proto".into(),
        // byte, byte[], raw, structschema and unknown types are raw bytes.
        _ => "raw".into(),
    };
    (kind, value.clone())
}

fn dump(file: &str) -> Vec<Json> {
    let out = logspec(&["dump", data(&format!("rlog/{file}")).to_str().unwrap()]);
    assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    jsonl(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn dump_equals_advantagescope_value_for_value() {
    for file in FILES {
        let expected: Json = serde_json::from_str(
            &std::fs::read_to_string(data(&format!("rlog/{}.expected.json", stem(file)))).unwrap(),
        )
        .unwrap();
        assert_eq!(expected["decodeOk"], json!(true));
        // Per key: declared type, kinds in order of first appearance, and [t, value] records.
        type PerKey = (Option<String>, Vec<String>, Vec<Json>);
        let mut ours: BTreeMap<String, PerKey> = BTreeMap::new();
        let r2 = expected["revision"] == json!(2);
        for line in dump(file) {
            let key = line["key"].as_str().expect("every key is defined").to_string();
            let ty = line["type"].as_str().unwrap();
            let entry = ours.entry(key).or_default();
            let (kind, value) = advantagescope_form(ty, &line["value"], entry.1.last().map(String::as_str));
            if !entry.1.contains(&kind) {
                entry.1.push(kind);
            }
            if r2 {
                entry.0 = Some(ty.to_string());
            }
            entry.2.push(json!([number(line["t"].as_f64().unwrap()), value]));
        }
        let fields = expected["fields"].as_object().unwrap();
        assert_eq!(ours.keys().collect::<Vec<_>>(), fields.keys().collect::<Vec<_>>(), "{file}: keys with values");
        for (key, exp) in fields {
            let (declared, kinds, records) = &ours[key];
            assert_eq!(exp["declaredType"], json!(declared), "{file} {key}: declared type");
            assert_eq!(exp["kind"], json!(kinds.join("|")), "{file} {key}: kind");
            if let Some(d) = json_diff(&Json::Array(records.clone()), &exp["records"], &format!("{file} {key}")) {
                panic!("{d}");
            }
        }
    }
}

#[test]
fn info_counts_match_the_reference_summaries() {
    for file in FILES {
        let summary: Json = serde_json::from_str(
            &std::fs::read_to_string(data(&format!("rlog/{}.expected.summary.json", stem(file)))).unwrap(),
        )
        .unwrap();
        let out = logspec(&["info", "--json", data(&format!("rlog/{file}")).to_str().unwrap()]);
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let info: Json = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(info["ok"], json!(true), "{file}");
        assert_eq!(info["revision"], summary["revision"], "{file}");
        assert_eq!(info["cycles"], summary["scan"]["timestamps"], "{file}: timestamps");
        assert_eq!(info["keys_defined"], summary["scan"]["keyDefs"], "{file}: key definitions");
        assert_eq!(info["values"], summary["scan"]["fields"], "{file}: values");
        assert_eq!(info["non_monotonic_timestamps"], summary["scan"]["nonMonotonicTs"], "{file}");
        assert_eq!(info["first_timestamp"].as_f64(), summary["scan"]["firstTs"].as_f64(), "{file}");
        assert_eq!(info["last_timestamp"].as_f64(), summary["scan"]["lastTs"].as_f64(), "{file}");
        if let Some(declared) = summary.get("declaredR2Types") {
            assert_eq!(&info["types"], declared, "{file}: declared types");
        }
    }
}

/// Re-encodes every message of a file with the writer.
fn reencode(bytes: &[u8]) -> Vec<u8> {
    let mut r = Reader::new(bytes).unwrap();
    let mut w = Writer::new(Vec::new(), r.revision());
    while let Some(ev) = r.next_event() {
        match ev.unwrap() {
            Event::Timestamp(t) => w.timestamp(t).unwrap(),
            Event::KeyDef { key_id } => {
                let k = r.key(key_id).unwrap();
                w.define(key_id, &k.name, k.declared_type.as_deref()).unwrap();
            }
            Event::Value { key_id, value, .. } => w.value(key_id, value).unwrap(),
        }
    }
    w.finish().unwrap()
}

#[test]
fn every_file_re_encodes_byte_for_byte() {
    for file in FILES.iter().filter(|f| f.ends_with(".rlog") || f.contains("newcomer")) {
        let bytes = std::fs::read(data(&format!("rlog/{file}"))).unwrap();
        let again = reencode(&bytes);
        let first_diff = bytes.iter().zip(&again).position(|(a, b)| a != b);
        assert!(
            again == bytes,
            "{file}: first difference at byte {first_diff:?} (lengths {} vs {})",
            bytes.len(),
            again.len()
        );
    }
}

fn r2(v: R2Value) -> Value {
    Value::R2(v)
}

#[test]
fn files_written_from_scratch_decode_equal() {
    for rev in [Revision::R1, Revision::R2] {
        type Cycles<'a> = Vec<(f64, Vec<(&'a str, Option<&'a str>, Value)>)>;
        let cycles: Cycles = match rev {
            Revision::R1 => vec![
                (
                    0.02,
                    vec![
                        ("/A", None, Value::R1(R1Value::Double { value: 1.5 })),
                        ("/B", None, Value::R1(R1Value::String { value: "héllo".into() })),
                        ("/C", None, Value::R1(R1Value::IntegerArray { value: vec![1, -1, i32::MIN] })),
                    ],
                ),
                (
                    0.04,
                    vec![
                        ("/A", None, Value::R1(R1Value::Double { value: f64::NAN })),
                        ("/C", None, Value::R1(R1Value::Null {})),
                    ],
                ),
            ],
            Revision::R2 => vec![
                (
                    1.0,
                    vec![
                        ("/D", None, r2(R2Value::Double { value: -0.0 })),
                        ("/I", None, r2(R2Value::Int64 { value: i64::MAX })),
                        (
                            "/S",
                            None,
                            r2(R2Value::StringArray {
                                value: vec![Utf8U32 { text: "a".into() }, Utf8U32 { text: "".into() }],
                            }),
                        ),
                        (
                            "/P",
                            Some("struct:Translation2d"),
                            r2(R2Value::Struct { value: vec![0, 0, 0, 0, 0, 0, 0xf0, 0x3f] }),
                        ),
                        ("/U", Some("URCLr2_periodic"), r2(R2Value::Other { value: vec![1, 2, 3] })),
                    ],
                ),
                (
                    1.02,
                    vec![
                        ("/D", None, r2(R2Value::Double { value: 0.0 })),
                        ("/I", None, r2(R2Value::Int64 { value: i64::MAX })),
                    ],
                ),
            ],
        };
        let mut enc = Encoder::new(rev);
        let mut bytes = Vec::new();
        for (t, values) in &cycles {
            enc.encode_cycle(*t, values.iter().map(|(k, ty, v)| (*k, *ty, v.clone())), &mut bytes).unwrap();
        }
        let mut file = vec![rev.byte()];
        file.extend_from_slice(&bytes);
        let mut r = Reader::new(&file[..]).unwrap();
        let mut got = Vec::new();
        while let Some(c) = r.next_cycle() {
            let c = c.unwrap();
            let named: Vec<(String, Value)> =
                c.values.into_iter().map(|(id, v)| (r.key(id).unwrap().name.clone(), v)).collect();
            got.push((c.timestamp, named));
        }
        assert_eq!(got.len(), 2, "{rev}");
        for ((t, want), (gt, have)) in cycles.iter().zip(&got) {
            assert_eq!(t, gt);
            // The encoder drops values whose bytes did not change (the R2 int64), and keeps -0.0 -> 0.0.
            let want: Vec<_> = want
                .iter()
                .filter(|(k, _, _)| !(rev == Revision::R2 && *t == 1.02 && *k == "/I"))
                .map(|(k, _, v)| (k.to_string(), v.clone()))
                .collect();
            assert_eq!(want.len(), have.len());
            for ((wk, wv), (hk, hv)) in want.iter().zip(have) {
                assert_eq!(wk, hk);
                // NaN != NaN: compare the encodings.
                assert_eq!(format!("{wv:?}"), format!("{hv:?}"), "{rev} {wk}");
            }
        }
        // A newcomer snapshot decodes to every key's current value.
        let mut snap = Vec::new();
        enc.newcomer(&mut snap);
        let mut r = Reader::new(&snap[..]).unwrap();
        let c = r.next_cycle().unwrap().unwrap();
        assert_eq!(c.timestamp, cycles[1].0);
        assert_eq!(c.values.len(), cycles[0].1.len(), "{rev}: one value per key");
    }
}

#[test]
fn the_writer_refuses_lengths_advantagescope_cannot_read() {
    let mut w = Writer::new(Vec::new(), Revision::R2);
    w.define(0, "/Big", Some("string")).unwrap();
    let err = w.value(0, r2(R2Value::String { value: "x".repeat(MAX_LEN + 1) })).unwrap_err();
    assert!(matches!(err, RlogWriteError::TooLong { len: 32768, .. }), "{err}");
    assert!(err.to_string().contains("32767"), "{err}");
    w.value(0, r2(R2Value::String { value: "x".repeat(MAX_LEN) })).unwrap();
    let err = w.define(1, &"k".repeat(40000), Some("double")).unwrap_err();
    assert!(err.to_string().contains("the key is 40000 long"), "{err}");
    // A value that is not what its key declares.
    let err = w.value(0, r2(R2Value::Double { value: 1.0 })).unwrap_err();
    assert!(matches!(err, RlogWriteError::TypeMismatch { .. }), "{err}");
    let mut w = Writer::new(Vec::new(), Revision::R1);
    let err = w.value(3, Value::R1(R1Value::DoubleArray { value: vec![0.0; 40000] })).unwrap_err();
    assert!(matches!(err, RlogWriteError::TooLong { .. }), "{err}");
    // Nothing of a refused message was written.
    assert_eq!(w.finish().unwrap(), [1]);
}

#[test]
fn a_truncated_file_returns_everything_before_the_cut_then_the_offset() {
    let bytes = std::fs::read(data("rlog/akit_v1.8.1_robotlog.rlog")).unwrap();
    let cut = &bytes[..149880];
    let mut r = Reader::new(cut).unwrap();
    let mut values = 0;
    let err = loop {
        match r.next_event() {
            Some(Ok(Event::Value { .. })) => values += 1,
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("no error"),
        }
    };
    // AdvantageScope refuses the whole file; we keep 9439 of its 9440 values.
    assert_eq!(values, 9439);
    assert!(matches!(err.kind, RlogErrorKind::Truncated { .. }), "{err}");
    assert!(err.offset < 149880 && err.to_string().contains(&format!("at byte {}", err.offset)), "{err}");
    assert!(r.next_event().is_none());
    // The CLI prints the values, then fails naming the offset.
    let dir = scratch::temp_dir().join(format!("logspec-rlog-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.rlog");
    std::fs::write(&path, cut).unwrap();
    let out = logspec(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 9439);
    assert!(String::from_utf8_lossy(&out.stderr).contains("ends inside a message"));
}

#[test]
fn a_file_without_revision_byte_is_refused_then_read_as_r1_on_request() {
    let bytes = std::fs::read(data("rlog/tervay_loggerSwerve2_temp_a.rlog")).unwrap();
    let headerless = &bytes[1..];
    let err = Reader::new(headerless).err().unwrap();
    assert!(matches!(err.kind, RlogErrorKind::NoRevision));
    assert!(err.to_string().contains("without a revision byte") && err.to_string().contains("--assume-r1"), "{err}");
    let mut a = Reader::new(&bytes[..]).unwrap();
    let mut b = Reader::with_options(headerless, ReaderOptions { assume_revision: Some(Revision::R1) }).unwrap();
    assert!(!b.has_revision_byte());
    loop {
        match (a.next_event(), b.next_event()) {
            (None, None) => break,
            (Some(x), Some(y)) => assert_eq!(x.unwrap(), y.unwrap()),
            _ => panic!("different lengths"),
        }
    }
}

#[test]
fn repeated_and_backwards_timestamps_are_kept() {
    // AdvantageScope's file mode treats these as corruption and slides past them.
    let mut w = Writer::new(Vec::new(), Revision::R1);
    w.define(0, "/X", None).unwrap();
    for (i, t) in [0.5, 0.5, 0.25, 0.0].into_iter().enumerate() {
        w.timestamp(t).unwrap();
        w.value(0, Value::R1(R1Value::Integer { value: i as i32 })).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut r = Reader::new(&bytes[..]).unwrap();
    let mut ts = Vec::new();
    while let Some(c) = r.next_cycle() {
        let c = c.unwrap();
        ts.push((c.timestamp, c.values.len()));
    }
    assert_eq!(ts, [(0.5, 1), (0.5, 1), (0.25, 1), (0.0, 1)]);
}

#[test]
fn bad_r2_values_are_reported_with_key_and_offset_and_skipped() {
    let mut w = Writer::new(Vec::new(), Revision::R2);
    w.timestamp(1.0).unwrap();
    w.define(0, "/D", Some("double")).unwrap();
    w.define(1, "/B", Some("boolean")).unwrap();
    w.value(1, r2(R2Value::Boolean { value: true })).unwrap();
    let mut bytes = w.finish().unwrap();
    // A "double" value of 3 bytes, for key 0, then a good value again.
    bytes.extend_from_slice(&[2, 0, 0, 0, 3, 1, 2, 3]);
    bytes.extend_from_slice(&[2, 0, 1, 0, 1, 0]);
    let mut r = Reader::new(&bytes[..]).unwrap();
    let mut seen = Vec::new();
    while let Some(ev) = r.next_event() {
        match ev {
            Ok(Event::Value { key_id, .. }) => seen.push(key_id),
            Ok(_) => {}
            Err(e) => {
                assert!(e.is_recoverable());
                let m = e.to_string();
                assert!(m.contains("key \"/D\"") && m.contains(&format!("at byte {}", bytes.len() - 14)), "{m}");
                seen.push(-1);
            }
        }
    }
    assert_eq!(seen, [1, -1, 1]);
}

#[test]
fn dump_of_the_stream_capture_equals_its_payloads_as_a_file() {
    // The stream's frames, concatenated without keep-alives, are an RLOG file.
    let a = dump("gen_akit_head_r2_stream.bin");
    assert_eq!(a.len(), 88);
    assert!(a.iter().all(|l| l["t"].as_f64().unwrap() >= 1.294567));
}

/// What the generated `R1Message` decoder makes of an R1 file, message by message from the byte
/// after the revision: the events, then (offset, error) where it stops. The reader decodes R1
/// through the generated views, in place in its read buffer; it must agree with this exactly.
fn generated_r1(bytes: &[u8]) -> (Vec<Event>, Option<(u64, String)>) {
    use logspec::formats::rlog::{R1Body, R1Message};
    use logspec::runtime::{Cursor, Decode, DecodeErrorKind, Endian};
    let mut events = Vec::new();
    let mut t = 0.0;
    let mut at = 1;
    while at < bytes.len() {
        let mut c = Cursor::new(&bytes[at..]);
        match R1Message::decode(&mut c, Endian::Big) {
            Ok(m) => events.push(match m.body {
                R1Body::Timestamp { timestamp } => {
                    t = timestamp;
                    Event::Timestamp(timestamp)
                }
                R1Body::KeyDef { key_id, .. } => Event::KeyDef { key_id },
                R1Body::Field { key_id, value } => Event::Value { timestamp: t, key_id, value: Value::R1(value) },
            }),
            Err(e) => {
                let kind = match e.kind {
                    DecodeErrorKind::UnexpectedEof { needed, available } => {
                        format!(
                            "{:?}",
                            RlogErrorKind::Truncated { needed: e.offset + needed, available: e.offset + available }
                        )
                    }
                    _ => format!("{:?}", RlogErrorKind::Decode(e)),
                };
                return (events, Some((at as u64, kind)));
            }
        }
        at += c.position();
    }
    (events, None)
}

/// A `Read` that hands out at most `step` bytes per call, so that messages are cut by the end of
/// the reader's buffer at every possible place.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// Every event and the final error of a reader, through `next_event` and `next_event_ref` (which
/// must agree with each other, and the key a value comes with with the key table).
fn read_r1(bytes: &[u8], step: usize) -> (Vec<Event>, Option<(u64, String)>) {
    let mut owned = Reader::new(Trickle { bytes, step }).unwrap();
    let mut lent = Reader::new(Trickle { bytes, step }).unwrap();
    let mut events = Vec::new();
    loop {
        let a = owned.next_event();
        let b = lent.next_event_ref().map(|r| {
            r.map(|ev| {
                if let logspec::formats::rlog::EventRef::Value { key_id, key, .. } = ev {
                    assert_eq!(key.map(|k| &k.name), owned.key(key_id).map(|k| &k.name));
                }
                ev.to_event()
            })
        });
        match (a, b) {
            (None, None) => return (events, None),
            (Some(Ok(x)), Some(Ok(y))) => {
                assert_eq!(format!("{x:?}"), format!("{y:?}"));
                events.push(x);
            }
            (Some(Err(x)), Some(Err(y))) => {
                assert_eq!((x.offset, format!("{:?}", x.kind)), (y.offset, format!("{:?}", y.kind)));
                assert!(owned.next_event().is_none() && lent.next_event_ref().is_none());
                return (events, Some((x.offset, format!("{:?}", x.kind))));
            }
            (a, b) => panic!("next_event {a:?}, next_event_ref {:?}", b.map(|r| r.map_err(|e| e.to_string()))),
        }
    }
}

#[test]
fn the_r1_fast_path_agrees_with_the_generated_decoder_on_good_cut_and_corrupted_files() {
    let mut inputs = Vec::new();
    for file in ["akit_v1.8.1_robotlog.rlog", "gen_akit_v1.8.1_r1_alltypes.rlog", "tervay_loggerSwerve2_temp_a.rlog"] {
        let bytes = std::fs::read(data(&format!("rlog/{file}"))).unwrap();
        assert_eq!(bytes[0], 1, "{file}");
        inputs.push(bytes);
    }
    // Cut and corrupted copies (a fixed pseudo-random sequence): every message kind, value code,
    // length and string byte gets hit in some copy.
    let mut random = common::xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut next = move |n: usize| (random() % n as u64) as usize;
    let small = inputs[1].clone();
    let head = inputs[2][..6000].to_vec();
    for base in [&small, &head] {
        for i in 0..150 {
            let mut b = base.clone();
            if i % 3 == 0 {
                b.truncate(1 + next(b.len() - 1));
            }
            for _ in 0..1 + i % 4 {
                let at = 1 + next(b.len() - 1);
                b[at] = match i % 5 {
                    0 => next(12) as u8,
                    1 => 0xff,
                    2 => 0x80 | next(64) as u8,
                    _ => next(256) as u8,
                };
            }
            inputs.push(b);
        }
    }
    let mut errors = 0;
    for (i, bytes) in inputs.iter().enumerate() {
        let want = generated_r1(bytes);
        for step in [usize::MAX, 7] {
            if step == 7 && i >= 3 && i % 10 != 0 {
                continue;
            }
            let got = read_r1(bytes, step);
            assert_eq!(got.1, want.1, "input {i}, {step} bytes per read");
            // By their Debug text: NaN values are equal there.
            let (got, want) = (format!("{:?}", got.0), format!("{:?}", want.0));
            let same = got.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
            assert!(got == want, "input {i}, {step} bytes per read: differ at {:?}", &got[same.saturating_sub(80)..]);
        }
        errors += usize::from(want.1.is_some());
    }
    // The corrupted copies do reach the error paths.
    assert!(errors > 200, "{errors}");
}

/// A reader's events and errors as text, through `next_event` (`each = None`) or through
/// `try_for_each_event_ref`, stopped by its closure after every `n`th event (`each = Some(n)`)
/// and then resumed, alternating with `next_event_ref` for one event; recoverable errors are
/// recorded and reading goes on, as `logspec dump` does.
/// `step == 0` reads the bytes in place (`Reader::from_slice`) instead of through `Read`.
fn events_as_text(bytes: &[u8], step: usize, each: Option<usize>) -> Vec<String> {
    if step == 0 {
        return match Reader::from_slice(bytes) {
            Ok(r) => reader_events_as_text(r, each),
            Err(_) => Vec::new(),
        };
    }
    match Reader::new(Trickle { bytes, step }) {
        Ok(r) => reader_events_as_text(r, each),
        Err(_) => Vec::new(),
    }
}

/// [`events_as_text`] of a reader.
fn reader_events_as_text<R: std::io::Read, I: logspec::runtime::Input>(
    mut r: Reader<R, I>,
    each: Option<usize>,
) -> Vec<String> {
    use std::ops::ControlFlow;
    let mut out = Vec::new();
    let error = |out: &mut Vec<String>, e: &logspec::formats::rlog::RlogError| {
        out.push(format!("error at {} (key {:?}): {:?}", e.offset, e.key, e.kind));
        e.is_recoverable()
    };
    match each {
        None => {
            while let Some(ev) = r.next_event() {
                match ev {
                    Ok(ev) => out.push(format!("{ev:?}")),
                    Err(e) if error(&mut out, &e) => {}
                    Err(_) => break,
                }
            }
        }
        Some(n) => loop {
            let mut seen = 0;
            let flow = r.try_for_each_event_ref(|ev| {
                out.push(format!("{:?}", ev.to_event()));
                seen += 1;
                if seen == n {
                    ControlFlow::Break(seen)
                } else {
                    ControlFlow::Continue(())
                }
            });
            match flow {
                Ok(ControlFlow::Break(k)) => {
                    assert_eq!(k, n);
                    match r.next_event_ref() {
                        Some(Ok(ev)) => out.push(format!("{:?}", ev.to_event())),
                        Some(Err(e)) if error(&mut out, &e) => {}
                        Some(Err(_)) | None => break,
                    }
                }
                Ok(ControlFlow::Continue(())) => break,
                Err(e) if error(&mut out, &e) => {}
                Err(_) => break,
            }
        },
    }
    out
}

#[test]
fn for_each_event_ref_yields_what_next_event_does_on_good_cut_and_corrupted_files() {
    let mut inputs = Vec::new();
    for file in FILES {
        inputs.push(std::fs::read(data(&format!("rlog/{file}"))).unwrap());
    }
    // Cut and corrupted copies of an R1 and an R2 file (a fixed pseudo-random sequence).
    let mut random = common::xorshift(0x2545_f491_4f6c_dd1du64);
    let mut next = move |n: usize| (random() % n as u64) as usize;
    let r1 = std::fs::read(data("rlog/gen_akit_v1.8.1_r1_alltypes.rlog")).unwrap();
    let r2 = std::fs::read(data("rlog/gen_akit_head_r2_alltypes.rlog")).unwrap();
    assert_eq!((r1[0], r2[0]), (1, 2));
    for base in [&r1, &r2] {
        for i in 0..100 {
            let mut b = base.clone();
            if i % 3 == 0 {
                b.truncate(1 + next(b.len() - 1));
            }
            for _ in 0..1 + i % 3 {
                let at = 1 + next(b.len() - 1);
                b[at] = match i % 4 {
                    0 => next(12) as u8,
                    1 => 0xff,
                    _ => next(256) as u8,
                };
            }
            inputs.push(b);
        }
    }
    let (mut errors, mut recovered) = (0, 0);
    for (i, bytes) in inputs.iter().enumerate() {
        let want = events_as_text(bytes, usize::MAX, None);
        // Step 0: in place, from the slice (`Reader::from_slice`).
        for (step, each) in
            [(usize::MAX, usize::MAX), (7, usize::MAX), (usize::MAX, 3), (5, 1), (0, usize::MAX), (0, 2)]
        {
            let got = events_as_text(bytes, step, Some(each));
            let same = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
            assert!(
                got == want,
                "input {i}, {step} bytes per read (0: in place), stopping every {each} events: first difference at event {same}: \
                 {:?} against next_event's {:?}",
                got.get(same),
                want.get(same)
            );
        }
        let n = want.iter().filter(|e| e.starts_with("error")).count();
        errors += usize::from(n > 0);
        recovered += usize::from(n > 1);
    }
    // The corrupted copies do reach the error paths, and reading goes on after R2 value errors.
    assert!(errors > 100 && recovered > 5, "{errors} inputs with errors, {recovered} with several");
}

/// Whether the oracle below passes over the values of a key id: those of even key ids, every
/// value code, and the doubles (R1 code 5) of every other one.
fn skipped(key_id: i16, code: u8) -> bool {
    key_id % 2 == 0 || code == 5
}

/// The events of a reader told to pass over values ([`Reader::skip_values`]) as a scan does:
/// right after each key definition, the key's codes that [`skipped`] names.
fn skipping_events_as_text<R: std::io::Read, I: logspec::runtime::Input>(mut r: Reader<R, I>) -> Vec<String> {
    use logspec::formats::rlog::EventRef;
    use std::ops::ControlFlow;
    let mut out = Vec::new();
    loop {
        let flow = r.try_for_each_event_ref(|ev| {
            out.push(format!("{:?}", ev.to_event()));
            match ev {
                EventRef::KeyDef { key_id, .. } => ControlFlow::Break(key_id),
                _ => ControlFlow::Continue(()),
            }
        });
        match flow {
            Ok(ControlFlow::Break(key_id)) => {
                for code in 0..=10 {
                    if skipped(key_id, code) {
                        r.skip_values(key_id, code);
                    }
                }
            }
            Ok(ControlFlow::Continue(())) => break,
            Err(e) => {
                out.push(format!("error at {} (key {:?}): {:?}", e.offset, e.key, e.kind));
                if !e.is_recoverable() {
                    break;
                }
            }
        }
    }
    out
}

/// The generic path's events (`next_event_ref`, every value decoded), without those a reader
/// that passes over the [`skipped`] values leaves out: the values of a defined key whose code
/// it names (R2: code 0), and in R2 the error of such a value that does not decode.
fn generic_events_without_skipped(bytes: &[u8]) -> Vec<String> {
    use logspec::formats::rlog::{EventRef, ValueRef};
    let Ok(mut r) = Reader::from_slice(bytes) else { return Vec::new() };
    let r2 = r.revision() == Revision::R2;
    let mut out = Vec::new();
    // Key ids defined so far, and each key name's id.
    let mut defined = std::collections::HashSet::new();
    let mut ids: BTreeMap<String, i16> = BTreeMap::new();
    while let Some(ev) = r.next_event_ref() {
        match ev {
            Ok(ev) => {
                match ev {
                    EventRef::KeyDef { key_id, key } => {
                        defined.insert(key_id);
                        ids.insert(key.name.clone(), key_id);
                    }
                    EventRef::Value { key_id, value, .. } if defined.contains(&key_id) => {
                        let code = match value {
                            ValueRef::R1(v) => v.tag() as u8,
                            ValueRef::R2(_) => 0,
                        };
                        if skipped(key_id, code) {
                            continue;
                        }
                    }
                    _ => {}
                }
                out.push(format!("{:?}", ev.to_event()));
            }
            Err(e) => {
                let passed_over = r2
                    && matches!(e.kind, RlogErrorKind::Decode(_))
                    && e.key.as_ref().and_then(|k| ids.get(k)).is_some_and(|id| skipped(*id, 0));
                if !passed_over {
                    out.push(format!("error at {} (key {:?}): {:?}", e.offset, e.key, e.kind));
                }
                if !e.is_recoverable() {
                    break;
                }
            }
        }
    }
    out
}

/// The oracle of the reader's fast path for skipped values (`Reader::skip_values`, which a
/// one-channel scan sets for the keys it does not want): on good, cut and corrupted R1 and R2
/// files, read in place and through a `Read` cut every few bytes, it yields exactly the generic
/// path's events without the values it was told to pass over.
#[test]
fn skipped_values_are_all_that_a_skipping_reader_leaves_out_on_good_cut_and_corrupted_files() {
    let mut inputs = Vec::new();
    for file in FILES {
        inputs.push(std::fs::read(data(&format!("rlog/{file}"))).unwrap());
    }
    let mut random = common::xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut next = move |n: usize| (random() % n as u64) as usize;
    let r1 = std::fs::read(data("rlog/gen_akit_v1.8.1_r1_alltypes.rlog")).unwrap();
    let r2 = std::fs::read(data("rlog/gen_akit_head_r2_alltypes.rlog")).unwrap();
    for base in [&r1, &r2] {
        for i in 0..100 {
            let mut b = base.clone();
            if i % 3 == 0 {
                b.truncate(1 + next(b.len() - 1));
            }
            for _ in 0..1 + i % 3 {
                let at = 1 + next(b.len() - 1);
                b[at] = match i % 4 {
                    0 => next(12) as u8,
                    1 => 0xff,
                    _ => next(256) as u8,
                };
            }
            inputs.push(b);
        }
    }
    let mut left_out = 0;
    for (i, bytes) in inputs.iter().enumerate() {
        let want = generic_events_without_skipped(bytes);
        let all = events_as_text(bytes, 0, None).len();
        left_out += all.saturating_sub(want.len());
        for step in [0, 7] {
            let got = if step == 0 {
                Reader::from_slice(bytes).map(skipping_events_as_text).unwrap_or_default()
            } else {
                Reader::new(Trickle { bytes, step }).map(skipping_events_as_text).unwrap_or_default()
            };
            let same = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
            assert!(
                got == want,
                "input {i}, {step} bytes per read (0: in place): first difference at event {same}: {:?} against the generic path's {:?}",
                got.get(same),
                want.get(same)
            );
        }
    }
    // The skipping is real: most values are left out.
    assert!(left_out > 1000, "{left_out} events left out");
}
