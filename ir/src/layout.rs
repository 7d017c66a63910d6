//! Wire layout rules: sizes and offsets. The only place that knows how big a type is.

use crate::ir::{Field, Len, Schema, Ty, TypeDef};

/// The fixed encoded size of `ty`, or `None` when it depends on the value.
pub fn size_of(schema: &Schema, ty: &Ty) -> Option<u32> {
    size_with(&|id| named_size(schema, id), ty)
}

fn named_size(schema: &Schema, id: crate::ir::TypeId) -> Option<u32> {
    match schema.ty(id) {
        TypeDef::Struct(s) => s.size,
        TypeDef::Enum(e) => Some(e.base.size()),
        TypeDef::Flags(f) => Some(f.base.size()),
        TypeDef::Union(_) | TypeDef::Extern(_) => None,
    }
}

/// Size of a type given a way to size named types (used while the schema is still being built).
pub fn size_with(named: &dyn Fn(crate::ir::TypeId) -> Option<u32>, ty: &Ty) -> Option<u32> {
    match ty {
        Ty::Prim(p) => Some(p.size()),
        Ty::Bool => Some(1),
        Ty::Pad(n) => Some(*n),
        Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n)) => Some(*n),
        Ty::Bytes(_) | Ty::Str(_) => None,
        Ty::Array { elem, len: Len::Fixed(n) } => size_with(named, elem)?.checked_mul(*n),
        Ty::Array { .. } => None,
        Ty::Named(id) => named(*id),
        // A union's size depends on the tag, except when every variant has the same fixed size;
        // we still treat it as variable so that the tag is always consulted.
        Ty::Union { .. } | Ty::ParamUnion { .. } => None,
        // 1 to `prim`'s size bytes, as an earlier field says.
        Ty::VarInt { .. } => None,
    }
}

/// Fills in `offset` of every field with a fixed-size prefix and returns the total size, if fixed.
pub fn place_fields(named: &dyn Fn(crate::ir::TypeId) -> Option<u32>, fields: &mut [Field]) -> Option<u32> {
    let mut at = Some(0u32);
    for f in fields.iter_mut() {
        f.offset = at;
        at = match (at, size_with(named, &f.ty)) {
            (Some(a), Some(s)) => a.checked_add(s),
            _ => None,
        };
    }
    at
}

/// The largest payload a struct can have, when it is bounded (variable parts count at their
/// prefix's maximum). Used to check that a length field can express every payload.
pub fn max_size(schema: &Schema, ty: &Ty) -> Option<u128> {
    let elem_max = |len: &Len, elem: u128| -> Option<u128> {
        match len {
            Len::Fixed(n) => Some(elem * u128::from(*n)),
            Len::Count(p) => {
                let (_, hi) = p.int_range()?;
                Some(u128::from(p.size()) + elem * hi as u128)
            }
            Len::Size(p) => {
                let (_, hi) = p.int_range()?;
                Some(u128::from(p.size()) + hi as u128)
            }
            Len::Rest => None,
        }
    };
    match ty {
        Ty::Bytes(len) | Ty::Str(len) => elem_max(len, 1),
        Ty::Array { elem, len } => elem_max(len, max_size(schema, elem)?),
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => s.fields.iter().map(|f| max_size(schema, &f.ty)).sum(),
            TypeDef::Union(u) => u
                .variants
                .iter()
                .map(|v| v.fields.iter().map(|f| max_size(schema, &f.ty)).sum::<Option<u128>>())
                .try_fold(0u128, |acc, v| Some(acc.max(v?))),
            _ => size_of(schema, ty).map(u128::from),
        },
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => max_size(schema, &Ty::Named(*id)),
        Ty::VarInt { width, .. } => Some(u128::from(width.max_bytes())),
        _ => size_of(schema, ty).map(u128::from),
    }
}
