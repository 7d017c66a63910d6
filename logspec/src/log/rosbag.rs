//! `logspec dump` and `logspec info` for ROS1 bags.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::info::Form;
use crate::formats::rosbag::{Bag, BagError, Compression, Connection, Decoders, Message, Order, Registry, Stop, Time};
use crate::json::JsonWriter;
use crate::runtime::Visitor;
use sha2::{Digest, Sha256};

use super::fault::{kind, Fault, FaultKind};
use super::index::{Chunk, Index, Range};
use super::records::Records;
use std::collections::HashMap;
use std::sync::Arc;

use super::scan::{Channel, JsonSchema, Ros1Type, State, ValueType};
use super::Error;
use crate::value::ValueSink;

/// What `dump` takes besides the file.
pub struct DumpOptions<'a> {
    /// Topics (`channels`) and times (seconds since the bag's first message).
    pub select: &'a super::filter::Select,
    pub msg_path: &'a [PathBuf],
    pub file_order: bool,
    /// [`Bag::open_with`].
    pub chunk_budget: u64,
}

/// A bag's bytes: a regular file's map, read in place (uncompressed chunks lent where they
/// lie, compressed ones decompressed from it), or the file read through a buffer.
pub type Input = Box<dyn crate::formats::rosbag::Source>;

/// A mapped bag ([`super::input::Mapped`]) as the bag reader's [`Source`](crate::formats::rosbag::Source):
/// the whole file lent from the map (a walk reads chunks in place there, moving the map's window
/// as it reaches each), while the records around the chunks (header, index, a recovery scan) and
/// chunks read out of file order are read from the file through a buffer, so that memory stays
/// flat whatever the order.
struct MappedBag {
    map: Arc<super::input::Mapped>,
    file: Buffered,
}

impl std::io::Read for MappedBag {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buf)
    }
}

impl std::io::Seek for MappedBag {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(to)
    }
}

impl crate::formats::rosbag::Source for MappedBag {
    fn lend(&self) -> Option<&[u8]> {
        Some(self.map.bytes())
    }
    fn moved(&self, at: u64) {
        self.map.advance(usize::try_from(at).unwrap_or(usize::MAX));
    }
}

/// A bag file read through a buffer that a seek to a place inside what it holds keeps. The bag
/// reader seeks to every record it reads (each chunk's header, then its data length right after
/// it), which a `BufReader` answers by refilling its whole buffer each time.
struct Buffered {
    file: std::io::BufReader<std::fs::File>,
    /// The position in the file (what the reader has been given up to).
    pos: u64,
}

impl Buffered {
    fn new(file: std::fs::File, capacity: usize) -> Buffered {
        Buffered { file: std::io::BufReader::with_capacity(capacity, file), pos: 0 }
    }
}

impl std::io::Read for Buffered {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Buffered {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        use std::io::SeekFrom;
        let invalid = |what| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
        let target = match to {
            SeekFrom::Start(at) => at,
            SeekFrom::Current(by) => {
                self.pos.checked_add_signed(by).ok_or_else(|| invalid("seek outside the file's offsets"))?
            }
            SeekFrom::End(_) => {
                self.pos = self.file.seek(to)?;
                return Ok(self.pos);
            }
        };
        // `seek_relative` keeps the buffer when the target is inside it.
        let by = i64::try_from(i128::from(target) - i128::from(self.pos))
            .map_err(|_| invalid("seek further than an i64 offset"))?;
        self.file.seek_relative(by)?;
        self.pos = target;
        Ok(target)
    }
}

impl crate::formats::rosbag::Source for Buffered {}

/// Opens the bag at `path` (a bag's index is at its end, so a stream cannot be read), its chunks
/// read in place from `input`'s map when it has one ([`MappedBag`]), else through a buffer; the
/// second value says when its index was missing or unusable (the bag was scanned
/// instead).
pub fn open_noting(
    input: super::input::Source,
    path: &Path,
    shown: &str,
    chunk_budget: u64,
) -> Result<(Bag<Input>, Option<String>), String> {
    if path.as_os_str() == "-" {
        return Err(format!(
            "{shown}: a bag must be a file (its index is at the end); standard input is not supported"
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{shown}: cannot open: {e}"))?;
    let src: Input = match input {
        // Only records' headers and the index are read from the file (the chunks are lent from
        // the map), each after a seek: a small buffer.
        super::input::Source::Mapped(map) => Box::new(MappedBag { map, file: Buffered::new(f, 1 << 13) }),
        super::input::Source::Stream(_) => Box::new(Buffered::new(f, 1 << 16)),
    };
    let bag = Bag::open_with(src, chunk_budget).map_err(|e| format!("{shown}: {e}"))?;
    let notice = if let Some(e) = &bag.index_problem {
        Some(format!("{shown}: the index is unusable ({e}); scanned the whole file instead"))
    } else if !bag.indexed {
        Some(format!("{shown}: the bag has no index (index_pos = 0); scanned the whole file (like `rosbag reindex`)"))
    } else if bag.duplicate_chunk_refs > 0 {
        Some(format!(
            "{shown}: the index lists {} chunk(s) more than once ({} duplicate reference(s)); each chunk is read once",
            bag.chunks.len(),
            bag.duplicate_chunk_refs
        ))
    } else {
        None
    };
    Ok((bag, notice))
}

/// The `.msg` registry of `--msg-path`, if any.
fn registry(msg_path: &[PathBuf]) -> Result<Option<Registry>, String> {
    if msg_path.is_empty() {
        return Ok(None);
    }
    Registry::from_dirs(msg_path)
        .map(Some)
        .map_err(|errs| errs.iter().map(|e| e.render()).collect::<String>().trim_end().to_string())
}

/// The connections on the selected topics (all without a filter; a trailing `*` matches a
/// prefix); a topic that matches nothing is an error that lists the bag's topics.
fn select(bag: &Bag<impl std::io::Read>, topics: &[String], shown: &str) -> Result<Option<BTreeSet<u32>>, String> {
    if topics.is_empty() {
        return Ok(None);
    }
    let filter = super::filter::Select { channels: topics.to_vec(), ..Default::default() };
    let all: BTreeSet<&str> = bag.connections.values().map(|c| c.topic.as_str()).collect();
    let list: Vec<&str> = all.into_iter().collect();
    super::filter::no_match(&filter, &list, shown, "topic", "the bag's topics")?;
    Ok(Some(bag.connections.values().filter(|c| filter.wants_channel(&c.topic)).map(|c| c.id).collect()))
}

/// JSON Lines: connection lines, then one line per message in time order (or file order).
pub fn dump(
    input: super::input::Source,
    path: &Path,
    shown: &str,
    opts: &DumpOptions<'_>,
    out: &mut impl Records,
) -> Result<(), Error> {
    let (mut bag, notice) = open_noting(input, path, shown, opts.chunk_budget).map_err(Error::Input)?;
    if let Some(n) = notice {
        out.warn(Fault::new(FaultKind::Decode, shown, n));
    }
    let registry = registry(opts.msg_path).map_err(Error::Input)?;
    let selected = select(&bag, &opts.select.channels, shown).map_err(|m| Error::filter(shown, m))?;
    let origin = start(&bag).map_or(0, Time::as_nanos);
    let decoders = Decoders::new(shown, &bag.connections, registry.as_ref());
    for c in bag.connections.values().filter(|c| selected.as_ref().is_none_or(|s| s.contains(&c.id))) {
        let t = decoders.get(c.id).expect("a type per connection");
        if let Some(p) = &t.problem {
            out.warn(Fault::new(
                FaultKind::Decode,
                shown,
                format!("{shown}: connection {} ({}, {}): {p}", c.id, c.topic, c.ty),
            ));
        }
        connection_json(out.writer(), c, t.md5_ok);
        out.end_record().map_err(Error::Io)?;
    }
    let order = if opts.file_order { Order::File } else { Order::Time };
    let conns = bag.connections.clone();
    let mut faults = super::fault::Faults::default();
    // Topics were checked above; the tally tells an empty time window.
    let mut tally = super::filter::Tally::default();
    let walked = bag.for_each_message(order, selected.as_ref(), |m| -> Result<(), Walk<std::io::Error>> {
        let t = m.time.as_nanos().saturating_sub(origin);
        let kept = opts.select.wants_time(t);
        tally.sample(Some(t), kept);
        if !kept {
            return Ok(());
        }
        let Some(c) = conns.get(&m.conn) else {
            let fault = || Fault::at(shown, m.chunk_pos, None, unknown_connection(shown, &m));
            super::records::skip(out, &mut faults, kind::UNKNOWN_CONNECTION, fault);
            return Ok(());
        };
        let w = out.writer();
        w.begin_struct(None);
        w.str(Some("kind"), "message");
        w.uint(Some("conn"), u64::from(m.conn));
        w.str(Some("topic"), &c.topic);
        w.str(Some("type"), &c.ty);
        time_json(w, Some("time"), m.time);
        match decoders.get(m.conn).and_then(|t| t.decoder.as_ref()) {
            // Decoded as it is written: on a fault the record is discarded.
            Some(d) => match d.visit_as(m.data, Some("data"), w) {
                Ok(()) => {}
                Err(e) => {
                    out.discard();
                    let fault = || Fault::at(shown, m.chunk_pos, None, undecodable(shown, &m, c, &e));
                    super::records::skip(out, &mut faults, kind::UNDECODABLE_MESSAGE, fault);
                    return Ok(());
                }
            },
            None => w.null(Some("data")),
        }
        w.end_struct();
        out.end_record().map_err(Walk::Out)
    });
    if let Some(u) = &bag.unmerged {
        out.warn(Fault::new(FaultKind::Decode, shown, format!("{shown}: {u}")));
    }
    match walked {
        Ok(()) => {}
        Err(Walk::Out(e)) => return Err(Error::Io(e)),
        Err(Walk::Bag(e)) => return Err(Error::at(Fault::read(shown, &e))),
        Err(Walk::Stop(stop)) => return Err(Error::at(stop_fault(&stop, &bag, shown))),
    }
    super::records::skipped(out, &faults, shown, "message(s) could not be decoded")?;
    let time_only = super::filter::Select { channels: Vec::new(), ..opts.select.clone() };
    tally.check(&time_only, shown).map_err(|m| Error::filter(shown, m))?;
    Ok(())
}

/// Why a walk over a bag's messages stopped: the consumer's error, a bad record in a chunk, or
/// where the bag's scan stopped (after every message before it: [`stop_fault`]).
pub enum Walk<E> {
    Out(E),
    Bag(BagError),
    Stop(Stop),
}

impl<E> From<BagError> for Walk<E> {
    fn from(e: BagError) -> Self {
        Walk::Bag(e)
    }
}

impl<E> From<Stop> for Walk<E> {
    fn from(stop: Stop) -> Self {
        Walk::Stop(stop)
    }
}

/// A message whose connection the bag never defines (it is skipped).
pub fn unknown_connection(shown: &str, m: &Message<'_>) -> String {
    format!(
        "{shown}: byte {} (chunk), record at byte {} of its data: message of connection {}, which the bag never defines; skipped",
        m.chunk_pos, m.offset, m.conn
    )
}

/// A message that does not decode with its connection's definition (it is skipped).
pub fn undecodable(shown: &str, m: &Message<'_>, c: &Connection, e: &dyn std::fmt::Display) -> String {
    format!(
        "{shown}: byte {} (chunk), record at byte {} of its data: message on {} ({}) at {}.{:09}: {e}; skipped",
        m.chunk_pos, m.offset, c.topic, c.ty, m.time.sec, m.time.nsec
    )
}

/// Where and why reading `bag` stopped early (the [`Stop`] its walk returned): everything
/// before was delivered.
pub fn stop_fault<R>(stop: &Stop, bag: &Bag<R>, shown: &str) -> Fault {
    let what = if stop.truncated { "the file is truncated" } else { "a bad record" };
    let message = format!(
        "{shown}: {what}: {}; every message of the {} complete chunk(s) before it was recovered",
        stop.error,
        bag.chunks.len()
    );
    Fault::at(shown, stop.error.offset, None, message)
}

fn connection_json(w: &mut (impl ValueSink + ?Sized), c: &Connection, md5_ok: bool) {
    w.begin_struct(None);
    w.str(Some("kind"), "connection");
    w.uint(Some("conn"), u64::from(c.id));
    w.str(Some("topic"), &c.topic);
    w.str(Some("type"), &c.ty);
    w.str(Some("md5sum"), &c.md5sum);
    w.bool(Some("md5_ok"), md5_ok);
    match &c.callerid {
        Some(s) => w.str(Some("callerid"), s),
        None => w.null(Some("callerid")),
    }
    match c.latching.as_deref().map(|l| (l, l.parse::<i64>())) {
        Some((_, Ok(n))) => w.int(Some("latching"), n),
        Some((l, Err(_))) => w.str(Some("latching"), l),
        None => w.null(Some("latching")),
    }
    let digest = Sha256::digest(c.message_definition.as_bytes());
    let mut hex = String::with_capacity(64);
    crate::json::hex(&mut hex, &digest);
    w.str(Some("msgdef_sha256"), &hex);
    w.end_struct();
}

fn time_json(w: &mut (impl ValueSink + ?Sized), name: Option<&str>, t: Time) {
    w.begin_struct(name);
    w.uint(Some("sec"), u64::from(t.sec));
    w.uint(Some("nsec"), u64::from(t.nsec));
    w.end_struct();
}

/// Facts about a bag, from its index (or its scan): no message is decompressed.
pub struct Summary {
    pub bag: Bag<Input>,
    pub decoders: Decoders,
    pub topics: BTreeMap<String, (u64, BTreeSet<String>, usize)>,
    pub messages: u64,
    pub start: Option<Time>,
    pub end: Option<Time>,
}

/// The summary of a bag. A note on how it was read (its index missing or unusable, so the bag
/// was scanned: [`open_noting`]) is pushed to `notes` as soon as the bag is open, whatever
/// comes after: what `info` prints on standard error and the Python package gives as a warning.
pub fn summarise(
    input: super::input::Source,
    path: &Path,
    shown: &str,
    msg_path: &[PathBuf],
    chunk_budget: u64,
    notes: &mut Vec<String>,
) -> Result<Summary, Error> {
    let (bag, notice) = open_noting(input, path, shown, chunk_budget).map_err(Error::Input)?;
    notes.extend(notice);
    let registry = registry(msg_path).map_err(Error::Input)?;
    let decoders = Decoders::new(shown, &bag.connections, registry.as_ref());
    let mut per_conn: BTreeMap<u32, u64> = BTreeMap::new();
    for c in &bag.chunks {
        for (id, n) in &c.counts {
            *per_conn.entry(*id).or_default() += u64::from(*n);
        }
    }
    let (start, end) = span(&bag);
    let mut topics: BTreeMap<String, (u64, BTreeSet<String>, usize)> = BTreeMap::new();
    for c in bag.connections.values() {
        let e = topics.entry(c.topic.clone()).or_default();
        e.0 += per_conn.get(&c.id).copied().unwrap_or(0);
        e.1.insert(c.ty.clone());
        e.2 += 1;
    }
    let messages = per_conn.values().sum();
    Ok(Summary { bag, decoders, topics, messages, start, end })
}

/// The time of the bag's first and last message, from the chunk infos.
pub fn span<R>(bag: &Bag<R>) -> (Option<Time>, Option<Time>) {
    let (mut start, mut end) = (None::<Time>, None::<Time>);
    for c in bag.chunks.iter().filter(|c| !c.counts.is_empty()) {
        start = Some(start.map_or(c.start, |s| s.min(c.start)));
        end = Some(end.map_or(c.end, |e| e.max(c.end)));
    }
    (start, end)
}

/// The time of the bag's first message, which the time filters count from.
pub fn start<R>(bag: &Bag<R>) -> Option<Time> {
    span(bag).0
}

fn compressions(s: &Summary) -> BTreeMap<Compression, usize> {
    let mut m = BTreeMap::new();
    for c in &s.bag.chunks {
        *m.entry(c.compression).or_default() += 1;
    }
    m
}

fn md5_all_ok(s: &Summary) -> bool {
    s.decoders.conns.values().all(|t| t.md5_ok)
}

/// `rosbag info`-like text.
pub fn text(s: &Summary, shown: &str) -> String {
    let b = &s.bag;
    let mut t = String::new();
    let mut line = |k: &str, v: String| t.push_str(&format!("{k:<13}{v}\n"));
    line("file:", shown.to_string());
    line("format:", "ROS bag 2.0".into());
    line(
        "index:",
        if b.indexed && b.duplicate_chunk_refs > 0 {
            format!(
                "yes (at byte {}); {} duplicate chunk reference(s) in it ignored",
                b.index_pos, b.duplicate_chunk_refs
            )
        } else if b.indexed {
            format!("yes (at byte {})", b.index_pos)
        } else {
            format!("none used (index_pos {}); connections and chunks found by scanning", b.index_pos)
        },
    );
    if let (Some(a), Some(z)) = (s.start, s.end) {
        let d = z.as_secs_f64() - a.as_secs_f64();
        // Unix times in seconds, as every format's `time:` line; start and end also in UTC.
        line("time:", format!("{:.3} .. {:.3} s ({d:.3} s)", a.as_secs_f64(), z.as_secs_f64()));
        line("start:", format!("{} ({:.2})", utc(a), a.as_secs_f64()));
        line("end:", format!("{} ({:.2})", utc(z), z.as_secs_f64()));
    }
    line("size:", human(b.len));
    line("messages:", s.messages.to_string());
    let comp = compressions(s);
    let n = b.chunks.len();
    let mut parts: Vec<String> = comp.iter().map(|(c, k)| format!("{} [{k}/{n} chunks]", c.as_str())).collect();
    if parts.is_empty() {
        parts.push("none [0 chunks]".into());
    }
    let stored: u64 = b.chunks.iter().map(|c| c.stored).sum();
    let raw: u64 = b.chunks.iter().map(|c| u64::from(c.size)).sum();
    if comp.keys().any(|c| *c != Compression::None) && raw > 0 {
        parts.push(format!("({:.1}% of {})", 100.0 * stored as f64 / raw as f64, human(raw)));
    }
    line("compression:", parts.join(", "));
    let mut types: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in b.connections.values() {
        types.entry(&c.ty).or_default().insert(&c.md5sum);
    }
    let width = types.keys().map(|k| k.len()).max().unwrap_or(0);
    let mut first = true;
    for (ty, md5s) in &types {
        for m in md5s {
            line(if first { "types:" } else { "" }, format!("{ty:<width$} [{m}]"));
            first = false;
        }
    }
    let tw = s.topics.keys().map(|k| k.len()).max().unwrap_or(0);
    let cw = s.topics.values().map(|v| v.0.to_string().len()).max().unwrap_or(0);
    for (i, (topic, (count, tys, conns))) in s.topics.iter().enumerate() {
        let tys: Vec<&str> = tys.iter().map(String::as_str).collect();
        let extra = if *conns > 1 { format!(" ({conns} connections)") } else { String::new() };
        line(
            if i == 0 { "topics:" } else { "" },
            format!("{topic:<tw$} {count:>cw$} msgs : {}{extra}", tys.join(", ")),
        );
    }
    if md5_all_ok(s) {
        line("md5:", "every connection's md5sum matches its definition".into());
    }
    for (id, ct) in &s.decoders.conns {
        if let Some(p) = &ct.problem {
            line("md5:", format!("connection {id}: {}", p.lines().next().unwrap_or("")));
        }
    }
    if let Some(stop) = &b.stop {
        let what = if stop.truncated { "truncated" } else { "stopped" };
        line("integrity:", format!("{what} at {}", stop.error));
    }
    if let Some(e) = b.refused.error() {
        line(
            "integrity:",
            format!("{} chunk(s) refused by the scan, their messages not counted: {e}", b.refused.count),
        );
    }
    // From the index: chunks that reading will refuse (none of them is decompressed here).
    let over: Vec<&crate::formats::rosbag::ChunkInfo> =
        b.chunks.iter().filter(|c| u64::from(c.size) > b.chunk_budget && !c.counts.is_empty()).collect();
    if let Some(largest) = over.iter().max_by_key(|c| c.size) {
        line(
            "integrity:",
            format!(
                "{} chunk(s) declare more than the chunk budget of {} uncompressed (the largest {} at byte {}): \
                 reading them is refused; {}",
                over.len(),
                crate::formats::rosbag::chunk_mib(b.chunk_budget),
                crate::formats::rosbag::chunk_mib(u64::from(largest.size)),
                largest.pos,
                crate::formats::rosbag::RAISE_BUDGET
            ),
        );
    }
    t
}

/// The facts of `*.expected.summary.json`, and more.
pub fn json(s: &Summary, shown: &str) -> String {
    let b = &s.bag;
    let mut w = JsonWriter::new();
    w.begin_object(None);
    w.str(Some("file"), shown);
    w.str(Some("format"), "rosbag");
    w.str(Some("version"), "2.0");
    w.uint(Some("index_pos"), b.index_pos);
    w.bool(Some("indexed"), b.indexed);
    w.uint(Some("chunks"), b.chunks.len() as u64);
    w.begin_array(Some("compression"), 0);
    for c in compressions(s).keys() {
        w.str(None, c.as_str());
    }
    w.end_array();
    w.bool(Some("truncated"), b.stop.as_ref().is_some_and(|x| x.truncated));
    match &b.stop {
        Some(x) => w.str(Some("stop"), &x.error.to_string()),
        None => w.null(Some("stop")),
    }
    w.uint(Some("connections"), b.connections.len() as u64);
    w.bool(Some("md5_all_ok"), md5_all_ok(s));
    w.uint(Some("messages"), s.messages);
    // Topics with messages, as the reference summaries count them.
    w.begin_object(Some("topics"));
    for (topic, (count, _, _)) in s.topics.iter().filter(|t| t.1 .0 > 0) {
        w.uint(Some(topic), *count);
    }
    w.end_object();
    // One member per type (connections of one type usually share it; were the md5sums to
    // differ, the last connection's is kept, as the reference summaries do).
    let mut types: Vec<(&str, &str)> = Vec::new();
    for c in b.connections.values() {
        match types.iter_mut().find(|(t, _)| *t == c.ty) {
            Some(e) => e.1 = &c.md5sum,
            None => types.push((&c.ty, &c.md5sum)),
        }
    }
    w.begin_object(Some("types"));
    for (ty, md5) in types {
        w.str(Some(ty), md5);
    }
    w.end_object();
    match (s.start, s.end) {
        (Some(a), Some(z)) => {
            time_json(&mut w, Some("start"), a);
            time_json(&mut w, Some("end"), z);
            w.f64(Some("duration"), z.as_secs_f64() - a.as_secs_f64());
        }
        _ => {
            w.null(Some("start"));
            w.null(Some("end"));
            w.null(Some("duration"));
        }
    }
    w.uint(Some("size"), b.len);
    w.end_object();
    let mut out = w.take();
    out.push('\n');
    out
}

/// Whether the bag read cleanly (every connection's md5 included, no chunk refused by the scan
/// or over the chunk budget).
pub fn ok(s: &Summary) -> bool {
    let over = s.bag.chunks.iter().any(|c| u64::from(c.size) > s.bag.chunk_budget && !c.counts.is_empty());
    s.bag.stop.is_none() && s.bag.refused.count == 0 && !over && md5_all_ok(s)
}

fn human(n: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// `Nov 14 2023 22:13:20.00 UTC`.
fn utc(t: Time) -> String {
    let days = i64::from(t.sec / 86_400);
    let secs = t.sec % 86_400;
    let (year, month, day) = super::info::civil_from_days(days);
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{} {day:02} {year} {:02}:{:02}:{:02}.{:02} UTC",
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        t.nsec / 10_000_000
    )
}

/// ROS bags: one channel per topic, in time order (connections on one topic are one channel
/// when they agree on type, definition, caller id and latching, and one channel each otherwise,
/// all named by the topic); times are the messages' record times (Unix time), and the time
/// filters count from the bag's first message. A sink may take the messages' bytes as they are
/// ([`Samples::raw`]); others get them decoded from the connections' embedded definitions, each
/// message checked whole and then handed as a visit of its decode plan ([`Samples::visit`]), so
/// that no value is built.
fn read_rosbag(
    input: super::input::Source,
    file: &Path,
    path: &str,
    chunk_budget: u64,
    range: Option<Range>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    use super::rosbag::Walk;
    use crate::formats::rosbag::{Connection, Decoders, Order, Time};
    let (mut bag, notice) = super::rosbag::open_noting(input, file, path, chunk_budget).map_err(Error::Input)?;
    state.outcome.warnings.extend(notice);
    let decoders = Decoders::new(path, &bag.connections, None);
    for (id, t) in &decoders.conns {
        if let Some(p) = &t.problem {
            let c = &bag.connections[id];
            state.outcome.warnings.push(format!("{path}: connection {id} ({}, {}): {p}", c.topic, c.ty));
        }
    }
    let same = |a: &Connection, b: &Connection| {
        (&a.ty, &a.md5sum, &a.message_definition, &a.callerid, &a.latching)
            == (&b.ty, &b.md5sum, &b.message_definition, &b.callerid, &b.latching)
    };
    let mut first: HashMap<&str, &Connection> = HashMap::new();
    let mut mixed: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for c in bag.connections.values() {
        match first.get(c.topic.as_str()) {
            Some(f) if !same(f, c) => {
                mixed.insert(&c.topic);
            }
            Some(_) => {}
            None => {
                first.insert(&c.topic, c);
            }
        }
    }
    let names: BTreeMap<u32, String> = bag
        .connections
        .values()
        .map(|c| {
            (c.id, if mixed.contains(c.topic.as_str()) { format!("{}#{}", c.topic, c.id) } else { c.topic.clone() })
        })
        .collect();
    let wanted: std::collections::BTreeSet<u32> =
        bag.connections.values().filter(|c| state.select.wants_channel(&c.topic)).map(|c| c.id).collect();
    // Topics of connections that are not read are still channels of the log.
    for c in bag.connections.values() {
        state.tally.channel(&c.topic);
    }
    state.origin_ns = super::rosbag::start(&bag).map_or(0, Time::as_nanos);
    state.sink.origin(state.origin_ns);
    // A time window reads only the chunks whose time spans (the bag's chunk infos, or what the
    // recovery scan saw) meet it; when none does, every chunk is read, so that the empty window
    // is reported as before.
    if state.select.since.is_some() || state.select.until.is_some() {
        let (origin, select) = (state.origin_ns, state.select);
        let meets = |c: &crate::formats::rosbag::ChunkInfo| {
            let a = c.start.as_nanos().saturating_sub(origin) as f64 / 1e9;
            let b = c.end.as_nanos().saturating_sub(origin) as f64 / 1e9;
            select.since.is_none_or(|s| b >= s) && select.until.is_none_or(|u| a <= u)
        };
        if bag.chunks.iter().any(meets) {
            bag.chunks.retain(meets);
        }
    }
    // A part of the bag ([`index`]): the chunks that start in it.
    if let Some(r) = range {
        bag.chunks.retain(|c| (r.start..r.end).contains(&c.pos));
    }
    // Each connection's route, found by one lookup per message: its channel key and decoder.
    let conns = bag.connections.clone();
    let routes: BTreeMap<u32, (&Connection, &str, Option<&crate::formats::rosbag::MsgDecoder>)> = conns
        .values()
        .filter_map(|c| {
            let decoder = decoders.get(c.id).and_then(|t| t.decoder.as_deref());
            Some((c.id, (c, names.get(&c.id)?.as_str(), decoder)))
        })
        .collect();
    // Every connection wanted: the walk filters none.
    let filter = (wanted.len() < bag.connections.len()).then_some(&wanted);
    let walked = bag.for_each_message(Order::Time, filter, |m| -> Result<(), Walk<Error>> {
        let Some(&(c, key, decoder)) = routes.get(&m.conn) else {
            // A connection the bag never defines is no channel of the log: its messages are
            // skipped and said (as the dump says them); the walk's filter leaves them out when
            // channels are selected.
            state.warn(kind::UNKNOWN_CONNECTION, || super::rosbag::unknown_connection(path, &m));
            return Ok(());
        };
        let t_ns = m.time.as_nanos();
        let describe = || ros_channel(c, decoder);
        // Found by the connection id once the channel is settled (no name hashed).
        let Some(id) = state.wanted_tag(u64::from(m.conn), key, t_ns, describe).map_err(Walk::Out)? else {
            return Ok(());
        };
        if !state.sink.raw(id, t_ns, m.data).map_err(Walk::Out)? {
            let Some(d) = decoder else {
                // Reported once above, with the connection.
                return Ok(());
            };
            if let Err(e) = state.deliver_message(id, t_ns, d, m.data).map_err(Walk::Out)? {
                state.warn(kind::UNDECODABLE_MESSAGE, || super::rosbag::undecodable(path, &m, c, &e));
            }
            return Ok(());
        }
        state.outcome.samples += 1;
        Ok(())
    });
    if let Some(u) = &bag.unmerged {
        state.outcome.warnings.push(format!("{path}: {u}"));
    }
    match walked {
        Ok(()) => {}
        Err(Walk::Out(e)) => return Err(e),
        Err(Walk::Bag(e)) => state.outcome.fail(super::fault::Fault::read(path, &e)),
        Err(Walk::Stop(stop)) => state.outcome.fail(super::rosbag::stop_fault(&stop, &bag, path)),
    }
    Ok(())
}

/// The channel of a ROS connection: its JSON Schema from the compiled definition (an open object
/// when the definition did not compile), and the type for passing messages through.
fn ros_channel(
    c: &crate::formats::rosbag::Connection,
    decoder: Option<&crate::formats::rosbag::MsgDecoder>,
) -> Channel {
    let ty = decoder.and_then(|d| {
        let id = *d.lowered.ids.get(&d.name)?;
        Some(ValueType { schema: Arc::new(d.lowered.schema.clone()), id })
    });
    let json_schema = match &ty {
        Some(t) => JsonSchema::Struct { ty: t.clone(), enum_names: false, list: None },
        None => JsonSchema::Text("{\"type\":\"object\"}".to_string()),
    };
    Channel {
        name: c.topic.clone(),
        schema_name: c.ty.clone(),
        json_schema,
        units: BTreeMap::new(),
        ros1: Some(Ros1Type {
            ty: c.ty.clone(),
            md5sum: c.md5sum.clone(),
            definition: c.message_definition.clone(),
            encoding: "ros1",
            schema_encoding: "ros1msg",
            callerid: c.callerid.clone(),
            latching: c.latching.clone(),
        }),
        ty,
        group: None,
    }
}

/// The samples of a ROS bag.
pub(super) fn scan(
    input: super::input::Source,
    file: &Path,
    path: &str,
    chunk_budget: u64,
    range: Option<Range>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    read_rosbag(input, file, path, chunk_budget, range, state)
}

/// The time index a ROS bag carries: the chunk infos of its index (none for a bag without a
/// usable index, which is read by scanning it), each chunk's bytes up to the next chunk or the
/// index, their times since the bag's first message.
pub(super) fn index(file: &Path, chunk_budget: u64) -> Option<Index> {
    let f = std::fs::File::open(file).ok()?;
    // Only the records' headers and the index are read, each after a seek: a small buffer.
    let src: Input = Box::new(Buffered::new(f, 1 << 13));
    let bag = Bag::open_with(src, chunk_budget).ok()?;
    if !bag.indexed {
        return None;
    }
    let origin_ns = start(&bag).map_or(0, Time::as_nanos);
    let mut chunks = Vec::with_capacity(bag.chunks.len());
    let mut first_record = 0;
    for (i, c) in bag.chunks.iter().enumerate() {
        let next = bag.chunks.get(i + 1).map_or(bag.index_pos, |n| n.pos);
        if next <= c.pos {
            return None;
        }
        let records: u64 = c.counts.values().map(|n| u64::from(*n)).sum();
        chunks.push(Chunk {
            offset: c.pos,
            length: next - c.pos,
            first_record,
            records,
            t_min_ns: c.start.as_nanos().saturating_sub(origin_ns),
            t_max_ns: c.end.as_nanos().saturating_sub(origin_ns),
        });
        first_record += records;
    }
    (!chunks.is_empty()).then_some(Index { origin_ns, chunks, states: Vec::new(), schemas: Vec::new() })
}

/// The summary of a ROS bag (`notes`: how it was read, when that does not make it fail).
pub(super) fn info(
    input: super::input::Source,
    file: &Path,
    path: &str,
    msg_path: &[PathBuf],
    chunk_budget: u64,
    notes: &mut Vec<String>,
) -> Result<super::Info, Error> {
    let s = summarise(input, file, path, msg_path, chunk_budget, notes)?;
    let path = path.to_string();
    Ok(super::Info::new(ok(&s), move |form| match form {
        Form::Text => text(&s, &path),
        Form::Json => json(&s, &path),
    }))
}
