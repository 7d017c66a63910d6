//! PX4 ULog files: every test file dumps equal to pyulog 1.3.0's decode (`tests/data/ulog/`,
//! in the canonical form of its `EXPECTED-FORMAT.md`, to which the test brings logspec's dump in
//! file order), summaries hold the reference facts, and cut or corrupted copies give every
//! complete message and then the offset (or skip to the next sync message), never a panic.

use std::collections::BTreeMap;
use std::io::Read;

use crate::common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use crate::scratch;
use serde_json::{json, Value};

/// The files whose whole reference dump is stored.
const WHOLE: [&str; 5] = [
    "gen_ulog_corner",
    "yulelog_trig_stats",
    "px4ulogrs_esc_status_log",
    "pyulog_sample_appended_multiple",
    "pyulog_sample_log_small",
];
/// Stored as its non-data lines and its first 300 data lines (`dump_kept: false`).
const HEAD: &str = "pyulog_sample_logging_tagged_and_default_params";

fn input(stem: &str) -> std::path::PathBuf {
    data(&format!("ulog/{stem}.ulg"))
}

/// The reference dump, stored compressed for the larger files.
fn expected_dump(stem: &str) -> Vec<Value> {
    let plain = data(&format!("ulog/{stem}.expected.jsonl"));
    if plain.exists() {
        return jsonl(&std::fs::read_to_string(plain).unwrap());
    }
    let bz = std::fs::File::open(data(&format!("ulog/{stem}.expected.jsonl.bz2"))).unwrap();
    let mut text = String::new();
    bzip2::read::BzDecoder::new(bz).read_to_string(&mut text).unwrap();
    jsonl(&text)
}

fn summary(stem: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(&format!("ulog/{stem}.expected.summary.json"))).unwrap())
        .unwrap()
}

/// pyulog's text: undecodable bytes dropped (`errors='ignore'`).
fn lossy(v: &Value) -> Value {
    match v.get("$hex").and_then(Value::as_str) {
        Some(h) => {
            let b: Vec<u8> = (0..h.len() / 2).map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap()).collect();
            Value::String(String::from_utf8_lossy(&b).replace('\u{fffd}', ""))
        }
        None => v.clone(),
    }
}

/// An Information value as the canonical form shows it: text for `char[N]`, `$hex` of the raw
/// little-endian bytes for other arrays (from logspec's numbers), the number otherwise.
fn info_value(ty: &str, v: &Value) -> Value {
    if ty.starts_with("char") {
        return lossy(v);
    }
    let Some(items) = v.as_array() else { return v.clone() };
    let base = ty.split('[').next().unwrap();
    let mut bytes = Vec::new();
    for x in items {
        match base {
            "float" => bytes.extend((x.as_f64().unwrap() as f32).to_le_bytes()),
            "double" => bytes.extend(x.as_f64().unwrap().to_le_bytes()),
            "bool" => bytes.push(u8::from(x.as_bool().unwrap())),
            _ => {
                let n = x.as_i64().map(|i| i as u64).or(x.as_u64()).unwrap();
                let size = match base {
                    "int8_t" | "uint8_t" => 1,
                    "int16_t" | "uint16_t" => 2,
                    "int32_t" | "uint32_t" => 4,
                    _ => 8,
                };
                bytes.extend(&n.to_le_bytes()[..size]);
            }
        }
    }
    json!({ "$hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() })
}

/// logspec's dump (file order) in the canonical form of `EXPECTED-FORMAT.md`.
fn canonical(ours: &[Value]) -> Vec<Value> {
    let of = |kind: &'static str| ours.iter().filter(move |l| l["kind"] == kind);
    let mut out = Vec::new();
    let header = of("header").next().expect("a header line");
    let flags = of("flag_bits").next();
    let zeros = json!([0, 0, 0, 0, 0, 0, 0, 0]);
    let appended: Vec<Value> = flags
        .map(|f| f["appended_offsets"].as_array().unwrap().iter().filter(|o| *o != 0).cloned().collect())
        .unwrap_or_default();
    out.push(json!({
        "kind": "header",
        "version": header["version"],
        "timestamp": header["timestamp"],
        "compat_flags": flags.map_or(zeros.clone(), |f| f["compat_flags"].clone()),
        "incompat_flags": flags.map_or(zeros, |f| f["incompat_flags"].clone()),
        "appended_offsets": appended,
    }));
    let mut info: BTreeMap<String, Value> = BTreeMap::new();
    for l in of("info") {
        let (key, ty) = (l["key"].as_str().unwrap(), l["type"].as_str().unwrap());
        info.insert(key.into(), json!({"kind": "info", "key": key, "type": ty, "value": info_value(ty, &l["value"])}));
    }
    out.extend(info.into_values());
    let mut multi: BTreeMap<String, (Value, Vec<Vec<Value>>)> = BTreeMap::new();
    for l in of("info_multiple") {
        let ty = l["type"].as_str().unwrap();
        let e = multi.entry(l["key"].as_str().unwrap().into()).or_insert_with(|| (l["type"].clone(), Vec::new()));
        let v = info_value(ty, &l["value"]);
        match e.1.last_mut() {
            Some(g) if l["is_continued"] == true => g.push(v),
            _ => e.1.push(vec![v]),
        }
    }
    for (key, (ty, values)) in multi {
        out.push(json!({"kind": "info_multiple", "key": key, "type": ty, "values": values}));
    }
    let mut params: BTreeMap<String, Value> = BTreeMap::new();
    for l in of("param") {
        params.insert(
            l["name"].as_str().unwrap().into(),
            json!({"kind": "param", "name": l["name"], "value": l["value"]}),
        );
    }
    out.extend(params.into_values());
    let mut defaults: BTreeMap<(u64, String), Value> = BTreeMap::new();
    for l in of("param_default") {
        let bits = l["default_types"].as_u64().unwrap();
        for bit in 0..2 {
            if bits & (1 << bit) != 0 {
                let name = l["name"].as_str().unwrap().to_string();
                let line = json!({"kind": "param_default", "default_type": bit, "name": name, "value": l["value"]});
                defaults.insert((bit, name), line);
            }
        }
    }
    out.extend(defaults.into_values());
    for l in of("param_changed") {
        out.push(json!({"kind": "param_changed", "timestamp": l["timestamp"], "name": l["name"], "value": l["value"]}));
    }
    let mut formats: BTreeMap<String, Value> = BTreeMap::new();
    for l in of("format") {
        formats.insert(l["name"].as_str().unwrap().into(), l.clone());
    }
    out.extend(formats.into_values());
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for l in of("data") {
        *counts.entry(l["msg_id"].as_u64().unwrap()).or_default() += 1;
    }
    let mut subs: BTreeMap<u64, Value> = BTreeMap::new();
    for l in of("subscription") {
        let id = l["msg_id"].as_u64().unwrap();
        if let Some(n) = counts.get(&id) {
            subs.insert(
                id,
                json!({"kind": "subscription", "msg_id": id, "name": l["name"], "multi_id": l["multi_id"], "messages": n}),
            );
        }
    }
    out.extend(subs.into_values());
    for l in of("logging") {
        out.push(json!({"kind": "logging", "timestamp": l["timestamp"], "level": l["level"], "message": l["message"]}));
    }
    let mut tagged: Vec<&Value> = of("logging_tagged").collect();
    tagged.sort_by_key(|l| l["tag"].as_u64());
    for l in tagged {
        out.push(json!({"kind": "logging_tagged", "tag": l["tag"], "timestamp": l["timestamp"], "level": l["level"], "message": l["message"]}));
    }
    for l in of("dropout") {
        out.push(json!({"kind": "dropout", "timestamp": l["timestamp"], "duration_ms": l["duration_ms"]}));
    }
    let mut data: Vec<&Value> = of("data").collect();
    data.sort_by_key(|l| (l["timestamp"].as_u64(), l["msg_id"].as_u64()));
    out.extend(data.into_iter().cloned());
    out
}

fn dump(stem: &str) -> (Vec<Value>, String) {
    let out = logspec(&["dump", input(stem).to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stem}: {stderr}");
    (jsonl(&String::from_utf8(out.stdout).unwrap()), stderr)
}

#[test]
fn every_file_dumps_as_pyulog() {
    for stem in WHOLE {
        let (ours, stderr) = dump(stem);
        assert!(stderr.is_empty(), "{stem}: {stderr}");
        assert_lines_eq(&canonical(&ours), &expected_dump(stem));
    }
}

/// The file whose reference keeps its non-data lines and first 300 data lines: those, and the
/// count of Data messages of each subscription.
#[test]
fn the_large_file_dumps_as_pyulog_head_and_counts() {
    let (ours, stderr) = dump(HEAD);
    assert!(stderr.is_empty(), "{stderr}");
    let ours = canonical(&ours);
    let expected = jsonl(&std::fs::read_to_string(data(&format!("ulog/{HEAD}.expected.head.jsonl"))).unwrap());
    assert_lines_eq(&ours[..expected.len()], &expected);
    let s = summary(HEAD);
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for l in ours.iter().filter(|l| l["kind"] == "data") {
        *per.entry(format!("{}[{}]", l["name"].as_str().unwrap(), l["multi_id"])).or_default() += 1;
    }
    let per = serde_json::to_value(per).unwrap();
    assert!(json_diff(&per, &s["messages_per_subscription"], "per").is_none());
    assert_eq!(ours.iter().filter(|l| l["kind"] == "data").count() as u64, s["data_messages"].as_u64().unwrap());
}

#[test]
fn summaries_hold_the_reference_facts() {
    for stem in WHOLE.into_iter().chain([HEAD]) {
        let out = logspec(&["info", "--json", input(stem).to_str().unwrap()]);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        let mut ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let s = summary(stem);
        // logspec lists subscriptions without Data too; pyulog keeps no others.
        ours["messages_per_subscription"].as_object_mut().unwrap().retain(|_, n| *n != 0);
        for k in [
            "version",
            "header_timestamp",
            "compat_flags0",
            "incompat_flags0",
            "appended_offsets",
            "sync_messages",
            "data_messages",
            "data_timestamp_min",
            "data_timestamp_max",
            "messages_per_subscription",
        ] {
            assert!(json_diff(&ours[k], &s[k], k).is_none(), "{stem}: {k}: {} != {}", ours[k], s[k]);
        }
        assert_eq!((ours["format"].as_str(), ours["ok"].as_bool()), (Some("ulog"), Some(true)), "{stem}");
    }
    let out = logspec(&["info", input("gen_ulog_corner").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("PX4 ULog, version 1") && text.contains("nested[1]") && text.contains("250 ms"), "{text}");
}

/// The offsets of every message of a file, from the reader (checked against pyulog above).
fn offsets(bytes: &[u8]) -> Vec<u64> {
    let mut r = logspec::formats::ulog::Reader::new(bytes).unwrap();
    let mut out = Vec::new();
    while let Some(m) = r.next_message() {
        out.push(m.unwrap().offset);
    }
    out
}

#[test]
fn cut_files_give_every_complete_message_then_the_offset() {
    let bytes = std::fs::read(input("gen_ulog_corner")).unwrap();
    let all = offsets(&bytes);
    // Up to the appended offset (1607): past it, a cut message is the main section's end.
    let appended = 1607;
    let end_of = |i: usize| all.get(i + 1).copied().unwrap_or(bytes.len() as u64);
    for cut in 16..appended {
        let mut r = logspec::formats::ulog::Reader::new(&bytes[..cut as usize]).unwrap();
        let mut got = 0;
        let mut err = None;
        while let Some(m) = r.next_message() {
            match m {
                Ok(m) => {
                    assert_eq!(m.offset, all[got], "cut {cut}");
                    got += 1;
                }
                Err(e) => err = Some(e),
            }
        }
        let complete = (0..all.len()).take_while(|&i| end_of(i) <= cut).count();
        assert_eq!(got, complete, "cut {cut}: every complete message");
        match err {
            None => assert_eq!(cut, if complete == 0 { 16 } else { end_of(complete - 1) }, "cut {cut}"),
            Some(e) => {
                assert_eq!(e.offset, all[complete], "cut {cut}: the offset of the cut message");
                assert!(e.to_string().contains("the file ends inside a message"), "{e}");
            }
        }
    }
    // The command: every complete message, then the error with its offset.
    let dir = scratch::temp_dir().join(format!("logspec-ulog-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = std::fs::read(input("pyulog_sample_log_small")).unwrap();
    let cut = dir.join("cut.ulg");
    std::fs::write(&cut, &big[..big.len() - 5]).unwrap();
    let out = logspec(&["dump", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = *offsets(&big).last().unwrap();
    assert!(stderr.contains(&format!("byte {last}")) && stderr.contains("ends inside a message"), "{stderr}");
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let (whole, _) = dump("pyulog_sample_log_small");
    assert_lines_eq(&ours, &whole[..whole.len() - 1]);
    let info = logspec(&["info", "--json", cut.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(1));
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(s["ok"], false);
    assert!(s["error"].as_str().unwrap().contains(&format!("byte {last}")), "{s}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Garbage over a region of the data section: the messages before it, the region skipped to the
/// end of the next sync message and reported, and every message after that sync.
#[test]
fn a_corrupted_region_is_skipped_to_the_next_sync() {
    let bytes = std::fs::read(input("pyulog_sample_log_small")).unwrap();
    let (whole, _) = dump("pyulog_sample_log_small");
    let all = offsets(&bytes);
    // Two sync messages of the file, and a region between them overwritten with zeros (a
    // header of type 0 is corruption).
    let syncs: Vec<usize> = {
        let mut r = logspec::formats::ulog::Reader::new(&bytes[..]).unwrap();
        let mut v = Vec::new();
        while let Some(m) = r.next_message() {
            let m = m.unwrap();
            if matches!(m.event, logspec::formats::ulog::Event::Sync) {
                v.push(all.iter().position(|o| *o == m.offset).unwrap());
            }
        }
        v
    };
    assert!(syncs.len() >= 3, "{syncs:?}");
    let (first, second) = (syncs[1], syncs[2]);
    let from = all[first + 5] as usize;
    let to = all[first + 8] as usize;
    let mut b = bytes.clone();
    b[from..to].fill(0);
    let dir = scratch::temp_dir().join(format!("logspec-ulog-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corrupt.ulg");
    std::fs::write(&path, &b).unwrap();
    let out = logspec(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "a skipped region fails the dump");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("byte {from}")) && stderr.contains("next sync message"), "{stderr}");
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    // The whole dump's lines: the header line, then a line per message (every message of this
    // file has one), so message i is line i + 1.
    let expected: Vec<Value> = whole[..first + 6].iter().chain(&whole[second + 2..]).cloned().collect();
    assert_lines_eq(&ours, &expected);
    let info = logspec(&["info", "--json", path.to_str().unwrap()]);
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!((s["ok"].as_bool(), info.status.code()), (Some(false), Some(1)), "{s}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Corrupted copies never panic, and every message they give lies inside the input.
#[test]
fn corrupted_copies_are_errors_not_panics() {
    let bytes = std::fs::read(input("gen_ulog_corner")).unwrap();
    let mut next = crate::common::xorshift(0x2545_f491_4f6c_dd1du64);
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = 16 + (next() as usize) % (b.len() - 16);
            b[i] = next() as u8;
        }
        let (_, _) = logspec::formats::ulog::read_all(&b);
    }
}

#[test]
fn bad_files_say_what_they_found() {
    let bytes = std::fs::read(input("gen_ulog_corner")).unwrap();
    // An incompatible flag other than DATA_APPENDED: the file is refused.
    let mut b = bytes.clone();
    // The flag bits message is the first, at 16: header 3 bytes, compat 8, incompat at 27.
    b[16 + 3 + 8] |= 2;
    let e = logspec::formats::ulog::read_all(&b).1.unwrap();
    assert!(e.to_string().contains("incompatible flags"), "{e}");
    // A cut header, bad magic.
    assert!(logspec::formats::ulog::Reader::new(&bytes[..10]).is_err());
    let mut b = bytes.clone();
    b[3] = b'x';
    let e = logspec::formats::ulog::Reader::new(&b[..]).err().unwrap();
    assert!(e.to_string().contains("not a ULog file"), "{e}");
}

/// A message as the format frames it.
fn msg(t: u8, payload: &[u8]) -> Vec<u8> {
    let mut m = (payload.len() as u16).to_le_bytes().to_vec();
    m.push(t);
    m.extend_from_slice(payload);
    m
}

/// Hostile formats: nested arrays of a format of no bytes (65535 x 65535 values claimed by a
/// Data message of 8 bytes), a cycle, a format larger than a message. Each Data message is
/// reported and skipped, at once; the file's other messages are read.
#[test]
fn hostile_formats_are_refused_not_followed() {
    let mut b = b"ULog\x01\x12\x35\x01".to_vec();
    b.extend(1000u64.to_le_bytes());
    for f in [&b"e:"[..], b"b:e[65535] y", b"a:uint64_t timestamp;b[65535] x", b"c:uint64_t timestamp;c self"] {
        b.extend(msg(b'F', f));
    }
    b.extend(msg(b'F', b"big:uint64_t timestamp;uint8_t[65535] a;uint8_t[65535] b"));
    for (id, name) in [(1u16, &b"a"[..]), (2, b"c"), (3, b"big"), (4, b"undefined")] {
        let mut a = vec![0u8];
        a.extend(id.to_le_bytes());
        a.extend_from_slice(name);
        b.extend(msg(b'A', &a));
    }
    for i in 0..200u64 {
        for id in 1..=4u16 {
            let mut d = id.to_le_bytes().to_vec();
            d.extend(i.to_le_bytes());
            b.extend(msg(b'D', &d));
        }
    }
    b.extend(msg(b'L', b"6\x00\x00\x00\x00\x00\x00\x00\x00still read"));
    let dir = scratch::temp_dir().join(format!("logspec-ulog-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hostile.ulg");
    std::fs::write(&path, &b).unwrap();
    let out = logspec(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for what in
        ["take no bytes each", "contains itself", "more than a message can hold", "no Format message defines it"]
    {
        assert!(stderr.contains(what), "{what}: {stderr}");
    }
    assert!(stderr.contains("200 messages that do not decode"), "{stderr}");
    let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines.last().unwrap()["message"], "still read");
    assert!(lines.iter().all(|l| l["kind"] != "data"));
    std::fs::remove_dir_all(&dir).ok();
}

/// An appended-data offset past the end of the file: the file is read as one section (as
/// pyulog does), with a warning.
#[test]
fn an_offset_past_the_end_is_ignored_with_a_warning() {
    let mut b = std::fs::read(input("gen_ulog_corner")).unwrap();
    // The flag bits message is the first, at 16: its header (3), compat (8), incompat (8), then
    // the first appended offset.
    b[35..43].copy_from_slice(&1_000_000_000u64.to_le_bytes());
    let dir = scratch::temp_dir().join(format!("logspec-ulog-offset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bogus.ulg");
    std::fs::write(&path, &b).unwrap();
    let out = logspec(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("offset 1000000000 lies past the end of the file"), "{stderr}");
    let mut ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let (mut whole, _) = dump("gen_ulog_corner");
    for l in [&mut ours[1], &mut whole[1]] {
        l["appended_offsets"] = json!([]);
    }
    assert_lines_eq(&ours, &whole);
    std::fs::remove_dir_all(&dir).ok();
}

/// The dump's decode plan against the IR walk's value trees, on every Data message of every test
/// file and of corrupted copies: the same JSON, or the same fault.
#[test]
fn the_decode_plan_is_the_walk() {
    use logspec::formats::ulog::{Event, Reader};
    use logspec::runtime::Visit;
    let check = |bytes: &[u8]| {
        let Ok(mut r) = Reader::new(bytes) else { return 0 };
        let mut n = 0;
        while let Some(Ok(m)) = r.next_message() {
            let Event::Data { subscription: Some(s), payload, .. } = m.event else { continue };
            let Ok(d) = &s.decoder else { continue };
            let mut walked = logspec::json::JsonWriter::new();
            let a = d.decode(payload).map(|v| d.view(&v).visit(None, &mut walked));
            let mut planned = logspec::json::JsonWriter::new();
            let b = d.visit_as(payload, None, &mut planned);
            match (a, b) {
                (Ok(()), Ok(())) => assert_eq!(walked.as_str(), planned.as_str()),
                (Err(x), Err(y)) => assert_eq!(x, y),
                (x, y) => panic!("walk {x:?}, plan {y:?}"),
            }
            n += 1;
        }
        n
    };
    let mut total = 0;
    for stem in WHOLE.into_iter().chain([HEAD]) {
        total += check(&std::fs::read(input(stem)).unwrap());
    }
    assert!(total > 50_000, "{total}");
    let bytes = std::fs::read(input("px4ulogrs_esc_status_log")).unwrap();
    for k in 0..30usize {
        let mut b = bytes.clone();
        let i = 16 + (k * 7919 * 31) % (b.len() - 16);
        b[i] ^= 0x5a;
        check(&b);
    }
}

/// A writer that stopped leaves unwritten space (zeros) before the appended data: the main
/// section ends there, with no corruption reported, and reading goes on at the offset (the
/// search for a sync message does not pass it).
#[test]
fn unwritten_space_before_appended_data_ends_the_section() {
    let bytes = std::fs::read(input("gen_ulog_corner")).unwrap();
    let all = offsets(&bytes);
    let j = all.iter().position(|o| *o == 1607).expect("a message at the appended offset");
    let mut b = bytes.clone();
    b[all[j - 2] as usize..1607].fill(0);
    let dir = scratch::temp_dir().join(format!("logspec-ulog-unwritten-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("unwritten.ulg");
    std::fs::write(&path, &b).unwrap();
    let out = logspec(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let (whole, _) = dump("gen_ulog_corner");
    // Message i is line i + 1.
    let expected: Vec<Value> = whole[..j - 1].iter().chain(&whole[j + 1..]).cloned().collect();
    assert_lines_eq(&ours, &expected);
    std::fs::remove_dir_all(&dir).ok();
}

/// A chain of formats nested 60 deep (deeper is refused) redefined before each of many
/// subscriptions: compiling stops at a budget proportional to the file, and the subscriptions
/// past it are reported.
#[test]
fn recompiling_formats_is_bounded_by_the_file() {
    let mut b = b"ULog\x01\x12\x35\x01".to_vec();
    b.extend(0u64.to_le_bytes());
    let depth = 60;
    for i in 0..depth {
        b.extend(msg(b'F', format!("f{i}:f{} x", i + 1).as_bytes()));
    }
    for k in 0..3000u16 {
        b.extend(msg(b'F', format!("f{depth}:uint8_t[{}] _padding0", k % 7).as_bytes()));
        let mut a = vec![0u8];
        a.extend(k.to_le_bytes());
        a.extend_from_slice(b"f0");
        b.extend(msg(b'A', &a));
    }
    let (n, err) = logspec::formats::ulog::read_all(&b);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(n as usize, depth + 6000);
    let mut r = logspec::formats::ulog::Reader::new(&b[..]).unwrap();
    while r.next_message().is_some() {}
    let refused = r.subscriptions().filter(|s| s.decoder.is_err()).count();
    assert!(refused > 2500, "{refused} of 3000 refused");
    let e = r.subscriptions().find_map(|s| s.decoder.as_ref().err()).unwrap();
    assert!(e.message.contains("more than a file of"), "{e}");
}

/// What a reader lends, one line per message: a plain Data message (of an active subscription
/// whose format compiled, of that format's size) as its subscription and payload; any other as
/// its index, offset and event; then the error that ended reading and the end position.
/// `runs`: through `Reader::data_run` where it takes messages, `next_message` for the rest.
fn lent<R, I: logspec::runtime::Input>(mut r: logspec::formats::ulog::Reader<R, I>, runs: bool) -> Vec<String> {
    use logspec::formats::ulog::Event;
    let mut out = Vec::new();
    loop {
        if runs {
            let mut lines = Vec::new();
            let n = r.data_run(|s, _, payload| lines.push(format!("data {} {payload:?}", s.serial)));
            assert_eq!(n as usize, lines.len());
            out.extend(lines);
        }
        let Some(m) = r.next_message() else { break };
        match m {
            Ok(m) => match &m.event {
                Event::Data { subscription: Some(s), payload, .. }
                    if s.decoder.as_ref().is_ok_and(|d| d.data(payload).is_ok()) =>
                {
                    out.push(format!("data {} {payload:?}", s.serial))
                }
                other => out.push(format!("{} {} {other:?}", m.index, m.offset)),
            },
            Err(e) => out.push(format!("error {e}")),
        }
    }
    out.push(format!("end {}", r.position()));
    out
}

/// The oracle of `Reader::data_run` (`info`'s count of Data messages): on every test file and on
/// cut and corrupted copies, it and `next_message` lend the same messages with the same indices,
/// in place and through a buffer.
#[test]
fn data_runs_lend_what_next_message_lends() {
    use logspec::formats::ulog::{Reader, SliceReader};
    let mut files = Vec::new();
    for e in std::fs::read_dir(data("ulog")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "ulg") {
            files.push(p);
        }
    }
    assert!(files.len() >= 6, "{files:?}");
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let n = bytes.len();
        let mut copies = vec![(format!("{}", p.display()), bytes.clone())];
        for cut in [n / 3, n / 2, n - 1] {
            copies.push((format!("{} cut at {cut}", p.display()), bytes[..cut].to_vec()));
        }
        for at in [n / 4, n / 2, n * 3 / 4] {
            let mut bad = bytes.clone();
            bad[at] ^= 0xA5;
            copies.push((format!("{} with byte {at} flipped", p.display()), bad));
        }
        for (i, (what, b)) in copies.into_iter().enumerate() {
            let want = lent(Reader::new(&b[..]).unwrap(), false);
            assert!(i > 0 || want.iter().any(|l| l.starts_with("data ")), "{what}");
            assert_eq!(lent(Reader::new(&b[..]).unwrap(), true), want, "{what}: through a buffer");
            assert_eq!(lent(SliceReader::from_slice(&b).unwrap(), true), want, "{what}: in place");
            assert_eq!(lent(SliceReader::from_slice(&b).unwrap(), false), want, "{what}: in place, one by one");
        }
    }
}
