//! The `no_std` crate's decoders on the sample files, against the references in `tests/data`.

use std::path::Path;

use logspec_no_std::{rlog, rlog_r1_messages, usvlog, usvlog_records};

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
