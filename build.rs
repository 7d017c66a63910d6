//! Compiles the bundled schemas into Rust at build time.

fn main() {
    let schemas = ["schemas/usvlog.toml"];
    logspec_codegen::Builder::new().compile(&schemas).unwrap_or_else(|e| e.exit());
}
