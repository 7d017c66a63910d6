//! Every command of the README runs, as written, and succeeds: the first of its two commands
//! (`cargo run --release -- info ...`, run here as the test build of the same binary) and every
//! line of its tour (`$L ...`). Its second command, `bash .ci/run`, is the run this test is part
//! of. A command line of another shape in a `sh` block fails the test, so that a new one is
//! either run here or not written.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::scratch;

/// The command lines of the README's `sh` blocks, comments and blank lines left out.
fn commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh => {
                let l = l.split(" # ").next().unwrap_or("").trim();
                if !l.is_empty() && !l.starts_with('#') {
                    out.push(l.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// A README argument as the test passes it: paths of the bundled data made absolute (the
/// commands run in a scratch directory, where their outputs go).
fn arg(root: &Path, a: &str) -> String {
    if a.starts_with("tests/data/") {
        root.join(a).display().to_string()
    } else {
        a.to_string()
    }
}

#[test]
fn every_command_of_the_readme_runs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = commands(&readme);
    assert!(lines.iter().any(|l| l == "bash .ci/run"), "the README's second command: {lines:?}");
    let dir = scratch::temp_dir().join("readme");
    std::fs::create_dir_all(&dir).unwrap();
    let mut ran = 0;
    for line in &lines {
        let args: Vec<&str> = if let Some(rest) = line.strip_prefix("cargo run --release -- ") {
            rest.split_whitespace().collect()
        } else if let Some(rest) = line.strip_prefix("$L ") {
            rest.split_whitespace().collect()
        } else if line == "bash .ci/run" || line.starts_with("L=") {
            continue;
        } else {
            panic!("README: `{line}` is a command this test does not run (run it here, or leave it out)");
        };
        let args: Vec<String> = args.iter().map(|a| arg(&root, a)).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_logspec")).args(&args).current_dir(&dir).output().unwrap();
        assert!(
            out.status.success(),
            "README: `{line}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty() || !out.stderr.is_empty(), "README: `{line}` printed nothing");
        ran += 1;
    }
    assert!(ran >= 10, "{ran} commands ran");
}
