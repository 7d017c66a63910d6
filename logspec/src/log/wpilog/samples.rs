//! The samples of a WPILOG file ([`scan`]), whole or a range of chunks of the time index
//! ([`index`]): a whole scan notes the chunks, the control records (the entry table's
//! state messages) and the schema records; a ranged scan reads the schema records and the control
//! records before the range ([`index::indexed_schemas`], [`index::start_at`]), then the range.

use std::collections::BTreeSet;

use crate::formats::wpilog::{self, Body, ControlBody, Reader, RecordRef};
use crate::runtime::{Input, WindowBuf};

use crate::log::fault::{kind, Fault};
use crate::log::index::{self, wrong, Chunker, Index, Range, SchemaAt, WRONG};
use crate::log::input::Source;
use crate::log::scan::State;
use crate::log::Error;

/// The samples of a WPILOG file: one channel per entry. A mapped file is read in place. With a
/// `range` (chunks of the time index), its state messages before it and the schema messages of
/// the log ([`Index`]), only the records that start in it; without, every record, and the time
/// index is noted ([`Outcome::index`](crate::log::Outcome::index)).
pub(in crate::log) fn scan(
    input: Source,
    file: &std::path::Path,
    path: &str,
    range: Option<(Range, Vec<u64>, Vec<SchemaAt>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let (range, schemas) = match range {
        None => (None, super::schemas(file, path)),
        Some((range, states, at)) => {
            let map = match &input {
                Source::Mapped(m) => Some(std::sync::Arc::clone(m)),
                Source::Stream(_) => None,
            };
            let schemas = index::indexed_schemas(&SchemaMessages, file, map.as_deref(), path, &at);
            (Some((range, states)), schemas.map_err(Error::at)?)
        }
    };
    match input {
        Source::Mapped(map) => {
            let r = Reader::from_window(map.window()).map_err(|e| Error::Input(format!("{path}: {e}")))?;
            read_range(r, path, schemas, range, state)
        }
        input => read_range(super::reader(input.into_read(), path).map_err(Error::Input)?, path, schemas, range, state),
    }
}

/// [`scan`]'s reading, once the schemas are known.
fn read_range<R, I: Input>(
    mut r: Reader<R, I>,
    path: &str,
    schemas: crate::formats::wpistruct::TypeRegistry,
    range: Option<(Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let Some((range, states)) = range else {
        let mut noted = Noted::default();
        if read_samples(&mut r, path, schemas, state, Some(&mut noted))? {
            let chunks = noted.chunks.finish(r.position());
            if !chunks.is_empty() {
                let (states, schemas) = (noted.states, noted.schemas);
                state.outcome.index = Some(Index { origin_ns: 0, chunks, states, schemas });
            }
        }
        return Ok(());
    };
    // Nothing read yet: the wrong index is the scan's error (a fault, as a log that does not
    // open).
    start_at(&mut r, path, range, &states).map_err(Error::at)?;
    r.stop_at(Some(range.end));
    if !read_samples(&mut r, path, schemas, state, None)? {
        // The index was written by a whole read that met no fault, of the log as it is (its
        // stamp): a fault here is a range that does not start where a record does.
        if let Some(f) = state.outcome.fault.as_mut().filter(|f| !f.message.ends_with(WRONG)) {
            f.message = format!("{}; {WRONG}", f.message);
            state.outcome.error = Some(f.message.clone());
        }
    } else if r.position() != range.end {
        state.outcome.fail(index::ended_elsewhere(path, r.position(), range.end));
    }
    Ok(())
}

/// What a whole scan notes for the time index on its way ([`Index`]).
#[derive(Default)]
struct Noted {
    chunks: Chunker,
    /// Records passed.
    records: u64,
    /// The control records (the state messages).
    states: Vec<u64>,
    /// The offset of the Start record of each active entry id.
    starts: std::collections::HashMap<u32, u64>,
    /// The first record of each schema entry name, with its Start record.
    schemas: Vec<SchemaAt>,
    schema_names: BTreeSet<String>,
}

/// Every data record as a sample on the channel of its entry's name (`export`, `convert`,
/// `plot`), `{"value": ...}` as in RLOG. Orphans, values that do not decode and records before
/// time zero (a sample's time is unsigned) are reported as warnings, not delivered. Reads up to
/// the reader's stop offset; `Ok(true)` when no fault ended the reading early. With `noted`,
/// what the time index needs is noted at every record.
fn read_samples<R, I: Input>(
    r: &mut Reader<R, I>,
    path: &str,
    mut schemas: crate::formats::wpistruct::TypeRegistry,
    state: &mut State<'_>,
    mut noted: Option<&mut Noted>,
) -> Result<bool, Error> {
    use crate::formats::wpistruct::TypeRegistry;
    use crate::value::Value;
    // Entries whose struct or proto values did not decode (warned about once).
    let mut undecoded: BTreeSet<String> = BTreeSet::new();
    let mut orphans = 0u64;
    let mut negative = 0u64;
    let mut whole = true;
    while let Some(rec) = r.next_record() {
        let rec = match rec {
            Ok(rec) => rec,
            Err(e) => {
                state.outcome.fail(Fault::read(path, &e));
                whole = false;
                break;
            }
        };
        if let Some(n) = noted.as_deref_mut() {
            note(n, &rec);
        }
        let entry = match rec.body {
            Body::Data(entry) => entry,
            Body::Control { entry: Some(e), .. } => {
                // The id may stand for another entry from here on.
                state.forget_tag(u64::from(e.id()));
                continue;
            }
            _ => continue,
        };
        let Some(entry) = entry else {
            orphans += 1;
            continue;
        };
        let schema = schemas.offer(entry.name(), entry.type_name(), rec.payload);
        for w in schemas.take_warnings() {
            state.outcome.warnings.push(format!("{path}: {w}"));
        }
        if let (true, Some(n)) = (schema, noted.as_deref_mut()) {
            if let Some(&definition) = n.starts.get(&entry.id()) {
                if n.schema_names.insert(entry.name().to_string()) {
                    n.schemas.push(SchemaAt { offset: rec.offset, definition });
                }
            }
        }
        let Ok(t_us) = u64::try_from(rec.header.timestamp) else {
            negative += 1;
            continue;
        };
        // An entry the selection leaves out, once settled: passed over undecoded.
        let tag = u64::from(entry.id());
        if state.skips_tag(tag) {
            continue;
        }
        if TypeRegistry::decodes(entry.type_name()) {
            match schemas.decode(entry.type_name(), rec.payload) {
                Ok(v) => {
                    // As for RLOG: a struct's members are the channel's columns.
                    let v = match v {
                        Value::Object(_) => v,
                        other => Value::Object(vec![("value".to_string(), other)]),
                    };
                    let describe = || crate::log::structs::struct_channel(&schemas, entry.name(), entry.type_name());
                    state.deliver_tagged(tag, entry.name(), t_us.saturating_mul(1000), || v, describe)?;
                    continue;
                }
                Err(e) => {
                    if undecoded.insert(entry.name().to_string()) {
                        state
                            .outcome
                            .warnings
                            .push(format!("{path}: `{}`: {e}; its values are kept as hex", entry.name()));
                    }
                }
            }
        }
        let value = match wpilog::to_value(Some(entry), rec.payload) {
            Ok(v) => v,
            Err(e) => {
                state.warn(kind::UNDECODABLE_VALUE, || {
                    format!("{path}: byte {}: {} ({}): {e}; skipped", rec.offset, entry.name(), entry.type_name())
                });
                continue;
            }
        };
        let value = || Value::Object(vec![("value".to_string(), value)]);
        let describe = || {
            // Non-standard types are shown as hex, so their channel schema is that of `raw`.
            let shown = if entry.is_standard() { entry.type_name() } else { "raw" };
            let mut c = crate::log::rlog::rlog_channel(entry.name(), shown);
            c.schema_name = entry.type_name().to_string();
            c
        };
        state.deliver_tagged(tag, entry.name(), t_us.saturating_mul(1000), value, describe)?;
    }
    if orphans > 0 {
        state
            .outcome
            .warnings
            .push(format!("{path}: {orphans} data record(s) of entries that were not started; skipped"));
    }
    if negative > 0 {
        state
            .outcome
            .warnings
            .push(format!("{path}: {negative} data record(s) before time zero (negative timestamps); skipped"));
    }
    Ok(whole)
}

/// Whether a chunk may start at this record: a valid control record or a data record of an
/// active entry. A ranged read over a map checks that its first record is one ([`start_at`]),
/// which a range that starts where no record does is unlikely to pass.
fn starts_chunk(rec: &RecordRef<'_>) -> bool {
    matches!(rec.body, Body::Control { .. } | Body::Data(Some(_)))
}

/// Notes a record for the time index: its chunk and time (before time zero: at 0), and, for a
/// control record, its offset as a state message and the Start offset of its entry.
#[inline]
fn note(n: &mut Noted, rec: &RecordRef<'_>) {
    let t_ns = u64::try_from(rec.header.timestamp).unwrap_or(0).saturating_mul(1000);
    if starts_chunk(rec) {
        n.chunks.note(rec.offset, n.records, t_ns);
    } else {
        n.chunks.join(rec.offset, n.records, t_ns);
    }
    n.records += 1;
    if let Body::Control { record, .. } = rec.body {
        n.states.push(rec.offset);
        match record.body {
            ControlBody::Start { entry, .. } => {
                n.starts.insert(entry, rec.offset);
            }
            ControlBody::Finish { entry } => {
                n.starts.remove(&entry);
            }
            ControlBody::SetMetadata { .. } => {}
        }
    }
}

/// Moves `r` to `range`'s start with the entry table a reader from the log's start has there
/// ([`index::start_at`]): a reader that can seek (a mapped file) reads the state messages before
/// it (`states`: the control records, from the time index) and nothing else; a stream reads
/// every record up to the start, which applies the control records as they pass. A state
/// message that is not a control record, or a start that is not a record's (a stream: the
/// record the index numbers), or whose record is not one a chunk starts at (a map,
/// [`starts_chunk`]), is a wrong index: a fault.
fn start_at<R, I: Input>(r: &mut Reader<R, I>, path: &str, range: Range, states: &[u64]) -> Result<(), Fault> {
    // A chunk at the first record is numbered 0: a reader there needs nothing.
    let first = r.position();
    if range.start == first && range.first_record == 0 {
        return Ok(());
    }
    if range.start <= first {
        return Err(wrong(path, range.start, "a chunk starts at or before the first record"));
    }
    let mut restarting = Restarting { reader: r, seeks: false };
    index::start_at(&mut restarting, range, states, path, "not a control record")?;
    if restarting.seeks {
        // The first record must be one a chunk starts at. Read twice: a control record applied
        // again leaves the entry table as it was.
        if !r.next_record().is_some_and(|rec| rec.is_ok_and(|rec| starts_chunk(&rec))) {
            return Err(wrong(path, range.start, "no record of an entry starts there"));
        }
        r.seek(range.start, range.first_record);
    } else if r.records() != range.first_record {
        return Err(wrong(path, range.start, "no record starts there, or not the record the index numbers"));
    }
    Ok(())
}

/// A WPILOG reader for [`index::start_at`]: the reader applies the control records (the state
/// messages) itself.
struct Restarting<'r, R, I> {
    reader: &'r mut Reader<R, I>,
    /// Whether the reader seeks (a mapped file): then every state message is where the time
    /// index says, and one that does not read is a wrong index, not the reader's fault.
    seeks: bool,
}

impl<R, I: Input> index::Restart for Restarting<'_, R, I> {
    const MESSAGE: &'static str = "record";
    fn seek(&mut self, offset: u64, index: u64) -> bool {
        self.seeks = self.reader.seek(offset, index);
        self.seeks
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    fn next_taking(&mut self, state: Option<u64>, path: &str) -> Option<Result<(u64, bool), Fault>> {
        Some(match self.reader.next_record()? {
            Ok(rec) => Ok((rec.offset, state == Some(rec.offset) && matches!(rec.body, Body::Control { .. }))),
            // Over a map, not a state message (`seeks`).
            Err(e) if self.seeks => Ok((e.offset, false)),
            Err(e) => Err(Fault::read(path, &e)),
        })
    }
}

/// WPILOG's schema messages, for [`index::indexed_schemas`]: a Start record, and a data record
/// of its entry that carries a schema.
struct SchemaMessages;

impl index::SchemaMessages for SchemaMessages {
    type Reader<'m> = Reader<&'m [u8], WindowBuf<'m, fn(u64)>>;
    type Id = u32;
    const MESSAGE: &'static str = "record";
    const DEFINITION: &'static str = "a Start record";
    const VALUE: &'static str = "a data record of the entry its Start record starts";
    fn open<'m>(&self, window: WindowBuf<'m, fn(u64)>) -> Result<Self::Reader<'m>, String> {
        Reader::from_window(window).map_err(|e| e.to_string())
    }
    fn seek(r: &mut Self::Reader<'_>, offset: u64) -> bool {
        r.seek(offset, 0)
    }
    fn definition(r: &mut Self::Reader<'_>) -> Option<u32> {
        match r.next_record() {
            Some(Ok(RecordRef { body: Body::Control { record, .. }, .. })) => match record.body {
                ControlBody::Start { entry, .. } => Some(entry),
                _ => None,
            },
            _ => None,
        }
    }
    fn value(r: &mut Self::Reader<'_>, id: u32, reg: &mut crate::formats::wpistruct::TypeRegistry) -> bool {
        match r.next_record() {
            Some(Ok(RecordRef { body: Body::Data(Some(e)), payload, .. })) if e.id() == id => {
                reg.offer(e.name(), e.type_name(), payload);
                true
            }
            _ => false,
        }
    }
    fn whole(&self, file: &std::path::Path, path: &str) -> crate::formats::wpistruct::TypeRegistry {
        super::schemas(file, path)
    }
}
