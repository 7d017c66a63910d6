//! Lowering a resolved [`MsgSet`] into the IR: every message type becomes a little-endian packed
//! struct; `string` and `T[]` take `u32` prefixes, `T[N]` none; `time` and `duration` are the
//! structs `Time {sec: u32, nsec: u32}` and `Duration {sec: i32, nsec: i32}`; `byte` is `i8` and
//! `char` is `u8`; constants carry no bytes (they stay in [`MsgSet`] and in the docs). ROS 2
//! sets lower for CDR instead ([`lower_cdr`]).

use std::collections::BTreeMap;

use super::{Arity, Base, Builtin, Dialect, MsgSet};
use crate::ir::{Endian, Field, Len, Prim, Rules, Schema, Struct, Ty, TypeDef, TypeId};

/// The IR of some message types, and where each `pkg/Type` landed.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub schema: Schema,
    /// `pkg/Type` -> its struct.
    pub ids: BTreeMap<String, TypeId>,
}

/// The Rust-facing names of the built-in `time` and `duration` structs.
pub const TIME: &str = "Time";
pub const DURATION: &str = "Duration";

/// Lowers `roots` and everything they use. `format` names the schema (the generated module's
/// file name); `source` is shown in "generated from" lines. The set must be resolved.
pub fn lower(set: &MsgSet, roots: &[&str], format: &str, source: Option<String>) -> Lowered {
    lower_in(set, roots, format, source, Endian::Little)
}

/// Lowers `roots` of a ROS 2 set ([`super::Dialect::Ros2`]) for CDR payloads of byte order
/// `endian` (a message says its own, in its encapsulation header; the payload after those 4
/// bytes is what the IR describes): [`Rules::CDR`] (numbers naturally aligned from the
/// payload's start, strings with their NUL in their `u32` length), `byte` unsigned, and a
/// message with no fields one byte of padding (rosidl's `structure_needs_at_least_one_member`).
pub fn lower_cdr(set: &MsgSet, roots: &[&str], format: &str, endian: Endian) -> Lowered {
    lower_in(set, roots, format, None, endian)
}

fn lower_in(set: &MsgSet, roots: &[&str], format: &str, source: Option<String>, endian: Endian) -> Lowered {
    let ros2 = set.dialect == Dialect::Ros2;
    let mut names: Vec<&str> = Vec::new();
    for r in roots {
        for spec in set.closure(r) {
            if !names.contains(&spec.name.as_str()) {
                names.push(&spec.name);
            }
        }
    }
    names.sort_unstable();
    let uses = |b: Builtin| {
        names.iter().any(|n| set.get(n).is_some_and(|s| s.fields.iter().any(|f| f.base == Base::Builtin(b))))
    };
    let mut types = Vec::new();
    let mut time_ids = (None, None);
    for (b, name, prim) in [(Builtin::Time, TIME, Prim::U32), (Builtin::Duration, DURATION, Prim::I32)] {
        if uses(b) {
            let id = TypeId(types.len());
            if b == Builtin::Time {
                time_ids.0 = Some(id);
            } else {
                time_ids.1 = Some(id);
            }
            let fields = vec![field("sec", Ty::Prim(prim), endian), field("nsec", Ty::Prim(prim), endian)];
            types.push(strukt(name, format!("ROS `{}`.", b.name()), fields, endian));
        }
    }
    let first = types.len();
    let ids: BTreeMap<String, TypeId> =
        names.iter().enumerate().map(|(i, n)| (n.to_string(), TypeId(first + i))).collect();
    let reserved: Vec<&str> = types.iter().map(TypeDef::name).collect();
    let rust_names = rust_names(&names, &reserved);
    for (n, rust) in names.iter().zip(&rust_names) {
        let spec = set.get(n).expect("closure names are in the set");
        let mut fields: Vec<Field> = spec
            .fields
            .iter()
            .map(|f| {
                let elem = match &f.base {
                    Base::Builtin(Builtin::Time) => Ty::Named(time_ids.0.expect("time is used")),
                    Base::Builtin(Builtin::Duration) => Ty::Named(time_ids.1.expect("duration is used")),
                    // ROS 2's `byte` is an IDL octet.
                    Base::Builtin(Builtin::Byte) if ros2 => Ty::Prim(Prim::U8),
                    Base::Builtin(b) => builtin_ty(*b),
                    Base::Msg(sub) => Ty::Named(ids[sub]),
                };
                let ty = match f.arity {
                    Arity::Scalar => elem,
                    Arity::Var => Ty::Array { elem: Box::new(elem), len: Len::Count(Prim::U32) },
                    Arity::Fixed(k) => Ty::Array { elem: Box::new(elem), len: Len::Fixed(k) },
                };
                field(&f.name, ty, endian)
            })
            .collect();
        if ros2 && fields.is_empty() {
            // rosidl gives a message without fields one `uint8` member: one byte on the wire,
            // shown as nothing.
            fields.push(field("structure_needs_at_least_one_member", Ty::Pad(1), endian));
        }
        let mut doc = format!("ROS message `{n}`.");
        if !spec.constants.is_empty() {
            doc.push_str("\n\nConstants:");
            for c in &spec.constants {
                doc.push_str(&format!("\n- `{} {}={}`", c.ty.name(), c.name, c.value));
            }
        }
        types.push(strukt(rust, doc, fields, endian));
    }
    let rules = if ros2 { Rules::CDR } else { Rules::PACKED };
    let schema = crate::layout::types_schema(format, endian, rules, types, source);
    Lowered { schema, ids }
}

/// The IR type of a fixed-width builtin (or `string`).
fn builtin_ty(b: Builtin) -> Ty {
    match b {
        Builtin::Bool => Ty::Bool,
        Builtin::Int8 | Builtin::Byte => Ty::Prim(Prim::I8),
        Builtin::Uint8 | Builtin::Char => Ty::Prim(Prim::U8),
        Builtin::Int16 => Ty::Prim(Prim::I16),
        Builtin::Uint16 => Ty::Prim(Prim::U16),
        Builtin::Int32 => Ty::Prim(Prim::I32),
        Builtin::Uint32 => Ty::Prim(Prim::U32),
        Builtin::Int64 => Ty::Prim(Prim::I64),
        Builtin::Uint64 => Ty::Prim(Prim::U64),
        Builtin::Float32 => Ty::Prim(Prim::F32),
        Builtin::Float64 => Ty::Prim(Prim::F64),
        Builtin::String => Ty::Str(Len::Count(Prim::U32)),
        Builtin::Time | Builtin::Duration => unreachable!("time and duration are structs"),
    }
}

fn field(name: &str, ty: Ty, endian: Endian) -> Field {
    Field { name: name.to_string(), ty, endian, doc: None, unit: None, value: None, offset: None }
}

fn strukt(name: &str, doc: String, fields: Vec<Field>, endian: Endian) -> TypeDef {
    TypeDef::Struct(Struct { name: name.to_string(), doc: Some(doc), endian, fields, size: None })
}

/// Names of the Rust prelude that a generated type must not shadow.
const PRELUDE: [&str; 10] = ["String", "Vec", "Option", "Result", "Box", "Some", "None", "Ok", "Err", "Self"];

/// Rust type names: the short name (`Imu`), or package and name in camel case
/// (`SensorMsgsImu`) when two packages share the short name or it is reserved (`Time`,
/// `Duration`, a prelude name such as `String`).
fn rust_names(names: &[&str], reserved: &[&str]) -> Vec<String> {
    let short = |n: &str| n.rsplit('/').next().unwrap_or(n).to_string();
    let reserved: Vec<&str> = reserved.iter().chain(PRELUDE.iter()).copied().collect();
    let mut count: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for n in names {
        *count.entry(short(n)).or_default() += 1;
    }
    names
        .iter()
        .map(|n| {
            let s = short(n);
            let clash = reserved.contains(&s.as_str()) || count.get(&s).is_some_and(|c| *c > 1);
            if clash {
                let pkg = n.rsplit_once('/').map_or("", |(p, _)| p);
                let camel: String = pkg
                    .split('_')
                    .map(|w| {
                        let mut c = w.chars();
                        c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
                    })
                    .collect();
                format!("{camel}{s}")
            } else {
                s
            }
        })
        .collect()
}
