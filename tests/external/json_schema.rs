//! The JSON Schema of schema files (`docs/logspec-schema.json`, written by
//! `logspec_ir::language::json_schema`) read by the tools that editors and scripts use: the `taplo`
//! CLI (the TOML toolkit behind Even Better TOML, `taplo check --schema`) and Python's
//! `jsonschema` (the file loaded with `tomllib`). Both must accept every bundled schema, every
//! valid test schema, the starter schema of `logspec init` and every TOML example of
//! `docs/schema-language.md`; of the golden invalid schemas (`codegen/tests/invalid/`), both must
//! reject exactly those that the parser's shape stage rejects (unknown keys, missing keys, values
//! of the wrong kind) and accept the rest, whose mistakes only compiling finds; and both must
//! agree with the parser on every probe of the key table (`ir/tests/support/probes.rs`). The
//! editor set-ups that the document describes (`#:schema`, `.taplo.toml`, a catalog entry) are run
//! with taplo as written there.
//!
//! Needs `taplo`, python3 with `jsonschema` and `tomllib` (`.ci/run` installs them from
//! `py/requirements-test.txt`): a missing one shows as **ignored** (see `tests/common/tools.rs`);
//! under `CI=true` it fails.

use crate::common;
use crate::scratch;
use crate::tools;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use logspec::ir::language;
use serde_json::Value;
use tools::{trial, Need};

#[path = "../../ir/tests/support/probes.rs"]
mod probes;

const TAPLO: &[Need] = &[Need::Program("taplo")];
const JSONSCHEMA: &[Need] = &[Need::Program("python3"), Need::PyModule("jsonschema"), Need::PyModule("tomllib")];

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        trial("json_schema_url_is_the_repositorys", &[], json_schema_url_is_the_repositorys),
        trial("taplo_accepts_every_valid_schema", TAPLO, || agree(Tool::Taplo, "valid", valid_cases())),
        trial("jsonschema_accepts_every_valid_schema", JSONSCHEMA, || agree(Tool::JsonSchema, "valid", valid_cases())),
        trial("taplo_rejects_the_invalid_goldens_of_shape", TAPLO, || agree(Tool::Taplo, "invalid", golden_cases())),
        trial("jsonschema_rejects_the_invalid_goldens_of_shape", JSONSCHEMA, || {
            agree(Tool::JsonSchema, "invalid", golden_cases())
        }),
        trial("taplo_agrees_with_the_parser_on_every_key", TAPLO, || agree(Tool::Taplo, "probes", probe_cases())),
        trial("jsonschema_agrees_with_the_parser_on_every_key", JSONSCHEMA, || {
            agree(Tool::JsonSchema, "probes", probe_cases())
        }),
        trial("taplo_finds_the_schema_as_the_docs_say", TAPLO, taplo_finds_the_schema_as_the_docs_say),
    ]
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json_schema_path() -> PathBuf {
    root().join("docs/logspec-schema.json")
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("json-schema-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A TOML file and whether the JSON Schema must accept it.
struct Case {
    name: String,
    toml: String,
    valid: bool,
}

/// Whether logspec's parser finds no shape error (E0001..E0004) in `toml`.
fn shape_ok(toml: &str) -> bool {
    logspec::ir::schema::parse(toml).1.is_empty()
}

/// The `.toml` files of a directory of the repository, sorted.
fn toml_files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    out.sort();
    out
}

/// Every schema that compiles: the bundled ones, the test schemas, the starter of `logspec init`,
/// and the examples of the document.
fn valid_cases() -> Vec<Case> {
    let mut files = toml_files("schemas");
    files.extend(toml_files("codegen/tests/schemas"));
    files.extend(toml_files("tests/data/history"));
    files.push(root().join("codegen/tests/build_script/tiny.toml"));
    let mut cases = Vec::new();
    for path in files {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        if let Err(e) = logspec::codegen::compile_file(&path) {
            panic!("{name} does not compile:\n{}", e.render());
        }
        cases.push(Case { name, toml: read(&path), valid: true });
    }
    assert!(cases.len() >= 8, "only {} schema files", cases.len());
    let starter = starter();
    if let Err(e) = logspec::codegen::compile_str("starter.toml", &starter) {
        panic!("the starter schema of `logspec init` does not compile:\n{}", e.render());
    }
    cases.push(Case { name: "the starter schema of `logspec init`".to_string(), toml: starter, valid: true });
    for (name, toml) in doc_examples().schemas {
        assert!(shape_ok(&toml), "{name}: logspec's parser rejects it:\n{toml}");
        cases.push(Case { name, toml, valid: true });
    }
    cases
}

/// Every golden invalid schema but the one that is not TOML: invalid for the JSON Schema exactly
/// when the parser's shape stage rejects it.
fn golden_cases() -> Vec<Case> {
    let cases: Vec<Case> = toml_files("codegen/tests/invalid")
        .into_iter()
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), read(&path)))
        .filter(|(_, toml)| !toml.lines().next().unwrap_or_default().contains("E0001"))
        .map(|(name, toml)| Case { name, valid: shape_ok(&toml), toml })
        .collect();
    // Those of shape: unknown keys, a misspelt key, padding with a name, a missing key, a missing
    // `[format]`, a field without a type, and values of the wrong kind.
    let shape = [
        "unknown_table.toml",
        "misspelled_key.toml",
        "padding_with_name.toml",
        "missing_key.toml",
        "missing_format.toml",
        "field_without_type.toml",
        "wrong_value_type.toml",
        "count_as_number.toml",
        "several_errors.toml",
    ];
    for name in shape {
        assert!(cases.iter().any(|c| c.name == name && !c.valid), "{name}: not an invalid golden of shape");
    }
    let meaning = cases.iter().filter(|c| c.valid).count();
    assert!(meaning >= 40, "only {meaning} goldens whose mistake is not one of shape");
    cases
}

fn probe_cases() -> Vec<Case> {
    probes::probes().into_iter().map(|p| Case { name: p.name, toml: p.toml, valid: p.code.is_none() }).collect()
}

/// The starter schema that `logspec init` writes (in a scratch directory of its own).
fn starter() -> String {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let dir = scratch_dir(&format!("init-{}", RUNS.fetch_add(1, Ordering::Relaxed)));
    let out = common::logspec(&["init", dir.to_str().unwrap(), "--format", "demo"]);
    assert!(out.status.success(), "logspec init: {}", String::from_utf8_lossy(&out.stderr));
    read(&dir.join("schemas/demo.toml"))
}

#[derive(Clone, Copy, Debug)]
enum Tool {
    Taplo,
    JsonSchema,
}

/// Runs `tool` on every case (written to a scratch directory) and fails with every case on which
/// it disagrees.
fn agree(tool: Tool, group: &str, cases: Vec<Case>) {
    let dir = scratch_dir(&format!("{tool:?}-{group}"));
    let paths: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let p = dir.join(format!("{i:03}.toml"));
            std::fs::write(&p, &c.toml).unwrap();
            p
        })
        .collect();
    let verdicts = match tool {
        Tool::Taplo => paths.iter().map(|p| taplo(p)).collect(),
        Tool::JsonSchema => jsonschema(&paths),
    };
    let mut wrong = Vec::new();
    for (c, errors) in cases.iter().zip(verdicts) {
        match (c.valid, errors) {
            (true, Some(errors)) => {
                wrong.push(format!("{}: rejected, but logspec accepts it:\n{errors}\n{}", c.name, c.toml))
            }
            (false, None) => wrong.push(format!("{}: accepted, but logspec rejects it:\n{}", c.name, c.toml)),
            _ => {}
        }
    }
    let rejected = cases.iter().filter(|c| !c.valid).count();
    assert!(
        wrong.is_empty(),
        "{tool:?} disagrees with logspec on {} of {} files ({rejected} to reject):\n\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n\n")
    );
}

/// Whether taplo's stderr holds a diagnostic of the file's contents (`error: ...`; every file here
/// is valid TOML, so they are the JSON Schema's), not only a failure to run, such as a JSON Schema
/// it could not load. Its log lines (`ERROR taplo:...`) are not always written before it exits.
fn rejected_by_schema(stderr: &str) -> bool {
    stderr.lines().any(|l| l.starts_with("error: ")) && !stderr.contains("failed to load schema")
}

/// `taplo check` of one file against the JSON Schema: `None` when it passes, else its messages.
/// A file that taplo rejects for anything but the JSON Schema fails the test.
fn taplo(path: &Path) -> Option<String> {
    let schema = file_url(&json_schema_path());
    let out = Command::new("taplo")
        .args(["check", "--no-auto-config", "--colors", "never", "--schema", &schema])
        .arg(path)
        .output()
        .expect("run taplo");
    if out.status.success() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(rejected_by_schema(&stderr), "taplo fails on {} for another reason:\n{stderr}", path.display());
    Some(stderr)
}

/// Python's `jsonschema` on every file at once (one process), by the validator that the JSON
/// Schema's `$schema` names, after checking the JSON Schema against its metaschema.
fn jsonschema(paths: &[PathBuf]) -> Vec<Option<String>> {
    const SCRIPT: &str = r#"
import json, sys, tomllib
import jsonschema

with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
cls = jsonschema.validators.validator_for(schema)
assert cls is jsonschema.Draft7Validator, cls
cls.check_schema(schema)
validator = cls(schema)
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    print(json.dumps(errors))
"#;
    let out =
        Command::new("python3").args(["-c", SCRIPT]).arg(json_schema_path()).args(paths).output().expect("run python3");
    assert!(out.status.success(), "python3 jsonschema: {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = common::jsonl(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines.len(), paths.len(), "one line per file");
    lines
        .iter()
        .map(|errors| {
            let errors: Vec<&str> = errors.as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
            (!errors.is_empty()).then(|| errors.join("\n"))
        })
        .collect()
}

/// The code blocks of `docs/schema-language.md`.
struct DocExamples {
    /// The TOML examples, each made a whole schema: those without `[format]` get one, field
    /// entries a struct around them.
    schemas: Vec<(String, String)>,
    /// The `.taplo.toml` of §31.
    taplo_config: String,
    /// The `#:schema` example of §31.
    directive: String,
    /// The catalog entry of §31.
    catalog_entry: String,
}

fn doc_examples() -> DocExamples {
    let text = read(&root().join("docs/schema-language.md"));
    let mut blocks: Vec<(usize, &str, String)> = Vec::new();
    let mut open: Option<(usize, &str, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) if !lang.is_empty() => open = Some((n + 1, lang, String::new())),
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some((_, _, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            _ => {}
        }
    }
    let header = "[format]\nname = \"demo\"\n\n";
    let mut out = DocExamples {
        schemas: Vec::new(),
        taplo_config: String::new(),
        directive: String::new(),
        catalog_entry: String::new(),
    };
    let mut lock_files = 0;
    for (line, lang, body) in blocks {
        let name = format!("docs/schema-language.md:{line}");
        let first =
            body.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#') || l.starts_with("#:")).unwrap_or("");
        match lang {
            "json" if body.contains("\"fileMatch\"") => out.catalog_entry = body,
            "toml" if first.starts_with("#:schema") => {
                out.directive = body.clone();
                out.schemas.push((name, body));
            }
            "toml" if first == "[[rule]]" => out.taplo_config = body,
            // A lock file (§23), not a schema.
            "toml" if first == "[[schema]]" => lock_files += 1,
            "toml" if body.contains("\n[format]\n") || first == "[format]" => out.schemas.push((name, body)),
            "toml" if first.starts_with('[') => out.schemas.push((name, format!("{header}{body}"))),
            "toml" if first.starts_with("fields = ") => {
                out.schemas.push((name, format!("{header}[[struct]]\nname = \"S\"\n{body}")))
            }
            // Field entries, one a line (with a comment after some): a struct each.
            "toml" if first.starts_with('{') => {
                let mut schema = header.to_string();
                for (i, entry) in body.lines().filter(|l| l.starts_with('{')).enumerate() {
                    schema.push_str(&format!("[[struct]]\nname = \"S{i}\"\nfields = [\n  {entry}\n]\n\n"));
                }
                out.schemas.push((name, schema));
            }
            "toml" => panic!("{name}: a TOML example of an unknown kind:\n{body}"),
            _ => {}
        }
    }
    assert_eq!(lock_files, 1, "the lock file example of §23");
    assert!(out.schemas.len() >= 15, "only {} TOML examples", out.schemas.len());
    assert!(!out.taplo_config.is_empty(), "no `.taplo.toml` example");
    assert!(!out.directive.is_empty(), "no `#:schema` example");
    assert!(!out.catalog_entry.is_empty(), "no catalog entry");
    out
}

/// The URL that `#:schema` lines and the docs name is the checked-in file on the main branch of
/// the repository that the workspace's Cargo.toml names, and `logspec init` writes it first.
fn json_schema_url_is_the_repositorys() {
    let repo = env!("CARGO_PKG_REPOSITORY");
    let path = repo.strip_prefix("https://github.com/").expect("a GitHub repository");
    assert_eq!(
        language::JSON_SCHEMA_URL,
        format!("https://raw.githubusercontent.com/{path}/main/docs/logspec-schema.json")
    );
    assert!(json_schema_path().is_file());
    let starter = starter();
    assert_eq!(starter.lines().next(), Some(format!("#:schema {}", language::JSON_SCHEMA_URL).as_str()));
}

/// §31's three set-ups, as written there, with the URL pointed at the checked-in file: a file's
/// `#:schema` line, a `.taplo.toml` and a schema catalog entry each make taplo check the files
/// they name (a misspelt key is rejected, a bundled schema accepted), and only those.
fn taplo_finds_the_schema_as_the_docs_say() {
    let docs = doc_examples();
    let url = language::JSON_SCHEMA_URL;
    let dir = scratch_dir("editor");
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    let local = dir.join("docs/logspec-schema.json");
    std::fs::copy(json_schema_path(), &local).unwrap();
    let bad = read(&root().join("codegen/tests/invalid/misspelled_key.toml"));
    let good = read(&root().join("schemas/usvlog.toml"));
    let write = |rel: &str, text: &str| std::fs::write(dir.join(rel), text).unwrap();
    let check = |args: &[&str], file: &str| -> bool {
        let out = Command::new("taplo")
            .current_dir(&dir)
            .args(["check", "--colors", "never"])
            .args(args)
            .arg(file)
            .output()
            .expect("run taplo");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || rejected_by_schema(&stderr),
            "taplo check {args:?} {file} fails for another reason:\n{stderr}"
        );
        out.status.success()
    };

    // The `#:schema` line: the docs' is the URL; the same line with a relative path.
    assert_eq!(docs.directive.lines().next(), Some(format!("#:schema {url}").as_str()));
    let directive = "#:schema ../docs/logspec-schema.json\n";
    write("schemas/bad.toml", &format!("{directive}{bad}"));
    write("schemas/good.toml", &format!("{directive}{good}"));
    assert!(!check(&["--no-auto-config"], "schemas/bad.toml"), "`#:schema` line: a misspelt key accepted");
    assert!(check(&["--no-auto-config"], "schemas/good.toml"), "`#:schema` line: usvlog.toml rejected");

    write("schemas/bad.toml", &bad);
    write("schemas/good.toml", &good);
    write("other/bad.toml", &bad);
    assert!(check(&["--no-auto-config"], "schemas/bad.toml"), "without a set-up, taplo checks no schema");

    // The `.taplo.toml`, found by taplo in the directory it runs in.
    assert!(docs.taplo_config.contains(&format!("url = \"{url}\"")), "{}", docs.taplo_config);
    write(".taplo.toml", &docs.taplo_config.replace(url, &file_url(&local)));
    assert!(!check(&[], "schemas/bad.toml"), ".taplo.toml: a misspelt key accepted");
    assert!(check(&[], "schemas/good.toml"), ".taplo.toml: usvlog.toml rejected");
    assert!(check(&[], "other/bad.toml"), ".taplo.toml: a file outside schemas/ checked");
    std::fs::remove_file(dir.join(".taplo.toml")).unwrap();

    // The catalog entry, in a catalog of its own.
    let entry: Value = serde_json::from_str(&docs.catalog_entry).expect("the catalog entry is JSON");
    assert_eq!(entry["url"], url);
    for key in ["name", "description"] {
        assert!(entry[key].as_str().is_some_and(|s| !s.is_empty()), "the catalog entry has no {key}");
    }
    let mut local_entry = entry.clone();
    local_entry["url"] = Value::String(file_url(&local));
    let catalog = serde_json::json!({
        "$schema": "https://json.schemastore.org/schema-catalog.json",
        "version": 1,
        "schemas": [local_entry],
    });
    write("catalog.json", &catalog.to_string());
    let catalog = file_url(&dir.join("catalog.json"));
    let args = ["--no-auto-config", "--schema-catalog", &catalog];
    assert!(!check(&args, "schemas/bad.toml"), "catalog: a misspelt key accepted");
    assert!(check(&args, "schemas/good.toml"), "catalog: usvlog.toml rejected");
    assert!(check(&args, "other/bad.toml"), "catalog: a file outside schemas/ checked");
}
