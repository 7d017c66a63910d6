//! The dynamic interpreter's other direction: a [`Value`] tree encoded into bytes by walking the
//! IR of its type, for writers whose values arrive at run time (the Python package's USVLOG,
//! RLOG and WPILOG writers take dicts and numbers from Python).
//!
//! Like [`crate::dynamic::decode`], the walk knows no format: every number is written in its
//! field's byte order at its IR width, every length by its IR rule (fixed, a count or byte-size
//! prefix of the stated width, or the rest of the payload), pad bytes as zeros and const fields
//! as the schema says. What it adds is the checks a value from outside needs, each a
//! [`EncodeFault`] that names the field path: a field missing or unknown, a value of the wrong
//! kind (a string for a number, a float for an integer), a number outside its type's range, a
//! string or array too long for its prefix or of the wrong fixed length.
//!
//! Values follow the shapes of [`Value`] that the decoder builds: a struct is an
//! [`Value::Object`] of its fields by name (padding left out; a nested struct of one field may
//! be given as that field's value), an enum its number or one of its value names, flags their
//! number, a string [`Value::Str`], bytes [`Value::Bytes`].

use logspec_ir::ir::{ConstValue, Endian, Field, Len, Prim, Schema, Ty, TypeDef};

use crate::value::Value;

/// What kind of mistake a value holds, so that callers can map it to their own error types (the
/// Python package raises `TypeError` for [`FaultKind::Type`], `ValueError` for the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// A field the type has was not given.
    Missing,
    /// A field the type does not have was given.
    Unknown,
    /// A value of the wrong kind (a string for a number, a float for an integer).
    Type,
    /// A value of the right kind out of its type's range, or of the wrong length.
    Range,
    /// A type this walk does not write (unions, parameter unions, variable-width integers).
    Unsupported,
}

/// Why a value did not encode: which field, and what was expected and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeFault {
    pub kind: FaultKind,
    /// The field path, outermost first (`pose`, `x`; `[3]` for array elements).
    pub path: Vec<String>,
    pub message: String,
}

impl EncodeFault {
    fn new(kind: FaultKind, message: impl Into<String>) -> Self {
        EncodeFault { kind, path: Vec::new(), message: message.into() }
    }

    /// The field path as one string (`pose.x`, `values[3]`), empty for the value itself.
    pub fn path_text(&self) -> String {
        let mut path = String::new();
        for p in &self.path {
            if !p.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(p);
        }
        path
    }

    fn within(mut self, segment: String) -> Self {
        self.path.insert(0, segment);
        self
    }
}

impl std::fmt::Display for EncodeFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path_text() {
            p if p.is_empty() => f.write_str(&self.message),
            p => write!(f, "field `{p}`: {}", self.message),
        }
    }
}

impl std::error::Error for EncodeFault {}

/// Encodes `value` as the fields `fields` (a struct's or a union variant's) of `schema`,
/// appending to `out`. `value` must be an [`Value::Object`]; on a fault, `out` may hold part of
/// the value and the caller drops it.
pub fn encode_fields(schema: &Schema, fields: &[Field], value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
    let Value::Object(given) = value else {
        return Err(EncodeFault::new(
            FaultKind::Type,
            format!("expected a mapping of field names, found {}", kind(value)),
        ));
    };
    // Every name given must be a field; padding has no name a caller can give.
    for (name, _) in given {
        if !fields.iter().any(|f| !f.is_padding() && f.name == *name) {
            let known: Vec<&str> = fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str()).collect();
            return Err(EncodeFault::new(
                FaultKind::Unknown,
                format!("no such field; the fields are {}", known.join(", ")),
            )
            .within(name.clone()));
        }
    }
    for f in fields {
        let v = given.iter().find(|(n, _)| *n == f.name).map(|(_, v)| v);
        encode_field(schema, f, v, out).map_err(|e| e.within(f.name.clone()))?;
    }
    Ok(())
}

/// Encodes one value of type `ty` (in byte order `e` where the type does not say) into `out`.
pub fn encode(schema: &Schema, ty: &Ty, e: Endian, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
    Walk { schema }.value(ty, e, value, out)
}

fn encode_field(schema: &Schema, f: &Field, v: Option<&Value>, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
    let walk = Walk { schema };
    match (&f.value, v) {
        // A const field is written as the schema says; a caller may give it, but only as it is.
        (Some(c), given) => {
            let start = out.len();
            match c {
                ConstValue::Int(i) => walk.value(&f.ty, f.endian, &Value::Int(*i as i64), out)?,
                ConstValue::Bytes(b) => {
                    out.extend_from_slice(b);
                    let n = schema.size_of(&f.ty).map_or(b.len(), |n| n as usize);
                    out.resize(start + n.max(b.len()), 0);
                }
            }
            if let Some(given) = given {
                let mut mine = Vec::new();
                walk.value(&f.ty, f.endian, given, &mut mine)?;
                if mine != out[start..] {
                    return Err(EncodeFault::new(
                        FaultKind::Range,
                        "this field is a constant of the format; leave it out",
                    ));
                }
            }
            Ok(())
        }
        (None, _) if f.is_padding() => walk.value(&f.ty, f.endian, &Value::Null, out),
        (None, Some(v)) => walk.value(&f.ty, f.endian, v, out),
        (None, None) => {
            Err(EncodeFault::new(FaultKind::Missing, format!("missing (a value of type {})", type_text(schema, &f.ty))))
        }
    }
}

struct Walk<'a> {
    schema: &'a Schema,
}

impl Walk<'_> {
    fn value(&self, ty: &Ty, e: Endian, v: &Value, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
        match ty {
            Ty::Pad(n) => out.resize(out.len() + *n as usize, 0),
            Ty::Bool => {
                let b = match v {
                    Value::Bool(b) => *b,
                    Value::Int(0) | Value::UInt(0) => false,
                    Value::Int(1) | Value::UInt(1) => true,
                    Value::Int(_) | Value::UInt(_) => {
                        return Err(EncodeFault::new(
                            FaultKind::Range,
                            format!("a bool is true, false, 0 or 1, found {}", show(v)),
                        ))
                    }
                    _ => return Err(type_fault("a bool", v)),
                };
                out.push(u8::from(b));
            }
            Ty::Prim(p) => number(*p, e, v, out)?,
            Ty::Str(len) => {
                let Value::Str(s) = v else { return Err(type_fault("a string", v)) };
                self.sequence(*len, e, s.len(), 1, out)?;
                out.extend_from_slice(s.as_bytes());
                if let Len::Fixed(n) = len {
                    out.resize(out.len() + (*n as usize - s.len()), 0);
                }
            }
            Ty::Bytes(len) => {
                let Value::Bytes(b) = v else { return Err(type_fault("bytes", v)) };
                self.sequence(*len, e, b.len(), 1, out)?;
                out.extend_from_slice(b);
                if let Len::Fixed(n) = len {
                    out.resize(out.len() + (*n as usize - b.len()), 0);
                }
            }
            Ty::Array { elem, len } => {
                let Value::Array(items) = v else { return Err(type_fault("a list", v)) };
                if let Len::Fixed(n) = len {
                    if items.len() != *n as usize {
                        return Err(EncodeFault::new(
                            FaultKind::Range,
                            format!("expected exactly {n} elements, found {}", items.len()),
                        ));
                    }
                } else if let (Len::Size(_), None) = (len, self.schema.size_of(elem)) {
                    // Elements of a variable size: the prefix is their encoded bytes.
                    let mut body = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        self.value(elem, e, item, &mut body).map_err(|f| f.within(format!("[{i}]")))?;
                    }
                    self.sequence(*len, e, body.len(), 1, out)?;
                    out.extend_from_slice(&body);
                    return Ok(());
                } else {
                    let size = self.schema.size_of(elem).map_or(0, |s| s as usize);
                    self.sequence(*len, e, items.len(), size, out)?;
                }
                for (i, item) in items.iter().enumerate() {
                    self.value(elem, e, item, out).map_err(|f| f.within(format!("[{i}]")))?;
                }
            }
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => {
                    // A struct of one field (a length-prefixed string element, say) may be given
                    // as that field's value, as the decoder's consumers show it.
                    let mut settable = s.fields.iter().filter(|f| !f.is_padding() && f.value.is_none());
                    match (settable.next(), settable.next(), v) {
                        (Some(only), None, v) if !matches!(v, Value::Object(_)) => {
                            let wrapped = Value::Object(vec![(only.name.clone(), v.clone())]);
                            encode_fields(self.schema, &s.fields, &wrapped, out)?
                        }
                        _ => encode_fields(self.schema, &s.fields, v, out)?,
                    }
                }
                TypeDef::Enum(en) => {
                    let raw = match v {
                        Value::Str(name) => match en.values.iter().find(|x| x.name == *name) {
                            Some(x) => Value::Int(x.value as i64),
                            None => {
                                let names: Vec<&str> = en.values.iter().map(|x| x.name.as_str()).collect();
                                return Err(EncodeFault::new(
                                    FaultKind::Range,
                                    format!(
                                        "`{name}` is not a value of {}; its values are {}",
                                        en.name,
                                        names.join(", ")
                                    ),
                                ));
                            }
                        },
                        other => other.clone(),
                    };
                    number(en.base, e, &raw, out)?;
                }
                TypeDef::Flags(fl) => number(fl.base, e, v, out)?,
                other => {
                    return Err(EncodeFault::new(
                        FaultKind::Unsupported,
                        format!("type `{}` is not one the dynamic encoder writes", other.name()),
                    ))
                }
            },
            other => {
                return Err(EncodeFault::new(
                    FaultKind::Unsupported,
                    format!("a field of type {} is not one the dynamic encoder writes", type_text(self.schema, other)),
                ))
            }
        }
        Ok(())
    }

    /// Checks `n` elements (of `size` bytes each; 1 for strings and bytes) against the length
    /// rule and writes its prefix, if it has one.
    fn sequence(&self, len: Len, e: Endian, n: usize, size: usize, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
        let prefix = |p: Prim, count: usize, what: &str, out: &mut Vec<u8>| {
            let (_, max) = p.int_range().unwrap_or((0, 0));
            if count as i128 > max {
                return Err(EncodeFault::new(
                    FaultKind::Range,
                    format!("{count} {what} do not fit the {p} length prefix (at most {max})"),
                ));
            }
            put_uint(out, count as u64, p.size() as usize, e);
            Ok(())
        };
        match len {
            Len::Fixed(max) if n > max as usize => {
                Err(EncodeFault::new(FaultKind::Range, format!("{n} bytes do not fit in {max}")))
            }
            Len::Fixed(_) | Len::Rest => Ok(()),
            Len::Count(p) => prefix(p, n, "elements", out),
            Len::Size(p) => prefix(p, n.saturating_mul(size), "bytes", out),
        }
    }
}

fn put_uint(out: &mut Vec<u8>, raw: u64, size: usize, e: Endian) {
    match e {
        Endian::Little => out.extend_from_slice(&raw.to_le_bytes()[..size]),
        Endian::Big => out.extend_from_slice(&raw.to_be_bytes()[8 - size..]),
    }
}

/// Writes a number of type `p`: integers in their type's range (a float is refused, as Python's
/// `struct` refuses it), floats from any number (an `f32` from a finite value beyond its range is
/// refused rather than turned into infinity).
fn number(p: Prim, e: Endian, v: &Value, out: &mut Vec<u8>) -> Result<(), EncodeFault> {
    if p.is_float() {
        let x = match v {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            Value::UInt(u) => *u as f64,
            _ => return Err(type_fault(&format!("a number ({p})"), v)),
        };
        if p == Prim::F32 {
            if x.is_finite() && x.abs() > f64::from(f32::MAX) {
                return Err(EncodeFault::new(
                    FaultKind::Range,
                    format!("{x:e} is out of range for f32 (at most {:e} in magnitude)", f32::MAX),
                ));
            }
            put_uint(out, u64::from((x as f32).to_bits()), 4, e);
        } else {
            put_uint(out, x.to_bits(), 8, e);
        }
        return Ok(());
    }
    let i: i128 = match v {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Bool(b) => i128::from(*b),
        _ => return Err(type_fault(&format!("an integer ({p})"), v)),
    };
    let (lo, hi) = p.int_range().expect("an integer type");
    if i < lo || i > hi {
        return Err(EncodeFault::new(FaultKind::Range, format!("{i} is out of range for {p} ({lo}..={hi})")));
    }
    put_uint(out, i as u64, p.size() as usize, e);
    Ok(())
}

fn type_fault(expected: &str, v: &Value) -> EncodeFault {
    EncodeFault::new(FaultKind::Type, format!("expected {expected}, found {}", kind(v)))
}

/// What a value is, as an error message says it ("an integer", "a mapping").
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Int(_) | Value::UInt(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Str(_) => "a string",
        Value::Bytes(_) => "bytes",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        other => kind(other).to_string(),
    }
}

/// A type as the schema language spells it, for messages.
fn type_text(schema: &Schema, ty: &Ty) -> String {
    match ty {
        Ty::Prim(p) => p.name().to_string(),
        Ty::Bool => "bool".into(),
        Ty::Pad(n) => format!("pad[{n}]"),
        Ty::Str(_) => "string".into(),
        Ty::Bytes(_) => "bytes".into(),
        Ty::Array { elem, .. } => format!("{}[]", type_text(schema, elem)),
        Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => schema.ty(*id).name().to_string(),
        Ty::VarInt { prim, .. } => format!("{prim} (variable width)"),
    }
}

#[cfg(test)]
mod tests {
    //! The encoder writes what the schema language says: checked against bytes written out by
    //! hand from the language's rules (the same rules `dynamic`'s tests decode).

    use super::*;

    const SCHEMA: &str = r#"
[format]
name = "walk"
endian = "big"

[[enum]]
name = "Mode"
base = "u8"
values = [{ name = "OFF", value = 0 }, { name = "ON", value = 2 }]

[[struct]]
name = "Pair"
fields = [{ name = "a", type = "u16" }, { name = "b", type = "i8" }]

[[record]]
name = "Msg"
id = 1
fields = [
  { name = "magic", type = "bytes[2]", const = "MG" },
  { name = "name", type = "string", count = "u8" },
  { name = "little", type = "u32", endian = "little" },
  { pad = 1 },
  { name = "mode", type = "Mode" },
  { name = "pairs", type = "Pair[]", count = "u16" },
  { name = "words", type = "u16[]", size = "u16" },
  { name = "tag", type = "string[4]" },
  { name = "ratio", type = "f32" },
  { name = "rest", type = "bytes", count = "rest" },
]
"#;

    fn obj(fields: &[(&str, Value)]) -> Value {
        Value::Object(fields.iter().map(|(n, v)| (n.to_string(), v.clone())).collect())
    }

    fn msg() -> Vec<(&'static str, Value)> {
        let pair = |a, b| obj(&[("a", Value::Int(a)), ("b", Value::Int(b))]);
        vec![
            ("name", Value::Str("hi".into())),
            ("little", Value::Int(1)),
            ("mode", Value::Str("ON".into())),
            ("pairs", Value::Array(vec![pair(258, -1), pair(3, 5)])),
            ("words", Value::Array(vec![Value::Int(0xabcd), Value::Int(1)])),
            ("tag", Value::Str("ab".into())),
            ("ratio", Value::Float(0.5)),
            ("rest", Value::Bytes(vec![9, 8, 7])),
        ]
    }

    fn encode_msg(fields: &[(&str, Value)]) -> Result<Vec<u8>, EncodeFault> {
        let schema = logspec_ir::compile_str("walk.toml", SCHEMA).expect("schema");
        let s = schema.strukt(schema.type_by_name("Msg").unwrap());
        let mut out = Vec::new();
        encode_fields(&schema, &s.fields, &obj(fields), &mut out)?;
        Ok(out)
    }

    #[test]
    fn bytes_follow_the_schema_language() {
        let bytes = encode_msg(&msg()).expect("encodes");
        let expected = [
            &b"MG"[..],                   // const
            &[2u8, b'h', b'i'],           // u8 count
            &[1, 0, 0, 0],                // little-endian u32
            &[0],                         // pad
            &[2],                         // enum by name
            &[0, 2, 1, 2, 0xff, 0, 3, 5], // u16 count, (258, -1), (3, 5)
            &[0, 4, 0xab, 0xcd, 0, 1],    // u16 byte size
            b"ab\0\0",                    // NUL-padded
            &0.5f32.to_be_bytes(),        // big-endian f32
            &[9, 8, 7],                   // rest
        ]
        .concat();
        assert_eq!(bytes, expected);
    }

    #[test]
    fn faults_name_the_field_and_the_kind() {
        let with = |name: &str, v: Value| {
            let mut m = msg();
            m.iter_mut().find(|(n, _)| *n == name).unwrap().1 = v;
            encode_msg(&m).expect_err("a fault")
        };
        let e = with("little", Value::Float(1.5));
        assert_eq!(
            (e.kind, e.to_string()),
            (FaultKind::Type, "field `little`: expected an integer (u32), found a float".into())
        );
        let e = with("little", Value::Int(-1));
        assert_eq!(e.kind, FaultKind::Range);
        assert_eq!(e.to_string(), "field `little`: -1 is out of range for u32 (0..=4294967295)");
        let e = with("ratio", Value::Float(1e39));
        assert_eq!(
            (e.kind, e.to_string()),
            (
                FaultKind::Range,
                "field `ratio`: 1e39 is out of range for f32 (at most 3.4028235e38 in magnitude)".into()
            )
        );
        let e = with("mode", Value::Str("MAYBE".into()));
        assert!(e.to_string().contains("`MAYBE` is not a value of Mode; its values are OFF, ON"), "{e}");
        let e = with("tag", Value::Str("toolong".into()));
        assert_eq!(e.to_string(), "field `tag`: 7 bytes do not fit in 4");
        let bad_pair = Value::Array(vec![obj(&[("a", Value::Int(70000)), ("b", Value::Int(0))])]);
        let e = with("pairs", bad_pair);
        assert_eq!(e.path_text(), "pairs[0].a");
        let mut m = msg();
        m.retain(|(n, _)| *n != "ratio");
        let e = encode_msg(&m).expect_err("missing");
        assert_eq!(
            (e.kind, e.to_string()),
            (FaultKind::Missing, "field `ratio`: missing (a value of type f32)".into())
        );
        let mut m = msg();
        m.push(("speed", Value::Int(1)));
        let e = encode_msg(&m).expect_err("unknown");
        assert_eq!(e.kind, FaultKind::Unknown);
        assert!(e.to_string().starts_with("field `speed`: no such field; the fields are magic, name,"), "{e}");
        let mut m = msg();
        m.push(("magic", Value::Bytes(b"XX".to_vec())));
        assert!(encode_msg(&m).expect_err("const").to_string().contains("constant"));
        let mut m = msg();
        m.push(("magic", Value::Bytes(b"MG".to_vec())));
        assert!(encode_msg(&m).is_ok(), "a const given as it is");
    }

    #[test]
    fn a_one_field_struct_may_be_given_as_its_value() {
        // RLOG's and WPILOG's `string[]` elements are structs of one length-prefixed string.
        let schema = logspec_ir::compile_str(
            "t.toml",
            r#"
[format]
name = "t"
endian = "big"

[[struct]]
name = "Text"
fields = [{ name = "text", type = "string", count = "u16" }]

[[record]]
name = "Names"
id = 1
fields = [{ name = "names", type = "Text[]", count = "u8" }]
"#,
        )
        .expect("schema");
        let s = schema.strukt(schema.type_by_name("Names").unwrap());
        let plain = obj(&[("names", Value::Array(vec![Value::Str("a".into()), Value::Str("".into())]))]);
        let wrapped = obj(&[(
            "names",
            Value::Array(vec![obj(&[("text", Value::Str("a".into()))]), obj(&[("text", Value::Str("".into()))])]),
        )]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_fields(&schema, &s.fields, &plain, &mut a).expect("plain");
        encode_fields(&schema, &s.fields, &wrapped, &mut b).expect("wrapped");
        assert_eq!(a, [2, 0, 1, b'a', 0, 0]);
        assert_eq!(a, b);
    }
}
