//! Lowering struct schemas into the IR, with struct.adoc's layout: little-endian, packed (no
//! alignment padding), members in order; `char[N]` is a NUL-padded string of N bytes; an enum
//! becomes an IR enum over the member's integer type; runs of bit-fields become a storage
//! integer of [`crate::ir::Flags`] type whose [`crate::ir::BitField`]s say where each lives.
//!
//! Bit-field packing (struct.adoc): bit-fields fill a storage integer of their declared size
//! from the least significant bit. A bit-field starts a new storage integer when there is none,
//! when its type's size differs from the current one's, or when it does not fit in the bits left.
//! A `bool` bit-field joins the current storage integer of any size if a bit is left, and
//! otherwise starts a one-byte one. Any member that is not a bit-field ends the run.

use std::collections::BTreeMap;

use super::{MemberType, Scalar, StructSet};
use crate::ir::{
    BitField, BitKind, Endian, Enum, EnumValue, Field, Flags, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId,
};

/// The IR of some struct types, and where each struct name landed.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub schema: Schema,
    /// Struct name -> its IR struct.
    pub ids: BTreeMap<String, TypeId>,
}

/// Lowers `roots` and every struct they use. Every name in their closures must be defined
/// (check with [`StructSet::closure`] or [`StructSet::resolve`] first); a missing one is left
/// out and the member referring to it becomes zero bytes of padding, so this never panics.
pub fn lower(set: &StructSet, roots: &[&str], format: &str, source: Option<String>) -> Lowered {
    let mut names: Vec<&str> = Vec::new();
    for r in roots {
        for spec in set.closure(r).unwrap_or_default() {
            if !names.contains(&spec.name.as_str()) {
                names.push(&spec.name);
            }
        }
    }
    names.sort_unstable();
    let ids: BTreeMap<String, TypeId> = names.iter().enumerate().map(|(i, n)| (n.to_string(), TypeId(i))).collect();
    let rust: Vec<String> = names.iter().map(|n| rust_name(n)).collect();
    // Structs take the first ids; their enums and bit-field storage types follow.
    let mut types: Vec<TypeDef> = Vec::new();
    let mut extra: Vec<TypeDef> = Vec::new();
    for (n, rust_struct) in names.iter().zip(&rust) {
        let spec = set.get(n).expect("closure names are in the set");
        let mut fields: Vec<Field> = Vec::new();
        // The current run of bit-fields: (storage size in bytes, bits used, index into `extra`).
        let mut run: Option<(u32, u32, usize)> = None;
        for m in &spec.members {
            let enum_id = m.enumeration.as_ref().map(|values| {
                let base = match &m.ty {
                    MemberType::Scalar(s) => s.prim().unwrap_or(Prim::U8),
                    MemberType::Struct(_) => Prim::U8,
                };
                extra.push(TypeDef::Enum(Enum {
                    name: format!("{rust_struct}{}", camel(&m.name)),
                    doc: Some(format!("The enum of member `{}` of struct `{n}`.", m.name)),
                    base,
                    values: values
                        .iter()
                        .map(|(name, value)| EnumValue { name: name.clone(), value: *value, doc: None })
                        .collect(),
                }));
                TypeId(names.len() + extra.len() - 1)
            });
            if let (Some(width), MemberType::Scalar(s)) = (m.bits, &m.ty) {
                let size = match (s, run) {
                    (Scalar::Bool, Some((size, used, _))) if used < size * 8 => size,
                    (Scalar::Bool, _) => 1,
                    _ => s.prim().map_or(1, Prim::size),
                };
                let fits = run.filter(|&(sz, used, _)| sz == size && used + width <= sz * 8);
                let (used, at) = match fits {
                    Some((_, used, at)) => (used, at),
                    None => {
                        let base = match size {
                            1 => Prim::U8,
                            2 => Prim::U16,
                            4 => Prim::U32,
                            _ => Prim::U64,
                        };
                        let k = fields.iter().filter(|f| f.name.starts_with("bits")).count();
                        extra.push(TypeDef::Flags(Flags {
                            name: format!("{rust_struct}Bits{k}"),
                            doc: Some(format!("Bit-fields of struct `{n}`, packed in a `{base}`.")),
                            base,
                            flags: Vec::new(),
                            fields: Vec::new(),
                        }));
                        let at = extra.len() - 1;
                        fields.push(field(&format!("bits{k}"), Ty::Named(TypeId(names.len() + at))));
                        (0, at)
                    }
                };
                let kind = match (s, enum_id) {
                    (Scalar::Bool, _) => BitKind::Bool,
                    (_, Some(id)) => BitKind::Enum(id),
                    (s, None) if s.prim().is_some_and(Prim::is_signed) => BitKind::Signed,
                    _ => BitKind::Unsigned,
                };
                if let TypeDef::Flags(f) = &mut extra[at] {
                    f.fields.push(BitField { name: m.name.clone(), bit: used, width, kind, doc: None });
                }
                run = Some((size, used + width, at));
                continue;
            }
            run = None;
            let elem = match (&m.ty, enum_id) {
                (_, Some(id)) => Ty::Named(id),
                (MemberType::Scalar(Scalar::Bool), _) => Ty::Bool,
                (MemberType::Scalar(Scalar::Char), _) => {
                    // `char[N]` is one string of N bytes, not an array of strings.
                    fields.push(field(&m.name, Ty::Str(Len::Fixed(m.array.unwrap_or(1)))));
                    continue;
                }
                (MemberType::Scalar(s), None) => Ty::Prim(s.prim().unwrap_or(Prim::U8)),
                (MemberType::Struct(sub), None) => match ids.get(sub) {
                    Some(id) => Ty::Named(*id),
                    None => Ty::Pad(0),
                },
            };
            let ty = match m.array {
                Some(k) => Ty::Array { elem: Box::new(elem), len: Len::Fixed(k) },
                None => elem,
            };
            fields.push(field(&m.name, ty));
        }
        types.push(TypeDef::Struct(Struct {
            name: rust_struct.clone(),
            doc: Some(format!("WPILib struct `{n}`.")),
            endian: Endian::Little,
            fields,
            size: None,
        }));
    }
    types.extend(extra);
    let schema = crate::layout::types_schema(format, Endian::Little, crate::ir::Rules::PACKED, types, source);
    Lowered { schema, ids }
}

fn field(name: &str, ty: Ty) -> Field {
    Field { name: name.to_string(), ty, endian: Endian::Little, doc: None, unit: None, value: None, offset: None }
}

fn camel(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// Names of the Rust prelude that a generated type must not shadow.
const PRELUDE: [&str; 10] = ["String", "Vec", "Option", "Result", "Box", "Some", "None", "Ok", "Err", "Self"];

/// A Rust type name for a struct name: letters, digits and `_` kept, anything else `_`; a
/// leading digit or a prelude name gets an `S` in front.
fn rust_name(n: &str) -> String {
    let mut s: String = n.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || PRELUDE.contains(&s.as_str()) {
        s.insert(0, 'S');
    }
    s
}
