//! A data record's value as JSON or as a [`crate::value::Value`] tree: the one place where a
//! WPILOG payload becomes a shown value.

use logspec_runtime::{DecodeError, Visitor};

use super::{DataValueRef, Entry};
use crate::value::ValueSink;

/// How a float of negative zero is shown: the dump's reference form is the string `"-0"` (as
/// NaN and the infinities are strings); a value tree for plots and CSV keeps the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegZero {
    String,
    Number,
}

/// Writes the value of a data record of `entry` (an orphan's `None` and every non-standard type
/// give the payload as lowercase hex). A standard-typed payload that does not decode (a wrong
/// length, a broken `string[]`, bad UTF-8) writes nothing and returns the error, so the caller
/// can show the payload as invalid.
pub fn write_value<W: ValueSink + ?Sized>(
    w: &mut W,
    name: Option<&str>,
    entry: Option<Entry<'_>>,
    payload: &[u8],
    neg_zero: NegZero,
) -> Result<(), DecodeError> {
    let Some(entry) = entry.filter(|e| e.is_standard()) else {
        write_hex(w, name, payload);
        return Ok(());
    };
    let value = entry.decode_ref(payload)?;
    let num = |w: &mut W, name: Option<&str>, v: f64| {
        if neg_zero == NegZero::String && v == 0.0 && v.is_sign_negative() {
            w.str(name, "-0");
        } else {
            w.f64(name, v);
        }
    };
    macro_rules! array {
        ($items:expr, |$w:ident, $x:ident| $body:expr) => {{
            let items = $items;
            w.begin_array(name, items.len());
            for $x in items {
                let $w = &mut *w;
                $body;
            }
            w.end_array();
        }};
    }
    match value {
        DataValueRef::Boolean { value } => w.bool(name, value),
        DataValueRef::Int64 { value } => w.int(name, value),
        DataValueRef::Float { value } => num(w, name, f64::from(value)),
        DataValueRef::Double { value } => num(w, name, value),
        DataValueRef::String { value } => w.str(name, value),
        DataValueRef::BooleanArray { value } => array!(value.iter(), |w, x| w.bool(None, x)),
        DataValueRef::Int64Array { value } => array!(value.iter(), |w, x| w.int(None, x)),
        DataValueRef::FloatArray { value } => array!(value.iter(), |w, x| num(w, None, f64::from(x))),
        DataValueRef::DoubleArray { value } => array!(value.iter(), |w, x| num(w, None, x)),
        DataValueRef::StringArray { value } => array!(value.iter(), |w, x| w.str(None, x.text)),
        DataValueRef::Other { value } => write_hex(w, name, value),
    }
    Ok(())
}

/// The payload as bytes: lowercase hex in JSON (`""` when empty), bytes in a value tree (so
/// typed sinks such as Parquet get binary, and CSV shows hex).
pub fn write_hex<W: Visitor + ?Sized>(w: &mut W, name: Option<&str>, payload: &[u8]) {
    w.bytes(name, payload);
}

/// The value as a [`crate::value::Value`] tree (numbers stay numbers), for export, convert and
/// plot.
pub fn to_value(entry: Option<Entry<'_>>, payload: &[u8]) -> Result<crate::value::Value, DecodeError> {
    let mut b = crate::value::ValueBuilder::default();
    write_value(&mut b, None, entry, payload, NegZero::Number)?;
    Ok(b.finish())
}
