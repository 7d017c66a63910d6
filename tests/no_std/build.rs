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
        ])
        .unwrap_or_else(|e| e.exit());
}
