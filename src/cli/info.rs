//! `logspec info`: what a log file is and what it holds.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{open, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log files (`-` for standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON object per file, one per line, instead of text (its keys per format:
    /// docs/output.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// ROS bag: a directory of `.msg` files for connections whose embedded definition is empty
    /// or does not match their md5sum; repeat for several.
    #[arg(long, value_name = "DIR")]
    pub msg_path: Vec<PathBuf>,
}

/// Summarises each file in turn. With several files, a file that cannot be read is reported on
/// stderr and the others are still summarised (text separated by a blank line; `--json` gives
/// one object per line); the exit status is 1 when any file had a problem.
pub fn run(args: Args) -> Result<ExitCode, Error> {
    if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(Error::Usage("standard input (`-`) can be read only once".into()));
    }
    // The notes on how a file was read (a bag scanned without its index) go to standard error
    // before its summary (or its error).
    let summary_of = |file: &Path| {
        let mut notes = Vec::new();
        let summary = one(file, &args, &mut notes);
        for n in notes {
            eprintln!("logspec: {n}");
        }
        summary
    };
    if args.files.len() == 1 {
        let (text, ok) = summary_of(&args.files[0])?;
        super::write_stdout(text.as_bytes())?;
        return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    let mut all_ok = true;
    for (i, file) in args.files.iter().enumerate() {
        match summary_of(file) {
            Ok((text, ok)) => {
                all_ok &= ok;
                let sep = if i > 0 && !args.json { "\n" } else { "" };
                super::write_stdout(format!("{sep}{text}").as_bytes())?;
            }
            Err(Error::Input(m)) => {
                all_ok = false;
                eprintln!("logspec: {m}");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The summary of one file (text or one JSON line) and whether the file read cleanly. Notes on
/// how the file was read, which do not make it fail, are pushed to `notes`.
fn one(file: &Path, args: &Args, notes: &mut Vec<String>) -> Result<(String, bool), Error> {
    let mut faults = Vec::new();
    let info = open(file, &args.input).and_then(|log| log.info(&args.msg_path, &mut faults));
    notes.extend(faults.into_iter().map(|f| f.message));
    let info = info?;
    Ok((if args.json { info.json() } else { info.text() }, info.ok))
}
