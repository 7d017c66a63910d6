//! Valid schemas compile to the IR with the expected layout: sizes, offsets, byte orders, length
//! rules, consts, unions and framing.

mod support;

use std::path::Path;

use logspec_ir::ir::{ConstValue, Endian, Len, Prim, Schema, Struct, Ty, TypeDef};

fn compile(relative: &str) -> Schema {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    match logspec_codegen::compile_str(relative, &text) {
        Ok(schema) => schema,
        Err(e) => panic!("{relative} does not compile:\n{}", e.render()),
    }
}

fn usvlog() -> Schema {
    compile("../schemas/usvlog.toml")
}

fn everything() -> Schema {
    compile("tests/schemas/everything.toml")
}

fn strukt<'a>(schema: &'a Schema, name: &str) -> &'a Struct {
    let id = schema.type_by_name(name).unwrap_or_else(|| panic!("no type `{name}`"));
    schema.strukt(id)
}

fn record<'a>(schema: &'a Schema, name: &str) -> &'a Struct {
    let r = schema.records.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no record `{name}`"));
    schema.strukt(r.body)
}

/// (field name, offset) of every field, padding included.
fn offsets(s: &Struct) -> Vec<(&str, Option<u32>)> {
    s.fields.iter().map(|f| (f.name.as_str(), f.offset)).collect()
}

fn field<'a>(s: &'a Struct, name: &str) -> &'a logspec_ir::ir::Field {
    s.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("`{}` has no field `{name}`", s.name))
}

#[test]
fn usvlog_record_sizes() {
    let schema = usvlog();
    let names: Vec<&str> = schema.records.iter().map(|r| r.name.as_str()).collect();
    let pinned = support::usvlog_pinned("usvlog_record_sizes", &names);
    let sizes: Vec<Option<u32>> = schema.records.iter().map(|r| schema.strukt(r.body).size).collect();
    let want = [24, 16, 12, 8, 8, 32, 24, 28, 28, 32, 28, 20, 12].map(Some);
    assert_eq!(sizes, want, "{pinned}");
    let ids: Vec<u64> = schema.records.iter().map(|r| r.id).collect();
    assert_eq!(ids, (1..=13).collect::<Vec<_>>(), "{pinned}");
    assert_eq!(names, support::USVLOG_UPSTREAM, "{pinned}");
    assert_eq!(schema.records[0].name, "REC_NAV_SOLUTION");
    assert_eq!(schema.strukt(schema.records[0].body).name, "RecNavSolution");
}

#[test]
fn usvlog_headers_and_framing() {
    let schema = usvlog();
    assert_eq!(schema.format.name, "usvlog");
    assert_eq!(schema.format.endian, Endian::Little);
    let header = schema.strukt(schema.file_header.expect("file header"));
    assert_eq!(header.name, "FileHeader");
    assert_eq!(header.size, Some(32));
    assert_eq!(
        offsets(header),
        [
            ("magic", Some(0)),
            ("fw_model_schema", Some(6)),
            ("endianness", Some(10)),
            ("t0_us", Some(11)),
            ("_pad0", Some(19))
        ]
    );
    assert_eq!(schema.magic(), Some(&b"USVLOG"[..]));
    assert_eq!(field(header, "endianness").value, Some(ConstValue::Int(1)));

    let sid = schema.format.schema_id.as_ref().expect("schema id");
    assert_eq!((sid.value, sid.macro_name.as_str(), sid.field), (1, "FW_MODEL_SCHEMA", Some(1)));

    let framing = schema.framing.as_ref().expect("framing");
    let rh = schema.strukt(framing.header);
    assert_eq!(rh.name, "RecordHeader");
    assert_eq!(rh.size, Some(12));
    assert_eq!(offsets(rh), [("t_us", Some(0)), ("type", Some(8)), ("len", Some(10))]);
    assert_eq!((framing.tag, framing.length, framing.timestamp), (1, Some(2), Some(0)));
}

#[test]
fn usvlog_offsets_and_types() {
    let schema = usvlog();
    let mission = record(&schema, "REC_MISSION_STATE");
    assert_eq!(
        offsets(mission),
        [
            ("idx", Some(0)),
            ("active", Some(2)),
            ("done", Some(3)),
            ("_pad0", Some(4)),
            ("x0", Some(8)),
            ("y0", Some(12)),
            ("x1", Some(16)),
            ("y1", Some(20)),
            ("v_seg", Some(24)),
            ("d_wp", Some(28)),
        ]
    );
    let req = record(&schema, "REC_ACTUATOR_REQ");
    let src = field(req, "src");
    assert!(
        matches!(&src.ty, Ty::Named(id) if matches!(schema.ty(*id), TypeDef::Enum(e) if e.name == "ActSrc" && e.base == Prim::U8))
    );
    assert_eq!(src.offset, Some(8));
    let diag = record(&schema, "REC_EKF_DIAG");
    let status = field(diag, "status_flags");
    assert!(matches!(&status.ty, Ty::Named(id) if matches!(schema.ty(*id), TypeDef::Flags(f) if f.base == Prim::U32)));
    assert_eq!(status.offset, Some(24));
}

#[test]
fn fingerprints_are_stable_and_distinct() {
    let a = usvlog();
    let b = usvlog();
    let prints: Vec<u64> = a.records.iter().map(|r| r.fingerprint).collect();
    assert_eq!(prints, b.records.iter().map(|r| r.fingerprint).collect::<Vec<_>>());
    let mut unique = prints.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), prints.len(), "two usvlog records share a fingerprint");

    // The fingerprint is FNV-1a 64 of the canonical text (docs/schema-language.md).
    let e = everything();
    let hb = e.records.iter().find(|r| r.name == "REC_HEARTBEAT").expect("heartbeat");
    let text = logspec_ir::fingerprint::canonical(&e, hb.body);
    assert_eq!(
        text,
        "{protocol:u8=2;mode:enum u8{IDLE=0,MANUAL=1,AUTO=2,FAULT=255};\
         health:flags u8{GNSS_OK=0,IMU_OK=1,BATTERY_LOW=7};_:pad1;uptime_ms:u32le}"
    );
    assert_eq!(hb.fingerprint, logspec_ir::fingerprint::fnv1a64(text.as_bytes()));
}

#[test]
fn everything_format_and_headers() {
    let schema = everything();
    assert_eq!(schema.format.name, "everything");
    assert_eq!(schema.format.endian, Endian::Little);
    assert_eq!(schema.format.version.as_deref(), Some("3"));
    let sid = schema.format.schema_id.as_ref().expect("schema id");
    assert_eq!((sid.value, sid.macro_name.as_str(), sid.field), (3, "EVERYTHING_SCHEMA", Some(1)));

    let header = schema.strukt(schema.file_header.expect("file header"));
    assert_eq!(header.size, Some(32));
    assert_eq!(
        offsets(header),
        [
            ("magic", Some(0)),
            ("schema", Some(8)),
            ("header_size", Some(12)),
            ("byte_order", Some(14)),
            ("_pad0", Some(15)),
            ("created_us", Some(16)),
            ("host", Some(24)),
        ]
    );
    assert_eq!(schema.magic(), Some(&b"EVRYTHNG"[..]));
    assert_eq!(field(header, "header_size").value, Some(ConstValue::Int(32)));
    assert_eq!(field(header, "byte_order").value, Some(ConstValue::Int(0)));
    assert_eq!(field(header, "host").ty, Ty::Str(Len::Fixed(8)));

    let framing = schema.framing.as_ref().expect("framing");
    let rh = schema.strukt(framing.header);
    assert_eq!(rh.size, Some(16));
    assert_eq!(offsets(rh), [("sync", Some(0)), ("kind", Some(2)), ("len", Some(4)), ("t_ns", Some(8))]);
    assert_eq!((framing.tag, framing.length, framing.timestamp), (1, Some(2), Some(3)));
    assert_eq!(rh.fields[2].ty, Ty::Prim(Prim::U32));
    assert_eq!(field(rh, "sync").value, Some(ConstValue::Int(0xA55A)));
}

#[test]
fn everything_sizes() {
    let schema = everything();
    let want: &[(&str, Option<u32>)] = &[
        ("REC_STATE", Some(24)),
        ("REC_POSE", Some(64)),
        ("REC_IMU", Some(32)),
        ("REC_CAN", Some(28)),
        ("REC_WIDE", Some(80)),
        ("REC_ARRAYS", Some(52)),
        ("REC_LOG", None),
        ("REC_PATH", None),
        ("REC_COMMAND", None),
        ("REC_SAMPLE", None),
        ("REC_PREFIXED", None),
        ("REC_BLOB", None),
        ("REC_SCAN", None),
        ("REC_NOTE", None),
        ("REC_HEARTBEAT", Some(8)),
        ("REC_VARINT", None),
        ("REC_STOPS", None),
    ];
    let got: Vec<(&str, Option<u32>)> =
        schema.records.iter().map(|r| (r.name.as_str(), schema.strukt(r.body).size)).collect();
    assert_eq!(got, want);
    assert_eq!(schema.records.iter().map(|r| r.id).collect::<Vec<_>>(), (1..=17).collect::<Vec<_>>());

    for (name, size) in [
        ("Vec3", Some(12)),
        ("Quat", Some(16)),
        ("Pose", Some(28)),
        ("CanFrame", Some(20)),
        ("Waypoint", None),
        ("Command", None),
    ] {
        assert_eq!(strukt(&schema, name).size, size, "size of {name}");
    }
}

#[test]
fn everything_offsets() {
    let schema = everything();
    assert_eq!(
        offsets(record(&schema, "REC_STATE")),
        [
            ("mode", Some(0)),
            ("health", Some(1)),
            ("quality", Some(2)),
            ("faults", Some(4)),
            ("armed", Some(8)),
            ("_pad0", Some(9)),
            ("battery_v", Some(12)),
            ("temperature_c", Some(16)),
        ]
    );
    assert_eq!(
        offsets(record(&schema, "REC_POSE")),
        [("pose", Some(0)), ("velocity", Some(28)), ("covariance", Some(40))]
    );
    assert_eq!(
        offsets(record(&schema, "REC_CAN")),
        [("bus", Some(0)), ("_pad0", Some(1)), ("frame", Some(4)), ("sensor", Some(24)), ("crc", Some(26))]
    );
    let wide = record(&schema, "REC_WIDE");
    let wide_offsets: Vec<u32> = wide.fields.iter().map(|f| f.offset.expect("fixed")).collect();
    assert_eq!(wide_offsets, [0, 1, 2, 4, 6, 8, 12, 16, 24, 32, 36, 40, 48, 49, 56, 58, 60, 64, 72]);
    assert_eq!(
        offsets(record(&schema, "REC_ARRAYS")),
        [
            ("modes", Some(0)),
            ("health", Some(4)),
            ("flags", Some(6)),
            ("corners", Some(8)),
            ("mac", Some(32)),
            ("label", Some(38)),
            ("quality", Some(48)),
        ]
    );
    // Offsets are known up to and including the first variable-size field, not after it.
    assert_eq!(
        offsets(record(&schema, "REC_LOG")),
        [("level", Some(0)), ("_pad0", Some(1)), ("line", Some(2)), ("file", Some(4)), ("message", Some(20))]
    );
    assert_eq!(offsets(record(&schema, "REC_PATH")), [("route_id", Some(0)), ("waypoints", Some(4)), ("speeds", None)]);
    assert_eq!(
        offsets(strukt(&schema, "CanFrame")),
        [("id", Some(0)), ("dlc", Some(4)), ("_pad0", Some(5)), ("data", Some(8)), ("rx_time_us", Some(16))]
    );
}

#[test]
fn everything_byte_orders() {
    let schema = everything();
    let can = strukt(&schema, "CanFrame");
    assert_eq!(can.endian, Endian::Big);
    assert_eq!(field(can, "id").endian, Endian::Big);
    assert_eq!(field(can, "rx_time_us").endian, Endian::Little, "per-field override inside a big-endian struct");

    let rec = record(&schema, "REC_CAN");
    assert_eq!(rec.endian, Endian::Little);
    assert_eq!(field(rec, "bus").endian, Endian::Little);
    assert_eq!(field(rec, "sensor").endian, Endian::Big, "an enum field takes its field's order");
    assert_eq!(field(rec, "crc").endian, Endian::Big);

    let wide = record(&schema, "REC_WIDE");
    assert!(wide.fields.iter().filter(|f| f.name.starts_with("a_")).all(|f| f.endian == Endian::Little));
    assert!(wide.fields.iter().filter(|f| f.name.starts_with("b_")).all(|f| f.endian == Endian::Big));

    let prefixed = record(&schema, "REC_PREFIXED");
    let ids = field(prefixed, "ids");
    assert_eq!(ids.endian, Endian::Big, "the count prefix and elements are big-endian");
    assert_eq!(ids.ty, Ty::Array { elem: Box::new(Ty::Prim(Prim::U32)), len: Len::Count(Prim::U16) });

    let Some(TypeDef::Union(sample)) = schema.type_by_name("Sample").map(|id| schema.ty(id)) else {
        panic!("union Sample")
    };
    assert_eq!(sample.endian, Endian::Big);
    assert!(sample.variants.iter().flat_map(|v| &v.fields).all(|f| f.endian == Endian::Big));
}

#[test]
fn everything_lengths() {
    let schema = everything();
    let p = record(&schema, "REC_PREFIXED");
    assert_eq!(field(p, "key").ty, Ty::Bytes(Len::Count(Prim::U8)));
    assert_eq!(field(p, "blob").ty, Ty::Bytes(Len::Size(Prim::U16)));
    assert_eq!(field(p, "name").ty, Ty::Str(Len::Size(Prim::U8)));
    assert_eq!(field(p, "cells").ty, Ty::Array { elem: Box::new(Ty::Prim(Prim::I16)), len: Len::Size(Prim::U16) });
    assert!(
        matches!(&field(p, "modes").ty, Ty::Array { elem, len: Len::Count(Prim::U8) } if matches!(**elem, Ty::Named(_)))
    );
    assert!(matches!(&field(p, "poses").ty, Ty::Array { len: Len::Count(Prim::U8), .. }));

    assert_eq!(field(record(&schema, "REC_LOG"), "message").ty, Ty::Str(Len::Count(Prim::U16)));
    assert_eq!(field(record(&schema, "REC_BLOB"), "data").ty, Ty::Bytes(Len::Rest));
    assert_eq!(
        field(record(&schema, "REC_SCAN"), "ranges").ty,
        Ty::Array { elem: Box::new(Ty::Prim(Prim::U16)), len: Len::Rest }
    );
    assert_eq!(field(record(&schema, "REC_NOTE"), "text").ty, Ty::Str(Len::Rest));

    let arrays = record(&schema, "REC_ARRAYS");
    assert_eq!(field(arrays, "flags").ty, Ty::Array { elem: Box::new(Ty::Bool), len: Len::Fixed(2) });
    assert_eq!(field(arrays, "mac").ty, Ty::Bytes(Len::Fixed(6)));
    assert_eq!(field(arrays, "label").ty, Ty::Str(Len::Fixed(10)));
    assert_eq!(field(record(&schema, "REC_STATE"), "_pad0").ty, Ty::Pad(3));
    assert!(field(record(&schema, "REC_STATE"), "_pad0").is_padding());
}

#[test]
fn everything_unions() {
    let schema = everything();
    let command = strukt(&schema, "Command");
    let body = field(command, "body");
    let Ty::Union { id, tag_field } = body.ty else { panic!("Command.body is not a union: {:?}", body.ty) };
    assert_eq!(command.fields[tag_field].name, "kind");
    let TypeDef::Union(msg) = schema.ty(id) else { panic!("not a union") };
    let tags: Vec<(&str, i128, usize)> =
        msg.variants.iter().map(|v| (v.name.as_str(), v.tag, v.fields.len())).collect();
    assert_eq!(tags, [("Ping", 0, 0), ("Text", 1, 1), ("Pose", 2, 1), ("Raw", 3, 1)]);
    assert_eq!(msg.variants[0].size, Some(0));
    assert_eq!(msg.variants[2].size, Some(28));
    assert_eq!(msg.variants[3].size, None);

    let sample = record(&schema, "REC_SAMPLE");
    let Ty::Union { tag_field, .. } = field(sample, "sample").ty else { panic!("REC_SAMPLE.sample is not a union") };
    assert_eq!(sample.fields[tag_field].name, "kind");
    assert_eq!(sample.fields[tag_field].ty, Ty::Prim(Prim::U8));
}

#[test]
fn everything_covers_every_type_kind() {
    let schema = everything();
    let mut kinds = std::collections::BTreeSet::new();
    fn visit(schema: &Schema, ty: &Ty, kinds: &mut std::collections::BTreeSet<String>) {
        let k = match ty {
            Ty::Prim(p) => format!("prim {p}"),
            Ty::Bool => "bool".into(),
            Ty::Pad(_) => "pad".into(),
            Ty::Bytes(l) => format!("bytes {}", len_kind(l)),
            Ty::Str(l) => format!("string {}", len_kind(l)),
            Ty::Array { elem, len } => {
                visit(schema, elem, kinds);
                format!("array {}", len_kind(len))
            }
            Ty::Named(id) => match schema.ty(*id) {
                TypeDef::Struct(_) => "struct".into(),
                TypeDef::Enum(_) => "enum".into(),
                TypeDef::Flags(_) => "flags".into(),
                TypeDef::Union(_) => "bare union".into(),
                TypeDef::Extern(_) => "extern".into(),
            },
            Ty::Union { .. } => "union".into(),
            // Covered by `codegen/tests/schemas/params.toml`.
            Ty::ParamUnion { .. } => "param union".into(),
            Ty::VarInt { .. } => "varint".into(),
        };
        kinds.insert(k);
    }
    fn len_kind(l: &Len) -> &'static str {
        match l {
            Len::Fixed(_) => "fixed",
            Len::Count(_) => "count",
            Len::Size(_) => "size",
            Len::Rest => "rest",
        }
    }
    for t in &schema.types {
        let fields: Vec<&logspec_ir::ir::Field> = match t {
            TypeDef::Struct(s) => s.fields.iter().collect(),
            TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).collect(),
            _ => continue,
        };
        for f in fields {
            visit(&schema, &f.ty, &mut kinds);
        }
    }
    let mut want: Vec<String> = Prim::ALL.iter().map(|p| format!("prim {p}")).collect();
    want.extend(
        [
            "bool",
            "pad",
            "varint",
            "struct",
            "enum",
            "flags",
            "union",
            "bytes fixed",
            "bytes count",
            "bytes size",
            "bytes rest",
            "string fixed",
            "string count",
            "string size",
            "string rest",
            "array fixed",
            "array count",
            "array size",
            "array rest",
        ]
        .map(String::from),
    );
    let missing: Vec<&String> = want.iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(missing.is_empty(), "everything.toml does not use: {missing:?}");
}

#[test]
fn minimal_schema_and_optional_header_names() {
    let src = r#"
        [format]
        name = "tiny"

        [file_header]
        fields = [{ name = "magic", type = "bytes[2]", const = "TY" }]

        [framing]
        tag = "id"
        fields = [{ name = "id", type = "u8" }]

        [[record]]
        name = "Ping"
        id = 0
        fields = []
    "#;
    let schema = logspec_codegen::compile_str("tiny.toml", src).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(schema.strukt(schema.file_header.expect("header")).name, "FileHeader");
    let framing = schema.framing.as_ref().expect("framing");
    assert_eq!(schema.strukt(framing.header).name, "RecordHeader");
    assert_eq!(framing.length, None);
    assert_eq!(schema.strukt(schema.records[0].body).name, "Ping");
    assert_eq!(schema.strukt(schema.records[0].body).size, Some(0));
    assert_eq!(schema.source.as_deref(), Some("tiny.toml"));
}

#[test]
fn endian_aliases_and_big_default() {
    let src = r#"
        [format]
        name = "be"
        endian = "big"

        [[struct]]
        name = "S"
        endian = "le"
        fields = [
          { name = "a", type = "u32" },
          { name = "b", type = "u32", endian = "be" },
        ]

        [[struct]]
        name = "T"
        fields = [{ name = "c", type = "u16" }]
    "#;
    let schema = logspec_codegen::compile_str("be.toml", src).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(schema.format.endian, Endian::Big);
    let s = strukt(&schema, "S");
    assert_eq!((s.endian, s.fields[0].endian, s.fields[1].endian), (Endian::Little, Endian::Little, Endian::Big));
    assert_eq!(strukt(&schema, "T").fields[0].endian, Endian::Big);
}
