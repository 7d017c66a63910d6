//! `logspec dump`: JSON Lines, one object per record, in file order.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use logspec::log::records::Options;
use logspec::log::records::TwoThreads;
use logspec::log::JsonLines;

use super::{open, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// CARLA: only the packets of frames A..B (0-based frame ordinals, B excluded; `A..` and
    /// `..B` too), e.g. `--frames 0..3` for the first three frames.
    #[arg(long, value_name = "A..B", value_parser = logspec::log::parse_frames)]
    pub frames: Option<std::ops::Range<u64>>,
    #[command(flatten)]
    pub select: super::export::SelectArgs,
    /// ROS bag: a directory of `.msg` files (`<package>/msg/<Type>.msg`) for connections whose
    /// embedded definition is empty or does not match their md5sum; repeat for several.
    #[arg(long, value_name = "DIR")]
    pub msg_path: Vec<PathBuf>,
    /// ROS bag: messages in file order instead of time order.
    #[arg(long)]
    pub file_order: bool,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let opts = Options {
        frames: args.frames,
        select: args.select.select(),
        msg_path: args.msg_path,
        file_order: args.file_order,
    };
    let log = open(&args.file, &args.input)?;
    let read = if logspec::log::threads() > 1 {
        // The text made on two threads; every complete record is written, before an error too.
        TwoThreads::run(&mut io::stdout(), |lines| log.records(&opts, lines))
    } else {
        // `JsonLines` buffers the lines and writes them out in large writes.
        let mut out = io::stdout().lock();
        let mut lines = JsonLines::new(&mut out);
        let read = log.records(&opts, &mut lines);
        // Every complete record is printed, before an error too.
        let flushed = lines.flush().map_err(Error::Io);
        read.and(flushed)
    };
    match read {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // A closed pipe (`| head`) is how a reader says it has seen enough.
        Err(Error::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e),
    }
}
