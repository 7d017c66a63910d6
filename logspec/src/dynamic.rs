//! The dynamic interpreter of the IR: bytes of a type known only at run time (a ROS message
//! from its bag's `message_definition`, a WPILib struct value from its log's `/.schema/struct:X`)
//! decoded by walking the IR that a front end lowered the definition into.
//!
//! The walk knows no format. Everything it does comes from the IR: a number is read in its
//! field's byte order; a string's, bytes' or array's length follows its [`Len`] (a fixed count,
//! a count or byte-size prefix of the stated width in the field's byte order, or the rest of the
//! bytes); a count is checked against the fewest bytes an element can take
//! ([`logspec_ir::layout::min_size_with`]) before anything is allocated. So "ROS strings
//! have a u32 little-endian length prefix" is said once, by the `.msg` front end, and "WPILib
//! structs are little-endian with fixed arrays" once, by the struct-schema front end.
//!
//! What a value becomes is the caller's: a [`Build`] turns numbers, strings and structs into its
//! own value type (ROS's packed [`crate::formats::rosbag::Value`], the facade's
//! [`crate::value::Value`] for WPILib structs). The walk is generic over it, so each builds
//! its values directly, with no intermediate tree.

use logspec_ir::ir::{ConstValue, Endian, Enum, Field, Flags, Len, Prim, Rules, Schema, Struct, Ty, TypeDef, TypeId};
use logspec_ir::layout;

mod plan;

pub use plan::{Plan, Sink};

/// Why bytes did not decode: where, in which field, and what was expected and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Offset inside the decoded bytes.
    pub offset: usize,
    /// The field path, outermost first (`pose`, `position`, `x`; `[3]` for array elements).
    pub path: Vec<String>,
    pub message: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut path = String::new();
        for p in &self.path {
            if !p.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(p);
        }
        if path.is_empty() {
            write!(f, "at byte {} of the message: {}", self.offset, self.message)
        } else {
            write!(f, "field `{path}`, at byte {} of the message: {}", self.offset, self.message)
        }
    }
}

impl std::error::Error for Fault {}

/// The padding before a number of `size` bytes at offset `pos` under `rules`: natural
/// alignment counts from the start of the decoded bytes (for CDR, the payload after its
/// encapsulation header).
#[inline]
pub fn padding(rules: Rules, pos: usize, size: usize) -> usize {
    if rules.natural_align && size > 1 {
        // Numbers are 2, 4 or 8 bytes wide: a mask, not a division.
        if size.is_power_of_two() {
            pos.wrapping_neg() & (size - 1)
        } else {
            (size - pos % size) % size
        }
    } else {
        0
    }
}

/// The most bytes natural alignment lets a message end with after its last field (CDR writers
/// pad a payload to a multiple of 4; more left over means the definition does not fit).
pub const MAX_END_PADDING: usize = 3;

/// How many values that take no bytes (structs without fields, `T[0]`) one decode may produce
/// beyond one per input byte. Such values cost memory but no input, so a definition like
/// `Empty[4294967295] e` would otherwise allocate without bound.
pub const EMPTY_BUDGET: usize = 1 << 16;

/// What the walk's values become. Numbers arrive as raw bits, zero-extended from their width
/// (the builder decides signedness and floats from the [`Prim`]), so no builder reads bytes.
pub trait Build {
    type Value;
    fn bool(&mut self, b: bool) -> Self::Value;
    /// A number of type `p`: its bits, zero-extended to 64.
    fn number(&mut self, p: Prim, raw: u64) -> Self::Value;
    /// A string's bytes; `len` is its IR length rule (a fixed-length string includes its NUL
    /// padding).
    fn text(&mut self, bytes: &[u8], len: Len) -> Self::Value;
    fn bytes(&mut self, bytes: &[u8]) -> Self::Value;
    /// An array of numbers of type `p` in byte order `e`, packed in `bytes`; `None` decodes the
    /// elements one by one instead.
    fn numbers(&mut self, p: Prim, e: Endian, bytes: &[u8]) -> Option<Self::Value>;
    /// An array of bools, one byte each; `None` decodes them one by one.
    fn bools(&mut self, bytes: &[u8]) -> Option<Self::Value>;
    fn list(&mut self, items: Vec<Self::Value>) -> Self::Value;
    /// A struct from its fields' values, in wire order (padding fields included).
    fn strukt(&mut self, schema: &Schema, s: &Struct, fields: Vec<Self::Value>) -> Self::Value;
    fn enumeration(&mut self, e: &Enum, raw: u64) -> Self::Value;
    fn flags(&mut self, schema: &Schema, f: &Flags, raw: u64) -> Self::Value;
    /// A padding field (skipped bytes).
    fn padding(&mut self) -> Self::Value;
}

/// The numbers of a packed array, each decoded in byte order `e`. `bytes` holds whole elements.
pub fn unpack<T: Number>(bytes: &[u8], e: Endian) -> Vec<T> {
    let chunks = bytes.chunks_exact(T::SIZE);
    match e {
        Endian::Little => chunks.map(T::le).collect(),
        Endian::Big => chunks.map(T::be).collect(),
    }
}

/// A number type of the wire, for [`unpack`].
pub trait Number: Sized {
    const SIZE: usize;
    /// From exactly `SIZE` bytes, little-endian.
    fn le(b: &[u8]) -> Self;
    /// From exactly `SIZE` bytes, big-endian.
    fn be(b: &[u8]) -> Self;
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("a whole element"))
            }
            #[inline]
            fn be(b: &[u8]) -> Self {
                <$t>::from_be_bytes(b.try_into().expect("a whole element"))
            }
        }
    )*};
}
number!(u16, i16, u32, i32, u64, i64, f32, f64);

/// The first `b.len()` (at most 8) bytes as an unsigned number in byte order `e`.
#[inline]
pub fn uint(b: &[u8], e: Endian) -> u64 {
    let n = b.len().min(8);
    let mut a = [0u8; 8];
    match e {
        Endian::Little => {
            a[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(a)
        }
        Endian::Big => {
            a[8 - n..].copy_from_slice(&b[..n]);
            u64::from_be_bytes(a)
        }
    }
}

/// The number of type `p` at offset `at` of `b`, in byte order `e`, as its bits zero-extended
/// to 64; `None` when `b` ends first.
#[inline]
pub fn load(b: &[u8], at: usize, p: Prim, e: Endian) -> Option<u64> {
    macro_rules! read {
        ($t:ty) => {{
            let x: [u8; std::mem::size_of::<$t>()] = b.get(at..at + std::mem::size_of::<$t>())?.try_into().ok()?;
            match e {
                Endian::Little => <$t>::from_le_bytes(x),
                Endian::Big => <$t>::from_be_bytes(x),
            }
        }};
    }
    Some(match p.size() {
        1 => u64::from(*b.get(at)?),
        2 => u64::from(read!(u16)),
        4 => u64::from(read!(u32)),
        _ => read!(u64),
    })
}

/// The runtime's byte order for the IR's.
#[inline]
pub(crate) fn runtime_endian(e: Endian) -> logspec_runtime::Endian {
    match e {
        Endian::Little => logspec_runtime::Endian::Little,
        Endian::Big => logspec_runtime::Endian::Big,
    }
}

/// The runtime's number type ([`logspec_runtime::Numbers`]) for the IR's.
#[inline]
pub(crate) fn number_type(p: Prim) -> logspec_runtime::NumberType {
    use logspec_runtime::NumberType as N;
    match p {
        Prim::U8 => N::U8,
        Prim::U16 => N::U16,
        Prim::U32 => N::U32,
        Prim::U64 => N::U64,
        Prim::I8 => N::I8,
        Prim::I16 => N::I16,
        Prim::I32 => N::I32,
        Prim::I64 => N::I64,
        Prim::F32 => N::F32,
        Prim::F64 => N::F64,
    }
}

/// Calls `f(i, raw)` for each number `i` of type `p` packed in `b` in byte order `e` (whole
/// elements; a partial one at the end is not read), the byte order chosen once for the loop.
#[inline]
pub fn each_number(b: &[u8], p: Prim, e: Endian, mut f: impl FnMut(usize, u64)) {
    macro_rules! each {
        ($t:ty, $from:ident) => {
            for (i, x) in b.chunks_exact(std::mem::size_of::<$t>()).enumerate() {
                f(i, u64::from(<$t>::$from(x.try_into().expect("a whole element"))));
            }
        };
    }
    match (p.size(), e) {
        (1, _) => b.iter().enumerate().for_each(|(i, x)| f(i, u64::from(*x))),
        (2, Endian::Little) => each!(u16, from_le_bytes),
        (2, Endian::Big) => each!(u16, from_be_bytes),
        (4, Endian::Little) => each!(u32, from_le_bytes),
        (4, Endian::Big) => each!(u32, from_be_bytes),
        (_, Endian::Little) => each!(u64, from_le_bytes),
        (_, Endian::Big) => each!(u64, from_be_bytes),
    }
}

/// The bytes a const field must hold (a schema's `const`: a magic string, a version number),
/// `None` for a field without one. An integer is written in the field's byte order and width;
/// a byte string is NUL-padded to the field's size.
pub fn const_bytes(schema: &Schema, f: &Field) -> Option<Vec<u8>> {
    let value = f.value.as_ref()?;
    let size = schema.size_of(&f.ty)? as usize;
    Some(match value {
        ConstValue::Bytes(b) => {
            let mut b = b.clone();
            b.resize(size.max(b.len()), 0);
            b
        }
        ConstValue::Int(i) => {
            let le = i.to_le_bytes();
            let mut b = le[..size.min(16)].to_vec();
            if f.endian == Endian::Big {
                b.reverse();
            }
            b
        }
    })
}

/// What a const field should have held and what it held: numbers as numbers, bytes as text or hex.
fn const_mismatch(f: &Field, expect: &[u8], found: &[u8]) -> String {
    if let Some(ConstValue::Int(want)) = &f.value {
        let raw = uint(found, f.endian);
        let bits = 8 * found.len().min(8) as u32;
        let got = if *want < 0 && bits > 0 && bits < 64 {
            // Sign-extended from the field's width, as the const was written.
            i128::from(((raw << (64 - bits)) as i64) >> (64 - bits))
        } else {
            i128::from(raw)
        };
        return format!("expected {want}, found {got}");
    }
    format!("expected {}, found {}", shown(expect), shown(found))
}

/// Bytes as shown in a fault: text when printable ASCII, else hex.
fn shown(b: &[u8]) -> String {
    if !b.is_empty() && b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        format!("{:?}", String::from_utf8_lossy(b))
    } else {
        let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("[{}]", hex.join(" "))
    }
}

/// The text of a string's bytes: under [`Rules::string_nul`], a counted string's last byte
/// is its terminating NUL, not text (a length of 0 is the empty string too).
#[inline]
pub fn text_of(rules: Rules, len: Len, b: &[u8]) -> &[u8] {
    if rules.string_nul && matches!(len, Len::Count(_) | Len::Size(_)) {
        &b[..b.len().saturating_sub(1)]
    } else {
        b
    }
}

/// A [`Build`] that keeps nothing: the walk as a check of the bytes (and the namer of a
/// [`Plan`]'s faults).
pub struct Check;

impl Build for Check {
    type Value = ();
    fn bool(&mut self, _: bool) {}
    fn number(&mut self, _: Prim, _: u64) {}
    fn text(&mut self, _: &[u8], _: Len) {}
    fn bytes(&mut self, _: &[u8]) {}
    fn numbers(&mut self, _: Prim, _: Endian, _: &[u8]) -> Option<()> {
        Some(())
    }
    fn bools(&mut self, _: &[u8]) -> Option<()> {
        Some(())
    }
    fn list(&mut self, _: Vec<()>) {}
    fn strukt(&mut self, _: &Schema, _: &Struct, _: Vec<()>) {}
    fn enumeration(&mut self, _: &Enum, _: u64) {}
    fn flags(&mut self, _: &Schema, _: &Flags, _: u64) {}
    fn padding(&mut self) {}
}

/// Decodes one whole value of type `ty` from `bytes` with `build`; trailing bytes are an error.
/// `min` is [`layout::min_sizes`] of `schema` when the caller keeps one (an empty slice
/// computes what is needed as it goes).
pub fn decode<B: Build>(schema: &Schema, min: &[u64], ty: &Ty, bytes: &[u8], build: &mut B) -> Result<B::Value, Fault> {
    let mut w = Walk {
        schema,
        min,
        b: bytes,
        pos: 0,
        empty_left: EMPTY_BUDGET.saturating_add(bytes.len()),
        rules: schema.format.rules,
    };
    let v = w.value(ty, schema.format.endian, build)?;
    if w.pos != bytes.len() && !w.end_padding() {
        return Err(w.fault(format!("{} bytes left over after the last field", bytes.len() - w.pos)));
    }
    Ok(v)
}

/// How many elements of `elem` bytes each `bytes` bytes hold, for a length given in bytes.
fn whole(at: usize, bytes: usize, elem: Option<usize>) -> Result<Option<usize>, Fault> {
    let fault = |message: String| Fault { offset: at, path: Vec::new(), message };
    match elem {
        Some(0) | None => Err(fault("a length in bytes needs elements of a fixed, non-zero size".into())),
        Some(s) if bytes % s != 0 => Err(fault(format!("{bytes} bytes are not a whole number of {s}-byte elements"))),
        Some(s) => Ok(Some(bytes / s)),
    }
}

struct Walk<'a> {
    schema: &'a Schema,
    min: &'a [u64],
    b: &'a [u8],
    pos: usize,
    /// Values that take no bytes this decode may still produce (see [`EMPTY_BUDGET`]).
    empty_left: usize,
    /// The schema's layout rules (natural alignment, strings with their NUL).
    rules: Rules,
}

impl<'a> Walk<'a> {
    fn fault(&self, message: String) -> Fault {
        Fault { offset: self.pos, path: Vec::new(), message }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Fault> {
        match self.b.get(self.pos..self.pos.saturating_add(n)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => {
                Err(self.fault(format!("unexpected end of data: needed {n} bytes, found {}", self.b.len() - self.pos)))
            }
        }
    }

    #[inline]
    fn uint(&mut self, p: Prim, e: Endian) -> Result<u64, Fault> {
        self.align(p.size() as usize)?;
        Ok(uint(self.take(p.size() as usize)?, e))
    }

    /// Under natural alignment, skips the padding before a number of `size` bytes.
    #[inline]
    fn align(&mut self, size: usize) -> Result<(), Fault> {
        let pad = padding(self.rules, self.pos, size);
        if pad > 0 {
            self.take(pad).map_err(|mut f| {
                f.message = format!("{pad} bytes of alignment padding: {}", f.message);
                f
            })?;
        }
        Ok(())
    }

    /// Whether the bytes left after the value are the padding that natural alignment allows at
    /// the end of a message (up to 3 bytes, as CDR writers pad a payload to a multiple of 4).
    fn end_padding(&self) -> bool {
        self.rules.natural_align && self.b.len() - self.pos <= MAX_END_PADDING
    }

    /// The fewest bytes an element of type `ty` takes.
    fn min_size(&self, ty: &Ty) -> usize {
        if let Some(n) = self.schema.size_of(ty) {
            return n as usize;
        }
        let m = if self.min.len() == self.schema.types.len() {
            layout::min_size_with(&|id| self.min[id.0], ty)
        } else {
            layout::min_size(self.schema, ty)
        };
        usize::try_from(m).unwrap_or(usize::MAX)
    }

    /// The element count (or byte count, for strings and bytes) that `len` gives, read from its
    /// prefix in byte order `e` when it has one; `elem` is the element size for [`Len::Size`]
    /// and [`Len::Rest`] (1 for strings and bytes), `None` when elements vary in size.
    fn count(&mut self, len: Len, e: Endian, elem: Option<usize>) -> Result<Option<usize>, Fault> {
        let at = self.pos;
        match len {
            Len::Fixed(n) => Ok(Some(n as usize)),
            Len::Count(p) => Ok(Some(usize::try_from(self.uint(p, e)?).unwrap_or(usize::MAX))),
            Len::Size(p) => {
                let bytes = usize::try_from(self.uint(p, e)?).unwrap_or(usize::MAX);
                whole(at, bytes, elem)
            }
            Len::Rest => match elem {
                // Variable-size elements: as many as the bytes hold.
                None => Ok(None),
                Some(_) => whole(at, self.b.len() - self.pos, elem),
            },
        }
    }

    fn value<B: Build>(&mut self, ty: &Ty, e: Endian, build: &mut B) -> Result<B::Value, Fault> {
        Ok(match ty {
            Ty::Bool => build.bool(self.take(1)?[0] != 0),
            Ty::Prim(p) => {
                let raw = self.uint(*p, e)?;
                build.number(*p, raw)
            }
            Ty::Pad(n) => {
                self.take(*n as usize)?;
                build.padding()
            }
            Ty::Str(len) | Ty::Bytes(len) => {
                let n = self.count(*len, e, Some(1))?.unwrap_or(0);
                let b = self.take(n).map_err(|mut f| {
                    f.message = format!("a string of {n} bytes: {}", f.message);
                    f
                })?;
                match ty {
                    Ty::Str(_) => build.text(text_of(self.rules, *len, b), *len),
                    _ => build.bytes(b),
                }
            }
            Ty::Array { elem, len } => {
                let at = self.pos;
                let fixed = self.schema.size_of(elem).map(|s| s as usize);
                if let (Len::Size(p), None) = (len, fixed) {
                    // Elements of a variable size within a byte length: as many as its span
                    // holds, the last ending exactly at its end.
                    let bytes = usize::try_from(self.uint(*p, e)?).unwrap_or(usize::MAX);
                    let left = self.b.len() - self.pos;
                    if bytes > left {
                        return Err(Fault {
                            offset: at,
                            path: Vec::new(),
                            message: format!("an array of {bytes} bytes runs past the end: {left} bytes left"),
                        });
                    }
                    let all = self.b;
                    self.b = &all[..self.pos + bytes];
                    let r = self.to_end(elem, e, build);
                    self.b = all;
                    return r;
                }
                match self.count(*len, e, fixed)? {
                    Some(n) => {
                        if matches!(len, Len::Count(_) | Len::Size(_)) {
                            let min = self.min_size(elem);
                            let left = self.b.len() - self.pos;
                            if n.saturating_mul(min.max(1)) > left && (min > 0 || n > left) {
                                return Err(Fault {
                                    offset: at,
                                    path: Vec::new(),
                                    message: format!(
                                        "an array of {n} elements needs at least {} bytes, found {left}",
                                        n.saturating_mul(min)
                                    ),
                                });
                            }
                        }
                        self.array(elem, e, n, build)?
                    }
                    None => self.to_end(elem, e, build)?,
                }
            }
            Ty::Named(id) => self.named(*id, e, build)?,
            other => return Err(self.fault(format!("type {other:?} is not one the dynamic decoder reads"))),
        })
    }

    fn named<B: Build>(&mut self, id: TypeId, e: Endian, build: &mut B) -> Result<B::Value, Fault> {
        let schema = self.schema;
        Ok(match schema.ty(id) {
            TypeDef::Struct(s) => {
                // A struct that takes no bytes costs memory but no input: it is counted against
                // the budget, so a tree of empty structs cannot grow without bound.
                if s.size == Some(0) {
                    if self.empty_left == 0 {
                        return Err(self.fault(format!(
                            "more values that take no bytes than a message of {} bytes can justify (at most {})",
                            self.b.len(),
                            EMPTY_BUDGET.saturating_add(self.b.len())
                        )));
                    }
                    self.empty_left -= 1;
                }
                // A struct of a fixed size is there whole or not at all (as generated decoders
                // check it).
                let left = self.b.len() - self.pos;
                if let Some(size) = s.size.filter(|n| *n as usize > left) {
                    return Err(self.fault(format!("unexpected end of data: needed {size} bytes, found {left}")));
                }
                let mut fields = Vec::with_capacity(s.fields.len());
                for f in &s.fields {
                    let at = self.pos;
                    let decoded = self.value(&f.ty, f.endian, build).and_then(|v| match const_bytes(schema, f) {
                        Some(expect) if self.b[at..self.pos] != expect[..] => Err(Fault {
                            offset: at,
                            path: Vec::new(),
                            message: const_mismatch(f, &expect, &self.b[at..self.pos]),
                        }),
                        _ => Ok(v),
                    });
                    match decoded {
                        Ok(v) => fields.push(v),
                        Err(mut fault) => {
                            fault.path.insert(0, f.name.clone());
                            return Err(fault);
                        }
                    }
                }
                build.strukt(schema, s, fields)
            }
            TypeDef::Enum(en) => {
                let raw = self.uint(en.base, e)?;
                build.enumeration(en, raw)
            }
            TypeDef::Flags(fl) => {
                let raw = self.uint(fl.base, e)?;
                build.flags(schema, fl, raw)
            }
            other => return Err(self.fault(format!("type `{}` is not one the dynamic decoder reads", other.name()))),
        })
    }

    /// Elements of a variable size, as many as the bytes hold.
    #[allow(clippy::wrong_self_convention)] // reads to the end of the bytes; not a conversion
    fn to_end<B: Build>(&mut self, elem: &Ty, e: Endian, build: &mut B) -> Result<B::Value, Fault> {
        let mut items = Vec::new();
        while self.pos < self.b.len() {
            let v = self.element(elem, e, items.len(), build)?;
            items.push(v);
        }
        Ok(build.list(items))
    }

    fn element<B: Build>(&mut self, elem: &Ty, e: Endian, i: usize, build: &mut B) -> Result<B::Value, Fault> {
        self.value(elem, e, build).map_err(|mut f| {
            f.path.insert(0, format!("[{i}]"));
            f
        })
    }

    fn array<B: Build>(&mut self, elem: &Ty, e: Endian, n: usize, build: &mut B) -> Result<B::Value, Fault> {
        match elem {
            Ty::Bool => {
                let at = self.pos;
                let b = self.take(n)?;
                if let Some(v) = build.bools(b) {
                    return Ok(v);
                }
                self.pos = at;
            }
            Ty::Prim(p) => {
                if n > 0 {
                    self.align(p.size() as usize)?;
                }
                let at = self.pos;
                let b = self.take(n.saturating_mul(p.size() as usize))?;
                if let Some(v) = build.numbers(*p, e, b) {
                    return Ok(v);
                }
                self.pos = at;
            }
            _ => {
                if n > 0 && self.schema.size_of(elem) == Some(0) {
                    if n > self.empty_left {
                        return Err(self.fault(format!(
                            "an array of {n} elements that take no bytes each is more than a message of {} bytes \
                             can justify (at most {} such elements per message)",
                            self.b.len(),
                            EMPTY_BUDGET.saturating_add(self.b.len())
                        )));
                    }
                    self.empty_left -= n;
                }
            }
        }
        let mut items = Vec::with_capacity(n.min(self.b.len() - self.pos + 1));
        for i in 0..n {
            let v = self.element(elem, e, i, build)?;
            items.push(v);
        }
        Ok(build.list(items))
    }
}

#[cfg(test)]
mod tests {
    //! The walk follows whatever length rules and byte orders the IR states, not one format's:
    //! a big-endian schema with u8 and u16 count prefixes, a u16 byte-size prefix and bytes to
    //! the end, checked against bytes written out by hand from the schema language's rules.

    use super::*;
    use crate::value::Value;

    /// Builds the facade's [`Value`], arrays element by element.
    struct Plain;

    impl Build for Plain {
        type Value = Value;
        fn bool(&mut self, b: bool) -> Value {
            Value::Bool(b)
        }
        fn number(&mut self, p: Prim, raw: u64) -> Value {
            match p {
                Prim::I8 => Value::Int(i64::from(raw as u8 as i8)),
                Prim::I16 => Value::Int(i64::from(raw as u16 as i16)),
                Prim::I32 => Value::Int(i64::from(raw as u32 as i32)),
                Prim::I64 => Value::Int(raw as i64),
                Prim::F32 => Value::Float(f64::from(f32::from_bits(raw as u32))),
                Prim::F64 => Value::Float(f64::from_bits(raw)),
                _ => Value::UInt(raw),
            }
        }
        fn text(&mut self, bytes: &[u8], _len: Len) -> Value {
            Value::Str(String::from_utf8_lossy(bytes).into_owned())
        }
        fn bytes(&mut self, bytes: &[u8]) -> Value {
            Value::Bytes(bytes.to_vec())
        }
        fn numbers(&mut self, _: Prim, _: Endian, _: &[u8]) -> Option<Value> {
            None
        }
        fn bools(&mut self, _: &[u8]) -> Option<Value> {
            None
        }
        fn list(&mut self, items: Vec<Value>) -> Value {
            Value::Array(items)
        }
        fn strukt(&mut self, _: &Schema, s: &Struct, fields: Vec<Value>) -> Value {
            Value::Object(s.fields.iter().map(|f| f.name.clone()).zip(fields).collect())
        }
        fn enumeration(&mut self, e: &Enum, raw: u64) -> Value {
            self.number(e.base, raw)
        }
        fn flags(&mut self, _: &Schema, f: &Flags, raw: u64) -> Value {
            self.number(f.base, raw)
        }
        fn padding(&mut self) -> Value {
            Value::Null
        }
    }

    const SCHEMA: &str = r#"
[format]
name = "walk"
endian = "big"

[[struct]]
name = "Pair"
fields = [{ name = "a", type = "u16" }, { name = "b", type = "i8" }]

[[record]]
name = "Msg"
id = 1
fields = [
  { name = "name", type = "string", count = "u8" },
  { name = "little", type = "u32", endian = "little" },
  { name = "pairs", type = "Pair[]", count = "u16" },
  { name = "words", type = "u16[]", size = "u16" },
  { name = "tag", type = "string[4]" },
  { name = "rest", type = "bytes", count = "rest" },
]
"#;

    fn decode_msg(bytes: &[u8]) -> Result<Value, Fault> {
        let schema = logspec_ir::compile_str("walk.toml", SCHEMA).expect("schema");
        let id = schema.type_by_name("Msg").unwrap();
        let min = layout::min_sizes(&schema);
        decode(&schema, &min, &Ty::Named(id), bytes, &mut Plain)
    }

    #[test]
    fn length_rules_and_byte_orders_come_from_the_ir() {
        let bytes = [
            &[2u8, b'h', b'i'][..],       // name: u8 count
            &[1, 0, 0, 0],                // little: u32 little-endian = 1
            &[0, 2, 1, 2, 0xff, 0, 3, 5], // pairs: u16 count 2; (258, -1), (3, 5)
            &[0, 4, 0xab, 0xcd, 0, 1],    // words: u16 byte size 4 -> 2 big-endian u16
            b"ab\0\0",                    // tag: 4 bytes, NUL padding kept
            &[9, 8, 7],                   // rest
        ]
        .concat();
        let v = decode_msg(&bytes).expect("decodes");
        let Value::Object(f) = v else { panic!("{v:?}") };
        assert_eq!(f[0], ("name".into(), Value::Str("hi".into())));
        assert_eq!(f[1], ("little".into(), Value::UInt(1)));
        let pair = |a, b| Value::Object(vec![("a".into(), Value::UInt(a)), ("b".into(), Value::Int(b))]);
        assert_eq!(f[2], ("pairs".into(), Value::Array(vec![pair(258, -1), pair(3, 5)])));
        assert_eq!(f[3], ("words".into(), Value::Array(vec![Value::UInt(0xabcd), Value::UInt(1)])));
        assert_eq!(f[4], ("tag".into(), Value::Str("ab\0\0".into())));
        assert_eq!(f[5], ("rest".into(), Value::Bytes(vec![9, 8, 7])));
    }

    #[test]
    fn counts_are_bounded_by_the_bytes_left_before_allocating() {
        // 65535 pairs of 3 bytes each cannot fit in what is left.
        let bytes = [&[0u8][..], &[0, 0, 0, 0], &[0xff, 0xff, 0, 0]].concat();
        let e = decode_msg(&bytes).expect_err("too many");
        assert_eq!((e.offset, e.path.as_slice()), (5, &["pairs".to_string()][..]));
        assert!(e.message.contains("an array of 65535 elements needs at least 196605 bytes"), "{e}");
        // A byte size that is not a whole number of u16s.
        let bytes = [&[0u8][..], &[0, 0, 0, 0], &[0, 0], &[0, 3, 1, 2, 3], b"abcd"].concat();
        let e = decode_msg(&bytes).expect_err("ragged");
        assert!(e.message.contains("3 bytes are not a whole number of 2-byte elements"), "{e}");
        // Cut inside the string.
        let e = decode_msg(&[5, b'a']).expect_err("cut");
        assert_eq!(
            e.to_string(),
            "field `name`, at byte 1 of the message: a string of 5 bytes: unexpected end of data: needed 5 bytes, found 1"
        );
    }

    #[test]
    fn min_sizes_count_prefixes_not_elements() {
        let schema = logspec_ir::compile_str("walk.toml", SCHEMA).expect("schema");
        let min = layout::min_sizes(&schema);
        let id = |n| schema.type_by_name(n).unwrap().0;
        assert_eq!(min[id("Pair")], 3);
        // u8 count + u32 + u16 count + u16 size + 4 + rest (0).
        assert_eq!(min[id("Msg")], 1 + 4 + 2 + 2 + 4);
    }

    /// A schema with CDR's layout rules, in the schema language.
    const ALIGNED: &str = r#"
[format]
name = "aligned"
align = "natural"
string_nul = true

[[struct]]
name = "In"
fields = [{ name = "tag", type = "u8" }, { name = "vals", type = "f64[]", count = "u32" }]

[[record]]
name = "Msg"
id = 1
fields = [
  { name = "a", type = "u8" },
  { name = "b", type = "f64" },
  { name = "s", type = "string", count = "u32" },
  { name = "w", type = "u16" },
  { name = "inner", type = "In" },
  { name = "e", type = "u16[]", count = "u32" },
  { name = "z", type = "u8" },
]
"#;

    /// The bytes of `Msg` laid out by hand from CDR's rules: every number at a multiple of its
    /// size from the start, strings with their NUL counted.
    fn aligned_bytes() -> Vec<u8> {
        let mut b = vec![7u8]; // a at 0
        b.extend([0; 7]); // padding to 8
        b.extend(2.5f64.to_le_bytes()); // b at 8
        b.extend(3u32.to_le_bytes()); // s: count at 16 (NUL counted)
        b.extend(b"hi\0"); // 20..23
        b.push(0); // padding to 24
        b.extend(0x1234u16.to_le_bytes()); // w at 24
        b.push(9); // inner.tag at 26
        b.push(0); // padding to 28
        b.extend(1u32.to_le_bytes()); // inner.vals count at 28
        b.extend((-1.0f64).to_le_bytes()); // inner.vals[0] at 32 (already aligned)
        b.extend(0u32.to_le_bytes()); // e: count 0 at 40, so no padding for its elements
        b.push(5); // z at 44
        b
    }

    #[test]
    fn natural_alignment_and_nul_strings_follow_the_rules() {
        let schema = logspec_ir::compile_str("aligned.toml", ALIGNED).expect("schema");
        assert!(schema.format.rules.natural_align && schema.format.rules.string_nul);
        let id = schema.type_by_name("Msg").unwrap();
        let min = layout::min_sizes(&schema);
        let ty = Ty::Named(id);
        let bytes = aligned_bytes();
        let v = decode(&schema, &min, &ty, &bytes, &mut Plain).expect("decodes");
        let Value::Object(f) = v else { panic!("{v:?}") };
        let get = |n: &str| f.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(get("a"), Value::UInt(7));
        assert_eq!(get("b"), Value::Float(2.5));
        assert_eq!(get("s"), Value::Str("hi".into()));
        assert_eq!(get("w"), Value::UInt(0x1234));
        assert_eq!(
            get("inner"),
            Value::Object(vec![
                ("tag".into(), Value::UInt(9)),
                ("vals".into(), Value::Array(vec![Value::Float(-1.0)]))
            ])
        );
        assert_eq!(get("e"), Value::Array(vec![]));
        assert_eq!(get("z"), Value::UInt(5));
        let plan = Plan::new(&schema, &min, &ty);
        plan.check(&schema, &min, &bytes).expect("the plan agrees");
        // Up to 3 bytes of padding may end a message; a fourth is a byte left over.
        for (extra, ok) in [(3, true), (4, false)] {
            let mut b = bytes.clone();
            b.extend(vec![0; extra]);
            assert_eq!(decode(&schema, &min, &ty, &b, &mut Check).is_ok(), ok, "{extra}");
            assert_eq!(plan.check(&schema, &min, &b).is_ok(), ok, "{extra}");
        }
        // Cut inside the padding before `b`: the fault says so, the walk and plan agree.
        let e = decode(&schema, &min, &ty, &bytes[..5], &mut Check).expect_err("cut");
        assert!(e.message.contains("alignment padding"), "{e}");
        assert_eq!(plan.check(&schema, &min, &bytes[..5]).expect_err("cut"), e);
        // A struct has no fixed size under natural alignment.
        assert_eq!(schema.size_of(&Ty::Named(schema.type_by_name("In").unwrap())), None);
    }
}
