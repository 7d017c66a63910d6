//! [`NestedRow`]: a visit of any struct appended straight to its columns, nested structs and
//! lists included.

use logspec::runtime::{NumberType, Numbers};
use logspec::value::Value;

use super::Col;

/// Appends the visit of a struct to its columns with no [`Value`] in between: what
/// [`Col::append`] does with the value tree that visit builds (`logspec::value::ValueBuilder`),
/// value by value. Members are matched to columns by name (a member no column has is left out,
/// a column no member fills is null); a value that does not fit its column is null and counted
/// (`misfits`), what is under it left out. [`NestedRow::streams`] says which columns it fills
/// (a union's column, whose value names its variant first, is left to the value tree).
///
/// A visit of an IR type shows each struct's fields once: of members with one name, the first
/// fills the column (the tree's lookup takes the member at the column's position when the names
/// agree there, else the first).
pub struct NestedRow<'a> {
    cols: &'a mut [(String, Col)],
    /// The open containers, innermost last.
    stack: Vec<Frame>,
    /// Which fields of each open struct got a value, the row's columns first (the frames'
    /// `filled` index into it).
    filled: &'a mut Vec<bool>,
    /// The path from the row to the column of the innermost open struct or list: a field's
    /// index, or 0 for a list's items.
    path: Vec<usize>,
    /// Whether the row's struct was begun (a visit shows one value).
    begun: bool,
    pub misfits: u64,
    /// About how many bytes the value holds, counted as the value tree's (for batch sizing).
    pub bytes: usize,
}

enum Frame {
    /// A struct whose fields go to the columns of the struct at `path` (the row's own at the
    /// top): its fields' `filled` flags from `base`, the next field expected.
    Struct { base: usize, next: usize },
    /// A list at `path`: its items so far.
    List { n: usize },
    /// A value left out, and how deep in it the visit is.
    Skip { depth: usize },
}

impl<'a> NestedRow<'a> {
    pub fn new(cols: &'a mut [(String, Col)], filled: &'a mut Vec<bool>) -> Self {
        filled.clear();
        NestedRow { cols, stack: Vec::new(), filled, path: Vec::new(), begun: false, misfits: 0, bytes: 0 }
    }

    /// Whether every column is one this fills as the value tree would: no union's struct (its
    /// first field `variant`) anywhere in them.
    pub fn streams(cols: &[(String, Col)]) -> bool {
        fn plain(c: &Col) -> bool {
            match c {
                Col::List { item, .. } => plain(item),
                Col::Struct { fields, children, .. } => {
                    fields.first().is_none_or(|f| f.name() != "variant") && children.iter().all(plain)
                }
                _ => true,
            }
        }
        cols.iter().all(|(_, c)| plain(c))
    }

    /// Nulls for the row's columns the visit did not fill; the misfits. A visit that stopped
    /// partway ([`logspec::log::TryVisit`]) has its open structs and lists closed first, so that
    /// every column has the row (which the table then leaves out).
    pub fn finish(mut self) -> u64 {
        while !self.stack.is_empty() {
            self.close();
        }
        // A visit that showed no struct leaves every column null.
        for (i, (_, c)) in self.cols.iter_mut().enumerate() {
            if !self.filled.get(i).copied().unwrap_or(false) {
                c.append_null();
            }
        }
        self.misfits
    }

    /// The children of the column at `path` (the row's columns at the top).
    fn children(&mut self) -> ChildrenMut<'_> {
        children(self.cols, &self.path)
    }

    /// The column of the innermost open container plus `i`.
    fn col(&mut self, i: usize) -> Option<&mut Col> {
        match self.children() {
            ChildrenMut::Row(cols) => cols.get_mut(i).map(|(_, c)| c),
            ChildrenMut::Struct(_, children) => children.get_mut(i),
            ChildrenMut::Item(item) => Some(item),
            ChildrenMut::None => None,
        }
    }

    /// Where the next value, named `name`, goes (its index in the innermost open container, and
    /// its column), counted in its list or struct; `None`: nowhere (no column of that name, a
    /// field already filled, a value under a left-out one). One walk down `path` per value.
    fn target(&mut self, name: Option<&str>) -> Option<(usize, &mut Col)> {
        let NestedRow { cols, stack, filled, path, .. } = self;
        match stack.last_mut()? {
            Frame::Skip { .. } => None,
            Frame::List { n } => {
                *n += 1;
                match children(cols, path) {
                    ChildrenMut::Item(item) => Some((0, item)),
                    _ => None,
                }
            }
            Frame::Struct { base, next } => {
                let name = name?;
                let (i, col) = match children(cols, path) {
                    ChildrenMut::Row(cols) => {
                        let i = find(cols.len(), *next, |k| same(&cols[k].0, name))?;
                        (i, &mut cols[i].1)
                    }
                    ChildrenMut::Struct(fields, children) => {
                        let i = find(fields.len(), *next, |k| same(fields[k].name(), name))?;
                        (i, children.get_mut(i)?)
                    }
                    _ => return None,
                };
                let filled = filled.get_mut(*base + i)?;
                if *filled {
                    return None;
                }
                *filled = true;
                *next = i + 1;
                Some((i, col))
            }
        }
    }

    /// A scalar value for the next column: `append` appends it (returning its misfits).
    fn leaf(&mut self, name: Option<&str>, size: usize, append: impl FnOnce(&mut Col) -> u64) {
        self.bytes += size;
        let misfits = self.target(name).map_or(0, |(_, c)| append(c));
        self.misfits += misfits;
    }

    /// A struct (or a list, `list`) begins.
    fn open(&mut self, name: Option<&str>, list: bool) {
        if let Some(Frame::Skip { depth }) = self.stack.last_mut() {
            *depth += 1;
            return;
        }
        if self.stack.is_empty() {
            if list || self.begun {
                // Not the row's struct: its columns stay null.
                self.stack.push(Frame::Skip { depth: 0 });
            } else {
                self.begun = true;
                self.filled.resize(self.cols.len(), false);
                self.stack.push(Frame::Struct { base: 0, next: 0 });
            }
            return;
        }
        let (i, frame) = match self.target(name) {
            Some((i, Col::Struct { children, nulls, len, .. })) if !list => {
                *len += 1;
                nulls.append_non_null();
                (i, Some(children.len()))
            }
            Some((i, Col::List { .. })) if list => (i, None),
            Some((_, other)) => {
                // Not its column's shape: null, and what is under it left out.
                other.append_null();
                self.misfits += 1;
                self.stack.push(Frame::Skip { depth: 0 });
                return;
            }
            None => {
                self.stack.push(Frame::Skip { depth: 0 });
                return;
            }
        };
        self.path.push(i);
        match frame {
            Some(fields) => {
                let base = self.filled.len();
                self.filled.resize(base + fields, false);
                self.stack.push(Frame::Struct { base, next: 0 });
            }
            None => self.stack.push(Frame::List { n: 0 }),
        }
    }

    /// The innermost struct or list ends.
    fn close(&mut self) {
        match self.stack.pop() {
            Some(Frame::Skip { depth }) if depth > 0 => self.stack.push(Frame::Skip { depth: depth - 1 }),
            Some(Frame::Skip { .. }) | None => {}
            Some(Frame::Struct { base, .. }) => {
                if self.stack.is_empty() {
                    // The row's own struct: `finish` nulls what it did not fill.
                    return;
                }
                let mut filled = std::mem::take(self.filled);
                if let ChildrenMut::Struct(_, children) = self.children() {
                    for (c, _) in children.iter_mut().zip(&filled[base..]).filter(|(_, f)| !**f) {
                        c.append_null();
                    }
                }
                filled.truncate(base);
                *self.filled = filled;
                self.path.pop();
            }
            Some(Frame::List { n }) => {
                let path = std::mem::take(&mut self.path);
                let (last, rest) = path.split_last().expect("a list has a column");
                self.path = rest.to_vec();
                if let Some(Col::List { offsets, nulls, .. }) = self.col(*last) {
                    let end = *offsets.last().unwrap_or(&0);
                    offsets.push(end + i32::try_from(n).unwrap_or(i32::MAX));
                    nulls.append_non_null();
                }
            }
        }
    }
}

enum ChildrenMut<'c> {
    Row(&'c mut [(String, Col)]),
    Struct(&'c arrow_schema::Fields, &'c mut Vec<Col>),
    Item(&'c mut Col),
    None,
}

/// The children of the column at `path` in `cols` (`cols` themselves at the top).
fn children<'c>(cols: &'c mut [(String, Col)], path: &[usize]) -> ChildrenMut<'c> {
    let Some((&first, rest)) = path.split_first() else { return ChildrenMut::Row(cols) };
    let Some(top) = cols.get_mut(first) else { return ChildrenMut::None };
    let mut c: &mut Col = &mut top.1;
    for &i in rest {
        c = match c {
            Col::Struct { children, .. } => match children.get_mut(i) {
                Some(child) => child,
                None => return ChildrenMut::None,
            },
            Col::List { item, .. } => item,
            other => other,
        };
    }
    match c {
        Col::Struct { fields, children, .. } => ChildrenMut::Struct(fields, children),
        Col::List { item, .. } => ChildrenMut::Item(item),
        _ => ChildrenMut::None,
    }
}

/// The index among `len` of the first that `is` holds for: `expected` (the member after the
/// last one matched, where a visit of the same type finds it) first, then from the start.
#[inline]
fn find(len: usize, expected: usize, is: impl Fn(usize) -> bool) -> Option<usize> {
    if expected < len && is(expected) {
        return Some(expected);
    }
    (0..len).find(|&k| is(k))
}

/// Whether two member names are equal: by bytes, inline (names are short; a call of the C
/// library's `memcmp` per value cost more than the comparison).
#[inline]
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

impl logspec::runtime::Visitor for NestedRow<'_> {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.leaf(name, 8, |c| c.append_uint(v));
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.leaf(name, 8, |c| c.append_int(v));
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.leaf(name, 8, |c| c.append_float(f64::from(v)));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.leaf(name, 8, |c| c.append_float(v));
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.leaf(name, 8, |c| c.append(Some(&Value::Bool(v))));
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.leaf(name, v.len() + 4, |c| match c {
            Col::Str(b) => {
                b.append_value(v);
                0
            }
            Col::Bin(b) => {
                b.append_value(v.as_bytes());
                0
            }
            other => other.append(Some(&Value::Str(v.to_string()))),
        });
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.leaf(name, v.len() + 4, |c| match c {
            Col::Bin(b) => {
                b.append_value(v);
                0
            }
            other => other.append(Some(&Value::Bytes(v.to_vec()))),
        });
    }
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        if v.ty() == NumberType::U8 {
            // As its elements one by one (a list of `u8`s at once).
            self.leaf(name, 4 + 8 * v.len(), |c| c.append_u8s(v.bytes()));
            return;
        }
        v.show(name, self);
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        self.leaf(name, 8, |c| match i64::try_from(raw) {
            Ok(i) => c.append_int(i),
            Err(_) => c.append_uint(raw as u64),
        });
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.leaf(name, 8, |c| c.append_uint(raw));
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.open(name, false);
    }
    fn end_struct(&mut self) {
        self.close();
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.bytes += 4;
        self.open(name, true);
    }
    /// Not the elements of an array left out (no column, or a projection's other columns).
    fn elements(&self) -> bool {
        !matches!(self.stack.last(), Some(Frame::Skip { .. }))
    }
    fn end_array(&mut self) {
        self.close();
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, _tag: i128) {
        self.open(name, false);
        self.str(Some("variant"), variant);
    }
    fn end_variant(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Fields};
    use logspec::runtime::{Numbers, Visitor};
    use logspec::value::{Value, ValueBuilder};

    use super::{Col, NestedRow};

    fn columns() -> Vec<(String, Col)> {
        let p = DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("y", DataType::Float32, true),
        ]));
        let n = DataType::Struct(Fields::from(vec![Field::new("n", DataType::Int64, true)]));
        let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
        [
            ("a", DataType::Int32),
            ("s", DataType::Utf8),
            ("p", p),
            ("l", list(DataType::UInt8)),
            ("ls", list(n)),
            ("ll", list(list(DataType::Int16))),
            ("b", DataType::Boolean),
        ]
        .into_iter()
        .map(|(name, t)| (name.to_string(), Col::new(&t)))
        .collect()
    }

    /// What the value tree of a visit appends (the tables' `sample`): each column's member by
    /// name, the one at the column's position first.
    fn by_tree(cols: &mut [(String, Col)], v: &Value) -> u64 {
        let members = match v {
            Value::Object(m) => m.as_slice(),
            _ => &[],
        };
        let mut misfits = 0;
        for (k, (name, c)) in cols.iter_mut().enumerate() {
            let found = match members.get(k) {
                Some((n, v)) if n == name => Some(v),
                _ => members.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            };
            misfits += c.append(found);
        }
        misfits
    }

    /// The value tree's size as the tables count it for batches.
    fn size(v: &Value) -> usize {
        match v {
            Value::Str(s) => s.len() + 4,
            Value::Bytes(b) => b.len() + 4,
            Value::Array(items) => 4 + items.iter().map(size).sum::<usize>(),
            Value::Object(fields) => fields.iter().map(|(_, x)| size(x)).sum(),
            _ => 8,
        }
    }

    type Visit = fn(&mut dyn Visitor);

    fn visits() -> Vec<Visit> {
        vec![
            // Every field, in order.
            |v| {
                v.begin_struct(None);
                v.int(Some("a"), -7);
                v.str(Some("s"), "text");
                v.begin_struct(Some("p"));
                v.f64(Some("x"), 1.5);
                v.f32(Some("y"), 2.5);
                v.end_struct();
                v.numbers(Some("l"), Numbers::u8s(&[1, 2, 255]));
                v.begin_array(Some("ls"), 2);
                v.begin_struct(None);
                v.int(Some("n"), 4);
                v.end_struct();
                v.begin_struct(None);
                v.end_struct();
                v.end_array();
                v.begin_array(Some("ll"), 2);
                v.begin_array(None, 1);
                v.int(None, -3);
                v.end_array();
                v.numbers(None, Numbers::u8s(&[9, 8]));
                v.end_array();
                v.bool(Some("b"), true);
                v.end_struct();
            },
            // Out of order, some missing, some unknown (with nested values), ints too wide.
            |v| {
                v.begin_struct(None);
                v.bool(Some("b"), false);
                v.begin_struct(Some("unknown"));
                v.begin_array(Some("deep"), 1);
                v.uint(None, 1);
                v.end_array();
                v.end_struct();
                v.uint(Some("a"), u64::MAX);
                v.begin_struct(Some("p"));
                v.f32(Some("y"), 0.25);
                v.str(Some("z"), "extra");
                v.end_struct();
                v.begin_array(Some("l"), 2);
                v.uint(None, 3);
                v.uint(None, 300);
                v.end_array();
                v.end_struct();
            },
            // Values not of their columns' shapes.
            |v| {
                v.begin_struct(None);
                v.begin_struct(Some("a"));
                v.int(Some("inner"), 1);
                v.end_struct();
                v.begin_struct(Some("s"));
                v.str(Some("$hex"), "ff00");
                v.end_struct();
                v.begin_array(Some("p"), 1);
                v.f64(None, 1.0);
                v.end_array();
                v.str(Some("l"), "not a list");
                v.numbers(Some("ls"), Numbers::u8s(&[1, 2]));
                v.begin_array(Some("ll"), 1);
                v.int(None, 5);
                v.end_array();
                v.numbers(Some("b"), Numbers::u8s(&[1]));
                v.end_struct();
            },
            // Bytes where a list of u8 is, a variant where a struct is, an f64 into an f32.
            |v| {
                v.begin_struct(None);
                v.bytes(Some("l"), &[7, 7]);
                v.begin_variant(Some("p"), "Some", 1);
                v.f64(Some("x"), 3.0);
                v.end_variant();
                v.bytes(Some("s"), b"ok");
                v.int(Some("b"), 1);
                v.end_struct();
            },
            // Not a struct: every column null.
            |v| v.f64(None, 1.0),
            |v| {
                v.begin_array(None, 1);
                v.int(None, 1);
                v.end_array();
            },
            // Nothing at all.
            |_| {},
        ]
    }

    /// The visit of a row fills the columns as its value tree does: the same arrays, the same
    /// misfits, the same size for batches; on rows of every shape the tree handles.
    #[test]
    fn a_nested_visit_fills_the_columns_as_its_value_tree() {
        let (mut tree, mut direct) = (columns(), columns());
        assert!(NestedRow::streams(&direct));
        let mut filled = Vec::new();
        for (i, visit) in visits().into_iter().enumerate() {
            let mut b = ValueBuilder::default();
            visit(&mut b);
            let value = b.finish();
            let expected = by_tree(&mut tree, &value);
            let mut row = NestedRow::new(&mut direct, &mut filled);
            visit(&mut row);
            let bytes = row.bytes;
            assert_eq!(row.finish(), expected, "misfits of visit {i}");
            if matches!(value, Value::Object(_)) {
                assert_eq!(bytes, size(&value), "size of visit {i}");
            }
        }
        for ((name, t), (_, d)) in tree.iter_mut().zip(direct.iter_mut()) {
            let (t, d) = (t.finish(), d.finish());
            assert_eq!(t.len(), visits().len(), "{name}");
            assert_eq!(t.to_data(), d.to_data(), "{name}");
        }
    }

    /// A union's column is left to the value tree.
    #[test]
    fn a_union_column_is_not_streamed() {
        let u = DataType::Struct(Fields::from(vec![
            Field::new("variant", DataType::Utf8, true),
            Field::new("A", DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int8, true)])), true),
        ]));
        let cols = vec![("u".to_string(), Col::new(&DataType::List(Arc::new(Field::new("item", u, true)))))];
        assert!(!NestedRow::streams(&cols));
    }
}
