//! `[framing] sync` and `checksum` (codegen/tests/schemas/checked.toml): the CRC catalogue's check
//! values, the writer's CRCs against a bitwise reference written here, and the corruption story
//! (a bad length field, a flipped byte, garbage between records) through the generated reader
//! (slice and streaming) and the IR interpreter (`--schema`), which must each give every good
//! record and report the bytes they passed over.

#![allow(dead_code, clippy::all)]

mod checked {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/checked.rs"));
}

use checked::*;
use logspec::runtime::{Crc, Event, ReadErrorKind, Reader, SliceReader, Writer};

use crate::common;
use common::checked::{crc32c, file, record};

/// What a reader gave: the `count` of each good record, and (offset, bytes passed over) of each
/// corrupted region, in order; then the error that ended the reading, if any.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Count(u16),
    Skip(u64, u64),
    End(String),
}

fn slice_read(bytes: &[u8]) -> Vec<Seen> {
    let (_, mut r) = SliceReader::<Checked>::new(bytes).expect("file header");
    let mut seen = Vec::new();
    while let Some(e) = r.next_event() {
        match e {
            Ok(Event::Record { record: CheckedRecord::RecSample(s), .. }) => seen.push(Seen::Count(s.count)),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => match &e.kind {
                ReadErrorKind::Corrupt { skipped, .. } => {
                    assert!(e.is_recoverable());
                    seen.push(Seen::Skip(e.offset, *skipped))
                }
                _ => seen.push(Seen::End(e.to_string())),
            },
        }
    }
    seen
}

/// The same through the streaming reader, fed a few bytes per `read`.
fn stream_read(bytes: &[u8]) -> Vec<Seen> {
    struct Dribble<'a>(&'a [u8]);
    impl std::io::Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(7);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut r = Reader::<_, Checked>::new(Dribble(bytes)).expect("file header");
    let mut seen = Vec::new();
    while let Some(e) = r.next_event() {
        match e {
            Ok(Event::Record { record: CheckedRecord::RecSample(s), .. }) => seen.push(Seen::Count(s.count)),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => match &e.kind {
                ReadErrorKind::Corrupt { skipped, .. } => seen.push(Seen::Skip(e.offset, *skipped)),
                _ => seen.push(Seen::End(e.to_string())),
            },
        }
    }
    seen
}

fn counts(range: std::ops::Range<u16>) -> Vec<Seen> {
    range.map(Seen::Count).collect()
}

#[test]
fn every_catalogue_crc_gives_its_check_value() {
    // The catalogue's check values (CRC of ASCII "123456789"), written out here rather than
    // taken from the IR, which holds them too.
    let expected =
        [("crc-16/ccitt-false", 0x29B1), ("crc-16/xmodem", 0x31C3), ("crc-32", 0xCBF4_3926), ("crc-32c", 0xE306_9283)];
    for (name, check) in expected {
        let alg = logspec::ir::ir::Crc::from_name(name).expect(name);
        let p = alg.params();
        assert_eq!(p.check, check, "{name}: the IR's check value");
        let crc = Crc::new(p.width, p.poly, p.init, p.reflect, p.xorout);
        assert_eq!(crc.checksum(b"123456789"), check, "{name}");
        // Fed in pieces, the same.
        let reg = crc.update(crc.update(crc.start(), b"1234"), b"56789");
        assert_eq!(crc.finish(reg), check, "{name} in two pieces");
    }
    assert_eq!(crc32c(b"123456789"), 0xE306_9283, "the test's own reference");
}

#[test]
fn the_writer_fills_sync_and_crc() {
    let mut w = Writer::<_, Checked>::new(Vec::new(), &FileHeader { schema: 1 }).expect("writer");
    w.write(0, &CheckedRecord::RecSample(RecSample { value: 0.0, count: 0 })).expect("write");
    w.write(100, &CheckedRecord::RecSample(RecSample { value: 1.0, count: 1 })).expect("write");
    w.write(250, &CheckedRecord::RecNote(RecNote { text: "hi".into() })).expect("write");
    w.write_raw(9, 300, b"raw").expect("write raw");
    let bytes = w.finish().expect("finish");
    let mut want = file(2).0;
    want.extend(record(2, 250, b"\x02hi"));
    want.extend(record(9, 300, b"raw"));
    assert_eq!(bytes, want);
    // And both readers take it whole.
    assert_eq!(slice_read(&bytes[..file(2).0.len()]), counts(0..2));
}

#[test]
fn a_corrupted_length_field_loses_one_record_not_the_rest() {
    let (good, at) = file(6);
    assert_eq!(slice_read(&good), counts(0..6));
    assert_eq!(stream_read(&good), counts(0..6));
    let rec = at[1] - at[0];
    // The length of record 2 made huge (past the end), then small (a CRC mismatch): either way
    // the reader passes over that one record and reads the rest.
    for len in [0xFFFFu16, 0x0100, 1, 0] {
        let mut bad = good.clone();
        bad[at[2] + 3..at[2] + 5].copy_from_slice(&len.to_le_bytes());
        let want = [counts(0..2), vec![Seen::Skip(at[2] as u64, rec as u64)], counts(3..6)].concat();
        assert_eq!(slice_read(&bad), want, "length {len}");
        assert_eq!(stream_read(&bad), want, "length {len}, streaming");
    }
}

#[test]
fn a_flipped_byte_or_garbage_is_passed_over() {
    let (good, at) = file(5);
    let rec = at[1] - at[0];
    // A payload byte flipped: that record's CRC fails.
    let mut bad = good.clone();
    bad[at[3] + 14] ^= 0x10;
    let want = [counts(0..3), vec![Seen::Skip(at[3] as u64, rec as u64)], counts(4..5)].concat();
    assert_eq!(slice_read(&bad), want);
    assert_eq!(stream_read(&bad), want);
    // Garbage between records 1 and 2, with a false sync in it: passed over as one region.
    let garbage = [0xA3, 0x95, 0x01, 0x06, 0x00, 1, 2, 0xA3, 0x00, 0xFF, 0xA3];
    let bad = [&good[..at[2]], &garbage[..], &good[at[2]..]].concat();
    let want = [counts(0..2), vec![Seen::Skip(at[2] as u64, garbage.len() as u64)], counts(2..5)].concat();
    assert_eq!(slice_read(&bad), want);
    assert_eq!(stream_read(&bad), want);
    // A bad CRC on the last record: the rest of the file is passed over.
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let want = [counts(0..4), vec![Seen::Skip(at[4] as u64, rec as u64)]].concat();
    assert_eq!(slice_read(&bad), want);
    assert_eq!(stream_read(&bad), want);
}

#[test]
fn a_cut_file_still_ends_in_a_truncation() {
    let (good, at) = file(3);
    let cut = &good[..good.len() - 2];
    let seen = slice_read(cut);
    assert_eq!(seen[..2], counts(0..2)[..]);
    let Seen::End(msg) = &seen[2] else { panic!("{seen:?}") };
    assert!(msg.contains(&format!("at byte {}", at[2])) && msg.contains("truncated"), "{msg}");
    assert_eq!(stream_read(cut), seen);
}

/// The IR interpreter (`--schema`) on the same corrupted file: `dump` prints every good record
/// and reports the region it passed over; `info` counts the records and shows the finding.
#[test]
fn the_interpreter_resynchronises_and_reports_the_skip() {
    let (good, at) = file(6);
    let rec = at[1] - at[0];
    let mut bad = good.clone();
    bad[at[2] + 3..at[2] + 5].copy_from_slice(&0xFFFFu16.to_le_bytes());
    let dir = crate::scratch::temp_dir();
    let path = dir.join("corrupt.chk");
    std::fs::write(&path, &bad).unwrap();
    let p = path.to_str().unwrap();
    let schema = common::checked::SCHEMA;
    let out = common::logspec(&["dump", "--schema", schema, p]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = common::jsonl(&stdout);
    let got: Vec<u64> = lines.iter().filter_map(|l| l["fields"]["count"].as_u64()).collect();
    assert_eq!(got, [0, 1, 3, 4, 5], "{stdout}\n{stderr}");
    let want = format!("at byte {} (record #2, REC_SAMPLE): the length field says 65535 payload bytes", at[2]);
    assert!(stderr.contains(&want), "{stderr}");
    let want = format!("{rec} bytes passed over to the next good record at byte {}", at[3]);
    assert!(stderr.contains(&want), "{stderr}");
    assert!(!out.status.success(), "a skipped region makes the dump fail at its end");
    // Read through a pipe (the streaming input) the same.
    let piped = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", "--schema", schema, "-"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stdout), stdout);

    let info = common::logspec(&["info", "--json", "--schema", schema, p]);
    let v: serde_json::Value = serde_json::from_slice(&info.stdout).expect("info --json");
    let text = v.to_string();
    assert!(text.contains("bytes passed over"), "{text}");
    assert_eq!(v["records_total"].as_u64(), Some(5), "{text}");

    // A payload byte flipped: the CRC names the field.
    let mut bad = good.clone();
    bad[at[4] + 14] ^= 0x10;
    std::fs::write(&path, &bad).unwrap();
    let out = common::logspec(&["dump", "--schema", schema, p]);
    let got: Vec<u64> = common::jsonl(&String::from_utf8_lossy(&out.stdout))
        .iter()
        .filter_map(|l| l["fields"]["count"].as_u64())
        .collect();
    assert_eq!(got, [0, 1, 2, 3, 5]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checksum mismatch: `RecordHeader.crc` holds"), "{stderr}");
}

/// The golden vectors of a checked framing: the record-header vector announces the first record
/// with its CRC (computed by the golden walk's bit-by-bit Rocksoft model), which the runtime's
/// CRC verifies over the header vector and the first record's vector.
#[test]
fn the_golden_record_header_carries_the_first_records_crc() {
    let text = std::fs::read_to_string(common::checked::SCHEMA).unwrap();
    let schema = logspec::codegen::compile_str("checked.toml", &text).unwrap();
    let golden: serde_json::Value =
        serde_json::from_str(&logspec::codegen::backend::golden::vectors(&schema).unwrap()).unwrap();
    let vectors = golden["vectors"].as_array().unwrap();
    let bytes = |name: &str| {
        let v = vectors.iter().find(|v| v["struct"] == name).unwrap();
        let hex = v["bytes"].as_str().unwrap();
        let b: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        (b, v["values"].clone())
    };
    let (header, values) = bytes("RecordHeader");
    let (payload, _) = bytes("RecSample");
    let want = crc32c(&[&header[..9], &payload[..]].concat());
    assert_eq!(values["crc"].as_u64(), Some(u64::from(want)));
    assert_eq!(header[9..13], want.to_le_bytes());
    // The two vectors are a record the readers accept.
    let file = [common::checked::file_header(), header, payload].concat();
    let (_, mut r) = SliceReader::<Checked>::new(&file).unwrap();
    assert!(matches!(r.next_event(), Some(Ok(Event::Record { .. }))));
    assert!(r.next_event().is_none());
}

/// The firmware example's `make CHECKED=1` header (`examples/firmware/checked/include/`) is what
/// its schema generates: checked in and never stale, like `include/`.
#[test]
fn the_firmware_examples_checked_header_is_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/firmware/checked");
    let dir = crate::scratch::temp_dir().join("firmware-checked");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(root.join("usvlog.toml"), dir.join("usvlog.toml")).unwrap();
    let d = dir.to_str().unwrap();
    let out = common::logspec(&["gen", "-q", "--lang", "c", "--schemas", d, "--root", d]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rel = "include/usvlog/record_types.h";
    let fresh = std::fs::read_to_string(dir.join(rel)).unwrap();
    let checked_in = std::fs::read_to_string(root.join(rel)).unwrap();
    assert!(
        fresh == checked_in,
        "examples/firmware/checked/{rel} is stale: run `logspec gen --lang c --schemas examples/firmware/checked --root examples/firmware/checked`"
    );
}
