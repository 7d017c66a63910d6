//! A log read into in-memory tables on several threads: each thread reads the whole log (the
//! reader and the routing of values are cheap next to filling columns) into a
//! [`Tables::part`] sink that fills only its share of the tables, and the tables are then taken
//! from the part that filled them. Every part fills every table for the first [`SETTLE`] values,
//! then the tables are shared out by the rows each had so far, largest first to the part with
//! the fewest rows ([`Share`]), so that one busy key does not load one thread with most of the
//! work; a table made later goes to the part with the fewest rows. The sample source is deterministic, so every part announces
//! the same channels and tables in the same order and ends with the same outcome (samples,
//! warnings, error); the parts are checked to agree, and if they do not (the file changed while
//! it was read), the log is read again on one thread, so the result is always what a read on
//! one thread gives.



use super::Tables;
use logspec::log::scan::{Outcome, Select};
use logspec::log::{Error, Log};

/// Reads a log into [`Tables`] on `parts` threads (1: on this thread only). `open` opens the
/// log and detects its format, once per part; it should read the same bytes each time (a file
/// cut at the length it had when the read began). Returns the sink (to [`Tables::finish`]) and
/// what [`Log::scan`] returned.
pub fn read_in_parts(
    open: &(dyn Fn() -> Result<Log, Error> + Sync),
    select: &Select,
    utc: bool,
    parts: usize,
) -> Result<(Tables, Result<Outcome, Error>), Error> {
    let part = |k: usize, n: usize| -> Result<(Tables, Result<Outcome, Error>), Error> {
        let d = open()?;
        let mut sink = Tables::part(utc, k, n);
        let outcome = d.scan(select, &mut sink);
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
    // Table `i` from the part that filled it (every part filled it, if the tables were never
    // shared out).
    let mut tables = std::mem::take(&mut first.0.tables);
    for (i, t) in tables.iter_mut().enumerate() {
        if let Some(k) = first.0.share.owner(i).checked_sub(1) {
            std::mem::swap(t, &mut rest[k].0.tables[i]);
        }
    }
    let (mut sink, outcome) = results.swap_remove(0);
    sink.tables = tables;
    sink.share = Share::new(0, 1);
    sink.skip.iter_mut().for_each(|s| *s = false);
    Ok((sink, outcome))
}

/// Values every part takes into every table before the tables are shared out.
pub const SETTLE: u64 = 1 << 16;

/// Which tables part `k` of `n` fills. Every part sees the same values in the same order, so
/// every part shares the tables out alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    k: usize,
    n: usize,
    /// Whether values are still counted (the tables not yet shared out).
    pub counting: bool,
    seen: u64,
    /// Rows of each table so far (while counting).
    rows: Vec<u64>,
    /// The part of each table, once shared out.
    owners: Vec<usize>,
    /// Rows of the tables of each part, once shared out.
    load: Vec<u64>,
}

impl Share {
    pub fn new(k: usize, n: usize) -> Share {
        let n = n.max(1);
        Share { k, n, counting: n > 1, seen: 0, rows: Vec::new(), owners: Vec::new(), load: vec![0; n] }
    }

    /// Table `i` is used by a channel (made, when `i` is new): once the tables are shared out, a
    /// new table goes to the part with the fewest rows, counted as an average table.
    pub fn table(&mut self, i: usize) {
        if self.n == 1 || i < self.rows.len().max(self.owners.len()) {
            return;
        }
        if self.counting {
            self.rows.push(0);
            return;
        }
        let k = self.least_loaded();
        let average = self.load.iter().sum::<u64>() / self.owners.len().max(1) as u64;
        self.load[k] += average.max(1);
        self.owners.push(k);
    }

    /// Whether table `i` is another part's.
    pub fn skips(&self, i: usize) -> bool {
        !self.counting && self.n > 1 && self.owner(i) != self.k
    }

    /// The part that fills table `i` (0 while every part fills every table).
    pub fn owner(&self, i: usize) -> usize {
        self.owners.get(i).copied().unwrap_or(0)
    }

    /// Counts a value of table `i`; true when the tables were shared out with it.
    pub fn count(&mut self, i: usize) -> bool {
        if let Some(r) = self.rows.get_mut(i) {
            *r += 1;
        }
        self.seen += 1;
        if self.seen < SETTLE {
            return false;
        }
        // The largest table first, to the part with the fewest rows (ties: the first table,
        // the first part).
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by_key(|&t| (std::cmp::Reverse(self.rows[t]), t));
        self.owners = vec![0; self.rows.len()];
        for t in order {
            let k = self.least_loaded();
            self.load[k] += self.rows[t].max(1);
            self.owners[t] = k;
        }
        self.counting = false;
        true
    }

    fn least_loaded(&self) -> usize {
        (0..self.n).min_by_key(|&k| (self.load[k], k)).unwrap_or(0)
    }
}

/// Whether two parts read the same log alike: the same tables and outcome.
fn agree(a: &(Tables, Result<Outcome, Error>), b: &(Tables, Result<Outcome, Error>)) -> bool {
    let same_tables = a.0.tables.len() == b.0.tables.len()
        && a.0.tables.iter().zip(&b.0.tables).all(|(x, y)| x.name == y.name && x.builder.schema == y.builder.schema)
        && a.0.by_channel == b.0.by_channel
        && a.0.share.owners == b.0.share.owners;
    let same_outcome = match (&a.1, &b.1) {
        (Ok(x), Ok(y)) => {
            x.samples == y.samples && x.warnings == y.warnings && x.error == y.error && x.fault == y.fault
        }
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    };
    same_tables && same_outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables go out largest first to the part with the fewest rows; a later table to the
    /// part with the fewest rows; every part shares alike.
    #[test]
    fn tables_are_shared_out_by_rows() {
        let shares: Vec<Share> = (0..2)
            .map(|k| {
                let mut s = Share::new(k, 2);
                (0..3).for_each(|i| s.table(i));
                let mut settled = false;
                for n in 0..SETTLE {
                    assert!(!s.skips(0) && !s.skips(1) && !s.skips(2), "every part fills every table at first");
                    let t = match n {
                        n if n < 40_000 => 0,
                        n if n < 60_000 => 1,
                        _ => 2,
                    };
                    settled = s.count(t);
                }
                assert!(settled && !s.counting);
                s.table(3);
                s
            })
            .collect();
        assert_eq!(shares[0].owners, [0, 1, 1, 1]);
        assert_eq!(shares[0].owners, shares[1].owners);
        assert_eq!((0..4).map(|i| shares[1].skips(i)).collect::<Vec<_>>(), [true, false, false, false]);
        assert_eq!((0..4).map(|i| shares[0].skips(i)).collect::<Vec<_>>(), [false, true, true, true]);
    }
}
