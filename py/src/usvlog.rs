//! `logspec.usvlog.read_timeseries_bin`'s native half: a USVLOG file decoded into one column per
//! record type and field, in the dtypes usv-autopilot's reader returns (`t_us` `uint64`, float
//! fields `float64`, integer fields `int64`), handed to Python as `bytearray`s that
//! `py/python/logspec/usvlog.py` views with `numpy.frombuffer` (no numpy C API, no copy there).
//!
//! The columns are the IR's: record names, field names and kinds come from the schema; the
//! values come from the generated decoders through [`Visit`], in the schema's field order. Two
//! streaming passes over the file keep memory at the columns: the first frames the records
//! (counting each type, so every column is allocated once at its final size), the second
//! decodes them.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use logspec::formats::usvlog::Usvlog;
use logspec::ir::ir::{Prim, Schema, Ty, TypeDef};
use logspec::runtime::{FramedFormat, ReadError, Reader, Visit, Visitor};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyTuple};

use crate::writers::{bundled, os_error};

/// Registers `usvlog_read_columns` in the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(usvlog_read_columns, m)?)
}

/// The dtype of a column, as upstream's `np.asarray` of Python numbers makes it.
#[derive(Clone, Copy, Debug)]
enum Kind {
    F64,
    I64,
    U64,
}

impl Kind {
    fn of(schema: &Schema, ty: &Ty) -> Option<Kind> {
        let prim = |p: Prim| match p {
            Prim::F32 | Prim::F64 => Kind::F64,
            Prim::U64 => Kind::U64,
            _ => Kind::I64,
        };
        match ty {
            Ty::Prim(p) => Some(prim(*p)),
            Ty::Bool => Some(Kind::I64),
            Ty::Named(id) => match schema.ty(*id) {
                TypeDef::Enum(e) => Some(prim(e.base)),
                TypeDef::Flags(f) => Some(prim(f.base)),
                _ => None,
            },
            _ => None,
        }
    }

    fn dtype(self) -> &'static str {
        match self {
            Kind::F64 => "<f8",
            Kind::I64 => "<i8",
            Kind::U64 => "<u8",
        }
    }
}

enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}

impl Column {
    fn with_capacity(kind: Kind, n: usize) -> Column {
        match kind {
            Kind::F64 => Column::F64(Vec::with_capacity(n)),
            Kind::I64 => Column::I64(Vec::with_capacity(n)),
            Kind::U64 => Column::U64(Vec::with_capacity(n)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U64(v) => v.len(),
        }
    }

    fn truncate(&mut self, n: usize) {
        match self {
            Column::F64(v) => v.truncate(n),
            Column::I64(v) => v.truncate(n),
            Column::U64(v) => v.truncate(n),
        }
    }

    /// The column's little-endian bytes in a new `bytearray`; the column is dropped after.
    fn into_bytearray(self, py: Python<'_>) -> PyResult<Bound<'_, PyByteArray>> {
        macro_rules! copy {
            ($v:expr) => {{
                let v = $v;
                PyByteArray::new_with(py, v.len() * 8, |buf| {
                    for (dst, x) in buf.chunks_exact_mut(8).zip(&v) {
                        dst.copy_from_slice(&x.to_le_bytes());
                    }
                    Ok(())
                })
            }};
        }
        match self {
            Column::F64(v) => copy!(v),
            Column::I64(v) => copy!(v),
            Column::U64(v) => copy!(v),
        }
    }
}

/// A record type's layout as columns: from the IR.
struct Type {
    name: String,
    id: u64,
    size: usize,
    fields: Vec<(String, Kind)>,
}

/// One record type's columns (`t_us` first) while decoding.
struct Table {
    ty: usize,
    columns: Vec<Column>,
}

/// Writes the leaves of one visited record into the next row of its table's columns.
struct Row<'a> {
    columns: &'a mut [Column],
    at: usize,
    /// A leaf the columns cannot hold (a string, bytes, an array): the schema is not flat.
    bad: Option<&'static str>,
}

impl Row<'_> {
    #[inline]
    fn int(&mut self, v: i128) {
        match self.columns.get_mut(self.at) {
            Some(Column::I64(c)) => c.push(v as i64),
            Some(Column::U64(c)) => c.push(v as u64),
            Some(Column::F64(c)) => c.push(v as f64),
            None => self.bad = Some("more fields than the schema lists"),
        }
        self.at += 1;
    }

    #[inline]
    fn float(&mut self, v: f64) {
        match self.columns.get_mut(self.at) {
            Some(Column::F64(c)) => c.push(v),
            _ => self.bad = Some("a float where the schema has no float column"),
        }
        self.at += 1;
    }
}

impl Visitor for Row<'_> {
    fn uint(&mut self, _: Option<&str>, v: u64) {
        self.int(i128::from(v));
    }
    fn int(&mut self, _: Option<&str>, v: i64) {
        Row::int(self, i128::from(v));
    }
    fn f32(&mut self, _: Option<&str>, v: f32) {
        self.float(f64::from(v));
    }
    fn f64(&mut self, _: Option<&str>, v: f64) {
        self.float(v);
    }
    fn bool(&mut self, _: Option<&str>, v: bool) {
        Row::int(self, i128::from(v));
    }
    fn str(&mut self, _: Option<&str>, _: &str) {
        self.bad = Some("a string field");
    }
    fn bytes(&mut self, _: Option<&str>, _: &[u8]) {
        self.bad = Some("a bytes field");
    }
    fn enumeration(&mut self, _: Option<&str>, raw: i128, _: Option<&'static str>) {
        Row::int(self, raw);
    }
    fn flags(&mut self, _: Option<&str>, raw: u64) {
        Row::int(self, i128::from(raw));
    }
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, _: usize) {
        self.bad = Some("an array field");
    }
    fn end_array(&mut self) {}
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {
        self.bad = Some("a union field");
    }
    fn end_variant(&mut self) {}
}

/// Where reading stopped early, and why.
struct Fault {
    message: String,
    offset: u64,
    record_index: Option<u64>,
    type_id: Option<u64>,
    record: Option<&'static str>,
}

impl Fault {
    fn read(e: &ReadError) -> Fault {
        Fault {
            message: e.to_string(),
            offset: e.offset,
            record_index: e.record_index,
            type_id: e.tag,
            record: e.record,
        }
    }
}

/// What the two passes produce.
struct Decoded {
    fw_model_schema: u64,
    t0_us: u64,
    tables: Vec<Table>,
    unknown: Vec<(u64, u64, u64)>,
    fault: Option<Fault>,
}

fn open(path: &Path) -> std::io::Result<BufReader<File>> {
    Ok(BufReader::with_capacity(1 << 20, File::open(path)?))
}

fn decode(path: &Path, types: &[Type], strict: bool, keep_unknown: bool) -> std::io::Result<Result<Decoded, Fault>> {
    let by_id = |tag: u64| types.iter().position(|t| t.id == tag);
    // Pass 1: frame every record; count each known type, in order of first appearance; stop at
    // the first fault (a truncation, or a payload of the wrong length).
    let mut r = match Reader::<_, Usvlog>::new(open(path)?) {
        Ok(r) => r,
        Err(e) => return Ok(Err(Fault::read(&e))),
    };
    let header = r.file_header().clone();
    let mut order: Vec<usize> = Vec::new();
    let mut counts = vec![0usize; types.len()];
    let mut unknown = Vec::new();
    let mut fault = None;
    let mut limit = 0u64;
    while let Some(raw) = r.next_raw() {
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                fault = Some(Fault::read(&e));
                break;
            }
        };
        let len = raw.payload.len();
        let t_us = raw.header.timestamp.unwrap_or(0);
        match by_id(raw.header.tag) {
            None => {
                if keep_unknown {
                    unknown.push((t_us, raw.header.tag, len as u64));
                }
            }
            Some(i) => {
                let ty = &types[i];
                if (strict && len != ty.size) || len < ty.size {
                    let what = if strict { "exactly" } else { "at least" };
                    fault = Some(Fault {
                        message: format!(
                            "usvlog: at byte {} (record #{}, {}): payload length {len}, expected {what} {} \
                             (strict_payload_len={})",
                            raw.offset,
                            raw.index,
                            ty.name,
                            ty.size,
                            if strict { "True" } else { "False" }
                        ),
                        offset: raw.offset,
                        record_index: Some(raw.index),
                        type_id: Some(ty.id),
                        record: Usvlog::record_name(ty.id),
                    });
                    break;
                }
                if counts[i] == 0 {
                    order.push(i);
                }
                counts[i] += 1;
            }
        }
        limit += 1;
    }
    let mut tables: Vec<Table> = order
        .iter()
        .map(|&i| {
            let mut columns = vec![Column::with_capacity(Kind::U64, counts[i])];
            columns.extend(types[i].fields.iter().map(|(_, k)| Column::with_capacity(*k, counts[i])));
            Table { ty: i, columns }
        })
        .collect();
    let mut slot = vec![usize::MAX; types.len()];
    for (t, table) in tables.iter().enumerate() {
        slot[table.ty] = t;
    }

    // Pass 2: decode the records pass 1 accepted, each by the generated decoder, into the
    // next row of its table.
    let mut r = match Reader::<_, Usvlog>::new(open(path)?) {
        Ok(r) => r,
        Err(e) => return Ok(Err(Fault::read(&e))),
    };
    for _ in 0..limit {
        let raw = match r.next_raw() {
            Some(Ok(raw)) => raw,
            Some(Err(e)) => {
                fault = Some(Fault::read(&e));
                break;
            }
            None => {
                fault = Some(Fault {
                    message: "usvlog: the file changed while it was read (it ended early)".into(),
                    offset: r.position(),
                    record_index: None,
                    type_id: None,
                    record: None,
                });
                break;
            }
        };
        let Some(i) = by_id(raw.header.tag) else { continue };
        let table = &mut tables[slot[i]];
        let rows = table.columns[0].len();
        if rows == counts[i] {
            fault = Some(Fault {
                message: "usvlog: the file changed while it was read (more records than counted)".into(),
                offset: raw.offset,
                record_index: Some(raw.index),
                type_id: Some(raw.header.tag),
                record: Usvlog::record_name(raw.header.tag),
            });
            break;
        }
        let record = match Usvlog::decode_record(raw.header.tag, &raw.payload[..types[i].size]) {
            Some(Ok(record)) => record,
            Some(Err(e)) => {
                let e = logspec::runtime::ReadError::new(logspec::runtime::ReadErrorDetail {
                    kind: logspec::runtime::ReadErrorKind::Decode(e),
                    offset: raw.offset,
                    record_index: Some(raw.index),
                    tag: Some(raw.header.tag),
                    record: Usvlog::record_name(raw.header.tag),
                    format: Usvlog::NAME,
                });
                fault = Some(Fault::read(&e));
                break;
            }
            None => unreachable!("pass 1 found the type in the schema"),
        };
        if let Column::U64(c) = &mut table.columns[0] {
            c.push(raw.header.timestamp.unwrap_or(0));
        }
        let mut row = Row { columns: &mut table.columns[1..], at: 0, bad: None };
        record.visit(None, &mut row);
        let (at, bad) = (row.at, row.bad);
        if let Some(bad) = bad.or((at != types[i].fields.len()).then_some("fewer fields than the schema lists")) {
            // The generated type and the IR disagree: a bug, reported rather than a panic.
            for c in &mut table.columns {
                c.truncate(rows);
            }
            fault = Some(Fault {
                message: format!("usvlog: {}: {bad}; the record does not fit numpy columns", types[i].name),
                offset: raw.offset,
                record_index: Some(raw.index),
                type_id: Some(raw.header.tag),
                record: Usvlog::record_name(raw.header.tag),
            });
            break;
        }
    }
    // A fault in pass 2 leaves tables with fewer rows than counted; the columns hold the rows.
    tables.retain(|t| t.columns[0].len() > 0);
    Ok(Ok(Decoded { fw_model_schema: header.fw_model_schema.into(), t0_us: header.t0_us, tables, unknown, fault }))
}

/// The record types of the schema as column layouts.
fn types(schema: &Schema) -> PyResult<Vec<Type>> {
    schema
        .records
        .iter()
        .map(|r| {
            let s = schema.strukt(r.body);
            let mut fields = Vec::new();
            for f in s.fields.iter().filter(|f| !f.is_padding()) {
                let kind = Kind::of(schema, &f.ty).ok_or_else(|| {
                    PyOSError::new_err(format!(
                        "{}.{}: not a number; the record does not fit numpy columns",
                        r.name, f.name
                    ))
                })?;
                fields.push((f.name.clone(), kind));
            }
            let size = s.size.ok_or_else(|| PyOSError::new_err(format!("{}: not of a fixed size", r.name)))?;
            Ok(Type { name: r.name.clone(), id: r.id, size: size as usize, fields })
        })
        .collect()
}

/// Decodes a USVLOG file into columns. Returns a dict: `header` (magic, fw_model_schema,
/// endianness, t0_us; `None` when the header did not decode), `records` (a list of
/// `(name, type_id, [(field, dtype, bytearray)])` in order of first appearance, `t_us` first),
/// `unknown` (`(t_us, type_id, payload_len)` tuples) and `error` (`None`, or a dict with
/// `message`, `offset`, `record_index`, `type_id`, `record`: where reading stopped; the records
/// before it are in `records`). I/O errors raise `OSError`.
#[pyfunction]
#[pyo3(signature = (path, strict_payload_len = true, keep_unknown = true))]
fn usvlog_read_columns(
    py: Python<'_>,
    path: PathBuf,
    strict_payload_len: bool,
    keep_unknown: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let schema = bundled("usvlog");
    let types = types(schema)?;
    let decoded =
        py.detach(|| decode(&path, &types, strict_payload_len, keep_unknown)).map_err(|e| os_error(&path, &e))?;
    let out = PyDict::new(py);
    let (decoded, fault) = match decoded {
        Ok(mut d) => {
            let f = d.fault.take();
            (Some(d), f)
        }
        Err(f) => (None, Some(f)),
    };
    let records = PyList::empty(py);
    let unknown = PyList::empty(py);
    match decoded {
        Some(d) => {
            let magic = schema.magic().map(|m| String::from_utf8_lossy(m).into_owned()).unwrap_or_default();
            let header = (magic, d.fw_model_schema, schema.format.endian.as_str(), d.t0_us);
            out.set_item("header", header)?;
            for table in d.tables {
                let ty = &types[table.ty];
                let cols = PyList::empty(py);
                let names = std::iter::once("t_us").chain(ty.fields.iter().map(|(n, _)| n.as_str()));
                let kinds = std::iter::once(Kind::U64).chain(ty.fields.iter().map(|(_, k)| *k));
                for ((name, kind), col) in names.zip(kinds).zip(table.columns) {
                    cols.append((name, kind.dtype(), col.into_bytearray(py)?))?;
                }
                records.append((ty.name.as_str(), ty.id, cols))?;
            }
            for u in d.unknown {
                unknown.append(PyTuple::new(py, [u.0, u.1, u.2])?)?;
            }
        }
        None => out.set_item("header", py.None())?,
    }
    out.set_item("records", records)?;
    out.set_item("unknown", unknown)?;
    match fault {
        None => out.set_item("error", py.None())?,
        Some(f) => {
            let e = PyDict::new(py);
            e.set_item("message", f.message)?;
            e.set_item("offset", f.offset)?;
            e.set_item("record_index", f.record_index)?;
            e.set_item("type_id", f.type_id)?;
            e.set_item("record", f.record)?;
            out.set_item("error", e)?;
        }
    }
    Ok(out)
}
