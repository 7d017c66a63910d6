//! Rust types from `.msg` definitions: the Rust back end's output for the lowered IR, plus the
//! messages' constants as associated consts (which the IR does not carry).

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::{lower, Builtin, MsgSet};
use crate::backend::generated_banner;
use crate::backend::rust::RustBackend;
use logspec_ir::ir::TypeDef;

/// The formatted Rust source for `roots` and every type they use, as module-level items.
pub fn source(set: &MsgSet, roots: &[&str], module: &str, runtime_path: &str, from: Option<String>) -> String {
    let backend = RustBackend { runtime_path: runtime_path.to_string(), alloc: true };
    source_for(&backend, set, roots, module, from)
}

/// [`source`] for a given back end configuration: without `alloc`, a message whose owned form
/// needs an allocator (strings, variable-length arrays) gets only its view.
pub fn source_for(backend: &RustBackend, set: &MsgSet, roots: &[&str], module: &str, from: Option<String>) -> String {
    source_of(backend, set, lower::lower(set, roots, module, from))
}

/// [`source_for`] of ROS 2 messages laid out as CDR (the payload after the 4-byte encapsulation
/// header, little-endian: natural alignment, strings with their NUL), or why the back end cannot
/// generate it ([`crate::backend::supported`]).
pub fn cdr_source_for(
    backend: &RustBackend,
    set: &MsgSet,
    roots: &[&str],
    module: &str,
    from: Option<String>,
) -> Result<String, String> {
    let mut lowered = lower::lower_cdr(set, roots, module, logspec_ir::ir::Endian::Little);
    lowered.schema.source = from;
    crate::backend::supported(&lowered.schema)?;
    Ok(source_of(backend, set, lowered))
}

fn source_of(backend: &RustBackend, set: &MsgSet, lowered: lower::Lowered) -> String {
    let mut tokens = backend.tokens(&lowered.schema);
    for (name, id) in &lowered.ids {
        let spec = set.get(name).expect("lowered types are in the set");
        if spec.constants.is_empty() {
            continue;
        }
        let TypeDef::Struct(s) = lowered.schema.ty(*id) else { continue };
        // Without an allocator a message with strings or variable-length arrays has only its
        // view, which then carries the constants.
        let mut cx = crate::backend::rust::Cx::new(&lowered.schema, &backend.runtime_path);
        cx.alloc = backend.alloc;
        let ty = if cx.has_owned(&logspec_ir::ir::Ty::Named(*id)) {
            let t = format_ident!("{}", s.name);
            quote!(#t)
        } else {
            let t = crate::backend::rust::views::view_ident(&cx, *id);
            quote!(#t<'_>)
        };
        let consts = spec.constants.iter().map(|c| {
            let ident = format_ident!("{}", c.name);
            let (rust_ty, value) = constant(c.ty, &c.value);
            let doc = format!(" `{} {}={}`", c.ty.name(), c.name, c.value);
            quote!(#[doc = #doc] pub const #ident: #rust_ty = #value;)
        });
        tokens.extend(quote! {
            #[allow(non_upper_case_globals)]
            impl #ty { #(#consts)* }
        });
    }
    let file: syn::File = match syn::parse2(tokens.clone()) {
        Ok(f) => f,
        Err(e) => return format!("compile_error!({:?});\n{tokens}", e.to_string()),
    };
    format!("// {}\n\n{}", generated_banner(&lowered.schema), prettyplease::unparse(&file))
}

/// The Rust type and value of a constant (whose value text the parser has checked).
fn constant(ty: Builtin, text: &str) -> (TokenStream, TokenStream) {
    let int = |t: TokenStream| {
        let n: i128 = text.parse().unwrap_or(0);
        let lit = Literal::u128_unsuffixed(n.unsigned_abs());
        (t, if n < 0 { quote!(-#lit) } else { quote!(#lit) })
    };
    match ty {
        Builtin::Int8 | Builtin::Byte => int(quote!(i8)),
        Builtin::Uint8 | Builtin::Char => int(quote!(u8)),
        Builtin::Int16 => int(quote!(i16)),
        Builtin::Uint16 => int(quote!(u16)),
        Builtin::Int32 => int(quote!(i32)),
        Builtin::Uint32 => int(quote!(u32)),
        Builtin::Int64 => int(quote!(i64)),
        Builtin::Uint64 => int(quote!(u64)),
        Builtin::Float32 | Builtin::Float64 => {
            let t = if ty == Builtin::Float32 { quote!(f32) } else { quote!(f64) };
            let v: f64 = text.parse().unwrap_or(0.0);
            let value = if v.is_nan() {
                quote!(#t::NAN)
            } else if v.is_infinite() {
                if v > 0.0 {
                    quote!(#t::INFINITY)
                } else {
                    quote!(#t::NEG_INFINITY)
                }
            } else {
                let lit = Literal::f64_unsuffixed(v.abs());
                if v.is_sign_negative() {
                    quote!(-#lit)
                } else {
                    quote!(#lit)
                }
            };
            (t, value)
        }
        Builtin::Bool => {
            let b = super::parse::parse_bool(text).unwrap_or(false);
            (quote!(bool), quote!(#b))
        }
        Builtin::String | Builtin::Time | Builtin::Duration => (quote!(&'static str), quote!(#text)),
    }
}
