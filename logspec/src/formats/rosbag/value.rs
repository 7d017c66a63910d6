//! Dynamic decoding: a ROS1-serialized message decoded into a [`Value`] tree by walking the IR
//! that the `.msg` front end lowered its definition into, and [`ValueView`], which shows a value
//! to any [`Visitor`] (the JSON writer) with its field names.
//!
//! Arrays of numbers and bools decode into packed vectors ([`Prims`]): a `uint8[]` blob is one
//! copy, not a value per byte.

use logspec_ir::ir::{Len, Prim, Schema, Ty, TypeDef};
use logspec_runtime::{Visit, Visitor};

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeFault {
    /// Offset inside the message's bytes.
    pub offset: usize,
    /// The field path, outermost first (`pose`, `position`, `x`; `[3]` for array elements).
    pub path: Vec<String>,
    pub message: String,
}

impl std::fmt::Display for DecodeFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut path = String::new();
        for p in &self.path {
            if !p.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(p);
        }
        if path.is_empty() {
            write!(f, "at byte {} of the message: {}", self.offset, self.message)
        } else {
            write!(f, "field `{path}`, at byte {} of the message: {}", self.offset, self.message)
        }
    }
}

/// Decodes one whole message of type `ty`; trailing bytes are an error.
pub fn decode(schema: &Schema, ty: &Ty, bytes: &[u8]) -> Result<Value, DecodeFault> {
    let mut d = Dec {
        schema,
        b: bytes,
        pos: 0,
        empty_left: EMPTY_BUDGET.saturating_add(bytes.len()),
        min_sizes: Default::default(),
    };
    let v = d.value(ty)?;
    if d.pos != bytes.len() {
        return Err(d.fault(format!("{} bytes left over after the message", bytes.len() - d.pos)));
    }
    Ok(v)
}

/// How many array elements that take no bytes (messages without fields, `T[0]`) a message may
/// hold beyond one per byte of the message. Such elements cost memory but no input, so a
/// definition like `Empty[4294967295] e` would otherwise allocate without bound.
pub const EMPTY_BUDGET: usize = 1 << 16;

struct Dec<'a> {
    schema: &'a Schema,
    b: &'a [u8],
    pos: usize,
    /// Values that take no bytes this message may still produce (see [`EMPTY_BUDGET`]).
    empty_left: usize,
    /// [`min_size`] of the message types met so far (a type used twice by each of a chain of
    /// types would otherwise cost exponential time).
    min_sizes: std::collections::HashMap<logspec_ir::ir::TypeId, usize>,
}

/// Decodes `n` little-endian numbers of one type.
macro_rules! packed {
    ($self:ident, $n:expr, $t:ty, $variant:ident) => {{
        let bytes = $self.take($n * std::mem::size_of::<$t>())?;
        Prims::$variant(
            bytes.chunks_exact(std::mem::size_of::<$t>()).map(|c| <$t>::from_le_bytes(c.try_into().unwrap())).collect(),
        )
    }};
}

impl<'a> Dec<'a> {
    fn fault(&self, message: String) -> DecodeFault {
        DecodeFault { offset: self.pos, path: Vec::new(), message }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeFault> {
        match self.b.get(self.pos..self.pos.saturating_add(n)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.fault(format!("expected {n} bytes, found {}", self.b.len() - self.pos))),
        }
    }

    #[inline]
    fn u32(&mut self) -> Result<u32, DecodeFault> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn value(&mut self, ty: &Ty) -> Result<Value, DecodeFault> {
        Ok(match ty {
            Ty::Bool => Value::Bool(self.take(1)?[0] != 0),
            Ty::Prim(p) => self.prim(*p)?,
            Ty::Str(_) => {
                let n = self.u32()? as usize;
                let b = self.take(n).map_err(|mut e| {
                    e.message = format!("a string of {n} bytes: {}", e.message);
                    e
                })?;
                match std::str::from_utf8(b) {
                    Ok(s) => Value::Str(s.to_string()),
                    Err(_) => Value::RawStr(b.to_vec()),
                }
            }
            Ty::Array { elem, len } => {
                let n = match len {
                    Len::Fixed(n) => *n as usize,
                    _ => {
                        let at = self.pos;
                        let n = self.u32()? as usize;
                        let min = min_size(self.schema, elem, &mut self.min_sizes);
                        let left = self.b.len() - self.pos;
                        if n.saturating_mul(min.max(1)) > left && (min > 0 || n > left) {
                            return Err(DecodeFault {
                                offset: at,
                                path: Vec::new(),
                                message: format!(
                                    "an array of {n} elements needs at least {} bytes, found {left}",
                                    n.saturating_mul(min)
                                ),
                            });
                        }
                        n
                    }
                };
                self.array(elem, n)?
            }
            Ty::Named(id) => {
                let TypeDef::Struct(s) = self.schema.ty(*id) else {
                    return Err(self.fault("a type the ROS front end does not produce".into()));
                };
                // A message that takes no bytes costs memory but no input: it is counted against
                // the message's budget, so a tree of empty messages cannot grow without bound.
                if s.size == Some(0) {
                    if self.empty_left == 0 {
                        return Err(self.fault(format!(
                            "more values that take no bytes than a message of {} bytes can justify (at most {})",
                            self.b.len(),
                            EMPTY_BUDGET.saturating_add(self.b.len())
                        )));
                    }
                    self.empty_left -= 1;
                }
                let mut fields = Vec::with_capacity(s.fields.len());
                for f in &s.fields {
                    match self.value(&f.ty) {
                        Ok(v) => fields.push(v),
                        Err(mut e) => {
                            e.path.insert(0, f.name.clone());
                            return Err(e);
                        }
                    }
                }
                Value::Struct(fields)
            }
            other => return Err(self.fault(format!("type {other:?} is not a ROS type"))),
        })
    }

    #[inline]
    fn prim(&mut self, p: Prim) -> Result<Value, DecodeFault> {
        let b = self.take(p.size() as usize)?;
        let le = |n: usize| {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(a)
        };
        Ok(match p {
            Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => Value::UInt(le(p.size() as usize)),
            Prim::I8 => Value::Int(i64::from(b[0] as i8)),
            Prim::I16 => Value::Int(i64::from(le(2) as u16 as i16)),
            Prim::I32 => Value::Int(i64::from(le(4) as u32 as i32)),
            Prim::I64 => Value::Int(le(8) as i64),
            Prim::F32 => Value::F32(f32::from_bits(le(4) as u32)),
            Prim::F64 => Value::F64(f64::from_bits(le(8))),
        })
    }

    fn array(&mut self, elem: &Ty, n: usize) -> Result<Value, DecodeFault> {
        Ok(match elem {
            Ty::Bool => Value::Prims(Prims::Bool(self.take(n)?.iter().map(|b| *b != 0).collect())),
            Ty::Prim(p) => Value::Prims(match p {
                Prim::U8 => Prims::U8(self.take(n)?.to_vec()),
                Prim::I8 => Prims::I8(self.take(n)?.iter().map(|b| *b as i8).collect()),
                Prim::U16 => packed!(self, n, u16, U16),
                Prim::I16 => packed!(self, n, i16, I16),
                Prim::U32 => packed!(self, n, u32, U32),
                Prim::I32 => packed!(self, n, i32, I32),
                Prim::U64 => packed!(self, n, u64, U64),
                Prim::I64 => packed!(self, n, i64, I64),
                Prim::F32 => packed!(self, n, f32, F32),
                Prim::F64 => packed!(self, n, f64, F64),
            }),
            _ => {
                if n > 0 && self.schema.size_of(elem) == Some(0) {
                    if n > self.empty_left {
                        return Err(self.fault(format!(
                            "an array of {n} elements that take no bytes each is more than a message of {} bytes \
                             can justify (at most {} such elements per message)",
                            self.b.len(),
                            EMPTY_BUDGET.saturating_add(self.b.len())
                        )));
                    }
                    self.empty_left -= n;
                }
                let mut items = Vec::with_capacity(n.min(self.b.len() - self.pos + 1));
                for i in 0..n {
                    match self.value(elem) {
                        Ok(v) => items.push(v),
                        Err(mut e) => {
                            e.path.insert(0, format!("[{i}]"));
                            return Err(e);
                        }
                    }
                }
                Value::List(items)
            }
        })
    }
}

/// The fewest bytes a value of `ty` can take (a prefix counts, its elements do not), with the
/// answers for message types kept in `memo`.
fn min_size(schema: &Schema, ty: &Ty, memo: &mut std::collections::HashMap<logspec_ir::ir::TypeId, usize>) -> usize {
    if let Some(n) = schema.size_of(ty) {
        return n as usize;
    }
    match ty {
        Ty::Str(_) | Ty::Bytes(_) => 4,
        Ty::Array { elem, len: Len::Fixed(n) } => min_size(schema, elem, memo).saturating_mul(*n as usize),
        Ty::Array { .. } => 4,
        Ty::Named(id) => {
            if let Some(n) = memo.get(id) {
                return *n;
            }
            let n = match schema.ty(*id) {
                TypeDef::Struct(s) => {
                    s.fields.iter().fold(0usize, |a, f| a.saturating_add(min_size(schema, &f.ty, memo)))
                }
                _ => 0,
            };
            memo.insert(*id, n);
            n
        }
        _ => 0,
    }
}

/// A value with its type, for a [`Visitor`]: messages are structs with their field names,
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
            Value::RawStr(b) => {
                let mut hex = String::with_capacity(b.len() * 2);
                crate::json::hex(&mut hex, b);
                v.begin_struct(name);
                v.str(Some("$hex"), &hex);
                v.end_struct();
            }
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
