//! WPILib struct (`struct:X`, `struct:X[]`) and protobuf (`proto:X`) values, decoded through the
//! schemas the log itself carries: `/.schema/struct:X` entries (compiled by the struct-schema
//! front end, `logspec_ir::wpistruct`, into the IR and walked by [`value`]) and
//! `proto:FileDescriptorProto` entries (a `prost_reflect` descriptor pool).
//!
//! A [`TypeRegistry`] is fed every value of a log with [`TypeRegistry::offer`]; it keeps the
//! schemas, and [`TypeRegistry::decode`] turns a value into a [`Value`] tree. The first
//! definition of a name wins. Memory is bounded: at most [`MAX_SCHEMAS`] struct schemas and
//! [`MAX_PENDING_PROTOS`] protobuf files waiting for their dependencies are kept.

pub mod proto;
pub mod value;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use logspec_ir::wpistruct::{lower, StructSet};

use crate::value::Value;

/// The most struct schemas a registry keeps (a log with more is not a robot log).
pub const MAX_SCHEMAS: usize = 100_000;
/// The most protobuf file descriptors kept while their dependencies are missing.
pub const MAX_PENDING_PROTOS: usize = 10_000;
/// The type of protobuf schema values.
pub const PROTO_SCHEMA_TYPE: &str = "proto:FileDescriptorProto";

/// Why a value could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The value's type (`struct:Pose2d`).
    pub type_name: String,
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.type_name, self.message)
    }
}

impl std::error::Error for DecodeError {}

/// The struct and protobuf schemas seen in a log so far.
#[derive(Default)]
pub struct TypeRegistry {
    structs: StructSet,
    /// Struct names whose first definition did not parse, with the rendered diagnostics.
    bad: BTreeMap<String, String>,
    /// Warnings not yet taken by [`TypeRegistry::take_warnings`].
    warnings: Vec<String>,
    /// Each struct compiled to the IR on first use, once every struct it needs is known.
    compiled: RefCell<BTreeMap<String, Rc<lower::Lowered>>>,
    protos: proto::Protos,
}

impl fmt::Debug for TypeRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeRegistry").field("structs", &self.structs.types.keys().collect::<Vec<_>>()).finish()
    }
}

impl TypeRegistry {
    pub fn new() -> Self {
        TypeRegistry::default()
    }

    /// Registers the value if it is a schema: a key containing `/.schema/struct:` (AdvantageScope's
    /// rule; the type is normally `structschema`) or a `proto:FileDescriptorProto` value. Returns
    /// whether it was one. A schema that does not parse is remembered, so that values of its type
    /// say why they do not decode; warnings (a comma read as `;`) go to
    /// [`TypeRegistry::take_warnings`].
    pub fn offer(&mut self, key: &str, type_str: &str, data: &[u8]) -> bool {
        // Most keys have no `.`: one byte search, not a substring search, for every record.
        if let Some((_, name)) = key.as_bytes().contains(&b'.').then(|| key.split_once("/.schema/struct:")).flatten() {
            if self.structs.types.contains_key(name) || self.bad.contains_key(name) {
                return true;
            }
            if self.structs.types.len() + self.bad.len() >= MAX_SCHEMAS {
                self.warnings.push(format!("{key}: more than {MAX_SCHEMAS} struct schemas; this one is ignored"));
                return true;
            }
            let text = String::from_utf8_lossy(data);
            match self.structs.add(key, name, &text, true) {
                Ok(notes) => {
                    for d in notes {
                        self.warnings.push(format!(
                            "{key}: byte {}: a comma between declarations is read as `;` (struct.adoc wants `;`)",
                            d.span.start
                        ));
                    }
                }
                Err(e) => {
                    self.bad.insert(name.to_string(), e.render());
                }
            }
            return true;
        }
        if type_str == PROTO_SCHEMA_TYPE {
            if let Err(w) = self.protos.add(data) {
                self.warnings.push(format!("{key}: {w}"));
            }
            return true;
        }
        false
    }

    /// Whether values of this type are decoded here (`struct:...` or `proto:...`, but not the
    /// protobuf schemas themselves).
    pub fn decodes(type_str: &str) -> bool {
        type_str.starts_with("struct:") || (type_str.starts_with("proto:") && type_str != PROTO_SCHEMA_TYPE)
    }

    /// Warnings gathered since the last call (schemas read leniently, protobuf files ignored).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The IR of struct `name` and its id in it.
    pub fn struct_ir(&self, name: &str) -> Result<(Rc<lower::Lowered>, logspec_ir::ir::TypeId), String> {
        if let Some(l) = self.compiled.borrow().get(name) {
            return Ok((l.clone(), l.ids[name]));
        }
        if let Some(e) = self.bad.get(name) {
            return Err(format!("the schema of struct `{name}` does not parse:\n{e}"));
        }
        match self.structs.closure(name) {
            Err(missing) if missing == name => {
                return Err(format!("Schema not defined: no `/.schema/struct:{name}` seen"));
            }
            Err(missing) => {
                let why = match self.bad.get(&missing) {
                    Some(e) => format!("it does not parse:\n{e}"),
                    None => format!("no `/.schema/struct:{missing}` seen"),
                };
                return Err(format!("Schema not defined: struct `{name}` uses `{missing}`, and {why}"));
            }
            Ok(_) => {}
        }
        self.structs.resolve_one(name)?;
        let l = Rc::new(lower::lower(&self.structs, &[name], "wpistruct", None));
        let id = l.ids[name];
        self.compiled.borrow_mut().insert(name.to_string(), l.clone());
        Ok((l, id))
    }

    /// The JSON Schema of the values of protobuf message `name` (`wpi.proto.ProtobufPose2d`), if
    /// a descriptor of the log defines it.
    pub fn proto_json_schema(&self, name: &str) -> Option<String> {
        self.protos.json_schema(name)
    }

    /// Decodes a value of type `struct:X`, `struct:X[]` or `proto:X`.
    pub fn decode(&self, type_str: &str, data: &[u8]) -> Result<Value, DecodeError> {
        let fail = |message: String| DecodeError { type_name: type_str.to_string(), message };
        if let Some(name) = type_str.strip_prefix("struct:") {
            let (name, array) = match name.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (name, false),
            };
            let (l, id) = self.struct_ir(name).map_err(fail)?;
            let Some(size) = l.schema.strukt(id).size else {
                return Err(fail(format!("struct `{name}` is larger than 4 GiB")));
            };
            let size = size as usize;
            if !array {
                if data.len() != size {
                    return Err(fail(format!(
                        "expected {size} bytes (the size of struct `{name}`), found {}",
                        data.len()
                    )));
                }
                return Ok(value::decode(&l.schema, id, data));
            }
            if size == 0 {
                return Err(fail(format!("struct `{name}` has no bytes, so an array of it has no length")));
            }
            if data.len() % size != 0 {
                return Err(fail(format!(
                    "{} bytes are not a whole number of `{name}` ({size} bytes each)",
                    data.len()
                )));
            }
            return Ok(Value::Array(data.chunks_exact(size).map(|c| value::decode(&l.schema, id, c)).collect()));
        }
        if let Some(name) = type_str.strip_prefix("proto:") {
            return self.protos.decode(name, data).map_err(fail);
        }
        Err(fail("not a struct or protobuf type".to_string()))
    }
}
