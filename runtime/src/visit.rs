//! Walking a decoded value field by field, for tools that handle any record generically
//! (JSON dumps, CSV export, plots) without knowing its Rust type.

/// Receives a value's parts in wire order. `name` is the field name, or `None` for array
/// elements and top-level values. Padding and const fields are not reported, except consts of the
/// file header, which are shown as ordinary values.
pub trait Visitor {
    fn uint(&mut self, name: Option<&str>, v: u64);
    fn int(&mut self, name: Option<&str>, v: i64);
    fn f32(&mut self, name: Option<&str>, v: f32);
    fn f64(&mut self, name: Option<&str>, v: f64);
    fn bool(&mut self, name: Option<&str>, v: bool);
    fn str(&mut self, name: Option<&str>, v: &str);
    fn bytes(&mut self, name: Option<&str>, v: &[u8]);
    /// An enum value: its raw number and, when it is one of the named values, the name.
    fn enumeration(&mut self, name: Option<&str>, raw: i128, label: Option<&'static str>);
    /// A flags value: its raw bits.
    fn flags(&mut self, name: Option<&str>, raw: u64);
    fn begin_struct(&mut self, name: Option<&str>);
    fn end_struct(&mut self);
    fn begin_array(&mut self, name: Option<&str>, len: usize);
    /// Whether the walk goes into an array's elements after [`begin_array`](Visitor::begin_array)
    /// (`true` unless a visitor says otherwise): one that needs only the lengths says no, and
    /// the elements are skipped.
    #[inline(always)]
    fn elements(&self) -> bool {
        true
    }
    fn end_array(&mut self);
    /// An array of `u8` numbers (a ROS `uint8[]`), shown as numbers like any array: by default
    /// [`Visitor::begin_array`], [`Visitor::uint`] of each, [`Visitor::end_array`]; a visitor
    /// may take them at once.
    fn u8_array(&mut self, name: Option<&str>, v: &[u8]) {
        self.begin_array(name, v.len());
        for x in v {
            self.uint(None, u64::from(*x));
        }
        self.end_array();
    }
    /// A union value: `variant` is the name of the variant that follows as a struct.
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, tag: i128);
    fn end_variant(&mut self);
}

/// A value that can be walked by a [`Visitor`].
pub trait Visit {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V);
}
