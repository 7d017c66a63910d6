//! Verbs about the command line itself: shell completions and the Markdown reference.

use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, Error};

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn completions(args: CompletionsArgs) -> Result<ExitCode, Error> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "logspec", &mut out);
    super::write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The reference of every verb and option, as Markdown (`docs/cli.md`).
pub fn reference_markdown() -> String {
    let options = clap_markdown::MarkdownOptions::new().show_footer(false).show_table_of_contents(true);
    clap_markdown::help_markdown_custom::<Cli>(&options)
}

pub fn reference() -> Result<ExitCode, Error> {
    super::write_stdout(reference_markdown().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
