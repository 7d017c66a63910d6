//! WPILib struct and protobuf values in the tools: the [`TypeRegistry`] of an RLOG input filled
//! from its schema values, and the `decoded` / `decode_error` keys of `logspec dump`.
//!
//! Schema order: AdvantageScope decodes every value with every schema of the log, even one
//! written after the value. For a file, logspec does the same by reading the file's schemas
//! first (one extra pass that keeps only the schemas, so memory does not grow with the file);
//! standard input and live streams are read once, so a value that comes before its schema there
//! stays hex, with `decode_error` and a warning.

use std::collections::BTreeSet;

use crate::formats::rlog::{self, R2Value};
use crate::formats::wpistruct::TypeRegistry;
use crate::value::{Value, ValueSink};

use super::records::Records;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::fault::{Fault, FaultKind};
use super::scan::{Channel, JsonSchema, ValueType};

/// The bytes of an R2 value that carries bytes (raw, struct, proto, any other declared type).
pub fn rlog_bytes(v: &rlog::Value) -> Option<&[u8]> {
    match v {
        rlog::Value::R2(
            R2Value::Raw { value } | R2Value::Struct { value } | R2Value::Proto { value } | R2Value::Other { value },
        ) => Some(value),
        _ => None,
    }
}

/// Decodes a struct or proto value, warning once per type that does not decode. The warnings
/// wait in the decoder until the dump hands them on ([`Decoder::warnings_to`]).
pub struct Decoder {
    pub reg: TypeRegistry,
    warned: BTreeSet<String>,
    pub path: String,
    pending: Vec<String>,
}

impl Decoder {
    pub fn new(reg: TypeRegistry, path: &str) -> Self {
        Decoder { reg, warned: BTreeSet::new(), path: path.to_string(), pending: Vec::new() }
    }

    /// Hands the warnings gathered so far to the dump's output (the command prints
    /// `logspec: warning: ...`).
    pub fn warnings_to(&mut self, out: &mut impl Records) {
        for w in self.pending.drain(..) {
            out.warn(Fault::new(FaultKind::Decode, &self.path, w));
        }
    }

    /// Offers the value to the registry (a schema), then, for a struct or proto type, decodes
    /// it. `None` when the type is not decoded here.
    pub fn decode(&mut self, key: &str, type_name: &str, bytes: &[u8]) -> Option<Result<Value, String>> {
        self.reg.offer(key, type_name, bytes);
        for w in self.reg.take_warnings() {
            self.pending.push(format!("warning: {}: {w}", self.path));
        }
        if !TypeRegistry::decodes(type_name) {
            return None;
        }
        Some(self.reg.decode(type_name, bytes).map_err(|e| {
            if self.warned.insert(type_name.to_string()) {
                self.pending.push(format!(
                    "warning: {}: `{key}`: {e} (kept as hex; further values of this type are not reported)",
                    self.path
                ));
            }
            e.message
        }))
    }

    /// Writes `decoded` (the value) or `decode_error` (why not) for a struct or proto value.
    pub fn write_json(&mut self, w: &mut (impl ValueSink + ?Sized), key: &str, type_name: &str, bytes: &[u8]) {
        match self.decode(key, type_name, bytes) {
            Some(Ok(v)) => v.write_to(w, Some("decoded")),
            Some(Err(e)) => w.str(Some("decode_error"), &e),
            None => {}
        }
    }
}

/// The channel of a key of decoded WPILib struct or protobuf values: the JSON Schema of a
/// struct from its IR (enums as their names, as decoded), or of a protobuf message from its
/// descriptor.
pub fn struct_channel(schemas: &TypeRegistry, key: &str, type_name: &str) -> Channel {
    let name = type_name.strip_prefix("struct:").unwrap_or("");
    let (name, array) = match name.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (name, false),
    };
    let proto = type_name.strip_prefix("proto:").and_then(|p| schemas.proto_json_schema(p));
    let json_schema = match schemas.struct_ir(name) {
        _ if proto.is_some() => JsonSchema::Text(proto.unwrap_or_default()),
        Ok((l, id)) => JsonSchema::Struct {
            ty: ValueType { schema: Arc::new(l.schema.clone()), id },
            enum_names: true,
            list: array.then(|| type_name.to_string()),
        },
        Err(_) => {
            let mut title = String::new();
            crate::json::string(&mut title, type_name);
            JsonSchema::Text(format!(
                r#"{{"$schema":"https://json-schema.org/draft/2020-12/schema","title":{title},"type":"object"}}"#
            ))
        }
    };
    Channel {
        name: key.to_string(),
        schema_name: type_name.to_string(),
        json_schema,
        units: BTreeMap::new(),
        ros1: None,
        // Decoded struct values show enums by name and bit-fields as members, which is not the
        // shape of the struct's IR, so typed sinks get the values as JSON.
        ty: None,
        group: None,
    }
}
