//! The C back end, checked from outside: every schema's header compiles warning-free as C11 (gcc,
//! arm-none-eabi-gcc) and C++11 (g++); it passes the upstream firmware contract check; its sizes and
//! offsets agree across three independent sources (the IR, gcc's `sizeof`/`offsetof`, Python's
//! `struct`); the checked-in headers are current; and every header is snapshotted.
//!
//! Compilers and Python are external tools: a trial that needs a missing one is reported as
//! ignored (under `CI=true`, failed), never passed. The helper is the workspace's
//! `tests/common/tools.rs`.

#[path = "../../tests/common/tools.rs"]
mod tools;

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tools::Need;

use logspec_codegen::backend::c::{header, struct_type_name, CBackend};
use logspec_codegen::backend::Backend;
use logspec_ir::ir::{Len, Prim, Schema, Ty, TypeDef, TypeId};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("codegen/ lives in the workspace").to_path_buf()
}

/// The `*.toml` files of a directory, sorted so that every run sees the same order.
fn tomls(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// Compiles a schema, naming it by its path relative to the project root, exactly as `logspec gen`
/// does (the name appears in the header's first line).
fn compile(path: &Path) -> Schema {
    let shown = path.strip_prefix(root()).unwrap_or(path).display().to_string().replace('\\', "/");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{shown}: {e}"));
    logspec_codegen::compile_str(&shown, &text).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// The project's schemas (`schemas/*.toml`), by file stem.
fn project_schemas() -> Vec<(String, Schema)> {
    tomls(&root().join("schemas")).iter().map(|p| (stem(p), compile(p))).collect()
}

/// The project's schemas plus every valid test schema (`codegen/tests/schemas/*.toml`, among them
/// `c_all_kinds.toml`, which covers every kind of type), so that a schema added for any back end
/// is also held to the C checks.
fn all_schemas() -> Vec<(String, Schema)> {
    let mut v = project_schemas();
    v.extend(tomls(&root().join("codegen/tests/schemas")).iter().map(|p| (stem(p), compile(p))));
    v
}

/// The schemas whose headers are snapshotted: the project's, `c_all_kinds.toml` and
/// `checked.toml` (the CRC functions and resync of a `[framing]` sync and checksum). Other test
/// schemas belong to other back ends' tests and change with them.
fn snapshot_schemas() -> Vec<(String, Schema)> {
    let mut v = project_schemas();
    v.push(("c_all_kinds".into(), compile(&root().join("codegen/tests/schemas/c_all_kinds.toml"))));
    v.push(("checked".into(), compile(&root().join("codegen/tests/schemas/checked.toml"))));
    v
}

fn stem(p: &Path) -> String {
    p.file_stem().expect("a file name").to_string_lossy().into_owned()
}

/// A fresh scratch directory for one test and schema, with the header at
/// `include/<format>/record_types.h` as firmware would have it. Returns (dir, include dir).
fn scratch(test: &str, label: &str, schema: &Schema) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_backend").join(test).join(label);
    let _ = std::fs::remove_dir_all(&dir);
    for a in CBackend.generate(schema) {
        let path = dir.join(&a.path);
        std::fs::create_dir_all(path.parent().expect("artifact paths have a folder")).expect("create scratch dir");
        std::fs::write(&path, a.contents).expect("write header");
    }
    let include = dir.join("include");
    (dir, include)
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed ({}):\n{text}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The header's `#include` name, e.g. `usvlog/record_types.h`.
fn include_name(schema: &Schema) -> String {
    let a = CBackend.generate(schema);
    a[0].path.strip_prefix("include/").expect("headers go under include/").to_string()
}

/// A translation unit that includes the header twice (checking the include guard) and uses it the
/// way firmware would: every struct type is instantiated, and every enum value and flag bit is
/// stored into its typedef (which `-Wconversion` checks for a literal of the wrong type or range).
fn probe_source(schema: &Schema) -> String {
    let inc = include_name(schema);
    let name = inc.split('/').next().unwrap_or_default();
    let mut src = format!("#include \"{inc}\"\n#include \"{inc}\"\n\n");
    src.push_str("unsigned long probe_total_size(void);\nunsigned long probe_total_size(void) {\n    return 0ul");
    for i in 0..schema.types.len() {
        if let Some(t) = struct_type_name(schema, TypeId(i)) {
            src.push_str(&format!("\n        + (unsigned long)sizeof({t})"));
        }
    }
    src.push_str(";\n}\n\nvoid probe_values(void);\nvoid probe_values(void) {\n");
    // An enum or flags typedef is followed by its value macros up to the next blank line.
    let text = header(schema);
    let mut current: Option<String> = None;
    let mut n = 0;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["typedef", base, ty] if base.ends_with("_t") && !base.starts_with(&format!("{name}_")) => {
                current = Some(ty.trim_end_matches(';').to_string());
            }
            ["#define", mac, ..] if current.is_some() => {
                let ty = current.as_deref().unwrap_or_default();
                src.push_str(&format!("    volatile {ty} v{n} = {mac};\n    (void)v{n};\n"));
                n += 1;
            }
            [] => current = None,
            _ => {}
        }
    }
    src.push_str("}\n");
    src
}

/// Compiles the probe for every schema with one compiler and its flags.
fn compile_all(test: &str, tool: &str, ext: &str, flags: &[&str]) {
    compile_probes(test, tool, ext, flags, &all_schemas());
}

fn compile_probes(test: &str, tool: &str, ext: &str, flags: &[&str], schemas: &[(String, Schema)]) {
    for (label, schema) in schemas {
        let (dir, include) = scratch(test, label, schema);
        let src = dir.join(format!("probe.{ext}"));
        std::fs::write(&src, probe_source(schema)).expect("write probe");
        let mut cmd = Command::new(tool);
        cmd.args(flags).arg("-I").arg(&include).arg("-c").arg(&src).arg("-o").arg(dir.join("probe.o"));
        run(&mut cmd, &format!("{tool} on the {label} header"));
    }
}

const WARNINGS: &[&str] =
    &["-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Wundef", "-Wshadow", "-Wconversion", "-Wsign-conversion"];

fn compiles_as_c11_with_gcc() {
    compile_all("gcc_c11", "gcc", "c", &[&["-std=c11"], WARNINGS].concat());
}

/// The fallback static assert (a negative array size) is what pre-C11 compilers see.
fn compiles_as_c99_with_gcc() {
    compile_all("gcc_c99", "gcc", "c", &[&["-std=c99"], WARNINGS].concat());
}

fn compiles_as_c11_with_clang() {
    compile_all("clang_c11", "clang", "c", &[&["-std=c11"], WARNINGS].concat());
}

fn compiles_as_cpp11_with_gpp() {
    compile_all("gpp_cpp11", "g++", "cpp", &[&["-std=c++11", "-x", "c++"], WARNINGS].concat());
}

/// The firmware's own compiler: a 32-bit little-endian target with a hardware FPU, where the
/// header's static asserts re-check every size and offset. `-ffreestanding` keeps the check
/// independent of whether a C library (newlib) is installed; the header needs only freestanding
/// headers.
fn compiles_for_cortex_m4_with_arm_none_eabi_gcc() {
    let flags = ["-std=c11", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-ffreestanding"];
    compile_all("arm_c11", "arm-none-eabi-gcc", "c", &[&flags[..], WARNINGS].concat());
}

/// Every `#define NAME VALUE` that the upstream contract test would collect, in the order found.
/// This reimplements Python's `re.findall(r"#define\s+(REC_[A-Z0-9_]+)\s+(\d+)", text)` by hand:
/// the name class excludes whitespace, so the greedy match never needs to backtrack.
fn contract_macros(text: &str) -> Vec<(String, u64)> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("#define").map(|i| at + i) {
        at = i + "#define".len();
        let mut j = at;
        let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
        let start_ws = j;
        while j < b.len() && ws(b[j]) {
            j += 1;
        }
        if j == start_ws || !text[j..].starts_with("REC_") {
            continue;
        }
        let name_start = j;
        j += 4;
        let class_start = j;
        while j < b.len() && (b[j].is_ascii_uppercase() || b[j].is_ascii_digit() || b[j] == b'_') {
            j += 1;
        }
        if j == class_start {
            continue;
        }
        let name = &text[name_start..j];
        let ws_start = j;
        while j < b.len() && ws(b[j]) {
            j += 1;
        }
        let digits_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == ws_start || j == digits_start {
            continue;
        }
        let value = text[digits_start..j].parse().expect("record ids fit in u64");
        found.push((name.to_string(), value));
        at = j;
    }
    found
}

fn contract_parser_matches_the_upstream_regex() {
    let text = "#define REC_A 1\n#define  REC_B\t22 /* x */\n#define REC_C_SIZE_x 3\n#define REC_ 4\n\
                #define REC_D\n5\n#define USVLOG_REC_E 6\n#define REC_F 0x7\n#define REC_G\n";
    let got = contract_macros(text);
    // REC_F matches with value 0: `\d+` stops at the `x`, as in Python.
    let want = [("REC_A", 1), ("REC_B", 22), ("REC_D", 5), ("REC_F", 0)];
    assert_eq!(got, want.iter().map(|(n, v)| (n.to_string(), *v)).collect::<Vec<_>>());
}

/// The upstream firmware contract: the header defines exactly one numeric `REC_<NAME>` macro per
/// record, with the record's id, and no other numeric macro whose name starts with `REC_`.
fn firmware_contract_one_numeric_rec_macro_per_record() {
    for (label, schema) in all_schemas() {
        let text = header(&schema);
        let found = contract_macros(&text);
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        for (name, id) in &found {
            assert!(seen.insert(name.clone(), *id).is_none(), "{label}: `{name}` is defined more than once");
        }
        let want: BTreeMap<String, u64> =
            schema.records.iter().filter(|r| r.name.starts_with("REC_")).map(|r| (r.name.clone(), r.id)).collect();
        assert_eq!(seen, want, "{label}: the REC_* macros must be exactly the records' {{name: id}}");
        // A record outside the REC_ naming still gets an id macro, under the format's prefix.
        for r in schema.records.iter().filter(|r| !r.name.starts_with("REC_")) {
            let prefix = format!("#define {}_", schema.format.name.to_ascii_uppercase());
            let line =
                text.lines().find(|l| l.starts_with(&prefix) && l.contains("_ID ") && l.contains(&r.id.to_string()));
            assert!(line.is_some(), "{label}: no id macro for record {}", r.name);
        }
    }
}

/// Python `struct` codes for a fixed-size type: exactly what Python tooling such as upstream's
/// `layout.py` writes by hand. Standard sizes, no alignment, so the byte order character only
/// labels the format.
fn py_codes(schema: &Schema, ty: &Ty) -> String {
    let prim = |p: Prim| match p {
        Prim::U8 => "B",
        Prim::U16 => "H",
        Prim::U32 => "I",
        Prim::U64 => "Q",
        Prim::I8 => "b",
        Prim::I16 => "h",
        Prim::I32 => "i",
        Prim::I64 => "q",
        Prim::F32 => "f",
        Prim::F64 => "d",
    };
    match ty {
        Ty::Prim(p) => prim(*p).into(),
        Ty::Bool => "?".into(),
        Ty::Pad(n) => format!("{n}x"),
        Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n)) => format!("{n}s"),
        Ty::Array { elem, len: Len::Fixed(n) } => py_codes(schema, elem).repeat(*n as usize),
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => s.fields.iter().map(|f| py_codes(schema, &f.ty)).collect(),
            TypeDef::Enum(e) => prim(e.base).into(),
            TypeDef::Flags(f) => prim(f.base).into(),
            other => panic!("{} has no fixed size", other.name()),
        },
        other => panic!("{other:?} has no fixed size"),
    }
}

/// Python's `struct.calcsize` of each format, in one interpreter run.
fn python_calcsize(formats: &[String]) -> Vec<u64> {
    let script = "import struct, sys\nfor line in sys.stdin.read().splitlines():\n    print(struct.calcsize(line))\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn python3");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped stdin");
        stdin.write_all(formats.join("\n").as_bytes()).expect("write formats");
    }
    let out = child.wait_with_output().expect("python3 runs");
    assert!(out.status.success(), "python3 failed");
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().parse().expect("a size")).collect()
}

/// Sizes and offsets three ways: the IR's layout, gcc's `sizeof`/`offsetof` on the generated
/// structs (run on the host), and Python's `struct.calcsize` of a format string built from the IR
/// (the size of a field's prefix is its offset). All three must agree for every struct and field.
fn sizes_and_offsets_agree_across_ir_gcc_and_python() {
    check_layouts("layout", &all_schemas());
}

fn check_layouts(test: &str, schemas: &[(String, Schema)]) {
    for (label, schema) in schemas {
        let schema = schema.clone();
        // (what, IR value, Python format) for every size and offset checked.
        let mut checks: Vec<(String, u64, String)> = Vec::new();
        let mut prog = format!("#include <stdio.h>\n#include \"{}\"\n\nint main(void) {{\n", include_name(&schema));
        for i in 0..schema.types.len() {
            let Some(c) = struct_type_name(&schema, TypeId(i)) else { continue };
            let s = schema.strukt(TypeId(i));
            let order = if s.endian == logspec_ir::ir::Endian::Big { ">" } else { "<" };
            let codes: Vec<String> = s.fields.iter().map(|f| py_codes(&schema, &f.ty)).collect();
            prog.push_str(&format!("    printf(\"%zu\\n\", sizeof({c}));\n"));
            checks.push((
                format!("sizeof({c})"),
                s.size.expect("a C struct has a fixed size").into(),
                format!("{order}{}", codes.concat()),
            ));
            for (k, f) in s.fields.iter().enumerate() {
                // Padding has no member worth checking, and a zero-size field has no member at all.
                if f.is_padding() || schema.size_of(&f.ty) == Some(0) {
                    continue;
                }
                prog.push_str(&format!("    printf(\"%zu\\n\", offsetof({c}, {}));\n", f.name));
                let off = f.offset.expect("fixed structs have fixed offsets");
                checks.push((
                    format!("offsetof({c}, {})", f.name),
                    off.into(),
                    format!("{order}{}", codes[..k].concat()),
                ));
            }
        }
        prog.push_str("    return 0;\n}\n");
        if checks.is_empty() {
            continue;
        }
        let (dir, include) = scratch(test, label, &schema);
        std::fs::write(dir.join("layout.c"), prog).expect("write program");
        let exe = dir.join("layout");
        let mut cc = Command::new("gcc");
        cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(&include)
            .arg(dir.join("layout.c"))
            .arg("-o")
            .arg(&exe);
        run(&mut cc, &format!("gcc on the {label} layout program"));
        let gcc: Vec<u64> = run(&mut Command::new(&exe), "the layout program")
            .lines()
            .map(|l| l.trim().parse().expect("a number"))
            .collect();
        let formats: Vec<String> = checks.iter().map(|c| c.2.clone()).collect();
        let python = python_calcsize(&formats);
        assert_eq!(gcc.len(), checks.len(), "{label}: the layout program printed the wrong number of lines");
        assert_eq!(python.len(), checks.len(), "{label}: python printed the wrong number of lines");
        for (i, (what, ir, fmt)) in checks.iter().enumerate() {
            assert!(
                *ir == gcc[i] && *ir == python[i],
                "{label}: {what}: IR says {ir}, gcc says {}, Python struct.calcsize({fmt:?}) says {}",
                gcc[i],
                python[i]
            );
        }
    }
}

/// The checked-in headers must be exactly what the generator makes now. `LOGSPEC_BLESS=1`
/// rewrites them instead.
fn checked_in_headers_are_current() {
    let bless = std::env::var_os("LOGSPEC_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (_, schema) in project_schemas() {
        for a in CBackend.generate(&schema) {
            let path = root().join(&a.path);
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            if current == a.contents {
                continue;
            }
            if bless {
                std::fs::create_dir_all(path.parent().expect("a folder")).expect("create include dir");
                std::fs::write(&path, &a.contents).expect("write header");
                eprintln!("blessed {}", a.path);
                continue;
            }
            let (old, new): (Vec<&str>, Vec<&str>) = (current.lines().collect(), a.contents.lines().collect());
            let first = (0..old.len().max(new.len())).find(|&i| old.get(i) != new.get(i)).unwrap_or(0);
            stale.push(format!(
                "{} is stale (checked in: {} lines, generated: {} lines); first difference at line {}:\n  - {}\n  + {}",
                a.path,
                old.len(),
                new.len(),
                first + 1,
                old.get(first).unwrap_or(&"<end of file>"),
                new.get(first).unwrap_or(&"<end of file>"),
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nRegenerate with `logspec gen` or `LOGSPEC_BLESS=1 cargo test -p logspec-codegen --test c_backend`.",
        stale.join("\n")
    );
}

fn generation_is_deterministic_and_marked() {
    for (label, schema) in all_schemas() {
        let a = header(&schema);
        assert_eq!(a, header(&schema), "{label}: two runs differ");
        let first = a.lines().next().unwrap_or_default();
        assert_eq!(first, format!("// {}", logspec_codegen::backend::generated_banner(&schema)), "{label}");
        let arts = CBackend.generate(&schema);
        assert_eq!(arts.len(), 1);
        assert_eq!(arts[0].path, format!("include/{}/record_types.h", schema.format.name));
        assert!(arts[0].contents.ends_with(
            "#endif /* {}_RECORD_TYPES_H */\n".replace("{}", &schema.format.name.to_ascii_uppercase()).as_str()
        ));
        assert_eq!(CBackend.name(), "c");
    }
}

/// Hostile doc text cannot end a comment early; the compile tests prove the result is valid C,
/// this pins down why.
fn doc_text_cannot_break_out_of_comments() {
    let schema = compile(&root().join("codegen/tests/schemas/c_all_kinds.toml"));
    let text = header(&schema);
    for line in text.lines() {
        let opens = line.matches("/*").count();
        let closes = line.matches("*/").count();
        assert!(opens <= 1 && closes <= 1, "a comment opens or closes twice on one line: {line}");
        assert!(!line.contains("??"), "a possible trigraph: {line}");
    }
}

/// Every CARLA struct without C functions says why in the header: the field, the union and the
/// reader parameter that selects its layout, and the variant functions to use instead; and the
/// structs it says so of are exactly the ones without `_encode`.
fn structs_without_functions_say_which_parameter() {
    let schema = compile(&root().join("schemas/carla.toml"));
    let text = header(&schema);
    let mut said = 0;
    for t in &schema.types {
        let TypeDef::Struct(st) = t else { continue };
        let stem = logspec_codegen::backend::c::function_stem(
            &schema,
            schema.types.iter().position(|x| std::ptr::eq(x, t)).map(TypeId).unwrap(),
        );
        let start = format!(" * {}: no encode/decode functions, because its field `", st.name);
        match (stem, text.find(&start)) {
            (Some(s), None) => assert!(text.contains(&format!("{s}_encode(")), "{}: functions", st.name),
            (None, Some(at)) => {
                let comment = &text[at..at + text[at..].find("*/").unwrap()];
                let comment = comment.split_whitespace().collect::<Vec<_>>().join(" ").replace(" * ", " ");
                let param = ["`version`", "`wheel_size`"]
                    .iter()
                    .find(|p| comment.contains(&format!("reader parameter {p} selects")));
                assert!(param.is_some(), "{}: {comment}", st.name);
                assert!(
                    comment.contains("_variant_encode/_decode") || comment.contains("_present_encode/_decode"),
                    "{comment}"
                );
                said += 1;
            }
            (Some(_), Some(_)) => panic!("{}: has functions and a reason", st.name),
            (None, None) if st.size == Some(0) => {}
            (None, None) => panic!("{}: no functions and no reason", st.name),
        }
    }
    // Attribute, ActorAdd, EventAdd (by `version`); WheelPhysics, VehiclePhysics, PhysicsControl.
    assert_eq!(said, 6);
}

fn snapshots() {
    for (label, schema) in snapshot_schemas() {
        support::snapshot!(format!("header_{label}"), "the C header generated from a schema", header(&schema));
    }
}

/// IR that no TOML schema produces today but other front ends may: no format name, no framing, an
/// empty struct, a zero-length member, an extern type, and two names that snake-case alike. The
/// header must still be generated, compile, and lay out correctly.
fn hand_built_ir_edge_cases_still_make_valid_c() {
    use logspec_ir::ir::{Endian, Extern, Field, Format, Record, Struct};
    let field = |name: &str, ty: Ty, offset: u32| Field {
        name: name.into(),
        ty,
        endian: Endian::Little,
        doc: Some("A */ doc".into()),
        unit: None,
        value: None,
        offset: Some(offset),
    };
    let strukt = |name: &str, fields: Vec<Field>, size: Option<u32>| {
        TypeDef::Struct(Struct { name: name.into(), doc: None, endian: Endian::Big, fields, size })
    };
    let schema = Schema {
        format: Format {
            name: String::new(),
            title: None,
            doc: None,
            endian: Endian::Big,
            version: None,
            schema_id: None,
            rules: logspec_ir::ir::Rules::PACKED,
        },
        types: vec![
            strukt("Empty", vec![], Some(0)),
            strukt(
                "WithZero",
                vec![
                    field("a", Ty::Prim(Prim::U32), 0),
                    field("none", Ty::Bytes(Len::Fixed(0)), 4),
                    field("nested_empty", Ty::Named(TypeId(0)), 4),
                    field("b", Ty::Prim(Prim::U8), 4),
                ],
                Some(5),
            ),
            TypeDef::Extern(Extern { path: "crate::Foo".into(), fixed: true }),
            strukt("UsesExtern", vec![field("x", Ty::Named(TypeId(2)), 0)], None),
            strukt("FooBar", vec![field("v", Ty::Prim(Prim::U16), 0)], Some(2)),
            strukt("Foo_Bar", vec![field("w", Ty::Prim(Prim::I16), 0)], Some(2)),
        ],
        file_header: None,
        framing: None,
        records: vec![
            Record { name: "Beat".into(), id: 7, doc: None, body: TypeId(1), fingerprint: 1 },
            Record { name: "REC_NOTHING".into(), id: 8, doc: None, body: TypeId(0), fingerprint: 2 },
        ],
        params: Vec::new(),
        source: None,
    };
    assert_eq!(struct_type_name(&schema, TypeId(0)), None, "ISO C has no empty structs");
    assert_eq!(struct_type_name(&schema, TypeId(3)), None, "an extern member has no C layout");
    assert_ne!(struct_type_name(&schema, TypeId(4)), struct_type_name(&schema, TypeId(5)));
    assert_eq!(contract_macros(&header(&schema)), vec![("REC_NOTHING".to_string(), 8)]);
    let schemas = [("hand_built".to_string(), schema)];
    compile_probes("hand_built_c11", "gcc", "c", &[&["-std=c11"], WARNINGS].concat(), &schemas);
    compile_probes("hand_built_cpp11", "g++", "cpp", &[&["-std=c++11", "-x", "c++"], WARNINGS].concat(), &schemas);
    check_layouts("hand_built_layout", &schemas);
}

fn main() {
    let gcc = [Need::Program("gcc")];
    let layout = [Need::Program("gcc"), Need::Program("python3")];
    let hand = [Need::Program("gcc"), Need::Program("g++"), Need::Program("python3")];
    tools::run(vec![
        tools::trial("compiles_as_c11_with_gcc", &gcc, compiles_as_c11_with_gcc),
        tools::trial("compiles_as_c99_with_gcc", &gcc, compiles_as_c99_with_gcc),
        tools::trial("compiles_as_c11_with_clang", &[Need::Program("clang")], compiles_as_c11_with_clang),
        tools::trial("compiles_as_cpp11_with_gpp", &[Need::Program("g++")], compiles_as_cpp11_with_gpp),
        tools::trial(
            "compiles_for_cortex_m4_with_arm_none_eabi_gcc",
            &[Need::Program("arm-none-eabi-gcc")],
            compiles_for_cortex_m4_with_arm_none_eabi_gcc,
        ),
        tools::trial("contract_parser_matches_the_upstream_regex", &[], contract_parser_matches_the_upstream_regex),
        tools::trial(
            "firmware_contract_one_numeric_rec_macro_per_record",
            &[],
            firmware_contract_one_numeric_rec_macro_per_record,
        ),
        tools::trial(
            "sizes_and_offsets_agree_across_ir_gcc_and_python",
            &layout,
            sizes_and_offsets_agree_across_ir_gcc_and_python,
        ),
        tools::trial("checked_in_headers_are_current", &[], checked_in_headers_are_current),
        tools::trial("generation_is_deterministic_and_marked", &[], generation_is_deterministic_and_marked),
        tools::trial("doc_text_cannot_break_out_of_comments", &[], doc_text_cannot_break_out_of_comments),
        tools::trial("snapshots", &[], snapshots),
        tools::trial(
            "structs_without_functions_say_which_parameter",
            &[],
            structs_without_functions_say_which_parameter,
        ),
        tools::trial("hand_built_ir_edge_cases_still_make_valid_c", &hand, hand_built_ir_edge_cases_still_make_valid_c),
    ]);
}
