//! The ArduPilot DataFlash front end: the FMT messages a `.bin` log carries (a message id, a
//! name, one format character per column and the column labels), lowered into the same IR as
//! TOML schemas, with DataFlash's layout (AP_Logger `LogStructure.h`): little-endian, packed,
//! columns in order.
//!
//! A format lowers to two structs of the same columns ([`Lowered`]): `wire`, the bytes as
//! written, which the IR interpreter decodes; and `values`, the values a reader shows, with
//! the units FMTU/UNIT/MULT give. They differ where a column's value is not its bytes
//! ([`Conv`]): the scaled characters `c C e E` (hundredths) and `L` (degrees × 10^7) are
//! integers on the wire and `f64` values, divided as pymavlink's DFReader divides; `g` is an
//! IEEE half float; the texts `n N Z` are bytes on the wire and text values, decoded as
//! DFReader decodes them ([`text`]). The `Z` column of a message named `FILE` stays bytes.
//!
//! Units: a column's unit is DFReader's unit string ([`unit_strings`]): the UNIT label, with
//! the MULT multiplier as a prefix (`µs`, `cm`) or, where no prefix says it, in front
//! (`3.6 m`); a scaled character's own division makes the multiplier of its column already
//! applied, so its unit is the label alone. That is how the IR carries a multiplier.
//!
//! Errors name the message id and name, and the column ([`DfError`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use crate::ir::{Endian, Field, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId};

/// The id of FMT, whose layout is fixed (the bundled schema's `FMT` record).
pub const FMT_ID: u8 = 128;
/// FMT's layout as DFReader hard-codes it: its format characters and column labels.
pub const FMT_FORMAT: &str = "BBnNZ";
pub const FMT_LABELS: &str = "Type,Length,Name,Format,Columns";

/// How a column's value is made from its wire value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Conv {
    /// The wire value as it is.
    Same,
    /// An integer divided by this (`c C e E`: 100, `L`: 10^7), in `f64`.
    Div(f64),
    /// A `u16` holding an IEEE half float (`g`).
    Half,
    /// NUL-padded bytes shown as text ([`text`]).
    Text,
}

/// One format character: its wire type, value type and conversion.
fn column(c: u8, bytes_z: bool) -> Option<(Ty, Ty, Conv)> {
    let p = |p: Prim| Some((Ty::Prim(p), Ty::Prim(p), Conv::Same));
    let scaled = |p: Prim, d: f64| Some((Ty::Prim(p), Ty::Prim(Prim::F64), Conv::Div(d)));
    let text = |n: u32| Some((Ty::Bytes(Len::Fixed(n)), Ty::Str(Len::Fixed(n)), Conv::Text));
    match c {
        b'a' => {
            let t = Ty::Array { elem: Box::new(Ty::Prim(Prim::I16)), len: Len::Fixed(32) };
            Some((t.clone(), t, Conv::Same))
        }
        b'b' => p(Prim::I8),
        b'B' | b'M' => p(Prim::U8),
        b'h' => p(Prim::I16),
        b'H' => p(Prim::U16),
        b'i' => p(Prim::I32),
        b'I' => p(Prim::U32),
        b'q' => p(Prim::I64),
        b'Q' => p(Prim::U64),
        b'f' => p(Prim::F32),
        b'd' => p(Prim::F64),
        b'g' => Some((Ty::Prim(Prim::U16), Ty::Prim(Prim::F32), Conv::Half)),
        b'n' => text(4),
        b'N' => text(16),
        b'Z' if bytes_z => Some((Ty::Bytes(Len::Fixed(64)), Ty::Bytes(Len::Fixed(64)), Conv::Same)),
        b'Z' => text(64),
        b'c' => scaled(Prim::I16, 100.0),
        b'C' => scaled(Prim::U16, 100.0),
        b'e' => scaled(Prim::I32, 100.0),
        b'E' => scaled(Prim::U32, 100.0),
        b'L' => scaled(Prim::I32, 1e7),
        _ => None,
    }
}

/// Whether a character has a multiplier of its own (`c C e E L`): FMTU's multiplier then does
/// not change its unit.
pub fn is_scaled(c: u8) -> bool {
    matches!(c, b'c' | b'C' | b'e' | b'E' | b'L')
}

/// What is wrong with a FMT: which id, which message, which column, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DfError {
    pub id: u8,
    pub name: String,
    pub column: Option<String>,
    pub message: String,
}

impl fmt::Display for DfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FMT of message id {} (`{}`)", self.id, self.name)?;
        if let Some(c) = &self.column {
            write!(f, ", column `{c}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for DfError {}

/// A FMT message's text fields, decoded ([`text`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DfFormat {
    pub id: u8,
    /// The whole message's length as the FMT declares it (header included).
    pub length: u8,
    pub name: String,
    /// The format characters (NUL-cut).
    pub format: String,
    /// The column labels (the comma-separated list, NUL-cut; empty when there are none).
    pub columns: Vec<String>,
}

impl DfFormat {
    /// A FMT from its raw fields (the bundled schema's `FMT` record).
    pub fn new(id: u8, length: u8, name: &[u8], format: &[u8], labels: &[u8]) -> DfFormat {
        let labels = text(labels);
        let columns = if labels.is_empty() { Vec::new() } else { labels.split(',').map(str::to_string).collect() };
        DfFormat { id, length, name: text(name).into_owned(), format: text(format).into_owned(), columns }
    }
}

/// A FMT lowered into the IR: the `wire` and `values` structs (one each, at [`TypeId`] 0), the
/// conversion of each column, and what the FMT got wrong that the lowering could mend.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub wire: Schema,
    pub values: Schema,
    pub conv: Vec<Conv>,
    /// The format characters, one per column.
    pub chars: Vec<u8>,
    /// The body's size (without the 3 header bytes), from the format characters.
    pub size: u64,
    /// Mended problems: a declared length that is not 3 plus the layout's size (the layout is
    /// trusted), a label count that differs from the character count (columns named `_N`, or
    /// extra labels dropped), repeated labels (made unique).
    pub notes: Vec<String>,
}

impl Lowered {
    pub fn root(&self) -> TypeId {
        TypeId(0)
    }
}

/// Lowers a FMT, with the unit of each column (`units[i]`; empty or missing: none). An unknown
/// format character is an error: the id cannot be read.
pub fn lower(f: &DfFormat, units: &[String]) -> Result<Lowered, DfError> {
    let err = |column: Option<&str>, message: String| DfError {
        id: f.id,
        name: f.name.clone(),
        column: column.map(str::to_string),
        message,
    };
    let chars: Vec<u8> = f.format.bytes().collect();
    let mut notes = Vec::new();
    if chars.len() != f.columns.len() {
        notes.push(format!("{} format characters (`{}`) but {} column labels", chars.len(), f.format, f.columns.len()));
    }
    let bytes_z = f.name == "FILE";
    let mut wire = Vec::with_capacity(chars.len());
    let mut values = Vec::with_capacity(chars.len());
    let mut conv = Vec::with_capacity(chars.len());
    let mut size = 0u64;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, &c) in chars.iter().enumerate() {
        let mut name = f.columns.get(i).cloned().unwrap_or_else(|| format!("_{i}"));
        if seen.contains_key(&name) {
            let unique = format!("{name}_{i}");
            notes.push(format!("column {i} repeats the label `{name}`; named `{unique}`"));
            name = unique;
        }
        seen.insert(name.clone(), i);
        let Some((w, v, k)) = column(c, bytes_z) else {
            return Err(err(
                Some(&name),
                format!(
                    "unknown format character {:?} (expected one of a b B h H i I q Q f d g n N Z c C e E L M)",
                    c as char
                ),
            ));
        };
        size += layout_size(&w);
        let unit = units.get(i).filter(|u| !u.is_empty()).cloned();
        wire.push(ir_field(&name, w, None));
        values.push(ir_field(&name, v, unit));
        conv.push(k);
    }
    if u64::from(f.length) != size + 3 {
        notes.push(format!(
            "Length {} is not 3 plus the {size} bytes of format `{}` ({}); the format's size is used",
            f.length,
            f.format,
            size + 3
        ));
    }
    let strukt = |fields| {
        TypeDef::Struct(Struct {
            name: f.name.clone(),
            doc: Some(format!("DataFlash message `{}` (id {}, format `{}`).", f.name, f.id, f.format)),
            endian: Endian::Little,
            fields,
            size: None,
        })
    };
    let wire =
        crate::layout::types_schema("dataflash", Endian::Little, crate::ir::Rules::PACKED, vec![strukt(wire)], None);
    let values =
        crate::layout::types_schema("dataflash", Endian::Little, crate::ir::Rules::PACKED, vec![strukt(values)], None);
    Ok(Lowered { wire, values, conv, chars, size, notes })
}

fn layout_size(t: &Ty) -> u64 {
    match t {
        Ty::Prim(p) => u64::from(p.size()),
        Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n)) => u64::from(*n),
        Ty::Array { elem, len: Len::Fixed(n) } => layout_size(elem) * u64::from(*n),
        _ => 0,
    }
}

fn ir_field(name: &str, ty: Ty, unit: Option<String>) -> Field {
    Field { name: name.to_string(), ty, endian: Endian::Little, doc: None, unit, value: None, offset: None }
}

/// Text as DFReader reads it: the bytes as UTF-8, or as ISO-8859-1 when they are not UTF-8,
/// then cut at the first NUL.
pub fn text(bytes: &[u8]) -> Cow<'_, str> {
    let s: Cow<'_, str> = match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    };
    match s.find('\0') {
        None => s,
        Some(i) => match s {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..i]),
            Cow::Owned(mut o) => {
                o.truncate(i);
                Cow::Owned(o)
            }
        },
    }
}

/// An IEEE 754 half float (the bits of a `g` column), exactly as `f32`.
pub fn half(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * (2.0f32).powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * (2.0f32).powi(e - 15),
    }
}

/// A multiplier as DFReader keeps it: the logged double rounded to 7 significant digits (it is
/// a float cast to a double).
pub fn multiplier(logged: f64) -> f64 {
    format!("{logged:.6e}").parse().unwrap_or(logged)
}

/// The unit prefix of a multiplier DFReader names (its `MULT_TO_PREFIX`).
fn prefix(m: f64) -> Option<&'static str> {
    [(0.0, ""), (1.0, ""), (1e-1, "d"), (1e-2, "c"), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
        .iter()
        .find(|(x, _)| *x == m)
        .map(|(_, p)| *p)
}

/// C's `%.4g`.
fn g4(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{x:.3e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..4).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant.to_string()), exp.abs())
    } else {
        let decimals = (3 - exp).max(0) as usize;
        strip(format!("{x:.decimals$}"))
    }
}

/// DFReader's unit string of each column (`set_unit_ids`, `set_mult_ids`): the UNIT label of
/// the column's unit id (`units`, by id), and, for a column whose character has no multiplier
/// of its own, the MULT multiplier of its multiplier id as a prefix. Also the instance column:
/// the first whose unit id is `#`.
pub fn unit_strings(
    chars: &[u8],
    unit_ids: &str,
    mult_ids: &str,
    units: &BTreeMap<u8, String>,
    mults: &BTreeMap<u8, f64>,
) -> (Vec<String>, Option<usize>) {
    let uid: Vec<u8> = unit_ids.bytes().collect();
    let mid: Vec<u8> = mult_ids.bytes().collect();
    let instance = uid.iter().position(|&u| u == b'#');
    let mut out = vec![String::new(); chars.len()];
    for (i, c) in chars.iter().enumerate() {
        let Some(label) = uid.get(i).and_then(|u| units.get(u)) else { continue };
        out[i] = label.clone();
        if is_scaled(*c) || label.is_empty() {
            continue;
        }
        if let Some(m) = mid.get(i).and_then(|m| mults.get(m)) {
            out[i] = match prefix(*m) {
                Some(p) => format!("{p}{label}"),
                None => format!("{} {label}", g4(*m)),
            };
        }
    }
    (out, instance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(id: u8, name: &str, format: &str, labels: &str) -> DfFormat {
        let size: u64 = format.bytes().map(|c| column(c, false).map_or(0, |(w, _, _)| layout_size(&w))).sum();
        DfFormat::new(id, (size + 3) as u8, name.as_bytes(), format.as_bytes(), labels.as_bytes())
    }

    #[test]
    fn sizes_of_every_character_as_log_structure_says() {
        // LogStructure.h: a 64, b B M 1, h H c C 2, i I e E L f 4, q Q d 8, n 4, N 16, Z 64.
        for (c, n) in
            [("a", 64), ("bBM", 3), ("hHcCg", 10), ("iIeELf", 24), ("qQd", 24), ("n", 4), ("N", 16), ("Z", 64)]
        {
            let labels: Vec<String> = (0..c.len()).map(|i| format!("x{i}")).collect();
            let l = lower(&fmt(200, "T", c, &labels.join(",")), &[]).unwrap();
            assert_eq!(l.size, n, "{c}");
            assert!(l.notes.is_empty(), "{:?}", l.notes);
            assert_eq!(l.wire.size_of(&Ty::Named(l.root())), Some(n as u32));
        }
        // FMT itself: 86 bytes after the header, 89 in all.
        let l = lower(&DfFormat::new(128, 89, b"FMT", FMT_FORMAT.as_bytes(), FMT_LABELS.as_bytes()), &[]).unwrap();
        assert_eq!(l.size, 86);
    }

    #[test]
    fn scaled_and_text_columns_are_values_not_bytes() {
        let l = lower(&fmt(201, "TYP2", "QnNZcCeEL", "TimeUS,N4,N16,Z64,Cc,CC,Ce,CE,Lat"), &[]).unwrap();
        assert_eq!(l.conv[4], Conv::Div(100.0));
        assert_eq!(l.conv[8], Conv::Div(1e7));
        assert_eq!(l.conv[1], Conv::Text);
        assert_eq!(l.values.strukt(l.root()).fields[8].ty, Ty::Prim(Prim::F64));
        assert_eq!(l.wire.strukt(l.root()).fields[8].ty, Ty::Prim(Prim::I32));
        let file = lower(&fmt(203, "FILE", "NIBZ", "FileName,Offset,Length,Data"), &[]).unwrap();
        assert_eq!(file.conv[3], Conv::Same);
        assert_eq!(file.values.strukt(file.root()).fields[3].ty, Ty::Bytes(Len::Fixed(64)));
    }

    #[test]
    fn mends_lying_lengths_and_labels_and_refuses_unknown_characters() {
        let f = DfFormat::new(200, 40, b"LIE", b"QIfB", b"TimeUS,A,B,C");
        let l = lower(&f, &[]).unwrap();
        assert_eq!(l.size, 17);
        assert!(l.notes[0].contains("Length 40 is not 3 plus the 17 bytes"), "{:?}", l.notes);
        let l = lower(&fmt(200, "LAB", "BBB", "a,a"), &[]).unwrap();
        let names: Vec<&str> = l.wire.strukt(l.root()).fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "a_1", "_2"]);
        assert_eq!(l.notes.len(), 2);
        let e = lower(&fmt(200, "BAD", "QX", "TimeUS,X"), &[]).unwrap_err();
        assert_eq!((e.id, e.column.as_deref()), (200, Some("X")));
        assert!(e.to_string().starts_with("FMT of message id 200 (`BAD`), column `X`: unknown format character 'X'"));
    }

    #[test]
    fn text_is_utf8_or_latin1_cut_at_nul() {
        assert_eq!(text(b"ab\0cd"), "ab");
        assert_eq!(text(b"ABCD"), "ABCD");
        assert_eq!(text(b"caf\xe9\0\0"), "café");
        assert_eq!(text("h\u{e9}llo".as_bytes()), "héllo");
    }

    #[test]
    fn half_floats() {
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x7bff), 65504.0);
        assert_eq!(half(0x0001), 2f32.powi(-24));
        assert_eq!(half(0x7c00), f32::INFINITY);
        assert!(half(0x7e00).is_nan());
        assert!(half(0x8000).is_sign_negative());
    }

    #[test]
    fn units_as_dfreader_builds_them() {
        let units: BTreeMap<u8, String> =
            [(b's', "second"), (b'm', "m"), (b'#', "instance"), (b'-', ""), (b'd', "deg")]
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect();
        let mults: BTreeMap<u8, f64> =
            [(b'F', multiplier(1e-6_f32 as f64)), (b'B', 0.01), (b'0', 1.0), (b'-', 0.0), (b'!', 3.6)]
                .into_iter()
                .collect();
        let (u, inst) = unit_strings(b"QbBhcH", "sm#mdm", "F0-BB!", &units, &mults);
        assert_eq!(u, ["µsecond", "m", "instance", "cm", "deg", "3.6 m"]);
        assert_eq!(inst, Some(2));
        assert_eq!(g4(1e-5), "1e-05");
        assert_eq!(g4(12345.0), "1.234e+04");
        assert_eq!(g4(0.25), "0.25");
    }
}
