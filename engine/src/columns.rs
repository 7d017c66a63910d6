//! Arrow columns typed from the IR: the Arrow type of a channel's values ([`arrow_fields`]) and
//! builders that append decoded [`Value`]s to them ([`Col`]). Used by `export --parquet`.
//!
//! The mapping (docs/parquet.md): integers, floats and bools as themselves; enums and flags as
//! their integer, with the name table in the field metadata (`enum`, `flags`); strings as UTF-8;
//! bytes as binary; fixed and variable arrays as lists; structs as Arrow structs; a union as a
//! struct of `variant` (the variant's name) and one struct per variant that has fields (null
//! unless it is the variant). Units and docs go in the field metadata (`unit`, `doc`); a
//! struct-typed field's unit applies to the fields under it that have none of their own.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    Int8Builder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields};
use logspec::ir::ir::{self, Prim, Schema, Ty, TypeDef};
use logspec::runtime::{Endian, Fixed};
use logspec::value::Value;

/// The Arrow fields of a struct's visible fields (padding and union tags are left out, as the
/// visit leaves them out).
pub fn arrow_fields(schema: &Schema, fields: &[ir::Field], inherited_unit: Option<&str>) -> Vec<Field> {
    let mut hidden: Vec<bool> = fields.iter().map(|f| f.is_padding()).collect();
    for f in fields {
        if let Ty::Union { tag_field, .. } = f.ty {
            hidden[tag_field] = true;
        }
    }
    let mut out = Vec::new();
    for (f, hide) in fields.iter().zip(hidden) {
        if hide {
            continue;
        }
        let unit = f.unit.as_deref().or(inherited_unit);
        let mut meta = HashMap::new();
        if let Some(u) = unit {
            meta.insert("unit".to_string(), u.to_string());
        }
        if let Some(d) = &f.doc {
            meta.insert("doc".to_string(), d.clone());
        }
        if let Some(ty) = arrow_type(schema, &f.ty, unit, &mut meta) {
            out.push(Field::new(&f.name, ty, true).with_metadata(meta));
        }
    }
    out
}

/// The Arrow type of an IR type; `None` for what has no columns (an empty struct: Parquet cannot
/// hold one). Enum and flags tables go into `meta`.
fn arrow_type(schema: &Schema, ty: &Ty, unit: Option<&str>, meta: &mut HashMap<String, String>) -> Option<DataType> {
    Some(match ty {
        Ty::Prim(p) | Ty::VarInt { prim: p, .. } => prim_type(*p),
        Ty::Bool => DataType::Boolean,
        Ty::Pad(_) => return None,
        Ty::Bytes(_) => DataType::Binary,
        Ty::Str(_) => DataType::Utf8,
        Ty::Array { elem, .. } => {
            let mut item_meta = HashMap::new();
            let item = arrow_type(schema, elem, unit, &mut item_meta)?;
            // The element's enum table and unit stay on the list field, where a user looks.
            for (k, v) in item_meta {
                meta.entry(k).or_insert(v);
            }
            DataType::List(Arc::new(Field::new("item", item, true)))
        }
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => {
                let fields = arrow_fields(schema, &s.fields, unit);
                if fields.is_empty() {
                    return None;
                }
                DataType::Struct(fields.into())
            }
            TypeDef::Enum(e) => {
                let names: Vec<String> = e.values.iter().map(|v| format!("{}={}", v.value, v.name)).collect();
                meta.insert("enum".to_string(), names.join(","));
                meta.insert("type".to_string(), e.name.clone());
                prim_type(e.base)
            }
            TypeDef::Flags(f) => {
                let bits: Vec<String> = f.flags.iter().map(|b| format!("{}={}", b.bit, b.name)).collect();
                meta.insert("flags".to_string(), bits.join(","));
                meta.insert("type".to_string(), f.name.clone());
                prim_type(f.base)
            }
            TypeDef::Union(u) => union_type(schema, u, unit),
            TypeDef::Extern(_) => return None,
        },
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => match schema.ty(*id) {
            TypeDef::Union(u) => union_type(schema, u, unit),
            _ => return None,
        },
    })
}

fn union_type(schema: &Schema, u: &ir::Union, unit: Option<&str>) -> DataType {
    let mut fields = vec![Field::new("variant", DataType::Utf8, true)];
    for v in &u.variants {
        let inner = arrow_fields(schema, &v.fields, unit);
        if !inner.is_empty() {
            fields.push(Field::new(&v.name, DataType::Struct(inner.into()), true));
        }
    }
    DataType::Struct(fields.into())
}

fn prim_type(p: Prim) -> DataType {
    match p {
        Prim::U8 => DataType::UInt8,
        Prim::U16 => DataType::UInt16,
        Prim::U32 => DataType::UInt32,
        Prim::U64 => DataType::UInt64,
        Prim::I8 => DataType::Int8,
        Prim::I16 => DataType::Int16,
        Prim::I32 => DataType::Int32,
        Prim::I64 => DataType::Int64,
        Prim::F32 => DataType::Float32,
        Prim::F64 => DataType::Float64,
    }
}

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
    /// An empty column of an Arrow type made by [`arrow_fields`].
    pub fn new(ty: &DataType) -> Col {
        match ty {
            DataType::Boolean => Col::Bool(BooleanBuilder::new()),
            DataType::Int8 => Col::I8(Int8Builder::new()),
            DataType::Int16 => Col::I16(Int16Builder::new()),
            DataType::Int32 => Col::I32(Int32Builder::new()),
            DataType::Int64 => Col::I64(Int64Builder::new()),
            DataType::UInt8 => Col::U8(UInt8Builder::new()),
            DataType::UInt16 => Col::U16(UInt16Builder::new()),
            DataType::UInt32 => Col::U32(UInt32Builder::new()),
            DataType::UInt64 => Col::U64(UInt64Builder::new()),
            DataType::Float32 => Col::F32(Float32Builder::new()),
            DataType::Float64 => Col::F64(Float64Builder::new()),
            DataType::Binary => Col::Bin(BinaryBuilder::new()),
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
            _ => Col::Str(StringBuilder::new()),
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

/// Appends the visit of a flat struct (every field a scalar) straight to its columns, with no
/// [`Value`] in between: the fast path for fixed-layout records. `cols` are the struct's columns
/// in field order; a field that does not come (or comes nested, which the IR type rules out) is
/// null.
pub struct FlatRow<'a> {
    pub cols: &'a mut [(String, Col)],
    /// Which columns got a value in this row.
    pub filled: &'a mut Vec<bool>,
    pub misfits: u64,
    /// Bytes of strings and byte strings appended (for batch sizing).
    pub bytes: usize,
    depth: usize,
    next: usize,
}

impl<'a> FlatRow<'a> {
    pub fn new(cols: &'a mut [(String, Col)], filled: &'a mut Vec<bool>) -> Self {
        filled.clear();
        filled.resize(cols.len(), false);
        FlatRow { cols, filled, misfits: 0, bytes: 0, depth: 0, next: 0 }
    }

    /// The column of field `name` (usually the next one), unless already filled this row.
    fn col(&mut self, name: Option<&str>) -> Option<&mut Col> {
        if self.depth != 1 {
            if self.depth > 1 {
                return None;
            }
            self.misfits += 1;
            return None;
        }
        let name = name?;
        let i = if self.cols.get(self.next).is_some_and(|(n, _)| n == name) {
            self.next
        } else {
            self.cols.iter().position(|(n, _)| n == name)?
        };
        if self.filled[i] {
            return None;
        }
        self.filled[i] = true;
        self.next = i + 1;
        Some(&mut self.cols[i].1)
    }

    /// Nulls for the columns the row did not fill.
    pub fn finish(self) -> u64 {
        let mut misfits = self.misfits;
        for (filled, (_, c)) in self.filled.iter().zip(self.cols.iter_mut()) {
            if !filled {
                c.append_null();
            }
        }
        if self.depth != 0 {
            misfits += 1;
        }
        misfits
    }

    fn nested(&mut self, name: Option<&str>) {
        // Not in a flat struct's visit; the field stays null and counts as a misfit.
        if self.depth == 1 && self.col(name).is_some() {
            self.misfits += 1;
            // `col` marked it filled without appending.
            if let Some(i) = self.cols.iter().position(|(n, _)| Some(n.as_str()) == name) {
                self.cols[i].1.append_null();
            }
        }
        self.depth += 1;
    }
}

impl logspec::runtime::Visitor for FlatRow<'_> {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_uint(v);
        }
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_int(v);
        }
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_float(f64::from(v));
        }
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_float(v);
        }
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append(Some(&Value::Bool(v)));
        }
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.bytes += v.len();
        if let Some(c) = self.col(name) {
            self.misfits += match c {
                Col::Str(b) => {
                    b.append_value(v);
                    0
                }
                Col::Bin(b) => {
                    b.append_value(v.as_bytes());
                    0
                }
                other => other.append(Some(&Value::Str(v.to_string()))),
            };
        }
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.bytes += v.len();
        if let Some(c) = self.col(name) {
            self.misfits += match c {
                Col::Bin(b) => {
                    b.append_value(v);
                    0
                }
                other => other.append(Some(&Value::Bytes(v.to_vec()))),
            };
        }
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        if let Some(c) = self.col(name) {
            self.misfits += match i64::try_from(raw) {
                Ok(i) => c.append_int(i),
                Err(_) => c.append_uint(raw as u64),
            };
        }
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_uint(raw);
        }
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        if self.depth == 0 {
            self.depth = 1;
        } else {
            self.nested(name);
        }
    }
    fn end_struct(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.nested(name);
    }
    fn end_array(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn begin_variant(&mut self, name: Option<&str>, _variant: &'static str, _tag: i128) {
        self.nested(name);
    }
    fn end_variant(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// Where a flat, fixed-size struct's columns are in its bytes, from the IR: the fast path of
/// `export --parquet` for records such as USVLOG's, whose rows are kept as their payload bytes
/// and turned into Arrow arrays a column at a time ([`FixedLayout::column`]), with no visit or
/// [`Value`] per field. Only for structs whose visible fields are all numbers, bools, enums and
/// flags at fixed offsets; the columns are those of [`arrow_fields`], in its order.
#[derive(Clone, Debug)]
pub struct FixedLayout {
    /// The struct's encoded size: the bytes kept per row.
    pub size: usize,
    leaves: Vec<Leaf>,
}

#[derive(Clone, Copy, Debug)]
struct Leaf {
    offset: usize,
    /// `None`: a bool (one byte, zero is false).
    prim: Option<Prim>,
    big: bool,
}

impl FixedLayout {
    /// The layout of struct `id`, or `None` when a field is not a number, bool, enum or flags at
    /// a fixed offset (the generic path then handles the struct).
    pub fn of(schema: &Schema, id: ir::TypeId) -> Option<FixedLayout> {
        let s = schema.strukt(id);
        let size = usize::try_from(s.size?).ok().filter(|n| *n > 0)?;
        let mut leaves = Vec::new();
        for f in &s.fields {
            let prim = match &f.ty {
                Ty::Pad(_) => continue,
                Ty::Prim(p) => Some(*p),
                Ty::Bool => None,
                Ty::Named(t) => match schema.ty(*t) {
                    TypeDef::Enum(e) => Some(e.base),
                    TypeDef::Flags(fl) => Some(fl.base),
                    _ => return None,
                },
                _ => return None,
            };
            let offset = usize::try_from(f.offset?).ok()?;
            let width = prim.map_or(1, |p| prim_size(p));
            if offset.checked_add(width)? > size {
                return None;
            }
            leaves.push(Leaf { offset, prim, big: f.endian == ir::Endian::Big });
        }
        Some(FixedLayout { size, leaves })
    }

    /// How many columns the layout makes.
    pub fn columns(&self) -> usize {
        self.leaves.len()
    }

    /// Column `i` of the rows in `rows` (each [`FixedLayout::size`] bytes, one after the other),
    /// as the Arrow array of [`arrow_fields`]' type for the field, with no nulls.
    pub fn column(&self, i: usize, rows: &[u8]) -> ArrayRef {
        use arrow_array::types::*;
        use arrow_array::PrimitiveArray;
        let n = rows.len() / self.size;
        macro_rules! prim {
            ($t:ty) => {{
                let mut values = vec![<$t as ArrowPrimitiveType>::Native::default(); n];
                self.gather(i, rows, &mut values);
                Arc::new(PrimitiveArray::<$t>::new(ScalarBuffer::from(values), None)) as ArrayRef
            }};
        }
        match self.leaves[i].prim {
            None => {
                let mut values = vec![0u8; n];
                self.gather(i, rows, &mut values);
                Arc::new(arrow_array::BooleanArray::new(values.iter().map(|b| *b != 0).collect(), None))
            }
            Some(Prim::U8) => prim!(UInt8Type),
            Some(Prim::U16) => prim!(UInt16Type),
            Some(Prim::U32) => prim!(UInt32Type),
            Some(Prim::U64) => prim!(UInt64Type),
            Some(Prim::I8) => prim!(Int8Type),
            Some(Prim::I16) => prim!(Int16Type),
            Some(Prim::I32) => prim!(Int32Type),
            Some(Prim::I64) => prim!(Int64Type),
            Some(Prim::F32) => prim!(Float32Type),
            Some(Prim::F64) => prim!(Float64Type),
        }
    }

    /// The wire type of column `i`: its number type, `None` for a bool (one byte, zero is
    /// false).
    pub fn prim(&self, i: usize) -> Option<Prim> {
        self.leaves[i].prim
    }

    /// Column `i` of the rows in `rows` (each [`FixedLayout::size`] bytes, one after the other)
    /// written into `out`, one value per row (as many as both have), each converted to `T` as
    /// Rust's `as` converts numbers (a bool is 0 or 1). A column a time, sequentially: the
    /// shared core of the Arrow arrays ([`FixedLayout::column`]) and of the Python package's
    /// numpy columns, which widen to `float64`/`int64`.
    pub fn gather<T: Gather>(&self, i: usize, rows: &[u8], out: &mut [T]) {
        self.gather_rows(i, rows.chunks_exact(self.size), out)
    }

    /// Like [`FixedLayout::gather`], for rows that lie apart in `bytes`: row `k` starts at byte
    /// `starts[k]` (a record's payload in a buffer of framed records). A row that `bytes` does
    /// not hold whole reads as zero.
    pub fn gather_at<T: Gather>(&self, i: usize, bytes: &[u8], starts: &[u32], out: &mut [T]) {
        let size = self.size;
        let rows = starts.iter().map(|&s| bytes.get(s as usize..).and_then(|r| r.get(..size)).unwrap_or(&[]));
        self.gather_rows(i, rows, out)
    }

    #[inline(always)]
    fn gather_rows<'r, T: Gather>(&self, i: usize, rows: impl Iterator<Item = &'r [u8]>, out: &mut [T]) {
        let leaf = self.leaves[i];
        let (off, big) = (leaf.offset, leaf.big);
        match leaf.prim {
            None => gather_leaf::<u8, T>(rows, off, big, out, |b| T::from_u64(u64::from(b != 0))),
            Some(Prim::U8) => gather_leaf::<u8, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U16) => gather_leaf::<u16, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U32) => gather_leaf::<u32, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U64) => gather_leaf::<u64, T>(rows, off, big, out, T::from_u64),
            Some(Prim::I8) => gather_leaf::<i8, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I16) => gather_leaf::<i16, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I32) => gather_leaf::<i32, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I64) => gather_leaf::<i64, T>(rows, off, big, out, T::from_i64),
            Some(Prim::F32) => gather_leaf::<f32, T>(rows, off, big, out, T::from_f32),
            Some(Prim::F64) => gather_leaf::<f64, T>(rows, off, big, out, T::from_f64),
        }
    }

    /// Appends the rows in `rows` to column builders made for the layout's struct, a value at a
    /// time (when rows of one table come both as bytes and as visits). Returns the misfits.
    pub fn append_to(&self, rows: &[u8], cols: &mut [(String, Col)]) -> u64 {
        let mut misfits = 0;
        for (i, (_, col)) in cols.iter_mut().enumerate().take(self.leaves.len()) {
            let array = self.column(i, rows);
            misfits += append_array(col, &array);
        }
        misfits
    }
}

/// A number type that [`FixedLayout::gather`] writes: every Rust number type, each conversion
/// as `as` does it (an `f32` stays itself in an `f32`, NaN payloads included).
pub trait Gather: Copy {
    fn from_u64(v: u64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_f32(v: f32) -> Self;
    fn from_f64(v: f64) -> Self;
}

macro_rules! gather_as {
    ($($t:ty),*) => {$(
        impl Gather for $t {
            #[inline(always)]
            fn from_u64(v: u64) -> Self { v as $t }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)]
            fn from_f32(v: f32) -> Self { v as $t }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
gather_as!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// One leaf of every row into `out`: the runtime's number codec at the leaf's offset, in its
/// byte order (fixed per loop, so that each loop is a plain load and convert).
#[inline(always)]
fn gather_leaf<'r, P: Fixed + Default, T>(
    rows: impl Iterator<Item = &'r [u8]>,
    off: usize,
    big: bool,
    out: &mut [T],
    conv: impl Fn(P) -> T,
) {
    // `FixedLayout::of` checked that every leaf lies inside the row, so decoding cannot fail.
    let run = |order: Endian, out: &mut [T]| {
        for (o, r) in out.iter_mut().zip(rows) {
            *o = conv(r.get(off..).map_or(Ok(P::default()), |b| P::decode_fixed(b, order)).unwrap_or_default());
        }
    };
    if big {
        run(Endian::Big, out)
    } else {
        run(Endian::Little, out)
    }
}

fn prim_size(p: Prim) -> usize {
    match p {
        Prim::U8 | Prim::I8 => 1,
        Prim::U16 | Prim::I16 => 2,
        Prim::U32 | Prim::I32 | Prim::F32 => 4,
        Prim::U64 | Prim::I64 | Prim::F64 => 8,
    }
}

/// Appends the values of a null-free array of a scalar type to a column builder of that type
/// (of another type: nulls, counted as misfits).
fn append_array(col: &mut Col, a: &ArrayRef) -> u64 {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! prim {
        ($b:expr, $t:ty) => {
            match a.as_primitive_opt::<$t>() {
                Some(p) => {
                    $b.append_slice(p.values());
                    true
                }
                None => false,
            }
        };
    }
    let done = match col {
        Col::Bool(b) => match a.as_boolean_opt() {
            Some(x) => {
                for v in x.values().iter() {
                    b.append_value(v);
                }
                true
            }
            None => false,
        },
        Col::I8(b) => prim!(b, Int8Type),
        Col::I16(b) => prim!(b, Int16Type),
        Col::I32(b) => prim!(b, Int32Type),
        Col::I64(b) => prim!(b, Int64Type),
        Col::U8(b) => prim!(b, UInt8Type),
        Col::U16(b) => prim!(b, UInt16Type),
        Col::U32(b) => prim!(b, UInt32Type),
        Col::U64(b) => prim!(b, UInt64Type),
        Col::F32(b) => prim!(b, Float32Type),
        Col::F64(b) => prim!(b, Float64Type),
        _ => false,
    };
    if done {
        return 0;
    }
    for _ in 0..a.len() {
        col.append_null();
    }
    a.len() as u64
}
