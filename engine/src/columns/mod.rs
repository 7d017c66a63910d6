//! Arrow columns typed from the IR: the Arrow type of a channel's values ([`arrow_fields`]) and
//! builders that append decoded [`Value`](logspec::value::Value)s to them ([`Col`]): the one builder family of the
//! tables and `export --parquet`. A visit of a flat struct fills them with no value tree
//! ([`FlatRow`], `flat.rs`), and so does a visit of a nested one ([`NestedRow`], `nested.rs`:
//! every ROS message); a fixed-size struct's columns are gathered from its payload bytes
//! ([`FixedLayout`], `fixed.rs`).
//!
//! The mapping (docs/parquet.md): integers, floats and bools as themselves; enums and flags as
//! their integer, with the name table in the field metadata (`enum`, `flags`); strings as UTF-8;
//! bytes as binary; fixed and variable arrays as lists; structs as Arrow structs; a union as a
//! struct of `variant` (the variant's name) and one struct per variant that has fields (null
//! unless it is the variant). Units and docs go in the field metadata (`unit`, `doc`); a
//! struct-typed field's unit applies to the fields under it that have none of their own.

mod col;
mod fixed;
mod flat;
mod nested;

pub use col::Col;
pub use fixed::{FixedLayout, Gather};
pub use flat::FlatRow;
pub use nested::NestedRow;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field};
use logspec::ir::ir::{self, Prim, Schema, Ty, TypeDef};

/// The items of `items` at the indexes `keep` (ascending), in order: a projection's columns.
pub(crate) fn only<T>(items: Vec<T>, keep: &[usize]) -> Vec<T> {
    items.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, t)| t).collect()
}

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
