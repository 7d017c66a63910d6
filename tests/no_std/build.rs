//! Generates the code of every bundled schema, as a user's `build.rs` would: with owned
//! variable-size types only when this crate's `alloc` feature is on.

fn main() {
    logspec_codegen::Builder::new()
        .alloc(std::env::var_os("CARGO_FEATURE_ALLOC").is_some())
        .compile(&[
            "../../schemas/usvlog.toml",
            "../../schemas/rlog.toml",
            "../../schemas/carla.toml",
            "../../schemas/wpilog.toml",
            // The code generator's test schemas, which use every construct of the schema language.
            "../../codegen/tests/schemas/everything.toml",
            "../../codegen/tests/schemas/c_all_kinds.toml",
        ])
        .unwrap_or_else(|e| e.exit());
}
