//! A split rosbag2 bag: the storage files its `metadata.yaml` lists (`.db3` or `.mcap`, told
//! apart by their first bytes), read as one log.
//!
//! - **Ids.** A topic is one channel across the files, known by its topic, type and encoding: it
//!   keeps the id the first file that has it gives it, unless another topic took that id first,
//!   when it gets the lowest free one. Schemas the same, by name, encoding and text.
//! - **Order.** Each file gives its messages in log-time order (the MCAP reader's order, or
//!   SQLite's); the files are merged by log time, ties in the files' order. A file is read on a
//!   thread of its own, handing its events through a small bounded channel, and started only when
//!   the merge reaches its first message's time (the files of a bag split by size follow each
//!   other in time, so one or two are open at once; files that overlap are merged).
//! - **Damage.** A file that does not open is refused with its name. A file whose reading ends
//!   early (cut, or a SQLite error) costs only its own later messages: the others are read to
//!   their end, and the fault is returned at the end, naming the file.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};

use crate::formats::mcap::{self as container, Channel as McapChannel, Event, Message, ReadError, Schema, Stats, Want};
use crate::formats::rosbag2::{self, Listing};

use super::super::fault::{Fault, FaultKind};
use super::super::input::{Mapped, Source};
use super::super::Error;
use super::Store;

/// One storage file of a split bag.
pub(crate) struct Part {
    /// Its name as `metadata.yaml` lists it.
    pub name: String,
    pub store: Store,
}

/// A split bag, open: its files, and the ids of the schemas and channels known before reading.
pub(crate) struct Split {
    pub listing: Listing,
    pub parts: Vec<Part>,
    pub schemas: Vec<Schema>,
    pub channels: Vec<McapChannel>,
    pub start: Option<u64>,
    /// Messages per channel (the bag's ids), the files' counts summed; `None` when one does
    /// not say.
    pub counts: Option<HashMap<u16, u64>>,
    ids: Ids,
}

/// The bag's ids of the files' schemas and channels.
#[derive(Clone, Default)]
struct Ids {
    schema_of: HashMap<(String, String, Vec<u8>), u16>,
    schemas_used: HashSet<u16>,
    chan_of: HashMap<(String, String, String), u16>,
    chans_used: HashSet<u16>,
    /// Per file: its schema and channel ids to the bag's, and its schemas by its ids.
    file_schema: Vec<HashMap<u16, (u16, String)>>,
    file_chan: Vec<HashMap<u16, u16>>,
}

/// The id `wanted`, when free; the lowest free one after 0 otherwise.
fn free(used: &mut HashSet<u16>, wanted: u16) -> u16 {
    let id = if wanted != 0 && !used.contains(&wanted) {
        wanted
    } else {
        (1..=u16::MAX).find(|i| !used.contains(i)).unwrap_or(u16::MAX)
    };
    used.insert(id);
    id
}

impl Ids {
    fn new(files: usize) -> Ids {
        Ids { file_schema: vec![HashMap::new(); files], file_chan: vec![HashMap::new(); files], ..Ids::default() }
    }

    /// The bag's copy of file `f`'s schema, and whether the bag meets it for the first time.
    fn schema(&mut self, f: usize, s: &Schema) -> (Schema, bool) {
        let key = (s.name.clone(), s.encoding.clone(), s.data.clone());
        let (id, new) = match self.schema_of.get(&key) {
            Some(id) => (*id, false),
            None => {
                let id = free(&mut self.schemas_used, s.id);
                self.schema_of.insert(key, id);
                (id, true)
            }
        };
        self.file_schema[f].insert(s.id, (id, s.name.clone()));
        (Schema { id, ..s.clone() }, new)
    }

    /// The bag's copy of file `f`'s channel, and whether the bag meets it for the first time.
    fn channel(&mut self, f: usize, c: &McapChannel) -> (McapChannel, bool) {
        let (schema_id, ty) = self.file_schema[f].get(&c.schema_id).cloned().unwrap_or((0, String::new()));
        let key = (c.topic.clone(), ty, c.message_encoding.clone());
        let (id, new) = match self.chan_of.get(&key) {
            Some(id) => (*id, false),
            None => {
                let id = free(&mut self.chans_used, c.id);
                self.chan_of.insert(key, id);
                (id, true)
            }
        };
        self.file_chan[f].insert(c.id, id);
        (McapChannel { id, schema_id, ..c.clone() }, new)
    }

    /// The bag's id of file `f`'s channel `id` (one no channel has, for a channel the file never
    /// defined, so that its messages are reported as such).
    fn message_channel(&mut self, f: usize, id: u16) -> u16 {
        if let Some(g) = self.file_chan[f].get(&id) {
            return *g;
        }
        let g = free(&mut self.chans_used, 0);
        self.file_chan[f].insert(id, g);
        g
    }
}

/// What a file's thread hands on: its events, owned, then how its reading ended.
enum Owned<'s> {
    Schema(Schema),
    Channel(McapChannel),
    Message(Message<'s>),
    Metadata { name: String, metadata: std::collections::BTreeMap<String, String> },
    Skipped { offset: u64, why: String },
    End(Result<Stats, (Stats, ReadError)>),
}

impl Split {
    /// Opens the bag at `file` (its directory or its `metadata.yaml`): every storage file it
    /// lists, by their first bytes.
    pub(crate) fn open(file: &Path, path: &str) -> Result<Split, Error> {
        let fail = |m: String| Error::at(Fault::new(FaultKind::Format, path, m));
        let listing = rosbag2::listing(file, path).map_err(fail)?;
        let mut parts = Vec::with_capacity(listing.files.len());
        for name in &listing.files {
            let p = listing.dir.join(name);
            let shown = p.display().to_string();
            let mut head = [0u8; 16];
            let f =
                std::fs::File::open(&p).map_err(|e| fail(format!("{path}: storage file {shown}: cannot open: {e}")))?;
            let n = std::io::Read::read(&mut &f, &mut head).unwrap_or(0);
            let store = if rosbag2::sniff(&head[..n]) {
                Store::db3(&p, &shown)?
            } else if container::sniff(&head[..n]) {
                let source = match Mapped::new(&f, None) {
                    Some(m) => Source::Mapped(std::sync::Arc::new(m)),
                    None => Source::Stream(Box::new(f)),
                };
                Store::mcap(source, &shown)?
            } else {
                return Err(fail(format!(
                    "{path}: storage file {shown} is neither a SQLite database (rosbag2 sqlite3) nor an MCAP file"
                )));
            };
            parts.push(Part { name: name.clone(), store });
        }
        let mut ids = Ids::new(parts.len());
        let (mut schemas, mut channels) = (Vec::new(), Vec::new());
        for (f, p) in parts.iter().enumerate() {
            let (ss, cs) = p.store.known();
            for s in ss {
                if let (s, true) = ids.schema(f, s) {
                    schemas.push(s);
                }
            }
            for c in cs {
                if let (c, true) = ids.channel(f, c) {
                    channels.push(c);
                }
            }
        }
        let start = parts.iter().filter_map(|p| p.store.start()).min();
        // The files' counts under the bag's ids (unknown if one file's are, or name a channel
        // the file does not list before its messages).
        let mut counts = Some(HashMap::new());
        for (f, p) in parts.iter().enumerate() {
            let (Some(all), Some(c)) = (counts.as_mut(), p.store.counts()) else {
                counts = None;
                break;
            };
            for (id, n) in c {
                match ids.file_chan[f].get(id) {
                    Some(g) => *all.entry(*g).or_insert(0u64) += n,
                    None if *n == 0 => {}
                    None => {
                        counts = None;
                        break;
                    }
                }
            }
        }
        Ok(Split { listing, parts, schemas, channels, start, counts, ids })
    }

    /// The bag's events: each file's schemas and channels under the bag's ids, and the messages
    /// of all files merged by log time.
    pub(super) fn read<'s, E>(
        &'s self,
        budget: u64,
        want: &Want<'_>,
        mut each: impl FnMut(Event<'_, 's>) -> Result<(), E>,
    ) -> Result<Result<Stats, (Stats, ReadError)>, E> {
        // The files' own channel ids differ from the bag's: the caller picks messages by topic.
        let want = Want { channels: None, time: want.time, part: None };
        let mut ids = self.ids.clone();
        let mut stats = Stats { start: self.start, footer: true, summary: true, ..Stats::default() };
        let mut fault: Option<ReadError> = None;
        let mut order: Vec<usize> = (0..self.parts.len()).collect();
        order.sort_by_key(|&f| (self.parts[f].store.start().unwrap_or(0), f));
        std::thread::scope(|scope| -> Result<(), E> {
            struct Live<'s> {
                f: usize,
                rx: Option<Receiver<Owned<'s>>>,
                head: Option<Message<'s>>,
            }
            let mut live: Vec<Live<'s>> = Vec::new();
            let mut pending = order.into_iter().peekable();
            let mut last = 0u64;
            // Takes file `l`'s events up to its next message (its head), handing on the others.
            let fill = |l: &mut Live<'s>,
                        ids: &mut Ids,
                        stats: &mut Stats,
                        fault: &mut Option<ReadError>,
                        each: &mut dyn FnMut(Event<'_, 's>) -> Result<(), E>|
             -> Result<(), E> {
                let name = &self.parts[l.f].name;
                while let Some(rx) = &l.rx {
                    let Ok(ev) = rx.recv() else {
                        l.rx = None;
                        break;
                    };
                    match ev {
                        Owned::Schema(s) => {
                            if let (s, true) = ids.schema(l.f, &s) {
                                each(Event::Schema(&s))?;
                            }
                        }
                        Owned::Channel(c) => {
                            if let (c, true) = ids.channel(l.f, &c) {
                                each(Event::Channel(&c))?;
                            }
                        }
                        Owned::Message(mut m) => {
                            m.channel = ids.message_channel(l.f, m.channel);
                            m.file = u16::try_from(l.f + 1).unwrap_or(u16::MAX);
                            l.head = Some(m);
                            break;
                        }
                        Owned::Metadata { name, metadata } => each(Event::Metadata { name, metadata })?,
                        Owned::Skipped { offset, why } => {
                            let why = if self.parts[l.f].store.rows() {
                                format!("{name}: {why}")
                            } else {
                                format!("{name}: byte {offset}: {why}")
                            };
                            each(Event::Skipped { offset, why })?;
                        }
                        Owned::End(end) => {
                            let (s, e) = match end {
                                Ok(s) => (s, None),
                                Err((s, e)) => (s, Some(e)),
                            };
                            stats.chunks += s.chunks;
                            stats.chunks_unread += s.chunks_unread;
                            for c in s.compressions {
                                if !stats.compressions.contains(&c) {
                                    stats.compressions.push(c);
                                }
                            }
                            let e = e.or_else(|| {
                                (!s.footer).then(|| ReadError {
                                    offset: self.parts[l.f].store.size(),
                                    message: "the file ends without its footer and end magic (truncated)".into(),
                                })
                            });
                            if let (Some(e), None) = (e, &fault) {
                                *fault = Some(ReadError {
                                    offset: e.offset,
                                    message: format!("in storage file {name}: {}", e.message),
                                });
                            }
                            l.rx = None;
                        }
                    }
                }
                Ok(())
            };
            loop {
                // Start the files that may hold a message before the earliest head.
                loop {
                    let earliest = live.iter().filter_map(|l| l.head.as_ref().map(|m| m.log_time)).min();
                    let Some(&f) = pending.peek() else { break };
                    if earliest.is_some_and(|t| self.parts[f].store.start().is_some_and(|s| s > t)) {
                        break;
                    }
                    pending.next();
                    let (tx, rx) = sync_channel::<Owned<'s>>(64);
                    let store = &self.parts[f].store;
                    let want = &want;
                    scope.spawn(move || {
                        let end = store.read_file(budget, want, &mut |e| {
                            let o = match e {
                                Event::Schema(s) => Owned::Schema(s.clone()),
                                Event::Channel(c) => Owned::Channel(c.clone()),
                                Event::Message(m) => Owned::Message(m.clone()),
                                Event::Metadata { name, metadata } => Owned::Metadata { name, metadata },
                                Event::Skipped { offset, why } => Owned::Skipped { offset, why },
                                Event::Header { .. } => return Ok(()),
                            };
                            tx.send(o).map_err(|_| ())
                        });
                        if let Ok(end) = end {
                            let _ = tx.send(Owned::End(end));
                        }
                    });
                    let mut l = Live { f, rx: Some(rx), head: None };
                    fill(&mut l, &mut ids, &mut stats, &mut fault, &mut each)?;
                    live.push(l);
                }
                let next = live
                    .iter()
                    .enumerate()
                    .filter_map(|(i, l)| l.head.as_ref().map(|m| ((m.log_time, l.f), i)))
                    .min()
                    .map(|(_, i)| i);
                let Some(i) = next else {
                    if pending.peek().is_none() {
                        break;
                    }
                    continue;
                };
                let m = live[i].head.take().expect("chosen for its head");
                if m.log_time < last {
                    stats.out_of_order += 1;
                }
                last = last.max(m.log_time);
                stats.messages += 1;
                each(Event::Message(&m))?;
                fill(&mut live[i], &mut ids, &mut stats, &mut fault, &mut each)?;
                live.retain(|l| l.rx.is_some() || l.head.is_some());
            }
            Ok(())
        })?;
        Ok(match fault {
            None => Ok(stats),
            Some(e) => Err((stats, e)),
        })
    }
}
