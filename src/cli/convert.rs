//! `logspec convert FILE -o out.mcap` (`logspec_engine::mcap`): any supported log as an MCAP file
//! that Foxglove opens (`-o out.wpilog` writes an RLOG file as a WPILib DataLog instead:
//! `Log::to_wpilog`).
//! Every channel (record type, RLOG key, ...) becomes an MCAP channel of JSON messages with a
//! JSON Schema generated from the IR (field docs and units in the descriptions); the log time of
//! a message is the sample's timestamp. A ROS bag's messages are passed through as they are
//! (`ros1` messages, the connections' definitions as `ros1msg` schemas, the `ros1` profile), so
//! nothing is lost. Chunks are LZ4-compressed and indexed.

use std::path::PathBuf;
use std::process::ExitCode;

use super::export::SelectArgs;
use super::{open, Error};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "A ROS bag's messages are written as recorded (`ros1` messages, `ros1msg` schemas, the `ros1` profile); other formats become JSON messages with a JSON Schema from the format's schema.\n\nExamples:\n  logspec convert timeseries.bin -o run.mcap   (then open run.mcap in Foxglove)\n  logspec convert robot.rlog -o robot.mcap --key '/RealOutputs/*'\n  logspec convert run.bag -o run.mcap --topic /imu --since 10\n  logspec convert robot.rlog -o robot.wpilog   (RLOG as a WPILib DataLog: one entry per key)"
)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    /// The file to write: MCAP, or (for an RLOG input) `.wpilog`, WPILib's DataLog format.
    #[arg(short, long, value_name = "OUT.mcap|OUT.wpilog")]
    pub output: PathBuf,
    /// Chunk compression.
    #[arg(long, value_enum, default_value_t = Compression::Lz4)]
    pub compression: Compression,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub input: super::InputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    Lz4,
    None,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    if args.output.extension().is_some_and(|x| x.eq_ignore_ascii_case("wpilog")) {
        logspec_engine::output::refuse_input(&args.output, &[&args.file])?;
        let w = open(&args.file, &args.input)?.to_wpilog(&args.output, &args.select.select())?;
        for w in &w.warnings {
            eprintln!("logspec: {w}");
        }
        super::progress::note(&w.note);
        return match w.error {
            // Everything before the fault is in the file.
            Some(e) => Err(Error::Input(e)),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let lz4 = args.compression == Compression::Lz4;
    let log = || open(&args.file, &args.input);
    let w = logspec_engine::mcap::write(&args.file, &args.output, log, &args.select.select(), lz4)?;
    for w in &w.outcome.warnings {
        eprintln!("logspec: {w}");
    }
    super::progress::note(&format!(
        "wrote {} message(s) on {} channel(s) to {}",
        w.outcome.samples,
        w.channels,
        args.output.display()
    ));
    match w.outcome.error {
        // Everything before the fault is in the file.
        Some(e) => Err(Error::Input(e)),
        None => Ok(ExitCode::SUCCESS),
    }
}
