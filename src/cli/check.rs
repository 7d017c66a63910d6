//! `logspec check`: fails when a checked-in generated file differs from what the schemas generate
//! now, printing a unified diff and the command that fixes it.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{default_schemas, gen, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The schema directory (every `*.toml` in it is compiled).
    #[arg(long, default_value_os_t = default_schemas())]
    pub schemas: PathBuf,
    /// The project root the artifacts live under.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut stale = Vec::new();
    for a in gen::artifacts(&args.schemas, &args.root)? {
        let path = args.root.join(&a.path);
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
    if stale.is_empty() {
        eprintln!("logspec: every generated file is up to date");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "logspec: {} generated file(s) differ from the schemas: {}\nlogspec: run `logspec gen` to regenerate them (generated files must not be edited by hand)",
        stale.len(),
        stale.join(", ")
    );
    Ok(ExitCode::from(1))
}
