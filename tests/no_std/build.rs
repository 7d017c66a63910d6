//! Generates the bundled USVLOG and RLOG code, as a user's `build.rs` would.

fn main() {
    logspec_codegen::Builder::new()
        .compile(&["../../schemas/usvlog.toml", "../../schemas/rlog.toml"])
        .unwrap_or_else(|e| e.exit());
}
