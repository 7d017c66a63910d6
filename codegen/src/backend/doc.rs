//! Documentation back end: one Markdown page per format (`docs/formats/<format>.md`) with the
//! tables firmware teams otherwise keep by hand: per record the offset, field, type, unit and doc
//! of every field, with sizes and layout fingerprints; then every named type.
//!
//! Types are spelled as in the schema language (`f32`, `string[count u16]`, `array[3] of f32`);
//! a field whose byte order differs from the format's says so. Named types link to their section.

use std::fmt::Write;

use super::{generated_banner, Artifact, Backend};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, NameMatch, Schema, Struct, Ty, TypeDef, TypeId};

/// `write!`/`writeln!` into a `String`, which cannot fail.
macro_rules! putln {
    ($out:expr) => {{
        $out.push('\n');
    }};
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Generates `docs/formats/<format>.md`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DocBackend;

impl Backend for DocBackend {
    fn name(&self) -> &'static str {
        "md"
    }

    fn generate(&self, schema: &Schema) -> Vec<Artifact> {
        vec![Artifact { path: format!("docs/formats/{}.md", schema.format.name), contents: markdown(schema) }]
    }
}

/// The whole Markdown page for one schema.
pub fn markdown(schema: &Schema) -> String {
    let mut d = Doc { s: schema, out: String::new() };
    d.run();
    d.out
}

struct Doc<'a> {
    s: &'a Schema,
    out: String,
}

impl Doc<'_> {
    fn run(&mut self) {
        let s = self.s;
        let f = &s.format;
        putln!(self.out, "<!-- {} -->", generated_banner(s));
        putln!(self.out, "# {}", f.title.as_deref().unwrap_or(&f.name));
        putln!(self.out);
        if let Some(doc) = &f.doc {
            putln!(self.out, "{doc}");
            putln!(self.out);
        }
        putln!(self.out, "| | |");
        putln!(self.out, "|---|---|");
        putln!(self.out, "| format | `{}` |", f.name);
        if let Some(v) = &f.version {
            putln!(self.out, "| version | {} |", cell(v));
        }
        putln!(self.out, "| byte order | {} |", endian_name(f.endian));
        // Layout rules beyond packed fields: where fields land is then not a fixed offset.
        if f.rules.natural_align {
            putln!(
                self.out,
                "| alignment | natural: every number of 2, 4 or 8 bytes (a length prefix too) at a multiple of its size from the payload's start; offsets after the first such field are not fixed (`-`) |"
            );
        }
        if f.rules.string_nul {
            putln!(self.out, "| strings | a counted string's length includes its terminating NUL |");
        }
        if let Some(id) = &f.schema_id {
            putln!(self.out, "| schema id | `{}` = {} |", id.macro_name, id.value);
        }
        if let Some(src) = &s.source {
            putln!(self.out, "| schema | `{src}` |");
        }
        putln!(self.out);
        if let Some(h) = s.file_header {
            putln!(self.out, "## File header");
            putln!(self.out);
            self.struct_body(s.strukt(h));
        }
        if let Some(fr) = &s.framing {
            putln!(self.out, "## Record framing");
            putln!(self.out);
            let header = s.strukt(fr.header);
            let name = |i: Option<usize>| i.map(|i| format!("`{}`", header.fields[i].name));
            let mut roles = vec![format!("the record type is {}", name(Some(fr.tag)).unwrap_or_default())];
            match name(fr.length) {
                Some(n) => roles.push(format!("{n} is the payload length in bytes (unknown types are skipped by it)")),
                None => roles.push("records are self-delimiting (no length field)".to_string()),
            }
            if let Some(n) = name(fr.timestamp) {
                roles.push(format!("{n} is the timestamp"));
            }
            putln!(self.out, "Every record starts with this header, then its payload: {}.", roles.join("; "));
            putln!(self.out);
            self.struct_body(header);
            if let (Some(t), Some(b)) = (fr.trailer, fr.trailer_bytes(s)) {
                let hex: Vec<String> = b.iter().map(|x| format!("{x:02X}")).collect();
                putln!(
                    self.out,
                    "The file ends after the last record with the trailer `{}`: the {} bytes `{}`.",
                    s.ty(t).name(),
                    b.len(),
                    hex.join(" ")
                );
                putln!(self.out);
            }
        }
        if !s.records.is_empty() {
            self.records();
        }
        self.types();
    }

    fn records(&mut self) {
        let s = self.s;
        putln!(self.out, "## Records");
        putln!(self.out);
        putln!(self.out, "| id | record | size (B) | fingerprint | description |");
        putln!(self.out, "|---:|---|---:|---|---|");
        for r in &s.records {
            let body = s.strukt(r.body);
            putln!(
                self.out,
                "| {} | [`{}`](#{}) | {} | `{:#018x}` | {} |",
                r.id,
                r.name,
                anchor(&r.name),
                size_text(body.size),
                r.fingerprint,
                cell(r.doc.as_deref().unwrap_or(""))
            );
        }
        putln!(self.out);
        for r in &s.records {
            let body = s.strukt(r.body);
            putln!(self.out, "<a id=\"{}\"></a>", anchor(&r.name));
            putln!(self.out);
            putln!(self.out, "### `{}` (id {})", r.name, r.id);
            putln!(self.out);
            if let Some(doc) = &r.doc {
                putln!(self.out, "{doc}");
                putln!(self.out);
            }
            putln!(
                self.out,
                "Payload `{}`: {}, fingerprint `{:#018x}`.",
                body.name,
                match body.size {
                    Some(n) => bytes(n),
                    None => "variable size".to_string(),
                },
                r.fingerprint
            );
            putln!(self.out);
            self.field_table(&body.fields, body.endian);
        }
    }

    fn types(&mut self) {
        let s = self.s;
        let shown: Vec<TypeId> = (0..s.types.len())
            .map(TypeId)
            .filter(|id| {
                s.record_for(*id).is_none()
                    && Some(*id) != s.file_header
                    && s.framing.as_ref().map(|f| f.header) != Some(*id)
                    && !matches!(s.ty(*id), TypeDef::Extern(_))
            })
            .collect();
        if shown.is_empty() {
            return;
        }
        putln!(self.out, "## Types");
        putln!(self.out);
        for id in shown {
            let t = s.ty(id);
            putln!(self.out, "<a id=\"{}\"></a>", anchor(t.name()));
            putln!(self.out);
            let kind = match t {
                TypeDef::Struct(_) => "struct",
                TypeDef::Enum(_) => "enum",
                TypeDef::Flags(_) => "flags",
                TypeDef::Union(_) => "union",
                TypeDef::Extern(_) => "extern",
            };
            putln!(self.out, "### `{}` ({kind})", t.name());
            putln!(self.out);
            if let Some(doc) = t.doc() {
                putln!(self.out, "{doc}");
                putln!(self.out);
            }
            match t {
                TypeDef::Struct(st) => self.struct_body(st),
                TypeDef::Enum(e) => {
                    putln!(self.out, "Stored as `{}`. Values outside this list are kept as numbers.", e.base);
                    putln!(self.out);
                    putln!(self.out, "| value | name | description |");
                    putln!(self.out, "|---:|---|---|");
                    for v in &e.values {
                        putln!(self.out, "| {} | `{}` | {} |", v.value, v.name, cell(v.doc.as_deref().unwrap_or("")));
                    }
                    putln!(self.out);
                }
                TypeDef::Flags(fl) => {
                    putln!(self.out, "Bits of a `{}`; other bits are kept.", fl.base);
                    putln!(self.out);
                    putln!(self.out, "| bit | mask | name | description |");
                    putln!(self.out, "|---:|---|---|---|");
                    for b in &fl.flags {
                        putln!(
                            self.out,
                            "| {} | `{:#x}` | `{}` | {} |",
                            b.bit,
                            1u128 << b.bit,
                            b.name,
                            cell(b.doc.as_deref().unwrap_or(""))
                        );
                    }
                    putln!(self.out);
                }
                TypeDef::Union(u) => {
                    if u.by_name {
                        putln!(self.out, "The variant is selected by a type name given at run time.");
                    } else {
                        putln!(self.out, "The variant is selected by the value of a tag field before it.");
                    }
                    putln!(self.out);
                    for v in &u.variants {
                        let select = match &v.select {
                            None => format!("tag {}", v.tag),
                            Some(NameMatch::Exact(names)) => {
                                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                                format!("type {}", names.join(", "))
                            }
                            Some(NameMatch::Prefix(p)) => format!("types starting with `{p}`"),
                            Some(NameMatch::Default) => "any other type".to_string(),
                        };
                        putln!(
                            self.out,
                            "- **`{}`** ({select}; {}){}",
                            v.name,
                            match v.size {
                                Some(n) => bytes(n),
                                None => "variable size".to_string(),
                            },
                            v.doc.as_deref().map(|d| format!(": {}", d.replace('\n', " "))).unwrap_or_default()
                        );
                        if !v.fields.is_empty() {
                            putln!(self.out);
                            let table = self.table(&v.fields, u.endian);
                            for line in table.lines() {
                                putln!(self.out, "  {line}");
                            }
                        }
                    }
                    putln!(self.out);
                }
                TypeDef::Extern(_) => {}
            }
        }
    }

    fn struct_body(&mut self, st: &Struct) {
        putln!(
            self.out,
            "`{}`: {}.",
            st.name,
            match st.size {
                Some(n) => bytes(n),
                None => "variable size".to_string(),
            }
        );
        putln!(self.out);
        self.field_table(&st.fields, st.endian);
    }

    fn field_table(&mut self, fields: &[Field], endian: Endian) {
        let t = self.table(fields, endian);
        self.out.push_str(&t);
        putln!(self.out);
    }

    /// A table of fields: offset, name, type, unit, description.
    fn table(&self, fields: &[Field], endian: Endian) -> String {
        let mut t = String::new();
        putln!(t, "| offset | field | type | unit | description |");
        putln!(t, "|---:|---|---|---|---|");
        for f in fields {
            let offset = f.offset.map_or("–".to_string(), |o| o.to_string());
            let name = if f.is_padding() { "*(padding)*".to_string() } else { format!("`{}`", f.name) };
            let mut ty = self.ty(&f.ty);
            if f.endian != endian && self.has_byte_order(&f.ty) {
                ty.push_str(&format!(" ({})", endian_name(f.endian)));
            }
            match &f.value {
                Some(ConstValue::Int(v)) => ty.push_str(&format!(" = {v}")),
                Some(ConstValue::Bytes(b)) => ty.push_str(&format!(" = {}", bytes_text(b))),
                None => {}
            }
            putln!(
                t,
                "| {offset} | {name} | {ty} | {} | {} |",
                cell(f.unit.as_deref().unwrap_or("")),
                cell(f.doc.as_deref().unwrap_or(""))
            );
        }
        t
    }

    /// Whether a field of this type holds numbers wider than a byte (so its byte order matters).
    fn has_byte_order(&self, t: &Ty) -> bool {
        match t {
            Ty::Prim(p) => p.size() > 1,
            Ty::VarInt { width, .. } => width.max_bytes() > 1,
            Ty::Bool | Ty::Pad(_) => false,
            Ty::Bytes(l) | Ty::Str(l) => l.prefix().is_some_and(|p| p.size() > 1),
            Ty::Array { elem, len } => len.prefix().is_some_and(|p| p.size() > 1) || self.has_byte_order(elem),
            Ty::Named(_) | Ty::Union { .. } | Ty::ParamUnion { .. } => true,
        }
    }

    /// A type as the schema language spells it, with named types linked.
    fn ty(&self, t: &Ty) -> String {
        match t {
            Ty::Prim(p) => format!("`{p}`"),
            Ty::Bool => "`bool`".to_string(),
            Ty::Pad(n) => bytes(*n),
            Ty::Bytes(l) => format!("`bytes{}`", len_text(l)),
            Ty::Str(l) => format!("`string{}`", len_text(l)),
            Ty::Array { elem, len } => format!("`array{}` of {}", len_text(len), self.ty(elem)),
            Ty::Named(id) => {
                let name = self.s.ty(*id).name();
                format!("[`{name}`](#{})", anchor(name))
            }
            Ty::Union { id, tag_field: _ } => {
                let name = self.s.ty(*id).name();
                format!("[`{name}`](#{}) (union)", anchor(name))
            }
            Ty::ParamUnion { id, param } => {
                let name = self.s.ty(*id).name();
                let param = &self.s.params[*param].name;
                format!("[`{name}`](#{}) (union on reader parameter `{param}`)", anchor(name))
            }
            Ty::VarInt { prim, width } => {
                format!(
                    "`{prim}` in 1 to {} bytes (bits {}..{} of field {} plus one)",
                    width.max_bytes(),
                    width.lo,
                    width.lo + width.bits,
                    width.field
                )
            }
        }
    }
}

fn len_text(l: &Len) -> String {
    match l {
        Len::Fixed(n) => format!("[{n}]"),
        Len::Count(p) => format!("[count {p}]"),
        Len::Size(p) => format!("[size {p}]"),
        Len::Rest => "[rest]".to_string(),
    }
}

fn endian_name(e: Endian) -> &'static str {
    match e {
        Endian::Little => "little-endian",
        Endian::Big => "big-endian",
    }
}

/// A printable constant: ASCII text in quotes when it is printable, hex otherwise.
fn bytes_text(b: &[u8]) -> String {
    if !b.is_empty() && b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        format!("`\"{}\"`", String::from_utf8_lossy(b))
    } else {
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("`0x{hex}`")
    }
}

fn size_text(size: Option<u32>) -> String {
    size.map_or("variable".to_string(), |n| n.to_string())
}

/// An HTML anchor for a type or record name.
fn anchor(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// Text safe inside a table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

fn bytes(n: u32) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}
