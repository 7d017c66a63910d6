//! `logspec gen`: regenerate the checked-in artifacts (C headers) from the schemas.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::codegen::backend::{Artifact, Backend};

use super::{default_schemas, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The schema directory (every `*.toml` in it is compiled).
    #[arg(long, default_value_os_t = default_schemas())]
    pub schemas: PathBuf,
    /// The project root the artifacts are written under.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Print what would change, write nothing, and exit 1 if anything is stale.
    #[arg(long)]
    pub check: bool,
}

/// Every artifact that is generated into the tree and checked in, for every schema in `dir`.
/// The generated files name their schema relative to `root` (`schemas/usvlog.toml`), so that the
/// output does not depend on where the project is checked out.
pub fn artifacts(dir: &Path, root: &Path) -> Result<Vec<Artifact>, CliError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::Usage(format!("{}: cannot list schemas: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(CliError::Usage(format!("{}: no *.toml schemas found", dir.display())));
    }
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
            Ok(schema) => out.extend(logspec::codegen::backend::c::CBackend.generate(&schema)),
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
    let mut stale = 0;
    for a in artifacts(&args.schemas, &args.root)? {
        let path = args.root.join(&a.path);
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(a.contents.as_str()) {
            println!("unchanged {}", a.path);
            continue;
        }
        stale += 1;
        if args.check {
            println!("stale     {}", a.path);
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::Input(format!("{}: {e}", parent.display())))?;
        }
        std::fs::write(&path, &a.contents).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        println!("wrote     {}", a.path);
    }
    if args.check && stale > 0 {
        eprintln!("logspec: {stale} generated file(s) are stale; run `logspec gen`");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
