//! `logspec dump`: JSON Lines, one object per record, in file order.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use logspec::json::JsonWriter;
use logspec::runtime::{Event, FramedFormat, Reader, Visit, Visitor};

use super::{detect, open, shown, CliError, FormatKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    /// Skip format detection.
    #[arg(long, value_enum)]
    pub format: Option<FormatKind>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let input = open(&args.file)?;
    let (kind, input) = detect(&args.file, input, args.format)?;
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let result = match kind {
        FormatKind::Usvlog => dump_framed::<logspec::formats::usvlog::Usvlog>(input, &mut out, &shown(&args.file)),
    };
    match result.and_then(|code| out.flush().map(|_| code).map_err(Failure::Io)) {
        Ok(code) => Ok(code),
        // A closed pipe (`| head`) is how a reader says it has seen enough.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(Failure::Io(e)) => Err(CliError::Input(format!("writing output: {e}"))),
        Err(Failure::Input(m)) => Err(CliError::Input(m)),
    }
}

pub enum Failure {
    Io(io::Error),
    Input(String),
}

/// Dumps any framed format. Every complete record is printed; a record that fails to decode is
/// reported on stderr and skipped; a truncation or read error ends the dump with an error after
/// everything before it was printed.
pub fn dump_framed<F: FramedFormat>(
    input: impl io::Read,
    out: &mut impl Write,
    path: &str,
) -> Result<ExitCode, Failure> {
    let mut reader = Reader::<_, F>::new(input).map_err(|e| Failure::Input(format!("{path}: {e}")))?;
    let mut w = JsonWriter::new();
    let mut bad = 0u64;
    while let Some(ev) = reader.next_event() {
        match ev {
            Ok(Event::Record { raw, record }) => {
                w.begin_object(None);
                header_fields::<F>(&mut w, &raw);
                w.str(Some("name"), F::record_name(raw.header.tag).unwrap_or(""));
                record.visit(Some("fields"), &mut w);
                w.end_object();
            }
            Ok(Event::Unknown { raw }) => {
                w.begin_object(None);
                header_fields::<F>(&mut w, &raw);
                w.null(Some("name"));
                w.uint(Some(F::LENGTH_FIELD), raw.header.len);
                let mut hex = String::with_capacity(raw.payload.len() * 2);
                logspec::json::hex(&mut hex, raw.payload);
                w.str(Some("payload_hex"), &hex);
                w.end_object();
            }
            Err(e) if e.is_recoverable() => {
                eprintln!("logspec: {path}: {e}; skipped");
                bad += 1;
                continue;
            }
            Err(e) => return Err(Failure::Input(format!("{path}: {e}"))),
        }
        let mut line = w.take();
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(Failure::Io)?;
    }
    if bad > 0 {
        return Err(Failure::Input(format!("{path}: {bad} record(s) could not be decoded (see above)")));
    }
    Ok(ExitCode::SUCCESS)
}

fn header_fields<F: FramedFormat>(w: &mut JsonWriter, raw: &logspec::runtime::RawRecord<'_>) {
    if let (Some(name), Some(ts)) = (F::TIMESTAMP_FIELD, raw.header.timestamp) {
        w.uint(Some(name), ts);
    }
    w.uint(Some(F::TAG_FIELD), raw.header.tag);
}
