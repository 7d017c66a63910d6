//! Channel and log names as file and folder names: the one place a name becomes a path
//! component. Each output escapes a name its own way (the Parquet export percent-encodes, as
//! Hive partitions do; CSV files use `_`); [`fit`] then makes the escaped name short enough for
//! the file system, so that one long key never fails a log. The original name is kept where the
//! output records it (the Parquet file's `logspec.table` metadata, the export's summary).

use sha2::{Digest, Sha256};

/// The longest file name, in bytes, that Linux, macOS and Windows file systems all take
/// (`NAME_MAX` = 255).
pub const NAME_MAX: usize = 255;

/// The hex digits of the hash that ends a shortened name.
const HASH_HEX: usize = 16;

/// `escaped` (a name already made safe as a path component, ASCII or not) as it is when it
/// leaves `reserve` bytes of [`NAME_MAX`] free (for what the caller adds: an extension, a
/// counter); past that, its first bytes (cut at a character boundary) then `~` and 16 hex digits
/// of the SHA-256 of the whole escaped name. The same name always gives the same component, and
/// two long names that differ anywhere give different ones.
pub fn fit(escaped: &str, reserve: usize) -> String {
    let limit = NAME_MAX.saturating_sub(reserve);
    if escaped.len() <= limit {
        return escaped.to_string();
    }
    let digest = Sha256::digest(escaped.as_bytes());
    let hash: String = digest.iter().take(HASH_HEX / 2).map(|b| format!("{b:02x}")).collect();
    let mut keep = limit.saturating_sub(1 + HASH_HEX);
    while !escaped.is_char_boundary(keep) {
        keep -= 1;
    }
    // A `%XX` escape cut in the middle would read as another name: cut before it.
    if let Some(p) = escaped[..keep].rfind('%').filter(|&p| p + 3 > keep) {
        keep = p;
    }
    format!("{}~{hash}", &escaped[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_stay_and_long_ones_fit_with_a_stable_hash() {
        assert_eq!(fit("imu.data", 4), "imu.data");
        let long = "x".repeat(1000);
        let a = fit(&long, 4);
        assert_eq!(a.len(), NAME_MAX - 4);
        assert_eq!(a, fit(&long, 4));
        let mut other = long.clone();
        other.push('y');
        assert_ne!(fit(&other, 4), a);
        assert!(a.starts_with("xxx") && a.as_bytes()[a.len() - 17] == b'~');
        // `printf 'x%.0s' $(seq 1000) | sha256sum`: 44f8354494a5ba03...
        assert!(a.ends_with("~44f8354494a5ba03"), "{a}");
    }

    #[test]
    fn a_cut_never_splits_an_escape_or_a_character() {
        let name = format!("{}%2E{}", "a".repeat(230), "b".repeat(100));
        let f = fit(&name, 0);
        assert!(!f.contains('%') || f.contains("%2E"), "{f}");
        let wide = "é".repeat(200);
        let f = fit(&wide, 0);
        assert!(f.len() <= NAME_MAX && f.is_char_boundary(f.len() - 17));
    }
}
