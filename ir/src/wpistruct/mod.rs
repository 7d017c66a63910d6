//! The WPILib struct schema front end (`wpiutil/doc/struct.adoc`): the schemas that WPILOG and
//! RLOG files carry under `/.schema/struct:<Name>` (`double x;double y`, enums on integers,
//! bit-fields, fixed arrays, nested structs by name), parsed into a [`StructSet`], resolved by
//! name, and lowered into the same IR as TOML schemas (little-endian packed structs).
//!
//! Stages: [`parse::parse`] (one schema's text -> [`Member`]s, nested names unresolved) ->
//! [`StructSet::resolve`] (existence, recursion) -> [`lower::lower`] (IR).
//!
//! Leniency: real writers separate declarations with a comma (PsiKit publishes
//! `int32 pos,double vel`). AdvantageScope splits on spaces and reads one member named
//! `pos,doublevel`, which loses `vel` and misreads the value's size. logspec reads a comma
//! between declarations as `;` when decoding logs, with a warning ([`Code::StructComma`]), since
//! that is the layout the writer meant; [`StructSet::add`] with `lenient = false` (the build-time
//! API) reports it as an error instead.

pub mod lower;
pub mod parse;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::diag::{Code, Diagnostic, SchemaError};
use crate::ir::Prim;

/// How deep structs may nest in a log's schemas (WPILib's own nest three deep).
pub const MAX_DEPTH: usize = 64;

/// A built-in type of struct schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    Char,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float,
    Double,
}

impl Scalar {
    /// Every spelling struct.adoc allows (`float32` and `float64` are aliases).
    const NAMES: [(&'static str, Scalar); 14] = [
        ("bool", Scalar::Bool),
        ("char", Scalar::Char),
        ("int8", Scalar::Int8),
        ("int16", Scalar::Int16),
        ("int32", Scalar::Int32),
        ("int64", Scalar::Int64),
        ("uint8", Scalar::Uint8),
        ("uint16", Scalar::Uint16),
        ("uint32", Scalar::Uint32),
        ("uint64", Scalar::Uint64),
        ("float", Scalar::Float),
        ("float32", Scalar::Float),
        ("double", Scalar::Double),
        ("float64", Scalar::Double),
    ];

    pub fn from_name(s: &str) -> Option<Scalar> {
        Scalar::NAMES.iter().find(|(n, _)| *n == s).map(|(_, t)| *t)
    }

    pub fn name(self) -> &'static str {
        Scalar::NAMES.iter().find(|(_, t)| *t == self).map_or("?", |(n, _)| n)
    }

    /// The number type (`None` for `bool` and `char`).
    pub fn prim(self) -> Option<Prim> {
        Some(match self {
            Scalar::Bool | Scalar::Char => return None,
            Scalar::Int8 => Prim::I8,
            Scalar::Int16 => Prim::I16,
            Scalar::Int32 => Prim::I32,
            Scalar::Int64 => Prim::I64,
            Scalar::Uint8 => Prim::U8,
            Scalar::Uint16 => Prim::U16,
            Scalar::Uint32 => Prim::U32,
            Scalar::Uint64 => Prim::U64,
            Scalar::Float => Prim::F32,
            Scalar::Double => Prim::F64,
        })
    }
}

/// The type of a member: built in, or another struct by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberType {
    Scalar(Scalar),
    Struct(String),
}

impl MemberType {
    pub fn name(&self) -> &str {
        match self {
            MemberType::Scalar(s) => s.name(),
            MemberType::Struct(n) => n,
        }
    }
}

/// One declaration of a struct schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub ty: MemberType,
    /// `[N]`: a fixed array of N.
    pub array: Option<u32>,
    /// `:N`: a bit-field of N bits.
    pub bits: Option<u32>,
    /// `enum {a=1, b=2}` before the type: named values.
    pub enumeration: Option<Vec<(String, i128)>>,
    pub type_span: Range<usize>,
    pub name_span: Range<usize>,
}

/// One struct type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructSpec {
    pub name: String,
    pub members: Vec<Member>,
    /// Index of the source text in [`StructSet::sources`].
    pub source: usize,
}

/// A source text a schema was parsed from, for diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Shown in messages: a file path, or e.g. `robot.wpilog: /.schema/struct:Pose2d`.
    pub path: String,
    pub text: String,
}

/// A set of struct types by name. The first definition of a name wins (as WPILib readers do).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StructSet {
    pub types: BTreeMap<String, StructSpec>,
    pub sources: Vec<Source>,
}

impl StructSet {
    pub fn get(&self, name: &str) -> Option<&StructSpec> {
        self.types.get(name)
    }

    /// Parses the schema of struct `name` and adds it, unless `name` is already defined (then
    /// nothing happens and `Ok(vec![])` is returned). With `lenient`, commas between
    /// declarations are read as `;` and returned as warnings; otherwise they are errors.
    pub fn add(&mut self, path: &str, name: &str, text: &str, lenient: bool) -> Result<Vec<Diagnostic>, SchemaError> {
        if self.types.contains_key(name) {
            return Ok(Vec::new());
        }
        let parsed = parse::parse(text);
        let mut errors = parsed.errors;
        let warnings = if lenient {
            parsed.commas
        } else {
            errors.extend(parsed.commas);
            Vec::new()
        };
        if !errors.is_empty() {
            errors.sort_by_key(|d| (d.span.start, d.code));
            return Err(SchemaError { path: path.to_string(), source: text.to_string(), diagnostics: errors });
        }
        let source = self.sources.len();
        self.sources.push(Source { path: path.to_string(), text: text.to_string() });
        self.types.insert(name.to_string(), StructSpec { name: name.to_string(), members: parsed.members, source });
        Ok(warnings)
    }

    /// Checks that every struct a schema names is defined and that none contains itself. Errors
    /// are grouped per source.
    pub fn resolve(&self) -> Result<(), Vec<SchemaError>> {
        let names: Vec<&str> = self.types.keys().map(String::as_str).collect();
        let mut diags: BTreeMap<usize, Vec<Diagnostic>> = BTreeMap::new();
        for spec in self.types.values() {
            for m in &spec.members {
                let MemberType::Struct(n) = &m.ty else { continue };
                if self.types.contains_key(n) {
                    if self.reaches(n, &spec.name, &mut BTreeSet::new()) {
                        diags.entry(spec.source).or_default().push(
                            Diagnostic::new(
                                Code::RecursiveType,
                                m.type_span.clone(),
                                format!("`{}` contains itself", spec.name),
                            )
                            .label("this member leads back to the struct it is in"),
                        );
                    }
                    continue;
                }
                let mut d = Diagnostic::new(
                    Code::UnknownType,
                    m.type_span.clone(),
                    format!("unknown type `{n}` in struct `{}`", spec.name),
                )
                .label("not a built-in type nor a struct with a schema");
                d.help = crate::diag::did_you_mean(n, names.iter().copied().chain(Scalar::NAMES.iter().map(|x| x.0)))
                    .map(|s| format!("did you mean `{s}`?"));
                diags.entry(spec.source).or_default().push(d);
            }
        }
        if diags.is_empty() {
            return Ok(());
        }
        Err(diags
            .into_iter()
            .map(|(src, mut d)| {
                d.sort_by_key(|d| (d.span.start, d.code));
                let s = &self.sources[src];
                SchemaError { path: s.path.clone(), source: s.text.clone(), diagnostics: d }
            })
            .collect())
    }

    /// Checks the structs `root` depends on at run time: each is defined, none contains itself,
    /// and structs nest at most [`MAX_DEPTH`] deep (so that no log can make a decoder recurse
    /// without bound). The error is one line of text.
    pub fn resolve_one(&self, root: &str) -> Result<(), String> {
        self.closure(root).map_err(|missing| format!("struct `{missing}` is not defined"))?;
        let mut done = BTreeMap::new();
        self.depth(root, &mut Vec::new(), &mut done).map(|_| ())
    }

    /// How deep `name` nests (1 for a struct of built-in members), checking for cycles.
    fn depth<'a>(
        &'a self,
        name: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeMap<&'a str, usize>,
    ) -> Result<usize, String> {
        if let Some(d) = done.get(name) {
            return Ok(*d);
        }
        if path.contains(&name) {
            return Err(format!("struct `{name}` contains itself ({} -> {name})", path.join(" -> ")));
        }
        if path.len() >= MAX_DEPTH {
            return Err(format!("structs nest more than {MAX_DEPTH} deep ({} -> ...)", path[..3].join(" -> ")));
        }
        let Some(spec) = self.types.get(name) else { return Err(format!("struct `{name}` is not defined")) };
        path.push(name);
        let mut d = 1;
        for m in &spec.members {
            if let MemberType::Struct(n) = &m.ty {
                d = d.max(1 + self.depth(n, path, done)?);
            }
        }
        path.pop();
        done.insert(name, d);
        Ok(d)
    }

    fn reaches(&self, from: &str, target: &str, seen: &mut BTreeSet<String>) -> bool {
        if from == target {
            return true;
        }
        if !seen.insert(from.to_string()) {
            return false;
        }
        let Some(spec) = self.types.get(from) else { return false };
        spec.members.iter().any(|m| matches!(&m.ty, MemberType::Struct(s) if self.reaches(s, target, seen)))
    }

    /// The structs `root` depends on (itself first), each once, or the first name in its closure
    /// that has no schema.
    pub fn closure(&self, root: &str) -> Result<Vec<&StructSpec>, String> {
        let mut out: Vec<&StructSpec> = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let Some(spec) = self.types.get(n) else { return Err(n.to_string()) };
            if out.iter().any(|s| s.name == n) {
                continue;
            }
            out.push(spec);
            for m in spec.members.iter().rev() {
                if let MemberType::Struct(s) = &m.ty {
                    stack.push(s);
                }
            }
        }
        Ok(out)
    }
}

/// Parses and resolves struct schemas given as `(name, text)` pairs, strictly (a comma between
/// declarations is an error). `path` names the sources in messages (`<path>: struct:<name>`).
pub fn compile_schemas(path: &str, schemas: &[(&str, &str)]) -> Result<StructSet, Vec<SchemaError>> {
    let mut set = StructSet::default();
    let mut errors = Vec::new();
    for (name, text) in schemas {
        if let Err(e) = set.add(&format!("{path}: struct:{name}"), name, text, false) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    set.resolve()?;
    Ok(set)
}
