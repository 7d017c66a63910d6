//! Borrowed views: the types generated `…Ref<'a>` views are made of.
//!
//! A view is checked once, when it is made from its bytes (every length, const, tag and UTF-8
//! string); after that nothing about it can fail, so its accessors return plain values. Numbers
//! are decoded then and held by value; strings and bytes are borrowed; arrays of numbers are
//! borrowed as an [`Array`] that decodes each element, in the field's byte order, when it is
//! read; arrays of structs are borrowed as a [`Seq`] of the structs' views.

use core::fmt;
use core::marker::PhantomData;

use crate::cursor::Cursor;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::traits::Endian;
use crate::visit::{NumberType, Numbers, Visit, Visitor};

/// A byte order known at compile time: [`Be`] or [`Le`].
pub trait Order: Copy + 'static {
    const ENDIAN: Endian;
}

/// Big-endian (network order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Be;

/// Little-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Le;

impl Order for Be {
    const ENDIAN: Endian = Endian::Big;
}

impl Order for Le {
    const ENDIAN: Endian = Endian::Little;
}

/// A value that an [`Array`] can hold: a number, a bool, an enum or a flags type, which every
/// `SIZE`-byte pattern decodes to (so reading an element cannot fail).
pub trait Element: Sized {
    const SIZE: usize;
    /// The number type, for a number shown as itself (an [`Array`] of them is visited at
    /// once, as [`Visitor::numbers`]); `None` for a `bool`, an enum or flags.
    const NUMBER: Option<NumberType> = None;
    /// Decodes from the first `SIZE` bytes of `b` (which the caller guarantees are there).
    fn read(b: &[u8], order: Endian) -> Self;
}

macro_rules! element {
    ($($t:ty => $number:ident),*) => {$(
        impl Element for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            const NUMBER: Option<NumberType> = Some(NumberType::$number);
            #[inline(always)]
            fn read(b: &[u8], order: Endian) -> Self {
                match b.first_chunk::<{ core::mem::size_of::<$t>() }>() {
                    Some(a) => match order {
                        Endian::Little => <$t>::from_le_bytes(*a),
                        Endian::Big => <$t>::from_be_bytes(*a),
                    },
                    None => <$t>::default(),
                }
            }
        }
    )*};
}

element!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64, i64 => I64, f32 => F32, f64 => F64);

impl Element for bool {
    const SIZE: usize = 1;
    #[inline(always)]
    fn read(b: &[u8], _order: Endian) -> Self {
        b.first().is_some_and(|&x| x != 0)
    }
}

/// An array of numbers borrowed from the input: `len()` elements of `T`, in byte order `O`,
/// decoded as they are read.
pub struct Array<'a, T, O> {
    bytes: &'a [u8],
    _t: PhantomData<(T, O)>,
}

impl<T, O> Clone for Array<'_, T, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, O> Copy for Array<'_, T, O> {}

impl<'a, T: Element, O: Order> Array<'a, T, O> {
    /// The array over `bytes`, whose length must be a multiple of `T::SIZE` (bytes after the
    /// last whole element are not part of it).
    #[inline(always)]
    pub fn new(bytes: &'a [u8]) -> Self {
        let whole = bytes.len() - bytes.len() % T::SIZE.max(1);
        Array { bytes: &bytes[..whole], _t: PhantomData }
    }

    /// Takes `n` elements from the cursor. When they are not all there, the error is the one
    /// an element-by-element decoder reports: at the first element that is cut.
    #[inline]
    pub fn take(c: &mut Cursor<'a>, n: usize) -> Result<Self, DecodeError> {
        match n.checked_mul(T::SIZE) {
            Some(size) if size <= c.remaining() => Ok(Array { bytes: c.take(size)?, _t: PhantomData }),
            _ => {
                let rem = c.remaining();
                let cut = rem % T::SIZE.max(1);
                Err(DecodeError::eof(T::SIZE, cut).at(c.position() + rem - cut))
            }
        }
    }

    /// Takes `size` bytes of elements from the cursor; `size` must be a whole number of them.
    #[inline]
    pub fn take_bytes(c: &mut Cursor<'a>, size: usize) -> Result<Self, DecodeError> {
        let at = c.position();
        let bytes = c.take(size)?;
        if T::SIZE > 1 && size % T::SIZE != 0 {
            return Err(
                DecodeError::new(DecodeErrorKind::RaggedLength { size: size as u64, element: T::SIZE as u64 }).at(at)
            );
        }
        Ok(Array { bytes, _t: PhantomData })
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / T::SIZE.max(1)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        let start = i.checked_mul(T::SIZE)?;
        self.bytes.get(start..start + T::SIZE).map(|b| T::read(b, O::ENDIAN))
    }

    /// The elements, decoded one by one.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + DoubleEndedIterator + 'a {
        self.bytes.chunks_exact(T::SIZE.max(1)).map(|b| T::read(b, O::ENDIAN))
    }

    /// The elements' bytes as they are in the input.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The elements as a fixed-size array (of a fixed-length field, whose length was checked when
    /// the view was made; missing elements would be `T::default()`).
    #[inline]
    pub fn to_array<const N: usize>(&self) -> [T; N]
    where
        T: Default,
    {
        core::array::from_fn(|i| self.get(i).unwrap_or_default())
    }

    /// The elements in a new vector.
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> alloc::vec::Vec<T> {
        self.iter().collect()
    }
}

impl<T: Element + fmt::Debug, O: Order> fmt::Debug for Array<'_, T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Element + PartialEq, O: Order> PartialEq for Array<'_, T, O> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// A borrowed view of a value: made from bytes, checked once (see the [module](self) docs).
pub trait View<'a>: Sized {
    /// Decodes the view from the cursor, in the byte order `order` of the field that holds it
    /// (which only enums and flags use; structs have their own).
    fn decode_view(c: &mut Cursor<'a>, order: Endian) -> Result<Self, DecodeError>;

    /// Decodes the view as [`decode_view`](Self::decode_view) and hands it to `k`, returning what
    /// `k` returns. The same bytes are accepted with the same values and errors; a generated view
    /// with several ways of being decoded (its one-check paths and the field-by-field decoder)
    /// calls `k` on each, so that a caller that consumes the view at once (a reader's loop) gets
    /// it in registers rather than as a `Result` assembled in memory from the different paths.
    #[inline(always)]
    fn decode_view_then<T>(c: &mut Cursor<'a>, order: Endian, k: impl FnOnce(Self) -> T) -> Result<T, DecodeError> {
        Self::decode_view(c, order).map(k)
    }

    /// The view of the value at the start of `bytes` (bytes after it are not looked at).
    #[inline]
    fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode_view(&mut Cursor::new(bytes), Endian::Little)
    }

    /// The view of a value that fills `bytes` exactly: bytes left over are an error.
    #[inline]
    fn view_exact(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut c = Cursor::new(bytes);
        let v = Self::decode_view(&mut c, Endian::Little)?;
        if c.is_empty() {
            Ok(v)
        } else {
            Err(DecodeError::new(DecodeErrorKind::TrailingBytes { extra: c.remaining() as u64 }).at(c.position()))
        }
    }
}

impl<'a, const N: usize> View<'a> for &'a [u8; N] {
    #[inline]
    fn decode_view(c: &mut Cursor<'a>, _order: Endian) -> Result<Self, DecodeError> {
        let b = c.take(N)?;
        b.first_chunk::<N>().ok_or_else(|| DecodeError::eof(N, b.len()))
    }
}

impl<'a, const N: usize> View<'a> for crate::FixedStr<N> {
    #[inline]
    fn decode_view(c: &mut Cursor<'a>, _order: Endian) -> Result<Self, DecodeError> {
        c.array::<N>().map(crate::FixedStr)
    }
}

/// A string with its own length prefix (`W` bytes, big-endian when `BIG`), as an element of a
/// [`Seq`]: an array of strings. Derefs to the `str`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LenStr<'a, const W: usize, const BIG: bool>(pub &'a str);

impl<'a, const W: usize, const BIG: bool> View<'a> for LenStr<'a, W, BIG> {
    #[inline]
    fn decode_view(c: &mut Cursor<'a>, _order: Endian) -> Result<Self, DecodeError> {
        let n = crate::__private::prefix::<W>(c, BIG).and_then(|n| crate::__private::len(n, c))?;
        let b = c.take(n)?;
        str_at(b, c.position() - b.len()).map(LenStr)
    }
}

impl<const W: usize, const BIG: bool> core::ops::Deref for LenStr<'_, W, BIG> {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

/// Bytes with their own length prefix, as an element of a [`Seq`]. Derefs to the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LenBytes<'a, const W: usize, const BIG: bool>(pub &'a [u8]);

impl<'a, const W: usize, const BIG: bool> View<'a> for LenBytes<'a, W, BIG> {
    #[inline]
    fn decode_view(c: &mut Cursor<'a>, _order: Endian) -> Result<Self, DecodeError> {
        let n = crate::__private::prefix::<W>(c, BIG).and_then(|n| crate::__private::len(n, c))?;
        c.take(n).map(LenBytes)
    }
}

impl<const W: usize, const BIG: bool> core::ops::Deref for LenBytes<'_, W, BIG> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0
    }
}

/// A sequence of views borrowed from the input (an array of structs): the elements were checked
/// when the sequence was made and are decoded again, without allocating, as they are read.
pub struct Seq<'a, V> {
    bytes: &'a [u8],
    len: usize,
    order: Endian,
    /// The reader parameters the elements were checked with (for parameter unions in them).
    params: &'a [i128],
    _v: PhantomData<V>,
}

impl<V> Clone for Seq<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for Seq<'_, V> {}

impl<'a, V: View<'a>> Seq<'a, V> {
    /// Takes `n` elements from the cursor, checking each.
    #[inline]
    pub fn take(c: &mut Cursor<'a>, n: usize, order: Endian) -> Result<Self, DecodeError> {
        let start = c.position();
        let rest = c.rest();
        for _ in 0..n {
            V::decode_view(c, order)?;
        }
        let bytes = &rest[..c.position() - start];
        Ok(Seq { bytes, len: n, order, params: c.params(), _v: PhantomData })
    }

    /// Takes `n` elements of `size` bytes each whose views cannot fail once their bytes are there
    /// (the generated code passes only fixed-size structs of numbers, bools, enums, flags and
    /// padding, without consts): one length check instead of one per element. When the bytes are
    /// short, the elements are checked one by one as [`take`](Self::take) does, so the error is
    /// the same.
    #[inline]
    pub fn take_fixed(c: &mut Cursor<'a>, n: usize, size: usize, order: Endian) -> Result<Self, DecodeError> {
        match n.checked_mul(size) {
            Some(len) if len <= c.remaining() => {
                let params = c.params();
                let bytes = c.take(len)?;
                Ok(Seq { bytes, len: n, order, params, _v: PhantomData })
            }
            _ => Self::take(c, n, order),
        }
    }

    /// Takes elements from the cursor until it is empty, checking each (a byte-length-prefixed
    /// or rest-of-payload array, given a cursor over just its bytes).
    #[inline]
    pub fn take_all(mut c: Cursor<'a>, order: Endian) -> Result<Self, DecodeError> {
        let bytes = c.rest();
        let params = c.params();
        let mut len = 0;
        while !c.is_empty() {
            V::decode_view(&mut c, order)?;
            len += 1;
        }
        Ok(Seq { bytes, len, order, params, _v: PhantomData })
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<V> {
        self.iter().nth(i)
    }

    /// The elements' views.
    #[inline]
    pub fn iter(&self) -> SeqIter<'a, V> {
        SeqIter { c: Cursor::with_params(self.bytes, self.params), left: self.len, order: self.order, _v: PhantomData }
    }

    /// The elements' bytes as they are in the input.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a, V: View<'a>> IntoIterator for Seq<'a, V> {
    type Item = V;
    type IntoIter = SeqIter<'a, V>;
    fn into_iter(self) -> SeqIter<'a, V> {
        self.iter()
    }
}

/// The iterator of a [`Seq`].
pub struct SeqIter<'a, V> {
    c: Cursor<'a>,
    left: usize,
    order: Endian,
    _v: PhantomData<V>,
}

impl<'a, V: View<'a>> Iterator for SeqIter<'a, V> {
    type Item = V;
    #[inline]
    fn next(&mut self) -> Option<V> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The elements were checked when the sequence was made, so this cannot fail; if it did,
        // the sequence would end early rather than panic.
        match V::decode_view(&mut self.c, self.order) {
            Ok(v) => Some(v),
            Err(_) => {
                self.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a, V: View<'a>> ExactSizeIterator for SeqIter<'a, V> {}

impl<'a, V: View<'a> + fmt::Debug> fmt::Debug for Seq<'a, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, V: View<'a> + PartialEq> PartialEq for Seq<'a, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

/// Checks UTF-8 text borrowed from the input; `at` is its offset, for the error.
#[inline]
pub fn str_at(b: &[u8], at: usize) -> Result<&str, DecodeError> {
    match core::str::from_utf8(b) {
        Ok(s) => Ok(s),
        Err(e) => Err(DecodeError::new(DecodeErrorKind::InvalidUtf8 { valid_up_to: e.valid_up_to() as u64 }).at(at)),
    }
}

// Walking views: a view shows a visitor exactly what its owned value shows (the generated views
// visit their fields as the owned types do), so tools that print or tabulate records need not
// make them owned first.

impl Visit for str {
    #[inline]
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.str(name, self);
    }
}

impl<T: Visit + ?Sized> Visit for &T {
    #[inline]
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        (**self).visit(name, v);
    }
}

/// An array of numbers at once ([`Visitor::numbers`], which shows each element as its own
/// visit does); of bools, element by element.
impl<T: Element + Visit, O: Order> Visit for Array<'_, T, O> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        if let Some(numbers) = T::NUMBER.and_then(|ty| Numbers::new(self.bytes, ty, O::ENDIAN)) {
            v.numbers(name, numbers);
            return;
        }
        v.begin_array(name, self.len());
        if v.elements() {
            for x in self.iter() {
                x.visit(None, v);
            }
        }
        v.end_array();
    }
}

impl<'a, E: View<'a> + Visit> Visit for Seq<'a, E> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.begin_array(name, self.len());
        if v.elements() {
            for x in self.iter() {
                x.visit(None, v);
            }
        }
        v.end_array();
    }
}

impl<const W: usize, const BIG: bool> Visit for LenStr<'_, W, BIG> {
    #[inline]
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.str(name, self.0);
    }
}

/// As the owned element (a `Vec<u8>`): an array of numbers, not `bytes` (which only a field of
/// bytes is shown as).
impl<const W: usize, const BIG: bool> Visit for LenBytes<'_, W, BIG> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        v.numbers(name, Numbers::u8s(self.0));
    }
}
