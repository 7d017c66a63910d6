//! AdvantageKit RLOG: R1 and R2 files and live streams.
//!
//! The message layer (timestamps, key definitions, field values, R1's value codes and R2's
//! declared-type encodings) is generated from `schemas/rlog.toml`; this module adds what a schema
//! cannot say: the key table that carries key names and R2 declared types from a key's definition
//! to its values, the revision byte, and cycles.
//!
//! - [`Reader`] reads messages or whole [`Cycle`]s from any `Read`, in constant memory, or
//!   ([`Reader::from_slice`], a [`SliceReader`]) from bytes already in memory, in place; its
//!   [`Reader::next_event_ref`] lends each message instead ([`EventRef`], values as the generated
//!   views [`R1ValueRef`] and [`R2ValueRef`] borrowed from the input), and
//!   [`Reader::for_each_event_ref`] / [`Reader::try_for_each_event_ref`] hand every message to a
//!   closure from the reader's own loop, the fastest way through a file;
//! - [`Writer`] writes files (and frame payloads) message by message, with explicit key ids, so a
//!   decoded file re-encodes byte for byte; [`Encoder`] is the producer side: it assigns key ids,
//!   sends only changed values, and builds the catch-up ("newcomer") data of the live stream;
//! - [`net`] is the TCP live stream (server and client).

/// The schema the message and value types were generated from (`schemas/rlog.toml`), for tools
/// that walk its IR at run time (the Python package's writers encode values through it).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/rlog.toml"));

mod generated {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/rlog.rs"));
}
pub mod net;
mod reader;
mod writer;

use std::fmt;

pub use generated::*;
pub use reader::{
    Cycle, Event, EventRef, Key, Reader, ReaderOptions, RlogError, RlogErrorDetail, RlogErrorKind, SliceReader,
    ValueRef,
};
pub use writer::{Encoder, RlogWriteError, Writer, MAX_LEN};

/// The RLOG revision, from the first byte of a file or stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revision {
    /// AdvantageKit v0.0.1–v1.8.1 files and streams, v2.2–v3.1 streams: self-describing values.
    R1,
    /// AdvantageKit v3.2 and later streams, PsiKit files: each key declares a type once.
    R2,
}

impl Revision {
    pub fn byte(self) -> u8 {
        match self {
            Revision::R1 => 1,
            Revision::R2 => 2,
        }
    }

    pub fn from_byte(b: u8) -> Option<Revision> {
        match b {
            1 => Some(Revision::R1),
            2 => Some(Revision::R2),
            _ => None,
        }
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{}", self.byte())
    }
}

/// One value of either revision.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    R1(R1Value),
    R2(R2Value),
}

impl Value {
    /// The type shown for this value: for R1 the value code's name (`double`, `string[]`, `null`),
    /// for R2 the key's declared type (passed in, since R2 values do not carry it).
    pub fn type_name<'a>(&self, declared: Option<&'a str>) -> &'a str {
        match self {
            Value::R1(v) => r1_type_name(v),
            Value::R2(_) => declared.unwrap_or("raw"),
        }
    }
}

/// The name of an R1 value code (a [`R1Value`] tag), as AdvantageKit v1.8.1 spells its
/// `LoggableType`s in lower case.
pub fn r1_code_name(tag: i128) -> &'static str {
    match tag {
        R1Value::TAG_NULL => "null",
        R1Value::TAG_BOOLEAN => "boolean",
        R1Value::TAG_BOOLEAN_ARRAY => "boolean[]",
        R1Value::TAG_INTEGER => "int",
        R1Value::TAG_INTEGER_ARRAY => "int[]",
        R1Value::TAG_DOUBLE => "double",
        R1Value::TAG_DOUBLE_ARRAY => "double[]",
        R1Value::TAG_STRING => "string",
        R1Value::TAG_STRING_ARRAY => "string[]",
        R1Value::TAG_BYTE => "byte",
        _ => "byte[]",
    }
}

/// The name of an R1 value's code, as [`r1_code_name`].
pub fn r1_type_name(v: &R1Value) -> &'static str {
    r1_code_name(logspec_runtime::Union::tag(v))
}

/// The R2 type name a value of this variant is declared with by default, when a writer is not
/// given one; `None` where the name carries information the value does not (structs, protos).
pub fn r2_default_type(v: &R2Value) -> Option<&'static str> {
    Some(match v {
        R2Value::Boolean { .. } => "boolean",
        R2Value::Int64 { .. } => "int64",
        R2Value::Float { .. } => "float",
        R2Value::Double { .. } => "double",
        R2Value::String { .. } => "string",
        R2Value::BooleanArray { .. } => "boolean[]",
        R2Value::Int64Array { .. } => "int64[]",
        R2Value::FloatArray { .. } => "float[]",
        R2Value::DoubleArray { .. } => "double[]",
        R2Value::StringArray { .. } => "string[]",
        R2Value::Json { .. } => "json",
        R2Value::Raw { .. } => "raw",
        R2Value::Struct { .. } | R2Value::Proto { .. } | R2Value::Other { .. } => return None,
    })
}

/// Writes a value as the JSON of `logspec dump`: the natural JSON value of its type. Integers are
/// exact (an `int64` is not rounded to a double), floats follow [`crate::json`] (`f32` widened
/// exactly; NaN and infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`), byte values
/// (`byte`, `raw`, `msgpack`, struct and proto payloads) are lowercase hex strings, JSON text is
/// a string, and an R1 null (key removed) is `null`.
pub fn write_value_json(w: &mut crate::json::JsonWriter, name: Option<&str>, v: &Value) {
    write_value(w, name, v);
}

/// Writes a value into any [`crate::value::ValueSink`] with the conventions of
/// [`write_value_json`], except that bytes are visited as bytes, for the sink to show (the JSON
/// writer as hex; the Python package as `bytes`).
pub fn write_value_sink(w: &mut (impl crate::value::ValueSink + ?Sized), name: Option<&str>, v: &Value) {
    write_value(w, name, v);
}

/// The value as a [`crate::value::Value`] tree, for the tools that handle every format alike;
/// the same conventions as [`write_value_json`].
pub fn to_value(v: &Value) -> crate::value::Value {
    let mut b = crate::value::ValueBuilder::default();
    write_value(&mut b, None, v);
    b.finish()
}

/// Walks a value into any [`crate::value::ValueSink`] (the JSON writer, the value builder). Bytes
/// are visited as bytes (JSON shows them as lowercase hex), so typed sinks keep them binary.
fn write_value<W: crate::value::ValueSink + ?Sized>(w: &mut W, name: Option<&str>, v: &Value) {
    macro_rules! array {
        ($w:expr, $name:expr, $items:expr, |$w2:ident, $x:ident| $body:expr) => {{
            let items = $items;
            $w.begin_array($name, items.len());
            for $x in items.iter() {
                let $w2 = &mut *$w;
                $body;
            }
            $w.end_array();
        }};
    }
    match v {
        Value::R1(v) => match v {
            R1Value::Null {} => w.null(name),
            R1Value::Boolean { value } => w.bool(name, *value),
            R1Value::BooleanArray { value } => array!(w, name, value, |w, x| w.bool(None, *x)),
            R1Value::Integer { value } => w.int(name, i64::from(*value)),
            R1Value::IntegerArray { value } => array!(w, name, value, |w, x| w.int(None, i64::from(*x))),
            R1Value::Double { value } => w.f64(name, *value),
            R1Value::DoubleArray { value } => array!(w, name, value, |w, x| w.f64(None, *x)),
            R1Value::String { value } => w.str(name, value),
            R1Value::StringArray { value } => array!(w, name, value, |w, x| w.str(None, &x.text)),
            R1Value::Byte { value } => w.bytes(name, &[*value]),
            R1Value::ByteArray { value } => w.bytes(name, value),
        },
        Value::R2(v) => match v {
            R2Value::Boolean { value } => w.bool(name, *value),
            R2Value::Int64 { value } => w.int(name, *value),
            R2Value::Float { value } => w.f32(name, *value),
            R2Value::Double { value } => w.f64(name, *value),
            R2Value::String { value } | R2Value::Json { value } => w.str(name, value),
            R2Value::BooleanArray { value } => array!(w, name, value, |w, x| w.bool(None, *x)),
            R2Value::Int64Array { value } => array!(w, name, value, |w, x| w.int(None, *x)),
            R2Value::FloatArray { value } => array!(w, name, value, |w, x| w.f32(None, *x)),
            R2Value::DoubleArray { value } => array!(w, name, value, |w, x| w.f64(None, *x)),
            R2Value::StringArray { value } => array!(w, name, value, |w, x| w.str(None, &x.text)),
            R2Value::Raw { value }
            | R2Value::Struct { value }
            | R2Value::Proto { value }
            | R2Value::Other { value } => w.bytes(name, value),
        },
    }
}
