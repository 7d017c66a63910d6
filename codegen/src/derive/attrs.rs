//! The `#[record(...)]` attributes: on the container (`id`, `name`, `big`, `magic`, `const`,
//! `values`, `schema`, `runtime`, `repr`), on a field (`count`, `size`, `rest`, `variable`,
//! `tag`, `tag_field`, padding, docs) and on a union's variant (`tag`), parsed into plain values
//! with spanned errors.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::Errors;
use logspec_ir::ir::{self, Endian, Len, Prim, Ty};

#[derive(Default)]
pub(super) struct ContainerAttrs {
    pub(super) id: Option<(u64, Span)>,
    pub(super) name: Option<String>,
    pub(super) endian: Option<Endian>,
    pub(super) runtime: Option<String>,
    pub(super) repr: Option<Prim>,
    /// `schema = "schemas/x.toml"`: check the struct against that schema's record.
    pub(super) schema: Option<syn::LitStr>,
    /// `magic = b"MINI"`: a const at the start of the struct.
    pub(super) magic: Option<(Ty, ir::ConstValue)>,
    /// `const(name = value)`: named consts at the start of the struct (before its magic).
    pub(super) consts: Vec<NamedConst>,
    /// `values(IDLE = 0, RUN = 1)` on a newtype `struct Mode(u8)`: an enum that keeps unknown values.
    pub(super) values: Option<(Vec<ir::EnumValue>, Span)>,
}

#[derive(Default)]
pub(super) struct FieldAttrs {
    pub(super) endian: Option<Endian>,
    pub(super) count: Option<Prim>,
    pub(super) size: Option<Prim>,
    pub(super) rest: bool,
    pub(super) variable: bool,
    pub(super) pad_before: u32,
    pub(super) pad_after: u32,
    pub(super) unit: Option<String>,
    pub(super) doc: Option<String>,
    /// `magic = ...`: a const just before the field.
    pub(super) magic: Option<(Ty, ir::ConstValue)>,
    /// `const(name = value)`: named consts just before the field (before its magic).
    pub(super) consts: Vec<NamedConst>,
    /// `tag_field(name: u8)`: a union tag just before the field, for a later `tag = name`.
    pub(super) tag_field: Option<(String, Prim, Span)>,
    /// `tag(name: u8)` (declares the tag just before this field) or `tag = name` (an earlier
    /// `tag_field`): this field is a union selected by that tag.
    pub(super) tag: Option<(String, Option<Prim>, Span)>,
    /// The key of `count`, `size` or `rest`, for errors about the sequence length.
    pub(super) span: Option<Span>,
    /// The key of `variable`.
    pub(super) variable_span: Option<Span>,
    /// An attribute of this field did not parse (already reported; no follow-on errors).
    pub(super) failed: bool,
}

impl ContainerAttrs {
    /// The runtime path: the one the build script's generated code uses unless told otherwise.
    pub(super) fn runtime_path(&self) -> String {
        self.runtime.clone().unwrap_or_else(|| crate::backend::rust::DEFAULT_RUNTIME_PATH.to_string())
    }
}

fn lit_str(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<syn::LitStr> {
    meta.value()?.parse::<syn::LitStr>()
}

/// Whether the key stands alone (`big`), not `key = value`.
fn is_bare(meta: &syn::meta::ParseNestedMeta<'_>) -> bool {
    meta.input.is_empty() || meta.input.peek(syn::Token![,])
}

/// A value written bare (`u16`, `big`) or, in the older spelling, as a string (`"u16"`).
fn word(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(String, Span)> {
    let v = meta.value()?;
    if v.peek(syn::LitStr) {
        let s: syn::LitStr = v.parse()?;
        Ok((s.value(), s.span()))
    } else {
        let p: syn::Path = v.parse()?;
        Ok((p.to_token_stream().to_string().replace(' ', ""), p.span()))
    }
}

fn endian_of(value: &str, span: Span) -> syn::Result<Endian> {
    match value {
        "little" | "le" => Ok(Endian::Little),
        "big" | "be" => Ok(Endian::Big),
        other => Err(syn::Error::new(span, format!("unknown endianness `{other}`; expected `little` or `big`"))),
    }
}

fn prefix_of(value: &str, span: Span) -> syn::Result<Prim> {
    match Prim::from_name(value) {
        Some(p) if p.is_unsigned() => Ok(p),
        _ => Err(syn::Error::new(span, format!("a length prefix must be u8, u16, u32 or u64, found `{value}`"))),
    }
}

/// A named const: a field with a fixed value that decoders check, encoders write, and `Visit`
/// shows under its name, as a schema field with `const = ...`; not a member of the Rust type.
pub(super) struct NamedConst {
    pub(super) name: String,
    pub(super) ty: Ty,
    pub(super) value: ir::ConstValue,
}

/// `const(name = b"AB", version = 2u8)`: one or more named consts.
fn consts_of(meta: &syn::meta::ParseNestedMeta<'_>, out: &mut Vec<NamedConst>) -> syn::Result<()> {
    meta.parse_nested_meta(|inner| {
        let Some(name) = inner.path.get_ident().map(|i| i.to_string()) else {
            return Err(syn::Error::new_spanned(&inner.path, "a const's name is one identifier"));
        };
        let (ty, value) = magic_of(&inner)?;
        out.push(NamedConst { name, ty, value });
        Ok(())
    })
}

/// `(name: u8)`: a tag field's name and integer type.
fn tag_decl(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(String, Prim, Span)> {
    let content;
    syn::parenthesized!(content in meta.input);
    let name: syn::Ident = content.parse()?;
    content.parse::<syn::Token![:]>()?;
    let ty: syn::Ident = content.parse()?;
    if !content.is_empty() {
        return Err(content.error("expected `(name: u8)`"));
    }
    match Prim::from_name(&ty.to_string()) {
        Some(p) if !p.is_float() => Ok((name.to_string(), p, meta.path.span())),
        _ => Err(syn::Error::new(ty.span(), format!("a union tag is an integer (u8, u16, u32, ...), not `{ty}`"))),
    }
}

/// `magic = b"MINI"` (bytes) or `magic = 0xA55Au16` (an integer of the suffix's type): a const
/// that the struct's bytes hold, which is not a member of the Rust struct.
fn magic_of(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(Ty, ir::ConstValue)> {
    let lit: syn::Lit = meta.value()?.parse()?;
    match &lit {
        syn::Lit::ByteStr(b) if !b.value().is_empty() => {
            Ok((Ty::Bytes(Len::Fixed(b.value().len() as u32)), ir::ConstValue::Bytes(b.value())))
        }
        syn::Lit::Str(s) if !s.value().is_empty() => {
            let bytes = s.value().into_bytes();
            Ok((Ty::Bytes(Len::Fixed(bytes.len() as u32)), ir::ConstValue::Bytes(bytes)))
        }
        syn::Lit::Int(i) => {
            let Some(prim) = Prim::from_name(i.suffix()).filter(|p| !p.is_float()) else {
                return Err(syn::Error::new(
                    i.span(),
                    "an integer magic or const needs its wire type as a suffix, such as `0xA55Au16`",
                ));
            };
            let v = i.base10_parse::<i128>()?;
            match prim.int_range() {
                Some((lo, hi)) if v < lo || v > hi => {
                    Err(syn::Error::new(i.span(), format!("magic {v} does not fit in {prim}")))
                }
                _ => Ok((Ty::Prim(prim), ir::ConstValue::Int(v))),
            }
        }
        other => Err(syn::Error::new(
            other.span(),
            "a magic or const must be a byte string (`b\"MINI\"`) or a suffixed integer (`0xA55Au16`)",
        )),
    }
}

/// An unknown key: the error underlines the key and suggests the nearest known one.
fn unknown_key(meta: &syn::meta::ParseNestedMeta<'_>, what: &str, known: &[&str]) -> syn::Error {
    let key = meta.path.to_token_stream().to_string();
    let hint = match logspec_ir::diag::did_you_mean(&key, known.iter().copied()) {
        Some(k) => format!("did you mean `{k}`?"),
        None => format!("expected one of: {}", known.join(", ")),
    };
    syn::Error::new_spanned(&meta.path, format!("unknown {what} attribute `{key}`; {hint}"))
}

const CONTAINER_KEYS: &[&str] =
    &["id", "name", "schema", "big", "little", "endian", "magic", "const", "values", "runtime", "repr"];

/// An integer literal, possibly negative.
fn int_expr(e: &syn::Expr) -> syn::Result<i128> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<i128>(),
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => Ok(-int_expr(expr)?),
        other => Err(syn::Error::new(other.span(), "expected an integer literal")),
    }
}

const FIELD_KEYS: &[&str] = &[
    "big",
    "little",
    "endian",
    "count",
    "size",
    "rest",
    "variable",
    "magic",
    "const",
    "tag",
    "tag_field",
    "pad_before",
    "pad_after",
    "unit",
    "doc",
];

pub(super) fn container_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("repr") {
            let _ = attr.parse_nested_meta(|meta| {
                if let Some(id) = meta.path.get_ident() {
                    if let Some(p) = Prim::from_name(&id.to_string()) {
                        out.repr = Some(p);
                    }
                }
                Ok(())
            });
        }
        if !attr.path().is_ident("record") {
            continue;
        }
        let r = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("id") {
                let lit: syn::LitInt = meta.value()?.parse()?;
                out.id = Some((lit.base10_parse::<u64>()?, lit.span()));
            } else if meta.path.is_ident("name") {
                out.name = Some(lit_str(&meta)?.value());
            } else if (meta.path.is_ident("big") || meta.path.is_ident("little")) && is_bare(&meta) {
                out.endian = Some(if meta.path.is_ident("big") { Endian::Big } else { Endian::Little });
            } else if meta.path.is_ident("endian") {
                let (v, span) = word(&meta)?;
                out.endian = Some(endian_of(&v, span)?);
            } else if meta.path.is_ident("magic") {
                out.magic = Some(magic_of(&meta)?);
            } else if meta.path.is_ident("const") {
                consts_of(&meta, &mut out.consts)?;
            } else if meta.path.is_ident("values") {
                let mut values = Vec::new();
                meta.parse_nested_meta(|v| {
                    let name = v.path.require_ident()?.to_string();
                    let e: syn::Expr = v.value()?.parse()?;
                    values.push(ir::EnumValue { name, value: int_expr(&e)?, doc: None });
                    Ok(())
                })?;
                out.values = Some((values, meta.path.span()));
            } else if meta.path.is_ident("schema") {
                out.schema = Some(lit_str(&meta)?);
            } else if meta.path.is_ident("runtime") {
                let (v, span) = word(&meta)?;
                crate::backend::rust::parse_runtime_path(&v).map_err(|e| syn::Error::new(span, e))?;
                out.runtime = Some(v);
            } else if meta.path.is_ident("repr") {
                let (v, span) = word(&meta)?;
                match Prim::from_name(&v) {
                    Some(p) if !p.is_float() => out.repr = Some(p),
                    _ => return Err(syn::Error::new(span, "repr must be an integer type such as `u8`")),
                }
            } else {
                return Err(unknown_key(&meta, "record", CONTAINER_KEYS));
            }
            Ok(())
        });
        if let Err(e) = r {
            errors.push(e);
        }
    }
    out
}

pub(super) fn field_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    let mut docs = Vec::new();
    for attr in attrs {
        if attr.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &attr.meta {
                if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                    docs.push(s.value().trim().to_string());
                }
            }
            continue;
        }
        if !attr.path().is_ident("record") {
            continue;
        }
        let r = attr.parse_nested_meta(|meta| {
            let key = meta.path.span();
            if (meta.path.is_ident("big") || meta.path.is_ident("little")) && is_bare(&meta) {
                out.endian = Some(if meta.path.is_ident("big") { Endian::Big } else { Endian::Little });
            } else if meta.path.is_ident("endian") {
                let (v, span) = word(&meta)?;
                out.endian = Some(endian_of(&v, span)?);
            } else if meta.path.is_ident("count") {
                let (v, span) = word(&meta)?;
                out.count = Some(prefix_of(&v, span)?);
                out.span = Some(key);
            } else if meta.path.is_ident("size") {
                let (v, span) = word(&meta)?;
                out.size = Some(prefix_of(&v, span)?);
                out.span = Some(key);
            } else if meta.path.is_ident("rest") {
                out.rest = true;
                out.span = Some(key);
            } else if meta.path.is_ident("variable") {
                out.variable = true;
                out.variable_span = Some(key);
            } else if meta.path.is_ident("magic") {
                out.magic = Some(magic_of(&meta)?);
            } else if meta.path.is_ident("const") {
                consts_of(&meta, &mut out.consts)?;
            } else if meta.path.is_ident("tag_field") {
                out.tag_field = Some(tag_decl(&meta)?);
            } else if meta.path.is_ident("tag") {
                if meta.input.peek(syn::token::Paren) {
                    let (name, prim, span) = tag_decl(&meta)?;
                    out.tag = Some((name, Some(prim), span));
                } else {
                    let (name, _) = word(&meta)?;
                    out.tag = Some((name, None, key));
                }
            } else if meta.path.is_ident("pad_before") || meta.path.is_ident("pad_after") {
                let lit: syn::LitInt = meta.value()?.parse()?;
                let n = lit.base10_parse::<u32>()?;
                if n == 0 {
                    return Err(syn::Error::new(lit.span(), "padding must be at least 1 byte"));
                }
                if meta.path.is_ident("pad_before") {
                    out.pad_before = n;
                } else {
                    out.pad_after = n;
                }
            } else if meta.path.is_ident("unit") {
                out.unit = Some(lit_str(&meta)?.value());
            } else if meta.path.is_ident("doc") {
                out.doc = Some(lit_str(&meta)?.value());
            } else {
                return Err(unknown_key(&meta, "field", FIELD_KEYS));
            }
            Ok(())
        });
        if let Err(e) = r {
            out.failed = true;
            errors.push(e);
        }
    }
    if out.doc.is_none() && !docs.is_empty() {
        out.doc = Some(docs.join(" "));
    }
    out
}

/// `#[record(tag = N)]` (or `= N`) on a union's variant: its tag value.
pub(super) fn variant_tag(v: &syn::Variant, errors: &mut Errors) -> Option<i128> {
    let mut tag = None;
    let mut docs = Vec::new();
    for attr in &v.attrs {
        if attr.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &attr.meta {
                if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                    docs.push(s.value());
                }
            }
        }
        if !attr.path().is_ident("record") {
            continue;
        }
        let r = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("tag") {
                let e: syn::Expr = meta.value()?.parse()?;
                tag = Some(int_expr(&e)?);
                Ok(())
            } else {
                Err(unknown_key(&meta, "variant", &["tag"]))
            }
        });
        if let Err(e) = r {
            errors.push(e);
        }
    }
    if tag.is_none() {
        if let Some((_, e)) = &v.discriminant {
            match int_expr(e) {
                Ok(t) => tag = Some(t),
                Err(e) => errors.push(e),
            }
        }
    }
    tag
}
