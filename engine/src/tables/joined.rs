//! A table's record batches joined into one as they come, for the tables kept in memory
//! ([`super::Tables`], the Python package's `.tables()`): one batch per table, so that
//! `to_numpy()` of a column is a view, not a concatenation, and memory stays at the arrays.
//! The batches are made as for the Parquet export ([`super::TableBuilder`], a batch of
//! [`super::BATCH_ROWS`] rows at a time); each is appended to the table's columns, which grow
//! in place, and dropped.
//!
//! Only tables whose every column is a number, a timestamp, a bool or a list of numbers are
//! joined (a copy of each batch's values and offsets, no per-value work); others keep their
//! batches.

use arrow_array::{make_array, Array, ArrayRef, RecordBatch};
use arrow_buffer::{BooleanBufferBuilder, Buffer, MutableBuffer, NullBufferBuilder};
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};

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
    /// Fixed-width values, as bytes (Arrow's buffer, aligned for every number type).
    Fixed {
        width: usize,
        bytes: MutableBuffer,
    },
    Bool(BooleanBufferBuilder),
    /// A list of fixed-width values: Arrow's offsets (from 0) and the items, as bytes.
    List {
        width: usize,
        item: arrow_schema::FieldRef,
        offsets: Vec<i32>,
        items: MutableBuffer,
        item_nulls: NullBufferBuilder,
    },
}

impl Joined {
    /// The joined columns of a table with this schema, or `None` when a column cannot be joined
    /// by copying its values (strings, lists, structs): such a table keeps its batches.
    pub fn new(schema: &SchemaRef) -> Option<Joined> {
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let ty = f.data_type().clone();
                let values = match &ty {
                    DataType::Boolean => Values::Bool(BooleanBufferBuilder::new(0)),
                    t if t.is_primitive() => {
                        Values::Fixed { width: t.primitive_width()?, bytes: MutableBuffer::new(0) }
                    }
                    DataType::List(item) if item.data_type().is_primitive() => Values::List {
                        width: item.data_type().primitive_width()?,
                        item: item.clone(),
                        offsets: vec![0],
                        items: MutableBuffer::new(0),
                        item_nulls: NullBufferBuilder::new(0),
                    },
                    _ => return None,
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
        let data = a.to_data();
        let (offset, len) = (data.offset(), data.len());
        match &mut self.values {
            Values::Fixed { width, bytes } => {
                let values = data
                    .buffers()
                    .first()
                    .and_then(|b| b.as_slice().get(offset * *width..(offset + len) * *width))
                    .ok_or_else(|| format!("a {} array without its values", self.ty))?;
                bytes.extend_from_slice(values);
            }
            Values::List { width, offsets, items, item_nulls, .. } => {
                let bounds = data.buffers().first().map(|b| b.typed_data::<i32>());
                let bounds = bounds
                    .and_then(|b| b.get(offset..=offset + len))
                    .ok_or_else(|| format!("a {} array without its offsets", self.ty))?;
                let child = data.child_data().first().ok_or_else(|| format!("a {} array without items", self.ty))?;
                let (first, last) = (bounds[0] as usize, bounds[len] as usize);
                let at = child.offset();
                let values = child
                    .buffers()
                    .first()
                    .and_then(|b| b.as_slice().get((at + first) * *width..(at + last) * *width))
                    .ok_or_else(|| format!("a {} array without its items", self.ty))?;
                let shift = offsets.last().copied().unwrap_or(0) as i64 - first as i64;
                let shifted = bounds[1..].iter().map(|o| i32::try_from(*o as i64 + shift));
                for o in shifted {
                    offsets.push(o.map_err(|_| format!("{}: more list items than Arrow's 32-bit offsets count", self.ty))?);
                }
                items.extend_from_slice(values);
                match child.nulls() {
                    None => item_nulls.append_n_non_nulls(last - first),
                    Some(n) => (first..last).for_each(|i| item_nulls.append(n.is_valid(i))),
                }
            }
            Values::Bool(b) => {
                let bools = a
                    .as_any()
                    .downcast_ref::<arrow_array::BooleanArray>()
                    .ok_or_else(|| "a bool column that is not a BooleanArray".to_string())?;
                b.append_buffer(bools.values());
            }
        }
        match a.nulls() {
            None => self.nulls.append_n_non_nulls(len),
            Some(n) => n.iter().for_each(|valid| self.nulls.append(valid)),
        }
        Ok(())
    }

    fn finish(mut self, rows: usize) -> Result<ArrayRef, String> {
        let values = match self.values {
            Values::Fixed { bytes, .. } => Buffer::from(bytes),
            Values::Bool(mut b) => b.finish().into_inner(),
            Values::List { width, item, offsets, items, mut item_nulls } => {
                let n = items.len() / width;
                let child = ArrayData::builder(item.data_type().clone())
                    .len(n)
                    .add_buffer(Buffer::from(items))
                    .nulls(item_nulls.finish())
                    .build()
                    .map_err(|e| format!("joining the items of a {} column: {e}", self.ty))?;
                let data = ArrayData::builder(self.ty.clone())
                    .len(rows)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_child_data(child)
                    .nulls(self.nulls.finish())
                    .build();
                return data.map(make_array).map_err(|e| format!("joining a {} column: {e}", self.ty));
            }
        };
        let data = ArrayData::builder(self.ty.clone()).len(rows).add_buffer(values).nulls(self.nulls.finish()).build();
        data.map(make_array).map_err(|e| format!("joining a {} column: {e}", self.ty))
    }
}
