//! No wire layout written by hand: hand-written code under `src/`, `logspec/src/`, `engine/src/`, `runtime/src/` and `py/src/` converts no
//! numbers to or from bytes (`from_le_bytes`, `from_be_bytes`, `to_le_bytes`, `to_be_bytes`) and
//! holds no format magic as a literal, except where [`ALLOWED`] says why. Layouts live in
//! `schemas/` and reach the code through generated types and consts (or, for values known only
//! at run time, through the IR interpreter).
//!
//! The magics are taken from the schemas themselves (every constant byte string of four bytes or
//! more), so a new schema's magic is checked without touching this test.

use std::path::{Path, PathBuf};

use logspec::ir::ir::{ConstValue, TypeDef};

/// The byte conversions that spell out a layout.
const CONVERSIONS: [&str; 4] = ["from_le_bytes", "from_be_bytes", "to_le_bytes", "to_be_bytes"];

/// Magics of formats that have no schema.
const SCHEMALESS_MAGICS: [&str; 1] = ["#ROSBAG"];

/// `(path or folder, what may appear there, why)`. Every entry must still be needed.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "runtime/src/traits.rs",
        "*_bytes",
        "the runtime's number codec: the `Fixed` impls of the primitive types that generated code calls for every field",
    ),
    (
        "runtime/src/__private.rs",
        "*_bytes",
        "the variable-width integer helper that generated code calls (one 8-byte load, masked or shifted by the byte order the schema gives)",
    ),
    (
        "runtime/src/view.rs",
        "*_bytes",
        "the element codec of the views' number arrays, in the byte order the generated view passes for its field",
    ),
    ("logspec/src/dynamic.rs", "*_bytes", "the IR interpreter: each number in the byte order the IR gives for its field"),
    (
        "logspec/src/dynamic/plan.rs",
        "*_bytes",
        "the IR interpreter's decode plan: each number at the type and in the byte order the IR gives for its field",
    ),
    (
        "logspec/src/encode.rs",
        "*_bytes",
        "the IR interpreter's encoder: each number at the width and in the byte order the IR gives for its field",
    ),
    (
        "logspec/src/formats/rosbag/",
        "*",
        "ROS bags have no schema: the bag's record layer (u32 lengths, `field=value` headers) and its version line \
         are read by hand; message data goes through the IR interpreter",
    ),
    ("logspec/src/log/open.rs", "\"USVLOG\"", "the format's display name in messages, not bytes"),
    ("logspec/src/log/open.rs", "\"WPILOG\"", "the format's display name in messages, not bytes"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The magics of every bundled schema: constant byte strings of at least four bytes.
fn magics(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = SCHEMALESS_MAGICS.iter().map(|s| s.to_string()).collect();
    for e in std::fs::read_dir(root.join("schemas")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let schema = logspec::codegen::compile_file(&p).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        for t in &schema.types {
            let fields: Vec<_> = match t {
                TypeDef::Struct(s) => s.fields.iter().collect(),
                TypeDef::Union(u) => u.variants.iter().flat_map(|v| &v.fields).collect(),
                _ => Vec::new(),
            };
            for f in fields {
                if let Some(ConstValue::Bytes(b)) = &f.value {
                    if b.len() >= 4 {
                        out.push(String::from_utf8_lossy(b).into_owned());
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What a line of code holds that only a schema may say: byte conversions, and magics as a byte
/// string or as a whole string literal (a magic quoted inside a message, `\"WPILOG\"`, is prose).
fn findings(line: &str, magics: &[String]) -> Vec<String> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let mut out: Vec<String> = CONVERSIONS.iter().filter(|c| code.contains(*c)).map(|c| c.to_string()).collect();
    for m in magics {
        let quoted = format!("\"{m}\"");
        let bytes = code
            .match_indices("b\"")
            .any(|(i, _)| code[i + 2..].split('"').next().is_some_and(|s| s.contains(m.as_str())));
        let whole = code.match_indices(&quoted).any(|(i, _)| i == 0 || !code[..i].ends_with('\\'));
        if bytes || whole {
            out.push(if whole { quoted } else { m.clone() });
        }
    }
    out
}

fn allowed(rel: &str, finding: &str) -> Option<usize> {
    ALLOWED.iter().position(|(path, what, _)| {
        let here = if path.ends_with('/') { rel.starts_with(path) } else { rel == *path };
        let matches = match *what {
            "*" => true,
            "*_bytes" => CONVERSIONS.contains(&finding),
            w => w == finding,
        };
        here && matches
    })
}

#[test]
fn no_hand_written_layout_outside_schemas_and_generated_code() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let magics = magics(&root);
    assert!(magics.iter().any(|m| m == "USVLOG") && magics.iter().any(|m| m == "CARLA_RECORDER"), "{magics:?}");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("logspec/src"), &mut files);
    rust_files(&root.join("engine/src"), &mut files);
    rust_files(&root.join("runtime/src"), &mut files);
    rust_files(&root.join("py/src"), &mut files);
    files.sort();
    let mut used = vec![false; ALLOWED.len()];
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for what in findings(line, &magics) {
                match allowed(&rel, &what) {
                    Some(i) => used[i] = true,
                    None => bad.push(format!("{rel}:{}: {what}: {}", n + 1, line.trim())),
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "wire layout written by hand (describe it in schemas/ and use the generated code, or add an entry \
         with its reason to ALLOWED):\n{}",
        bad.join("\n")
    );
    let stale: Vec<_> = ALLOWED.iter().zip(&used).filter(|(_, u)| !**u).map(|(a, _)| format!("{a:?}")).collect();
    assert!(stale.is_empty(), "allowlist entries no longer needed (remove them):\n{}", stale.join("\n"));
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    let magics = vec!["CARLA_RECORDER".to_string(), "USVLOG".to_string()];
    assert_eq!(findings("let x = u32::from_le_bytes(b);", &magics), ["from_le_bytes"]);
    assert_eq!(findings("buf.extend(&v.to_be_bytes());", &magics), ["to_be_bytes"]);
    assert_eq!(findings("const M: &[u8] = b\"\\x0e\\x00CARLA_RECORDER\";", &magics), ["CARLA_RECORDER"]);
    assert_eq!(findings("w.str(Some(\"magic\"), \"CARLA_RECORDER\");", &magics), ["\"CARLA_RECORDER\""]);
    assert!(findings("format!(\"expected \\\"USVLOG\\\" here\")", &magics).is_empty());
    assert!(findings("// u32::from_le_bytes in a comment", &magics).is_empty());
}
