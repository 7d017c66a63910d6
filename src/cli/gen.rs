//! `logspec gen`: regenerate the checked-in artifacts (C headers, Python modules, golden vectors, format docs)
//! from the schemas.

use std::process::ExitCode;

use logspec::codegen::backend::{Artifact, Backend};

use super::lock::Verdict;

use super::project::{self, Project};
use super::report::Level;
use super::{schema_paths, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: project::Args,
    /// Only this back end's files (default: every checked-in artifact).
    #[arg(long, value_enum)]
    pub lang: Option<Lang>,
}

/// The back ends whose output is checked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// `include/<format>/record_types.h`: structs, encoders, decoders and typed writers.
    C,
    /// `python/<format>.py` (formats with framing).
    Python,
    /// `golden/<format>.json`: known-value test vectors for the structs and union variants.
    Golden,
    /// `docs/formats/<format>.md`: the format's documentation (as `logspec doc`).
    Md,
}

impl Lang {
    pub const ALL: [Lang; 4] = [Lang::C, Lang::Python, Lang::Golden, Lang::Md];

    /// The kind of file the project file places.
    fn artifact(self) -> logspec::project::Artifact {
        use logspec::project::Artifact;
        match self {
            Lang::C => Artifact::C,
            Lang::Python => Artifact::Python,
            Lang::Golden => Artifact::Golden,
            Lang::Md => Artifact::Docs,
        }
    }

    fn backend(self) -> &'static dyn Backend {
        match self {
            Lang::C => &logspec::codegen::backend::c::CBackend,
            Lang::Python => &logspec::codegen::backend::python::PythonBackend,
            Lang::Golden => &logspec::codegen::backend::golden::GoldenBackend,
            Lang::Md => &logspec::codegen::backend::doc::DocBackend,
        }
    }
}

/// Every artifact that is generated into the tree and checked in, for every schema of the
/// project, at the place the project gives it (paths relative to its root). The generated files
/// name their schema relative to the root (`schemas/usvlog.toml`), so that the output does not
/// depend on where the project is checked out.
pub fn artifacts(project: &Project, langs: &[Lang]) -> Result<Vec<Artifact>, Error> {
    let paths = schema_paths(&project.schemas)?;
    let mut out = Vec::new();
    let mut failed = String::new();
    for p in &paths {
        let shown = super::lock::relative(p, &project.root);
        let source = std::fs::read_to_string(p).map_err(|e| Error::Input(format!("{shown}: {e}")))?;
        match logspec::codegen::compile_str(&shown, &source) {
            Ok(schema) => {
                if let Err(e) = logspec::codegen::backend::supported(&schema) {
                    failed.push_str(&format!("{shown}: {e}\n"));
                    continue;
                }
                // The Python module reads files of the lock's older schema ids too.
                let history = if langs.contains(&Lang::Python) { history(project, p, &schema)? } else { Vec::new() };
                for l in langs {
                    let generated = match l {
                        Lang::Python => {
                            logspec::codegen::backend::python::PythonBackend.generate_with_history(&schema, &history)
                        }
                        _ => l.backend().generate(&schema),
                    };
                    for a in generated {
                        if let Some(path) = project.place(l.artifact(), &schema.format.name, &a.path) {
                            out.push(Artifact { path, contents: a.contents });
                        }
                    }
                }
            }
            Err(e) => failed.push_str(&e.render()),
        }
    }
    if failed.is_empty() {
        Ok(out)
    } else {
        Err(Error::Input(format!("schema errors:\n{failed}")))
    }
}

/// The older layouts of a schema's lock file (none without one).
fn history(
    project: &Project,
    path: &std::path::Path,
    schema: &logspec::ir::ir::Schema,
) -> Result<Vec<logspec::ir::ir::Schema>, Error> {
    match super::lock::read_lock(project, path, schema)? {
        Some((lock_path, Some(l))) => logspec::ir::history::history(schema, &l)
            .map_err(|e| Error::Input(format!("{}: {e}", super::lock::relative(&lock_path, &project.root)))),
        _ => Ok(Vec::new()),
    }
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let project = args.project.resolve()?;
    let rep = args.project.reporter();
    if rep.schema_errors(&project)? {
        return Ok(ExitCode::from(1));
    }
    let langs = args.lang.as_ref().map_or(&Lang::ALL[..], std::slice::from_ref);
    let inputs = super::schema_paths(&project.schemas)?;
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    for a in artifacts(&project, langs)? {
        let path = project.root.join(&a.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(a.contents.as_str()) {
            rep.text(&format!("unchanged {}\n", a.path))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::Input(format!("{}: {e}", parent.display())))?;
        }
        logspec_engine::output::write_file(&path, &inputs, a.contents.as_bytes())?;
        rep.text(&format!("wrote     {}\n", a.path))?;
    }
    // The lock files: kept up to date for changes that break nothing; a breaking change under a
    // locked schema id is not recorded, and gets `check`'s verdict as a warning here.
    if args.lang.is_none() {
        for (path, schema) in super::lock::schemas(&project.schemas)? {
            if let Some((_, Some(l))) = super::lock::read_lock(&project, &path, &schema)? {
                if let Verdict::Unbumped { schema_id, id_name, breaking } = super::lock::verdict(Some(&l), &schema) {
                    super::lock::print_breaking(&path, &breaking);
                    eprintln!(
                        "logspec: {}: warning: breaking layout changes under unchanged {id_name} = {schema_id}; `logspec check` will fail until you bump {id_name} in the schema and run `logspec lock`",
                        path.display()
                    );
                    let fix = format!("breaking under unchanged {id_name} = {schema_id}: `logspec check` will fail until you bump {id_name} in the schema and run `logspec lock`");
                    rep.breaking(Level::Warning, &path, &breaking, &fix)?;
                    continue;
                }
            }
            super::lock::update(&project, &path, &schema, true, &rep)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
