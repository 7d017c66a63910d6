//! Golden vectors: for every fixed-size struct of a schema (every fixed record payload, the file
//! header, the record header), known field values and the wire bytes they must encode to, in
//! `golden/<format>.json`. Rust, C (compiled against the generated header) and the generated Python
//! module each check that the values encode to exactly these bytes and decode back to the values.
//!
//! Variable-size types get vectors too (`variable_vectors`): every variable-size struct, with
//! strings, byte strings and arrays of a few elements, and as many vectors as it takes for every
//! variant of every union it reaches to appear once; and every variant of a union selected by a
//! type name, with a name that selects it. A union's value is `{"variant": name, "fields": {..}}`.
//! A struct with variable-width integers (WPILOG's record header) gets one vector per byte count
//! of its widest one, each integer taking a different count in each, its width field's bits set
//! to match.
//!
//! The bytes are computed here by the plainest possible walk over the IR layout, independently of
//! the Rust codec, the C compiler's struct layout and Python's `struct`, so that a disagreement
//! between any of them shows up as a failed vector.
//!
//! Values are chosen so that a misplaced or byte-swapped field cannot go unnoticed: every scalar
//! gets its own value; integers have a different non-zero value in every byte; floats are not
//! round binary fractions, so every mantissa byte matters. Constants keep their value, the file
//! header's schema-id field holds the schema id, and the record header announces the first record
//! with its real size (and, with a `[framing] checksum`, its CRC), so that the header vectors
//! form a valid file start.

use std::fmt::Write;

use super::{generated_banner, json_string, Artifact, Backend};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, NameMatch, Prim, Schema, Struct, Ty, TypeDef, TypeId};

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

/// The variable-size structs that get vectors: every one whose layout is in the schema (no
/// reader-parameter union, no extern type).
pub fn covered_variable(schema: &Schema) -> Vec<TypeId> {
    (0..schema.types.len())
        .map(TypeId)
        .filter(|&id| {
            matches!(schema.ty(id), TypeDef::Struct(Struct { size: None, .. })) && walkable(schema, &Ty::Named(id))
        })
        .collect()
}

/// Whether the walk can give a value of the type: everything but reader-parameter unions, extern
/// types and unions selected by name inside a struct.
fn walkable(schema: &Schema, ty: &Ty) -> bool {
    match ty {
        Ty::Array { elem, .. } => walkable(schema, elem),
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => s.fields.iter().all(|f| walkable(schema, &f.ty)),
            TypeDef::Union(_) | TypeDef::Extern(_) => false,
            _ => true,
        },
        Ty::Union { id, .. } => match schema.ty(*id) {
            TypeDef::Union(u) => {
                !u.by_name && u.variants.iter().all(|v| v.fields.iter().all(|f| walkable(schema, &f.ty)))
            }
            _ => false,
        },
        Ty::ParamUnion { .. } => false,
        _ => true,
    }
}

/// The JSON text, or `None` when no struct has a fixed size and nothing variable is covered.
pub fn vectors(schema: &Schema) -> Option<String> {
    let ids = covered(schema);
    let var = variable(schema);
    if ids.is_empty() && var.is_empty() {
        return None;
    }
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"generated\": {},", json_string(&generated_banner(schema)));
    out.push_str(
        "  \"about\": \"Known values and their wire bytes for every fixed-size struct; checked by Rust, C and Python (see docs/schema-language.md).\",\n",
    );
    let _ = writeln!(out, "  \"format\": {},", json_string(&schema.format.name));
    // Layout rules beyond packed fields, which the bytes follow (a struct's vector is one whole
    // value: alignment counts from its first byte).
    let rules = schema.format.rules;
    if !rules.is_packed() {
        let _ = writeln!(
            out,
            "  \"layout\": {{\"align\": {}, \"string_nul\": {}}},",
            json_string(if rules.natural_align { "natural" } else { "packed" }),
            rules.string_nul
        );
    }
    out.push_str("  \"vectors\": [\n");
    for (n, &id) in ids.iter().enumerate() {
        let s = schema.strukt(id);
        let mut g = Gen::new(schema, id.0 as u64 * 1000);
        let mut values = g.fields(s, Some(id));
        seal(schema, id, &mut values, &mut g.bytes);
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
    out.push_str("  ]");
    if !var.is_empty() {
        out.push_str(",\n  \"variable_vectors\": [\n");
        out.push_str(&var.join(",\n"));
        out.push_str("\n  ]");
    }
    out.push_str("\n}\n");
    Some(out)
}

/// With a `[framing] checksum`, the record header's vector (which announces the first
/// fixed-size record, see [`Gen::special`]) carries the CRC of that record: the header's bytes
/// (without the CRC field, when the CRC covers them) and the first record's vector bytes, so that
/// the two vectors are a valid record. The CRC field was walked as 0; its value and bytes are
/// written here.
fn seal(schema: &Schema, id: TypeId, values: &mut String, bytes: &mut [u8]) {
    let Some(fr) = schema.framing.as_ref().filter(|f| f.header == id) else { return };
    let Some(c) = fr.checksum else { return };
    let Some(first) = schema.records.iter().find(|r| schema.strukt(r.body).size.is_some()) else { return };
    let mut g = Gen::new(schema, first.body.0 as u64 * 1000);
    g.fields(schema.strukt(first.body), Some(first.body));
    let f = &schema.strukt(id).fields[c.field];
    let (at, n) = (f.offset.unwrap_or(0) as usize, (c.algorithm.params().width / 8) as usize);
    let covered: Vec<&[u8]> = match c.over {
        logspec_ir::ir::ChecksumSpan::Record => vec![&bytes[..at], &bytes[at + n..], &g.bytes],
        logspec_ir::ir::ChecksumSpan::Payload => vec![&g.bytes],
    };
    let v = crc(c.algorithm.params(), &covered);
    for i in 0..n {
        let shift = match f.endian {
            Endian::Little => 8 * i,
            Endian::Big => 8 * (n - 1 - i),
        };
        bytes[at + i] = (v >> shift) as u8;
    }
    *values = values.replace(&format!("{}: 0", json_string(&f.name)), &format!("{}: {v}", json_string(&f.name)));
}

/// A CRC computed as the Rocksoft model states it, one bit at a time with the input bytes
/// reflected (not the reflected-register form the runtime, C and Python use), so that the golden
/// CRC is an independent computation of the catalogue's parameters.
fn crc(p: logspec_ir::ir::CrcParams, parts: &[&[u8]]) -> u32 {
    let w = p.width;
    let (top, mask) = (1u64 << (w - 1), (1u64 << w) - 1);
    let mut reg = u64::from(p.init);
    for b in parts.iter().flat_map(|x| x.iter()) {
        let b = if p.reflect { b.reverse_bits() } else { *b };
        reg ^= u64::from(b) << (w - 8);
        for _ in 0..8 {
            reg = if reg & top != 0 { (reg << 1) ^ u64::from(p.poly) } else { reg << 1 } & mask;
        }
    }
    let reg = reg as u32;
    let reg = if p.reflect { reg.reverse_bits() >> (32 - w) } else { reg };
    reg ^ p.xorout
}

/// The vectors of variable-size structs and of by-name union variants, as JSON object texts.
fn variable(schema: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for id in covered_variable(schema) {
        let s = schema.strukt(id);
        let mut used = std::collections::BTreeSet::new();
        // A struct with variable-width integers gets one vector per byte count of its widest one,
        // so that every width of every such integer appears.
        let widths = s
            .fields
            .iter()
            .map(|f| if let Ty::VarInt { width, .. } = &f.ty { width.max_bytes() } else { 1 })
            .max()
            .unwrap_or(1);
        for k in 0..64u64 {
            let mut g = Gen::new(schema, id.0 as u64 * 1000 + k * 100);
            g.round = k;
            g.used = std::mem::take(&mut used);
            let values = g.fields(s, Some(id));
            used = std::mem::take(&mut g.used);
            let mut text = format!("    {{\"struct\": {}", json_string(&s.name));
            if let Some(r) = schema.record_for(id) {
                let _ = write!(text, ", \"record\": {}, \"id\": {}", json_string(&r.name), r.id);
            }
            let _ = write!(
                text,
                ", \"size\": {},\n     \"values\": {values},\n     \"bytes\": {}}}",
                g.bytes.len(),
                json_hex(&g.bytes)
            );
            out.push(text);
            if !unused_below(schema, &Ty::Named(id), &used) && k + 1 >= u64::from(widths) {
                break;
            }
        }
    }
    for (i, t) in schema.types.iter().enumerate() {
        let TypeDef::Union(u) = t else { continue };
        if !u.by_name {
            continue;
        }
        for v in &u.variants {
            if !v.fields.iter().all(|f| walkable(schema, &f.ty)) {
                continue;
            }
            let select = match &v.select {
                Some(NameMatch::Exact(names)) => names.first().cloned().unwrap_or_default(),
                Some(NameMatch::Prefix(p)) => format!("{p}Pose2d"),
                Some(NameMatch::Default) | None => "other".to_string(),
            };
            let s =
                Struct { name: v.name.clone(), doc: None, endian: u.endian, fields: v.fields.clone(), size: v.size };
            let mut g = Gen::new(schema, i as u64 * 1000 + v.tag as u64 * 10);
            let values = g.fields(&s, None);
            out.push(format!(
                "    {{\"union\": {}, \"variant\": {}, \"select\": {}, \"size\": {},\n     \"values\": {values},\n     \"bytes\": {}}}",
                json_string(&u.name),
                json_string(&v.name),
                json_string(&select),
                g.bytes.len(),
                json_hex(&g.bytes)
            ));
        }
    }
    out
}

/// Whether a type reaches a union variant that no vector has used yet.
fn unused_below(schema: &Schema, ty: &Ty, used: &std::collections::BTreeSet<(usize, usize)>) -> bool {
    match ty {
        Ty::Array { elem, .. } => unused_below(schema, elem, used),
        Ty::Named(id) => match schema.ty(*id) {
            TypeDef::Struct(s) => s.fields.iter().any(|f| unused_below(schema, &f.ty, used)),
            _ => false,
        },
        Ty::Union { id, .. } => {
            match schema.ty(*id) {
                TypeDef::Union(u) => u.variants.iter().enumerate().any(|(i, v)| {
                    !used.contains(&(id.0, i)) || v.fields.iter().any(|f| unused_below(schema, &f.ty, used))
                }),
                _ => false,
            }
        }
        _ => false,
    }
}

struct Gen<'a> {
    schema: &'a Schema,
    /// Advances once per scalar, so that every scalar gets its own value.
    counter: u64,
    bytes: Vec<u8>,
    /// Union variants (type index, variant index) that earlier vectors of a struct chose.
    used: std::collections::BTreeSet<(usize, usize)>,
    /// Which vector of its struct this is: picks the byte counts of variable-width integers.
    round: u64,
}

impl<'a> Gen<'a> {
    fn new(schema: &'a Schema, counter: u64) -> Self {
        Gen { schema, counter, bytes: Vec::new(), used: Default::default(), round: 0 }
    }

    /// The variant a union field takes: the first one no vector used yet, else one that reaches an
    /// unused variant further down, else the first.
    fn choose(&mut self, id: TypeId) -> usize {
        let TypeDef::Union(u) = self.schema.ty(id) else { return 0 };
        let pick = (0..u.variants.len())
            .find(|&i| !self.used.contains(&(id.0, i)))
            .or_else(|| {
                (0..u.variants.len())
                    .find(|&i| u.variants[i].fields.iter().any(|f| unused_below(self.schema, &f.ty, &self.used)))
            })
            .unwrap_or(0);
        self.used.insert((id.0, pick));
        pick
    }

    /// A struct's fields as a JSON object (padding omitted), appending their bytes.
    fn fields(&mut self, s: &Struct, id: Option<TypeId>) -> String {
        // A union's tag field comes before it: choose the variants first, so the tags are known.
        let mut tags: Vec<Option<i128>> = vec![None; s.fields.len()];
        let mut chosen: Vec<Option<usize>> = vec![None; s.fields.len()];
        for (i, f) in s.fields.iter().enumerate() {
            if let Ty::Union { id: uid, tag_field } = &f.ty {
                let k = self.choose(*uid);
                if let TypeDef::Union(u) = self.schema.ty(*uid) {
                    tags[*tag_field] = Some(u.variants[k].tag);
                }
                chosen[i] = Some(k);
            }
        }
        // A variable-width integer's byte count: chosen per vector (all of them across the
        // struct's vectors), written into its width field's bits; the value fills those bytes.
        let mut counts: Vec<Option<u32>> = vec![None; s.fields.len()];
        for (i, f) in s.fields.iter().enumerate() {
            if let Ty::VarInt { width, .. } = &f.ty {
                let n = 1 + ((self.round + i as u64) % u64::from(width.max_bytes())) as u32;
                counts[i] = Some(n);
                let w = tags[width.field].get_or_insert(0);
                *w |= i128::from(n - 1) << width.lo;
            }
        }
        let mut parts = Vec::new();
        for (i, f) in s.fields.iter().enumerate() {
            let v = match (self.special(id, i), tags[i], &f.ty, chosen[i]) {
                (Some(v), ..) => self.int(v, prim_of(self.schema, &f.ty), f.endian),
                (None, None, Ty::VarInt { prim, .. }, _) => self.varint(*prim, counts[i].unwrap_or(1), f.endian),
                (None, Some(t), ..) => self.int(t as u64, prim_of(self.schema, &f.ty), f.endian),
                (None, None, Ty::Union { id: uid, .. }, Some(k)) => {
                    let TypeDef::Union(u) = self.schema.ty(*uid) else { continue };
                    let var = &u.variants[k];
                    let body = Struct {
                        name: var.name.clone(),
                        doc: None,
                        endian: u.endian,
                        fields: var.fields.clone(),
                        size: var.size,
                    };
                    let inner = self.fields(&body, None);
                    format!("{{\"variant\": {}, \"fields\": {inner}}}", json_string(&var.name))
                }
                _ => self.field(f),
            };
            if !f.is_padding() {
                parts.push(format!("{}: {v}", json_string(&f.name)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }

    /// Values fixed by the format rather than chosen: the schema id in the file header, and the
    /// tag and length of the record header (the first record and its size), and its CRC (see
    /// [`seal`]).
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
        } else if framing.checksum.is_some_and(|c| c.field == field) {
            // Written by `seal` once the header's other bytes are known.
            Some(0)
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
            Ty::Bytes(len) => {
                self.counter += 1;
                let b: Vec<u8> = (0..1 + self.counter % 4).map(|i| (self.counter * 7 + i * 31 + 2) as u8).collect();
                self.prefix(len, b.len() as u64, endian);
                self.bytes.extend_from_slice(&b);
                json_hex(&b)
            }
            Ty::Str(len) => {
                self.counter += 1;
                // A two-byte character, so that a length in bytes and one in characters differ.
                let text = format!("s{}\u{e9}", self.counter);
                // Under `string_nul`, a counted string's length counts its terminating NUL.
                let nul = self.schema.format.rules.string_nul && len.prefix().is_some();
                self.prefix(len, text.len() as u64 + u64::from(nul), endian);
                self.bytes.extend_from_slice(text.as_bytes());
                if nul {
                    self.bytes.push(0);
                }
                json_string(&text)
            }
            Ty::Array { elem, len } => {
                self.counter += 1;
                let n = 1 + self.counter % 3;
                let items: Vec<String> = match (len, self.schema.size_of(elem)) {
                    (Len::Size(p), None) => {
                        // Elements of a variable size: the prefix is their encoded bytes.
                        let at = self.bytes.len();
                        let items = (0..n).map(|_| self.value(elem, endian)).collect();
                        let body = self.bytes.split_off(at);
                        self.int(body.len() as u64, *p, endian);
                        self.bytes.extend_from_slice(&body);
                        items
                    }
                    (_, size) => {
                        let size = size.map_or(0, u64::from);
                        self.prefix(len, if matches!(len, Len::Size(_)) { n * size } else { n }, endian);
                        (0..n).map(|_| self.value(elem, endian)).collect()
                    }
                };
                format!("[{}]", items.join(", "))
            }
            // Unions are chosen by `fields`, which knows their tag fields.
            _ => "null".into(),
        }
    }

    /// The length prefix of a variable-size sequence, if it has one.
    fn prefix(&mut self, len: &Len, n: u64, endian: Endian) {
        if let Some(p) = len.prefix() {
            self.int(n, p, endian);
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

    /// A variable-width integer of type `p` in `n` bytes: a different non-zero byte at every
    /// position; at the type's full width a signed value is negative (only there can it be, the
    /// wire being zero-extended).
    fn varint(&mut self, p: Prim, n: u32, endian: Endian) -> String {
        self.counter += 1;
        let c = self.counter;
        let mut v = 0u64;
        for i in 0..u64::from(n) {
            let mut b = (c * 5 + i * 37 + 1) % 0x7f + 1;
            if i + 1 == u64::from(n) && n == p.size() && p.is_signed() {
                b |= 0x80;
            }
            v |= b << (8 * i);
        }
        let le = v.to_le_bytes();
        self.put(&le[..n as usize], endian);
        if p.is_signed() && n == p.size() {
            let shift = 64 - 8 * n;
            (((v << shift) as i64) >> shift).to_string()
        } else {
            v.to_string()
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

    /// Appends a number (its little-endian bytes `le`) in byte order `endian`; under natural
    /// alignment, after the zero bytes that put it at a multiple of its size from the start of
    /// the vector's value.
    fn put(&mut self, le: &[u8], endian: Endian) {
        let w = le.len();
        if self.schema.format.rules.natural_align && w > 1 {
            let pad = (w - self.bytes.len() % w) % w;
            self.bytes.resize(self.bytes.len() + pad, 0);
        }
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
