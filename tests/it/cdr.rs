//! The Rust back end under CDR's layout rules (`[format] align = "natural"`, `string_nul = true`):
//! the test schema `codegen/tests/schemas/cdr.toml` against bytes laid out by hand from the
//! spec (`docs/schema-language.md` section 17; XCDR1: each number at a multiple of its size from
//! the payload's start, a string's u32 length counting its NUL), and the types generated from a
//! real ROS 2 definition (`tests/data/ros2/msg/Corner.ros2msg`, lowered by the ROS 2 front end
//! for each byte order) decoding the messages rosbags wrote in `gen_rosbags_corner.mcap` equal to
//! the references' dump, and encoding them back to the same bytes.

#![allow(dead_code, clippy::all)]

mod cdr {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/cdr.rs"));
}
mod corner_le {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/ros2_corner_le.rs"));
}
mod corner_be {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/ros2_corner_be.rs"));
}

use crate::common::{data, json_diff, jsonl};
use logspec::json::JsonWriter;
use logspec::runtime::{Cursor, Decode, Encode, Endian, Visit};

fn item(tag: u8, value: f64) -> cdr::Item {
    cdr::Item { tag, value }
}

fn sample() -> cdr::Sample {
    cdr::Sample {
        flag: 1,
        value: 2.5,
        label: "hi".into(),
        level: cdr::Level::WARN,
        items: vec![item(3, -1.0)],
        header: cdr::Header { stamp: cdr::Stamp { sec: -2, nanosec: 7 }, frame_id: "map".into() },
        fixed: [1, -2, 3],
        tail: 9,
        samples: vec![0.5],
        last: 0x0102_0304_0506_0708,
    }
}

/// `sample()` laid out by hand: every field at the offset the rules give it, padding zero.
fn sample_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    let at = |b: &Vec<u8>, n: usize| assert_eq!(b.len(), n, "hand layout");
    b.push(1); // flag at 0
    b.extend([0; 7]); // an f64 starts at a multiple of 8
    at(&b, 8);
    b.extend(2.5f64.to_le_bytes());
    b.extend(3u32.to_le_bytes()); // label: "hi" and its NUL
    b.extend(b"hi\0");
    b.push(0); // level (u16) at 24
    at(&b, 24);
    b.extend(1u16.to_le_bytes());
    b.extend([0; 2]); // items' count (u32) at 28
    b.extend(1u32.to_le_bytes());
    at(&b, 32);
    b.push(3); // items[0].tag at 32, its value at 40
    b.extend([0; 7]);
    b.extend((-1.0f64).to_le_bytes());
    at(&b, 48);
    b.extend((-2i32).to_le_bytes()); // header.stamp
    b.extend(7u32.to_le_bytes());
    b.extend(4u32.to_le_bytes()); // header.frame_id
    b.extend(b"map\0");
    at(&b, 64);
    for v in [1i16, -2, 3] {
        b.extend(v.to_le_bytes());
    }
    b.push(9); // tail at 70
    b.push(0); // samples' count at 72
    b.extend(1u32.to_le_bytes());
    b.extend(0.5f32.to_le_bytes());
    at(&b, 80); // last (u64) at 80, already a multiple of 8
    b.extend(0x0102_0304_0506_0708u64.to_le_bytes());
    b
}

#[test]
fn a_record_encodes_and_decodes_as_laid_out_by_hand() {
    let s = sample();
    let want = sample_bytes();
    assert_eq!(s.encoded_len(), want.len());
    let mut got = Vec::new();
    s.encode(&mut got, Endian::Little).unwrap();
    assert_eq!(got, want);
    let mut c = Cursor::new(&want);
    assert_eq!(cdr::Sample::decode(&mut c, Endian::Little).unwrap(), s);
    assert!(c.is_empty());
    // The text record: a u32 length of 6 for "hello" and its NUL; an empty string is its NUL.
    for (text, bytes) in [("hello", &b"\x06\0\0\0hello\0"[..]), ("", &b"\x01\0\0\0\0"[..])] {
        let t = cdr::Text { text: text.into() };
        let mut got = Vec::new();
        t.encode(&mut got, Endian::Little).unwrap();
        assert_eq!(got, bytes);
        assert_eq!(cdr::Text::decode(&mut Cursor::new(bytes), Endian::Little).unwrap(), t);
    }
    // A length of 0 reads as the empty string too, as ROS 2's readers take it.
    assert_eq!(cdr::Text::decode(&mut Cursor::new(&[0, 0, 0, 0]), Endian::Little).unwrap().text, "");
}

#[test]
fn alignment_counts_from_where_the_value_starts() {
    // An item decoded alone: its f64 at 8 of the item, wherever the item is in the buffer.
    let mut buf = vec![0xAA; 3];
    let mut one = vec![6u8, 0, 0, 0, 0, 0, 0, 0];
    one.extend(1.5f64.to_le_bytes());
    buf.extend(&one);
    let mut c = Cursor::new(&buf);
    c.take(3).unwrap();
    assert_eq!(cdr::Item::decode(&mut c, Endian::Little).unwrap(), item(6, 1.5));
    let mut got = Vec::new();
    item(6, 1.5).encode(&mut got, Endian::Little).unwrap();
    assert_eq!(got, one);
}

#[test]
fn a_cut_record_is_an_error_at_every_length() {
    let want = sample_bytes();
    for n in 0..want.len() {
        let e = cdr::Sample::decode(&mut Cursor::new(&want[..n]), Endian::Little);
        assert!(e.is_err(), "{n} bytes decoded");
    }
    // A count past the end is an error where the bytes end.
    let mut b = want.clone();
    b[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = cdr::Sample::decode(&mut Cursor::new(&b), Endian::Little).unwrap_err();
    assert!(e.to_string().contains("unexpected end of data"), "{e}");
}

/// The messages of `topic` in the rosbags corner file: their CDR payloads, in file order.
fn corner_payloads(topic: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(data("ros2/gen_rosbags_corner.mcap")).unwrap();
    mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(|m| m.unwrap())
        .filter(|m| m.channel.topic == topic)
        .map(|m| m.data.to_vec())
        .collect()
}

fn expected(topic: &str) -> Vec<serde_json::Value> {
    jsonl(&std::fs::read_to_string(data("ros2/gen_rosbags_corner.expected.jsonl")).unwrap())
        .into_iter()
        .filter(|l| l["kind"] == "message" && l["topic"] == topic)
        .map(|l| l["data"].clone())
        .collect()
}

fn as_json<T: Visit>(v: &T) -> serde_json::Value {
    let mut w = JsonWriter::new();
    v.visit(None, &mut w);
    serde_json::from_str(&w.take()).unwrap()
}

/// Decodes each payload (after its encapsulation header, `[0, 1]` little-endian or `[0, 0]`
/// big-endian) with `T`, compares it with the reference dump, and encodes it back: the bytes
/// rosbags wrote, up to the end padding (at most 3 zero bytes).
fn check_corner<T: Decode + Encode + Visit>(topic: &str, header: [u8; 2]) {
    let payloads = corner_payloads(topic);
    let want = expected(topic);
    assert!(!payloads.is_empty() && payloads.len() == want.len(), "{topic}: {} messages", payloads.len());
    for (i, (p, w)) in payloads.iter().zip(&want).enumerate() {
        assert_eq!(p[..2], header, "{topic} message {i}: encapsulation");
        let body = &p[4..];
        let mut c = Cursor::new(body);
        let m = T::decode(&mut c, Endian::Little).unwrap_or_else(|e| panic!("{topic} message {i}: {e}"));
        assert!(c.remaining() <= 3, "{topic} message {i}: {} bytes left", c.remaining());
        if let Some(d) = json_diff(&as_json(&m), w, &format!("{topic} message {i}")) {
            panic!("{d}");
        }
        let mut again = Vec::new();
        m.encode(&mut again, Endian::Little).unwrap();
        assert_eq!(again.len(), m.encoded_len());
        assert_eq!(again[..], body[..again.len()], "{topic} message {i}: encoded again");
        assert!(body[again.len()..].iter().all(|b| *b == 0) && body.len() - again.len() <= 3);
        // Cut anywhere, it is an error, never a panic.
        for n in (0..again.len()).step_by(7) {
            assert!(T::decode(&mut Cursor::new(&body[..n]), Endian::Little).is_err(), "{topic} message {i}: {n}");
        }
    }
}

#[test]
fn types_from_a_ros2_definition_read_what_rosbags_wrote() {
    check_corner::<corner_le::Corner>("/corner", [0, 1]);
    check_corner::<corner_be::Corner>("/corner_be", [0, 0]);
}

/// The golden vectors of the schema (made by the golden back end's own walk over the IR): every
/// one decodes with the generated type to its values and encodes back to its bytes.
#[test]
fn the_golden_vectors_decode_and_encode() {
    fn check<T: Decode + Encode + Visit>(v: &serde_json::Value) {
        let bytes: Vec<u8> = (0..v["bytes"].as_str().unwrap().len() / 2)
            .map(|i| u8::from_str_radix(&v["bytes"].as_str().unwrap()[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let mut c = Cursor::new(&bytes);
        let t = T::decode(&mut c, Endian::Little).unwrap_or_else(|e| panic!("{}: {e}", v["struct"]));
        assert!(c.is_empty(), "{}", v["struct"]);
        if let Some(d) = json_diff(&as_json(&t), &v["values"], v["struct"].as_str().unwrap()) {
            panic!("{d}");
        }
        let mut again = Vec::new();
        t.encode(&mut again, Endian::Little).unwrap();
        assert_eq!(again, bytes, "{}", v["struct"]);
        assert_eq!(t.encoded_len(), bytes.len());
    }
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/cdr.toml")).unwrap();
    let schema = logspec::codegen::compile_str("cdr.toml", &text).unwrap();
    let golden: serde_json::Value =
        serde_json::from_str(&logspec::codegen::backend::golden::vectors(&schema).unwrap()).unwrap();
    assert_eq!(golden["layout"], serde_json::json!({"align": "natural", "string_nul": true}));
    let all: Vec<&serde_json::Value> =
        golden["vectors"].as_array().unwrap().iter().chain(golden["variable_vectors"].as_array().unwrap()).collect();
    let mut seen = std::collections::BTreeSet::new();
    for v in all {
        let name = v["struct"].as_str().unwrap();
        match name {
            // A constant magic, shown as text by the visitor and as hex by the vectors.
            "FileHeader" => continue,
            "RecordHeader" => check::<cdr::RecordHeader>(v),
            "Item" => check::<cdr::Item>(v),
            "Stamp" => check::<cdr::Stamp>(v),
            "Header" => check::<cdr::Header>(v),
            "Sample" => check::<cdr::Sample>(v),
            "Text" => check::<cdr::Text>(v),
            other => panic!("a vector of `{other}`, which this test does not know"),
        }
        seen.insert(name.to_string());
    }
    assert!(seen.contains("Sample") && seen.contains("Item"), "{seen:?}");
}

/// Every ROS 2 type in the test recordings, lowered by the ROS 2 front end for each byte order,
/// is one the code generators take: the Rust back end makes parseable code (without
/// `compile_error!`) and the C back end a header with functions for the root message.
#[test]
fn every_ros2_type_of_the_test_files_generates() {
    use logspec::codegen::ros;
    let mut n = 0;
    for stem in ["gen_rosbags_corner", "rosbag2_mcap_cdr_test_0", "rosbag2_mcap_talker", "gen_mcapros2_zstd"] {
        let bytes = std::fs::read(data(&format!("ros2/{stem}.mcap"))).unwrap();
        let mut schemas = std::collections::BTreeMap::new();
        for m in mcap::MessageStream::new(&bytes).unwrap() {
            let m = m.unwrap();
            if let Some(s) = &m.channel.schema {
                if s.encoding == "ros2msg" {
                    schemas.insert(s.name.clone(), String::from_utf8(s.data.to_vec()).unwrap());
                }
            }
        }
        for (name, text) in schemas {
            let set = ros::compile_ros2_definition("def.msg", &name, &text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            for endian in [logspec::ir::ir::Endian::Little, logspec::ir::ir::Endian::Big] {
                let lowered = ros::lower::lower_cdr(&set, &[ros::ros2_name(&name).as_str()], "ros2", endian);
                logspec::codegen::backend::supported(&lowered.schema).unwrap_or_else(|e| panic!("{name}: {e}"));
                let rust = logspec::codegen::backend::rust::RustBackend::default().source(&lowered.schema);
                assert!(!rust.contains("compile_error!"), "{name}: {rust}");
                let c = logspec::codegen::backend::c::header(&lowered.schema);
                assert!(c.contains("_decode("), "{name}: no C decoder");
                n += 1;
            }
        }
    }
    assert!(n >= 20, "{n} types");
}

/// A file of framed records under the rules: the generated writer puts each payload as laid out
/// by hand after its one-byte header fields, the generated reader gives the records back, and the
/// IR interpreter (`logspec dump --schema`) reads the same file to the same values.
#[test]
fn a_framed_file_writes_and_reads_as_the_interpreter_reads_it() {
    use logspec::runtime::{Event, SliceReader, Writer};
    let text = cdr::Text { text: "h\u{e9}".into() };
    let mut w = Writer::<_, cdr::Cdr>::new(Vec::new(), &cdr::FileHeader {}).expect("writer");
    w.write(0, &cdr::CdrRecord::Sample(sample())).unwrap();
    w.write(0, &cdr::CdrRecord::Text(text.clone())).unwrap();
    let bytes = w.finish().unwrap();
    let body = sample_bytes();
    let mut want = b"CDR1".to_vec();
    want.extend([1, body.len() as u8]);
    want.extend(&body);
    want.extend([2, 8, 4, 0, 0, 0, b'h', 0xc3, 0xa9, 0]);
    assert_eq!(bytes, want);
    let (_, mut r) = SliceReader::<cdr::Cdr>::new(&bytes).expect("file header");
    let mut got = Vec::new();
    while let Some(e) = r.next_event() {
        match e.unwrap() {
            Event::Record { record, .. } => got.push(record),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(got, vec![cdr::CdrRecord::Sample(sample()), cdr::CdrRecord::Text(text)]);
    // The interpreter: the same values, through the visitor's JSON.
    let dir = crate::scratch::temp_dir().join("cdr-framed");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("two.cdr");
    std::fs::write(&path, &bytes).unwrap();
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/cdr.toml");
    let out = crate::common::logspec(&["dump", "--schema", schema, path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines.len(), 2);
    for (line, want) in lines.iter().zip([as_json(&sample()), as_json(&cdr::Text { text: "h\u{e9}".into() })]) {
        if let Some(d) = json_diff(&line["fields"], &want, "interpreter") {
            panic!("{d}\n{line}");
        }
    }
}
