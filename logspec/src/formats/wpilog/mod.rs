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
//! - [`Entry::decode_ref`] decodes a standard value in place ([`DataValueRef`]: strings and
//!   arrays lent from the payload), [`Entry::decode`] into the owned generated [`DataValue`];
//! - [`Writer`] writes files: records as read (so a file re-encodes byte for byte), or new
//!   control and data records with the fewest header bytes, as WPILib's writer does;
//! - [`from_rlog`] converts an AdvantageKit RLOG file into one.

/// The schema the message and value types were generated from (`schemas/wpilog.toml`), for tools
/// that walk its IR at run time (the Python package's writers encode values through it).
pub const SCHEMA_TOML: &str = include_str!(concat!(env!("LOGSPEC_SCHEMAS"), "/wpilog.toml"));

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

/// An active entry: what its Start record said, with its metadata as the latest Set Metadata
/// record left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u32,
    pub name: String,
    /// The data type, as written (`double`, `struct:Pose2d`, `int`).
    pub type_name: String,
    pub metadata: String,
    /// The [`DataValue`] variant the type selects, looked up once.
    variant: i128,
    standard: bool,
}

impl Entry {
    pub fn new(id: u32, name: String, type_name: String, metadata: String) -> Self {
        // `DataValue` has a default variant, so every type name selects one.
        let variant = DataValue::variant_index(&type_name).unwrap_or(DataValue::TAG_OTHER);
        let standard = variant != DataValue::TAG_OTHER;
        Entry { id, name, type_name, metadata, variant, standard }
    }

    /// Whether the type is one of the standard types of the specification that [`DataValue`]
    /// decodes (`boolean`, `int64`, `float`, `double`, `string` and their arrays). Every other
    /// type, `raw` included, is kept as bytes ([`DataValue::Other`]).
    #[inline]
    pub fn is_standard(&self) -> bool {
        self.standard
    }

    /// A data payload decoded as this entry's type: every byte, exactly. [`Entry::decode_ref`]
    /// gives the same value without allocating.
    #[inline]
    pub fn decode(&self, payload: &[u8]) -> Result<DataValue, DecodeError> {
        DataValue::decode_variant_exact(self.variant, payload)
    }

    /// A data payload viewed in place as this entry's type, every byte exactly: the generated
    /// view [`DataValueRef`] (strings and arrays lent from `payload`, array elements decoded as
    /// they are iterated), with the same checks and errors as [`Entry::decode`] and no
    /// allocation.
    #[inline]
    pub fn decode_ref<'a>(&self, payload: &'a [u8]) -> Result<DataValueRef<'a>, DecodeError> {
        DataValueRef::decode_variant_exact(self.variant, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_is_the_default_variant() {
        let other = Some(DataValue::TAG_OTHER);
        assert_eq!(DataValue::variant_index("struct:Pose2d"), other);
        assert_eq!(DataValue::variant_index("raw"), other);
        assert_eq!(DataValue::variant_index("int"), other);
        assert_ne!(DataValue::variant_index("double"), other);
    }
}
