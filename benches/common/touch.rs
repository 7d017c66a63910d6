//! The visitor the decode benches hand every value to.

use std::hint::black_box;

use logspec::runtime::{NumberType, Numbers, Visitor};

/// Hands every value a visit shows to [`black_box`] (a number as its bits, a string or byte
/// array as its length, an array's length), so that each is read and converted to its type,
/// and keeps nothing, as the peers' loops keep nothing of what they lend (`black_box` of each
/// message's length).
///
/// It keeps no sum: a sum kept in the visitor is a read and a write of one word of memory per
/// value (the visitor is reached through `&mut self`), each waiting on the one before, a chain
/// of store-to-load latencies that measured the bench's visitor, not the decoding (BENCHMARKS.md,
/// "The benches' visitor").
///
/// A `uint8[]` (a point cloud's data) is taken as the slice it is lent as: its length handed on,
/// its bytes not read (as the crates' framing and the plan lines take it; what a consumer does
/// with them, a copy into a column or a write, is its own cost).
#[derive(Default)]
pub struct Touch;

impl Visitor for Touch {
    #[inline]
    fn uint(&mut self, _: Option<&str>, v: u64) {
        black_box(v);
    }
    #[inline]
    fn int(&mut self, _: Option<&str>, v: i64) {
        black_box(v);
    }
    #[inline]
    fn f32(&mut self, _: Option<&str>, v: f32) {
        black_box(v.to_bits());
    }
    #[inline]
    fn f64(&mut self, _: Option<&str>, v: f64) {
        black_box(v.to_bits());
    }
    #[inline]
    fn bool(&mut self, _: Option<&str>, v: bool) {
        black_box(v);
    }
    #[inline]
    fn str(&mut self, _: Option<&str>, v: &str) {
        black_box(v.len());
    }
    #[inline]
    fn bytes(&mut self, _: Option<&str>, v: &[u8]) {
        black_box(v.len());
    }
    /// Other numbers each as the trait's default shows them (each read and converted, with no
    /// call through `dyn Visitor` for each).
    #[inline]
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        if v.ty() == NumberType::U8 {
            black_box(v.len());
            return;
        }
        v.show(name, self);
    }
    #[inline]
    fn enumeration(&mut self, _: Option<&str>, raw: i128, _: Option<&'static str>) {
        black_box(raw);
    }
    #[inline]
    fn flags(&mut self, _: Option<&str>, raw: u64) {
        black_box(raw);
    }
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    #[inline]
    fn begin_array(&mut self, _: Option<&str>, len: usize) {
        black_box(len);
    }
    fn end_array(&mut self) {}
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
    fn end_variant(&mut self) {}
}

impl logspec::value::ValueSink for Touch {
    fn null(&mut self, _: Option<&str>) {}
}
