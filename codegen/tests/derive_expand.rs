//! Expansion snapshots of `#[derive(Record)]` (formatted with prettyplease, reviewed with
//! `cargo insta review`), and the old string spellings of attributes expanding exactly as the
//! binrw-style bare keywords do.

use logspec_codegen::derive::expand;

fn pretty(input: syn::DeriveInput) -> String {
    let tokens = expand(&input).unwrap_or_else(|e| panic!("{e}"));
    prettyplease::unparse(&syn::parse2(tokens).unwrap())
}

#[test]
fn bare_keywords_and_magic() {
    insta::assert_snapshot!(pretty(syn::parse_quote! {
        #[record(id = 10, big, magic = b"MINI")]
        struct Tagged {
            #[record(magic = 0xA55Au16, little)]
            seq: u16,
            #[record(count = u8)]
            name: String,
        }
    }));
}

/// A field of a hand-written type: the view holds it by value, and its `Clone`, `Copy`, `Debug`
/// and `PartialEq` (and `to_owned`) are bounded on that type's.
#[test]
fn hand_written_field_type() {
    insta::assert_snapshot!(pretty(syn::parse_quote! {
        #[record(id = 21)]
        struct HoldsBare {
            seq: u32,
            bare: Bare,
            #[record(count = u8)]
            name: String,
        }
    }));
}

#[test]
fn open_enum() {
    insta::assert_snapshot!(pretty(syn::parse_quote! {
        #[record(values(IDLE = 0, RUN = 1))]
        struct Mode(u8);
    }));
}

#[test]
fn string_spellings_expand_as_the_bare_keywords() {
    let old = pretty(syn::parse_quote! {
        #[record(id = 9, endian = "big", runtime = "::logspec::runtime")]
        struct S {
            #[record(endian = "little")]
            a: u32,
            #[record(count = "u16")]
            b: Vec<f64>,
            #[record(size = "u32")]
            c: String,
        }
    });
    let new = pretty(syn::parse_quote! {
        #[record(id = 9, big, runtime = ::logspec::runtime)]
        struct S {
            #[record(little)]
            a: u32,
            #[record(count = u16)]
            b: Vec<f64>,
            #[record(size = u32)]
            c: String,
        }
    });
    assert_eq!(old, new);
    assert!(old.contains("::logspec::runtime::Decode"), "{old}");
}

#[test]
fn the_default_runtime_path_is_the_builders() {
    let out = pretty(syn::parse_quote! { struct S { a: u8 } });
    let default = logspec_codegen::backend::rust::DEFAULT_RUNTIME_PATH;
    assert!(out.contains(&format!("{default}::Decode for S")), "{out}");
}

#[test]
fn unknown_keys_get_a_suggestion_on_the_key() {
    let e = expand(&syn::parse_quote! { struct S { #[record(cout = u16)] a: Vec<u8> } }).unwrap_err();
    assert_eq!(e.to_string(), "unknown field attribute `cout`; did you mean `count`?");
    let e = expand(&syn::parse_quote! { #[record(endain = "big")] struct S { a: u8 } }).unwrap_err();
    assert_eq!(e.to_string(), "unknown record attribute `endain`; did you mean `endian`?");
}
