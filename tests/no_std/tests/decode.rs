//! The `no_std` crate's decoders on the sample files, against the references in `tests/data`.

use std::path::Path;

use logspec_no_std::{carla, carla_packets, demo_msgs, geometry, rlog, rlog_r1_messages, usvlog, usvlog_records};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../data").join(name)).unwrap()
}

/// Every record of the USVLOG sample, in order, has the type the reference output lists.
#[test]
fn usvlog_records_match_the_reference() {
    let bytes = data("usvlog/step.usvlog");
    let expected = String::from_utf8(data("usvlog/step.expected.jsonl")).unwrap();
    let names: Vec<String> = expected
        .lines()
        .map(|l| l.split("\"name\":\"").nth(1).unwrap().split('"').next().unwrap().to_string())
        .collect();
    let mut got = Vec::new();
    let n = usvlog_records(&bytes, |tag, r| {
        assert_eq!(r.to_owned().id(), tag);
        got.push(r.to_owned().name().to_string());
    })
    .unwrap();
    assert_eq!(n, names.len());
    assert_eq!(got, names);
    // The first record is the all-zero navigation solution of the reference.
    let mut first = None;
    usvlog_records(&bytes, |_, r| {
        first.get_or_insert(r);
    })
    .unwrap();
    match first.unwrap() {
        usvlog::UsvlogRecordRef::RecNavSolution(v) => assert_eq!((v.x, v.y, v.v), (0.0, 0.0, 0.0)),
        other => panic!("first record {other:?}"),
    }
}

/// The R1 sample's key definitions are the keys AdvantageScope's reference output lists.
#[test]
fn rlog_keys_match_the_reference() {
    let bytes = data("rlog/akit_v1.8.1_robotlog.rlog");
    let expected = String::from_utf8(data("rlog/akit_v1.8.1_robotlog.expected.json")).unwrap();
    let mut keys = Vec::new();
    let mut values = 0;
    let n = rlog_r1_messages(&bytes, |m| match m.body {
        rlog::R1BodyRef::KeyDef { key, .. } => keys.push(key.to_string()),
        rlog::R1BodyRef::Field { .. } => values += 1,
        rlog::R1BodyRef::Timestamp { .. } => {}
    })
    .unwrap();
    assert!(n > 1000 && values > 1000, "{n} messages, {values} values");
    assert!(!keys.is_empty());
    for k in &keys {
        assert!(expected.contains(&format!("\"{k}\"")), "key {k} is not in the reference");
    }
}

/// With `alloc`, the owned types of variable-size records are generated too: every R1 message's
/// view gives the owned message, which encodes to the bytes the view was made from.
#[cfg(feature = "alloc")]
#[test]
fn rlog_views_give_owned_messages_with_alloc() {
    use logspec_runtime::Encode;
    let bytes = data("rlog/akit_v1.8.1_robotlog.rlog");
    let mut n = 0;
    rlog_r1_messages(&bytes, |m| {
        let owned: rlog::R1Message = m.to_owned();
        assert_eq!(owned.to_bytes().unwrap(), m.as_bytes());
        n += 1;
    })
    .unwrap();
    assert!(n > 1000, "{n} messages");
}

/// A ROS message with strings and variable-length arrays (`Sample`, from `.msg` files through
/// `Builder::compile_msgs`) is viewed from its bytes with or without `alloc`; its constants are
/// on the owned type, or, without an allocator (no owned `Sample`), on the view.
#[test]
fn ros_message_views() {
    use demo_msgs::SampleRef;
    use logspec_runtime::{Encode, View};
    let mut b = Vec::new();
    // header: seq, stamp (secs, nsecs), frame_id
    b.extend(7u32.to_le_bytes());
    b.extend(1u32.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    b.extend(3u32.to_le_bytes());
    b.extend(b"map");
    // raw, letter, position[3]
    b.extend([0xfe, b'x']);
    for x in [1.5f64, -2.0, 0.25] {
        b.extend(x.to_le_bytes());
    }
    // blob, labels
    b.extend(2u32.to_le_bytes());
    b.extend([9, 8]);
    b.extend(1u32.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    b.extend(b"ok");
    // window[2], timeout
    for t in [10u32, 11, 12, 13] {
        b.extend(t.to_le_bytes());
    }
    b.extend((-1i32).to_le_bytes());
    b.extend(5i32.to_le_bytes());
    // points
    b.extend(1u32.to_le_bytes());
    b.extend(0.5f32.to_le_bytes());
    b.extend((-0.5f32).to_le_bytes());

    let s = SampleRef::view_exact(&b).unwrap();
    assert_eq!((s.header.seq, s.header.frame_id, s.raw, s.letter), (7, "map", -2, b'x'));
    assert_eq!(s.position.to_array(), [1.5, -2.0, 0.25]);
    assert_eq!((s.blob.iter().collect::<Vec<u8>>(), s.labels.len()), (vec![9, 8], 1));
    assert_eq!(s.labels.iter().map(|l| l.0).collect::<Vec<_>>(), ["ok"]);
    assert_eq!((s.timeout.sec, s.timeout.nsec), (-1, 5));
    let p = s.points.iter().next().unwrap();
    assert_eq!((p.x, p.y), (0.5, -0.5));
    // The view encodes again to the same bytes, into a buffer (no allocator needed).
    let mut buf = [0u8; 128];
    let mut out = logspec_runtime::SliceSink::new(&mut buf);
    s.encode(&mut out, logspec_runtime::Endian::Little).unwrap();
    assert_eq!((out.written(), s.encoded_len(), s.as_bytes()), (&b[..], b.len(), &b[..]));
    // A cut copy is an error, never a value.
    assert!(SampleRef::view_exact(&b[..b.len() - 1]).is_err());
    #[cfg(feature = "alloc")]
    assert_eq!((demo_msgs::Sample::MODE_IDLE, demo_msgs::Sample::OFFSET), (0, -3));
    #[cfg(not(feature = "alloc"))]
    assert_eq!((SampleRef::MODE_IDLE, SampleRef::OFFSET), (0, -3));
}

/// WPILib struct schemas (`Builder::compile_struct_schemas`) are fixed-size: owned and viewed
/// alike with or without `alloc`.
#[test]
fn wpilib_struct_views() {
    use geometry::{Pose2d, Pose2dRef};
    use logspec_runtime::{Decode, View};
    let mut b = Vec::new();
    for x in [1.0f64, -2.0, 0.5] {
        b.extend(x.to_le_bytes());
    }
    let v = Pose2dRef::view_exact(&b).unwrap();
    assert_eq!((v.translation.x, v.translation.y, v.rotation.value), (1.0, -2.0, 0.5));
    assert_eq!(Pose2d::decode_exact(&b).unwrap(), v.to_owned());
}

/// A CARLA recording, a variable-size format (its info header holds a string), framed with its
/// `Framing` and viewed packet by packet with or without `alloc`: the packet, frame and Position
/// record counts of the reference summary.
#[test]
fn carla_packets_match_the_reference() {
    let bytes = data("carla/scenario_runner_DistanceToLaneCenter.log");
    let summary = String::from_utf8(data("carla/scenario_runner_DistanceToLaneCenter.expected.summary.json")).unwrap();
    let number = |after: &str| -> usize {
        let rest = &summary[summary.find(after).unwrap() + after.len()..];
        rest.trim_start().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    let (mut frames, mut positions) = (0, 0);
    let n = carla_packets(&bytes, |_, r| match r {
        carla::CarlaRecordRef::FrameStart(_) => frames += 1,
        carla::CarlaRecordRef::Position(p) => positions += p.records.len(),
        _ => {}
    })
    .unwrap();
    assert_eq!(n, number("\"packets_total\":"));
    assert_eq!(frames, number("\"frames\":"));
    let position = &summary[summary.find("\"name\": \"Position\"").unwrap()..];
    let records: usize =
        position.split("\"records\":").nth(1).unwrap().trim_start().split(',').next().unwrap().parse().unwrap();
    assert_eq!(positions, records);
}
