//! `logspec gen`: regenerate the checked-in artifacts (C headers, Python modules, golden vectors, format docs)
//! from the schemas.

use std::path::Path;
use std::process::ExitCode;

use logspec::codegen::backend::{Artifact, Backend};

use super::{schema_paths, CliError, Project};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: Project,
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

    fn backend(self) -> &'static dyn Backend {
        match self {
            Lang::C => &logspec::codegen::backend::c::CBackend,
            Lang::Python => &logspec::codegen::backend::python::PythonBackend,
            Lang::Golden => &logspec::codegen::backend::golden::GoldenBackend,
            Lang::Md => &logspec::codegen::backend::doc::DocBackend,
        }
    }
}

/// Every artifact that is generated into the tree and checked in, for every schema in `dir`.
/// The generated files name their schema relative to `root` (`schemas/usvlog.toml`), so that the
/// output does not depend on where the project is checked out.
pub fn artifacts(dir: &Path, root: &Path, langs: &[Lang]) -> Result<Vec<Artifact>, CliError> {
    let paths = schema_paths(dir)?;
    let mut out = Vec::new();
    let mut failed = String::new();
    for p in &paths {
        let rel = match (p.canonicalize(), root.canonicalize()) {
            (Ok(a), Ok(r)) => a.strip_prefix(&r).map(Path::to_path_buf).unwrap_or_else(|_| p.clone()),
            _ => p.clone(),
        };
        let shown = rel.display().to_string().replace('\\', "/");
        let source = std::fs::read_to_string(p).map_err(|e| CliError::Input(format!("{shown}: {e}")))?;
        match logspec::codegen::compile_str(&shown, &source) {
            Ok(schema) => {
                for l in langs {
                    out.extend(l.backend().generate(&schema));
                }
            }
            Err(e) => failed.push_str(&e.render()),
        }
    }
    if failed.is_empty() {
        Ok(out)
    } else {
        Err(CliError::Input(format!("schema errors:\n{failed}")))
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Project { schemas, root } = &args.project;
    let langs = args.lang.as_ref().map_or(&Lang::ALL[..], std::slice::from_ref);
    let inputs = super::schema_paths(schemas)?;
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    for a in artifacts(schemas, root, langs)? {
        let path = root.join(&a.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(a.contents.as_str()) {
            println!("unchanged {}", a.path);
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::Input(format!("{}: {e}", parent.display())))?;
        }
        super::output::write_file(&path, &inputs, a.contents.as_bytes())?;
        println!("wrote     {}", a.path);
    }
    Ok(ExitCode::SUCCESS)
}
