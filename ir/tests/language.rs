//! The key table of the schema language (`logspec_ir::language`), the parser and the checked-in
//! JSON Schema agree: the parser gives every probe document of the table exactly the shape error
//! the table says (`support/probes.rs`), and `docs/logspec-schema.json` is what
//! `language::json_schema()` writes. That taplo and Python `jsonschema` read the JSON Schema as
//! the parser reads the table is `tests/external/json_schema.rs`, with the real tools.

use std::collections::BTreeSet;

use logspec_ir::language::{self, Kind};
use serde_json::Value;

#[path = "support/probes.rs"]
mod probes;

#[test]
fn the_parser_follows_the_key_table() {
    let probes = probes::probes();
    assert!(probes.len() > 100, "only {} probes", probes.len());
    let mut wrong = Vec::new();
    for p in &probes {
        let (_, diags) = logspec_ir::schema::parse(&p.toml);
        let got: BTreeSet<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        let want: BTreeSet<&str> = p.code.into_iter().collect();
        if got != want {
            let shown: Vec<String> = diags.iter().map(|d| format!("{}: {}", d.code.as_str(), d.message)).collect();
            wrong.push(format!("{}: expected {want:?}, got {shown:?}\n{}", p.name, p.toml));
        }
    }
    assert!(wrong.is_empty(), "{} of {} probes:\n{}", wrong.len(), probes.len(), wrong.join("\n"));
}

/// `docs/logspec-schema.json` is generated: regenerate it with
/// `cargo run -p logspec-ir --example json_schema > docs/logspec-schema.json`.
#[test]
fn the_checked_in_json_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/logspec-schema.json");
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == language::json_schema(),
        "docs/logspec-schema.json is stale: run `cargo run -p logspec-ir --example json_schema > docs/logspec-schema.json`"
    );
}

/// The JSON text, read back by serde_json: every table the root reaches has exactly its keys as
/// properties and its required keys as `required`, and disallows any other key.
#[test]
fn the_json_schema_has_the_tables_keys() {
    let root: Value = serde_json::from_str(&language::json_schema()).expect("the JSON Schema is JSON");
    assert_eq!(root["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(root["$id"], language::JSON_SCHEMA_URL);
    let mut seen = Vec::new();
    check(&root, &root, &language::ROOT, &mut seen);
    let defined: Vec<&String> = root["definitions"].as_object().expect("definitions").keys().collect();
    for id in &defined {
        assert!(seen.contains(id), "definition `{id}` is not referred to");
    }
}

fn check(root: &Value, schema: &Value, section: &language::Section, seen: &mut Vec<String>) {
    let props = schema["properties"].as_object().unwrap_or_else(|| panic!("{}: no properties", section.id));
    // serde_json's map sorts its keys.
    let names: BTreeSet<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(names, section.names().into_iter().collect(), "{}: properties", section.id);
    let required: Vec<&str> = section.keys.iter().filter(|k| k.required).map(|k| k.name).collect();
    let listed: Vec<&str> =
        schema["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert_eq!(listed, required, "{}: required", section.id);
    assert_eq!(schema["additionalProperties"], false, "{}: additionalProperties", section.id);
    for key in section.keys {
        let p = &props[key.name];
        assert_eq!(p["description"], key.doc, "{}.{}: description", section.id, key.name);
        let mut refer = |r: &Value, s: &language::Section| {
            assert_eq!(r["$ref"], format!("#/definitions/{}", s.id), "{}.{}", section.id, key.name);
            if !seen.iter().any(|x| x == s.id) {
                seen.push(s.id.to_string());
                check(root, &root["definitions"][s.id], s, seen);
            }
        };
        match key.kind {
            Kind::Str => assert_eq!(p["type"], "string"),
            Kind::Int => assert_eq!(p["type"], "integer"),
            Kind::Bool => assert_eq!(p["type"], "boolean"),
            Kind::IntOrStr => assert_eq!(p["type"], serde_json::json!(["integer", "string"])),
            Kind::StrOrStrs => {
                assert_eq!(p["type"], serde_json::json!(["string", "array"]));
                assert_eq!(p["items"]["type"], "string");
            }
            Kind::Table(s) => check(root, p, s, seen),
            Kind::Tables(s) => {
                assert_eq!(p["type"], "array");
                refer(&p["items"], s);
            }
            Kind::Fields => {
                assert_eq!(p["type"], "array");
                let any = p["items"]["anyOf"].as_array().expect("fields: anyOf");
                assert_eq!(any.len(), 2);
                refer(&any[0], &language::FIELD);
                refer(&any[1], &language::PADDING);
            }
        }
    }
}
