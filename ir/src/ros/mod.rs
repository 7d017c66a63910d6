//! The ROS1 `.msg` front end: message definitions (standalone `.msg` files, or the
//! `message_definition` blobs embedded in bags) parsed into a [`MsgSet`], fingerprinted with
//! genmsg's md5, and lowered into the same IR as TOML schemas (little-endian packed structs).
//!
//! Stages: [`parse`] (lines -> [`MsgSpec`], names unresolved) -> [`MsgSet::resolve`] (package
//! context, `Header`, existence, recursion) -> [`md5`] and [`lower`] (IR).

pub mod lower;
pub mod md5;
pub mod parse;

use std::collections::{BTreeMap, HashMap, HashSet};
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

/// Which ROS a definition is written for. ROS 2's `.msg` grammar is ROS1's with these
/// differences, and this front end parses both:
/// - `byte` is unsigned (an IDL `octet`); `time` and `duration` are not builtins (ROS 2 has the
///   messages `builtin_interfaces/Time` and `Duration`, which definitions carry);
/// - bounded types: `string<=N`, `T[<=N]` (the bound is not on the wire: a sequence);
/// - a field may have a default value after its name (`int32 x 42`, `string s "a # b"`): it does
///   not change the wire; `#` inside a quoted string starts no comment;
/// - type names may be written `pkg/msg/Type` (and are kept as `pkg/Type`);
/// - `wstring` is refused (its wire form depends on the middleware), as are service and action
///   texts (`---`).
///
/// The wire rules differ too (see [`lower`]): ROS1 packs little-endian fields; ROS 2 uses CDR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    #[default]
    Ros1,
    Ros2,
}

/// A closed set of message types, keyed by `pkg/Type`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsgSet {
    pub types: BTreeMap<String, MsgSpec>,
    pub sources: Vec<Source>,
    /// The grammar of every definition added.
    pub dialect: Dialect,
}

/// A ROS 2 type name as this front end keys it: `pkg/msg/Type` becomes `pkg/Type` (rosbag2
/// writes both forms).
pub fn ros2_name(name: &str) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [pkg, "msg", ty] => format!("{pkg}/{ty}"),
        _ => name.to_string(),
    }
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
        let (specs, mut diags) = parse::parse_definition(type_name, text, source, self.dialect);
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
        let index = Names::new(&names);
        let mut diags: BTreeMap<usize, Vec<Diagnostic>> = BTreeMap::new();
        let mut unknown = 0usize;
        for spec in self.types.values_mut() {
            let package = spec.package().to_string();
            for f in &mut spec.fields {
                let Base::Msg(written) = &f.base else { continue };
                // Suggestions compare against every name: only for the first few failures.
                unknown += 1;
                match resolve_name(written, &package, &index, unknown <= MAX_SUGGESTIONS) {
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
            if let Some(name) = self.too_deep() {
                let spec = &self.types[&name];
                let at = spec.fields.iter().find(|f| matches!(f.base, Base::Msg(_))).map_or(0..0, |f| f.span.clone());
                diags.entry(spec.source).or_default().push(
                    Diagnostic::new(
                        Code::TooDeep,
                        at,
                        format!("`{name}` nests message types more than {MAX_NESTING} levels deep"),
                    )
                    .label("the chain of message types starts here")
                    .help("ROS messages nest a handful of levels; a chain this deep is not a real message"),
                );
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

    /// Whether `target` is reachable from `from` (without recursion: a definition may chain many
    /// types).
    fn reaches(&self, from: &str, target: &str, seen: &mut std::collections::BTreeSet<String>) -> bool {
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if !seen.insert(n.to_string()) {
                continue;
            }
            let Some(spec) = self.types.get(n) else { continue };
            for f in &spec.fields {
                if let Base::Msg(s) = &f.base {
                    stack.push(s);
                }
            }
        }
        false
    }

    /// A type that nests message types more than [`MAX_NESTING`] levels deep (or a cycle that
    /// long). A walk without recursion, each type finished once.
    fn too_deep(&self) -> Option<String> {
        let mut depth: HashMap<&str, usize> = HashMap::new();
        let mut on_stack: HashSet<&str> = HashSet::new();
        let mut worst: Option<(&str, usize)> = None;
        for root in self.types.keys() {
            if depth.contains_key(root.as_str()) {
                continue;
            }
            // (type, index of its next field, deepest child so far)
            let mut stack: Vec<(&str, usize, usize)> = vec![(root.as_str(), 0, 0)];
            on_stack.insert(root.as_str());
            while let Some(top) = stack.last_mut() {
                let (name, next, deepest) = *top;
                let fields = self.types.get(name).map_or(&[][..], |s| &s.fields[..]);
                if let Some(f) = fields.get(next) {
                    top.1 += 1;
                    let Base::Msg(child) = &f.base else { continue };
                    let child = child.as_str();
                    if let Some(d) = depth.get(child) {
                        top.2 = deepest.max(*d);
                    } else if on_stack.contains(child) {
                        // A cycle: the depth so far is the stack's.
                        if stack.len() > MAX_NESTING {
                            return Some(root.clone());
                        }
                    } else if self.types.contains_key(child) {
                        if stack.len() > MAX_NESTING {
                            return Some(root.clone());
                        }
                        on_stack.insert(child);
                        stack.push((child, 0, 0));
                    }
                } else {
                    stack.pop();
                    on_stack.remove(name);
                    let d = deepest + 1;
                    depth.insert(name, d);
                    if worst.is_none_or(|(_, w)| d > w) {
                        worst = Some((name, d));
                    }
                    if let Some(parent) = stack.last_mut() {
                        parent.2 = parent.2.max(d);
                    }
                }
            }
        }
        worst.filter(|(_, d)| *d > MAX_NESTING).map(|(n, _)| n.to_string())
    }

    /// The types `root` depends on (itself first), depth first, each once.
    pub fn closure(&self, root: &str) -> Vec<&MsgSpec> {
        let mut out: Vec<&MsgSpec> = Vec::new();
        let mut taken: HashSet<&str> = HashSet::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let Some(spec) = self.types.get(n) else { continue };
            if !taken.insert(n) {
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

/// Parses and resolves one ROS 2 definition text (`ros2msg`: the `.msg` of `type_name`, then
/// each dependency after a line of `=` and `MSG: pkg/Type`), `type_name` in either form.
pub fn compile_ros2_definition(path: &str, type_name: &str, text: &str) -> Result<MsgSet, Vec<SchemaError>> {
    let mut set = MsgSet { dialect: Dialect::Ros2, ..MsgSet::default() };
    set.add_definition(path, &ros2_name(type_name), text).map_err(|e| vec![e])?;
    set.resolve()?;
    Ok(set)
}

/// Parses and resolves `.msg` files (each named after its location, see [`MsgSet::add_msg_file`]).
pub fn compile_msg_files(paths: &[impl AsRef<Path>]) -> Result<MsgSet, Vec<SchemaError>> {
    msg_files(MsgSet::default(), paths)
}

/// [`compile_msg_files`] in the ROS 2 dialect (`<package>/msg/<Type>.msg` of ROS 2 packages:
/// bounded types, defaults), for CDR.
pub fn compile_ros2_msg_files(paths: &[impl AsRef<Path>]) -> Result<MsgSet, Vec<SchemaError>> {
    msg_files(MsgSet { dialect: Dialect::Ros2, ..MsgSet::default() }, paths)
}

fn msg_files(mut set: MsgSet, paths: &[impl AsRef<Path>]) -> Result<MsgSet, Vec<SchemaError>> {
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

/// The deepest nesting of message types accepted (ROS messages nest a handful of levels; a chain
/// of thousands would exhaust the stack of every recursive walk over it).
pub const MAX_NESTING: usize = 100;

/// Unknown message types that get a did-you-mean (each compares against every name).
const MAX_SUGGESTIONS: usize = 20;

/// The names of a set, for lookups in constant time.
struct Names<'a> {
    list: &'a [String],
    all: HashSet<&'a str>,
    /// By short name (`Imu`).
    by_short: HashMap<&'a str, Vec<&'a String>>,
}

impl<'a> Names<'a> {
    fn new(list: &'a [String]) -> Self {
        let mut by_short: HashMap<&str, Vec<&String>> = HashMap::new();
        for n in list {
            by_short.entry(n.rsplit('/').next().unwrap_or(n)).or_default().push(n);
        }
        Names { list, all: list.iter().map(String::as_str).collect(), by_short }
    }
}

/// The full name of a message type written in a section of `package`: genmsg's rules (`Header`
/// is `std_msgs/Header`; an unqualified name is in the section's package), then, leniently, the
/// one type of the set with that short name. On failure, a suggestion.
fn resolve_name(written: &str, package: &str, names: &Names<'_>, suggest: bool) -> Result<String, Option<String>> {
    let exists = |n: &str| names.all.contains(n);
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
    let same: &[&String] = names.by_short.get(short).map_or(&[], Vec::as_slice);
    match same {
        [one] if !written.contains('/') => Ok((*one).clone()),
        [] if !suggest => Err(None),
        [] => Err(crate::diag::did_you_mean(short, names.list.iter().map(|n| n.rsplit('/').next().unwrap_or(n)))
            .map(|s| format!("did you mean `{s}`?"))),
        several => Err(Some(format!(
            "qualify the name: {}",
            several.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        ))),
    }
}
