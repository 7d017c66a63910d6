//! `logspec.usvlog.read_timeseries_bin`'s native half: a USVLOG file decoded into one column per
//! record type and field, in the dtypes usv-autopilot's reader returns (`t_us` `uint64`, float
//! fields `float64`, integer fields `int64`), handed to Python as `bytearray`s that
//! `py/logspec/usvlog.py` views with `numpy.frombuffer` (no numpy C API, no copy there).
//!
//! The columns are the IR's: record names, field names, kinds and offsets come from the schema
//! (the Parquet export's [`FixedLayout`]). Two streaming passes over one open file keep memory at
//! the columns, the same passes that `logspec.open(path).tables()` of a USVLOG file uses
//! (`logspec_engine::tables::passes`): the first frames the records, counting each type (so
//! that every column is allocated once, as its final `bytearray`, left uninitialised: every byte
//! is written after) and noting record boundaries that cut the file into parts; the second fills
//! each part's rows on a thread of its own, without the GIL, at most [`passes::MAX_THREADS`] at once.
//! The result and its errors do not depend on the number of parts.

use std::fs::File;
use std::path::PathBuf;

use logspec::formats::usvlog::Usvlog;
use logspec::ir::ir::{Prim, Schema, Ty, TypeDef};
use logspec::runtime::{Framing, ReadError};
use logspec_engine::columns::{FixedLayout, Gather};
use logspec_engine::tables::passes::{self, auto_parts, count, fill, split, Columns, Layouts, Out, Stop, Time};
use pyo3::exceptions::{PyOSError, PyValueError};
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

    /// The numpy dtype: the machine's own byte order, as the values are written.
    fn dtype(self) -> &'static str {
        match self {
            Kind::F64 => "=f8",
            Kind::I64 => "=i8",
            Kind::U64 => "=u8",
        }
    }
}

/// A record type's layout as columns: from the IR.
struct Type {
    name: String,
    id: u64,
    size: usize,
    fields: Vec<(String, Kind)>,
    layout: FixedLayout,
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

    /// Where pass 1 stopped.
    fn stop(stop: &Stop, types: &[Type], strict: bool) -> Fault {
        match stop {
            Stop::Read(e) => Fault::read(e),
            // A known record whose payload is not of its type's size (shorter, or with
            // `strict_payload_len` longer), in the words of upstream's check.
            &Stop::Length { offset, index, ty, len } => {
                let ty = &types[ty];
                let what = if strict { "exactly" } else { "at least" };
                Fault {
                    message: format!(
                        "usvlog: at byte {offset} (record #{index}, {}): payload length {len}, expected {what} {} (strict_payload_len={})",
                        ty.name,
                        ty.size,
                        if strict { "True" } else { "False" }
                    ),
                    offset,
                    record_index: Some(index),
                    type_id: Some(ty.id),
                    record: Usvlog::record_name(ty.id),
                }
            }
        }
    }

    /// The file changed between the passes.
    fn changed(c: &passes::Changed) -> Fault {
        Fault {
            message: format!("usvlog: {c}"),
            offset: c.offset,
            record_index: c.index,
            type_id: c.tag,
            record: c.tag.and_then(Usvlog::record_name),
        }
    }
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
            let layout = FixedLayout::of(schema, r.body)
                .filter(|l| l.is_flat() && l.columns() == fields.len())
                .ok_or_else(|| PyOSError::new_err(format!("{}: not of a fixed layout of numbers", r.name)))?;
            Ok(Type { name: r.name.clone(), id: r.id, size: layout.size, fields, layout })
        })
        .collect()
}

/// A new `bytearray` of `len` bytes, not initialised (the caller writes every byte before
/// Python sees it): zeroing the columns first would write them twice.
// Writes the columns in place into new Python bytearrays (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
fn uninit_bytearray(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyByteArray>> {
    let len = isize::try_from(len).map_err(|_| PyOSError::new_err("usvlog: the columns do not fit in memory"))?;
    // SAFETY: `PyByteArray_FromStringAndSize` with a null pointer makes a bytearray of `len`
    // bytes whose contents are not set; the GIL is held; the new reference is owned here.
    unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), len))
            .map(|b| b.cast_into_unchecked())
    }
}

/// A column's bytes as values of `T` (`None` when the buffer is not aligned for `T`, which
/// Python's allocator never does).
// Writes the columns in place into new Python bytearrays (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
fn typed<T: Gather>(bytes: &mut [u8]) -> Option<&mut [T]> {
    // SAFETY: `T` is a plain number type (every bit pattern a value); `align_to_mut` gives the
    // aligned middle, which is the whole buffer when the start is aligned and the length is a
    // multiple of `T`'s size.
    let (pre, mid, post) = unsafe { bytes.align_to_mut::<T>() };
    (pre.is_empty() && post.is_empty()).then_some(mid)
}

/// Decodes a USVLOG file into columns. Returns a dict: `header` (magic, fw_model_schema,
/// endianness, t0_us; `None` when the header did not decode), `records` (a list of
/// `(name, type_id, [(field, dtype, bytearray)])` in order of first appearance, `t_us` first),
/// `unknown` (`(t_us, type_id, payload_len)` tuples) and `error` (`None`, or a dict with
/// `message`, `offset`, `record_index`, `type_id`, `record`: where reading stopped; the records
/// before it are in `records`). I/O errors raise `OSError`. `threads`: how many threads fill
/// the columns (`None`: one per core, at most [`passes::MAX_THREADS`], for files of at least
/// [`passes::MIN_PART_BYTES`] a thread; at most 64).
// Writes the columns in place into new Python bytearrays (ARCHITECTURE.md lists the crate's `unsafe`).
#[allow(unsafe_code)]
#[pyfunction]
#[pyo3(signature = (path, strict_payload_len = true, keep_unknown = true, threads = None))]
fn usvlog_read_columns(
    py: Python<'_>,
    #[pyo3(from_py_with = crate::args::path)] path: PathBuf,
    strict_payload_len: bool,
    keep_unknown: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'_, PyDict>> {
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let schema = bundled("usvlog");
    let types = types(schema)?;
    let file = File::open(&path).map_err(|e| os_error(&path, &e))?;
    let len = file.metadata().map_err(|e| os_error(&path, &e))?.len();
    let parts = threads.map_or_else(|| auto_parts(len), |n| n.min(64));
    let layouts = Layouts::new(types.iter().map(|t| (t.id, t.layout.clone())).collect(), strict_payload_len);
    let counted = py.detach(|| {
        // The compatible reader's contract: every unknown record listed (unless not asked for).
        let keep = if keep_unknown { u64::MAX } else { 0 };
        count::<Usvlog, _>(&file, len, &layouts, &mut passes::All, keep, parts, parts > 1).map_err(|e| Fault::read(&e))
    });
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
            let (fw_model_schema, t0_us) = (u64::from(c.header.fw_model_schema), c.header.t0_us);
            out.set_item("header", (magic, fw_model_schema, schema.format.endian.as_str(), t0_us))?;
            // Every column's final buffer, allocated once at the size pass 1 counted.
            let mut arrays: Vec<(usize, Vec<Bound<'_, PyByteArray>>)> = Vec::with_capacity(c.order.len());
            for &i in &c.order {
                let cols = (0..=types[i].fields.len())
                    .map(|_| uninit_bytearray(py, c.counts[i].saturating_mul(8)))
                    .collect::<PyResult<Vec<_>>>()?;
                arrays.push((i, cols));
            }
            let misaligned = || PyOSError::new_err("usvlog: a column's memory is not aligned for its dtype");
            // SAFETY: the bytearrays were just made here and no Python code has a reference to
            // them while these slices live (only this function holds them, and it gives them to
            // Python after the slices are dropped), so nothing else reads, writes or resizes
            // their buffers meanwhile.
            let mut columns = Vec::with_capacity(arrays.len());
            for (i, cols) in &arrays {
                let mut bufs = cols.iter().map(|b| unsafe { b.as_bytes_mut() });
                let t_us = bufs.next().and_then(typed::<u64>).ok_or_else(misaligned)?;
                let mut outs = Vec::with_capacity(types[*i].fields.len());
                for ((_, kind), buf) in types[*i].fields.iter().zip(bufs) {
                    outs.push(match kind {
                        Kind::F64 => typed(buf).map(Out::F64),
                        Kind::I64 => typed(buf).map(Out::I64),
                        Kind::U64 => typed(buf).map(Out::U64),
                    });
                }
                let outs = outs.into_iter().collect::<Option<Vec<_>>>().ok_or_else(misaligned)?;
                columns.push(Columns { ty: *i, time: Time::Ticks(t_us), columns: outs });
            }
            let mut parts = split(&c, columns, types.len())
                .ok_or_else(|| PyOSError::new_err("usvlog: pass 1 counted fewer rows than its splits"))?;
            let faults = py
                .detach(|| fill::<Usvlog, _>(&file, &layouts, &passes::All, &mut parts))
                .map_err(|e| os_error(&path, &e))?;
            // The rows written: every part's, up to the first part that stopped early (its rows
            // before the fault count; the later parts' rows are not before it, and go).
            let mut rows = vec![0usize; types.len()];
            let mut late = None;
            for (part, fault) in parts.iter().zip(faults) {
                for (i, n) in part.done() {
                    rows[i] += n;
                }
                if let Some(change) = fault {
                    late = Some(Fault::changed(&change));
                    break;
                }
            }
            drop(parts);
            for (i, cols) in arrays {
                let n = rows[i];
                if n == 0 {
                    continue;
                }
                let ty = &types[i];
                let list = PyList::empty(py);
                let names = std::iter::once("t_us").chain(ty.fields.iter().map(|(n, _)| n.as_str()));
                let kinds = std::iter::once(Kind::U64).chain(ty.fields.iter().map(|(_, k)| *k));
                for ((name, kind), buf) in names.zip(kinds).zip(cols) {
                    // A fault in pass 2 leaves fewer rows than counted (the rest was never
                    // written, or not before the fault, and goes).
                    if buf.len() != n * 8 {
                        buf.resize(n * 8)?;
                    }
                    list.append((name, kind.dtype(), buf))?;
                }
                records.append((ty.name.as_str(), ty.id, list))?;
            }
            for u in c.unknown {
                unknown.append(PyTuple::new(py, [u.timestamp, u.tag, u.payload_len])?)?;
            }
            late.or(c.fault.as_ref().map(|s| Fault::stop(s, &types, strict_payload_len)))
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
