//! WPILib DataLog (`.wpilog`) files.
//!
//! The wire layouts (the file header, the record header with its variable-width entry id, payload
//! size and timestamp, the control records, and the payload of every standard data type) are
//! generated from `schemas/wpilog.toml`; this module adds what a schema cannot say: the entry
//! table that carries each entry's name, type and metadata from its Start record to its data
//! records and Finish.
//!
//! - [`Reader`] reads records from any `Read` in constant memory, lending each one
//!   ([`RecordRef`]) with the entry it belongs to; [`read_all`] is the plain `&[u8]` entry point
//!   (for fuzzing and tests);
//! - [`Entry::decode_ref`] (or [`DataType::decode_ref`] for any type name) decodes a standard
//!   value in place ([`DataValueRef`]: strings and arrays lent from the payload),
//!   [`Entry::decode`] into the owned generated [`DataValue`];
//! - [`Writer`] writes files: records as read (so a file re-encodes byte for byte), or new
//!   control and data records with the fewest header bytes, as WPILib's writer does;
//! - [`from_rlog`] converts an AdvantageKit RLOG file into one.

/// The schema the message and value types were generated from (`schemas/wpilog.toml`), for tools
/// that walk its IR at run time (the Python package's writers encode values through it).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/wpilog.toml"));

pub mod from_rlog;
mod generated {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/wpilog.rs"));
}
mod reader;
mod value;
mod writer;

pub use generated::*;
pub use reader::{control, read_all, Body, Reader, RecordRef, WpilogError, WpilogErrorDetail, WpilogErrorKind};
pub use value::{to_value, write_hex, write_value, NegZero};
pub use writer::{WpilogWriteError, Writer};

use logspec_runtime::DecodeError;

/// The version this module reads and writes: 1.0.
pub const VERSION: u16 = 0x0100;

/// An active entry, as the reader lends it: what its Start record said, with its metadata as
/// the latest Set Metadata record left it. A small view of the reader's entry table (which keeps
/// every entry's strings in one buffer): the strings are sliced when asked for, so that a data
/// record finds its entry and its type at the cost of an index.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    slot: &'a reader::Slot,
    text: &'a String,
}

impl<'a> Entry<'a> {
    #[inline]
    fn new(slot: &'a reader::Slot, text: &'a String) -> Self {
        Entry { slot, text }
    }

    #[inline]
    pub fn id(&self) -> u32 {
        self.slot.id()
    }

    #[inline]
    pub fn name(&self) -> &'a str {
        self.slot.strings(self.text).0
    }

    /// The data type, as written (`double`, `struct:Pose2d`, `int`).
    #[inline]
    pub fn type_name(&self) -> &'a str {
        self.slot.strings(self.text).1
    }

    #[inline]
    pub fn metadata(&self) -> &'a str {
        self.slot.strings(self.text).2
    }

    /// What the type decodes as.
    #[inline]
    pub fn data_type(&self) -> DataType {
        self.slot.data_type()
    }

    /// [`DataType::is_standard`] of the entry's type.
    #[inline]
    pub fn is_standard(&self) -> bool {
        self.data_type().is_standard()
    }

    /// [`DataType::decode`] as the entry's type.
    #[inline]
    pub fn decode(&self, payload: &[u8]) -> Result<DataValue, DecodeError> {
        self.data_type().decode(payload)
    }

    /// [`DataType::decode_ref`] as the entry's type.
    #[inline]
    pub fn decode_ref<'p>(&self, payload: &'p [u8]) -> Result<DataValueRef<'p>, DecodeError> {
        self.data_type().decode_ref(payload)
    }
}

impl std::fmt::Debug for Entry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("id", &self.id())
            .field("name", &self.name())
            .field("type_name", &self.type_name())
            .field("metadata", &self.metadata())
            .finish()
    }
}

/// What a type name decodes as: the [`DataValue`] variant it selects (`DataValue` has a default
/// variant, [`DataValue::Other`], so every name selects one), looked up once per entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataType(Variant);

/// The [`DataValue`] variants in the order of their tags (`DataValue::TAG_*`), in a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Variant {
    Boolean,
    Int64,
    Float,
    Double,
    String,
    BooleanArray,
    Int64Array,
    FloatArray,
    DoubleArray,
    StringArray,
    Other,
}

const VARIANTS: [Variant; 11] = [
    Variant::Boolean,
    Variant::Int64,
    Variant::Float,
    Variant::Double,
    Variant::String,
    Variant::BooleanArray,
    Variant::Int64Array,
    Variant::FloatArray,
    Variant::DoubleArray,
    Variant::StringArray,
    Variant::Other,
];

impl DataType {
    pub fn of(type_name: &str) -> Self {
        let v = DataValue::variant_index(type_name).unwrap_or(DataValue::TAG_OTHER);
        DataType(usize::try_from(v).ok().and_then(|i| VARIANTS.get(i)).copied().unwrap_or(Variant::Other))
    }

    /// Whether the type is one of the standard types of the specification that [`DataValue`]
    /// decodes (`boolean`, `int64`, `float`, `double`, `string` and their arrays). Every other
    /// type, `raw` included, is kept as bytes ([`DataValue::Other`]).
    #[inline]
    pub fn is_standard(self) -> bool {
        self.0 != Variant::Other
    }

    /// A data payload decoded as this type: every byte, exactly. [`DataType::decode_ref`] gives
    /// the same value without allocating.
    #[inline]
    pub fn decode(self, payload: &[u8]) -> Result<DataValue, DecodeError> {
        DataValue::decode_variant_exact(self.0 as i128, payload)
    }

    /// A data payload viewed in place as this type, every byte exactly: the generated view
    /// [`DataValueRef`] (strings and arrays lent from `payload`, array elements decoded as they
    /// are iterated), with the same checks and errors as [`DataType::decode`] and no allocation.
    #[inline]
    pub fn decode_ref(self, payload: &[u8]) -> Result<DataValueRef<'_>, DecodeError> {
        DataValueRef::decode_variant_exact(self.0 as i128, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_is_the_default_variant() {
        assert!(!DataType::of("struct:Pose2d").is_standard());
        assert!(DataType::of("double").is_standard());
        for (i, v) in VARIANTS.iter().enumerate() {
            assert_eq!(*v as i128, i as i128);
        }
        assert_eq!(Variant::Other as i128, DataValue::TAG_OTHER);
        assert_eq!(Variant::DoubleArray as i128, DataValue::TAG_DOUBLE_ARRAY);
        assert_eq!(DataType::of("string[]").0 as i128, DataValue::TAG_STRING_ARRAY);
        assert_eq!(DataType::of("boolean").0 as i128, DataValue::TAG_BOOLEAN);
        let other = Some(DataValue::TAG_OTHER);
        assert_eq!(DataValue::variant_index("struct:Pose2d"), other);
        assert_eq!(DataValue::variant_index("raw"), other);
        assert_eq!(DataValue::variant_index("int"), other);
        assert_ne!(DataValue::variant_index("double"), other);
    }
}
