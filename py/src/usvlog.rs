//! `logspec.usvlog.read_timeseries_bin`'s native half: a USVLOG file decoded into one column per
//! record type and field, in the dtypes usv-autopilot's reader returns (`t_us` `uint64`, float
//! fields `float64`, integer fields `int64`), handed to Python as `bytearray`s that
//! `py/python/logspec/usvlog.py` views with `numpy.frombuffer` (no numpy C API, no copy there).
//!
//! The columns are the IR's: record names, field names and kinds come from the schema; the
//! values come from the generated decoders through [`Visit`], in the schema's field order. Two
//! streaming passes over the file keep memory at the columns: the first frames the records
//! (counting each type, so every column is allocated once, as its final `bytearray`), the
//! second decodes them straight into those buffers (no intermediate vectors, no copy).

use std::fs::File;
use std::path::{Path, PathBuf};

use logspec::formats::usvlog::Usvlog;
use logspec::ir::ir::{Prim, Schema, Ty, TypeDef};
use logspec::runtime::{FramedFormat, Framing, ReadError, ReadErrorDetail, ReadErrorKind, Reader, Visit, Visitor};
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

/// One column's buffer (the `bytearray` it becomes) and its dtype.
struct Column<'a> {
    kind: Kind,
    buf: &'a mut [u8],
}

/// A record type's layout as columns: from the IR.
struct Type {
    name: String,
    id: u64,
    size: usize,
    fields: Vec<(String, Kind)>,
}

/// Writes the leaves of one visited record into row `row` of its table's columns.
struct Row<'a, 'b> {
    columns: &'a mut [Column<'b>],
    row: usize,
    at: usize,
    /// A leaf the columns cannot hold (a string, bytes, an array): the schema is not flat.
    bad: Option<&'static str>,
}

impl Row<'_, '_> {
    #[inline]
    fn put(&mut self, bytes: [u8; 8]) {
        let r = self.row * 8;
        match self.columns.get_mut(self.at).and_then(|c| c.buf.get_mut(r..r + 8)) {
            Some(dst) => dst.copy_from_slice(&bytes),
            None => self.bad = Some("more fields than the schema lists"),
        }
        self.at += 1;
    }

    #[inline]
    fn int(&mut self, v: i128) {
        let bytes = match self.columns.get(self.at).map(|c| c.kind) {
            Some(Kind::I64) => (v as i64).to_le_bytes(),
            Some(Kind::U64) => (v as u64).to_le_bytes(),
            Some(Kind::F64) => (v as f64).to_le_bytes(),
            None => [0; 8],
        };
        self.put(bytes);
    }

    #[inline]
    fn float(&mut self, v: f64) {
        if !matches!(self.columns.get(self.at).map(|c| c.kind), Some(Kind::F64) | None) {
            self.bad = Some("a float where the schema has no float column");
        }
        self.put(v.to_le_bytes());
    }
}

impl Visitor for Row<'_, '_> {
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

/// What pass 1 finds: the header, each known type's count in order of first appearance, the
/// unknown records, and how many records pass 2 may decode (those before the first fault).
struct Counted {
    fw_model_schema: u64,
    t0_us: u64,
    /// `(type index, count)`, in order of first appearance.
    order: Vec<(usize, usize)>,
    unknown: Vec<(u64, u64, u64)>,
    fault: Option<Fault>,
    limit: u64,
}

/// Type index by record id, for ids up to the largest the schema knows.
fn lookup(types: &[Type]) -> Vec<Option<usize>> {
    let max = types.iter().map(|t| t.id).max().unwrap_or(0);
    let mut by_id = vec![None; usize::try_from(max).unwrap_or(0).saturating_add(1).min(1 << 16)];
    for (i, t) in types.iter().enumerate() {
        if let Some(slot) = usize::try_from(t.id).ok().and_then(|id| by_id.get_mut(id)) {
            *slot = Some(i);
        }
    }
    by_id
}

fn find(by_id: &[Option<usize>], types: &[Type], tag: u64) -> Option<usize> {
    match usize::try_from(tag).ok().and_then(|t| by_id.get(t)) {
        Some(i) => *i,
        None => types.iter().position(|t| t.id == tag),
    }
}

/// Pass 1: frames every record; counts each known type; stops at the first fault (a
/// truncation, or a payload of the wrong length).
fn count(path: &Path, types: &[Type], strict: bool, keep_unknown: bool) -> std::io::Result<Result<Counted, Fault>> {
    let by_id = lookup(types);
    let mut r = match Reader::<_, Usvlog>::new(File::open(path)?) {
        Ok(r) => r,
        Err(e) => return Ok(Err(Fault::read(&e))),
    };
    let header = r.file_header().clone();
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut slot = vec![usize::MAX; types.len()];
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
        match find(&by_id, types, raw.header.tag) {
            None => {
                if keep_unknown {
                    unknown.push((raw.header.timestamp.unwrap_or(0), raw.header.tag, len as u64));
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
                if slot[i] == usize::MAX {
                    slot[i] = order.len();
                    order.push((i, 0));
                }
                order[slot[i]].1 += 1;
            }
        }
        limit += 1;
    }
    let (fw_model_schema, t0_us) = (header.fw_model_schema.into(), header.t0_us);
    Ok(Ok(Counted { fw_model_schema, t0_us, order, unknown, fault, limit }))
}

/// Pass 2: decodes the first `limit` records, each known one by the generated decoder, into the
/// next row of its table (`tables[slot[type]]`, `t_us` first). Returns the rows written per table
/// and the fault that stopped it early, if any.
fn fill(
    path: &Path,
    types: &[Type],
    limit: u64,
    tables: &mut [(usize, Vec<Column<'_>>)],
) -> std::io::Result<(Vec<usize>, Option<Fault>)> {
    let by_id = lookup(types);
    let mut slot = vec![usize::MAX; types.len()];
    for (t, (i, _)) in tables.iter().enumerate() {
        slot[*i] = t;
    }
    let mut rows = vec![0usize; tables.len()];
    let mut r = match Reader::<_, Usvlog>::new(File::open(path)?) {
        Ok(r) => r,
        Err(e) => return Ok((rows, Some(Fault::read(&e)))),
    };
    let changed = |offset, index, tag| Fault {
        message: "usvlog: the file changed while it was read".into(),
        offset,
        record_index: index,
        type_id: tag,
        record: tag.and_then(Usvlog::record_name),
    };
    for _ in 0..limit {
        let raw = match r.next_raw() {
            Some(Ok(raw)) => raw,
            Some(Err(e)) => return Ok((rows, Some(Fault::read(&e)))),
            None => return Ok((rows, Some(changed(r.position(), None, None)))),
        };
        let tag = raw.header.tag;
        let Some(i) = find(&by_id, types, tag) else { continue };
        let t = slot[i];
        let Some((_, columns)) = tables.get_mut(t) else {
            return Ok((rows, Some(changed(raw.offset, Some(raw.index), Some(tag)))));
        };
        let record = match Usvlog::decode_record(tag, &raw.payload[..types[i].size.min(raw.payload.len())]) {
            Some(Ok(record)) => record,
            Some(Err(e)) => {
                let e = ReadError::new(ReadErrorDetail {
                    kind: ReadErrorKind::Decode(e),
                    offset: raw.offset,
                    record_index: Some(raw.index),
                    tag: Some(tag),
                    record: Usvlog::record_name(tag),
                    format: Usvlog::NAME,
                });
                return Ok((rows, Some(Fault::read(&e))));
            }
            None => return Ok((rows, Some(changed(raw.offset, Some(raw.index), Some(tag))))),
        };
        let mut row = Row { columns, row: rows[t], at: 0, bad: None };
        row.put(raw.header.timestamp.unwrap_or(0).to_le_bytes());
        record.visit(None, &mut row);
        let bad = row.bad.or((row.at != types[i].fields.len() + 1).then_some("fewer fields than the schema lists"));
        if let Some(bad) = bad {
            // More rows than pass 1 counted (the file changed), or the generated type and the IR
            // disagree (a bug): reported, never a panic.
            let message = format!("usvlog: {}: {bad}", types[i].name);
            let fault = Fault {
                message,
                offset: raw.offset,
                record_index: Some(raw.index),
                type_id: Some(tag),
                record: Usvlog::record_name(tag),
            };
            return Ok((rows, Some(fault)));
        }
        rows[t] += 1;
    }
    Ok((rows, None))
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
    let counted =
        py.detach(|| count(&path, &types, strict_payload_len, keep_unknown)).map_err(|e| os_error(&path, &e))?;
    let out = PyDict::new(py);
    let records = PyList::empty(py);
    let unknown = PyList::empty(py);
    let fault = match counted {
        Err(f) => {
            out.set_item("header", py.None())?;
            Some(f)
        }
        Ok(c) => {
            let magic = schema.magic().map(|m| String::from_utf8_lossy(m).into_owned()).unwrap_or_default();
            out.set_item("header", (magic, c.fw_model_schema, schema.format.endian.as_str(), c.t0_us))?;
            // Every column's final buffer, allocated once at the size pass 1 counted.
            let mut arrays: Vec<(usize, Vec<Bound<'_, PyByteArray>>)> = Vec::with_capacity(c.order.len());
            for &(i, n) in &c.order {
                let cols = (0..=types[i].fields.len())
                    .map(|_| PyByteArray::new_with(py, n * 8, |_| Ok(())))
                    .collect::<PyResult<Vec<_>>>()?;
                arrays.push((i, cols));
            }
            // SAFETY: the bytearrays were just made here and no Python code has a reference to
            // them, nor runs while these slices live (the GIL is held and nothing below calls
            // into Python), so nothing else reads, writes or resizes their buffers meanwhile.
            let mut tables: Vec<(usize, Vec<Column<'_>>)> = arrays
                .iter()
                .map(|(i, cols)| {
                    let kinds = std::iter::once(Kind::U64).chain(types[*i].fields.iter().map(|(_, k)| *k));
                    let cols =
                        cols.iter().zip(kinds).map(|(b, kind)| Column { kind, buf: unsafe { b.as_bytes_mut() } });
                    (*i, cols.collect())
                })
                .collect();
            let (rows, late) = fill(&path, &types, c.limit, &mut tables).map_err(|e| os_error(&path, &e))?;
            drop(tables);
            for ((i, cols), n) in arrays.into_iter().zip(rows) {
                if n == 0 {
                    continue;
                }
                let ty = &types[i];
                let list = PyList::empty(py);
                let names = std::iter::once("t_us").chain(ty.fields.iter().map(|(n, _)| n.as_str()));
                let kinds = std::iter::once(Kind::U64).chain(ty.fields.iter().map(|(_, k)| *k));
                for ((name, kind), buf) in names.zip(kinds).zip(cols) {
                    // A fault in pass 2 leaves fewer rows than counted.
                    if buf.len() != n * 8 {
                        buf.resize(n * 8)?;
                    }
                    list.append((name, kind.dtype(), buf))?;
                }
                records.append((ty.name.as_str(), ty.id, list))?;
            }
            for u in c.unknown {
                unknown.append(PyTuple::new(py, [u.0, u.1, u.2])?)?;
            }
            late.or(c.fault)
        }
    };
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
