//! The TOML front end's second stage: resolves names and types in the spanned model, validates
//! everything, and builds the immutable [`ir::Schema`].
//!
//! Every check reports a [`Diagnostic`] and carries on, so that one run shows all problems.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{self, ConstValue, Endian, Len, Prim, Ty, TypeDef, TypeId};
use crate::layout;
use crate::schema::{
    ConstDecl, EnumDecl, FieldDecl, FlagsDecl, ParamDecl, RecordDecl, SchemaFile, Sp, Span, StructDecl, UnionDecl,
};

/// Lowers a parsed schema file into the IR, or returns every problem found.
pub fn lower(file: &SchemaFile, source_name: Option<&str>) -> Result<ir::Schema, Vec<Diagnostic>> {
    let mut cx = Cx::default();
    let schema = cx.run(file, source_name);
    if cx.diags.is_empty() {
        Ok(schema.expect("a schema is built whenever no diagnostic was reported"))
    } else {
        cx.diags.sort_by_key(|d| (d.span.start, d.code));
        // A union used by several structs can report the same problem once per use.
        cx.diags.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
        Err(cx.diags)
    }
}

/// What selects a union's variant, for messages: a tag field or a reader parameter.
struct TagSource<'a> {
    /// E.g. "the tag field `kind` (u8) of `RecMsg`".
    what: &'a str,
    name: &'a str,
    /// "tag field" or "parameter".
    kind: &'a str,
    /// The `tag` or `param` key of the union field.
    span: &'a Span,
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
    /// The names of the declared `[[param]]`s, in order (a param union refers to one by index).
    param_names: Vec<String>,
}

impl Cx {
    fn err(&mut self, code: Code, span: &Span, msg: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(Diagnostic::new(code, span.clone(), msg));
        self.diags.last_mut().expect("just pushed")
    }

    fn run(&mut self, file: &SchemaFile, source_name: Option<&str>) -> Option<ir::Schema> {
        let format = file.format.as_ref();
        let default_endian = format.and_then(|f| f.endian.as_ref()).map(|e| self.endian(e)).unwrap_or(Endian::Little);
        if let Some(f) = format.filter(|f| !f.name.is_placeholder()) {
            if !is_ident(&f.name.value) || f.name.value.chars().any(|c| c.is_ascii_uppercase()) {
                self.err(
                    Code::BadName,
                    &f.name.span,
                    format!("format name `{}` is not a lowercase identifier", f.name.value),
                )
                .help = Some("use lowercase letters, digits and `_`, e.g. `usvlog`".into());
            }
        }

        // Declare every named type first so that fields can refer to types declared later.
        let mut decls: Vec<(String, Span, Decl<'_>)> = Vec::new();
        // The headers' names are optional; without one, messages point at the table header.
        if let Some(h) = &file.file_header {
            decls.push((name_or(&h.name, "FileHeader"), name_span(&h.name, &h.span), Decl::Struct(h)));
        }
        if let Some(fr) = &file.framing {
            decls.push((
                name_or(&fr.body.name, "RecordHeader"),
                name_span(&fr.body.name, &fr.body.span),
                Decl::Struct(&fr.body),
            ));
        }
        decls.extend(file.structs.iter().map(|s| (s.name.value.clone(), s.name.span.clone(), Decl::Struct(s))));
        decls.extend(file.enums.iter().map(|e| (e.name.value.clone(), e.name.span.clone(), Decl::Enum(e))));
        decls.extend(file.flags.iter().map(|f| (f.name.value.clone(), f.name.span.clone(), Decl::Flags(f))));
        decls.extend(file.unions.iter().map(|u| (u.name.value.clone(), u.name.span.clone(), Decl::Union(u))));
        decls.extend(file.records.iter().map(|r| (camel_case(&r.name.value), r.name.span.clone(), Decl::Record(r))));

        let mut names: BTreeMap<String, TypeId> = BTreeMap::new();
        for (i, (name, span, decl)) in decls.iter().enumerate() {
            if name.is_empty() {
                // A missing `name`, already reported.
                continue;
            }
            let is_record = matches!(decl, Decl::Record(_));
            let shown = match decl {
                Decl::Record(r) => r.name.value.clone(),
                _ => name.clone(),
            };
            if !is_ident(&shown) {
                bad_ident(self, span, &format!("`{shown}` is not a valid identifier"), &shown);
                continue;
            }
            if !is_record && (Prim::from_name(name).is_some() || BUILTIN_TYPES.contains(&name.as_str())) {
                self.err(Code::DuplicateName, span, format!("type name `{name}` is a built-in type")).label =
                    Some("already means a built-in type".into());
                continue;
            }
            if let Some(prev) = names.get(name) {
                let first = match decls[prev.0].2 {
                    Decl::Struct(_) => "a struct".to_string(),
                    Decl::Record(r) => format!("the Rust type of record `{}`", r.name.value),
                    Decl::Enum(_) => "an enum".to_string(),
                    Decl::Flags(_) => "a flags type".to_string(),
                    Decl::Union(_) => "a union".to_string(),
                };
                let d = self.err(Code::DuplicateName, span, format!("the name `{name}` is defined more than once"));
                d.label = Some(if is_record {
                    format!("record `{shown}` would be the Rust type `{name}`, which is already taken")
                } else {
                    "defined again here".to_string()
                });
                d.help =
                    Some(format!("`{name}` is already {first}; type, record and header names share one namespace"));
                continue;
            }
            names.insert(name.clone(), TypeId(i));
        }

        self.param_names = file.params.iter().map(|p| p.name.value.clone()).collect();
        // Lower every type body. Struct sizes depend on each other, so they are computed after.
        let mut types: Vec<TypeDef> = Vec::with_capacity(decls.len());
        for (name, _, decl) in &decls {
            let def = match decl {
                Decl::Struct(s) => TypeDef::Struct(self.strukt(
                    name,
                    s.doc.as_ref(),
                    s.endian.as_ref(),
                    &s.fields,
                    default_endian,
                    &names,
                    &decls,
                    false,
                )),
                Decl::Record(r) => TypeDef::Struct(self.strukt(
                    name,
                    r.doc.as_ref(),
                    r.endian.as_ref(),
                    &r.fields,
                    default_endian,
                    &names,
                    &decls,
                    true,
                )),
                Decl::Enum(e) => self.enumeration(e),
                Decl::Flags(f) => self.flags(f),
                Decl::Union(u) => self.union(u, default_endian, &names, &decls),
            };
            types.push(def);
        }
        let params = self.params(&file.params, &names, &decls);
        self.check_unions(&types, &decls, &params);
        let recursive = self.compute_sizes(&mut types, &decls);

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
            params,
            source: source_name.map(str::to_string),
        };
        // The checks below also run when earlier ones failed, so that one run reports every
        // problem; a field whose type could not be resolved is `Ty::Pad(0)` and is skipped.
        self.check_const_sizes(&schema, &decls);
        schema.format.schema_id = self.schema_id(file, &schema);
        // The file header may be variable-size (CARLA's info header ends with a length-prefixed
        // map name): readers decode it from a cursor and read more until it decodes, so only
        // the record header, which frames every record, must have a fixed size.
        schema.framing = self.framing(file, &schema);
        // Payload bounds walk nested types, which only terminates when none contains itself.
        let bounded = file.framing.as_ref().and_then(|f| f.bounded.as_ref()).map_or(true, |b| b.value);
        schema.records = self.records(file, &schema, &decls, !recursive && bounded);
        if self.diags.is_empty() {
            let prints: Vec<u64> =
                schema.records.iter().map(|r| crate::fingerprint::of_struct(&schema, r.body)).collect();
            for (r, p) in schema.records.iter_mut().zip(prints) {
                r.fingerprint = p;
            }
            Some(schema)
        } else {
            None
        }
    }

    /// Reports the first field that keeps a header struct from having a fixed size.
    fn fixed_size(&mut self, schema: &ir::Schema, id: TypeId, decl: &StructDecl, what: &str) {
        let s = schema.strukt(id);
        if s.size.is_some() {
            return;
        }
        let Some((f, fd)) = s.fields.iter().zip(&decl.fields).find(|(f, _)| schema.size_of(&f.ty).is_none()) else {
            return;
        };
        let span = fd.ty.as_ref().map_or(fd.span.clone(), |t| t.span.clone());
        let d = self.err(
            Code::NotFixedSize,
            &span,
            format!("{what} must have a fixed size, but field `{}` does not", f.name),
        );
        d.label = Some("its size depends on the data".into());
        d.help = Some("use fixed-size types only: numbers, `bool`, enums, flags, `T[N]`, `bytes[N]`, `string[N]` and structs made of those".into());
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
                    if is_pad_name(&n.value) {
                        self.err(Code::BadName, &n.span, format!("field name `{}` is reserved for padding", n.value))
                            .help = Some(
                            "padding entries are named `_pad0`, `_pad1`, ... in generated code; pick another name"
                                .into(),
                        );
                    }
                    if seen.contains_key(&n.value) {
                        self.err(Code::DuplicateField, &n.span, format!("duplicate field name `{}`", n.value)).label =
                            Some("a field of this name is declared earlier in the same struct".into());
                    }
                    seen.insert(n.value.clone(), n.span.clone());
                    n.value.clone()
                }
                (None, _) => {
                    pads += 1;
                    format!("_pad{}", pads - 1)
                }
            };
            let ty = self.field_type(f, names, decls, &out, &decls_f[i + 1..], allow_rest && i + 1 == decls_f.len());
            let ty = match &f.width {
                Some(w) if !w.is_placeholder() => self.var_width(w, ty, &out),
                _ => ty,
            };
            if let (Some(e), Some(own)) = (&f.endian, own_order(&ty, decls)) {
                let d = self.err(Code::BadEndian, &e.span, format!("`endian` has no effect on a field of {own}"));
                d.label = Some("ignored: the type's own byte order applies".into());
                d.help = Some("set `endian` on the struct or union itself, or on its fields".into());
            }
            let value = f.value.as_ref().and_then(|v| self.konst(v, f, &ty, decls));
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

    /// Turns an integer field with `width = "field[lo..hi]"` into a [`Ty::VarInt`], checking that
    /// the bit range belongs to an earlier unsigned integer field and announces no more bytes
    /// than the integer holds.
    fn var_width(&mut self, w: &Sp<String>, ty: Ty, earlier: &[ir::Field]) -> Ty {
        const HELP: &str = "write `width = \"<earlier field>[lo..hi]\"`: bits lo..hi (hi exclusive) of an earlier unsigned integer field hold the byte count minus one";
        let prim = match ty {
            Ty::Prim(p) if !p.is_float() => p,
            // The type itself is wrong, and already reported.
            Ty::Pad(0) => return ty,
            _ => {
                self.err(
                    Code::BadWidth,
                    &w.span,
                    "`width` is only allowed on an integer field (`u8`..`u64`, `i8`..`i64`)",
                )
                .help = Some("remove `width`, or give the field a plain integer type".into());
                return ty;
            }
        };
        let text = w.value.trim();
        let parsed = text.strip_suffix(']').and_then(|t| t.split_once('[')).and_then(|(name, range)| {
            let (lo, hi) = range.split_once("..")?;
            Some((name.trim(), lo.trim().parse::<u8>().ok()?, hi.trim().parse::<u8>().ok()?))
        });
        let Some((name, lo, hi)) = parsed.filter(|(_, lo, hi)| hi > lo) else {
            self.err(Code::BadWidth, &w.span, format!("cannot parse width `{text}`")).help = Some(HELP.into());
            return ty;
        };
        let Some(field) = earlier.iter().position(|e| e.name == name && !e.is_padding()) else {
            let hint = did_you_mean(name, earlier.iter().map(|e| e.name.as_str())).map(str::to_string);
            let d = self.err(
                Code::BadWidth,
                &w.span,
                format!("width field `{name}` is not an earlier field of this struct"),
            );
            d.label = Some("no such field before this one".into());
            d.help = Some(match hint {
                Some(h) => format!("did you mean `{h}`?"),
                None => "the field that holds the byte count must come before the integer it sizes".into(),
            });
            return ty;
        };
        let src = &earlier[field];
        let src_bits = match src.ty {
            Ty::Prim(p) if p.is_unsigned() && src.value.is_none() => p.size() * 8,
            _ => {
                let d = self.err(
                    Code::BadWidth,
                    &w.span,
                    format!("width field `{name}` must be an unsigned integer field without `const`"),
                );
                d.label = Some(format!("`{name}` is not a plain `u8`..`u64`"));
                d.help = Some(HELP.into());
                return ty;
            }
        };
        let bits = hi - lo;
        if u32::from(hi) > src_bits {
            let d = self.err(
                Code::BadWidth,
                &w.span,
                format!("bits {lo}..{hi} are outside `{name}`, which has {src_bits} bits"),
            );
            d.label = Some("bit range too high".into());
            return ty;
        }
        if bits > 6 || (1u32 << bits) > prim.size() {
            let d = self.err(
                Code::BadWidth,
                &w.span,
                format!(
                    "{bits} bits can announce up to {} bytes, more than the {} bytes of `{prim}`",
                    1u64 << bits.min(63),
                    prim.size()
                ),
            );
            d.label = Some("range too wide for the integer".into());
            d.help = Some(format!("use at most {} bits, or a wider integer type", prim.size().trailing_zeros()));
            return ty;
        }
        Ty::VarInt { prim, width: ir::Width { field, lo, bits } }
    }

    fn field_name(&mut self, n: &Sp<String>) {
        if !is_ident(&n.value) {
            bad_ident(self, &n.span, &format!("field name `{}` is not a valid identifier", n.value), &n.value);
        } else if C_KEYWORDS.contains(&n.value.as_str()) || RUST_RESERVED.contains(&n.value.as_str()) {
            let d =
                self.err(Code::BadName, &n.span, format!("field name `{}` is a reserved word in C or Rust", n.value));
            d.label = Some("reserved word".into());
            d.help = Some(format!("generated code could not use it; rename it, e.g. `{}_`", n.value));
        }
    }

    fn field_type(
        &mut self,
        f: &FieldDecl,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
        earlier: &[ir::Field],
        later: &[FieldDecl],
        may_rest: bool,
    ) -> Ty {
        if let Some(pad) = &f.pad {
            return match u32::try_from(pad.value) {
                Ok(n) if n > 0 => Ty::Pad(n),
                _ => {
                    self.err(
                        Code::ValueOutOfRange,
                        &pad.span,
                        format!("padding must be 1 or more bytes, found {}", pad.value),
                    )
                    .label = Some("expected a positive byte count".into());
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
                    self.err(Code::BadTypeSyntax, &inner, format!("cannot parse type `{expr}`")).help = Some(
                        "write `T`, `T[N]` for N elements, or `T[]` with `count`/`size` for a prefixed sequence".into(),
                    );
                    return Ty::Pad(0);
                }
                let n = rest[1..rest.len() - 1].trim();
                let suffix = if n.is_empty() {
                    Some(None)
                } else {
                    match n.parse::<u32>() {
                        Ok(n) => Some(Some(n)),
                        Err(_) => {
                            self.err(Code::BadTypeSyntax, &inner, format!("array length `{n}` is not a number")).help =
                                Some(
                                    "use a decimal element count, or `[]` with `count = \"u16\"` for a prefixed array"
                                        .into(),
                                );
                            return Ty::Pad(0);
                        }
                    }
                };
                (expr[..i].trim(), suffix)
            }
        };
        if base.is_empty() {
            self.err(
                Code::BadTypeSyntax,
                &inner,
                if expr.is_empty() { "empty type".to_string() } else { format!("type `{expr}` has no element type") },
            )
            .help =
                Some("write `T`, `T[N]` for N elements, or `T[]` with `count`/`size` for a prefixed sequence".into());
            return Ty::Pad(0);
        }
        let len = self.length(f, suffix, base, &inner, may_rest);
        // Without a valid length (already reported), a sequence is left unresolved.
        let elem = match base {
            "string" => return len.map_or(Ty::Pad(0), Ty::Str),
            "bytes" => return len.map_or(Ty::Pad(0), Ty::Bytes),
            "bool" => Ty::Bool,
            _ => match Prim::from_name(base) {
                Some(p) => Ty::Prim(p),
                None => match names.get(base) {
                    Some(id) => match decls[id.0].2 {
                        Decl::Union(_) if f.param.is_some() => {
                            // An unresolved parameter becomes an index past the end, which later checks skip.
                            let param = self.union_param(f);
                            Ty::ParamUnion { id: *id, param: param.unwrap_or(usize::MAX) }
                        }
                        Decl::Union(_) => {
                            // An unresolved tag becomes an index past the end, which later checks skip.
                            let tag_field = self.union_tag(f, earlier, later);
                            Ty::Union { id: *id, tag_field: tag_field.unwrap_or(usize::MAX) }
                        }
                        Decl::Record(_) => {
                            self.err(Code::UnknownType, &inner, format!("`{base}` is a record, not a type")).help =
                                Some("declare the shared layout as a `[[struct]]` and use it in both places".into());
                            Ty::Pad(0)
                        }
                        _ => Ty::Named(*id),
                    },
                    None => {
                        let candidates = Prim::ALL
                            .iter()
                            .map(|p| p.name())
                            .chain(BUILTIN_TYPES.iter().copied())
                            .chain(names.keys().map(String::as_str))
                            .chain(TYPE_ALIASES.iter().map(|(a, _)| *a));
                        let hint = did_you_mean(base, candidates).map(str::to_string);
                        let d = self.err(Code::UnknownType, &inner, format!("unknown type `{base}`"));
                        d.label = Some("not a built-in or declared type".into());
                        d.help = Some(match hint {
                            Some(h) => match TYPE_ALIASES.iter().find(|(a, _)| *a == h) {
                                Some((a, t)) if *a == base => format!("write `{t}` for `{a}`"),
                                Some((a, t)) => format!("did you mean `{t}` (`{a}`)?"),
                                None => format!("did you mean `{h}`?"),
                            },
                            None => "built-in types: u8..u64, i8..i64, f32, f64, bool, string, bytes; or declare a [[struct]], [[enum]], [[flags]] or [[union]]".into(),
                        });
                        Ty::Pad(0)
                    }
                },
            },
        };
        if f.tag.as_ref().is_some_and(|t| !t.is_placeholder())
            && !matches!(elem, Ty::Union { .. } | Ty::ParamUnion { .. })
        {
            let span = &f.tag.as_ref().expect("checked").span;
            if !matches!(elem, Ty::Pad(0)) {
                self.err(Code::BadUnionTag, span, "`tag` is only allowed on a field whose type is a union").help =
                    Some("remove `tag`, or give the field a `[[union]]` type".into());
            }
        }
        if let Some(p) = f.param.as_ref().filter(|p| !p.is_placeholder()) {
            if !matches!(elem, Ty::ParamUnion { .. } | Ty::Pad(0)) {
                self.err(Code::BadParamUse, &p.span, "`param` is only allowed on a field whose type is a union").help =
                    Some("remove `param`, or give the field a `[[union]]` type".into());
            }
        }
        match (suffix, len) {
            (None, _) => elem,
            (Some(_), Some(len)) => {
                if matches!(elem, Ty::Union { .. } | Ty::ParamUnion { .. }) {
                    self.err(
                        Code::BadTypeSyntax,
                        &inner,
                        "an array of unions is not supported; wrap the union in a struct with its tag",
                    );
                }
                Ty::Array { elem: Box::new(elem), len }
            }
            (Some(_), None) => Ty::Pad(0),
        }
    }

    /// Works out the `Len` of a sequence type from its `[N]`/`[]` suffix and `count`/`size` keys.
    fn length(
        &mut self,
        f: &FieldDecl,
        suffix: Option<Option<u32>>,
        base: &str,
        inner: &Span,
        may_rest: bool,
    ) -> Option<Len> {
        let sequence = suffix.is_some() || base == "string" || base == "bytes";
        if !sequence {
            for k in [&f.count, &f.size].into_iter().flatten() {
                self.err(
                    Code::BadLength,
                    &k.span,
                    format!("`count`/`size` only apply to `string`, `bytes` and arrays, not `{base}`"),
                );
            }
            return None;
        }
        if let Some(Some(n)) = suffix {
            for k in [&f.count, &f.size].into_iter().flatten() {
                self.err(Code::BadLength, &k.span, format!("a fixed-length `[{n}]` takes no `count` or `size`")).help =
                    Some(format!("remove it, or write `{base}[]` for a prefixed sequence"));
            }
            if n == 0 {
                self.err(Code::BadLength, inner, format!("`{base}[0]` holds nothing")).label =
                    Some("a fixed length must be 1 or more".into());
            }
            return Some(Len::Fixed(n));
        }
        if matches!(base, "string" | "bytes") && suffix.is_some() {
            self.err(Code::BadTypeSyntax, inner, format!("`{base}[]` is not a type"))
                .help = Some(format!("`{base}` is already a sequence: write `type = \"{base}\"` with `count`/`size`, or `{base}[N]` for N bytes"));
            return None;
        }
        if [&f.count, &f.size].into_iter().flatten().any(|k| k.is_placeholder()) {
            // A malformed `count`/`size`, already reported.
            return None;
        }
        match (&f.count, &f.size) {
            (Some(_), Some(s)) => {
                self.err(Code::BadLength, &s.span, "give either `count` (elements) or `size` (bytes), not both")
                    .label = Some("second length rule".into());
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
                        .help = Some("`rest` reads to the end of the record's payload, so nothing can follow it: move the field last in a record, or use a prefix such as `count = \"u16\"`".into());
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
                let d = self.err(
                    Code::NotAnInteger,
                    &p.span,
                    format!("a length prefix must be u8, u16, u32 or u64, found `{}`", p.value),
                );
                d.label = Some("not an unsigned integer type".into());
                d.help = Some("e.g. `count = \"u16\"`; or `count = \"rest\"` on the last field of a record".into());
                None
            }
        }
    }

    /// The index of the reader parameter that selects a union field's variant (`param = "..."`).
    fn union_param(&mut self, f: &FieldDecl) -> Option<usize> {
        let p = f.param.as_ref().filter(|p| !p.is_placeholder())?;
        if let Some(t) = f.tag.as_ref().filter(|t| !t.is_placeholder()) {
            self.err(Code::BadParamUse, &t.span, "a union field takes either `tag` or `param`, not both").help =
                Some("`tag` names an earlier field; `param` a reader parameter declared with `[[param]]`".into());
            return None;
        }
        if let Some(i) = self.param_names.iter().position(|n| *n == p.value) {
            return Some(i);
        }
        let hint = did_you_mean(&p.value, self.param_names.iter().map(String::as_str)).map(str::to_string);
        let d = self.err(Code::BadParamUse, &p.span, format!("no reader parameter named `{}`", p.value));
        d.label = Some("not declared with `[[param]]`".into());
        d.help = Some(match hint {
            Some(h) => format!("did you mean `{h}`?"),
            None => format!("declare it: `[[param]]` with `name = \"{}\"` and an integer or enum `type`", p.value),
        });
        None
    }

    /// Lowers the `[[param]]` declarations: unique identifiers with an integer or enum type.
    fn params(
        &mut self,
        decls: &[ParamDecl],
        names: &BTreeMap<String, TypeId>,
        types: &[(String, Span, Decl<'_>)],
    ) -> Vec<ir::Param> {
        let mut out = Vec::with_capacity(decls.len());
        for (i, p) in decls.iter().enumerate() {
            if !p.name.is_placeholder() {
                if !is_ident(&p.name.value) {
                    bad_ident(
                        self,
                        &p.name.span,
                        &format!("parameter name `{}` is not a valid identifier", p.name.value),
                        &p.name.value,
                    );
                } else if decls[..i].iter().any(|q| q.name.value == p.name.value) {
                    self.err(Code::BadParam, &p.name.span, format!("parameter `{}` is declared twice", p.name.value))
                        .label = Some("declared again here".into());
                }
            }
            let ty = match (Prim::from_name(&p.ty.value), names.get(&p.ty.value)) {
                (Some(prim), _) if !prim.is_float() => Ty::Prim(prim),
                (None, Some(id)) if matches!(types[id.0].2, Decl::Enum(_)) => Ty::Named(*id),
                _ => {
                    if !p.ty.is_placeholder() {
                        let d = self.err(
                            Code::BadParam,
                            &p.ty.span,
                            format!("a parameter's type must be an integer type or an enum, found `{}`", p.ty.value),
                        );
                        d.label = Some("not an integer or enum type".into());
                        d.help = Some("e.g. `type = \"u16\"`, or the name of an `[[enum]]`".into());
                    }
                    Ty::Prim(Prim::I64)
                }
            };
            out.push(ir::Param { name: p.name.value.clone(), ty, doc: p.doc.as_ref().map(|d| d.value.clone()) });
        }
        out
    }

    fn union_tag(&mut self, f: &FieldDecl, earlier: &[ir::Field], later: &[FieldDecl]) -> Option<usize> {
        let Some(tag) = &f.tag else {
            let span = f.ty.as_ref().map_or(f.span.clone(), |t| t.span.clone());
            self.err(
                Code::BadUnionTag,
                &span,
                "a union field needs `tag`, the name of an earlier field that selects the variant",
            )
            .help = Some(match earlier.last() {
                Some(prev) => format!("add `tag = \"<field name>\"`, e.g. `tag = \"{}\"`", prev.name),
                None => "add an integer or enum field before it, and `tag = \"<that field>\"`".into(),
            });
            return None;
        };
        if tag.is_placeholder() {
            return None;
        }
        match earlier.iter().position(|e| e.name == tag.value && !e.is_padding()) {
            Some(i) => Some(i),
            None if later.iter().any(|l| l.name.as_ref().is_some_and(|n| n.value == tag.value)) => {
                let this = f.name.as_ref().map_or("", |n| n.value.as_str());
                let d = self.err(
                    Code::BadUnionTag,
                    &tag.span,
                    format!("union tag field `{}` comes after the union field `{this}`", tag.value),
                );
                d.label = Some("declared later".into());
                d.help =
                    Some(format!("move `{}` before `{this}`: a decoder must read the tag before the union", tag.value));
                None
            }
            None => {
                let hint = did_you_mean(&tag.value, earlier.iter().map(|e| e.name.as_str())).map(str::to_string);
                let d = self.err(
                    Code::BadUnionTag,
                    &tag.span,
                    format!("union tag field `{}` is not an earlier field of this struct", tag.value),
                );
                d.label = Some("no such field before this one".into());
                d.help = Some(match hint {
                    Some(h) => format!("did you mean `{h}`?"),
                    None => "the tag must be an integer or enum field declared before the union field".into(),
                });
                None
            }
        }
    }

    fn konst(
        &mut self,
        v: &Sp<ConstDecl>,
        f: &FieldDecl,
        ty: &Ty,
        decls: &[(String, Span, Decl<'_>)],
    ) -> Option<ConstValue> {
        match (&v.value, ty) {
            // The type is already reported as wrong; a const cannot be judged against it.
            (_, Ty::Pad(0)) => None,
            (ConstDecl::Int(i), Ty::Prim(p)) if !p.is_float() => {
                self.fits(*i, *p, &v.span, "const value");
                Some(ConstValue::Int(*i))
            }
            (ConstDecl::Int(i), Ty::Named(id)) if matches!(decls[id.0].2, Decl::Enum(_)) => {
                if let Decl::Enum(e) = decls[id.0].2 {
                    if let Some(p) = Prim::from_name(&e.base.value).filter(|p| !p.is_float()) {
                        self.fits(*i, p, &v.span, "const value");
                    }
                }
                Some(ConstValue::Int(*i))
            }
            // Only fixed-length fields: a const has one length, so a prefix would be redundant.
            (ConstDecl::Str(s), Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_))) => {
                Some(ConstValue::Bytes(s.as_bytes().to_vec()))
            }
            (value, _) => {
                let name = f.name.as_ref().map_or("", |n| n.value.as_str());
                let written = f.ty.as_ref().map_or(String::new(), |t| t.value.clone());
                let d = self.err(
                    Code::BadConst,
                    &v.span,
                    match value {
                        ConstDecl::Int(_) => {
                            format!("an integer const cannot go in field `{name}` of type `{written}`")
                        }
                        ConstDecl::Str(_) => format!("a string const cannot go in field `{name}` of type `{written}`"),
                    },
                );
                d.help = Some(match value {
                    ConstDecl::Str(s) => format!("string consts need a fixed-length `bytes[N]` or `string[N]`: e.g. `type = \"bytes[{}]\"` for these {} bytes", s.len(), s.len()),
                    ConstDecl::Int(_) => "integer consts need an integer or enum type; for bytes, write the const as a string".into(),
                });
                None
            }
        }
    }

    fn fits(&mut self, v: i128, p: Prim, span: &Span, what: &str) -> bool {
        match p.int_range() {
            Some((lo, hi)) if v >= lo && v <= hi => true,
            Some((lo, hi)) => {
                self.err(Code::ValueOutOfRange, span, format!("{what} {v} does not fit in `{p}`")).label =
                    Some(format!("`{p}` holds {lo}..={hi}"));
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
            _ if base.is_placeholder() => Prim::U8,
            _ => {
                let want =
                    if unsigned { "an unsigned integer type (u8..u64)" } else { "an integer type (u8..u64, i8..i64)" };
                self.err(
                    Code::NotAnInteger,
                    &inner_span(&base.span),
                    format!("`base` must be {want}, found `{}`", base.value),
                );
                Prim::U8
            }
        }
    }

    fn enumeration(&mut self, e: &EnumDecl) -> TypeDef {
        let base = self.base(&e.base, false);
        let mut values = Vec::new();
        let mut names = BTreeSet::new();
        let mut seen = BTreeMap::new();
        let base_ok = !e.base.is_placeholder() && Prim::from_name(&e.base.value).is_some_and(|p| !p.is_float());
        for v in &e.values {
            self.value_name("enum", &e.name.value, &v.name, &mut names);
            if v.value.is_placeholder() {
                continue;
            }
            if let Some(prev) = seen.insert(v.value.value, v.name.value.clone()) {
                self.err(
                    Code::DuplicateValue,
                    &v.value.span,
                    format!("value {} is used by both `{prev}` and `{}`", v.value.value, v.name.value),
                )
                .help =
                    Some("each value of an enum needs its own number; to give one value two names, drop one".into());
            }
            if base_ok {
                self.fits(v.value.value, base, &v.value.span, &format!("enum value `{}` =", v.name.value));
            }
            values.push(ir::EnumValue {
                name: v.name.value.clone(),
                value: v.value.value,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
            });
        }
        TypeDef::Enum(ir::Enum {
            name: e.name.value.clone(),
            doc: e.doc.as_ref().map(|d| d.value.clone()),
            base,
            values,
        })
    }

    /// Checks the name of an enum value or a flag: an identifier, used once in its type.
    fn value_name(&mut self, kind: &str, owner: &str, name: &Sp<String>, names: &mut BTreeSet<String>) {
        if name.is_placeholder() {
            return;
        }
        if !is_ident(&name.value) {
            bad_ident(self, &name.span, &format!("`{}` is not a valid identifier", name.value), &name.value);
        }
        if !names.insert(name.value.clone()) {
            self.err(Code::DuplicateValue, &name.span, format!("{kind} `{owner}` names `{}` twice", name.value));
        }
    }

    fn flags(&mut self, f: &FlagsDecl) -> TypeDef {
        let base = self.base(&f.base, true);
        let mut flags = Vec::new();
        let mut names = BTreeSet::new();
        let mut bits = BTreeMap::new();
        let base_ok = !f.base.is_placeholder() && Prim::from_name(&f.base.value).is_some_and(|p| p.is_unsigned());
        for v in &f.flags {
            self.value_name("flags", &f.name.value, &v.name, &mut names);
            if v.value.is_placeholder() {
                continue;
            }
            if let Some(prev) = bits.insert(v.value.value, v.name.value.clone()) {
                self.err(
                    Code::DuplicateValue,
                    &v.value.span,
                    format!("bit {} is used by both `{prev}` and `{}`", v.value.value, v.name.value),
                );
            }
            let width = i128::from(base.size() * 8);
            if base_ok && (v.value.value < 0 || v.value.value >= width) {
                self.err(Code::FlagOutOfRange, &v.value.span, format!("bit {} is outside `{base}`", v.value.value))
                    .label = Some(format!("`{base}` has bits 0..={}", width - 1));
            }
            flags.push(ir::Flag {
                name: v.name.value.clone(),
                bit: v.value.value.clamp(0, 63) as u32,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
            });
        }
        TypeDef::Flags(ir::Flags {
            name: f.name.value.clone(),
            doc: f.doc.as_ref().map(|d| d.value.clone()),
            base,
            flags,
            fields: Vec::new(),
        })
    }

    fn union(
        &mut self,
        u: &UnionDecl,
        default: Endian,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
    ) -> TypeDef {
        let endian = u.endian.as_ref().map(|e| self.endian(e)).unwrap_or(default);
        let mut variants = Vec::new();
        let mut vnames = BTreeSet::new();
        let mut tags = BTreeMap::new();
        let mut names_seen = BTreeMap::new();
        let mut default_seen: Option<String> = None;
        let by_name = u.variants.iter().any(|v| !v.matches.is_empty() || v.prefix.is_some() || v.default.is_some());
        for v in &u.variants {
            if !v.name.is_placeholder() {
                if !is_ident(&v.name.value) {
                    bad_ident(
                        self,
                        &v.name.span,
                        &format!("`{}` is not a valid identifier", v.name.value),
                        &v.name.value,
                    );
                }
                if !vnames.insert(v.name.value.clone()) {
                    self.err(
                        Code::DuplicateName,
                        &v.name.span,
                        format!("union `{}` has two variants named `{}`", u.name.value, v.name.value),
                    );
                }
            }
            let selectors = usize::from(!v.matches.is_empty())
                + usize::from(v.prefix.is_some())
                + usize::from(v.default.as_ref().is_some_and(|d| d.value));
            let select = if by_name {
                if let Some(t) = &v.tag {
                    self.err(
                        Code::BadUnionTag,
                        &t.span,
                        format!(
                            "union `{}` is selected by type name, so its variants have no integer `tag`",
                            u.name.value
                        ),
                    )
                    .help = Some(
                        "select this variant with `match = [\"name\", ...]`, `prefix = \"...\"` or `default = true`"
                            .into(),
                    );
                }
                if selectors != 1 {
                    self.err(Code::BadUnionTag, &v.name.span, format!("variant `{}` of a union selected by type name needs exactly one of `match`, `prefix` and `default = true`", v.name.value));
                }
                for m in &v.matches {
                    if let Some(prev) = names_seen.insert(m.value.clone(), v.name.value.clone()) {
                        self.err(
                            Code::DuplicateValue,
                            &m.span,
                            format!("type name {:?} selects both `{prev}` and `{}`", m.value, v.name.value),
                        );
                    }
                }
                if v.default.as_ref().is_some_and(|d| d.value) {
                    if let Some(prev) = default_seen.replace(v.name.value.clone()) {
                        self.err(
                            Code::DuplicateValue,
                            &v.name.span,
                            format!(
                                "union `{}` has two default variants, `{prev}` and `{}`",
                                u.name.value, v.name.value
                            ),
                        );
                    }
                }
                Some(match (&v.prefix, v.matches.is_empty()) {
                    (Some(p), _) => ir::NameMatch::Prefix(p.value.clone()),
                    (None, false) => ir::NameMatch::Exact(v.matches.iter().map(|m| m.value.clone()).collect()),
                    (None, true) => ir::NameMatch::Default,
                })
            } else {
                match &v.tag {
                    Some(t) => {
                        if let Some(prev) = tags.insert(t.value, v.name.value.clone()) {
                            self.err(
                                Code::DuplicateValue,
                                &t.span,
                                format!("tag {} selects both `{prev}` and `{}`", t.value, v.name.value),
                            );
                        }
                    }
                    None => {
                        self.err(Code::MissingKey, &v.span, format!("missing key `tag` in variant `{}`", v.name.value))
                            .help = Some("add `tag = <integer>`: the value of the tag field that selects this variant (or, for a union selected by type name, `match`, `prefix` or `default = true`)".into());
                    }
                }
                None
            };
            // A variant of a union selected by name is decoded from exactly the value's bytes, so
            // its last field may run to the end.
            let fields = self.fields(&v.fields, endian, names, decls, by_name);
            variants.push(ir::Variant {
                name: v.name.value.clone(),
                tag: if by_name { variants.len() as i128 } else { v.tag.as_ref().map_or(0, |t| t.value) },
                select,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
                fields,
                size: None,
            });
        }
        TypeDef::Union(ir::Union {
            name: u.name.value.clone(),
            doc: u.doc.as_ref().map(|d| d.value.clone()),
            endian,
            variants,
            by_name,
        })
    }

    /// A union's tag field must be an integer (or enum) that can hold every variant's tag; with an
    /// enum tag, every variant's tag must be one of the enum's values.
    fn check_unions(&mut self, types: &[TypeDef], decls: &[(String, Span, Decl<'_>)], params: &[ir::Param]) {
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
            let owner = match decls[ti].2 {
                Decl::Record(r) => r.name.value.as_str(),
                _ => decls[ti].0.as_str(),
            };
            for (fields, field_decls) in lists {
                for (fi, f) in fields.iter().enumerate() {
                    if let (Ty::ParamUnion { id, param }, Some(pdecl)) = (&f.ty, field_decls[fi].param.as_ref()) {
                        self.check_param_union(types, decls, params, (*id, *param), pdecl);
                        continue;
                    }
                    let Ty::Union { id, tag_field } = &f.ty else { continue };
                    let Some(tag_decl) = field_decls[fi].tag.as_ref() else { continue };
                    let TypeDef::Union(u) = &types[id.0] else { continue };
                    if u.by_name {
                        self.err(Code::BadUnionTag, &tag_decl.span, format!("union `{}` is selected by a type name given at run time, not by a field", u.name))
                            .help = Some(format!("store the value as bytes (e.g. `size = \"u16\"`) and decode it with `{}::decode_named(type_name, bytes)`", u.name));
                        continue;
                    }
                    // The tag field is found among the same struct's earlier fields; for variants, the
                    // flattened list still puts it before the union field.
                    let Some(tag) = fields.get(*tag_field) else { continue };
                    let (base, enum_values) = match &tag.ty {
                        // The tag field's own type is wrong, and already reported.
                        Ty::Pad(0) => continue,
                        Ty::Prim(p) if !p.is_float() => (*p, None),
                        Ty::Named(eid) => match &types[eid.0] {
                            TypeDef::Enum(e) => (e.base, Some(e)),
                            _ => {
                                self.err(
                                    Code::BadUnionTag,
                                    &tag_decl.span,
                                    format!("union tag `{}` must be an integer or enum field", tag.name),
                                )
                                .label = Some(format!("`{}` is a {}", tag.name, kind_of(&types[eid.0])));
                                continue;
                            }
                        },
                        _ => {
                            let written = field_decls
                                .iter()
                                .find(|d| d.name.as_ref().is_some_and(|n| n.value == tag.name))
                                .and_then(|d| d.ty.as_ref())
                                .map_or(String::new(), |t| t.value.clone());
                            self.err(
                                Code::BadUnionTag,
                                &tag_decl.span,
                                format!("union tag `{}` must be an integer or enum field", tag.name),
                            )
                            .label = Some(format!("`{}` is `{written}`", tag.name));
                            continue;
                        }
                    };
                    let union_decl = match decls[id.0].2 {
                        Decl::Union(ud) => ud,
                        _ => continue,
                    };
                    let what = format!("the tag field `{}` ({base}) of `{owner}`", tag.name);
                    let sel = TagSource { what: &what, name: &tag.name, kind: "tag field", span: &tag_decl.span };
                    self.check_variant_tags(u, union_decl, base, enum_values, &sel);
                }
            }
        }
    }

    /// Checks a union's variant tags against what selects them (a tag field or a parameter of
    /// integer type `base`, or of an enum type): every tag fits, and every enum value has a variant.
    fn check_variant_tags(
        &mut self,
        u: &ir::Union,
        union_decl: &UnionDecl,
        base: Prim,
        enum_values: Option<&ir::Enum>,
        sel: &TagSource<'_>,
    ) {
        for (v, vd) in u.variants.iter().zip(&union_decl.variants) {
            let Some(vtag) = &vd.tag else { continue };
            let (lo, hi) = base.int_range().expect("integer");
            if v.tag < lo || v.tag > hi {
                let d = self.err(
                    Code::UnmatchedUnionTag,
                    &vtag.span,
                    format!("variant `{}` has tag {}, which {} cannot hold", v.name, v.tag, sel.what),
                );
                d.label = Some(format!("`{base}` holds {lo}..={hi}"));
                d.help = Some(format!("widen the {} `{}`, or renumber the variant", sel.kind, sel.name));
            } else if let Some(e) = enum_values {
                if !e.values.iter().any(|ev| ev.value == v.tag) {
                    self.err(
                        Code::UnmatchedUnionTag,
                        &vtag.span,
                        format!(
                            "variant `{}` has tag {}, which is not a value of the tag enum `{}`",
                            v.name, v.tag, e.name
                        ),
                    )
                    .help = Some(format!(
                        "`{}` has values {}",
                        e.name,
                        e.values.iter().map(|ev| format!("{}={}", ev.name, ev.value)).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        if let Some(e) = enum_values {
            let missing: Vec<String> = e
                .values
                .iter()
                .filter(|ev| !u.variants.iter().any(|v| v.tag == ev.value))
                .map(|ev| format!("{} = {}", ev.name, ev.value))
                .collect();
            if !missing.is_empty() {
                let d = self.err(
                    Code::UnmatchedUnionTag,
                    sel.span,
                    format!(
                        "tag enum `{}` has values that no variant of union `{}` handles: {}",
                        e.name,
                        u.name,
                        missing.join(", ")
                    ),
                );
                d.label = Some(format!("`{}` is a `{}`", sel.name, e.name));
                d.help = Some(
                    "add a variant (it may have no fields) for each value, so that every valid tag decodes".into(),
                );
            }
        }
    }

    /// Checks a union selected by a reader parameter: not selected by name, and with variant tags
    /// that the parameter's type can hold.
    fn check_param_union(
        &mut self,
        types: &[TypeDef],
        decls: &[(String, Span, Decl<'_>)],
        params: &[ir::Param],
        (id, param): (TypeId, usize),
        pdecl: &Sp<String>,
    ) {
        let Some(p) = params.get(param) else { return };
        let (TypeDef::Union(u), Decl::Union(union_decl)) = (&types[id.0], decls[id.0].2) else { return };
        if u.by_name {
            self.err(
                Code::BadParamUse,
                &pdecl.span,
                format!("union `{}` is selected by a type name given at run time, not by a parameter", u.name),
            )
            .help = Some(format!("decode it with `{}::decode_named(type_name, bytes)`", u.name));
            return;
        }
        let (base, enum_values) = match &p.ty {
            Ty::Prim(b) => (*b, None),
            Ty::Named(eid) => match &types[eid.0] {
                TypeDef::Enum(e) => (e.base, Some(e)),
                _ => return,
            },
            _ => return,
        };
        let what = format!("the parameter `{}` ({base})", p.name);
        let sel = TagSource { what: &what, name: &p.name, kind: "parameter", span: &pdecl.span };
        self.check_variant_tags(u, union_decl, base, enum_values, &sel);
    }

    /// Computes struct and variant sizes and field offsets, in dependency order, and reports
    /// structs that contain themselves.
    fn compute_sizes(&mut self, types: &mut [TypeDef], decls: &[(String, Span, Decl<'_>)]) -> bool {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Todo,
            Busy,
            Done,
        }
        fn deps(ty: &Ty) -> Option<usize> {
            match ty {
                Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => Some(id.0),
                Ty::Array { elem, .. } => deps(elem),
                _ => None,
            }
        }
        /// `stack` holds the types being visited, each with the field (`Type.field`) leading on.
        fn visit(
            i: usize,
            types: &mut [TypeDef],
            state: &mut [State],
            stack: &mut Vec<(usize, String)>,
            cycles: &mut BTreeMap<usize, String>,
        ) {
            if state[i] == State::Done {
                return;
            }
            if state[i] == State::Busy {
                let from = stack.iter().position(|(t, _)| *t == i).unwrap_or(0);
                let path: Vec<&str> = stack[from..].iter().map(|(_, via)| via.as_str()).collect();
                let name = types[i].name().to_string();
                cycles.entry(i).or_insert_with(|| format!("{} -> {name}", path.join(" -> ")));
                return;
            }
            state[i] = State::Busy;
            let mut d: Vec<(usize, String)> = Vec::new();
            match &types[i] {
                TypeDef::Struct(s) => {
                    d.extend(s.fields.iter().filter_map(|f| Some((deps(&f.ty)?, format!("{}.{}", s.name, f.name)))));
                }
                TypeDef::Union(u) => {
                    for v in &u.variants {
                        d.extend(
                            v.fields
                                .iter()
                                .filter_map(|f| Some((deps(&f.ty)?, format!("{}.{}.{}", u.name, v.name, f.name)))),
                        );
                    }
                }
                _ => {}
            }
            for (j, via) in d {
                stack.push((i, via));
                visit(j, types, state, stack, cycles);
                stack.pop();
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
        let mut cycles = BTreeMap::new();
        for i in 0..types.len() {
            visit(i, types, &mut state, &mut Vec::new(), &mut cycles);
        }
        let recursive = !cycles.is_empty();
        for (i, path) in cycles {
            let d = self.err(Code::RecursiveType, &decls[i].1, format!("`{}` contains itself: {path}", decls[i].0));
            d.label = Some("recursive type".into());
            d.help = Some("a type cannot contain itself, directly or through other types, not even in an array".into());
        }
        recursive
    }

    /// String consts must have exactly the length of their fixed field.
    fn check_const_sizes(&mut self, schema: &ir::Schema, decls: &[(String, Span, Decl<'_>)]) {
        for (i, t) in schema.types.iter().enumerate() {
            let lists: Vec<(&[ir::Field], &[FieldDecl])> = match (t, decls[i].2) {
                (TypeDef::Struct(s), Decl::Struct(d)) => vec![(&s.fields, &d.fields)],
                (TypeDef::Struct(s), Decl::Record(d)) => vec![(&s.fields, &d.fields)],
                (TypeDef::Union(u), Decl::Union(d)) => {
                    u.variants.iter().zip(&d.variants).map(|(v, vd)| (&v.fields[..], &vd.fields[..])).collect()
                }
                _ => continue,
            };
            for (f, fd) in lists.into_iter().flat_map(|(fs, fds)| fs.iter().zip(fds)) {
                if let (Some(ConstValue::Bytes(b)), Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n))) =
                    (&f.value, &f.ty)
                {
                    if b.len() != *n as usize {
                        let span = fd.value.as_ref().map_or(fd.span.clone(), |v| v.span.clone());
                        let d = self.err(
                            Code::BadConst,
                            &span,
                            format!("const is {} bytes long, but field `{}` is {n} bytes", b.len(), f.name),
                        );
                        d.label = Some(format!("{} bytes", b.len()));
                        d.help = Some(format!(
                            "a const must fill its field exactly: write {n} bytes, or make the field `{}[{}]`",
                            if matches!(f.ty, Ty::Str(_)) { "string" } else { "bytes" },
                            b.len()
                        ));
                    }
                }
            }
        }
    }

    fn schema_id(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::SchemaId> {
        let sid = file.format.as_ref()?.schema_id.as_ref()?;
        if !sid.name.is_placeholder()
            && (!is_ident(&sid.name.value) || sid.name.value.chars().any(|c| c.is_ascii_lowercase()))
        {
            self.err(
                Code::BadName,
                &sid.name.span,
                format!("schema id macro `{}` must be an UPPER_CASE identifier", sid.name.value),
            )
            .help = Some("it names a C macro, e.g. `FW_MODEL_SCHEMA`".into());
        }
        let value_ok = sid.value.is_placeholder() || (0..=i128::from(u32::MAX)).contains(&sid.value.value);
        if !value_ok {
            self.err(
                Code::ValueOutOfRange,
                &sid.value.span,
                format!("schema id {} is outside 0..=4294967295", sid.value.value),
            )
            .label = Some("schema ids are u32".into());
        }
        let mut field = None;
        if let Some(fname) = &sid.field {
            match schema.file_header.map(|h| schema.strukt(h)) {
                None => {
                    self.err(
                        Code::BadSchemaId,
                        &fname.span,
                        "`field` names a file-header field, but there is no `[file_header]`",
                    )
                    .help =
                        Some("add a `[file_header]` with an integer field for the schema id, or remove `field`".into());
                }
                Some(h) => match h.fields.iter().position(|f| f.name == fname.value && !f.is_padding()) {
                    None => {
                        let names: Vec<&str> =
                            h.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str()).collect();
                        let hint = did_you_mean(&fname.value, names.iter().copied()).map(str::to_string);
                        let d = self.err(
                            Code::BadSchemaId,
                            &fname.span,
                            format!("the file header has no field `{}`", fname.value),
                        );
                        d.label = Some("not a field of `[file_header]`".into());
                        d.help = Some(match hint {
                            Some(hh) => format!("did you mean `{hh}`?"),
                            None => format!("the file header's fields are: {}", names.join(", ")),
                        });
                    }
                    Some(i) => match &h.fields[i].ty {
                        Ty::Prim(p) if !p.is_float() => {
                            if sid.value.is_placeholder()
                                || !value_ok
                                || self.fits(sid.value.value, *p, &sid.value.span, "schema id")
                            {
                                field = Some(i);
                            }
                        }
                        Ty::Pad(0) => {}
                        _ => {
                            self.err(
                                Code::BadSchemaId,
                                &fname.span,
                                format!("schema id field `{}` must be an integer", fname.value),
                            )
                            .label = Some("not an integer field".into());
                        }
                    },
                },
            }
        }
        Some(ir::SchemaId {
            value: sid.value.value.clamp(0, i128::from(u32::MAX)) as u64,
            macro_name: sid.name.value.clone(),
            field,
        })
    }

    fn framing(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::Framing> {
        let fr = file.framing.as_ref()?;
        let header = TypeId(usize::from(file.file_header.is_some()));
        self.fixed_size(schema, header, &fr.body, "the record header (`[framing]`)");
        let s = schema.strukt(header);
        let role = |cx: &mut Cx, r: &Sp<String>, what: &str| -> Option<usize> {
            if r.is_placeholder() {
                return None;
            }
            match s.fields.iter().position(|f| f.name == r.value && !f.is_padding()) {
                Some(i) => match &s.fields[i].ty {
                    Ty::Prim(p) if !p.is_float() => Some(i),
                    Ty::Pad(0) => None,
                    _ => {
                        let written = fr.body.fields[i].ty.as_ref().map_or(String::new(), |t| t.value.clone());
                        cx.err(
                            Code::BadFraming,
                            &r.span,
                            format!("the {what} field `{}` must be an integer", r.value),
                        )
                        .label = Some(format!("`{}` is `{written}`", r.value));
                        None
                    }
                },
                None => {
                    let names = s.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str());
                    let hint = did_you_mean(&r.value, names).map(str::to_string);
                    let d = cx.err(
                        Code::BadFraming,
                        &r.span,
                        format!("the {what} field `{}` is not a field of the record header", r.value),
                    );
                    d.label = Some("not in `[framing]` `fields`".into());
                    d.help = Some(match hint {
                        Some(h) => format!("did you mean `{h}`?"),
                        None => format!("add an integer field `{}` to `[framing]` `fields`", r.value),
                    });
                    None
                }
            }
        };
        let tag = role(self, &fr.tag, "tag");
        let length = fr.length.as_ref().and_then(|l| role(self, l, "length"));
        let timestamp = fr.timestamp.as_ref().and_then(|t| role(self, t, "timestamp"));
        Some(ir::Framing { header, tag: tag?, length, timestamp })
    }

    fn records(
        &mut self,
        file: &SchemaFile,
        schema: &ir::Schema,
        decls: &[(String, Span, Decl<'_>)],
        check_bounds: bool,
    ) -> Vec<ir::Record> {
        let framing_hdr = schema.framing.as_ref().map(|f| schema.strukt(f.header));
        let tag_prim = schema.framing.as_ref().and_then(|f| match &framing_hdr?.fields[f.tag].ty {
            Ty::Prim(p) => Some(*p),
            _ => None,
        });
        let len_field = schema.framing.as_ref().and_then(|f| {
            let field = &framing_hdr?.fields[f.length?];
            match &field.ty {
                Ty::Prim(p) => Some((*p, field.name.as_str())),
                _ => None,
            }
        });
        let mut ids: BTreeMap<i128, &str> = BTreeMap::new();
        let mut out = Vec::new();
        for r in &file.records {
            let Some(body) = decls.iter().position(|(_, _, d)| matches!(d, Decl::Record(x) if std::ptr::eq(*x, r)))
            else {
                continue;
            };
            let id = r.id.value;
            let mut id_ok = !r.id.is_placeholder();
            if id_ok {
                if let Some(prev) = ids.insert(id, &r.name.value) {
                    self.err(
                        Code::DuplicateRecordId,
                        &r.id.span,
                        format!("record id {id} is used by both `{prev}` and `{}`", r.name.value),
                    )
                    .label = Some("duplicate id".into());
                }
                id_ok = match tag_prim {
                    Some(p) => self.fits(id, p, &r.id.span, "record id"),
                    None => {
                        if id < 0 || id > i128::from(u64::MAX) {
                            self.err(
                                Code::ValueOutOfRange,
                                &r.id.span,
                                format!("record id {id} is outside 0..={}", u64::MAX),
                            );
                        }
                        (0..=i128::from(u64::MAX)).contains(&id)
                    }
                };
            }
            let s = schema.strukt(TypeId(body));
            // `count = "rest"` runs to the end of the payload, which only the length field gives.
            if let (Some(fr), Some(last)) = (&schema.framing, s.fields.last()) {
                let rest =
                    matches!(&last.ty, Ty::Bytes(Len::Rest) | Ty::Str(Len::Rest) | Ty::Array { len: Len::Rest, .. });
                if rest && fr.length.is_none() {
                    let span =
                        r.fields.last().and_then(|f| f.count.as_ref()).map_or(r.name.span.clone(), |c| c.span.clone());
                    self.err(Code::BadLength, &span, "`count = \"rest\"` needs a length field in `[framing]`")
                        .help = Some("without `length`, nothing says where a payload ends; add a `length` role, or use a count prefix".into());
                }
            }
            if let (Some((lp, lname)), true) = (len_field, check_bounds) {
                let (_, hi) = lp.int_range().expect("integer");
                match layout::max_size(schema, &Ty::Named(TypeId(body))) {
                    Some(max) if max > hi as u128 => {
                        // Point at the field that contributes most, usually the one to shrink.
                        let biggest = s
                            .fields
                            .iter()
                            .zip(&r.fields)
                            .filter_map(|(f, fd)| Some((layout::max_size(schema, &f.ty)?, f, fd)))
                            .max_by_key(|(m, _, _)| *m);
                        let (span, label) = match biggest {
                            Some((m, f, fd)) => (
                                fd.count
                                    .as_ref()
                                    .or(fd.size.as_ref())
                                    .or(fd.ty.as_ref())
                                    .map_or(fd.span.clone(), |x| x.span.clone()),
                                format!("field `{}` alone can be {m} bytes", f.name),
                            ),
                            None => (r.name.span.clone(), String::new()),
                        };
                        let d = self.err(Code::PayloadTooLarge, &span, format!("record `{}` can be {max} bytes long, but the length field `{lname}` ({lp}) holds at most {hi}", r.name.value));
                        if !label.is_empty() {
                            d.label = Some(label);
                        }
                        d.help = Some(format!("shrink the field (a smaller array or length prefix), or widen the framing's length field `{lname}` (a breaking change)"));
                    }
                    _ => {}
                }
            }
            out.push(ir::Record {
                name: r.name.value.clone(),
                id: if id_ok { id as u64 } else { 0 },
                doc: r.doc.as_ref().map(|d| d.value.clone()),
                body: TypeId(body),
                // Filled in once the whole schema is known to be valid.
                fingerprint: 0,
            });
        }
        out
    }
}

/// Reports a name that is not an identifier, suggesting one made of its letters and digits.
fn bad_ident(cx: &mut Cx, span: &Span, message: &str, name: &str) {
    let fixed: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let fixed = if fixed.starts_with(|c: char| c.is_ascii_digit()) { format!("_{fixed}") } else { fixed };
    let d = cx.err(Code::BadName, span, message);
    d.label = Some("not an identifier".into());
    d.help = Some(if is_ident(&fixed) && fixed != name {
        format!("names start with a letter or `_` and contain only ASCII letters, digits and `_`, e.g. `{fixed}`")
    } else {
        "names start with a letter or `_` and contain only ASCII letters, digits and `_`".into()
    });
}

/// `_pad0`, `_pad1`, ...: the names generated code gives padding entries.
fn is_pad_name(name: &str) -> bool {
    name.strip_prefix("_pad").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Describes a field type that has its own byte order (a struct or union, or an array of them),
/// so that a field's `endian` would not apply to it.
fn own_order(ty: &Ty, decls: &[(String, Span, Decl<'_>)]) -> Option<String> {
    match ty {
        Ty::Named(id) => match decls[id.0].2 {
            Decl::Struct(_) => Some(format!("struct type `{}`", decls[id.0].0)),
            _ => None,
        },
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => Some(format!("union type `{}`", decls[id.0].0)),
        Ty::Array { elem, .. } => own_order(elem, decls),
        _ => None,
    }
}

fn kind_of(t: &TypeDef) -> &'static str {
    match t {
        TypeDef::Struct(_) => "struct",
        TypeDef::Enum(_) => "enum",
        TypeDef::Flags(_) => "flags type",
        TypeDef::Union(_) => "union",
        TypeDef::Extern(_) => "external type",
    }
}

/// How a header's name (optional) is located: the name if written, else the table.
fn name_span(name: &Sp<String>, table: &Span) -> Span {
    if name.is_placeholder() {
        table.clone()
    } else {
        name.span.clone()
    }
}

/// Type names from C and other languages, with the schema language's spelling.
const TYPE_ALIASES: &[(&str, &str)] = &[
    ("float", "f32"),
    ("double", "f64"),
    ("float32", "f32"),
    ("float64", "f64"),
    ("char", "u8"),
    ("byte", "u8"),
    ("uint8", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("int8", "i8"),
    ("int16", "i16"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("uint8_t", "u8"),
    ("uint16_t", "u16"),
    ("uint32_t", "u32"),
    ("uint64_t", "u64"),
    ("int8_t", "i8"),
    ("int16_t", "i16"),
    ("int32_t", "i32"),
    ("int64_t", "i64"),
    ("short", "i16"),
    ("int", "i32"),
    ("long", "i64"),
    ("boolean", "bool"),
    ("str", "string"),
    ("String", "string"),
];

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
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "_"
}

const BUILTIN_TYPES: &[&str] = &["bool", "string", "bytes"];

/// Words that cannot name a field in generated C (C11 and C++11 keywords).
const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "class",
    "namespace",
    "template",
    "this",
    "new",
    "delete",
    "private",
    "public",
    "protected",
    "virtual",
    "operator",
    "friend",
    "bool",
    "true",
    "false",
    "catch",
    "throw",
    "try",
    "using",
    "typename",
    "explicit",
    "mutable",
    "nullptr",
];

/// Words that not even a raw identifier can use in Rust.
const RUST_RESERVED: &[&str] = &["self", "Self", "super", "crate"];
