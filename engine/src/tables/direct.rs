//! The in-memory table of an RLOG key whose values are numbers, booleans or lists of doubles or
//! integers (the Python package's `.tables()`; not the Parquet export, which keeps
//! [`super::TableBuilder`]'s batches): its rows go straight into plain vectors that become the
//! table's one batch at the end (`Buffer::from_vec`, no copy), with no Arrow builder per batch
//! and no copy into a joined column ([`super::joined`]). These are most values
//! of an AdvantageKit log (doubles, booleans, ints, and arrays of doubles such as joystick axes
//! and PDP currents).
//!
//! The rows are those of the builder's path: a value of the column's type is appended as itself
//! (the arms of `rlog::typed`); anything else (an R1 `null`, a value of another type, a
//! `Value` handed to [`super::Tables`] through
//! [`Samples::sample`](logspec::log::Samples::sample)) takes [`Col::append`]'s rule, through a
//! one-row column, so the rule stays in one place. When the log's time origin is 0 (RLOG),
//! `log_elapsed_ns` equals `log_time` row for row, and the two columns share one buffer.

use arrow_array::types::{Float32Type, Float64Type, Int64Type};
use arrow_array::{make_array, Array, ArrayRef, BooleanArray, ListArray, PrimitiveArray, RecordBatch};
use arrow_buffer::{ArrowNativeType, BooleanBufferBuilder, Buffer, NullBufferBuilder};
use arrow_data::ArrayData;
use arrow_schema::{DataType, FieldRef, SchemaRef};
use logspec::formats::rlog::{self, R1ValueRef, R2ValueRef, ValueRef};
use logspec::value::Value;

use crate::columns::Col;
use logspec::log::scan::Channel;

/// The rows of one table so far.
pub struct Direct {
    schema: SchemaRef,
    origin_ns: u64,
    time: Vec<i64>,
    /// `log_elapsed_ns`, kept only when the time origin is not 0 (else it is `time`).
    elapsed: Option<Vec<i64>>,
    values: Values,
    nulls: NullBufferBuilder,
    /// Values that did not fit the column's type and were appended as null.
    pub misfits: u64,
}

enum Values {
    Bool(BooleanBufferBuilder),
    I64(Vec<i64>),
    F64(Vec<f64>),
    F32(Vec<f32>),
    /// Lists of doubles (R1 `double[]`, R2 `double[]`) and of integers (R1 `int[]` widened,
    /// R2 `int64[]`).
    F64List(List<f64>),
    I64List(List<i64>),
}

/// A list column's rows, with the validity of each item (an item that did not fit is null, as
/// in [`Col::append`]).
struct List<T> {
    field: FieldRef,
    rows: Lists<T>,
    item_nulls: NullBufferBuilder,
}

impl<T: ArrowNativeType> List<T> {
    fn new(field: &FieldRef) -> Self {
        List { field: field.clone(), rows: Lists::default(), item_nulls: NullBufferBuilder::new(0) }
    }

    /// Appends a row of these items, all valid; false (nothing appended) when the column
    /// would hold more items than Arrow's 32-bit offsets can count.
    #[inline]
    fn push(&mut self, items: impl ExactSizeIterator<Item = T>) -> bool {
        let before = self.rows.items.len();
        let pushed = self.rows.push(items);
        self.item_nulls.append_n_non_nulls(self.rows.items.len() - before);
        pushed
    }

    /// Appends the row of a one-row list array made by [`Col::append`] (none: a null row).
    fn push_array<P: arrow_array::types::ArrowPrimitiveType<Native = T>>(&mut self, a: &dyn Array) -> bool {
        let list = a.as_any().downcast_ref::<ListArray>().filter(|l| l.is_valid(0));
        let Some(items) = list.map(|l| l.value(0)) else {
            return self.push(std::iter::empty());
        };
        let Some(items) = items.as_any().downcast_ref::<PrimitiveArray<P>>() else {
            return self.push(std::iter::empty());
        };
        if !self.rows.push(items.values().iter().copied()) {
            return false;
        }
        (0..items.len()).for_each(|i| self.item_nulls.append(items.is_valid(i)));
        true
    }

    fn finish(mut self, rows: usize, nulls: Option<arrow_buffer::NullBuffer>) -> Result<ArrayRef, String> {
        let items = self.rows.items.len();
        let child = ArrayData::builder(self.field.data_type().clone())
            .len(items)
            .add_buffer(buffer(self.rows.items))
            .nulls(self.item_nulls.finish())
            .build()
            .map_err(|e| format!("the list items: {e}"))?;
        let ty = DataType::List(self.field.clone());
        let data = ArrayData::builder(ty)
            .len(rows)
            .add_buffer(Buffer::from_vec(self.rows.offsets))
            .add_child_data(child)
            .nulls(nulls)
            .build()
            .map_err(|e| format!("the lists: {e}"))?;
        Ok(make_array(data))
    }
}

impl Direct {
    /// The direct rows of a table of `schema` (`log_time`, `log_elapsed_ns`, `value`), when the
    /// channel is an RLOG key's (`logspec::log::rlog_value_type`) of a number, boolean, `double[]` or
    /// `int[]`/`int64[]` type.
    pub fn of(channel: &Channel, schema: &SchemaRef, origin_ns: u64) -> Option<Direct> {
        let ty = channel.ty.as_ref()?;
        if ty.schema.format.name != "rlog" || schema.fields().len() != 3 || schema.field(2).name() != "value" {
            return None;
        }
        let values = match schema.field(2).data_type() {
            DataType::Boolean => Values::Bool(BooleanBufferBuilder::new(0)),
            DataType::Int64 => Values::I64(Vec::new()),
            DataType::Float64 => Values::F64(Vec::new()),
            DataType::Float32 => Values::F32(Vec::new()),
            DataType::List(f) if f.data_type() == &DataType::Float64 => Values::F64List(List::new(f)),
            DataType::List(f) if f.data_type() == &DataType::Int64 => Values::I64List(List::new(f)),
            _ => return None,
        };
        Some(Direct {
            schema: schema.clone(),
            origin_ns,
            time: Vec::new(),
            elapsed: (origin_ns != 0).then(Vec::new),
            values,
            nulls: NullBufferBuilder::new(0),
            misfits: 0,
        })
    }

    /// Appends a row from the value the reader lends.
    #[inline]
    pub fn rlog(&mut self, t_ns: u64, value: &ValueRef<'_>) {
        use R1ValueRef as R1;
        use R2ValueRef as R2;
        let typed = match (&mut self.values, value) {
            (Values::Bool(b), ValueRef::R1(R1::Boolean { value }) | ValueRef::R2(R2::Boolean { value })) => {
                b.append(*value);
                true
            }
            (Values::I64(v), ValueRef::R1(R1::Integer { value })) => {
                push(v, i64::from(*value));
                true
            }
            (Values::I64(v), ValueRef::R2(R2::Int64 { value })) => {
                push(v, *value);
                true
            }
            (Values::F64(v), ValueRef::R1(R1::Double { value }) | ValueRef::R2(R2::Double { value })) => {
                push(v, *value);
                true
            }
            // A NaN goes the generic way (widened and narrowed again), as in `rlog::typed`.
            (Values::F32(v), ValueRef::R2(R2::Float { value })) if !value.is_nan() => {
                push(v, *value);
                true
            }
            (Values::F64List(l), ValueRef::R1(R1::DoubleArray { value }) | ValueRef::R2(R2::DoubleArray { value })) => {
                l.push(value.iter())
            }
            (Values::I64List(l), ValueRef::R1(R1::IntegerArray { value })) => l.push(value.iter().map(i64::from)),
            (Values::I64List(l), ValueRef::R2(R2::Int64Array { value })) => l.push(value.iter()),
            _ => false,
        };
        if typed {
            self.nulls.append_non_null();
        } else if matches!(self.values, Values::F64List(_) | Values::I64List(_)) && list_of_type(&self.values, value) {
            // A list of the column's type with more items than the column can count.
            self.too_many();
        } else {
            self.generic(Some(&rlog::to_value(&value.to_value())));
        }
        self.end_row(t_ns);
    }

    /// Appends a row from a decoded `{"value": ..}` (the member found by name, as
    /// [`super::TableBuilder::sample`] finds it; none is a null).
    pub fn sample(&mut self, t_ns: u64, value: &Value) {
        let found = match value {
            Value::Object(m) => m.iter().find(|(n, _)| n == "value").map(|(_, v)| v),
            _ => None,
        };
        self.generic(found);
        self.end_row(t_ns);
    }

    /// Appends a value as [`Col::append`] appends it to a column of this type.
    #[cold]
    fn generic(&mut self, value: Option<&Value>) {
        let mut col = Col::new(self.schema.field(2).data_type());
        self.misfits += col.append(value);
        let a = col.finish();
        let valid = a.is_valid(0);
        let any = a.as_any();
        match &mut self.values {
            Values::Bool(b) => b.append(valid && any.downcast_ref::<BooleanArray>().is_some_and(|x| x.value(0))),
            Values::I64(v) => push(v, any.downcast_ref::<PrimitiveArray<Int64Type>>().map_or(0, |x| x.value(0))),
            Values::F64(v) => push(v, any.downcast_ref::<PrimitiveArray<Float64Type>>().map_or(0.0, |x| x.value(0))),
            Values::F32(v) => push(v, any.downcast_ref::<PrimitiveArray<Float32Type>>().map_or(0.0, |x| x.value(0))),
            Values::F64List(l) => {
                if !l.push_array::<Float64Type>(&a) {
                    return self.too_many();
                }
            }
            Values::I64List(l) => {
                if !l.push_array::<Int64Type>(&a) {
                    return self.too_many();
                }
            }
        }
        self.nulls.append(valid);
    }

    /// A list row whose items the column cannot count: a null row, counted as a misfit.
    #[cold]
    fn too_many(&mut self) {
        match &mut self.values {
            Values::F64List(l) => l.push(std::iter::empty()),
            Values::I64List(l) => l.push(std::iter::empty()),
            _ => true,
        };
        self.misfits += 1;
        self.nulls.append_null();
    }

    /// The row's time columns, as [`super::TableBuilder`] writes them.
    #[inline]
    fn end_row(&mut self, t_ns: u64) {
        push(&mut self.time, i64::try_from(t_ns).unwrap_or(i64::MAX));
        if let Some(e) = &mut self.elapsed {
            push(e, i64::try_from(t_ns.saturating_sub(self.origin_ns)).unwrap_or(i64::MAX));
        }
    }

    /// The rows as one batch (`None` when there are none).
    pub fn finish(self) -> Result<Option<RecordBatch>, String> {
        let rows = self.time.len();
        if rows == 0 {
            return Ok(None);
        }
        let time = buffer(self.time);
        let elapsed = self.elapsed.map_or_else(|| time.clone(), buffer);
        let fields = self.schema.fields();
        let array = |i: usize, buffer: Buffer, nulls| -> Result<ArrayRef, String> {
            let ty = fields[i].data_type().clone();
            let data = ArrayData::builder(ty).len(rows).add_buffer(buffer).nulls(nulls).build();
            data.map(make_array).map_err(|e| format!("column {}: {e}", fields[i].name()))
        };
        let nulls = { self.nulls }.finish();
        let value = match self.values {
            Values::Bool(mut b) => array(2, b.finish().into_inner(), nulls)?,
            Values::I64(v) => array(2, buffer(v), nulls)?,
            Values::F64(v) => array(2, buffer(v), nulls)?,
            Values::F32(v) => array(2, buffer(v), nulls)?,
            Values::F64List(l) => l.finish(rows, nulls)?,
            Values::I64List(l) => l.finish(rows, nulls)?,
        };
        let arrays = vec![array(0, time, None)?, array(1, elapsed, None)?, value];
        RecordBatch::try_new(self.schema.clone(), arrays).map(Some).map_err(|e| format!("building the batch: {e}"))
    }
}

/// Whether `value` is a list the column's list type takes (of its item type).
fn list_of_type(values: &Values, value: &ValueRef<'_>) -> bool {
    use R1ValueRef as R1;
    use R2ValueRef as R2;
    matches!(
        (values, value),
        (Values::F64List(_), ValueRef::R1(R1::DoubleArray { .. }) | ValueRef::R2(R2::DoubleArray { .. }))
            | (Values::I64List(_), ValueRef::R1(R1::IntegerArray { .. }) | ValueRef::R2(R2::Int64Array { .. }))
    )
}

/// A column's vector as an Arrow buffer (its allocation, not a copy), without its spare room.
fn buffer<T: ArrowNativeType>(mut v: Vec<T>) -> Buffer {
    v.shrink_to_fit();
    Buffer::from_vec(v)
}

/// Pushes onto a column's vector, growing it fourfold when full: a vector's growth copies it
/// (the allocator moves all but the largest blocks), so growing by 4 copies a third as much as
/// growing by 2. What is never written stays unmapped, and the spare room is given back when
/// the column becomes an array ([`Direct::finish`]).
#[inline(always)]
pub(crate) fn push<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() {
        grow(v);
    }
    v.push(x);
}

#[cold]
#[inline(never)]
fn grow<T>(v: &mut Vec<T>) {
    // From a few rows: a log of 65,535 keys of one value each must not hold 65,535 x 3 columns
    // of hundreds of rows.
    v.reserve(v.capacity().max(8) * 3);
}

/// A column of lists of numbers: Arrow's offsets (from 0, one more than the rows) and the
/// items of every row, in order.
pub struct Lists<T> {
    pub offsets: Vec<i32>,
    pub items: Vec<T>,
}

impl<T> Default for Lists<T> {
    fn default() -> Self {
        Lists { offsets: vec![0], items: Vec::new() }
    }
}

impl<T: Copy> Lists<T> {
    /// Appends a row of these items; false (nothing appended) when the column would hold more
    /// items than Arrow's 32-bit offsets count.
    #[inline(always)]
    pub fn push(&mut self, items: impl ExactSizeIterator<Item = T>) -> bool {
        let before = self.items.len();
        self.items.reserve(items.len());
        self.items.extend(items);
        let Ok(end) = i32::try_from(self.items.len()) else {
            self.items.truncate(before);
            return false;
        };
        push(&mut self.offsets, end);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logspec::log::rlog_channel;

    #[test]
    fn time_columns_share_a_buffer_only_from_origin_zero() {
        for origin in [0u64, 5] {
            let channel = rlog_channel("/x", "double");
            let builder = super::super::TableBuilder::new(&channel, false);
            let mut d = Direct::of(&channel, &builder.schema, origin).unwrap();
            d.rlog(10, &ValueRef::R2(R2ValueRef::Double { value: 1.5 }));
            d.rlog(20, &ValueRef::R2(R2ValueRef::Boolean { value: true }));
            let b = d.finish().unwrap().unwrap();
            let elapsed = b.column(1).as_any().downcast_ref::<PrimitiveArray<Int64Type>>().unwrap();
            assert_eq!(elapsed.values().to_vec(), vec![10 - origin as i64, 20 - origin as i64]);
            let v = b.column(2).as_any().downcast_ref::<PrimitiveArray<Float64Type>>().unwrap();
            assert_eq!((v.value(0), v.is_null(1)), (1.5, true));
            let shared = b.column(0).to_data().buffers()[0].as_ptr() == b.column(1).to_data().buffers()[0].as_ptr();
            assert_eq!(shared, origin == 0);
        }
    }

    /// Every value of the bundled RLOG logs, appended to tables of number, boolean and list
    /// types (most of another type than the value's: the generic rule), gives the rows, nulls
    /// and misfits that the batches of `TableBuilder` give.
    #[test]
    fn rows_equal_the_builders() {
        let mut values = 0;
        for ty in ["double[]", "int64[]", "int[]", "double", "int64", "float", "boolean"] {
            let channel = rlog_channel("/x", ty);
            let mut builder = super::super::TableBuilder::new(&channel, false);
            let mut d = Direct::of(&channel, &builder.schema, 0).unwrap();
            let mut batches = Vec::new();
            let mut t = 0u64;
            super::super::each_bundled_rlog_value(|value| {
                t += 1;
                d.rlog(t, value);
                if builder.rlog(t, 0, value).unwrap() {
                    batches.extend(builder.batch().unwrap());
                }
                values += 1;
            });
            batches.extend(builder.batch().unwrap());
            assert_eq!(d.misfits, builder.misfits, "{ty}");
            let direct = d.finish().unwrap().unwrap();
            let mut row = 0;
            for b in &batches {
                for c in 0..3 {
                    let got = direct.column(c).slice(row, b.num_rows()).to_data();
                    assert_eq!(got, b.column(c).to_data(), "{ty}: column {c} from row {row}");
                }
                row += b.num_rows();
            }
            assert_eq!(row, direct.num_rows(), "{ty}");
        }
        assert!(values > 10_000, "{values} values");
    }
}
