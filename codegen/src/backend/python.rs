//! Python back end: one dependency-free module per framed format (`python/<format>.py`) with the
//! record ids, layouts and fingerprints as data, and a streaming reader, a writer and a JSON Lines
//! dump over them.
//!
//! The module is two parts. The reader/writer (`python_runtime.py`, included verbatim) is the same
//! for every schema and interprets layout tables; this file emits only the tables, from the IR. A
//! struct whose fields are all numbers, bools, pads or fixed byte strings in one byte order decodes
//! through one precompiled `struct.Struct`, so the common case costs one `unpack_from` per record.
//!
//! A schema without framing (RLOG: a message stream whose value layout depends on a key table
//! carried between messages) gets no module: its records cannot be cut or named without that state,
//! and the tables alone would describe only a one-byte file header.

use std::fmt::Write;

use super::{generated_banner, Artifact, Backend};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, Prim, Schema, Ty, TypeDef};

/// The schema-independent reader and writer, placed after the module's docstring.
const RUNTIME: &str = include_str!("python_runtime.py");

/// Generates `python/<format>.py` for every schema with framing.
#[derive(Clone, Copy, Debug, Default)]
pub struct PythonBackend;

impl Backend for PythonBackend {
    fn name(&self) -> &'static str {
        "python"
    }

    fn generate(&self, schema: &Schema) -> Vec<Artifact> {
        self.generate_with_history(schema, &[])
    }
}

impl PythonBackend {
    /// Like [`Backend::generate`], with the older layouts of the schema's lock file (see
    /// [`module_with_history`]).
    pub fn generate_with_history(&self, schema: &Schema, history: &[Schema]) -> Vec<Artifact> {
        match module_with_history(schema, history) {
            Some(contents) => vec![Artifact { path: format!("python/{}.py", module_name(schema)), contents }],
            None => Vec::new(),
        }
    }
}

/// The module's name: the format name, or `logspec_records` for IR without one.
pub fn module_name(schema: &Schema) -> String {
    if schema.format.name.is_empty() {
        "logspec_records".to_string()
    } else {
        schema.format.name.to_ascii_lowercase()
    }
}

/// The whole module text, or `None` when the schema has no framing (see the module docs), or
/// has what the module's reader cannot do: a variable-size file header, or reader parameters
/// (CARLA: layouts chosen by the header version and by trying the wheel layouts).
pub fn module(schema: &Schema) -> Option<String> {
    module_with_history(schema, &[])
}

/// Like [`module`], plus the record layouts of the older schema ids of the lock file (`history`,
/// from [`logspec_ir::history::history`]): the module's reader picks the layouts by the schema id
/// in the file header, as the generated Rust reader's `with_file_format` does.
pub fn module_with_history(schema: &Schema, history: &[Schema]) -> Option<String> {
    let framing = schema.framing.as_ref()?;
    if !schema.params.is_empty() || schema.file_header.is_some_and(|h| schema.strukt(h).size.is_none()) {
        return None;
    }
    let mut out = String::new();
    let name = module_name(schema);
    let _ = writeln!(out, "# {}", generated_banner(schema));
    out.push_str(&docstring(schema, &name));
    out.push_str(RUNTIME);
    out.push_str(
        "\n\n# ---------------------------------------------------------------------------------------------\n",
    );
    out.push_str("# The schema.\n");
    out.push_str("# ---------------------------------------------------------------------------------------------\n\n");
    let _ = writeln!(out, "FORMAT = {}", py_str(&schema.format.name));
    let _ = writeln!(out, "ENDIAN = {}", py_str(schema.format.endian.as_str()));
    // The layout rules (`[format] align`, `string_nul`): natural alignment counted from the
    // payload's start, and counted strings whose length includes a terminating NUL.
    let rules = schema.format.rules;
    let py_bool = |b: bool| if b { "True" } else { "False" };
    let _ = writeln!(out, "ALIGN = {}", py_bool(rules.natural_align));
    let _ = writeln!(out, "STRING_NUL = {}", py_bool(rules.string_nul));
    match &schema.format.schema_id {
        Some(id) => {
            let _ = writeln!(out, "{} = {}", ident(&id.macro_name), id.value);
            let _ = writeln!(out, "SCHEMA_ID = {}", id.value);
            let field = match (id.field, schema.file_header) {
                (Some(i), Some(h)) => py_str(&schema.strukt(h).fields[i].name),
                _ => "None".into(),
            };
            let _ = writeln!(out, "SCHEMA_ID_FIELD = {field}");
        }
        None => out.push_str("SCHEMA_ID = None\nSCHEMA_ID_FIELD = None\n"),
    }
    let magic = schema.magic().map_or("None".to_string(), py_bytes);
    let _ = writeln!(out, "MAGIC = {magic}");

    out.push_str("\n# Record type ids: the value of the record header's `");
    out.push_str(&schema.strukt(framing.header).fields[framing.tag].name);
    out.push_str("` field.\n");
    for r in &schema.records {
        let _ = writeln!(out, "{} = {}", record_const(&r.name), r.id);
    }
    named_values(schema, &mut out);
    tables(schema, &mut out);
    layouts(schema, history, &mut out);

    let header =
        |i: Option<usize>| i.map_or("None".to_string(), |i| py_str(&schema.strukt(framing.header).fields[i].name));
    let _ = writeln!(
        out,
        "\n# How the stream after the file header is cut into records.\nFRAMING = {{\"header\": {}, \"tag\": {}, \"length\": {}, \"timestamp\": {}}}",
        py_str(schema.ty(framing.header).name()),
        header(Some(framing.tag)),
        header(framing.length),
        header(framing.timestamp),
    );
    // `[framing] sync` and `checksum`, only where declared (the runtime reads them with `get`).
    if let Some(sync) = framing.sync_bytes(schema) {
        let _ = writeln!(
            out,
            "# The bytes that begin every record: a reader resynchronises on them.\nFRAMING[\"sync\"] = {}",
            py_bytes(&sync)
        );
    }
    if let Some(t) = framing.trailer_bytes(schema) {
        let _ = writeln!(
            out,
            "# The bytes that end the file, after the last record.\nFRAMING[\"trailer\"] = {}",
            py_bytes(&t)
        );
    }
    if let Some(c) = framing.checksum {
        let f = &schema.strukt(framing.header).fields[c.field];
        let p = c.algorithm.params();
        let _ = writeln!(
            out,
            "# {} of {}: (field, offset, size, width, poly, init, reflected, xorout, over the header too).\nFRAMING[\"checksum\"] = ({}, {}, {}, {}, {:#x}, {:#x}, {}, {:#x}, {})",
            c.algorithm.name().to_ascii_uppercase(),
            match c.over {
                logspec_ir::ir::ChecksumSpan::Record => "the record header (without the CRC field) and the payload",
                logspec_ir::ir::ChecksumSpan::Payload => "the payload",
            },
            py_str(&f.name),
            f.offset.unwrap_or(0),
            p.width / 8,
            p.width,
            p.poly,
            p.init,
            if p.reflect { "True" } else { "False" },
            p.xorout,
            if c.over == logspec_ir::ir::ChecksumSpan::Record { "True" } else { "False" },
        );
    }
    let fh = schema.file_header.map_or("None".to_string(), |h| py_str(schema.ty(h).name()));
    let _ = writeln!(out, "FILE_HEADER = {fh}");
    let _ = writeln!(out, "\nread_{name} = read\n\nif __name__ == \"__main__\":\n    raise SystemExit(main())");
    Some(out)
}

fn docstring(schema: &Schema, name: &str) -> String {
    let f = &schema.format;
    let mut text = format!("{} ({}", f.title.as_deref().unwrap_or(&f.name), f.name);
    if let Some(v) = &f.version {
        let _ = write!(text, ", version {v}");
    }
    text.push_str(").\n\n");
    if let Some(d) = &f.doc {
        text.push_str(d);
        text.push_str("\n\n");
    }
    let _ = write!(
        text,
        "Standard library only (numpy optional). Read a file with `read_{name}(path)` (per-record-type\n\
         columns; `numpy=True` for numpy arrays) or stream it with `Reader(path)`; write records with\n\
         `encode_record(id, values, timestamp)`. From a shell: `python3 {name}.py dump FILE` prints JSON\n\
         Lines like `logspec dump`.\n"
    );
    format!("\"\"\"{}\"\"\"\n", py_doc(&text))
}

/// One constant of an enum or flags class: name, Python value expression, doc.
type Constant<'a> = (String, String, Option<&'a str>);

/// Enum and flags types as classes of integer constants.
fn named_values(schema: &Schema, out: &mut String) {
    for t in &schema.types {
        let (name, doc, base, values): (_, _, Prim, Vec<Constant>) = match t {
            TypeDef::Enum(e) => (
                &e.name,
                &e.doc,
                e.base,
                e.values.iter().map(|v| (v.name.clone(), v.value.to_string(), v.doc.as_deref())).collect(),
            ),
            TypeDef::Flags(f) => (
                &f.name,
                &f.doc,
                f.base,
                f.flags.iter().map(|b| (b.name.clone(), format!("1 << {}", b.bit), b.doc.as_deref())).collect(),
            ),
            _ => continue,
        };
        let kind = if matches!(t, TypeDef::Enum(_)) { "Values" } else { "Bits" };
        let _ = writeln!(out, "\n\nclass {}(object):", ident(name));
        let summary = doc.as_deref().map_or(String::new(), |d| format!("{d} "));
        let _ = writeln!(out, "    \"\"\"{}\"\"\"\n", py_doc(&format!("{summary}{kind} of a {base} field.")));
        for (n, v, d) in &values {
            match d {
                Some(d) => {
                    let _ = writeln!(out, "    {} = {v}  # {}", ident(n), one_line(d));
                }
                None => {
                    let _ = writeln!(out, "    {} = {v}", ident(n));
                }
            }
        }
        let names: Vec<String> = values.iter().map(|(n, v, _)| format!("{v}: {}", py_str(n))).collect();
        let _ = writeln!(out, "    NAMES = {{{}}}", names.join(", "));
    }
    out.push_str(
        "\n\n# Enum and flags type name: its `NAMES` (value or bit -> name), which `named_fields` and a\n\
         # record's repr show numbers by.\nNAMED_VALUES = {\n",
    );
    for t in &schema.types {
        if matches!(t, TypeDef::Enum(_) | TypeDef::Flags(_)) {
            let _ = writeln!(out, "    {}: {}.NAMES,", py_str(t.name()), ident(t.name()));
        }
    }
    out.push_str("}\n");
}

/// The `NAMED_VALUES` entry of an enum or flags type, its names inline (older layouts have no
/// class); `None` for other types.
fn named_entry(t: &TypeDef, prefix: &str) -> Option<String> {
    let names: Vec<String> = match t {
        TypeDef::Enum(e) => e.values.iter().map(|v| format!("{}: {}", v.value, py_str(&v.name))).collect(),
        TypeDef::Flags(f) => f.flags.iter().map(|b| format!("1 << {}: {}", b.bit, py_str(&b.name))).collect(),
        _ => return None,
    };
    Some(format!("    {}: {{{}}},", py_str(&format!("{prefix}{}", t.name())), names.join(", ")))
}

/// `STRUCTS`, `UNIONS` and `RECORDS`: the layouts the runtime interprets.
fn tables(schema: &Schema, out: &mut String) {
    let all = vec![true; schema.types.len()];
    out.push_str(
        "\n\n# Layouts. A type is a tuple: (\"p\", struct code), (\"bool\",), (\"pad\", n), (\"bytes\", len),\n\
         # (\"str\", len), (\"array\", elem, len), (\"struct\", name), (\"enum\", code, name), (\"flags\", code,\n\
         # name), (\"union\", name, tag field). A len is (\"fixed\", n), (\"count\", code), (\"size\", code)\n\
         # or (\"rest\",). A field is (name, type, constant or None).\n",
    );
    out.push_str("STRUCTS = {\n");
    for t in &schema.types {
        if let TypeDef::Struct(s) = t {
            let size = s.size.map_or("None".to_string(), |n| n.to_string());
            let _ = writeln!(out, "    {}: ({size}, (", py_str(&s.name));
            fields(schema, "", &s.fields, "        ", out);
            out.push_str("    )),\n");
        }
    }
    out.push_str("}\n\nUNIONS = {\n");
    for t in &schema.types {
        if let TypeDef::Union(u) = t {
            let _ = writeln!(out, "    {}: ({}, {{", py_str(&u.name), if u.by_name { "True" } else { "False" });
            for v in &u.variants {
                let _ = writeln!(out, "        {}: ({}, (", v.tag, py_str(&v.name));
                fields(schema, "", &v.fields, "            ", out);
                out.push_str("        )),\n");
            }
            out.push_str("    }),\n");
        }
    }
    // The fewest bytes of each struct and union, from the one function every back end uses
    // (`layout::min_sizes`): the runtime bounds element counts with it before allocating.
    out.push_str("}\n\n# name: the fewest bytes a value takes (prefixes counted, elements not)\nMIN_SIZES = {\n");
    min_sizes(schema, "", &all, out);
    out.push_str("}\n\n# id: (name, payload struct, payload size or None, layout fingerprint)\nRECORDS = {\n");
    records(schema, "", out);
    out.push_str("}\n");
}

/// The `MIN_SIZES` entries of the structs and unions `keep` selects.
fn min_sizes(schema: &Schema, prefix: &str, keep: &[bool], out: &mut String) {
    let min = logspec_ir::layout::min_sizes(schema);
    for ((t, m), k) in schema.types.iter().zip(&min).zip(keep) {
        if *k && matches!(t, TypeDef::Struct(_) | TypeDef::Union(_)) {
            let _ = writeln!(out, "    {}: {m},", py_str(&format!("{prefix}{}", t.name())));
        }
    }
}

/// The `RECORDS` entries of a schema, their payload structs named with `prefix`.
fn records(schema: &Schema, prefix: &str, out: &mut String) {
    for r in &schema.records {
        let size = schema.strukt(r.body).size.map_or("None".to_string(), |n| n.to_string());
        let _ = writeln!(
            out,
            "    {}: ({}, {}, {size}, 0x{:016x}),",
            r.id,
            py_str(&r.name),
            py_str(&format!("{prefix}{}", schema.ty(r.body).name())),
            r.fingerprint
        );
    }
}

/// The prefix of the type names of an older schema id's layouts (`schema_1.RecSensorGnss`, as the
/// Rust reader's `history::schema_1::RecSensorGnss`): the lock may give an old layout the name of
/// a current type.
fn history_prefix(old: &Schema) -> String {
    old.format.schema_id.as_ref().map_or(String::new(), |s| format!("schema_{}.", s.value))
}

/// The types a schema's record payloads use, directly or through other types.
fn reachable_from_records(schema: &Schema) -> Vec<bool> {
    fn visit(schema: &Schema, t: &Ty, seen: &mut [bool]) {
        match t {
            Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => mark(schema, *id, seen),
            Ty::Array { elem, .. } => visit(schema, elem, seen),
            _ => {}
        }
    }
    fn mark(schema: &Schema, id: logspec_ir::ir::TypeId, seen: &mut [bool]) {
        if std::mem::replace(&mut seen[id.0], true) {
            return;
        }
        match schema.ty(id) {
            TypeDef::Struct(s) => s.fields.iter().for_each(|f| visit(schema, &f.ty, seen)),
            TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).for_each(|f| visit(schema, &f.ty, seen)),
            _ => {}
        }
    }
    let mut seen = vec![false; schema.types.len()];
    for r in &schema.records {
        mark(schema, r.body, &mut seen);
    }
    seen
}

/// `LAYOUTS`: the record layouts by the schema id a file header names. The current id maps to
/// `RECORDS`; each older id of the lock file gets its payload structs and unions added to
/// `STRUCTS`, `UNIONS` and `MIN_SIZES` under `schema_<id>.` names, and a `RECORDS_<id>` table.
fn layouts(schema: &Schema, history: &[Schema], out: &mut String) {
    let current = schema.format.schema_id.as_ref().map_or("None".to_string(), |s| s.value.to_string());
    let mut entries = vec![format!("{current}: RECORDS")];
    for old in history {
        let Some(id) = old.format.schema_id.as_ref().map(|s| s.value) else { continue };
        let prefix = history_prefix(old);
        let keep = reachable_from_records(old);
        let _ = writeln!(
            out,
            "\n# Schema id {id}, from the lock file: the record layouts of files written under it (the file header\n\
             # and the framing are the current ones).\nSTRUCTS.update({{"
        );
        for (t, k) in old.types.iter().zip(&keep) {
            if let (TypeDef::Struct(s), true) = (t, k) {
                let size = s.size.map_or("None".to_string(), |n| n.to_string());
                let _ = writeln!(out, "    {}: ({size}, (", py_str(&format!("{prefix}{}", s.name)));
                fields(old, &prefix, &s.fields, "        ", out);
                out.push_str("    )),\n");
            }
        }
        out.push_str("})\nUNIONS.update({\n");
        for (t, k) in old.types.iter().zip(&keep) {
            if let (TypeDef::Union(u), true) = (t, k) {
                let by_name = if u.by_name { "True" } else { "False" };
                let _ = writeln!(out, "    {}: ({by_name}, {{", py_str(&format!("{prefix}{}", u.name)));
                for v in &u.variants {
                    let _ = writeln!(out, "        {}: ({}, (", v.tag, py_str(&v.name));
                    fields(old, &prefix, &v.fields, "            ", out);
                    out.push_str("        )),\n");
                }
                out.push_str("    }),\n");
            }
        }
        out.push_str("})\nMIN_SIZES.update({\n");
        min_sizes(old, &prefix, &keep, out);
        out.push_str("})\nNAMED_VALUES.update({\n");
        for (t, k) in old.types.iter().zip(&keep) {
            if let (Some(line), true) = (named_entry(t, &prefix), k) {
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = writeln!(out, "}})\nRECORDS_{id} = {{");
        records(old, &prefix, out);
        out.push_str("}\n");
        entries.push(format!("{id}: RECORDS_{id}"));
    }
    let _ = writeln!(
        out,
        "\n# schema id in the file header: the record layouts of files written under it.\nLAYOUTS = {{{}}}",
        entries.join(", ")
    );
}

/// The field tuples of a field list; named types are referred to as `prefix` + their name.
fn fields(schema: &Schema, prefix: &str, fields: &[Field], indent: &str, out: &mut String) {
    for f in fields {
        let constant = match &f.value {
            None => "None".to_string(),
            Some(ConstValue::Int(n)) => n.to_string(),
            Some(ConstValue::Bytes(b)) => py_bytes(b),
        };
        let mut note = Vec::new();
        if let Some(u) = &f.unit {
            note.push(format!("[{u}]"));
        }
        if let Some(d) = &f.doc {
            note.push(one_line(d));
        }
        let comment = if note.is_empty() { String::new() } else { format!("  # {}", note.join(" ")) };
        let desc = match &f.ty {
            // `("varint", size, signed, big, width field, lo, bits)`: the width field is an earlier
            // field of the same list, found by name at decode time.
            Ty::VarInt { prim, width } => format!(
                "(\"varint\", {}, {}, {}, {}, {}, {})",
                prim.size(),
                if prim.is_signed() { "True" } else { "False" },
                if f.endian == Endian::Big { "True" } else { "False" },
                fields.get(width.field).map_or("None".into(), |w| py_str(&w.name)),
                width.lo,
                width.bits
            ),
            other => ty(schema, prefix, other, f.endian),
        };
        let _ = writeln!(out, "{indent}({}, {desc}, {constant}),{comment}", py_str(&f.name));
    }
}

/// The descriptor tuple of a type (see the comment above `STRUCTS` in the output).
fn ty(schema: &Schema, prefix: &str, t: &Ty, endian: Endian) -> String {
    match t {
        Ty::Prim(p) => format!("(\"p\", {})", py_str(&code(*p, endian))),
        Ty::Bool => "(\"bool\",)".into(),
        Ty::Pad(n) => format!("(\"pad\", {n})"),
        Ty::Bytes(l) => format!("(\"bytes\", {})", len(*l, endian)),
        Ty::Str(l) => format!("(\"str\", {})", len(*l, endian)),
        Ty::Array { elem, len: l } => {
            format!("(\"array\", {}, {})", ty(schema, prefix, elem, endian), len(*l, endian))
        }
        Ty::Named(id) => {
            let def = schema.ty(*id);
            let name = py_str(&format!("{prefix}{}", def.name()));
            match def {
                TypeDef::Struct(_) => format!("(\"struct\", {name})"),
                TypeDef::Enum(e) => format!("(\"enum\", {}, {name})", py_str(&code(e.base, endian))),
                TypeDef::Flags(f) => format!("(\"flags\", {}, {name})", py_str(&code(f.base, endian))),
                TypeDef::Union(_) => format!("(\"union\", {name}, None)"),
                TypeDef::Extern(_) => format!("(\"extern\", {name})"),
            }
        }
        // Only a field list knows the width field's name; `fields` writes the descriptor.
        Ty::VarInt { .. } => "(\"varint\",)".into(),
        // Selected by a reader parameter the Python reader does not know: decoding it reports that.
        Ty::ParamUnion { id, .. } => {
            format!("(\"union\", {}, None)", py_str(&format!("{prefix}{}", schema.ty(*id).name())))
        }
        Ty::Union { id, tag_field } => {
            // The tag field is an earlier field of the same struct; find it by name at decode time.
            let tag = enclosing_field_name(schema, *id, *tag_field);
            format!(
                "(\"union\", {}, {})",
                py_str(&format!("{prefix}{}", schema.ty(*id).name())),
                tag.map_or("None".into(), |n| py_str(&n))
            )
        }
    }
}

/// The name of the tag field of a union-typed field: the struct (or variant) holding the field
/// whose type is this union with this tag index.
fn enclosing_field_name(schema: &Schema, union: logspec_ir::ir::TypeId, tag_field: usize) -> Option<String> {
    let holds = |fs: &[Field]| {
        fs.iter()
            .any(|f| matches!(f.ty, Ty::Union { id, tag_field: t } if id == union && t == tag_field))
            .then(|| fs.get(tag_field).map(|f| f.name.clone()))
            .flatten()
    };
    schema.types.iter().find_map(|t| match t {
        TypeDef::Struct(s) => holds(&s.fields),
        TypeDef::Union(u) => u.variants.iter().find_map(|v| holds(&v.fields)),
        _ => None,
    })
}

fn len(l: Len, endian: Endian) -> String {
    match l {
        Len::Fixed(n) => format!("(\"fixed\", {n})"),
        Len::Count(p) => format!("(\"count\", {})", py_str(&code(p, endian))),
        Len::Size(p) => format!("(\"size\", {})", py_str(&code(p, endian))),
        Len::Rest => "(\"rest\",)".into(),
    }
}

/// A Python `struct` format for one number: byte order and code (standard sizes, no alignment).
fn code(p: Prim, endian: Endian) -> String {
    let c = match p {
        Prim::U8 => 'B',
        Prim::U16 => 'H',
        Prim::U32 => 'I',
        Prim::U64 => 'Q',
        Prim::I8 => 'b',
        Prim::I16 => 'h',
        Prim::I32 => 'i',
        Prim::I64 => 'q',
        Prim::F32 => 'f',
        Prim::F64 => 'd',
    };
    format!("{}{c}", if endian == Endian::Big { '>' } else { '<' })
}

/// The module constant of a record id: contract names (`REC_*`) as they are, others `<NAME>_ID`.
fn record_const(name: &str) -> String {
    if name.starts_with("REC_") {
        ident(name)
    } else {
        ident(&format!("{}_ID", name.to_ascii_uppercase()))
    }
}

/// A Python identifier: keywords get a trailing underscore (PEP 8's convention).
fn ident(name: &str) -> String {
    const KEYWORDS: [&str; 35] = [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
        "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
    ];
    if KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// A Python string literal (ASCII only, so the file's encoding never matters).
fn py_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

fn py_bytes(b: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &x in b {
        match x {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b' '..=b'~' => out.push(x as char),
            _ => {
                let _ = write!(out, "\\x{x:02x}");
            }
        }
    }
    out.push('"');
    out
}

/// Text for a docstring: no way to close it early and no escapes.
fn py_doc(s: &str) -> String {
    let mut t: String = s
        .replace('\\', "\\\\")
        .replace("\"\"\"", "\\\"\\\"\\\"")
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    if t.ends_with('"') {
        t.push(' ');
    }
    t
}

/// Text for a `#` comment: one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
