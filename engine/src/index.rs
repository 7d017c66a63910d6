//! The time indexes of logs ([`logspec::log::index`]) kept on disk: written beside the log as
//! `<log>.logspec-idx`, or in the cache directory when the log's folder is not writable, through
//! [`crate::output`] (a temporary file renamed into place). `logspec index` and a scan that read
//! a large log whole without an index ([`crate::stream`]) write them; a stale or bad index is
//! ignored by [`logspec::log::index::load`] and written again.

use std::path::{Path, PathBuf};

use logspec::log::index::{self, Index, CHUNK_BYTES};
use logspec::log::{Error, Format, Open, Select};

/// Writes `idx`, the index of `log` (of format `format`), to the first of
/// [`index::places`] that takes it; the place written, or why none did.
pub fn store(log: &Path, format: Format, idx: &Index) -> Result<PathBuf, Error> {
    let number = index::format_number(format)
        .ok_or_else(|| Error::Usage(format!("{}: {} logs have no time index", log.display(), format.title())))?;
    let stamp = index::stamp(log).map_err(|e| Error::Input(format!("{}: {e}", log.display())))?;
    let bytes = index::encode(idx, number, &stamp);
    let mut why = Vec::new();
    for place in index::places(log) {
        if let Some(dir) = place.parent() {
            if !dir.as_os_str().is_empty() && !dir.is_dir() {
                if let Err(e) = crate::output::create_dir(dir) {
                    why.push(format!("{}: {e}", dir.display()));
                    continue;
                }
            }
        }
        match crate::output::write_file(&place, &[log], &bytes) {
            Ok(()) => return Ok(place),
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(Error::Input(format!("{}: the index could not be written: {}", log.display(), why.join("; "))))
}

/// Writes the index a whole scan noted, when the log is large enough to gain from one (more
/// than one chunk); problems writing it are not the scan's and are passed over (the next scan
/// reads the log whole again).
pub fn keep(log: &Path, format: Format, idx: Option<Index>) {
    if let Some(idx) = idx {
        if idx.chunks.len() > 1 {
            let _ = store(log, format, &idx);
        }
    }
}

/// What [`build`] did with one log.
#[derive(Debug)]
pub enum Built {
    /// The index was written there, with this many chunks.
    Written { place: PathBuf, chunks: usize },
    /// An index that matches the log was there already.
    Current { chunks: usize },
    /// The log's format has no time index.
    NoIndex,
}

/// The index of `log`, made by reading it whole when no current one exists (`logspec index`).
pub fn build(log: &Path, how: &Open, again: bool) -> Result<Built, Error> {
    let opened = logspec::log::open(log, how)?;
    let format = opened.format();
    if index::format_number(format).is_none() {
        return Ok(Built::NoIndex);
    }
    if !again {
        if let Some(idx) = index::load(log, format) {
            return Ok(Built::Current { chunks: idx.chunks.len() });
        }
    }
    struct Nothing;
    impl logspec::log::Samples for Nothing {
        fn channel(&mut self, _: usize, _: &logspec::log::Channel) -> Result<(), Error> {
            Ok(())
        }
        fn sample(&mut self, _: usize, _: u64, _: &logspec::value::Value) -> Result<(), Error> {
            Ok(())
        }
        fn visit(&mut self, _: usize, _: u64, _: &dyn logspec::log::DynVisit) -> Result<(), Error> {
            Ok(())
        }
        fn record(&mut self, _: usize, _: u64, _: &[u8], _: &dyn logspec::log::DynVisit) -> Result<(), Error> {
            Ok(())
        }
    }
    let outcome = opened.scan(&Select::default(), &mut Nothing)?;
    if let Some(f) = outcome.fault {
        return Err(Error::at(f));
    }
    let idx = outcome.index.ok_or_else(|| Error::Input(format!("{}: no records to index", log.display())))?;
    let chunks = idx.chunks.len();
    let place = store(log, format, &idx)?;
    Ok(Built::Written { place, chunks })
}

/// The bytes a partition aims at: a group of chunks of about this many bytes.
pub const PARTITION_BYTES: u64 = 64 * CHUNK_BYTES;
