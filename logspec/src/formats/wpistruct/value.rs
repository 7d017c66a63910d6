//! The walk over the IR of a struct schema that turns a value's bytes into a [`Value`]: the
//! dynamic decoder of `struct:` values. Every type it meets has a fixed size (the front end
//! lowers only fixed-size types), and callers pass exactly that many bytes, so every read is in
//! bounds; a read that would not be (a bug) yields `null` rather than a panic.
//!
//! Shapes follow AdvantageScope's struct decoder: members in schema order; bit-fields are
//! members of the struct they are declared in; an enum member with a named value is the name,
//! otherwise the number; `char[N]` is a string of N bytes, NUL padding included (decoded as
//! UTF-8, invalid sequences as U+FFFD); 64-bit integers stay exact (AdvantageScope rounds them
//! to f64).

use logspec_ir::ir::{BitKind, Endian, Enum, Len, Prim, Schema, Ty, TypeDef, TypeId};

use crate::value::Value;

/// Decodes struct `id` from `data`, which holds at least its size.
pub fn decode(schema: &Schema, id: TypeId, data: &[u8]) -> Value {
    let s = schema.strukt(id);
    let mut out = Vec::with_capacity(s.fields.len());
    for f in &s.fields {
        let at = f.offset.unwrap_or(0) as usize;
        let Some(bytes) = data.get(at..) else {
            out.push((f.name.clone(), Value::Null));
            continue;
        };
        if let Ty::Named(fid) = &f.ty {
            if let TypeDef::Flags(fl) = schema.ty(*fid) {
                if !fl.fields.is_empty() {
                    let raw = uint(fl.base, f.endian, bytes).unwrap_or(0);
                    for b in &fl.fields {
                        out.push((b.name.clone(), bit_field(schema, raw, b.bit, b.width, b.kind)));
                    }
                    continue;
                }
            }
        }
        out.push((f.name.clone(), ty(schema, &f.ty, f.endian, bytes)));
    }
    Value::Object(out)
}

/// A value of type `t` whose numbers are in byte order `e` (the field's, from the IR).
fn ty(schema: &Schema, t: &Ty, e: Endian, data: &[u8]) -> Value {
    match t {
        Ty::Prim(p) => prim(*p, e, data),
        Ty::Bool => data.first().map_or(Value::Null, |b| Value::Bool(*b != 0)),
        Ty::Str(Len::Fixed(n)) => match data.get(..*n as usize) {
            Some(b) => Value::Str(String::from_utf8_lossy(b).into_owned()),
            None => Value::Null,
        },
        Ty::Array { elem, len: Len::Fixed(n) } => {
            let size = schema.size_of(elem).unwrap_or(0) as usize;
            let n = *n as usize;
            // The caller's bytes bound the count, so no input can make this allocate more.
            if !matches!(size.checked_mul(n), Some(total) if total <= data.len()) {
                return Value::Null;
            }
            let mut items = Vec::with_capacity(n);
            for i in 0..n {
                items.push(data.get(i * size..).map_or(Value::Null, |d| ty(schema, elem, e, d)));
            }
            Value::Array(items)
        }
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(_) => decode(schema, *id, data),
            TypeDef::Enum(en) => enum_value(en, e, data),
            TypeDef::Flags(f) => uint(f.base, e, data).map_or(Value::Null, Value::UInt),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn prim(p: Prim, e: Endian, data: &[u8]) -> Value {
    let Some(u) = uint(p, e, data) else { return Value::Null };
    match p {
        Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => Value::UInt(u),
        Prim::I8 => Value::Int(i64::from(u as u8 as i8)),
        Prim::I16 => Value::Int(i64::from(u as u16 as i16)),
        Prim::I32 => Value::Int(i64::from(u as u32 as i32)),
        Prim::I64 => Value::Int(u as i64),
        Prim::F32 => Value::Float(f64::from(f32::from_bits(u as u32))),
        Prim::F64 => Value::Float(f64::from_bits(u)),
    }
}

/// The `p.size()` bytes at the start of `data` as an unsigned number, in byte order `e`.
fn uint(p: Prim, e: Endian, data: &[u8]) -> Option<u64> {
    let b = data.get(..p.size() as usize)?;
    Some(match e {
        Endian::Little => b.iter().rev().fold(0, |acc, &x| (acc << 8) | u64::from(x)),
        Endian::Big => b.iter().fold(0, |acc, &x| (acc << 8) | u64::from(x)),
    })
}

fn enum_value(e: &Enum, order: Endian, data: &[u8]) -> Value {
    let v = prim(e.base, order, data);
    let n: Option<i128> = match v {
        Value::Int(i) => Some(i128::from(i)),
        Value::UInt(u) => Some(i128::from(u)),
        _ => None,
    };
    match n.and_then(|n| e.values.iter().find(|x| x.value == n)) {
        Some(x) => Value::Str(x.name.clone()),
        None => v,
    }
}

fn bit_field(schema: &Schema, raw: u64, bit: u32, width: u32, kind: BitKind) -> Value {
    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    let v = raw.checked_shr(bit).unwrap_or(0) & mask;
    match kind {
        BitKind::Bool => Value::Bool(v != 0),
        BitKind::Unsigned => Value::UInt(v),
        // struct.adoc gives bit-fields C semantics: a signed field is sign-extended.
        BitKind::Signed => {
            let up = 64 - width.min(64);
            Value::Int(((v << up) as i64) >> up)
        }
        BitKind::Enum(id) => match schema.ty(id) {
            TypeDef::Enum(e) => match e.values.iter().find(|x| x.value == i128::from(v)) {
                Some(x) => Value::Str(x.name.clone()),
                None => Value::UInt(v),
            },
            _ => Value::UInt(v),
        },
    }
}
