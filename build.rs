//! Compiles the bundled schemas into Rust at build time, and the codegen test schemas so that the
//! test suite compiles and exercises what the Rust back end emits for every feature.

fn main() {
    let schemas = ["schemas/usvlog.toml", "schemas/rlog.toml", "schemas/carla.toml"];
    logspec_codegen::Builder::new().compile(&schemas).unwrap_or_else(|e| e.exit());

    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("test_schemas");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/test_schemas");
    let test_schemas = ["codegen/tests/schemas/everything.toml", "codegen/tests/schemas/c_all_kinds.toml"];
    logspec_codegen::Builder::new().out_dir(&out).compile(&test_schemas).unwrap_or_else(|e| e.exit());
    // A schema bumped to schema id 2 whose lock keeps schema id 1: the reader of older layouts.
    let history = out.join("history");
    std::fs::create_dir_all(&history).expect("create OUT_DIR/test_schemas/history");
    logspec_codegen::Builder::new()
        .out_dir(history)
        .runtime_path("::logspec::runtime")
        .compile(&["tests/data/history/usvlog.toml"])
        .unwrap_or_else(|e| e.exit());
}
