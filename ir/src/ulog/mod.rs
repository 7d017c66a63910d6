//! The PX4 ULog front end: the Format messages (`F`) a `.ulg` file carries
//! (`name:type field;type[n] field;...`), parsed into a [`FormatSet`] and lowered into the same
//! IR as TOML schemas, with ULog's layout (PX4 `ulog_file_format.md`): little-endian, packed,
//! fields in order, nested formats inlined, an array of a nested format repeating its layout.
//!
//! - Basic types: `int8_t` .. `uint64_t`, `float`, `double`, `bool` (one byte, non-zero is true)
//!   and `char`. `char[N]` is one string of N bytes, kept with its NUL padding (as pyulog shows
//!   it); a scalar `char` is a string of one byte.
//! - Any other type names another format, which may be defined later in the file. Formats may
//!   nest to any depth, but not in a cycle: a format that contains itself is refused.
//! - Fields whose name starts with `_padding` carry no data: they become IR padding, never shown.
//!   The trailing `_padding` fields of a *subscribed* format may be left out of its Data
//!   messages, so [`Lowered`] gives both sizes; formats nested inside keep theirs.
//!
//! Errors name the format and the field ([`UlogError`]).

use std::collections::BTreeMap;
use std::fmt;

use crate::ir::{Endian, Field, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId};

/// The largest payload of a message (its size is a `u16`): no Data message can carry a format
/// larger than this, so larger formats (and array lengths) are refused.
pub const MAX_SIZE: u64 = 65_535;

/// How deep formats may nest (PX4's nest two or three deep): deeper nesting is refused, so that
/// every walk over a layout (sizes, plans, decoding) stays within its stack.
pub const MAX_DEPTH: usize = 64;

/// A basic type of Format messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basic {
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float,
    Double,
    Bool,
    Char,
}

impl Basic {
    const NAMES: [(&'static str, Basic); 12] = [
        ("int8_t", Basic::Int8),
        ("uint8_t", Basic::Uint8),
        ("int16_t", Basic::Int16),
        ("uint16_t", Basic::Uint16),
        ("int32_t", Basic::Int32),
        ("uint32_t", Basic::Uint32),
        ("int64_t", Basic::Int64),
        ("uint64_t", Basic::Uint64),
        ("float", Basic::Float),
        ("double", Basic::Double),
        ("bool", Basic::Bool),
        ("char", Basic::Char),
    ];

    pub fn from_name(s: &str) -> Option<Basic> {
        Basic::NAMES.iter().find(|(n, _)| *n == s).map(|(_, b)| *b)
    }

    pub fn name(self) -> &'static str {
        Basic::NAMES.iter().find(|(_, b)| *b == self).map_or("?", |(n, _)| n)
    }

    /// The IR number type (`None` for `bool` and `char`).
    pub fn prim(self) -> Option<Prim> {
        Some(match self {
            Basic::Int8 => Prim::I8,
            Basic::Uint8 => Prim::U8,
            Basic::Int16 => Prim::I16,
            Basic::Uint16 => Prim::U16,
            Basic::Int32 => Prim::I32,
            Basic::Uint32 => Prim::U32,
            Basic::Int64 => Prim::I64,
            Basic::Uint64 => Prim::U64,
            Basic::Float => Prim::F32,
            Basic::Double => Prim::F64,
            Basic::Bool | Basic::Char => return None,
        })
    }

    pub fn size(self) -> u64 {
        match self.prim() {
            Some(p) => u64::from(p.size()),
            None => 1,
        }
    }
}

/// A field's element type: a basic type or another format by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    Basic(Basic),
    Format(String),
}

/// One field of a format: `type name` or `type[n] name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UField {
    pub ty: FieldType,
    /// The type as written, without the array length (`float`, `vec3_t`).
    pub type_name: String,
    /// `Some(n)` for `type[n]`.
    pub array: Option<u32>,
    pub name: String,
}

impl UField {
    /// A `_padding` field: no data, never shown.
    pub fn is_padding(&self) -> bool {
        self.name.starts_with("_padding")
    }
}

/// One Format message, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UFormat {
    pub name: String,
    pub fields: Vec<UField>,
}

/// What is wrong with a format: which one, which field, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UlogError {
    /// The format's name (the text up to `:`, or the whole text when it has none).
    pub format: String,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for UlogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "format `{}`", self.format)?;
        if let Some(field) = &self.field {
            write!(f, ", field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for UlogError {}

fn err(format: &str, field: Option<&str>, message: String) -> UlogError {
    UlogError { format: format.to_string(), field: field.map(str::to_string), message }
}

/// Parses the text of a Format message: `name:type field;type[n] field;...` (an empty field
/// between two `;`, and a trailing `;`, are allowed).
pub fn parse(text: &str) -> Result<UFormat, UlogError> {
    let Some((name, rest)) = text.split_once(':') else {
        let shown: String = text.chars().take(40).collect();
        return Err(err(&shown, None, "expected `name:fields`, found no `:`".into()));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(err(name, None, "the format has no name (the text starts with `:`)".into()));
    }
    let mut fields = Vec::new();
    for part in rest.split(';') {
        let part = part.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        if part.is_empty() {
            continue;
        }
        let Some((ty, fname)) = part.split_once(' ') else {
            return Err(err(name, Some(part), format!("expected `type name`, found `{part}`")));
        };
        let fname = fname.trim();
        if fname.is_empty() || fname.contains(' ') {
            return Err(err(name, Some(part), format!("expected `type name`, found `{part}`")));
        }
        let (base, array) = match ty.split_once('[') {
            None => (ty, None),
            Some((base, n)) => {
                let n = n.strip_suffix(']').and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| {
                    err(name, Some(fname), format!("type `{ty}`: expected `type[N]` with a number N"))
                })?;
                if n > MAX_SIZE {
                    return Err(err(
                        name,
                        Some(fname),
                        format!("array length {n} is larger than a message can hold ({MAX_SIZE} bytes)"),
                    ));
                }
                (base, Some(n as u32))
            }
        };
        if base.is_empty() {
            return Err(err(name, Some(fname), "the field has no type".into()));
        }
        let field_ty = match Basic::from_name(base) {
            Some(b) => FieldType::Basic(b),
            None => FieldType::Format(base.to_string()),
        };
        fields.push(UField { ty: field_ty, type_name: base.to_string(), array, name: fname.to_string() });
    }
    Ok(UFormat { name: name.to_string(), fields })
}

/// The formats of a log, by name (a later definition of a name replaces the earlier one).
#[derive(Clone, Debug, Default)]
pub struct FormatSet {
    formats: BTreeMap<String, UFormat>,
}

/// A subscribed format lowered into the IR: its struct (and those of the formats it nests) in
/// `schema`, at `root`.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub schema: Schema,
    pub root: TypeId,
    /// The bytes of a Data message without the format's trailing `_padding` fields (the size of
    /// the root struct).
    pub size: u64,
    /// The bytes of the trailing `_padding` fields, which Data messages may carry or leave out.
    pub trailing_padding: u64,
}

impl FormatSet {
    /// Parses and adds a Format message's text.
    pub fn add(&mut self, text: &str) -> Result<&UFormat, UlogError> {
        let f = parse(text)?;
        let name = f.name.clone();
        self.formats.insert(name.clone(), f);
        Ok(&self.formats[&name])
    }

    pub fn get(&self, name: &str) -> Option<&UFormat> {
        self.formats.get(name)
    }

    /// Every format, by name.
    pub fn iter(&self) -> impl Iterator<Item = &UFormat> {
        self.formats.values()
    }

    pub fn len(&self) -> usize {
        self.formats.len()
    }

    pub fn is_empty(&self) -> bool {
        self.formats.is_empty()
    }

    /// The formats `root` uses, each once: root first, and innermost first (every format after
    /// the formats it nests); an error for a missing format or a cycle.
    fn closure<'a>(&'a self, root: &str) -> Result<(Vec<&'a UFormat>, Vec<&'a UFormat>), UlogError> {
        let Some(r) = self.formats.get(root) else {
            return Err(err(root, None, "no Format message defines it".into()));
        };
        let mut order: Vec<&UFormat> = Vec::new();
        let mut post: Vec<&UFormat> = Vec::new();
        // Depth-first, with the path for cycles; depth is bounded by the number of formats.
        let mut stack: Vec<(&UFormat, usize)> = vec![(r, 0)];
        let mut path: Vec<&str> = vec![&r.name];
        order.push(r);
        while let Some((f, i)) = stack.last_mut() {
            let f: &UFormat = f;
            let Some(field) = f.fields.get(*i) else {
                post.push(f);
                stack.pop();
                path.pop();
                continue;
            };
            *i += 1;
            let FieldType::Format(sub) = &field.ty else { continue };
            let Some(s) = self.formats.get(sub) else {
                return Err(err(
                    &f.name,
                    Some(&field.name),
                    format!("type `{sub}` is neither a basic type nor a format of the log"),
                ));
            };
            if path.contains(&s.name.as_str()) {
                return Err(err(
                    &f.name,
                    Some(&field.name),
                    format!("type `{sub}` contains itself ({} -> {sub})", path.join(" -> ")),
                ));
            }
            if order.iter().any(|o| o.name == s.name) {
                continue;
            }
            if path.len() >= MAX_DEPTH {
                return Err(err(
                    &f.name,
                    Some(&field.name),
                    format!("formats nest deeper than {MAX_DEPTH} levels here ({} -> ...)", path[..3].join(" -> ")),
                ));
            }
            order.push(s);
            path.push(&s.name);
            stack.push((s, 0));
        }
        Ok((order, post))
    }

    /// Lowers the format subscribed as `root` and every format it nests. The root's trailing
    /// `_padding` fields are left out of its struct ([`Lowered::trailing_padding`]).
    pub fn lower(&self, root: &str) -> Result<Lowered, UlogError> {
        let (order, post) = self.closure(root)?;
        let ids: BTreeMap<&str, TypeId> = order.iter().enumerate().map(|(i, f)| (f.name.as_str(), TypeId(i))).collect();
        // Sizes, innermost first: a format's size needs those of the formats it nests.
        let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
        for f in &post {
            let mut size = 0u64;
            for field in &f.fields {
                let elem = match &field.ty {
                    FieldType::Basic(b) => b.size(),
                    FieldType::Format(s) => sizes.get(s.as_str()).copied().unwrap_or(0),
                };
                size = size.saturating_add(elem.saturating_mul(u64::from(field.array.unwrap_or(1))));
            }
            if size > MAX_SIZE {
                return Err(err(
                    &f.name,
                    None,
                    format!("its layout takes {size} bytes, more than a message can hold ({MAX_SIZE})"),
                ));
            }
            sizes.insert(&f.name, size);
        }
        let mut types = Vec::with_capacity(order.len());
        let mut trailing_padding = 0;
        for (k, f) in order.iter().enumerate() {
            let mut fields: Vec<&UField> = f.fields.iter().collect();
            if k == 0 {
                while fields.last().is_some_and(|x| x.is_padding()) {
                    let x = fields.pop().expect("checked");
                    trailing_padding += field_size(x, &sizes);
                }
            }
            let fields = fields
                .into_iter()
                .map(|x| {
                    let n = x.array.unwrap_or(1);
                    let ty = if x.is_padding() {
                        Ty::Pad(field_size(x, &sizes) as u32)
                    } else {
                        let elem = match &x.ty {
                            FieldType::Basic(Basic::Char) => {
                                // `char[N]` is one string of N bytes; `char` one of one byte.
                                return ir_field(&x.name, Ty::Str(Len::Fixed(n)));
                            }
                            FieldType::Basic(Basic::Bool) => Ty::Bool,
                            FieldType::Basic(b) => Ty::Prim(b.prim().unwrap_or(Prim::U8)),
                            FieldType::Format(s) => Ty::Named(ids[s.as_str()]),
                        };
                        match x.array {
                            Some(n) => Ty::Array { elem: Box::new(elem), len: Len::Fixed(n) },
                            None => elem,
                        }
                    };
                    ir_field(&x.name, ty)
                })
                .collect();
            types.push(TypeDef::Struct(Struct {
                name: f.name.clone(),
                doc: Some(format!("ULog format `{}`.", f.name)),
                endian: Endian::Little,
                fields,
                size: None,
            }));
        }
        let size = sizes[root] - trailing_padding;
        let schema = crate::layout::types_schema("ulog", Endian::Little, crate::ir::Rules::PACKED, types, None);
        Ok(Lowered { schema, root: TypeId(0), size, trailing_padding })
    }
}

fn field_size(x: &UField, sizes: &BTreeMap<&str, u64>) -> u64 {
    let elem = match &x.ty {
        FieldType::Basic(b) => b.size(),
        FieldType::Format(s) => sizes.get(s.as_str()).copied().unwrap_or(0),
    };
    elem * u64::from(x.array.unwrap_or(1))
}

fn ir_field(name: &str, ty: Ty) -> Field {
    Field { name: name.to_string(), ty, endian: Endian::Little, doc: None, unit: None, value: None, offset: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(texts: &[&str]) -> FormatSet {
        let mut s = FormatSet::default();
        for t in texts {
            s.add(t).unwrap();
        }
        s
    }

    #[test]
    fn parses_fields_arrays_and_nested_names() {
        let f = parse("nested:uint64_t timestamp;vec3_t a;inner_t[2] b;uint8_t[4] _padding0;").unwrap();
        assert_eq!(f.name, "nested");
        assert_eq!(f.fields.len(), 4);
        assert_eq!(f.fields[1].ty, FieldType::Format("vec3_t".into()));
        assert_eq!(f.fields[2].array, Some(2));
        assert!(f.fields[3].is_padding());
    }

    #[test]
    fn lowers_with_sizes_and_trailing_padding() {
        let s = set(&[
            "nested:uint64_t timestamp;vec3_t a;inner_t[2] b;uint32_t count;uint8_t[4] _padding0;",
            "vec3_t:int16_t[3] v;inner_t[2] pair;",
            "inner_t:float x;double y;uint8_t[3] _padding0;",
        ]);
        let l = s.lower("nested").unwrap();
        // inner_t 15, vec3_t 6 + 30, nested 8 + 36 + 30 + 4 (+ 4 padding left out).
        assert_eq!(l.size, 78);
        assert_eq!(l.trailing_padding, 4);
        assert_eq!(l.schema.size_of(&Ty::Named(l.root)), Some(78));
        let l = s.lower("inner_t").unwrap();
        assert_eq!((l.size, l.trailing_padding), (12, 3));
    }

    #[test]
    fn sizes_nested_formats_in_any_order() {
        let s = set(&["r:uint64_t timestamp;y a;x b;", "x:y[2] c;", "y:uint16_t d;"]);
        assert_eq!(s.lower("r").unwrap().size, 8 + 2 + 4);
    }

    #[test]
    fn refuses_deep_nesting() {
        let texts: Vec<String> = (0..=MAX_DEPTH).map(|i| format!("f{i}:f{} x", i + 1)).collect();
        let mut s = FormatSet::default();
        for t in &texts {
            s.add(t).unwrap();
        }
        s.add(&format!("f{}:uint8_t y", MAX_DEPTH + 1)).unwrap();
        assert!(s.lower("f0").unwrap_err().message.contains("nest deeper than 64"));
        assert!(s.lower("f3").is_ok());
    }

    #[test]
    fn refuses_cycles_missing_formats_and_bad_fields() {
        let s = set(&["a:uint64_t timestamp;b x;", "b:a y;"]);
        let e = s.lower("a").unwrap_err();
        assert_eq!((e.format.as_str(), e.field.as_deref()), ("b", Some("y")));
        assert!(e.message.contains("contains itself"), "{e}");
        let s = set(&["a:uint64_t timestamp;a x;"]);
        assert!(s.lower("a").unwrap_err().message.contains("contains itself"));
        let s = set(&["a:uint64_t timestamp;nope x;"]);
        let e = s.lower("a").unwrap_err();
        assert_eq!(e.to_string(), "format `a`, field `x`: type `nope` is neither a basic type nor a format of the log");
        assert!(parse("a:uint8_t[70000] x").unwrap_err().message.contains("larger than a message"));
        assert!(parse("a:uint8_t[-1] x").is_err());
        assert!(parse("no colon").is_err());
        assert!(parse("a:float").unwrap_err().message.contains("`type name`"));
        let s = set(&["big:uint64_t[8000] a;uint64_t[8000] b;"]);
        assert!(s.lower("big").unwrap_err().message.contains("more than a message can hold"));
        assert!(s.lower("missing").is_err());
    }
}
