//! [`FixedLayout`]: a fixed-size struct's columns gathered from its payload bytes.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields};
use logspec::ir::ir::{self, Prim, Schema, Ty, TypeDef};
use logspec::runtime::{Endian, Fixed};

use super::Col;

/// Where a fixed-size struct's columns are in its bytes, from the IR: the fast path of
/// `export --parquet` and the engines for records such as USVLOG's or CARLA's actor records,
/// whose rows are kept as their payload bytes and turned into Arrow arrays a column at a time
/// ([`FixedLayout::column`]), with no visit or [`Value`](logspec::value::Value) per field. Only
/// for structs whose visible fields are numbers, bools, enums and flags at fixed offsets, or
/// nested structs of such fields (a struct column); the columns are those of
/// [`arrow_fields`](super::arrow_fields), in its order. The leaves (the number fields, nested
/// ones included, in order) are numbered: [`FixedLayout::gather`] takes a leaf, which for a
/// flat layout ([`FixedLayout::is_flat`]) is column `i`.
#[derive(Clone, Debug)]
pub struct FixedLayout {
    /// The struct's encoded size: the bytes kept per row.
    pub size: usize,
    leaves: Vec<Leaf>,
    columns: Vec<Column>,
}

#[derive(Clone, Copy, Debug)]
struct Leaf {
    offset: usize,
    /// `None`: a bool (one byte, zero is false).
    prim: Option<Prim>,
    big: bool,
}

/// A column of the layout.
#[derive(Clone, Debug)]
enum Column {
    /// A leaf's values.
    Leaf(usize),
    /// A nested struct: its Arrow fields (named after the IR's, with no metadata until
    /// [`FixedLayout::bind`] takes the table's) and its columns.
    Struct(Fields, Vec<Column>),
}

/// How deep nested structs may go (an IR struct of fixed size cannot hold itself; this bounds
/// the walk all the same).
const DEPTH: usize = 16;

impl FixedLayout {
    /// The layout of struct `id`, or `None` when a field is not a number, bool, enum, flags or
    /// nested struct of those at a fixed offset (the generic path then handles the struct).
    pub fn of(schema: &Schema, id: ir::TypeId) -> Option<FixedLayout> {
        let size = usize::try_from(schema.strukt(id).size?).ok().filter(|n| *n > 0)?;
        let mut leaves = Vec::new();
        let columns = Self::walk(schema, id, 0, size, &mut leaves, 0)?;
        Some(FixedLayout { size, leaves, columns })
    }

    /// The columns of struct `id` at byte `base` of a row of `size` bytes, its leaves added to
    /// `leaves`.
    fn walk(
        schema: &Schema,
        id: ir::TypeId,
        base: usize,
        size: usize,
        leaves: &mut Vec<Leaf>,
        depth: usize,
    ) -> Option<Vec<Column>> {
        let mut columns = Vec::new();
        for f in schema.strukt(id).fields.iter().filter(|f| !f.is_padding()) {
            let offset = base.checked_add(usize::try_from(f.offset?).ok()?)?;
            let prim = match &f.ty {
                Ty::Prim(p) => Some(*p),
                Ty::Bool => None,
                Ty::Named(t) => match schema.ty(*t) {
                    TypeDef::Enum(e) => Some(e.base),
                    TypeDef::Flags(fl) => Some(fl.base),
                    TypeDef::Struct(inner) if depth < DEPTH && inner.size.is_some() => {
                        let cols = Self::walk(schema, *t, offset, size, leaves, depth + 1)?;
                        // A struct with no columns has no Arrow type (`arrow_fields` leaves it out).
                        if cols.is_empty() {
                            return None;
                        }
                        let inner_fields = &schema.strukt(*t).fields;
                        let names = inner_fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str());
                        let fields: Fields =
                            names.zip(&cols).map(|(n, c)| Field::new(n, c.data_type(leaves), true)).collect();
                        columns.push(Column::Struct(fields, cols));
                        continue;
                    }
                    _ => return None,
                },
                _ => return None,
            };
            let width = prim.map_or(1, prim_size);
            if offset.checked_add(width)? > size {
                return None;
            }
            columns.push(Column::Leaf(leaves.len()));
            leaves.push(Leaf { offset, prim, big: f.endian == ir::Endian::Big });
        }
        Some(columns)
    }

    /// The layout with the Arrow fields of its table's columns (`fields`, in order), or `None`
    /// when they are not the types the layout's arrays have (field names, nullability and
    /// metadata taken from `fields`).
    pub fn bind(mut self, fields: &[FieldRef]) -> Option<FixedLayout> {
        fn bind_all(cols: &mut [Column], fields: &[FieldRef], leaves: &[Leaf]) -> bool {
            cols.len() == fields.len() && cols.iter_mut().zip(fields).all(|(c, f)| bind_one(c, f.data_type(), leaves))
        }
        fn bind_one(c: &mut Column, ty: &DataType, leaves: &[Leaf]) -> bool {
            match (c, ty) {
                (Column::Leaf(l), ty) => leaf_type(leaves[*l].prim) == *ty,
                (Column::Struct(own, cols), DataType::Struct(fields)) => {
                    if !bind_all(cols, fields, leaves) {
                        return false;
                    }
                    *own = fields.clone();
                    true
                }
                _ => false,
            }
        }
        bind_all(&mut self.columns, fields, &self.leaves).then_some(self)
    }

    /// The layout of its columns `keep` only (indexes, ascending): a projection's. The bytes
    /// kept per row are the same; the leaves keep their numbers.
    pub fn select(mut self, keep: &[usize]) -> FixedLayout {
        self.columns = super::only(self.columns, keep);
        self
    }

    /// Whether every column is a leaf (no nested struct) and column `i` is leaf `i`.
    pub fn is_flat(&self) -> bool {
        self.columns.iter().enumerate().all(|(i, c)| matches!(c, Column::Leaf(l) if *l == i))
    }

    /// How many columns the layout makes (a nested struct is one).
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// Column `i` of the rows in `rows` (each [`FixedLayout::size`] bytes, one after the other),
    /// as the Arrow array of [`arrow_fields`](super::arrow_fields)' type for the field, with no
    /// nulls.
    pub fn column(&self, i: usize, rows: &[u8]) -> ArrayRef {
        self.array(&self.columns[i], rows)
    }

    fn array(&self, c: &Column, rows: &[u8]) -> ArrayRef {
        match c {
            Column::Leaf(l) => self.leaf(*l, rows),
            Column::Struct(fields, cols) => {
                let children = cols.iter().map(|c| self.array(c, rows)).collect();
                // The children's types are the fields' (`walk` made them so, `bind` checked).
                Arc::new(arrow_array::StructArray::new(fields.clone(), children, None))
            }
        }
    }

    /// Leaf `i` of the rows in `rows` as an Arrow array of its type.
    fn leaf(&self, i: usize, rows: &[u8]) -> ArrayRef {
        use arrow_array::types::*;
        use arrow_array::PrimitiveArray;
        let n = rows.len() / self.size;
        macro_rules! prim {
            ($t:ty) => {{
                let mut values = vec![<$t as ArrowPrimitiveType>::Native::default(); n];
                self.gather(i, rows, &mut values);
                Arc::new(PrimitiveArray::<$t>::new(ScalarBuffer::from(values), None)) as ArrayRef
            }};
        }
        match self.leaves[i].prim {
            None => {
                let mut values = vec![0u8; n];
                self.gather(i, rows, &mut values);
                Arc::new(arrow_array::BooleanArray::new(values.iter().map(|b| *b != 0).collect(), None))
            }
            Some(Prim::U8) => prim!(UInt8Type),
            Some(Prim::U16) => prim!(UInt16Type),
            Some(Prim::U32) => prim!(UInt32Type),
            Some(Prim::U64) => prim!(UInt64Type),
            Some(Prim::I8) => prim!(Int8Type),
            Some(Prim::I16) => prim!(Int16Type),
            Some(Prim::I32) => prim!(Int32Type),
            Some(Prim::I64) => prim!(Int64Type),
            Some(Prim::F32) => prim!(Float32Type),
            Some(Prim::F64) => prim!(Float64Type),
        }
    }

    /// The wire type of leaf `i`: its number type, `None` for a bool (one byte, zero is
    /// false).
    pub fn prim(&self, i: usize) -> Option<Prim> {
        self.leaves[i].prim
    }

    /// Leaf `i` of the rows in `rows` (each [`FixedLayout::size`] bytes, one after the other)
    /// written into `out`, one value per row (as many as both have), each converted to `T` as
    /// Rust's `as` converts numbers (a bool is 0 or 1). A column a time, sequentially: the
    /// shared core of the Arrow arrays ([`FixedLayout::column`]) and of the Python package's
    /// numpy columns, which widen to `float64`/`int64`.
    pub fn gather<T: Gather>(&self, i: usize, rows: &[u8], out: &mut [T]) {
        self.gather_rows(i, rows.chunks_exact(self.size), out)
    }

    /// Like [`FixedLayout::gather`], for rows that lie apart in `bytes`: row `k` starts at byte
    /// `starts[k]` (a record's payload in a buffer of framed records). A row that `bytes` does
    /// not hold whole reads as zero.
    pub fn gather_at<T: Gather>(&self, i: usize, bytes: &[u8], starts: &[u32], out: &mut [T]) {
        let size = self.size;
        let rows = starts.iter().map(|&s| bytes.get(s as usize..).and_then(|r| r.get(..size)).unwrap_or(&[]));
        self.gather_rows(i, rows, out)
    }

    #[inline(always)]
    fn gather_rows<'r, T: Gather>(&self, i: usize, rows: impl Iterator<Item = &'r [u8]>, out: &mut [T]) {
        let leaf = self.leaves[i];
        let (off, big) = (leaf.offset, leaf.big);
        match leaf.prim {
            None => gather_leaf::<u8, T>(rows, off, big, out, |b| T::from_u64(u64::from(b != 0))),
            Some(Prim::U8) => gather_leaf::<u8, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U16) => gather_leaf::<u16, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U32) => gather_leaf::<u32, T>(rows, off, big, out, |x| T::from_u64(x.into())),
            Some(Prim::U64) => gather_leaf::<u64, T>(rows, off, big, out, T::from_u64),
            Some(Prim::I8) => gather_leaf::<i8, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I16) => gather_leaf::<i16, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I32) => gather_leaf::<i32, T>(rows, off, big, out, |x| T::from_i64(x.into())),
            Some(Prim::I64) => gather_leaf::<i64, T>(rows, off, big, out, T::from_i64),
            Some(Prim::F32) => gather_leaf::<f32, T>(rows, off, big, out, T::from_f32),
            Some(Prim::F64) => gather_leaf::<f64, T>(rows, off, big, out, T::from_f64),
        }
    }

    /// Appends the rows in `rows` to column builders made for the layout's struct, a value at a
    /// time (when rows of one table come both as bytes and as visits). Returns the misfits.
    pub fn append_to(&self, rows: &[u8], cols: &mut [(String, Col)]) -> u64 {
        let mut misfits = 0;
        for (i, (_, col)) in cols.iter_mut().enumerate().take(self.columns.len()) {
            let array = self.column(i, rows);
            misfits += append_array(col, &array);
        }
        misfits
    }
}

/// A number type that [`FixedLayout::gather`] writes: every Rust number type, each conversion
/// as `as` does it (an `f32` stays itself in an `f32`, NaN payloads included).
pub trait Gather: Copy {
    fn from_u64(v: u64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_f32(v: f32) -> Self;
    fn from_f64(v: f64) -> Self;
}

macro_rules! gather_as {
    ($($t:ty),*) => {$(
        impl Gather for $t {
            #[inline(always)]
            fn from_u64(v: u64) -> Self { v as $t }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)]
            fn from_f32(v: f32) -> Self { v as $t }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
gather_as!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// One leaf of every row into `out`: the runtime's number codec at the leaf's offset, in its
/// byte order (fixed per loop, so that each loop is a plain load and convert).
#[inline(always)]
fn gather_leaf<'r, P: Fixed + Default, T>(
    rows: impl Iterator<Item = &'r [u8]>,
    off: usize,
    big: bool,
    out: &mut [T],
    conv: impl Fn(P) -> T,
) {
    // `FixedLayout::of` checked that every leaf lies inside the row, so decoding cannot fail.
    let run = |order: Endian, out: &mut [T]| {
        for (o, r) in out.iter_mut().zip(rows) {
            *o = conv(r.get(off..).map_or(Ok(P::default()), |b| P::decode_fixed(b, order)).unwrap_or_default());
        }
    };
    if big {
        run(Endian::Big, out)
    } else {
        run(Endian::Little, out)
    }
}

impl Column {
    fn data_type(&self, leaves: &[Leaf]) -> DataType {
        match self {
            Column::Leaf(l) => leaf_type(leaves[*l].prim),
            Column::Struct(fields, _) => DataType::Struct(fields.clone()),
        }
    }
}

/// The Arrow type of a leaf's array (`arrow_fields`' type for its IR type).
fn leaf_type(prim: Option<Prim>) -> DataType {
    prim.map_or(DataType::Boolean, super::prim_type)
}

fn prim_size(p: Prim) -> usize {
    match p {
        Prim::U8 | Prim::I8 => 1,
        Prim::U16 | Prim::I16 => 2,
        Prim::U32 | Prim::I32 | Prim::F32 => 4,
        Prim::U64 | Prim::I64 | Prim::F64 => 8,
    }
}

/// Appends the values of a null-free array of a scalar type, or a struct of such arrays, to a
/// column builder of that type (of another type: nulls, counted as misfits).
fn append_array(col: &mut Col, a: &ArrayRef) -> u64 {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! prim {
        ($b:expr, $t:ty) => {
            match a.as_primitive_opt::<$t>() {
                Some(p) => {
                    $b.append_slice(p.values());
                    true
                }
                None => false,
            }
        };
    }
    let done = match col {
        Col::Bool(b) => match a.as_boolean_opt() {
            Some(x) => {
                for v in x.values().iter() {
                    b.append_value(v);
                }
                true
            }
            None => false,
        },
        Col::I8(b) => prim!(b, Int8Type),
        Col::I16(b) => prim!(b, Int16Type),
        Col::I32(b) => prim!(b, Int32Type),
        Col::I64(b) => prim!(b, Int64Type),
        Col::U8(b) => prim!(b, UInt8Type),
        Col::U16(b) => prim!(b, UInt16Type),
        Col::U32(b) => prim!(b, UInt32Type),
        Col::U64(b) => prim!(b, UInt64Type),
        Col::F32(b) => prim!(b, Float32Type),
        Col::F64(b) => prim!(b, Float64Type),
        Col::Struct { children, nulls, len, .. } => match a.as_struct_opt() {
            Some(x) if x.columns().len() == children.len() => {
                let misfits: u64 = children.iter_mut().zip(x.columns()).map(|(c, a)| append_array(c, a)).sum();
                nulls.append_n_non_nulls(x.len());
                *len += x.len();
                return misfits;
            }
            _ => false,
        },
        _ => false,
    };
    if done {
        return 0;
    }
    for _ in 0..a.len() {
        col.append_null();
    }
    a.len() as u64
}
