//! rosbag2 sqlite3 storage files (`.db3`, feature `sqlite`): the tables read through SQLite
//! (`rusqlite`, SQLite compiled in), handed on as the MCAP reader hands on its records
//! ([`Event`]s of [`Schema`]s, [`Channel`]s and [`Message`]s), so that one adapter
//! (`log/mcap.rs`) decodes both storages.
//!
//! - **Tables.** `topics` (id, name, type, serialization_format, and from schema version 2 on
//!   `offered_qos_profiles`), `messages` (id, topic_id, timestamp, data), from version 3 on
//!   `schema` (schema_version, ros_distro) and `metadata` (the bag's metadata as YAML), from
//!   version 4 on `message_definitions` (topic_type, encoding, encoded_message_definition).
//! - **Definitions.** A topic's type is looked up in `message_definitions`; a type with no
//!   definition there (an older schema has no such table; rosbag2 stores encoding `unknown`
//!   with an empty text when it had none) becomes a [`Schema`] of that name with an empty
//!   encoding: the adapter lists its topic and keeps its messages as bytes, naming the type.
//! - **Order.** Messages come out by `timestamp`, ties by row id (`ORDER BY timestamp, id`):
//!   SQLite sorts, spilling to temporary files beyond its cache, so memory stays bounded.
//! - **Bounds.** SQLite reads a value only from the pages the file holds, so a definition, a
//!   metadata text or a message is never larger than the file; the topics and definitions held
//!   are rows of the file. SQLite's own length limit is set to the file's size besides.
//! - **Where.** A message is named by its row id in `messages` (a SQLite file has no byte
//!   offset per row): [`Message::index`] is the row id and [`Message::offset`] is 0.
//! - **Parts.** A file's time index is runs of row ids of about a chunk's bytes of the file
//!   ([`spans`], found through rosbag2's `timestamp_idx` without reading a message), at the
//!   positions [`Rows`] gives rows; [`Db3::read`] of a [`Want::part`] reads the rows of its ids
//!   alone, numbered by their row ids as in a whole read.
//!
//! SQLite reads a file by its path: standard input cannot be read as a `.db3`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

use super::mcap::{Channel, Event, Message, ReadError, Schema, Stats, Want};

/// The first 16 bytes of every SQLite 3 database file.
pub const MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether `head` starts as a SQLite 3 database does.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// A rosbag2 sqlite3 storage file, open, with its topics and definitions read.
pub struct Db3 {
    /// Behind a lock so that a split bag's files can be read on threads of their own.
    conn: Mutex<Connection>,
    /// The tables the file holds, sorted.
    pub tables: Vec<String>,
    /// `schema.schema_version` (none before version 3, which added the table).
    pub schema_version: Option<i64>,
    /// `schema.ros_distro`.
    pub ros_distro: Option<String>,
    /// `metadata.metadata_version` of the bag metadata the file embeds (version 3 and later).
    pub metadata_version: Option<i64>,
    /// The bag metadata the file embeds (YAML text, as in `metadata.yaml`).
    pub metadata: Option<String>,
    /// One schema per topic type (ids from 1, in the order of the topics).
    pub schemas: Vec<Schema>,
    /// One channel per topic, its id the topic's id.
    pub channels: Vec<Channel>,
    /// The earliest message timestamp (the log's origin).
    pub start: Option<u64>,
    /// The messages' rows per topic id ([`Db3::counts`]), once counted.
    counts: std::sync::OnceLock<Option<HashMap<u16, u64>>>,
    /// The file's size in bytes.
    pub size: u64,
}

fn strings(conn: &Connection, shown: &str, sql: &str, what: &str) -> Result<Vec<String>, String> {
    let mut st = conn.prepare(sql).map_err(|e| sql_err(shown, what, e))?;
    let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(|e| sql_err(shown, what, e))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(|e| sql_err(shown, what, e))
}

fn sql_err(shown: &str, what: &str, e: rusqlite::Error) -> String {
    format!("{shown}: {what}: {e}")
}

/// The least integer timestamp of `messages`, by one lookup in rosbag2's `timestamp_idx`; when
/// the least is not an integer (a table of other values), the least of each topic's least
/// timestamps that are integers, as a reader that groups by topic finds it.
fn least(conn: &Connection, shown: &str) -> Result<Option<i64>, String> {
    use rusqlite::types::Value;
    let table = |e| sql_err(shown, "table `messages`", e);
    match conn.query_row("SELECT MIN(timestamp) FROM messages", [], |r| r.get::<_, Value>(0)).map_err(table)? {
        Value::Integer(t) => return Ok(Some(t)),
        Value::Null => return Ok(None),
        _ => {}
    }
    let mut st = conn.prepare("SELECT MIN(timestamp) FROM messages GROUP BY topic_id").map_err(table)?;
    let mut rows = st.query([]).map_err(table)?;
    let mut start = None::<i64>;
    while let Some(r) = rows.next().map_err(table)? {
        if let Some(t) = r.get::<_, Option<i64>>(0).ok().flatten() {
            start = Some(start.map_or(t, |s| s.min(t)));
        }
    }
    Ok(start)
}

/// Opens `path` read-only (as immutable: no lock is taken, no journal written), with SQLite's
/// length limit at the file's size; the connection and the file's size. `shown` names it in
/// messages.
fn connect(path: &Path, shown: &str) -> Result<(Connection, u64), String> {
    let size = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot open: {e}"))?.len();
    // A URI, so that `immutable=1` can be said: the characters a URI path reserves escaped.
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u32)),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&uri, flags).map_err(|e| sql_err(shown, "cannot open as SQLite", e))?;
    // No text or blob longer than the file itself.
    let limit = i32::try_from(size.max(1024)).unwrap_or(i32::MAX);
    conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, limit)
        .map_err(|e| sql_err(shown, "cannot set SQLite's length limit", e))?;
    Ok((conn, size))
}

/// The positions a time index gives the rows of a file's `messages` table, which have no byte
/// offset of their own: row id `id` is at `(id - first) * per_row`, `per_row` being the file's
/// bytes per row id (its size over the span of row ids, at least 1). A chunk's offset and
/// length ([`spans`]) are then about the bytes of the file its rows take, which is what the
/// engines' planner weighs against other logs' sizes, and a position is turned back into a row
/// id exactly ([`Rows::id`]). Row ids from `first` to `last`, some perhaps unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// The least and the greatest row id of `messages`.
    pub first: i64,
    pub last: i64,
    /// The bytes of the file per row id.
    pub per_row: u64,
}

impl Rows {
    fn new(first: i64, last: i64, size: u64) -> Rows {
        let span = (i128::from(last) - i128::from(first) + 1).max(1) as u128;
        let per_row = (u128::from(size) / span).clamp(1, u128::from(u64::MAX)) as u64;
        Rows { first, last, per_row }
    }

    /// The rows of `conn`'s `messages` table, by the least and greatest row id (two lookups in
    /// the table's b-tree); `None` for a table of no rows or one that does not answer.
    fn of(conn: &Connection, size: u64) -> Option<Rows> {
        let (first, last) = conn
            .query_row("SELECT (SELECT MIN(id) FROM messages), (SELECT MAX(id) FROM messages)", [], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .ok()?;
        Some(Rows::new(first?, last?, size))
    }

    /// The position of row id `id`.
    pub fn position(&self, id: i64) -> u64 {
        let d = (i128::from(id) - i128::from(self.first)).max(0) as u128;
        (d * u128::from(self.per_row)).min(u128::from(u64::MAX)) as u64
    }

    /// The row id at position `at` (the first at or after it, for a position between rows).
    pub fn id(&self, at: u64) -> i64 {
        let d = at.div_ceil(self.per_row);
        (i128::from(self.first) + i128::from(d)).min(i128::from(i64::MAX)) as i64
    }

    /// The position just past the last row.
    pub fn end(&self) -> u64 {
        self.position(self.last).saturating_add(self.per_row)
    }
}

/// A run of row ids of `messages` ([`spans`]): from `first_id` to the next span's (the last: to
/// the last row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub first_id: i64,
    /// Its rows.
    pub messages: u64,
    /// The least and greatest timestamp of its rows.
    pub start: i64,
    pub end: i64,
}

/// The rows of the `messages` table of the file `path` in runs of row ids of about `bytes` of
/// the file each ([`Rows`]), each with its row count and its least and greatest timestamp,
/// found without reading a message: one query grouped by the run (`(id - first) / step`) whose
/// columns, the row id and `timestamp`, are all in rosbag2's `timestamp_idx` index, which
/// SQLite scans instead of the table (a `.db3` without that index has its table scanned, the
/// large messages' overflow pages still unread). Grouping over `length(data)` instead would have
/// SQLite copy each row's data into its sorter, and even without a sort `length(data)` reads
/// every page of the table that holds a row, which for small messages is the whole file.
/// `None` for a table of no rows, one that does not answer, or one whose timestamps are not
/// all integers.
pub fn spans(path: &Path, bytes: u64) -> Option<(Rows, Vec<Span>)> {
    let (conn, size) = connect(path, "").ok()?;
    let rows = Rows::of(&conn, size)?;
    let step = i64::try_from(bytes.div_ceil(rows.per_row).max(1)).unwrap_or(i64::MAX);
    let mut st = conn
        .prepare(
            "SELECT (id - ?1) / ?2 AS k, MIN(timestamp), MAX(timestamp), COUNT(*) FROM messages GROUP BY k ORDER BY k",
        )
        .ok()?;
    let mut out = Vec::new();
    let mut q = st.query([rows.first, step]).ok()?;
    while let Some(r) = q.next().ok()? {
        let (k, start, end, n) =
            (r.get::<_, i64>(0).ok()?, r.get::<_, i64>(1).ok()?, r.get::<_, i64>(2).ok()?, r.get::<_, i64>(3).ok()?);
        let first_id = rows.first.checked_add(k.checked_mul(step)?)?;
        out.push(Span { first_id, messages: u64::try_from(n).ok()?, start, end });
    }
    (!out.is_empty()).then_some((rows, out))
}

impl Db3 {
    /// Opens `path` read-only (as immutable: no lock is taken, no journal written) and reads its
    /// topics and definitions. `shown` names it in messages.
    pub fn open(path: &Path, shown: &str) -> Result<Db3, String> {
        let (conn, size) = connect(path, shown)?;
        let mut db = Db3 {
            conn: Mutex::new(Connection::open_in_memory().map_err(|e| sql_err(shown, "SQLite", e))?),
            tables: Vec::new(),
            schema_version: None,
            ros_distro: None,
            metadata_version: None,
            metadata: None,
            schemas: Vec::new(),
            channels: Vec::new(),
            start: None,
            counts: std::sync::OnceLock::new(),
            size,
        };
        db.tables = strings(
            &conn,
            shown,
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
            "the table list",
        )?;
        for t in ["topics", "messages"] {
            if !db.tables.iter().any(|x| x == t) {
                return Err(format!(
                    "{shown}: a SQLite database without a `{t}` table is not a rosbag2 bag (its tables: {})",
                    db.tables.join(", ")
                ));
            }
        }
        let has = |db: &Db3, t: &str| db.tables.iter().any(|x| x == t);
        if has(&db, "schema") {
            let row = conn
                .query_row("SELECT schema_version, ros_distro FROM schema LIMIT 1", [], |r| {
                    Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
                })
                .map_err(|e| sql_err(shown, "table `schema`", e));
            if let Ok((v, d)) = row {
                db.schema_version = v;
                db.ros_distro = d;
            }
        }
        if has(&db, "metadata") {
            if let Ok((v, m)) =
                conn.query_row("SELECT metadata_version, metadata FROM metadata ORDER BY id DESC LIMIT 1", [], |r| {
                    Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
                })
            {
                db.metadata_version = v;
                db.metadata = m;
            }
        }
        // The definitions by type: the last row of a type stands.
        let mut defs: HashMap<String, (String, Vec<u8>)> = HashMap::new();
        if has(&db, "message_definitions") {
            let mut st = conn
                .prepare("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions ORDER BY id")
                .map_err(|e| sql_err(shown, "table `message_definitions`", e))?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?)))
                .map_err(|e| sql_err(shown, "table `message_definitions`", e))?;
            for row in rows {
                let (ty, enc, text) = row.map_err(|e| sql_err(shown, "table `message_definitions`", e))?;
                let text = text.unwrap_or_default();
                // rosbag2 stores `unknown` and no text for a type it found no definition of.
                if enc == "unknown" && text.is_empty() {
                    continue;
                }
                defs.insert(ty, (enc, text.into_bytes()));
            }
        }
        let topics_cols =
            strings(&conn, shown, "SELECT name FROM pragma_table_info('topics')", "the columns of `topics`")?;
        let qos = if topics_cols.iter().any(|c| c == "offered_qos_profiles") { "offered_qos_profiles" } else { "''" };
        let mut st = conn
            .prepare(&format!("SELECT id, name, type, serialization_format, {qos} FROM topics ORDER BY id"))
            .map_err(|e| sql_err(shown, "table `topics`", e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(|e| sql_err(shown, "table `topics`", e))?;
        let mut schema_of: HashMap<String, u16> = HashMap::new();
        let mut schemas = Vec::new();
        let mut channels = Vec::new();
        for row in rows {
            let (id, name, ty, format, qos) = row.map_err(|e| sql_err(shown, "table `topics`", e))?;
            let Ok(id) = u16::try_from(id) else {
                return Err(format!(
                    "{shown}: table `topics`: topic `{name}` has id {id}; logspec reads topic ids 0 to 65535"
                ));
            };
            let next = u16::try_from(schema_of.len() + 1).map_err(|_| {
                format!("{shown}: table `topics`: more than 65535 topic types; logspec reads at most that many")
            })?;
            let schema_id = *schema_of.entry(ty.clone()).or_insert_with(|| {
                let (encoding, data) = defs.remove(&ty).unwrap_or_default();
                schemas.push(Schema { id: next, name: ty.clone(), encoding, data });
                next
            });
            let mut metadata = BTreeMap::new();
            if let Some(q) = qos.filter(|q| !q.is_empty()) {
                metadata.insert("offered_qos_profiles".to_string(), q);
            }
            channels.push(Channel { id, schema_id, topic: name, message_encoding: format, metadata });
        }
        drop(st);
        let start = least(&conn, shown)?;
        db.conn = Mutex::new(conn);
        db.schemas = schemas;
        db.channels = channels;
        db.start = start.map(|t| t.max(0) as u64);
        Ok(db)
    }

    /// The messages' rows per topic id (one pass over the table's rows, not their data beyond
    /// the page each starts in), counted when first asked for (a scan does not ask); `None` when
    /// the table does not answer.
    pub fn counts(&self) -> Option<&HashMap<u16, u64>> {
        self.counts
            .get_or_init(|| {
                let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
                let mut st = conn.prepare("SELECT topic_id, COUNT(*) FROM messages GROUP BY topic_id").ok()?;
                let mut rows = st.query([]).ok()?;
                let mut counts: HashMap<u16, u64> = HashMap::new();
                while let Some(r) = rows.next().ok()? {
                    let (topic, count) = (r.get::<_, i64>(0).ok(), r.get::<_, i64>(1).ok()?);
                    if let Some(id) = topic.and_then(|t| u16::try_from(t).ok()) {
                        *counts.entry(id).or_default() += count.max(0) as u64;
                    }
                }
                Some(counts)
            })
            .as_ref()
    }

    /// The topic types that have no definition in the file.
    pub fn undefined(&self) -> Vec<&str> {
        self.schemas.iter().filter(|s| s.encoding.is_empty()).map(|s| s.name.as_str()).collect()
    }

    /// Hands on the schemas and channels, then the messages of `want` in timestamp order (ties by
    /// row id); with [`Want::part`], the rows of its row ids alone ([`Rows`], [`spans`]), in that
    /// order among themselves. A row that is not a message (a negative timestamp, data that is not a blob) is
    /// skipped and reported; a SQLite error (a corrupted page) ends the reading after every
    /// message before it.
    pub fn read<'a, E>(
        &self,
        want: &Want<'_>,
        mut each: impl FnMut(Event<'_, 'a>) -> Result<(), E>,
    ) -> Result<Result<Stats, (Stats, ReadError)>, E> {
        let mut stats = Stats { start: self.start, footer: true, summary: true, ..Stats::default() };
        for s in &self.schemas {
            each(Event::Schema(s))?;
        }
        for c in &self.channels {
            each(Event::Channel(c))?;
        }
        let (a, z) = want.time.unwrap_or((0, u64::MAX));
        let clamp = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        let fail = |stats: Stats, e: rusqlite::Error| {
            Ok(Err((stats, ReadError { offset: 0, message: format!("table `messages`: {e}") })))
        };
        let time = if want.time.is_some() {
            "timestamp BETWEEN ?1 AND ?2"
        } else {
            // Every row, those with a negative timestamp too (reported below).
            "?1 <= ?2"
        };
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        // A part: the rows whose ids its positions span ([`Rows`]), `?3 <= id < ?4`.
        let ids = match &want.part {
            None => None,
            Some(part) => match Rows::of(&conn, self.size) {
                // No rows: nothing in any part.
                None => return Ok(Ok(stats)),
                Some(rows) => {
                    let first = rows.id(part.start);
                    if rows.position(first) != part.start || u64::try_from(first.max(0)) != Ok(part.first_message) {
                        return Ok(Err((stats, ReadError {
                            offset: 0,
                            message: format!(
                                "table `messages`: position {} is not where row id {} starts in this file; the time index is not of this file (did it change?)",
                                part.start, part.first_message
                            ),
                        })));
                    }
                    Some((first, rows.id(part.end)))
                }
            },
        };
        let sql = match ids {
            None => format!("SELECT id, topic_id, timestamp, data FROM messages WHERE {time} ORDER BY timestamp, id"),
            Some(_) => format!(
                "SELECT id, topic_id, timestamp, data FROM messages WHERE id >= ?3 AND id < ?4 AND {time} ORDER BY timestamp, id"
            ),
        };
        let mut st = match conn.prepare(&sql) {
            Ok(st) => st,
            Err(e) => return fail(stats, e),
        };
        let query = match ids {
            None => st.query([clamp(a), clamp(z)]),
            Some((lo, hi)) => st.query([clamp(a), clamp(z), lo, hi]),
        };
        let mut rows = match query {
            Ok(r) => r,
            Err(e) => return fail(stats, e),
        };
        loop {
            let row = match rows.next() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => return fail(stats, e),
            };
            let got = (|| -> Result<_, rusqlite::Error> {
                Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?, row.get_ref(3)?))
            })();
            let (id, topic, time, data) = match got {
                Ok(x) => x,
                Err(e) => {
                    each(Event::Skipped {
                        offset: 0,
                        why: format!("table `messages`: a row that does not read: {e}"),
                    })?;
                    continue;
                }
            };
            let data = match data {
                rusqlite::types::ValueRef::Blob(b) => b.to_vec(),
                other => {
                    each(Event::Skipped {
                        offset: 0,
                        why: format!(
                            "table `messages`: row id {id}: data of type {}, not a blob; skipped",
                            other.data_type()
                        ),
                    })?;
                    continue;
                }
            };
            let (Ok(channel), Ok(log_time)) = (u16::try_from(topic), u64::try_from(time)) else {
                each(Event::Skipped {
                    offset: 0,
                    why: format!(
                        "table `messages`: row id {id}: topic id {topic} or timestamp {time} out of range; skipped"
                    ),
                })?;
                continue;
            };
            if let Some(w) = want.channels {
                if !w.contains(&channel) {
                    continue;
                }
            }
            let m = Message {
                channel,
                sequence: 0,
                log_time,
                publish_time: log_time,
                data: crate::formats::mcap::Data::Owned(data),
                offset: 0,
                index: id.max(0) as u64,
                file: 0,
            };
            stats.messages += 1;
            each(Event::Message(&m))?;
        }
        Ok(Ok(stats))
    }
}

/// The first bytes of a bag's `metadata.yaml`.
pub const METADATA_KEY: &[u8] = b"rosbag2_bagfile_information:";

/// A split bag, as its `metadata.yaml` lists it.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The bag's directory.
    pub dir: PathBuf,
    /// `storage_identifier` (`sqlite3`, `mcap`).
    pub storage: String,
    /// `relative_file_paths`, in their order.
    pub files: Vec<String>,
}

/// Reads the `metadata.yaml` of a bag (`path`: the bag's directory, or the file itself): its
/// storage identifier and its storage files. Only these two keys are read, as rosbag2 and rosbags
/// write them (a block list under `relative_file_paths`). A path that leaves the bag's directory
/// (absolute, or with `..`) is refused.
pub fn listing(path: &Path, shown: &str) -> Result<Listing, String> {
    let (dir, yaml) = if path.is_dir() {
        (path.to_path_buf(), path.join("metadata.yaml"))
    } else {
        (path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf), path.to_path_buf())
    };
    let text = std::fs::read_to_string(&yaml)
        .map_err(|e| format!("{shown}: a rosbag2 bag's directory needs its metadata.yaml ({}): {e}", yaml.display()))?;
    let unquote = |v: &str| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
    let mut storage = String::new();
    let mut files = Vec::new();
    let mut in_list: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if let Some(at) = in_list {
            if let Some(item) = t.strip_prefix("- ").or_else(|| (t == "-").then_some("")) {
                if indent >= at {
                    files.push((n + 1, unquote(item)));
                    continue;
                }
            }
            in_list = None;
        }
        if let Some(v) = t.strip_prefix("storage_identifier:") {
            storage = unquote(v);
        } else if let Some(v) = t.strip_prefix("relative_file_paths:") {
            let v = v.trim();
            if let Some(inner) = v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                files.extend(inner.split(',').filter(|x| !x.trim().is_empty()).map(|x| (n + 1, unquote(x))));
            } else {
                in_list = Some(indent);
            }
        }
    }
    if files.is_empty() {
        return Err(format!("{}: lists no storage files (`relative_file_paths`)", yaml.display()));
    }
    let mut out = Vec::with_capacity(files.len());
    for (line, f) in files {
        let p = Path::new(&f);
        if f.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
            return Err(format!(
                "{}: line {line}: storage file `{f}` is not a path inside the bag's directory",
                yaml.display()
            ));
        }
        // Each file once: a listing that repeats one would open it (and a reader thread) per line.
        if out.contains(&f) {
            return Err(format!("{}: line {line}: storage file `{f}` is listed twice", yaml.display()));
        }
        out.push(f);
    }
    Ok(Listing { dir, storage, files: out })
}
