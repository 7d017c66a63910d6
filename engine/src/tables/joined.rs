//! A table's record batches joined into one as they come, for the tables kept in memory
//! ([`super::Tables`], the Python package's `.tables()`): one batch per table, so that
//! `to_numpy()` of a column is a view, not a concatenation, and memory stays at the arrays.
//! The batches are made as for the Parquet export ([`super::TableBuilder`], a batch of
//! [`super::BATCH_ROWS`] rows at a time); each is appended to the table's columns, which grow
//! in place, and dropped.
//!
//! Only tables whose every column is a number, a timestamp, a bool or a list of numbers are
//! joined (a copy of each batch's values and offsets, no per-value work); others keep their
//! batches. The values grow in typed `Vec`s: the allocator moves a large one's pages when it
//! grows instead of copying them (an Arrow `MutableBuffer`, aligned beyond what `realloc`
//! keeps, is copied at every doubling), and each becomes its array's buffer without a copy.

use arrow_array::types::*;
use arrow_array::{make_array, Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder};
use arrow_data::ArrayData;
use arrow_schema::{DataType, FieldRef, SchemaRef, TimeUnit};

/// The columns of one table so far.
pub struct Joined {
    schema: SchemaRef,
    columns: Vec<Column>,
    rows: usize,
}

struct Column {
    ty: DataType,
    values: Values,
    nulls: NullBufferBuilder,
}

enum Values {
    Prim(Box<dyn Prims>),
    Bool(BooleanBufferBuilder),
    /// A list of numbers: Arrow's offsets (from 0), the items and their validity.
    List {
        item: FieldRef,
        offsets: Vec<i32>,
        items: Box<dyn Prims>,
        item_nulls: NullBufferBuilder,
    },
}

/// The values of a column of one primitive type.
trait Prims: Send {
    /// Appends `len` values of `a` from `offset` (`a` is of this type).
    fn extend(&mut self, a: &dyn Array, offset: usize, len: usize) -> Option<()>;
    fn len(&self) -> usize;
    fn finish(self: Box<Self>) -> Buffer;
}

struct Typed<T: ArrowPrimitiveType>(Vec<T::Native>);

impl<T: ArrowPrimitiveType> Prims for Typed<T> {
    fn extend(&mut self, a: &dyn Array, offset: usize, len: usize) -> Option<()> {
        let values = a.as_any().downcast_ref::<PrimitiveArray<T>>()?.values();
        self.0.extend_from_slice(values.get(offset..offset + len)?);
        Some(())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn finish(self: Box<Self>) -> Buffer {
        Buffer::from_vec(self.0)
    }
}

/// The typed values of a column of type `ty`, or `None` when it is not a number or timestamp.
fn prims(ty: &DataType) -> Option<Box<dyn Prims>> {
    fn of<T: ArrowPrimitiveType>() -> Option<Box<dyn Prims>> {
        Some(Box::new(Typed::<T>(Vec::new())))
    }
    match ty {
        DataType::Int8 => of::<Int8Type>(),
        DataType::Int16 => of::<Int16Type>(),
        DataType::Int32 => of::<Int32Type>(),
        DataType::Int64 => of::<Int64Type>(),
        DataType::UInt8 => of::<UInt8Type>(),
        DataType::UInt16 => of::<UInt16Type>(),
        DataType::UInt32 => of::<UInt32Type>(),
        DataType::UInt64 => of::<UInt64Type>(),
        DataType::Float32 => of::<Float32Type>(),
        DataType::Float64 => of::<Float64Type>(),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => of::<TimestampNanosecondType>(),
        _ => None,
    }
}

impl Joined {
    /// The joined columns of a table with this schema, or `None` when a column cannot be joined
    /// by copying its values (strings, structs): such a table keeps its batches.
    pub fn new(schema: &SchemaRef) -> Option<Joined> {
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let ty = f.data_type().clone();
                let values = match &ty {
                    DataType::Boolean => Values::Bool(BooleanBufferBuilder::new(0)),
                    DataType::List(item) => Values::List {
                        item: item.clone(),
                        offsets: vec![0],
                        items: prims(item.data_type())?,
                        item_nulls: NullBufferBuilder::new(0),
                    },
                    t => Values::Prim(prims(t)?),
                };
                Some(Column { ty, values, nulls: NullBufferBuilder::new(0) })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Joined { schema: schema.clone(), columns, rows: 0 })
    }

    /// Appends a batch of the table (its schema's columns, in order).
    pub fn push(&mut self, batch: &RecordBatch) -> Result<(), String> {
        if batch.num_columns() != self.columns.len() {
            return Err(format!("a batch of {} columns for {}", batch.num_columns(), self.columns.len()));
        }
        for (c, a) in self.columns.iter_mut().zip(batch.columns()) {
            c.push(a)?;
        }
        self.rows += batch.num_rows();
        Ok(())
    }

    /// The table as one batch (`None` when it has no rows).
    pub fn finish(self) -> Result<Option<RecordBatch>, String> {
        if self.rows == 0 {
            return Ok(None);
        }
        let rows = self.rows;
        let arrays = self.columns.into_iter().map(|c| c.finish(rows)).collect::<Result<Vec<ArrayRef>, _>>()?;
        RecordBatch::try_new(self.schema, arrays).map(Some).map_err(|e| format!("joining the batches: {e}"))
    }
}

impl Column {
    fn push(&mut self, a: &ArrayRef) -> Result<(), String> {
        if a.data_type() != &self.ty {
            return Err(format!("a column of type {} for {}", a.data_type(), self.ty));
        }
        let len = a.len();
        let bad = || format!("a {} array that is not one", self.ty);
        match &mut self.values {
            Values::Prim(p) => p.extend(a.as_ref(), 0, len).ok_or_else(bad)?,
            Values::Bool(b) => {
                let bools = a.as_any().downcast_ref::<arrow_array::BooleanArray>().ok_or_else(bad)?;
                b.append_buffer(bools.values());
            }
            Values::List { offsets, items, item_nulls, .. } => {
                let list = a.as_any().downcast_ref::<arrow_array::ListArray>().ok_or_else(bad)?;
                let bounds = list.value_offsets();
                let (first, last) = (bounds[0] as usize, bounds[len] as usize);
                let shift = *offsets.last().unwrap_or(&0) as i64 - first as i64;
                for o in &bounds[1..] {
                    let o = i32::try_from(i64::from(*o) + shift)
                        .map_err(|_| format!("{}: more list items than Arrow's 32-bit offsets count", self.ty))?;
                    offsets.push(o);
                }
                let values = list.values();
                items.extend(values.as_ref(), first, last - first).ok_or_else(bad)?;
                match values.nulls().filter(|n| n.null_count() > 0) {
                    None => item_nulls.append_n_non_nulls(last - first),
                    Some(n) => (first..last).for_each(|i| item_nulls.append(n.is_valid(i))),
                }
            }
        }
        match a.nulls().filter(|n| n.null_count() > 0) {
            None => self.nulls.append_n_non_nulls(len),
            Some(n) => n.iter().for_each(|valid| self.nulls.append(valid)),
        }
        Ok(())
    }

    fn finish(mut self, rows: usize) -> Result<ArrayRef, String> {
        let fail = |e: arrow_schema::ArrowError| format!("joining a {} column: {e}", self.ty);
        let data = match self.values {
            Values::Prim(p) => ArrayData::builder(self.ty.clone()).len(rows).add_buffer(p.finish()),
            Values::Bool(mut b) => ArrayData::builder(self.ty.clone()).len(rows).add_buffer(b.finish().into_inner()),
            Values::List { item, offsets, items, mut item_nulls } => {
                let n = items.len();
                let child = ArrayData::builder(item.data_type().clone())
                    .len(n)
                    .add_buffer(items.finish())
                    .nulls(item_nulls.finish())
                    .build()
                    .map_err(fail)?;
                ArrayData::builder(self.ty.clone())
                    .len(rows)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_child_data(child)
            }
        };
        data.nulls(self.nulls.finish()).build().map(make_array).map_err(fail)
    }
}
