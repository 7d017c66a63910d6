//! RLOG to WPILOG: an AdvantageKit RLOG file (or captured stream) as a `.wpilog` file that every
//! WPILib tool opens. Values are re-encoded by the generated types of both formats; this module
//! only maps one format's value kinds onto the other's.
//!
//! - Each RLOG key becomes an entry named by the key, started just before its first value, with
//!   the WPILOG type of its values: R2's declared type (`int` and `int[]`, AdvantageKit's old
//!   names, become `int64` and `int64[]`, which WPILib decodes), or for R1 the value code's type
//!   (`Integer` is widened to `int64`; `Byte` and `ByteArray` become `raw`).
//! - A record's timestamp is its cycle's, in whole microseconds (RLOG writes microseconds as
//!   seconds, so nothing is lost).
//! - An R1 key whose value type changes gets a new entry of the new type (the old one is
//!   finished); an R1 `Null` (the key was removed) finishes the key's entry.

use std::collections::HashMap;
use std::io::{Read, Write};

use super::{DataValue, Utf8U32, WpilogWriteError, Writer};
use crate::formats::rlog::{self, Event, R1Value, R2Value, RlogError, Value};

/// What a conversion did, and what it met on the way.
#[derive(Debug, Default)]
pub struct Converted {
    pub entries: u32,
    pub values: u64,
    /// RLOG values that could not be read (an undefined key, a value that does not decode as its
    /// declared type): reported, the conversion goes on.
    pub warnings: Vec<String>,
    /// The RLOG error that ended reading early, after everything before it was written.
    pub error: Option<RlogError>,
}

/// Converts every value `reader` yields for which `wanted(key, seconds)` holds.
pub fn from_rlog<R: Read, W: Write>(
    reader: &mut rlog::Reader<R>,
    writer: &mut Writer<W>,
    wanted: &mut dyn FnMut(&str, f64) -> bool,
) -> Result<Converted, WpilogWriteError> {
    let mut out = Converted::default();
    // RLOG key id -> (WPILOG entry id, its type), while the entry is active.
    let mut active: HashMap<i16, (u32, String)> = HashMap::new();
    while let Some(ev) = reader.next_event() {
        let (timestamp, key_id, value) = match ev {
            Ok(Event::Value { timestamp, key_id, value }) => (timestamp, key_id, value),
            Ok(_) => continue,
            Err(e) if e.is_recoverable() => {
                out.warnings.push(e.to_string());
                continue;
            }
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        let Some(key) = reader.key(key_id) else { continue };
        if !wanted(&key.name, timestamp) {
            continue;
        }
        let ts = (timestamp * 1e6).round() as i64;
        let Some((type_name, data)) = convert(&value, key.declared_type.as_deref()) else {
            // R1 Null: the key was removed.
            if let Some((entry, _)) = active.remove(&key_id) {
                writer.finish(entry, ts)?;
            }
            continue;
        };
        let entry = match active.get(&key_id) {
            Some((entry, t)) if *t == type_name => *entry,
            current => {
                if let Some((old, _)) = current {
                    writer.finish(*old, ts)?;
                }
                out.entries += 1;
                let entry = out.entries;
                writer.start(entry, &key.name, &type_name, "", ts)?;
                active.insert(key_id, (entry, type_name));
                entry
            }
        };
        writer.value(entry, ts, &data)?;
        out.values += 1;
    }
    Ok(out)
}

/// The WPILOG type and value of an RLOG value; `None` for R1's `Null`.
fn convert(value: &Value, declared: Option<&str>) -> Option<(String, DataValue)> {
    let strings = |v: Vec<String>| v.into_iter().map(|text| Utf8U32 { text }).collect();
    let (ty, v) = match value {
        Value::R1(v) => match v.clone() {
            R1Value::Null {} => return None,
            R1Value::Boolean { value } => ("boolean", DataValue::Boolean { value }),
            R1Value::BooleanArray { value } => ("boolean[]", DataValue::BooleanArray { value }),
            R1Value::Integer { value } => ("int64", DataValue::Int64 { value: i64::from(value) }),
            R1Value::IntegerArray { value } => {
                ("int64[]", DataValue::Int64Array { value: value.into_iter().map(i64::from).collect() })
            }
            R1Value::Double { value } => ("double", DataValue::Double { value }),
            R1Value::DoubleArray { value } => ("double[]", DataValue::DoubleArray { value }),
            R1Value::String { value } => ("string", DataValue::String { value }),
            R1Value::StringArray { value } => {
                ("string[]", DataValue::StringArray { value: strings(value.into_iter().map(|s| s.text).collect()) })
            }
            R1Value::Byte { value } => ("raw", DataValue::Other { value: vec![value] }),
            R1Value::ByteArray { value } => ("raw", DataValue::Other { value }),
        },
        Value::R2(v) => {
            let declared = declared.unwrap_or("raw");
            let ty = match declared {
                "int" => "int64",
                "int[]" => "int64[]",
                other => other,
            };
            let v = match v.clone() {
                R2Value::Boolean { value } => DataValue::Boolean { value },
                R2Value::Int64 { value } => DataValue::Int64 { value },
                R2Value::Float { value } => DataValue::Float { value },
                R2Value::Double { value } => DataValue::Double { value },
                R2Value::String { value } => DataValue::String { value },
                R2Value::BooleanArray { value } => DataValue::BooleanArray { value },
                R2Value::Int64Array { value } => DataValue::Int64Array { value },
                R2Value::FloatArray { value } => DataValue::FloatArray { value },
                R2Value::DoubleArray { value } => DataValue::DoubleArray { value },
                R2Value::StringArray { value } => {
                    DataValue::StringArray { value: strings(value.into_iter().map(|s| s.text).collect()) }
                }
                R2Value::Json { value } => DataValue::Other { value: value.into_bytes() },
                R2Value::Raw { value }
                | R2Value::Struct { value }
                | R2Value::Proto { value }
                | R2Value::Other { value } => DataValue::Other { value },
            };
            return Some((ty.to_string(), v));
        }
    };
    Some((ty.to_string(), v))
}
