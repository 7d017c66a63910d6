//! The time indexes of logs ([`logspec::log::index`]) kept on disk: written beside the log as
//! `<log>.logspec-idx`, or in the cache directory when the log's folder is not writable, through
//! [`crate::output`] (a temporary file renamed into place). `logspec index` and a scan that read
//! a large log whole without an index ([`crate::stream`]) write them; a stale or bad index is
//! ignored by [`logspec::log::index::load`] and written again. The environment variable
//! `LOGSPEC_INDEX` ([`Keep`]) says where they may be written: `beside` (the default), `cache`
//! (never beside a log) or `off` (none written; those there are still read).

use std::path::{Path, PathBuf};

use logspec::log::index::{self, Index, CHUNK_BYTES};
use logspec::log::{Error, Format, Open, Select};

/// Where time index files may be written: the value of the environment variable
/// `LOGSPEC_INDEX` ([`Keep::VAR`]). Index files are read wherever [`index::places`] finds them,
/// whatever it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// `beside` (also unset or empty): beside the log (`<log>.logspec-idx`), else in the cache
    /// directory.
    Beside,
    /// `cache`: only in the cache directory (`$XDG_CACHE_HOME/logspec/`, else
    /// `~/.cache/logspec/`), never beside a log.
    Cache,
    /// `off`: nowhere: a scan writes no index, and `logspec index` refuses.
    Off,
}

impl Keep {
    /// The environment variable.
    pub const VAR: &'static str = "LOGSPEC_INDEX";

    /// The setting of [`Keep::VAR`]; an error naming the values it takes for any other.
    pub fn from_env() -> Result<Keep, Error> {
        let value = std::env::var_os(Self::VAR).unwrap_or_default();
        match value.to_str() {
            Some("" | "beside") => Ok(Keep::Beside),
            Some("cache") => Ok(Keep::Cache),
            Some("off") => Ok(Keep::Off),
            _ => Err(Error::Usage(format!(
                "{}={}: expected `beside` (the default: index files beside the logs, else in the cache directory), `cache` (only in the cache directory) or `off` (none written)",
                Self::VAR,
                value.to_string_lossy()
            ))),
        }
    }
}

/// Writes `idx`, the index of `log` (of format `format`), to the first of
/// [`index::places`] that takes it and [`Keep::from_env`] allows; the place written, or why none
/// was.
pub fn store(log: &Path, format: Format, idx: &Index) -> Result<PathBuf, Error> {
    let number = index::format_number(format)
        .ok_or_else(|| Error::Usage(format!("{}: {} logs have no time index", log.display(), format.title())))?;
    let skip = match Keep::from_env()? {
        Keep::Beside => 0,
        Keep::Cache => 1,
        Keep::Off => {
            return Err(Error::Usage(format!(
                "{}: no index written: {}=off says to write none",
                log.display(),
                Keep::VAR
            )))
        }
    };
    let stamp = index::stamp(log).map_err(|e| Error::Input(format!("{}: {e}", log.display())))?;
    let bytes = index::encode(idx, number, &stamp);
    let mut why = Vec::new();
    let places: Vec<PathBuf> = index::places(log).into_iter().skip(skip).collect();
    if places.is_empty() {
        why.push(format!("{}=cache, and neither XDG_CACHE_HOME nor HOME is set", Keep::VAR));
    }
    for place in places {
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
/// than one chunk) and [`Keep::from_env`] allows; problems writing it are not the scan's and are
/// passed over (the next scan reads the log whole again), but for a [`Keep::VAR`] of no known
/// value, which is returned as a warning.
pub fn keep(log: &Path, format: Format, idx: Option<Index>) -> Option<String> {
    let idx = idx.filter(|i| i.chunks.len() > 1)?;
    match Keep::from_env() {
        Ok(Keep::Off) => None,
        Ok(_) => {
            let _ = store(log, format, &idx);
            None
        }
        Err(e) => Some(format!("{}: no time index written: {e}", log.display())),
    }
}

/// What [`build`] did with one log.
#[derive(Debug)]
pub enum Built {
    /// The index was written there, with this many chunks.
    Written { place: PathBuf, chunks: usize },
    /// An index that matches the log was there already.
    Current { chunks: usize },
    /// The log carries its own index ([`index::own`]): a ROS bag's, an MCAP file's or a `.db3`'s chunks,
    /// this many (`None`: its chunks cannot each be read alone, and scans read it whole).
    Own { chunks: Option<usize> },
    /// The log's format has no time index.
    NoIndex,
}

/// The index of `log`, made by reading it whole when no current one exists (`logspec index`).
pub fn build(log: &Path, how: &Open, again: bool) -> Result<Built, Error> {
    let opened = logspec::log::open(log, how)?;
    let format = opened.format();
    if index::own(format) {
        return Ok(Built::Own { chunks: opened.index().map(|i| i.chunks.len()) });
    }
    if index::format_number(format).is_none() {
        return Ok(Built::NoIndex);
    }
    if Keep::from_env()? == Keep::Off {
        return Err(Error::Usage(format!("{}: no index written: {}=off says to write none", log.display(), Keep::VAR)));
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
