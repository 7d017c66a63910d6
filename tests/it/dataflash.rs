//! ArduPilot DataFlash logs: every test file dumps equal to pymavlink 2.4.50 DFReader's decode
//! (`tests/data/dataflash/`, in the canonical form of its `EXPECTED-FORMAT.md`), summaries hold
//! the reference facts, cut copies give every complete message and then the offset, garbage
//! between messages is skipped to the next header and reported, and hostile FMTs are bounded.

use std::collections::BTreeMap;
use std::io::Read;

use crate::common::{assert_lines_eq, data, json_diff, jsonl, logspec};
use crate::scratch;
use serde_json::{json, Value};

use logspec::formats::dataflash::{read_all, Event, Reader};

/// Every test file, and whether it ends inside a message.
const FILES: [(&str, &str, bool); 5] = [
    ("gen_df_corner", "bin", true),
    ("peterbarker_5", "BIN", false),
    ("peterbarker_6", "BIN", false),
    ("pymavlink_test", "BIN", true),
    ("wlichon_00000001", "BIN", false),
];

fn input(stem: &str) -> std::path::PathBuf {
    let ext = FILES.iter().find(|f| f.0 == stem).map_or("bin", |f| f.1);
    data(&format!("dataflash/{stem}.{ext}"))
}

/// The reference dump, stored compressed for the larger files.
fn expected_dump(stem: &str) -> Vec<Value> {
    let plain = data(&format!("dataflash/{stem}.expected.jsonl"));
    if plain.exists() {
        return jsonl(&std::fs::read_to_string(plain).unwrap());
    }
    let bz = std::fs::File::open(data(&format!("dataflash/{stem}.expected.jsonl.bz2"))).unwrap();
    let mut text = String::new();
    bzip2::read::BzDecoder::new(bz).read_to_string(&mut text).unwrap();
    jsonl(&text)
}

fn summary(stem: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(&format!("dataflash/{stem}.expected.summary.json"))).unwrap())
        .unwrap()
}

/// logspec's dump in the canonical form: a `bytes` column (the `Z` of `FILE`, a hex string in
/// the dump) as `{"$hex": ..}`.
fn canonical(ours: &[Value]) -> Vec<Value> {
    // The format of each id, from the dump's own FMT lines.
    let mut formats: BTreeMap<u64, (String, String)> = BTreeMap::new();
    let mut out = Vec::with_capacity(ours.len());
    for l in ours {
        let mut l = l.clone();
        if l["type"] == "FMT" {
            let d = &l["data"];
            let f = (d["Format"].as_str().unwrap().to_string(), d["Columns"].as_str().unwrap().to_string());
            formats.insert(d["Type"].as_u64().unwrap(), f);
        }
        if l["type"] == "FILE" {
            let (f, cols) = formats[&l["id"].as_u64().unwrap()].clone();
            for (c, name) in f.chars().zip(cols.split(',')) {
                if c == 'Z' {
                    let hex = l["data"][name].clone();
                    l["data"][name] = json!({ "$hex": hex });
                }
            }
        }
        out.push(l);
    }
    out
}

fn dump_path(path: &std::path::Path) -> (Vec<Value>, String, Option<i32>) {
    let out = logspec(&["dump", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (jsonl(&String::from_utf8(out.stdout).unwrap()), stderr, out.status.code())
}

#[test]
fn every_file_dumps_as_dfreader() {
    for (stem, _, cut) in FILES {
        let (ours, stderr, code) = dump_path(&input(stem));
        assert_lines_eq(&canonical(&ours), &expected_dump(stem));
        if cut {
            // The last message is cut: reported with its offset, after every complete one.
            assert_eq!(code, Some(1), "{stem}: {stderr}");
            let end = summary(stem)["end_offset"].as_u64().unwrap();
            // DFReader stops after the cut message's 3 header bytes.
            assert!(stderr.contains(&format!("byte {}", end - 3)) && stderr.contains("ends inside"), "{stderr}");
        } else {
            assert_eq!(code, Some(0), "{stem}: {stderr}");
        }
    }
}

#[test]
fn summaries_hold_the_reference_facts() {
    for (stem, _, cut) in FILES {
        let out = logspec(&["info", "--json", input(stem).to_str().unwrap()]);
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let s = summary(stem);
        for k in [
            "messages",
            "fmt_messages",
            "types_defined",
            "types_redefined",
            "unit_messages",
            "mult_messages",
            "fmtu_messages",
            "parm_messages",
            "timeus_min",
            "timeus_max",
            "messages_per_type",
            "units",
        ] {
            assert!(json_diff(&ours[k], &s[k], k).is_none(), "{stem}: {k}: {} != {}", ours[k], s[k]);
        }
        let end = s["end_offset"].as_u64().unwrap();
        let ours_end = ours["end_offset"].as_u64().unwrap();
        assert_eq!(ours_end + if cut { 3 } else { 0 }, end, "{stem}");
        assert_eq!(ours["format"], "dataflash");
        // The generated file also has junk bytes between two messages.
        assert_eq!(ours["ok"].as_bool(), Some(!cut), "{stem}: {ours}");
        assert_eq!(out.status.code(), Some(if cut { 1 } else { 0 }));
    }
    let out = logspec(&["info", input("wlichon_00000001").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ArduPilot DataFlash") && text.contains("174 FMTU") && text.contains("PARM"), "{text}");
}

/// The offsets of every message of a file, from the reader (checked against DFReader above).
fn offsets(bytes: &[u8]) -> Vec<u64> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while let Some(m) = r.next_message() {
        let Ok(m) = m else { break };
        if matches!(m.event, Event::Message { .. }) {
            out.push(m.offset);
        }
    }
    out
}

#[test]
fn cut_files_give_every_complete_message_then_the_offset() {
    let bytes = std::fs::read(input("peterbarker_5")).unwrap();
    let all = offsets(&bytes);
    assert_eq!(all.len(), 677);
    let end_of = |i: usize| all.get(i + 1).copied().unwrap_or(bytes.len() as u64);
    let cuts: Vec<u64> = (1..4000).chain((4000..bytes.len() as u64).step_by(97)).collect();
    for cut in cuts {
        let mut r = Reader::new(&bytes[..cut as usize]);
        let (mut got, mut err) = (0, None);
        while let Some(m) = r.next_message() {
            match m {
                Ok(m) => {
                    assert!(matches!(m.event, Event::Message { .. }), "cut {cut}: {:?}", m.event);
                    assert_eq!(m.offset, all[got], "cut {cut}");
                    got += 1;
                }
                Err(e) => err = Some(e),
            }
        }
        let complete = (0..all.len()).take_while(|&i| end_of(i) <= cut).count();
        assert_eq!(got, complete, "cut {cut}: every complete message");
        match err {
            None => assert_eq!(cut, end_of(complete - 1), "cut {cut}"),
            Some(e) => {
                assert_eq!(e.offset, all[complete], "cut {cut}: the offset of the cut message");
                assert!(e.to_string().contains("the file ends inside a"), "{e}");
            }
        }
    }
    // An empty file: refused, clearly.
    let e = read_all(&[]).1.unwrap();
    assert!(e.to_string().contains("the file is empty"), "{e}");
    // The command, on a cut copy: every complete message, then the error with its offset.
    let dir = scratch::temp_dir().join(format!("logspec-df-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = std::fs::read(input("wlichon_00000001")).unwrap();
    let all = offsets(&big);
    let last = all[all.len() - 1];
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &big[..last as usize + 10]).unwrap();
    let (ours, stderr, code) = dump_path(&cut);
    assert_eq!(code, Some(1));
    assert!(stderr.contains(&format!("byte {last}")) && stderr.contains("ends inside a"), "{stderr}");
    let whole = expected_dump("wlichon_00000001");
    assert_lines_eq(&canonical(&ours), &whole[..whole.len() - 1]);
    let info = logspec(&["info", "--json", cut.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(1));
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(s["ok"], false);
    assert!(s["error"].as_str().unwrap().contains(&format!("byte {last}")), "{s}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Garbage between messages (random bytes, erased flash pages of FF and 00, a lone header byte,
/// a header of an id no FMT defined): every message is read, each region reported with its
/// offset and length.
#[test]
fn garbage_between_messages_is_skipped_to_the_next_header_and_reported() {
    let bytes = std::fs::read(input("peterbarker_6")).unwrap();
    let all = offsets(&bytes);
    let whole = expected_dump("peterbarker_6");
    let mut next = crate::common::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut random: Vec<u8> = (0..300).map(|_| next() as u8).collect();
    // No header of a known id inside: A3 95 is followed by an id of no FMT (id 3 is unused).
    for w in 0..random.len() - 1 {
        if random[w] == 0xa3 && random[w + 1] == 0x95 {
            random[w + 1] = 0;
        }
    }
    let regions: [Vec<u8>; 4] = [random, vec![0xff; 600], vec![0; 600], vec![0xa3, 0x95, 3, 0xa3, 0xa3]];
    let at = [40usize, 1000, 2000, 4000];
    let mut b = Vec::new();
    let mut inserted = Vec::new();
    let mut prev = 0;
    for (k, r) in at.iter().zip(&regions) {
        let o = all[*k] as usize;
        b.extend_from_slice(&bytes[prev..o]);
        inserted.push((b.len(), r.len()));
        b.extend_from_slice(r);
        prev = o;
    }
    b.extend_from_slice(&bytes[prev..]);
    let dir = scratch::temp_dir().join(format!("logspec-df-garbage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("garbage.bin");
    std::fs::write(&path, &b).unwrap();
    let (ours, stderr, code) = dump_path(&path);
    assert_eq!(code, Some(1), "skipped regions fail the dump");
    for (o, n) in &inserted {
        assert!(
            stderr.contains(&format!("byte {o}, ")) && stderr.contains(&format!("{n} bytes that are not")),
            "{o} {n}: {stderr}"
        );
    }
    // The same messages, at their new offsets.
    let strip = |v: &[Value]| -> Vec<Value> {
        v.iter()
            .map(|l| {
                let mut l = l.clone();
                l.as_object_mut().unwrap().remove("ofs");
                l
            })
            .collect()
    };
    assert_lines_eq(&strip(&canonical(&ours)), &strip(&whole));
    let info = logspec(&["info", "--json", path.to_str().unwrap()]);
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!((s["ok"].as_bool(), s["skipped_regions"].as_u64()), (Some(false), Some(4)), "{s}");
    assert_eq!(s["skipped_bytes"].as_u64(), Some(inserted.iter().map(|r| r.1 as u64).sum()));
    std::fs::remove_dir_all(&dir).ok();
}

/// Corrupted copies never panic.
#[test]
fn corrupted_copies_are_errors_not_panics() {
    let bytes = std::fs::read(input("gen_df_corner")).unwrap();
    let mut next = crate::common::xorshift(0x2545_f491_4f6c_dd1du64);
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        let _ = read_all(&b);
    }
}

/// A message: the header bytes, the id, the body.
fn msg(id: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![0xa3, 0x95, id];
    m.extend_from_slice(body);
    m
}

/// A FMT message: id, length, name, format, labels (NUL-padded to 4, 16, 64).
fn fmt(id: u8, length: u8, name: &str, format: &str, labels: &str) -> Vec<u8> {
    let pad = |s: &str, n: usize| {
        let mut v = s.as_bytes().to_vec();
        v.resize(n, 0);
        v
    };
    let mut b = vec![id, length];
    b.extend(pad(name, 4));
    b.extend(pad(format, 16));
    b.extend(pad(labels, 64));
    msg(128, &b)
}

fn write_tmp(name: &str, b: &[u8]) -> std::path::PathBuf {
    let dir = scratch::temp_dir().join(format!("logspec-df-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.bin"));
    std::fs::write(&path, b).unwrap();
    path
}

/// FMTs that lie or cannot be read: a length too long and too short (reported once, at the
/// FMT; the format's layout is used), an unknown format character (that id alone is refused),
/// a FMT for id 128 that would redefine FMT (ignored), an id redefined with a new layout (used
/// from there on), and a message before its FMT (skipped and reported).
#[test]
fn hostile_fmts_are_reported_and_bounded() {
    let mut b = fmt(128, 89, "FMT", "BBnNZ", "Type,Length,Name,Format,Columns");
    b.extend(fmt(200, 40, "LONG", "QIH", "TimeUS,A,B"));
    b.extend(fmt(201, 10, "SHRT", "QIH", "TimeUS,A,B"));
    b.extend(fmt(202, 14, "BAD", "QX", "TimeUS,X"));
    // FMT for FMT itself, with a layout of 1 byte: would make every later FMT one byte long.
    b.extend(fmt(128, 4, "FMT", "B", "Type"));
    b.extend(msg(203, &7u32.to_le_bytes()));
    b.extend(fmt(203, 7, "LATE", "I", "A"));
    b.extend(msg(203, &8u32.to_le_bytes()));
    b.extend(fmt(203, 5, "LATE", "H", "A"));
    b.extend(msg(203, &9u16.to_le_bytes()));
    for t in 0..3u64 {
        let mut body = t.to_le_bytes().to_vec();
        body.extend(5u32.to_le_bytes());
        body.extend(6u16.to_le_bytes());
        b.extend(msg(200, &body));
        b.extend(msg(201, &body));
        b.extend(msg(202, &body));
    }
    let path = write_tmp("hostile", &b);
    let (ours, stderr, code) = dump_path(&path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("Length 40 is not 3 plus the 14 bytes"), "{stderr}");
    assert!(stderr.contains("Length 10 is not 3 plus the 14 bytes"), "{stderr}");
    assert!(stderr.contains("unknown format character 'X'"), "{stderr}");
    assert!(stderr.contains("FMT's layout is fixed"), "{stderr}");
    let types: Vec<&str> = ours.iter().filter(|l| l["type"] != "FMT").map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["LATE", "LATE", "LONG", "SHRT", "LONG", "SHRT", "LONG", "SHRT"]);
    let late: Vec<&Value> = ours.iter().filter(|l| l["type"] == "LATE").map(|l| &l["data"]["A"]).collect();
    assert_eq!(late, [&json!(8), &json!(9)], "the redefined layout from its FMT on");
    assert_eq!(ours.iter().rfind(|l| l["type"] == "LONG").unwrap()["data"], json!({"TimeUS": 2, "A": 5, "B": 6}));
    // The message before its FMT, and the messages of the unreadable id, are skipped regions.
    let info = logspec(&["info", "--json", path.to_str().unwrap()]);
    let s: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(s["skipped_regions"].as_u64(), Some(4), "{s}");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// Detection from the first bytes: a FMT message header; text and an empty file are not
/// DataFlash.
#[test]
fn detected_from_a_fmt_header() {
    let b = fmt(128, 89, "FMT", "BBnNZ", "Type,Length,Name,Format,Columns");
    let path = write_tmp("detect", &b);
    let out = logspec(&["info", "--json", path.to_str().unwrap()]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((s["format"].as_str(), s["messages"].as_u64()), (Some("dataflash"), Some(1)));
    for (name, bytes) in [("text", &b"not a log\n"[..]), ("empty", &[][..])] {
        let p = write_tmp(name, bytes);
        let out = logspec(&["info", p.to_str().unwrap()]);
        assert_ne!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognised format"));
        std::fs::remove_dir_all(p.parent().unwrap()).ok();
    }
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// Channels: one per message name, or per instance where FMTU marks one, with the units of
/// FMTU/UNIT/MULT; scaled columns as their values.
#[test]
fn channels_carry_instances_units_and_scaled_values() {
    let dir = scratch::temp_dir().join(format!("logspec-df-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = logspec(&["export", "--csv", dir.to_str().unwrap(), input("gen_df_corner").to_str().unwrap()]);
    // The file ends inside a message: exit 1, after every complete one.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert!(files.contains(&"TYP1.csv".to_string()) && files.contains(&"TYP1.1.csv".to_string()), "{files:?}");
    let typ2 = std::fs::read_to_string(dir.join("TYP2.csv")).unwrap();
    let header = typ2.lines().next().unwrap();
    assert!(header.contains("TimeUS [µsecond]") && header.contains("Lat [deglatitude]"), "{header}");
    assert!(typ2.contains("-327.68") && typ2.contains("47.3977418"), "{typ2}");
    std::fs::remove_dir_all(&dir).ok();
}
