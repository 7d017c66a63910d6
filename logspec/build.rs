//! Compiles the bundled schemas (`schemas/*.toml`, a link to the workspace's `schemas/`) into
//! Rust at build time: the readers and writers of `logspec::formats`.

fn main() {
    // In a checkout whose Git does not make symbolic links (`core.symlinks = false`), `schemas`
    // is a text file holding the link; read the workspace's folder instead. The sources find the
    // schema text (`SCHEMA_TOML`) through `LOGSPEC_SCHEMAS`.
    let dir = if std::path::Path::new("schemas/usvlog.toml").is_file() { "schemas" } else { "../schemas" };
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    println!("cargo:rustc-env=LOGSPEC_SCHEMAS={manifest}/{dir}");
    let schemas: Vec<String> = ["usvlog", "rlog", "carla", "wpilog", "ulog", "dataflash", "logidx", "mcap"]
        .iter()
        .map(|name| format!("{dir}/{name}.toml"))
        .collect();
    logspec_codegen::Builder::new().compile(&schemas).unwrap_or_else(|e| e.exit());
}
