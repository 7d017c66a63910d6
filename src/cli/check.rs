//! `logspec check`: fails when a checked-in generated file differs from what the schemas generate
//! now, printing a unified diff and the command that fixes it, or when a lock file does not record
//! the schema (a breaking change without a schema-id bump, or a lock that `logspec lock` would
//! change).

use std::process::ExitCode;

use super::lock::Verdict;
use super::project::{self, Project};
use super::report::{self, Diag, Level, Reporter};
use super::{gen, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub project: project::Args,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let project = args.project.resolve()?;
    let rep = args.project.reporter();
    if rep.schema_errors(&project)? {
        return Ok(ExitCode::from(1));
    }
    let mut stale = Vec::new();
    for a in gen::artifacts(&project, &gen::Lang::ALL)? {
        let path = project.root.join(&a.path);
        let on_disk = std::fs::read_to_string(&path).ok();
        let current = on_disk.clone().unwrap_or_default();
        if current == a.contents {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&current, &a.contents);
        let shown = diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{} (on disk)", a.path), &format!("b/{} (generated)", a.path))
            .to_string();
        rep.text(&shown)?;
        let mut d = Diag::file(
            Level::Error,
            rep.path(&path),
            report::STALE,
            "this file differs from what the schemas generate; run `logspec gen` to regenerate it (generated files must not be edited by hand)".to_string(),
        );
        match on_disk {
            Some(old) => d.line = report::first_difference(&old, &a.contents),
            None => d.message = "this generated file is missing; run `logspec gen` to write it".to_string(),
        }
        rep.emit(&d)?;
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
    failed |= check_locks(&project, &rep)?;
    if !failed {
        eprintln!("logspec: every generated file and lock file is up to date");
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Compares every schema with its lock file; true if something must be fixed.
fn check_locks(project: &Project, rep: &Reporter) -> Result<bool, Error> {
    let mut failed = false;
    for (path, schema) in super::lock::schemas(&project.schemas)? {
        let shown = path.display();
        let Some((lock_path, l)) = super::lock::read_lock(project, &path, &schema)? else { continue };
        let Some(l) = l else {
            eprintln!("logspec: {shown}: no lock file {}; run `logspec lock` to create it", lock_path.display());
            rep.emit(&Diag::file(
                Level::Error,
                rep.path(&path),
                report::LOCK_MISSING,
                format!("no lock file {}; run `logspec lock` to create it", rep.path(&lock_path)),
            ))?;
            failed = true;
            continue;
        };
        if let Err(e) = logspec::ir::history::history(&schema, &l) {
            eprintln!("logspec: {}: the history cannot be rebuilt: {e}", lock_path.display());
            rep.emit(&Diag::file(
                Level::Error,
                rep.path(&lock_path),
                report::LOCK_HISTORY,
                format!("the history cannot be rebuilt: {e}"),
            ))?;
            failed = true;
        }
        for c in &logspec::ir::lock::check(&l, &schema).changes {
            let v = match c.verdict {
                logspec::ir::lock::Verdict::Breaking => "breaking",
                logspec::ir::lock::Verdict::Compatible => "compatible",
            };
            rep.text(&format!("{shown}: {v}: {}\n", c.message))?;
        }
        match super::lock::verdict(Some(&l), &schema) {
            Verdict::Unbumped { schema_id, id_name, breaking } => {
                eprintln!(
                    "logspec: {shown}: error: breaking layout changes under unchanged {id_name} = {schema_id}; bump {id_name} in the schema, then run `logspec lock`",
                );
                let fix = format!(
                    "breaking under unchanged {id_name} = {schema_id}: bump {id_name} in the schema, then run `logspec lock`"
                );
                rep.breaking(Level::Error, &path, &breaking, &fix)?;
                failed = true;
            }
            Verdict::Stale => {
                eprintln!("logspec: {shown}: the lock file is out of date; run `logspec lock` and commit it");
                rep.emit(&Diag::file(
                    Level::Error,
                    rep.path(&lock_path),
                    report::LOCK_STALE,
                    "the lock file does not record the schema as it is; run `logspec lock` and commit it".to_string(),
                ))?;
                failed = true;
            }
            Verdict::Current => {}
        }
    }
    Ok(failed)
}
