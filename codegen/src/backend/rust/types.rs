//! Rust items for each named type: struct definitions, enum and flags newtypes, union enums.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::codec::{self, StructSpec};
use super::{doc_attrs, field_ident, prim_type, Cx};
use logspec_ir::ir::{Enum, Flags, NameMatch, Prim, Struct, TypeDef, TypeId, Union};

pub fn type_items(cx: &Cx<'_>, id: TypeId, def: &TypeDef) -> TokenStream {
    match def {
        TypeDef::Enum(e) => enum_items(cx, e),
        TypeDef::Flags(f) => flags_items(cx, f),
        // Without an allocator, a type whose owned form needs one is generated as its view only.
        TypeDef::Struct(s) if !cx.has_owned(&logspec_ir::ir::Ty::Named(id)) && codec::uses_rules(cx, &s.fields) => {
            let e = format!(
                "struct `{}` is laid out by the schema's layout rules (natural alignment, strings with their NUL), \
                 which only its owned type implements: generate it with `alloc`",
                s.name
            );
            quote!(compile_error!(#e);)
        }
        TypeDef::Struct(s) if !cx.has_owned(&logspec_ir::ir::Ty::Named(id)) => {
            let display = cx.schema.record_for(id).map_or(s.name.as_str(), |r| r.name.as_str());
            super::views::struct_view(cx, id, display, &s.fields)
        }
        TypeDef::Struct(s) => struct_items(cx, id, s),
        TypeDef::Union(_) if !cx.has_owned(&logspec_ir::ir::Ty::Named(id)) => super::views::union_view(cx, id),
        TypeDef::Union(u) => {
            let mut t = union_items(cx, u);
            t.extend(super::views::union_view(cx, id));
            t
        }
        TypeDef::Extern(_) => TokenStream::new(),
    }
}

fn int_lit(p: Prim, v: i128) -> Literal {
    if p.is_signed() {
        Literal::i64_unsuffixed(v as i64)
    } else {
        Literal::u64_unsuffixed(v as u64)
    }
}

fn struct_items(cx: &Cx<'_>, id: TypeId, s: &Struct) -> TokenStream {
    let record = cx.schema.record_for(id);
    let ident = format_ident!("{}", s.name);
    let hide = codec::hidden(&s.fields);
    let mut members = TokenStream::new();
    let mut plain = true;
    let mut float = false;
    for (f, hidden) in s.fields.iter().zip(&hide) {
        if *hidden {
            continue;
        }
        plain &= cx.is_plain(&f.ty);
        float |= cx.has_float(&f.ty);
        let docs = doc_attrs(f.doc.as_deref(), f.unit.as_deref());
        let name = field_ident(&f.name);
        let ty = cx.rust_type(&f.ty);
        members.extend(quote!(#docs pub #name: #ty,));
    }
    let mut doc = s.doc.clone().unwrap_or_default();
    if let Some(r) = record {
        if !doc.is_empty() {
            doc.push_str("\n\n");
        }
        doc.push_str(&format!("Record `{}`, id {}", r.name, r.id));
        match s.size {
            Some(n) => doc.push_str(&format!(", {n} bytes")),
            None => doc.push_str(", variable size"),
        }
        doc.push_str(&format!(", layout fingerprint `{:#018x}`.", r.fingerprint));
    } else if let Some(n) = s.size {
        if !doc.is_empty() {
            doc.push_str("\n\n");
        }
        doc.push_str(&format!("{n} bytes on the wire."));
    }
    let docs = doc_attrs(Some(&doc), None);
    let derives = match (plain, float) {
        (true, true) => quote!(#[derive(Clone, Copy, Debug, Default, PartialEq)]),
        (true, false) => quote!(#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]),
        (false, true) => quote!(#[derive(Clone, Debug, PartialEq)]),
        (false, false) => quote!(#[derive(Clone, Debug, PartialEq, Eq, Hash)]),
    };
    let consts = struct_consts(&ident, s);
    let display = record.map_or(s.name.as_str(), |r| r.name.as_str());
    let impls = codec::struct_impls(
        cx,
        &StructSpec { display_name: display, ident: quote!(#ident), fields: &s.fields, record },
    );
    // Under layout rules beyond packed, a struct whose fields they move has no borrowed view
    // (its owned decoder is the one reader).
    let view = if codec::uses_rules(cx, &s.fields) {
        TokenStream::new()
    } else {
        super::views::struct_view(cx, id, display, &s.fields)
    };
    quote! {
        #docs
        #derives
        #[allow(non_snake_case)]
        pub struct #ident { #members }
        #consts
        #impls
        #view
    }
}

/// The named consts of a struct: `SIZE` and `OFFSET_<FIELD>` of a fixed-size struct, the
/// `OFFSET_<FIELD>` of the fixed-size start of a variable-size one. Shared by schema structs and
/// `#[derive(Record)]`.
pub fn struct_consts(ident: &proc_macro2::Ident, s: &Struct) -> TokenStream {
    // A variable-size struct's fields at fixed offsets: those before (and the first of) its
    // variable-size fields.
    let prefix_offsets = if s.size.is_none() && s.fields.iter().any(|f| f.offset.is_some() && !f.is_padding()) {
        let offs = s.fields.iter().filter(|f| !f.is_padding()).filter_map(|f| {
            let o = Literal::usize_unsuffixed(f.offset? as usize);
            let c = format_ident!("OFFSET_{}", f.name.to_ascii_uppercase());
            let d = format!(" Byte offset of `{}` (in the fixed-size start of the struct).", f.name);
            Some(quote!(#[doc = #d] pub const #c: usize = #o;))
        });
        quote! {
            #[allow(dead_code)]
            impl #ident {
                #(#offs)*
            }
        }
    } else {
        TokenStream::new()
    };
    let size_const = s.size.map(|n| {
        let n = Literal::usize_unsuffixed(n as usize);
        let offs = s.fields.iter().filter(|f| !f.is_padding()).map(|f| {
            let c = format_ident!("OFFSET_{}", f.name.to_ascii_uppercase());
            let o = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize);
            let d = format!(" Byte offset of `{}`.", f.name);
            quote!(#[doc = #d] pub const #c: usize = #o;)
        });
        quote! {
            #[allow(dead_code)]
            impl #ident {
                /// Encoded size in bytes.
                pub const SIZE: usize = #n;
                #(#offs)*
            }
        }
    });
    quote! {
        #size_const
        #prefix_offsets
    }
}

fn enum_items(cx: &Cx<'_>, e: &Enum) -> TokenStream {
    let ident = format_ident!("{}", e.name);
    let base = prim_type(e.base);
    let name = e.name.as_str();
    let docs = doc_attrs(Some(&format!(
        "{}\n\nAn enum over `{}`. Values without a name are kept (see [`{}::name`]), so that a newer writer's values survive a read-write round trip.",
        e.doc.as_deref().unwrap_or(""),
        e.base,
        e.name
    )), None);
    let named_fmt = format!("{name}::{{}}");
    let raw_fmt = format!("{name}({{}})");
    let debug = quote! {
        impl ::core::fmt::Debug for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self.name() {
                    ::core::option::Option::Some(n) => write!(f, #named_fmt, n),
                    ::core::option::Option::None => write!(f, #raw_fmt, self.0),
                }
            }
        }
    };
    let impls = enum_impls(cx, e, &ident, debug);
    quote! {
        #docs
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[repr(transparent)]
        pub struct #ident(pub #base);
        #impls
    }
}

/// The impls of an enum newtype `ident(base)`: a const per named value, `ALL`, `name()`, the codec
/// and `Visit` (with `between`, such as a `Debug` impl, after the inherent impl). Shared by schema
/// enums and `#[derive(Record)]` on a newtype with `values(...)`.
pub fn enum_impls(cx: &Cx<'_>, e: &Enum, ident: &proc_macro2::Ident, between: TokenStream) -> TokenStream {
    let rt = &cx.rt;
    let base = prim_type(e.base);
    let consts = e.values.iter().map(|v| {
        let c = format_ident!("{}", v.name);
        let lit = int_lit(e.base, v.value);
        let d = doc_attrs(v.doc.as_deref(), None);
        quote!(#d pub const #c: Self = Self(#lit);)
    });
    let arms = e.values.iter().map(|v| {
        let lit = int_lit(e.base, v.value);
        let n = v.name.as_str();
        quote!(#lit => ::core::option::Option::Some(#n),)
    });
    let all = e.values.iter().map(|v| format_ident!("{}", v.name));
    let size = Literal::usize_unsuffixed(e.base.size() as usize);
    let codec_impls = newtype_impls(cx, ident, &base, &size);
    quote! {
        #[allow(dead_code)]
        impl #ident {
            #(#consts)*
            /// Every named value, in declaration order.
            pub const ALL: &'static [Self] = &[#(Self::#all),*];
            /// The value's name, or `None` for a value the schema does not name.
            pub const fn name(self) -> ::core::option::Option<&'static str> {
                match self.0 {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }
        #between
        #codec_impls
        #[automatically_derived]
        impl #rt::Visit for #ident {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                v.enumeration(name, self.0 as i128, self.name());
            }
        }
    }
}

/// The getter of one bit-field: its bits shifted down, sign-extended for a signed field, as the
/// field's declared type (`bool`, the signed or unsigned integer of the storage width, or an enum).
fn bit_field_getter(cx: &Cx<'_>, base: Prim, b: &logspec_ir::ir::BitField) -> TokenStream {
    use logspec_ir::ir::BitKind;
    let name = super::field_ident(&b.name);
    let bit = b.bit;
    let mask = Literal::u64_unsuffixed(if b.width >= 64 { u64::MAX } else { (1u64 << b.width) - 1 });
    let d = doc_attrs(Some(&format!("Bits {}..{} ({} bit(s)).", b.bit, b.bit + b.width, b.width)), None);
    let raw = quote!(((self.0 as u64 >> #bit) & #mask));
    let (ty, body) = match b.kind {
        BitKind::Bool => (quote!(bool), quote!(#raw != 0)),
        BitKind::Unsigned => (prim_type(base), {
            let t = prim_type(base);
            quote!(#raw as #t)
        }),
        BitKind::Signed => {
            let signed = match base.size() {
                1 => Prim::I8,
                2 => Prim::I16,
                4 => Prim::I32,
                _ => Prim::I64,
            };
            let t = prim_type(signed);
            let up = 64 - b.width;
            (t.clone(), quote!((((#raw << #up) as i64) >> #up) as #t))
        }
        BitKind::Enum(id) => {
            let e = match cx.schema.ty(id) {
                TypeDef::Enum(e) => e,
                other => panic!("bit-field enum {} is not an enum", other.name()),
            };
            let ident = format_ident!("{}", e.name);
            let t = prim_type(e.base);
            (quote!(#ident), quote!(#ident(#raw as #t)))
        }
    };
    quote!(#d pub const fn #name(self) -> #ty { #body })
}

fn flags_items(cx: &Cx<'_>, f: &Flags) -> TokenStream {
    let rt = &cx.rt;
    let ident = format_ident!("{}", f.name);
    let base = prim_type(f.base);
    let docs = doc_attrs(
        Some(&format!("{}\n\nBit flags over `{}`; unnamed bits are kept.", f.doc.as_deref().unwrap_or(""), f.base)),
        None,
    );
    let consts = f.flags.iter().map(|x| {
        let c = format_ident!("{}", x.name);
        let bit = x.bit;
        let d = doc_attrs(x.doc.as_deref(), None);
        quote!(#d pub const #c: Self = Self(1 << #bit);)
    });
    let names = f.flags.iter().map(|x| {
        let c = format_ident!("{}", x.name);
        let n = x.name.as_str();
        quote!((Self::#c, #n))
    });
    let size = Literal::usize_unsuffixed(f.base.size() as usize);
    let codec_impls = newtype_impls(cx, &ident, &base, &size);
    let getters = f.fields.iter().map(|b| bit_field_getter(cx, f.base, b));
    quote! {
        #docs
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        pub struct #ident(pub #base);
        #[allow(dead_code)]
        impl #ident {
            #(#getters)*
            #(#consts)*
            /// Every named flag with its name.
            pub const NAMED: &'static [(Self, &'static str)] = &[#(#names),*];
            /// The raw bits.
            pub const fn bits(self) -> #base {
                self.0
            }
            /// Whether every bit of `other` is set.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
        }
        impl ::core::ops::BitOr for #ident {
            type Output = Self;
            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }
        impl ::core::ops::BitAnd for #ident {
            type Output = Self;
            fn bitand(self, rhs: Self) -> Self {
                Self(self.0 & rhs.0)
            }
        }
        impl ::core::fmt::Debug for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "{:#x}", self.0)?;
                let mut sep = " (";
                for (flag, name) in Self::NAMED {
                    if self.contains(*flag) {
                        write!(f, "{sep}{name}")?;
                        sep = " | ";
                    }
                }
                if sep != " (" {
                    f.write_str(")")?;
                }
                ::core::result::Result::Ok(())
            }
        }
        #codec_impls
        #[automatically_derived]
        impl #rt::Visit for #ident {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                v.flags(name, self.0 as u64);
            }
        }
    }
}

/// `variant_index`, the lookup of a union selected by a type name: on the owned union, or on its
/// view where there is no owned union (without `alloc`).
pub(crate) fn variant_index_fn(u: &Union) -> TokenStream {
    let mut exact = TokenStream::new();
    let mut prefixes = TokenStream::new();
    let mut default = quote!(::core::option::Option::None);
    let mut listed = Vec::new();
    for v in &u.variants {
        let idx = Literal::i128_unsuffixed(v.tag);
        match &v.select {
            Some(NameMatch::Exact(names)) => {
                exact.extend(quote!(#(#names)|* => return ::core::option::Option::Some(#idx),));
                listed.extend(names.iter().map(|n| format!("`{n}`")));
            }
            Some(NameMatch::Prefix(p)) => {
                prefixes.extend(quote! {
                    if type_name.starts_with(#p) {
                        return ::core::option::Option::Some(#idx);
                    }
                });
                listed.push(format!("`{p}...`"));
            }
            Some(NameMatch::Default) => default = quote!(::core::option::Option::Some(#idx)),
            None => {}
        }
    }
    let doc = format!(
        " The variant a type name selects ({}; exact names first, then prefixes, then the default), as the tag [`decode_variant_exact`](Self::decode_variant_exact) takes.",
        listed.join(", ")
    );
    quote! {
        #[doc = #doc]
        pub fn variant_index(type_name: &str) -> ::core::option::Option<i128> {
            match type_name {
                #exact
                _ => {}
            }
            #prefixes
            #default
        }
    }
}

/// The extra items of a union selected by a type name: the name lookup, whole-value decoding, and
/// `Encode` (such a union is a value of its own, not a field behind a tag).
fn by_name_items(cx: &Cx<'_>, u: &Union) -> TokenStream {
    let rt = &cx.rt;
    let ident = format_ident!("{}", u.name);
    let name = u.name.as_str();
    let lookup = variant_index_fn(u);
    quote! {
        impl #ident {
            #lookup
            /// Decodes a whole value (every byte of `bytes`) as the variant `type_name` selects.
            pub fn decode_named(type_name: &str, bytes: &[u8]) -> ::core::result::Result<Self, #rt::DecodeError> {
                match Self::variant_index(type_name) {
                    ::core::option::Option::Some(i) => #rt::__private::named_exact(i, bytes, #name),
                    ::core::option::Option::None => ::core::result::Result::Err(#rt::__private::unknown_type_name(type_name, #name)),
                }
            }
            /// Decodes a whole value as the variant of index `index` (from [`variant_index`](Self::variant_index)).
            pub fn decode_variant_exact(index: i128, bytes: &[u8]) -> ::core::result::Result<Self, #rt::DecodeError> {
                #rt::__private::named_exact(index, bytes, #name)
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #ident {
            fn encoded_len(&self) -> usize {
                #rt::Union::variant_len(self)
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                let _ = order;
                #rt::Union::encode_variant(self, out)
            }
        }
    }
}

fn union_items(cx: &Cx<'_>, u: &Union) -> TokenStream {
    let ident = format_ident!("{}", u.name);
    let docs = doc_attrs(
        Some(&format!(
            "{}\n\nA tagged union: the variant is selected by a tag field of the enclosing struct.",
            u.doc.as_deref().unwrap_or("")
        )),
        None,
    );
    let mut variants = TokenStream::new();
    let mut float = false;
    for v in &u.variants {
        let vid = format_ident!("{}", v.name);
        let hide = codec::hidden(&v.fields);
        let visible: Vec<_> = v.fields.iter().zip(&hide).filter(|(_, h)| !**h).map(|(f, _)| f).collect();
        let members = visible.iter().map(|f| {
            float |= cx.has_float(&f.ty);
            let d = doc_attrs(f.doc.as_deref(), f.unit.as_deref());
            let n = field_ident(&f.name);
            let t = cx.rust_type(&f.ty);
            quote!(#d #n: #t)
        });
        let vdocs = doc_attrs(v.doc.as_deref(), None);
        variants.extend(quote!(#vdocs #vid { #(#members),* },));
    }
    let impls = union_impls(cx, u, &ident);
    let by_name = if u.by_name { by_name_items(cx, u) } else { TokenStream::new() };
    let tags = super::views::tag_consts(u);
    let derives = if float {
        quote!(#[derive(Clone, Debug, PartialEq)])
    } else {
        quote!(#[derive(Clone, Debug, PartialEq, Eq, Hash)])
    };
    quote! {
        #docs
        #derives
        #[allow(non_snake_case)]
        pub enum #ident { #variants }
        #[allow(dead_code)]
        impl #ident {
            #tags
        }
        #impls
        #by_name
    }
}

/// The `Union` and `Visit` impls of a union's Rust enum (`ident`), whose variants have the IR
/// variants' names and their visible fields as named members; the derive on a data enum emits
/// these too, so a hand-written union and a schema one share one implementation.
pub fn union_impls(cx: &Cx<'_>, u: &Union, ident: &proc_macro2::Ident) -> TokenStream {
    let rt = &cx.rt;
    let name = u.name.as_str();
    let mut tag_arms = TokenStream::new();
    let mut decode_arms = TokenStream::new();
    let mut encode_arms = TokenStream::new();
    let mut len_arms = TokenStream::new();
    let mut visit_arms = TokenStream::new();
    for v in &u.variants {
        let vid = format_ident!("{}", v.name);
        let vname = v.name.as_str();
        let tag = Literal::i128_unsuffixed(v.tag);
        let hide = codec::hidden(&v.fields);
        let visible: Vec<_> = v.fields.iter().zip(&hide).filter(|(_, h)| !**h).map(|(f, _)| f).collect();
        // Fields are bound to `__b_<name>` so that they cannot shadow the generated code's own
        // locals (`v`, `out`, `c`, `name`).
        let binds: Vec<_> = visible
            .iter()
            .map(|f| {
                let n = field_ident(&f.name);
                let a = format_ident!("__b_{}", f.name);
                quote!(#n: #a)
            })
            .collect();
        tag_arms.extend(quote!(Self::#vid { .. } => #tag,));
        match codec::fixed_variant_decode(cx, &v.fields, name, quote!(Self::#vid)) {
            Some(fast) => decode_arms.extend(quote!(#tag => { #fast })),
            None => {
                let (stmts, inits) = codec::decode_fields(cx, &v.fields, name);
                decode_arms.extend(quote!(#tag => { #stmts ::core::result::Result::Ok(Self::#vid { #inits }) }));
            }
        }
        let (len, enc) = codec::encode_fields(cx, &v.fields, &|f| {
            let b = format_ident!("__b_{}", f.name);
            quote!((*#b))
        });
        encode_arms.extend(quote!(Self::#vid { #(#binds),* } => { #enc }));
        len_arms.extend(codec::len_arm(quote!(Self::#vid), &binds, &len));
        let vis = codec::visit_fields(cx, &v.fields, &|f| {
            let b = format_ident!("__b_{}", f.name);
            quote!((*#b))
        });
        visit_arms.extend(quote!(Self::#vid { #(#binds),* } => {
            v.begin_variant(name, #vname, #tag);
            #vis
            v.end_variant();
        }));
    }
    quote! {
        #[automatically_derived]
        impl #rt::Union for #ident {
            fn tag(&self) -> i128 {
                match self { #tag_arms }
            }
            #[allow(unused_variables)]
            #[inline]
            fn decode_variant(tag: i128, c: &mut #rt::Cursor<'_>) -> ::core::result::Result<Self, #rt::DecodeError> {
                match tag {
                    #decode_arms
                    _ => ::core::result::Result::Err(#rt::__private::unknown_variant(tag, c.position(), #name)),
                }
            }
            #[allow(unused_variables)]
            fn encode_variant<__S: #rt::Sink + ?Sized>(&self, out: &mut __S) -> ::core::result::Result<(), #rt::EncodeError> {
                match self { #encode_arms }
                ::core::result::Result::Ok(())
            }
            #[allow(unused_variables)]
            fn variant_len(&self) -> usize {
                match self { #len_arms }
            }
        }
        #[automatically_derived]
        impl #rt::Visit for #ident {
            #[allow(unused_variables)]
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                match self { #visit_arms }
            }
        }
    }
}

/// `Fixed`, `Decode` and `Encode` of an enum or flags newtype: its base integer, in the byte
/// order of the field that holds it.
fn newtype_impls(cx: &Cx<'_>, ident: &proc_macro2::Ident, base: &TokenStream, size: &Literal) -> TokenStream {
    let rt = &cx.rt;
    quote! {
        #[automatically_derived]
        impl #rt::view::Element for #ident {
            const SIZE: usize = #size;
            #[inline(always)]
            fn read(b: &[u8], order: #rt::Endian) -> Self {
                Self(<#base as #rt::view::Element>::read(b, order))
            }
        }
        #[automatically_derived]
        impl #rt::Fixed for #ident {
            const SIZE: usize = #size;
            #[inline(always)]
            fn decode_fixed(b: &[u8], order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                <#base as #rt::Fixed>::decode_fixed(b, order).map(Self)
            }
            #[inline(always)]
            fn encode_fixed(&self, out: &mut [u8], order: #rt::Endian) {
                #rt::Fixed::encode_fixed(&self.0, out, order)
            }
        }
        #[automatically_derived]
        impl #rt::Decode for #ident {
            #[inline(always)]
            fn decode(c: &mut #rt::Cursor<'_>, order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                <#base as #rt::Decode>::decode(c, order).map(Self)
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #ident {
            #[inline(always)]
            fn encoded_len(&self) -> usize {
                #size
            }
            #[inline(always)]
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                #rt::Encode::encode(&self.0, out, order)
            }
        }
    }
}
