//! The token output of the derive: a struct's, a C-like enum's, an open enum's (`values(...)`)
//! and a tagged union's impls, from the lowered IR through the Rust back end's functions.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

use super::attrs::{variant_tag, ContainerAttrs};
use super::cross_check::cross_check;
use super::lower::{lower_fields, Leading};
use super::Errors;
use crate::backend::rust::codec::{self, StructSpec};
use crate::backend::rust::views;
use crate::backend::rust::Cx;
use logspec_ir::ir::{self, Endian, Prim, TypeDef, TypeId};

pub(super) fn expand_struct(
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
    let size = logspec_ir::layout::place_fields(ir::Rules::PACKED, &|_| None, &mut fields);
    let mut types = vec![TypeDef::Struct(ir::Struct { name: ident.to_string(), doc: None, endian, fields, size })];
    types.extend(externs.into_iter().map(|path| {
        let fixed = !variable.contains(&path);
        TypeDef::Extern(ir::Extern { path, fixed })
    }));
    let mut schema = ir::Schema {
        format: ir::Format {
            name: String::new(),
            title: None,
            doc: None,
            endian,
            version: None,
            schema_id: None,
            rules: ir::Rules::PACKED,
        },
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
        fingerprint: logspec_ir::fingerprint::of_struct(&schema, TypeId(0)),
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

pub(super) fn expand_enum(
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
            rules: ir::Rules::PACKED,
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
        let size = logspec_ir::layout::place_fields(ir::Rules::PACKED, &|_| None, &mut fields);
        variants.push(ir::Variant { name: v.ident.to_string(), tag, select: None, doc: None, fields, size });
    }
    let u = ir::Union { name: input.ident.to_string(), doc: None, endian, variants, by_name: false };
    let mut types = vec![TypeDef::Union(u)];
    types.extend(externs.into_iter().map(|path| {
        let fixed = !variable.contains(&path);
        TypeDef::Extern(ir::Extern { path, fixed })
    }));
    let schema = ir::Schema {
        format: ir::Format {
            name: String::new(),
            title: None,
            doc: None,
            endian,
            version: None,
            schema_id: None,
            rules: ir::Rules::PACKED,
        },
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
