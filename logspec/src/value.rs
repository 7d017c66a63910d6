//! A decoded value as a tree, the common currency of the tools that handle every format alike
//! (CSV export, MCAP conversion, plots). Any [`Visit`] value builds one with [`ValueBuilder`];
//! the format readers that are not schema-generated (RLOG) feed the same builder.

use logspec_runtime::{Visit, Visitor};

use crate::json::JsonWriter;

/// One decoded value. Enums and flags are their raw numbers, as in `logspec dump`.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// An `f32` is widened exactly.
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    /// Fields in wire order. A union value is an object whose first field is `variant`.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// Builds the tree of any visitable value.
    pub fn of(v: &impl Visit) -> Value {
        let mut b = ValueBuilder::default();
        v.visit(None, &mut b);
        b.finish()
    }

    /// The value as a number, for plots and resampling: numbers and booleans; `None` otherwise.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Writes the value with the conventions of `logspec dump` (see [`crate::json`]).
    pub fn write_json(&self, w: &mut JsonWriter, name: Option<&str>) {
        self.write_to(w, name);
    }

    /// Walks the value into any sink (the JSON writer, a value builder, the Python package's).
    pub fn write_to(&self, w: &mut (impl ValueSink + ?Sized), name: Option<&str>) {
        match self {
            Value::Null => w.null(name),
            Value::Bool(b) => w.bool(name, *b),
            Value::Int(i) => w.int(name, *i),
            Value::UInt(u) => w.uint(name, *u),
            Value::Float(f) => w.f64(name, *f),
            Value::Str(s) => w.str(name, s),
            Value::Bytes(b) => w.bytes(name, b),
            Value::Array(items) => {
                w.begin_array(name, items.len());
                for x in items {
                    x.write_to(w, None);
                }
                w.end_array();
            }
            Value::Object(fields) => {
                w.begin_struct(name);
                for (k, x) in fields {
                    x.write_to(w, Some(k));
                }
                w.end_struct();
            }
        }
    }

    /// The value as JSON text.
    pub fn to_json(&self) -> String {
        let mut w = JsonWriter::new();
        self.write_json(&mut w, None);
        w.take()
    }

    /// The leaves of the tree with their column names: an object's fields are `prefix.field`,
    /// array elements `prefix[i]`; a leaf at the top is named `prefix` (or `value` without one).
    pub fn flatten<'a>(&'a self, prefix: &str, out: &mut Vec<(String, &'a Value)>) {
        match self {
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    x.flatten(&format!("{prefix}[{i}]"), out);
                }
            }
            Value::Object(fields) => {
                for (k, x) in fields {
                    let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    x.flatten(&name, out);
                }
            }
            leaf => out.push((if prefix.is_empty() { "value".to_string() } else { prefix.to_string() }, leaf)),
        }
    }

    /// The value as one CSV cell's text (numbers in shortest round-trip form, bytes as hex).
    pub fn cell_text(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
            Value::Int(i) => i.to_string(),
            Value::UInt(u) => u.to_string(),
            Value::Float(f) if f.is_finite() => format!("{f:?}"),
            Value::Float(f) if f.is_nan() => "NaN".to_string(),
            Value::Float(f) => (if *f > 0.0 { "Infinity" } else { "-Infinity" }).to_string(),
            Value::Str(s) => s.clone(),
            Value::Bytes(b) => {
                let mut s = String::with_capacity(b.len() * 2);
                crate::json::hex(&mut s, b);
                s
            }
            nested => nested.to_json(),
        }
    }
}

/// A [`Visitor`] that can also take an absent value (an RLOG R1 null: the key was removed).
pub trait ValueSink: Visitor {
    fn null(&mut self, name: Option<&str>);
}

impl ValueSink for JsonWriter {
    fn null(&mut self, name: Option<&str>) {
        JsonWriter::null(self, name);
    }
}

impl ValueSink for ValueBuilder {
    fn null(&mut self, name: Option<&str>) {
        self.put(name, Value::Null);
    }
}

/// A sink that shows a union's variant by its fields alone, as members of the enclosing object
/// (the reference dumps of CARLA name no variants): everything else goes to the inner sink.
pub struct FlattenVariants<'a, W: ?Sized>(pub &'a mut W);

impl<W: ValueSink + ?Sized> Visitor for FlattenVariants<'_, W> {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.0.uint(name, v);
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.0.int(name, v);
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.0.f32(name, v);
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.0.f64(name, v);
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.0.bool(name, v);
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.0.str(name, v);
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.0.bytes(name, v);
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, label: Option<&'static str>) {
        self.0.enumeration(name, raw, label);
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.0.flags(name, raw);
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.0.begin_struct(name);
    }
    fn end_struct(&mut self) {
        self.0.end_struct();
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        self.0.begin_array(name, len);
    }
    fn elements(&self) -> bool {
        self.0.elements()
    }
    fn end_array(&mut self) {
        self.0.end_array();
    }
    fn numbers(&mut self, name: Option<&str>, v: crate::runtime::Numbers<'_>) {
        self.0.numbers(name, v);
    }
    fn begin_variant(&mut self, _name: Option<&str>, _variant: &'static str, _tag: i128) {}
    fn end_variant(&mut self) {}
}

impl<W: ValueSink + ?Sized> ValueSink for FlattenVariants<'_, W> {
    fn null(&mut self, name: Option<&str>) {
        self.0.null(name);
    }
}

/// A [`Visitor`] that builds a [`Value`].
#[derive(Default)]
pub struct ValueBuilder {
    /// Open containers: the name they will be stored under and what they hold so far.
    stack: Vec<(Option<String>, Container)>,
    done: Option<Value>,
}

enum Container {
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl ValueBuilder {
    /// The finished value (`Null` if nothing was visited).
    pub fn finish(&mut self) -> Value {
        self.stack.clear();
        self.done.take().unwrap_or(Value::Null)
    }

    /// Stores a finished value in the innermost open container, or as the result.
    pub fn put(&mut self, name: Option<&str>, v: Value) {
        match self.stack.last_mut() {
            Some((_, Container::Array(items))) => items.push(v),
            Some((_, Container::Object(fields))) => fields.push((name.unwrap_or_default().to_string(), v)),
            None => self.done = Some(v),
        }
    }

    fn open(&mut self, name: Option<&str>, c: Container) {
        self.stack.push((name.map(str::to_string), c));
    }

    fn close(&mut self) {
        if let Some((name, c)) = self.stack.pop() {
            let v = match c {
                Container::Array(items) => Value::Array(items),
                Container::Object(fields) => Value::Object(fields),
            };
            self.put(name.as_deref(), v);
        }
    }
}

impl Visitor for ValueBuilder {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.put(name, Value::UInt(v));
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.put(name, Value::Int(v));
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.put(name, Value::Float(f64::from(v)));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.put(name, Value::Float(v));
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.put(name, Value::Bool(v));
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.put(name, Value::Str(v.to_string()));
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.put(name, Value::Bytes(v.to_vec()));
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        let v = i64::try_from(raw).map(Value::Int).unwrap_or(Value::UInt(raw as u64));
        self.put(name, v);
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.put(name, Value::UInt(raw));
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.open(name, Container::Object(Vec::new()));
    }
    fn end_struct(&mut self) {
        self.close();
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        // `len` comes from decoded data already in memory, so it is bounded by the input.
        self.open(name, Container::Array(Vec::with_capacity(len.min(1 << 16))));
    }
    fn end_array(&mut self) {
        self.close();
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, _tag: i128) {
        self.open(name, Container::Object(vec![("variant".to_string(), Value::Str(variant.to_string()))]));
    }
    fn end_variant(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_flattens_and_prints() {
        let mut b = ValueBuilder::default();
        b.begin_struct(None);
        b.f32(Some("x"), 0.5);
        b.begin_array(Some("w"), 2);
        b.int(None, -1);
        b.uint(None, 2);
        b.end_array();
        b.begin_struct(Some("p"));
        b.bool(Some("ok"), true);
        b.end_struct();
        b.end_struct();
        let v = b.finish();
        assert_eq!(v.to_json(), r#"{"x":0.5,"w":[-1,2],"p":{"ok":true}}"#);
        let mut cols = Vec::new();
        v.flatten("", &mut cols);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x", "w[0]", "w[1]", "p.ok"]);
        assert_eq!(cols[1].1.as_f64(), Some(-1.0));
        let mut top = Vec::new();
        Value::Float(1.0).flatten("", &mut top);
        assert_eq!(top[0].0, "value");
    }
}
