//! ROS1 bags against the independent reference dumps (`tests/data/rosbag/*.expected.*`, from
//! rosbags 0.11.9 and a standard-library scanner), through `logspec dump` and `logspec info`;
//! genmsg's md5 test vectors; Rust types generated from the bags' `.msg` definitions against the
//! dynamic decoder; the `.msg` registry; and bad input (truncation, corruption, wrong md5).

#![allow(dead_code, non_camel_case_types, clippy::all)]

use crate::scratch;

use crate::common;

mod ros_test {
    // The Rust back end parenthesises the length of each string of a `string[]`.
    #![allow(unused_parens)]
    include!(concat!(env!("OUT_DIR"), "/test_schemas/ros_test.rs"));
}

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::PathBuf;

use common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use logspec::codegen::ros::{self, md5::md5};
use logspec::formats::rosbag::{Bag, BagError, Decoders, Order};
use logspec::json::JsonWriter;
use logspec::runtime::{Decode, Visit};
use serde_json::Value as Json;

const BAGS: [&str; 8] = [
    "test_none",
    "test_bz2",
    "test_lz4",
    "test_unindexed",
    "test_truncated",
    "rosbagjs-example",
    "rosbagjs-example-bz2",
    "gen_unsorted",
];

fn bag_path(stem: &str) -> String {
    data(&format!("rosbag/{stem}.bag")).to_str().unwrap().to_string()
}

fn expected(stem: &str) -> Vec<Json> {
    jsonl(&std::fs::read_to_string(data(&format!("rosbag/{stem}.expected.jsonl"))).unwrap())
}

fn summary(stem: &str) -> Json {
    serde_json::from_str(&std::fs::read_to_string(data(&format!("rosbag/{stem}.expected.summary.json"))).unwrap())
        .unwrap()
}

/// `logspec dump` of a bag: exit code, parsed lines, stderr.
fn dump(args: &[&str]) -> (i32, Vec<Json>, String) {
    let mut all = vec!["dump"];
    all.extend_from_slice(args);
    let out = logspec(&all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), jsonl(&String::from_utf8(out.stdout).unwrap()), stderr)
}

#[test]
fn every_bag_dumps_as_the_reference() {
    for stem in BAGS {
        let (code, ours, stderr) = dump(&[&bag_path(stem)]);
        let exp = expected(stem);
        assert_lines_eq(&ours, &exp);
        if stem == "test_truncated" {
            // Every complete message is printed, then the truncation is reported with its offset.
            assert_eq!(code, 1, "{stem}: {stderr}");
            assert!(stderr.contains("truncated") && stderr.contains("byte 20585"), "{stderr}");
        } else {
            assert_eq!(code, 0, "{stem}: {stderr}");
        }
        if stem.starts_with("test_unindexed") {
            assert!(stderr.contains("no index"), "{stderr}");
        }
    }
}

/// lz4 chunks in roslz4's own flavour (FLG 0x64: content checksum, no content size), which the
/// rosbags-written `test_lz4.bag` does not have: `test_unindexed.bag` with every chunk
/// re-compressed that way.
#[test]
fn roslz4_frames_decode() {
    let bytes = std::fs::read(bag_path("gen_roslz4_unindexed")).unwrap();
    let frame = bytes.windows(4).position(|w| w == [0x04, 0x22, 0x4d, 0x18]).expect("an lz4 frame");
    assert_eq!(bytes[frame + 4], 0x64, "FLG of the ROS flavour");
    let (code, ours, stderr) = dump(&[&bag_path("gen_roslz4_unindexed")]);
    assert_eq!(code, 0, "{stderr}");
    assert_lines_eq(&ours, &expected("test_unindexed"));
}

#[test]
fn info_json_has_the_reference_facts() {
    for stem in BAGS {
        let out = logspec(&["info", "--json", &bag_path(stem)]);
        let ours: Json = serde_json::from_slice(&out.stdout).unwrap();
        let exp = summary(stem);
        for key in
            ["index_pos", "chunks", "compression", "truncated", "connections", "md5_all_ok", "messages", "topics"]
        {
            if let Some(d) = json_diff(&ours[key], &exp[key], key) {
                panic!("{stem}: {d}");
            }
        }
        assert_eq!(out.status.code(), Some(if stem == "test_truncated" { 1 } else { 0 }), "{stem}");
        // The text form names the same counts.
        let text = String::from_utf8(logspec(&["info", &bag_path(stem)]).stdout).unwrap();
        assert!(text.contains(&format!("messages:    {}", exp["messages"])), "{stem}:\n{text}");
    }
}

#[test]
fn topic_filter_keeps_only_those_topics() {
    let exp: Vec<Json> = expected("rosbagjs-example")
        .into_iter()
        .filter(|l| l["topic"] == "/turtle1/pose" || l["topic"] == "/rosout")
        .collect();
    let (code, ours, stderr) = dump(&[&bag_path("rosbagjs-example"), "--topic", "/turtle1/pose", "--topic", "/rosout"]);
    assert_eq!(code, 0, "{stderr}");
    assert_lines_eq(&ours, &exp);
    let (code, _, stderr) = dump(&[&bag_path("test_bz2"), "--topic", "/nope"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no topic matches `/nope`") && stderr.contains("/chatter"), "{stderr}");
}

#[test]
fn file_order_holds_the_same_messages_as_stored() {
    for stem in ["test_none", "test_lz4"] {
        let (code, ours, _) = dump(&[&bag_path(stem), "--file-order"]);
        assert_eq!(code, 0);
        let key = |l: &Json| l.to_string();
        let mut a: Vec<String> = ours.iter().map(key).collect();
        let mut b: Vec<String> = expected(stem).iter().map(key).collect();
        // One message was written after newer ones: file order is not time order.
        assert_ne!(a, b, "{stem}");
        a.sort();
        b.sort();
        assert_eq!(a, b, "{stem}");
    }
}

/// The md5 test vectors of the spec (§5), from the definitions extracted from the bags.
#[test]
fn genmsg_md5_vectors() {
    let set = msg_set();
    for (ty, want) in [
        ("std_msgs/Header", "2176decaecbce78abc3b96ef049fabed"),
        ("std_msgs/String", "992ce8a1687cec8c8bd883ec73ca41d1"),
        ("std_msgs/Int32", "da5909fbe378aeaf85e547e830cc1bb7"),
        ("std_msgs/Char", "1bf77f25acecdedba0e224b162199717"),
        ("std_msgs/Byte", "ad736a2e8818154c487bb80fe42ce43b"),
        ("std_msgs/Duration", "3e286caf4241d664e55f3ad380e2ae46"),
        ("std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e"),
        ("geometry_msgs/PoseStamped", "d3812c3cbc69362b77dc0b19b345f8f5"),
        ("geometry_msgs/Twist", "9f195f881246fdfa2798d1d3eebca84a"),
        ("sensor_msgs/Imu", "6a62c6daae103f4ff57a132d6f95cec2"),
        ("sensor_msgs/JointState", "3066dcd76a6cfaef579bd0f34173e9fd"),
        ("sensor_msgs/NavSatFix", "2d3a8cd499b9b4a0249fb98fd05cfa48"),
        ("sensor_msgs/PointCloud2", "1158d486dd51d683ce2f1be655c3c181"),
        ("diagnostic_msgs/DiagnosticArray", "60810da900de1dd6ddd437c3503511da"),
        ("tf2_msgs/TFMessage", "94810edda583a504dfda3829e70d7eec"),
        ("tf/tfMessage", "94810edda583a504dfda3829e70d7eec"),
        ("rosgraph_msgs/Log", "acffd30cd6b6de30f120938c17c593fb"),
        ("turtlesim/Pose", "863b248d5016ca62ea2e895ae5265cf9"),
        ("turtlesim/Color", "353891e354491c51aabe32df673fb446"),
        ("test_msgs/Everything", "8e937c0fa0425a15ae16ab4a1062d8a0"),
    ] {
        assert_eq!(md5(&set, ty).as_deref(), Some(want), "{ty}");
    }
}

fn msg_dir() -> PathBuf {
    data("rosbag/msg")
}

fn msg_set() -> ros::MsgSet {
    let mut files = Vec::new();
    collect(&msg_dir(), &mut files);
    files.sort();
    ros::compile_msg_files(&files).unwrap_or_else(|e| panic!("{}", e[0]))
}

fn collect(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The JSON of a message decoded by the Rust type generated from its `.msg` (build.rs compiles
/// tests/data/rosbag/msg with `Builder::compile_msgs`).
fn generated_json(ty: &str, bytes: &[u8]) -> String {
    use ros_test::*;
    fn json<T: Decode + Visit>(bytes: &[u8], ty: &str) -> String {
        let v = T::decode_exact(bytes).unwrap_or_else(|e| panic!("{ty}: generated decoder: {e}"));
        let mut w = JsonWriter::new();
        v.visit(None, &mut w);
        w.take()
    }
    match ty {
        "std_msgs/String" => json::<StdMsgsString>(bytes, ty),
        "std_msgs/Int32" => json::<Int32>(bytes, ty),
        "std_msgs/Char" => json::<Char>(bytes, ty),
        "std_msgs/Byte" => json::<Byte>(bytes, ty),
        "std_msgs/Duration" => json::<StdMsgsDuration>(bytes, ty),
        "std_msgs/Empty" => json::<Empty>(bytes, ty),
        "geometry_msgs/PoseStamped" => json::<PoseStamped>(bytes, ty),
        "geometry_msgs/Twist" => json::<Twist>(bytes, ty),
        "sensor_msgs/Imu" => json::<Imu>(bytes, ty),
        "sensor_msgs/JointState" => json::<JointState>(bytes, ty),
        "sensor_msgs/NavSatFix" => json::<NavSatFix>(bytes, ty),
        "sensor_msgs/PointCloud2" => json::<PointCloud2>(bytes, ty),
        "diagnostic_msgs/DiagnosticArray" => json::<DiagnosticArray>(bytes, ty),
        "tf2_msgs/TFMessage" => json::<TFMessage>(bytes, ty),
        "tf/tfMessage" => json::<tfMessage>(bytes, ty),
        "rosgraph_msgs/Log" => json::<Log>(bytes, ty),
        "turtlesim/Pose" => json::<TurtlesimPose>(bytes, ty),
        "turtlesim/Color" => json::<Color>(bytes, ty),
        "test_msgs/Everything" => json::<Everything>(bytes, ty),
        other => panic!("no generated type for {other}"),
    }
}

/// Differential test: every message of the generated and the real bags, decoded by the types
/// generated from `.msg` files and by the dynamic decoder, gives the same values.
#[test]
fn generated_types_decode_like_the_dynamic_decoder() {
    let mut per_type: BTreeMap<String, usize> = BTreeMap::new();
    for stem in ["test_none", "rosbagjs-example"] {
        let file = std::fs::File::open(bag_path(stem)).unwrap();
        let mut bag = Bag::open(std::io::BufReader::new(file)).unwrap();
        let decoders = Decoders::new(stem, &bag.connections, None);
        let conns = bag.connections.clone();
        bag.for_each_message(Order::File, None, |m| -> Result<(), BagError> {
            let ty = &conns[&m.conn].ty;
            let d = decoders.get(m.conn).unwrap().decoder.as_ref().unwrap();
            let v = d.decode(m.data).unwrap();
            let mut w = JsonWriter::new();
            d.view(&v).visit(None, &mut w);
            let generated = generated_json(ty, m.data);
            assert_eq!(generated, w.take(), "{stem}: {ty} at {:?}", m.time);
            // The decode plan, which builds no value, shows the same message.
            d.visit(m.data, &mut w).unwrap();
            assert_eq!(generated, w.take(), "{stem}: {ty} at {:?}, through the decode plan", m.time);
            *per_type.entry(ty.clone()).or_default() += 1;
            Ok(())
        })
        .unwrap();
    }
    assert_eq!(per_type.len(), 19, "{per_type:?}");
}

/// The decode plan (`MsgDecoder::visit`), the plan's check with the visit of the checked
/// message (`MsgDecoder::checked`, what dump and scan use), and the owned decode
/// (`MsgDecoder::decode`) accept and reject the same bytes with the same fault, on every message
/// of the sample bags cut at every length (every 97th for long messages) and with bytes flipped
/// (length prefixes included); the checked message shows what the owned value shows, under the
/// name it is visited with.
#[test]
fn decode_plan_and_owned_decode_agree_on_cut_and_corrupted_messages() {
    type Shown = Result<String, String>;
    fn both(d: &logspec::formats::rosbag::MsgDecoder, b: &[u8]) -> (Shown, Shown) {
        use logspec::runtime::Visitor;
        let owned = d.decode(b).map(|v| {
            let mut w = JsonWriter::new();
            d.view(&v).visit(None, &mut w);
            w.take()
        });
        let mut w = JsonWriter::new();
        let planned = d.visit(b, &mut w).map(|()| w.take());
        let (owned, planned) = (owned.map_err(|e| e.to_string()), planned.map_err(|e| e.to_string()));
        // Checked, then visited as a named member: nothing is shown of a message that fails.
        let mut w = JsonWriter::new();
        w.begin_struct(None);
        let checked = d.checked(b).map(|m| m.visit(Some("data"), &mut w)).map_err(|e| e.to_string());
        w.end_struct();
        let named = checked.map(|()| w.take());
        let expected = owned.as_ref().map(|j| format!("{{\"data\":{j}}}")).map_err(Clone::clone);
        assert_eq!(named, expected, "{}: checked and owned differ ({} bytes)", d.name, b.len());
        (owned, planned)
    }
    let (mut checked, mut faults) = (0usize, 0usize);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for stem in ["test_none", "rosbagjs-example"] {
        let mut bag = Bag::open(Cursor::new(std::fs::read(bag_path(stem)).unwrap())).unwrap();
        let decoders = Decoders::new(stem, &bag.connections, None);
        let mut seen = std::collections::BTreeSet::new();
        bag.for_each_message(Order::File, None, |m| -> Result<(), BagError> {
            let d = decoders.get(m.conn).unwrap().decoder.as_ref().unwrap();
            // Each distinct (type, length) once: the sample bags repeat their messages.
            if !seen.insert((m.conn, m.data.len())) {
                return Ok(());
            }
            let step = if m.data.len() > 512 { 97 } else { 1 };
            let mut cases: Vec<Vec<u8>> = (0..m.data.len()).step_by(step).map(|n| m.data[..n].to_vec()).collect();
            cases.push([m.data, &[0]].concat());
            for _ in 0..16 {
                let mut b = m.data.to_vec();
                if b.is_empty() {
                    break;
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = (seed >> 33) as usize % b.len().min(96);
                b[i] ^= (seed >> 13) as u8 | 1;
                cases.push(b);
            }
            for b in cases {
                let (owned, planned) = both(d, &b);
                assert_eq!(owned, planned, "{stem}: {} ({} of {} bytes)", d.name, b.len(), m.data.len());
                checked += 1;
                faults += usize::from(owned.is_err());
            }
            Ok(())
        })
        .unwrap();
    }
    assert!(checked > 1000 && faults > 500, "{checked} cases, {faults} faults");
}

/// The Rust constants generated from `.msg` constants.
#[test]
fn generated_constants() {
    assert_eq!(ros_test::Everything::I8_MIN, -128);
    assert_eq!(ros_test::Everything::U8_MAX, 255);
    assert_eq!(ros_test::Everything::GREETING, "hello # this is part of the string constant");
    assert_eq!(ros_test::Everything::PI, 3.14159);
    assert_eq!(ros_test::NavSatStatus::STATUS_NO_FIX, -1);
}

/// A minimal bag builder for the bad-input tests: header fields and records.
fn record(fields: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in fields {
        h.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        h.extend_from_slice(k.as_bytes());
        h.push(b'=');
        h.extend_from_slice(v);
    }
    let mut r = (h.len() as u32).to_le_bytes().to_vec();
    r.extend_from_slice(&h);
    r.extend_from_slice(&(data.len() as u32).to_le_bytes());
    r.extend_from_slice(data);
    r
}

/// An unindexed bag with one `std_msgs/Int32` connection (the given definition and md5) and
/// one message holding 42.
fn tiny_bag(definition: &str, md5sum: &str) -> Vec<u8> {
    tiny_bag_to(definition, md5sum, 0)
}

/// [`tiny_bag`] with its message sent on connection `msg_conn`.
fn tiny_bag_to(definition: &str, md5sum: &str, msg_conn: u32) -> Vec<u8> {
    let mut cdata = Vec::new();
    for (k, v) in
        [("topic", "/counter"), ("type", "std_msgs/Int32"), ("md5sum", md5sum), ("message_definition", definition)]
    {
        let f = record(&[(k, v.as_bytes())], b"");
        // A field list is a header without the record framing: drop the header and data lengths.
        cdata.extend_from_slice(&f[4..f.len() - 4]);
    }
    let mut chunk = record(&[("op", &[7]), ("conn", &0u32.to_le_bytes()), ("topic", b"/counter")], &cdata);
    let mut time = 1u32.to_le_bytes().to_vec();
    time.extend_from_slice(&2u32.to_le_bytes());
    chunk.extend(record(&[("op", &[2]), ("conn", &msg_conn.to_le_bytes()), ("time", &time)], &42i32.to_le_bytes()));
    let size = (chunk.len() as u32).to_le_bytes();
    let mut bag = b"#ROSBAG V2.0\n".to_vec();
    let zero8 = 0u64.to_le_bytes();
    let one = 1u32.to_le_bytes();
    bag.extend(record(
        &[("op", &[3]), ("index_pos", &zero8), ("conn_count", &one), ("chunk_count", &one)],
        &[b' '; 64],
    ));
    bag.extend(record(&[("op", &[5]), ("compression", b"none"), ("size", &size)], &chunk));
    bag
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = scratch::temp_dir().join(format!("logspec-rosbag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn empty_definition_is_reported_and_filled_from_the_registry() {
    let p = write_temp("empty_def.bag", &tiny_bag("", "da5909fbe378aeaf85e547e830cc1bb7"));
    let p = p.to_str().unwrap();
    let (code, lines, stderr) = dump(&[p]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["md5_ok"], false);
    assert!(stderr.contains("empty message_definition") && stderr.contains("--msg-path"), "{stderr}");
    assert_eq!(lines[1]["data"], Json::Null);
    let (code, lines, stderr) = dump(&[p, "--msg-path", msg_dir().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("registered .msg"), "{stderr}");
    assert_eq!(lines[1]["data"], serde_json::json!({"data": 42}));
    assert_eq!(lines[1]["time"], serde_json::json!({"sec": 1, "nsec": 2}));
    // info says which connection is wrong, and fails.
    let out = logspec(&["info", p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("connection 0: empty message_definition"));
}

#[test]
fn md5_mismatch_is_reported() {
    let p = write_temp("bad_md5.bag", &tiny_bag("int32 data", "00000000000000000000000000000000"));
    let (code, lines, stderr) = dump(&[p.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0]["md5_ok"], false);
    assert!(stderr.contains("md5 mismatch") && stderr.contains("da5909fbe378aeaf85e547e830cc1bb7"), "{stderr}");
    assert_eq!(lines[1]["data"], serde_json::json!({"data": 42}));
}

#[test]
fn bad_definitions_are_diagnosed_with_the_connection() {
    let p = write_temp("bad_def.bag", &tiny_bag("int32 data extra", "da5909fbe378aeaf85e547e830cc1bb7"));
    let (_, lines, stderr) = dump(&[p.to_str().unwrap()]);
    assert!(
        stderr.contains("error[E0701]") && stderr.contains("connection 0 (/counter) message_definition:1:1"),
        "{stderr}"
    );
    assert_eq!(lines[1]["data"], Json::Null);
}

#[test]
fn a_message_of_an_undefined_connection_is_reported() {
    let p = write_temp("bad_conn.bag", &tiny_bag_to("int32 data", "da5909fbe378aeaf85e547e830cc1bb7", 5));
    let (code, lines, stderr) = dump(&[p.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(lines.len(), 1);
    assert!(stderr.contains("connection 5, which the bag never defines"), "{stderr}");
    // The scan under the exports says it too (a skipped message is never a silent gap).
    let dir = scratch::temp_dir().join("bad_conn_csv");
    let out = logspec(&["export", "--csv", dir.to_str().unwrap(), p.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("connection 5, which the bag never defines; skipped"), "{stderr}");
}

#[test]
fn not_a_bag_and_other_versions() {
    let p = write_temp("old.bag", b"#ROSBAG V1.2\n\0\0\0\0");
    let out = logspec(&["dump", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("old.bag") && e.contains("only bag format 2.0"), "{e}");
}

/// Every prefix of a bag opens or fails cleanly, and yields only complete messages, all of them
/// before the cut; flipped bytes never panic.
#[test]
fn truncated_and_corrupted_bags_never_panic() {
    for stem in ["test_bz2", "test_lz4", "test_none"] {
        let bytes = std::fs::read(bag_path(stem)).unwrap();
        let mut last = 0;
        for cut in (0..bytes.len()).step_by(211).chain([bytes.len()]) {
            let n = count(&bytes[..cut]);
            assert!(n <= 56, "{stem} cut at {cut}: {n}");
            if cut == bytes.len() {
                assert_eq!(n, 56);
            }
            last = n;
        }
        assert_eq!(last, 56);
        let mut seed = 0x2545_f491_u64;
        for _ in 0..150 {
            let mut b = bytes.clone();
            for _ in 0..4 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = (seed >> 33) as usize % b.len();
                b[i] ^= (seed >> 13) as u8 | 1;
            }
            count(&b);
        }
    }
}

/// Messages a bag yields (decoded, in time order) before it ends or fails.
fn count(bytes: &[u8]) -> usize {
    let Ok(mut bag) = Bag::open(Cursor::new(bytes)) else { return 0 };
    let decoders = Decoders::new("x", &bag.connections, None);
    let mut n = 0;
    let _ = bag.for_each_message(Order::Time, None, |m| -> Result<(), BagError> {
        if let Some(d) = decoders.get(m.conn).and_then(|t| t.decoder.as_ref()) {
            let _ = d.decode(m.data);
        }
        n += 1;
        Ok(())
    });
    n
}

/// Indexed bags, for the time-order tests.
const INDEXED: [&str; 6] =
    ["test_none", "test_bz2", "test_lz4", "rosbagjs-example", "rosbagjs-example-bz2", "gen_unsorted"];

/// (time in ns, connection, chunk number, offset, data) of every message of a bag, in time
/// order as the `rosbag` crate's reading of the index gives it: every index data record's
/// entries, each message record read by the crate at its offset, merged by (time, connection,
/// file position).
fn crate_index_order(path: &str) -> Vec<(u64, u32, usize, u32, Vec<u8>)> {
    let bag = rosbag::RosBag::new(path).unwrap();
    let mut chunks = Vec::new();
    let mut out = Vec::new();
    for r in bag.chunk_records() {
        match r.unwrap() {
            rosbag::ChunkRecord::Chunk(c) => chunks.push(c),
            rosbag::ChunkRecord::IndexData(ix) => {
                let n = chunks.len() - 1;
                for e in ix.entries() {
                    let mut msgs = chunks[n].messages();
                    msgs.seek(e.offset).unwrap();
                    let Some(Ok(rosbag::MessageRecord::MessageData(m))) = msgs.next() else {
                        panic!("{path}: no message at offset {} of chunk {n}", e.offset)
                    };
                    assert_eq!((m.conn_id, m.time), (ix.conn_id, e.time), "{path}: the index matches the record");
                    out.push((e.time, ix.conn_id, n, e.offset, m.data.to_vec()));
                }
            }
        }
    }
    out.sort_by_key(|m| (m.0, m.1, m.2, m.3));
    out
}

/// The same facts from logspec's time order over `bag`; `chunks` are the chunk file offsets in
/// file order (to number them as the crate does).
fn our_order<R: logspec::formats::rosbag::Source>(
    bag: &mut Bag<R>,
    conns: Option<&std::collections::BTreeSet<u32>>,
) -> Result<Vec<(u64, u32, usize, u32, Vec<u8>)>, (Vec<(u64, u32, usize, u32, Vec<u8>)>, BagError)> {
    let positions: Vec<u64> = bag.chunks.iter().map(|c| c.pos).collect();
    let mut out = Vec::new();
    let r = bag.for_each_message(Order::Time, conns, |m| -> Result<(), BagError> {
        let n = positions.iter().position(|p| *p == m.chunk_pos).expect("a listed chunk");
        out.push((m.time.as_nanos(), m.conn, n, m.offset as u32, m.data.to_vec()));
        Ok(())
    });
    match r {
        Ok(()) => Ok(out),
        Err(e) => Err((out, e)),
    }
}

/// Time order is the order of the bag's index, read by an independent reader (the `rosbag`
/// crate), on every indexed bag: read from a file and from memory (where uncompressed chunks are
/// lent in place), and for a subset of the connections.
#[test]
fn time_order_is_the_index_order_of_the_rosbag_crate() {
    for stem in INDEXED {
        let path = bag_path(stem);
        let reference = crate_index_order(&path);
        let mut bag = Bag::open(std::fs::File::open(&path).unwrap()).unwrap();
        assert!(bag.indexed, "{stem}");
        assert_eq!(our_order(&mut bag, None).unwrap(), reference, "{stem}: read from the file");
        let bytes = std::fs::read(&path).unwrap();
        let mut bag = Bag::open(Cursor::new(&bytes[..])).unwrap();
        assert_eq!(our_order(&mut bag, None).unwrap(), reference, "{stem}: lent from memory");
        let some: std::collections::BTreeSet<u32> = bag.connections.keys().copied().step_by(2).collect();
        let subset: Vec<_> = reference.iter().filter(|m| some.contains(&m.1)).cloned().collect();
        assert_eq!(our_order(&mut bag, Some(&some)).unwrap(), subset, "{stem}: connections {some:?}");
    }
}

/// `gen_unsorted.bag` holds chunks whose messages are out of time order, chunks whose spans
/// overlap or touch, and ties stored with descending connection ids; only the chunks in order
/// and alone in their group are read in one walk. The index says which are in order, and so
/// does a scan of the same bag without its index.
#[test]
fn chunks_in_time_order_are_known_from_the_index_and_from_a_scan() {
    let bytes = std::fs::read(bag_path("gen_unsorted")).unwrap();
    let in_order = [true, false, true, true, true, false, true, true];
    let mut bag = Bag::open(Cursor::new(&bytes[..])).unwrap();
    assert!(bag.indexed);
    assert!(bag.chunks.iter().all(|c| c.in_order.is_none()), "read when asked");
    assert_eq!((0..8).map(|i| bag.in_order(i)).collect::<Vec<_>>(), in_order);
    let mut bag = Bag::open(std::fs::File::open(bag_path("gen_unsorted")).unwrap()).unwrap();
    assert_eq!((0..8).map(|i| bag.in_order(i)).collect::<Vec<_>>(), in_order, "read through `Read`");
    let unindexed = without_index(&bytes);
    let mut bag = Bag::open(Cursor::new(&unindexed[..])).unwrap();
    assert!(!bag.indexed);
    assert_eq!(bag.chunks.iter().map(|c| c.in_order.unwrap()).collect::<Vec<_>>(), in_order, "known from the scan");
    assert_eq!(our_order(&mut bag, None).unwrap(), crate_index_order(&bag_path("gen_unsorted")));
    let p = write_temp("gen_unsorted_unindexed.bag", &unindexed);
    let (code, ours, stderr) = dump(&[p.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("no index"), "{stderr}");
    assert_lines_eq(&ours, &expected("gen_unsorted"));
}

/// The bag with `index_pos` set to 0 (as a killed recorder leaves it): read by a scan.
fn without_index(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let at = find(&b, b"index_pos=", 0) + "index_pos=".len();
    b[at..at + 8].fill(0);
    b
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> usize {
    from + hay[from..].windows(needle.len()).position(|w| w == needle).expect("found")
}

/// A `time` header field holding `sec` seconds (its 4-byte length, name and value).
fn time_field(name: &str, sec: u32) -> Vec<u8> {
    let mut f = ((name.len() + 1 + 8) as u32).to_le_bytes().to_vec();
    f.extend_from_slice(name.as_bytes());
    f.push(b'=');
    f.extend_from_slice(&sec.to_le_bytes());
    f.extend_from_slice(&0u32.to_le_bytes());
    f
}

/// Index data that does not match its chunk (a wrong version, an entry outside the chunk's
/// span): the chunk is sorted from its records, and the output is the reference's.
#[test]
fn index_data_that_does_not_match_the_chunk_changes_nothing() {
    let bytes = std::fs::read(bag_path("gen_unsorted")).unwrap();
    // The index data records follow their chunk: the first `ver=` field after chunk A's data.
    let mut wrong_version = bytes.clone();
    let at = find(&bytes, b"\x04\x00\x00\x00op=\x04", 0);
    let ver = find(&bytes, b"ver=", at) + 4;
    wrong_version[ver] = 2;
    // Chunk A's first index entry (1 s) moved to 0 s, before the chunk's start time (1 s): in
    // order still, but not the chunk's.
    let mut outside = bytes.clone();
    let data = find(&bytes, &[24, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], at) + 4;
    outside[data] = 0;
    for (what, b) in [("wrong version", &wrong_version), ("entry outside the span", &outside)] {
        let mut bag = Bag::open(Cursor::new(&b[..])).unwrap();
        assert!(!bag.in_order(0), "{what}");
        let p = write_temp(&format!("gen_unsorted_{}.bag", what.replace(' ', "_")), b);
        let (code, ours, stderr) = dump(&[p.to_str().unwrap()]);
        assert_eq!(code, 0, "{what}: {stderr}");
        assert_lines_eq(&ours, &expected("gen_unsorted"));
    }
}

/// A chunk whose records are out of order while its index lists them in order (a record's time
/// changed after the index was written): every message is still read, the ones from the first
/// older record on sorted among themselves, then the mismatch is reported with the chunk and
/// the record.
#[test]
fn a_chunk_out_of_order_behind_an_index_in_order_is_read_whole_and_reported() {
    let bytes = std::fs::read(bag_path("gen_unsorted")).unwrap();
    let mut b = bytes.clone();
    // The message at 42 s in the last chunk (40, 41, 42 s) now says 40 s.
    let at = find(&bytes, &time_field("time", 42), 0);
    b[at + 4 + 5] = 40;
    let mut bag = Bag::open(Cursor::new(&b[..])).unwrap();
    assert!(bag.in_order(7), "the index still says so");
    let (got, e) = our_order(&mut bag, None).unwrap_err();
    assert_eq!(got.len(), 25, "every message");
    let chunk_pos = bag.chunks[7].pos;
    assert_eq!(e.offset, chunk_pos, "{e}");
    assert!(e.message.contains("does not match the chunk") && e.message.contains("time 40.000000000"), "{e}");
    let times: Vec<u64> = got[22..].iter().map(|m| m.0 / 1_000_000_000).collect();
    assert_eq!(times, [40, 41, 40]);
    let mut reference = crate_index_order(&bag_path("gen_unsorted"));
    reference[24].0 = 40_000_000_000;
    assert_eq!(got, reference, "everything before the chunk as the reference, the chunk as stored");
    let p = write_temp("gen_unsorted_liar.bag", &b);
    let (code, ours, stderr) = dump(&[p.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("byte {chunk_pos}")) && stderr.contains("does not match the chunk"), "{stderr}");
    assert_eq!(ours.len(), 3 + 25, "the connections and every message");
}

/// What the index says of each chunk (in time order or not) is what its records say: every
/// indexed bag against a scan of the same bag without its index (few connections per chunk, and
/// many: `test_none.bag` has 15 in its one chunk).
#[test]
fn the_index_says_what_the_records_say() {
    let mut many = false;
    for stem in INDEXED {
        let bytes = std::fs::read(bag_path(stem)).unwrap();
        let mut indexed = Bag::open(Cursor::new(&bytes[..])).unwrap();
        let unindexed = without_index(&bytes);
        let scanned = Bag::open(Cursor::new(&unindexed[..])).unwrap();
        assert!(indexed.indexed && !scanned.indexed && scanned.stop.is_none(), "{stem}");
        assert_eq!(indexed.chunks.len(), scanned.chunks.len(), "{stem}");
        for (i, c) in scanned.chunks.iter().enumerate() {
            many |= c.counts.len() > 8;
            assert_eq!(Some(indexed.in_order(i)), c.in_order, "{stem}: chunk {i}");
        }
    }
    assert!(many, "a chunk with many connections");
}

/// What a scan hands its sink: (channel, time, the value as JSON), in order.
#[derive(Default)]
struct Recorded {
    names: BTreeMap<usize, String>,
    got: Vec<(String, u64, String)>,
}

impl logspec::log::Samples for Recorded {
    fn channel(&mut self, id: usize, c: &logspec::log::Channel) -> Result<(), logspec::log::Error> {
        self.names.insert(id, c.name.clone());
        Ok(())
    }
    fn sample(&mut self, id: usize, t_ns: u64, value: &logspec::value::Value) -> Result<(), logspec::log::Error> {
        let mut w = JsonWriter::new();
        value.write_to(&mut w, None);
        self.got.push((self.names[&id].clone(), t_ns, w.take()));
        Ok(())
    }
    fn visit(&mut self, id: usize, t_ns: u64, value: &dyn logspec::log::DynVisit) -> Result<(), logspec::log::Error> {
        let mut w = JsonWriter::new();
        value.visit_dyn(&mut w);
        self.got.push((self.names[&id].clone(), t_ns, w.take()));
        Ok(())
    }
}

/// `Log::scan` of every channel of the bag at `path`, read through its map or through reads.
fn scanned(path: &std::path::Path, map: bool) -> (Recorded, Result<logspec::log::Outcome, logspec::log::Error>) {
    let log = logspec::log::open(path, &logspec::log::Open { map, ..Default::default() }).expect("opens");
    let mut sink = Recorded::default();
    let r = log.scan(&logspec::log::Select::default(), &mut sink);
    (sink, r)
}

/// A regular-file bag is read in place through its map (uncompressed chunks lent where they lie,
/// compressed ones decompressed from it) or through reads of the file: both give every message
/// the reference dump lists, on its topic at its time and in its order, with the same values.
#[test]
fn a_bag_scans_alike_through_its_map_and_through_reads() {
    for stem in BAGS {
        let path = PathBuf::from(bag_path(stem));
        let (mapped, m) = scanned(&path, true);
        let (read, r) = scanned(&path, false);
        let (m, r) = (m.expect("scans"), r.expect("scans"));
        assert_eq!((m.samples, &m.warnings, &m.error), (r.samples, &r.warnings, &r.error), "{stem}");
        assert!(mapped.got == read.got, "{stem}: the samples differ through the map");
        let reference: Vec<(String, u64)> = expected(stem)
            .iter()
            .filter(|l| l["kind"] == "message")
            .map(|l| {
                let t = &l["time"];
                (
                    l["topic"].as_str().unwrap().to_string(),
                    t["sec"].as_u64().unwrap() * 1_000_000_000 + t["nsec"].as_u64().unwrap(),
                )
            })
            .collect();
        let got: Vec<(String, u64)> = mapped.got.iter().map(|(c, t, _)| (c.clone(), *t)).collect();
        assert_eq!(got, reference, "{stem}: the messages of the reference dump, in its order");
    }
}

/// A mapped bag that another process cuts after it was opened and before it is scanned: the
/// scan hands over the messages of the complete chunks before the cut (the same as a whole read
/// gives, in its order), then ends with the error that says the file is truncated and where;
/// cut while the scan reads it (by the sink, at the first message), the scan ends with the
/// error that says so and from which offset the bytes read were not the file's; never a crash.
#[test]
fn a_mapped_bag_truncated_between_open_and_scan_ends_with_an_error_after_the_messages_before_it() {
    // Uncompressed chunks, no index (the scan finds the chunks): a third of it cut, through
    // its fourth chunk.
    let bytes = std::fs::read(bag_path("test_unindexed")).unwrap();
    let whole = write_temp("whole_for_cut.bag", &bytes);
    let (all, r) = scanned(&whole, true);
    assert_eq!(r.expect("scans").samples as usize, all.got.len());
    let cut = bytes.len() * 2 / 3;
    let open = |name: &str| {
        let path = write_temp(name, &bytes);
        let log = logspec::log::open(&path, &logspec::log::Open { map: true, ..Default::default() }).expect("opens");
        (path, log)
    };
    let truncate = |path: &std::path::Path| {
        std::fs::OpenOptions::new().write(true).open(path).unwrap().set_len(cut as u64).unwrap();
    };
    let (path, log) = open("cut_before_scan.bag");
    truncate(&path);
    let mut sink = Recorded::default();
    let outcome = log.scan(&logspec::log::Select::default(), &mut sink).expect("the messages before the cut");
    let error = outcome.error.expect("the truncation is the scan's error");
    assert!(error.contains("the file is truncated") && error.contains("complete chunk(s) before it"), "{error}");
    let at = outcome.fault.and_then(|f| f.offset).expect("where the file ends");
    assert!(at < cut as u64, "{at} vs the cut at {cut}");
    // The messages of the chunks before the cut, as the whole bag gives them.
    let n = sink.got.len();
    assert_eq!(outcome.samples as usize, n);
    assert!(n >= all.got.len() / 4 && n < all.got.len(), "{n} of {}", all.got.len());
    assert!(sink.got[..] == all.got[..n], "the messages before the cut are the bag's");

    /// Cuts the file at its first sample, then records as [`Recorded`].
    struct CutAtFirst<'p> {
        cut: Option<Box<dyn FnOnce() + 'p>>,
        rec: Recorded,
    }
    impl logspec::log::Samples for CutAtFirst<'_> {
        fn channel(&mut self, id: usize, c: &logspec::log::Channel) -> Result<(), logspec::log::Error> {
            self.rec.channel(id, c)
        }
        fn sample(&mut self, id: usize, t: u64, v: &logspec::value::Value) -> Result<(), logspec::log::Error> {
            self.rec.sample(id, t, v)
        }
        fn visit(&mut self, id: usize, t: u64, v: &dyn logspec::log::DynVisit) -> Result<(), logspec::log::Error> {
            if let Some(cut) = self.cut.take() {
                cut();
            }
            self.rec.visit(id, t, v)
        }
    }
    let (path, log) = open("cut_while_scanned.bag");
    let mut sink = CutAtFirst { cut: Some(Box::new(|| truncate(&path))), rec: Recorded::default() };
    let err = log.scan(&logspec::log::Select::default(), &mut sink).err();
    let Some(logspec::log::Error::At(fault)) = err else { panic!("the truncation is an error, got {err:?}") };
    assert!(fault.message.contains("truncated while it was being read"), "{}", fault.message);
    let gone = fault.offset.expect("where the bytes were gone");
    assert!(gone >= cut as u64 && gone < bytes.len() as u64, "{gone} vs the cut at {cut}");
    // The messages read before the cut are the bag's (those read past it, zeros, are what the
    // error disowns).
    assert!(!sink.rec.got.is_empty() && sink.rec.got[0] == all.got[0]);
}
