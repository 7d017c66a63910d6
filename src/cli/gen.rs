//! `logspec gen`: regenerate the checked-in artifacts (C headers, format docs) from the schemas.

use std::path::Path;
use std::process::ExitCode;

use logspec::codegen::backend::{Artifact, Backend};

use super::{schema_paths, CliError, Project};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: Project,
}

/// Every artifact that is generated into the tree and checked in, for every schema in `dir`.
/// The generated files name their schema relative to `root` (`schemas/usvlog.toml`), so that the
/// output does not depend on where the project is checked out.
pub fn artifacts(dir: &Path, root: &Path) -> Result<Vec<Artifact>, CliError> {
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
                out.extend(logspec::codegen::backend::c::CBackend.generate(&schema));
                out.extend(logspec::codegen::backend::doc::DocBackend.generate(&schema));
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
    for a in artifacts(schemas, root)? {
        let path = root.join(&a.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(a.contents.as_str()) {
            println!("unchanged {}", a.path);
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::Input(format!("{}: {e}", parent.display())))?;
        }
        std::fs::write(&path, &a.contents).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        println!("wrote     {}", a.path);
    }
    Ok(ExitCode::SUCCESS)
}
