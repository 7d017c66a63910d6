//! USVLOG end to end: the bundled sample against the upstream reference reader's output, the
//! streaming reader's error behaviour, and the writer.

use crate::scratch;

use crate::common;

use common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use logspec::formats::usvlog::{self, FileHeader, RecNavSolution, Usvlog, UsvlogRecord};
use logspec::runtime::{Event, ReadErrorKind, Reader, SliceReader, Writer};

fn sample() -> Vec<u8> {
    std::fs::read(data("usvlog/step.usvlog")).unwrap()
}

#[test]
fn dump_equals_reference_value_for_value() {
    let out = logspec(&["dump", data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    assert_lines_eq(&ours, &expected);
}

#[test]
fn counts_and_header_match_reference_summary() {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("usvlog/step.expected.summary.json")).unwrap()).unwrap();
    let bytes = sample();
    let (header, reader) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    assert_eq!(u64::from(header.fw_model_schema), summary["header"]["fw_model_schema"].as_u64().unwrap());
    assert_eq!(header.t0_us, summary["header"]["t0_us"].as_u64().unwrap());
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    let mut total = 0;
    let mut r = reader;
    while let Some(ev) = r.next_event() {
        match ev.unwrap() {
            Event::Record { record, .. } => *counts.entry(record.name()).or_default() += 1,
            Event::Unknown { raw } => panic!("unexpected unknown record {raw:?}"),
        }
        total += 1;
    }
    assert_eq!(total, summary["records_total"].as_u64().unwrap());
    for (name, n) in summary["record_counts"].as_object().unwrap() {
        assert_eq!(counts.get(name.as_str()).copied(), n.as_u64(), "{name}");
    }
    assert_eq!(r.position(), summary["bytes_consumed"].as_u64().unwrap());
}

#[test]
fn info_json_matches_reference_summary() {
    let out = logspec(&["info", "--json", data("usvlog/step.usvlog").to_str().unwrap()]);
    assert!(out.status.success());
    let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("usvlog/step.expected.summary.json")).unwrap()).unwrap();
    for key in ["ok", "error", "records_total", "record_counts", "unknown_records", "bytes_consumed"] {
        assert_eq!(json_diff(&ours[key], &expected[key], key), None);
    }
    for key in ["magic", "fw_model_schema", "t0_us"] {
        assert_eq!(ours["header"][key], expected["header"][key], "header.{key}");
    }
}

#[test]
fn streaming_reader_equals_slice_reader_and_rewrites_identical_bytes() {
    let bytes = sample();
    // A reader that hands out 7 bytes at a time exercises every refill path.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut reader = Reader::<_, Usvlog>::new(Trickle(&bytes)).unwrap();
    let header = *reader.file_header();
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    let mut n = 0;
    while let Some(ev) = reader.next_event() {
        match ev.unwrap() {
            Event::Record { raw, record } => w.write(raw.header.timestamp.unwrap(), &record).unwrap(),
            Event::Unknown { .. } => unreachable!(),
        }
        n += 1;
    }
    assert_eq!(n, 5201);
    assert_eq!(w.finish().unwrap(), bytes, "read-then-write must reproduce the file byte for byte");
}

#[test]
fn truncated_file_yields_every_complete_record_then_the_offset() {
    let bytes = sample();
    // Cut inside the payload of record #100.
    let mut offsets = Vec::new();
    let (_, r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    for raw in r {
        offsets.push(raw.unwrap().offset);
    }
    let cut = offsets[100] as usize + 15;
    let mut reader = Reader::<_, Usvlog>::new(&bytes[..cut]).unwrap();
    let mut got = 0;
    let err = loop {
        match reader.next_event() {
            Some(Ok(_)) => got += 1,
            Some(Err(e)) => break e,
            None => panic!("truncation not reported"),
        }
    };
    assert_eq!(got, 100);
    assert_eq!(err.offset, offsets[100]);
    assert!(matches!(err.kind, ReadErrorKind::Truncated { what: "payload", .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("at byte {}", offsets[100])) && msg.contains("record #100"), "{msg}");
    assert!(reader.next_event().is_none());

    // The CLI prints the 100 records, then fails with the offset.
    let dir = scratch::temp_dir().join(format!("logspec-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("cut.usvlog");
    std::fs::write(&p, &bytes[..cut]).unwrap();
    let out = logspec(&["dump", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(jsonl(&String::from_utf8(out.stdout).unwrap()).len(), 100);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("cut.usvlog") && stderr.contains(&format!("at byte {}", offsets[100])), "{stderr}");
}

fn header_error(bytes: &[u8]) -> String {
    match Reader::<_, Usvlog>::new(bytes) {
        Ok(_) => panic!("header accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_headers_say_which_field_and_what_was_expected() {
    let good = sample();
    let mut b = good.clone();
    b[0..6].copy_from_slice(b"USVLOX");
    let m = header_error(&b);
    assert!(m.contains("magic") && m.contains("\"USVLOG\"") && m.contains("\"USVLOX\""), "{m}");

    let mut b = good.clone();
    b[10] = 2;
    let m = header_error(&b);
    assert!(m.contains("endianness") && m.contains("expected 1, found 2"), "{m}");

    let mut b = good.clone();
    b[6..10].copy_from_slice(&7u32.to_le_bytes());
    let m = header_error(&b);
    assert!(m.contains("fw_model_schema is 7") && m.contains("schema id 1"), "{m}");

    let m = header_error(&good[..20]);
    assert!(m.contains("truncated inside the file header"), "{m}");
}

#[test]
fn unknown_types_are_skipped_and_reported() {
    let header = FileHeader { fw_model_schema: usvlog::FW_MODEL_SCHEMA, t0_us: 5 };
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    let nav = RecNavSolution { x: 1.5, y: -2.0, psi: 0.25, v: 1.0, r: 0.0, b_g: 0.001 };
    w.write(10, &UsvlogRecord::from(nav)).unwrap();
    w.write_raw(200, 11, &[0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x7f]).unwrap();
    w.write(12, &UsvlogRecord::from(nav)).unwrap();
    let bytes = w.finish().unwrap();

    let (_, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let mut seen = Vec::new();
    while let Some(ev) = r.next_event() {
        seen.push(match ev.unwrap() {
            Event::Record { record: UsvlogRecord::RecNavSolution(n), .. } => {
                assert_eq!(n, nav);
                "nav".to_string()
            }
            Event::Record { .. } => unreachable!(),
            Event::Unknown { raw } => format!("unknown {} {}", raw.header.tag, raw.payload.len()),
        });
    }
    assert_eq!(seen, ["nav", "unknown 200 7", "nav"]);

    let dir = scratch::temp_dir().join(format!("logspec-unknown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("u.usvlog");
    std::fs::write(&p, &bytes).unwrap();
    let out = logspec(&["dump", p.to_str().unwrap()]);
    assert!(out.status.success());
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines[1], serde_json::json!({"t_us":11,"type":200,"name":null,"len":7,"payload_hex":"deadbeef00017f"}));
}

#[test]
fn wrong_payload_length_is_reported_and_skipped() {
    let header = FileHeader { fw_model_schema: 1, t0_us: 0 };
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    w.write_raw(1, 0, &[0u8; 20]).unwrap(); // NAV_SOLUTION is 24 bytes
    w.write_raw(13, 1, &[0u8; 12]).unwrap();
    let bytes = w.finish().unwrap();
    let (_, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let e = r.next_event().unwrap().unwrap_err();
    assert!(e.is_recoverable());
    let m = e.to_string();
    assert!(m.contains("REC_NAV_SOLUTION") && m.contains("needed 24 bytes, found 20"), "{m}");
    assert!(matches!(r.next_event(), Some(Ok(Event::Record { record: UsvlogRecord::RecSensorGyro(_), .. }))));

    // The lending fast path stops at the bad record and resumes after it.
    let (_, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let mut seen = Vec::new();
    let e = r.decode_each(|raw, rec| seen.push((raw.header.tag, rec.map(|r| r.name())))).unwrap_err();
    assert!(e.is_recoverable() && e.to_string().contains("REC_NAV_SOLUTION"));
    r.decode_each(|raw, rec| seen.push((raw.header.tag, rec.map(|r| r.name())))).unwrap();
    assert_eq!(seen, [(13, Some("REC_SENSOR_GYRO"))]);

    // So does the checking one (`info`'s), with the same error, over a slice and a stream.
    let (_, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let mut seen = Vec::new();
    let e = r.check_each(|raw, known| seen.push((raw.offset, raw.header.tag, known))).unwrap_err();
    assert_eq!(e.to_string(), m);
    r.check_each(|raw, known| seen.push((raw.offset, raw.header.tag, known))).unwrap();
    let mut r = Reader::<_, Usvlog>::new(&bytes[..]).unwrap();
    let mut streamed = Vec::new();
    assert_eq!(
        r.check_each(|raw, known| streamed.push((raw.offset, raw.header.tag, known))).unwrap_err().to_string(),
        m
    );
    r.check_each(|raw, known| streamed.push((raw.offset, raw.header.tag, known))).unwrap();
    // The file header is 32 bytes; the bad record 12 + 20.
    assert_eq!(seen, [(64, 13, true)]);
    assert_eq!(streamed, seen);
}

#[test]
fn decode_each_sees_what_next_event_sees() {
    let bytes = sample();
    let (_, mut a) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let mut via_events = Vec::new();
    while let Some(ev) = a.next_event() {
        if let Event::Record { raw, record } = ev.unwrap() {
            via_events.push((raw.offset, record));
        }
    }
    let mut via_each = Vec::new();
    let mut r = Reader::<_, Usvlog>::new(&bytes[..]).unwrap();
    r.decode_each(|raw, rec| via_each.push((raw.offset, *rec.unwrap()))).unwrap();
    assert_eq!(via_events.len(), 5201);
    assert_eq!(via_each, via_events);
}

#[test]
fn never_panics_on_corrupted_input() {
    let good = sample();
    let good = &good[..4096];
    // A small deterministic PRNG (xorshift) so failures reproduce.
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..3000 {
        let mut b = good.to_vec();
        for _ in 0..(next() % 8 + 1) {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        b.truncate((next() as usize) % (b.len() + 1));
        if let Ok(mut r) = Reader::<_, Usvlog>::new(&b[..]) {
            while let Some(ev) = r.next_event() {
                let _ = ev;
            }
        }
        if let Ok((_, mut r)) = SliceReader::<Usvlog>::new(&b) {
            while let Some(ev) = r.next_event() {
                let _ = ev;
            }
        }
    }
}
