//! [`FlatRow`]: a visit of a flat struct appended straight to its columns.

use logspec::value::Value;

use super::Col;

/// Appends the visit of a flat struct (every field a scalar) straight to its columns, with no
/// [`Value`] in between: the fast path for fixed-layout records. `cols` are the struct's columns
/// in field order; a field that does not come (or comes nested, which the IR type rules out) is
/// null.
pub struct FlatRow<'a> {
    pub cols: &'a mut [(String, Col)],
    /// Which columns got a value in this row.
    pub filled: &'a mut Vec<bool>,
    pub misfits: u64,
    /// Bytes of strings and byte strings appended (for batch sizing).
    pub bytes: usize,
    depth: usize,
    next: usize,
}

impl<'a> FlatRow<'a> {
    pub fn new(cols: &'a mut [(String, Col)], filled: &'a mut Vec<bool>) -> Self {
        filled.clear();
        filled.resize(cols.len(), false);
        FlatRow { cols, filled, misfits: 0, bytes: 0, depth: 0, next: 0 }
    }

    /// The column of field `name` (usually the next one), unless already filled this row.
    fn col(&mut self, name: Option<&str>) -> Option<&mut Col> {
        if self.depth != 1 {
            if self.depth > 1 {
                return None;
            }
            self.misfits += 1;
            return None;
        }
        let name = name?;
        let i = if self.cols.get(self.next).is_some_and(|(n, _)| n == name) {
            self.next
        } else {
            self.cols.iter().position(|(n, _)| n == name)?
        };
        if self.filled[i] {
            return None;
        }
        self.filled[i] = true;
        self.next = i + 1;
        Some(&mut self.cols[i].1)
    }

    /// Nulls for the columns the row did not fill.
    pub fn finish(self) -> u64 {
        let mut misfits = self.misfits;
        for (filled, (_, c)) in self.filled.iter().zip(self.cols.iter_mut()) {
            if !filled {
                c.append_null();
            }
        }
        if self.depth != 0 {
            misfits += 1;
        }
        misfits
    }

    fn nested(&mut self, name: Option<&str>) {
        // Not in a flat struct's visit; the field stays null and counts as a misfit.
        if self.depth == 1 && self.col(name).is_some() {
            self.misfits += 1;
            // `col` marked it filled without appending.
            if let Some(i) = self.cols.iter().position(|(n, _)| Some(n.as_str()) == name) {
                self.cols[i].1.append_null();
            }
        }
        self.depth += 1;
    }
}

impl logspec::runtime::Visitor for FlatRow<'_> {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_uint(v);
        }
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_int(v);
        }
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_float(f64::from(v));
        }
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_float(v);
        }
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append(Some(&Value::Bool(v)));
        }
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.bytes += v.len();
        if let Some(c) = self.col(name) {
            self.misfits += match c {
                Col::Str(b) => {
                    b.append_value(v);
                    0
                }
                Col::Bin(b) => {
                    b.append_value(v.as_bytes());
                    0
                }
                other => other.append(Some(&Value::Str(v.to_string()))),
            };
        }
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.bytes += v.len();
        if let Some(c) = self.col(name) {
            self.misfits += match c {
                Col::Bin(b) => {
                    b.append_value(v);
                    0
                }
                other => other.append(Some(&Value::Bytes(v.to_vec()))),
            };
        }
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        if let Some(c) = self.col(name) {
            self.misfits += match i64::try_from(raw) {
                Ok(i) => c.append_int(i),
                Err(_) => c.append_uint(raw as u64),
            };
        }
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        if let Some(c) = self.col(name) {
            self.misfits += c.append_uint(raw);
        }
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        if self.depth == 0 {
            self.depth = 1;
        } else {
            self.nested(name);
        }
    }
    fn end_struct(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.nested(name);
    }
    fn end_array(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn begin_variant(&mut self, name: Option<&str>, _variant: &'static str, _tag: i128) {
        self.nested(name);
    }
    fn end_variant(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
