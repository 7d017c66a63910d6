//! Layout fingerprints: a 64-bit hash of a record's canonical wire layout.
//!
//! The canonical text (see [`canonical`]) spells out everything a decoder depends on and nothing
//! it does not:
//! - every field in wire order, with its name (a swap of two same-typed fields changes meaning);
//! - each number's type and byte order (`f32le`, `u16be`), so `u32` and `f32` differ;
//! - nested structs expanded in place, never by type name, so two types that differ only in name
//!   hash the same and two same-named types with different layouts hash differently;
//! - sequences with their exact length rule: `[3]`, `[count u16le]`, `[size u32le]`, `[rest]`,
//!   so `T`, `T[3]` and `T[]` all differ (ROS md5 drops array-ness of nested fields);
//! - enum base types and every named value, flag bits, const values, padding widths;
//! - unions with every variant's tag and body.
//!
//! Docs, units and type names are left out: they do not change the bytes.
//! The hash is 64-bit FNV-1a over the UTF-8 canonical text.

use std::fmt::Write;

use crate::ir::{ConstValue, Endian, Field, Len, Schema, Ty, TypeDef, TypeId};

/// FNV-1a, 64-bit: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The fingerprint of a struct's layout.
pub fn of_struct(schema: &Schema, id: TypeId) -> u64 {
    fnv1a64(canonical(schema, id).as_bytes())
}

/// The fingerprint of a record's layout: its payload struct's, and, when the framing declares a
/// sync or a checksum, the record header's layout with them (`...|frame{...};sync=0;crc=crc-32c/
/// record@4`), since every record's bytes then depend on it. Framings without either keep the
/// payload's fingerprint, so the existing locks stay valid.
pub fn of_record(schema: &Schema, body: TypeId) -> u64 {
    let mut text = canonical(schema, body);
    if let Some(f) = framing_text(schema) {
        text.push('|');
        text.push_str(&f);
    }
    fnv1a64(text.as_bytes())
}

/// The canonical text of a framing that declares a sync or a checksum: the record header's
/// layout, the sync field's index, and the checksum's algorithm, span and field index.
pub fn framing_text(schema: &Schema) -> Option<String> {
    let fr = schema.framing.as_ref()?;
    if fr.sync.is_none() && fr.checksum.is_none() {
        return None;
    }
    let mut out = String::from("frame");
    out.push_str(&canonical(schema, fr.header));
    if let Some(i) = fr.sync {
        let _ = write!(out, ";sync={i}");
    }
    if let Some(c) = fr.checksum {
        let _ = write!(out, ";crc={}/{}@{}", c.algorithm.name(), c.over.name(), c.field);
    }
    Some(out)
}

/// The canonical layout text of a struct, e.g.
/// `{x:f32le;y:f32le;src:enum u8{AUTOPILOT=0,MANUAL=1};_:pad3}`.
pub fn canonical(schema: &Schema, id: TypeId) -> String {
    let mut out = String::new();
    // Layout rules other than packed change every offset: they lead the text (packed texts,
    // and so every lock file written before the rules existed, are unchanged).
    let rules = schema.format.rules;
    if rules.natural_align {
        out.push_str("align natural;");
    }
    if rules.string_nul {
        out.push_str("string nul;");
    }
    match schema.ty(id) {
        TypeDef::Struct(s) => fields(schema, &s.fields, &mut out),
        _ => ty(schema, &Ty::Named(id), Endian::Little, &mut out),
    }
    out
}

/// The canonical text of one field's type (with its const value), as it appears inside
/// [`canonical`]; lock files record it per field.
pub fn field_type(schema: &Schema, f: &Field) -> String {
    let mut out = String::new();
    ty(schema, &f.ty, f.endian, &mut out);
    push_const(f, &mut out);
    out
}

/// The canonical text of a type as a field of byte order `endian` holds it.
pub fn type_text(schema: &Schema, t: &Ty, endian: Endian) -> String {
    let mut out = String::new();
    ty(schema, t, endian, &mut out);
    out
}

fn push_const(f: &Field, out: &mut String) {
    match &f.value {
        Some(ConstValue::Int(v)) => {
            let _ = write!(out, "={v}");
        }
        Some(ConstValue::Bytes(b)) => {
            out.push_str("=0x");
            for x in b {
                let _ = write!(out, "{x:02x}");
            }
        }
        None => {}
    }
}

fn fields(schema: &Schema, fs: &[Field], out: &mut String) {
    out.push('{');
    for (i, f) in fs.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        out.push_str(if f.is_padding() { "_" } else { &f.name });
        out.push(':');
        ty(schema, &f.ty, f.endian, out);
        push_const(f, out);
    }
    out.push('}');
}

fn order(e: Endian) -> &'static str {
    match e {
        Endian::Little => "le",
        Endian::Big => "be",
    }
}

fn len(l: &Len, e: Endian, out: &mut String) {
    let _ = match l {
        Len::Fixed(n) => write!(out, "[{n}]"),
        Len::Count(p) => write!(out, "[count {}{}]", p.name(), order(e)),
        Len::Size(p) => write!(out, "[size {}{}]", p.name(), order(e)),
        Len::Rest => write!(out, "[rest]"),
    };
}

fn ty(schema: &Schema, t: &Ty, e: Endian, out: &mut String) {
    match t {
        Ty::Prim(p) if p.size() == 1 => out.push_str(p.name()),
        Ty::Prim(p) => {
            out.push_str(p.name());
            out.push_str(order(e));
        }
        Ty::Bool => out.push_str("bool"),
        Ty::Pad(n) => {
            let _ = write!(out, "pad{n}");
        }
        Ty::Bytes(l) => {
            out.push_str("bytes");
            len(l, e, out);
        }
        Ty::Str(l) => {
            out.push_str("string");
            len(l, e, out);
        }
        Ty::Array { elem, len: l } => {
            out.push_str("array");
            len(l, e, out);
            out.push('(');
            ty(schema, elem, e, out);
            out.push(')');
        }
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => fields(schema, &s.fields, out),
            TypeDef::Enum(en) => {
                let _ = write!(out, "enum {}{}{{", en.base.name(), if en.base.size() > 1 { order(e) } else { "" });
                for (i, v) in en.values.iter().enumerate() {
                    let _ = write!(out, "{}{}={}", if i > 0 { "," } else { "" }, v.name, v.value);
                }
                out.push('}');
            }
            TypeDef::Flags(fl) => {
                let _ = write!(out, "flags {}{}{{", fl.base.name(), if fl.base.size() > 1 { order(e) } else { "" });
                for (i, f) in fl.flags.iter().enumerate() {
                    let _ = write!(out, "{}{}={}", if i > 0 { "," } else { "" }, f.name, f.bit);
                }
                // Bit-fields are written only when present, so that the fingerprints of TOML
                // flags types (which have none) stay what they were.
                if !fl.fields.is_empty() {
                    out.push(';');
                    for (i, f) in fl.fields.iter().enumerate() {
                        let kind = match f.kind {
                            crate::ir::BitKind::Bool => "bool".to_string(),
                            crate::ir::BitKind::Unsigned => "u".to_string(),
                            crate::ir::BitKind::Signed => "i".to_string(),
                            crate::ir::BitKind::Enum(id) => {
                                let mut k = String::from("enum(");
                                ty(schema, &Ty::Named(id), e, &mut k);
                                k.push(')');
                                k
                            }
                        };
                        let _ = write!(out, "{}{}@{}:{}{}", if i > 0 { "," } else { "" }, f.name, f.bit, f.width, kind);
                    }
                }
                out.push('}');
            }
            TypeDef::Union(u) => union(schema, u, "", out),
            TypeDef::Extern(x) => {
                let _ = write!(out, "extern {}", x.path);
            }
        },
        Ty::Union { id, tag_field } => match schema.ty(*id) {
            TypeDef::Union(u) => union(schema, u, &format!("@{tag_field}"), out),
            // A hand-written union (`#[derive(Record)]` on a data enum): known by its path.
            TypeDef::Extern(x) => {
                let _ = write!(out, "union extern {}@{tag_field}", x.path);
            }
            _ => {}
        },
        Ty::VarInt { prim, width } => {
            // `varint u32le@0[0..2]`: bits 0..2 of field 0, plus one, give the byte count.
            let hi = width.lo + width.bits;
            let _ = write!(out, "varint {}{}@{}[{}..{hi}]", prim.name(), order(e), width.field, width.lo);
        }
        Ty::ParamUnion { id, param } => {
            if let TypeDef::Union(u) = schema.ty(*id) {
                // `union$<parameter>{...}`: selected by a reader parameter, not by a field.
                let sel = format!("${}", schema.params.get(*param).map_or("?", |p| p.name.as_str()));
                union(schema, u, &sel, out);
            }
        }
    }
}

/// `sel` says what selects the variant: `@<tag field index>`, `$<parameter>`, or nothing.
fn union(schema: &Schema, u: &crate::ir::Union, sel: &str, out: &mut String) {
    out.push_str("union");
    out.push_str(sel);
    out.push('{');
    for (i, v) in u.variants.iter().enumerate() {
        let _ = match &v.select {
            None => write!(out, "{}{}={}:", if i > 0 { "," } else { "" }, v.name, v.tag),
            Some(m) => {
                let sel = match m {
                    crate::ir::NameMatch::Exact(names) => {
                        names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join("|")
                    }
                    crate::ir::NameMatch::Prefix(p) => format!("{p:?}*"),
                    crate::ir::NameMatch::Default => "*".to_string(),
                };
                write!(out, "{}{}={sel}:", if i > 0 { "," } else { "" }, v.name)
            }
        };
        fields(schema, &v.fields, out);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::fnv1a64;

    #[test]
    fn fnv_reference_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    /// A schema whose framing is `framing` (TOML lines) and whose one record is `{ x: u32 }`.
    fn record_print(framing: &str) -> (u64, u64) {
        let text = format!(
            "[format]\nname = \"f\"\n[framing]\ntag = \"t\"\nlength = \"n\"\n{framing}\n\
             [[record]]\nname = \"REC_A\"\nid = 1\nfields = [{{ name = \"x\", type = \"u32\" }}]\n"
        );
        let s = crate::compile_str("f.toml", &text).unwrap_or_else(|e| panic!("{}", e.render()));
        (s.records[0].fingerprint, super::of_struct(&s, s.records[0].body))
    }

    #[test]
    fn sync_and_checksum_are_part_of_every_records_fingerprint() {
        let plain = "fields = [{ name = \"t\", type = \"u8\" }, { name = \"n\", type = \"u16\" }, { name = \"c\", type = \"u32\" }]";
        let synced = "sync = \"s\"\nfields = [{ name = \"s\", type = \"u16\", const = 0x95A3 }, { name = \"t\", type = \"u8\" }, { name = \"n\", type = \"u16\" }, { name = \"c\", type = \"u32\" }]";
        let other_sync = synced.replace("0x95A3", "0x95A4");
        let crc = |alg: &str, over: &str| {
            format!("checksum = {{ field = \"c\", algorithm = \"{alg}\", over = \"{over}\" }}\n{plain}")
        };
        // Without a sync or a checksum, a record's fingerprint is its payload's, as before.
        let (p, payload) = record_print(plain);
        assert_eq!(p, payload);
        let prints = [
            p,
            record_print(synced).0,
            record_print(&other_sync).0,
            record_print(&crc("crc-32c", "record")).0,
            record_print(&crc("crc-32", "record")).0,
            record_print(&crc("crc-32c", "payload")).0,
        ];
        for (i, a) in prints.iter().enumerate() {
            for b in &prints[i + 1..] {
                assert_ne!(a, b, "{prints:x?}");
            }
        }
        // The payload's own fingerprint does not move.
        assert_eq!(record_print(&crc("crc-32", "payload")).1, payload);
    }
}
