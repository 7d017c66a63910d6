//! A log read into in-memory tables on several threads: each thread reads the whole log (the
//! reader and the routing of values are cheap next to filling columns) into a
//! [`Tables::part`] sink that fills only its share of the tables, and the tables are then taken
//! from the part that filled them. The sample source is deterministic, so every part announces
//! the same channels and tables in the same order and ends with the same outcome (samples,
//! warnings, error); the parts are checked to agree, and if they do not (the file changed while
//! it was read), the log is read again on one thread, so the result is always what a read on
//! one thread gives.

use std::path::Path;

use super::Tables;
use crate::cli::source::{self, Outcome, Select};
use crate::cli::{CliError, Detected};

/// Reads a log into [`Tables`] on `parts` threads (1: on this thread only). `open` opens the
/// log and detects its format, once per part; it should read the same bytes each time (a file
/// cut at the length it had when the read began). Returns the sink (to [`Tables::finish`]) and
/// what [`source::read`] returned.
pub fn read_in_parts(
    open: &(dyn Fn() -> Result<Detected, CliError> + Sync),
    file: &Path,
    path: &str,
    assume_r1: bool,
    select: &Select,
    utc: bool,
    parts: usize,
) -> Result<(Tables, Result<Outcome, CliError>), CliError> {
    let part = |k: usize, n: usize| -> Result<(Tables, Result<Outcome, CliError>), CliError> {
        let d = open()?;
        let mut sink = Tables::part(utc, k, n);
        let outcome = source::read(d, file, path, assume_r1, select, &mut sink);
        Ok((sink, outcome))
    };
    if parts <= 1 {
        return part(0, 1);
    }
    let results: Vec<_> = std::thread::scope(|s| {
        let others: Vec<_> = (1..parts).map(|k| s.spawn(move || part(k, parts))).collect();
        let mut results = vec![Some(part(0, parts))];
        results.extend(others.into_iter().map(|h| h.join().ok()));
        results
    });
    // A part whose thread panicked did not agree: read again on one thread.
    let Some(results) = results.into_iter().collect::<Option<Vec<_>>>() else { return part(0, 1) };
    let mut results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let (first, rest) = results.split_first_mut().expect("at least two parts");
    if !rest.iter().all(|other| agree(first, other)) {
        return part(0, 1);
    }
    // Table `i` from the part that filled it.
    let mut tables = std::mem::take(&mut first.0.tables);
    for (i, t) in tables.iter_mut().enumerate() {
        if let Some(k) = (i % parts).checked_sub(1) {
            std::mem::swap(t, &mut rest[k].0.tables[i]);
        }
    }
    let (mut sink, outcome) = results.swap_remove(0);
    sink.tables = tables;
    sink.share = (0, 1);
    sink.skip.iter_mut().for_each(|s| *s = false);
    Ok((sink, outcome))
}

/// Whether two parts read the same log alike: the same tables and outcome.
fn agree(a: &(Tables, Result<Outcome, CliError>), b: &(Tables, Result<Outcome, CliError>)) -> bool {
    let same_tables = a.0.tables.len() == b.0.tables.len()
        && a.0.tables.iter().zip(&b.0.tables).all(|(x, y)| x.name == y.name && x.builder.schema == y.builder.schema)
        && a.0.by_channel == b.0.by_channel;
    let same_outcome = match (&a.1, &b.1) {
        (Ok(x), Ok(y)) => {
            x.samples == y.samples && x.warnings == y.warnings && x.error == y.error && x.fault == y.fault
        }
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    };
    same_tables && same_outcome
}
