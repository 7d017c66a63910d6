//! `logspec doc`: a format's documentation, generated from its schema.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::CliError;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The schema (`schemas/<format>.toml`).
    pub schema: PathBuf,
    /// Where to write the Markdown (standard output if not given).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let schema = logspec::codegen::compile_file(&args.schema).map_err(|e| CliError::Input(e.render()))?;
    let text = logspec::codegen::backend::doc::markdown(&schema);
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| CliError::Input(format!("{}: cannot write: {e}", path.display())))?
        }
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(CliError::Input(format!("writing output: {e}"))),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
