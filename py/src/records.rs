//! The records of `logspec dump` as Python objects. The reader thread walks each record into a
//! [`Tokens`] sink (no GIL): a flat list of values and container brackets, strings and bytes in
//! one buffer, dict keys as numbers into a key table; a batch of records is then turned into
//! Python objects under the GIL ([`Batch::to_py`]) with a few allocations per batch rather than
//! per field, and each key made once as a Python string.

use std::collections::HashMap;

use logspec::runtime::Visitor;
use logspec::value::ValueSink;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString};

/// No key: an array element, or a record (the top level).
const NO_KEY: u32 = u32::MAX;

/// One value, or the start or end of a container.
#[derive(Clone, Copy, Debug)]
enum Tok {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A range of [`Batch::text`].
    Str(usize, usize),
    /// A range of [`Batch::bytes`].
    Bytes(usize, usize),
    Dict,
    List,
    End,
}

/// Records in their flat form, with the keys first seen in them.
#[derive(Default)]
pub struct Batch {
    items: Vec<(u32, Tok)>,
    text: String,
    bytes: Vec<u8>,
    /// Keys new in this batch; their numbers continue those of the batches before.
    new_keys: Vec<String>,
    records: usize,
}

impl Batch {
    pub fn records(&self) -> usize {
        self.records
    }

    /// The bytes the batch holds, to bound a batch of large records.
    pub fn size(&self) -> usize {
        self.items.len() * std::mem::size_of::<(u32, Tok)>() + self.text.len() + self.bytes.len()
    }

    /// The records as Python objects (`dict`, `list`, `int`, `float`, `str`, `bytes`, `bool`,
    /// `None`); `keys` holds the Python strings of the keys of the batches before, and gets this
    /// batch's new ones.
    pub fn to_py<'py>(&self, py: Python<'py>, keys: &mut Vec<Py<PyString>>) -> PyResult<Bound<'py, PyList>> {
        keys.extend(self.new_keys.iter().map(|k| PyString::intern(py, k).unbind()));
        let out = PyList::empty(py);
        // Open containers, with the key each is stored under in its parent.
        let mut open: Vec<(Container<'py>, u32)> = Vec::new();
        for &(key, tok) in &self.items {
            let (value, key) = match tok {
                Tok::Dict => {
                    open.push((Container::Dict(PyDict::new(py)), key));
                    continue;
                }
                Tok::List => {
                    open.push((Container::List(PyList::empty(py)), key));
                    continue;
                }
                Tok::End => match open.pop() {
                    Some((Container::Dict(d), key)) => (d.into_any(), key),
                    Some((Container::List(l), key)) => (l.into_any(), key),
                    None => continue,
                },
                Tok::Null => (py.None().into_bound(py), key),
                Tok::Bool(b) => (PyBool::new(py, b).to_owned().into_any(), key),
                Tok::Int(i) => (i.into_pyobject(py)?.into_any(), key),
                Tok::UInt(u) => (u.into_pyobject(py)?.into_any(), key),
                Tok::Float(f) => (PyFloat::new(py, f).into_any(), key),
                Tok::Str(a, b) => (PyString::new(py, &self.text[a..b]).into_any(), key),
                Tok::Bytes(a, b) => (PyBytes::new(py, &self.bytes[a..b]).into_any(), key),
            };
            match open.last() {
                None => out.append(value)?,
                Some((Container::Dict(dict), _)) => {
                    let k = keys.get(key as usize).ok_or_else(|| {
                        pyo3::exceptions::PyRuntimeError::new_err("a record's key is missing from the key table")
                    })?;
                    dict.set_item(k.bind(py), value)?;
                }
                Some((Container::List(list), _)) => list.append(value)?,
            }
        }
        Ok(out)
    }
}

/// A dict or list being filled.
enum Container<'py> {
    Dict(Bound<'py, PyDict>),
    List(Bound<'py, PyList>),
}

/// The sink the reader thread writes records into (a [`ValueSink`]): it fills a [`Batch`].
#[derive(Default)]
pub struct Tokens {
    batch: Batch,
    /// Every key seen, by its number.
    keys: HashMap<Box<str>, u32>,
    /// Where the record being written starts, to forget it.
    record_start: (usize, usize, usize),
}

impl Tokens {
    fn key(&mut self, name: Option<&str>) -> u32 {
        let Some(name) = name else { return NO_KEY };
        if let Some(&k) = self.keys.get(name) {
            return k;
        }
        let k = self.keys.len() as u32;
        self.keys.insert(name.into(), k);
        self.batch.new_keys.push(name.to_string());
        k
    }

    fn push(&mut self, name: Option<&str>, tok: Tok) {
        let key = self.key(name);
        self.batch.items.push((key, tok));
    }

    /// The record written since the last one is complete.
    pub fn end_record(&mut self) {
        self.batch.records += 1;
        self.mark();
    }

    /// Forgets the record written since the last one (its new keys stay known).
    pub fn discard(&mut self) {
        let (items, text, bytes) = self.record_start;
        self.batch.items.truncate(items);
        self.batch.text.truncate(text);
        self.batch.bytes.truncate(bytes);
    }

    /// Whether a record is being written (begun, not yet ended or discarded).
    pub fn in_record(&self) -> bool {
        self.record_start != (self.batch.items.len(), self.batch.text.len(), self.batch.bytes.len())
    }

    /// The batch being filled.
    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// The batch so far; the sink goes on with an empty one (and the same key numbers).
    pub fn take(&mut self) -> Batch {
        let b = std::mem::take(&mut self.batch);
        self.mark();
        b
    }

    fn mark(&mut self) {
        self.record_start = (self.batch.items.len(), self.batch.text.len(), self.batch.bytes.len());
    }
}

impl Visitor for Tokens {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.push(name, Tok::UInt(v));
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.push(name, Tok::Int(v));
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        // Widened exactly, as the dump shows it.
        self.push(name, Tok::Float(f64::from(v)));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.push(name, Tok::Float(v));
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.push(name, Tok::Bool(v));
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        let a = self.batch.text.len();
        self.batch.text.push_str(v);
        self.push(name, Tok::Str(a, a + v.len()));
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        let a = self.batch.bytes.len();
        self.batch.bytes.extend_from_slice(v);
        self.push(name, Tok::Bytes(a, a + v.len()));
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        // The raw number, as the dump shows it.
        let tok = i64::try_from(raw).map(Tok::Int).unwrap_or(Tok::UInt(raw as u64));
        self.push(name, tok);
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.push(name, Tok::UInt(raw));
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.push(name, Tok::Dict);
    }
    fn end_struct(&mut self) {
        self.batch.items.push((NO_KEY, Tok::End));
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.push(name, Tok::List);
    }
    fn end_array(&mut self) {
        self.batch.items.push((NO_KEY, Tok::End));
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, _tag: i128) {
        // As the dump: an object whose first member is `variant`.
        self.push(name, Tok::Dict);
        self.str(Some("variant"), variant);
    }
    fn end_variant(&mut self) {
        self.batch.items.push((NO_KEY, Tok::End));
    }
}

impl ValueSink for Tokens {
    fn null(&mut self, name: Option<&str>) {
        self.push(name, Tok::Null);
    }
}
