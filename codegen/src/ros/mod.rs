//! The ROS1 `.msg` front end: message definitions (standalone `.msg` files, or the
//! `message_definition` blobs embedded in bags) parsed into a [`MsgSet`], fingerprinted with
//! genmsg's md5, and lowered into the same IR as TOML schemas (little-endian packed structs).
//!
//! Stages: [`parse`] (lines -> [`MsgSpec`], names unresolved) -> [`MsgSet::resolve`] (package
//! context, `Header`, existence, recursion) -> [`md5`] and [`lower`] (IR).

pub mod lower;
pub mod md5;
pub mod parse;
pub mod rust;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use crate::diag::{Code, Diagnostic, SchemaError};

/// A built-in ROS1 type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    Bool,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float32,
    Float64,
    String,
    Time,
    Duration,
    /// Deprecated alias of `int8` (signed), hashed under its own name.
    Byte,
    /// Deprecated alias of `uint8` (unsigned), hashed under its own name.
    Char,
}

impl Builtin {
    pub const ALL: [Builtin; 16] = [
        Builtin::Bool,
        Builtin::Int8,
        Builtin::Uint8,
        Builtin::Int16,
        Builtin::Uint16,
        Builtin::Int32,
        Builtin::Uint32,
        Builtin::Int64,
        Builtin::Uint64,
        Builtin::Float32,
        Builtin::Float64,
        Builtin::String,
        Builtin::Time,
        Builtin::Duration,
        Builtin::Byte,
        Builtin::Char,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Bool => "bool",
            Builtin::Int8 => "int8",
            Builtin::Uint8 => "uint8",
            Builtin::Int16 => "int16",
            Builtin::Uint16 => "uint16",
            Builtin::Int32 => "int32",
            Builtin::Uint32 => "uint32",
            Builtin::Int64 => "int64",
            Builtin::Uint64 => "uint64",
            Builtin::Float32 => "float32",
            Builtin::Float64 => "float64",
            Builtin::String => "string",
            Builtin::Time => "time",
            Builtin::Duration => "duration",
            Builtin::Byte => "byte",
            Builtin::Char => "char",
        }
    }

    pub fn from_name(s: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == s)
    }

    /// Whether a constant may have this type (every builtin but `time` and `duration`).
    pub fn is_constant_type(self) -> bool {
        !matches!(self, Builtin::Time | Builtin::Duration)
    }
}

/// The element type of a field: a builtin, or a message type by its resolved `pkg/Type` name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    Builtin(Builtin),
    /// Before [`MsgSet::resolve`], the name as written; after, the full `pkg/Type`.
    Msg(String),
}

/// `T`, `T[]` or `T[N]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Scalar,
    Var,
    Fixed(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgField {
    pub name: String,
    pub base: Base,
    pub arity: Arity,
    /// The type as written (`float64[9]`, `Header`), which genmsg hashes for builtins.
    pub written: String,
    /// Where the type is written in the section's source.
    pub span: Range<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgConst {
    pub ty: Builtin,
    pub name: String,
    /// The value text as genmsg keeps it: stripped; for strings everything after the first `=`
    /// of the original line, `#` included.
    pub value: String,
}

/// One message type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgSpec {
    /// `pkg/Type`.
    pub name: String,
    pub fields: Vec<MsgField>,
    pub constants: Vec<MsgConst>,
    /// Index of the source text in [`MsgSet::sources`].
    pub source: usize,
}

impl MsgSpec {
    /// The package part of the name (empty when the name has none).
    pub fn package(&self) -> &str {
        self.name.rsplit_once('/').map_or("", |(p, _)| p)
    }

    /// The type part of the name.
    pub fn short_name(&self) -> &str {
        self.name.rsplit_once('/').map_or(&self.name, |(_, t)| t)
    }
}

/// A source text the specs were parsed from, for diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Shown in messages: a file path, or e.g. `bag.bag: connection 3 message_definition`.
    pub path: String,
    pub text: String,
}

/// A closed set of message types, keyed by `pkg/Type`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsgSet {
    pub types: BTreeMap<String, MsgSpec>,
    pub sources: Vec<Source>,
}

/// The full name of `Header` written without a package.
pub const HEADER: &str = "std_msgs/Header";

impl MsgSet {
    pub fn get(&self, name: &str) -> Option<&MsgSpec> {
        self.types.get(name)
    }

    /// Adds the sections of a `message_definition` blob (or of a `.msg` file, which is a blob with
    /// one section) whose main type is `type_name`. Errors name `path`.
    pub fn add_definition(&mut self, path: &str, type_name: &str, text: &str) -> Result<(), SchemaError> {
        let source = self.sources.len();
        self.sources.push(Source { path: path.to_string(), text: text.to_string() });
        let (specs, mut diags) = parse::parse_definition(type_name, text, source);
        for spec in specs {
            if self.types.contains_key(&spec.name) {
                // A dependency repeated by several blobs: the first one wins (md5 tells them apart).
                continue;
            }
            self.types.insert(spec.name.clone(), spec);
        }
        if diags.is_empty() {
            Ok(())
        } else {
            diags.sort_by_key(|d| (d.span.start, d.code));
            Err(SchemaError { path: path.to_string(), source: text.to_string(), diagnostics: diags })
        }
    }

    /// Adds a `.msg` file, named `pkg/Type` after its location (`pkg/msg/Type.msg` or
    /// `pkg/Type.msg`).
    pub fn add_msg_file(&mut self, path: &Path) -> Result<String, SchemaError> {
        let shown = path.display().to_string().replace('\\', "/");
        let fail = |m: String| SchemaError {
            path: shown.clone(),
            source: String::new(),
            diagnostics: vec![Diagnostic::new(Code::MsgSection, 0..0, m)],
        };
        let name = msg_file_type(path).ok_or_else(|| {
            fail("cannot tell the package of this .msg file: put it in `<package>/msg/<Type>.msg`".into())
        })?;
        let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read the message file: {e}")))?;
        self.add_definition(&shown, &name, &text)?;
        Ok(name)
    }

    /// Resolves every field's message type to a full `pkg/Type` name present in the set, and
    /// checks that no type contains itself. Errors are grouped per source.
    pub fn resolve(&mut self) -> Result<(), Vec<SchemaError>> {
        let names: Vec<String> = self.types.keys().cloned().collect();
        let mut diags: BTreeMap<usize, Vec<Diagnostic>> = BTreeMap::new();
        for spec in self.types.values_mut() {
            let package = spec.package().to_string();
            for f in &mut spec.fields {
                let Base::Msg(written) = &f.base else { continue };
                match resolve_name(written, &package, &names) {
                    Ok(full) => f.base = Base::Msg(full),
                    Err(help) => {
                        let mut d = Diagnostic::new(
                            Code::UnknownType,
                            f.span.clone(),
                            format!("unknown message type `{written}` in `{}`", spec.name),
                        )
                        .label("not a builtin type nor a type of this definition");
                        d.help = help;
                        diags.entry(spec.source).or_default().push(d);
                    }
                }
            }
        }
        if diags.is_empty() {
            for name in &names {
                if let Some(f) = self.cycle(name) {
                    let spec = &self.types[name];
                    diags.entry(spec.source).or_default().push(
                        Diagnostic::new(Code::RecursiveType, f.span.clone(), format!("`{name}` contains itself"))
                            .label("this field leads back to the type it is in"),
                    );
                }
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

    /// The field of `name` through which `name` reaches itself, if it does.
    fn cycle(&self, name: &str) -> Option<&MsgField> {
        let spec = self.types.get(name)?;
        spec.fields.iter().find(|f| match &f.base {
            Base::Msg(sub) => {
                let mut seen = std::collections::BTreeSet::new();
                self.reaches(sub, name, &mut seen)
            }
            Base::Builtin(_) => false,
        })
    }

    fn reaches(&self, from: &str, target: &str, seen: &mut std::collections::BTreeSet<String>) -> bool {
        if from == target {
            return true;
        }
        if !seen.insert(from.to_string()) {
            return false;
        }
        let Some(spec) = self.types.get(from) else { return false };
        spec.fields.iter().any(|f| matches!(&f.base, Base::Msg(s) if self.reaches(s, target, seen)))
    }

    /// The types `root` depends on (itself first), depth first, each once.
    pub fn closure(&self, root: &str) -> Vec<&MsgSpec> {
        let mut out: Vec<&MsgSpec> = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let Some(spec) = self.types.get(n) else { continue };
            if out.iter().any(|s| s.name == n) {
                continue;
            }
            out.push(spec);
            for f in spec.fields.iter().rev() {
                if let Base::Msg(s) = &f.base {
                    stack.push(s);
                }
            }
        }
        out
    }
}

/// Parses and resolves one `message_definition` blob whose main type is `type_name`.
pub fn compile_definition(path: &str, type_name: &str, text: &str) -> Result<MsgSet, Vec<SchemaError>> {
    let mut set = MsgSet::default();
    set.add_definition(path, type_name, text).map_err(|e| vec![e])?;
    set.resolve()?;
    Ok(set)
}

/// Parses and resolves `.msg` files (each named after its location, see [`MsgSet::add_msg_file`]).
pub fn compile_msg_files(paths: &[impl AsRef<Path>]) -> Result<MsgSet, Vec<SchemaError>> {
    let mut set = MsgSet::default();
    let mut errors = Vec::new();
    for p in paths {
        if let Err(e) = set.add_msg_file(p.as_ref()) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    set.resolve()?;
    Ok(set)
}

/// `pkg/Type` of a `.msg` file from its path: `pkg/msg/Type.msg` or `pkg/Type.msg`.
pub fn msg_file_type(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let parent = path.parent()?;
    let dir = parent.file_name()?.to_str()?;
    let package = if dir == "msg" { parent.parent()?.file_name()?.to_str()? } else { dir };
    Some(format!("{package}/{stem}"))
}

/// The full name of a message type written in a section of `package`: genmsg's rules (`Header`
/// is `std_msgs/Header`; an unqualified name is in the section's package), then, leniently, the
/// one type of the set with that short name. On failure, a suggestion.
fn resolve_name(written: &str, package: &str, names: &[String]) -> Result<String, Option<String>> {
    let exists = |n: &str| names.iter().any(|x| x == n);
    let candidate = if written == "roslib/Header" && !exists(written) {
        HEADER.to_string()
    } else if written.contains('/') {
        written.to_string()
    } else if written == "Header" {
        HEADER.to_string()
    } else {
        format!("{package}/{written}")
    };
    if exists(&candidate) {
        return Ok(candidate);
    }
    let short = written.rsplit('/').next().unwrap_or(written);
    let same: Vec<&String> = names.iter().filter(|n| n.rsplit('/').next() == Some(short)).collect();
    match same.as_slice() {
        [one] if !written.contains('/') => Ok((*one).clone()),
        [] => Err(crate::diag::did_you_mean(short, names.iter().map(|n| n.rsplit('/').next().unwrap_or(n)))
            .map(|s| format!("did you mean `{s}`?"))),
        several => Err(Some(format!(
            "qualify the name: {}",
            several.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        ))),
    }
}
