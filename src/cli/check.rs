//! `logspec check`: fails when a checked-in generated file differs from what the schemas generate
//! now, printing a unified diff and the command that fixes it.

use std::process::ExitCode;

use super::{gen, CliError, Project};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: Project,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut stale = Vec::new();
    for a in gen::artifacts(&args.project.schemas, &args.project.root, &gen::Lang::ALL)? {
        let path = args.project.root.join(&a.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == a.contents {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&current, &a.contents);
        print!(
            "{}",
            diff.unified_diff()
                .context_radius(3)
                .header(&format!("a/{} (on disk)", a.path), &format!("b/{} (generated)", a.path))
        );
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
    failed |= check_locks(&args.project.schemas)?;
    if !failed {
        eprintln!("logspec: every generated file and lock file is up to date");
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Compares every schema with its lock file; true if something must be fixed.
fn check_locks(dir: &std::path::Path) -> Result<bool, CliError> {
    let mut failed = false;
    for (path, schema) in super::lock::schemas(dir)? {
        let shown = path.display();
        let (lock_path, l) = super::lock::read_lock(&path)?;
        let Some(l) = l else {
            eprintln!("logspec: {shown}: no lock file {}; run `logspec lock` to create it", lock_path.display());
            failed = true;
            continue;
        };
        if let Err(e) = logspec::codegen::history::history(&schema, &l) {
            eprintln!("logspec: {}: the history cannot be rebuilt: {e}", lock_path.display());
            failed = true;
        }
        let report = logspec::codegen::lock::check(&l, &schema);
        for c in &report.changes {
            let v = match c.verdict {
                logspec::codegen::lock::Verdict::Breaking => "breaking",
                logspec::codegen::lock::Verdict::Compatible => "compatible",
            };
            println!("{shown}: {v}: {}", c.message);
        }
        let id_name = schema.format.schema_id.as_ref().map_or("the schema id".to_string(), |s| s.macro_name.clone());
        if report.is_error() {
            eprintln!(
                "logspec: {shown}: error: breaking layout changes under unchanged {id_name} = {}; bump {id_name} in the schema, then run `logspec lock`",
                report.schema_id
            );
            failed = true;
        } else if report.lock_is_stale() {
            eprintln!("logspec: {shown}: the lock file is out of date; run `logspec lock` and commit it");
            failed = true;
        }
    }
    Ok(failed)
}
