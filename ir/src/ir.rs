//! The validated, immutable intermediate representation that every front end produces and every
//! back end reads.
//!
//! Front ends (the TOML schema, `#[derive(Record)]`) lower into [`Schema`]; back ends (Rust, C,
//! fingerprints) never look at anything else. Layout rules (sizes, offsets) are computed here once,
//! in [`crate::layout`], so no back end re-derives them.

use std::fmt;

/// Byte order of a multi-byte value on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub fn as_str(self) -> &'static str {
        match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }
    }
}

/// A fixed-width number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
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

impl Prim {
    pub const ALL: [Prim; 10] =
        [Prim::U8, Prim::U16, Prim::U32, Prim::U64, Prim::I8, Prim::I16, Prim::I32, Prim::I64, Prim::F32, Prim::F64];

    pub fn name(self) -> &'static str {
        match self {
            Prim::U8 => "u8",
            Prim::U16 => "u16",
            Prim::U32 => "u32",
            Prim::U64 => "u64",
            Prim::I8 => "i8",
            Prim::I16 => "i16",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<Prim> {
        Prim::ALL.iter().copied().find(|p| p.name() == s)
    }

    pub fn size(self) -> u32 {
        match self {
            Prim::U8 | Prim::I8 => 1,
            Prim::U16 | Prim::I16 => 2,
            Prim::U32 | Prim::I32 | Prim::F32 => 4,
            Prim::U64 | Prim::I64 | Prim::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64)
    }

    /// The inclusive range of an integer type, `None` for floats.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.size() * 8;
        if self.is_float() {
            None
        } else if self.is_signed() {
            Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
        } else {
            Some((0, (1i128 << bits) - 1))
        }
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Index of a named type in [`Schema::types`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub usize);

/// How many elements (or bytes) a sequence holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Len {
    /// Always exactly N elements.
    Fixed(u32),
    /// An unsigned integer of this width, written just before the elements, holds the element count.
    /// For `string` and `bytes` an element is one byte.
    Count(Prim),
    /// An unsigned integer of this width, written just before the elements, holds their total size
    /// in bytes. For elements of a fixed size the count is that size divided by the element size;
    /// elements of a variable size are read one after another until the span ends, and a span
    /// that does not end on an element boundary is a decode error (MCAP's maps and arrays of
    /// tuples).
    Size(Prim),
    /// The elements run to the end of the enclosing record's payload.
    Rest,
}

impl Len {
    /// The prefix integer this length reads before the elements, if any.
    pub fn prefix(self) -> Option<Prim> {
        match self {
            Len::Count(p) | Len::Size(p) => Some(p),
            Len::Fixed(_) | Len::Rest => None,
        }
    }
}

/// The type of one field.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Prim(Prim),
    /// One byte; zero is false, anything else true. Encoded as 0 or 1.
    Bool,
    /// N bytes with no meaning, written as zero.
    Pad(u32),
    /// Opaque bytes.
    Bytes(Len),
    /// UTF-8 text. With [`Len::Fixed`], a NUL-padded character array.
    Str(Len),
    /// A sequence of elements of one type.
    Array {
        elem: Box<Ty>,
        len: Len,
    },
    /// A struct, enum or flags type of the schema.
    Named(TypeId),
    /// A tagged union whose variant is selected by an earlier integer field of the same struct.
    Union {
        id: TypeId,
        tag_field: usize,
    },
    /// A tagged union whose variant is selected by a reader parameter ([`Schema::params`], by
    /// index): a value the reader knows from outside the struct (a file-header field, a layout
    /// it detected), not a field of it.
    ParamUnion {
        id: TypeId,
        param: usize,
    },
    /// An integer whose byte count on the wire is given by a bit range of an earlier unsigned
    /// integer field of the same struct (its [`Width`]): `bits + 1` bytes, in the field's byte
    /// order, zero-extended to `prim` (so a signed value is negative only at full width).
    VarInt {
        prim: Prim,
        width: Width,
    },
}

/// Where a [`Ty::VarInt`] finds its byte count: bits `lo..lo + bits` of the earlier field with
/// index `field` (of the same struct or variant), plus one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Width {
    pub field: usize,
    pub lo: u8,
    pub bits: u8,
}

impl Width {
    /// The largest byte count the bit range can announce.
    pub fn max_bytes(self) -> u32 {
        1u32 << self.bits
    }

    /// The mask of the bit range within the width field, unshifted.
    pub fn mask(self) -> u64 {
        ((1u64 << self.bits) - 1) << self.lo
    }
}

/// A constant value that a field must hold (magic numbers, format markers).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstValue {
    Int(i128),
    Bytes(Vec<u8>),
}

/// One field of a struct, in wire order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field's name. Padding fields get a synthetic name `_pad<N>` and are never shown.
    pub name: String,
    pub ty: Ty,
    /// The byte order of the field's numbers (the struct's unless overridden).
    pub endian: Endian,
    pub doc: Option<String>,
    pub unit: Option<String>,
    /// A value the field must always hold; decoders check it, encoders write it.
    pub value: Option<ConstValue>,
    /// Offset from the start of the struct, when every earlier field has a fixed size.
    pub offset: Option<u32>,
}

impl Field {
    pub fn is_padding(&self) -> bool {
        matches!(self.ty, Ty::Pad(_))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Struct {
    pub name: String,
    pub doc: Option<String>,
    pub endian: Endian,
    pub fields: Vec<Field>,
    /// Total encoded size, when every field has a fixed size.
    pub size: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumValue {
    pub name: String,
    pub value: i128,
    pub doc: Option<String>,
}

/// A set of named values over an integer. Values outside the set are kept, not rejected, so that
/// a newer writer's values survive a read-write round trip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enum {
    pub name: String,
    pub doc: Option<String>,
    pub base: Prim,
    pub values: Vec<EnumValue>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub name: String,
    /// Bit index, 0 = least significant.
    pub bit: u32,
    pub doc: Option<String>,
}

/// What a bit-field ([`BitField`]) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitKind {
    /// One bit, false or true.
    Bool,
    /// An unsigned integer of the field's width.
    Unsigned,
    /// A two's-complement integer of the field's width (sign-extended when read).
    Signed,
    /// An unsigned value of this enum (a schema type); values outside it are kept.
    Enum(TypeId),
}

/// A field of several bits (or a `bool` of one) packed into a [`Flags`] storage integer: a C-style
/// bit-field, as WPILib struct schemas write `int8 a:3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitField {
    pub name: String,
    /// The least significant bit, 0 = least significant of the storage integer.
    pub bit: u32,
    /// The number of bits, 1 up to the storage integer's width.
    pub width: u32,
    pub kind: BitKind,
    pub doc: Option<String>,
}

/// Named bits over an unsigned integer: single-bit flags, and bit-fields of several bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flags {
    pub name: String,
    pub doc: Option<String>,
    pub base: Prim,
    pub flags: Vec<Flag>,
    /// Bit-fields in declaration order (lowest bits first); empty for TOML `[[flags]]` types.
    /// On the wire the type is still its `base` integer: the fields only say how to read it.
    pub fields: Vec<BitField>,
}

/// How a variant of a union selected by a type name is chosen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NameMatch {
    /// Any of these exact names.
    Exact(Vec<String>),
    /// Any name that starts with this.
    Prefix(String),
    /// Every name no other variant matches.
    Default,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub name: String,
    /// The tag value; for a union selected by name, the variant's index.
    pub tag: i128,
    /// For a union selected by a type name: the names that select this variant.
    pub select: Option<NameMatch>,
    pub doc: Option<String>,
    /// The variant's body; may be empty.
    pub fields: Vec<Field>,
    pub size: Option<u32>,
}

/// A tagged union: the value of the tag field selects one variant; or, for a union selected by
/// name, a type name given at run time (exact names first, then prefixes in order, then the
/// default variant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Union {
    pub name: String,
    pub doc: Option<String>,
    pub endian: Endian,
    pub variants: Vec<Variant>,
    /// Whether variants are selected by a type name rather than an integer tag field.
    pub by_name: bool,
}

impl Union {
    /// The index of the variant a type name selects (for a union selected by name).
    pub fn select(&self, type_name: &str) -> Option<usize> {
        let exact = self
            .variants
            .iter()
            .position(|v| matches!(&v.select, Some(NameMatch::Exact(names)) if names.iter().any(|n| n == type_name)));
        exact
            .or_else(|| {
                self.variants
                    .iter()
                    .position(|v| matches!(&v.select, Some(NameMatch::Prefix(p)) if type_name.starts_with(p.as_str())))
            })
            .or_else(|| self.variants.iter().position(|v| v.select == Some(NameMatch::Default)))
    }
}

/// A type defined outside the schema (a hand-written Rust type named in `#[derive(Record)]`).
/// Its layout is only known to the Rust compiler, through the runtime's traits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extern {
    /// The Rust path, as written by the user.
    pub path: String,
    /// Whether the type implements the runtime's `Fixed` trait (a size known to the compiler).
    pub fixed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeDef {
    Struct(Struct),
    Enum(Enum),
    Flags(Flags),
    Union(Union),
    Extern(Extern),
}

impl TypeDef {
    pub fn name(&self) -> &str {
        match self {
            TypeDef::Struct(s) => &s.name,
            TypeDef::Enum(e) => &e.name,
            TypeDef::Flags(f) => &f.name,
            TypeDef::Union(u) => &u.name,
            TypeDef::Extern(e) => &e.path,
        }
    }

    pub fn doc(&self) -> Option<&str> {
        match self {
            TypeDef::Struct(s) => s.doc.as_deref(),
            TypeDef::Enum(e) => e.doc.as_deref(),
            TypeDef::Flags(f) => f.doc.as_deref(),
            TypeDef::Union(u) => u.doc.as_deref(),
            TypeDef::Extern(_) => None,
        }
    }
}

/// A record type of the format's record stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The record's contract name (e.g. `REC_NAV_SOLUTION`).
    pub name: String,
    /// The value of the framing's tag field that announces this record.
    pub id: u64,
    pub doc: Option<String>,
    /// The payload struct.
    pub body: TypeId,
    /// Layout fingerprint of the payload (see [`crate::fingerprint`]).
    pub fingerprint: u64,
}

/// The format's schema id: a number that every breaking layout change must bump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaId {
    pub value: u64,
    /// The C macro that carries it (e.g. `FW_MODEL_SCHEMA`).
    pub macro_name: String,
    /// The file-header field that stores it, if any.
    pub field: Option<usize>,
}

/// A reader parameter (schema `[[param]]`): a value given to the decoder from outside the bytes
/// being decoded, that selects the variant of unions declared with `param = "<name>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// An integer type or an enum (`Ty::Prim` or `Ty::Named`).
    pub ty: Ty,
    pub doc: Option<String>,
}

/// How the record stream after the file header is cut into records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framing {
    /// The per-record header struct (fixed size).
    pub header: TypeId,
    /// Index of the header field whose value selects the record type.
    pub tag: usize,
    /// Index of the header field that holds the payload length in bytes. Without one, records are
    /// self-delimiting and an unknown tag cannot be skipped.
    pub length: Option<usize>,
    /// Index of the header field that holds the record's timestamp, if any.
    pub timestamp: Option<usize>,
    /// Index of the header's sync field: its first field, with a const value whose bytes begin
    /// every record. A reader that loses the record boundary (a bad checksum, a length past the
    /// end) searches for these bytes to find the next record.
    pub sync: Option<usize>,
    /// A per-record checksum in a header field, which every reader verifies.
    pub checksum: Option<Checksum>,
    /// The struct whose bytes end the file after the last record (`[framing] trailer`): of a
    /// fixed size, every field a const, so that its bytes are known ([`Framing::trailer_bytes`]).
    /// Readers recognise it at the end of the input only: where exactly its size is left at a
    /// record boundary.
    pub trailer: Option<TypeId>,
}

impl Framing {
    /// The bytes that end the file (the trailer struct's consts, encoded), if there is a trailer.
    pub fn trailer_bytes(&self, schema: &Schema) -> Option<Vec<u8>> {
        const_bytes(schema, self.trailer?)
    }

    /// The bytes that begin every record (the sync field's const, encoded), if there is a sync.
    pub fn sync_bytes(&self, schema: &Schema) -> Option<Vec<u8>> {
        field_const_bytes(schema, &schema.strukt(self.header).fields[self.sync?])
    }
}

/// A struct's bytes when every field is a const of a fixed size (a number, an enum, a byte
/// string); `None` otherwise.
pub fn const_bytes(schema: &Schema, id: TypeId) -> Option<Vec<u8>> {
    let TypeDef::Struct(s) = schema.ty(id) else { return None };
    let mut out = Vec::new();
    for f in &s.fields {
        out.extend(field_const_bytes(schema, f)?);
    }
    Some(out)
}

/// A field's const, encoded: a number or an enum in the field's byte order, or a byte string of
/// the field's fixed size; `None` for a field without a const, or one of another type.
fn field_const_bytes(schema: &Schema, f: &Field) -> Option<Vec<u8>> {
    match (f.value.as_ref()?, &f.ty) {
        (ConstValue::Bytes(b), Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n))) if b.len() == *n as usize => {
            Some(b.clone())
        }
        (ConstValue::Int(v), Ty::Prim(p)) if !p.is_float() => Some(encode_int(*v, p.size() as usize, f.endian)),
        (ConstValue::Int(v), Ty::Named(t)) => match schema.ty(*t) {
            TypeDef::Enum(e) => Some(encode_int(*v, e.base.size() as usize, f.endian)),
            _ => None,
        },
        _ => None,
    }
}

/// The low `n` bytes of `v` (two's complement) in byte order `e`.
fn encode_int(v: i128, n: usize, e: Endian) -> Vec<u8> {
    let le = v.to_le_bytes();
    let mut out = le[..n].to_vec();
    if e == Endian::Big {
        out.reverse();
    }
    out
}

/// A per-record checksum (`[framing] checksum`): a CRC over a stated span, stored in a field of
/// the record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// Index of the header field that holds it (an unsigned integer of the CRC's width).
    pub field: usize,
    pub algorithm: Crc,
    pub over: ChecksumSpan,
}

/// The bytes a [`Checksum`] covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumSpan {
    /// The record header, without the checksum field's own bytes, then the payload.
    Record,
    /// The payload alone.
    Payload,
}

impl ChecksumSpan {
    /// The schema spelling (`checksum_over`).
    pub fn name(self) -> &'static str {
        match self {
            ChecksumSpan::Record => "record",
            ChecksumSpan::Payload => "payload",
        }
    }

    pub const ALL: [ChecksumSpan; 2] = [ChecksumSpan::Record, ChecksumSpan::Payload];
}

/// The CRCs a schema can name, by their names in the catalogue of parametrised CRC algorithms
/// (Greg Cook's "reveng" catalogue, the Rocksoft model). The parameters are data: the runtime
/// computes every CRC with one routine (`logspec_runtime::crc`), the C and Python back ends
/// emit one routine each over the same parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crc {
    /// CRC-16/CCITT-FALSE (the catalogue's CRC-16/IBM-3740): poly 0x1021, init 0xFFFF.
    Crc16CcittFalse,
    /// CRC-16/XMODEM: poly 0x1021, init 0.
    Crc16Xmodem,
    /// CRC-32 (CRC-32/ISO-HDLC, zlib's): poly 0x04C11DB7 reflected.
    Crc32,
    /// CRC-32C (CRC-32/ISCSI, Castagnoli): poly 0x1EDC6F41 reflected.
    Crc32c,
}

/// A CRC's parameters in the Rocksoft model, and its check value (the CRC of the ASCII bytes
/// `123456789`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcParams {
    pub width: u32,
    pub poly: u32,
    pub init: u32,
    pub reflect: bool,
    pub xorout: u32,
    pub check: u32,
}

impl Crc {
    pub const ALL: [Crc; 4] = [Crc::Crc16CcittFalse, Crc::Crc16Xmodem, Crc::Crc32, Crc::Crc32c];

    /// The schema spelling (`checksum_algorithm`).
    pub fn name(self) -> &'static str {
        match self {
            Crc::Crc16CcittFalse => "crc-16/ccitt-false",
            Crc::Crc16Xmodem => "crc-16/xmodem",
            Crc::Crc32 => "crc-32",
            Crc::Crc32c => "crc-32c",
        }
    }

    pub fn from_name(s: &str) -> Option<Crc> {
        Crc::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The catalogue's parameters. (All four have refin = refout.)
    pub fn params(self) -> CrcParams {
        match self {
            Crc::Crc16CcittFalse => {
                CrcParams { width: 16, poly: 0x1021, init: 0xFFFF, reflect: false, xorout: 0, check: 0x29B1 }
            }
            Crc::Crc16Xmodem => {
                CrcParams { width: 16, poly: 0x1021, init: 0, reflect: false, xorout: 0, check: 0x31C3 }
            }
            Crc::Crc32 => CrcParams {
                width: 32,
                poly: 0x04C1_1DB7,
                init: 0xFFFF_FFFF,
                reflect: true,
                xorout: 0xFFFF_FFFF,
                check: 0xCBF4_3926,
            },
            Crc::Crc32c => CrcParams {
                width: 32,
                poly: 0x1EDC_6F41,
                init: 0xFFFF_FFFF,
                reflect: true,
                xorout: 0xFFFF_FFFF,
                check: 0xE306_9283,
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    /// Short identifier: `usvlog`. Used for module, file and C prefix names.
    pub name: String,
    pub title: Option<String>,
    pub doc: Option<String>,
    pub endian: Endian,
    pub version: Option<String>,
    pub schema_id: Option<SchemaId>,
    /// Layout rules beyond fields packed one after the other (CDR's alignment and strings).
    pub rules: Rules,
}

/// Layout rules of a whole format, beyond fields packed one after the other in wire order.
/// The default is packed: no padding that no field states, strings exactly their bytes. ROS 2's
/// CDR (XCDR1) sets both rules. Schema `[format] align = "natural"` and `string_nul = true`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Every number of 2, 4 or 8 bytes (a length prefix included) starts at a multiple of its
    /// size, counted from the start of the value being decoded (for CDR: the payload after its
    /// 4-byte encapsulation header); the bytes skipped to get there are padding. An array of
    /// numbers aligns its first element only (the rest follow), and only when it has one.
    /// Structs add no alignment of their own. With it, structs have no fixed size or offsets
    /// ([`Struct::size`], [`Field::offset`] are `None`): where a field lands depends on where
    /// its struct starts.
    pub natural_align: bool,
    /// A counted string's length includes one terminating NUL that is not part of the text
    /// (a length of 0 is read as the empty string too).
    pub string_nul: bool,
}

impl Rules {
    /// Packed fields, strings exactly their bytes.
    pub const PACKED: Rules = Rules { natural_align: false, string_nul: false };
    /// CDR (XCDR1, as ROS 2 writes it): natural alignment and NUL-terminated strings.
    pub const CDR: Rules = Rules { natural_align: true, string_nul: true };

    /// Whether these are the packed rules.
    pub fn is_packed(self) -> bool {
        self == Rules::PACKED
    }
}

/// A whole validated schema: one format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub format: Format,
    /// Every named type, in declaration order (records' payload structs included).
    pub types: Vec<TypeDef>,
    /// The file header struct, written once at the start of a file.
    pub file_header: Option<TypeId>,
    pub framing: Option<Framing>,
    pub records: Vec<Record>,
    /// Reader parameters, in declaration order (their index is their position here).
    pub params: Vec<Param>,
    /// Where the schema came from, relative to the project (for "generated from" lines).
    pub source: Option<String>,
}

impl Schema {
    pub fn ty(&self, id: TypeId) -> &TypeDef {
        &self.types[id.0]
    }

    pub fn strukt(&self, id: TypeId) -> &Struct {
        match &self.types[id.0] {
            TypeDef::Struct(s) => s,
            other => panic!("type {} is not a struct", other.name()),
        }
    }

    pub fn type_by_name(&self, name: &str) -> Option<TypeId> {
        self.types.iter().position(|t| t.name() == name).map(TypeId)
    }

    /// The record whose payload struct is `id`, if any.
    pub fn record_for(&self, id: TypeId) -> Option<&Record> {
        self.records.iter().find(|r| r.body == id)
    }

    /// The constant bytes at the start of the file header (its magic), if it has any.
    pub fn magic(&self) -> Option<&[u8]> {
        let header = self.strukt(self.file_header?);
        match header.fields.first()?.value.as_ref()? {
            ConstValue::Bytes(b) => Some(b),
            ConstValue::Int(_) => None,
        }
    }

    /// The fixed size of a type, if it has one.
    pub fn size_of(&self, ty: &Ty) -> Option<u32> {
        crate::layout::size_of(self, ty)
    }
}
