//! The in-memory tables of a USVLOG file (the Python package's `tables()`, `table()` and
//! `numpy()`) by the two passes that `logspec.usvlog.read_timeseries_bin` uses
//! ([`super::passes`]): pass 1 frames the file and counts each table's rows, every column is
//! then allocated once at its final size, and pass 2 fills the columns in place on up to two
//! threads. Each table is one batch with the schema, metadata and values that the sample source
//! gives through [`super::Tables`] (`TableBuilder`'s fixed-layout path, joined into one batch);
//! `log_elapsed_ns` shares `log_time`'s buffer, the two being equal for a log whose time origin
//! is 0.
//!
//! Where this path cannot give exactly what the sample source gives, it declines (`Ok(None)`)
//! and the caller reads the file through the sample source: a file header that does not decode
//! with the current layout (an older schema id, a bad header), a record type without a fixed
//! layout or with const fields (whose decoding can fail), a known record whose payload is not
//! its type's size (the source warns and skips it), an I/O error in pass 1, and filters that
//! match nothing (the source's error lists the channels).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::{ArrayRef, BooleanArray, Int64Array, PrimitiveArray, RecordBatch, TimestampNanosecondArray};
use arrow_buffer::{BooleanBuffer, Buffer, ScalarBuffer};
use logspec::formats::usvlog::Usvlog;
use logspec::ir::ir::Prim;
use logspec::runtime::{FramedFormat, Framing, ReadErrorKind};

use super::passes::{self, Columns, Keep, Layouts, Out, Stop, Time};
use super::{Table, TableBuilder};
use crate::columns::FixedLayout;
use logspec::log::fault::SHOWN_PER_KIND;
use logspec::log::filter::Tally;
use logspec::log::Error;
use logspec::log::Fault;
use logspec::log::Select;

/// What [`read_usvlog`] read: the tables in the order of their first row, the warnings, and
/// the error that ended the reading early (after every row before it).
pub struct FixedRead {
    pub tables: Vec<Table>,
    pub warnings: Vec<String>,
    pub error: Option<Error>,
}

/// Reads a USVLOG file's tables (those `select` keeps) by the two passes; `shown` names the
/// file in messages. `parts`: the threads of pass 2 (`None`: one per core, at most two, for
/// files of at least 8 MiB a thread). `between_passes` is called after pass 1 (a test's hook to
/// change the file between the passes). `Ok(None)`: this path does not apply to the file; read
/// it through the sample source ([`super::Tables`]).
pub fn read_usvlog(
    path: &Path,
    shown: &str,
    select: &Select,
    parts: Option<usize>,
    between_passes: Option<&dyn Fn()>,
) -> Result<Option<FixedRead>, Error> {
    let schema = Arc::clone(logspec::formats::schemas::usvlog());
    // The generated reader decodes the schema's own layout (the sample source hands the payload
    // bytes to the fixed-layout path only then).
    let current = schema.format.schema_id.as_ref().map(|s| s.value);
    if Usvlog::KNOWN_SCHEMA_IDS != current.as_slice() {
        return Ok(None);
    }
    let scale = logspec::log::framed::timestamp_scale(&schema);
    // Every record type as its table would be: schema, metadata and layout.
    let mut builders = Vec::with_capacity(schema.records.len());
    let mut layouts = Vec::with_capacity(schema.records.len());
    for r in &schema.records {
        let fields = &schema.strukt(r.body).fields;
        if fields.iter().any(|f| f.value.is_some()) || Usvlog::record_name(r.id) != Some(r.name.as_str()) {
            return Ok(None);
        }
        let channel = logspec::log::scan::record_channel(&schema, &r.name);
        let builder = TableBuilder::new(&channel, false);
        let Some(layout) = builder.fixed.as_ref().map(|f| f.layout.clone()).filter(FixedLayout::is_flat) else {
            return Ok(None);
        };
        layouts.push((r.id, layout));
        builders.push(Some((r.name.clone(), builder)));
    }
    let layouts = Layouts::new(layouts, true);
    let mut filter = Filter::new(select, &schema.records.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), scale);

    let file = File::open(path).map_err(|e| Error::Input(format!("{shown}: cannot open: {e}")))?;
    let len = file.metadata().map_err(|e| Error::Input(format!("{shown}: cannot open: {e}")))?.len();
    let parts = parts.unwrap_or_else(|| passes::auto_parts(len)).clamp(1, 64);
    let Ok(counted) = passes::count::<Usvlog, _>(&file, len, &layouts, &mut filter, SHOWN_PER_KIND, parts, parts > 1)
    else {
        return Ok(None);
    };
    match &counted.fault {
        Some(Stop::Length { .. }) => return Ok(None),
        Some(Stop::Read(e)) if matches!(e.kind, ReadErrorKind::Io(_)) => return Ok(None),
        _ => {}
    }
    if Tally::needed(select) && filter.tally.check(select, shown).is_err() {
        return Ok(None);
    }

    // Every column at its final size (zeroed memory from the allocator: fresh pages, which the
    // kernel zeroes as it maps them, and pass 2 maps them in one call a part).
    let mut bufs: Vec<(usize, Vec<i64>, Vec<Buf>)> = counted
        .order
        .iter()
        .map(|&i| {
            let n = counted.counts[i];
            let l = layouts.layout(i);
            (i, vec![0i64; n], (0..l.columns()).map(|j| Buf::new(l.prim(j), n)).collect())
        })
        .collect();
    let columns = bufs
        .iter_mut()
        .map(|(i, time, cols)| Columns {
            ty: *i,
            time: Time::Nanos(time, scale),
            columns: cols.iter_mut().map(Buf::out).collect(),
        })
        .collect();
    let Some(mut parts) = passes::split(&counted, columns, layouts.len()) else {
        return Err(Error::Input(format!("{shown}: internal error: pass 1 counted fewer rows than its splits")));
    };
    if let Some(hook) = between_passes {
        hook();
    }
    let changes = passes::fill::<Usvlog, _>(&file, &layouts, &filter, &mut parts)
        .map_err(|e| Error::Input(format!("{shown}: I/O error: {e}")))?;
    // The rows written: every part's, up to the first part that stopped early (its rows before
    // the change count; the later parts' rows are not before it, and go).
    let mut rows = vec![0usize; layouts.len()];
    let mut late = None;
    for (part, change) in parts.iter().zip(changes) {
        for (i, n) in part.done() {
            rows[i] += n;
        }
        if change.is_some() {
            late = change;
            break;
        }
    }
    drop(parts);

    let mut tables = Vec::with_capacity(bufs.len());
    for (i, mut time, cols) in bufs {
        let n = rows[i];
        let Some((name, builder)) = builders[i].take().filter(|_| n > 0) else { continue };
        time.truncate(n);
        let time = Buffer::from_vec(time);
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(TimestampNanosecondArray::new(ScalarBuffer::new(time.clone(), 0, n), None)),
            Arc::new(Int64Array::new(ScalarBuffer::new(time, 0, n), None)),
        ];
        arrays.extend(cols.into_iter().map(|c| c.array(n)));
        let batch = RecordBatch::try_new(builder.schema.clone(), arrays)
            .map_err(|e| Error::Input(format!("{name}: building a batch: {e}")))?;
        tables.push(Table { name, builder, batches: vec![batch], joined: None, direct: None });
    }
    let mut warnings: Vec<String> =
        counted.unknown.iter().map(|u| logspec::log::scan::unknown_record(shown, u.offset, u.tag)).collect();
    warnings.extend(counted.faults.more(shown));
    let error = match (late, counted.fault) {
        (Some(c), _) => {
            Some(Error::from(Fault::at(shown, c.offset, c.index, format!("{shown}: {}: {c}", Usvlog::NAME))))
        }
        (None, Some(Stop::Read(e))) => Some(Error::from(Fault::read(shown, &e))),
        (None, _) => None,
    };
    Ok(Some(FixedRead { tables, warnings, error }))
}

/// The sample source's filters as pass 1 and 2 ask them: the channel (a record type) and the
/// time window (nanoseconds from the log's origin, 0 for USVLOG), with the [`Tally`] the
/// source keeps, to tell a filter that matched nothing.
struct Filter<'s> {
    select: &'s Select,
    wanted: Vec<bool>,
    timed: bool,
    scale: u64,
    names: Vec<String>,
    met: Vec<bool>,
    tally: Tally,
}

impl<'s> Filter<'s> {
    fn new(select: &'s Select, names: &[&str], scale: u64) -> Self {
        Filter {
            select,
            wanted: names.iter().map(|n| select.wants_channel(n)).collect(),
            timed: select.since.is_some() || select.until.is_some(),
            scale,
            names: names.iter().map(|n| n.to_string()).collect(),
            met: vec![false; names.len()],
            tally: Tally::default(),
        }
    }
}

impl Keep for Filter<'_> {
    #[inline]
    fn keep(&self, ty: usize, tick: u64) -> bool {
        self.wanted[ty] && (!self.timed || self.select.wants_time(tick.saturating_mul(self.scale)))
    }

    #[inline]
    fn note(&mut self, ty: usize, tick: u64) -> bool {
        if !self.met[ty] {
            self.met[ty] = true;
            self.tally.channel(&self.names[ty]);
        }
        if !self.wanted[ty] {
            return false;
        }
        let t = tick.saturating_mul(self.scale);
        let kept = !self.timed || self.select.wants_time(t);
        self.tally.sample(Some(t), kept);
        kept
    }
}

/// A column's values at their final size, in the Arrow array's native type (a bool as a byte).
enum Buf {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(Vec<u8>),
}

impl Buf {
    /// `n` rows of a column of wire type `prim` (`None`: a bool).
    fn new(prim: Option<Prim>, n: usize) -> Buf {
        match prim {
            None => Buf::Bool(vec![0; n]),
            Some(Prim::U8) => Buf::U8(vec![0; n]),
            Some(Prim::U16) => Buf::U16(vec![0; n]),
            Some(Prim::U32) => Buf::U32(vec![0; n]),
            Some(Prim::U64) => Buf::U64(vec![0; n]),
            Some(Prim::I8) => Buf::I8(vec![0; n]),
            Some(Prim::I16) => Buf::I16(vec![0; n]),
            Some(Prim::I32) => Buf::I32(vec![0; n]),
            Some(Prim::I64) => Buf::I64(vec![0; n]),
            Some(Prim::F32) => Buf::F32(vec![0.0; n]),
            Some(Prim::F64) => Buf::F64(vec![0.0; n]),
        }
    }

    fn out(&mut self) -> Out<'_> {
        match self {
            Buf::U8(v) | Buf::Bool(v) => Out::U8(v),
            Buf::U16(v) => Out::U16(v),
            Buf::U32(v) => Out::U32(v),
            Buf::U64(v) => Out::U64(v),
            Buf::I8(v) => Out::I8(v),
            Buf::I16(v) => Out::I16(v),
            Buf::I32(v) => Out::I32(v),
            Buf::I64(v) => Out::I64(v),
            Buf::F32(v) => Out::F32(v),
            Buf::F64(v) => Out::F64(v),
        }
    }

    /// The first `n` rows as the Arrow array of the column's type, with no nulls.
    fn array(self, n: usize) -> ArrayRef {
        fn prim<T: ArrowPrimitiveType>(mut v: Vec<T::Native>, n: usize) -> ArrayRef {
            v.truncate(n);
            Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
        }
        match self {
            Buf::Bool(v) => {
                Arc::new(BooleanArray::new(BooleanBuffer::collect_bool(n.min(v.len()), |k| v[k] != 0), None))
            }
            Buf::U8(v) => prim::<UInt8Type>(v, n),
            Buf::U16(v) => prim::<UInt16Type>(v, n),
            Buf::U32(v) => prim::<UInt32Type>(v, n),
            Buf::U64(v) => prim::<UInt64Type>(v, n),
            Buf::I8(v) => prim::<Int8Type>(v, n),
            Buf::I16(v) => prim::<Int16Type>(v, n),
            Buf::I32(v) => prim::<Int32Type>(v, n),
            Buf::I64(v) => prim::<Int64Type>(v, n),
            Buf::F32(v) => prim::<Float32Type>(v, n),
            Buf::F64(v) => prim::<Float64Type>(v, n),
        }
    }
}
