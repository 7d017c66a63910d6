//! `logspec check`: fails when a checked-in generated file differs from what the schemas generate
//! now, printing a unified diff and the command that fixes it, or when a lock file does not record
//! the schema (a breaking change without a schema-id bump, or a lock that `logspec lock` would
//! change).

use std::process::ExitCode;

use super::lock::Verdict;
use super::project::{self, Project};
use super::{gen, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: project::Args,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let project = args.project.resolve()?;
    let mut stale = Vec::new();
    for a in gen::artifacts(&project, &gen::Lang::ALL)? {
        let path = project.root.join(&a.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == a.contents {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&current, &a.contents);
        let shown = diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{} (on disk)", a.path), &format!("b/{} (generated)", a.path))
            .to_string();
        super::write_stdout(shown.as_bytes())?;
        stale.push(a.path);
    }
    let mut failed = !stale.is_empty();
    if failed {
        eprintln!(
            "logspec: {} generated file(s) differ from the schemas: {}\nlogspec: run `logspec gen` to regenerate them (generated files must not be edited by hand)",
            stale.len(),
            stale.join(", ")
        );
    }
    failed |= check_locks(&project)?;
    if !failed {
        eprintln!("logspec: every generated file and lock file is up to date");
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Compares every schema with its lock file; true if something must be fixed.
fn check_locks(project: &Project) -> Result<bool, CliError> {
    let mut failed = false;
    for (path, schema) in super::lock::schemas(&project.schemas)? {
        let shown = path.display();
        let Some((lock_path, l)) = super::lock::read_lock(project, &path, &schema)? else { continue };
        let Some(l) = l else {
            eprintln!("logspec: {shown}: no lock file {}; run `logspec lock` to create it", lock_path.display());
            failed = true;
            continue;
        };
        if let Err(e) = logspec::ir::history::history(&schema, &l) {
            eprintln!("logspec: {}: the history cannot be rebuilt: {e}", lock_path.display());
            failed = true;
        }
        for c in &logspec::ir::lock::check(&l, &schema).changes {
            let v = match c.verdict {
                logspec::ir::lock::Verdict::Breaking => "breaking",
                logspec::ir::lock::Verdict::Compatible => "compatible",
            };
            outln!("{shown}: {v}: {}", c.message);
        }
        match super::lock::verdict(Some(&l), &schema) {
            Verdict::Unbumped { schema_id, id_name, .. } => {
                eprintln!(
                    "logspec: {shown}: error: breaking layout changes under unchanged {id_name} = {schema_id}; bump {id_name} in the schema, then run `logspec lock`",
                );
                failed = true;
            }
            Verdict::Stale => {
                eprintln!("logspec: {shown}: the lock file is out of date; run `logspec lock` and commit it");
                failed = true;
            }
            Verdict::Current => {}
        }
    }
    Ok(failed)
}
