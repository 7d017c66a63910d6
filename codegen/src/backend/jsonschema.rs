//! JSON Schema (draft 2020-12) of a struct's values as `logspec dump` and `logspec convert`
//! print them: numbers as numbers (NaN and infinities as the strings `"NaN"`, `"Infinity"`,
//! `"-Infinity"`), enums and flags as their raw integers, bytes as lowercase hex strings, unions
//! as objects whose `variant` names the variant. Field docs and units become descriptions
//! (`"Heading [rad]"`), so viewers such as Foxglove show them.

use std::fmt::Write;

use super::json_string;
use logspec_ir::ir::{Field, Schema, Ty, TypeDef, TypeId};

/// Choices where decoders differ in how they show a value.
#[derive(Clone, Copy, Debug, Default)]
pub struct Opts {
    /// An enum value with a name is that name (a string), others their number, as the WPILib
    /// struct decoder shows them; otherwise every enum value is its number.
    pub enum_names: bool,
}

/// The schema of a struct's values, as JSON text.
pub fn struct_schema(schema: &Schema, id: TypeId) -> String {
    struct_schema_with(schema, id, Opts::default())
}

/// The schema of any type's values (without `$schema`), as JSON text.
pub fn type_schema(schema: &Schema, t: &Ty, o: Opts) -> String {
    let mut out = String::from("{");
    ty(schema, t, o, &mut out);
    out.push('}');
    out
}

/// [`struct_schema`] with choices.
pub fn struct_schema_with(schema: &Schema, id: TypeId, o: Opts) -> String {
    let mut out = String::new();
    let s = schema.strukt(id);
    out.push_str("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",");
    let title = schema.record_for(id).map_or(s.name.as_str(), |r| r.name.as_str());
    let _ = write!(out, "\"title\":{},", json_string(title));
    let doc = schema.record_for(id).and_then(|r| r.doc.as_deref()).or(s.doc.as_deref());
    if let Some(d) = doc {
        let _ = write!(out, "\"description\":{},", json_string(d));
    }
    object_body(schema, &s.fields, o, &mut out);
    out.push('}');
    out
}

/// `"type":"object","properties":{..},"required":[..]` of a field list.
fn object_body(schema: &Schema, fields: &[Field], o: Opts, out: &mut String) {
    out.push_str("\"type\":\"object\",\"properties\":{");
    let shown: Vec<&Field> = fields.iter().filter(|f| !f.is_padding()).collect();
    let mut names: Vec<String> = Vec::new();
    for f in shown.iter() {
        if !names.is_empty() {
            out.push(',');
        }
        // A storage integer of bit-fields is not a member of its own: its bit-fields are
        // members of the struct, as a decoder shows them.
        if let Ty::Named(id) = &f.ty {
            if let TypeDef::Flags(fl) = schema.ty(*id) {
                if !fl.fields.is_empty() {
                    for (j, b) in fl.fields.iter().enumerate() {
                        let _ = write!(out, "{}{}:{{", if j > 0 { "," } else { "" }, json_string(&b.name));
                        match b.kind {
                            logspec_ir::ir::BitKind::Bool => out.push_str("\"type\":\"boolean\""),
                            logspec_ir::ir::BitKind::Enum(id) => ty(schema, &Ty::Named(id), o, out),
                            _ => out.push_str("\"type\":\"integer\""),
                        }
                        out.push('}');
                        names.push(json_string(&b.name));
                    }
                    continue;
                }
            }
        }
        names.push(json_string(&f.name));
        let _ = write!(out, "{}:{{", json_string(&f.name));
        let desc = match (&f.doc, &f.unit) {
            (Some(d), Some(u)) => Some(format!("{d} [{u}]")),
            (Some(d), None) => Some(d.clone()),
            (None, Some(u)) => Some(format!("[{u}]")),
            (None, None) => None,
        };
        if let Some(d) = desc {
            let _ = write!(out, "\"description\":{},", json_string(&d));
        }
        ty(schema, &f.ty, o, out);
        out.push('}');
    }
    out.push_str("},\"required\":[");
    out.push_str(&names.join(","));
    out.push(']');
}

/// The members of a type's schema (without the braces).
fn ty(schema: &Schema, t: &Ty, o: Opts, out: &mut String) {
    match t {
        Ty::Prim(p) if p.is_float() => {
            out.push_str("\"anyOf\":[{\"type\":\"number\"},{\"enum\":[\"NaN\",\"Infinity\",\"-Infinity\"]}]")
        }
        Ty::Prim(_) | Ty::VarInt { .. } => out.push_str("\"type\":\"integer\""),
        Ty::Bool => out.push_str("\"type\":\"boolean\""),
        Ty::Pad(_) => out.push_str("\"type\":\"null\""),
        Ty::Bytes(_) => out.push_str("\"type\":\"string\",\"contentEncoding\":\"base16\""),
        Ty::Str(_) => out.push_str("\"type\":\"string\""),
        Ty::Array { elem, len } => {
            out.push_str("\"type\":\"array\",\"items\":{");
            ty(schema, elem, o, out);
            out.push('}');
            if let logspec_ir::ir::Len::Fixed(n) = len {
                let _ = write!(out, ",\"minItems\":{n},\"maxItems\":{n}");
            }
        }
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => object_body(schema, &s.fields, o, out),
            TypeDef::Enum(e) if o.enum_names => {
                let names: Vec<String> = e.values.iter().map(|v| json_string(&v.name)).collect();
                let _ = write!(out, "\"title\":{},", json_string(&e.name));
                let _ = write!(out, "\"anyOf\":[{{\"type\":\"integer\"}},{{\"enum\":[{}]}}]", names.join(","));
            }
            TypeDef::Enum(e) => {
                let values: Vec<String> = e.values.iter().map(|v| format!("{} = {}", v.value, v.name)).collect();
                let _ = write!(out, "\"type\":\"integer\",\"title\":{},", json_string(&e.name));
                let _ = write!(out, "\"description\":{}", json_string(&format!("enum: {}", values.join(", "))));
            }
            TypeDef::Flags(f) if !f.fields.is_empty() => {
                // Bit-fields decode to an object of their members, like a struct.
                let _ = write!(out, "\"type\":\"object\",\"title\":{},\"properties\":{{", json_string(&f.name));
                for (i, b) in f.fields.iter().enumerate() {
                    let _ = write!(out, "{}{}:{{", if i > 0 { "," } else { "" }, json_string(&b.name));
                    match b.kind {
                        logspec_ir::ir::BitKind::Bool => out.push_str("\"type\":\"boolean\""),
                        logspec_ir::ir::BitKind::Enum(id) => ty(schema, &Ty::Named(id), o, out),
                        _ => out.push_str("\"type\":\"integer\""),
                    }
                    out.push('}');
                }
                out.push('}');
            }
            TypeDef::Flags(f) => {
                let bits: Vec<String> = f.flags.iter().map(|b| format!("bit {} = {}", b.bit, b.name)).collect();
                let _ = write!(out, "\"type\":\"integer\",\"title\":{},", json_string(&f.name));
                let _ = write!(out, "\"description\":{}", json_string(&format!("flags: {}", bits.join(", "))));
            }
            TypeDef::Union(u) => union(schema, u, o, out),
            TypeDef::Extern(_) => {}
        },
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => {
            if let TypeDef::Union(u) = schema.ty(*id) {
                union(schema, u, o, out);
            }
        }
    }
}

fn union(schema: &Schema, u: &logspec_ir::ir::Union, o: Opts, out: &mut String) {
    let _ = write!(out, "\"title\":{},\"oneOf\":[", json_string(&u.name));
    for (i, v) in u.variants.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut fields = vec![Field {
            name: "variant".to_string(),
            ty: Ty::Str(logspec_ir::ir::Len::Rest),
            endian: u.endian,
            doc: None,
            unit: None,
            value: None,
            offset: None,
        }];
        fields.extend(v.fields.iter().cloned());
        out.push('{');
        object_body(schema, &fields, o, out);
        let _ = write!(out, ",\"title\":{}", json_string(&v.name));
        out.push('}');
    }
    out.push(']');
}
