//! `logspec lock`: records the current wire layout of every schema in its lock file
//! (`schemas/<format>.lock`), keeping the layouts of older schema ids as history. Refuses to
//! overwrite the entry of a schema id with a breaking change: bump the schema id instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use logspec::codegen::ir::Schema;
use logspec::codegen::lock;

use super::{default_schemas, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The schema directory (every `*.toml` in it is compiled).
    #[arg(long, default_value_os_t = default_schemas())]
    pub schemas: PathBuf,
}

/// Every schema of `dir` with its path, compiled.
pub fn schemas(dir: &Path) -> Result<Vec<(PathBuf, Schema)>, CliError> {
    let mut out = Vec::new();
    for p in super::schema_paths(dir)? {
        let schema = logspec::codegen::compile_file(&p).map_err(|e| CliError::Input(e.render()))?;
        out.push((p, schema));
    }
    Ok(out)
}

/// The lock file next to a schema, and its parsed content if it exists.
pub fn read_lock(schema_path: &Path) -> Result<(PathBuf, Option<lock::Lock>), CliError> {
    lock::read_next_to(schema_path).map_err(CliError::Input)
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut refused = 0;
    for (path, schema) in schemas(&args.schemas)? {
        let (lock_path, current) = read_lock(&path)?;
        if let Some(l) = &current {
            let report = lock::check(l, &schema);
            if report.is_error() {
                for c in report.changes.iter().filter(|c| c.verdict == lock::Verdict::Breaking) {
                    eprintln!("logspec: {}: breaking: {}", path.display(), c.message);
                }
                eprintln!(
                    "logspec: {}: not locked: these changes break files written under schema id {}; bump the schema id first",
                    path.display(),
                    report.schema_id
                );
                refused += 1;
                continue;
            }
        }
        let name = path.display().to_string().replace('\\', "/");
        let name = name.strip_prefix("./").unwrap_or(&name);
        let text = lock::render(&lock::updated(current.as_ref(), &schema), name);
        let old = std::fs::read_to_string(&lock_path).unwrap_or_default();
        if old == text {
            println!("unchanged {}", lock_path.display());
        } else {
            super::output::write_file(&lock_path, &[&path], text.as_bytes())?;
            println!("wrote     {}", lock_path.display());
        }
    }
    Ok(if refused == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
