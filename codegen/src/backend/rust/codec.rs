//! The decode, encode and visit impls of one struct (or union variant), from its IR fields.
//!
//! One file on purpose, over 1,000 lines: the fixed and variable strategies below share every field
//! kind's arm, and decode, encode and visit of a field are one rule each, written side by side per
//! type kind, so that a change to one shows where the others must change; split by strategy or by
//! direction, one layout rule would be in two places and the three would drift.
//!
//! Shared by the Rust back end and `#[derive(Record)]`: this is the only place that turns a wire
//! layout into Rust code. Two strategies:
//! - a fixed-size struct decodes from one bounds-checked `&[u8; SIZE]` with constant offsets, so
//!   the compiler removes every other check (no allocation, no cursor);
//! - anything else decodes field by field through a [`Cursor`], every read checked.
//!
//! [`Cursor`]: https://docs.rs/logspec-runtime

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::{field_ident, prim_type, Cx};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, Prim, Record, Ty, TypeDef};

/// One struct to emit impls for.
pub struct StructSpec<'a> {
    /// Name used in error messages (the record name for records).
    pub display_name: &'a str,
    /// The Rust type.
    pub ident: TokenStream,
    pub fields: &'a [Field],
    pub record: Option<&'a Record>,
}

/// A size or offset: a constant plus symbolic terms (`<T as Fixed>::SIZE` of hand-written types,
/// which only the Rust compiler knows). With no terms it prints as a plain literal.
#[derive(Clone, Default)]
pub struct Sz {
    lit: usize,
    terms: Vec<TokenStream>,
}

impl Sz {
    pub(crate) fn lit(n: usize) -> Self {
        Sz { lit: n, terms: Vec::new() }
    }

    pub(crate) fn add(&self, o: &Sz) -> Sz {
        let mut terms = self.terms.clone();
        terms.extend(o.terms.iter().cloned());
        Sz { lit: self.lit + o.lit, terms }
    }

    pub(crate) fn is_literal(&self) -> bool {
        self.terms.is_empty()
    }

    /// The size as a number, when it is one (not a hand-written type's `SIZE`).
    pub(crate) fn literal(&self) -> Option<usize> {
        self.is_literal().then_some(self.lit)
    }
}

/// `off + __i * es` for element `__i` of an array, without `0 +` or `* 1`.
pub(crate) fn element_offset(off: &TokenStream, es: &Sz) -> TokenStream {
    let step = if es.is_literal() && es.lit == 1 { quote!(__i) } else { quote!(__i * #es) };
    if off.to_string() == "0" {
        step
    } else {
        quote!(#off + #step)
    }
}

impl quote::ToTokens for Sz {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let lit = Literal::usize_unsuffixed(self.lit);
        if self.terms.is_empty() {
            tokens.extend(quote!(#lit));
        } else {
            let terms = &self.terms;
            tokens.extend(quote!((#lit #(+ #terms)*)));
        }
    }
}

/// The fixed size of a type, symbolic for hand-written types that implement `Fixed`; `None` when
/// the size depends on the value.
pub fn fixed_size(cx: &Cx<'_>, ty: &Ty) -> Option<Sz> {
    if let Some(n) = cx.schema.size_of(ty) {
        return Some(Sz::lit(n as usize));
    }
    let rt = &cx.rt;
    match ty {
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Extern(x) if x.fixed => {
                let t = cx.type_name(*id);
                Some(Sz { lit: 0, terms: vec![quote!(<#t as #rt::Fixed>::SIZE)] })
            }
            _ => None,
        },
        Ty::Array { elem, len: Len::Fixed(n) } => {
            let e = fixed_size(cx, elem)?;
            let n = Literal::usize_unsuffixed(*n as usize);
            Some(Sz { lit: 0, terms: vec![quote!(#n * #e)] })
        }
        _ => None,
    }
}

/// Whether a struct's bytes decode exactly when there are enough of them: every field of a fixed
/// size, with no const to check (nested structs included), no union and no hand-written type. A
/// record of such a struct is checked by its length alone (`Framing::exact_size`).
pub(crate) fn length_only(cx: &Cx<'_>, fields: &[Field]) -> bool {
    fn ty_ok(cx: &Cx<'_>, ty: &Ty) -> bool {
        match ty {
            Ty::Prim(_) | Ty::Bool | Ty::Pad(_) | Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_)) => true,
            Ty::Array { elem, len: Len::Fixed(_) } => ty_ok(cx, elem),
            Ty::Named(id) => match cx.schema.ty(*id) {
                TypeDef::Enum(_) | TypeDef::Flags(_) => true,
                TypeDef::Struct(s) => s.size.is_some() && length_only(cx, &s.fields),
                _ => false,
            },
            _ => false,
        }
    }
    !uses_rules(cx, fields) && fields.iter().all(|f| f.value.is_none() && ty_ok(cx, &f.ty))
}

/// Offsets of every field and the total size, when all fields have fixed sizes.
pub(crate) fn fixed_layout(cx: &Cx<'_>, fields: &[Field]) -> Option<(Vec<Sz>, Sz)> {
    let mut at = Sz::lit(0);
    let mut offs = Vec::with_capacity(fields.len());
    for f in fields {
        offs.push(at.clone());
        at = at.add(&fixed_size(cx, &f.ty)?);
    }
    Some((offs, at))
}

/// Which fields are not members of the Rust struct: padding, consts, and union tags (implied by
/// the union's variant).
pub fn hidden(fields: &[Field]) -> Vec<bool> {
    let mut h: Vec<bool> = fields.iter().map(|f| f.is_padding() || f.value.is_some()).collect();
    for f in fields {
        if let Ty::Union { tag_field, .. } = f.ty {
            h[tag_field] = true;
        }
    }
    h
}

/// Every impl of a struct: `Fixed` (when fixed-size), `Decode`, `Encode`, `Visit`, and `Record`.
pub fn struct_impls(cx: &Cx<'_>, s: &StructSpec<'_>) -> TokenStream {
    let rt = &cx.rt;
    let ident = &s.ident;
    let name = s.display_name;
    let mut out = match fixed_layout(cx, s.fields) {
        _ if uses_rules(cx, s.fields) => aligned_impls(cx, s),
        Some((offsets, size)) => fixed_impls(cx, s, &offsets, &size),
        None => var_impls(cx, s),
    };
    let visit = visit_fields(cx, s.fields, &|f| {
        let id = field_ident(&f.name);
        quote!(self.#id)
    });
    out.extend(quote! {
        #[automatically_derived]
        impl #rt::Visit for #ident {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                v.begin_struct(name);
                #visit
                v.end_struct();
            }
        }
    });
    if let Some(r) = s.record {
        let id = Literal::u64_unsuffixed(r.id);
        let fp = Literal::u64_suffixed(r.fingerprint);
        let fp = quote!(#fp);
        out.extend(quote! {
            #[automatically_derived]
            impl #rt::Record for #ident {
                const NAME: &'static str = #name;
                const ID: u64 = #id;
                const FINGERPRINT: u64 = #fp;
            }
        });
    }
    out
}

fn fixed_impls(cx: &Cx<'_>, s: &StructSpec<'_>, offsets: &[Sz], size: &Sz) -> TokenStream {
    let rt = &cx.rt;
    let ident = &s.ident;
    let name = s.display_name;
    let hide = hidden(s.fields);
    let mut checks = TokenStream::new();
    let mut inits = TokenStream::new();
    let mut encodes = TokenStream::new();
    for (i, f) in s.fields.iter().enumerate() {
        let off = &offsets[i];
        let fname = f.name.as_str();
        if let Some(v) = &f.value {
            checks.extend(const_check(cx, f, v, quote!(b), off));
            encodes.extend(const_encode(cx, f, v, off));
            continue;
        }
        if f.is_padding() {
            if let Ty::Pad(n) = f.ty {
                let end = off.add(&Sz::lit(n as usize));
                encodes.extend(quote!(out[#off..#end].fill(0);));
            }
            continue;
        }
        if hide[i] {
            continue;
        }
        let id = field_ident(&f.name);
        let (expr, fallible) = fixed_decode(cx, &f.ty, f.endian, quote!(#off));
        let expr = if fallible { quote!(#expr.map_err(|e| e.in_field(#fname).in_type(#name))?) } else { expr };
        inits.extend(quote!(#id: #expr,));
        encodes.extend(fixed_encode(cx, &f.ty, f.endian, quote!(#off), quote!(self.#id)));
    }
    // A symbolic size must be braced to be a const generic argument.
    let chunk = if size.is_literal() { quote!(#size) } else { quote!({ #size }) };
    let unused = if s.fields.iter().all(|f| f.is_padding()) { quote!(let _ = b;) } else { quote!() };
    quote! {
        #[automatically_derived]
        impl #rt::Fixed for #ident {
            const SIZE: usize = #size;
            #[inline]
            fn decode_fixed(b: &[u8], _order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                let ::core::option::Option::Some(b) = b.first_chunk::<#chunk>() else {
                    return ::core::result::Result::Err(#rt::DecodeError::eof(#size, b.len()).in_type(#name));
                };
                #unused
                #checks
                ::core::result::Result::Ok(Self { #inits })
            }
            #[inline]
            fn encode_fixed(&self, out: &mut [u8], _order: #rt::Endian) {
                let out = &mut out[..#size];
                #encodes
            }
        }
        #[automatically_derived]
        impl #rt::Decode for #ident {
            #[inline]
            fn decode(c: &mut #rt::Cursor<'_>, order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                let at = c.position();
                let b = c.take(#size).map_err(|e| e.in_type(#name))?;
                <Self as #rt::Fixed>::decode_fixed(b, order).map_err(|e| e.at(at))
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #ident {
            #[inline]
            fn encoded_len(&self) -> usize {
                #size
            }
            #[inline]
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                let mut b = [0u8; #size];
                <Self as #rt::Fixed>::encode_fixed(self, &mut b, order);
                out.put(&b);
                ::core::result::Result::Ok(())
            }
        }
    }
}

fn from_bytes(p: Prim, e: Endian) -> TokenStream {
    let t = prim_type(p);
    match e {
        Endian::Little => quote!(#t::from_le_bytes),
        Endian::Big => quote!(#t::from_be_bytes),
    }
}

fn to_bytes(e: Endian) -> TokenStream {
    match e {
        Endian::Little => quote!(to_le_bytes),
        Endian::Big => quote!(to_be_bytes),
    }
}

/// An expression decoding a fixed-size value at `off` in the array `b`; `true` if it returns a
/// `Result`.
pub(crate) fn fixed_decode(cx: &Cx<'_>, ty: &Ty, e: Endian, off: TokenStream) -> (TokenStream, bool) {
    let rt = &cx.rt;
    match ty {
        Ty::Prim(p) => {
            let n = Literal::usize_unsuffixed(p.size() as usize);
            let f = from_bytes(*p, e);
            (quote!(#f(#rt::__private::sub::<#n>(b, #off))), false)
        }
        Ty::Bool => (quote!(b[#off] != 0), false),
        Ty::Bytes(Len::Fixed(n)) | Ty::Pad(n) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            (quote!(#rt::__private::sub::<#n>(b, #off)), false)
        }
        Ty::Str(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            (quote!(#rt::FixedStr(#rt::__private::sub::<#n>(b, #off))), false)
        }
        Ty::Array { elem, len: Len::Fixed(n) } => {
            let es = fixed_size(cx, elem).unwrap_or_default();
            let n = Literal::usize_unsuffixed(*n as usize);
            let (ex, fallible) = fixed_decode(cx, elem, e, element_offset(&off, &es));
            if fallible {
                (quote!(#rt::__private::try_array::<_, _, #n>(|__i| #ex)), true)
            } else {
                (quote!(::core::array::from_fn::<_, #n, _>(|__i| #ex)), false)
            }
        }
        Ty::Named(id) => {
            let t = cx.type_name(*id);
            match cx.schema.ty(*id) {
                TypeDef::Enum(en) => {
                    let f = from_bytes(en.base, e);
                    let n = Literal::usize_unsuffixed(en.base.size() as usize);
                    (quote!(#t(#f(#rt::__private::sub::<#n>(b, #off)))), false)
                }
                TypeDef::Flags(fl) => {
                    let f = from_bytes(fl.base, e);
                    let n = Literal::usize_unsuffixed(fl.base.size() as usize);
                    (quote!(#t(#f(#rt::__private::sub::<#n>(b, #off)))), false)
                }
                _ => {
                    let order = cx.endian(e);
                    (quote!(<#t as #rt::Fixed>::decode_fixed(&b[#off..], #order).map_err(|e| e.at(#off))), true)
                }
            }
        }
        _ => (quote!(compile_error!("variable-size field in a fixed-size struct")), false),
    }
}

/// Statements encoding the value `v` (an expression of type `&T`) at `off` in `out`.
fn fixed_encode(cx: &Cx<'_>, ty: &Ty, e: Endian, off: TokenStream, v: TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let tb = to_bytes(e);
    match ty {
        Ty::Prim(p) => {
            let n = Literal::usize_unsuffixed(p.size() as usize);
            {
                let end = range_end(&off, &n);
                quote!(out[#off..#end].copy_from_slice(&#v.#tb());)
            }
        }
        Ty::Bool => {
            let v = unparen(v);
            quote!(out[#off] = u8::from(#v);)
        }
        Ty::Bytes(Len::Fixed(n)) | Ty::Pad(n) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            {
                let end = range_end(&off, &n);
                quote!(out[#off..#end].copy_from_slice(&#v[..]);)
            }
        }
        Ty::Str(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            {
                let end = range_end(&off, &n);
                quote!(out[#off..#end].copy_from_slice(&#v.0[..]);)
            }
        }
        Ty::Array { elem, len: Len::Fixed(_) } => {
            let es = fixed_size(cx, elem).unwrap_or_default();
            let at = element_offset(&off, &es);
            let inner = fixed_encode(cx, elem, e, at, quote!((*__x)));
            quote!(for (__i, __x) in #v.iter().enumerate() { #inner })
        }
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Enum(en) => {
                let n = Literal::usize_unsuffixed(en.base.size() as usize);
                {
                    let end = range_end(&off, &n);
                    quote!(out[#off..#end].copy_from_slice(&#v.0.#tb());)
                }
            }
            TypeDef::Flags(fl) => {
                let n = Literal::usize_unsuffixed(fl.base.size() as usize);
                {
                    let end = range_end(&off, &n);
                    quote!(out[#off..#end].copy_from_slice(&#v.0.#tb());)
                }
            }
            _ => {
                let order = cx.endian(e);
                quote!(#rt::Fixed::encode_fixed(&#v, &mut out[#off..], #order);)
            }
        },
        _ => quote!(compile_error!("variable-size field in a fixed-size struct");),
    }
}

/// `(x)` -> `x`, for expressions used as a whole function argument.
pub(crate) fn unparen(t: TokenStream) -> TokenStream {
    let mut it = t.clone().into_iter();
    match (it.next(), it.next()) {
        (Some(proc_macro2::TokenTree::Group(g)), None) if g.delimiter() == proc_macro2::Delimiter::Parenthesis => {
            g.stream()
        }
        _ => t,
    }
}

/// The end of `n` bytes at `off`, folded to one literal when `off` is a literal.
pub(crate) fn range_end(off: &TokenStream, n: &dyn std::fmt::Display) -> TokenStream {
    let n: usize = n.to_string().parse().unwrap_or(0);
    match off.to_string().parse::<usize>() {
        Ok(o) => {
            let end = Literal::usize_unsuffixed(o + n);
            quote!(#end)
        }
        Err(_) => {
            let n = Literal::usize_unsuffixed(n);
            quote!(#off + #n)
        }
    }
}

/// The integer a const field holds, as the field's Rust type.
fn const_int(cx: &Cx<'_>, f: &Field, v: i128) -> (TokenStream, Prim) {
    let p = match &f.ty {
        Ty::Prim(p) => *p,
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Enum(e) => e.base,
            TypeDef::Flags(fl) => fl.base,
            _ => Prim::I64,
        },
        _ => Prim::I64,
    };
    // A suffixed literal (`1u8`), in parentheses only when negative, so that a method call on it
    // applies to the whole value.
    let text = if v < 0 { format!("({v}{})", p.name()) } else { format!("{v}{}", p.name()) };
    (text.parse().unwrap_or_else(|_| quote!(0)), p)
}

pub(crate) fn const_check(cx: &Cx<'_>, f: &Field, v: &ConstValue, b: TokenStream, off: &Sz) -> TokenStream {
    let rt = &cx.rt;
    let fname = f.name.as_str();
    match v {
        ConstValue::Bytes(bytes) => {
            let end = range_end(&quote!(#off), &bytes.len());
            let lit = Literal::byte_string(bytes);
            quote! {
                if #b[#off..#end] != *#lit {
                    return ::core::result::Result::Err(#rt::__private::bad_const(
                        #rt::Shown::bytes(#lit), #rt::Shown::bytes(&#b[#off..#end]), #off, #fname));
                }
            }
        }
        ConstValue::Int(i) => {
            let (lit, p) = const_int(cx, f, *i);
            let (ex, _) = fixed_decode(cx, &Ty::Prim(p), f.endian, quote!(#off));
            quote! {
                let __v = #ex;
                if __v != #lit {
                    return ::core::result::Result::Err(#rt::__private::bad_const(
                        #rt::Shown::Int(#lit as i128), #rt::Shown::Int(__v as i128), #off, #fname));
                }
            }
        }
    }
}

fn const_encode(cx: &Cx<'_>, f: &Field, v: &ConstValue, off: &Sz) -> TokenStream {
    match v {
        ConstValue::Bytes(bytes) => {
            let end = range_end(&quote!(#off), &bytes.len());
            let lit = Literal::byte_string(bytes);
            quote!(out[#off..#end].copy_from_slice(#lit);)
        }
        ConstValue::Int(i) => {
            let (lit, p) = const_int(cx, f, *i);
            fixed_encode(cx, &Ty::Prim(p), f.endian, quote!(#off), quote!(#lit))
        }
    }
}

fn var_impls(cx: &Cx<'_>, s: &StructSpec<'_>) -> TokenStream {
    let rt = &cx.rt;
    let ident = &s.ident;
    let name = s.display_name;
    let (stmts, inits) = decode_fields(cx, s.fields, name);
    let fast = var_fast_path(cx, s.fields, &inits);
    let (len, enc) = encode_fields(cx, s.fields, &|f| {
        let id = field_ident(&f.name);
        quote!(self.#id)
    });
    let widths = fit_widths(cx, ident, s.fields);
    // With a fast path, the decoder inlines into the caller's loop and the checked decoder is a
    // call away, so a record's header never goes through memory as a `Result`.
    let decode = if fast.is_empty() {
        quote! {
            #[automatically_derived]
            impl #rt::Decode for #ident {
                #[inline]
                fn decode(c: &mut #rt::Cursor<'_>, _order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                    #stmts
                    ::core::result::Result::Ok(Self { #inits })
                }
            }
        }
    } else {
        quote! {
            #[automatically_derived]
            impl #rt::Decode for #ident {
                #[inline(always)]
                fn decode(c: &mut #rt::Cursor<'_>, _order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                    #fast
                    Self::__decode_checked(c)
                }
            }
            impl #ident {
                /// Field by field, each length checked: near the end of the input.
                #[doc(hidden)]
                #[inline(never)]
                fn __decode_checked(c: &mut #rt::Cursor<'_>) -> ::core::result::Result<Self, #rt::DecodeError> {
                    #stmts
                    ::core::result::Result::Ok(Self { #inits })
                }
            }
        }
    };
    quote! {
        #widths
        #decode
        #[automatically_derived]
        impl #rt::Encode for #ident {
            fn encoded_len(&self) -> usize {
                #len
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, _order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                #enc
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// The fast path of a struct made only of integers, some of variable width (a record header): when
/// the longest such struct and 8 bytes more are at hand, every field is read from one array with
/// no length check, each variable-width one with a single 8-byte load. Otherwise (the end of the
/// input is near) the checked field-by-field decoder below it runs, which reports truncation.
/// Empty when a field is of another kind.
fn var_fast_path(cx: &Cx<'_>, fields: &[Field], inits: &TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let mut max = 0usize;
    let mut stmts = TokenStream::new();
    for (i, f) in fields.iter().enumerate() {
        if f.value.is_some() {
            return TokenStream::new();
        }
        let l = local(i);
        match &f.ty {
            Ty::Prim(p) => {
                let n = p.size() as usize;
                max += n;
                let from = from_bytes(*p, f.endian);
                let n = Literal::usize_unsuffixed(n);
                stmts.extend(quote! {
                    let #l = #from(#rt::__private::sub::<#n>(__b, __o));
                    __o += #n;
                });
            }
            Ty::VarInt { prim, width } => {
                max += 1usize << width.bits;
                let t = prim_type(*prim);
                let w = local(width.field);
                let (lo, bits) = (u32::from(width.lo), u32::from(width.bits));
                let big = f.endian == Endian::Big;
                stmts.extend(quote! {
                    let __n = #rt::__private::width(#w as u64, #lo, #bits);
                    let #l = #rt::__private::var_uint_at(__b, __o, __n, #big) as #t;
                    __o += __n;
                });
            }
            _ => return TokenStream::new(),
        }
    }
    let n = Literal::usize_unsuffixed(max + 8);
    quote! {
        if let ::core::option::Option::Some(__b) = c.rest().first_chunk::<#n>() {
            let mut __o = 0usize;
            #stmts
            c.take(__o)?;
            return ::core::result::Result::Ok(Self { #inits });
        }
    }
}

/// For a struct with variable-width integers, `fit_widths`: sets each one's width bits to the
/// fewest bytes that hold its value (what a writer of new records wants; a record read from a file
/// keeps the widths it was read with).
fn fit_widths(cx: &Cx<'_>, ident: &TokenStream, fields: &[Field]) -> TokenStream {
    let rt = &cx.rt;
    let mut body = TokenStream::new();
    for f in fields {
        let Ty::VarInt { prim, width } = &f.ty else { continue };
        let v = field_ident(&f.name);
        let w = field_ident(&fields[width.field].name);
        let wt = match &fields[width.field].ty {
            Ty::Prim(p) => prim_type(*p),
            _ => continue,
        };
        let ut = prim_type(unsigned_of(*prim));
        let lo = u32::from(width.lo);
        let mask = Literal::u64_unsuffixed(width.mask());
        body.extend(quote! {
            let __n = #rt::__private::min_bytes((self.#v as #ut) as u64);
            self.#w = ((u64::from(self.#w) & !#mask) | (((__n - 1) << #lo) & #mask)) as #wt;
        });
    }
    if body.is_empty() {
        return body;
    }
    quote! {
        impl #ident {
            /// Sets the width bits of every variable-width integer to the fewest bytes that hold
            /// its value (a record read from a file keeps the widths it was read with).
            pub fn fit_widths(&mut self) {
                #body
            }
        }
    }
}

/// The unsigned integer type of the same width.
fn unsigned_of(p: Prim) -> Prim {
    match p {
        Prim::I8 => Prim::U8,
        Prim::I16 => Prim::U16,
        Prim::I32 => Prim::U32,
        Prim::I64 => Prim::U64,
        other => other,
    }
}

/// The body of a union variant's decoder when every field has a fixed size (and none is a const):
/// one bounds check, then constant offsets, as for fixed structs. `None` when it does not apply.
pub fn fixed_variant_decode(cx: &Cx<'_>, fields: &[Field], ty_name: &str, ctor: TokenStream) -> Option<TokenStream> {
    fixed_variant_decode_as(cx, fields, ty_name, ctor, Mode::Owned)
}

/// [`fixed_variant_decode`] for owned values or for views (which borrow the variant's bytes, so
/// they take a slice of the input rather than copy an array).
pub fn fixed_variant_decode_as(
    cx: &Cx<'_>,
    fields: &[Field],
    ty_name: &str,
    ctor: TokenStream,
    mode: Mode,
) -> Option<TokenStream> {
    if fields.is_empty() || fields.iter().any(|f| f.value.is_some()) {
        return None;
    }
    let (offsets, size) = fixed_layout(cx, fields)?;
    let hide = hidden(fields);
    let mut inits = TokenStream::new();
    for (i, f) in fields.iter().enumerate() {
        if f.is_padding() || hide[i] {
            continue;
        }
        let off = &offsets[i];
        let fname = f.name.as_str();
        let id = field_ident(&f.name);
        let (expr, fallible) = match mode {
            Mode::Owned => fixed_decode(cx, &f.ty, f.endian, quote!(#off)),
            Mode::View => super::views::fixed_view(cx, &f.ty, f.endian, quote!(#off)),
        };
        let expr = if fallible { quote!(#expr.map_err(|e| e.in_field(#fname).in_type(#ty_name))?) } else { expr };
        inits.extend(quote!(#id: #expr,));
    }
    let take = match mode {
        Mode::Owned => {
            let chunk = if size.is_literal() { quote!(#size) } else { quote!({ #size }) };
            quote! {
                let __arr = c.array::<#chunk>().map_err(|e| e.in_type(#ty_name))?;
                let b = &__arr[..];
            }
        }
        Mode::View => quote!(let b = c.take(#size).map_err(|e| e.in_type(#ty_name))?;),
    };
    Some(quote! {
        #take
        ::core::result::Result::Ok(#ctor { #inits })
    })
}

fn local(i: usize) -> proc_macro2::Ident {
    format_ident!("__f{}", i)
}

/// Cursor-based decoding of a field list: statements that bind every field to a local, and the
/// `name: local,` initialisers of the visible ones.
pub fn decode_fields(cx: &Cx<'_>, fields: &[Field], ty_name: &str) -> (TokenStream, TokenStream) {
    decode_fields_as(cx, fields, ty_name, Mode::Owned)
}

/// Whether code is for the owned types or for the borrowed views (see [`super::views`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Owned,
    View,
}

/// The mode of a union field's code: a hand-written union (an enum that derives `Record`) is held
/// by value in a view too, like every hand-written field type, so its field code is the owned one.
fn union_mode(cx: &Cx<'_>, ty: &Ty, mode: Mode) -> Mode {
    match ty {
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } if matches!(cx.schema.ty(*id), TypeDef::Extern(_)) => {
            Mode::Owned
        }
        _ => mode,
    }
}

/// [`decode_fields`] for owned values or for views.
pub fn decode_fields_as(cx: &Cx<'_>, fields: &[Field], ty_name: &str, mode: Mode) -> (TokenStream, TokenStream) {
    let rt = &cx.rt;
    let hide = hidden(fields);
    let mut stmts = TokenStream::new();
    let mut inits = TokenStream::new();
    for (i, f) in fields.iter().enumerate() {
        let fname = f.name.as_str();
        let l = local(i);
        if let Ty::Pad(n) = f.ty {
            let n = Literal::usize_unsuffixed(n as usize);
            stmts.extend(quote!(c.take(#n).map_err(|e| e.in_type(#ty_name))?;));
            continue;
        }
        if let Some(v) = &f.value {
            let at = quote!(__at);
            let check = match v {
                ConstValue::Bytes(bytes) => {
                    let n = bytes.len();
                    let lit = Literal::byte_string(bytes);
                    quote! {
                        let #at = c.position();
                        let __b = c.take(#n).map_err(|e| e.in_field(#fname).in_type(#ty_name))?;
                        if __b != #lit {
                            return ::core::result::Result::Err(#rt::__private::bad_const(
                                #rt::Shown::bytes(#lit), #rt::Shown::bytes(__b), 0, #fname).at(#at).in_type(#ty_name));
                        }
                    }
                }
                ConstValue::Int(iv) => {
                    let (lit, p) = const_int(cx, f, *iv);
                    let ex = cursor_decode(cx, &Ty::Prim(p), f.endian);
                    quote! {
                        let #at = c.position();
                        let __v = #ex.map_err(|e| e.in_field(#fname).in_type(#ty_name))?;
                        if __v != #lit {
                            return ::core::result::Result::Err(#rt::__private::bad_const(
                                #rt::Shown::Int(#lit as i128), #rt::Shown::Int(__v as i128), 0, #fname).at(#at).in_type(#ty_name));
                        }
                    }
                }
            };
            stmts.extend(check);
            continue;
        }
        let ex = match &f.ty {
            Ty::Union { id, tag_field } => {
                let t = cx.type_name(*id);
                let tag = local(*tag_field);
                let raw = match &fields[*tag_field].ty {
                    Ty::Named(_) => quote!(#tag.0),
                    _ => quote!(#tag),
                };
                match union_mode(cx, &f.ty, mode) {
                    Mode::Owned => quote!(<#t as #rt::Union>::decode_variant(#raw as i128, c)),
                    Mode::View => {
                        let v = super::views::view_ident(cx, *id);
                        quote!(#v::decode_variant(#raw as i128, c))
                    }
                }
            }
            Ty::ParamUnion { id, param } => {
                let t = match union_mode(cx, &f.ty, mode) {
                    Mode::Owned => {
                        let t = cx.type_name(*id);
                        quote!(<#t as #rt::Union>)
                    }
                    Mode::View => {
                        let v = super::views::view_ident(cx, *id);
                        quote!(#v)
                    }
                };
                let pname = cx.schema.params.get(*param).map_or("?", |p| p.name.as_str());
                quote!(#rt::__private::param(c, #param, #pname).and_then(|__t| #t::decode_variant(__t, c)))
            }
            Ty::VarInt { prim, width } => {
                let t = prim_type(*prim);
                let w = local(width.field);
                let (lo, bits) = (u32::from(width.lo), u32::from(width.bits));
                let big = f.endian == Endian::Big;
                quote!(#rt::__private::var_uint(c, #rt::__private::width(#w as u64, #lo, #bits), #big).map(|__v| __v as #t))
            }
            other => match mode {
                Mode::Owned => cursor_decode(cx, other, f.endian),
                Mode::View => super::views::view_decode(cx, other, f.endian),
            },
        };
        stmts.extend(quote!(let #l = #ex.map_err(|e| e.in_field(#fname).in_type(#ty_name))?;));
        if !hide[i] {
            let id = field_ident(&f.name);
            inits.extend(quote!(#id: #l,));
        }
    }
    (stmts, inits)
}

/// A `Result`-valued expression decoding one value from the cursor `c`.
pub(crate) fn cursor_decode(cx: &Cx<'_>, ty: &Ty, e: Endian) -> TokenStream {
    let rt = &cx.rt;
    let order = cx.endian(e);
    let big = e == Endian::Big;
    let read_len = |p: &Prim| {
        let w = Literal::usize_unsuffixed(p.size() as usize);
        quote!(#rt::__private::prefix::<#w>(c, #big).and_then(|n| #rt::__private::len(n, c)))
    };
    match ty {
        Ty::Prim(p) => {
            let n = Literal::usize_unsuffixed(p.size() as usize);
            let f = from_bytes(*p, e);
            quote!(c.array::<#n>().map(#f))
        }
        Ty::Bool => quote!(c.array::<1>().map(|a| a[0] != 0)),
        Ty::Pad(n) | Ty::Bytes(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            quote!(c.array::<#n>())
        }
        Ty::Str(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            quote!(c.array::<#n>().map(#rt::FixedStr))
        }
        Ty::Bytes(len) => match len {
            Len::Count(p) | Len::Size(p) => {
                let rl = read_len(p);
                quote!(#rl.and_then(|n| c.take(n)).map(|b| b.to_vec()))
            }
            _ => quote!(::core::result::Result::<_, #rt::DecodeError>::Ok(c.take_rest().to_vec())),
        },
        Ty::Str(len) => {
            let take = match len {
                Len::Count(p) | Len::Size(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| c.take(n)))
                }
                _ => quote!(::core::result::Result::<_, #rt::DecodeError>::Ok(c.take_rest())),
            };
            quote!(#take.and_then(|b| #rt::__private::string(b, c.position() - b.len())))
        }
        Ty::Array { elem, len } => {
            let ex = cursor_decode(cx, elem, e);
            let es = cx.schema.size_of(elem).map(|s| s as usize);
            let es_opt = match es {
                Some(s) => quote!(::core::option::Option::Some(#s)),
                None => quote!(::core::option::Option::None),
            };
            match len {
                Len::Fixed(n) => {
                    let n = Literal::usize_unsuffixed(*n as usize);
                    quote!(#rt::__private::try_array::<_, _, #n>(|_| #ex))
                }
                Len::Count(p) => {
                    let rl = read_len(p);
                    let min = es.unwrap_or(0);
                    quote!(#rl.and_then(|n| #rt::__private::vec(c, n, #min, |c| #ex)))
                }
                Len::Size(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| c.sub(n)).and_then(|sub| #rt::__private::vec_to_end(sub, #es_opt, |c| #ex)))
                }
                Len::Rest => {
                    quote!(c.sub(c.remaining()).and_then(|sub| #rt::__private::vec_to_end(sub, #es_opt, |c| #ex)))
                }
            }
        }
        Ty::Named(id) => {
            let t = cx.type_name(*id);
            quote!(<#t as #rt::Decode>::decode(c, #order))
        }
        Ty::Union { .. } | Ty::ParamUnion { .. } => quote!(compile_error!("a union needs its tag field")),
        Ty::VarInt { .. } => quote!(compile_error!("a variable-width integer needs its width field")),
    }
}

/// Encoding of a field list: an `encoded_len` expression and the encoding statements. `access`
/// gives an expression of type `&T` for a visible field.
pub fn encode_fields(
    cx: &Cx<'_>,
    fields: &[Field],
    access: &dyn Fn(&Field) -> TokenStream,
) -> (TokenStream, TokenStream) {
    encode_fields_as(cx, fields, access, Mode::Owned)
}

/// [`encode_fields`] for owned values or for views.
pub fn encode_fields_as(
    cx: &Cx<'_>,
    fields: &[Field],
    access: &dyn Fn(&Field) -> TokenStream,
    mode: Mode,
) -> (TokenStream, TokenStream) {
    let rt = &cx.rt;
    let hide = hidden(fields);
    let mut len = LenSum::default();
    let mut enc = TokenStream::new();
    // The union that each tag field announces, so that the tag can be derived from it.
    let tag_of = |i: usize| fields.iter().find(|f| matches!(f.ty, Ty::Union { tag_field, .. } if tag_field == i));
    for (i, f) in fields.iter().enumerate() {
        let fname = f.name.as_str();
        if let Ty::Pad(n) = f.ty {
            len.lit += n as usize;
            let n = Literal::usize_unsuffixed(n as usize);
            enc.extend(quote!(out.put(&[0u8; #n]);));
            continue;
        }
        if let Some(v) = &f.value {
            match v {
                ConstValue::Bytes(bytes) => {
                    let n = bytes.len();
                    let lit = Literal::byte_string(bytes);
                    len.lit += n;
                    enc.extend(quote!(out.put(#lit);));
                }
                ConstValue::Int(iv) => {
                    let (lit, p) = const_int(cx, f, *iv);
                    let tb = to_bytes(f.endian);
                    len.lit += p.size() as usize;
                    enc.extend(quote!(out.put(&#lit.#tb());));
                }
            }
            continue;
        }
        if hide[i] {
            // A union tag: derived from the union's variant.
            let Some(u) = tag_of(i) else { continue };
            let uv = access(u);
            let tb = to_bytes(f.endian);
            // The front end only accepts integer and enum tag fields.
            let p = match &f.ty {
                Ty::Named(id) => match cx.schema.ty(*id) {
                    TypeDef::Enum(en) => en.base,
                    _ => Prim::U8,
                },
                Ty::Prim(p) => *p,
                _ => Prim::U8,
            };
            let t = prim_type(p);
            let tag = match union_mode(cx, &u.ty, mode) {
                Mode::Owned => quote!(#rt::Union::tag(&#uv)),
                Mode::View => quote!(#uv.tag()),
            };
            len.lit += p.size() as usize;
            enc.extend(quote!(out.put(&(#tag as #t).#tb());));
            continue;
        }
        let v = access(f);
        if let Ty::VarInt { prim, width } = &f.ty {
            // The byte count comes from the width field's current value, so a value read from a
            // file is written back in the width it was read in.
            let wv = access(&fields[width.field]);
            let (lo, bits) = (u32::from(width.lo), u32::from(width.bits));
            let n = quote!(#rt::__private::width(#wv as u64, #lo, #bits));
            let ut = prim_type(unsigned_of(*prim));
            let big = f.endian == Endian::Big;
            len.terms.push(n.clone());
            enc.extend(quote!(#rt::__private::put_var_uint(out, (#v as #ut) as u64, #n, #big, #fname)?;));
            continue;
        }
        len.add(value_len(cx, &f.ty, v.clone(), mode));
        enc.extend(encode_value(cx, &f.ty, f.endian, v, fname, mode));
    }
    (quote!(#len), enc)
}

/// The `variant_len` arm of a union variant (`ctor`, fields bound as `binds`): a variant whose
/// length is a constant binds none of its fields.
pub(crate) fn len_arm(ctor: TokenStream, binds: &[TokenStream], len: &TokenStream) -> TokenStream {
    if len.to_string().contains("__b_") {
        quote!(#ctor { #(#binds),* } => { #len })
    } else {
        quote!(#ctor { .. } => #len,)
    }
}

/// An encoded length: a constant plus terms known only from the value, printed as one sum with
/// the constants folded (`6 + self.name.len()`, not `0usize + 2 + 4usize + (0 + self.name.len())`).
#[derive(Default)]
struct LenSum {
    lit: usize,
    terms: Vec<TokenStream>,
}

impl LenSum {
    fn add(&mut self, o: LenSum) {
        self.lit += o.lit;
        self.terms.extend(o.terms);
    }
}

impl quote::ToTokens for LenSum {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let lit = Literal::usize_unsuffixed(self.lit);
        let terms = &self.terms;
        tokens.extend(match (self.lit, terms.is_empty()) {
            (_, true) => quote!(#lit),
            (0, false) => quote!(#(#terms)+*),
            _ => quote!(#lit #(+ #terms)*),
        });
    }
}

/// The encoded length of the value `v` (of type `&T`).
fn value_len(cx: &Cx<'_>, ty: &Ty, v: TokenStream, mode: Mode) -> LenSum {
    let rt = &cx.rt;
    if let Some(n) = cx.schema.size_of(ty) {
        return LenSum { lit: n as usize, terms: Vec::new() };
    }
    let prefix = |len: &Len| len.prefix().map_or(0, |p| p.size() as usize);
    let (lit, term) = match ty {
        Ty::Bytes(len) | Ty::Str(len) => (prefix(len), quote!(#v.len())),
        Ty::Array { elem, len } => {
            let w = prefix(len);
            match cx.schema.size_of(elem) {
                Some(1) => (w, quote!(#v.len())),
                Some(es) => {
                    let es = Literal::usize_unsuffixed(es as usize);
                    (w, quote!(#v.len() * #es))
                }
                None => {
                    let inner = value_len(cx, elem, element(cx, ty, mode), mode);
                    (w, quote!(#v.iter().map(|__x| #inner).sum::<usize>()))
                }
            }
        }
        Ty::Union { .. } | Ty::ParamUnion { .. } if union_mode(cx, ty, mode) == Mode::View => {
            (0, quote!(#v.variant_len()))
        }
        Ty::Union { .. } | Ty::ParamUnion { .. } => (0, quote!(#rt::Union::variant_len(&#v))),
        Ty::VarInt { .. } => (0, quote!(compile_error!("a variable-width integer needs its width field"))),
        _ => (0, quote!(#rt::Encode::encoded_len(&#v))),
    };
    LenSum { lit, terms: vec![term] }
}

/// Statements encoding the value `v` (of type `&T`) to `out`.
fn encode_value(cx: &Cx<'_>, ty: &Ty, e: Endian, v: TokenStream, fname: &str, mode: Mode) -> TokenStream {
    let rt = &cx.rt;
    let tb = to_bytes(e);
    let order = cx.endian(e);
    let big = e == Endian::Big;
    let put_len = |p: &Prim, n: TokenStream| {
        let w = Literal::usize_unsuffixed(p.size() as usize);
        quote!(#rt::__private::put_prefix::<_, #w>(out, #n, #big, #fname)?;)
    };
    match ty {
        Ty::Prim(_) => quote!(out.put(&#v.#tb());),
        Ty::Bool => {
            let v = unparen(v);
            quote!(out.put(&[u8::from(#v)]);)
        }
        Ty::Pad(_) | Ty::Bytes(Len::Fixed(_)) => quote!(out.put(&#v[..]);),
        Ty::Str(Len::Fixed(_)) => quote!(out.put(&#v.0[..]);),
        Ty::Bytes(len) | Ty::Str(len) => {
            let bytes = if matches!(ty, Ty::Str(_)) { quote!(#v.as_bytes()) } else { quote!(&#v[..]) };
            let pre = match len {
                Len::Count(p) | Len::Size(p) => put_len(p, quote!(#v.len())),
                _ => quote!(),
            };
            quote!(#pre out.put(#bytes);)
        }
        Ty::Array { elem, len } => {
            let inner = encode_value(cx, elem, e, element(cx, ty, mode), fname, mode);
            let pre = match len {
                Len::Count(p) => put_len(p, quote!(#v.len())),
                Len::Size(p) => {
                    let size = match cx.schema.size_of(elem) {
                        Some(es) => {
                            let es = Literal::usize_unsuffixed(es as usize);
                            quote!(#v.len() * #es)
                        }
                        None => {
                            let il = value_len(cx, elem, element(cx, ty, mode), mode);
                            quote!(#v.iter().map(|__x| #il).sum::<usize>())
                        }
                    };
                    put_len(p, size)
                }
                Len::Fixed(_) | Len::Rest => quote!(),
            };
            quote!(#pre for __x in #v.iter() { #inner })
        }
        Ty::Named(_) => quote!(#rt::Encode::encode(&#v, out, #order)?;),
        Ty::Union { .. } | Ty::ParamUnion { .. } if union_mode(cx, ty, mode) == Mode::View => {
            quote!(#v.encode_variant(out)?;)
        }
        Ty::Union { .. } | Ty::ParamUnion { .. } => quote!(#rt::Union::encode_variant(&#v, out)?;),
        Ty::VarInt { .. } => quote!(compile_error!("a variable-width integer needs its width field")),
    }
}

/// How the loops over an array `ty` name the element `__x`: `(*__x)` where iteration yields
/// references (owned values, and views' fixed-length arrays of structs), `__x` where it yields
/// values (views' borrowed arrays).
fn element(cx: &Cx<'_>, ty: &Ty, mode: Mode) -> TokenStream {
    match (mode, ty) {
        (Mode::View, Ty::Array { .. }) if super::views::yields_values(cx, ty) => quote!(__x),
        _ => quote!((*__x)),
    }
}

/// Visitor calls for a field list; consts are shown, padding and union tags are not.
pub fn visit_fields(cx: &Cx<'_>, fields: &[Field], access: &dyn Fn(&Field) -> TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let hide = hidden(fields);
    let mut out = TokenStream::new();
    for (i, f) in fields.iter().enumerate() {
        let fname = f.name.as_str();
        if let Some(v) = &f.value {
            out.extend(match v {
                ConstValue::Bytes(b) => match std::str::from_utf8(b) {
                    Ok(s) => quote!(v.str(::core::option::Option::Some(#fname), #s);),
                    Err(_) => {
                        let lit = Literal::byte_string(b);
                        quote!(v.bytes(::core::option::Option::Some(#fname), #lit);)
                    }
                },
                ConstValue::Int(iv) => {
                    if *iv < 0 {
                        let lit = Literal::i64_unsuffixed(*iv as i64);
                        quote!(v.int(::core::option::Option::Some(#fname), #lit);)
                    } else {
                        let lit = Literal::u64_unsuffixed(*iv as u64);
                        quote!(v.uint(::core::option::Option::Some(#fname), #lit);)
                    }
                }
            });
            continue;
        }
        if hide[i] {
            continue;
        }
        let a = access(f);
        out.extend(match &f.ty {
            Ty::Bytes(_) => quote!(v.bytes(::core::option::Option::Some(#fname), &#a[..]);),
            _ => quote!(#rt::Visit::visit(&#a, ::core::option::Option::Some(#fname), v);),
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Layout rules beyond packed fields (`ir::Rules`: natural alignment, strings with their NUL).
//
// A struct under such rules whose fields are not all fixed and one byte wide decodes through
// `__decode_at(c, base)` and encodes through `__encode_at(out)` into a counting sink, so that every
// number of 2, 4 or 8 bytes (a length prefix included) starts at a multiple of its size counted
// from `base`, where the outermost value being decoded starts (for CDR: the payload after its
// encapsulation header), as the IR interpreter counts it (`logspec::dynamic`). A nested struct
// of the schema gets the same `base`; `Decode::decode` and `Encode::encode` start counting at
// the value they are called on.

/// Whether the struct of `fields` is laid out by the rules (`aligned_impls` below): the schema has
/// layout rules beyond packed, and the struct is not a fixed run of one-byte-wide fields (which
/// those rules leave as it is).
pub fn uses_rules(cx: &Cx<'_>, fields: &[Field]) -> bool {
    let rules = cx.schema.format.rules;
    if rules.is_packed() {
        return false;
    }
    let named = |id| cx.schema.size_of(&Ty::Named(id));
    fixed_layout(cx, fields).is_none()
        || (rules.natural_align && fields.iter().any(|f| logspec_ir::layout::needs_align(&named, &f.ty)))
}

/// Whether a field of type `ty` is a struct laid out by [`uses_rules`].
fn named_uses_rules(cx: &Cx<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Struct(s) => uses_rules(cx, &s.fields),
            _ => false,
        },
        _ => false,
    }
}

/// The width of the number at the start of `ty` that natural alignment pads to (a number, an
/// enum's or flags' base, a length prefix), or 1 when it needs no padding.
fn lead_width(cx: &Cx<'_>, ty: &Ty) -> usize {
    if !cx.schema.format.rules.natural_align {
        return 1;
    }
    match ty {
        Ty::Prim(p) => p.size() as usize,
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Enum(e) => e.base.size() as usize,
            TypeDef::Flags(f) => f.base.size() as usize,
            _ => 1,
        },
        _ => 1,
    }
}

fn aligned_impls(cx: &Cx<'_>, s: &StructSpec<'_>) -> TokenStream {
    let rt = &cx.rt;
    let ident = &s.ident;
    let name = s.display_name;
    let hide = hidden(s.fields);
    let mut dec = TokenStream::new();
    let mut inits = TokenStream::new();
    let mut enc = TokenStream::new();
    let mut len = TokenStream::new();
    for (i, f) in s.fields.iter().enumerate() {
        let fname = f.name.as_str();
        let l = local(i);
        if let Some(v) = &f.value {
            match v {
                ConstValue::Bytes(bytes) => {
                    let n = bytes.len();
                    let lit = Literal::byte_string(bytes);
                    dec.extend(quote! {
                        let __at = c.position();
                        let __b = c.take(#n).map_err(|e| e.in_field(#fname).in_type(#name))?;
                        if __b != #lit {
                            return ::core::result::Result::Err(#rt::__private::bad_const(
                                #rt::Shown::bytes(#lit), #rt::Shown::bytes(__b), 0, #fname).at(__at).in_type(#name));
                        }
                    });
                    enc.extend(quote!(out.put(#lit);));
                    len.extend(quote!(__p += #n;));
                }
                ConstValue::Int(iv) => {
                    let (lit, p) = const_int(cx, f, *iv);
                    let ex = rules_decode(cx, &Ty::Prim(p), f.endian);
                    dec.extend(quote! {
                        let __at = c.position();
                        let __v = #ex.map_err(|e| e.in_field(#fname).in_type(#name))?;
                        if __v != #lit {
                            return ::core::result::Result::Err(#rt::__private::bad_const(
                                #rt::Shown::Int(#lit as i128), #rt::Shown::Int(__v as i128), 0, #fname)
                                .at(__at).in_type(#name));
                        }
                    });
                    enc.extend(rules_encode(cx, &Ty::Prim(p), f.endian, quote!(#lit), fname));
                    len.extend(rules_len(cx, &Ty::Prim(p), quote!(#lit)));
                }
            }
            continue;
        }
        if let Ty::Pad(n) = f.ty {
            let n = Literal::usize_unsuffixed(n as usize);
            dec.extend(quote!(c.take(#n).map_err(|e| e.in_type(#name))?;));
            enc.extend(quote!(out.put(&[0u8; #n]);));
            len.extend(quote!(__p += #n;));
            continue;
        }
        let ex = rules_decode(cx, &f.ty, f.endian);
        dec.extend(quote!(let #l = #ex.map_err(|e| e.in_field(#fname).in_type(#name))?;));
        if !hide[i] {
            let id = field_ident(&f.name);
            inits.extend(quote!(#id: #l,));
            enc.extend(rules_encode(cx, &f.ty, f.endian, quote!(self.#id), fname));
            len.extend(rules_len(cx, &f.ty, quote!(self.#id)));
        }
    }
    let vis = &cx.vis;
    quote! {
        impl #ident {
            /// Decodes the value from `c` under the schema's layout rules, alignment counted
            /// from the cursor position `__base` where the outermost value starts.
            #[doc(hidden)]
            #[allow(unused_variables)]
            #vis fn __decode_at(c: &mut #rt::Cursor<'_>, __base: usize) -> ::core::result::Result<Self, #rt::DecodeError> {
                #dec
                ::core::result::Result::Ok(Self { #inits })
            }
            /// Encodes the value under the schema's layout rules, alignment counted from where
            /// `out` started counting.
            #[doc(hidden)]
            #vis fn __encode_at<__S: #rt::Sink + ?Sized>(&self, out: &mut #rt::__private::Aligned<'_, __S>) -> ::core::result::Result<(), #rt::EncodeError> {
                #enc
                ::core::result::Result::Ok(())
            }
            /// Where the value's encoding ends when it starts at position `__p`.
            #[doc(hidden)]
            #vis fn __end_at(&self, mut __p: usize) -> usize {
                #len
                __p
            }
        }
        #[automatically_derived]
        impl #rt::Decode for #ident {
            #[inline]
            fn decode(c: &mut #rt::Cursor<'_>, _order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                let __base = c.position();
                Self::__decode_at(c, __base)
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #ident {
            fn encoded_len(&self) -> usize {
                self.__end_at(0)
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, _order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                self.__encode_at(&mut #rt::__private::Aligned::new(out))
            }
        }
    }
}

/// A `Result`-valued expression decoding one value of `ty` from the cursor `c` under the
/// schema's layout rules (`__base` in scope).
fn rules_decode(cx: &Cx<'_>, ty: &Ty, e: Endian) -> TokenStream {
    let rt = &cx.rt;
    let big = e == Endian::Big;
    // `inner`, after the padding before a number of `w` bytes.
    let align = |w: usize, inner: TokenStream| {
        if cx.schema.format.rules.natural_align && w > 1 {
            quote!(#rt::__private::align(c, __base, #w).and_then(|()| #inner))
        } else {
            inner
        }
    };
    let read_len = |p: &Prim| {
        let w = p.size() as usize;
        let wl = Literal::usize_unsuffixed(w);
        let a = align(w, quote!(#rt::__private::prefix::<#wl>(c, #big)));
        quote!(#a.and_then(|n| #rt::__private::len(n, c)))
    };
    let nul = cx.schema.format.rules.string_nul;
    match ty {
        Ty::Prim(_) | Ty::Named(_) if lead_width(cx, ty) > 1 => align(lead_width(cx, ty), cursor_decode(cx, ty, e)),
        Ty::Named(id) if named_uses_rules(cx, ty) => {
            let t = cx.type_name(*id);
            quote!(#t::__decode_at(c, __base))
        }
        Ty::Str(Len::Count(p) | Len::Size(p)) => {
            let rl = read_len(p);
            let text = if nul { quote!(#rt::__private::nul_text(b)) } else { quote!(b) };
            quote!(#rl.and_then(|n| c.take(n)).and_then(|b| #rt::__private::string(#text, c.position() - b.len())))
        }
        Ty::Bytes(Len::Count(p) | Len::Size(p)) => {
            let rl = read_len(p);
            quote!(#rl.and_then(|n| c.take(n)).map(|b| b.to_vec()))
        }
        Ty::Array { elem, len } => {
            let ex = rules_decode(cx, elem, e);
            match len {
                Len::Fixed(n) => {
                    let n = Literal::usize_unsuffixed(*n as usize);
                    quote!(#rt::__private::try_array::<_, _, #n>(|_| #ex))
                }
                Len::Count(p) => {
                    let rl = read_len(p);
                    let min = cx.schema.size_of(elem).unwrap_or(0) as usize;
                    quote!(#rl.and_then(|n| #rt::__private::vec(c, n, #min, |c| #ex)))
                }
                // Refused by `backend::supported` under natural alignment; without it, the
                // packed code reads them.
                _ => cursor_decode(cx, ty, e),
            }
        }
        _ => cursor_decode(cx, ty, e),
    }
}

/// Statements encoding the value `v` (of type `&T`) to `out` (an `Aligned` sink) under the
/// schema's layout rules.
fn rules_encode(cx: &Cx<'_>, ty: &Ty, e: Endian, v: TokenStream, fname: &str) -> TokenStream {
    let rt = &cx.rt;
    let big = e == Endian::Big;
    let align =
        |w: usize| if cx.schema.format.rules.natural_align && w > 1 { quote!(out.align(#w);) } else { quote!() };
    let put_len = |p: &Prim, n: TokenStream| {
        let w = p.size() as usize;
        let a = align(w);
        let wl = Literal::usize_unsuffixed(w);
        quote!(#a #rt::__private::put_prefix::<_, #wl>(out, #n, #big, #fname)?;)
    };
    let nul = cx.schema.format.rules.string_nul;
    match ty {
        Ty::Prim(_) | Ty::Named(_) if lead_width(cx, ty) > 1 => {
            let a = align(lead_width(cx, ty));
            let inner = encode_value(cx, ty, e, v, fname, Mode::Owned);
            quote!(#a #inner)
        }
        Ty::Named(_) if named_uses_rules(cx, ty) => quote!(#v.__encode_at(out)?;),
        Ty::Str(Len::Count(p) | Len::Size(p)) if nul => {
            let pre = put_len(p, quote!(#v.len() + 1));
            quote!(#pre out.put(#v.as_bytes()); out.put(&[0u8]);)
        }
        Ty::Str(Len::Count(p) | Len::Size(p)) => {
            let pre = put_len(p, quote!(#v.len()));
            quote!(#pre out.put(#v.as_bytes());)
        }
        Ty::Bytes(Len::Count(p) | Len::Size(p)) => {
            let pre = put_len(p, quote!(#v.len()));
            quote!(#pre out.put(&#v[..]);)
        }
        Ty::Array { elem, len: len @ (Len::Fixed(_) | Len::Count(_)) } => {
            let inner = rules_encode(cx, elem, e, quote!((*__x)), fname);
            let pre = match len {
                Len::Count(p) => put_len(p, quote!(#v.len())),
                _ => quote!(),
            };
            quote!(#pre for __x in #v.iter() { #inner })
        }
        _ => encode_value(cx, ty, e, v, fname, Mode::Owned),
    }
}

/// Statements that move `__p` past the value `v` (of type `&T`) under the schema's layout rules.
fn rules_len(cx: &Cx<'_>, ty: &Ty, v: TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let aligned = cx.schema.format.rules.natural_align;
    let to = |w: usize| if aligned && w > 1 { quote!(#rt::__private::pad_to(__p, #w)) } else { quote!(__p) };
    let nul = usize::from(cx.schema.format.rules.string_nul);
    match ty {
        Ty::Prim(_) | Ty::Named(_) if lead_width(cx, ty) > 1 => {
            let w = lead_width(cx, ty);
            let at = to(w);
            quote!(__p = #at + #w;)
        }
        Ty::Named(_) if named_uses_rules(cx, ty) => quote!(__p = #v.__end_at(__p);),
        Ty::Str(Len::Count(p) | Len::Size(p)) => {
            let w = p.size() as usize;
            let at = to(w);
            quote!(__p = #at + #w + #v.len() + #nul;)
        }
        Ty::Bytes(Len::Count(p) | Len::Size(p)) => {
            let w = p.size() as usize;
            let at = to(w);
            quote!(__p = #at + #w + #v.len();)
        }
        Ty::Array { elem, len: len @ (Len::Fixed(_) | Len::Count(_)) } => {
            let pre = match len {
                Len::Count(p) => {
                    let w = p.size() as usize;
                    let at = to(w);
                    quote!(__p = #at + #w;)
                }
                _ => quote!(),
            };
            // Numbers follow each other once the first is aligned; anything else walks.
            let w = lead_width(cx, elem);
            let body = match (cx.schema.size_of(elem), &**elem) {
                (Some(es), Ty::Prim(_) | Ty::Bool | Ty::Named(_)) if !named_uses_rules(cx, elem) => {
                    let es = es as usize;
                    let at = to(w);
                    quote!(if !#v.is_empty() { __p = #at + #v.len() * #es; })
                }
                _ => {
                    let inner = rules_len(cx, elem, quote!((*__x)));
                    quote!(for __x in #v.iter() { #inner })
                }
            };
            quote!(#pre #body)
        }
        _ => {
            let n = value_len(cx, ty, v, Mode::Owned);
            quote!(__p += #n;)
        }
    }
}
