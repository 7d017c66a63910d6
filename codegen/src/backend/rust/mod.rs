//! Rust back end: types for every struct, enum, flags type and union of a schema, with their
//! decoders, encoders and visitors, plus a record enum and a [`FramedFormat`] implementation per
//! format. Emitted with `quote!` and formatted once with prettyplease.
//!
//! The impls are produced by [`codec`], which `#[derive(Record)]` calls too, so hand-written and
//! generated structs share one implementation.
//!
//! [`FramedFormat`]: https://docs.rs/logspec-runtime

pub mod codec;
mod format;
pub(crate) mod types;
pub mod views;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::backend::{generated_banner, Artifact, Backend};
use logspec_ir::ir::{Len, Prim, Schema, Ty, TypeDef, TypeId};

/// Options of the Rust back end.
#[derive(Clone, Debug)]
pub struct RustBackend {
    /// The path generated code uses to reach the runtime crate, e.g. `::logspec_runtime` or
    /// `::logspec::runtime`.
    pub runtime_path: String,
    /// Whether the crate that includes the code has an allocator (`alloc`). Without one, a type
    /// whose owned form holds a `Vec` or `String` gets only its borrowed view, and a format with
    /// such records no owned record enum and no `FramedFormat` impl (see [`Cx::has_owned`]).
    pub alloc: bool,
}

impl Default for RustBackend {
    fn default() -> Self {
        RustBackend { runtime_path: DEFAULT_RUNTIME_PATH.to_string(), alloc: true }
    }
}

/// The path generated code and `#[derive(Record)]` use for the runtime unless told otherwise: the
/// `logspec-runtime` crate, which is all a crate that reads or writes logs needs to depend on.
pub const DEFAULT_RUNTIME_PATH: &str = "::logspec_runtime";

/// Checks a runtime path (`::logspec_runtime`, `::logspec::runtime`, `crate::rt`) and returns its
/// tokens; anything that is not a Rust path is an error, never a silent fallback.
pub fn parse_runtime_path(path: &str) -> Result<TokenStream, String> {
    match syn::parse_str::<syn::Path>(path) {
        Ok(p) if !p.segments.iter().any(|s| !s.arguments.is_empty()) => Ok(quote!(#p)),
        _ => Err(format!(
            "invalid runtime path `{path}`: expected a Rust path to the logspec runtime, such as `::logspec_runtime` or `::logspec::runtime`"
        )),
    }
}

impl Backend for RustBackend {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn generate(&self, schema: &Schema) -> Vec<Artifact> {
        vec![Artifact { path: format!("{}.rs", schema.format.name), contents: self.source(schema) }]
    }
}

impl RustBackend {
    /// The formatted Rust source of a schema: module-level items, meant to be `include!`d into a
    /// module of the user's crate.
    pub fn source(&self, schema: &Schema) -> String {
        self.source_with_history(schema, &[])
    }

    /// Like [`source`](Self::source), plus a `history` module with the older layouts of the lock
    /// history (see [`logspec_ir::history`]), which the format's `Versioned` impl dispatches to.
    pub fn source_with_history(&self, schema: &Schema, history: &[Schema]) -> String {
        let tokens = self.tokens_with_history(schema, history);
        let file: syn::File = match syn::parse2(tokens.clone()) {
            Ok(f) => f,
            // A parse failure is a bug in this back end; emit the raw tokens so it shows.
            Err(e) => return format!("compile_error!({:?});\n{tokens}", e.to_string()),
        };
        format!("// {}\n\n{}", generated_banner(schema), prettyplease::unparse(&file))
    }

    /// The unformatted tokens of a schema.
    pub fn tokens(&self, schema: &Schema) -> TokenStream {
        self.tokens_with_history(schema, &[])
    }

    /// The unformatted tokens of a schema and its older layouts.
    pub fn tokens_with_history(&self, schema: &Schema, history: &[Schema]) -> TokenStream {
        let ids: Vec<u64> = schema
            .format
            .schema_id
            .iter()
            .chain(history.iter().filter_map(|h| h.format.schema_id.as_ref()))
            .map(|s| s.value)
            .collect();
        let items = |schema: &Schema, top: bool| {
            let mut cx = Cx::new(schema, &self.runtime_path);
            cx.schema_ids.clone_from(&ids);
            cx.top = top;
            cx.alloc = self.alloc;
            let mut items = TokenStream::new();
            for (i, def) in schema.types.iter().enumerate() {
                items.extend(types::type_items(&cx, TypeId(i), def));
            }
            items.extend(format::format_items(&cx));
            items
        };
        let mut out = items(schema, true);
        if !history.is_empty() {
            let src = schema.source.as_deref().unwrap_or("the schema");
            let mods = history.iter().map(|h| {
                let id = h.format.schema_id.as_ref().map_or(0, |s| s.value);
                let m = format_ident!("schema_{}", id);
                let doc = format!(
                    " The record layouts of schema id {id}, rebuilt from the lock file of `{src}`: files written \
                     under schema id {id} decode with these types."
                );
                let body = items(h, false);
                quote!(#[doc = #doc] pub mod #m { #body })
            });
            out.extend(quote! {
                /// Older layouts of this format, from its lock file's history. `with_file_format` picks
                /// the layout of a file by the schema id in its header.
                pub mod history {
                    #(#mods)*
                }
            });
        }
        out
    }
}

/// What the emitters need: the schema and the runtime path.
pub struct Cx<'a> {
    pub schema: &'a Schema,
    pub rt: TokenStream,
    /// Every schema id the generated code decodes: the schema's own first, then the lock history.
    pub schema_ids: Vec<u64>,
    /// Whether this is the top-level format (which dispatches to the history), not an older layout.
    pub top: bool,
    /// The visibility of the view types: `pub` for schema types, the input's own for a type that
    /// derives `Record` (so that a private struct gets a private view).
    pub vis: TokenStream,
    /// Whether the code may use `alloc` (see [`RustBackend::alloc`]).
    pub alloc: bool,
}

impl<'a> Cx<'a> {
    pub fn new(schema: &'a Schema, runtime_path: &str) -> Self {
        // Callers validate user-given paths with `parse_runtime_path` first; a bad path here shows
        // as a compile error in the generated code rather than a silent fallback.
        let rt: TokenStream = parse_runtime_path(runtime_path).unwrap_or_else(|e| quote!(compile_error!(#e)));
        let schema_ids = schema.format.schema_id.iter().map(|s| s.value).collect();
        Cx { schema, rt, schema_ids, top: true, vis: quote!(pub), alloc: true }
    }

    /// The Rust type name of a named type.
    pub fn type_name(&self, id: TypeId) -> TokenStream {
        match self.schema.ty(id) {
            TypeDef::Extern(x) => x.path.parse().unwrap_or_else(|_| quote!(compile_error!("bad type path"))),
            other => {
                let name = format_ident!("{}", other.name());
                quote!(#name)
            }
        }
    }

    /// The Rust type of a field's value.
    pub fn rust_type(&self, ty: &Ty) -> TokenStream {
        let rt = &self.rt;
        match ty {
            Ty::Prim(p) => prim_type(*p),
            Ty::Bool => quote!(bool),
            Ty::Pad(n) => {
                let n = *n as usize;
                quote!([u8; #n])
            }
            Ty::Bytes(Len::Fixed(n)) => {
                let n = *n as usize;
                quote!([u8; #n])
            }
            Ty::Bytes(_) => quote!(#rt::__private::Vec<u8>),
            Ty::Str(Len::Fixed(n)) => {
                let n = *n as usize;
                quote!(#rt::FixedStr<#n>)
            }
            Ty::Str(_) => quote!(#rt::__private::String),
            Ty::Array { elem, len: Len::Fixed(n) } => {
                let e = self.rust_type(elem);
                let n = *n as usize;
                quote!([#e; #n])
            }
            Ty::Array { elem, .. } => {
                let e = self.rust_type(elem);
                quote!(#rt::__private::Vec<#e>)
            }
            Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => self.type_name(*id),
            Ty::VarInt { prim, .. } => prim_type(*prim),
        }
    }

    pub fn endian(&self, e: logspec_ir::ir::Endian) -> TokenStream {
        let rt = &self.rt;
        match e {
            logspec_ir::ir::Endian::Little => quote!(#rt::Endian::Little),
            logspec_ir::ir::Endian::Big => quote!(#rt::Endian::Big),
        }
    }

    /// Whether values of this type are plain data that can be `Copy` and `Default`.
    pub fn is_plain(&self, ty: &Ty) -> bool {
        match ty {
            // `[u8; N]` has `Default` only up to 32.
            Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n)) => *n <= 32,
            Ty::Bytes(_) | Ty::Str(_) | Ty::Union { .. } | Ty::ParamUnion { .. } => false,
            Ty::Array { elem, len: Len::Fixed(n) } => *n <= 32 && self.is_plain(elem),
            Ty::Array { .. } => false,
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => s.fields.iter().all(|f| self.is_plain(&f.ty)),
                TypeDef::Enum(_) | TypeDef::Flags(_) => true,
                TypeDef::Union(_) | TypeDef::Extern(_) => false,
            },
            Ty::Pad(n) => *n <= 32,
            _ => true,
        }
    }

    /// Whether the owned form of a type holds a `Vec` or a `String` (itself or in a nested struct
    /// or union), and so needs an allocator. Views of every type need none.
    pub fn needs_alloc(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Bytes(len) | Ty::Str(len) => !matches!(len, Len::Fixed(_)),
            Ty::Array { len: Len::Fixed(_), elem } => self.needs_alloc(elem),
            Ty::Array { .. } => true,
            Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => match self.schema.ty(*id) {
                TypeDef::Struct(s) => s.fields.iter().any(|f| self.needs_alloc(&f.ty)),
                TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).any(|f| self.needs_alloc(&f.ty)),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether the owned form of a type is generated: always with `alloc`; without it, only for
    /// types that need no allocator (their views are generated either way).
    pub fn has_owned(&self, ty: &Ty) -> bool {
        self.alloc || !self.needs_alloc(ty)
    }

    /// Whether the type holds floats (and so cannot derive `Eq`).
    pub fn has_float(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Prim(p) | Ty::VarInt { prim: p, .. } => p.is_float(),
            Ty::Array { elem, .. } => self.has_float(elem),
            Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => match self.schema.ty(*id) {
                TypeDef::Struct(s) => s.fields.iter().any(|f| self.has_float(&f.ty)),
                TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).any(|f| self.has_float(&f.ty)),
                TypeDef::Extern(_) => true,
                _ => false,
            },
            _ => false,
        }
    }
}

pub fn prim_type(p: Prim) -> TokenStream {
    let i = format_ident!("{}", p.name());
    quote!(#i)
}

/// A field or variant identifier, escaped when it is a Rust keyword (`type` -> `r#type`).
pub fn field_ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, Span::call_site())
    } else {
        Ident::new_raw(name, Span::call_site())
    }
}

/// `#[doc]` attributes for a doc text and a unit.
pub fn doc_attrs(doc: Option<&str>, unit: Option<&str>) -> TokenStream {
    let mut lines: Vec<String> = doc.map(|d| d.lines().map(|l| format!(" {l}")).collect()).unwrap_or_default();
    if let Some(u) = unit {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!(" Unit: `{u}`."));
    }
    quote!(#(#[doc = #lines])*)
}

/// `RecordHeader` -> `record_header`, for C-ish names and module names.
pub fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower = i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if i > 0 && (prev_lower || (next_lower && chars[i - 1].is_ascii_uppercase())) && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(*c);
        }
    }
    out
}
