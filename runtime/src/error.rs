//! Decode and encode errors. They say where (byte offset, type, field) and what was expected and
//! found. They are small and `Copy` so that `Result`s stay cheap on hot paths.

use core::fmt;

/// A value shown in an error message: an integer or up to 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Int(i128),
    Bytes { len: u8, bytes: [u8; 16] },
}

impl Shown {
    pub fn bytes(b: &[u8]) -> Self {
        let mut bytes = [0u8; 16];
        let n = b.len().min(16);
        bytes[..n].copy_from_slice(&b[..n]);
        Shown::Bytes { len: n as u8, bytes }
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Int(v) => write!(f, "{v}"),
            Shown::Bytes { len, bytes } => {
                let b = &bytes[..usize::from(*len)];
                if b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
                    f.write_str("\"")?;
                    for c in b {
                        write!(f, "{}", char::from(*c))?;
                    }
                    f.write_str("\"")
                } else {
                    f.write_str("0x")?;
                    for c in b {
                        write!(f, "{c:02x}")?;
                    }
                    Ok(())
                }
            }
        }
    }
}

/// What went wrong while decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ended: `needed` bytes were required where only `available` remained.
    UnexpectedEof { needed: u64, available: u64 },
    /// A field that must hold a constant (a magic number, a format marker) held something else.
    BadConst { expected: Shown, found: Shown },
    /// A union's tag selected no variant.
    UnknownVariant { tag: i128 },
    /// A type name that selects no variant of a union selected by name.
    UnknownTypeName { name: Shown },
    /// An enum value outside a hand-written Rust enum's variants.
    InvalidValue { value: i128 },
    /// A string is not UTF-8; `valid_up_to` bytes of it were.
    InvalidUtf8 { valid_up_to: u64 },
    /// A byte-length-prefixed sequence is not a whole number of elements.
    RaggedLength { size: u64, element: u64 },
    /// A record's payload is longer than its layout.
    TrailingBytes { extra: u64 },
    /// A union selected by a reader parameter was decoded without a value for that parameter.
    MissingParam { name: &'static str },
}

/// The parts of a [`DecodeError`]: what went wrong, where (byte offset relative to the start of
/// what was being decoded) and, where known, the type and field being decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeErrorDetail {
    pub kind: DecodeErrorKind,
    pub offset: u64,
    /// The struct or record being decoded.
    pub ty: Option<&'static str>,
    /// The field being decoded (the innermost one).
    pub field: Option<&'static str>,
}

/// A decode failure, located by byte offset (relative to the start of what was being decoded) and,
/// where known, the type and field being decoded; its parts are reached through `Deref`
/// (`err.kind`, `err.offset`).
///
/// With the `alloc` feature the detail is boxed, so that the error is one pointer and every
/// `Result<T, DecodeError>` on a hot path stays small (a compile-time assertion holds it to at
/// most 24 bytes). Decode errors are rare (a corrupt or cut input), so the allocation is paid
/// only on the cold path. Without `alloc` the detail is kept inline.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError(Repr);

#[cfg(feature = "alloc")]
type Repr = alloc::boxed::Box<DecodeErrorDetail>;
#[cfg(not(feature = "alloc"))]
type Repr = DecodeErrorDetail;

#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<DecodeError>() <= 24);
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<Result<u64, DecodeError>>() <= 24);

impl core::ops::Deref for DecodeError {
    type Target = DecodeErrorDetail;
    #[inline]
    fn deref(&self) -> &DecodeErrorDetail {
        &self.0
    }
}

impl core::ops::DerefMut for DecodeError {
    #[inline]
    fn deref_mut(&mut self) -> &mut DecodeErrorDetail {
        &mut self.0
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<DecodeErrorDetail> for DecodeError {
    #[cold]
    #[allow(clippy::useless_conversion)] // a Box with `alloc`; without it, `Repr` is the detail itself
    fn from(d: DecodeErrorDetail) -> Self {
        DecodeError(d.into())
    }
}

impl DecodeError {
    #[cold]
    pub fn new(kind: DecodeErrorKind) -> Self {
        DecodeErrorDetail { kind, offset: 0, ty: None, field: None }.into()
    }

    #[cold]
    pub fn eof(needed: usize, available: usize) -> Self {
        Self::new(DecodeErrorKind::UnexpectedEof { needed: needed as u64, available: available as u64 })
    }

    /// The parts of the error, unboxed.
    pub fn detail(&self) -> DecodeErrorDetail {
        **self
    }

    /// Sets the offset (if not yet set deeper down, offsets add up from inner to outer).
    #[cold]
    pub fn at(mut self, offset: usize) -> Self {
        self.0.offset += offset as u64;
        self
    }

    /// Names the field, unless an inner field was already named.
    #[cold]
    pub fn in_field(mut self, field: &'static str) -> Self {
        if self.0.field.is_none() {
            self.0.field = Some(field);
        }
        self
    }

    /// Names the type, unless an inner type was already named.
    #[cold]
    pub fn in_type(mut self, ty: &'static str) -> Self {
        if self.0.ty.is_none() {
            self.0.ty = Some(ty);
        }
        self
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::UnexpectedEof { needed, available } => {
                write!(f, "unexpected end of data: needed {needed} bytes, found {available}")
            }
            DecodeErrorKind::BadConst { expected, found } => write!(f, "expected {expected}, found {found}"),
            DecodeErrorKind::UnknownVariant { tag } => write!(f, "tag {tag} selects no known variant"),
            DecodeErrorKind::UnknownTypeName { name } => write!(f, "type name {name} selects no known variant"),
            DecodeErrorKind::InvalidValue { value } => write!(f, "{value} is not a valid value"),
            DecodeErrorKind::InvalidUtf8 { valid_up_to } => {
                write!(f, "string is not valid UTF-8 (invalid after {valid_up_to} bytes)")
            }
            DecodeErrorKind::RaggedLength { size, element } => {
                write!(f, "{size} bytes is not a whole number of {element}-byte elements")
            }
            DecodeErrorKind::TrailingBytes { extra } => write!(f, "{extra} bytes left over after the last field"),
            DecodeErrorKind::MissingParam { name } => {
                write!(f, "no value for reader parameter `{name}` (decode with `Cursor::with_params`)")
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl fmt::Display for DecodeErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.ty, self.field) {
            (Some(t), Some(x)) => write!(f, "{t}.{x}: ")?,
            (Some(t), None) => write!(f, "{t}: ")?,
            (None, Some(x)) => write!(f, "{x}: ")?,
            (None, None) => {}
        }
        write!(f, "{} (at byte {})", self.kind, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// An encode failure: a value that the layout cannot represent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A sequence is longer than its length prefix can express.
    TooLong { field: &'static str, len: u64, max: u64 },
    /// A fixed-length field got a value of another length.
    WrongLength { field: &'static str, len: u64, expected: u64 },
    /// A variable-width integer does not fit the byte count its width field announces.
    TooWide { field: &'static str, value: u64, bytes: u8 },
    /// The output buffer is too small.
    BufferFull,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooLong { field, len, max } => {
                write!(f, "{field}: length {len} does not fit its length prefix (max {max})")
            }
            EncodeError::WrongLength { field, len, expected } => {
                write!(f, "{field}: length {len}, the layout requires exactly {expected}")
            }
            EncodeError::TooWide { field, value, bytes } => {
                write!(f, "{field}: value {value:#x} does not fit the {bytes} bytes its width field announces")
            }
            EncodeError::BufferFull => f.write_str("the output buffer is too small"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}
