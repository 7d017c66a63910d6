//! USVLOG, the bundled framed schema (`schemas/usvlog.toml`), read by its generated reader. A file
//! under an older schema id decodes with that id's layout from the lock (`with_file_format`).

use std::sync::Arc;

use crate::formats::usvlog::Usvlog;
use crate::ir::ir::Schema;
use crate::json::JsonWriter;
use crate::runtime::{Event, FramedFormat, RawRecord, Versioned, Visit};

use super::fault::{kind, Fault};
use super::framed::timestamp_scale;
use super::index::{Chunker, Index, Range};
use super::info::{json, text, Form, Info, Summary, Tally};
use super::input::{framed, FramedJob, FramedRead, Source};
use super::records::{DumpFramed, Records};
use super::scan::{record_channel, unknown_record, State};
use super::{Error, Select};

/// The samples of a USVLOG file: one channel per record type.
/// With a `range`, only the records that start in it (the reader starts at its start); without,
/// every record, and the chunks of the time index are noted ([`super::Outcome::index`]).
pub(super) fn scan(
    input: Source,
    head: &[u8],
    path: &str,
    range: Option<Range>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let schema = Arc::clone(crate::formats::schemas::usvlog());
    let job = Scan { path, schema: &schema, state, range };
    framed::<Usvlog, _>(head, input, job).map_err(|e| Error::Input(format!("{path}: {e}")))?
}

/// The records of a USVLOG file as the dump writes them.
pub(super) fn records<R: Records>(
    input: Source,
    head: &[u8],
    path: &str,
    select: &Select,
    out: &mut R,
) -> Result<(), Error> {
    // The file's schema id picks the layout: the current one or an older one from the lock.
    let ns_per_tick = timestamp_scale(crate::formats::schemas::usvlog());
    let job = DumpFramed { out, path, select, ns_per_tick };
    framed::<Usvlog, _>(head, input, job).map_err(|e| Error::at(Fault::read(path, &e)))?
}

/// The summary of a USVLOG file.
pub(super) fn info(input: Source, head: &[u8], path: &str) -> Result<Info, Error> {
    // The file's schema id picks the layout: the current one or an older one from the lock.
    let job = Summarise { current: Usvlog::SCHEMA_IDS.first().copied() };
    let s = framed::<Usvlog, _>(head, input, job).map_err(|e| Error::Input(format!("{path}: {e}")))?;
    let (name, title) = (super::Format::Usvlog.name(), super::Format::Usvlog.title());
    let path = path.to_string();
    Ok(Info::new(s.ok(), move |form| match form {
        // The timestamp's unit is the schema's (USVLOG: `t_us`, microseconds).
        Form::Text => text(&s, title, &path, timestamp_scale(crate::formats::schemas::usvlog())),
        Form::Json => json(&s, name, &path),
    }))
}

struct Scan<'a, 's> {
    path: &'a str,
    schema: &'a Arc<Schema>,
    state: &'a mut State<'s>,
    range: Option<Range>,
}

/// Where the scan is: a whole reading notes the chunks of the time index as it passes their
/// boundaries; a reading of a range takes only the records that start in it.
struct Walk {
    ns_per_tick: u64,
    chunker: Option<Chunker>,
    start: u64,
    end: u64,
}

/// What the scan does with a record ([`Walk::place`]).
enum Place {
    /// Takes it, at this time (ns).
    Take(u64),
    /// Passes it over: before the range.
    Skip,
    /// Stops: past the range.
    End,
}

impl Walk {
    /// The record's time in ns, noted by the chunker, or where it is against the range.
    #[inline]
    fn place(&mut self, raw: &RawRecord<'_>) -> Place {
        let t_ns = raw.header.timestamp.unwrap_or(raw.index).saturating_mul(self.ns_per_tick);
        if let Some(c) = self.chunker.as_mut() {
            c.note(raw.offset, raw.index, t_ns);
        } else if raw.offset < self.start {
            return Place::Skip;
        } else if raw.offset >= self.end {
            return Place::End;
        }
        Place::Take(t_ns)
    }
}

impl FramedJob for Scan<'_, '_> {
    type Output = Result<(), Error>;
    fn call<F: FramedFormat>(self, mut reader: impl FramedRead<F>) -> Self::Output {
        let Scan { path, schema, state, range } = self;
        // The payloads are in the layout of the schema's records when the reader is the one of
        // the schema's own schema id (not an older layout of the history): then a sink is handed
        // each record's bytes beside its value.
        let current = schema.format.schema_id.as_ref().map(|s| s.value);
        let same_layout = F::KNOWN_SCHEMA_IDS == current.as_slice();
        let (start, end) = range.map_or((0, u64::MAX), |r| (r.start, r.end));
        if let Some(r) = range {
            reader.seek(r.start, r.first_record);
        }
        let chunker = range.is_none().then(Chunker::default);
        let mut walk = Walk { ns_per_tick: timestamp_scale(schema), chunker, start, end };
        // Each record checked, its value decoded only if the sink visits it (`next_checked`).
        while let Some(next) = reader.next_checked() {
            let ev = match next {
                Ok(ev) => ev,
                Err(e) if e.is_recoverable() => {
                    state.warn(kind::UNDECODABLE, || format!("{path}: {e}; skipped"));
                    continue;
                }
                Err(e) => {
                    state.outcome.fail(super::fault::Fault::read(path, &e));
                    walk.chunker = None;
                    break;
                }
            };
            let (Event::Record { raw, .. } | Event::Unknown { raw }) = &ev;
            let t_ns = match walk.place(raw) {
                Place::Take(t_ns) => t_ns,
                Place::Skip => continue,
                Place::End => break,
            };
            match ev {
                Event::Record { raw, record } => {
                    let tag = raw.header.tag;
                    // A record type the selection leaves out, once settled: not named.
                    if state.skips_tag(tag) {
                        continue;
                    }
                    let name = F::record_name(tag).unwrap_or("?");
                    let describe = || record_channel(schema, name);
                    if same_layout {
                        state.deliver_record(tag, name, t_ns, raw.payload, &record, describe)?;
                    } else {
                        state.deliver_visit(name, t_ns, &record, describe)?;
                    }
                }
                Event::Unknown { raw } => {
                    state.warn(kind::UNKNOWN_TYPE, || unknown_record(path, raw.offset, raw.header.tag));
                }
            }
        }
        if let Some(c) = walk.chunker {
            let chunks = c.finish(reader.position());
            if !chunks.is_empty() {
                state.outcome.index = Some(Index { origin_ns: 0, chunks, ..Index::default() });
            }
        }
        Ok(())
    }
}

/// The summary of the records of a file.
struct Summarise {
    current: Option<u64>,
}

impl FramedJob for Summarise {
    type Output = Summary;
    fn call<F: FramedFormat>(self, reader: impl FramedRead<F>) -> Self::Output {
        summarise::<F>(reader, self.current)
    }
}

fn summarise<F: FramedFormat>(mut reader: impl FramedRead<F>, current: Option<u64>) -> Summary {
    let mut w = JsonWriter::new();
    reader.file_header().visit(None, &mut w);
    let mut s = Summary::new(w.take(), F::schema_id(reader.file_header()), current);
    // `check_each` is the reader's fast path: each payload checked as decoding would check it,
    // without building the record. It stops at each error, and resumes after a bad record when
    // called again.
    let name = |tag| F::record_name(tag).map(str::to_string);
    let mut t = Tally::new();
    loop {
        let result = reader.check_each(|raw, known| {
            if !t.record(&raw.header, known) {
                let tag = raw.header.tag;
                s.record(raw.header, known, move || name(tag));
            }
        });
        match result {
            Ok(()) => break,
            Err(e) if s.error(&e, e.is_recoverable()) => {}
            Err(_) => break,
        }
    }
    s.bytes_consumed = reader.position();
    s.settle(t, name);
    s
}
