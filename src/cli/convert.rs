//! `logspec convert FILE -o out.mcap`: any supported log as an MCAP file that Foxglove opens.
//! Every channel (record type, RLOG key, ...) becomes an MCAP channel of JSON messages with a
//! JSON Schema generated from the IR (field docs and units in the descriptions); the log time of
//! a message is the sample's timestamp. Chunks are LZ4-compressed and indexed.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use logspec::value::Value;

use super::export::SelectArgs;
use super::source::{self, Channel, Sink};
use super::{detect, open, shown, CliError};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  logspec convert timeseries.bin -o run.mcap   (then open run.mcap in Foxglove)\n  logspec convert robot.rlog -o robot.mcap --key '/RealOutputs/*'"
)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    /// The MCAP file to write.
    #[arg(short, long, value_name = "OUT.mcap")]
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

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let path = shown(&args.file);
    let d = detect(&args.file, open(&args.file)?, args.input.format)?;
    let kind = d.kind;
    let out_err = |e: &dyn std::fmt::Display| CliError::Input(format!("{}: {e}", args.output.display()));
    let file = File::create(&args.output).map_err(|e| out_err(&e))?;
    let options = mcap::WriteOptions::new()
        .compression(match args.compression {
            Compression::Lz4 => Some(mcap::Compression::Lz4),
            Compression::None => None,
        })
        .profile("")
        .library(concat!("logspec ", env!("CARGO_PKG_VERSION")));
    let writer = mcap::Writer::with_options(BufWriter::new(file), options).map_err(|e| out_err(&e))?;
    let mut sink = Mcap { writer, channels: Vec::new(), sequence: 0, out: args.output.display().to_string() };
    let outcome = source::read(d, &path, args.input.assume_r1, &args.select.select(), &mut sink)?;
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), kind.title().to_string());
    let source_name = args.file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    meta.insert("source".to_string(), source_name);
    if let Some(e) = &outcome.error {
        meta.insert("error".to_string(), e.clone());
    }
    sink.writer
        .write_metadata(&mcap::records::Metadata { name: "logspec".to_string(), metadata: meta })
        .map_err(|e| out_err(&e))?;
    sink.writer.finish().map_err(|e| out_err(&e))?;
    for w in &outcome.warnings {
        eprintln!("logspec: {w}");
    }
    super::progress::note(&format!(
        "wrote {} message(s) on {} channel(s) to {}",
        outcome.samples,
        sink.channels.len(),
        args.output.display()
    ));
    if let Some(e) = outcome.error {
        // Everything before the fault is in the file.
        return Err(CliError::Input(e));
    }
    Ok(ExitCode::SUCCESS)
}

struct Mcap {
    writer: mcap::Writer<BufWriter<File>>,
    /// MCAP channel id per source channel id.
    channels: Vec<u16>,
    sequence: u32,
    out: String,
}

impl Sink for Mcap {
    fn channel(&mut self, _id: usize, channel: &Channel) -> Result<(), CliError> {
        let err = |e: mcap::McapError| CliError::Input(format!("{}: {e}", self.out));
        let schema = self.writer.add_schema(&channel.schema_name, "jsonschema", channel.json_schema.as_bytes());
        let schema = schema.map_err(err)?;
        let topic = if channel.name.starts_with('/') { channel.name.clone() } else { format!("/{}", channel.name) };
        let id = self.writer.add_channel(schema, &topic, "json", &BTreeMap::new());
        let id = id.map_err(|e| CliError::Input(format!("{}: {e}", self.out)))?;
        self.channels.push(id);
        Ok(())
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), CliError> {
        let header = mcap::records::MessageHeader {
            channel_id: self.channels[id],
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.writer
            .write_to_known_channel(&header, value.to_json().as_bytes())
            .map_err(|e| CliError::Input(format!("{}: {e}", self.out)))
    }
}
