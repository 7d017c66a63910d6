//! `logspec convert FILE -o out.mcap`: any supported log as an MCAP file that Foxglove opens
//! (`-o out.wpilog` writes an RLOG file as a WPILib DataLog instead: `super::wpilog::convert`).
//! Every channel (record type, RLOG key, ...) becomes an MCAP channel of JSON messages with a
//! JSON Schema generated from the IR (field docs and units in the descriptions); the log time of
//! a message is the sample's timestamp. A ROS bag's messages are passed through as they are
//! (`ros1` messages, the connections' definitions as `ros1msg` schemas, the `ros1` profile), so
//! nothing is lost. Chunks are LZ4-compressed and indexed.

use std::collections::BTreeMap;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use logspec::value::Value;

use super::export::SelectArgs;
use super::output::OutFile;
use logspec::log::scan::JsonSchema;
use logspec::log::{Channel, Sink};

use super::{open, shown, CliError};

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

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let path = shown(&args.file);
    let file = OutFile::create(&args.output, &[&args.file])?;
    let d = open(&args.file, &args.input)?;
    if args.output.extension().is_some_and(|x| x.eq_ignore_ascii_case("wpilog")) {
        drop(file);
        let w = d.to_wpilog(&args.output, &args.select.select())?;
        for w in &w.warnings {
            eprintln!("logspec: {w}");
        }
        super::progress::note(&w.note);
        return match w.error {
            // Everything before the fault is in the file.
            Some(e) => Err(CliError::Input(e)),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let title = d.format().title();
    let out_err = |e: &dyn std::fmt::Display| CliError::Input(format!("{}: {e}", args.output.display()));
    let options = mcap::WriteOptions::new()
        .compression(match args.compression {
            Compression::Lz4 => Some(mcap::Compression::Lz4),
            Compression::None => None,
        })
        .profile(if d.passes_ros1() { "ros1" } else { "" })
        .library(concat!("logspec ", env!("CARGO_PKG_VERSION")));
    let writer = mcap::Writer::with_options(BufWriter::new(file), options).map_err(|e| out_err(&e))?;
    let mut sink = Mcap { writer, channels: Vec::new(), sequence: 0, out: args.output.display().to_string() };
    let outcome = d.scan(&args.select.select(), &mut sink)?;
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), title.to_string());
    let source_name = args.file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    meta.insert("source".to_string(), source_name);
    if let Some(e) = &outcome.error {
        meta.insert("error".to_string(), e.clone());
    }
    sink.writer
        .write_metadata(&mcap::records::Metadata { name: "logspec".to_string(), metadata: meta })
        .map_err(|e| out_err(&e))?;
    sink.writer.finish().map_err(|e| out_err(&e))?;
    let file = sink.writer.into_inner().into_inner().map_err(|e| out_err(&e.error()))?;
    // Committed even when the input ended in a fault: everything before it is in the file.
    file.commit()?;
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
    writer: mcap::Writer<BufWriter<OutFile>>,
    /// MCAP channel id per source channel id, and whether it carries ROS messages as recorded.
    channels: Vec<(u16, bool)>,
    sequence: u32,
    out: String,
}

impl Sink for Mcap {
    fn channel(&mut self, _id: usize, channel: &Channel) -> Result<(), CliError> {
        let out = &self.out;
        let err = |e: mcap::McapError| CliError::Input(format!("{out}: {e}"));
        let topic = if channel.name.starts_with('/') { channel.name.clone() } else { format!("/{}", channel.name) };
        let id = match &channel.ros1 {
            Some(ros) => {
                let schema = self.writer.add_schema(&ros.ty, "ros1msg", ros.definition.as_bytes()).map_err(err)?;
                let mut meta = BTreeMap::new();
                meta.insert("md5sum".to_string(), ros.md5sum.clone());
                if let Some(c) = &ros.callerid {
                    meta.insert("callerid".to_string(), c.clone());
                }
                if let Some(l) = &ros.latching {
                    meta.insert("latching".to_string(), l.clone());
                }
                (self.writer.add_channel(schema, &topic, "ros1", &meta).map_err(err)?, true)
            }
            None => {
                let text = json_schema_text(&channel.json_schema);
                let schema = self.writer.add_schema(&channel.schema_name, "jsonschema", text.as_bytes());
                let schema = schema.map_err(err)?;
                (self.writer.add_channel(schema, &topic, "json", &BTreeMap::new()).map_err(err)?, false)
            }
        };
        self.channels.push(id);
        Ok(())
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), CliError> {
        self.write(id, t_ns, value.to_json().as_bytes())
    }

    fn raw(&mut self, id: usize, t_ns: u64, bytes: &[u8]) -> Result<bool, CliError> {
        if !self.channels[id].1 {
            return Ok(false);
        }
        self.write(id, t_ns, bytes)?;
        Ok(true)
    }
}

impl Mcap {
    fn write(&mut self, id: usize, t_ns: u64, data: &[u8]) -> Result<(), CliError> {
        let header = mcap::records::MessageHeader {
            channel_id: self.channels[id].0,
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.writer.write_to_known_channel(&header, data).map_err(|e| CliError::Input(format!("{}: {e}", self.out)))
    }
}

/// A channel's JSON Schema as text: the JSON Schema back end's for an IR struct.
fn json_schema_text(s: &JsonSchema) -> String {
    use logspec::codegen::backend::jsonschema::{struct_schema_with, type_schema, Opts};
    match s {
        JsonSchema::Text(t) => t.clone(),
        JsonSchema::Struct { ty, enum_names, list: None } => {
            struct_schema_with(&ty.schema, ty.id, Opts { enum_names: *enum_names })
        }
        JsonSchema::Struct { ty, enum_names, list: Some(name) } => {
            let items = type_schema(&ty.schema, &logspec::ir::ir::Ty::Named(ty.id), Opts { enum_names: *enum_names });
            let mut title = String::new();
            logspec::json::string(&mut title, name);
            format!(
                r#"{{"$schema":"https://json-schema.org/draft/2020-12/schema","title":{title},"type":"object","properties":{{"value":{{"type":"array","items":{items}}}}},"required":["value"]}}"#
            )
        }
    }
}
