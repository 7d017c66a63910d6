//! `logspec.usvlog.read_timeseries_bin`'s native half: a USVLOG file decoded into one column per
//! record type and field, in the dtypes usv-autopilot's reader returns (`t_us` `uint64`, float
//! fields `float64`, integer fields `int64`), handed to Python as `bytearray`s that
//! `py/python/logspec/usvlog.py` views with `numpy.frombuffer` (no numpy C API, no copy there).
//!
//! The columns are the IR's: record names, field names, kinds and offsets come from the schema
//! (the Parquet export's [`FixedLayout`]). Two streaming passes over the file keep memory at the
//! columns: the first frames the records (counting each type, so that every column is allocated
//! once, as its final `bytearray`, left uninitialised: every byte is written after), the second
//! keeps each record's payload bytes in a small block per type and, when a block is full, fills
//! the block's rows of every column a column at a time ([`FixedLayout::gather`]), so that each
//! column is written sequentially.

use std::fs::File;
use std::path::{Path, PathBuf};

use logspec::formats::usvlog::Usvlog;
use logspec::ir::ir::{Prim, Schema, Ty, TypeDef};
use logspec::runtime::{Framing, ReadError, Reader};
use logspec_cli::cli::columns::{FixedLayout, Gather};
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

/// Rows kept per record type before they are written to the columns: small enough that a
/// block's payload bytes stay in the cache while each of its columns is filled.
const BLOCK: usize = 1024;

/// One column's memory (the `bytearray` it becomes), typed.
enum Out<'a> {
    F64(&'a mut [f64]),
    I64(&'a mut [i64]),
    U64(&'a mut [u64]),
}

/// A record type's columns (`t_us` first) and its block of rows not yet in them.
struct Table<'a> {
    ty: usize,
    t_us: &'a mut [u64],
    columns: Vec<Out<'a>>,
    /// Rows already in the columns.
    done: usize,
    /// The block: timestamps and payload bytes of rows `done..done + block_t.len()`.
    block_t: Vec<u64>,
    block: Vec<u8>,
}

impl Table<'_> {
    /// Writes the block's rows into the columns, a column at a time. False when the columns
    /// have no room for them (more rows than pass 1 counted: the file changed).
    fn flush(&mut self, layout: &FixedLayout) -> bool {
        let n = self.block_t.len();
        let rows = self.done..self.done + n;
        let Some(t) = self.t_us.get_mut(rows.clone()) else { return false };
        t.copy_from_slice(&self.block_t);
        for (j, out) in self.columns.iter_mut().enumerate() {
            let room = match out {
                Out::F64(c) => c.get_mut(rows.clone()).map(|c| layout.gather(j, &self.block, c)),
                Out::I64(c) => c.get_mut(rows.clone()).map(|c| layout.gather(j, &self.block, c)),
                Out::U64(c) => c.get_mut(rows.clone()).map(|c| layout.gather(j, &self.block, c)),
            };
            if room.is_none() {
                return false;
            }
        }
        self.done += n;
        self.block_t.clear();
        self.block.clear();
        true
    }
}

/// Pass 2: the first `limit` records, each known one into its table (`tables[slot[type]]`).
/// Returns the fault that stopped it early, if any; the rows before it are in the columns
/// (each table's `done`).
fn fill(path: &Path, types: &[Type], limit: u64, tables: &mut [Table<'_>]) -> std::io::Result<Option<Fault>> {
    let by_id = lookup(types);
    let mut slot = vec![usize::MAX; types.len()];
    for (t, table) in tables.iter().enumerate() {
        slot[table.ty] = t;
    }
    let changed = |offset, index, tag: Option<u64>| Fault {
        message: "usvlog: the file changed while it was read".into(),
        offset,
        record_index: index,
        type_id: tag,
        record: tag.and_then(Usvlog::record_name),
    };
    let mut r = match Reader::<_, Usvlog>::new(File::open(path)?) {
        Ok(r) => r,
        Err(e) => return Ok(Some(Fault::read(&e))),
    };
    let mut fault = None;
    for _ in 0..limit {
        let raw = match r.next_raw() {
            Some(Ok(raw)) => raw,
            Some(Err(e)) => {
                fault = Some(Fault::read(&e));
                break;
            }
            None => {
                fault = Some(changed(r.position(), None, None));
                break;
            }
        };
        let tag = raw.header.tag;
        let Some(i) = find(&by_id, types, tag) else { continue };
        let ty = &types[i];
        let (Some(table), Some(payload)) = (tables.get_mut(slot[i]), raw.payload.get(..ty.size)) else {
            fault = Some(changed(raw.offset, Some(raw.index), Some(tag)));
            break;
        };
        table.block_t.push(raw.header.timestamp.unwrap_or(0));
        table.block.extend_from_slice(payload);
        if table.block_t.len() == BLOCK && !table.flush(&ty.layout) {
            fault = Some(changed(raw.offset, Some(raw.index), Some(tag)));
            break;
        }
    }
    // Every complete row before the end (or the fault) goes into the columns.
    let end = r.position();
    for table in tables.iter_mut() {
        if !table.flush(&types[table.ty].layout) {
            return Ok(Some(fault.unwrap_or_else(|| changed(end, None, None))));
        }
    }
    Ok(fault)
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
                .filter(|l| l.columns() == fields.len())
                .ok_or_else(|| PyOSError::new_err(format!("{}: not of a fixed layout of numbers", r.name)))?;
            Ok(Type { name: r.name.clone(), id: r.id, size: layout.size, fields, layout })
        })
        .collect()
}

/// A new `bytearray` of `len` bytes, not initialised (the caller writes every byte before
/// Python sees it): zeroing the columns first would write them twice.
fn uninit_bytearray(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyByteArray>> {
    let len = isize::try_from(len).map_err(|_| PyOSError::new_err("usvlog: the columns do not fit in memory"))?;
    // SAFETY: `PyByteArray_FromStringAndSize` with a null pointer makes a bytearray of `len`
    // bytes whose contents are not set; the GIL is held; the new reference is owned here.
    unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), len))
            .map(|b| b.cast_into_unchecked())
    }
}

/// Has the kernel map a large new column's pages in one call (Linux 5.14 and later;
/// `MADV_POPULATE_WRITE`; an older kernel refuses, which changes nothing): the column is about
/// to be written whole, and one call is cheaper than a page fault per 4 KiB page. (Huge pages,
/// `MADV_HUGEPAGE`, were tried: slower in a new process, the kernel compacting memory first.)
fn prefault(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = bytes.as_mut_ptr() as usize;
        let first = start.next_multiple_of(PAGE);
        let end = (start + bytes.len()) / PAGE * PAGE;
        if end >= first + (64 << 10) {
            // SAFETY: the range lies inside `bytes`, page-aligned; MADV_POPULATE_WRITE maps
            // the pages as a write would, never changing their contents.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_POPULATE_WRITE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// A column's bytes as values of `T` (`None` when the buffer is not aligned for `T`, which
/// Python's allocator never does).
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
                    .map(|_| uninit_bytearray(py, n.saturating_mul(8)))
                    .collect::<PyResult<Vec<_>>>()?;
                arrays.push((i, cols));
            }
            let misaligned = || PyOSError::new_err("usvlog: a column's memory is not aligned for its dtype");
            // SAFETY: the bytearrays were just made here and no Python code has a reference to
            // them while these slices live (only this function holds them, and it gives them to
            // Python after the slices are dropped), so nothing else reads, writes or resizes
            // their buffers meanwhile.
            let mut tables = Vec::with_capacity(arrays.len());
            for (i, cols) in &arrays {
                let mut bufs = cols.iter().map(|b| {
                    let bytes = unsafe { b.as_bytes_mut() };
                    prefault(bytes);
                    bytes
                });
                let t_us = bufs.next().and_then(typed::<u64>).ok_or_else(misaligned)?;
                let mut columns = Vec::with_capacity(types[*i].fields.len());
                for ((_, kind), buf) in types[*i].fields.iter().zip(bufs) {
                    columns.push(match kind {
                        Kind::F64 => typed(buf).map(Out::F64),
                        Kind::I64 => typed(buf).map(Out::I64),
                        Kind::U64 => typed(buf).map(Out::U64),
                    });
                }
                let columns = columns.into_iter().collect::<Option<Vec<_>>>().ok_or_else(misaligned)?;
                let size = types[*i].size;
                tables.push(Table {
                    ty: *i,
                    t_us,
                    columns,
                    done: 0,
                    block_t: Vec::with_capacity(BLOCK),
                    block: Vec::with_capacity(BLOCK * size),
                });
            }
            let late = py.detach(|| fill(&path, &types, c.limit, &mut tables)).map_err(|e| os_error(&path, &e))?;
            let rows: Vec<usize> = tables.iter().map(|t| t.done).collect();
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
                    // A fault in pass 2 leaves fewer rows than counted (the rest was never
                    // written, and goes).
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
