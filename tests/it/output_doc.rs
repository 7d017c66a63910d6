//! Keeps `docs/output.md` true: every table marked `<!-- shape: NAME -->` lists the keys of one
//! JSON shape (key, JSON type, `always` or the case it is printed in). The built binary is run on
//! the bundled data of every format (and on small corrupted copies, for the keys printed only on
//! bad input), and every object it prints must have exactly the documented keys, in the documented
//! order, with values of the documented types. Every documented shape and every documented key
//! must be seen at least once, so a table cannot document what the binary never prints.

use crate::scratch;

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{data, logspec};

// ---------------------------------------------------------------------------------------------
// The document's tables.

struct Row {
    key: String,
    /// JSON types, as the doc names them: integer, number, string, boolean, null, object, array, any.
    types: Vec<String>,
    always: bool,
}

/// Every shape table of `docs/output.md`, by name.
fn doc_shapes(text: &str) -> BTreeMap<String, Vec<Row>> {
    let mut shapes = BTreeMap::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix("<!-- shape: ").and_then(|l| l.strip_suffix(" -->")) else {
            continue;
        };
        let header = lines.next().unwrap_or_default();
        assert_eq!(header.trim(), "| key | type | present | meaning |", "shape {name}: table header");
        let sep = lines.next().unwrap_or_default();
        assert!(sep.starts_with("|---"), "shape {name}: separator row, got {sep:?}");
        let mut rows = Vec::new();
        while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
            let cells: Vec<&str> = row.splitn(5, '|').map(str::trim).collect();
            assert_eq!(cells.len(), 5, "shape {name}: row {row:?} has too few cells");
            let key = cells[1].strip_prefix('`').and_then(|k| k.strip_suffix('`'));
            let key = key.unwrap_or_else(|| panic!("shape {name}: key {:?} is not in backticks", cells[1]));
            let types: Vec<String> = cells[2].split(" or ").map(|t| t.trim().to_string()).collect();
            for t in &types {
                let known = ["integer", "number", "string", "boolean", "null", "object", "array", "any"];
                assert!(known.contains(&t.as_str()), "shape {name}, key {key}: unknown type {t:?}");
            }
            rows.push(Row { key: key.to_string(), types, always: cells[3] == "always" });
        }
        assert!(!rows.is_empty(), "shape {name}: no rows");
        assert!(shapes.insert(name.to_string(), rows).is_none(), "shape {name} documented twice");
    }
    shapes
}

// ---------------------------------------------------------------------------------------------
// A small JSON parser that keeps key order and repeated keys (serde_json's map does neither).

#[derive(Debug)]
enum J {
    Null,
    Bool,
    /// The number's text: an integer has no `.` and no exponent.
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> J {
        let mut p = Parser { s: text.as_bytes(), i: 0 };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing characters after the JSON value in {text:?}");
        v
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && b" \t\r\n".contains(&self.s[self.i]) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) {
        self.ws();
        assert_eq!(self.s.get(self.i), Some(&c), "expected {:?} at {}", c as char, self.i);
        self.i += 1;
    }

    fn lit(&mut self, w: &str) {
        assert!(self.s[self.i..].starts_with(w.as_bytes()), "expected {w} at {}", self.i);
        self.i += w.len();
    }

    fn value(&mut self) -> J {
        self.ws();
        match self.s.get(self.i).copied() {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return J::Obj(members);
                }
                loop {
                    self.ws();
                    let k = self.string();
                    self.eat(b':');
                    members.push((k, self.value()));
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => {}
                        b'}' => return J::Obj(members),
                        c => panic!("unexpected {:?} in an object at {}", c as char, self.i - 1),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return J::Arr(items);
                }
                loop {
                    items.push(self.value());
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => {}
                        b']' => return J::Arr(items),
                        c => panic!("unexpected {:?} in an array at {}", c as char, self.i - 1),
                    }
                }
            }
            Some(b'"') => J::Str(self.string()),
            Some(b't') => {
                self.lit("true");
                J::Bool
            }
            Some(b'f') => {
                self.lit("false");
                J::Bool
            }
            Some(b'n') => {
                self.lit("null");
                J::Null
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                J::Num(String::from_utf8(self.s[start..self.i].to_vec()).unwrap())
            }
            other => panic!("unexpected {other:?} at {}", self.i),
        }
    }

    fn string(&mut self) -> String {
        assert_eq!(self.s[self.i], b'"', "expected a string at {}", self.i);
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).expect("UTF-8"),
                b'\\' => {
                    let e = self.s[self.i];
                    self.i += 1;
                    match e {
                        b'u' => {
                            let hex = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                            let ch = char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap_or('?');
                            out.extend_from_slice(ch.to_string().as_bytes());
                            self.i += 4;
                        }
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// Whether a value is of a documented JSON type.
fn is_type(v: &J, t: &str) -> bool {
    match (t, v) {
        ("any", _) => true,
        ("null", J::Null) | ("boolean", J::Bool) | ("array", J::Arr(_)) | ("object", J::Obj(_)) => true,
        ("integer", J::Num(n)) => !n.contains(['.', 'e', 'E']),
        ("number", J::Num(n)) => n.contains(['.', 'e', 'E']),
        ("number", J::Str(s)) => ["NaN", "Infinity", "-Infinity"].contains(&s.as_str()),
        ("string", J::Str(_)) => true,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Checking output against the tables.

struct Checker {
    shapes: BTreeMap<String, Vec<Row>>,
    /// Every (shape, key) seen in the output.
    seen: BTreeSet<(String, String)>,
    checked: BTreeSet<String>,
}

impl Checker {
    fn new() -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/output.md");
        let text = std::fs::read_to_string(&path).expect("docs/output.md");
        Checker { shapes: doc_shapes(&text), seen: BTreeSet::new(), checked: BTreeSet::new() }
    }

    /// Checks one object against the shape `name`, and its nested objects against theirs.
    fn check(&mut self, name: &str, v: &J, ctx: &str) {
        let J::Obj(members) = v else { panic!("{ctx}: shape {name}: not an object: {v:?}") };
        let Some(rows) = self.shapes.get(name) else { panic!("{ctx}: shape {name} is not documented") };
        self.checked.insert(name.to_string());
        let mut last: Option<usize> = None;
        let mut present = BTreeSet::new();
        let mut nested = Vec::new();
        for (k, val) in members {
            let pos = rows.iter().position(|r| r.key == *k);
            let pos = pos.unwrap_or_else(|| panic!("{ctx}: shape {name}: key `{k}` is not documented"));
            assert!(present.insert(k.clone()), "{ctx}: shape {name}: key `{k}` appears twice");
            if let Some(l) = last {
                assert!(
                    pos > l,
                    "{ctx}: shape {name}: key `{k}` comes after `{}`, but the doc lists it before",
                    rows[l].key
                );
            }
            last = Some(pos);
            let row = &rows[pos];
            assert!(
                row.types.iter().any(|t| is_type(val, t)),
                "{ctx}: shape {name}: key `{k}` is {val:?}, documented as {}",
                row.types.join(" or ")
            );
            self.seen.insert((name.to_string(), k.clone()));
            nested.push((k.clone(), val));
        }
        for r in rows.iter().filter(|r| r.always) {
            assert!(present.contains(&r.key), "{ctx}: shape {name}: key `{}` (documented as always) is missing", r.key);
        }
        for (k, val) in nested {
            let (obj, elems, members) = (format!("{name}.{k}"), format!("{name}.{k}[]"), format!("{name}.{k}.*"));
            match val {
                J::Obj(m) if self.shapes.contains_key(&members) => {
                    for (mk, mv) in m {
                        self.check(&members, mv, &format!("{ctx} .{k}.{mk}"));
                    }
                }
                J::Obj(_) if self.shapes.contains_key(&obj) => self.check(&obj, val, &format!("{ctx} .{k}")),
                J::Arr(items) if self.shapes.contains_key(&elems) => {
                    for (i, x) in items.iter().enumerate() {
                        self.check(&elems, x, &format!("{ctx} .{k}[{i}]"));
                    }
                }
                _ => {}
            }
        }
    }
}

fn run(args: &[&str], expect_code: i32) -> String {
    let out: Output = logspec(args);
    assert_eq!(
        out.status.code(),
        Some(expect_code),
        "logspec {args:?}: stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `info --json`: exactly one line, one object.
fn info(c: &mut Checker, shape: &str, file: &Path, code: i32) -> J {
    let out = run(&["info", "--json", file.to_str().unwrap()], code);
    assert_eq!(out.lines().count(), 1, "info --json {}: one line, got {out:?}", file.display());
    let v = Parser::parse(&out);
    c.check(shape, &v, &format!("info --json {}", file.display()));
    v
}

/// `dump`: every line against the shape `pick` names for it; returns the number of lines.
fn dump(c: &mut Checker, file: &Path, extra: &[&str], code: i32, pick: impl Fn(&J) -> String) -> usize {
    let mut args = vec!["dump", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(&args, code);
    for (i, line) in out.lines().enumerate() {
        let v = Parser::parse(line);
        let shape = pick(&v);
        c.check(&shape, &v, &format!("dump {} line {}", file.display(), i + 1));
    }
    out.lines().count()
}

fn str_member<'a>(v: &'a J, key: &str) -> &'a str {
    match v {
        J::Obj(m) => match m.iter().find(|(k, _)| k == key) {
            Some((_, J::Str(s))) => s,
            other => panic!("`{key}` is not a string: {other:?}"),
        },
        _ => panic!("not an object"),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = scratch::temp_dir().join(format!("logspec-output-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn the_documented_shapes_are_the_printed_ones() {
    let mut c = Checker::new();

    // USVLOG: the sample; a header-only file (no timestamps); a copy with a record of an unknown
    // type appended; a truncated copy (exit 1, every complete record printed).
    let step = data("usvlog/step.usvlog");
    let bytes = std::fs::read(&step).unwrap();
    info(&mut c, "usvlog.info", &step, 0);
    dump(&mut c, &step, &[], 0, |_| "usvlog.dump".into());
    let header_only = scratch("header-only.usvlog");
    std::fs::write(&header_only, &bytes[..32]).unwrap();
    info(&mut c, "usvlog.info", &header_only, 0);
    let unknown = scratch("unknown.usvlog");
    let mut u = bytes.clone();
    u.extend_from_slice(&[0x10, 0x27, 0, 0, 0, 0, 0, 0, 200, 0, 3, 0, 0xde, 0xad, 0x01]);
    std::fs::write(&unknown, &u).unwrap();
    info(&mut c, "usvlog.info", &unknown, 0);
    dump(&mut c, &unknown, &[], 0, |_| "usvlog.dump".into());
    let truncated = scratch("truncated.usvlog");
    std::fs::write(&truncated, &bytes[..100_000]).unwrap();
    let v = info(&mut c, "usvlog.info", &truncated, 1);
    let J::Obj(m) = &v else { unreachable!() };
    let total = m.iter().find(|(k, _)| k == "records_total").map(|(_, v)| v);
    let Some(J::Num(total)) = total else { panic!("records_total") };
    let lines = dump(&mut c, &truncated, &[], 1, |_| "usvlog.dump".into());
    assert_eq!(lines.to_string(), *total, "a truncated dump prints every complete record");

    // RLOG: R2 and R1 files, and a captured R2 stream.
    for (f, format) in [
        ("rlog/gen_akit_head_r2_alltypes.rlog", "rlog"),
        ("rlog/gen_akit_v1.8.1_r1_alltypes.rlog", "rlog"),
        ("rlog/gen_akit_head_r2_stream.bin", "rlog-stream"),
    ] {
        let v = info(&mut c, "rlog.info", &data(f), 0);
        assert_eq!(str_member(&v, "format"), format);
        dump(&mut c, &data(f), &[], 0, |_| "rlog.dump".into());
    }

    // An RLOG file whose `Translation2d` schema names an unknown type: its values get
    // `decode_error` (exit 0: the values are kept as hex, with a warning).
    let mut r2 = std::fs::read(data("rlog/gen_akit_head_r2_alltypes.rlog")).unwrap();
    let at = r2.windows(17).position(|w| w == b"double x;double y").expect("the Translation2d schema");
    r2[at + 10..at + 12].copy_from_slice(b"oo");
    let bad_schema = scratch("bad_schema.rlog");
    std::fs::write(&bad_schema, &r2).unwrap();
    dump(&mut c, &bad_schema, &[], 0, |_| "rlog.dump".into());

    // CARLA: a recording without and one with PhysicsControl packets; a copy with an unknown and
    // a short packet before the first frame (exit 1).
    let by_kind = |prefix: &'static str| move |v: &J| format!("{prefix}.{}", str_member(v, "kind"));
    let crash = data("carla/878-supp-mat_crash.log");
    info(&mut c, "carla.info", &crash, 0);
    dump(&mut c, &crash, &[], 0, by_kind("carla.dump"));
    let physics = data("carla/scenario_runner_DistanceToLaneCenter.log");
    info(&mut c, "carla.info", &physics, 0);
    dump(&mut c, &physics, &["--packet", "PhysicsControl"], 0, by_kind("carla.dump"));
    let raw = std::fs::read(&crash).unwrap();
    let mut bad = raw[..34].to_vec();
    bad.extend_from_slice(b"\xc8\x03\x00\x00\x00abc\x06\x05\x00\x00\x00\x01\x00abc");
    bad.extend_from_slice(&raw[34..]);
    let bad_path = scratch("bad.log");
    std::fs::write(&bad_path, &bad).unwrap();
    info(&mut c, "carla.info", &bad_path, 1);
    dump(&mut c, &bad_path, &["--frames", "0..1"], 1, by_kind("carla.dump"));

    // ROS bags: an indexed lz4 bag; a truncated unindexed one (exit 1).
    let bag = data("rosbag/test_lz4.bag");
    info(&mut c, "rosbag.info", &bag, 0);
    dump(&mut c, &bag, &[], 0, by_kind("rosbag.dump"));
    info(&mut c, "rosbag.info", &data("rosbag/test_truncated.bag"), 1);

    let _ = std::fs::remove_dir_all(header_only.parent().unwrap());

    // WPILOG: every test file; a file with an invalid control record and an invalid value (exit
    // 1); a cut file (exit 1, trailing bytes).
    let by_rec = |v: &J| format!("wpilog.dump.{}", str_member(v, "rec"));
    for f in ["wpilog/nukkeldev_spec_example.wpilog", "wpilog/gen_wpilib_structs.wpilog"] {
        let v = info(&mut c, "wpilog.info", &data(f), 0);
        assert_eq!(str_member(&v, "format"), "wpilog");
        dump(&mut c, &data(f), &[], 0, by_rec);
    }
    let odd = scratch("odd.wpilog");
    let mut w = logspec::formats::wpilog::Writer::new(Vec::new(), "").unwrap();
    w.start(1, "/a", "double", "", 1).unwrap();
    w.raw(1, 2, &[1, 2, 3]).unwrap();
    w.raw(0, 3, &[9]).unwrap();
    std::fs::write(&odd, w.finish_file().unwrap()).unwrap();
    info(&mut c, "wpilog.info", &odd, 0);
    dump(&mut c, &odd, &[], 1, by_rec);
    let cut = scratch("cut.wpilog");
    let bytes = std::fs::read(data("wpilog/nukkeldev_spec_example.wpilog")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
    info(&mut c, "wpilog.info", &cut, 1);

    // ULog: the generated file has every message type; a cut copy (exit 1).
    let corner = data("ulog/gen_ulog_corner.ulg");
    info(&mut c, "ulog.info", &corner, 0);
    dump(&mut c, &corner, &[], 0, by_kind("ulog.dump"));
    let cut = scratch("cut.ulg");
    let bytes = std::fs::read(&corner).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
    info(&mut c, "ulog.info", &cut, 1);

    // DataFlash: the generated file (every format character, junk, a cut last message: exit 1);
    // a real log whose FMT for CAM has a wrong length (a note, exit 0).
    let corner = data("dataflash/gen_df_corner.bin");
    info(&mut c, "dataflash.info", &corner, 1);
    dump(&mut c, &corner, &[], 1, |_| "dataflash.dump.msg".to_string());
    info(&mut c, "dataflash.info", &data("dataflash/peterbarker_6.BIN"), 0);
    // MCAP: a ROS 2 file with every value kind; a file with a `json` channel and a channel of
    // an encoding that is not decoded (kept as bytes); a cut copy (exit 1).
    let by_mcap = |v: &J| format!("mcap.dump.{}", str_member(v, "kind"));
    let corner = data("ros2/gen_rosbags_corner.mcap");
    info(&mut c, "mcap.info", &corner, 0);
    dump(&mut c, &corner, &[], 0, by_mcap);
    let mixed = scratch("mixed.mcap");
    {
        let mut w = mcap::Writer::new(std::io::BufWriter::new(std::fs::File::create(&mixed).unwrap())).unwrap();
        let meta = std::collections::BTreeMap::new();
        let proto = w.add_schema("demo.Thing", "protobuf", b"\x0a\x00").unwrap();
        let p = w.add_channel(proto, "/thing", "protobuf", &meta).unwrap();
        let j = w.add_channel(0, "/json", "json", &meta).unwrap();
        for (ch, data) in [(p, &b"\x08\x01"[..]), (j, &br#"{"a":[1,2.5,"x",null,true]}"#[..])] {
            let h = mcap::records::MessageHeader { channel_id: ch, sequence: 0, log_time: 1, publish_time: 1 };
            w.write_to_known_channel(&h, data).unwrap();
        }
        w.finish().unwrap();
    }
    info(&mut c, "mcap.info", &mixed, 0);
    dump(&mut c, &mixed, &[], 0, by_mcap);
    let cut = scratch("cut.mcap");
    let bytes = std::fs::read(&corner).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    info(&mut c, "mcap.info", &cut, 1);
    // rosbag2 sqlite3: the same recording as the MCAP file (the MCAP dump's lines).
    let db3 = data("ros2/gen_rosbags_corner_sqlite3.db3");
    info(&mut c, "rosbag2.info", &db3, 0);
    dump(&mut c, &db3, &[], 0, by_mcap);
    // A split bag: its directory.
    let split = data("ros2/gen_split_mcap");
    info(&mut c, "rosbag2.info", &split, 0);
    dump(&mut c, &split, &[], 0, by_mcap);

    // Every documented shape and key was printed at least once.
    let unchecked: Vec<&String> = c.shapes.keys().filter(|s| !c.checked.contains(*s)).collect();
    assert!(unchecked.is_empty(), "documented shapes never printed by the runs above: {unchecked:?}");
    for (name, rows) in &c.shapes {
        for r in rows {
            assert!(
                c.seen.contains(&(name.clone(), r.key.clone())),
                "shape {name}: documented key `{}` was never printed by the runs above",
                r.key
            );
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    let step = data("usvlog/step.usvlog");
    let step = step.to_str().unwrap();
    // Standard input can be read once.
    run(&["info", "--json", "-", "-"], 2);
    // An option that does not apply to the format.
    run(&["dump", step, "--frames", "0..1"], 2);
}

#[test]
fn the_parser_keeps_order_and_types() {
    let v = Parser::parse(r#"{"b":1,"a":[1.5,"NaN",null,true],"c":{"x":"\"\u00e9"}}"#);
    let J::Obj(m) = &v else { panic!() };
    assert_eq!(m.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["b", "a", "c"]);
    assert!(is_type(&m[0].1, "integer") && !is_type(&m[0].1, "number"));
    let J::Arr(a) = &m[1].1 else { panic!() };
    assert!(is_type(&a[0], "number") && is_type(&a[1], "number") && is_type(&a[1], "string"));
    let J::Obj(inner) = &m[2].1 else { panic!() };
    assert!(matches!(&inner[0].1, J::Str(s) if s == "\"é"));
}
