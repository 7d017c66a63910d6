//! `logspec doc`: a format's documentation, generated from its schema.

use std::path::PathBuf;
use std::process::ExitCode;

use super::Error;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The schema (`schemas/<format>.toml`).
    pub schema: PathBuf,
    /// Where to write the Markdown (standard output if not given).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let schema = logspec::codegen::compile_file(&args.schema).map_err(|e| Error::Input(e.render()))?;
    let text = logspec::codegen::backend::doc::markdown(&schema);
    match &args.output {
        Some(path) => logspec_engine::output::write_file(path, &[&args.schema], text.as_bytes())?,
        None => super::write_stdout(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}
