//! Borrowed views: for every struct `S` a `SRef<'a>` made from `&'a [u8]`, for every union `U` an
//! enum of views `URef<'a>`, and for a format's record enum a `…RecordRef<'a>`.
//!
//! One file on purpose, over 1,000 lines: structs, unions and the record enum share the field walk
//! below, and a view's kind is one match over the IR's field kinds; a view's constructor,
//! accessors, `to_owned` and `Encode` follow that one walk, the same as `codec.rs`, kind by kind.
//!
//! A view is checked once, when it is made (lengths, consts, tags, UTF-8), by the same field walk
//! as the owned decoder ([`codec::decode_fields_as`]). Numbers are held by value, strings as
//! `&'a str`, bytes as `&'a [u8]`, arrays of numbers as a runtime `Array` that decodes elements on
//! access in the field's byte order, arrays of structs as a runtime `Seq` of views, nested structs
//! and unions as nested views. `to_owned()` gives the owned type; `Encode` writes a view again as
//! the owned value would be written, without making it owned.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::codec::{self, Mode};
use super::{field_ident, prim_type, Cx};
use logspec_ir::ir::{Endian, Field, Len, Prim, Ty, TypeDef, TypeId};

/// The view type's name: `S` -> `SRef`.
pub fn view_ident(cx: &Cx<'_>, id: TypeId) -> Ident {
    format_ident!("{}Ref", cx.schema.ty(id).name())
}

/// Whether an array element is a number-like value that the runtime `Array` holds.
fn is_element(cx: &Cx<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(_) | Ty::Bool => true,
        Ty::Named(id) => matches!(cx.schema.ty(*id), TypeDef::Enum(_) | TypeDef::Flags(_)),
        _ => false,
    }
}

/// Whether the type involves a hand-written (extern) type, whose view is its owned value: a field
/// of a type that derives `Record` names the type, not its view, because the derive of the
/// enclosing struct cannot know whether that type has one.
fn has_extern(cx: &Cx<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => {
            matches!(cx.schema.ty(*id), TypeDef::Extern(_))
        }
        Ty::Array { elem, .. } => has_extern(cx, elem),
        _ => false,
    }
}

/// Whether iterating a view's array yields element values (`Array`, `Seq`) rather than
/// references (a fixed-length array of views, an owned `Vec` of extern values).
pub fn yields_values(cx: &Cx<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Array { elem, len } => !has_extern(cx, elem) && (is_element(cx, elem) || !matches!(len, Len::Fixed(_))),
        _ => false,
    }
}

/// Whether a type's view borrows from the input (and so takes the lifetime `'a`).
pub fn borrows(cx: &Cx<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(_) | Ty::Bool | Ty::VarInt { .. } | Ty::Str(Len::Fixed(_)) => false,
        Ty::Pad(_) | Ty::Bytes(_) | Ty::Str(_) => true,
        Ty::Array { elem, len } => {
            if has_extern(cx, elem) {
                false
            } else if is_element(cx, elem) || !matches!(len, Len::Fixed(_)) {
                true
            } else {
                borrows(cx, elem)
            }
        }
        Ty::Named(id) => matches!(cx.schema.ty(*id), TypeDef::Struct(_)),
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => union_borrows(cx, *id),
    }
}

fn union_borrows(cx: &Cx<'_>, id: TypeId) -> bool {
    match cx.schema.ty(id) {
        TypeDef::Union(u) => {
            let hide: Vec<Vec<bool>> = u.variants.iter().map(|v| codec::hidden(&v.fields)).collect();
            u.variants
                .iter()
                .zip(&hide)
                .any(|(v, h)| v.fields.iter().zip(h).any(|(f, hidden)| !hidden && borrows(cx, &f.ty)))
        }
        _ => false,
    }
}

/// `'a` when the named type's view borrows.
fn lifetime(cx: &Cx<'_>, id: TypeId) -> TokenStream {
    let b = match cx.schema.ty(id) {
        TypeDef::Struct(_) => true,
        TypeDef::Union(_) => union_borrows(cx, id),
        _ => false,
    };
    if b {
        quote!(<'a>)
    } else {
        quote!()
    }
}

/// The byte-order marker type of a field.
fn order(cx: &Cx<'_>, e: Endian) -> TokenStream {
    let rt = &cx.rt;
    match e {
        Endian::Little => quote!(#rt::view::Le),
        Endian::Big => quote!(#rt::view::Be),
    }
}

/// The type of a field in a view.
pub fn view_type(cx: &Cx<'_>, ty: &Ty, e: Endian) -> TokenStream {
    let rt = &cx.rt;
    if has_extern(cx, ty) {
        return cx.rust_type(ty);
    }
    match ty {
        Ty::Prim(p) | Ty::VarInt { prim: p, .. } => prim_type(*p),
        Ty::Bool => quote!(bool),
        Ty::Pad(n) | Ty::Bytes(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            quote!(&'a [u8; #n])
        }
        Ty::Str(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            quote!(#rt::FixedStr<#n>)
        }
        Ty::Bytes(_) => quote!(&'a [u8]),
        Ty::Str(_) => quote!(&'a str),
        Ty::Array { elem, len } => {
            let ev = view_type(cx, elem, e);
            if is_element(cx, elem) {
                let o = order(cx, e);
                quote!(#rt::view::Array<'a, #ev, #o>)
            } else if let Len::Fixed(n) = len {
                let n = Literal::usize_unsuffixed(*n as usize);
                quote!([#ev; #n])
            } else {
                let ev = seq_element(cx, elem, e).unwrap_or(ev);
                quote!(#rt::view::Seq<'a, #ev>)
            }
        }
        Ty::Named(id) => match cx.schema.ty(*id) {
            TypeDef::Struct(_) => {
                let v = view_ident(cx, *id);
                quote!(#v<'a>)
            }
            _ => cx.type_name(*id),
        },
        Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => {
            let v = view_ident(cx, *id);
            let l = lifetime(cx, *id);
            quote!(#v #l)
        }
    }
}

/// The element type of a `Seq` of length-prefixed strings or bytes (which carry their prefix
/// rule in the type, as a `Seq` element must): `None` for other elements, whose view is the
/// element type.
fn seq_element(cx: &Cx<'_>, elem: &Ty, e: Endian) -> Option<TokenStream> {
    let rt = &cx.rt;
    let big = e == Endian::Big;
    match elem {
        Ty::Str(Len::Count(p) | Len::Size(p)) => {
            let w = Literal::usize_unsuffixed(p.size() as usize);
            Some(quote!(#rt::view::LenStr<'a, #w, #big>))
        }
        Ty::Bytes(Len::Count(p) | Len::Size(p)) => {
            let w = Literal::usize_unsuffixed(p.size() as usize);
            Some(quote!(#rt::view::LenBytes<'a, #w, #big>))
        }
        _ => None,
    }
}

/// The size of a fixed-size struct whose view cannot fail once its bytes are there: numbers,
/// bools, enums and flags (which keep unknown values), padding, fixed arrays and structs of
/// those, and no consts. A counted `Seq` of them is checked by its length alone
/// (`Seq::take_fixed`).
fn infallible_size(cx: &Cx<'_>, ty: &Ty) -> Option<u32> {
    fn infallible(cx: &Cx<'_>, ty: &Ty) -> bool {
        match ty {
            Ty::Prim(_) | Ty::Bool | Ty::Pad(_) => true,
            Ty::Array { elem, len: Len::Fixed(_) } => infallible(cx, elem),
            Ty::Named(id) => match cx.schema.ty(*id) {
                TypeDef::Enum(_) | TypeDef::Flags(_) => true,
                TypeDef::Struct(s) => s.fields.iter().all(|f| f.value.is_none() && infallible(cx, &f.ty)),
                _ => false,
            },
            _ => false,
        }
    }
    match ty {
        Ty::Named(id) if matches!(cx.schema.ty(*id), TypeDef::Struct(_)) && infallible(cx, ty) => cx.schema.size_of(ty),
        _ => None,
    }
}

/// A `Result`-valued expression decoding one field's view from the cursor `c`.
pub fn view_decode(cx: &Cx<'_>, ty: &Ty, e: Endian) -> TokenStream {
    let rt = &cx.rt;
    if has_extern(cx, ty) {
        return codec::cursor_decode(cx, ty, e);
    }
    let ord = cx.endian(e);
    let big = e == Endian::Big;
    let read_len = |p: &Prim| {
        let w = Literal::usize_unsuffixed(p.size() as usize);
        quote!(#rt::__private::prefix::<#w>(c, #big).and_then(|n| #rt::__private::len(n, c)))
    };
    let ok = quote!(::core::result::Result::<_, #rt::DecodeError>::Ok);
    match ty {
        Ty::Pad(n) | Ty::Bytes(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            quote!(<&[u8; #n] as #rt::View>::decode_view(c, #ord))
        }
        Ty::Bytes(len) => match len {
            Len::Count(p) | Len::Size(p) => {
                let rl = read_len(p);
                quote!(#rl.and_then(|n| c.take(n)))
            }
            _ => quote!(#ok(c.take_rest())),
        },
        Ty::Str(Len::Fixed(_)) => codec::cursor_decode(cx, ty, e),
        Ty::Str(len) => {
            let take = match len {
                Len::Count(p) | Len::Size(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| c.take(n)))
                }
                _ => quote!(#ok(c.take_rest())),
            };
            quote!(#take.and_then(|b| #rt::view::str_at(b, c.position() - b.len())))
        }
        Ty::Array { elem, len } if is_element(cx, elem) => {
            let t = view_type(cx, elem, e);
            let o = order(cx, e);
            let arr = quote!(#rt::view::Array::<#t, #o>);
            match len {
                Len::Fixed(n) => {
                    let n = Literal::usize_unsuffixed(*n as usize);
                    quote!(#arr::take(c, #n))
                }
                Len::Count(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| #arr::take(c, n)))
                }
                Len::Size(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| #arr::take_bytes(c, n)))
                }
                Len::Rest => quote!(#arr::take_bytes(c, c.remaining())),
            }
        }
        Ty::Array { elem, len } => {
            let t = seq_element(cx, elem, e).unwrap_or_else(|| view_type(cx, elem, e));
            let seq = quote!(#rt::view::Seq::<#t>);
            match len {
                Len::Fixed(n) => {
                    let n = Literal::usize_unsuffixed(*n as usize);
                    let ex = view_decode(cx, elem, e);
                    quote!(#rt::__private::try_array::<_, _, #n>(|_| #ex))
                }
                Len::Count(p) => {
                    let rl = read_len(p);
                    match infallible_size(cx, elem) {
                        Some(size) => {
                            let size = Literal::usize_unsuffixed(size as usize);
                            quote!(#rl.and_then(|n| #seq::take_fixed(c, n, #size, #ord)))
                        }
                        None => quote!(#rl.and_then(|n| #seq::take(c, n, #ord))),
                    }
                }
                Len::Size(p) => {
                    let rl = read_len(p);
                    quote!(#rl.and_then(|n| c.sub(n)).and_then(|sub| #seq::take_all(sub, #ord)))
                }
                Len::Rest => quote!(c.sub(c.remaining()).and_then(|sub| #seq::take_all(sub, #ord))),
            }
        }
        Ty::Named(id) if matches!(cx.schema.ty(*id), TypeDef::Struct(_)) => {
            let v = view_ident(cx, *id);
            quote!(<#v<'a> as #rt::View<'a>>::decode_view(c, #ord))
        }
        // Numbers, bools, enums and flags decode as the owned values they are.
        _ => codec::cursor_decode(cx, ty, e),
    }
}

/// An expression for a field's view at the constant offset `off` of the checked bytes `b` of a
/// fixed-size struct or variant (as [`codec::fixed_decode`] for owned values, whose errors it
/// repeats); `true` if it returns a `Result`.
pub(super) fn fixed_view(cx: &Cx<'_>, ty: &Ty, e: Endian, off: TokenStream) -> (TokenStream, bool) {
    let rt = &cx.rt;
    if has_extern(cx, ty) {
        return codec::fixed_decode(cx, ty, e, off);
    }
    match ty {
        Ty::Pad(n) | Ty::Bytes(Len::Fixed(n)) => {
            let n = Literal::usize_unsuffixed(*n as usize);
            (quote!(#rt::__private::sub_ref::<#n>(b, #off)), true)
        }
        Ty::Array { elem, len: Len::Fixed(n) } if is_element(cx, elem) => {
            let t = view_type(cx, elem, e);
            let o = order(cx, e);
            let es = cx.schema.size_of(elem).unwrap_or(0) as usize;
            let end = codec::range_end(&off, &(*n as usize * es));
            (quote!(#rt::view::Array::<#t, #o>::new(&b[#off..#end])), false)
        }
        Ty::Array { elem, len: Len::Fixed(n) } => {
            let es = codec::fixed_size(cx, elem).unwrap_or_default();
            let n = Literal::usize_unsuffixed(*n as usize);
            let (ex, fallible) = fixed_view(cx, elem, e, codec::element_offset(&off, &es));
            if fallible {
                (quote!(#rt::__private::try_array::<_, _, #n>(|__i| #ex)), true)
            } else {
                (quote!(::core::array::from_fn::<_, #n, _>(|__i| #ex)), false)
            }
        }
        Ty::Named(id) if matches!(cx.schema.ty(*id), TypeDef::Struct(_)) => {
            let v = view_ident(cx, *id);
            (quote!(#v::from_fixed(&b[#off..]).map_err(|e| e.at(#off))), true)
        }
        _ => codec::fixed_decode(cx, ty, e, off),
    }
}

/// The `from_fixed` constructor of a fixed-size struct's view and its `decode_view` body, which
/// repeat the owned `Fixed::decode_fixed` and `Decode::decode` step for step.
fn fixed_struct_view(
    cx: &Cx<'_>,
    display_name: &str,
    fields: &[Field],
    offsets: &[codec::Sz],
    size: &codec::Sz,
) -> (TokenStream, TokenStream) {
    let rt = &cx.rt;
    let name = display_name;
    let hide = codec::hidden(fields);
    let mut checks = TokenStream::new();
    let mut inits = TokenStream::new();
    for (i, f) in fields.iter().enumerate() {
        let off = &offsets[i];
        let fname = f.name.as_str();
        if let Some(v) = &f.value {
            checks.extend(codec::const_check(cx, f, v, quote!(b), off));
            continue;
        }
        if f.is_padding() || hide[i] {
            continue;
        }
        let id = field_ident(&f.name);
        let (expr, fallible) = fixed_view(cx, &f.ty, f.endian, quote!(#off));
        let expr = if fallible { quote!(#expr.map_err(|e| e.in_field(#fname).in_type(#name))?) } else { expr };
        inits.extend(quote!(#id: #expr,));
    }
    let chunk = if size.is_literal() { quote!(#size) } else { quote!({ #size }) };
    let from_fixed = quote! {
        /// The view of the first `SIZE` bytes of `b`, checked as the owned `Fixed::decode_fixed`
        /// checks them.
        #[inline]
        pub fn from_fixed(b: &'a [u8]) -> ::core::result::Result<Self, #rt::DecodeError> {
            let ::core::option::Option::Some(b) = b.first_chunk::<#chunk>() else {
                return ::core::result::Result::Err(#rt::DecodeError::eof(#size, b.len()).in_type(#name));
            };
            #checks
            ::core::result::Result::Ok(Self { #inits bytes: &b[..] })
        }
    };
    let body = quote! {
        let at = c.position();
        let b = c.take(#size).map_err(|e| e.in_type(#name))?;
        Self::from_fixed(b).map_err(|e| e.at(at))
    };
    (from_fixed, body)
}

/// The one-check path of a variable-size struct's view: when the longest fixed-size *path*
/// through the struct is at hand, the tags are read at constant offsets and every fixed-size
/// combination of variants is built from constant offsets of one checked array, with no other
/// length check and no `Result` between the layers. A path is the struct's leading fixed-size
/// fields and, when its last field is a union selected by one of them, a variant whose fields are
/// again such a path (so `R1Message` -> `R1Body::Field` -> `R1Value::Double` is one path of 12
/// bytes). A path may also end in a *counted tail*: byte string or array of numbers whose count
/// (of at most four bytes) comes just before it, so its length is read at a constant offset too
/// and the whole path is taken with one more check (`R2Message` -> `R2Body::Field`, whose value
/// is `bytes` with a `u16` count). Anything else (a variable-size variant, an unknown tag, fewer
/// bytes than the longest path's fixed part, a tail cut by the end of the input) falls through to
/// the field-by-field decoder after it, which also reports every error, so both accept the same
/// bytes with the same values. Empty when the struct has no such path. Each path ends by handing
/// its view to the continuation `k` of `decode_view_then`.
fn fixed_paths_view(cx: &Cx<'_>, fields: &[Field]) -> TokenStream {
    let rt = &cx.rt;
    let mut longest = 0;
    let Some(tree) = path_tree(cx, fields, 0, &mut longest, &|inits, end| match end {
        PathEnd::Fixed(size) => {
            let size = Literal::usize_unsuffixed(size);
            quote! {
                if let ::core::result::Result::Ok(bytes) = c.take(#size) {
                    return ::core::result::Result::Ok(k(Self { #inits bytes }));
                }
            }
        }
        PathEnd::Tail(size) => quote! {
            if let ::core::option::Option::Some(bytes) = #rt::__private::take_len(c, #size) {
                return ::core::result::Result::Ok(k(Self { #inits bytes }));
            }
        },
    }) else {
        return TokenStream::new();
    };
    let n = Literal::usize_unsuffixed(longest);
    quote! {
        if let ::core::option::Option::Some(b) = c.rest().first_chunk::<#n>() {
            #tree
        }
    }
}

/// Where a path of [`fixed_paths_view`] ends: after a constant number of bytes, or after a
/// counted tail (a `u64` expression of the path's whole length, read from `b`).
enum PathEnd {
    Fixed(usize),
    Tail(TokenStream),
}

/// A counted tail of a path (see [`fixed_paths_view`]): a byte string, or an array of numbers,
/// whose unsigned count of at most four bytes (so its length in bytes cannot overflow a `u64`)
/// comes just before it; neither view can fail once its bytes are there. Strings (whose UTF-8 is
/// checked), arrays of structs, and arrays prefixed by their size in bytes (which must divide
/// evenly) are not tails. Returns the count's type and the size of one element.
fn counted_tail(cx: &Cx<'_>, ty: &Ty) -> Option<(Prim, usize)> {
    let (p, es) = match ty {
        Ty::Bytes(Len::Count(p) | Len::Size(p)) => (*p, 1),
        Ty::Array { elem, len: Len::Count(p) } if is_element(cx, elem) && !has_extern(cx, elem) => {
            (*p, cx.schema.size_of(elem)? as usize)
        }
        _ => return None,
    };
    (matches!(p, Prim::U8 | Prim::U16 | Prim::U32) && es > 0).then_some((p, es))
}

/// The decision tree of [`fixed_paths_view`] for the field list `fields` starting at byte `start`
/// of `b`: `done(initialisers, end)` makes the statement that finishes a path. `None` when the
/// list has no fixed-size path (it is skipped as a variant, or the struct gets no fast path).
fn path_tree(
    cx: &Cx<'_>,
    fields: &[Field],
    start: usize,
    longest: &mut usize,
    done: &dyn Fn(TokenStream, PathEnd) -> TokenStream,
) -> Option<TokenStream> {
    let hide = codec::hidden(fields);
    let mut inits = TokenStream::new();
    let mut offsets = Vec::with_capacity(fields.len());
    let mut at = start;
    for (i, f) in fields.iter().enumerate() {
        offsets.push(at);
        if f.value.is_some() {
            return None;
        }
        if let Ty::Union { id, tag_field } = &f.ty {
            // Only a last field: what follows a union would start at a variant-dependent offset.
            if i + 1 != fields.len() {
                return None;
            }
            let TypeDef::Union(u) = cx.schema.ty(*id) else { return None };
            if u.by_name {
                return None;
            }
            let tag_f = &fields[*tag_field];
            let (tag, _) = codec::fixed_decode(cx, &tag_f.ty, tag_f.endian, {
                let o = Literal::usize_unsuffixed(offsets[*tag_field]);
                quote!(#o)
            });
            let tag = match &tag_f.ty {
                Ty::Prim(_) => tag,
                Ty::Named(tid) if matches!(cx.schema.ty(*tid), TypeDef::Enum(_) | TypeDef::Flags(_)) => quote!(#tag.0),
                _ => return None,
            };
            let view = view_ident(cx, *id);
            let name = field_ident(&f.name);
            let mut arms = TokenStream::new();
            for v in &u.variants {
                let vid = format_ident!("{}", v.name);
                let outer = inits.clone();
                let arm = path_tree(cx, &v.fields, at, longest, &|inner, end| {
                    done(quote!(#outer #name: #view::#vid { #inner },), end)
                });
                if let Some(arm) = arm {
                    let t = Literal::i128_unsuffixed(v.tag);
                    arms.extend(quote!(#t => { #arm }));
                }
            }
            if arms.is_empty() {
                return None;
            }
            return Some(quote! {
                match #tag as i128 {
                    #arms
                    _ => {}
                }
            });
        }
        if i + 1 == fields.len() && !hide[i] {
            if let Some((count, es)) = counted_tail(cx, &f.ty) {
                // The count at a constant offset, the elements from just after it to the end of
                // the bytes taken (exactly the path's length).
                let (n, _) = codec::fixed_decode(cx, &Ty::Prim(count), f.endian, {
                    let o = Literal::usize_unsuffixed(at);
                    quote!(#o)
                });
                let from = at + count.size() as usize;
                *longest = (*longest).max(from);
                let from_lit = Literal::usize_unsuffixed(from);
                let size = match (&f.ty, es) {
                    (Ty::Bytes(_), _) | (_, 1) => quote!(#from_lit + #n as u64),
                    _ => {
                        let es = Literal::u64_unsuffixed(es as u64);
                        quote!(#from_lit + #n as u64 * #es)
                    }
                };
                let id = field_ident(&f.name);
                let value = match &f.ty {
                    Ty::Bytes(_) => quote!(&bytes[#from_lit..]),
                    _ => {
                        let t = view_type(cx, &f.ty, f.endian);
                        quote!(<#t>::new(&bytes[#from_lit..]))
                    }
                };
                inits.extend(quote!(#id: #value,));
                return Some(done(inits, PathEnd::Tail(size)));
            }
        }
        let size = codec::fixed_size(cx, &f.ty)?.literal()?;
        if !(f.is_padding() || hide[i]) {
            let o = Literal::usize_unsuffixed(at);
            let (expr, fallible) = fixed_view(cx, &f.ty, f.endian, quote!(#o));
            if fallible {
                return None;
            }
            let id = field_ident(&f.name);
            inits.extend(quote!(#id: #expr,));
        }
        at += size;
    }
    *longest = (*longest).max(at);
    Some(done(inits, PathEnd::Fixed(at)))
}

/// An expression turning the view value `v` of a field into the owned field value.
fn to_owned_expr(cx: &Cx<'_>, ty: &Ty, v: TokenStream) -> TokenStream {
    let rt = &cx.rt;
    if has_extern(cx, ty) {
        return quote!(::core::clone::Clone::clone(&#v));
    }
    match ty {
        Ty::Pad(_) | Ty::Bytes(Len::Fixed(_)) => quote!(*#v),
        Ty::Bytes(_) => quote!(#v.to_vec()),
        Ty::Str(Len::Fixed(_)) => v,
        Ty::Str(_) => {
            let v = codec::unparen(v);
            quote!(#rt::__private::String::from(#v))
        }
        Ty::Array { elem, len } if is_element(cx, elem) => match len {
            Len::Fixed(_) => quote!(#v.to_array()),
            _ => quote!(#v.to_vec()),
        },
        Ty::Array { elem, len } => {
            let x = match (&**elem, len) {
                (
                    Ty::Str(Len::Count(_) | Len::Size(_)) | Ty::Bytes(Len::Count(_) | Len::Size(_)),
                    Len::Count(_) | Len::Size(_) | Len::Rest,
                ) => quote!((__x.0)),
                _ => quote!(__x),
            };
            let inner = to_owned_expr(cx, elem, x);
            match len {
                Len::Fixed(_) => quote!(#v.map(|__x| #inner)),
                _ => quote!(#v.iter().map(|__x| #inner).collect::<#rt::__private::Vec<_>>()),
            }
        }
        Ty::Named(id) if matches!(cx.schema.ty(*id), TypeDef::Struct(_)) => quote!(#v.to_owned()),
        Ty::Union { .. } | Ty::ParamUnion { .. } => quote!(#v.to_owned()),
        _ => v,
    }
}

/// The view of a struct: the type, `View`, `to_owned` and `Encode`.
pub fn struct_view(cx: &Cx<'_>, id: TypeId, display_name: &str, fields: &[Field]) -> TokenStream {
    let rt = &cx.rt;
    let owned = cx.type_name(id);
    let ident = view_ident(cx, id);
    let hide = codec::hidden(fields);
    let mut members = TokenStream::new();
    let mut owned_inits = TokenStream::new();
    for (f, hidden) in fields.iter().zip(&hide) {
        if *hidden {
            continue;
        }
        let docs = super::doc_attrs(f.doc.as_deref(), f.unit.as_deref());
        let name = field_ident(&f.name);
        let ty = view_type(cx, &f.ty, f.endian);
        members.extend(quote!(#docs pub #name: #ty,));
        let conv = to_owned_expr(cx, &f.ty, quote!(self.#name));
        owned_inits.extend(quote!(#name: #conv,));
    }
    // With a one-check path, `decode_view_then` holds the decoder: each path hands its view to
    // the continuation `k` (see `View::decode_view_then`), and `decode_view` is it with `k` the
    // identity.
    let mut then = TokenStream::new();
    let (from_fixed, decode_body) = match codec::fixed_layout(cx, fields) {
        Some((offsets, size)) => fixed_struct_view(cx, display_name, fields, &offsets, &size),
        None => {
            let (stmts, inits) = codec::decode_fields_as(cx, fields, display_name, Mode::View);
            let fast = fixed_paths_view(cx, fields);
            let wrap = |v: TokenStream| if fast.is_empty() { v } else { quote!(k(#v)) };
            let ok = wrap(quote!(Self { #inits bytes }));
            // `__from`, not `__at`: the const checks of `stmts` bind `__at` to their own offsets.
            let body = quote! {
                #fast
                let __start = c.rest();
                let __from = c.position();
                #stmts
                let bytes = &__start[..c.position() - __from];
                ::core::result::Result::Ok(#ok)
            };
            if fast.is_empty() {
                (TokenStream::new(), body)
            } else {
                then = quote! {
                    #[inline(always)]
                    #[allow(unused_variables)]
                    fn decode_view_then<__T>(
                        c: &mut #rt::Cursor<'a>,
                        _order: #rt::Endian,
                        k: impl ::core::ops::FnOnce(Self) -> __T,
                    ) -> ::core::result::Result<__T, #rt::DecodeError> {
                        #body
                    }
                };
                (TokenStream::new(), quote!(<Self as #rt::View<'a>>::decode_view_then(c, _order, |v| v)))
            }
        }
    };
    let (len, enc) = codec::encode_fields_as(
        cx,
        fields,
        &|f| {
            let id = field_ident(&f.name);
            quote!(self.#id)
        },
        Mode::View,
    );
    let visible: Vec<&Field> = fields.iter().zip(&hide).filter(|(_, h)| !**h).map(|(f, _)| f).collect();
    let externs = extern_field_types(cx, visible.iter().copied());
    let (derives, common) = if externs.is_empty() {
        (quote!(#[derive(Clone, Copy, Debug, PartialEq)]), TokenStream::new())
    } else {
        let names: Vec<Ident> = visible.iter().map(|f| field_ident(&f.name)).collect();
        (TokenStream::new(), struct_common_impls(&ident, &names, &externs))
    };
    let owned_bound = clone_bound(&externs);
    let has_owned = cx.has_owned(&Ty::Named(id));
    let doc = if has_owned {
        format!(
            " A view of [`{owned}`] borrowed from its encoded bytes, checked when it was made: numbers by value, \
             strings and arrays borrowed. [`to_owned`](Self::to_owned) gives the owned value."
        )
    } else {
        format!(
            " A view of `{owned}` borrowed from its encoded bytes, checked when it was made: numbers by value, \
             strings and arrays borrowed. (Generated without `alloc`: there is no owned `{owned}`.)"
        )
    };
    let to_owned = if has_owned {
        quote! {
            /// The owned value.
            #[allow(clippy::wrong_self_convention)]
            pub fn to_owned(&self) -> #owned #owned_bound {
                #owned { #owned_inits }
            }
        }
    } else {
        TokenStream::new()
    };
    let visit = codec::visit_fields(cx, fields, &|f| {
        let id = field_ident(&f.name);
        quote!(self.#id)
    });
    let vis = &cx.vis;
    quote! {
        #[doc = #doc]
        #derives
        #[allow(non_snake_case)]
        #vis struct #ident<'a> {
            #members
            bytes: &'a [u8],
        }
        #common
        #[allow(dead_code)]
        impl<'a> #ident<'a> {
            #from_fixed
            /// The bytes the view was made from.
            pub fn as_bytes(&self) -> &'a [u8] {
                self.bytes
            }
            #to_owned
        }
        // Always inlined, as the union decoders below: a view returned through a call comes back
        // as a `Result` in memory, and the caller's match then reloads it with wide loads right
        // after the callee's narrow stores (a store-forwarding stall that cost more than the
        // decoding itself in the RLOG bench). Inlined, the checks and the variant's fields stay
        // in registers up to the caller's match.
        #[automatically_derived]
        impl<'a> #rt::View<'a> for #ident<'a> {
            #[inline(always)]
            #[allow(unused_variables)]
            fn decode_view(c: &mut #rt::Cursor<'a>, _order: #rt::Endian) -> ::core::result::Result<Self, #rt::DecodeError> {
                #decode_body
            }
            #then
        }
        #[automatically_derived]
        impl #rt::Encode for #ident<'_> {
            fn encoded_len(&self) -> usize {
                #len
            }
            fn encode<__S: #rt::Sink + ?Sized>(&self, out: &mut __S, _order: #rt::Endian) -> ::core::result::Result<(), #rt::EncodeError> {
                #enc
                ::core::result::Result::Ok(())
            }
        }
        // What the owned value shows a visitor, field for field, without making it owned.
        #[automatically_derived]
        impl #rt::Visit for #ident<'_> {
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                v.begin_struct(name);
                #visit
                v.end_struct();
            }
        }
    }
}

/// The view of a union: an enum of the variants' views.
pub fn union_view(cx: &Cx<'_>, id: TypeId) -> TokenStream {
    let rt = &cx.rt;
    let TypeDef::Union(u) = cx.schema.ty(id) else { return TokenStream::new() };
    let owned = cx.type_name(id);
    let ident = view_ident(cx, id);
    let lt = lifetime(cx, id);
    let name = u.name.as_str();
    let mut variants = TokenStream::new();
    let mut tag_arms = TokenStream::new();
    let mut decode_arms = TokenStream::new();
    let mut then_arms = TokenStream::new();
    let mut owned_arms = TokenStream::new();
    let mut encode_arms = TokenStream::new();
    let mut len_arms = TokenStream::new();
    let mut visit_arms = TokenStream::new();
    for v in &u.variants {
        let vid = format_ident!("{}", v.name);
        let tag = Literal::i128_unsuffixed(v.tag);
        let hide = codec::hidden(&v.fields);
        let visible: Vec<&Field> = v.fields.iter().zip(&hide).filter(|(_, h)| !**h).map(|(f, _)| f).collect();
        let members = visible.iter().map(|f| {
            let d = super::doc_attrs(f.doc.as_deref(), f.unit.as_deref());
            let n = field_ident(&f.name);
            let t = view_type(cx, &f.ty, f.endian);
            quote!(#d #n: #t)
        });
        let binds: Vec<TokenStream> = visible
            .iter()
            .map(|f| {
                let n = field_ident(&f.name);
                let a = format_ident!("__b_{}", f.name);
                quote!(#n: #a)
            })
            .collect();
        let convs = visible.iter().map(|f| {
            let n = field_ident(&f.name);
            let a = format_ident!("__b_{}", f.name);
            let c = to_owned_expr(cx, &f.ty, quote!((*#a)));
            quote!(#n: #c)
        });
        let vdocs = super::doc_attrs(v.doc.as_deref(), None);
        variants.extend(quote!(#vdocs #vid { #(#members),* },));
        tag_arms.extend(quote!(Self::#vid { .. } => #tag,));
        let arm = match codec::fixed_variant_decode_as(cx, &v.fields, name, quote!(Self::#vid), Mode::View) {
            Some(fast) => fast,
            None => {
                let (stmts, inits) = codec::decode_fields_as(cx, &v.fields, name, Mode::View);
                quote!(#stmts ::core::result::Result::Ok(Self::#vid { #inits }))
            }
        };
        // The arm's errors return at once (`?`); its value goes to the continuation only when
        // the variant has used every byte.
        then_arms.extend(quote!(#tag => {
            let __v: ::core::result::Result<Self, #rt::DecodeError> = { #arm };
            let __v = __v?;
            #rt::__private::at_end(c, #name)?;
            ::core::result::Result::Ok(k(__v))
        }));
        decode_arms.extend(quote!(#tag => { #arm }));
        owned_arms.extend(quote!(Self::#vid { #(#binds),* } => #owned::#vid { #(#convs),* },));
        let access = |f: &Field| {
            let b = format_ident!("__b_{}", f.name);
            quote!((*#b))
        };
        let (len, enc) = codec::encode_fields_as(cx, &v.fields, &access, Mode::View);
        encode_arms.extend(quote!(Self::#vid { #(#binds),* } => { #enc }));
        let vname = v.name.as_str();
        let shown = codec::visit_fields(cx, &v.fields, &access);
        visit_arms.extend(quote!(Self::#vid { #(#binds),* } => {
            v.begin_variant(name, #vname, #tag);
            #shown
            v.end_variant();
        }));
        len_arms.extend(codec::len_arm(quote!(Self::#vid), &binds, &len));
    }
    let externs = extern_field_types(
        cx,
        u.variants
            .iter()
            .flat_map(|v| v.fields.iter().zip(codec::hidden(&v.fields)).filter(|(_, h)| !h).map(|(f, _)| f)),
    );
    let (derives, common) = if externs.is_empty() {
        (quote!(#[derive(Clone, Copy, Debug, PartialEq)]), TokenStream::new())
    } else {
        (TokenStream::new(), union_common_impls(u, &ident, &lt, &externs))
    };
    let owned_bound = clone_bound(&externs);
    let has_owned = cx.has_owned(&Ty::Named(id));
    let doc = if has_owned {
        format!(" A view of [`{owned}`]: the variant's fields borrowed from the input.")
    } else {
        format!(
            " A view of union `{owned}`: the variant's fields borrowed from the input. (Generated without \
             `alloc`: there is no owned `{owned}`.)"
        )
    };
    let to_owned = if has_owned {
        quote! {
            /// The owned value.
            #[allow(clippy::wrong_self_convention)]
            pub fn to_owned(&self) -> #owned #owned_bound {
                match self { #owned_arms }
            }
        }
    } else {
        TokenStream::new()
    };
    let impl_lt = if lt.is_empty() { quote!() } else { quote!(<'a>) };
    let cursor_lt = if lt.is_empty() { quote!('_) } else { quote!('a) };
    let by_name = if u.by_name {
        // The name lookup is the owned union's, or the view's own where there is no owned union.
        let (lookup, index_fn, at) = if has_owned {
            (TokenStream::new(), quote!(#owned::variant_index), format!("{owned}::variant_index"))
        } else {
            (super::types::variant_index_fn(u), quote!(Self::variant_index), "Self::variant_index".to_string())
        };
        let doc =
            format!(" Views a whole value (every byte of `bytes`) as the variant `type_name` selects (see [`{at}`]).");
        quote! {
            #lookup
            #[doc = #doc]
            pub fn decode_named(type_name: &str, bytes: &#cursor_lt [u8]) -> ::core::result::Result<Self, #rt::DecodeError> {
                match #index_fn(type_name) {
                    ::core::option::Option::Some(i) => Self::decode_variant_exact(i, bytes),
                    ::core::option::Option::None => ::core::result::Result::Err(#rt::__private::unknown_type_name(type_name, #name)),
                }
            }
            /// Views a whole value as the variant of index `index`.
            // Always inlined, as `decode_variant`: a reader that decodes each value by its key's
            // index (RLOG R2) then gets the view in registers rather than through memory.
            #[inline(always)]
            pub fn decode_variant_exact(index: i128, bytes: &#cursor_lt [u8]) -> ::core::result::Result<Self, #rt::DecodeError> {
                Self::decode_variant_exact_then(index, bytes, |v| v)
            }
            /// As [`decode_variant_exact`](Self::decode_variant_exact), handing the view to `k`
            /// and returning what `k` returns: each variant calls `k` with the view it built, so
            /// that a caller that consumes the value at once gets each variant as itself (and can
            /// match on it for free) rather than one enum merged from all of them. `k` is called
            /// only on success.
            #[inline(always)]
            pub fn decode_variant_exact_then<__T>(
                index: i128,
                bytes: &#cursor_lt [u8],
                k: impl ::core::ops::FnOnce(Self) -> __T,
            ) -> ::core::result::Result<__T, #rt::DecodeError> {
                let mut __c = #rt::Cursor::new(bytes);
                let c = &mut __c;
                match index {
                    #then_arms
                    _ => ::core::result::Result::Err(#rt::__private::unknown_variant(index, c.position(), #name)),
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let vis = &cx.vis;
    quote! {
        #[doc = #doc]
        #derives
        #[allow(non_snake_case)]
        #vis enum #ident #lt { #variants }
        #common
        #[allow(dead_code)]
        impl #impl_lt #ident #lt {
            #by_name
            /// The tag value of this variant.
            pub fn tag(&self) -> i128 {
                match self { #tag_arms }
            }
            /// Decodes the variant that `tag` selects.
            #[allow(unused_variables)]
            #[inline(always)]
            pub fn decode_variant(tag: i128, c: &mut #rt::Cursor<#cursor_lt>) -> ::core::result::Result<Self, #rt::DecodeError> {
                match tag {
                    #decode_arms
                    _ => ::core::result::Result::Err(#rt::__private::unknown_variant(tag, c.position(), #name)),
                }
            }
            #to_owned
            /// Encodes the variant's fields (the tag is written by the enclosing struct).
            #[allow(unused_variables)]
            pub fn encode_variant<__S: #rt::Sink + ?Sized>(&self, out: &mut __S) -> ::core::result::Result<(), #rt::EncodeError> {
                match self { #encode_arms }
                ::core::result::Result::Ok(())
            }
            /// The encoded length of the variant's fields.
            #[allow(unused_variables)]
            pub fn variant_len(&self) -> usize {
                match self { #len_arms }
            }
        }
        #[automatically_derived]
        impl #impl_lt #rt::Visit for #ident #lt {
            #[allow(unused_variables)]
            fn visit<__V: #rt::Visitor + ?Sized>(&self, name: ::core::option::Option<&str>, v: &mut __V) {
                match self { #visit_arms }
            }
        }
    }
}

/// Named consts of a union's tags: `TAG_<VARIANT>`.
pub fn tag_consts(u: &logspec_ir::ir::Union) -> TokenStream {
    let consts = u.variants.iter().map(|v| {
        let c = format_ident!("TAG_{}", super::snake_case(&v.name).to_ascii_uppercase());
        let t = Literal::i128_unsuffixed(v.tag);
        let d = format!(" The tag of variant `{}`.", v.name);
        quote!(#[doc = #d] pub const #c: i128 = #t;)
    });
    quote!(#(#consts)*)
}

/// The distinct Rust types of the fields (of `fields`) that hold a hand-written type by value.
fn extern_field_types<'f>(cx: &Cx<'_>, fields: impl Iterator<Item = &'f Field>) -> Vec<TokenStream> {
    let mut out: Vec<TokenStream> = Vec::new();
    for f in fields.filter(|f| has_extern(cx, &f.ty)) {
        let t = cx.rust_type(&f.ty);
        if !out.iter().any(|o| o.to_string() == t.to_string()) {
            out.push(t);
        }
    }
    out
}

/// `where` bounds that hold the fields of hand-written types `tys` to `tr`. They are written
/// `for<'__x>` so that a bound that does not hold (a field type without `Clone`) only leaves the
/// impl out rather than being an error of the user's crate: a bound without a generic parameter
/// is checked where it is written ("trivial bounds"), a higher-ranked one where it is used.
fn bounds(tys: &[TokenStream], tr: TokenStream) -> TokenStream {
    quote!(where #(for<'__x> #tys: #tr),*)
}

/// The bound of `to_owned` on a view that holds hand-written types: they are cloned.
fn clone_bound(tys: &[TokenStream]) -> TokenStream {
    if tys.is_empty() {
        TokenStream::new()
    } else {
        bounds(tys, quote!(::core::clone::Clone))
    }
}

/// `Clone`, `Copy`, `Debug` and `PartialEq` of a struct view that holds hand-written field types
/// `tys` by value, each for as long as those types have the trait (what `#[derive]` would give,
/// without requiring the traits of every hand-written type that a derived struct uses).
fn struct_common_impls(ident: &Ident, names: &[Ident], tys: &[TokenStream]) -> TokenStream {
    let (clone, copy) = (bounds(tys, quote!(::core::clone::Clone)), bounds(tys, quote!(::core::marker::Copy)));
    let (debug, eq) = (bounds(tys, quote!(::core::fmt::Debug)), bounds(tys, quote!(::core::cmp::PartialEq)));
    let shown = ident.to_string();
    let labels = names.iter().map(|n| n.to_string().trim_start_matches("r#").to_string());
    quote! {
        #[automatically_derived]
        impl<'a> ::core::clone::Clone for #ident<'a> #clone {
            fn clone(&self) -> Self {
                Self { #(#names: ::core::clone::Clone::clone(&self.#names),)* bytes: self.bytes }
            }
        }
        #[automatically_derived]
        impl<'a> ::core::marker::Copy for #ident<'a> #copy {}
        #[automatically_derived]
        impl<'a> ::core::fmt::Debug for #ident<'a> #debug {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#shown) #(.field(#labels, &self.#names))* .field("bytes", &self.bytes).finish()
            }
        }
        #[automatically_derived]
        impl<'a> ::core::cmp::PartialEq for #ident<'a> #eq {
            fn eq(&self, other: &Self) -> bool {
                #(self.#names == other.#names &&)* self.bytes == other.bytes
            }
        }
    }
}

/// [`struct_common_impls`] for the enum of views of a union.
fn union_common_impls(u: &logspec_ir::ir::Union, ident: &Ident, lt: &TokenStream, tys: &[TokenStream]) -> TokenStream {
    let (clone, copy) = (bounds(tys, quote!(::core::clone::Clone)), bounds(tys, quote!(::core::marker::Copy)));
    let (debug, eq) = (bounds(tys, quote!(::core::fmt::Debug)), bounds(tys, quote!(::core::cmp::PartialEq)));
    let impl_lt = if lt.is_empty() { quote!() } else { quote!(<'a>) };
    let (mut clone_arms, mut debug_arms, mut eq_arms) = (TokenStream::new(), TokenStream::new(), TokenStream::new());
    for v in &u.variants {
        let vid = format_ident!("{}", v.name);
        let shown = v.name.as_str();
        let hide = codec::hidden(&v.fields);
        let names: Vec<Ident> =
            v.fields.iter().zip(&hide).filter(|(_, h)| !**h).map(|(f, _)| field_ident(&f.name)).collect();
        let labels: Vec<String> = names.iter().map(|n| n.to_string().trim_start_matches("r#").to_string()).collect();
        let a: Vec<Ident> =
            names.iter().map(|n| format_ident!("__a_{}", n.to_string().trim_start_matches("r#"))).collect();
        let b: Vec<Ident> =
            names.iter().map(|n| format_ident!("__b_{}", n.to_string().trim_start_matches("r#"))).collect();
        clone_arms.extend(
            quote!(Self::#vid { #(#names: #a),* } => Self::#vid { #(#names: ::core::clone::Clone::clone(#a)),* },),
        );
        debug_arms.extend(
            quote!(Self::#vid { #(#names: #a),* } => f.debug_struct(#shown) #(.field(#labels, #a))* .finish(),),
        );
        eq_arms
            .extend(quote!((Self::#vid { #(#names: #a),* }, Self::#vid { #(#names: #b),* }) => true #(&& #a == #b)*,));
    }
    quote! {
        #[automatically_derived]
        impl #impl_lt ::core::clone::Clone for #ident #lt #clone {
            fn clone(&self) -> Self {
                match self { #clone_arms }
            }
        }
        #[automatically_derived]
        impl #impl_lt ::core::marker::Copy for #ident #lt #copy {}
        #[automatically_derived]
        impl #impl_lt ::core::fmt::Debug for #ident #lt #debug {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self { #debug_arms }
            }
        }
        #[automatically_derived]
        impl #impl_lt ::core::cmp::PartialEq for #ident #lt #eq {
            #[allow(unreachable_patterns)]
            fn eq(&self, other: &Self) -> bool {
                match (self, other) {
                    #eq_arms
                    _ => false,
                }
            }
        }
    }
}
