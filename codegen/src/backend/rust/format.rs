//! Per-format items: the schema id, the record enum ("any record of this format") and the
//! [`FramedFormat`](https://docs.rs/logspec-runtime) implementation that plugs the format into the
//! runtime's shared reader and writer.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::Cx;
use logspec_ir::ir::{self, Prim, Ty};
use logspec_ir::lower::camel_case;

pub fn format_items(cx: &Cx<'_>) -> TokenStream {
    let rt = &cx.rt;
    let schema = cx.schema;
    let fname = schema.format.name.as_str();
    let mut out = TokenStream::new();
    out.extend(quote! {
        /// The format's short name.
        pub const FORMAT_NAME: &str = #fname;
    });
    if let Some(sid) = &schema.format.schema_id {
        let c = format_ident!("{}", sid.macro_name);
        let v = Literal::u64_unsuffixed(sid.value);
        let t = match (schema.file_header, sid.field) {
            (Some(h), Some(f)) => match &schema.strukt(h).fields[f].ty {
                Ty::Prim(p) => super::prim_type(*p),
                _ => quote!(u64),
            },
            _ => quote!(u64),
        };
        let d = " The schema id this code was generated for. Bump it in the schema on every breaking layout change.";
        out.extend(quote!(#[doc = #d] pub const #c: #t = #v;));
    }
    out.extend(params(schema));
    if let Some(m) = schema.magic() {
        let lit = Literal::byte_string(m);
        out.extend(quote! {
            /// The bytes every file of this format starts with.
            pub const MAGIC: &[u8] = #lit;
        });
    }
    if schema.records.is_empty() {
        return out;
    }

    let enum_ident = format_ident!("{}Record", camel_case(fname));
    let mut variants = TokenStream::new();
    let mut name_arms = TokenStream::new();
    let mut id_arms = TokenStream::new();
    let mut visit_arms = TokenStream::new();
    let mut len_arms = TokenStream::new();
    let mut enc_arms = TokenStream::new();
    let mut froms = TokenStream::new();
    let mut id_consts = TokenStream::new();
    let mut view_variants = TokenStream::new();
    let mut view_decode = TokenStream::new();
    let mut view_decode_with = TokenStream::new();
    let mut view_owned = TokenStream::new();
    let mut float = false;
    let mut plain = true;
    for r in &schema.records {
        let s = schema.strukt(r.body);
        let v = format_ident!("{}", s.name);
        let doc = format!(" `{}` (id {}).", r.name, r.id);
        variants.extend(quote!(#[doc = #doc] #v(#v),));
        let n = r.name.as_str();
        name_arms.extend(quote!(Self::#v(_) => #n,));
        let id = Literal::u64_unsuffixed(r.id);
        id_arms.extend(quote!(Self::#v(_) => #id,));
        visit_arms.extend(quote!(Self::#v(r) => #rt::Visit::visit(r, name, v),));
        len_arms.extend(quote!(Self::#v(r) => #rt::Encode::encoded_len(r),));
        enc_arms.extend(quote!(Self::#v(r) => #rt::Encode::encode(r, out, order),));
        froms.extend(quote! {
            impl ::core::convert::From<#v> for #enum_ident {
                fn from(r: #v) -> Self {
                    Self::#v(r)
                }
            }
        });
        float |= cx.has_float(&Ty::Named(r.body));
        plain &= cx.is_plain(&Ty::Named(r.body));
        let c = format_ident!("ID_{}", super::snake_case(&s.name).to_ascii_uppercase());
        let d = format!(" The id (framing tag) of record `{}`.", r.name);
        id_consts.extend(quote!(#[doc = #d] pub const #c: u64 = #id;));
        let vr = super::views::view_ident(cx, r.body);
        view_variants.extend(quote!(#[doc = #doc] #v(#vr<'a>),));
        view_decode.extend(quote!(#id => ::core::option::Option::Some(#rt::__private::view_whole::<#vr<'a>>(payload, &[], #n).map(Self::#v)),));
        view_decode_with.extend(quote!(#id => ::core::option::Option::Some(#rt::__private::view_whole::<#vr<'a>>(payload, params, #n).map(Self::#v)),));
        view_owned.extend(quote!(Self::#v(r) => #enum_ident::#v(r.to_owned()),));
    }
    let view_ident = format_ident!("{}RecordRef", camel_case(fname));
    let derives = match (plain, float) {
        (true, true) => quote!(#[derive(Clone, Copy, Debug, PartialEq)]),
        (true, false) => quote!(#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]),
        (false, true) => quote!(#[derive(Clone, Debug, PartialEq)]),
        (false, false) => quote!(#[derive(Clone, Debug, PartialEq, Eq, Hash)]),
    };
    let enum_doc = format!(" Any record of the `{fname}` format.");
    let view_doc = format!(" A view of any record of the `{fname}` format, borrowed from its payload.");
    if !schema.records.iter().all(|r| cx.has_owned(&Ty::Named(r.body))) {
        // Without `alloc`, a record whose owned form needs an allocator has only its view, so the
        // format has only the view record enum (which holds the record ids) and no `FramedFormat`
        // impl (whose `Record` is owned).
        out.extend(quote! {
            #[doc = #view_doc]
            #[derive(Clone, Copy, Debug, PartialEq)]
            pub enum #view_ident<'a> { #view_variants }
            #[allow(dead_code)]
            impl<'a> #view_ident<'a> {
                #id_consts
                /// The view of a record payload (which it must fill exactly), or `None` for a tag
                /// this schema does not know.
                #[inline]
                pub fn decode(tag: u64, payload: &'a [u8]) -> ::core::option::Option<::core::result::Result<Self, #rt::DecodeError>> {
                    match tag {
                        #view_decode
                        _ => ::core::option::Option::None,
                    }
                }
                /// [`decode`](Self::decode) with the values of the reader parameters (see `Cursor::with_params`).
                #[inline]
                pub fn decode_with(tag: u64, payload: &'a [u8], params: &'a [i128]) -> ::core::option::Option<::core::result::Result<Self, #rt::DecodeError>> {
                    match tag {
                        #view_decode_with
                        _ => ::core::option::Option::None,
                    }
                }
            }
            #[automatically_derived]
            impl #rt::Encode for #view_ident<'_> {
                fn encoded_len(&self) -> usize {
                    match self { #len_arms }
                }
                fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                    match self { #enc_arms }
                }
            }
            #[automatically_derived]
            impl #rt::Visit for #view_ident<'_> {
                fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                    match self { #visit_arms }
                }
            }
        });
        out.extend(framed_impl(cx, &enum_ident, false));
        return out;
    }
    // Views of records laid out by the schema's layout rules (natural alignment, strings with
    // their NUL) are not generated: those records have their owned types only.
    let views = if schema.records.iter().any(|r| super::codec::uses_rules(cx, &schema.strukt(r.body).fields)) {
        TokenStream::new()
    } else {
        quote! {
        #[doc = #view_doc]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum #view_ident<'a> { #view_variants }
        #[allow(dead_code)]
        impl<'a> #view_ident<'a> {
            /// The view of a record payload (which it must fill exactly), or `None` for a tag
            /// this schema does not know.
            #[inline]
            pub fn decode(tag: u64, payload: &'a [u8]) -> ::core::option::Option<::core::result::Result<Self, #rt::DecodeError>> {
                match tag {
                    #view_decode
                    _ => ::core::option::Option::None,
                }
            }
            /// [`decode`](Self::decode) with the values of the reader parameters (see `Cursor::with_params`).
            #[inline]
            pub fn decode_with(tag: u64, payload: &'a [u8], params: &'a [i128]) -> ::core::option::Option<::core::result::Result<Self, #rt::DecodeError>> {
                match tag {
                    #view_decode_with
                    _ => ::core::option::Option::None,
                }
            }
            /// The owned record.
            #[allow(clippy::wrong_self_convention)]
            pub fn to_owned(&self) -> #enum_ident {
                match self { #view_owned }
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #view_ident<'_> {
            fn encoded_len(&self) -> usize {
                match self { #len_arms }
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                match self { #enc_arms }
            }
        }
        #[automatically_derived]
        impl #rt::Visit for #view_ident<'_> {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                match self { #visit_arms }
            }
        }
        }
    };
    out.extend(quote! {
        #[doc = #enum_doc]
        #derives
        pub enum #enum_ident { #variants }
        #[allow(dead_code)]
        impl #enum_ident {
            #id_consts
            /// The record type's contract name.
            pub fn name(&self) -> &'static str {
                match self { #name_arms }
            }
            /// The record type's id (the framing tag).
            pub fn id(&self) -> u64 {
                match self { #id_arms }
            }
        }
        #froms
        #views
        #[automatically_derived]
        impl #rt::Visit for #enum_ident {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                match self { #visit_arms }
            }
        }
        #[automatically_derived]
        impl #rt::Encode for #enum_ident {
            fn encoded_len(&self) -> usize {
                match self { #len_arms }
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                match self { #enc_arms }
            }
        }
    });
    out.extend(framed_impl(cx, &enum_ident, true));
    out
}

/// The format's marker type when the schema has a framing with a length field: `impl Framing`,
/// and, when the records have owned types (`owned`), `impl FramedFormat` and `Versioned`.
fn framed_impl(cx: &Cx<'_>, enum_ident: &proc_macro2::Ident, owned: bool) -> TokenStream {
    let rt = &cx.rt;
    let schema = cx.schema;
    let Some(framing) = &schema.framing else { return TokenStream::new() };
    let Some(length) = framing.length else { return TokenStream::new() };
    let hdr = schema.strukt(framing.header);
    let Some(hsize) = hdr.size else { return TokenStream::new() };
    let hsize = Literal::usize_unsuffixed(hsize as usize);
    let fname = schema.format.name.as_str();
    let marker = format_ident!("{}", camel_case(fname));
    let versioned = if cx.top && owned { versioned_impl(cx, &marker) } else { TokenStream::new() };

    let prim = |i: usize| match hdr.fields[i].ty {
        Ty::Prim(p) => p,
        _ => Prim::U64,
    };
    let read = |i: usize| {
        let f = &hdr.fields[i];
        let p = prim(i);
        let n = Literal::usize_unsuffixed(p.size() as usize);
        let off = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize);
        let t = super::prim_type(p);
        let from = match f.endian {
            logspec_ir::ir::Endian::Little => quote!(#t::from_le_bytes),
            logspec_ir::ir::Endian::Big => quote!(#t::from_be_bytes),
        };
        quote!(#from(#rt::__private::sub::<#n>(b, #off)) as u64)
    };
    let write = |i: usize, v: TokenStream| {
        let f = &hdr.fields[i];
        let p = prim(i);
        let off = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize);
        let t = super::prim_type(p);
        let tb = match f.endian {
            logspec_ir::ir::Endian::Little => quote!(to_le_bytes),
            logspec_ir::ir::Endian::Big => quote!(to_be_bytes),
        };
        let end = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize + p.size() as usize);
        if p == Prim::U64 {
            quote!(out[#off..#end].copy_from_slice(&#v.#tb());)
        } else {
            quote!(out[#off..#end].copy_from_slice(&(#v as #t).#tb());)
        }
    };
    let hdr_ident = format_ident!("{}", hdr.name);
    let w_consts: TokenStream = hdr
        .fields
        .iter()
        .filter_map(|f| match &f.value {
            Some(logspec_ir::ir::ConstValue::Int(v)) => {
                let off = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize);
                let p = match f.ty {
                    Ty::Prim(p) => p,
                    _ => Prim::U8,
                };
                let n = Literal::usize_unsuffixed(p.size() as usize);
                let t = super::prim_type(p);
                let v = Literal::i128_unsuffixed(*v);
                let tb = match f.endian {
                    logspec_ir::ir::Endian::Little => quote!(to_le_bytes),
                    logspec_ir::ir::Endian::Big => quote!(to_be_bytes),
                };
                Some(quote!(out[#off..#off + #n].copy_from_slice(&(#v as #t).#tb());))
            }
            Some(logspec_ir::ir::ConstValue::Bytes(b)) => {
                let off = Literal::usize_unsuffixed(f.offset.unwrap_or(0) as usize);
                let n = Literal::usize_unsuffixed(b.len());
                let lit = Literal::byte_string(b);
                Some(quote!(out[#off..#off + #n].copy_from_slice(#lit);))
            }
            None => None,
        })
        .collect();
    // The header struct's own decoder checks its const fields (sync markers), when it has any.
    let check_consts = if hdr.fields.iter().any(|f| f.value.is_some()) {
        quote!(<#hdr_ident as #rt::Fixed>::decode_fixed(b, #rt::Endian::Little)?;)
    } else {
        quote!()
    };
    let tag_name = hdr.fields[framing.tag].name.as_str();
    let len_name = hdr.fields[length].name.as_str();
    let ts_name = match framing.timestamp {
        Some(t) => {
            let n = hdr.fields[t].name.as_str();
            quote!(::core::option::Option::Some(#n))
        }
        None => quote!(::core::option::Option::None),
    };
    let tag = read(framing.tag);
    let len = read(length);
    let ts = match framing.timestamp {
        Some(t) => {
            let r = read(t);
            quote!(::core::option::Option::Some(#r))
        }
        None => quote!(::core::option::Option::None),
    };
    let w_tag = write(framing.tag, quote!(h.tag));
    let w_len = write(length, quote!(h.len));
    let w_ts = framing.timestamp.map(|t| write(t, quote!(h.timestamp.unwrap_or(0)))).unwrap_or_default();
    let max_tag = Literal::u64_unsuffixed(
        prim(framing.tag).int_range().map_or(u64::MAX, |(_, hi)| hi.min(u64::MAX as i128) as u64),
    );
    let max_payload =
        Literal::u64_unsuffixed(prim(length).int_range().map_or(u64::MAX, |(_, hi)| hi.min(u64::MAX as i128) as u64));

    let mut id_of = quote!(let _ = h; ::core::option::Option::None);
    let (file_header, check) = match schema.file_header {
        Some(h) => {
            let ident = format_ident!("{}", schema.strukt(h).name);
            let check = match schema.format.schema_id.as_ref().and_then(|s| s.field.map(|f| (s, f))) {
                Some((sid, f)) => {
                    let fld = &schema.strukt(h).fields[f];
                    let fid = super::field_ident(&fld.name);
                    let fname = fld.name.as_str();
                    let cur = Literal::u64_unsuffixed(sid.value);
                    let all = cx.schema_ids.iter().map(|i| Literal::u64_unsuffixed(*i));
                    id_of = quote!(::core::option::Option::Some(h.#fid as u64));
                    quote! {
                        let found = h.#fid as u64;
                        const ALL: &[u64] = &[#(#all),*];
                        if found == #cur {
                            ::core::result::Result::Ok(())
                        } else if ALL.contains(&found) {
                            ::core::result::Result::Err(#rt::ReadErrorKind::OtherSchemaId {
                                field: #fname, found, expected: #cur,
                            })
                        } else {
                            ::core::result::Result::Err(#rt::ReadErrorKind::UnknownSchemaId {
                                field: #fname, found, known: ALL,
                            })
                        }
                    }
                }
                None => quote!(let _ = h; ::core::result::Result::Ok(())),
            };
            (quote!(#ident), check)
        }
        None => (quote!(()), quote!(let _ = h; ::core::result::Result::Ok(()))),
    };
    let known = schema.format.schema_id.as_ref().map(|s| Literal::u64_unsuffixed(s.value));
    let known = quote!(&[#known]);

    let mut name_arms = TokenStream::new();
    let mut size_arms = TokenStream::new();
    let mut decode_arms = TokenStream::new();
    let mut with_arms = TokenStream::new();
    for r in &schema.records {
        let s = schema.strukt(r.body);
        let v = format_ident!("{}", s.name);
        let id = Literal::u64_unsuffixed(r.id);
        let n = r.name.as_str();
        name_arms.extend(quote!(#id => ::core::option::Option::Some(#n),));
        if let (Some(size), true) = (s.size, super::codec::length_only(cx, &s.fields)) {
            let size = Literal::usize_unsuffixed(size as usize);
            size_arms.extend(quote!(#id => ::core::option::Option::Some(#size),));
        }
        let dec = if s.size.is_some() {
            quote!(#rt::__private::payload_fixed::<#v>(payload, #n))
        } else {
            quote!(#rt::__private::payload_var::<#v>(payload, #n))
        };
        decode_arms.extend(quote!(#id => ::core::option::Option::Some(#dec.map(#enum_ident::#v)),));
        let dec =
            if s.size.is_some() { dec } else { quote!(#rt::__private::payload_var_with::<#v>(payload, params, #n)) };
        with_arms.extend(quote!(#id => ::core::option::Option::Some(#dec.map(#enum_ident::#v)),));
    }
    // With reader parameters, a payload decodes with their values (see `PARAMS`).
    let with_params = if schema.params.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            impl #marker {
                /// Decodes a payload like `FramedFormat::decode_record`, with the values of the reader
                /// parameters (`params[PARAM_<NAME>]`) that select the variants of parameter unions.
                #[inline(always)]
                pub fn decode_record_with(tag: u64, payload: &[u8], params: &[i128]) -> ::core::option::Option<::core::result::Result<#enum_ident, #rt::DecodeError>> {
                    match tag {
                        #with_arms
                        _ => ::core::option::Option::None,
                    }
                }
            }
        }
    };
    // Links only to what the runtime has without `std`: the readers and the writer exist only
    // with it, and the code cannot tell which features the including crate's runtime has.
    let rt_path = cx.rt.to_string().replace(' ', "");
    let doc = if owned {
        format!(
            " The `{fname}` format: its [`FramedFormat`]({rt_path}::FramedFormat) impl drives the runtime's \
             framed `Reader`, `SliceReader` and `Writer` (its `std` feature)."
        )
    } else {
        format!(
            " The `{fname}` format's framing ([`Framing`]({rt_path}::Framing)). (Generated without `alloc`: \
             its records have only views, so it has no `FramedFormat` impl.)"
        )
    };
    // `[framing] sync` and `checksum`: only framings that declare them get the consts (the
    // trait's defaults are "none").
    let sync = framing.sync_bytes(schema).map(|b| {
        let b = b.iter().map(|x| Literal::u8_unsuffixed(*x));
        quote! {
            /// The bytes that begin every record.
            const SYNC: &'static [u8] = &[#(#b),*];
        }
    });
    // `[framing] trailer`: the bytes that end the file.
    let trailer = framing.trailer_bytes(schema).map(|b| {
        let b = b.iter().map(|x| Literal::u8_unsuffixed(*x));
        quote! {
            /// The bytes that end the file, after the last record.
            const TRAILER: &'static [u8] = &[#(#b),*];
        }
    });
    let checksum = framing.checksum.map(|c| {
        let p = c.algorithm.params();
        let f = &schema.strukt(framing.header).fields[c.field];
        let hex = |v: u32| format!("{v:#x}").parse::<TokenStream>().expect("a hex literal");
        let (width, poly, init, xorout) = (Literal::u32_unsuffixed(p.width), hex(p.poly), hex(p.init), hex(p.xorout));
        let (reflect, field, at, over) = (p.reflect, f.name.as_str(), f.offset.unwrap_or(0) as usize, c.over == ir::ChecksumSpan::Record);
        let endian = match f.endian {
            ir::Endian::Little => quote!(Little),
            ir::Endian::Big => quote!(Big),
        };
        let doc = format!(
            " The per-record CRC: {} over {}.",
            c.algorithm.name().to_ascii_uppercase(),
            match c.over {
                ir::ChecksumSpan::Record => format!("the record header without `{field}`, then the payload"),
                ir::ChecksumSpan::Payload => "the payload".to_string(),
            }
        );
        quote! {
            #[doc = #doc]
            const CHECKSUM: ::core::option::Option<#rt::RecordChecksum> = ::core::option::Option::Some(#rt::RecordChecksum {
                crc: #rt::Crc::new(#width, #poly, #init, #reflect, #xorout),
                field: #field,
                at: #at,
                endian: #rt::Endian::#endian,
                over_header: #over,
            });
        }
    });
    // The records checked by their length alone; the trait's default says "none".
    let exact_size = (!size_arms.is_empty()).then(|| {
        quote! {
            #[inline(always)]
            fn exact_size(tag: u64) -> ::core::option::Option<usize> {
                match tag {
                    #size_arms
                    _ => ::core::option::Option::None,
                }
            }
        }
    });
    let framing = quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct #marker;
        #[automatically_derived]
        impl #rt::Framing for #marker {
            const NAME: &'static str = #fname;
            const RECORD_HEADER_SIZE: usize = #hsize;
            const MAX_PAYLOAD: u64 = #max_payload;
            const MAX_TAG: u64 = #max_tag;
            const TAG_FIELD: &'static str = #tag_name;
            const LENGTH_FIELD: &'static str = #len_name;
            const TIMESTAMP_FIELD: ::core::option::Option<&'static str> = #ts_name;
            #sync
            #checksum
            #trailer
            #[inline(always)]
            fn parse_record_header(b: &[u8]) -> ::core::result::Result<#rt::RecordHeader, #rt::DecodeError> {
                #check_consts
                let ::core::option::Option::Some(b) = b.first_chunk::<#hsize>() else {
                    return ::core::result::Result::Err(#rt::DecodeError::eof(#hsize, b.len()));
                };
                ::core::result::Result::Ok(#rt::RecordHeader { tag: #tag, len: #len, timestamp: #ts })
            }
            fn write_record_header(h: &#rt::RecordHeader, out: &mut [u8]) {
                let out = &mut out[..#hsize];
                out.fill(0);
                #w_consts
                #w_tag
                #w_len
                #w_ts
            }
            fn record_name(tag: u64) -> ::core::option::Option<&'static str> {
                match tag {
                    #name_arms
                    _ => ::core::option::Option::None,
                }
            }
            #exact_size
        }
    };
    if !owned {
        return framing;
    }
    quote! {
        #framing
        #[automatically_derived]
        impl #rt::FramedFormat for #marker {
            const KNOWN_SCHEMA_IDS: &'static [u64] = #known;
            type FileHeader = #file_header;
            type Record = #enum_ident;
            fn check_file_header(h: &Self::FileHeader) -> ::core::result::Result<(), #rt::ReadErrorKind> {
                #check
            }
            fn schema_id(h: &Self::FileHeader) -> ::core::option::Option<u64> {
                #id_of
            }
            #[inline(always)]
            fn decode_record(tag: u64, payload: &[u8]) -> ::core::option::Option<::core::result::Result<Self::Record, #rt::DecodeError>> {
                match tag {
                    #decode_arms
                    _ => ::core::option::Option::None,
                }
            }
            fn record_tag(r: &Self::Record) -> u64 {
                r.id()
            }
        }
        #with_params
        #versioned
    }
}

/// `impl Versioned` of the top-level format: dispatch on the schema id, to the older layouts in
/// the `history` module.
fn versioned_impl(cx: &Cx<'_>, marker: &proc_macro2::Ident) -> TokenStream {
    let rt = &cx.rt;
    let schema = cx.schema;
    let Some(sid) = &schema.format.schema_id else {
        return quote! {
            #[automatically_derived]
            impl #rt::Versioned for #marker {
                const SCHEMA_IDS: &'static [u64] = &[];
                const SCHEMA_ID_FIELD: &'static str = "";
                fn with_schema_id<W: #rt::WithFormat>(id: u64, w: W) -> ::core::result::Result<W::Output, W> {
                    let _ = id;
                    ::core::result::Result::Ok(w.call::<Self>())
                }
            }
        };
    };
    let field = match (schema.file_header, sid.field) {
        (Some(h), Some(f)) => schema.strukt(h).fields[f].name.clone(),
        _ => String::new(),
    };
    let all = cx.schema_ids.iter().map(|i| Literal::u64_unsuffixed(*i));
    let cur = Literal::u64_unsuffixed(sid.value);
    let arms = cx.schema_ids.iter().filter(|&&i| i != sid.value).map(|&i| {
        let m = format_ident!("schema_{}", i);
        let lit = Literal::u64_unsuffixed(i);
        quote!(#lit => ::core::result::Result::Ok(w.call::<history::#m::#marker>()),)
    });
    quote! {
        #[automatically_derived]
        impl #rt::Versioned for #marker {
            const SCHEMA_IDS: &'static [u64] = &[#(#all),*];
            const SCHEMA_ID_FIELD: &'static str = #field;
            fn with_schema_id<W: #rt::WithFormat>(id: u64, w: W) -> ::core::result::Result<W::Output, W> {
                match id {
                    #cur => ::core::result::Result::Ok(w.call::<Self>()),
                    #(#arms)*
                    _ => ::core::result::Result::Err(w),
                }
            }
        }
    }
}

/// One `PARAM_<NAME>` index const per reader parameter, and `PARAMS`, their names in order: the
/// slice given to `Cursor::with_params` holds their values at these indices.
fn params(schema: &logspec_ir::ir::Schema) -> TokenStream {
    if schema.params.is_empty() {
        return TokenStream::new();
    }
    let mut out = TokenStream::new();
    let names: Vec<&str> = schema.params.iter().map(|p| p.name.as_str()).collect();
    let n = names.len();
    out.extend(quote! {
        /// The reader parameters, in index order: decode with
        /// `Cursor::with_params(bytes, &values)`, `values[i]` being the value of `PARAMS[i]`.
        pub const PARAMS: [&str; #n] = [#(#names),*];
    });
    for (i, p) in schema.params.iter().enumerate() {
        let c = format_ident!("PARAM_{}", p.name.to_uppercase());
        let doc = match &p.doc {
            Some(d) => format!(" Index of the reader parameter `{}`: {d}", p.name),
            None => format!(" Index of the reader parameter `{}`.", p.name),
        };
        out.extend(quote!(#[doc = #doc] pub const #c: usize = #i;));
    }
    out
}
