//! Protobuf values (`proto:X`), decoded with `prost-reflect` through the
//! `proto:FileDescriptorProto` values of the log. The shape is protobufjs's
//! `toObject(message, {defaults: true})`, as AdvantageScope shows it: every field of the message
//! type by its declared name; an unset message field is `null`, an unset scalar its default;
//! enums are numbers; repeated fields are arrays; maps are objects keyed by the key's text.

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, ReflectMessage};
use prost_types::FileDescriptorProto;

use crate::value::Value;

/// The descriptor pool of a log, and the files that wait for a dependency not seen yet.
#[derive(Default)]
pub struct Protos {
    pool: DescriptorPool,
    pending: Vec<FileDescriptorProto>,
}

impl Protos {
    /// Adds one serialized `FileDescriptorProto`. A file whose dependencies are not in the pool
    /// yet waits for them (bounded by [`super::MAX_PENDING_PROTOS`]); a file already present is
    /// ignored (the first definition wins).
    pub fn add(&mut self, bytes: &[u8]) -> Result<(), String> {
        let file = FileDescriptorProto::decode(bytes).map_err(|e| format!("not a FileDescriptorProto: {e}"))?;
        check_syntax(&file)?;
        if self.pool.get_file_by_name(file.name()).is_some() || self.pending.iter().any(|p| p.name == file.name) {
            return Ok(());
        }
        if self.pending.len() >= super::MAX_PENDING_PROTOS {
            return Err(format!(
                "more than {} protobuf files wait for dependencies; `{}` is ignored",
                super::MAX_PENDING_PROTOS,
                file.name()
            ));
        }
        self.pending.push(file);
        // Add every waiting file whose dependencies are all present, until none can be added.
        loop {
            let ready =
                self.pending.iter().position(|f| f.dependency.iter().all(|d| self.pool.get_file_by_name(d).is_some()));
            let Some(i) = ready else { break };
            let f = self.pending.swap_remove(i);
            let name = f.name().to_string();
            // On an error the pool rolls back what it added of the file.
            self.pool.add_file_descriptor_proto(f).map_err(|e| format!("protobuf file `{name}` is not valid: {e}"))?;
        }
        Ok(())
    }

    /// Decodes a message of the full name `name` (`wpi.proto.ProtobufPose2d`).
    pub fn decode(&self, name: &str, bytes: &[u8]) -> Result<Value, String> {
        let Some(desc) = self.pool.get_message_by_name(name) else {
            let waiting = self.pending.iter().any(|f| {
                let pkg = f.package();
                f.message_type.iter().any(|m| {
                    let full = if pkg.is_empty() { m.name().to_string() } else { format!("{pkg}.{}", m.name()) };
                    full == name
                })
            });
            return Err(if waiting {
                format!("Schema not defined: the file that defines `{name}` waits for a dependency not seen")
            } else {
                format!("Schema not defined: no FileDescriptorProto defines `{name}`")
            });
        };
        let msg = DynamicMessage::decode(desc, bytes).map_err(|e| format!("not a valid `{name}` message: {e}"))?;
        Ok(message(&msg))
    }
}

/// Refuses a file whose `syntax` is neither absent, `proto2` nor `proto3`: prost-reflect 0.16.5
/// panics on any other (its error for an unknown syntax labels the file before adding it, an
/// index past the end of its file list, `descriptor/build/names.rs`), so such a file must not
/// reach it. Found by the `wpilog` fuzz target: `fuzz/corpus/wpilog/` holds the input.
fn check_syntax(file: &FileDescriptorProto) -> Result<(), String> {
    match file.syntax.as_deref() {
        None | Some("proto2") | Some("proto3") => Ok(()),
        Some(other) => Err(format!(
            "protobuf file `{}` is not valid: unknown syntax {other:?} (expected \"proto2\" or \"proto3\")",
            file.name()
        )),
    }
}

fn message(m: &DynamicMessage) -> Value {
    let desc = m.descriptor();
    let mut out = Vec::new();
    for f in desc.fields() {
        let v = if f.is_list() || f.is_map() || m.has_field(&f) || !matches!(f.kind(), prost_reflect::Kind::Message(_))
        {
            value(&m.get_field(&f))
        } else {
            Value::Null
        };
        out.push((f.name().to_string(), v));
    }
    Value::Object(out)
}

fn value(v: &prost_reflect::Value) -> Value {
    use prost_reflect::Value as P;
    match v {
        P::Bool(b) => Value::Bool(*b),
        P::I32(i) => Value::Int(i64::from(*i)),
        P::I64(i) => Value::Int(*i),
        P::U32(u) => Value::UInt(u64::from(*u)),
        P::U64(u) => Value::UInt(*u),
        P::F32(f) => Value::Float(f64::from(*f)),
        P::F64(f) => Value::Float(*f),
        P::String(s) => Value::Str(s.clone()),
        P::Bytes(b) => Value::Bytes(b.to_vec()),
        P::EnumNumber(n) => Value::Int(i64::from(*n)),
        P::Message(m) => message(m),
        P::List(items) => Value::Array(items.iter().map(value).collect()),
        P::Map(map) => {
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        MapKey::Bool(b) => b.to_string(),
                        MapKey::I32(i) => i.to_string(),
                        MapKey::I64(i) => i.to_string(),
                        MapKey::U32(u) => u.to_string(),
                        MapKey::U64(u) => u.to_string(),
                        MapKey::String(s) => s.clone(),
                    };
                    (key, value(v))
                })
                .collect();
            // Map order on the wire is not meaningful; sorted keys make output deterministic.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries)
        }
    }
}

impl Protos {
    /// The JSON Schema (draft 2020-12) of the values [`Protos::decode`] gives for message `name`,
    /// as JSON text; `None` when no descriptor defines it. Recursive message types are cut at a
    /// depth of 16 (deeper levels are any object).
    pub fn json_schema(&self, name: &str) -> Option<String> {
        let desc = self.pool.get_message_by_name(name)?;
        let mut out = String::from("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":");
        crate::json::string(&mut out, &format!("proto:{name}"));
        out.push(',');
        message_schema(&desc, 0, &mut out);
        out.push('}');
        Some(out)
    }
}

/// `"type":"object","properties":{...}` of a message type.
fn message_schema(desc: &prost_reflect::MessageDescriptor, depth: usize, out: &mut String) {
    out.push_str("\"type\":\"object\"");
    if depth >= 16 {
        return;
    }
    out.push_str(",\"properties\":{");
    for (i, f) in desc.fields().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::json::string(out, f.name());
        out.push_str(":{");
        if f.is_map() {
            out.push_str("\"type\":\"object\",\"additionalProperties\":{");
            if let prost_reflect::Kind::Message(entry) = f.kind() {
                kind_schema(&entry.map_entry_value_field().kind(), depth, out);
            }
            out.push('}');
        } else if f.is_list() {
            out.push_str("\"type\":\"array\",\"items\":{");
            kind_schema(&f.kind(), depth, out);
            out.push('}');
        } else if let prost_reflect::Kind::Message(m) = f.kind() {
            // An unset message field is `null`.
            out.push_str("\"anyOf\":[{\"type\":\"null\"},{");
            message_schema(&m, depth + 1, out);
            out.push_str("}]");
        } else {
            kind_schema(&f.kind(), depth, out);
        }
        out.push('}');
    }
    out.push('}');
}

fn kind_schema(kind: &prost_reflect::Kind, depth: usize, out: &mut String) {
    use prost_reflect::Kind as K;
    match kind {
        K::Double | K::Float => {
            out.push_str("\"anyOf\":[{\"type\":\"number\"},{\"enum\":[\"NaN\",\"Infinity\",\"-Infinity\"]}]")
        }
        K::Bool => out.push_str("\"type\":\"boolean\""),
        K::String => out.push_str("\"type\":\"string\""),
        K::Bytes => out.push_str("\"type\":\"string\",\"contentEncoding\":\"base16\""),
        K::Message(m) => message_schema(m, depth + 1, out),
        // Integers of every width, and enums (as their numbers).
        _ => out.push_str("\"type\":\"integer\""),
    }
}
