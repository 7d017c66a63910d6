//! The build script API in a real user crate: a scratch crate (outside the workspace) whose
//! `build.rs` uses `Builder` with `type_attribute`, `field_attribute` and `include_file`, built with
//! cargo. It must compile and run, and a second `cargo build` with nothing changed must compile
//! nothing (cargo reruns a build script whose watched paths are missing on every build).
//!
//! The scratch crate and its target folder live in cargo's per-test temporary folder, so only the
//! first run of this test compiles the dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;

fn write_if_changed(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

/// Writes the scratch crate and returns its folder.
fn scratch_crate() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = here.parent().unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("build_script_user");
    let manifest = format!(
        r#"[package]
name = "build-script-user"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
logspec-runtime = {{ path = {runtime:?} }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[build-dependencies]
logspec-codegen = {{ path = {codegen:?} }}

# Not a member of the logspec workspace, which holds its target folder.
[workspace]
"#,
        runtime = root.join("runtime").display().to_string(),
        codegen = here.display().to_string(),
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    let src = here.join("tests/build_script");
    write_if_changed(&dir.join("schemas/tiny.toml"), &std::fs::read_to_string(src.join("tiny.toml")).unwrap());
    write_if_changed(&dir.join("build.rs"), &std::fs::read_to_string(src.join("build.rs.txt")).unwrap());
    write_if_changed(&dir.join("src/main.rs"), &std::fs::read_to_string(src.join("main.rs.txt")).unwrap());
    // The workspace's lock file pins every version (and lets an offline machine build it).
    if !dir.join("Cargo.lock").exists() {
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    }
    dir
}

/// Runs cargo in the scratch crate; returns its stderr (cargo's progress) and stdout.
fn cargo(dir: &Path, args: &[&str]) -> (String, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "cargo {args:?} failed in {}:\n{stderr}", dir.display());
    (stderr, stdout)
}

fn compiled(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.trim_start().starts_with("Compiling")).collect()
}

#[test]
fn a_user_crate_builds_runs_and_does_not_rebuild() {
    let dir = scratch_crate();
    // The options reached the generated code: serde derives on every type, a renamed field, and
    // one module tree (`tiny` and `geom`) from the include file.
    let (_, stdout) = cargo(&dir, &["run", "--quiet"]);
    assert_eq!(stdout, "{\"speed\":1.5,\"name\":\"ok\"}\n{\"x\":1.0,\"y\":-2.0}\n");

    let (stderr, _) = cargo(&dir, &["build"]);
    assert!(compiled(&stderr).is_empty(), "a second cargo build with nothing changed compiled:\n{stderr}");

    // The check can fail: a changed schema rebuilds the crate (and then settles again).
    let schema = dir.join("schemas/tiny.toml");
    let text = std::fs::read_to_string(&schema).unwrap();
    std::fs::write(&schema, format!("{text}\n# touched\n")).unwrap();
    let (stderr, _) = cargo(&dir, &["build"]);
    std::fs::write(&schema, &text).unwrap();
    assert!(
        compiled(&stderr).iter().any(|l| l.contains("build-script-user")),
        "a changed schema did not rebuild the crate:\n{stderr}"
    );
    cargo(&dir, &["build"]);
    let (stderr, _) = cargo(&dir, &["build"]);
    assert!(compiled(&stderr).is_empty(), "nothing changed, yet cargo compiled:\n{stderr}");
}
