//! The TOML front end's second stage: resolves names and types in the spanned model, validates
//! everything, and builds the immutable [`ir::Schema`].
//!
//! Every check reports a [`Diagnostic`] and carries on, so that one run shows all problems.
//!
//! This file holds the entry point [`lower`], the lowering context `Cx` with its walk over the
//! whole file (`Cx::run`), and the helpers that every part uses. The parts, each an `impl Cx`
//! block of its own: `names` (identifiers and reserved words), `fields` (struct fields and their
//! types), `consts` (const values), `enums` (enums and flags), `unions` (unions, their tags and
//! the reader parameters), `sizes` (struct sizes and recursion), `schema_id` (the schema id) and
//! `framing` (the record header's roles and the records).

mod consts;
mod enums;
mod fields;
mod framing;
mod names;
mod schema_id;
mod sizes;
mod unions;

use std::collections::BTreeMap;

use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{self, Endian, Prim, TypeDef, TypeId};
use crate::schema::{EnumDecl, FlagsDecl, RecordDecl, SchemaFile, Sp, Span, StructDecl, UnionDecl};
use names::{bad_ident, name_or, name_span, BUILTIN_TYPES};
pub use names::{camel_case, is_ident};

/// Lowers a parsed schema file into the IR, or returns every problem found.
pub fn lower(file: &SchemaFile, source_name: Option<&str>) -> Result<ir::Schema, Vec<Diagnostic>> {
    let mut cx = Cx::default();
    let schema = cx.run(file, source_name);
    if cx.diags.is_empty() {
        Ok(schema.expect("a schema is built whenever no diagnostic was reported"))
    } else {
        cx.diags.sort_by_key(|d| (d.span.start, d.code));
        // A union used by several structs can report the same problem once per use.
        cx.diags.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
        Err(cx.diags)
    }
}

/// What a declared name refers to before its body is lowered.
#[derive(Clone, Copy, Debug)]
enum Decl<'a> {
    Struct(&'a StructDecl),
    Record(&'a RecordDecl),
    Enum(&'a EnumDecl),
    Flags(&'a FlagsDecl),
    Union(&'a UnionDecl),
}

#[derive(Default)]
struct Cx {
    diags: Vec<Diagnostic>,
    /// The names of the declared `[[param]]`s, in order (a param union refers to one by index).
    param_names: Vec<String>,
    /// The format's layout rules (`[format] align`, `string_nul`).
    rules: ir::Rules,
}

impl Cx {
    fn err(&mut self, code: Code, span: &Span, msg: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(Diagnostic::new(code, span.clone(), msg));
        self.diags.last_mut().expect("just pushed")
    }

    fn run(&mut self, file: &SchemaFile, source_name: Option<&str>) -> Option<ir::Schema> {
        let format = file.format.as_ref();
        let default_endian = format.and_then(|f| f.endian.as_ref()).map(|e| self.endian(e)).unwrap_or(Endian::Little);
        self.rules = format.map_or(ir::Rules::PACKED, |f| self.rules(f));
        if let Some(f) = format.filter(|f| !f.name.is_placeholder()) {
            if !is_ident(&f.name.value) || f.name.value.chars().any(|c| c.is_ascii_uppercase()) {
                self.err(
                    Code::BadName,
                    &f.name.span,
                    format!("format name `{}` is not a lowercase identifier", f.name.value),
                )
                .help = Some("use lowercase letters, digits and `_`, e.g. `usvlog`".into());
            }
        }

        // Declare every named type first so that fields can refer to types declared later.
        let mut decls: Vec<(String, Span, Decl<'_>)> = Vec::new();
        // The headers' names are optional; without one, messages point at the table header.
        if let Some(h) = &file.file_header {
            decls.push((name_or(&h.name, "FileHeader"), name_span(&h.name, &h.span), Decl::Struct(h)));
        }
        if let Some(fr) = &file.framing {
            decls.push((
                name_or(&fr.body.name, "RecordHeader"),
                name_span(&fr.body.name, &fr.body.span),
                Decl::Struct(&fr.body),
            ));
        }
        decls.extend(file.structs.iter().map(|s| (s.name.value.clone(), s.name.span.clone(), Decl::Struct(s))));
        decls.extend(file.enums.iter().map(|e| (e.name.value.clone(), e.name.span.clone(), Decl::Enum(e))));
        decls.extend(file.flags.iter().map(|f| (f.name.value.clone(), f.name.span.clone(), Decl::Flags(f))));
        decls.extend(file.unions.iter().map(|u| (u.name.value.clone(), u.name.span.clone(), Decl::Union(u))));
        decls.extend(file.records.iter().map(|r| (camel_case(&r.name.value), r.name.span.clone(), Decl::Record(r))));

        let mut names: BTreeMap<String, TypeId> = BTreeMap::new();
        for (i, (name, span, decl)) in decls.iter().enumerate() {
            if name.is_empty() {
                // A missing `name`, already reported.
                continue;
            }
            let is_record = matches!(decl, Decl::Record(_));
            let shown = match decl {
                Decl::Record(r) => r.name.value.clone(),
                _ => name.clone(),
            };
            if !is_ident(&shown) {
                bad_ident(self, span, &format!("`{shown}` is not a valid identifier"), &shown);
                continue;
            }
            if !is_record && (Prim::from_name(name).is_some() || BUILTIN_TYPES.contains(&name.as_str())) {
                self.err(Code::DuplicateName, span, format!("type name `{name}` is a built-in type")).label =
                    Some("already means a built-in type".into());
                continue;
            }
            if let Some(prev) = names.get(name) {
                let first = match decls[prev.0].2 {
                    Decl::Struct(_) => "a struct".to_string(),
                    Decl::Record(r) => format!("the Rust type of record `{}`", r.name.value),
                    Decl::Enum(_) => "an enum".to_string(),
                    Decl::Flags(_) => "a flags type".to_string(),
                    Decl::Union(_) => "a union".to_string(),
                };
                let d = self.err(Code::DuplicateName, span, format!("the name `{name}` is defined more than once"));
                d.label = Some(if is_record {
                    format!("record `{shown}` would be the Rust type `{name}`, which is already taken")
                } else {
                    "defined again here".to_string()
                });
                d.help =
                    Some(format!("`{name}` is already {first}; type, record and header names share one namespace"));
                continue;
            }
            names.insert(name.clone(), TypeId(i));
        }

        self.param_names = file.params.iter().map(|p| p.name.value.clone()).collect();
        // Lower every type body. Struct sizes depend on each other, so they are computed after.
        let mut types: Vec<TypeDef> = Vec::with_capacity(decls.len());
        for (name, _, decl) in &decls {
            let def = match decl {
                Decl::Struct(s) => TypeDef::Struct(self.strukt(
                    name,
                    s.doc.as_ref(),
                    s.endian.as_ref(),
                    &s.fields,
                    default_endian,
                    &names,
                    &decls,
                    false,
                )),
                Decl::Record(r) => TypeDef::Struct(self.strukt(
                    name,
                    r.doc.as_ref(),
                    r.endian.as_ref(),
                    &r.fields,
                    default_endian,
                    &names,
                    &decls,
                    true,
                )),
                Decl::Enum(e) => self.enumeration(e),
                Decl::Flags(f) => self.flags(f),
                Decl::Union(u) => self.union(u, default_endian, &names, &decls),
            };
            types.push(def);
        }
        let params = self.params(&file.params, &names, &decls);
        self.check_unions(&types, &decls, &params);
        let recursive = self.compute_sizes(&mut types, &decls);

        let mut schema = ir::Schema {
            format: ir::Format {
                name: format.map(|f| f.name.value.clone()).unwrap_or_default(),
                title: format.and_then(|f| f.title.as_ref()).map(|s| s.value.clone()),
                doc: format.and_then(|f| f.doc.as_ref()).map(|s| s.value.clone()),
                endian: default_endian,
                version: format.and_then(|f| f.version.as_ref()).map(|s| s.value.clone()),
                schema_id: None,
                rules: self.rules,
            },
            types,
            file_header: file.file_header.as_ref().map(|_| TypeId(0)),
            framing: None,
            records: Vec::new(),
            params,
            source: source_name.map(str::to_string),
        };
        // The checks below also run when earlier ones failed, so that one run reports every
        // problem; a field whose type could not be resolved is `Ty::Pad(0)` and is skipped.
        self.check_const_sizes(&schema, &decls);
        schema.format.schema_id = self.schema_id(file, &schema);
        // The file header may be variable-size (CARLA's info header ends with a length-prefixed
        // map name): readers decode it from a cursor and read more until it decodes, so only
        // the record header, which frames every record, must have a fixed size.
        schema.framing = self.framing(file, &schema);
        // Payload bounds walk nested types, which only terminates when none contains itself.
        let bounded = file.framing.as_ref().and_then(|f| f.bounded.as_ref()).is_none_or(|b| b.value);
        schema.records = self.records(file, &schema, &decls, !recursive && bounded);
        if self.diags.is_empty() {
            let prints: Vec<u64> =
                schema.records.iter().map(|r| crate::fingerprint::of_record(&schema, r.body)).collect();
            for (r, p) in schema.records.iter_mut().zip(prints) {
                r.fingerprint = p;
            }
            Some(schema)
        } else {
            None
        }
    }

    /// The layout rules of `[format]`: `align = "packed" | "natural"`, `string_nul = true`.
    fn rules(&mut self, f: &crate::schema::FormatDecl) -> ir::Rules {
        let natural_align = match f.align.as_ref().map(|a| (a.value.as_str(), a)) {
            None | Some(("packed", _)) => false,
            Some(("natural", _)) => true,
            Some((other, a)) => {
                let d = self.err(Code::WrongValueType, &a.span, format!("unknown alignment rule `{other}`"));
                d.label = Some("expected `packed` or `natural`".into());
                false
            }
        };
        ir::Rules { natural_align, string_nul: f.string_nul.as_ref().is_some_and(|b| b.value) }
    }

    fn endian(&mut self, e: &Sp<String>) -> Endian {
        match e.value.as_str() {
            "little" | "le" => Endian::Little,
            "big" | "be" => Endian::Big,
            other => {
                let d = self.err(Code::BadEndian, &e.span, format!("unknown endianness `{other}`"));
                d.label = Some("expected `little` or `big`".into());
                if let Some(s) = did_you_mean(other, ["little", "big"]) {
                    d.help = Some(format!("did you mean `{s}`?"));
                }
                Endian::Little
            }
        }
    }

    fn fits(&mut self, v: i128, p: Prim, span: &Span, what: &str) -> bool {
        match p.int_range() {
            Some((lo, hi)) if v >= lo && v <= hi => true,
            Some((lo, hi)) => {
                self.err(Code::ValueOutOfRange, span, format!("{what} {v} does not fit in `{p}`")).label =
                    Some(format!("`{p}` holds {lo}..={hi}"));
                false
            }
            None => {
                self.err(Code::NotAnInteger, span, format!("{what} needs an integer type, not `{p}`"));
                false
            }
        }
    }
}

/// The span inside the quotes of a basic string value.
fn inner_span(span: &Span) -> Span {
    if span.end >= span.start + 2 {
        span.start + 1..span.end - 1
    } else {
        span.clone()
    }
}
