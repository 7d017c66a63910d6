//! A data record's value lent from the payload ([`DataValueRef`]): what [`Entry::decode_ref`]
//! returns, so that reading every value of a file allocates nothing per record.
//!
//! Like RLOG's R1 fast path, it takes only what it can take whole and hands every other payload
//! (a `string[]`, or anything that does not decode) to the generated [`DataValue`] decoder, so
//! errors are the generated decoder's, word for word. A scalar is its Rust type's [`Fixed`]
//! decoder over a payload of exactly that size, a `string` is the payload as `&str`, a numeric
//! array is its bytes, decoded element by element with [`Fixed`] as it is iterated, all in the
//! schema's byte order. `tests/wpilog.rs` holds it to the generated decoder on every sample file.

use std::marker::PhantomData;

use logspec_runtime::{DecodeError, Endian, Fixed};

use super::{DataValue, Entry};

/// The byte order of `schemas/wpilog.toml` (`endian = "little"`), for array elements. A unit test
/// checks it against the generated encoder.
const ORDER: Endian = Endian::Little;

/// A decoded data value, borrowing strings and arrays from the payload.
#[derive(Clone, Debug, PartialEq)]
pub enum DataValueRef<'a> {
    Boolean(bool),
    Int64(i64),
    Float(f32),
    Double(f64),
    String(&'a str),
    BooleanArray(Elems<'a, bool>),
    Int64Array(Elems<'a, i64>),
    FloatArray(Elems<'a, f32>),
    DoubleArray(Elems<'a, f64>),
    /// A `string[]`, decoded by the generated decoder (it has a length per element, so it is not
    /// lent; the type is rare in real logs).
    Owned(DataValue),
    /// A non-standard type (`raw`, `json`, `struct:...`): the payload.
    Other(&'a [u8]),
}

impl DataValueRef<'_> {
    /// The owned value, as [`Entry::decode`] gives it.
    pub fn into_owned(self) -> DataValue {
        match self {
            DataValueRef::Boolean(value) => DataValue::Boolean { value },
            DataValueRef::Int64(value) => DataValue::Int64 { value },
            DataValueRef::Float(value) => DataValue::Float { value },
            DataValueRef::Double(value) => DataValue::Double { value },
            DataValueRef::String(value) => DataValue::String { value: value.to_owned() },
            DataValueRef::BooleanArray(a) => DataValue::BooleanArray { value: a.iter().collect() },
            DataValueRef::Int64Array(a) => DataValue::Int64Array { value: a.iter().collect() },
            DataValueRef::FloatArray(a) => DataValue::FloatArray { value: a.iter().collect() },
            DataValueRef::DoubleArray(a) => DataValue::DoubleArray { value: a.iter().collect() },
            DataValueRef::Owned(value) => value,
            DataValueRef::Other(value) => DataValue::Other { value: value.to_vec() },
        }
    }
}

/// An array of fixed-size elements lent from a payload whose length is a whole number of them;
/// elements are decoded as they are iterated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elems<'a, T> {
    bytes: &'a [u8],
    _t: PhantomData<T>,
}

impl<'a, T: Fixed> Elems<'a, T> {
    /// `None` unless `bytes` holds a whole number of elements.
    fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() % T::SIZE == 0).then_some(Elems { bytes, _t: PhantomData })
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / T::SIZE
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The elements' bytes as written.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + 'a {
        // Every chunk is exactly `T::SIZE` bytes, so the decoder's length check cannot fail.
        self.bytes.chunks_exact(T::SIZE).map(|b| T::decode_fixed(b, ORDER).unwrap_or_else(|_| unreachable!()))
    }
}

impl Entry {
    /// A data payload decoded as this entry's type, every byte exactly, lending strings and
    /// arrays from `payload`: the same values and the same errors as [`Entry::decode`], with no
    /// allocation except for `string[]` ([`DataValueRef::Owned`]).
    #[inline]
    pub fn decode_ref<'a>(&self, payload: &'a [u8]) -> Result<DataValueRef<'a>, DecodeError> {
        let lent = match self.variant {
            DataValue::BOOLEAN => scalar(payload).map(DataValueRef::Boolean),
            DataValue::INT64 => scalar(payload).map(DataValueRef::Int64),
            DataValue::FLOAT => scalar(payload).map(DataValueRef::Float),
            DataValue::DOUBLE => scalar(payload).map(DataValueRef::Double),
            DataValue::STRING => std::str::from_utf8(payload).ok().map(DataValueRef::String),
            DataValue::BOOLEAN_ARRAY => Elems::new(payload).map(DataValueRef::BooleanArray),
            DataValue::INT64_ARRAY => Elems::new(payload).map(DataValueRef::Int64Array),
            DataValue::FLOAT_ARRAY => Elems::new(payload).map(DataValueRef::FloatArray),
            DataValue::DOUBLE_ARRAY => Elems::new(payload).map(DataValueRef::DoubleArray),
            _ if !self.standard => Some(DataValueRef::Other(payload)),
            _ => None,
        };
        if let Some(v) = lent {
            return Ok(v);
        }
        // `string[]`, and every payload that does not decode: the generated decoder.
        self.decode(payload).map(DataValueRef::Owned)
    }
}

/// A payload that is exactly one `T`.
#[inline(always)]
fn scalar<T: Fixed>(payload: &[u8]) -> Option<T> {
    if payload.len() == T::SIZE {
        T::decode_fixed(payload, ORDER).ok()
    } else {
        None
    }
}

impl DataValue {
    // The variant indices `Entry::decode_ref` lends, by the generated type-name match.
    const BOOLEAN: i128 = 0;
    const INT64: i128 = 1;
    const FLOAT: i128 = 2;
    const DOUBLE: i128 = 3;
    const STRING: i128 = 4;
    const BOOLEAN_ARRAY: i128 = 5;
    const INT64_ARRAY: i128 = 6;
    const FLOAT_ARRAY: i128 = 7;
    const DOUBLE_ARRAY: i128 = 8;
}

#[cfg(test)]
mod tests {
    use super::*;
    use logspec_runtime::Encode;

    #[test]
    fn lent_variant_indices_are_the_generated_ones() {
        for (name, i) in [
            ("boolean", DataValue::BOOLEAN),
            ("int64", DataValue::INT64),
            ("float", DataValue::FLOAT),
            ("double", DataValue::DOUBLE),
            ("string", DataValue::STRING),
            ("boolean[]", DataValue::BOOLEAN_ARRAY),
            ("int64[]", DataValue::INT64_ARRAY),
            ("float[]", DataValue::FLOAT_ARRAY),
            ("double[]", DataValue::DOUBLE_ARRAY),
        ] {
            assert_eq!(DataValue::variant_index(name), Some(i), "{name}");
        }
    }

    #[test]
    fn element_order_is_the_generated_encoders() {
        let v = DataValue::DoubleArray { value: vec![1.5, -2.25e300] };
        let bytes = v.to_bytes().unwrap();
        let e = Entry::new(1, "/x".into(), "double[]".into(), String::new());
        let DataValueRef::DoubleArray(a) = e.decode_ref(&bytes).unwrap() else { panic!() };
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1.5, -2.25e300]);
        let v = DataValue::Int64Array { value: vec![-3, 1 << 40] };
        let bytes = v.to_bytes().unwrap();
        let e = Entry::new(1, "/x".into(), "int64[]".into(), String::new());
        let DataValueRef::Int64Array(a) = e.decode_ref(&bytes).unwrap() else { panic!() };
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![-3, 1 << 40]);
    }

    #[test]
    fn errors_are_the_generated_decoders() {
        for (ty, payload) in [
            ("string", &b"\xff"[..]),
            ("double[]", &[0u8; 9][..]),
            ("float[]", &[0u8; 3][..]),
            ("double", &[0u8; 7][..]),
            ("boolean", &[][..]),
            ("string[]", &[1, 0, 0, 0][..]),
        ] {
            let e = Entry::new(1, "/x".into(), ty.into(), String::new());
            assert_eq!(e.decode_ref(payload).unwrap_err(), e.decode(payload).unwrap_err(), "{ty}");
        }
    }
}
