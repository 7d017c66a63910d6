//! WPILOG files: every test file dumps equal to its reference dump (WPILib's reader and a
//! standard-library reader written from `datalog.adoc` agree on it byte for byte), summaries
//! equal the reference summaries, read-then-write is byte-identical, and cut or corrupted copies
//! give every complete record and then an error naming the offset, never a panic.

use crate::scratch;

use crate::common;

use std::io::Read;

use common::{assert_lines_eq, data, jsonl, logspec};
use logspec::formats::wpilog::{
    self, Body, ControlBody, DataValue, Reader, RecordHeader, Utf8U32, WpilogErrorKind, Writer,
};
use serde_json::Value;

const STEMS: [&str; 6] = [
    "gen_wpilib_structs",
    "nukkeldev_spec_example",
    "stuypulse_FRC_20220701_010412",
    "team100_swerve-sim_FRC_20231203_025527",
    "team100_swerve100_FRC_TBD_06e9c3ee962711f2",
    "team100_telemetry_FRC_20231024_161517",
];

fn input(stem: &str) -> std::path::PathBuf {
    data(&format!("wpilog/{stem}.wpilog"))
}

/// The reference dump, stored compressed for the two large files.
fn expected_dump(stem: &str) -> String {
    let plain = data(&format!("wpilog/{stem}.expected.jsonl"));
    if plain.exists() {
        return std::fs::read_to_string(plain).unwrap();
    }
    let bz = std::fs::File::open(data(&format!("wpilog/{stem}.expected.jsonl.bz2"))).unwrap();
    let mut text = String::new();
    bzip2::read::BzDecoder::new(bz).read_to_string(&mut text).unwrap();
    text
}

#[test]
fn every_file_dumps_as_the_reference() {
    for stem in STEMS {
        let out = logspec(&["dump", input(stem).to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stem}: {stderr}");
        let mut ours = jsonl(&String::from_utf8(out.stdout).unwrap());
        // Decoded struct and proto values are checked against AdvantageScope in
        // tests/it/wpistruct.rs; WPILib's reader shows the hex `value` only.
        for line in &mut ours {
            if let Some(m) = line.as_object_mut() {
                m.remove("decoded");
                m.remove("decode_error");
            }
        }
        let expected = jsonl(&expected_dump(stem));
        assert!(expected.len() > 4, "{stem}: the reference dump is not empty");
        assert_lines_eq(&ours, &expected);
        // The spec example logs a value before its Start: kept, as hex, and reported.
        if stem == "nukkeldev_spec_example" {
            assert!(stderr.contains("not started") && stderr.contains("byte 16, entry 1"), "{stderr}");
        } else if stem == "gen_wpilib_structs" {
            // A struct type whose schema never appears.
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.contains("struct:NeverPublished: Schema not defined"), "{stderr}");
        } else {
            assert!(stderr.is_empty(), "{stem}: {stderr}");
        }
    }
}

#[test]
fn summaries_match_the_reference() {
    for stem in STEMS {
        let out = logspec(&["info", "--json", input(stem).to_str().unwrap()]);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(data(&format!("wpilog/{stem}.expected.summary.json"))).unwrap(),
        )
        .unwrap();
        for (k, v) in expected.as_object().unwrap() {
            if k.starts_with("dump_") {
                continue;
            }
            assert_eq!(ours.get(k), Some(v), "{stem}: summary key {k}");
        }
        assert_eq!(ours["format"], "wpilog");
        assert_eq!(ours["ok"], true);
    }
}

#[test]
fn the_text_summary_names_the_facts() {
    let out = logspec(&["info", input("gen_wpilib_structs").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("WPILOG 1.0") && text.contains("121 (36 control") && text.contains("integrity:   ok"),
        "{text}"
    );
}

/// Every record read and written back: the same bytes.
#[test]
fn read_then_write_is_byte_identical() {
    for stem in STEMS {
        let bytes = std::fs::read(input(stem)).unwrap();
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut w = Writer::with_header(Vec::new(), r.header()).unwrap();
        let mut n = 0;
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            w.record(&rec.header, rec.payload).unwrap();
            n += 1;
        }
        assert!(n > 0);
        assert!(w.finish_file().unwrap() == bytes, "{stem}: written back differently");
    }
}

/// The records of a file, as (offset, header, payload), read whole.
fn records(bytes: &[u8]) -> Vec<(u64, RecordHeader, Vec<u8>)> {
    let mut r = Reader::new(bytes).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        out.push((rec.offset, rec.header, rec.payload.to_vec()));
    }
    out
}

/// A reader that hands out a few bytes at a time, to cut records at every buffer boundary.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.1.min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn cut_files_give_every_complete_record_then_the_offset() {
    let bytes = std::fs::read(input("gen_wpilib_structs")).unwrap();
    let all = records(&bytes);
    let header_len = usize::try_from(all[0].0).unwrap();
    let end_of = |i: usize| if i + 1 < all.len() { all[i + 1].0 as usize } else { bytes.len() };
    for cut in header_len..=bytes.len() {
        for step in [1 << 20, 7] {
            let mut r = Reader::new(Trickle(&bytes[..cut], step)).unwrap();
            let mut got = 0;
            let mut err = None;
            while let Some(rec) = r.next_record() {
                match rec {
                    Ok(rec) => {
                        assert_eq!((rec.offset, rec.payload), (all[got].0, &all[got].2[..]), "cut {cut}");
                        got += 1;
                    }
                    Err(e) => err = Some(e),
                }
            }
            let complete = (0..all.len()).take_while(|&i| end_of(i) <= cut).count();
            assert_eq!(got, complete, "cut {cut}: every complete record");
            match err {
                None => assert_eq!(cut, if complete == 0 { header_len } else { end_of(complete - 1) }, "cut {cut}"),
                Some(e) => {
                    assert_eq!(e.offset, all[complete].0, "cut {cut}: the offset of the cut record");
                    assert!(matches!(e.kind, WpilogErrorKind::Truncated { .. }), "cut {cut}: {e}");
                    assert!(e.to_string().contains(&format!("byte {}", e.offset)), "{e}");
                }
            }
        }
    }
    // A cut file header.
    for cut in 0..header_len {
        let err = Reader::new(&bytes[..cut]).err().unwrap_or_else(|| panic!("cut {cut}: header accepted"));
        assert_eq!(err.record, None, "cut {cut}");
    }
}

#[test]
fn a_cut_file_dumps_every_complete_record_then_fails() {
    let bytes = std::fs::read(input("team100_swerve100_FRC_TBD_06e9c3ee962711f2")).unwrap();
    let dir = scratch::temp_dir().join(format!("logspec-wpilog-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("cut.wpilog");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let out = logspec(&["dump", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = records(&bytes).last().unwrap().0;
    assert!(stderr.contains(&format!("byte {last}")) && stderr.contains("ends inside a record"), "{stderr}");
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected = jsonl(&expected_dump("team100_swerve100_FRC_TBD_06e9c3ee962711f2"));
    assert_lines_eq(&ours, &expected[..expected.len() - 1]);
    let info = logspec(&["info", "--json", cut.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(1));
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(
        (s["ok"].as_bool(), s["trailing_bytes"].as_u64()),
        (Some(false), Some((bytes.len() - 3 - last as usize) as u64))
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Corrupted copies never panic, never allocate beyond the input, and every record they give is
/// one the input holds.
#[test]
fn corrupted_copies_are_errors_not_panics() {
    let bytes = std::fs::read(input("gen_wpilib_structs")).unwrap();
    let mut next = common::xorshift(0x2545_f491_4f6c_dd1du64);
    for _ in 0..2000 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        let Ok(mut r) = Reader::new(&b[..]) else { continue };
        while let Some(rec) = r.next_record() {
            let Ok(rec) = rec else { break };
            assert!(rec.payload.len() <= b.len());
            if let Body::Data(Some(e)) = rec.body {
                same_value(e.data_type(), &format!("{} ({})", e.name(), e.type_name()), rec.payload);
            }
        }
    }
}

/// The borrowed decoder gives what the generated one gives: the same value (bit for bit: NaNs
/// and negative zeros included), or the same error.
fn same_value(ty: wpilog::DataType, what: &str, payload: &[u8]) {
    let bits = |v: DataValue| match v {
        DataValue::Float { value } => format!("f32 {:08x}", value.to_bits()),
        DataValue::Double { value } => format!("f64 {:016x}", value.to_bits()),
        DataValue::FloatArray { value } => format!("{:x?}", value.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
        DataValue::DoubleArray { value } => format!("{:x?}", value.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
        other => format!("{other:?}"),
    };
    match (ty.decode(payload), ty.decode_ref(payload)) {
        (Ok(owned), Ok(lent)) => assert_eq!(bits(owned), bits(lent.to_owned()), "{what}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
        (a, b) => panic!("{what}: generated {a:?}, borrowed {b:?}"),
    }
}

#[test]
fn borrowed_values_are_the_generated_decoders() {
    let mut values = 0;
    for stem in STEMS {
        let bytes = std::fs::read(input(stem)).unwrap();
        let mut r = Reader::new(&bytes[..]).unwrap();
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            if let Body::Data(Some(e)) = rec.body {
                same_value(e.data_type(), &format!("{} ({})", e.name(), e.type_name()), rec.payload);
                values += 1;
            }
        }
    }
    assert!(values > 20_000, "{values} values");
    // Every standard type, and payloads that do not decode as it.
    for ty in
        ["boolean", "int64", "float", "double", "string", "boolean[]", "int64[]", "float[]", "double[]", "string[]"]
    {
        let t = wpilog::DataType::of(ty);
        for payload in
            [&b""[..], b"\x01", b"\xff\xfe", b"abcd", b"\0\0\0\x80\0\0\0\0", b"\x01\0\0\0\x02\0\0\0hi", b"123456789"]
        {
            same_value(t, ty, payload);
        }
    }
}

#[test]
fn bad_headers_say_what_they_found() {
    let e = Reader::new(&b"WPILOX\x00\x01\x00\x00\x00\x00"[..]).err().unwrap();
    assert!(e.to_string().contains("not a WPILOG file"), "{e}");
    let e = Reader::new(&b"WPILOG\x00\x02\x00\x00\x00\x00"[..]).err().unwrap();
    assert!(e.to_string().contains("unsupported WPILOG version 2.0"), "{e}");
    // An extra header length beyond the input is a truncation, not an allocation.
    let e = Reader::new(&b"WPILOG\x00\x01\xff\xff\xff\xffabc"[..]).err().unwrap();
    assert!(matches!(e.kind, WpilogErrorKind::Truncated { .. }), "{e}");
}

/// The entry table: orphans, Finish then reuse of an id, Set Metadata, control records that are
/// not valid, values that do not decode as their type.
#[test]
fn entries_and_control_records() {
    let mut w = Writer::new(Vec::new(), "x").unwrap();
    w.raw(1, 5, &3i64.to_le_bytes()).unwrap(); // orphan
    w.start(1, "/a", "int64", "m", 10).unwrap();
    w.raw(1, 11, &7i64.to_le_bytes()).unwrap();
    w.raw(1, 12, &[1, 2, 3]).unwrap(); // invalid int64
    w.set_metadata(1, "m2", 13).unwrap();
    w.finish(1, 14).unwrap();
    w.raw(1, 15, &[9]).unwrap(); // orphan again
    w.start(1, "/b", "double", "", 16).unwrap();
    w.raw(1, 17, &(-0.0f64).to_le_bytes()).unwrap();
    w.raw(0, 18, &[1, 1, 0, 0, 0, 0]).unwrap(); // a Finish of 6 bytes: invalid
    w.raw(0, -5, &[7]).unwrap(); // an unknown control type, at a negative time
    let bytes = w.finish_file().unwrap();
    let mut r = Reader::new(&bytes[..]).unwrap();
    let mut seen = Vec::new();
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        seen.push(match rec.body {
            Body::Data(None) => "orphan".to_string(),
            Body::Data(Some(e)) => match e.decode(rec.payload) {
                Ok(v) => format!("{}={v:?}", e.name()),
                Err(_) => format!("{} invalid", e.name()),
            },
            Body::Control { record, entry } => match &record.body {
                ControlBody::Start { .. } => format!("start {}", entry.unwrap().name()),
                ControlBody::Finish { .. } => format!("finish {}", entry.unwrap().name()),
                ControlBody::SetMetadata { .. } => format!("meta {}", entry.unwrap().metadata()),
            },
            Body::ControlInvalid(_) => format!("invalid control at {}", rec.header.timestamp),
        });
    }
    assert_eq!(
        seen,
        [
            "orphan",
            "start /a",
            "/a=Int64 { value: 7 }",
            "/a invalid",
            "meta m2",
            "finish /a",
            "orphan",
            "start /b",
            "/b=Double { value: -0.0 }",
            "invalid control at 18",
            "invalid control at -5",
        ]
    );
    // The dump shows them as the reference shapes, and fails on the invalid value.
    let dir = scratch::temp_dir().join(format!("logspec-wpilog-entries-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("e.wpilog");
    std::fs::write(&f, &bytes).unwrap();
    let out = logspec(&["dump", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        lines[4],
        serde_json::json!({"rec":"data","ts":12,"entry":1,"name":"/a","type":"int64","value":null,"invalid":"010203"})
    );
    assert_eq!(lines[9]["value"], "-0");
    assert_eq!(lines[10], serde_json::json!({"rec":"control_invalid","ts":18,"payload":"010100000000"}));
    assert_eq!(lines[11]["ts"], -5);
    // --key keeps the records of one entry name, control records included.
    let out = logspec(&["dump", f.to_str().unwrap(), "--key", "/b"]);
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    let recs: Vec<&str> = lines.iter().map(|l| l["rec"].as_str().unwrap()).collect();
    assert_eq!(recs, ["header", "start", "data"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// New records get the fewest header bytes; values of every standard type read back equal.
#[test]
fn the_writer_writes_every_standard_type() {
    let values = [
        ("boolean", DataValue::Boolean { value: true }),
        ("int64", DataValue::Int64 { value: i64::MIN }),
        ("float", DataValue::Float { value: 0.1 }),
        ("double", DataValue::Double { value: f64::NAN }),
        ("string", DataValue::String { value: "häh\n".into() }),
        ("boolean[]", DataValue::BooleanArray { value: vec![true, false] }),
        ("int64[]", DataValue::Int64Array { value: vec![1, -1] }),
        ("float[]", DataValue::FloatArray { value: vec![] }),
        ("double[]", DataValue::DoubleArray { value: vec![1.5, -0.0] }),
        ("string[]", DataValue::StringArray { value: vec![Utf8U32 { text: "a".into() }, Utf8U32 { text: "".into() }] }),
        ("raw", DataValue::Other { value: vec![0, 255] }),
        ("struct:Pose2d", DataValue::Other { value: vec![1; 24] }),
    ];
    let mut w = Writer::new(Vec::new(), "").unwrap();
    for (i, (ty, v)) in values.iter().enumerate() {
        let id = 300 * i as u32 + 1;
        w.start(id, &format!("/v/{ty}"), ty, "", 0).unwrap();
        w.value(id, 1i64 << (5 * i), v).unwrap();
    }
    let bytes = w.finish_file().unwrap();
    let mut r = Reader::new(&bytes[..]).unwrap();
    let mut i = 0;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        let h = rec.header;
        // The fewest bytes: 1 + entry + size + timestamp.
        let need = |v: u64| (64 - v.leading_zeros()).div_ceil(8).max(1);
        assert_eq!(u64::from(h.lengths & 3) + 1, u64::from(need(u64::from(h.entry))));
        assert_eq!(u64::from((h.lengths >> 4) & 7) + 1, u64::from(need(h.timestamp as u64)));
        if let Body::Data(Some(e)) = rec.body {
            let v = e.decode(rec.payload).unwrap();
            let want = &values[i].1;
            assert_eq!(format!("{v:?}"), format!("{want:?}"), "{}", e.type_name());
            i += 1;
        }
    }
    assert_eq!(i, values.len());
}

/// The plain `&[u8]` entry point (for fuzzing) gives the same records as the streaming reader.
#[test]
fn read_all_is_the_streaming_reader() {
    let bytes = std::fs::read(input("team100_telemetry_FRC_20231024_161517")).unwrap();
    let (header, recs, err) = wpilog::read_all(&bytes).unwrap();
    assert!(err.is_none());
    assert_eq!(header.version, wpilog::VERSION);
    let streamed = records(&bytes);
    assert_eq!(recs.len(), streamed.len());
    assert!(recs.iter().zip(&streamed).all(|(a, b)| a.0 == b.1 && a.1 == b.2));
}
