//! CARLA recorder logs: `info --json` and `dump --frames` against the independent reference
//! decoder's outputs (`tests/data/carla/*.expected.*`, from the test data's `carla_summary.py`),
//! read-write round trips, a recording written from scratch, and damaged inputs.

use crate::scratch;

use crate::common;

use common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use logspec::formats::carla::{
    ActorAdd, ActorPosition, ActorType, Attribute, AttributeType, AttributeTypeV1, Body, CarlaErrorKind, CarlaRecord,
    EventAdd, InfoHeader, Position, Reader, Vec3, Writer,
};
use serde_json::Value;

const FILES: [&str; 3] =
    ["scenario_runner_DistanceToLaneCenter", "scenario_runner_DistanceToLaneCenter_2020", "878-supp-mat_crash"];

fn log(stem: &str) -> String {
    data(&format!("carla/{stem}.log")).to_string_lossy().into_owned()
}

#[test]
fn info_json_matches_the_reference_summaries() {
    for stem in FILES {
        let out = logspec(&["info", "--json", &log(stem)]);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        let ours: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let text = std::fs::read_to_string(data(&format!("carla/{stem}.expected.summary.json"))).expect("expected");
        let expected: Value = serde_json::from_str(&text).expect("expected JSON");
        for (key, want) in expected.as_object().expect("object") {
            let got = ours.get(key).unwrap_or_else(|| panic!("{stem}: no `{key}` in {ours}"));
            if let Some(d) = json_diff(got, want, key) {
                panic!("{stem}: {d}");
            }
        }
    }
}

#[test]
fn dump_of_the_first_three_frames_matches_the_reference() {
    for stem in FILES {
        let out = logspec(&["dump", "--frames", "0..3", &log(stem)]);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(data(&format!("carla/{stem}.expected.head.jsonl"))).expect("expected");
        assert_lines_eq(&jsonl(&String::from_utf8_lossy(&out.stdout)), &jsonl(&text));
    }
}

#[test]
fn info_text_names_the_facts() {
    let out = logspec(&["info", &log("scenario_runner_DistanceToLaneCenter_2020")]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in
        ["map:         Town01", "frames:      461", "36-byte PhysicsControl wheels", "integrity:   ok", "SceneLight"]
    {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

/// Reads every packet, and writes each back through the writer.
fn round_trip(bytes: &[u8]) -> Vec<u8> {
    let mut r = Reader::new(bytes).expect("header");
    let mut w = Writer::new(Vec::new(), r.header()).expect("writer");
    while let Some(p) = r.next_packet() {
        let p = p.expect("packet");
        match &p.body {
            Body::Record { record, .. } => w.packet(record).expect("write"),
            Body::Unknown(raw) | Body::Mismatch { raw, .. } => w.raw(p.id, raw).expect("write"),
        }
    }
    w.finish().expect("finish")
}

#[test]
fn read_then_write_is_byte_identical() {
    for stem in FILES {
        let bytes = std::fs::read(log(stem)).expect("read");
        let mut r = Reader::new(&bytes[..]).expect("header");
        while let Some(p) = r.next_packet() {
            assert!(matches!(p.expect("packet").body, Body::Record { .. }), "{stem}: every packet decodes");
        }
        assert!(round_trip(&bytes) == bytes, "{stem}: round trip differs");
    }
}

fn vec3(x: f32, y: f32, z: f32) -> Vec3 {
    Vec3 { x, y, z }
}

#[test]
fn a_recording_written_from_scratch_reads_back() {
    let header = InfoHeader { version: 1, date: 1_700_000_000, map: "Town10HD_Opt".into() };
    let mut w = Writer::new(Vec::new(), &header).expect("writer");
    let mut expected = Vec::new();
    for frame in 0..100u32 {
        w.begin_frame(0.05).expect("frame");
        if frame == 0 {
            let spawn = |db_id, desc: &str| ActorAdd {
                db_id,
                r#type: ActorType::Vehicle,
                location: vec3(0.0, 0.0, 0.0),
                rotation: vec3(0.0, 0.0, 0.0),
                desc_uid: db_id,
                desc_id: desc.into(),
                attributes: vec![Attribute {
                    r#type: AttributeType::V1 { r#type: AttributeTypeV1::String },
                    id: "role_name".into(),
                    value: "hero".into(),
                }],
            };
            let add = EventAdd { records: vec![spawn(1, "vehicle.tesla.model3"), spawn(2, "vehicle.audi.tt")] };
            w.packet(&CarlaRecord::EventAdd(add)).expect("add");
        }
        let moved = |db_id: u32, speed: f32| ActorPosition {
            db_id,
            location: vec3(frame as f32 * speed, 100.0 * db_id as f32, 0.5),
            rotation: vec3(0.0, 0.0, frame as f32),
        };
        let pos = Position { records: vec![moved(1, 50.0), moved(2, 75.0), moved(3, 10.0)] };
        w.packet(&CarlaRecord::Position(pos.clone())).expect("position");
        expected.push(pos);
        w.end_frame().expect("end");
    }
    let bytes = w.finish().expect("finish");
    let mut r = Reader::new(&bytes[..]).expect("header");
    assert_eq!(r.header(), &header);
    let mut n = 0;
    while let Some(f) = r.next_frame() {
        let f = f.expect("frame");
        assert!(f.complete);
        assert_eq!(f.start.frame_id, f.index + 1);
        assert!((f.start.elapsed - 0.05 * f.index as f64).abs() < 1e-9);
        assert_eq!(f.start.duration_this, if f.index == 99 { -1.0 } else { 0.05 }, "frame {}", f.index);
        let pos = f.packets.iter().find_map(|p| match p.record() {
            Some(CarlaRecord::Position(p)) => Some(p.clone()),
            _ => None,
        });
        assert_eq!(pos.as_ref(), Some(&expected[n]));
        n += 1;
    }
    assert_eq!(n, 100);
    // The CLI agrees: 100 frames, 4.95 s.
    let path = scratch::temp_dir().join(format!("logspec-carla-scratch-{}.log", std::process::id()));
    std::fs::write(&path, &bytes).expect("write");
    let out = logspec(&["info", "--json", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["frames"], 100);
    assert!((v["duration"].as_f64().expect("duration") - 4.95).abs() < 1e-9);
    assert_eq!(v["actors"]["by_desc_id"]["vehicle.audi.tt"], 1);
}

/// The 2020 sample, cut down to its first `frames` frames.
fn first_frames(frames: usize) -> Vec<u8> {
    let bytes = std::fs::read(log("scenario_runner_DistanceToLaneCenter_2020")).expect("read");
    let mut r = Reader::new(&bytes[..]).expect("header");
    let mut end = 0;
    for _ in 0..frames {
        r.next_frame().expect("frame").expect("frame");
        end = r.position() as usize;
    }
    bytes[..end].to_vec()
}

fn write_temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = scratch::temp_dir().join(format!("logspec-carla-{name}-{}.log", std::process::id()));
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn unknown_packet_ids_are_skipped_by_size_and_reported() {
    let mut bytes = first_frames(2);
    // A fork's packet (DReyeVR uses 139) inside the last frame, before its FrameEnd.
    let end = bytes.len() - 5;
    let body = [7u8, 7, 7];
    let mut extra = vec![139u8];
    extra.extend_from_slice(&(body.len() as u32).to_le_bytes());
    extra.extend_from_slice(&body);
    bytes.splice(end..end, extra);
    let mut r = Reader::new(&bytes[..]).expect("header");
    let mut unknown = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("packet");
        if let Body::Unknown(raw) = &p.body {
            unknown.push((p.id, p.offset, raw.clone()));
        }
    }
    assert_eq!(unknown, vec![(139, end as u64, body.to_vec())]);
    assert!(round_trip(&bytes) == bytes, "unknown packets are written back as they were");
    let path = write_temp("unknown", &bytes);
    let out = logspec(&["info", "--json", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["unknown_packet_ids"], serde_json::json!([139]));
    assert_eq!(v["frames"], 2);
    assert_eq!(v["packets"]["139"]["records"], Value::Null);
}

#[test]
fn a_size_mismatch_is_reported_with_its_offset_and_skipped() {
    let mut bytes = first_frames(2);
    // Grow the first Position packet's declared size by 3 bytes (and insert them).
    let mut r = Reader::new(&bytes[..]).expect("header");
    let p = std::iter::from_fn(|| r.next_packet()).map(|p| p.expect("packet")).find(|p| p.id == 6).expect("Position");
    let at = p.offset as usize;
    let size = p.size + 3;
    bytes[at + 1..at + 5].copy_from_slice(&size.to_le_bytes());
    let body_end = at + 5 + p.size as usize;
    bytes.splice(body_end..body_end, [0u8; 3]);
    let mut r = Reader::new(&bytes[..]).expect("header");
    let mut mismatches = Vec::new();
    let mut packets = 0;
    while let Some(p) = r.next_packet() {
        let p = p.expect("a mismatch is not fatal");
        packets += 1;
        if let Body::Mismatch { consumed, .. } = &p.body {
            mismatches.push((p.offset, p.id, p.size, *consumed));
        }
    }
    assert_eq!(mismatches, vec![(at as u64, 6, size, Some(u64::from(size) - 3))]);
    assert!(packets > 20, "the packets after it are read");
    assert!(round_trip(&bytes) == bytes);
    let path = write_temp("mismatch", &bytes);
    let info = logspec(&["info", "--json", path.to_str().expect("utf-8")]);
    let dump = logspec(&["dump", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(info.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&info.stdout).expect("JSON");
    assert_eq!(v["size_mismatches"], 1);
    assert_eq!(
        v["mismatch_examples"],
        serde_json::json!([{"offset": at, "id": 6, "declared": size, "consumed": size - 3}])
    );
    assert_eq!(dump.status.code(), Some(1));
    let err = String::from_utf8_lossy(&dump.stderr);
    assert!(err.contains(&format!("packet 6 (Position) at byte {at}: declares {size} bytes")), "{err}");
    assert_eq!(jsonl(&String::from_utf8_lossy(&dump.stdout)).len(), 1 + packets, "every packet is dumped");
}

#[test]
fn a_truncated_file_yields_every_complete_packet_first() {
    let whole = first_frames(2);
    let cut = &whole[..whole.len() - 40];
    let mut r = Reader::new(cut).expect("header");
    let mut ok = 0;
    let mut err = None;
    while let Some(p) = r.next_packet() {
        match p {
            Ok(_) => ok += 1,
            Err(e) => err = Some(e),
        }
    }
    let err = err.expect("a truncation error");
    assert!(matches!(err.kind, CarlaErrorKind::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("the file ends inside a packet"), "{err}");
    let mut all = Reader::new(&whole[..]).expect("whole");
    let complete = std::iter::from_fn(|| all.next_packet())
        .map(|p| p.expect("packet"))
        .filter(|p| p.offset as usize + 5 + p.size as usize <= cut.len())
        .count();
    assert!(complete > 20);
    assert_eq!(ok, complete, "every packet that ends before the cut");
    assert!(r.frame().open, "ends inside a frame");
    let path = write_temp("truncated", cut);
    let out = logspec(&["info", "--json", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["ends_inside_frame"], true);
    assert_eq!(v["frames"], 2);
    assert!(v["trailing_bytes"].as_u64().expect("trailing") > 0);
    assert_eq!(v["size"], cut.len());
}

#[test]
fn a_ue5_recording_is_recognised_not_misdecoded() {
    // A UE5 (0.10) file: version 1, but a Position record is 4 + 2 x 3 x f64 = 52 bytes.
    let header = InfoHeader { version: 1, date: 1_750_000_000, map: "Town10HD_Opt".into() };
    let mut w = Writer::new(Vec::new(), &header).expect("writer");
    w.begin_frame(0.0).expect("frame");
    let mut body = 2u16.to_le_bytes().to_vec();
    for id in [1u32, 2] {
        body.extend_from_slice(&id.to_le_bytes());
        for v in [1.0f64, 2.0, 3.0, 0.0, 0.0, 90.0] {
            body.extend_from_slice(&v.to_le_bytes());
        }
    }
    w.raw(6, &body).expect("position");
    w.end_frame().expect("end");
    let bytes = w.finish().expect("finish");
    let err = Reader::new(&bytes[..]).err().expect("refused");
    assert!(matches!(err.kind, CarlaErrorKind::Ue5 { records: 2, size: 106, .. }), "{err}");
    let path = write_temp("ue5", &bytes);
    let out = logspec(&["info", path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("UE5 (CARLA 0.10) recording"), "{err}");
}

#[test]
fn frames_range_and_usage_errors() {
    let out = logspec(&["dump", "--frames", "1..2", &log("878-supp-mat_crash")]);
    assert!(out.status.success());
    let lines = jsonl(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines[0]["kind"], "header");
    assert!(lines[1..].iter().all(|l| l["frame"] == 1 && l["frame_id"] == 2));
    assert_eq!(lines.len(), 1 + 14, "one frame of the 0.9.15 sample: 14 packets");
    let bad = logspec(&["dump", "--frames", "x..3", &log("878-supp-mat_crash")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a frame number"));
}
