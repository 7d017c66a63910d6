//! Golden vectors: for every fixed-size struct of a schema (every fixed record payload, the file
//! header, the record header), known field values and the wire bytes they must encode to, in
//! `golden/<format>.json`. Rust, C (compiled against the generated header) and the generated Python
//! module each check that the values encode to exactly these bytes and decode back to the values.
//!
//! The bytes are computed here by the plainest possible walk over the IR layout, independently of
//! the Rust codec, the C compiler's struct layout and Python's `struct`, so that a disagreement
//! between any of them shows up as a failed vector.
//!
//! Values are chosen so that a misplaced or byte-swapped field cannot go unnoticed: every scalar
//! gets its own value; integers have a different non-zero value in every byte; floats are not
//! round binary fractions, so every mantissa byte matters. Constants keep their value, the file
//! header's schema-id field holds the schema id, and the record header announces the first record
//! with its real size, so that the header vectors form a valid file start.

use std::fmt::Write;

use super::{generated_banner, json_string, Artifact, Backend};
use crate::ir::{ConstValue, Endian, Field, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId};

/// Generates `golden/<format>.json` for every schema with at least one fixed-size struct.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoldenBackend;

impl Backend for GoldenBackend {
    fn name(&self) -> &'static str {
        "golden"
    }

    fn generate(&self, schema: &Schema) -> Vec<Artifact> {
        let name = if schema.format.name.is_empty() { "logspec" } else { schema.format.name.as_str() };
        match vectors(schema) {
            Some(contents) => vec![Artifact { path: format!("golden/{name}.json"), contents }],
            None => Vec::new(),
        }
    }
}

/// The structs that get a vector: a fixed, non-zero size (exactly the ones with a C struct).
pub fn covered(schema: &Schema) -> Vec<TypeId> {
    (0..schema.types.len())
        .map(TypeId)
        .filter(|&id| matches!(schema.ty(id), TypeDef::Struct(Struct { size: Some(n), .. }) if *n > 0))
        .collect()
}

/// The JSON text, or `None` when no struct has a fixed size.
pub fn vectors(schema: &Schema) -> Option<String> {
    let ids = covered(schema);
    if ids.is_empty() {
        return None;
    }
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"generated\": {},", json_string(&generated_banner(schema)));
    out.push_str(
        "  \"about\": \"Known values and their wire bytes for every fixed-size struct; checked by Rust, C and Python (see docs/schema-language.md).\",\n",
    );
    let _ = writeln!(out, "  \"format\": {},", json_string(&schema.format.name));
    out.push_str("  \"vectors\": [\n");
    for (n, &id) in ids.iter().enumerate() {
        let s = schema.strukt(id);
        let mut g = Gen { schema, counter: id.0 as u64 * 1000, bytes: Vec::new() };
        let values = g.fields(s, Some(id));
        let _ = write!(out, "    {{\"struct\": {}", json_string(&s.name));
        if let Some(r) = schema.record_for(id) {
            let _ = write!(out, ", \"record\": {}, \"id\": {}", json_string(&r.name), r.id);
        }
        let _ = write!(out, ", \"size\": {},\n     \"values\": {values},\n     \"bytes\": \"", g.bytes.len());
        for b in &g.bytes {
            let _ = write!(out, "{b:02x}");
        }
        out.push_str(if n + 1 < ids.len() { "\"},\n" } else { "\"}\n" });
    }
    out.push_str("  ]\n}\n");
    Some(out)
}

struct Gen<'a> {
    schema: &'a Schema,
    /// Advances once per scalar, so that every scalar gets its own value.
    counter: u64,
    bytes: Vec<u8>,
}

impl Gen<'_> {
    /// A struct's fields as a JSON object (padding omitted), appending their bytes.
    fn fields(&mut self, s: &Struct, id: Option<TypeId>) -> String {
        let mut parts = Vec::new();
        for (i, f) in s.fields.iter().enumerate() {
            let v = match self.special(id, i) {
                Some(v) => self.int(v, prim_of(self.schema, &f.ty), f.endian),
                None => self.field(f),
            };
            if !f.is_padding() {
                parts.push(format!("{}: {v}", json_string(&f.name)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }

    /// Values fixed by the format rather than chosen: the schema id in the file header, and the
    /// tag and length of the record header (the first record and its size).
    fn special(&self, id: Option<TypeId>, field: usize) -> Option<u64> {
        let s = self.schema;
        let id = id?;
        if s.file_header == Some(id) {
            let sid = s.format.schema_id.as_ref()?;
            return (sid.field == Some(field)).then_some(sid.value);
        }
        let framing = s.framing.as_ref().filter(|f| f.header == id)?;
        let first = s.records.iter().find(|r| s.strukt(r.body).size.is_some())?;
        if framing.tag == field {
            Some(first.id)
        } else if framing.length == Some(field) {
            s.strukt(first.body).size.map(u64::from)
        } else {
            None
        }
    }

    fn field(&mut self, f: &Field) -> String {
        match &f.value {
            Some(ConstValue::Int(v)) => self.int(*v as u64, prim_of(self.schema, &f.ty), f.endian),
            Some(ConstValue::Bytes(b)) => {
                self.bytes.extend_from_slice(b);
                json_hex(b)
            }
            None => self.value(&f.ty, f.endian),
        }
    }

    fn value(&mut self, ty: &Ty, endian: Endian) -> String {
        match ty {
            Ty::Prim(p) => self.prim(*p, endian),
            Ty::Bool => {
                self.counter += 1;
                let v = self.counter % 2 == 1;
                self.bytes.push(u8::from(v));
                v.to_string()
            }
            Ty::Pad(n) => {
                self.bytes.resize(self.bytes.len() + *n as usize, 0);
                "null".into()
            }
            Ty::Bytes(Len::Fixed(n)) => {
                self.counter += 1;
                let b: Vec<u8> = (0..*n as u64).map(|i| (self.counter * 3 + i * 29 + 1) as u8).collect();
                self.bytes.extend_from_slice(&b);
                json_hex(&b)
            }
            Ty::Str(Len::Fixed(n)) => {
                self.counter += 1;
                // Shorter than the array, so the NUL padding is exercised too.
                let text: String = format!("s{}", self.counter).chars().take((*n as usize).saturating_sub(1)).collect();
                let mut b = text.clone().into_bytes();
                b.resize(*n as usize, 0);
                self.bytes.extend_from_slice(&b);
                json_string(&text)
            }
            Ty::Array { elem, len: Len::Fixed(n) } => {
                let items: Vec<String> = (0..*n).map(|_| self.value(elem, endian)).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => self.fields(s, None),
                TypeDef::Enum(e) => {
                    self.counter += 1;
                    let v = match e.values.len() {
                        0 => self.counter as i128 % 100,
                        n => e.values[self.counter as usize % n].value,
                    };
                    self.int(v as u64, e.base, endian)
                }
                TypeDef::Flags(f) => {
                    let bits = f.flags.iter().fold(0u64, |a, b| a | 1u64 << b.bit);
                    self.int(bits, f.base, endian)
                }
                // Not fixed-size: structs containing them are not covered.
                TypeDef::Union(_) | TypeDef::Extern(_) => "null".into(),
            },
            // Variable-size types never occur in a fixed-size struct.
            _ => "null".into(),
        }
    }

    fn prim(&mut self, p: Prim, endian: Endian) -> String {
        self.counter += 1;
        let c = self.counter;
        match p {
            Prim::F32 => {
                let v = if c % 2 == 0 { (c as f32 + 1.0) * -0.1 } else { c as f32 * 1.7 + 0.25 };
                self.put(&v.to_le_bytes(), endian);
                format!("{:?}", f64::from(v))
            }
            Prim::F64 => {
                let v = (c as f64 + 1.0) * 0.3 - 1e-3;
                self.put(&v.to_le_bytes(), endian);
                format!("{v:?}")
            }
            _ => {
                // A different non-zero byte at every position, below 0x80 in the top byte except
                // every third value, which is negative for signed types.
                let n = p.size() as u64;
                let mut v = 0u64;
                for i in 0..n {
                    let mut b = (c * 5 + i * 37 + 1) % 0x7f + 1;
                    if i == n - 1 && c % 3 == 0 {
                        b |= 0x80;
                    }
                    v |= b << (8 * i);
                }
                self.int(v, p, endian)
            }
        }
    }

    /// Appends an integer of type `p` with the bit pattern `v`, returning its JSON value.
    fn int(&mut self, v: u64, p: Prim, endian: Endian) -> String {
        let n = p.size() as usize;
        let le = v.to_le_bytes();
        self.put(&le[..n], endian);
        if p.is_signed() && n < 8 {
            let shift = 64 - 8 * n as u32;
            (((v << shift) as i64) >> shift).to_string()
        } else if p.is_signed() {
            (v as i64).to_string()
        } else {
            v.to_string()
        }
    }

    fn put(&mut self, le: &[u8], endian: Endian) {
        match endian {
            Endian::Little => self.bytes.extend_from_slice(le),
            Endian::Big => self.bytes.extend(le.iter().rev()),
        }
    }
}

/// The integer type behind a field (enums and flags have a base).
fn prim_of(schema: &Schema, ty: &Ty) -> Prim {
    match ty {
        Ty::Prim(p) => *p,
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Enum(e) => e.base,
            TypeDef::Flags(f) => f.base,
            _ => Prim::U64,
        },
        Ty::Bool => Prim::U8,
        _ => Prim::U64,
    }
}

fn json_hex(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s.push('"');
    s
}
