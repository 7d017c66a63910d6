//! `#[derive(Record)]` with `schema = "..."`: the struct is checked against the schema's record.
//! Runs the derive's expansion directly (the path is relative to this crate's manifest dir).

use logspec_codegen::derive::expand;

fn errors(input: syn::DeriveInput) -> String {
    match expand(&input) {
        Ok(_) => String::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
    }
}

#[test]
fn matching_struct_takes_id_name_and_fingerprint_from_the_schema() {
    let out = expand(&syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYRO")]
        struct Gyro {
            z_gyro: f32,
            b_g_est: f32,
            #[record(pad_after = 3)]
            valid: u8,
        }
    })
    .unwrap()
    .to_string();
    assert!(out.contains("const ID : u64 = 13"), "{out}");
    assert!(out.contains("\"REC_SENSOR_GYRO\""), "{out}");
    assert!(out.contains("include_bytes !"), "the schema file must be tracked for rebuilds: {out}");
}

#[test]
fn mismatches_are_spanned_errors() {
    // A field of the wrong type.
    let e = errors(syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYRO")]
        struct Gyro { z_gyro: f64, b_g_est: f32, #[record(pad_after = 3)] valid: u8 }
    });
    assert!(e.contains("field 1 is `z_gyro: f32le` there, `z_gyro: f64le` here"), "{e}");

    // Fields out of order.
    let e = errors(syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYRO")]
        struct Gyro { b_g_est: f32, z_gyro: f32, #[record(pad_after = 3)] valid: u8 }
    });
    assert!(e.contains("field 1 is `z_gyro: f32le` there, `b_g_est: f32le` here"), "{e}");

    // Missing padding.
    let e = errors(syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYRO")]
        struct Gyro { z_gyro: f32, b_g_est: f32, valid: u8 }
    });
    assert!(e.contains("continues with 3 bytes of padding"), "{e}");

    // Wrong id, unknown record.
    let e = errors(syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYRO", id = 12)]
        struct Gyro { z_gyro: f32, b_g_est: f32, #[record(pad_after = 3)] valid: u8 }
    });
    assert!(e.contains("has id 13"), "{e}");
    let e = errors(syn::parse_quote! {
        #[record(schema = "../schemas/usvlog.toml", name = "REC_SENSOR_GYR")]
        struct Gyro { z_gyro: f32 }
    });
    assert!(e.contains("did you mean `REC_SENSOR_GYRO`?"), "{e}");
}
