//! [`Col`]: a column being built, one Arrow builder per IR leaf.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    Int8Builder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef, Fields};
use logspec::value::Value;

/// A column being built. Appending never fails: a value that does not fit the column's type (an
/// RLOG key whose type changed, a string that is not UTF-8) is appended as null and counted (the
/// return value of [`Col::append`], summed by the caller), so every column keeps the same length.
pub enum Col {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    List { field: FieldRef, offsets: Vec<i32>, nulls: NullBufferBuilder, item: Box<Col> },
    Struct { fields: Fields, children: Vec<Col>, nulls: NullBufferBuilder, len: usize },
}

impl Col {
    /// An empty column of an Arrow type made by [`arrow_fields`](super::arrow_fields).
    pub fn new(ty: &DataType) -> Col {
        match ty {
            DataType::Boolean => Col::Bool(BooleanBuilder::with_capacity(0)),
            DataType::Int8 => Col::I8(Int8Builder::with_capacity(0)),
            DataType::Int16 => Col::I16(Int16Builder::with_capacity(0)),
            DataType::Int32 => Col::I32(Int32Builder::with_capacity(0)),
            DataType::Int64 => Col::I64(Int64Builder::with_capacity(0)),
            DataType::UInt8 => Col::U8(UInt8Builder::with_capacity(0)),
            DataType::UInt16 => Col::U16(UInt16Builder::with_capacity(0)),
            DataType::UInt32 => Col::U32(UInt32Builder::with_capacity(0)),
            DataType::UInt64 => Col::U64(UInt64Builder::with_capacity(0)),
            DataType::Float32 => Col::F32(Float32Builder::with_capacity(0)),
            DataType::Float64 => Col::F64(Float64Builder::with_capacity(0)),
            DataType::Binary => Col::Bin(BinaryBuilder::with_capacity(0, 0)),
            DataType::List(field) => Col::List {
                field: field.clone(),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
                item: Box::new(Col::new(field.data_type())),
            },
            DataType::Struct(fields) => Col::Struct {
                fields: fields.clone(),
                children: fields.iter().map(|f| Col::new(f.data_type())).collect(),
                nulls: NullBufferBuilder::new(0),
                len: 0,
            },
            // Utf8, and anything else `arrow_fields` does not make.
            _ => Col::Str(StringBuilder::with_capacity(0, 0)),
        }
    }

    /// Appends a value (`None`: null). Returns how many leaves did not fit their type and were
    /// written as null.
    pub fn append(&mut self, v: Option<&Value>) -> u64 {
        let v = match v {
            Some(Value::Null) | None => {
                self.append_null();
                return 0;
            }
            Some(v) => v,
        };
        macro_rules! int {
            ($b:expr, $t:ty) => {{
                let x = match v {
                    Value::Int(i) => <$t>::try_from(*i).ok(),
                    Value::UInt(u) => <$t>::try_from(*u).ok(),
                    Value::Bool(b) => Some(<$t>::from(*b)),
                    _ => None,
                };
                $b.append_option(x);
                u64::from(x.is_none())
            }};
        }
        match self {
            Col::Bool(b) => match v {
                Value::Bool(x) => {
                    b.append_value(*x);
                    0
                }
                _ => {
                    b.append_null();
                    1
                }
            },
            Col::I8(b) => int!(b, i8),
            Col::I16(b) => int!(b, i16),
            Col::I32(b) => int!(b, i32),
            Col::I64(b) => int!(b, i64),
            Col::U8(b) => int!(b, u8),
            Col::U16(b) => int!(b, u16),
            Col::U32(b) => int!(b, u32),
            Col::U64(b) => int!(b, u64),
            Col::F32(b) => match v {
                // An f32 was widened exactly, so narrowing gives it back.
                Value::Float(x) => {
                    b.append_value(*x as f32);
                    0
                }
                _ => {
                    b.append_null();
                    1
                }
            },
            Col::F64(b) => match v {
                Value::Float(x) => {
                    b.append_value(*x);
                    0
                }
                Value::Int(i) => {
                    b.append_value(*i as f64);
                    0
                }
                Value::UInt(u) => {
                    b.append_value(*u as f64);
                    0
                }
                _ => {
                    b.append_null();
                    1
                }
            },
            Col::Str(b) => match v {
                Value::Str(s) => {
                    b.append_value(s);
                    0
                }
                Value::Bytes(bytes) => match std::str::from_utf8(bytes) {
                    Ok(s) => {
                        b.append_value(s);
                        0
                    }
                    Err(_) => {
                        b.append_null();
                        1
                    }
                },
                _ => {
                    b.append_null();
                    1
                }
            },
            Col::Bin(b) => match v {
                Value::Bytes(bytes) => {
                    b.append_value(bytes);
                    0
                }
                // A const byte field whose bytes are text is visited as a string.
                Value::Str(s) => {
                    b.append_value(s.as_bytes());
                    0
                }
                _ => {
                    b.append_null();
                    1
                }
            },
            Col::List { offsets, nulls, item, .. } => {
                let mut misfits = 0;
                let n = match v {
                    Value::Array(items) => {
                        for x in items {
                            misfits += item.append(Some(x));
                        }
                        items.len()
                    }
                    // A byte string where the IR says an array of u8.
                    Value::Bytes(bytes) => {
                        for x in bytes {
                            misfits += item.append(Some(&Value::UInt(u64::from(*x))));
                        }
                        bytes.len()
                    }
                    _ => {
                        nulls.append_null();
                        offsets.push(*offsets.last().unwrap_or(&0));
                        return 1;
                    }
                };
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last + i32::try_from(n).unwrap_or(i32::MAX));
                nulls.append_non_null();
                misfits
            }
            Col::Struct { fields, children, nulls, len } => {
                let Value::Object(members) = v else {
                    self.append_null();
                    return 1;
                };
                *len += 1;
                nulls.append_non_null();
                let mut misfits = 0;
                // A union value: `variant` first, then the variant's fields, which go into the
                // child struct named by the variant.
                let variant = match members.first() {
                    Some((k, Value::Str(name)))
                        if k == "variant" && fields.first().is_some_and(|f| f.name() == "variant") =>
                    {
                        Some(name.as_str())
                    }
                    _ => None,
                };
                for (i, (f, c)) in fields.iter().zip(children.iter_mut()).enumerate() {
                    if let Some(name) = variant {
                        if i == 0 {
                            misfits += c.append(members.first().map(|(_, v)| v));
                        } else if f.name() == name {
                            misfits += c.append_fields(&members[1..]);
                        } else {
                            c.append_null();
                        }
                        continue;
                    }
                    // Fields come in schema order; look there first.
                    let found = match members.get(i) {
                        Some((k, x)) if k == f.name() => Some(x),
                        _ => members.iter().find(|(k, _)| k == f.name()).map(|(_, x)| x),
                    };
                    misfits += c.append(found);
                }
                misfits
            }
        }
    }

    /// Appends a struct made of `members` (a union variant's fields).
    fn append_fields(&mut self, members: &[(String, Value)]) -> u64 {
        match self {
            Col::Struct { fields, children, nulls, len } => {
                *len += 1;
                nulls.append_non_null();
                let mut misfits = 0;
                for (f, c) in fields.iter().zip(children.iter_mut()) {
                    misfits += c.append(members.iter().find(|(k, _)| k == f.name()).map(|(_, x)| x));
                }
                misfits
            }
            other => {
                other.append_null();
                1
            }
        }
    }

    pub fn append_null(&mut self) {
        match self {
            Col::Bool(b) => b.append_null(),
            Col::I8(b) => b.append_null(),
            Col::I16(b) => b.append_null(),
            Col::I32(b) => b.append_null(),
            Col::I64(b) => b.append_null(),
            Col::U8(b) => b.append_null(),
            Col::U16(b) => b.append_null(),
            Col::U32(b) => b.append_null(),
            Col::U64(b) => b.append_null(),
            Col::F32(b) => b.append_null(),
            Col::F64(b) => b.append_null(),
            Col::Str(b) => b.append_null(),
            Col::Bin(b) => b.append_null(),
            Col::List { offsets, nulls, .. } => {
                offsets.push(*offsets.last().unwrap_or(&0));
                nulls.append_null();
            }
            Col::Struct { children, nulls, len, .. } => {
                for c in children {
                    c.append_null();
                }
                nulls.append_null();
                *len += 1;
            }
        }
    }

    /// The built array; the column starts over empty.
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Bool(b) => Arc::new(b.finish()),
            Col::I8(b) => Arc::new(b.finish()),
            Col::I16(b) => Arc::new(b.finish()),
            Col::I32(b) => Arc::new(b.finish()),
            Col::I64(b) => Arc::new(b.finish()),
            Col::U8(b) => Arc::new(b.finish()),
            Col::U16(b) => Arc::new(b.finish()),
            Col::U32(b) => Arc::new(b.finish()),
            Col::U64(b) => Arc::new(b.finish()),
            Col::F32(b) => Arc::new(b.finish()),
            Col::F64(b) => Arc::new(b.finish()),
            Col::Str(b) => Arc::new(b.finish()),
            Col::Bin(b) => Arc::new(b.finish()),
            Col::List { field, offsets, nulls, item } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let values = item.finish();
                Arc::new(ListArray::new(field.clone(), offsets, values, nulls.finish()))
            }
            Col::Struct { fields, children, nulls, len } => {
                let arrays: Vec<ArrayRef> = children.iter_mut().map(Col::finish).collect();
                *len = 0;
                Arc::new(StructArray::new(fields.clone(), arrays, nulls.finish()))
            }
        }
    }
}

impl Col {
    /// Whether the column is a single scalar (not a list or struct).
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Col::List { .. } | Col::Struct { .. })
    }

    /// Appends an unsigned integer to a scalar column; returns 1 when it does not fit (null).
    pub fn append_uint(&mut self, u: u64) -> u64 {
        macro_rules! int {
            ($b:expr, $t:ty) => {{
                let x = <$t>::try_from(u).ok();
                $b.append_option(x);
                u64::from(x.is_none())
            }};
        }
        match self {
            Col::U8(b) => int!(b, u8),
            Col::U16(b) => int!(b, u16),
            Col::U32(b) => int!(b, u32),
            Col::U64(b) => int!(b, u64),
            Col::I8(b) => int!(b, i8),
            Col::I16(b) => int!(b, i16),
            Col::I32(b) => int!(b, i32),
            Col::I64(b) => int!(b, i64),
            other => other.append(Some(&Value::UInt(u))),
        }
    }

    /// Appends a signed integer to a scalar column; returns 1 when it does not fit (null).
    pub fn append_int(&mut self, i: i64) -> u64 {
        macro_rules! int {
            ($b:expr, $t:ty) => {{
                let x = <$t>::try_from(i).ok();
                $b.append_option(x);
                u64::from(x.is_none())
            }};
        }
        match self {
            Col::I8(b) => int!(b, i8),
            Col::I16(b) => int!(b, i16),
            Col::I32(b) => int!(b, i32),
            Col::I64(b) => int!(b, i64),
            Col::U8(b) => int!(b, u8),
            Col::U16(b) => int!(b, u16),
            Col::U32(b) => int!(b, u32),
            Col::U64(b) => int!(b, u64),
            other => other.append(Some(&Value::Int(i))),
        }
    }

    /// Appends an array of `u8` numbers: as [`Col::append`] of the array of their values, a
    /// list of `u8`s at once.
    pub fn append_u8s(&mut self, v: &[u8]) -> u64 {
        match self {
            Col::List { offsets, nulls, item, .. } => {
                let misfits = match &mut **item {
                    Col::U8(b) => {
                        b.append_slice(v);
                        0
                    }
                    other => v.iter().map(|x| other.append_uint(u64::from(*x))).sum(),
                };
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last + i32::try_from(v.len()).unwrap_or(i32::MAX));
                nulls.append_non_null();
                misfits
            }
            other => {
                other.append_null();
                1
            }
        }
    }

    /// Appends a float (an `f32` widened exactly, or an `f64`).
    pub fn append_float(&mut self, x: f64) -> u64 {
        match self {
            Col::F32(b) => {
                b.append_value(x as f32);
                0
            }
            Col::F64(b) => {
                b.append_value(x);
                0
            }
            other => other.append(Some(&Value::Float(x))),
        }
    }
}
