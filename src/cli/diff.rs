//! `logspec diff --against <git-ref>`: classifies every change of the schemas since a git
//! revision (compatible / breaking / cosmetic), one line per change; exits 1 on a breaking change
//! without a schema-id bump. Meant for pull-request CI.

use std::path::Path;
use std::process::{Command, ExitCode};

use logspec::ir::ir::{Schema, TypeDef};
use logspec::ir::lock::{self, Verdict};

use super::report::Level;
use super::{project, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The git revision to compare with (a branch, tag or commit).
    #[arg(long)]
    pub against: String,
    #[command(flatten)]
    pub project: project::Args,
}

/// The text of `path` at `rev`, or `None` if the file did not exist there.
fn git_show(rev: &str, path: &Path) -> Result<Option<String>, Error> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["show", &format!("{rev}:./{name}")])
        .output()
        .map_err(|e| Error::Usage(format!("cannot run git: {e}")))?;
    if out.status.success() {
        return Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("does not exist") || err.contains("exists on disk, but not in") {
        Ok(None)
    } else {
        Err(Error::Usage(format!("git show {rev}:{}: {}", path.display(), err.trim())))
    }
}

/// Doc and unit changes, which the wire never sees.
fn cosmetic(old: &Schema, new: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for r in &new.records {
        let Some(o) = old.records.iter().find(|x| x.name == r.name) else { continue };
        if o.doc != r.doc {
            out.push(format!("{}: doc changed", r.name));
        }
        let (TypeDef::Struct(os), TypeDef::Struct(ns)) = (old.ty(o.body), new.ty(r.body)) else { continue };
        for f in &ns.fields {
            let Some(of) = os.fields.iter().find(|x| x.name == f.name && !f.is_padding()) else { continue };
            if of.doc != f.doc {
                out.push(format!("{}: field `{}` doc changed", r.name, f.name));
            }
            if of.unit != f.unit {
                out.push(format!(
                    "{}: field `{}` unit changed from {} to {}",
                    r.name,
                    f.name,
                    of.unit.as_deref().unwrap_or("none"),
                    f.unit.as_deref().unwrap_or("none")
                ));
            }
        }
    }
    out
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let project = args.project.resolve()?;
    let rep = args.project.reporter();
    if rep.schema_errors(&project)? {
        return Ok(ExitCode::from(1));
    }
    let mut failed = false;
    for (path, new) in super::lock::schemas(&project.schemas)? {
        let shown = path.display().to_string();
        let Some(old_text) = git_show(&args.against, &path)? else {
            rep.text(&format!("{shown}: compatible: new schema (not in {})\n", args.against))?;
            continue;
        };
        let old = logspec::codegen::compile_str(&shown, &old_text)
            .map_err(|e| Error::Input(format!("{shown} at {}:\n{}", args.against, e.render())))?;
        let report = lock::check(&lock::updated(None, &old), &new);
        let cosmetic = cosmetic(&old, &new);
        if report.changes.is_empty() && cosmetic.is_empty() {
            // Silence would look like a failure to run; say what was compared.
            rep.text(&format!("{shown}: no schema changes since {}\n", args.against))?;
        }
        for c in &report.changes {
            let v = match c.verdict {
                Verdict::Breaking => "breaking",
                Verdict::Compatible => "compatible",
            };
            rep.text(&format!("{shown}: {v}: {}\n", c.message))?;
        }
        for c in cosmetic {
            rep.text(&format!("{shown}: cosmetic: {c}\n"))?;
        }
        let id = new.format.schema_id.as_ref().map_or("the schema id".to_string(), |s| s.macro_name.clone());
        if report.is_error() {
            eprintln!("logspec: {shown}: breaking changes since {} without a bump of {id}; bump it", args.against);
            let fix = format!("breaking since {} under unchanged {id} = {}: bump {id}", args.against, report.schema_id);
            rep.breaking(Level::Error, &path, &report.changes, &fix)?;
            failed = true;
        } else if report.against.is_some() && !report.id_locked {
            rep.text(&format!("{shown}: {id} bumped to {}\n", report.schema_id))?;
        }
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
