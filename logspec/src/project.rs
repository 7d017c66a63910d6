//! The project file, `logspec.toml`: where a repository keeps its schemas and where each generated
//! artifact goes (C header, Python module, docs, golden vectors, lock files). `gen`, `check`,
//! `lock` and `diff` read it from the current directory or the nearest one above; their flags
//! override it. Without a project file the layout is this repository's own (`schemas/`,
//! `include/<format>/record_types.h`, ...).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::log::Error;

/// The project file's name.
pub const FILE: &str = "logspec.toml";

/// `logspec.toml` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The schema directory, relative to the project file.
    schemas: Option<String>,
    #[serde(default)]
    output: Output,
}

/// Where each artifact goes: a path relative to the project file, `{format}` standing for the
/// format's name; `false` generates no file of that kind.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    c: Option<Place>,
    python: Option<Place>,
    docs: Option<Place>,
    golden: Option<Place>,
    lock: Option<Place>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Place {
    Path(String),
    Enabled(bool),
}

/// A kind of generated file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Artifact {
    /// The C header.
    C,
    /// The Python module.
    Python,
    /// The Markdown documentation.
    Docs,
    /// The golden vectors.
    Golden,
}

/// A resolved project: its root, schema directory and output places.
#[derive(Debug, Clone)]
pub struct Project {
    /// The directory the generated paths are relative to.
    pub root: PathBuf,
    /// The schema directory (every `*.toml` in it is a schema).
    pub schemas: PathBuf,
    c: Option<Option<String>>,
    python: Option<Option<String>>,
    docs: Option<Option<String>>,
    golden: Option<Option<String>>,
    lock: Option<Option<String>>,
}

/// What overrides the project file (the flags of `gen`, `check`, `lock` and `diff`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The schema directory (every `*.toml` in it is compiled) [default: `schemas` in
    /// logspec.toml, else `schemas/`].
    pub schemas: Option<PathBuf>,
    /// The project root the generated files live under [default: the directory of logspec.toml,
    /// else the current directory].
    pub root: Option<PathBuf>,
    /// The project file [default: logspec.toml in the current directory or the nearest one
    /// above it].
    pub config: Option<PathBuf>,
}

/// `p` without `.` components (`./schemas` is `schemas`), or `.` if nothing is left.
pub fn tidy(p: &Path) -> PathBuf {
    let t: PathBuf = p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect();
    if t.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        t
    }
}

/// The nearest `logspec.toml` at or above `dir`.
pub fn find(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(FILE)).find(|p| p.is_file())
}

impl Overrides {
    /// The project these flags and the project file describe.
    pub fn resolve(&self) -> Result<Project, Error> {
        let file = match &self.config {
            Some(p) if !p.is_file() => {
                return Err(Error::Usage(format!("{}: no such project file", p.display())));
            }
            Some(p) => Some(p.clone()),
            None => std::env::current_dir().ok().and_then(|d| find(&d)),
        };
        let (parsed, base) = match &file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| Error::Input(format!("{}: cannot read: {e}", p.display())))?;
                let parsed: File =
                    toml::from_str(&text).map_err(|e| Error::Input(format!("{}: {}", p.display(), e)))?;
                let base =
                    p.parent().filter(|d| !d.as_os_str().is_empty()).map_or(PathBuf::from("."), Path::to_path_buf);
                // Found in the current directory: paths in messages stay relative.
                let base = if std::env::current_dir().is_ok_and(|d| d == base) { PathBuf::from(".") } else { base };
                (parsed, Some(base))
            }
            None => (File::default(), None),
        };
        let root = self.root.clone().or_else(|| base.clone()).unwrap_or_else(|| PathBuf::from("."));
        let schemas = match (&self.schemas, &parsed.schemas) {
            (Some(s), _) => s.clone(),
            (None, Some(s)) => base.as_deref().unwrap_or(Path::new(".")).join(s),
            (None, None) => root.join("schemas"),
        };
        let place = |p: &Option<Place>, what: &str| -> Result<Option<Option<String>>, Error> {
            match p {
                None => Ok(None),
                Some(Place::Enabled(false)) => Ok(Some(None)),
                Some(Place::Enabled(true)) => Err(Error::Usage(format!(
                    "{}: output.{what}: a path (with `{{format}}` for the format's name) or `false`, not `true`",
                    file.as_deref().unwrap_or(Path::new(FILE)).display()
                ))),
                Some(Place::Path(s)) if s.trim().is_empty() || Path::new(s).is_absolute() || s.contains("..") => {
                    Err(Error::Usage(format!(
                        "{}: output.{what} = {s:?}: a path relative to the project file, inside the project",
                        file.as_deref().unwrap_or(Path::new(FILE)).display()
                    )))
                }
                Some(Place::Path(s)) => Ok(Some(Some(s.clone()))),
            }
        };
        let o = &parsed.output;
        Ok(Project {
            root: tidy(&root),
            schemas: tidy(&schemas),
            c: place(&o.c, "c")?,
            python: place(&o.python, "python")?,
            docs: place(&o.docs, "docs")?,
            golden: place(&o.golden, "golden")?,
            lock: place(&o.lock, "lock")?,
        })
    }
}

impl Project {
    /// Where the artifact of `lang` for `format` goes, relative to the root: the project file's
    /// place, else the back end's own `default` path; `None` when the project file turns it off.
    pub fn place(&self, artifact: Artifact, format: &str, default: &str) -> Option<String> {
        let configured = match artifact {
            Artifact::C => &self.c,
            Artifact::Python => &self.python,
            Artifact::Docs => &self.docs,
            Artifact::Golden => &self.golden,
        };
        match configured {
            None => Some(default.to_string()),
            Some(None) => None,
            Some(Some(template)) => Some(template.replace("{format}", format)),
        }
    }

    /// The lock file of a schema: the project file's place (`{format}` for the schema's format
    /// name) under the root, else next to the schema (`x.toml` -> `x.lock`).
    pub fn lock_path(&self, schema_path: &Path, format: &str) -> Option<PathBuf> {
        match &self.lock {
            None => Some(schema_path.with_extension("lock")),
            Some(None) => None,
            Some(Some(template)) => Some(tidy(&self.root.join(template.replace("{format}", format)))),
        }
    }
}

/// The text of a new project file: every place spelled out, with the header where `header` says.
pub fn template(schemas: &str, header: &str) -> String {
    format!(
        r#"# logspec project file: where the schemas are and where each generated file goes.
# `logspec gen`, `check`, `lock` and `diff` read it (from this directory or any below it);
# their flags (--schemas, --root) override it. Paths are relative to this file; `{{format}}`
# stands for a schema's format name. Set a place to `false` to generate no file of that kind.

schemas = "{schemas}"

[output]
# The C header: structs, encoders, decoders and typed writers.
c = "{header}"
# A dependency-free Python module that reads and writes the format.
python = "python/{{format}}.py"
# The format's documentation (Markdown tables of every record).
docs = "docs/formats/{{format}}.md"
# Known-value test vectors, for tests in other languages.
golden = "golden/{{format}}.json"
# The wire layout of every schema id ever released (`logspec lock`); commit it.
lock = "{schemas}/{{format}}.lock"
"#
    )
}

/// Every `*.toml` of a schema directory, sorted.
pub fn schema_paths(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Usage(format!("{}: cannot list schemas: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(Error::Usage(format!("{}: no *.toml schemas found", dir.display())));
    }
    Ok(paths)
}
