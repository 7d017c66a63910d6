//! Reading files written under an older schema id, with the layouts kept in the lock file.
//!
//! `tests/data/history/usvlog.toml` is the USVLOG schema after a breaking change bumped to schema
//! id 2; its lock keeps schema id 1, the layout of the real sample file. The generated reader must
//! decode that file through `history::schema_1` exactly as the independent reference reader did,
//! decode schema-2 files with the new layout, and refuse ids it does not know.

#![allow(dead_code, clippy::all)]

use crate::common;

use common::{assert_lines_eq, data, jsonl, python_pack};
use logspec::json::JsonWriter;
use logspec::runtime::{
    with_file_format, Event, FramedFormat, ReadErrorKind, SliceReader, Versioned, WithFormat, Writer,
};

mod v2 {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/history/usvlog.rs"));
}

/// Dumps a buffer as `logspec dump` does, with whichever layout it is called with.
struct DumpAll<'a>(&'a [u8]);

impl WithFormat for DumpAll<'_> {
    type Output = (Vec<u64>, Vec<serde_json::Value>);
    fn call<F: FramedFormat>(self) -> Self::Output {
        let (_, mut r) = SliceReader::<F>::new(self.0).expect("file header");
        let mut w = JsonWriter::new();
        let mut lines = Vec::new();
        while let Some(ev) = r.next_event() {
            logspec::json::framed_event::<F>(&mut w, &ev.expect("record"));
            lines.push(serde_json::from_str(&w.take()).unwrap());
        }
        (F::KNOWN_SCHEMA_IDS.to_vec(), lines)
    }
}

#[test]
fn the_lock_history_is_in_the_generated_reader() {
    assert_eq!(v2::FW_MODEL_SCHEMA, 2);
    assert_eq!(<v2::Usvlog as Versioned>::SCHEMA_IDS, &[2, 1]);
    assert_eq!(<v2::history::schema_1::Usvlog as FramedFormat>::KNOWN_SCHEMA_IDS, &[1]);
    // The old layout of the changed record, and the new one.
    assert_eq!(v2::history::schema_1::RecSensorGnss::SIZE, 20);
    assert_eq!(v2::history::schema_1::RecSensorGnss::OFFSET_VALID, 16);
    assert_eq!(v2::RecSensorGnss::SIZE, 24);
    assert_eq!(v2::RecSensorGnss::OFFSET_HDOP, 20);
    // Named types of unchanged layouts keep their names.
    let _: v2::history::schema_1::ActSrc = v2::history::schema_1::ActSrc::MANUAL;
}

#[test]
fn a_real_schema_1_file_decodes_with_the_locked_layout() {
    let bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    let (ids, ours) = with_file_format::<v2::Usvlog, _>(&bytes, DumpAll(&bytes)).unwrap();
    assert_eq!(ids, [1], "decoded with the schema-1 layout");
    let expected = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap());
    assert_lines_eq(&ours, &expected);
}

#[test]
fn the_current_reader_refuses_an_older_file_and_says_what_to_do() {
    let bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    let err = SliceReader::<v2::Usvlog>::new(&bytes).err().expect("schema id 1 is not the current layout");
    assert!(matches!(err.kind, ReadErrorKind::OtherSchemaId { found: 1, expected: 2, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("fw_model_schema is 1") && msg.contains("with_file_format"), "{msg}");
}

#[test]
fn a_schema_2_file_decodes_with_the_new_layout() {
    let header = v2::FileHeader { fw_model_schema: 2, t0_us: 5 };
    let gnss = v2::RecSensorGnss {
        x: 1.5,
        y: -2.0,
        cog: 0.25,
        sog: 3.0,
        status: v2::GnssStatus::VALID | v2::GnssStatus::RTK,
        num_sats: 11,
        hdop: 0.75,
    };
    let mut w = Writer::<_, v2::Usvlog>::new(Vec::new(), &header).unwrap();
    w.write(100, &gnss.into()).unwrap();
    let bytes = w.finish().unwrap();
    // The payload, as Python's struct module lays out the new record.
    assert_eq!(&bytes[32 + 12..], python_pack("<4fBB2xf", "1.5, -2.0, 0.25, 3.0, 3, 11, 0.75").as_slice());

    let (ids, lines) = with_file_format::<v2::Usvlog, _>(&bytes, DumpAll(&bytes)).unwrap();
    assert_eq!(ids, [2]);
    let expected: serde_json::Value = serde_json::json!({
        "t_us": 100, "type": 12, "name": "REC_SENSOR_GNSS",
        "fields": {"x": 1.5, "y": -2.0, "cog": 0.25, "sog": 3.0, "status": 3, "num_sats": 11, "hdop": 0.75}
    });
    assert_eq!(lines, [expected]);
}

#[test]
fn the_old_layout_writes_what_the_old_firmware_wrote() {
    use v2::history::schema_1 as v1;
    let header = v1::FileHeader { fw_model_schema: 1, t0_us: 0 };
    let rec = v1::RecSensorGnss { x: 1.0, y: 2.0, cog: 3.0, sog: 4.0, valid: 1 };
    let mut w = Writer::<_, v1::Usvlog>::new(Vec::new(), &header).unwrap();
    w.write(7, &rec.into()).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(&bytes[32 + 12..], python_pack("<4fB3x", "1.0, 2.0, 3.0, 4.0, 1").as_slice());
    let mut r = SliceReader::<v1::Usvlog>::new(&bytes).unwrap().1;
    match r.next_event().unwrap().unwrap() {
        Event::Record { record: v1::UsvlogRecord::RecSensorGnss(back), .. } => assert_eq!(back, rec),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_schema_id_is_refused_with_the_known_ones() {
    let mut bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    bytes[6..10].copy_from_slice(&7u32.to_le_bytes());
    let err = with_file_format::<v2::Usvlog, _>(&bytes, DumpAll(&bytes)).err().expect("unknown id");
    assert!(matches!(err.kind, ReadErrorKind::UnknownSchemaId { found: 7, known: &[2, 1], .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("fw_model_schema is 7") && msg.contains("2, 1"), "{msg}");
}
