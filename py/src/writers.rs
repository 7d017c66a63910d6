//! The writers of the Python package: USVLOG, RLOG and WPILOG files from Python values.
//!
//! Every value goes through the IR: a Python object becomes a [`Value`] tree (numbers, strings,
//! bytes, lists, dicts), and [`logspec::encode`] writes it by walking the schema's type of the
//! record, value or entry (field names, widths, byte order, ranges), with faults that name the
//! record and field. The framing and the format's state (record headers, RLOG key ids and
//! revisions, WPILOG entries and control records) are the `logspec` library's writers. No byte
//! layout is written here.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use logspec::encode::{self, EncodeFault, FaultKind};
use logspec::formats::{rlog, usvlog, wpilog};
use logspec::ir::ir::{Field, Schema, Ty, TypeDef, Union};
use logspec::runtime::{Cursor, Union as _};
use logspec::value::Value;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyOSError, PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple};

/// Registers the writer classes in the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<UsvlogWriter>()?;
    m.add_class::<RlogWriter>()?;
    m.add_class::<WpilogWriter>()?;
    Ok(())
}

/// A bundled format's schema, compiled once from the text the library was generated from.
pub(crate) fn bundled(which: &'static str) -> &'static Schema {
    static USVLOG: OnceLock<Schema> = OnceLock::new();
    static RLOG: OnceLock<Schema> = OnceLock::new();
    static WPILOG: OnceLock<Schema> = OnceLock::new();
    let (cell, text) = match which {
        "usvlog" => (&USVLOG, usvlog::SCHEMA_TOML),
        "rlog" => (&RLOG, rlog::SCHEMA_TOML),
        _ => (&WPILOG, wpilog::SCHEMA_TOML),
    };
    cell.get_or_init(|| {
        // The same text compiled at build time into the library's types, so it compiles here.
        logspec::ir::compile_str(&format!("schemas/{which}.toml"), text)
            .unwrap_or_else(|e| panic!("the bundled schema {which} compiles: {e:?}"))
    })
}

/// A Python object as a [`Value`]: `None`, bools, ints, floats, `str`, bytes-like objects, lists
/// and tuples, dicts with string keys; numpy arrays and scalars through their `tolist()`; any
/// other object with `__index__` as an integer or with `__float__` as a float.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_value(obj);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if obj.is_instance_of::<PyByteArray>() || obj.is_instance_of::<PyMemoryView>() {
        return Ok(Value::Bytes(obj.extract::<Vec<u8>>().or_else(|_| {
            let b = obj.py().get_type::<PyBytes>().call1((obj,))?;
            Ok::<_, PyErr>(b.cast::<PyBytes>()?.as_bytes().to_vec())
        })?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut fields = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(name) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!("field names must be strings, found {}", type_name(&k))));
            };
            fields.push((name.to_cow()?.into_owned(), to_value(&v)?));
        }
        return Ok(Value::Object(fields));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(to_value(&item?)?);
        }
        return Ok(Value::Array(items));
    }
    // numpy arrays and scalars (and anything else array-like that says what it holds).
    if let Some(tolist) = obj.getattr_opt("tolist")? {
        let plain = tolist.call0()?;
        if !plain.is(obj) {
            return to_value(&plain);
        }
    }
    if obj.hasattr("__index__")? {
        return int_value(&obj.call_method0("__index__")?);
    }
    if obj.hasattr("__float__")? {
        return Ok(Value::Float(obj.call_method0("__float__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!("cannot write a value of type {}", type_name(obj))))
}

fn int_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Value::UInt(u));
    }
    Err(PyValueError::new_err(format!("{} does not fit in 64 bits", obj.str()?)))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// An encoding fault as the Python exception its kind calls for, prefixed with what was being
/// written (`REC_SENSOR_GYRO`, `key "/x"`, `entry 3 "/x" (double)`).
pub(crate) fn fault_err(what: &str, e: &EncodeFault) -> PyErr {
    let msg = format!("{what}: {e}");
    match e.kind {
        FaultKind::Type => PyTypeError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// Encodes `v` as the fields of a struct or union variant.
fn encode_fields(schema: &Schema, fields: &[Field], what: &str, v: &Value) -> PyResult<Vec<u8>> {
    let mut out = Vec::new();
    encode::encode_fields(schema, fields, v, &mut out).map_err(|e| fault_err(what, &e))?;
    Ok(out)
}

/// Checks a number against a field of the schema's type (a timestamp against the record
/// header's), for the same messages as the values get.
fn check_number(schema: &Schema, ty: &Ty, what: &str, v: &Value) -> PyResult<()> {
    let mut scratch = Vec::new();
    encode::encode(schema, ty, schema.format.endian, v, &mut scratch).map_err(|e| fault_err(what, &e))
}

fn union<'s>(schema: &'s Schema, name: &str) -> &'s Union {
    match schema.ty(schema.type_by_name(name).expect("the bundled schema declares it")) {
        TypeDef::Union(u) => u,
        _ => unreachable!("`{name}` is a union in the bundled schema"),
    }
}

/// A file for a new log: refuses to replace an existing file unless `overwrite`.
fn create(path: &Path, overwrite: bool) -> PyResult<BufWriter<File>> {
    let mut o = OpenOptions::new();
    o.write(true);
    if overwrite {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    match o.open(path) {
        Ok(f) => Ok(BufWriter::with_capacity(1 << 16, f)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            Err(PyFileExistsError::new_err(format!("{}: {e} (pass overwrite=True to replace it)", path.display())))
        }
        Err(e) => Err(os_error(path, &e)),
    }
}

/// An I/O error as the `OSError` subclass Python raises for it, naming the file.
pub(crate) fn os_error(path: &Path, e: &std::io::Error) -> PyErr {
    let msg = format!("{}: {e}", path.display());
    match e.kind() {
        ErrorKind::AlreadyExists => PyFileExistsError::new_err(msg),
        ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
        _ => PyOSError::new_err(msg),
    }
}

/// A library writer's error: I/O as `OSError`, the rest (what the format cannot hold) as
/// `ValueError`.
fn write_err(path: &Path, e: impl std::error::Error + 'static) -> PyErr {
    let io =
        std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source()).any(|e| e.is::<std::io::Error>());
    let msg = format!("{}: {e}", path.display());
    if io {
        PyOSError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}

fn closed(path: &Path) -> PyErr {
    PyValueError::new_err(format!("{}: the writer is closed", path.display()))
}

/// `values` and keyword fields as one mapping (a name given both ways is an error).
fn merge_fields(values: Option<&Bound<'_, PyAny>>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Value> {
    let mut fields = match values {
        None => Vec::new(),
        Some(v) => match to_value(v)? {
            Value::Object(f) => f,
            _ => return Err(PyTypeError::new_err(format!("values must be a dict, found {}", type_name(v)))),
        },
    };
    if let Some(kw) = kwargs {
        if let Value::Object(more) = to_value(kw.as_any())? {
            for (k, v) in more {
                if fields.iter().any(|(n, _)| *n == k) {
                    return Err(PyTypeError::new_err(format!("field `{k}` given twice (in values and as a keyword)")));
                }
                fields.push((k, v));
            }
        }
    }
    Ok(Value::Object(fields))
}

// ---------------------------------------------------------------------------------------------
// USVLOG

type UsvWriter = logspec::runtime::Writer<BufWriter<File>, usvlog::Usvlog>;

/// Writes a USVLOG `timeseries.bin`: the file header, then one record per `write`.
#[pyclass(module = "logspec._logspec")]
pub struct UsvlogWriter {
    inner: Option<UsvWriter>,
    path: PathBuf,
    t0_us: u64,
}

#[pymethods]
impl UsvlogWriter {
    #[new]
    #[pyo3(signature = (path, *, t0_us = 0, overwrite = false))]
    fn new(#[pyo3(from_py_with = crate::args::path)] path: PathBuf, t0_us: u64, overwrite: bool) -> PyResult<Self> {
        let out = create(&path, overwrite)?;
        let header = usvlog::FileHeader { fw_model_schema: usvlog::FW_MODEL_SCHEMA, t0_us };
        let w = UsvWriter::new(out, &header).map_err(|e| write_err(&path, e))?;
        Ok(UsvlogWriter { inner: Some(w), path, t0_us })
    }

    /// Writes one record: `record` is its name (`"REC_SENSOR_GYRO"`) or type id, `t_us` its
    /// timestamp, and its fields come from `values` (a dict) and keywords.
    #[pyo3(signature = (record, t_us, values = None, **fields))]
    fn write(
        &mut self,
        record: &Bound<'_, PyAny>,
        t_us: &Bound<'_, PyAny>,
        values: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let schema = bundled("usvlog");
        let rec = find_record(schema, record)?;
        let t = timestamp(schema, &rec.name, t_us)?;
        let v = merge_fields(values, fields)?;
        let payload = encode_fields(schema, &schema.strukt(rec.body).fields, &rec.name, &v)?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.write_raw(rec.id, t, &payload).map_err(|e| write_err(path, e))
    }

    /// Writes a record of any type id with the payload as given (for records this schema does
    /// not know, which readers skip).
    fn write_raw(&mut self, type_id: u64, t_us: &Bound<'_, PyAny>, payload: &[u8]) -> PyResult<()> {
        let schema = bundled("usvlog");
        let t = timestamp(schema, &format!("record type {type_id}"), t_us)?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.write_raw(type_id, t, payload).map_err(|e| write_err(path, e))
    }

    /// Writes out what is buffered and closes the file. Closing twice is allowed.
    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.inner.take() {
            let out = w.finish().map_err(|e| write_err(&self.path, e))?;
            out.into_inner().map_err(|e| write_err(&self.path, e.into_error()))?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn t0_us(&self) -> u64 {
        self.t0_us
    }

    #[getter]
    fn fw_model_schema(&self) -> u64 {
        usvlog::FW_MODEL_SCHEMA.into()
    }

    fn __repr__(&self) -> String {
        let state = if self.inner.is_some() { "open" } else { "closed" };
        format!("<logspec.usvlog.Writer {:?} {state}>", self.path.display().to_string())
    }
}

/// A record type of the schema by name or type id.
fn find_record<'s>(schema: &'s Schema, record: &Bound<'_, PyAny>) -> PyResult<&'s logspec::ir::ir::Record> {
    let found = if let Ok(name) = record.extract::<String>() {
        schema.records.iter().find(|r| r.name == name)
    } else if let Ok(id) = record.extract::<u64>() {
        schema.records.iter().find(|r| r.id == id)
    } else {
        return Err(PyTypeError::new_err(format!(
            "record must be a record name or type id, found {}",
            type_name(record)
        )));
    };
    found.ok_or_else(|| {
        let names: Vec<String> = schema.records.iter().map(|r| format!("{} ({})", r.name, r.id)).collect();
        PyValueError::new_err(format!(
            "{} is not a record type of {} (fw_model_schema {}); the types are {}",
            record.repr().map(|r| r.to_string()).unwrap_or_default(),
            schema.format.name,
            usvlog::FW_MODEL_SCHEMA,
            names.join(", ")
        ))
    })
}

/// A record timestamp, checked against the record header's timestamp field.
fn timestamp(schema: &Schema, what: &str, t: &Bound<'_, PyAny>) -> PyResult<u64> {
    let framing = schema.framing.as_ref().expect("USVLOG is framed");
    let header = schema.strukt(framing.header);
    let field = &header.fields[framing.timestamp.expect("USVLOG records have a timestamp")];
    let v = to_value(t)?;
    check_number(schema, &field.ty, &format!("{what}: {}", field.name), &v)?;
    match v {
        Value::Int(i) => Ok(i as u64),
        Value::UInt(u) => Ok(u),
        _ => unreachable!("check_number accepted only an integer"),
    }
}

// ---------------------------------------------------------------------------------------------
// RLOG

/// Writes an AdvantageKit RLOG file cycle by cycle: each cycle's timestamp, then the values of
/// the keys that changed; keys are defined (with ids and, in R2, declared types) on first use.
#[pyclass(module = "logspec._logspec")]
pub struct RlogWriter {
    inner: Option<rlog::Writer<BufWriter<File>>>,
    path: PathBuf,
    revision: rlog::Revision,
    /// Key name -> (key id, the type it was defined with).
    keys: HashMap<String, (i16, Option<String>)>,
}

#[pymethods]
impl RlogWriter {
    #[new]
    #[pyo3(signature = (path, *, revision = 2, overwrite = false))]
    fn new(#[pyo3(from_py_with = crate::args::path)] path: PathBuf, revision: u8, overwrite: bool) -> PyResult<Self> {
        let revision = rlog::Revision::from_byte(revision)
            .ok_or_else(|| PyValueError::new_err(format!("revision must be 1 or 2, found {revision}")))?;
        let out = create(&path, overwrite)?;
        Ok(RlogWriter { inner: Some(rlog::Writer::new(out, revision)), path, revision, keys: HashMap::new() })
    }

    /// Defines a key now (it is defined on first use otherwise) and returns its id. R2 keys
    /// need a type (`double`, `int64`, `string[]`, `struct:Pose2d`, ...); R1 keys may give one
    /// that their values then default to.
    #[pyo3(signature = (key, r#type = None))]
    fn define(&mut self, key: &str, r#type: Option<&str>) -> PyResult<i16> {
        if let Some((id, _)) = self.keys.get(key) {
            return Err(PyValueError::new_err(format!("key {key:?} is already defined (id {id})")));
        }
        if self.revision == rlog::Revision::R2 && r#type.is_none() {
            return Err(PyValueError::new_err(format!("R2 key {key:?} needs a type")));
        }
        if let Some(t) = r#type {
            self.variant(t).map_err(|m| PyValueError::new_err(format!("key {key:?}: {m}")))?;
        }
        let id = i16::try_from(self.keys.len())
            .map_err(|_| PyValueError::new_err(format!("key {key:?}: RLOG key ids are i16; 32768 keys are defined")))?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        let declared = if self.revision == rlog::Revision::R2 { r#type } else { None };
        w.define(id, key, declared).map_err(|e| write_err(path, e))?;
        self.keys.insert(key.to_string(), (id, r#type.map(str::to_string)));
        Ok(id)
    }

    /// Writes one cycle: its timestamp in seconds, then `values` (key -> value). A key's type
    /// comes from `types`, else from its definition, else from the Python value (bool
    /// `boolean`, int `int64` (R1 `int`), float `double`, str `string`, bytes `raw` (R1
    /// `byte[]`), lists of those the array types; R1 `None` removes the key).
    #[pyo3(signature = (timestamp, values, types = None))]
    fn cycle(&mut self, timestamp: f64, values: &Bound<'_, PyDict>, types: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        if timestamp.is_nan() {
            return Err(PyValueError::new_err("timestamp must be a number of seconds, not NaN"));
        }
        // Every value is encoded before anything is written, so a bad value writes nothing of
        // its cycle.
        let mut encoded = Vec::with_capacity(values.len());
        for (k, v) in values.iter() {
            let key: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("RLOG keys are strings, found {}", type_name(&k))))?;
            let given: Option<String> = match types {
                Some(t) => t.get_item(&key)?.map(|t| t.extract()).transpose()?,
                None => None,
            };
            let value = to_value(&v)?;
            let defined = self.keys.get(&key).and_then(|(_, t)| t.clone());
            let type_name = match (&given, &defined, self.revision) {
                (Some(g), Some(d), rlog::Revision::R2) if g != d => {
                    return Err(PyValueError::new_err(format!(
                        "key {key:?}: declared as {d}; an R2 key keeps its type"
                    )))
                }
                (Some(g), ..) => g.clone(),
                (None, Some(d), _) => d.clone(),
                (None, None, rev) => infer_rlog_type(&value, rev).map_err(|m| {
                    PyTypeError::new_err(format!("key {key:?}: {m}; give its type in `types` or with define()"))
                })?,
            };
            let rv = self.encode_value(&key, &type_name, &value)?;
            encoded.push((key, type_name, rv));
        }
        let path = self.path.clone();
        self.inner.as_mut().ok_or_else(|| closed(&path))?.timestamp(timestamp).map_err(|e| write_err(&path, e))?;
        for (key, type_name, rv) in encoded {
            let id = match self.keys.get(&key) {
                Some((id, _)) => *id,
                // An R1 key declares no type: each value carries its own.
                None if self.revision == rlog::Revision::R1 => self.define(&key, None)?,
                None => self.define(&key, Some(&type_name))?,
            };
            let w = self.inner.as_mut().ok_or_else(|| closed(&path))?;
            w.value(id, rv).map_err(|e| write_err(&path, e))?;
        }
        Ok(())
    }

    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.inner.take() {
            let out = w.finish().map_err(|e| write_err(&self.path, e))?;
            out.into_inner().map_err(|e| write_err(&self.path, e.into_error()))?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn revision(&self) -> u8 {
        self.revision.byte()
    }

    /// The keys defined so far, name -> id.
    #[getter]
    fn keys(&self) -> HashMap<String, i16> {
        self.keys.iter().map(|(k, (id, _))| (k.clone(), *id)).collect()
    }

    fn __repr__(&self) -> String {
        let state = if self.inner.is_some() { "open" } else { "closed" };
        format!("<logspec.rlog.Writer {:?} {} {state}>", self.path.display().to_string(), self.revision)
    }
}

impl RlogWriter {
    /// The value union and the variant a type name selects in this revision.
    fn variant(&self, type_name: &str) -> Result<(&'static Union, usize), String> {
        let schema = bundled("rlog");
        match self.revision {
            rlog::Revision::R1 => {
                let u = union(schema, "R1Value");
                let names: Vec<&str> = u.variants.iter().map(|v| rlog::r1_code_name(v.tag)).collect();
                match names.iter().position(|n| *n == type_name) {
                    Some(i) => Ok((u, i)),
                    None => Err(format!("`{type_name}` is not an R1 value type; they are {}", names.join(", "))),
                }
            }
            rlog::Revision::R2 => {
                let u = union(schema, "R2Value");
                Ok((u, u.select(type_name).expect("R2Value has a default variant")))
            }
        }
    }

    /// A value encoded through the IR as the variant its type selects, then decoded by the
    /// generated decoder into the library's typed value.
    fn encode_value(&self, key: &str, type_name: &str, v: &Value) -> PyResult<rlog::Value> {
        let what = format!("key {key:?} ({type_name})");
        let (u, i) = self.variant(type_name).map_err(|m| PyValueError::new_err(format!("key {key:?}: {m}")))?;
        let variant = &u.variants[i];
        // A variant's one field is its `value`; R1's null has none.
        let fields = match (variant.fields.as_slice(), v) {
            ([], Value::Null) => Value::Object(Vec::new()),
            ([], other) => {
                return Err(PyTypeError::new_err(format!(
                    "{what}: takes None, found {}",
                    logspec::encode::kind(other)
                )));
            }
            ([f], v) => Value::Object(vec![(f.name.clone(), v.clone())]),
            _ => unreachable!("RLOG value variants have at most one field"),
        };
        let payload = encode_fields(bundled("rlog"), &variant.fields, &what, &fields)?;
        let decoded = match self.revision {
            rlog::Revision::R1 => {
                let mut c = Cursor::new(&payload);
                rlog::R1Value::decode_variant(variant.tag, &mut c).map(rlog::Value::R1)
            }
            rlog::Revision::R2 => rlog::R2Value::decode_variant_exact(variant.tag, &payload).map(rlog::Value::R2),
        };
        decoded.map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
    }
}

/// The RLOG type a Python value is written as when no type is given, AdvantageKit's choice for
/// the Java type it would have been.
fn infer_rlog_type(v: &Value, rev: rlog::Revision) -> Result<String, String> {
    let r1 = rev == rlog::Revision::R1;
    let t = match v {
        Value::Null if r1 => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::UInt(_) => {
            if r1 {
                "int"
            } else {
                "int64"
            }
        }
        Value::Float(_) => "double",
        Value::Str(_) => "string",
        Value::Bytes(_) => {
            if r1 {
                "byte[]"
            } else {
                "raw"
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let all = |f: fn(&Value) -> bool| items.iter().all(f);
            if all(|x| matches!(x, Value::Bool(_))) {
                "boolean[]"
            } else if all(|x| matches!(x, Value::Int(_) | Value::UInt(_))) {
                if r1 {
                    "int[]"
                } else {
                    "int64[]"
                }
            } else if all(|x| matches!(x, Value::Int(_) | Value::UInt(_) | Value::Float(_))) {
                "double[]"
            } else if all(|x| matches!(x, Value::Str(_))) {
                "string[]"
            } else {
                return Err("a list of mixed kinds has no RLOG type".into());
            }
        }
        Value::Array(_) => return Err("an empty list has no type of its own".into()),
        other => return Err(format!("{} has no RLOG type", logspec::encode::kind(other))),
    };
    Ok(t.to_string())
}

// ---------------------------------------------------------------------------------------------
// WPILOG

/// Writes a WPILib DataLog: the header, then entries started with a name and type, and values
/// appended to them.
#[pyclass(module = "logspec._logspec")]
pub struct WpilogWriter {
    inner: Option<wpilog::Writer<BufWriter<File>>>,
    path: PathBuf,
    /// Active entries: id -> (name, type).
    entries: HashMap<u32, (String, String)>,
    by_name: HashMap<String, u32>,
    next_id: u32,
}

#[pymethods]
impl WpilogWriter {
    #[new]
    #[pyo3(signature = (path, *, extra_header = "", overwrite = false))]
    fn new(
        #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
        extra_header: &str,
        overwrite: bool,
    ) -> PyResult<Self> {
        let out = create(&path, overwrite)?;
        let w = wpilog::Writer::new(out, extra_header).map_err(|e| write_err(&path, e))?;
        Ok(WpilogWriter { inner: Some(w), path, entries: HashMap::new(), by_name: HashMap::new(), next_id: 1 })
    }

    /// Starts an entry (a Start control record) and returns its id (the next free one, or
    /// `entry`).
    #[pyo3(signature = (name, r#type, metadata = "", timestamp = 0, entry = None))]
    fn start(&mut self, name: &str, r#type: &str, metadata: &str, timestamp: i64, entry: Option<u32>) -> PyResult<u32> {
        if let Some(id) = self.by_name.get(name) {
            return Err(PyValueError::new_err(format!("entry {name:?} is already started (id {id})")));
        }
        let id = entry.unwrap_or(self.next_id);
        if id == 0 {
            return Err(PyValueError::new_err("entry id 0 is the control entry"));
        }
        if let Some((n, _)) = self.entries.get(&id) {
            return Err(PyValueError::new_err(format!("entry id {id} is in use by {n:?}")));
        }
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.start(id, name, r#type, metadata, timestamp).map_err(|e| write_err(path, e))?;
        self.entries.insert(id, (name.to_string(), r#type.to_string()));
        self.by_name.insert(name.to_string(), id);
        self.next_id = self.next_id.max(id.saturating_add(1));
        Ok(id)
    }

    /// Appends a value to an entry (by id or name) at `timestamp` (microseconds), encoded as
    /// the entry's type: numbers, `str`, lists for the array types, bytes for any other type
    /// (`raw`, `json`, `struct:...`).
    fn append(&mut self, entry: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, timestamp: i64) -> PyResult<()> {
        let id = self.entry_id(entry)?;
        let (name, type_name) = &self.entries[&id];
        let what = format!("entry {id} {name:?} ({type_name})");
        let schema = bundled("wpilog");
        let u = union(schema, "DataValue");
        let variant = &u.variants[u.select(type_name).expect("DataValue has a default variant")];
        let [field] = variant.fields.as_slice() else {
            unreachable!("every DataValue variant has one field");
        };
        let v = Value::Object(vec![(field.name.clone(), to_value(value)?)]);
        let payload = encode_fields(schema, &variant.fields, &what, &v)?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.raw(id, timestamp, &payload).map_err(|e| write_err(path, e))
    }

    /// Finishes an entry (a Finish control record); its id may be started again.
    #[pyo3(signature = (entry, timestamp = 0))]
    fn finish(&mut self, entry: &Bound<'_, PyAny>, timestamp: i64) -> PyResult<()> {
        let id = self.entry_id(entry)?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.finish(id, timestamp).map_err(|e| write_err(path, e))?;
        if let Some((name, _)) = self.entries.remove(&id) {
            self.by_name.remove(&name);
        }
        Ok(())
    }

    /// Replaces an entry's metadata (a Set Metadata control record).
    #[pyo3(signature = (entry, metadata, timestamp = 0))]
    fn set_metadata(&mut self, entry: &Bound<'_, PyAny>, metadata: &str, timestamp: i64) -> PyResult<()> {
        let id = self.entry_id(entry)?;
        let path = &self.path;
        let w = self.inner.as_mut().ok_or_else(|| closed(path))?;
        w.set_metadata(id, metadata, timestamp).map_err(|e| write_err(path, e))
    }

    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.inner.take() {
            let out = w.finish_file().map_err(|e| write_err(&self.path, e))?;
            out.into_inner().map_err(|e| write_err(&self.path, e.into_error()))?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The active entries, name -> id.
    #[getter]
    fn entries(&self) -> HashMap<String, u32> {
        self.by_name.clone()
    }

    fn __repr__(&self) -> String {
        let state = if self.inner.is_some() { "open" } else { "closed" };
        format!("<logspec.wpilog.Writer {:?} {state}>", self.path.display().to_string())
    }
}

impl WpilogWriter {
    fn entry_id(&self, entry: &Bound<'_, PyAny>) -> PyResult<u32> {
        let id = if let Ok(name) = entry.extract::<String>() {
            self.by_name.get(&name).copied()
        } else {
            let id: u32 = entry.extract().map_err(|_| {
                PyTypeError::new_err(format!("entry must be an entry id or name, found {}", type_name(entry)))
            })?;
            self.entries.contains_key(&id).then_some(id)
        };
        id.ok_or_else(|| {
            let mut names: Vec<String> = self.entries.iter().map(|(id, (n, t))| format!("{id} {n:?} ({t})")).collect();
            names.sort();
            PyValueError::new_err(format!(
                "{} is not a started entry; start() it first (active: {})",
                entry.repr().map(|r| r.to_string()).unwrap_or_default(),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ))
        })
    }
}
