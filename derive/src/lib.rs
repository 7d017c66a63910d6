//! `#[derive(Record)]`: a thin shim; the logic lives in `logspec_codegen::derive`, where it can be
//! unit-tested.

#![forbid(unsafe_code)]
use proc_macro::TokenStream;

/// Derives the logspec runtime traits (`Fixed` when the layout is fixed, `Decode`, `Encode`,
/// `Visit`, and `Record` when an `id` is given) for a struct or a C-like enum.
///
/// ```
/// use logspec_runtime::{Decode, Encode, Record as _};
///
/// #[derive(logspec_derive::Record, Debug, PartialEq)]
/// #[record(id = 1, little)]
/// struct NavSolution {
///     #[record(unit = "m")]
///     x: f32,
///     y: f32,
///     #[record(pad_after = 3)]
///     valid: u8,
/// }
///
/// let nav = NavSolution { x: 1.5, y: -2.0, valid: 1 };
/// let bytes = nav.to_bytes()?;
/// assert_eq!(bytes.len(), 4 + 4 + 1 + 3);
/// assert_eq!(NavSolution::decode_exact(&bytes)?, nav);
/// assert_eq!(NavSolution::ID, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
/// See the crate docs of `logspec_codegen::derive` for every attribute.
#[proc_macro_derive(Record, attributes(record))]
pub fn derive_record(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    logspec_codegen::derive::expand(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}
