//! Wire layout rules: sizes and offsets. The only place that knows how big a type is.

use crate::ir::{Endian, Field, Format, Len, Rules, Schema, Ty, TypeDef};

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
/// Under natural alignment ([`Rules::natural_align`]) a field that holds a number of more
/// than one byte has no fixed place, and neither has what follows it: where it lands depends
/// on where its struct starts.
pub fn place_fields(
    rules: Rules,
    named: &dyn Fn(crate::ir::TypeId) -> Option<u32>,
    fields: &mut [Field],
) -> Option<u32> {
    let mut at = Some(0u32);
    for f in fields.iter_mut() {
        let moved = rules.natural_align && needs_align(named, &f.ty);
        // A field that natural alignment may pad to has no fixed offset either.
        f.offset = if moved { None } else { at };
        let size = if moved { None } else { size_with(named, &f.ty) };
        at = match (at, size) {
            (Some(a), Some(s)) => a.checked_add(s),
            _ => None,
        };
    }
    at
}

/// Whether where a value of `ty` lands may depend on natural alignment
/// ([`Rules::natural_align`]): it holds a number of more than one byte (a length prefix
/// included), or a named type of more than one byte (conservatively: an enum's base, or a
/// struct of a variable size). `named` gives the fixed size of named types, as in [`size_with`].
pub fn needs_align(named: &dyn Fn(crate::ir::TypeId) -> Option<u32>, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(p) => p.size() > 1,
        Ty::Bool | Ty::Pad(_) | Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_)) => false,
        Ty::Bytes(len) | Ty::Str(len) => len.prefix().is_some_and(|p| p.size() > 1),
        Ty::Array { elem, len } => len.prefix().is_some_and(|p| p.size() > 1) || needs_align(named, elem),
        Ty::Named(id) => named(*id).is_none_or(|n| n > 1),
        _ => true,
    }
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

/// The fewest bytes a value of `ty` can take, with the minimum of every named type given by
/// `named` (a table from [`min_sizes`]). Fixed-size types count their size; a length prefix
/// counts its own width and no elements; elements that run to the end of the payload count
/// nothing; a union counts its smallest variant; a variable-width integer one byte. Readers use
/// it to refuse an element count that the bytes left cannot hold before they allocate anything.
pub fn min_size_with(named: &dyn Fn(crate::ir::TypeId) -> u64, ty: &Ty) -> u64 {
    let prefix = |len: &Len| len.prefix().map_or(0, |p| u64::from(p.size()));
    match ty {
        Ty::Prim(p) => u64::from(p.size()),
        Ty::Bool => 1,
        Ty::Pad(n) => u64::from(*n),
        Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n)) => u64::from(*n),
        Ty::Bytes(len) | Ty::Str(len) => prefix(len),
        Ty::Array { elem, len: Len::Fixed(n) } => min_size_with(named, elem).saturating_mul(u64::from(*n)),
        Ty::Array { len, .. } => prefix(len),
        Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => named(*id),
        Ty::VarInt { .. } => 1,
    }
}

/// The fewest bytes a value of `ty` can take (see [`min_size_with`]), computed from scratch.
/// Callers that ask often keep a [`min_sizes`] table and use [`min_size_with`].
pub fn min_size(schema: &Schema, ty: &Ty) -> u64 {
    let table = min_sizes(schema);
    min_size_with(&|id| table[id.0], ty)
}

/// The fewest bytes of every named type of `schema`, by [`crate::ir::TypeId`]: the one answer
/// that the dynamic interpreter, the Python module's tables and the checks share. Types are
/// visited in dependency order by a fixpoint (the IR has no cycles, so it ends), never by
/// recursion, so a deep or wide type graph costs linear time and no stack. A type that cannot be
/// placed (a cycle, which lowering rejects) counts as 0.
pub fn min_sizes(schema: &Schema) -> Vec<u64> {
    let n = schema.types.len();
    let mut table: Vec<Option<u64>> = vec![None; n];
    let fields_min = |fields: &[Field], table: &[Option<u64>]| -> Option<u64> {
        let mut sum = 0u64;
        for f in fields {
            if deps(&f.ty).iter().any(|d| table[d.0].is_none()) {
                return None;
            }
            sum = sum.saturating_add(min_size_with(&|id| table[id.0].unwrap_or(0), &f.ty));
        }
        Some(sum)
    };
    fixpoint(
        n,
        |i, table: &mut Vec<Option<u64>>| {
            let m = match schema.ty(crate::ir::TypeId(i)) {
                TypeDef::Struct(s) => fields_min(&s.fields, table)?,
                TypeDef::Enum(e) => u64::from(e.base.size()),
                TypeDef::Flags(f) => u64::from(f.base.size()),
                TypeDef::Union(u) => {
                    let mut least: Option<u64> = None;
                    for v in &u.variants {
                        let m = fields_min(&v.fields, table)?;
                        least = Some(least.map_or(m, |l| l.min(m)));
                    }
                    least.unwrap_or(0)
                }
                TypeDef::Extern(_) => 0,
            };
            table[i] = Some(m);
            Some(())
        },
        &mut table,
    );
    table.into_iter().map(|m| m.unwrap_or(0)).collect()
}

/// The schema of a front end that gives only types, in any order (the `.msg` and WPILib struct
/// front ends): no file header, framing or records, every field in `endian` unless it says
/// otherwise, offsets and sizes placed by [`place_types`].
pub fn types_schema(format: &str, endian: Endian, rules: Rules, types: Vec<TypeDef>, source: Option<String>) -> Schema {
    let mut schema = Schema {
        format: Format {
            name: format.to_string(),
            title: None,
            doc: None,
            endian,
            version: None,
            schema_id: None,
            rules,
        },
        types,
        file_header: None,
        framing: None,
        records: Vec::new(),
        params: Vec::new(),
        source,
    };
    place_types(&mut schema);
    schema
}

/// Fills in the field offsets and sizes of every struct of a schema built by a front end that
/// gives types in any order (the `.msg` and WPILib struct front ends): enums and flags first,
/// then each struct once every type it holds is sized.
pub fn place_types(schema: &mut Schema) {
    let n = schema.types.len();
    let mut sizes: Vec<Option<Option<u32>>> = vec![None; n];
    for (i, t) in schema.types.iter().enumerate() {
        match t {
            TypeDef::Enum(e) => sizes[i] = Some(Some(e.base.size())),
            TypeDef::Flags(f) => sizes[i] = Some(Some(f.base.size())),
            _ => {}
        }
    }
    let rules = schema.format.rules;
    let types = &mut schema.types;
    fixpoint(
        n,
        |i, sizes: &mut Vec<Option<Option<u32>>>| {
            let TypeDef::Struct(s) = &mut types[i] else {
                // Unions and extern types have no fixed size.
                sizes[i] = Some(None);
                return Some(());
            };
            if s.fields.iter().any(|f| deps(&f.ty).iter().any(|d| sizes[d.0].is_none())) {
                return None;
            }
            let size = place_fields(rules, &|id| sizes[id.0].flatten(), &mut s.fields);
            s.size = size;
            sizes[i] = Some(size);
            Some(())
        },
        &mut sizes,
    );
}

/// Runs `step` over every index not yet done (`table[i]` is `None`) until a pass makes no
/// progress; `step` returns `None` when a type it needs is not done yet. `n + 1` passes place
/// any acyclic graph.
fn fixpoint<T>(n: usize, mut step: impl FnMut(usize, &mut Vec<Option<T>>) -> Option<()>, table: &mut Vec<Option<T>>) {
    for _ in 0..=n {
        let mut progress = false;
        let mut waiting = false;
        for i in 0..n {
            if table[i].is_some() {
                continue;
            }
            if step(i, table).is_some() && table[i].is_some() {
                progress = true;
            } else {
                waiting = true;
            }
        }
        if !waiting || !progress {
            break;
        }
    }
}

/// The named types a field's type holds inline.
fn deps(ty: &Ty) -> Vec<crate::ir::TypeId> {
    match ty {
        Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => vec![*id],
        Ty::Array { elem, .. } => deps(elem),
        _ => Vec::new(),
    }
}
