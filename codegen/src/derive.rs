//! `#[derive(Record)]`: lowers a hand-written Rust struct (or C-like enum) into the IR and emits
//! the same impls as the Rust back end, through [`crate::backend::rust::codec`].
//!
//! Keys are binrw-style bare keywords; the older string spellings (`endian = "big"`,
//! `count = "u16"`) mean the same and keep working.
//!
//! Container attributes (`#[record(...)]` on the struct):
//! - `id = N`: the record id; implements `Record` (with `name = "REC_X"`, default: the Rust name);
//! - `big` or `little` (or `endian = big`): default byte order of the fields (little);
//! - `magic = b"MINI"` (bytes) or `magic = 0xA55Au16` (an integer typed by its suffix): a const
//!   at the start of the struct, written by encoders and checked by decoders; not a Rust field;
//! - `schema = "schemas/x.toml"`: check the struct against the record of that name in the schema
//!   (and take its id, name and fingerprint);
//! - `runtime = ::path`: where the runtime is; default `::logspec_runtime`, the same as the
//!   build script's generated code (depend on `logspec-runtime`), or `::logspec::runtime` through
//!   the facade. Something that is not a path is an error.
//!
//! Field attributes:
//! - `big`, `little` (or `endian = big`): this field's byte order;
//! - `count = u16`: a `String`/`Vec` prefixed by its element count (u8, u16, u32, u64);
//! - `size = u32`: a `String`/`Vec` prefixed by its size in bytes;
//! - `rest`: a `String`/`Vec` running to the end of the payload (last field only);
//! - `variable`: the field's hand-written type has no fixed size (it implements `Decode` and
//!   `Encode` but not `Fixed`); without it, such types must implement `Fixed`, so that the
//!   struct decodes with constant offsets;
//! - `magic = ...`: a const just before the field (and before its `pad_before`);
//! - `pad_before = N`, `pad_after = N`: N zero bytes before/after the field;
//! - `unit = "m"`, `doc = "..."`: documentation (the fingerprint ignores them).
//!
//! Enums: on a C-like enum, `#[record(repr = u8)]` (or `#[repr(u8)]`) gives the wire type, and a
//! value outside the variants is a decode error. For an enum that keeps values it does not name
//! (as schema enums do), derive on an integer newtype with `values(...)`:
//! `#[record(values(IDLE = 0, RUN = 1))] struct Mode(u8);` gets `Mode::IDLE`, `Mode::ALL`,
//! `Mode::name()` and the codec of a schema enum.
//!
//! Consts: `const(version = 2u8, tag = b"AB")` on the struct (at the start) or on a field (just
//! before it) declares named const fields, as the schema's `const = ...`: not Rust members,
//! written by encoders, checked by decoders, shown by `Visit` under their names.
//!
//! Unions: an enum with data derives a tagged union (`Union` and `Visit`), as a schema
//! `[[union]]`. Variants have named fields (or none) and a tag: `#[record(tag = N)]`, the
//! discriminant, or the previous tag plus one (from 0). A struct field of that type selects the
//! variant by a tag that is not a Rust member either:
//! - `tag(kind: u8)` on the union field: a `u8` tag written just before it;
//! - `tag_field(kind: u16)` on an earlier field (the tag goes just before that field) and
//!   `tag = kind` on the union field.
//!
//! Views: a derived struct `Foo` also gets `FooRef<'a>`, and a derived union `U` an enum of views
//! `URef<'a>`, from the functions that make a schema type's view ([`crate::backend::rust::views`]),
//! with `to_owned()`, `Encode`, and the consts of a schema type (`SIZE`, `OFFSET_<FIELD>`,
//! `TAG_<VARIANT>`). A field of a hand-written type is held by value in the view, so that type must
//! implement `Clone`, `Debug` and `PartialEq`.
//!
//! Not yet expressible with the derive: unions selected by a type name or a reader parameter,
//! bit-fields and variable-width integers (declare them in a schema and use the generated types).
//!
//! Errors underline the attribute key (or its value), and an unknown key gets a did-you-mean.
//! Errors are spanned `syn::Error`s, all collected before returning; the macro never panics.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

use crate::backend::rust::codec::{self, StructSpec};
use crate::backend::rust::views;
use crate::backend::rust::Cx;
use crate::ir::{self, Endian, Len, Prim, Ty, TypeDef, TypeId};

/// Collects errors so that every mistake is reported in one compile.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    fn at(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }

    fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Expands `#[derive(Record)]`.
pub fn expand(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "#[derive(Record)] does not support generic types: a wire layout must be concrete",
        );
    }
    let attrs = container_attrs(&input.attrs, &mut errors);
    let out = match &input.data {
        syn::Data::Struct(s) => expand_struct(input, s, &attrs, &mut errors),
        syn::Data::Enum(e) => expand_enum(input, e, &attrs, &mut errors),
        syn::Data::Union(u) => {
            errors.at(u.union_token.span, "#[derive(Record)] works on structs and C-like enums, not unions");
            TokenStream::new()
        }
    };
    errors.finish()?;
    Ok(out)
}

#[derive(Default)]
struct ContainerAttrs {
    id: Option<(u64, Span)>,
    name: Option<String>,
    endian: Option<Endian>,
    runtime: Option<String>,
    repr: Option<Prim>,
    /// `schema = "schemas/x.toml"`: check the struct against that schema's record.
    schema: Option<syn::LitStr>,
    /// `magic = b"MINI"`: a const at the start of the struct.
    magic: Option<(Ty, ir::ConstValue)>,
    /// `const(name = value)`: named consts at the start of the struct (before its magic).
    consts: Vec<NamedConst>,
    /// `values(IDLE = 0, RUN = 1)` on a newtype `struct Mode(u8)`: an enum that keeps unknown values.
    values: Option<(Vec<ir::EnumValue>, Span)>,
}

#[derive(Default)]
struct FieldAttrs {
    endian: Option<Endian>,
    count: Option<Prim>,
    size: Option<Prim>,
    rest: bool,
    variable: bool,
    pad_before: u32,
    pad_after: u32,
    unit: Option<String>,
    doc: Option<String>,
    /// `magic = ...`: a const just before the field.
    magic: Option<(Ty, ir::ConstValue)>,
    /// `const(name = value)`: named consts just before the field (before its magic).
    consts: Vec<NamedConst>,
    /// `tag_field(name: u8)`: a union tag just before the field, for a later `tag = name`.
    tag_field: Option<(String, Prim, Span)>,
    /// `tag(name: u8)` (declares the tag just before this field) or `tag = name` (an earlier
    /// `tag_field`): this field is a union selected by that tag.
    tag: Option<(String, Option<Prim>, Span)>,
    /// The key of `count`, `size` or `rest`, for errors about the sequence length.
    span: Option<Span>,
    /// The key of `variable`.
    variable_span: Option<Span>,
    /// An attribute of this field did not parse (already reported; no follow-on errors).
    failed: bool,
}

impl ContainerAttrs {
    /// The runtime path: the one the build script's generated code uses unless told otherwise.
    fn runtime_path(&self) -> String {
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
struct NamedConst {
    name: String,
    ty: Ty,
    value: ir::ConstValue,
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
    let hint = match crate::diag::did_you_mean(&key, known.iter().copied()) {
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

fn container_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> ContainerAttrs {
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

fn field_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> FieldAttrs {
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

/// Maps a Rust field type onto an IR type, registering hand-written types as externs.
fn lower_type(ty: &syn::Type, attrs: &FieldAttrs, externs: &mut Vec<String>, errors: &mut Errors, top: bool) -> Ty {
    let seq_len = |errors: &mut Errors| -> Len {
        match (attrs.count, attrs.size, attrs.rest) {
            (Some(p), None, false) => Len::Count(p),
            (None, Some(p), false) => Len::Size(p),
            (None, None, true) => Len::Rest,
            (None, None, false) if attrs.failed => Len::Rest,
            (None, None, false) => {
                errors.at(
                    ty.span(),
                    "a variable-length field needs #[record(count = u16)], #[record(size = u32)] or #[record(rest)]",
                );
                Len::Rest
            }
            _ => {
                errors.at(attrs.span.unwrap_or_else(|| ty.span()), "give only one of `count`, `size` and `rest`");
                Len::Rest
            }
        }
    };
    match ty {
        syn::Type::Array(a) => {
            let n = match &a.len {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => {
                    i.base10_parse::<u32>().unwrap_or_else(|e| {
                        errors.push(e);
                        0
                    })
                }
                other => {
                    errors.at(other.span(), "array lengths must be integer literals so that the layout is known");
                    0
                }
            };
            let elem = lower_type(&a.elem, &FieldAttrs::default(), externs, errors, false);
            Ty::Array { elem: Box::new(elem), len: Len::Fixed(n) }
        }
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            if p.path.segments.len() == 1 {
                if let Some(prim) = Prim::from_name(&last) {
                    return Ty::Prim(prim);
                }
                if last == "bool" {
                    return Ty::Bool;
                }
            }
            if last == "String" {
                if !top {
                    errors.at(
                        ty.span(),
                        "strings inside arrays are not supported by the derive; declare the layout in a schema",
                    );
                }
                return Ty::Str(seq_len(errors));
            }
            if last == "Vec" {
                let inner = match &p.path.segments.last().map(|s| &s.arguments) {
                    Some(syn::PathArguments::AngleBracketed(args)) => args.args.iter().find_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    }),
                    _ => None,
                };
                let Some(inner) = inner else {
                    errors.at(ty.span(), "expected `Vec<T>`");
                    return Ty::Bool;
                };
                if !top {
                    errors.at(ty.span(), "nested variable-length sequences are not supported by the derive");
                }
                let len = seq_len(errors);
                let elem = lower_type(&inner, &FieldAttrs::default(), externs, errors, false);
                if elem == Ty::Prim(Prim::U8) {
                    return Ty::Bytes(len);
                }
                return Ty::Array { elem: Box::new(elem), len };
            }
            let path = p.path.to_token_stream().to_string().replace(' ', "");
            let i = externs.iter().position(|x| *x == path).unwrap_or_else(|| {
                externs.push(path);
                externs.len() - 1
            });
            // Extern ids are patched to follow the struct itself (id 0).
            Ty::Named(TypeId(i + 1))
        }
        other => {
            errors.at(other.span(), "unsupported field type; use integers, floats, bool, [T; N], String, Vec<T> or a type that derives Record");
            Ty::Bool
        }
    }
}

/// What comes before the first field: a container's named consts and magic.
struct Leading<'a> {
    consts: &'a [NamedConst],
    magic: Option<&'a (Ty, ir::ConstValue)>,
    span: Span,
}

/// The IR fields of a struct's or a union variant's named fields, with the source span of each
/// (padding, consts and tags: their field's). Hand-written types become externs.
fn lower_fields(
    named: &syn::FieldsNamed,
    endian: Endian,
    lead: &Leading<'_>,
    externs: &mut Vec<String>,
    variable: &mut Vec<String>,
    errors: &mut Errors,
) -> (Vec<ir::Field>, Vec<Span>) {
    let mut fields: Vec<ir::Field> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut pads = 0;
    let mut magics = 0;
    let plain = |name: String, ty: Ty, endian: Endian, value: Option<ir::ConstValue>| ir::Field {
        name,
        ty,
        endian,
        doc: None,
        unit: None,
        value,
        offset: None,
    };
    let mut magic =
        |m: &(Ty, ir::ConstValue), e: Endian, at: Span, fields: &mut Vec<ir::Field>, spans: &mut Vec<Span>| {
            spans.push(at);
            fields.push(plain(format!("_magic{magics}"), m.0.clone(), e, Some(m.1.clone())));
            magics += 1;
        };
    let named_const = |c: &NamedConst, e: Endian, at: Span, fields: &mut Vec<ir::Field>, spans: &mut Vec<Span>| {
        spans.push(at);
        fields.push(plain(c.name.clone(), c.ty.clone(), e, Some(c.value.clone())));
    };
    for c in lead.consts {
        named_const(c, endian, lead.span, &mut fields, &mut spans);
    }
    if let Some(m) = lead.magic {
        magic(m, endian, lead.span, &mut fields, &mut spans);
    }
    // Union tags declared so far: name -> IR field index.
    let mut tags: Vec<(String, usize)> = Vec::new();
    let n = named.named.len();
    for (i, f) in named.named.iter().enumerate() {
        let fa = field_attrs(&f.attrs, errors);
        let ident = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
        let name = ident.strip_prefix("r#").unwrap_or(&ident).to_string();
        if fa.rest && i + 1 != n {
            errors.at(fa.span.unwrap_or_else(|| f.span()), "`rest` is only allowed on the last field");
        }
        let fspan = f.ident.as_ref().map_or_else(|| f.span(), |i| i.span());
        let fe = fa.endian.unwrap_or(endian);
        let mut declare_tag =
            |(tname, prim, at): (&String, Prim, Span), fields: &mut Vec<ir::Field>, spans: &mut Vec<Span>| {
                if tags.iter().any(|(t, _)| t == tname) || fields.iter().any(|f| f.name == *tname) {
                    errors.at(at, format!("a field named `{tname}` already exists"));
                }
                tags.push((tname.clone(), fields.len()));
                spans.push(at);
                fields.push(plain(tname.clone(), Ty::Prim(prim), fe, None));
            };
        if let Some((t, p, at)) = &fa.tag_field {
            declare_tag((t, *p, *at), &mut fields, &mut spans);
        }
        for c in &fa.consts {
            named_const(c, fe, fspan, &mut fields, &mut spans);
        }
        if let Some(m) = &fa.magic {
            magic(m, fe, fspan, &mut fields, &mut spans);
        }
        if fa.pad_before > 0 {
            spans.push(fspan);
            fields.push(plain(format!("_pad{pads}"), Ty::Pad(fa.pad_before), endian, None));
            pads += 1;
        }
        if let Some((t, Some(p), at)) = &fa.tag {
            declare_tag((t, *p, *at), &mut fields, &mut spans);
        }
        let mut ty = lower_type(&f.ty, &fa, externs, errors, true);
        if fa.variable {
            match &ty {
                Ty::Named(TypeId(i)) => variable.push(externs[i - 1].clone()),
                Ty::Array { elem, .. } if matches!(**elem, Ty::Named(_)) => {
                    if let Ty::Named(TypeId(i)) = **elem {
                        variable.push(externs[i - 1].clone());
                    }
                }
                _ => errors.at(
                    fa.variable_span.unwrap_or_else(|| f.span()),
                    "`variable` only applies to fields of a hand-written type",
                ),
            }
        }
        if let Some((t, _, at)) = &fa.tag {
            match (&ty, tags.iter().find(|(name, _)| name == t)) {
                (Ty::Named(TypeId(id)), Some((_, tag_field))) => {
                    variable.push(externs[id - 1].clone());
                    ty = Ty::Union { id: TypeId(*id), tag_field: *tag_field };
                }
                (Ty::Named(_), None) => errors.at(
                    *at,
                    format!("no earlier tag field `{t}`: declare it with #[record(tag_field({t}: u8))] on an earlier field, or use #[record(tag({t}: u8))] here"),
                ),
                _ => errors.at(*at, "`tag` applies to a field whose type is a union (an enum that derives Record)"),
            }
        }
        if !matches!(ty, Ty::Str(_) | Ty::Bytes(_) | Ty::Array { len: Len::Count(_) | Len::Size(_) | Len::Rest, .. })
            && (fa.count.is_some() || fa.size.is_some() || fa.rest)
        {
            errors.at(
                fa.span.unwrap_or_else(|| f.span()),
                "`count`, `size` and `rest` only apply to String and Vec fields",
            );
        }
        spans.push(fspan);
        fields.push(ir::Field {
            name,
            ty,
            endian: fe,
            doc: fa.doc.clone(),
            unit: fa.unit.clone(),
            value: None,
            offset: None,
        });
        if fa.pad_after > 0 {
            spans.push(fspan);
            fields.push(plain(format!("_pad{pads}"), Ty::Pad(fa.pad_after), endian, None));
            pads += 1;
        }
    }
    (fields, spans)
}

fn expand_struct(
    input: &syn::DeriveInput,
    data: &syn::DataStruct,
    attrs: &ContainerAttrs,
    errors: &mut Errors,
) -> TokenStream {
    if let Some((values, span)) = &attrs.values {
        return expand_open_enum(input, data, values, *span, attrs, errors);
    }
    let syn::Fields::Named(named) = &data.fields else {
        errors.at(
            data.fields.span(),
            "#[derive(Record)] needs a struct with named fields, or a newtype with `values(...)`",
        );
        return TokenStream::new();
    };
    let endian = attrs.endian.unwrap_or(Endian::Little);
    let mut externs = Vec::new();
    // Hand-written field types that the user marked `#[record(variable)]` (and unions); the
    // others must implement `Fixed`, which lets the struct decode with constant offsets.
    let mut variable: Vec<String> = Vec::new();
    let lead = Leading { consts: &attrs.consts, magic: attrs.magic.as_ref(), span: input.ident.span() };
    let (mut fields, spans) = lower_fields(named, endian, &lead, &mut externs, &mut variable, errors);
    let ident = &input.ident;
    let name = attrs.name.clone().unwrap_or_else(|| ident.to_string());
    let size = crate::layout::place_fields(&|_| None, &mut fields);
    let mut types = vec![TypeDef::Struct(ir::Struct { name: ident.to_string(), doc: None, endian, fields, size })];
    types.extend(externs.into_iter().map(|path| {
        let fixed = !variable.contains(&path);
        TypeDef::Extern(ir::Extern { path, fixed })
    }));
    let mut schema = ir::Schema {
        format: ir::Format { name: String::new(), title: None, doc: None, endian, version: None, schema_id: None },
        types,
        file_header: None,
        framing: None,
        records: Vec::new(),
        params: Vec::new(),
        source: None,
    };
    let mut record = attrs.id.map(|(id, _)| ir::Record {
        name: name.clone(),
        id,
        doc: None,
        body: TypeId(0),
        fingerprint: crate::fingerprint::of_struct(&schema, TypeId(0)),
    });
    let mut tracking = TokenStream::new();
    if let Some(lit) = &attrs.schema {
        if let Some((rec, path)) = cross_check(lit, &name, attrs.id, &schema, &spans, errors) {
            // Rebuild when the schema changes.
            let p = path.display().to_string();
            tracking = quote!(
                const _: &[u8] = include_bytes!(#p);
            );
            record = Some(ir::Record { body: TypeId(0), ..rec });
        }
    }
    let name = record.as_ref().map_or(name, |r| r.name.clone());
    schema.records.extend(record.clone());
    let mut cx = Cx::new(&schema, &attrs.runtime_path());
    cx.vis = input.vis.to_token_stream();
    let TypeDef::Struct(s) = &schema.types[0] else { return TokenStream::new() };
    let impls = codec::struct_impls(
        &cx,
        &StructSpec { display_name: &name, ident: quote!(#ident), fields: &s.fields, record: record.as_ref() },
    );
    // The same consts and borrowed view as a schema struct, from the same functions.
    let consts = crate::backend::rust::types::struct_consts(ident, s);
    let view = views::struct_view(&cx, TypeId(0), &name, &s.fields);
    quote!(#tracking #impls #consts #view)
}

/// Checks the struct (lowered into `mini`) against record `name` of the schema file `lit`:
/// the same fields, in the same order, with the same wire types (hand-written nested types are
/// checked by name only). Returns the schema's record, whose id, name and fingerprint the derive
/// then uses.
fn cross_check(
    lit: &syn::LitStr,
    name: &str,
    id: Option<(u64, Span)>,
    mini: &ir::Schema,
    spans: &[Span],
    errors: &mut Errors,
) -> Option<(ir::Record, std::path::PathBuf)> {
    let base = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from).unwrap_or_default();
    let path = base.join(lit.value());
    let schema = match crate::compile_file(&path) {
        Ok(s) => s,
        Err(e) => {
            let first = e.diagnostics.first().map_or(String::new(), |d| d.message.clone());
            errors.at(lit.span(), format!("cannot use schema `{}`: {first}", path.display()));
            return None;
        }
    };
    let Some(rec) = schema.records.iter().find(|r| r.name == name) else {
        let names: Vec<&str> = schema.records.iter().map(|r| r.name.as_str()).collect();
        let hint = crate::diag::did_you_mean(name, names.iter().copied())
            .map_or_else(|| format!("its records are {}", names.join(", ")), |h| format!("did you mean `{h}`?"));
        errors.at(
            lit.span(),
            format!("schema `{}` has no record `{name}`; {hint} (set it with `name = \"...\"`)", lit.value()),
        );
        return None;
    };
    if let Some((given, span)) = id {
        if given != rec.id {
            errors.at(span, format!("record {name} has id {} in `{}`, not {given}", rec.id, lit.value()));
        }
    }
    let TypeDef::Struct(ours) = &mini.types[0] else { return None };
    let theirs = schema.strukt(rec.body);
    let describe = |s: &ir::Schema, f: &ir::Field| {
        if f.is_padding() {
            format!("{} bytes of padding", crate::layout::size_of(s, &f.ty).unwrap_or(0))
        } else {
            format!("`{}: {}`", f.name, crate::fingerprint::field_type(s, f))
        }
    };
    let mut ok = true;
    for (i, theirs_f) in theirs.fields.iter().enumerate() {
        let Some(ours_f) = ours.fields.get(i) else {
            let span = spans.last().copied().unwrap_or_else(Span::call_site);
            errors.at(
                span,
                format!(
                    "{name} in `{}` continues with {}, which this struct lacks",
                    lit.value(),
                    describe(&schema, theirs_f)
                ),
            );
            ok = false;
            break;
        };
        let extern_ty = matches!(&ours_f.ty, Ty::Named(id) if matches!(mini.types[id.0], TypeDef::Extern(_)));
        let same_name =
            ours_f.is_padding() == theirs_f.is_padding() && (ours_f.is_padding() || ours_f.name == theirs_f.name);
        let same_type = extern_ty
            || crate::fingerprint::field_type(mini, ours_f) == crate::fingerprint::field_type(&schema, theirs_f);
        if !same_name || !same_type {
            errors.at(
                spans[i],
                format!(
                    "this struct disagrees with {name} in `{}`: field {} is {} there, {} here",
                    lit.value(),
                    i + 1,
                    describe(&schema, theirs_f),
                    describe(mini, ours_f)
                ),
            );
            ok = false;
            break;
        }
    }
    if ok && ours.fields.len() > theirs.fields.len() {
        let extra = &ours.fields[theirs.fields.len()];
        errors.at(
            spans[theirs.fields.len()],
            format!(
                "{name} in `{}` has no field after this point, but this struct has {}",
                lit.value(),
                describe(mini, extra)
            ),
        );
    }
    Some((rec.clone(), path))
}

fn expand_enum(
    input: &syn::DeriveInput,
    data: &syn::DataEnum,
    attrs: &ContainerAttrs,
    errors: &mut Errors,
) -> TokenStream {
    let tagged = data
        .variants
        .iter()
        .any(|v| !matches!(v.fields, syn::Fields::Unit) || v.attrs.iter().any(|a| a.path().is_ident("record")));
    if tagged {
        return expand_union(input, data, attrs, errors);
    }
    let Some(repr) = attrs.repr else {
        errors.at(input.ident.span(), "a C-like enum needs its wire type: #[repr(u8)] or #[record(repr = \"u8\")]");
        return TokenStream::new();
    };
    let rt =
        crate::backend::rust::parse_runtime_path(&attrs.runtime_path()).unwrap_or_else(|e| quote!(compile_error!(#e)));
    let ident = &input.ident;
    let name = ident.to_string();
    let base = crate::backend::rust::prim_type(repr);
    let mut next: i128 = 0;
    let mut arms = TokenStream::new();
    let mut names = TokenStream::new();
    let mut raws = TokenStream::new();
    for v in &data.variants {
        if !matches!(v.fields, syn::Fields::Unit) {
            errors.at(v.fields.span(), "unreachable: an enum with data is a union");
            continue;
        }
        if let Some((_, e)) = &v.discriminant {
            match e {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => match i.base10_parse::<i128>() {
                    Ok(x) => next = x,
                    Err(err) => errors.push(err),
                },
                syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => match &**expr {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => match i.base10_parse::<i128>() {
                        Ok(x) => next = -x,
                        Err(err) => errors.push(err),
                    },
                    other => errors.at(other.span(), "discriminants must be integer literals"),
                },
                other => errors.at(other.span(), "discriminants must be integer literals"),
            }
        }
        if let Some((lo, hi)) = repr.int_range() {
            if next < lo || next > hi {
                errors.at(v.ident.span(), format!("discriminant {next} does not fit in {repr}"));
            }
        }
        let vid = &v.ident;
        let lit = proc_macro2::Literal::i128_unsuffixed(next);
        arms.extend(quote!(#lit => ::core::result::Result::Ok(Self::#vid),));
        let vname = vid.to_string();
        names.extend(quote!(Self::#vid => #vname,));
        raws.extend(quote!(Self::#vid => #lit,));
        next += 1;
    }
    let size = repr.size() as usize;
    quote! {
        #[automatically_derived]
        impl #rt::Fixed for #ident {
            const SIZE: usize = #size;
            #[inline]
            fn decode_fixed(b: &[u8], order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                let raw = <#base as #rt::Fixed>::decode_fixed(b, order)?;
                match raw {
                    #arms
                    other => ::core::result::Result::Err(#rt::__private::invalid_value(other as i128, #name)),
                }
            }
            #[inline]
            fn encode_fixed(&self, out: &mut [u8], order: #rt::Endian) {
                let raw: #base = match self { #raws };
                #rt::Fixed::encode_fixed(&raw, out, order)
            }
        }
        #[automatically_derived]
        impl #rt::Decode for #ident {
            #[inline]
            fn decode(c: &mut #rt::Cursor<'_>, order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                let at = c.position();
                let b = c.take(#size)?;
                <Self as #rt::Fixed>::decode_fixed(b, order).map_err(|e| e.at(at))
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #ident {
            fn encoded_len(&self) -> usize {
                #size
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                let raw: #base = match self { #raws };
                #rt::Encode::encode(&raw, out, order)
            }
        }
        #[automatically_derived]
        impl #rt::Visit for #ident {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                let label: &'static str = match self { #names };
                let raw: #base = match self { #raws };
                v.enumeration(name, raw as i128, ::core::option::Option::Some(label));
            }
        }
    }
}

/// `#[record(values(IDLE = 0, RUN = 1))]` on `struct Mode(u8)`: an enum as the schema language
/// has it, whose values outside the named ones are kept. Emits the impls of a schema enum (a
/// const per value, `ALL`, `name()`, the codec and `Visit`) through the Rust back end.
fn expand_open_enum(
    input: &syn::DeriveInput,
    data: &syn::DataStruct,
    values: &[ir::EnumValue],
    span: Span,
    attrs: &ContainerAttrs,
    errors: &mut Errors,
) -> TokenStream {
    let base = match &data.fields {
        syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => match &u.unnamed[0].ty {
            syn::Type::Path(p) if p.qself.is_none() => {
                p.path.get_ident().and_then(|i| Prim::from_name(&i.to_string())).filter(|p| !p.is_float())
            }
            _ => None,
        },
        _ => None,
    };
    let Some(base) = base else {
        errors.at(span, "`values` needs a newtype over an integer, such as `struct Mode(u8);`");
        return TokenStream::new();
    };
    for (i, v) in values.iter().enumerate() {
        if let Some((lo, hi)) = base.int_range() {
            if v.value < lo || v.value > hi {
                errors.at(span, format!("value {} = {} does not fit in {base}", v.name, v.value));
            }
        }
        if values[..i].iter().any(|w| w.name == v.name || w.value == v.value) {
            errors.at(span, format!("value {} = {} repeats a name or a value", v.name, v.value));
        }
    }
    let e = ir::Enum { name: input.ident.to_string(), doc: None, base, values: values.to_vec() };
    let schema = ir::Schema {
        format: ir::Format {
            name: String::new(),
            title: None,
            doc: None,
            endian: Endian::Little,
            version: None,
            schema_id: None,
        },
        types: vec![TypeDef::Enum(e.clone())],
        file_header: None,
        framing: None,
        records: Vec::new(),
        params: Vec::new(),
        source: None,
    };
    let cx = Cx::new(&schema, &attrs.runtime_path());
    crate::backend::rust::types::enum_impls(&cx, &e, &input.ident, TokenStream::new())
}

/// `#[record(tag = N)]` (or `= N`) on a union's variant: its tag value.
fn variant_tag(v: &syn::Variant, errors: &mut Errors) -> Option<i128> {
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

/// `#[derive(Record)]` on an enum with data: a tagged union, as a schema `[[union]]`. Each
/// variant has named fields (or none) and a tag value (`#[record(tag = N)]`, the discriminant,
/// or the previous tag plus one, from 0); a struct selects it with `#[record(tag(kind: u8))]` on
/// the field of this type. Emits the `Union` and `Visit` impls of the Rust back end.
fn expand_union(
    input: &syn::DeriveInput,
    data: &syn::DataEnum,
    attrs: &ContainerAttrs,
    errors: &mut Errors,
) -> TokenStream {
    let endian = attrs.endian.unwrap_or(Endian::Little);
    if let Some((_, span)) = attrs.id {
        errors.at(span, "a union is not a record; give the struct that holds it the `id`");
    }
    let mut externs = Vec::new();
    let mut variable = Vec::new();
    let mut variants = Vec::new();
    let mut next: i128 = 0;
    let empty = syn::FieldsNamed { brace_token: Default::default(), named: Default::default() };
    for v in &data.variants {
        let named = match &v.fields {
            syn::Fields::Named(n) => n,
            syn::Fields::Unit => &empty,
            syn::Fields::Unnamed(u) => {
                errors.at(u.span(), "a union variant has named fields (`Move { x: f32 }`) or none");
                continue;
            }
        };
        let tag = variant_tag(v, errors).unwrap_or(next);
        if variants.iter().any(|w: &ir::Variant| w.tag == tag) {
            errors.at(v.ident.span(), format!("tag {tag} is already the tag of another variant"));
        }
        next = tag + 1;
        let lead = Leading { consts: &[], magic: None, span: v.ident.span() };
        let (mut fields, _) = lower_fields(named, endian, &lead, &mut externs, &mut variable, errors);
        let size = crate::layout::place_fields(&|_| None, &mut fields);
        variants.push(ir::Variant { name: v.ident.to_string(), tag, select: None, doc: None, fields, size });
    }
    let u = ir::Union { name: input.ident.to_string(), doc: None, endian, variants, by_name: false };
    let mut types = vec![TypeDef::Union(u)];
    types.extend(externs.into_iter().map(|path| {
        let fixed = !variable.contains(&path);
        TypeDef::Extern(ir::Extern { path, fixed })
    }));
    let schema = ir::Schema {
        format: ir::Format { name: String::new(), title: None, doc: None, endian, version: None, schema_id: None },
        types,
        file_header: None,
        framing: None,
        records: Vec::new(),
        params: Vec::new(),
        source: None,
    };
    let mut cx = Cx::new(&schema, &attrs.runtime_path());
    cx.vis = input.vis.to_token_stream();
    let TypeDef::Union(u) = &schema.types[0] else { return TokenStream::new() };
    let ident = &input.ident;
    let impls = crate::backend::rust::types::union_impls(&cx, u, ident);
    // The tag consts and the enum of views of a schema union, from the same functions.
    let tags = views::tag_consts(u);
    let view = views::union_view(&cx, TypeId(0));
    quote! {
        #impls
        #[allow(dead_code)]
        impl #ident {
            #tags
        }
        #view
    }
}
