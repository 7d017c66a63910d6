//! `struct:` values: the IR interpreter ([`crate::dynamic`]) over the IR that the struct-schema
//! front end lowered a struct into (which is where "little-endian, fixed arrays" is said), with
//! a builder of the facade's [`Value`]. Every type has a fixed size (the front end lowers only
//! fixed-size types), and callers pass exactly that many bytes.
//!
//! Shapes follow AdvantageScope's struct decoder: members in schema order; bit-fields are
//! members of the struct they are declared in; an enum member with a named value is the name,
//! otherwise the number; `char[N]` is a string of N bytes, NUL padding included (decoded as
//! UTF-8, invalid sequences as U+FFFD); 64-bit integers stay exact (AdvantageScope rounds them
//! to f64).

use logspec_ir::ir::{BitKind, Endian, Enum, Flags, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId};

use crate::dynamic::Build;
use crate::value::Value;

/// Decodes struct `id` from `data`, which holds exactly its size. The IR interpreter
/// ([`crate::dynamic`]) reads it; a fault (a caller that passed the wrong size: a bug) yields
/// `null` rather than a panic.
pub fn decode(schema: &Schema, id: TypeId, data: &[u8]) -> Value {
    crate::dynamic::decode(schema, &[], &Ty::Named(id), data, &mut Wpi).unwrap_or(Value::Null)
}

/// Builds AdvantageScope's shapes for the IR interpreter.
struct Wpi;

impl Build for Wpi {
    type Value = Value;

    fn bool(&mut self, b: bool) -> Value {
        Value::Bool(b)
    }

    fn number(&mut self, p: Prim, raw: u64) -> Value {
        match p {
            Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => Value::UInt(raw),
            Prim::I8 => Value::Int(i64::from(raw as u8 as i8)),
            Prim::I16 => Value::Int(i64::from(raw as u16 as i16)),
            Prim::I32 => Value::Int(i64::from(raw as u32 as i32)),
            Prim::I64 => Value::Int(raw as i64),
            Prim::F32 => Value::Float(f64::from(f32::from_bits(raw as u32))),
            Prim::F64 => Value::Float(f64::from_bits(raw)),
        }
    }

    fn text(&mut self, bytes: &[u8], _len: Len) -> Value {
        Value::Str(String::from_utf8_lossy(bytes).into_owned())
    }

    fn bytes(&mut self, bytes: &[u8]) -> Value {
        Value::Bytes(bytes.to_vec())
    }

    fn numbers(&mut self, _p: Prim, _e: Endian, _bytes: &[u8]) -> Option<Value> {
        None
    }

    fn bools(&mut self, _bytes: &[u8]) -> Option<Value> {
        None
    }

    fn list(&mut self, items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    /// Members in schema order; the bit-fields of a storage integer are members of the struct
    /// they are declared in (the storage integer arrives as an object of them from
    /// [`Wpi::flags`]).
    fn strukt(&mut self, schema: &Schema, s: &Struct, fields: Vec<Value>) -> Value {
        let mut out = Vec::with_capacity(s.fields.len());
        for (f, v) in s.fields.iter().zip(fields) {
            if let (Ty::Named(fid), Value::Object(bits)) = (&f.ty, &v) {
                if matches!(schema.ty(*fid), TypeDef::Flags(fl) if !fl.fields.is_empty()) {
                    out.extend(bits.iter().cloned());
                    continue;
                }
            }
            out.push((f.name.clone(), v));
        }
        Value::Object(out)
    }

    fn enumeration(&mut self, e: &Enum, raw: u64) -> Value {
        enum_value(e, self.number(e.base, raw))
    }

    fn flags(&mut self, schema: &Schema, f: &Flags, raw: u64) -> Value {
        if f.fields.is_empty() {
            return Value::UInt(raw);
        }
        Value::Object(
            f.fields.iter().map(|b| (b.name.clone(), bit_field(schema, raw, b.bit, b.width, b.kind))).collect(),
        )
    }

    /// A member whose struct is not defined (lowered as zero bytes of padding).
    fn padding(&mut self) -> Value {
        Value::Null
    }
}

/// An enum member's value: its name when the number has one, otherwise the number.
fn enum_value(e: &Enum, v: Value) -> Value {
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
