//! ROS values: a ROS1-serialized message decoded into a [`Value`] tree by the IR interpreter
//! ([`crate::dynamic`]) over the IR that the `.msg` front end lowered its definition into (which
//! is where ROS's u32 length prefixes are said), and [`ValueView`], which shows a value to any
//! [`Visitor`] (the JSON writer) with its field names.
//!
//! Arrays of numbers and bools decode into packed vectors ([`Prims`]): a `uint8[]` blob is one
//! copy, not a value per byte.

use logspec_ir::ir::{Endian, Enum, Flags, Len, Prim, Schema, Struct, Ty, TypeDef};

use crate::dynamic::{unpack, Build, Sink};
use logspec_runtime::{Numbers, Visit, Visitor};

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
    Str(String),
    /// A string that is not valid UTF-8, kept as its bytes.
    RawStr(Vec<u8>),
    /// An array of numbers or bools.
    Prims(Prims),
    /// An array of strings, times or messages.
    List(Vec<Value>),
    /// A message (or `time`/`duration`): its fields in definition order.
    Struct(Vec<Value>),
}

/// A packed array of one primitive type.
#[derive(Clone, Debug, PartialEq)]
pub enum Prims {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Why a message did not decode: where, in which field, and what was expected and found.
pub use crate::dynamic::Fault as DecodeFault;

/// Decodes one whole message of type `ty`; trailing bytes are an error. `min` is
/// [`logspec_ir::layout::min_sizes`] of `schema` (an empty slice works, more slowly).
pub fn decode(schema: &Schema, min: &[u64], ty: &Ty, bytes: &[u8]) -> Result<Value, DecodeFault> {
    crate::dynamic::decode(schema, min, ty, bytes, &mut Ros)
}

/// A number of a ROS message as its type says: what [`Value`] and the visit of a message hold.
#[derive(Clone, Copy)]
enum Number {
    UInt(u64),
    Int(i64),
    F32(f32),
    F64(f64),
}

impl Number {
    /// The number of type `p` whose bits (zero-extended) are `raw`.
    #[inline]
    fn of(p: Prim, raw: u64) -> Number {
        match p {
            Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => Number::UInt(raw),
            Prim::I8 => Number::Int(i64::from(raw as u8 as i8)),
            Prim::I16 => Number::Int(i64::from(raw as u16 as i16)),
            Prim::I32 => Number::Int(i64::from(raw as u32 as i32)),
            Prim::I64 => Number::Int(raw as i64),
            Prim::F32 => Number::F32(f32::from_bits(raw as u32)),
            Prim::F64 => Number::F64(f64::from_bits(raw)),
        }
    }
}

/// Builds ROS values for the IR interpreter: numbers and bools of arrays packed, strings that
/// are not UTF-8 kept as bytes.
struct Ros;

impl Build for Ros {
    type Value = Value;

    #[inline]
    fn bool(&mut self, b: bool) -> Value {
        Value::Bool(b)
    }

    #[inline]
    fn number(&mut self, p: Prim, raw: u64) -> Value {
        match Number::of(p, raw) {
            Number::UInt(u) => Value::UInt(u),
            Number::Int(i) => Value::Int(i),
            Number::F32(x) => Value::F32(x),
            Number::F64(x) => Value::F64(x),
        }
    }

    fn text(&mut self, bytes: &[u8], _len: Len) -> Value {
        match std::str::from_utf8(bytes) {
            Ok(s) => Value::Str(s.to_string()),
            Err(_) => Value::RawStr(bytes.to_vec()),
        }
    }

    fn bytes(&mut self, bytes: &[u8]) -> Value {
        Value::Prims(Prims::U8(bytes.to_vec()))
    }

    fn numbers(&mut self, p: Prim, e: Endian, b: &[u8]) -> Option<Value> {
        Some(Value::Prims(match p {
            Prim::U8 => Prims::U8(b.to_vec()),
            Prim::I8 => Prims::I8(b.iter().map(|x| *x as i8).collect()),
            Prim::U16 => Prims::U16(unpack(b, e)),
            Prim::I16 => Prims::I16(unpack(b, e)),
            Prim::U32 => Prims::U32(unpack(b, e)),
            Prim::I32 => Prims::I32(unpack(b, e)),
            Prim::U64 => Prims::U64(unpack(b, e)),
            Prim::I64 => Prims::I64(unpack(b, e)),
            Prim::F32 => Prims::F32(unpack(b, e)),
            Prim::F64 => Prims::F64(unpack(b, e)),
        }))
    }

    fn bools(&mut self, bytes: &[u8]) -> Option<Value> {
        Some(Value::Prims(Prims::Bool(bytes.iter().map(|b| *b != 0).collect())))
    }

    fn list(&mut self, items: Vec<Value>) -> Value {
        Value::List(items)
    }

    fn strukt(&mut self, _schema: &Schema, _s: &Struct, fields: Vec<Value>) -> Value {
        Value::Struct(fields)
    }

    // The `.msg` front end lowers no enums, flags or padding; should another front end use
    // this builder, they are shown as their numbers.
    fn enumeration(&mut self, e: &Enum, raw: u64) -> Value {
        self.number(e.base, raw)
    }

    fn flags(&mut self, _schema: &Schema, f: &Flags, raw: u64) -> Value {
        self.number(f.base, raw)
    }

    fn padding(&mut self) -> Value {
        Value::Struct(Vec::new())
    }
}

/// A [`Sink`] that shows a message decoded by its plan to a [`Visitor`] as [`ValueView`] shows
/// the same message's [`Value`]: the same calls, in the same order, with no value built (an
/// array of numbers as one [`Visitor::numbers`], whose default makes those calls).
pub struct Visiting<'v, 'n, V: ?Sized> {
    v: &'v mut V,
    /// The name of the message itself (its first struct), until it is shown.
    root: Option<Option<&'n str>>,
}

impl<'v, 'n, V: ?Sized> Visiting<'v, 'n, V> {
    /// Shows a message to `v`, named `name` (as [`Visit::visit`] names a value).
    pub fn new(v: &'v mut V, name: Option<&'n str>) -> Self {
        Visiting { v, root: Some(name) }
    }

    /// The visitor, for a sink that shows some values its own way (DataFlash's conversions).
    pub fn visitor(&mut self) -> &mut V {
        self.v
    }
}

impl<V: Visitor + ?Sized> Sink for Visiting<'_, '_, V> {
    fn begin_struct(&mut self, name: Option<&str>) {
        match self.root.take() {
            Some(root) => self.v.begin_struct(root),
            None => self.v.begin_struct(name),
        }
    }

    fn end_struct(&mut self) {
        self.v.end_struct();
    }

    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        self.v.begin_array(name, len);
    }

    fn end_array(&mut self) {
        self.v.end_array();
    }

    #[inline]
    fn number(&mut self, name: Option<&str>, p: Prim, raw: u64) {
        match Number::of(p, raw) {
            Number::UInt(u) => self.v.uint(name, u),
            Number::Int(i) => self.v.int(name, i),
            Number::F32(x) => self.v.f32(name, x),
            Number::F64(x) => self.v.f64(name, x),
        }
    }

    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.v.bool(name, v);
    }

    fn str(&mut self, name: Option<&str>, v: &str) {
        self.v.str(name, v);
    }

    fn raw_str(&mut self, name: Option<&str>, v: &[u8]) {
        raw_str(name, v, self.v);
    }

    /// The array at once ([`Visitor::numbers`]): one call, however many elements.
    #[inline]
    fn numbers(&mut self, name: Option<&str>, p: Prim, e: Endian, bytes: &[u8]) {
        match Numbers::new(bytes, crate::dynamic::number_type(p), crate::dynamic::runtime_endian(e)) {
            Some(v) => self.v.numbers(name, v),
            // The plan lends whole elements; anything else is shown element by element.
            None => {
                self.v.begin_array(name, bytes.len() / p.size() as usize);
                crate::dynamic::each_number(bytes, p, e, |_, raw| self.number(None, p, raw));
                self.v.end_array();
            }
        }
    }

    /// Padding is not shown (as [`ValueView`] leaves it out).
    fn padding(&mut self, _name: Option<&str>) {}
}

/// A string that is not UTF-8, as `{"$hex": "…"}`.
fn raw_str<V: Visitor + ?Sized>(name: Option<&str>, b: &[u8], v: &mut V) {
    let mut hex = String::with_capacity(b.len() * 2);
    crate::json::hex(&mut hex, b);
    v.begin_struct(name);
    v.str(Some("$hex"), &hex);
    v.end_struct();
}

/// A value with its type, for a [`Visitor`]: messages are structs with their field names (padding
/// left out),
/// `time`/`duration` are `{sec, nsec}`, strings that are not UTF-8 are `{"$hex": "…"}`.
pub struct ValueView<'a> {
    pub schema: &'a Schema,
    pub ty: &'a Ty,
    pub value: &'a Value,
}

impl Visit for ValueView<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        match self.value {
            Value::Bool(b) => v.bool(name, *b),
            Value::Int(i) => v.int(name, *i),
            Value::UInt(u) => v.uint(name, *u),
            Value::F32(x) => v.f32(name, *x),
            Value::F64(x) => v.f64(name, *x),
            Value::Str(s) => v.str(name, s),
            Value::RawStr(b) => raw_str(name, b, v),
            Value::Prims(p) => visit_prims(p, name, v),
            Value::List(items) => {
                let elem = match self.ty {
                    Ty::Array { elem, .. } => elem,
                    other => other,
                };
                v.begin_array(name, items.len());
                for x in items {
                    ValueView { schema: self.schema, ty: elem, value: x }.visit(None, v);
                }
                v.end_array();
            }
            Value::Struct(fields) => {
                v.begin_struct(name);
                if let Ty::Named(id) = self.ty {
                    if let TypeDef::Struct(s) = self.schema.ty(*id) {
                        for (f, x) in s.fields.iter().zip(fields) {
                            if f.is_padding() {
                                continue;
                            }
                            ValueView { schema: self.schema, ty: &f.ty, value: x }.visit(Some(&f.name), v);
                        }
                    }
                }
                v.end_struct();
            }
        }
    }
}

fn visit_prims<V: Visitor + ?Sized>(p: &Prims, name: Option<&str>, v: &mut V) {
    macro_rules! each {
        ($xs:expr, $m:ident, $as:ty) => {{
            v.begin_array(name, $xs.len());
            for x in $xs {
                v.$m(None, *x as $as);
            }
            v.end_array();
        }};
    }
    match p {
        Prims::Bool(xs) => {
            v.begin_array(name, xs.len());
            for x in xs {
                v.bool(None, *x);
            }
            v.end_array();
        }
        Prims::I8(xs) => each!(xs, int, i64),
        Prims::U8(xs) => each!(xs, uint, u64),
        Prims::I16(xs) => each!(xs, int, i64),
        Prims::U16(xs) => each!(xs, uint, u64),
        Prims::I32(xs) => each!(xs, int, i64),
        Prims::U32(xs) => each!(xs, uint, u64),
        Prims::I64(xs) => each!(xs, int, i64),
        Prims::U64(xs) => each!(xs, uint, u64),
        Prims::F32(xs) => each!(xs, f32, f32),
        Prims::F64(xs) => each!(xs, f64, f64),
    }
}
