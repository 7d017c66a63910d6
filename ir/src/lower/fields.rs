//! Struct fields: their names, types (`T`, `T[N]`, `T[]` with `count`/`size`), variable-width
//! integers (`width`) and the per-field checks that go with them.

use std::collections::BTreeMap;

use super::names::{is_pad_name, BUILTIN_TYPES};
use super::{inner_span, Cx, Decl};
use crate::diag::{did_you_mean, Code};
use crate::ir::{self, Endian, Len, Prim, Ty, TypeId};
use crate::schema::{FieldDecl, Sp, Span};

impl Cx {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn strukt(
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

    pub(super) fn fields(
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
