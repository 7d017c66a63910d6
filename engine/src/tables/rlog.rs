//! RLOG values into a table's typed column, straight from the reader's views: the typed path of
//! `export --parquet` and the Python package's tables for RLOG keys. An RLOG channel's table has
//! one column, `value`, typed from the key's type name (`logspec::log::rlog_value_type`, the mapping of
//! docs/parquet.md), chosen once when the table is made; each value the reader lends
//! (`rlog::ValueRef`: the generated `R1ValueRef`/`R2ValueRef`, strings and arrays borrowed from
//! the read buffer) is appended to it with no `Value` tree and no allocation per value.
//!
//! The rows are exactly those of the generic path ([`TableBuilder::sample`] of the value's
//! `Value`): the same column values, nulls, misfits and batch boundaries (the same byte estimate
//! per value), so the Parquet export is byte for byte what it was. A value whose type is not the
//! column's (an R1 `null`, an R2 key declared with a type its variant does not match) takes the
//! generic path's rule through [`Col::append`].

use logspec::formats::rlog::{self, R1ValueRef, R2ValueRef, ValueRef};

use super::TableBuilder;
use crate::columns::Col;

impl TableBuilder {
    /// Appends a row of an RLOG channel from the value the reader lends. `None` when the table
    /// is not the one-column table of an RLOG channel (its rows then come as values); else true
    /// when the batch is full.
    #[inline]
    pub fn rlog(&mut self, t_ns: u64, origin_ns: u64, value: &ValueRef<'_>) -> Option<bool> {
        if self.fixed.is_some() {
            return None;
        }
        if !self.values() {
            return Some(self.end_row(t_ns, origin_ns));
        }
        // The table of an RLOG channel has one column, `value` (`logspec::log::rlog_value_type`).
        let [(_, col)] = self.cols.as_mut()?.as_mut_slice() else { return None };
        self.misfits += append(col, value);
        self.bytes += approx_size(value);
        Some(self.end_row(t_ns, origin_ns))
    }
}

/// Appends a value to its column; returns the leaves that did not fit (as [`Col::append`]).
#[inline]
fn append(col: &mut Col, value: &ValueRef<'_>) -> u64 {
    if typed(col, value).is_some() {
        return 0;
    }
    // Anything else (a null, a value of another type than the column's): the generic rule.
    col.append(Some(&rlog::to_value(&value.to_value())))
}

/// Appends a value whose type is the column's; `None` (and nothing appended) for any other.
/// Each arm is what `Col::append` does with the value's `Value` (`rlog::to_value`): booleans,
/// integers (widened to i64), floats (an f32 into a Float32 column as itself) and strings as
/// themselves, byte values as binary, arrays as lists of their items.
#[inline]
fn typed(col: &mut Col, value: &ValueRef<'_>) -> Option<()> {
    use R1ValueRef as R1;
    use R2ValueRef as R2;
    match (col, value) {
        (Col::Bool(b), ValueRef::R1(R1::Boolean { value }) | ValueRef::R2(R2::Boolean { value })) => {
            b.append_value(*value)
        }
        (Col::I64(b), ValueRef::R1(R1::Integer { value })) => b.append_value(i64::from(*value)),
        (Col::I64(b), ValueRef::R2(R2::Int64 { value })) => b.append_value(*value),
        (Col::F64(b), ValueRef::R1(R1::Double { value }) | ValueRef::R2(R2::Double { value })) => {
            b.append_value(*value)
        }
        // A NaN goes the generic way (widened and narrowed again), which may change its payload.
        (Col::F32(b), ValueRef::R2(R2::Float { value })) if !value.is_nan() => b.append_value(*value),
        (Col::Str(b), ValueRef::R1(R1::String { value }) | ValueRef::R2(R2::String { value } | R2::Json { value })) => {
            b.append_value(value)
        }
        (Col::Bin(b), ValueRef::R1(R1::Byte { value })) => b.append_value([*value]),
        (
            Col::Bin(b),
            ValueRef::R1(R1::ByteArray { value })
            | ValueRef::R2(R2::Raw { value } | R2::Struct { value } | R2::Proto { value } | R2::Other { value }),
        ) => b.append_value(value),
        (Col::List { offsets, nulls, item, .. }, value) => {
            // The item column and the array's element type decide together, before anything
            // is appended.
            let n = match (&mut **item, value) {
                (Col::Bool(b), ValueRef::R1(R1::BooleanArray { value }) | ValueRef::R2(R2::BooleanArray { value })) => {
                    extend(value.iter(), |x| b.append_value(x))
                }
                (Col::I64(b), ValueRef::R1(R1::IntegerArray { value })) => {
                    extend(value.iter(), |x| b.append_value(i64::from(x)))
                }
                (Col::I64(b), ValueRef::R2(R2::Int64Array { value })) => extend(value.iter(), |x| b.append_value(x)),
                (Col::F64(b), ValueRef::R1(R1::DoubleArray { value }) | ValueRef::R2(R2::DoubleArray { value })) => {
                    extend(value.iter(), |x| b.append_value(x))
                }
                (Col::F32(b), ValueRef::R2(R2::FloatArray { value })) if !value.iter().any(f32::is_nan) => {
                    extend(value.iter(), |x| b.append_value(x))
                }
                (Col::Str(b), ValueRef::R1(R1::StringArray { value })) => {
                    extend(value.iter(), |x| b.append_value(x.text))
                }
                (Col::Str(b), ValueRef::R2(R2::StringArray { value })) => {
                    extend(value.iter(), |x| b.append_value(x.text))
                }
                _ => return None,
            };
            end_list(offsets, nulls, n);
        }
        _ => return None,
    }
    Some(())
}

/// Appends every item; returns how many there were.
#[inline]
fn extend<T>(items: impl Iterator<Item = T>, mut push: impl FnMut(T)) -> usize {
    let mut n = 0;
    for x in items {
        push(x);
        n += 1;
    }
    n
}

/// Ends a list of `n` items (offsets as `Col::append` writes them).
#[inline]
fn end_list(offsets: &mut Vec<i32>, nulls: &mut arrow_buffer::NullBufferBuilder, n: usize) {
    let last = *offsets.last().unwrap_or(&0);
    offsets.push(last + i32::try_from(n).unwrap_or(i32::MAX));
    nulls.append_non_null();
}

/// About how many bytes the value takes in the column: `approx_size` of its `Value`, so that
/// batches end where the generic path ends them.
#[inline]
fn approx_size(value: &ValueRef<'_>) -> usize {
    use R1ValueRef as R1;
    use R2ValueRef as R2;
    let list = |n: usize| 4 + 8 * n;
    match value {
        ValueRef::R1(v) => match v {
            R1::String { value } => value.len() + 4,
            R1::Byte { .. } => 1 + 4,
            R1::ByteArray { value } => value.len() + 4,
            R1::BooleanArray { value } => list(value.len()),
            R1::IntegerArray { value } => list(value.len()),
            R1::DoubleArray { value } => list(value.len()),
            R1::StringArray { value } => 4 + value.iter().map(|s| s.text.len() + 4).sum::<usize>(),
            R1::Null {} | R1::Boolean { .. } | R1::Integer { .. } | R1::Double { .. } => 8,
        },
        ValueRef::R2(v) => match v {
            R2::String { value } | R2::Json { value } => value.len() + 4,
            R2::Raw { value } | R2::Struct { value } | R2::Proto { value } | R2::Other { value } => value.len() + 4,
            R2::BooleanArray { value } => list(value.len()),
            R2::Int64Array { value } => list(value.len()),
            R2::FloatArray { value } => list(value.len()),
            R2::DoubleArray { value } => list(value.len()),
            R2::StringArray { value } => 4 + value.iter().map(|s| s.text.len() + 4).sum::<usize>(),
            R2::Boolean { .. } | R2::Int64 { .. } | R2::Float { .. } | R2::Double { .. } => 8,
        },
    }
}

/// The value as the generic path sees it, for tests that compare the two paths.
#[cfg(test)]
fn as_value(value: &ValueRef<'_>) -> logspec::value::Value {
    logspec::value::Value::Object(vec![("value".to_string(), rlog::to_value(&value.to_value()))])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte estimate equals the generic path's for every value of the bundled RLOG logs.
    #[test]
    fn approx_size_is_the_generic_estimate() {
        let mut seen = 0;
        super::super::each_bundled_rlog_value(|value| {
            assert_eq!(approx_size(value), super::super::approx_size(&as_value(value)), "{value:?}");
            seen += 1;
        });
        assert!(seen > 1000, "{seen} values");
    }
}
