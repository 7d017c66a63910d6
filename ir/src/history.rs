//! Older layouts from the lock history: a [`Schema`] rebuilt from every locked entry whose schema
//! id is not the schema's own, so that generated readers decode files written under older ids.
//!
//! A lock entry holds each record's fields as `name: <canonical type> @offset` (see
//! [`crate::fingerprint`]). The canonical type spells out the whole wire layout (nested structs
//! expanded, enum values, length rules), so it can be parsed back into IR types. Named types get
//! the name of the current schema's type with the same layout when there is one (so `ActSrc` stays
//! `ActSrc`), else `<Record><Field>`. Every rebuilt record is checked against its lock entry (field
//! lines, size and fingerprint), so a hand-edited or corrupt lock fails loudly instead of decoding
//! wrongly.
//!
//! The lock keeps records only: the file header and the record framing are the current schema's.
//! They are how a reader finds the schema id in the first place, so changing them needs a new
//! format (a new magic), not a schema-id bump.

use std::collections::HashMap;

use crate::fingerprint;
use crate::ir::{
    ConstValue, Endian, Enum, EnumValue, Field, Flag, Flags, Framing, Len, Prim, Record, Schema, Struct, Ty, TypeDef,
    TypeId, Union, Variant,
};
use crate::layout;
use crate::lock::{self, Lock, LockedSchema};
use crate::lower::camel_case;

/// The schemas of every locked entry older or newer than the schema's own id, by ascending id.
pub fn history(current: &Schema, lock: &Lock) -> Result<Vec<Schema>, String> {
    let own = current.format.schema_id.as_ref().map(|s| s.value);
    if own.is_none() {
        return Ok(Vec::new());
    }
    let mut entries: Vec<&LockedSchema> = lock.schemas.iter().filter(|s| Some(s.id) != own).collect();
    entries.sort_by_key(|s| s.id);
    entries.iter().map(|e| rebuild(current, e)).collect()
}

/// The schema of one locked entry: the current format, header and framing, and the entry's records.
pub fn rebuild(current: &Schema, locked: &LockedSchema) -> Result<Schema, String> {
    let mut format = current.format.clone();
    if let Some(sid) = &mut format.schema_id {
        sid.value = locked.id;
    }
    let mut rb = Rebuild {
        cur: current,
        out: Schema {
            format,
            types: Vec::new(),
            file_header: None,
            framing: None,
            records: Vec::new(),
            params: Vec::new(),
            source: current.source.clone(),
        },
        imported: HashMap::new(),
        interned: HashMap::new(),
    };
    rb.out.file_header = current.file_header.map(|h| rb.import(h));
    for p in &current.params {
        let mut ty = p.ty.clone();
        rb.import_ty(&mut ty);
        rb.out.params.push(crate::ir::Param { ty, ..p.clone() });
    }
    if let Some(f) = &current.framing {
        let trailer = f.trailer.map(|t| rb.import(t));
        rb.out.framing = Some(Framing { header: rb.import(f.header), trailer, ..f.clone() });
    }
    let at = |name: &str| format!("schema id {}, record {name}", locked.id);
    for (i, r) in locked.records.iter().enumerate() {
        if let Some(dup) = locked.records[..i].iter().find(|o| o.id == r.id || o.name == r.name) {
            return Err(format!("{}: duplicates record {} (id {})", at(&r.name), dup.name, dup.id));
        }
        let cur_body = current.records.iter().find(|c| c.name == r.name).map(|c| current.strukt(c.body));
        let body_name = camel_case(&r.name);
        let mut fields = Vec::with_capacity(r.fields.len());
        for (j, line) in r.fields.iter().enumerate() {
            let (name, ty_text) =
                split_line(line).ok_or_else(|| format!("{}: malformed field line {line:?}", at(&r.name)))?;
            let mut p = Parser { s: ty_text, at: 0 };
            let mut f = rb
                .field(&mut p, name, j, &body_name)
                .and_then(|f| if p.at == p.s.len() { Ok(f) } else { Err(p.expected("the end of the type")) })
                .map_err(|e| format!("{}, field `{name}`: {e}", at(&r.name)))?;
            // Docs and units of an unchanged field carry over from the current schema.
            if let Some(c) = cur_body.and_then(|b| b.fields.iter().find(|c| c.name == f.name)) {
                if fingerprint::field_type(current, c) == fingerprint::field_type(&rb.out, &f) {
                    f.doc.clone_from(&c.doc);
                    f.unit.clone_from(&c.unit);
                }
            }
            fields.push(f);
        }
        let size = rb.place(&mut fields);
        let doc = current.records.iter().find(|c| c.name == r.name).and_then(|c| c.doc.clone());
        let name = rb.unique(body_name);
        let body =
            rb.push(TypeDef::Struct(Struct { name, doc: doc.clone(), endian: current.format.endian, fields, size }));
        let fingerprint = fingerprint::of_record(&rb.out, body);
        rb.out.records.push(Record { name: r.name.clone(), id: r.id, doc, body, fingerprint });
    }
    // The rebuilt layouts must be exactly the locked ones.
    let again = lock::entry(&rb.out);
    for (old, new) in locked.records.iter().zip(&again.records) {
        let at = at(&old.name);
        if let Some((a, b)) = old.fields.iter().zip(&new.fields).find(|(a, b)| a != b) {
            return Err(format!("{at}: the field line {a:?} reads back as {b:?}; the lock file was edited by hand"));
        }
        if old.size != new.size {
            return Err(format!("{at}: locked size {:?} but the fields add up to {:?}", old.size, new.size));
        }
        if old.fingerprint != new.fingerprint {
            return Err(format!(
                "{at}: locked fingerprint {} but the fields hash to {}; the lock file was edited by hand",
                old.fingerprint, new.fingerprint
            ));
        }
    }
    Ok(rb.out)
}

/// `name: type @offset` -> (`name`, `type`); the offset is checked after the rebuild.
fn split_line(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.split_once(": ")?;
    let (ty, _) = rest.rsplit_once(" @")?;
    Some((name, ty))
}

struct Rebuild<'a> {
    cur: &'a Schema,
    out: Schema,
    /// Current type index -> rebuilt type id (the header and framing types).
    imported: HashMap<usize, TypeId>,
    /// Canonical text -> rebuilt type id, so one layout is one type.
    interned: HashMap<String, TypeId>,
}

impl Rebuild<'_> {
    fn push(&mut self, def: TypeDef) -> TypeId {
        self.out.types.push(def);
        TypeId(self.out.types.len() - 1)
    }

    fn import(&mut self, id: TypeId) -> TypeId {
        if let Some(&n) = self.imported.get(&id.0) {
            return n;
        }
        let mut def = self.cur.ty(id).clone();
        match &mut def {
            TypeDef::Struct(s) => s.fields.iter_mut().for_each(|f| self.import_ty(&mut f.ty)),
            TypeDef::Union(u) => {
                u.variants.iter_mut().flat_map(|v| v.fields.iter_mut()).for_each(|f| self.import_ty(&mut f.ty))
            }
            TypeDef::Enum(_) | TypeDef::Flags(_) | TypeDef::Extern(_) => {}
        }
        let n = self.push(def);
        self.imported.insert(id.0, n);
        n
    }

    fn import_ty(&mut self, ty: &mut Ty) {
        match ty {
            Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => *id = self.import(*id),
            Ty::Array { elem, .. } => self.import_ty(elem),
            _ => {}
        }
    }

    fn place(&self, fields: &mut [Field]) -> Option<u32> {
        layout::place_fields(self.out.format.rules, &|id| layout::size_of(&self.out, &Ty::Named(id)), fields)
    }

    fn unique(&self, base: String) -> String {
        let taken = |n: &str| self.out.types.iter().any(|t| t.name() == n);
        if !taken(&base) {
            return base;
        }
        (2..).map(|i| format!("{base}{i}")).find(|n| !taken(n)).unwrap_or(base)
    }

    /// The rebuilt type for a parsed named type: one per layout, named after the current type with
    /// the same layout when there is one.
    fn intern(&mut self, mut def: TypeDef, ty: impl Fn(TypeId) -> Ty, endian: Endian, fallback: String) -> Ty {
        let text = |schema: &Schema, id| fingerprint::type_text(schema, &ty(id), endian);
        let probe = TypeId(self.out.types.len());
        self.out.types.push(def.clone());
        let key = text(&self.out, probe);
        self.out.types.pop();
        if let Some(&id) = self.interned.get(&key) {
            return ty(id);
        }
        let same_kind = |a: &TypeDef, b: &TypeDef| std::mem::discriminant(a) == std::mem::discriminant(b);
        let twin = (0..self.cur.types.len())
            .map(TypeId)
            .find(|&id| same_kind(self.cur.ty(id), &def) && text(self.cur, id) == key)
            .map(|id| self.cur.ty(id));
        let (name, doc) = match twin {
            Some(t) if !self.out.types.iter().any(|x| x.name() == t.name()) => {
                (t.name().to_string(), t.doc().map(str::to_string))
            }
            _ => (self.unique(fallback), None),
        };
        match &mut def {
            TypeDef::Struct(s) => (s.name, s.doc) = (name, doc),
            TypeDef::Enum(e) => (e.name, e.doc) = (name, doc),
            TypeDef::Flags(f) => (f.name, f.doc) = (name, doc),
            TypeDef::Union(u) => (u.name, u.doc) = (name, doc),
            TypeDef::Extern(_) => {}
        }
        let id = self.push(def);
        self.interned.insert(key, id);
        ty(id)
    }

    /// One field: its type, then an optional const value.
    fn field(&mut self, p: &mut Parser<'_>, name: &str, index: usize, owner: &str) -> Result<Field, String> {
        let pad = name == "_";
        let mut endian = None;
        let synth = format!("{owner}{}", camel_case(name));
        let ty = self.ty(p, &mut endian, &synth)?;
        let value = if p.eat("=") { Some(p.const_value()?) } else { None };
        if pad && !matches!(ty, Ty::Pad(_)) {
            return Err("only padding may be named `_`".to_string());
        }
        Ok(Field {
            name: if pad { format!("_pad{index}") } else { name.to_string() },
            ty,
            endian: endian.unwrap_or(self.cur.format.endian),
            doc: None,
            unit: None,
            value,
            offset: None,
        })
    }

    /// `{name:type;...}`: the fields of a struct or a union variant.
    fn fields(&mut self, p: &mut Parser<'_>, owner: &str) -> Result<Vec<Field>, String> {
        p.expect("{")?;
        let mut out = Vec::new();
        if p.eat("}") {
            return Ok(out);
        }
        loop {
            let name = p.word();
            if name.is_empty() {
                return Err(p.expected("a field name"));
            }
            p.expect(":")?;
            out.push(self.field(p, name, out.len(), owner)?);
            if p.eat("}") {
                return Ok(out);
            }
            p.expect(";")?;
        }
    }

    fn ty(&mut self, p: &mut Parser<'_>, endian: &mut Option<Endian>, synth: &str) -> Result<Ty, String> {
        if p.peek() == Some('{') {
            let mut fields = self.fields(p, synth)?;
            let size = self.place(&mut fields);
            let e = endian.unwrap_or(self.cur.format.endian);
            let def = TypeDef::Struct(Struct { name: String::new(), doc: None, endian: e, fields, size });
            return Ok(self.intern(def, Ty::Named, e, synth.to_string()));
        }
        let at = p.at;
        let word = p.word();
        Ok(match word {
            "bool" => Ty::Bool,
            "bytes" => Ty::Bytes(p.len(endian)?),
            "string" => Ty::Str(p.len(endian)?),
            "array" => {
                let len = p.len(endian)?;
                p.expect("(")?;
                let elem = self.ty(p, endian, synth)?;
                p.expect(")")?;
                Ty::Array { elem: Box::new(elem), len }
            }
            "enum" | "flags" => {
                p.expect(" ")?;
                let base = p.prim(endian)?;
                if !base.is_unsigned() && (word == "flags" || base.is_float()) {
                    return Err(format!("{word} over {base} is not allowed"));
                }
                p.expect("{")?;
                let mut items = Vec::new();
                while !p.eat("}") {
                    if !items.is_empty() {
                        p.expect(",")?;
                    }
                    let name = p.word();
                    if name.is_empty() {
                        return Err(p.expected("a name"));
                    }
                    p.expect("=")?;
                    items.push((name.to_string(), p.int()?));
                }
                let e = endian.unwrap_or(self.cur.format.endian);
                let def = if word == "enum" {
                    let values = items.into_iter().map(|(name, value)| EnumValue { name, value, doc: None }).collect();
                    TypeDef::Enum(Enum { name: String::new(), doc: None, base, values })
                } else {
                    let flags = items
                        .into_iter()
                        .map(|(name, bit)| {
                            let bit = u32::try_from(bit).map_err(|_| format!("flag bit {bit} is out of range"))?;
                            Ok(Flag { name, bit, doc: None })
                        })
                        .collect::<Result<_, String>>()?;
                    TypeDef::Flags(Flags { name: String::new(), doc: None, base, flags, fields: Vec::new() })
                };
                self.intern(def, Ty::Named, e, synth.to_string())
            }
            "union" => {
                let tag_field = if p.eat("@") { Some(p.uint()? as usize) } else { None };
                // `union$<parameter>`: selected by a reader parameter of the current schema.
                let param = if tag_field.is_none() && p.eat("$") {
                    let name = p.word();
                    let i = self.cur.params.iter().position(|q| q.name == name);
                    Some(i.ok_or_else(|| format!("unknown reader parameter `{name}`"))?)
                } else {
                    None
                };
                p.expect("{")?;
                let mut variants = Vec::new();
                while !p.eat("}") {
                    if !variants.is_empty() {
                        p.expect(",")?;
                    }
                    let name = p.word().to_string();
                    p.expect("=")?;
                    let tag = p.int()?;
                    p.expect(":")?;
                    let mut fields = self.fields(p, &format!("{synth}{}", camel_case(&name)))?;
                    let size = self.place(&mut fields);
                    variants.push(Variant { name, tag, select: None, doc: None, fields, size });
                }
                let e = endian.unwrap_or(self.cur.format.endian);
                let def = TypeDef::Union(Union { name: String::new(), doc: None, endian: e, variants, by_name: false });
                match (tag_field, param) {
                    (Some(t), _) => self.intern(def, |id| Ty::Union { id, tag_field: t }, e, synth.to_string()),
                    (None, Some(param)) => self.intern(def, |id| Ty::ParamUnion { id, param }, e, synth.to_string()),
                    (None, None) => self.intern(def, Ty::Named, e, synth.to_string()),
                }
            }
            "varint" => {
                // `varint u32le@<width field>[lo..hi]`.
                p.expect(" ")?;
                let prim = p.prim(endian)?;
                p.expect("@")?;
                let field = p.uint()? as usize;
                p.expect("[")?;
                let lo = p.uint()?;
                p.expect("..")?;
                let hi = p.uint()?;
                p.expect("]")?;
                let (lo, bits) = match (u8::try_from(lo), hi.checked_sub(lo).and_then(|b| u8::try_from(b).ok())) {
                    (Ok(lo), Some(bits)) if bits > 0 && bits <= 3 => (lo, bits),
                    _ => return Err(format!("bad width bit range {lo}..{hi}")),
                };
                Ty::VarInt { prim, width: crate::ir::Width { field, lo, bits } }
            }
            "extern" => return Err("types outside the schema (`extern`) cannot be rebuilt from a lock".to_string()),
            w => {
                if let Some(n) = w.strip_prefix("pad").filter(|n| !n.is_empty()) {
                    Ty::Pad(n.parse().map_err(|_| format!("bad padding width `{w}`"))?)
                } else {
                    p.at = at;
                    Ty::Prim(p.prim(endian)?)
                }
            }
        })
    }
}

/// A cursor over one canonical type text.
struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.s[self.at..].chars().next()
    }

    fn eat(&mut self, lit: &str) -> bool {
        let hit = self.s[self.at..].starts_with(lit);
        if hit {
            self.at += lit.len();
        }
        hit
    }

    fn expected(&self, what: &str) -> String {
        let found = match self.s[self.at..].chars().next() {
            Some(c) => format!("`{c}`"),
            None => "the end".to_string(),
        };
        format!("in `{}` at column {}: expected {what}, found {found}", self.s, self.at + 1)
    }

    fn expect(&mut self, lit: &str) -> Result<(), String> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{lit}`")))
        }
    }

    fn word(&mut self) -> &'a str {
        let rest = &self.s[self.at..];
        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        self.at += n;
        &rest[..n]
    }

    fn uint(&mut self) -> Result<u64, String> {
        let rest = &self.s[self.at..];
        let n = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let v = rest[..n].parse().map_err(|_| self.expected("a number"))?;
        self.at += n;
        Ok(v)
    }

    fn int(&mut self) -> Result<i128, String> {
        let neg = self.eat("-");
        let v = i128::from(self.uint()?);
        Ok(if neg { -v } else { v })
    }

    /// A number type with its byte order suffix (`u16le`; none for one-byte types), recording the
    /// order as the field's.
    fn prim(&mut self, endian: &mut Option<Endian>) -> Result<Prim, String> {
        let start = self.at;
        let w = self.word();
        let (name, order) = match w.len().checked_sub(2).map(|i| w.split_at(i)) {
            Some((n, "le")) => (n, Some(Endian::Little)),
            Some((n, "be")) => (n, Some(Endian::Big)),
            _ => (w, None),
        };
        let Some(p) = Prim::from_name(name) else {
            self.at = start;
            return Err(self.expected("a type"));
        };
        if let Some(o) = order {
            if endian.is_some_and(|e| e != o) {
                self.at = start;
                return Err(self.expected("one byte order per field"));
            }
            *endian = Some(o);
        }
        Ok(p)
    }

    /// `[N]`, `[count u16le]`, `[size u32le]` or `[rest]`.
    fn len(&mut self, endian: &mut Option<Endian>) -> Result<Len, String> {
        self.expect("[")?;
        let len = if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            Len::Fixed(u32::try_from(self.uint()?).map_err(|_| self.expected("a length below 2^32"))?)
        } else {
            match self.word() {
                "rest" => Len::Rest,
                w @ ("count" | "size") => {
                    self.expect(" ")?;
                    let p = self.prim(endian)?;
                    if !p.is_unsigned() {
                        return Err(self.expected("an unsigned length prefix"));
                    }
                    if w == "count" {
                        Len::Count(p)
                    } else {
                        Len::Size(p)
                    }
                }
                _ => return Err(self.expected("a length")),
            }
        };
        self.expect("]")?;
        Ok(len)
    }

    /// `=` already eaten: an integer, or `0x` and hex bytes.
    fn const_value(&mut self) -> Result<ConstValue, String> {
        if self.eat("0x") {
            let hex = self.word();
            if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(self.expected("hex byte pairs"));
            }
            let bytes = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0));
            Ok(ConstValue::Bytes(bytes.collect()))
        } else {
            Ok(ConstValue::Int(self.int()?))
        }
    }
}
