//! A JSON writer driven by the runtime's [`Visitor`], for JSON Lines dumps.
//!
//! Numbers follow the conventions of the reference dumps: an `f32` is widened exactly to `f64`
//! and printed in shortest round-trip form (`0.2f32` prints as `0.20000000298023224`); NaN and
//! infinities are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`; enums and flags print as
//! their raw integers; bytes print as lowercase hex strings.

use std::fmt::Write;

use logspec_runtime::{Event, FramedFormat, RecordHeader, Visit, Visitor};

use crate::value::ValueSink;

/// Writes one JSON value (usually an object) into a string.
#[derive(Default)]
pub struct JsonWriter {
    out: String,
    /// Per open container: whether it has an element yet.
    stack: Vec<bool>,
    /// Whether a union's variant adds its fields to the enclosing object (instead of an object
    /// of its own with a `variant` key).
    flatten: bool,
}

impl JsonWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that shows a union's variant by its fields alone, as members of the enclosing
    /// object: for formats whose reference dumps do not name variants (CARLA).
    pub fn flattening() -> Self {
        JsonWriter { flatten: true, ..Self::default() }
    }

    /// The text written so far; clears the writer for reuse.
    pub fn take(&mut self) -> String {
        self.stack.clear();
        std::mem::take(&mut self.out)
    }

    pub fn as_str(&self) -> &str {
        &self.out
    }

    /// Clears the writer for reuse, keeping its buffer (no allocation for the next value).
    pub fn clear(&mut self) {
        self.out.clear();
        self.stack.clear();
    }

    /// Starts an element: a comma if needed, and the key inside an object.
    fn key(&mut self, name: Option<&str>) {
        if let Some(first) = self.stack.last_mut() {
            if *first {
                self.out.push(',');
            }
            *first = true;
        }
        if let Some(n) = name {
            string(&mut self.out, n);
            self.out.push(':');
        }
    }

    /// Opens an object that the caller fills with `key`/value calls.
    pub fn begin_object(&mut self, name: Option<&str>) {
        self.key(name);
        self.out.push('{');
        self.stack.push(false);
    }

    pub fn end_object(&mut self) {
        self.stack.pop();
        self.out.push('}');
    }

    /// Inserts already-rendered JSON as a value.
    pub fn raw(&mut self, name: Option<&str>, json: &str) {
        self.key(name);
        self.out.push_str(json);
    }

    pub fn null(&mut self, name: Option<&str>) {
        self.key(name);
        self.out.push_str("null");
    }
}

/// A JSON string literal (the project's one escaper, shared with the back ends' JSON).
pub use logspec_ir::json::string;

/// A float in shortest round-trip form, or a string for non-finite values.
pub fn float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else {
        // `{:?}` is Rust's shortest round-trip form, and always has a `.` or an exponent.
        let _ = write!(out, "{v:?}");
    }
}

/// One record of a framed stream as the JSON object of `logspec dump`: the timestamp and tag
/// fields of the record header (under their schema names), `name`, and `fields`; a record of a
/// type the schema does not know has `"name": null`, its length and `payload_hex` instead.
///
/// Any [`ValueSink`] takes it: this writer for the dump's text, a value builder for the Python
/// package.
pub fn framed_event<F: FramedFormat>(w: &mut (impl ValueSink + ?Sized), ev: &Event<'_, F::Record>) {
    let fields = FrameFields { tag: F::TAG_FIELD, length: F::LENGTH_FIELD, timestamp: F::TIMESTAMP_FIELD };
    match ev {
        Event::Record { raw, record } => {
            let name = F::record_name(raw.header.tag).unwrap_or("");
            framed_record(w, &fields, &raw.header, raw.payload, Some((name, record)));
        }
        Event::Unknown { raw } => framed_record::<()>(w, &fields, &raw.header, raw.payload, None),
    }
}

/// The names of a framing's record-header fields that hold the tag, the length and the
/// timestamp: the keys of a dump line.
pub struct FrameFields<'a> {
    pub tag: &'a str,
    pub length: &'a str,
    pub timestamp: Option<&'a str>,
}

/// One framed record as a dump line ([`framed_event`]'s, for any reader): the timestamp and
/// tag under their field names, then the record's `name` and `fields`, or, for a type the
/// schema does not know (`record` `None`), its length and `payload_hex`.
pub fn framed_record<V: Visit + ?Sized>(
    w: &mut (impl ValueSink + ?Sized),
    fields: &FrameFields<'_>,
    header: &RecordHeader,
    payload: &[u8],
    record: Option<(&str, &V)>,
) {
    w.begin_struct(None);
    if let (Some(name), Some(ts)) = (fields.timestamp, header.timestamp) {
        w.uint(Some(name), ts);
    }
    w.uint(Some(fields.tag), header.tag);
    match record {
        Some((name, value)) => {
            w.str(Some("name"), name);
            value.visit(Some("fields"), w);
        }
        None => {
            w.null(Some("name"));
            w.uint(Some(fields.length), header.len);
            let mut h = String::with_capacity(payload.len() * 2);
            hex(&mut h, payload);
            w.str(Some("payload_hex"), &h);
        }
    }
    w.end_struct();
}

/// Lowercase hex of a byte string.
pub fn hex(out: &mut String, b: &[u8]) {
    for x in b {
        let _ = write!(out, "{x:02x}");
    }
}

impl Visitor for JsonWriter {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.key(name);
        let _ = write!(self.out, "{v}");
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.key(name);
        let _ = write!(self.out, "{v}");
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.key(name);
        float(&mut self.out, f64::from(v));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.key(name);
        float(&mut self.out, v);
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.key(name);
        self.out.push_str(if v { "true" } else { "false" });
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.key(name);
        string(&mut self.out, v);
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.key(name);
        self.out.push('"');
        hex(&mut self.out, v);
        self.out.push('"');
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        self.key(name);
        let _ = write!(self.out, "{raw}");
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.key(name);
        let _ = write!(self.out, "{raw}");
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.begin_object(name);
    }
    fn end_struct(&mut self) {
        self.end_object();
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.key(name);
        self.out.push('[');
        self.stack.push(false);
    }
    fn end_array(&mut self) {
        self.stack.pop();
        self.out.push(']');
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, _tag: i128) {
        if !self.flatten {
            self.begin_object(name);
            self.str(Some("variant"), variant);
        }
    }
    fn end_variant(&mut self) {
        if !self.flatten {
            self.end_object();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_match_python_repr_values() {
        let mut s = String::new();
        float(&mut s, f64::from(0.2f32));
        assert_eq!(s, "0.20000000298023224");
        s.clear();
        float(&mut s, 0.0);
        assert_eq!(s, "0.0");
        s.clear();
        float(&mut s, f64::NAN);
        assert_eq!(s, "\"NaN\"");
    }

    #[test]
    fn nesting_and_escaping() {
        let mut w = JsonWriter::new();
        w.begin_struct(None);
        w.uint(Some("a"), 1);
        w.begin_array(Some("b"), 2);
        w.int(None, -1);
        w.str(None, "x\"y");
        w.end_array();
        w.bytes(Some("c"), &[0xde, 0xad]);
        w.end_struct();
        assert_eq!(w.take(), r#"{"a":1,"b":[-1,"x\"y"],"c":"dead"}"#);
    }
}
