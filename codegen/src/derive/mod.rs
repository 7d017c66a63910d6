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
//!
//! The parts: `attrs` parses the `#[record(...)]` attributes, `lower` maps a struct's fields
//! onto the IR, `cross_check` compares a struct with a schema's record, and `expand` emits the
//! impls of structs, enums and unions.

mod attrs;
mod cross_check;
mod expand;
mod lower;

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use attrs::container_attrs;
use expand::{expand_enum, expand_struct};

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
