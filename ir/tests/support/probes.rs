//! Probe documents of the key table (`logspec_ir::language`): one schema file that holds every key
//! of every table with a value of its kind, and, for each kind of table, that file with one key
//! of that table given a value of another kind, with one required key left out, and with one
//! key the table does not take. Each comes with the shape diagnostics it must get: none, E0004,
//! E0003 or E0002.
//!
//! Shared by `ir/tests/language.rs` (the parser gives exactly those) and
//! `tests/external/json_schema.rs` (taplo and Python `jsonschema`, checking against
//! `docs/logspec-schema.json`, accept exactly the probes that get none). The including module
//! brings `language` into scope (`logspec_ir::language` or `logspec::ir::language`).
#![allow(dead_code)]

use super::language::{self, Kind, Section};

/// A probe: what it is, its TOML text, and the one shape code it must get (`None`: valid).
pub struct Probe {
    pub name: String,
    pub toml: String,
    pub code: Option<&'static str>,
}

/// A TOML value. A table remembers its section, so that a probe can find the first table of each.
#[derive(Clone)]
enum V {
    Str,
    Int,
    Bool,
    Arr(Vec<V>),
    Table(&'static Section, Keys),
}

/// A table's keys and values, in order.
type Keys = Vec<(&'static str, V)>;

/// A value of `kind`, with every key of every table in it.
fn full(kind: Kind) -> V {
    match kind {
        Kind::Str => V::Str,
        Kind::Int | Kind::IntOrStr => V::Int,
        Kind::Bool => V::Bool,
        Kind::StrOrStrs => V::Arr(vec![V::Str]),
        Kind::Table(s) => table(s),
        Kind::Tables(s) => V::Arr(vec![table(s)]),
        Kind::Fields => V::Arr(vec![table(&language::FIELD), table(&language::PADDING)]),
    }
}

fn table(section: &'static Section) -> V {
    V::Table(section, section.keys.iter().map(|k| (k.name, full(k.kind))).collect())
}

/// A value of another kind than `kind`, which the parser must report as E0004.
fn wrong(kind: Kind) -> V {
    match kind {
        Kind::Str | Kind::Bool | Kind::IntOrStr | Kind::Table(_) => V::Arr(vec![]),
        Kind::Int | Kind::StrOrStrs => V::Bool,
        // An array whose element is not a table.
        Kind::Tables(_) | Kind::Fields => V::Arr(vec![V::Int]),
    }
}

fn inline(v: &V, out: &mut String) {
    match v {
        V::Str => out.push_str("\"x\""),
        V::Int => out.push('1'),
        V::Bool => out.push_str("true"),
        V::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inline(item, out);
            }
            out.push(']');
        }
        V::Table(_, keys) => {
            out.push('{');
            for (i, (k, v)) in keys.iter().enumerate() {
                out.push_str(if i > 0 { ", " } else { " " });
                out.push_str(k);
                out.push_str(" = ");
                inline(v, out);
            }
            out.push_str(" }");
        }
    }
}

/// The root table as a file: one `key = value` line per key, nested tables inline.
fn file(root: &V) -> String {
    let V::Table(_, keys) = root else { unreachable!("the root is a table") };
    let mut out = String::new();
    for (k, v) in keys {
        out.push_str(k);
        out.push_str(" = ");
        inline(v, &mut out);
        out.push('\n');
    }
    out
}

/// Calls `edit` on the keys of the first table of `section` in `v`; whether there was one.
fn edit_first(v: &mut V, section: &Section, edit: &mut dyn FnMut(&mut Keys)) -> bool {
    match v {
        V::Table(s, keys) if std::ptr::eq(*s, section) => {
            edit(keys);
            true
        }
        V::Table(_, keys) => keys.iter_mut().any(|(_, v)| edit_first(v, section, edit)),
        V::Arr(items) => items.iter_mut().any(|v| edit_first(v, section, edit)),
        _ => false,
    }
}

/// Every section the root reaches, each once, in the order they are first met.
fn sections() -> Vec<&'static Section> {
    fn walk(s: &'static Section, out: &mut Vec<&'static Section>) {
        if out.iter().any(|o| std::ptr::eq(*o, s)) {
            return;
        }
        out.push(s);
        for k in s.keys {
            match k.kind {
                Kind::Table(t) | Kind::Tables(t) => walk(t, out),
                Kind::Fields => {
                    walk(&language::FIELD, out);
                    walk(&language::PADDING, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&language::ROOT, &mut out);
    out
}

/// Every probe: the full file first, then the edits of each table.
pub fn probes() -> Vec<Probe> {
    let base = table(&language::ROOT);
    let mut out = vec![Probe { name: "every key".to_string(), toml: file(&base), code: None }];
    for section in sections() {
        let mut probe = |name: String, code, edit: &mut dyn FnMut(&mut Keys)| {
            let mut v = base.clone();
            assert!(edit_first(&mut v, section, edit), "{} is not in the full file", section.id);
            out.push(Probe { name: format!("{}: {name}", section.id), toml: file(&v), code });
        };
        for key in section.keys {
            probe(format!("`{}` of another kind", key.name), Some("E0004"), &mut |keys| {
                keys.iter_mut().filter(|(k, _)| *k == key.name).for_each(|(_, v)| *v = wrong(key.kind))
            });
            if key.required {
                probe(format!("without `{}`", key.name), Some("E0003"), &mut |keys| {
                    keys.retain(|(k, _)| *k != key.name)
                });
            } else {
                probe(format!("without the optional `{}`", key.name), None, &mut |keys| {
                    keys.retain(|(k, _)| *k != key.name)
                });
            }
        }
        probe("an unknown key".to_string(), Some("E0002"), &mut |keys| keys.push(("zzz", V::Int)));
    }
    out
}
