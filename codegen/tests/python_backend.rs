//! The Python and golden-vector back ends, checked from outside: the module of every framed schema
//! is valid Python that imports, round-trips records through its own tables and agrees byte for
//! byte with the schema's golden vectors (python3 run here; the test schemas cover nested structs,
//! arrays, strings, bools and mixed byte order); generation is deterministic and marked; the
//! checked-in files are current; and both outputs are snapshotted.
//! Decoding real files against independent expected output is in the root crate's
//! `tests/external/cross_language.rs`.
//!
//! Without python3 the tests that run it are reported as ignored; under CI (`CI=true`) they fail.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use logspec_codegen::backend::golden::{vectors, GoldenBackend};
use logspec_codegen::backend::python::{module, PythonBackend};
use logspec_codegen::backend::Backend;
use logspec_ir::ir::Schema;

#[path = "../../tests/common/tools.rs"]
mod tools;
use tools::Need;

fn main() {
    let py = [Need::Program("python3")];
    tools::run(vec![
        tools::trial("modules_import_and_round_trip_in_python", &py, modules_import_and_round_trip_in_python),
        tools::trial("generation_is_deterministic_and_marked", &[], generation_is_deterministic_and_marked),
        tools::trial("checked_in_modules_and_vectors_are_current", &[], checked_in_modules_and_vectors_are_current),
        tools::trial("snapshots", &[], snapshots),
        tools::trial("variable_width_integers_in_python", &py, variable_width_integers_in_python),
        tools::trial("read_walk_equals_reader_in_python", &py, read_walk_equals_reader_in_python),
        tools::trial(
            "read_walk_equals_reader_with_numpy",
            &[Need::Program("python3"), Need::PyModule("numpy")],
            read_walk_equals_reader_with_numpy,
        ),
    ]);
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("codegen/ lives in the workspace").to_path_buf()
}

fn compile(rel: &str) -> Schema {
    logspec_codegen::compile_file(root().join(rel))
        .map_err(|e| e.render())
        .map(|mut s| {
            // Name the schema as `logspec gen` does, relative to the project root.
            s.source = Some(rel.to_string());
            s
        })
        .expect("the schema compiles")
}

fn schemas() -> Vec<(&'static str, Schema)> {
    [
        ("usvlog", "schemas/usvlog.toml"),
        ("rlog", "schemas/rlog.toml"),
        ("c_all_kinds", "codegen/tests/schemas/c_all_kinds.toml"),
        ("everything", "codegen/tests/schemas/everything.toml"),
        ("checked", "codegen/tests/schemas/checked.toml"),
        ("cdr", "codegen/tests/schemas/cdr.toml"),
    ]
    .into_iter()
    .map(|(label, rel)| (label, compile(rel)))
    .collect()
}

/// Imports the module and, for every record whose payload has a fixed size, decodes a payload of
/// that many bytes of 0x01 and encodes the values back: the tables, the fast path and the generic
/// interpreter must agree on every layout.
const SELF_CHECK: &str = r#"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
n = 0
for rid, (name, body, size, fp) in sorted(m.RECORDS.items()):
    if size is None:
        continue
    fields = m.STRUCTS[body][1]
    if any(t[0] in ("union", "extern") or c is not None for _, t, c in fields):
        continue
    raw = bytes(size)
    values = m.decode_struct(body, raw)
    assert m.encode_struct(body, values) == raw, name
    generic, end = m._dec_fields(fields, raw, 0, size)
    assert generic == values and end == size, name
    n += 1
print(n)
"#;

fn modules_import_and_round_trip_in_python() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python_backend");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for (label, schema) in schemas() {
        let Some(text) = module(&schema) else {
            assert!(schema.framing.is_none(), "{label}: a framed schema must get a module");
            continue;
        };
        let path = dir.join(format!("{label}.py"));
        std::fs::write(&path, text).expect("write module");
        let out = Command::new("python3").arg("-c").arg(SELF_CHECK).arg(&path).output().expect("run python3");
        assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
        let golden = dir.join(format!("{label}.json"));
        std::fs::write(&golden, vectors(&schema).expect("a framed schema has fixed structs")).expect("write vectors");
        let out = Command::new("python3").arg(&path).arg("golden").arg(&golden).output().expect("run python3");
        assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

fn generation_is_deterministic_and_marked() {
    for (label, schema) in schemas() {
        let arts = PythonBackend.generate(&schema);
        assert_eq!(arts, PythonBackend.generate(&schema), "{label}: two runs differ");
        if schema.framing.is_none() {
            assert!(arts.is_empty(), "{label}: an unframed schema gets no module");
            continue;
        }
        assert_eq!(arts.len(), 1);
        assert_eq!(arts[0].path, format!("python/{}.py", schema.format.name));
        let first = arts[0].contents.lines().next().unwrap_or_default();
        assert_eq!(first, format!("# {}", logspec_codegen::backend::generated_banner(&schema)), "{label}");
    }
    assert_eq!(PythonBackend.name(), "python");
    assert_eq!(GoldenBackend.name(), "golden");
}

fn checked_in_modules_and_vectors_are_current() {
    for (label, schema) in schemas().into_iter().filter(|(l, _)| ["usvlog", "rlog"].contains(l)) {
        for a in PythonBackend.generate(&schema).into_iter().chain(GoldenBackend.generate(&schema)) {
            let current = std::fs::read_to_string(root().join(&a.path)).unwrap_or_default();
            assert!(current == a.contents, "{label}: {} is stale; run `logspec gen`", a.path);
        }
    }
}

fn snapshots() {
    for (label, schema) in schemas() {
        if let Some(text) = module(&schema) {
            support::snapshot!(format!("module_{label}"), "the Python module generated from a schema", text);
        }
        if let Some(text) = vectors(&schema) {
            support::snapshot!(format!("golden_{label}"), "the golden vectors generated from a schema", text);
        }
    }
}

/// Variable-width integers in the Python module: the bytes of `REC_VARINT` (everything.toml) as
/// the Rust side writes them (tests/it/generated.rs) decode to the same values and encode back;
/// an 8-byte negative, a zero-extended 3-byte value, a big-endian 2-byte word; a value too wide
/// for its announced bytes is refused.
const VARINT_CHECK: &str = r#"
import importlib.util, struct, sys
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
body = [b for (name, b, size, fp) in m.RECORDS.values() if name == "REC_VARINT"][0]
raw = struct.pack("<BHqB", 0b011101, 0x1234, -1, 7)
v = m.decode_struct(body, raw)
assert v == {"lengths": 0b011101, "id": 0x1234, "stamp": -1, "word": 7}, v
assert m.encode_struct(body, v) == raw
wide = struct.pack("<BI", 0b101011, 5) + bytes([0xff, 0xff, 0x7f, 0x01, 0x02])
v = m.decode_struct(body, wide)
assert (v["id"], v["stamp"], v["word"]) == (5, 0x7fffff, 0x0102), v
assert m.encode_struct(body, v) == wide
try:
    m.encode_struct(body, {"lengths": 0, "id": 256, "stamp": 0, "word": 0})
    raise SystemExit("256 in one byte was accepted")
except ValueError as e:
    assert "does not fit" in str(e), e
try:
    m.decode_struct(body, wide[:6])
    raise SystemExit("a cut stamp was accepted")
except ValueError as e:
    assert "stamp" in str(e), e
"#;

fn variable_width_integers_in_python() {
    let schema = compile("codegen/tests/schemas/everything.toml");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python_backend_varint");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("everything.py");
    std::fs::write(&path, module(&schema).expect("a framed schema")).expect("write module");
    let out = Command::new("python3").arg("-c").arg(VARINT_CHECK).arg(&path).output().expect("run python3");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// Writes a file of seeded random records of every record type whose payload has a fixed size
/// (random bytes the module decodes), mixed, and checks that `read` (whose whole-file walk decodes
/// flat record types per type, the rest one at a time) returns exactly the columns built from the
/// streaming `Reader`, also when the file is cut short. Prints how many records and flat types.
const WALK_CHECK: &str = r#"
import importlib.util, io, random, sys
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
numpy = sys.argv[2] == "1"
rng = random.Random(5)
def zero(ty):
    return {"p": 0, "enum": 0, "flags": 0, "bool": False, "bytes": b"", "str": ""}[ty[0]]
head = b""
if m.FILE_HEADER is not None:
    vals = {}
    for n, t, c in m.STRUCTS[m.FILE_HEADER][1]:
        if t[0] != "pad" and c is None:
            vals[n] = m.SCHEMA_ID if n == m.SCHEMA_ID_FIELD else zero(t)
    head = m.encode_struct(m.FILE_HEADER, vals)
usable = []
for rid, (name, body, size, _fp) in m.RECORDS.items():
    if size is None:
        continue
    for _ in range(20):
        raw = bytes(rng.randrange(256) for _ in range(size))
        try:
            m.decode_struct(body, raw)
            usable.append(rid)
            break
        except Exception:
            pass
out = bytearray(head)
for i in range(400):
    rid = rng.choice(usable)
    size = m.RECORDS[rid][2]
    while True:
        raw = bytes(rng.randrange(256) for _ in range(size))
        try:
            m.decode_struct(m.RECORDS[rid][1], raw)
            break
        except Exception:
            pass
    h = {m.FRAMING["tag"]: rid, m.FRAMING["length"]: size}
    for n, t, c in m.STRUCTS[m.FRAMING["header"]][1]:
        if t[0] != "pad" and c is None and n not in h:
            h[n] = rng.randrange(1 << 16)
    out += m.encode_struct(m.FRAMING["header"], h) + raw
data = bytes(out)
def plain(col):
    return [m.json_text(m._json_value(v)) for v in (col.tolist() if hasattr(col, "tolist") else col)]
def reference(b):
    cols, err = {}, None
    ts = m.FRAMING["timestamp"]
    try:
        for r in m.Reader(io.BytesIO(b)):
            if r.fields is None:
                continue
            c = cols.setdefault(r.name, {} if ts is None else {ts: []})
            if ts is not None:
                c[ts].append(r.timestamp)
            for k, v in r.fields.items():
                c.setdefault(k, []).append(v)
    except m.DecodeError as e:
        err = str(e)
    return cols, err
for cut in [len(data)] + [rng.randrange(len(head), len(data)) for _ in range(20)]:
    b = data[:cut]
    cols, err = reference(b)
    try:
        log, got = m.read(io.BytesIO(b), numpy=numpy), None
    except m.DecodeError as e:
        log, got = e.partial, str(e)
    assert got == err, (cut, got, err)
    assert set(log.columns) == set(cols), (cut, sorted(log.columns), sorted(cols))
    for name, c in cols.items():
        assert list(log.columns[name]) == list(c), (name, list(log.columns[name]), list(c))
        for k, v in c.items():
            assert plain(log.columns[name][k]) == plain(v), (cut, name, k)
print(len(usable), len(m._flat(m.SCHEMA_ID).types))
"#;

fn read_walk(numpy: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python_backend_walk");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut walked = 0;
    for (label, schema) in schemas() {
        let Some(text) = module(&schema) else { continue };
        // The walk writes fixed-size records; cdr.toml's are all variable (natural alignment).
        if !schema.records.iter().any(|r| schema.strukt(r.body).size.is_some()) {
            continue;
        }
        let path = dir.join(format!("{label}.py"));
        std::fs::write(&path, text).expect("write module");
        let out =
            Command::new("python3").arg("-c").arg(WALK_CHECK).arg(&path).arg(numpy).output().expect("run python3");
        assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
        let said = String::from_utf8_lossy(&out.stdout);
        let flat: usize = said.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("counts");
        walked += usize::from(flat > 0);
    }
    // usvlog and everything (a sync word in its record header) take the walk.
    assert!(walked >= 2, "{walked}");
}

fn read_walk_equals_reader_in_python() {
    read_walk("0");
}

fn read_walk_equals_reader_with_numpy() {
    read_walk("1");
}
