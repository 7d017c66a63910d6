//! Compiles the bundled schemas (`schemas/*.toml`, a link to the workspace's `schemas/`) into
//! Rust at build time: the readers and writers of `logspec::formats`.

fn main() {
    // In a checkout whose Git does not make symbolic links (`core.symlinks = false`), `schemas`
    // is a text file holding the link; read the workspace's folder instead. The sources find the
    // schema text (`SCHEMA_TOML`) at `LOGSPEC_SCHEMAS` under their own `CARGO_MANIFEST_DIR`.
    // Relative, not absolute: cargo reruns this script when the schemas change, not when the
    // checkout moves, so an absolute path would outlive its checkout in a target directory that
    // two checkouts share (a `CARGO_TARGET_DIR` set for all builds, `tests/external/wheel.rs`).
    let dir = if std::path::Path::new("schemas/usvlog.toml").is_file() { "schemas" } else { "../schemas" };
    println!("cargo:rustc-env=LOGSPEC_SCHEMAS={dir}");
    let schemas: Vec<String> = ["usvlog", "rlog", "carla", "wpilog", "ulog", "dataflash", "logidx", "mcap"]
        .iter()
        .map(|name| format!("{dir}/{name}.toml"))
        .collect();
    logspec_codegen::Builder::new().compile(&schemas).unwrap_or_else(|e| e.exit());
}
