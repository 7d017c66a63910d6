//! A log's records in file order ([`Log::records`](super::Log::records)), into a [`Records`] sink:
//! JSON Lines for `logspec dump` ([`JsonLines`]), value trees for the Python package.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use crate::formats::wpilog::NegZero;
use crate::json::JsonWriter;
use crate::runtime::{Event, FramedFormat, Numbers, Visitor};
use crate::tape::Tape;

use super::input::{FramedJob, FramedRead, Mapped};
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
    /// Whether the next record of a framed format read in place may be handed on as its place
    /// in the map ([`Records::in_place`]) instead of being written into the writer.
    fn takes_in_place(&self) -> bool {
        false
    }
    /// The next record, read whole and without fault from `map[start..end]`, handed on as its
    /// place: `line` writes it as a line when the caller wants it (on another thread, say).
    /// Called only when [`Records::takes_in_place`] said so.
    fn in_place(&mut self, _map: &Arc<Mapped>, _start: usize, _end: usize, _line: InPlaceLines) -> io::Result<()> {
        Ok(())
    }
}

/// Writes the lines of `count` records read whole from the start of `bytes` (records of one
/// framed format), as the dump writes them; stops where the bytes end.
pub type InPlaceLines = fn(bytes: &[u8], count: usize, w: &mut JsonWriter);

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

/// The dump's records as JSON Lines made on two threads: [`JsonLines`]'s text, byte for byte,
/// for a machine with a second core.
///
/// The reading thread records each record into a [`Tape`] (a few stores per value) and hands
/// full tapes to the writing thread, which replays them into the one JSON writer and writes the
/// text out; the records of a framed format read in place go as their span of the map, and the
/// writing thread reads and writes them there ([`Records::in_place`]). When the writing thread
/// is behind (as many batches waiting as the queue holds), the reading thread writes the next
/// batch's text itself, straight from the visits, so both
/// cores make text and neither waits on the other. Warnings go through the same queue, so they
/// are printed in order with the records.
pub struct TwoThreads {
    lines: Lines,
    /// Where the record being written begins in `lines`.
    start: usize,
    /// A batch is handed on when it holds this many bytes.
    batch: usize,
    /// Batches of lines sent and not yet written, and how many make the writing thread behind.
    queued: Arc<AtomicUsize>,
    queue: usize,
    to_writer: SyncSender<Batch>,
    /// Tapes and texts the writing thread is done with, for reuse.
    spare: Receiver<Tape>,
    spare_text: Receiver<String>,
    /// Records of a framed format read in place, handed on as their span of the map (made into
    /// text by the writing thread, which reads them there), not yet sent.
    pending: Option<InPlace>,
    /// The writer of the batches made into text on this thread, between them: its keys stay
    /// escaped (a writer made for each batch spent 7% of a two-thread USVLOG dump escaping them
    /// again, and its new buffer's page faults 2%).
    text: Option<JsonWriter>,
}

/// What [`TwoThreads`] writes records into: a tape for the writing thread, or the text itself.
pub enum Lines {
    Tape(Tape),
    Text(JsonWriter),
}

/// What the reading thread hands to the writing thread, in order.
enum Batch {
    /// Records to replay into text and write out.
    Tape(Tape),
    /// Records already made into text.
    Text(String),
    /// Records to make into text from their place in the map.
    InPlace(InPlace),
    Warn(Fault),
}

impl TwoThreads {
    /// A batch is handed on when it holds this many bytes (several thousand records).
    const BATCH: usize = 1 << 19;
    /// Batches waiting for the writing thread, at most.
    const QUEUE: usize = 4;

    /// Runs `read` with a sink that writes JSON Lines to `out` from a second thread, and waits
    /// for every line to be written and `out` flushed. The error is `read`'s, or the output's
    /// when writing failed (a closed pipe).
    pub fn run<T>(
        out: &mut (dyn Write + Send),
        read: impl FnOnce(&mut TwoThreads) -> Result<T, Error>,
    ) -> Result<T, Error> {
        Self::run_sized(out, Self::BATCH, Self::QUEUE, read)
    }

    /// [`TwoThreads::run`] with batches handed on at `batch` bytes, at most `queue` waiting.
    fn run_sized<T>(
        out: &mut (dyn Write + Send),
        batch: usize,
        queue: usize,
        read: impl FnOnce(&mut TwoThreads) -> Result<T, Error>,
    ) -> Result<T, Error> {
        // Room for a few batches past `queue`: the reading thread goes on with text when the
        // writing thread is behind, and a send that waited for room left it idle (a two-thread
        // USVLOG dump 0.70 s against 0.66 s with the room).
        let (to_writer, batches) = sync_channel::<Batch>(queue + 4);
        let (give_back, spare) = sync_channel::<Tape>(queue + 1);
        // Room for every text that can be sent (the batches' channel and one more each side), so
        // that none is dropped and made again: a new text's pages fault in as they are written
        // (55,000 faults in a two-thread USVLOG dump with room for `queue + 1`, 1,900 now).
        let (give_back_text, spare_text) = sync_channel::<String>(queue + 6);
        let queued = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            let done = Arc::clone(&queued);
            let writer = std::thread::Builder::new()
                .name("logspec-lines".into())
                .spawn_scoped(s, move || write_batches(out, &batches, (&give_back, &give_back_text), &done))
                .map_err(Error::Io)?;
            let lines = Lines::Tape(Tape::new());
            let mut sink = TwoThreads {
                lines,
                start: 0,
                batch,
                queued,
                queue,
                to_writer,
                spare,
                spare_text,
                pending: None,
                text: None,
            };
            let read = read(&mut sink);
            // Every complete record is written, before an error too.
            sink.discard();
            let read = sink.ship().map_err(Error::Io).and(read);
            // The writing thread ends when it has written everything sent.
            drop(sink);
            let written = writer.join().unwrap_or_else(|_| Err(io::Error::other("the output thread stopped")));
            match (read, written) {
                (Ok(_) | Err(Error::Io(_)), Err(e)) => Err(Error::Io(e)),
                (read, _) => read,
            }
        })
    }

    /// Hands the complete records on, and starts the next batch: a tape, or text when the
    /// writing thread is behind.
    fn ship(&mut self) -> io::Result<()> {
        let next = if self.queued.load(Ordering::Acquire) >= self.queue {
            let mut w = self.text.take().unwrap_or_default();
            w.reuse(self.spare_text.try_recv().unwrap_or_else(|_| String::with_capacity(self.batch + self.batch / 4)));
            Lines::Text(w)
        } else {
            Lines::Tape(self.spare.try_recv().unwrap_or_default())
        };
        let full = std::mem::replace(&mut self.lines, next);
        self.start = 0;
        let batch = match full {
            Lines::Tape(t) if t.is_empty() => None,
            Lines::Tape(t) => Some(Batch::Tape(t)),
            Lines::Text(mut w) => {
                let text = w.take();
                self.text = Some(w);
                (!text.is_empty()).then_some(Batch::Text(text))
            }
        };
        // Records handed on in place come before anything written since ([`TwoThreads::in_place`]
        // sends what was written before them first).
        if let Some(p) = self.pending.take() {
            self.send(Batch::InPlace(p))?;
        }
        match batch {
            Some(batch) => self.send(batch),
            None => Ok(()),
        }
    }

    fn send(&mut self, batch: Batch) -> io::Result<()> {
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.to_writer.send(batch).map_err(|_| io::Error::other("the output thread stopped"))
    }
}

/// Records of a framed format read in place, as their span of the map: made into text by the
/// writing thread, which reads them there. Nothing of them crosses from one core's cache to the
/// other's but the map's pages, which both only read (a tape is written by one and read by the
/// other: in some minutes of this machine that made two threads no faster than one, while two
/// one-thread dumps ran at full speed; BENCHMARKS.md).
struct InPlace {
    map: Arc<Mapped>,
    start: usize,
    end: usize,
    count: usize,
    line: InPlaceLines,
}

/// Writes the lines of `count` records of format `F` read whole from the start of `bytes`, as
/// [`dump_framed`] writes them (an [`InPlaceLines`]); stops where the bytes end.
fn dump_in_place<F: FramedFormat>(bytes: &[u8], count: usize, w: &mut JsonWriter) {
    let mut records = crate::runtime::SliceReader::<F>::records(bytes);
    for _ in 0..count {
        let Some(Ok(ev)) = records.next_event() else { return };
        crate::json::framed_event::<F>(w, &ev);
        w.newline();
    }
}

/// The writing thread: each batch's text written out in order, then `out` flushed. A tape is
/// given back once replayed, a text once written; `queued` counts down as each batch of lines
/// is written.
fn write_batches(
    out: &mut (dyn Write + Send),
    batches: &Receiver<Batch>,
    (give_back, give_back_text): (&SyncSender<Tape>, &SyncSender<String>),
    queued: &AtomicUsize,
) -> io::Result<()> {
    let mut w = JsonWriter::new();
    for batch in batches {
        match batch {
            Batch::Tape(mut tape) => {
                w.clear();
                tape.replay(&mut w, JsonWriter::newline);
                out.write_all(w.as_str().as_bytes())?;
                tape.clear();
                let _ = give_back.try_send(tape);
            }
            Batch::Text(text) => {
                out.write_all(text.as_bytes())?;
                let _ = give_back_text.try_send(text);
            }
            Batch::InPlace(p) => {
                // A file cut underneath reads as zeros past the cut (from the fault, in this
                // thread too): the records wholly before the cut are made, checked after as
                // well as before; the reading thread reports the cut.
                let cut = || p.map.truncated().map_or(p.end, |at| p.end.min(usize::try_from(at).unwrap_or(p.end)));
                let lines = |w: &mut JsonWriter, end: usize| {
                    w.clear();
                    (p.line)(p.map.bytes().get(p.start..end.max(p.start)).unwrap_or(&[]), p.count, w);
                };
                let end = cut();
                lines(&mut w, end);
                let after = cut();
                if after < end {
                    lines(&mut w, after);
                }
                out.write_all(w.as_str().as_bytes())?;
            }
            Batch::Warn(warning) => {
                eprintln!("logspec: {warning}");
                continue;
            }
        }
        queued.fetch_sub(1, Ordering::AcqRel);
    }
    out.flush()
}

impl Records for TwoThreads {
    type Writer = Lines;
    fn writer(&mut self) -> &mut Lines {
        &mut self.lines
    }
    fn end_record(&mut self) -> io::Result<()> {
        let size = match &mut self.lines {
            Lines::Tape(t) => {
                t.mark();
                self.start = t.len();
                t.size()
            }
            Lines::Text(w) => {
                w.newline();
                self.start = w.mark();
                self.start
            }
        };
        if size >= self.batch {
            self.ship()?;
        }
        Ok(())
    }
    fn discard(&mut self) {
        match &mut self.lines {
            Lines::Tape(t) => t.truncate(self.start),
            Lines::Text(w) => w.truncate(self.start),
        }
    }
    fn warn(&mut self, warning: Fault) {
        // After the records before it; if the output is gone, the warning goes with it (the
        // read stops at its next record).
        if self.ship().is_ok() {
            let _ = self.to_writer.send(Batch::Warn(warning));
        }
    }
    /// While the writing thread keeps up (the batch is a tape): when it is behind, this thread
    /// writes the text itself.
    fn takes_in_place(&self) -> bool {
        matches!(self.lines, Lines::Tape(_))
    }
    fn in_place(&mut self, map: &Arc<Mapped>, start: usize, end: usize, line: InPlaceLines) -> io::Result<()> {
        // Records taped before it go first (and a span in place, older still, before them).
        if matches!(&self.lines, Lines::Tape(t) if !t.is_empty()) {
            self.ship()?;
        }
        match &mut self.pending {
            Some(p) if p.end == start && Arc::ptr_eq(&p.map, map) => {
                p.end = end;
                p.count += 1;
            }
            _ => {
                if let Some(p) = self.pending.take() {
                    self.send(Batch::InPlace(p))?;
                }
                self.pending = Some(InPlace { map: Arc::clone(map), start, end, count: 1, line });
            }
        }
        // A span of input makes several times its size in text: a quarter of a batch's bytes.
        if self.pending.as_ref().is_some_and(|p| p.end - p.start >= self.batch / 4) {
            self.ship()?;
        }
        Ok(())
    }
}

/// Each call to whichever of the two [`Lines`] holds.
macro_rules! either {
    ($self:ident, $m:ident($($a:expr),*)) => {
        match $self {
            Lines::Tape(t) => t.$m($($a),*),
            Lines::Text(w) => w.$m($($a),*),
        }
    };
}

impl Visitor for Lines {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        either!(self, uint(name, v))
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        either!(self, int(name, v))
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        either!(self, f32(name, v))
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        either!(self, f64(name, v))
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        either!(self, bool(name, v))
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        either!(self, str(name, v))
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        either!(self, bytes(name, v))
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, label: Option<&'static str>) {
        either!(self, enumeration(name, raw, label))
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        either!(self, flags(name, raw))
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        either!(self, begin_struct(name))
    }
    fn end_struct(&mut self) {
        either!(self, end_struct())
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        either!(self, begin_array(name, len))
    }
    fn elements(&self) -> bool {
        either!(self, elements())
    }
    fn end_array(&mut self) {
        either!(self, end_array())
    }
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        either!(self, numbers(name, v))
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, tag: i128) {
        either!(self, begin_variant(name, variant, tag))
    }
    fn end_variant(&mut self) {
        either!(self, end_variant())
    }
}

impl ValueSink for Lines {
    fn null(&mut self, name: Option<&str>) {
        either!(self, null(name))
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
    let map = reader.mapped().cloned();
    loop {
        let in_place = map.is_some() && out.takes_in_place();
        let Some(ev) = reader.next_event() else { break };
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
                if let (true, Some(map)) = (in_place, &map) {
                    // Handed on as its place in the map: the bytes from its start to the next.
                    let start = usize::try_from(raw.offset).unwrap_or(usize::MAX);
                    drop(ev);
                    let end = usize::try_from(reader.position()).unwrap_or(usize::MAX);
                    out.in_place(map, start, end, dump_in_place::<F>).map_err(Error::Io)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines made on two threads are [`JsonLines`]' lines, byte for byte, however the
    /// records fall into batches and whichever thread makes their text: a batch per record
    /// with a queue of none (the writing thread always behind: the reading thread makes all the
    /// text) and of one (both make text), batches of a few records with a long queue (tapes
    /// replayed, or records made from their place in the map, by the writing thread), and the
    /// sizes `logspec dump` uses; each file read through a buffer and mapped.
    #[test]
    fn two_threads_write_what_one_writes() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
        let logs = [
            "usvlog/step.usvlog",
            "rlog/gen_akit_head_r2_alltypes.rlog",
            "wpilog/stuypulse_FRC_20220701_010412.wpilog",
            "carla/878-supp-mat_crash.log",
            "rosbag/test_truncated.bag",
            "ulog/pyulog_sample_log_small.ulg",
            "dataflash/gen_df_corner.bin",
            "ros2/rosbag2_mcap_cdr_test_0.mcap",
        ];
        for (name, map) in logs.iter().flat_map(|n| [(n, false), (n, true)]) {
            // Mapped, a framed format's records go to the writing thread as their place.
            let how = super::super::Open { map, ..super::super::Open::default() };
            let open = || super::super::open(&data.join(name), &how).unwrap();
            let mut one = Vec::new();
            let mut lines = JsonLines::new(&mut one);
            let said = format!("{:?}", open().records(&Options::default(), &mut lines));
            lines.flush().unwrap();
            drop(lines);
            assert!(one.len() > 1000, "{name}: {} bytes", one.len());
            for (batch, queue) in [(1, 0), (1, 1), (300, 2000), (TwoThreads::BATCH, TwoThreads::QUEUE)] {
                let mut two = Vec::new();
                let read =
                    TwoThreads::run_sized(&mut two, batch, queue, |lines| open().records(&Options::default(), lines));
                assert_eq!(format!("{read:?}"), said, "{name}");
                assert!(two == one, "{name} (mapped: {map}): batches of {batch} bytes, a queue of {queue}");
            }
        }
    }
}
