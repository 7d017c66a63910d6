//! The TOML front end's second stage: resolves names and types in the spanned model, validates
//! everything, and builds the immutable [`ir::Schema`].
//!
//! Every check reports a [`Diagnostic`] and carries on, so that one run shows all problems.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{self, ConstValue, Endian, Len, Prim, Ty, TypeDef, TypeId};
use crate::layout;
use crate::schema::{
    ConstDecl, EnumDecl, FieldDecl, FlagsDecl, RecordDecl, SchemaFile, Sp, Span, StructDecl, UnionDecl,
};

/// Lowers a parsed schema file into the IR, or returns every problem found.
pub fn lower(file: &SchemaFile, source_name: Option<&str>) -> Result<ir::Schema, Vec<Diagnostic>> {
    let mut cx = Cx::default();
    let schema = cx.run(file, source_name);
    if cx.diags.is_empty() {
        Ok(schema.expect("a schema is built whenever no diagnostic was reported"))
    } else {
        cx.diags.sort_by_key(|d| (d.span.start, d.code));
        Err(cx.diags)
    }
}

/// What a declared name refers to before its body is lowered.
#[derive(Clone, Copy, Debug)]
enum Decl<'a> {
    Struct(&'a StructDecl),
    Record(&'a RecordDecl),
    Enum(&'a EnumDecl),
    Flags(&'a FlagsDecl),
    Union(&'a UnionDecl),
}

#[derive(Default)]
struct Cx {
    diags: Vec<Diagnostic>,
}

impl Cx {
    fn err(&mut self, code: Code, span: &Span, msg: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(Diagnostic::new(code, span.clone(), msg));
        self.diags.last_mut().expect("just pushed")
    }

    fn run(&mut self, file: &SchemaFile, source_name: Option<&str>) -> Option<ir::Schema> {
        let format = file.format.as_ref();
        let default_endian = format
            .and_then(|f| f.endian.as_ref())
            .map(|e| self.endian(e))
            .unwrap_or(Endian::Little);
        if let Some(f) = format {
            if !is_ident(&f.name.value) || f.name.value.chars().any(|c| c.is_ascii_uppercase()) {
                self.err(Code::BadName, &f.name.span, format!("format name `{}` is not a lowercase identifier", f.name.value))
                    .help = Some("use lowercase letters, digits and `_`, e.g. `usvlog`".into());
            }
        }

        // Declare every named type first so that fields can refer to types declared later.
        let mut decls: Vec<(String, Span, Decl<'_>)> = Vec::new();
        if let Some(h) = &file.file_header {
            decls.push((name_or(&h.name, "FileHeader"), h.name.span.clone(), Decl::Struct(h)));
        }
        if let Some(fr) = &file.framing {
            decls.push((name_or(&fr.body.name, "RecordHeader"), fr.body.name.span.clone(), Decl::Struct(&fr.body)));
        }
        decls.extend(file.structs.iter().map(|s| (s.name.value.clone(), s.name.span.clone(), Decl::Struct(s))));
        decls.extend(file.enums.iter().map(|e| (e.name.value.clone(), e.name.span.clone(), Decl::Enum(e))));
        decls.extend(file.flags.iter().map(|f| (f.name.value.clone(), f.name.span.clone(), Decl::Flags(f))));
        decls.extend(file.unions.iter().map(|u| (u.name.value.clone(), u.name.span.clone(), Decl::Union(u))));
        decls.extend(file.records.iter().map(|r| (camel_case(&r.name.value), r.name.span.clone(), Decl::Record(r))));

        let mut names: BTreeMap<String, TypeId> = BTreeMap::new();
        for (i, (name, span, decl)) in decls.iter().enumerate() {
            let is_record = matches!(decl, Decl::Record(_));
            let shown = match decl {
                Decl::Record(r) => r.name.value.clone(),
                _ => name.clone(),
            };
            if !is_ident(&shown) {
                self.err(Code::BadName, span, format!("`{shown}` is not a valid identifier"))
                    .help = Some("names start with a letter or `_` and contain only letters, digits and `_`".into());
                continue;
            }
            if !is_record && (Prim::from_name(name).is_some() || BUILTIN_TYPES.contains(&name.as_str())) {
                self.err(Code::DuplicateName, span, format!("type name `{name}` is a built-in type"));
                continue;
            }
            if let Some(prev) = names.get(name) {
                let prev_span = decls[prev.0].1.clone();
                let (pl, _) = (prev_span.start, ());
                let _ = pl;
                self.err(Code::DuplicateName, span, format!("the name `{name}` is defined more than once"))
                    .label = Some(if is_record {
                    format!("record `{shown}` would be the Rust type `{name}`, which is already taken")
                } else {
                    "defined again here".to_string()
                });
                continue;
            }
            names.insert(name.clone(), TypeId(i));
        }

        // Lower every type body. Struct sizes depend on each other, so they are computed after.
        let mut types: Vec<TypeDef> = Vec::with_capacity(decls.len());
        for (name, _, decl) in &decls {
            let def = match decl {
                Decl::Struct(s) => TypeDef::Struct(self.strukt(name, s.doc.as_ref(), s.endian.as_ref(), &s.fields, default_endian, &names, &decls, false)),
                Decl::Record(r) => TypeDef::Struct(self.strukt(name, r.doc.as_ref(), r.endian.as_ref(), &r.fields, default_endian, &names, &decls, true)),
                Decl::Enum(e) => self.enumeration(e),
                Decl::Flags(f) => self.flags(f),
                Decl::Union(u) => self.union(u, default_endian, &names, &decls),
            };
            types.push(def);
        }
        self.check_unions(&types, &decls);
        self.compute_sizes(&mut types, &decls);

        let mut schema = ir::Schema {
            format: ir::Format {
                name: format.map(|f| f.name.value.clone()).unwrap_or_default(),
                title: format.and_then(|f| f.title.as_ref()).map(|s| s.value.clone()),
                doc: format.and_then(|f| f.doc.as_ref()).map(|s| s.value.clone()),
                endian: default_endian,
                version: format.and_then(|f| f.version.as_ref()).map(|s| s.value.clone()),
                schema_id: None,
            },
            types,
            file_header: file.file_header.as_ref().map(|_| TypeId(0)),
            framing: None,
            records: Vec::new(),
            source: source_name.map(str::to_string),
        };
        if !self.diags.is_empty() {
            // Later checks assume well-formed types and sizes.
            return None;
        }
        self.check_const_sizes(&schema, &decls);
        schema.format.schema_id = self.schema_id(file, &schema);
        schema.framing = self.framing(file, &schema);
        schema.records = self.records(file, &schema, &decls);
        Some(schema)
    }

    fn endian(&mut self, e: &Sp<String>) -> Endian {
        match e.value.as_str() {
            "little" | "le" => Endian::Little,
            "big" | "be" => Endian::Big,
            other => {
                let d = self.err(Code::BadEndian, &e.span, format!("unknown endianness `{other}`"));
                d.label = Some("expected `little` or `big`".into());
                if let Some(s) = did_you_mean(other, ["little", "big"]) {
                    d.help = Some(format!("did you mean `{s}`?"));
                }
                Endian::Little
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn strukt(
        &mut self,
        name: &str,
        doc: Option<&Sp<String>>,
        endian: Option<&Sp<String>>,
        fields: &[FieldDecl],
        default: Endian,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
        is_record: bool,
    ) -> ir::Struct {
        let endian = endian.map(|e| self.endian(e)).unwrap_or(default);
        let fields = self.fields(fields, endian, names, decls, is_record);
        ir::Struct { name: name.to_string(), doc: doc.map(|d| d.value.clone()), endian, fields, size: None }
    }

    fn fields(
        &mut self,
        decls_f: &[FieldDecl],
        endian: Endian,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
        allow_rest: bool,
    ) -> Vec<ir::Field> {
        let mut out: Vec<ir::Field> = Vec::new();
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        let mut pads = 0;
        for (i, f) in decls_f.iter().enumerate() {
            let fendian = f.endian.as_ref().map(|e| self.endian(e)).unwrap_or(endian);
            let name = match (&f.name, &f.pad) {
                (Some(n), _) => {
                    self.field_name(n);
                    if let Some(prev) = seen.get(&n.value) {
                        let _ = prev;
                        self.err(Code::DuplicateField, &n.span, format!("duplicate field name `{}`", n.value))
                            .label = Some("a field of this name is declared earlier in the same struct".into());
                    }
                    seen.insert(n.value.clone(), n.span.clone());
                    n.value.clone()
                }
                (None, _) => {
                    pads += 1;
                    format!("_pad{}", pads - 1)
                }
            };
            let ty = self.field_type(f, names, decls, &out, allow_rest && i + 1 == decls_f.len());
            let value = f.value.as_ref().and_then(|v| self.konst(v, &ty, decls));
            out.push(ir::Field {
                name,
                ty,
                endian: fendian,
                doc: f.doc.as_ref().map(|d| d.value.clone()),
                unit: f.unit.as_ref().map(|d| d.value.clone()),
                value,
                offset: None,
            });
        }
        out
    }

    fn field_name(&mut self, n: &Sp<String>) {
        if !is_ident(&n.value) {
            self.err(Code::BadName, &n.span, format!("field name `{}` is not a valid identifier", n.value));
        } else if C_KEYWORDS.contains(&n.value.as_str()) || RUST_RESERVED.contains(&n.value.as_str()) {
            self.err(Code::BadName, &n.span, format!("field name `{}` is a reserved word in C or Rust", n.value))
                .help = Some(format!("rename it, e.g. `{}_`", n.value));
        }
    }

    fn field_type(
        &mut self,
        f: &FieldDecl,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
        earlier: &[ir::Field],
        may_rest: bool,
    ) -> Ty {
        if let Some(pad) = &f.pad {
            if let Some(t) = &f.ty {
                self.err(Code::BadTypeSyntax, &t.span, "a padding entry `{ pad = N }` has no `type`");
            }
            return match u32::try_from(pad.value) {
                Ok(n) if n > 0 => Ty::Pad(n),
                _ => {
                    self.err(Code::ValueOutOfRange, &pad.span, format!("padding must be 1 or more bytes, found {}", pad.value));
                    Ty::Pad(1)
                }
            };
        }
        let Some(t) = &f.ty else { return Ty::Pad(0) };
        let inner = inner_span(&t.span);
        let expr = t.value.trim();
        // `base`, `base[N]` or `base[]`.
        let (base, suffix) = match expr.find('[') {
            None => (expr, None),
            Some(i) => {
                let rest = &expr[i..];
                if !rest.ends_with(']') || rest[1..rest.len() - 1].contains(['[', ']']) {
                    self.err(Code::BadTypeSyntax, &inner, format!("cannot parse type `{expr}`"))
                        .help = Some("write `T`, `T[N]` for N elements, or `T[]` with `count`/`size` for a prefixed sequence".into());
                    return Ty::Pad(0);
                }
                let n = rest[1..rest.len() - 1].trim();
                let suffix = if n.is_empty() {
                    Some(None)
                } else {
                    match n.parse::<u32>() {
                        Ok(n) => Some(Some(n)),
                        Err(_) => {
                            self.err(Code::BadTypeSyntax, &inner, format!("array length `{n}` is not a number"))
                                .help = Some("use a decimal element count, or `[]` with `count = \"u16\"` for a prefixed array".into());
                            return Ty::Pad(0);
                        }
                    }
                };
                (expr[..i].trim(), suffix)
            }
        };
        let len = self.length(f, suffix, base, &inner, may_rest);
        let elem = match base {
            "string" => return Ty::Str(len.unwrap_or(Len::Fixed(0))),
            "bytes" => return Ty::Bytes(len.unwrap_or(Len::Fixed(0))),
            "bool" => Ty::Bool,
            _ => match Prim::from_name(base) {
                Some(p) => Ty::Prim(p),
                None => match names.get(base) {
                    Some(id) => match decls[id.0].2 {
                        Decl::Union(_) => {
                            let tag_field = self.union_tag(f, earlier);
                            Ty::Union { id: *id, tag_field: tag_field.unwrap_or(0) }
                        }
                        Decl::Record(_) => {
                            self.err(Code::UnknownType, &inner, format!("`{base}` is a record, not a type"))
                                .help = Some("declare the shared layout as a `[[struct]]` and use it in both places".into());
                            Ty::Pad(0)
                        }
                        _ => Ty::Named(*id),
                    },
                    None => {
                        let candidates = Prim::ALL
                            .iter()
                            .map(|p| p.name())
                            .chain(BUILTIN_TYPES.iter().copied())
                            .chain(names.keys().map(String::as_str));
                        let hint = did_you_mean(base, candidates).map(str::to_string);
                        let d = self.err(Code::UnknownType, &inner, format!("unknown type `{base}`"));
                        d.label = Some("not a built-in or declared type".into());
                        d.help = Some(match hint {
                            Some(h) => format!("did you mean `{h}`?"),
                            None => "built-in types: u8..u64, i8..i64, f32, f64, bool, string, bytes; or declare a [[struct]], [[enum]], [[flags]] or [[union]]".into(),
                        });
                        Ty::Pad(0)
                    }
                },
            },
        };
        if f.tag.is_some() && !matches!(elem, Ty::Union { .. }) {
            let span = &f.tag.as_ref().expect("checked").span;
            self.err(Code::BadUnionTag, span, "`tag` is only allowed on a field whose type is a union");
        }
        match (suffix, len) {
            (None, _) => elem,
            (Some(_), Some(len)) => {
                if matches!(elem, Ty::Union { .. }) {
                    self.err(Code::BadTypeSyntax, &inner, "an array of unions is not supported; wrap the union in a struct with its tag");
                }
                Ty::Array { elem: Box::new(elem), len }
            }
            (Some(_), None) => elem,
        }
    }

    /// Works out the `Len` of a sequence type from its `[N]`/`[]` suffix and `count`/`size` keys.
    fn length(&mut self, f: &FieldDecl, suffix: Option<Option<u32>>, base: &str, inner: &Span, may_rest: bool) -> Option<Len> {
        let sequence = suffix.is_some() || base == "string" || base == "bytes";
        if !sequence {
            for k in [&f.count, &f.size].into_iter().flatten() {
                self.err(Code::BadLength, &k.span, format!("`count`/`size` only apply to `string`, `bytes` and arrays, not `{base}`"));
            }
            return None;
        }
        if let Some(Some(n)) = suffix {
            for k in [&f.count, &f.size].into_iter().flatten() {
                self.err(Code::BadLength, &k.span, format!("a fixed-length `[{n}]` takes no `count` or `size`"));
            }
            return Some(Len::Fixed(n));
        }
        if matches!(base, "string" | "bytes") && suffix.is_some() {
            self.err(Code::BadTypeSyntax, inner, format!("write `{base}` with `count`/`size`, or `{base}[N]`; `{base}[]` is ambiguous"));
        }
        match (&f.count, &f.size) {
            (Some(c), Some(s)) => {
                self.err(Code::BadLength, &s.span, "give either `count` (elements) or `size` (bytes), not both");
                let _ = c;
                None
            }
            (None, None) => {
                self.err(Code::MissingKey, inner, format!("a variable-length `{}` needs `count` or `size`", f.ty.as_ref().map_or(base, |t| t.value.as_str())))
                    .help = Some("add `count = \"u16\"` (element count prefix), `size = \"u32\"` (byte-length prefix), `count = \"rest\"` (to the end of the payload), or give a fixed length `[N]`".into());
                None
            }
            (Some(c), None) if c.value == "rest" => {
                if !may_rest {
                    self.err(Code::BadLength, &c.span, "`count = \"rest\"` is only allowed on the last field of a record")
                        .help = Some("only a record's payload has a known end (the framing's length field)".into());
                }
                Some(Len::Rest)
            }
            (Some(p), None) => self.prefix(p).map(Len::Count),
            (None, Some(p)) => self.prefix(p).map(Len::Size),
        }
    }

    fn prefix(&mut self, p: &Sp<String>) -> Option<Prim> {
        match Prim::from_name(&p.value) {
            Some(prim) if prim.is_unsigned() => Some(prim),
            _ => {
                self.err(Code::NotAnInteger, &p.span, format!("a length prefix must be u8, u16, u32 or u64, found `{}`", p.value));
                None
            }
        }
    }

    fn union_tag(&mut self, f: &FieldDecl, earlier: &[ir::Field]) -> Option<usize> {
        let Some(tag) = &f.tag else {
            let span = f.ty.as_ref().map_or(f.span.clone(), |t| t.span.clone());
            self.err(Code::BadUnionTag, &span, "a union field needs `tag`, the name of an earlier field that selects the variant")
                .help = Some("add `tag = \"<field name>\"`".into());
            return None;
        };
        match earlier.iter().position(|e| e.name == tag.value) {
            Some(i) => Some(i),
            None => {
                let hint = did_you_mean(&tag.value, earlier.iter().map(|e| e.name.as_str())).map(str::to_string);
                let d = self.err(Code::BadUnionTag, &tag.span, format!("union tag field `{}` is not an earlier field of this struct", tag.value));
                if let Some(h) = hint {
                    d.help = Some(format!("did you mean `{h}`?"));
                }
                None
            }
        }
    }

    fn konst(&mut self, v: &Sp<ConstDecl>, ty: &Ty, decls: &[(String, Span, Decl<'_>)]) -> Option<ConstValue> {
        match (&v.value, ty) {
            (ConstDecl::Int(i), Ty::Prim(p)) if !p.is_float() => {
                self.fits(*i, *p, &v.span, "const value");
                Some(ConstValue::Int(*i))
            }
            (ConstDecl::Int(i), Ty::Named(id)) if matches!(decls[id.0].2, Decl::Enum(_)) => Some(ConstValue::Int(*i)),
            (ConstDecl::Str(s), Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_)) | Ty::Str(_)) => Some(ConstValue::Bytes(s.as_bytes().to_vec())),
            _ => {
                self.err(Code::BadConst, &v.span, "this `const` does not match the field's type")
                    .help = Some("integer consts need an integer type; string consts need `bytes[N]` or `string`".into());
                None
            }
        }
    }

    fn fits(&mut self, v: i128, p: Prim, span: &Span, what: &str) -> bool {
        match p.int_range() {
            Some((lo, hi)) if v >= lo && v <= hi => true,
            Some((lo, hi)) => {
                self.err(Code::ValueOutOfRange, span, format!("{what} {v} does not fit in `{p}`"))
                    .label = Some(format!("`{p}` holds {lo}..={hi}"));
                false
            }
            None => {
                self.err(Code::NotAnInteger, span, format!("{what} needs an integer type, not `{p}`"));
                false
            }
        }
    }

    fn base(&mut self, base: &Sp<String>, unsigned: bool) -> Prim {
        match Prim::from_name(&base.value) {
            Some(p) if !p.is_float() && (!unsigned || p.is_unsigned()) => p,
            _ => {
                let want = if unsigned { "an unsigned integer type (u8..u64)" } else { "an integer type (u8..u64, i8..i64)" };
                self.err(Code::NotAnInteger, &inner_span(&base.span), format!("`base` must be {want}, found `{}`", base.value));
                Prim::U8
            }
        }
    }

    fn enumeration(&mut self, e: &EnumDecl) -> TypeDef {
        let base = self.base(&e.base, false);
        let mut values = Vec::new();
        let mut names = BTreeSet::new();
        let mut seen = BTreeMap::new();
        for v in &e.values {
            if !is_ident(&v.name.value) {
                self.err(Code::BadName, &v.name.span, format!("`{}` is not a valid identifier", v.name.value));
            }
            if !names.insert(v.name.value.clone()) {
                self.err(Code::DuplicateValue, &v.name.span, format!("enum `{}` names `{}` twice", e.name.value, v.name.value));
            }
            if let Some(prev) = seen.insert(v.value.value, v.name.value.clone()) {
                self.err(Code::DuplicateValue, &v.value.span, format!("value {} is used by both `{prev}` and `{}`", v.value.value, v.name.value));
            }
            self.fits(v.value.value, base, &v.value.span, &format!("enum value `{}` =", v.name.value));
            values.push(ir::EnumValue { name: v.name.value.clone(), value: v.value.value, doc: v.doc.as_ref().map(|d| d.value.clone()) });
        }
        TypeDef::Enum(ir::Enum { name: e.name.value.clone(), doc: e.doc.as_ref().map(|d| d.value.clone()), base, values })
    }

    fn flags(&mut self, f: &FlagsDecl) -> TypeDef {
        let base = self.base(&f.base, true);
        let mut flags = Vec::new();
        let mut names = BTreeSet::new();
        let mut bits = BTreeMap::new();
        for v in &f.flags {
            if !names.insert(v.name.value.clone()) {
                self.err(Code::DuplicateValue, &v.name.span, format!("flags `{}` names `{}` twice", f.name.value, v.name.value));
            }
            if let Some(prev) = bits.insert(v.value.value, v.name.value.clone()) {
                self.err(Code::DuplicateValue, &v.value.span, format!("bit {} is used by both `{prev}` and `{}`", v.value.value, v.name.value));
            }
            let width = i128::from(base.size() * 8);
            if v.value.value < 0 || v.value.value >= width {
                self.err(Code::FlagOutOfRange, &v.value.span, format!("bit {} is outside `{base}` (bits 0..{})", v.value.value, width - 1));
            }
            flags.push(ir::Flag { name: v.name.value.clone(), bit: v.value.value.clamp(0, 63) as u32, doc: v.doc.as_ref().map(|d| d.value.clone()) });
        }
        TypeDef::Flags(ir::Flags { name: f.name.value.clone(), doc: f.doc.as_ref().map(|d| d.value.clone()), base, flags })
    }

    fn union(&mut self, u: &UnionDecl, default: Endian, names: &BTreeMap<String, TypeId>, decls: &[(String, Span, Decl<'_>)]) -> TypeDef {
        let endian = u.endian.as_ref().map(|e| self.endian(e)).unwrap_or(default);
        let mut variants = Vec::new();
        let mut vnames = BTreeSet::new();
        let mut tags = BTreeMap::new();
        for v in &u.variants {
            if !is_ident(&v.name.value) {
                self.err(Code::BadName, &v.name.span, format!("`{}` is not a valid identifier", v.name.value));
            }
            if !vnames.insert(v.name.value.clone()) {
                self.err(Code::DuplicateName, &v.name.span, format!("union `{}` has two variants named `{}`", u.name.value, v.name.value));
            }
            if let Some(prev) = tags.insert(v.tag.value, v.name.value.clone()) {
                self.err(Code::DuplicateValue, &v.tag.span, format!("tag {} selects both `{prev}` and `{}`", v.tag.value, v.name.value));
            }
            let fields = self.fields(&v.fields, endian, names, decls, false);
            variants.push(ir::Variant { name: v.name.value.clone(), tag: v.tag.value, doc: v.doc.as_ref().map(|d| d.value.clone()), fields, size: None });
        }
        TypeDef::Union(ir::Union { name: u.name.value.clone(), doc: u.doc.as_ref().map(|d| d.value.clone()), endian, variants })
    }

    /// A union's tag field must be an integer (or enum) that can hold every variant's tag; with an
    /// enum tag, every variant's tag must be one of the enum's values.
    fn check_unions(&mut self, types: &[TypeDef], decls: &[(String, Span, Decl<'_>)]) {
        for (ti, t) in types.iter().enumerate() {
            // Each field list (a struct's, or one union variant's) is checked on its own, because a
            // tag field index counts within its own list.
            let lists: Vec<(Vec<&ir::Field>, Vec<&FieldDecl>)> = match (t, decls[ti].2) {
                (TypeDef::Struct(s), Decl::Struct(d)) => vec![(s.fields.iter().collect(), d.fields.iter().collect())],
                (TypeDef::Struct(s), Decl::Record(d)) => vec![(s.fields.iter().collect(), d.fields.iter().collect())],
                (TypeDef::Union(u), Decl::Union(d)) => u
                    .variants
                    .iter()
                    .zip(&d.variants)
                    .map(|(v, vd)| (v.fields.iter().collect(), vd.fields.iter().collect()))
                    .collect(),
                _ => continue,
            };
            for (fields, field_decls) in lists {
            for (fi, f) in fields.iter().enumerate() {
                let Ty::Union { id, tag_field } = &f.ty else { continue };
                let Some(tag_decl) = field_decls[fi].tag.as_ref() else { continue };
                let TypeDef::Union(u) = &types[id.0] else { continue };
                // The tag field is found among the same struct's earlier fields; for variants, the
                // flattened list still puts it before the union field.
                let Some(tag) = fields.get(*tag_field) else { continue };
                let (base, enum_values) = match &tag.ty {
                    Ty::Prim(p) if !p.is_float() => (*p, None),
                    Ty::Named(eid) => match &types[eid.0] {
                        TypeDef::Enum(e) => (e.base, Some(e)),
                        _ => {
                            self.err(Code::BadUnionTag, &tag_decl.span, format!("union tag `{}` must be an integer or enum field", tag.name));
                            continue;
                        }
                    },
                    _ => {
                        self.err(Code::BadUnionTag, &tag_decl.span, format!("union tag `{}` must be an integer or enum field", tag.name));
                        continue;
                    }
                };
                let union_decl = match decls[id.0].2 {
                    Decl::Union(ud) => ud,
                    _ => continue,
                };
                for (v, vd) in u.variants.iter().zip(&union_decl.variants) {
                    let (lo, hi) = base.int_range().expect("integer");
                    if v.tag < lo || v.tag > hi {
                        self.err(Code::UnmatchedUnionTag, &vd.tag.span, format!("variant `{}` has tag {}, which the tag field `{}` ({base}) cannot hold", v.name, v.tag, tag.name));
                    } else if let Some(e) = enum_values {
                        if !e.values.iter().any(|ev| ev.value == v.tag) {
                            self.err(Code::UnmatchedUnionTag, &vd.tag.span, format!("variant `{}` has tag {}, which is not a value of enum `{}`", v.name, v.tag, e.name))
                                .help = Some(format!("`{}` has values {}", e.name, e.values.iter().map(|ev| format!("{}={}", ev.name, ev.value)).collect::<Vec<_>>().join(", ")));
                        }
                    }
                }
                if let Some(e) = enum_values {
                    let missing: Vec<&str> = e.values.iter().filter(|ev| !u.variants.iter().any(|v| v.tag == ev.value)).map(|ev| ev.name.as_str()).collect();
                    if !missing.is_empty() {
                        self.err(Code::UnmatchedUnionTag, &tag_decl.span, format!("tag enum `{}` has values without a variant in union `{}`: {}", e.name, u.name, missing.join(", ")))
                            .help = Some("add a variant (it may have no fields) for each value, so that every valid tag decodes".into());
                    }
                }
            }
        }
        }
    }

    /// Computes struct and variant sizes and field offsets, in dependency order, and reports
    /// structs that contain themselves.
    fn compute_sizes(&mut self, types: &mut [TypeDef], decls: &[(String, Span, Decl<'_>)]) {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Todo,
            Busy,
            Done,
        }
        fn deps(ty: &Ty, out: &mut Vec<usize>) {
            match ty {
                Ty::Named(id) | Ty::Union { id, .. } => out.push(id.0),
                Ty::Array { elem, .. } => deps(elem, out),
                _ => {}
            }
        }
        fn visit(i: usize, types: &mut [TypeDef], state: &mut [State], cycle: &mut BTreeSet<usize>) {
            if state[i] == State::Done {
                return;
            }
            if state[i] == State::Busy {
                cycle.insert(i);
                return;
            }
            state[i] = State::Busy;
            let mut d = Vec::new();
            match &types[i] {
                TypeDef::Struct(s) => s.fields.iter().for_each(|f| deps(&f.ty, &mut d)),
                TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).for_each(|f| deps(&f.ty, &mut d)),
                _ => {}
            }
            for j in d {
                visit(j, types, state, cycle);
            }
            let sizes: Vec<Option<u32>> = types
                .iter()
                .map(|t| match t {
                    TypeDef::Struct(s) => s.size,
                    TypeDef::Enum(e) => Some(e.base.size()),
                    TypeDef::Flags(f) => Some(f.base.size()),
                    _ => None,
                })
                .collect();
            let named = |id: TypeId| sizes[id.0];
            match &mut types[i] {
                TypeDef::Struct(s) => s.size = layout::place_fields(&named, &mut s.fields),
                TypeDef::Union(u) => {
                    for v in &mut u.variants {
                        v.size = layout::place_fields(&named, &mut v.fields);
                    }
                }
                _ => {}
            }
            state[i] = State::Done;
        }
        let mut state = vec![State::Todo; types.len()];
        let mut cycle = BTreeSet::new();
        for i in 0..types.len() {
            visit(i, types, &mut state, &mut cycle);
        }
        for i in cycle {
            self.err(Code::RecursiveType, &decls[i].1, format!("`{}` contains itself", decls[i].0))
                .help = Some("a wire layout cannot nest a type inside itself".into());
        }
    }

    /// String consts must have exactly the length of their fixed field.
    fn check_const_sizes(&mut self, schema: &ir::Schema, decls: &[(String, Span, Decl<'_>)]) {
        for (i, t) in schema.types.iter().enumerate() {
            let (TypeDef::Struct(s), Some(fds)) = (t, decl_fields(&decls[i].2)) else { continue };
            for (f, fd) in s.fields.iter().zip(fds) {
                if let (Some(ConstValue::Bytes(b)), Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n))) = (&f.value, &f.ty) {
                    if b.len() != *n as usize {
                        let span = fd.value.as_ref().map_or(fd.span.clone(), |v| v.span.clone());
                        self.err(Code::BadConst, &span, format!("const is {} bytes but field `{}` is {n} bytes", b.len(), f.name));
                    }
                }
            }
        }
    }

    fn schema_id(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::SchemaId> {
        let sid = file.format.as_ref()?.schema_id.as_ref()?;
        if !is_ident(&sid.name.value) || sid.name.value.chars().any(|c| c.is_ascii_lowercase()) {
            self.err(Code::BadName, &sid.name.span, format!("schema id macro `{}` must be an UPPER_CASE identifier", sid.name.value));
        }
        if sid.value.value < 0 || sid.value.value > i128::from(u32::MAX) {
            self.err(Code::ValueOutOfRange, &sid.value.span, format!("schema id {} is outside 0..=4294967295", sid.value.value));
        }
        let mut field = None;
        if let Some(fname) = &sid.field {
            match schema.file_header.map(|h| schema.strukt(h)) {
                None => {
                    self.err(Code::BadSchemaId, &fname.span, "`field` names a file-header field, but there is no `[file_header]`");
                }
                Some(h) => match h.fields.iter().position(|f| f.name == fname.value) {
                    None => {
                        let hint = did_you_mean(&fname.value, h.fields.iter().map(|f| f.name.as_str())).map(str::to_string);
                        let d = self.err(Code::BadSchemaId, &fname.span, format!("the file header has no field `{}`", fname.value));
                        if let Some(hh) = hint {
                            d.help = Some(format!("did you mean `{hh}`?"));
                        }
                    }
                    Some(i) => match &h.fields[i].ty {
                        Ty::Prim(p) if !p.is_float() => {
                            if self.fits(sid.value.value, *p, &sid.value.span, "schema id") {
                                field = Some(i);
                            }
                        }
                        _ => {
                            self.err(Code::BadSchemaId, &fname.span, format!("schema id field `{}` must be an integer", fname.value));
                        }
                    },
                },
            }
        }
        Some(ir::SchemaId { value: sid.value.value.clamp(0, i128::from(u32::MAX)) as u64, macro_name: sid.name.value.clone(), field })
    }

    fn framing(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::Framing> {
        let fr = file.framing.as_ref()?;
        let header = TypeId(usize::from(file.file_header.is_some()));
        let s = schema.strukt(header);
        if s.size.is_none() {
            self.err(Code::NotFixedSize, &fr.body.span, "the record header (`[framing]` fields) must have a fixed size");
        }
        let role = |cx: &mut Cx, r: &Sp<String>, what: &str| -> Option<usize> {
            match s.fields.iter().position(|f| f.name == r.value) {
                Some(i) => match &s.fields[i].ty {
                    Ty::Prim(p) if !p.is_float() => Some(i),
                    _ => {
                        cx.err(Code::BadFraming, &r.span, format!("the {what} field `{}` must be an integer", r.value));
                        None
                    }
                },
                None => {
                    let hint = did_you_mean(&r.value, s.fields.iter().map(|f| f.name.as_str())).map(str::to_string);
                    let d = cx.err(Code::BadFraming, &r.span, format!("the {what} field `{}` is not a field of the record header", r.value));
                    if let Some(h) = hint {
                        d.help = Some(format!("did you mean `{h}`?"));
                    }
                    None
                }
            }
        };
        let tag = role(self, &fr.tag, "tag");
        let length = fr.length.as_ref().and_then(|l| role(self, l, "length"));
        let timestamp = fr.timestamp.as_ref().and_then(|t| role(self, t, "timestamp"));
        Some(ir::Framing { header, tag: tag?, length, timestamp })
    }

    fn records(&mut self, file: &SchemaFile, schema: &ir::Schema, decls: &[(String, Span, Decl<'_>)]) -> Vec<ir::Record> {
        let framing_hdr = schema.framing.as_ref().map(|f| schema.strukt(f.header));
        let tag_prim = schema.framing.as_ref().and_then(|f| match &framing_hdr?.fields[f.tag].ty {
            Ty::Prim(p) => Some(*p),
            _ => None,
        });
        let len_prim = schema.framing.as_ref().and_then(|f| match &framing_hdr?.fields[f.length?].ty {
            Ty::Prim(p) => Some(*p),
            _ => None,
        });
        let mut ids: BTreeMap<i128, &str> = BTreeMap::new();
        let mut out = Vec::new();
        for r in &file.records {
            let Some(body) = decls.iter().position(|(_, _, d)| matches!(d, Decl::Record(x) if std::ptr::eq(*x, r))) else { continue };
            let id = r.id.value;
            if let Some(prev) = ids.insert(id, &r.name.value) {
                self.err(Code::DuplicateRecordId, &r.id.span, format!("record id {id} is used by both `{prev}` and `{}`", r.name.value))
                    .label = Some("duplicate id".into());
            }
            let id_ok = match tag_prim {
                Some(p) => self.fits(id, p, &r.id.span, "record id"),
                None => {
                    if id < 0 {
                        self.err(Code::ValueOutOfRange, &r.id.span, format!("record id {id} is negative"));
                    }
                    id >= 0
                }
            };
            if let Some(lp) = len_prim {
                let (_, hi) = lp.int_range().expect("integer");
                match layout::max_size(schema, &Ty::Named(TypeId(body))) {
                    Some(max) if max > hi as u128 => {
                        self.err(Code::PayloadTooLarge, &r.name.span, format!("record `{}` can be {max} bytes long, but the length field `{}` ({lp}) holds at most {hi}", r.name.value, framing_hdr.map_or("", |h| h.fields[schema.framing.as_ref().and_then(|f| f.length).unwrap_or(0)].name.as_str())))
                            .help = Some("shrink the record, or widen the framing's length field (a breaking change)".into());
                    }
                    _ => {}
                }
            }
            let body = TypeId(body);
            out.push(ir::Record {
                name: r.name.value.clone(),
                id: if id_ok { id as u64 } else { 0 },
                doc: r.doc.as_ref().map(|d| d.value.clone()),
                body,
                fingerprint: crate::fingerprint::of_struct(schema, body),
            });
        }
        out
    }
}

fn decl_fields<'a>(d: &Decl<'a>) -> Option<&'a [FieldDecl]> {
    match d {
        Decl::Struct(s) => Some(&s.fields),
        Decl::Record(r) => Some(&r.fields),
        _ => None,
    }
}

fn name_or(n: &Sp<String>, default: &str) -> String {
    if n.value.is_empty() {
        default.to_string()
    } else {
        n.value.clone()
    }
}

/// The span inside the quotes of a basic string value.
fn inner_span(span: &Span) -> Span {
    if span.end >= span.start + 2 {
        span.start + 1..span.end - 1
    } else {
        span.clone()
    }
}

/// `REC_NAV_SOLUTION` -> `RecNavSolution`; `FrameStart` stays as it is.
pub fn camel_case(name: &str) -> String {
    let mut out = String::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            let rest: String = chars.collect();
            if part.chars().all(|c| !c.is_ascii_lowercase()) {
                out.push_str(&rest.to_ascii_lowercase());
            } else {
                out.push_str(&rest);
            }
        }
    }
    out
}

pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && s != "_"
}

const BUILTIN_TYPES: &[&str] = &["bool", "string", "bytes"];

/// Words that cannot name a field in generated C (C11 and C++11 keywords).
const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "class", "namespace", "template", "this", "new", "delete", "private", "public",
    "protected", "virtual", "operator", "friend", "bool", "true", "false", "catch", "throw", "try", "using", "typename", "explicit",
    "mutable", "nullptr",
];

/// Words that not even a raw identifier can use in Rust.
const RUST_RESERVED: &[&str] = &["self", "Self", "super", "crate"];
