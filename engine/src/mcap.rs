//! A log as an MCAP file that Foxglove opens (`logspec convert FILE -o out.mcap`). Every channel
//! (record type, RLOG key, ...) becomes an MCAP channel of JSON messages with a JSON Schema
//! generated from the IR (field docs and units in the descriptions); the log time of a message
//! is the sample's timestamp. A ROS bag's messages are passed through as they are (`ros1`
//! messages, the connections' definitions as `ros1msg` schemas, the `ros1` profile), and so are
//! an MCAP file's ROS 2 messages (`cdr`, `ros2msg` schemas), so nothing is lost. Chunks are LZ4-compressed (or not) and indexed.

use std::collections::BTreeMap;
use std::io::BufWriter;
use std::path::Path;

use logspec::log::scan::JsonSchema;
use logspec::log::{Channel, Error, Log, Outcome, Samples, Select};
use logspec::value::Value;

use crate::output::OutFile;

/// What [`write()`] wrote.
#[derive(Debug)]
pub struct Written {
    /// The channels written.
    pub channels: usize,
    /// The scan's outcome: messages written, warnings, and the problem that ended the reading
    /// early (the file holds everything before it, and names it in its metadata).
    pub outcome: Outcome,
}

/// Writes the samples `select` keeps of the log at `file` (opened by `open`, once the output is
/// known not to be the input) to the MCAP file `output`, replacing it only when complete.
pub fn write(
    file: &Path,
    output: &Path,
    open: impl FnOnce() -> Result<Log, Error>,
    select: &Select,
    lz4: bool,
) -> Result<Written, Error> {
    let out_file = OutFile::create(output, &[file])?;
    let d = open()?;
    let path = d.shown();
    let title = d.format().title();
    let out_err = |e: &dyn std::fmt::Display| Error::Input(format!("{}: {e}", output.display()));
    let options = mcap::WriteOptions::new()
        .compression(lz4.then_some(mcap::Compression::Lz4))
        .profile(if d.passes_ros1() { "ros1" } else { "" })
        .library(concat!("logspec ", env!("CARGO_PKG_VERSION")));
    let writer = mcap::Writer::with_options(BufWriter::new(out_file), options).map_err(|e| out_err(&e))?;
    let mut sink = Mcap { writer, channels: Vec::new(), sequence: 0, out: output.display().to_string() };
    let outcome = d.scan(select, &mut sink)?;
    let mut meta = BTreeMap::new();
    meta.insert("format".to_string(), title.to_string());
    let source_name = file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    meta.insert("source".to_string(), source_name);
    if let Some(e) = &outcome.error {
        meta.insert("error".to_string(), e.clone());
    }
    sink.writer
        .write_metadata(&mcap::records::Metadata { name: "logspec".to_string(), metadata: meta })
        .map_err(|e| out_err(&e))?;
    sink.writer.finish().map_err(|e| out_err(&e))?;
    let channels = sink.channels.len();
    let done = sink.writer.into_inner().into_inner().map_err(|e| out_err(&e.error()))?;
    // Committed even when the input ended in a fault: everything before it is in the file.
    done.commit()?;
    Ok(Written { channels, outcome })
}

struct Mcap {
    writer: mcap::Writer<BufWriter<OutFile>>,
    /// MCAP channel id per source channel id, and whether it carries ROS messages as recorded.
    channels: Vec<(u16, bool)>,
    sequence: u32,
    out: String,
}

impl Samples for Mcap {
    fn channel(&mut self, _id: usize, channel: &Channel) -> Result<(), Error> {
        let out = &self.out;
        let err = |e: mcap::McapError| Error::Input(format!("{out}: {e}"));
        let topic = if channel.name.starts_with('/') { channel.name.clone() } else { format!("/{}", channel.name) };
        let id = match &channel.ros1 {
            Some(ros) => {
                let schema =
                    self.writer.add_schema(&ros.ty, ros.schema_encoding, ros.definition.as_bytes()).map_err(err)?;
                let mut meta = BTreeMap::new();
                if !ros.md5sum.is_empty() {
                    meta.insert("md5sum".to_string(), ros.md5sum.clone());
                }
                if let Some(c) = &ros.callerid {
                    meta.insert("callerid".to_string(), c.clone());
                }
                if let Some(l) = &ros.latching {
                    meta.insert("latching".to_string(), l.clone());
                }
                (self.writer.add_channel(schema, &topic, ros.encoding, &meta).map_err(err)?, true)
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

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        self.write(id, t_ns, value.to_json().as_bytes())
    }

    fn raw(&mut self, id: usize, t_ns: u64, bytes: &[u8]) -> Result<bool, Error> {
        if !self.channels[id].1 {
            return Ok(false);
        }
        self.write(id, t_ns, bytes)?;
        Ok(true)
    }
}

impl Mcap {
    fn write(&mut self, id: usize, t_ns: u64, data: &[u8]) -> Result<(), Error> {
        let header = mcap::records::MessageHeader {
            channel_id: self.channels[id].0,
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.writer.write_to_known_channel(&header, data).map_err(|e| Error::Input(format!("{}: {e}", self.out)))
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
