//! The `logspec` command line: generate artifacts from schemas, and inspect and dump log files.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("logspec: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
