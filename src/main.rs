//! The `logspec` command line: generate artifacts from schemas, and inspect and dump log files.

#![forbid(unsafe_code)]
use std::process::ExitCode;

use clap::Parser;
use logspec_cli::cli;

fn main() -> ExitCode {
    // A panic is a bug of logspec, not of the input: one line that says so, no backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("logspec: internal error: {info}; please report it with the command that caused it");
    }));
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("logspec: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
