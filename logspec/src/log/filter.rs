//! Filters that match nothing are errors, not empty outputs: [`Tally`] notes every channel a
//! read meets and every sample a filter let through, and [`Tally::check`] turns a channel
//! pattern that matched no channel (with the log's channels and a did-you-mean) or a time window
//! that held none of the selected samples into an error.

use std::collections::BTreeSet;

/// What a read met, as far as the filters are concerned.
#[derive(Debug, Default)]
pub struct Tally {
    /// Every channel name met, selected or not.
    names: BTreeSet<String>,
    /// Samples of selected channels, in the time window or not, and their time span (ns since
    /// the log's origin).
    selected: u64,
    span: Option<(u64, u64)>,
    /// Samples of selected channels in the time window.
    kept: u64,
}

impl Tally {
    /// Whether `select` filters anything (otherwise nothing needs noting).
    pub fn needed(select: &Select) -> bool {
        !select.channels.is_empty() || select.since.is_some() || select.until.is_some()
    }

    /// Notes a channel met (once per channel is enough).
    pub fn channel(&mut self, name: &str) {
        if !name.is_empty() && !self.names.contains(name) {
            self.names.insert(name.to_string());
        }
    }

    /// Notes a sample of a selected channel at `t_ns` (ns since the log's origin; `None` when
    /// the format has no time) and whether the time window kept it.
    pub fn sample(&mut self, t_ns: Option<u64>, kept: bool) {
        self.selected += 1;
        if let Some(t) = t_ns {
            self.span = Some(self.span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
        self.kept += u64::from(kept);
    }

    /// Notes a sample on channel `name` and says whether `select` keeps it.
    pub fn note(&mut self, select: &Select, name: &str, t_ns: Option<u64>) -> bool {
        self.channel(name);
        if !select.wants_channel(name) {
            return false;
        }
        let kept = t_ns.is_none_or(|t| select.wants_time(t));
        self.sample(t_ns, kept);
        kept
    }

    /// An error when a channel pattern matched none of the channels met, or when the selected
    /// channels had samples but none in the time window. `path` names the log.
    pub fn check(&self, select: &Select, path: &str) -> Result<(), String> {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        no_match(select, &names, path, "channel", "the log's channels")?;
        if self.selected > 0 && self.kept == 0 {
            let window = match (select.since, select.until) {
                (Some(a), Some(b)) => format!("--since {a} --until {b}"),
                (Some(a), None) => format!("--since {a}"),
                (None, Some(b)) => format!("--until {b}"),
                (None, None) => String::new(),
            };
            let span = match self.span {
                Some((a, b)) => format!(
                    "; the selected samples span {} s to {} s from the log's origin",
                    a as f64 / 1e9,
                    b as f64 / 1e9
                ),
                None => String::new(),
            };
            return Err(format!("{path}: no sample in the time window {window}{span}"));
        }
        Ok(())
    }
}

/// An error naming the first pattern of `select.channels` that matches none of `names`, with
/// the names (`what_all`) and the closest one. `what` is the kind of name (`channel`, `topic`).
pub fn no_match(select: &Select, names: &[&str], path: &str, what: &str, what_all: &str) -> Result<(), String> {
    for p in &select.channels {
        let one = Select { channels: vec![p.clone()], tables: select.tables, ..Default::default() };
        if names.iter().any(|n| one.wants_channel(n)) {
            continue;
        }
        let hint = closest(p, names).map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default();
        let listed = if names.is_empty() {
            format!("{what_all}: none (the log holds no samples)")
        } else {
            let mut list: Vec<&str> = names.iter().take(30).copied().collect();
            let more = names.len().saturating_sub(list.len());
            if more > 0 {
                list.push("...");
            }
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{what_all} ({}): {}{more}", names.len(), list.join(", "))
        };
        return Err(format!("{path}: no {what} matches `{p}`{hint}; {listed}"));
    }
    Ok(())
}

/// The name closest to `pattern` (a trailing `*` ignored): the same but for case, or else the
/// one at the smallest edit distance when that distance is small against the name's length.
pub fn closest<'a>(pattern: &str, names: &[&'a str]) -> Option<&'a str> {
    let p = pattern.trim_end_matches('*');
    let lower = p.to_lowercase();
    if let Some(n) = names.iter().find(|n| n.to_lowercase().starts_with(&lower)) {
        return Some(n);
    }
    names
        .iter()
        .map(|n| (strsim::levenshtein(&lower, &n.to_lowercase()), *n))
        .filter(|(d, n)| *d * 3 <= n.len().max(p.len()))
        .min()
        .map(|(_, n)| n)
}

/// Which samples to pass on.
#[derive(Clone, Debug, Default)]
pub struct Select {
    /// Channel names to keep (exact, or a prefix ending in `*`); empty keeps all.
    pub channels: Vec<String>,
    /// Whether `channels` also name tables (`logspec_engine::tables::table_name`), as the Python
    /// package's `table(name)` takes every name of `tables()`: a name keeps a channel whose group
    /// it matches (`Position` keeps the CARLA channels `Position/<id>`), and `<name>#<type>`
    /// keeps the channels of `<name>` (the table of those whose type changed is among them).
    pub tables: bool,
    /// Keep samples at or after this time (seconds since the log's time origin).
    pub since: Option<f64>,
    /// Keep samples at or before this time (seconds since the log's time origin).
    pub until: Option<f64>,
}

impl Select {
    /// Whether a channel named `name` (of no group) is kept.
    pub fn wants_channel(&self, name: &str) -> bool {
        self.wants(name, None)
    }

    /// Whether a channel named `name`, of the group `group` (the table it is part of, if any), is
    /// kept: a name matches it, or, with [`Select::tables`], its group or its table of another
    /// type (`<name>#<type>`, `<group>#<type>`).
    pub fn wants(&self, name: &str, group: Option<&str>) -> bool {
        let matches = |pattern: &str, name: &str| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pattern == name,
        };
        let table = |pattern: &str, base: &str| {
            matches(pattern, base) || pattern.strip_prefix(base).is_some_and(|rest| rest.starts_with('#'))
        };
        self.channels.is_empty()
            || self
                .channels
                .iter()
                .any(|c| matches(c, name) || (self.tables && (table(c, name) || group.is_some_and(|g| table(c, g)))))
    }

    /// Whether a sample at `t_ns` nanoseconds after the log's time origin is wanted.
    pub fn wants_time(&self, t_ns: u64) -> bool {
        let t = t_ns as f64 / 1e9;
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t <= u)
    }
}

#[cfg(test)]
mod select_tests {
    use super::*;

    /// A filter of tables keeps the channels of a group by its name and those of `<name>#<type>`
    /// by their name; a filter of channels keeps neither (the command's `--channel`).
    #[test]
    fn a_filter_of_tables_keeps_groups_and_changed_types() {
        let of = |names: &[&str], tables: bool| Select {
            channels: names.iter().map(|n| n.to_string()).collect(),
            tables,
            ..Default::default()
        };
        for tables in [false, true] {
            let s = of(&["Position"], tables);
            assert_eq!(s.wants("Position/231", Some("Position")), tables);
            assert!(s.wants("Position", None));
            assert!(!s.wants("State/231", Some("State")));
            let s = of(&["/Key#string"], tables);
            assert_eq!(s.wants("/Key", None), tables);
            assert_eq!(s.wants("Position/2", Some("/Key")), tables);
            assert!(!s.wants("/Keys", None) && !s.wants("/Key#", None));
            assert!(of(&["Pos*"], tables).wants("Position/231", Some("Position")));
            assert!(of(&["Position/231"], tables).wants("Position/231", Some("Position")));
            assert!(!of(&["Position/231"], tables).wants("Position/232", Some("Position")));
            assert!(of(&[], tables).wants("anything", None));
        }
        assert!(!of(&["Pos*"], false).wants("State/2", Some("Position")));
        assert!(of(&["Pos*"], true).wants("State/2", Some("Position")));
    }
}
