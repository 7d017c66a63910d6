//! Runtime support for logspec-generated code and `#[derive(Record)]`: the traits every record
//! implements, byte cursors and sinks, errors, and the framed readers and writers of record streams.
//!
//! `no_std` by default-off features: with neither `alloc` nor `std`, fixed-layout records decode
//! and encode with no allocation at all (what firmware needs); `alloc` adds strings and variable
//! arrays; `std` adds the streaming [`framed`] reader and writer over `std::io`.

#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod cursor;
mod error;
mod format;
pub mod sync;
mod traits;
pub mod view;
mod visit;

#[cfg(feature = "std")]
pub mod framed;
#[cfg(feature = "std")]
mod readbuf;

#[doc(hidden)]
pub mod __private;

pub use cursor::{Cursor, Sink, SliceSink};
pub use error::{DecodeError, DecodeErrorDetail, DecodeErrorKind, EncodeError, Shown};
pub use traits::{Decode, Encode, Endian, Fixed, FixedStr, Record, Union};
pub use view::View;
pub use visit::{NumberType, Numbers, Visit, Visitor};

pub use format::{Corruption, FramedFormat, Framing, ReadErrorKind, RecordHeader, Versioned, WithFormat};
#[cfg(feature = "std")]
pub use framed::{
    decode_event, with_file_format, End, Event, RawRecord, ReadError, ReadErrorDetail, Reader, SliceReader, WriteError,
    Writer,
};
#[cfg(feature = "std")]
pub use readbuf::{Input, ReadBuf, SliceBuf, WindowBuf};
pub use sync::{resync, Crc, RecordChecksum, Resync};
#[cfg(feature = "alloc")]
pub use sync::{CrcShifts, SpanCrc};
