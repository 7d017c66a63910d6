//! A log's records in file order ([`Log::records`](super::Log::records)), into a [`Records`] sink:
//! JSON Lines for `logspec dump` ([`JsonLines`]), value trees for the Python package.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::formats::wpilog::NegZero;
use crate::json::JsonWriter;
use crate::runtime::{Event, FramedFormat};

use super::input::{FramedJob, FramedRead};
use crate::value::ValueSink;

use super::fault::{kind, Fault, FaultKind, Faults};
use super::filter::Select;

use super::Error;

/// What to read besides the log (the options of `logspec dump`).
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// CARLA: only the packets of frames A..B (0-based frame ordinals, B excluded).
    pub frames: Option<std::ops::Range<u64>>,
    pub select: Select,
    /// ROS bag: directories of `.msg` files for connections whose embedded definition is empty
    /// or does not match their md5sum.
    pub msg_path: Vec<PathBuf>,
    /// ROS bag: messages in file order instead of time order.
    pub file_order: bool,
}

/// Where the dump puts what it reads: JSON Lines for the command ([`JsonLines`]), value trees
/// for the Python package. Each record is written into [`writer`](Records::writer) as one
/// object (`begin_struct(None)` .. `end_struct()`) and handed on by
/// [`end_record`](Records::end_record); problems that do not stop the dump go to
/// [`warn`](Records::warn), in order with the records.
pub trait Records {
    type Writer: ValueSink;
    /// The writer the next record is written into.
    fn writer(&mut self) -> &mut Self::Writer;
    /// The record written into the writer is complete: hand it on.
    fn end_record(&mut self) -> io::Result<()>;
    /// Forgets what was written into the writer since the last record.
    fn discard(&mut self);
    /// A problem that does not stop the dump (a record skipped, a value kept as hex), told
    /// between records (never while one is being written). The command prints
    /// `logspec: {message}` on standard error.
    fn warn(&mut self, warning: Fault);
    /// How a WPILOG float of negative zero is shown: the dump's string `"-0"`, or a number.
    fn neg_zero(&self) -> NegZero {
        NegZero::String
    }
}

/// The dump's records as JSON Lines (`logspec dump`), its warnings on standard error.
///
/// The lines are written one after another into one buffer, the writer's, and go out in writes of
/// at least [`JsonLines::WRITE_AT`] bytes: `out` needs no buffer of its own. [`flush`](Self::flush)
/// writes what is left (dropping does too, errors ignored): every complete record is printed
/// before an error ends the dump.
pub struct JsonLines<'a> {
    w: JsonWriter,
    /// Where the record being written begins: the complete lines are before it.
    start: usize,
    out: &'a mut dyn Write,
}

impl<'a> JsonLines<'a> {
    /// The lines are written out when this many bytes of them are waiting.
    pub const WRITE_AT: usize = 1 << 17;

    pub fn new(out: &'a mut dyn Write) -> Self {
        JsonLines { w: JsonWriter::new(), start: 0, out }
    }

    /// Writes the complete lines out and forgets them, and a record left incomplete.
    fn write_lines(&mut self) -> io::Result<()> {
        let written = self.out.write_all(&self.w.as_str().as_bytes()[..self.start]);
        self.w.clear();
        self.start = 0;
        written
    }

    /// Writes every complete line out and flushes the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_lines()?;
        self.out.flush()
    }
}

impl Drop for JsonLines<'_> {
    fn drop(&mut self) {
        let _ = self.out.write_all(&self.w.as_str().as_bytes()[..self.start]);
    }
}

impl Records for JsonLines<'_> {
    type Writer = JsonWriter;
    fn writer(&mut self) -> &mut JsonWriter {
        &mut self.w
    }
    fn end_record(&mut self) -> io::Result<()> {
        self.w.newline();
        self.start = self.w.mark();
        if self.start >= Self::WRITE_AT {
            self.write_lines()?;
        }
        Ok(())
    }
    fn discard(&mut self) {
        self.w.truncate(self.start);
    }
    fn warn(&mut self, warning: Fault) {
        eprintln!("logspec: {warning}");
    }
}

/// A problem a dump goes on from, of `kind`: warned about in full for the first few of its
/// kind, only counted in `faults` after that.
pub(super) fn skip(out: &mut impl Records, faults: &mut Faults, kind: &'static str, fault: impl FnOnce() -> Fault) {
    if let Some(f) = faults.note(kind, fault) {
        out.warn(f);
    }
}

/// The end of a dump that went on past problems: the count of each kind past the first few,
/// then the error `{path}: N {what} (see above)`; `Ok` when there was none.
pub(super) fn skipped(out: &mut impl Records, faults: &Faults, path: &str, what: &str) -> Result<(), Error> {
    let n = faults.total();
    if n == 0 {
        return Ok(());
    }
    for line in faults.more(path) {
        out.warn(Fault::new(FaultKind::Decode, path, line));
    }
    Err(Error::at(Fault::new(FaultKind::Decode, path, format!("{path}: {n} {what} (see above)"))))
}

/// What the framed dumps ([`dump_framed`], [`dump_schema`]) keep between records: the records
/// that did not decode (counted and skipped; the first few warned about) and the filters' tally.
pub(super) struct Skips {
    pub(super) faults: Faults,
    pub(super) filtering: bool,
    pub(super) tally: super::filter::Tally,
}

impl Skips {
    pub(super) fn new(select: &Select) -> Skips {
        Skips {
            faults: Faults::default(),
            filtering: super::filter::Tally::needed(select),
            tally: super::filter::Tally::default(),
        }
    }

    /// Whether the filters keep a record of type `name` at `t_ns`.
    pub(super) fn keeps(&mut self, select: &Select, name: &str, t_ns: Option<u64>) -> bool {
        !self.filtering || self.tally.note(select, name, t_ns)
    }

    /// A reader's error: a record that did not decode is warned about and skipped; anything
    /// else ends the dump.
    pub(super) fn fault(
        &mut self,
        out: &mut impl Records,
        path: &str,
        recoverable: bool,
        e: &impl super::fault::Locate,
    ) -> Result<(), Error> {
        if !recoverable {
            return Err(Error::at(Fault::read(path, e)));
        }
        skip(out, &mut self.faults, kind::UNDECODABLE, || Fault::read_with(path, e, "; skipped"));
        Ok(())
    }

    /// The end of a dump that read to the end: an error if a record was skipped or a filter
    /// matched nothing.
    pub(super) fn finish(self, out: &mut impl Records, select: &Select, path: &str) -> Result<(), Error> {
        skipped(out, &self.faults, path, "record(s) could not be decoded")?;
        self.tally.check(select, path).map_err(|m| Error::filter(path, m))?;
        Ok(())
    }
}

/// The names of a schema's record-header fields that hold the tag, length and timestamp
/// (owned, for [`FrameFields`]; `len` where the framing has no length field).
pub(super) struct FrameNames {
    pub(super) tag: String,
    pub(super) length: String,
    pub(super) timestamp: Option<String>,
}

impl FrameNames {
    pub(super) fn of(schema: &crate::ir::ir::Schema) -> FrameNames {
        let f = schema.framing.as_ref().expect("a schema format has a framing");
        let h = schema.strukt(f.header);
        let name = |i: usize| h.fields[i].name.clone();
        FrameNames {
            tag: name(f.tag),
            length: f.length.map_or_else(|| "len".into(), name),
            timestamp: f.timestamp.map(name),
        }
    }
}

/// Dumps any framed format. Every complete record is printed; a record that fails to decode is
/// reported on stderr and skipped; a truncation or read error ends the dump with an error after
/// everything before it was printed. `select` keeps records by name and by time (the header's
/// timestamp times `ns_per_tick`).
pub(super) struct DumpFramed<'a, R> {
    pub(super) out: &'a mut R,
    pub(super) path: &'a str,
    pub(super) select: &'a Select,
    pub(super) ns_per_tick: u64,
}

impl<R: Records> FramedJob for DumpFramed<'_, R> {
    type Output = Result<(), Error>;
    fn call<F: FramedFormat>(self, reader: impl FramedRead<F>) -> Self::Output {
        dump_framed::<F>(reader, self.out, self.path, self.select, self.ns_per_tick)
    }
}

fn dump_framed<F: FramedFormat>(
    mut reader: impl FramedRead<F>,
    out: &mut impl Records,
    path: &str,
    select: &Select,
    ns_per_tick: u64,
) -> Result<(), Error> {
    let mut skips = Skips::new(select);
    while let Some(ev) = reader.next_event() {
        match ev {
            Ok(ev) => {
                let raw = match &ev {
                    Event::Record { raw, .. } | Event::Unknown { raw } => raw,
                };
                let name = F::record_name(raw.header.tag).unwrap_or("");
                let t_ns = raw.header.timestamp.map(|t| t.saturating_mul(ns_per_tick));
                if !skips.keeps(select, name, t_ns) {
                    continue;
                }
                crate::json::framed_event::<F>(out.writer(), &ev)
            }
            Err(e) => {
                // A skipped record writes no line.
                skips.fault(out, path, e.is_recoverable(), &e)?;
                continue;
            }
        }
        out.end_record().map_err(Error::Io)?;
    }
    skips.finish(out, select, path)
}
