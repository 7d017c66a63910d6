//! The `logspec` command line: generate artifacts from schemas, and inspect, dump, export,
//! convert and plot log files. Argument parsing and printing over the library's `logspec::log`
//! and `logspec-engine`; the schema-project verbs and the RLOG live stream are its own.

#![forbid(unsafe_code)]
// The verbs' doc comments are clap's help text (`<format>` is a placeholder, not HTML).
#![allow(rustdoc::invalid_html_tags)]

use std::process::ExitCode;

use clap::Parser;

mod cli;

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
