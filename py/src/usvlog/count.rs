//! Pass 1 of `read_timeseries_bin`: frames every record of the file with the runtime's streaming
//! reader, counts each known record type (so that every column is allocated once, at its final
//! size), keeps the unknown records, stops at the first fault, and notes where pass 2 may start
//! its parts: the first record at or after each of a few byte targets, with the rows of each type
//! before it. The framing itself stays sequential (a USVLOG record header carries no marker to
//! resynchronise on, so a boundary is only known by framing up to it); pass 2 then starts each
//! part at a boundary found here, never at a guessed one.

use std::fs::File;

use logspec::formats::usvlog::Usvlog;
use logspec::runtime::{Framing, Reader};

use super::{find, lookup, Fault, Type};

/// Where a part of pass 2 starts: a record boundary that pass 1 framed.
pub(super) struct Split {
    /// The byte offset of the record's header.
    pub offset: u64,
    /// The record's 0-based index in the file.
    pub index: u64,
    /// Rows of each type (by type index) before the record.
    pub rows: Vec<usize>,
}

/// What pass 1 finds: the header, the known types in order of first appearance with their
/// counts, the unknown records, how far pass 2 may read (the records before the first fault),
/// and where its parts may start.
pub(super) struct Counted {
    pub fw_model_schema: u64,
    pub t0_us: u64,
    /// Type indices in order of first appearance.
    pub order: Vec<usize>,
    /// Rows of each type (by type index), before the first fault.
    pub counts: Vec<usize>,
    /// `(t_us, type_id, payload_len)` of each unknown record (when they are kept).
    pub unknown: Vec<(u64, u64, u64)>,
    pub fault: Option<Fault>,
    /// The byte offset of the first record and of the byte after the last record pass 2 reads.
    pub start: u64,
    pub end: u64,
    /// The records pass 2 reads: those before the first fault.
    pub limit: u64,
    /// The boundaries of pass 2's parts after the first, in file order.
    pub splits: Vec<Split>,
}

/// Pass 1 over `file`, whose length was `len` bytes when opened: frames every record; counts
/// each known type; stops at the first fault (a truncation, or a payload of the wrong length);
/// notes up to `parts - 1` boundaries that divide the records into `parts` runs of about equal
/// bytes. `Err` when the file header does not decode.
pub(super) fn count(
    file: &File,
    len: u64,
    types: &[Type],
    strict: bool,
    keep_unknown: bool,
    parts: usize,
) -> Result<Counted, Fault> {
    let by_id = lookup(types);
    let mut r = Reader::<_, Usvlog>::new(file).map_err(|e| Fault::read(&e))?;
    let header = r.file_header().clone();
    let start = r.position();
    // The byte targets of the splits: `start + k * (len - start) / parts` for k in 1..parts.
    let body = len.saturating_sub(start);
    let parts = parts.max(1) as u64;
    let target = |k: u64| start + (u128::from(body) * u128::from(k) / u128::from(parts)) as u64;
    let mut next_split = 1u64;
    let mut next_target = if parts > 1 { target(1) } else { u64::MAX };
    let mut order = Vec::new();
    let mut counts = vec![0usize; types.len()];
    let mut unknown = Vec::new();
    let mut splits = Vec::new();
    let mut fault = None;
    let (mut limit, mut end) = (0u64, start);
    while let Some(raw) = r.next_raw() {
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                fault = Some(Fault::read(&e));
                break;
            }
        };
        if raw.offset >= next_target && raw.index > 0 {
            splits.push(Split { offset: raw.offset, index: raw.index, rows: counts.clone() });
            // Past every target this record reached: a record longer than a part makes no
            // empty part.
            while next_split < parts && target(next_split) <= raw.offset {
                next_split += 1;
            }
            next_target = if next_split < parts { target(next_split) } else { u64::MAX };
        }
        let payload_len = raw.payload.len();
        match find(&by_id, types, raw.header.tag) {
            None => {
                if keep_unknown {
                    unknown.push((raw.header.timestamp.unwrap_or(0), raw.header.tag, payload_len as u64));
                }
            }
            Some(i) => {
                let ty = &types[i];
                if (strict && payload_len != ty.size) || payload_len < ty.size {
                    fault = Some(Fault::payload_length(&raw, ty, strict));
                    break;
                }
                if counts[i] == 0 {
                    order.push(i);
                }
                counts[i] += 1;
            }
        }
        limit += 1;
        end = r.position();
    }
    // A split at the first record after the last one pass 2 reads would make an empty part.
    splits.retain(|s| s.index < limit);
    let (fw_model_schema, t0_us) = (header.fw_model_schema.into(), header.t0_us);
    Ok(Counted { fw_model_schema, t0_us, order, counts, unknown, fault, start, end, limit, splits })
}

impl Fault {
    /// A known record whose payload is not of its type's size (shorter, or with
    /// `strict_payload_len` longer), in the words of upstream's check.
    fn payload_length(raw: &logspec::runtime::RawRecord<'_>, ty: &Type, strict: bool) -> Fault {
        let what = if strict { "exactly" } else { "at least" };
        Fault {
            message: format!(
                "usvlog: at byte {} (record #{}, {}): payload length {}, expected {what} {} (strict_payload_len={})",
                raw.offset,
                raw.index,
                ty.name,
                raw.payload.len(),
                ty.size,
                if strict { "True" } else { "False" }
            ),
            offset: raw.offset,
            record_index: Some(raw.index),
            type_id: Some(ty.id),
            record: Usvlog::record_name(ty.id),
        }
    }
}
