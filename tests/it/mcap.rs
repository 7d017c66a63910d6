//! MCAP files of ROS 2 recordings: every test file dumps equal to the references' canonical dump
//! (`tests/data/ros2/`: rosbags 0.11.9 and mcap-ros2-support 0.6.0 agree byte for byte, the
//! topic lines' `messages` counts included), summaries hold the reference facts, and cut or corrupted copies give complete messages only, then the offset,
//! never a panic.

use crate::common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use crate::scratch;
use serde_json::Value;

const FILES: [&str; 5] = [
    "rosbag2_mcap_cdr_test_0",
    "rosbag2_mcap_talker",
    "rosbag2_mcap_rewriter_b_0",
    "gen_rosbags_corner",
    "gen_mcapros2_zstd",
];

fn input(stem: &str) -> std::path::PathBuf {
    data(&format!("ros2/{stem}.mcap"))
}

fn expected(stem: &str) -> Vec<Value> {
    jsonl(&std::fs::read_to_string(data(&format!("ros2/{stem}.expected.jsonl"))).unwrap())
}

fn summary(stem: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(&format!("ros2/{stem}.expected.summary.json"))).unwrap())
        .unwrap()
}

/// The dump of a file: its lines, its exit status and its standard error.
fn dump(path: &std::path::Path, extra: &[&str]) -> (Vec<Value>, bool, String) {
    let mut args = vec!["dump", path.to_str().unwrap()];
    args.extend(extra);
    let out = logspec(&args);
    (jsonl(&String::from_utf8(out.stdout).unwrap()), out.status.success(), String::from_utf8(out.stderr).unwrap())
}

fn kind<'a>(lines: &'a [Value], k: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == k).collect()
}

#[test]
fn every_file_dumps_as_the_references() {
    for stem in FILES {
        let (ours, ok, err) = dump(&input(stem), &[]);
        assert!(ok, "{stem}: {err}");
        let exp = expected(stem);
        // Topic lines: by id (the dump lists a file's channels as its summary or its records
        // give them).
        let mut ours_topics: Vec<Value> = kind(&ours, "topic").into_iter().cloned().collect();
        ours_topics.sort_by_key(|t| t["id"].as_u64());
        let exp_topics: Vec<Value> = kind(&exp, "topic").into_iter().cloned().collect();
        assert_lines_eq(&ours_topics, &exp_topics);
        let ours_msgs: Vec<Value> = kind(&ours, "message").into_iter().cloned().collect();
        let exp_msgs: Vec<Value> = kind(&exp, "message").into_iter().cloned().collect();
        assert_lines_eq(&ours_msgs, &exp_msgs);
    }
}

#[test]
fn summaries_hold_the_reference_facts() {
    for stem in FILES {
        let out = logspec(&["info", "--json", input(stem).to_str().unwrap()]);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let exp = summary(stem);
        assert_eq!(ours["format"], "mcap");
        assert_eq!(ours["ok"], true, "{stem}");
        for (a, b) in [
            ("profile", "profile"),
            ("library", "library"),
            ("messages", "messages"),
            ("log_time_min", "log_time_min"),
            ("log_time_max", "log_time_max"),
            ("channels", "topics"),
        ] {
            if let Some(d) = json_diff(&ours[a], &exp[b], a) {
                panic!("{stem}: {d}");
            }
        }
        // The reference lists a file's chunk count and compressions from its summary.
        if !exp["chunks"].is_null() {
            assert_eq!(ours["chunks"], exp["chunks"], "{stem}");
            let compression: Vec<Value> =
                exp["chunk_compression"].as_array().unwrap().iter().filter(|c| *c != "").cloned().collect();
            let ours_c: Vec<Value> =
                ours["compression"].as_array().unwrap().iter().filter(|c| *c != "").cloned().collect();
            assert_eq!(ours_c, compression, "{stem}");
        }
        for t in ours["topics"].as_array().unwrap() {
            let n = &exp["messages_per_topic"][t["topic"].as_str().unwrap()];
            let n = if n.is_null() { Value::from(0) } else { n.clone() };
            assert_eq!(t["messages"], n, "{stem}: {t}");
            assert_eq!(t["undecodable"], 0, "{stem}: {t}");
        }
    }
}

/// The messages printed are the reference's, in its order, with none changed: a subsequence.
fn assert_subsequence(ours: &[&Value], all: &[&Value], what: &str) {
    let mut at = 0;
    for m in ours {
        match all[at..].iter().position(|e| json_diff(m, e, "").is_none()) {
            Some(i) => at += i + 1,
            None => panic!("{what}: a message that is not the reference's, or out of its order: {m}"),
        }
    }
}

#[test]
fn cut_copies_give_every_complete_message_then_the_offset() {
    let dir = scratch::temp_dir().join("mcap-cut");
    std::fs::create_dir_all(&dir).unwrap();
    for stem in ["gen_mcapros2_zstd", "rosbag2_mcap_talker", "gen_rosbags_corner"] {
        let bytes = std::fs::read(input(stem)).unwrap();
        let exp = expected(stem);
        let exp_msgs = kind(&exp, "message");
        let step = (bytes.len() / 23).max(1);
        let mut most = 0;
        for cut in (9..bytes.len()).step_by(step).chain([bytes.len() - 8, bytes.len() - 1]) {
            let p = dir.join(format!("{stem}-{cut}.mcap"));
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let (ours, ok, err) = dump(&p, &[]);
            assert!(!ok, "{stem} cut at {cut}: a cut file must fail");
            assert!(err.contains("byte ") && !err.contains("panicked"), "{stem} cut at {cut}: {err}");
            let msgs = kind(&ours, "message");
            assert_subsequence(&msgs, &exp_msgs, &format!("{stem} cut at {cut}"));
            most = most.max(msgs.len());
        }
        // A file cut in its summary section still has every message.
        assert_eq!(most, exp_msgs.len(), "{stem}");
    }
}

#[test]
fn a_summary_that_does_not_check_out_is_passed_over() {
    // The footer's summary CRC made wrong (the footer: opcode, length, summary start, summary
    // offset start, CRC; then the 8-byte magic): the reader walks the records instead, and the
    // dump is the reference's, the topic lines' counts from the message indexes after the chunks.
    let dir = scratch::temp_dir().join("mcap-summary");
    std::fs::create_dir_all(&dir).unwrap();
    for stem in FILES {
        let mut b = std::fs::read(input(stem)).unwrap();
        let n = b.len();
        assert_ne!(b[n - 8 - 20..n - 8 - 12], [0; 8], "{stem}: the file has a summary");
        b[n - 8 - 4] ^= 0x5a;
        let p = dir.join(format!("{stem}.mcap"));
        std::fs::write(&p, &b).unwrap();
        let (ours, ok, err) = dump(&p, &[]);
        assert!(ok, "{stem}: {err}");
        let exp = expected(stem);
        let mut ours_topics: Vec<Value> = kind(&ours, "topic").into_iter().cloned().collect();
        ours_topics.sort_by_key(|t| t["id"].as_u64());
        assert_lines_eq(&ours_topics, &kind(&exp, "topic").into_iter().cloned().collect::<Vec<_>>());
        let owned = |v: Vec<&Value>| -> Vec<Value> { v.into_iter().cloned().collect() };
        assert_lines_eq(&owned(kind(&ours, "message")), &owned(kind(&exp, "message")));
    }
}

#[test]
fn corrupted_copies_skip_the_chunk_and_go_on() {
    let dir = scratch::temp_dir().join("mcap-corrupt");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = "gen_mcapros2_zstd";
    let bytes = std::fs::read(input(stem)).unwrap();
    let exp = expected(stem);
    let exp_msgs = kind(&exp, "message");
    let mut next = crate::common::xorshift(32);
    for round in 0..40 {
        let mut b = bytes.clone();
        for _ in 0..1 + round % 4 {
            let at = 8 + (next() as usize) % (b.len() - 16);
            b[at] ^= 1 + (next() % 255) as u8;
        }
        let p = dir.join(format!("{round}.mcap"));
        std::fs::write(&p, &b).unwrap();
        let (ours, _, err) = dump(&p, &[]);
        assert!(!err.contains("panicked"), "round {round}: {err}");
        // Whatever decoded is a message of the reference (every chunk has a CRC); a message of
        // a channel whose schema was damaged is kept as bytes, and said so.
        let msgs = kind(&ours, "message");
        let decoded: Vec<&Value> = msgs.iter().copied().filter(|m| m.get("bytes").is_none()).collect();
        assert_subsequence(&decoded, &exp_msgs, &format!("round {round}"));
        if decoded.len() < msgs.len() {
            assert!(err.contains("kept as bytes"), "round {round}: {err}");
        }
        let info = logspec(&["info", "--json", p.to_str().unwrap()]);
        assert!(!String::from_utf8_lossy(&info.stderr).contains("panicked"), "round {round}");
    }
}

/// Maps (a u32 byte length, then key/value pairs) read to the end of their span: a channel whose
/// metadata map's length ends inside its last pair, or claims 4 GB, is skipped and reported at
/// its byte offset, and the rest of the file is read. The file is written here, byte by byte by
/// the MCAP specification.
#[test]
fn a_map_whose_length_does_not_end_on_a_pair_is_skipped() {
    fn text(t: &[u8]) -> Vec<u8> {
        [&(t.len() as u32).to_le_bytes()[..], t].concat()
    }
    fn record(op: u8, body: &[u8]) -> Vec<u8> {
        [&[op][..], &(body.len() as u64).to_le_bytes(), body].concat()
    }
    fn channel(id: u16, topic: &[u8], map_len: u32) -> Vec<u8> {
        let pair = [text(b"k"), text(b"v")].concat();
        let body =
            [&id.to_le_bytes()[..], &0u16.to_le_bytes(), &text(topic), &text(b"json"), &map_len.to_le_bytes(), &pair]
                .concat();
        record(0x04, &body)
    }
    fn message(channel: u16, t: u64, data: &[u8]) -> Vec<u8> {
        let body = [&channel.to_le_bytes()[..], &0u32.to_le_bytes(), &t.to_le_bytes(), &t.to_le_bytes(), data].concat();
        record(0x05, &body)
    }
    let magic = b"\x89MCAP0\r\n";
    let dir = scratch::temp_dir().join("mcap-map");
    std::fs::create_dir_all(&dir).unwrap();
    // The pair is 4 + 1 + 4 + 1 = 10 bytes.
    for bad_len in [9u32, 11, u32::MAX] {
        let mut f = magic.to_vec();
        f.extend(record(0x01, &[text(b""), text(b"hand")].concat()));
        f.extend(channel(1, b"/a", 10));
        let bad_at = f.len();
        f.extend(channel(2, b"/b", bad_len));
        f.extend(message(1, 5, br#"{"x":1}"#));
        f.extend(message(2, 6, br#"{"x":2}"#));
        f.extend(message(1, 7, br#"{"x":3}"#));
        f.extend(record(0x0F, &0u32.to_le_bytes()));
        f.extend(record(0x02, &[0u8; 20]));
        f.extend(magic);
        let p = dir.join(format!("{bad_len}.mcap"));
        std::fs::write(&p, &f).unwrap();
        let (ours, ok, err) = dump(&p, &[]);
        assert!(!ok, "{bad_len}: the damage is reported in the exit status");
        assert!(
            err.contains(&format!("byte {bad_at}: a record (opcode 0x04) that does not parse")),
            "{bad_len}: {err}"
        );
        let topics: Vec<&Value> = kind(&ours, "topic");
        assert_eq!(topics.len(), 1, "{bad_len}: {ours:?}");
        assert_eq!(topics[0]["topic"], "/a");
        let msgs: Vec<(u64, Value)> =
            kind(&ours, "message").iter().map(|m| (m["log_time"].as_u64().unwrap(), m["data"].clone())).collect();
        assert_eq!(msgs, [(5, serde_json::json!({"x": 1})), (7, serde_json::json!({"x": 3}))], "{bad_len}");
    }
}

/// `schemas/mcap.toml` read by the IR interpreter (`dump --schema`): the header, the channels
/// (their metadata maps: size-prefixed sequences of variable-size pairs) and the statistics (a
/// map of fixed-size entries) hold the reference summary's facts. The walk ends cleanly at the
/// end magic, the schema's `[framing] trailer`.
#[test]
fn the_schema_reads_every_record_through_the_interpreter() {
    for stem in FILES {
        let path = input(stem);
        let out = logspec(&["dump", "--schema", "schemas/mcap.toml", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{stem}: {err}");
        let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
        // The last record is the Footer (the magic after it is no record).
        assert_eq!(lines.last().unwrap()["name"], "FOOTER", "{stem}");
        let named = |n: &str| lines.iter().filter(|l| l["name"] == n).map(|l| &l["fields"]).collect::<Vec<_>>();
        let exp = summary(stem);
        let header = named("HEADER");
        assert_eq!((&header[0]["profile"], &header[0]["library"]), (&exp["profile"], &exp["library"]), "{stem}");
        let mut topics = std::collections::BTreeMap::new();
        for c in named("CHANNEL") {
            assert!(c["metadata"].as_array().unwrap().iter().all(|p| p["key"].is_string()), "{stem}: {c}");
            topics.insert(c["id"].as_u64().unwrap(), c["topic"].as_str().unwrap().to_string());
        }
        let stats = named("STATISTICS");
        assert_eq!(stats.len(), 1, "{stem}: a summary with statistics");
        assert_eq!(stats[0]["message_count"], exp["messages"], "{stem}");
        assert_eq!(stats[0]["chunk_count"], exp["chunks"], "{stem}");
        let counts: serde_json::Map<String, Value> = stats[0]["channel_message_counts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["message_count"] != 0)
            .map(|c| (topics[&c["channel_id"].as_u64().unwrap()].clone(), c["message_count"].clone()))
            .collect();
        assert_eq!(Value::Object(counts), exp["messages_per_topic"], "{stem}");
    }
}

#[test]
fn big_endian_cdr_decodes_as_little_endian_does() {
    // `/corner_be` carries a Corner message serialised big-endian (encapsulation 00 00).
    let (ours, ok, err) = dump(&input("gen_rosbags_corner"), &["--channel", "/corner*"]);
    assert!(ok, "{err}");
    let msgs = kind(&ours, "message");
    let be: Vec<&&Value> = msgs.iter().filter(|m| m["topic"] == "/corner_be").collect();
    assert_eq!(be.len(), 1);
    let exp = expected("gen_rosbags_corner");
    let want = kind(&exp, "message").into_iter().find(|m| m["topic"] == "/corner_be").unwrap();
    assert!(json_diff(be[0], want, "").is_none());
}

#[test]
fn channel_and_time_selection_use_the_chunk_indexes() {
    let stem = "gen_mcapros2_zstd";
    let exp = expected(stem);
    let exp_msgs = kind(&exp, "message");
    let (ours, ok, err) = dump(&input(stem), &["--channel", "/chatter"]);
    assert!(ok, "{err}");
    let want: Vec<&Value> = exp_msgs.iter().copied().filter(|m| m["topic"] == "/chatter").collect();
    assert_eq!(kind(&ours, "message"), want);
    assert!(kind(&ours, "topic").iter().all(|t| t["topic"] == "/chatter"));
    // The window counts seconds from the first message.
    let t0 = exp_msgs[0]["log_time"].as_u64().unwrap();
    let (ours, ok, err) = dump(&input(stem), &["--since", "0.05", "--until", "0.1"]);
    assert!(ok, "{err}");
    let want: Vec<&Value> = exp_msgs
        .iter()
        .copied()
        .filter(|m| (t0 + 50_000_000..=t0 + 100_000_000).contains(&m["log_time"].as_u64().unwrap()))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(kind(&ours, "message"), want);
    // A topic that is not in the file is an error that names the file's topics.
    let out = logspec(&["dump", input(stem).to_str().unwrap(), "--channel", "/nothing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/chatter"));
}

#[test]
fn standard_input_reads_as_the_file() {
    let stem = "gen_mcapros2_zstd";
    let bytes = std::fs::read(input(stem)).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let (file, _, _) = dump(&input(stem), &[]);
    assert_eq!(jsonl(&String::from_utf8(out.stdout).unwrap()), file);
}

#[test]
fn convert_keeps_cdr_messages_as_recorded() {
    let dir = scratch::temp_dir().join("mcap-convert");
    std::fs::create_dir_all(&dir).unwrap();
    for stem in ["gen_rosbags_corner", "gen_mcapros2_zstd"] {
        let out = dir.join(format!("{stem}.mcap"));
        let run = logspec(&["convert", input(stem).to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{stem}: {}", String::from_utf8_lossy(&run.stderr));
        // Read back by the mcap crate: each message's bytes are the source's, in log-time order,
        // on a `cdr` channel with the source's `ros2msg` schema.
        let src = std::fs::read(input(stem)).unwrap();
        let mut want: Vec<(String, u64, Vec<u8>, String)> = mcap::MessageStream::new(&src)
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                let s = m.channel.schema.as_ref().unwrap();
                (m.channel.topic.clone(), m.log_time, m.data.to_vec(), String::from_utf8(s.data.to_vec()).unwrap())
            })
            .collect();
        want.sort_by_key(|w| w.1);
        let bytes = std::fs::read(&out).unwrap();
        let got: Vec<(String, u64, Vec<u8>, String)> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                assert_eq!(m.channel.message_encoding, "cdr");
                let s = m.channel.schema.as_ref().unwrap();
                assert_eq!(s.encoding, "ros2msg");
                (m.channel.topic.clone(), m.log_time, m.data.to_vec(), String::from_utf8(s.data.to_vec()).unwrap())
            })
            .collect();
        assert_eq!(got, want, "{stem}");
        // And logspec reads the copy as it reads the source.
        let (a, ok, err) = dump(&out, &[]);
        assert!(ok, "{err}");
        let (b, _, _) = dump(&input(stem), &[]);
        let strip = |v: Vec<&Value>| -> Vec<Value> {
            v.into_iter()
                .map(|m| {
                    let mut m = m.clone();
                    m.as_object_mut().unwrap().remove("topic_id");
                    m
                })
                .collect()
        };
        assert_eq!(strip(kind(&a, "message")), strip(kind(&b, "message")), "{stem}");
    }
}

/// The end magic (`[framing] trailer` in `schemas/mcap.toml`) cut, missing or wrong: every record
/// before it, then an error at its offset (the file's length less 8) saying what was expected
/// and found; the interpreter and the reader generated from the schema agree.
#[test]
fn a_cut_or_wrong_end_magic_is_reported_at_its_offset() {
    use logspec::formats::mcap::wire::Mcap;
    use logspec::runtime::{ReadErrorKind, SliceReader};
    const MAGIC: &[u8] = b"\x89MCAP0\r\n";
    let dir = scratch::temp_dir().join("mcap-trailer");
    std::fs::create_dir_all(&dir).unwrap();
    for stem in FILES {
        let good = std::fs::read(input(stem)).unwrap();
        assert_eq!(&good[good.len() - 8..], MAGIC, "{stem}");
        let at = good.len() - 8;
        fn records(bytes: &[u8]) -> Vec<Result<logspec::runtime::RawRecord<'_>, logspec::runtime::ReadError>> {
            SliceReader::<Mcap>::new(bytes).unwrap().1.collect()
        }
        // The whole file: records up to the Footer, then a clean end, in the generated reader too.
        let whole = records(&good);
        assert!(whole.iter().all(Result::is_ok), "{stem}");
        let footer = whole.last().unwrap().as_ref().unwrap();
        assert_eq!((footer.header.tag, footer.offset + 9 + footer.header.len), (2, at as u64), "{stem}");
        let mut wrong = good.clone();
        *wrong.last_mut().unwrap() = b'X';
        let cases: [(&str, Vec<u8>, &str); 4] = [
            (
                "cut3",
                good[..good.len() - 3].to_vec(),
                "file truncated inside the file trailer: needed 8 bytes, only 5 left",
            ),
            ("cut8", good[..at].to_vec(), "file truncated inside the file trailer: needed 8 bytes, only 0 left"),
            (
                "wrong",
                wrong,
                "the file trailer `Magic` should be 89 4D 43 41 50 30 0D 0A, found 89 4D 43 41 50 30 0D 58",
            ),
            ("one-more", [good.as_slice(), b"!"].concat(), ""),
        ];
        for (name, bytes, want) in cases {
            let path = dir.join(format!("{stem}-{name}.mcap"));
            std::fs::write(&path, &bytes).unwrap();
            let out = logspec(&["dump", "--schema", "schemas/mcap.toml", path.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && !err.contains("panicked"), "{stem} {name}: {err}");
            assert!(err.contains(&format!("at byte {at} ")) && err.contains(want), "{stem} {name}: {err}");
            // Every record before the end is there.
            let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
            assert_eq!(lines.len(), whole.len(), "{stem} {name}");
            // The generated reader: the same records, then one error at the same offset.
            let got = records(&bytes);
            assert_eq!(got.len(), whole.len() + 1, "{stem} {name}");
            let e = got.last().unwrap().as_ref().unwrap_err();
            assert_eq!(e.offset, at as u64, "{stem} {name}: {e}");
            match (name, &e.kind) {
                ("cut3" | "cut8", ReadErrorKind::Truncated { what: "file trailer", .. }) => {}
                ("wrong", ReadErrorKind::Decode(_)) => assert!(e.to_string().contains("file trailer"), "{e}"),
                // Nine bytes left are framed as a record: a record header cut short.
                ("one-more", ReadErrorKind::Truncated { what: "payload", .. }) => {}
                _ => panic!("{stem} {name}: {e}"),
            }
        }
    }
}

/// The runtime's writer of the format generated from `schemas/mcap.toml` ends the file with the
/// end magic (`Writer::finish`); its reader reads the file back and ends cleanly.
#[test]
fn the_generated_writer_ends_the_file_with_the_magic() {
    use logspec::formats::mcap::wire::{Magic, Mcap};
    use logspec::runtime::{SliceReader, Writer};
    let mut w = Writer::<_, Mcap>::new(Vec::new(), &Magic::default()).unwrap();
    // A DataEnd record (opcode 0x0F) with a zero CRC.
    w.write_raw(0x0F, 0, &[0, 0, 0, 0]).unwrap();
    let bytes = w.finish().unwrap();
    let magic = b"\x89MCAP0\r\n";
    assert_eq!((&bytes[..8], &bytes[bytes.len() - 8..], bytes.len()), (&magic[..], &magic[..], 8 + 9 + 4 + 8));
    let (_, mut r) = SliceReader::<Mcap>::new(&bytes).unwrap();
    let got: Vec<_> = r.by_ref().collect();
    assert_eq!(got.len(), 1);
    // The trailer is read: the reader stands at the end.
    assert_eq!(r.position(), bytes.len() as u64);
    assert_eq!(got[0].as_ref().unwrap().header.tag, 0x0F);
}
