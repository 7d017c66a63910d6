//! Lowering a struct's or a union variant's fields into the IR: Rust field types onto IR types
//! (hand-written types become externs), with the padding, consts, magics and union tags that
//! the field attributes add.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::attrs::{field_attrs, FieldAttrs, NamedConst};
use super::Errors;
use logspec_ir::ir::{self, Endian, Len, Prim, Ty, TypeId};

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
pub(super) struct Leading<'a> {
    pub(super) consts: &'a [NamedConst],
    pub(super) magic: Option<&'a (Ty, ir::ConstValue)>,
    pub(super) span: Span,
}

/// The IR fields of a struct's or a union variant's named fields, with the source span of each
/// (padding, consts and tags: their field's). Hand-written types become externs.
pub(super) fn lower_fields(
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
