//! The flags of the project verbs (`gen`, `check`, `lock`, `diff`), which override the project
//! file `logspec.toml` ([`logspec::project`]).

use std::path::PathBuf;

pub use logspec::project::{template, tidy, Project, FILE};

use super::report::{MessageFormat, Reporter};
use super::Error;

/// The flags every project verb takes; each overrides the project file.
#[derive(clap::Args, Debug, Clone, Default)]
#[group(skip)]
pub struct Args {
    /// The schema directory (every `*.toml` in it is compiled) [default: `schemas` in
    /// logspec.toml, else `schemas/`].
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// The project root the generated files live under [default: the directory of logspec.toml,
    /// else the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The project file [default: logspec.toml in the current directory or the nearest one
    /// above it].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How to print the diagnostics (stale files, breaking changes, schema errors): `human` text,
    /// `github` Actions annotations or `json` Lines, one per diagnostic, on standard output (the
    /// text then goes to standard error); docs/output.md.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,
}

impl Args {
    /// The project these flags and the project file describe.
    pub fn resolve(&self) -> Result<Project, Error> {
        let o = logspec::project::Overrides {
            schemas: self.schemas.clone(),
            root: self.root.clone(),
            config: self.config.clone(),
        };
        o.resolve()
    }

    /// What prints the diagnostics, in the format asked for.
    pub fn reporter(&self) -> Reporter {
        Reporter::new(self.message_format)
    }
}
