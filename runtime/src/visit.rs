//! Walking a decoded value field by field, for tools that handle any record generically
//! (JSON dumps, CSV export, plots) without knowing its Rust type.

use crate::view::{Array, Be, Le};
use crate::Endian;

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
    /// An array of numbers lent at once, as its packed bytes ([`Numbers`]): by default
    /// [`Visitor::begin_array`], each element as [`Visitor::uint`], [`Visitor::int`],
    /// [`Visitor::f32`] or [`Visitor::f64`] unnamed (not when [`Visitor::elements`] says no),
    /// [`Visitor::end_array`]. A visitor may take them at once (a `uint8[]`'s bytes as they
    /// are); either way, one call through `dyn Visitor` for the whole array.
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        v.show(name, self);
    }
    /// A union value: `variant` is the name of the variant that follows as a struct.
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, tag: i128);
    fn end_variant(&mut self);
}

/// A value that can be walked by a [`Visitor`].
pub trait Visit {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V);
}

/// The type of the elements of [`Numbers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumberType {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl NumberType {
    /// The bytes of one element.
    #[inline]
    pub const fn size(self) -> usize {
        1 << self.log2_size()
    }

    /// The base-2 logarithm of [`NumberType::size`] (lengths divided by a shift).
    #[inline]
    const fn log2_size(self) -> u32 {
        match self {
            NumberType::U8 | NumberType::I8 => 0,
            NumberType::U16 | NumberType::I16 => 1,
            NumberType::U32 | NumberType::I32 | NumberType::F32 => 2,
            NumberType::U64 | NumberType::I64 | NumberType::F64 => 3,
        }
    }
}

/// An array of numbers of one type as its packed bytes, in one byte order, whole elements
/// ([`Visitor::numbers`]): a decoder lends what it read without taking each element apart.
#[derive(Clone, Copy, Debug)]
pub struct Numbers<'a> {
    bytes: &'a [u8],
    ty: NumberType,
    order: Endian,
}

impl<'a> Numbers<'a> {
    /// The elements packed in `bytes`; `None` when `bytes` is not a whole number of them.
    #[inline]
    pub fn new(bytes: &'a [u8], ty: NumberType, order: Endian) -> Option<Numbers<'a>> {
        (bytes.len() & (ty.size() - 1) == 0).then_some(Numbers { bytes, ty, order })
    }

    /// Bytes as an array of `u8`s.
    #[inline]
    pub fn u8s(bytes: &'a [u8]) -> Numbers<'a> {
        Numbers { bytes, ty: NumberType::U8, order: Endian::Little }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() >> self.ty.log2_size()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    #[inline]
    pub fn ty(&self) -> NumberType {
        self.ty
    }

    #[inline]
    pub fn order(&self) -> Endian {
        self.order
    }

    /// The packed bytes (a `u8` array's elements as they are).
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Shows the array to `v` element by element, as [`Visitor::numbers`]' default does (for a
    /// visitor that takes some arrays its own way and the rest so): [`Visitor::begin_array`],
    /// [`Numbers::each`] unless [`Visitor::elements`] says no, [`Visitor::end_array`].
    pub fn show<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.begin_array(name, self.len());
        if v.elements() {
            self.each(v);
        }
        v.end_array();
    }

    /// Shows each element to `v`, unnamed, in order: unsigned ones as [`Visitor::uint`], signed
    /// ones as [`Visitor::int`], floats as [`Visitor::f32`] or [`Visitor::f64`]; the type and
    /// byte order are chosen once for the array, each element read as a view's
    /// [`Array`](crate::view::Array) reads it.
    pub fn each<V: Visitor + ?Sized>(&self, v: &mut V) {
        macro_rules! each {
            ($t:ty, $call:ident, $conv:expr) => {
                match self.order {
                    Endian::Little => Array::<$t, Le>::new(self.bytes).iter().for_each(|x| v.$call(None, $conv(x))),
                    Endian::Big => Array::<$t, Be>::new(self.bytes).iter().for_each(|x| v.$call(None, $conv(x))),
                }
            };
        }
        match self.ty {
            NumberType::U8 => self.bytes.iter().for_each(|x| v.uint(None, u64::from(*x))),
            NumberType::I8 => each!(i8, int, i64::from),
            NumberType::U16 => each!(u16, uint, u64::from),
            NumberType::U32 => each!(u32, uint, u64::from),
            NumberType::U64 => each!(u64, uint, |x| x),
            NumberType::I16 => each!(i16, int, i64::from),
            NumberType::I32 => each!(i32, int, i64::from),
            NumberType::I64 => each!(i64, int, |x| x),
            NumberType::F32 => each!(f32, f32, |x| x),
            NumberType::F64 => each!(f64, f64, |x| x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls a visit made: a kind (`u` uint, `i` int, `f` f32, `d` f64, `[` and `]`) and
    /// the value's bits.
    #[derive(Default)]
    struct Calls {
        got: [(u8, u64); 6],
        n: usize,
        elements: bool,
    }

    impl Calls {
        fn push(&mut self, kind: u8, bits: u64) {
            self.got[self.n] = (kind, bits);
            self.n += 1;
        }
        fn calls(&self) -> &[(u8, u64)] {
            &self.got[..self.n]
        }
    }

    impl Visitor for Calls {
        fn uint(&mut self, name: Option<&str>, v: u64) {
            assert!(name.is_none());
            self.push(b'u', v);
        }
        fn int(&mut self, name: Option<&str>, v: i64) {
            assert!(name.is_none());
            self.push(b'i', v as u64);
        }
        fn f32(&mut self, name: Option<&str>, v: f32) {
            assert!(name.is_none());
            self.push(b'f', u64::from(v.to_bits()));
        }
        fn f64(&mut self, name: Option<&str>, v: f64) {
            assert!(name.is_none());
            self.push(b'd', v.to_bits());
        }
        fn bool(&mut self, _: Option<&str>, _: bool) {
            unreachable!()
        }
        fn str(&mut self, _: Option<&str>, _: &str) {
            unreachable!()
        }
        fn bytes(&mut self, _: Option<&str>, _: &[u8]) {
            unreachable!()
        }
        fn enumeration(&mut self, _: Option<&str>, _: i128, _: Option<&'static str>) {
            unreachable!()
        }
        fn flags(&mut self, _: Option<&str>, _: u64) {
            unreachable!()
        }
        fn begin_struct(&mut self, _: Option<&str>) {
            unreachable!()
        }
        fn end_struct(&mut self) {
            unreachable!()
        }
        fn begin_array(&mut self, name: Option<&str>, len: usize) {
            assert_eq!(name, Some("a"));
            self.push(b'[', len as u64);
        }
        fn elements(&self) -> bool {
            self.elements
        }
        fn end_array(&mut self) {
            self.push(b']', 0);
        }
        fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {
            unreachable!()
        }
        fn end_variant(&mut self) {
            unreachable!()
        }
    }

    /// Two elements of every type in both byte orders, each shown as its own type's call with
    /// the value written; a visitor that wants no elements gets the array's length alone.
    #[test]
    fn numbers_show_each_element_as_written() {
        macro_rules! case {
            ($ty:ident, $t:ty, $a:expr, $b:expr, $kind:expr, $bits:expr) => {
                for order in [Endian::Little, Endian::Big] {
                    let mut bytes = [0u8; 16];
                    let size = core::mem::size_of::<$t>();
                    for (i, x) in [$a as $t, $b as $t].into_iter().enumerate() {
                        crate::Fixed::encode_fixed(&x, &mut bytes[i * size..], order);
                    }
                    let v = Numbers::new(&bytes[..2 * size], NumberType::$ty, order).unwrap();
                    assert_eq!((v.len(), v.ty(), v.order()), (2, NumberType::$ty, order));
                    let mut calls = Calls { elements: true, ..Calls::default() };
                    calls.numbers(Some("a"), v);
                    let bits: fn($t) -> u64 = $bits;
                    assert_eq!(
                        calls.calls(),
                        &[(b'[', 2), ($kind, bits($a as $t)), ($kind, bits($b as $t)), (b']', 0)],
                        "{:?} {:?}",
                        NumberType::$ty,
                        order
                    );
                    let mut lengths = Calls::default();
                    lengths.numbers(Some("a"), v);
                    assert_eq!(lengths.calls(), &[(b'[', 2), (b']', 0)]);
                    if size > 1 {
                        assert!(Numbers::new(&bytes[..2 * size - 1], NumberType::$ty, order).is_none());
                    }
                }
            };
        }
        case!(U8, u8, 7, 255, b'u', |x| u64::from(x));
        case!(I8, i8, -7, 127, b'i', |x| i64::from(x) as u64);
        case!(U16, u16, 0x1234, 0xfffe, b'u', |x| u64::from(x));
        case!(I16, i16, -2, 0x1234, b'i', |x| i64::from(x) as u64);
        case!(U32, u32, 0x1234_5678, 0xffff_fffe, b'u', |x| u64::from(x));
        case!(I32, i32, -0x1234_5678, 9, b'i', |x| i64::from(x) as u64);
        case!(U64, u64, 0x0102_0304_0506_0708u64, u64::MAX, b'u', |x| x);
        case!(I64, i64, -0x0102_0304_0506_0708i64, i64::MIN, b'i', |x| x as u64);
        case!(F32, f32, -1.5f32, f32::INFINITY, b'f', |x| u64::from(x.to_bits()));
        case!(F64, f64, 0.1f64, -2.5e300f64, b'd', |x| x.to_bits());
    }
}
