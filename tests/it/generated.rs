//! Compiles what the Rust back end generates for the feature-complete test schemas, and checks
//! its encoders against Python's `struct` module and its decoders against its encoders.

#![allow(dead_code, clippy::all)]

mod everything {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/everything.rs"));
}

mod allkinds {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/allkinds.rs"));
}

use crate::common;

use common::python_pack;
use everything::*;
use logspec::runtime::{Decode, Encode, Event, Fixed, SliceReader, Writer};

fn vec3(x: f32, y: f32, z: f32) -> Vec3 {
    Vec3 { x, y, z }
}

#[test]
fn fixed_records_match_python_struct() {
    assert_eq!(<FileHeader as Fixed>::SIZE, 32);
    assert_eq!(<RecordHeader as Fixed>::SIZE, 16);
    let s = RecState {
        mode: Mode::FAULT,
        health: Health::GNSS_OK | Health::BATTERY_LOW,
        quality: Quality::INVALID,
        faults: Faults::WATCHDOG,
        armed: true,
        battery_v: 12.5,
        temperature_c: -3.25,
    };
    let bytes = s.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<BBhI?3xfd", "255, 0x81, -1, 0x80000000, True, 12.5, -3.25"));
    assert_eq!(RecState::decode_exact(&bytes).unwrap(), s);

    let w = RecWide {
        a_u8: 200,
        a_i8: -100,
        a_u16: 60000,
        a_i16: -30000,
        a_u32: 4_000_000_000,
        a_i32: -2_000_000_000,
        a_u64: u64::MAX,
        a_i64: i64::MIN,
        a_f32: 1.5,
        a_f64: -2.5,
        a_bool: false,
        b_u16: 0x0102,
        b_i16: -2,
        b_u32: 0x01020304,
        b_u64: 0x0102030405060708,
        b_f64: 0.1,
    };
    let bytes = w.to_bytes().unwrap();
    let mut expected = python_pack(
        "<BbHh2xIiQqf4xd?7x",
        "200, -100, 60000, -30000, 4000000000, -2000000000, 2**64-1, -2**63, 1.5, -2.5, False",
    );
    expected.extend(python_pack(">HhIQd", "0x0102, -2, 0x01020304, 0x0102030405060708, 0.1"));
    assert_eq!(bytes, expected);
    assert_eq!(RecWide::decode_exact(&bytes).unwrap(), w);
}

#[test]
fn variable_records_match_python_struct() {
    // REC_PREFIXED: every prefix kind, a big-endian array with its big-endian prefix.
    let p = RecPrefixed {
        ids: vec![1, 0xdead_beef],
        key: vec![0xaa, 0xbb, 0xcc],
        blob: vec![1, 2],
        name: "ü".to_string(),
        cells: vec![-1, 2, -3],
        modes: vec![Mode::AUTO, Mode(9)],
        poses: vec![Pose { position: vec3(1.0, 2.0, 3.0), orientation: Quat { w: 1.0, x: 0.0, y: 0.0, z: 0.0 } }],
    };
    let bytes = p.to_bytes().unwrap();
    let mut e = python_pack(">H2I", "2, 1, 0xdeadbeef");
    e.extend(python_pack("<B3sH2sB2sH3hB2BB7f", "3, b'\\xaa\\xbb\\xcc', 2, b'\\x01\\x02', 2, 'ü'.encode(), 6, -1, 2, -3, 2, 2, 9, 1, 1.0, 2.0, 3.0, 1.0, 0.0, 0.0, 0.0"));
    assert_eq!(bytes, e);
    assert_eq!(p.encoded_len(), bytes.len());
    assert_eq!(RecPrefixed::decode_exact(&bytes).unwrap(), p);

    // REC_COMMAND: a union selected by an enum tag that the Rust struct does not repeat.
    let c = RecCommand { seq: 7, command: Command { body: Msg::Text { text: "go".to_string() } } };
    let bytes = c.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<IBB2s", "7, 1, 2, b'go'"));
    assert_eq!(RecCommand::decode_exact(&bytes).unwrap(), c);

    // REC_SAMPLE: an integer tag and a big-endian union.
    let s = RecSample { channel: 3, sample: Sample::Burst { rate_hz: 1000, samples: vec![1, -1] } };
    let bytes = s.to_bytes().unwrap();
    let mut e = python_pack("<BB", "3, 16");
    e.extend(python_pack(">HB2h", "1000, 2, 1, -1"));
    assert_eq!(bytes, e);
    assert_eq!(RecSample::decode_exact(&bytes).unwrap(), s);

    // A tag that selects no variant is an error that names it.
    let err = RecSample::decode_exact(&[3, 99, 0, 0]).unwrap_err();
    assert!(err.to_string().contains("tag 99"), "{err}");

    // `count = "rest"` runs to the end of the payload.
    let scan = RecScan { angle_min: -1.0, angle_step: 0.5, ranges: vec![100, 200, 300] };
    let bytes = scan.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<ff3H", "-1.0, 0.5, 100, 200, 300"));
    assert_eq!(RecScan::decode_exact(&bytes).unwrap(), scan);
    assert!(RecScan::decode_exact(&bytes[..bytes.len() - 1]).is_err(), "a ragged rest array is an error");

    // Consts are checked on decode and written on encode.
    let hb = RecHeartbeat { mode: Mode::AUTO, health: Health::IMU_OK, uptime_ms: 5 };
    let bytes = hb.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<BBBxI", "2, 2, 2, 5"));
    let mut bad = bytes.clone();
    bad[0] = 3;
    let err = RecHeartbeat::decode_exact(&bad).unwrap_err();
    assert!(err.to_string().contains("protocol") && err.to_string().contains("expected 2, found 3"), "{err}");
}

/// `size` on an array of variable-size structs (REC_STOPS): the prefix is the elements' bytes,
/// the elements are read until the span ends, and a span that ends inside an element is an error.
#[test]
fn size_prefixed_variable_size_elements() {
    use logspec::runtime::{Cursor, Endian, View};

    let r = RecStops {
        stops: vec![
            Waypoint { name: "A".into(), position: vec3(1.0, 2.0, 3.0), tolerance: 0.5 },
            Waypoint { name: "bc".into(), position: vec3(-1.0, 0.0, 4.0), tolerance: 0.25 },
        ],
        count: 7,
    };
    let bytes = r.to_bytes().unwrap();
    // Waypoint: u8 name length, name, 3 f32, f32 (18 + 19 bytes); the u16 prefix counts 37 bytes.
    let e = python_pack("<HB1s4fB2s4fB", "37, 1, b'A', 1.0, 2.0, 3.0, 0.5, 2, b'bc', -1.0, 0.0, 4.0, 0.25, 7");
    assert_eq!(bytes, e);
    assert_eq!(r.encoded_len(), bytes.len());
    assert_eq!(RecStops::decode_exact(&bytes).unwrap(), r);
    let v = RecStopsRef::view_exact(&bytes).unwrap();
    assert_eq!((v.stops.len(), v.count), (2, 7));
    assert_eq!(v.stops.iter().map(|w| w.name).collect::<Vec<_>>(), ["A", "bc"]);
    assert_eq!(v.to_owned(), r);

    // A span one byte short ends inside the second element; one byte long takes the next field's
    // byte into it: both are errors, from the owned decoder and from the view alike.
    for delta in [-1i32, 1] {
        let mut bad = bytes.clone();
        bad[0] = (37 + delta) as u8;
        let owned = RecStops::decode_exact(&bad).unwrap_err();
        let view = RecStopsRef::view_exact(&bad).unwrap_err();
        assert_eq!(owned, view, "{delta}");
        let w = RecStopsRef::decode_view(&mut Cursor::new(&bad), Endian::Little);
        assert!(w.is_err(), "{delta}");
    }
    // A span longer than the bytes there allocates nothing and fails.
    let mut bad = bytes.clone();
    bad[..2].copy_from_slice(&[0xff, 0xff]);
    assert!(RecStops::decode_exact(&bad).is_err());
    assert!(RecStopsRef::view_exact(&bad).is_err());
    // An empty span is no elements.
    let empty = python_pack("<HB", "0, 9");
    assert_eq!(RecStops::decode_exact(&empty).unwrap(), RecStops { stops: vec![], count: 9 });
}

#[test]
fn variable_width_integers() {
    // fit_widths picks the fewest bytes: id 0x1234 in 2, stamp -1 in all 8 (negative only at
    // full width), word 7 in 1 (big-endian).
    let mut v = RecVarint { lengths: 0, id: 0x1234, stamp: -1, word: 7 };
    v.fit_widths();
    assert_eq!(v.lengths, 0b0_111_01);
    let bytes = v.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<BHqB", "0b011101, 0x1234, -1, 7"));
    assert_eq!(RecVarint::decode_exact(&bytes).unwrap(), v);
    // Widths announced by the file are kept, even when wider than needed: 4-byte id, 3-byte
    // stamp (zero-extended, so positive), 2-byte big-endian word.
    let wide =
        python_pack("<BI", "0b1_010_11, 5").into_iter().chain([0xff, 0xff, 0x7f, 0x01, 0x02]).collect::<Vec<u8>>();
    let d = RecVarint::decode_exact(&wide).unwrap();
    assert_eq!((d.lengths, d.id, d.stamp, d.word), (0b101011, 5, 0x7fffff, 0x0102));
    assert_eq!(d.to_bytes().unwrap(), wide, "re-encoded in the widths it was read with");
    // A value too wide for its announced bytes is an encode error, not a truncation.
    let bad = RecVarint { lengths: 0, id: 256, stamp: 0, word: 0 };
    assert!(bad.to_bytes().unwrap_err().to_string().contains("does not fit"), "id 256 in 1 byte");
    // A cut field is a decode error naming it.
    let err = RecVarint::decode_exact(&wide[..6]).unwrap_err();
    assert_eq!(err.field, Some("stamp"), "{err}");
}

#[test]
fn framed_file_round_trip() {
    let header = FileHeader {
        schema: EVERYTHING_SCHEMA,
        created_us: 42,
        host: logspec::runtime::FixedStr::new("boat").unwrap(),
    };
    let records: Vec<EverythingRecord> = vec![
        RecNote { text: "hello".into() }.into(),
        RecPath {
            route_id: 9,
            waypoints: vec![Waypoint { name: "A".into(), position: vec3(1.0, 2.0, 3.0), tolerance: 0.5 }],
            speeds: vec![1.0, 2.0],
        }
        .into(),
        RecBlob { encoding: 1, crc: 2, data: vec![9; 40] }.into(),
    ];
    let mut w = Writer::<_, Everything>::new(Vec::new(), &header).unwrap();
    for (i, r) in records.iter().enumerate() {
        w.write(i as u64 * 10, r).unwrap();
    }
    let bytes = w.finish().unwrap();
    assert_eq!(&bytes[..8], MAGIC);
    let (h, mut r) = SliceReader::<Everything>::new(&bytes).unwrap();
    assert_eq!(h, header);
    let mut back = Vec::new();
    while let Some(ev) = r.next_event() {
        match ev.unwrap() {
            Event::Record { record, raw } => {
                assert_eq!(raw.header.timestamp, Some(back.len() as u64 * 10));
                back.push(record);
            }
            Event::Unknown { .. } => panic!("unknown"),
        }
    }
    assert_eq!(back, records);

    // The record header's const sync marker is written, and checked on read.
    assert_eq!(&bytes[32..34], &python_pack("<H", "0xA55A")[..]);
    let mut bad = bytes.clone();
    bad[32] ^= 0xff;
    let (_, mut r) = SliceReader::<Everything>::new(&bad).unwrap();
    let err = r.next_event().unwrap().unwrap_err();
    assert!(matches!(err.kind, logspec::runtime::ReadErrorKind::BadRecordHeader(_)));
    assert!(err.to_string().contains("sync") && err.to_string().contains("at byte 32"), "{err}");
    assert!(r.next_event().is_none(), "a desynchronised stream is not followed further");
}

/// The one-check paths of views that end in a counted tail (`Sample::Burst`'s `i16[]` with a
/// `u8` count, `Msg::Raw`'s `bytes` with a `u16` size) accept exactly what the owned decoders
/// accept, with the same values, bytes consumed and errors: on the whole value, every cut of
/// it, every byte flipped (counts too large or too small for the bytes there), and with bytes
/// after it.
#[test]
fn views_with_counted_tails_agree_with_owned_decoders() {
    use logspec::runtime::{Cursor, Endian, View};

    fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = (0..=bytes.len()).map(|i| bytes[..i].to_vec()).collect();
        for i in 0..bytes.len() {
            for x in [0xffu8, 0x01, 0x80] {
                let mut b = bytes.to_vec();
                b[i] ^= x;
                v.push(b);
            }
        }
        let mut longer = bytes.to_vec();
        longer.extend([9, 9, 9]);
        v.push(longer);
        v
    }

    macro_rules! agree {
        ($owned:ty, $view:ident, $value:expr) => {{
            let bytes = $value.to_bytes().unwrap();
            let mut checked = 0;
            for b in variants(&bytes) {
                let (mut c1, mut c2) = (Cursor::new(&b), Cursor::new(&b));
                let o = <$owned>::decode(&mut c1, Endian::Little);
                let w = $view::decode_view(&mut c2, Endian::Little);
                match (o, w) {
                    (Ok(o), Ok(w)) => {
                        assert_eq!(w.to_owned(), o, "{b:?}");
                        assert_eq!(c1.position(), c2.position(), "{b:?}");
                        checked += 1;
                    }
                    (Err(e1), Err(e2)) => assert_eq!(e1, e2, "{b:?}"),
                    (o, w) => panic!("{b:?}: owned {o:?}, view {:?}", w.map(|w| w.to_owned())),
                }
            }
            assert!(checked > bytes.len(), "{checked}");
        }};
    }

    agree!(
        RecSample,
        RecSampleRef,
        RecSample { channel: 3, sample: Sample::Burst { rate_hz: 1000, samples: vec![1, -1, 7] } }
    );
    agree!(Command, CommandRef, Command { body: Msg::Raw { data: vec![1, 2, 3, 4, 5] } });
    agree!(
        RecCommand,
        RecCommandRef,
        RecCommand { seq: 7, command: Command { body: Msg::Raw { data: vec![0xab; 40] } } }
    );
}

/// `FramedFormat::check_record` (a payload checked by its length where that is all there is to
/// check, `Framing::exact_size` and `decodes_by_length`) against the generic path, `decode_record` with the record dropped:
/// the same answer and the same error for every tag up to 300 and every payload length up to 80
/// bytes past the largest fixed record, each length with zeros, ones and random bytes.
fn check_record_agrees_with_decoding<F: logspec::runtime::FramedFormat>() -> usize {
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s as u8
    };
    let mut by_length = 0;
    for tag in 0..=F::MAX_TAG.min(300) {
        let size = F::exact_size(tag);
        by_length += usize::from(size.is_some());
        for len in 0..size.unwrap_or(0) + 80 {
            for fill in 0..3 {
                let p: Vec<u8> = (0..len)
                    .map(|_| match fill {
                        0 => 0,
                        1 => 0xff,
                        _ => random(),
                    })
                    .collect();
                let fast = F::check_record(tag, &p);
                let slow = F::decode_record(tag, &p).map(|r| r.map(drop));
                assert_eq!(fast, slow, "{}: tag {tag}, {len} bytes, fill {fill}", F::NAME);
                // What the readers hand on undecoded (`next_checked`) decodes.
                if F::decodes_by_length(tag, len) {
                    assert_eq!(slow, Some(Ok(())), "{}: tag {tag}, {len} bytes, fill {fill}", F::NAME);
                }
                if let (Some(n), Some(Ok(()))) = (size, &fast) {
                    assert_eq!(len, n, "{}: tag {tag} checks out only at its size", F::NAME);
                }
            }
        }
    }
    by_length
}

#[test]
fn checking_a_record_says_what_decoding_it_says() {
    use logspec::formats::{carla::Carla, usvlog::Usvlog};
    use logspec::runtime::Framing;
    // USVLOG's records are all fixed-size without consts: each is checked by its length, which
    // is the size of the record's C struct (`benches/info.rs` has them as zerocopy structs).
    assert_eq!(check_record_agrees_with_decoding::<Usvlog>(), 13);
    assert_eq!([1, 2, 3, 4, 6].map(Usvlog::exact_size), [24, 16, 12, 8, 32].map(Some));
    assert_eq!(Usvlog::exact_size(14), None);
    // Variable-size records (REC_LOG, REC_PATH, ...) are decoded.
    assert_eq!(Everything::exact_size(7), None);
    assert!(check_record_agrees_with_decoding::<Everything>() >= 4);
    check_record_agrees_with_decoding::<Carla>();
}
