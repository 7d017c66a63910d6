//! `logspec index`: the time index of each log, written beside it or in the cache directory.

use std::path::PathBuf;
use std::process::ExitCode;

use logspec_engine::index::{build, Built};

use super::Error;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log files, directories (searched for logs as `export --parquet` does) or glob patterns.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Index a log again even when its index is current.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub input: super::InputArgs,
}

/// Indexes each log in turn; a log that cannot be indexed is reported on stderr and the others
/// are still indexed (exit status 1).
pub fn run(args: Args) -> Result<ExitCode, Error> {
    let how = args.input.open();
    let found = logspec_engine::logs::find(&args.files, &how, None)?;
    let mut ok = found.not_logs.is_empty();
    for n in &found.not_logs {
        eprintln!("logspec: {}: not a log logspec reads: {}", n.file, n.reason);
    }
    for log in &found.logs {
        let shown = log.file.display();
        match build(&log.file, &how, args.force) {
            Ok(Built::Written { place, chunks }) => {
                super::progress::note(&format!("{shown}: {chunks} chunk(s), index written to {}", place.display()));
            }
            Ok(Built::Current { chunks }) => {
                super::progress::note(&format!("{shown}: {chunks} chunk(s), index current"));
            }
            Ok(Built::Own { chunks: Some(chunks) }) => {
                super::progress::note(&format!(
                    "{shown}: {chunks} chunk(s) in the log's own index; no index file is needed"
                ));
            }
            Ok(Built::Own { chunks: None }) => {
                super::progress::note(&format!(
                    "{shown}: no usable index of its own (none, cut short, or chunks that cannot each be read alone); scans read it whole"
                ));
            }
            Ok(Built::NoIndex) => {
                super::progress::note(&format!("{shown}: this format has no time index; scans read it whole"));
            }
            Err(e) => {
                ok = false;
                eprintln!("logspec: {e}");
            }
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
