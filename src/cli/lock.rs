//! `logspec lock`: records the current wire layout of every schema in its lock file
//! (`schemas/<format>.lock`, or where logspec.toml puts it), keeping the layouts of older schema
//! ids as history. Refuses to overwrite the entry of a schema id with a breaking change: bump the
//! schema id instead. `check` and `gen` reach the same verdict through [`verdict`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::ir::ir::Schema;
use logspec::ir::lock;

use super::project::{self, Project};
use super::report::{Level, Reporter};
use super::Error;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: project::Args,
}

/// Every schema of `dir` with its path, compiled.
pub fn schemas(dir: &Path) -> Result<Vec<(PathBuf, Schema)>, Error> {
    let mut out = Vec::new();
    for p in super::schema_paths(dir)? {
        let schema = logspec::codegen::compile_file(&p).map_err(|e| Error::Input(e.render()))?;
        out.push((p, schema));
    }
    Ok(out)
}

/// The lock file of a schema in `project`, and its parsed content if it exists (`None` for the
/// path when the project keeps no lock files).
pub fn read_lock(
    project: &Project,
    schema_path: &Path,
    schema: &Schema,
) -> Result<Option<(PathBuf, Option<lock::Lock>)>, Error> {
    let Some(path) = project.lock_path(schema_path, &schema.format.name) else { return Ok(None) };
    match std::fs::read_to_string(&path) {
        Ok(text) => match lock::parse(&text) {
            Ok(l) => Ok(Some((path, Some(l)))),
            Err(e) => Err(Error::Input(format!("{}: {e}", path.display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some((path, None))),
        Err(e) => Err(Error::Input(format!("{}: {e}", path.display()))),
    }
}

/// What a schema's lock says of it.
pub enum Verdict {
    /// Breaking layout changes under a schema id the lock already records: must not merge.
    Unbumped { schema_id: u64, id_name: String, breaking: Vec<lock::Change> },
    /// The lock does not record the schema as it is (new records, renames, a bumped id, or no
    /// lock file yet); `logspec lock` (or `gen`) brings it up to date.
    Stale,
    /// The lock records the schema as it is.
    Current,
}

/// The one verdict of `check`, `gen` and `lock` on a schema and its lock.
pub fn verdict(l: Option<&lock::Lock>, schema: &Schema) -> Verdict {
    let Some(l) = l else { return Verdict::Stale };
    let report = lock::check(l, schema);
    if report.is_error() {
        let id_name = schema.format.schema_id.as_ref().map_or("the schema id".to_string(), |s| s.macro_name.clone());
        let breaking = report.changes.into_iter().filter(|c| c.verdict == lock::Verdict::Breaking).collect();
        Verdict::Unbumped { schema_id: report.schema_id, id_name, breaking }
    } else if report.lock_is_stale() {
        Verdict::Stale
    } else {
        Verdict::Current
    }
}

/// Writes the lock of one schema unless that would record a breaking change under a locked id;
/// returns whether it refused.
pub fn update(
    project: &Project,
    path: &Path,
    schema: &Schema,
    quiet_unchanged: bool,
    rep: &Reporter,
) -> Result<bool, Error> {
    let Some((lock_path, current)) = read_lock(project, path, schema)? else { return Ok(false) };
    if let Verdict::Unbumped { schema_id, .. } = verdict(current.as_ref(), schema) {
        eprintln!(
            "logspec: {}: not locked: these changes break files written under schema id {schema_id}; bump the schema id first",
            path.display(),
        );
        return Ok(true);
    }
    // The lock names its schema relative to the project root, as generated files do.
    let name = relative(path, &project.root);
    let text = lock::render(&lock::updated(current.as_ref(), schema), &name);
    let old = std::fs::read_to_string(&lock_path).unwrap_or_default();
    if old == text {
        if !quiet_unchanged {
            rep.text(&format!("unchanged {}\n", lock_path.display()))?;
        }
    } else {
        if let Some(parent) = lock_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::Input(format!("{}: {e}", parent.display())))?;
        }
        logspec_engine::output::write_file(&lock_path, &[path], text.as_bytes())?;
        rep.text(&format!("wrote     {}\n", lock_path.display()))?;
    }
    Ok(false)
}

/// `path` relative to `root` with `/` separators, or as given when it is not under it.
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = match (path.canonicalize(), root.canonicalize()) {
        (Ok(a), Ok(r)) => a.strip_prefix(&r).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let name = rel.display().to_string().replace('\\', "/");
    name.strip_prefix("./").unwrap_or(&name).to_string()
}

/// Prints the breaking changes of an unbumped verdict, as `check`, `gen` and `lock` all do.
pub fn print_breaking(path: &Path, breaking: &[lock::Change]) {
    for c in breaking {
        eprintln!("logspec: {}: breaking: {}", path.display(), c.message);
    }
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let project = args.project.resolve()?;
    let rep = args.project.reporter();
    if rep.schema_errors(&project)? {
        return Ok(ExitCode::from(1));
    }
    let mut refused = 0;
    for (path, schema) in schemas(&project.schemas)? {
        if let Some((_, Some(l))) = read_lock(&project, &path, &schema)? {
            if let Verdict::Unbumped { breaking, schema_id, id_name } = verdict(Some(&l), &schema) {
                print_breaking(&path, &breaking);
                let fix = format!(
                    "breaking under unchanged {id_name} = {schema_id}: not locked; bump {id_name} in the schema first"
                );
                rep.breaking(Level::Error, &path, &breaking, &fix)?;
            }
        }
        refused += usize::from(update(&project, &path, &schema, false, &rep)?);
    }
    Ok(if refused == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
