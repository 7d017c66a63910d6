//! The one JSON string escaper of the project: the dump's and `info --json`'s strings
//! (`logspec::json`) and the JSON the back ends write as text (golden vectors, JSON Schemas)
//! escape alike.

use std::fmt::Write;

/// Appends `s` as a JSON string literal: `"` and `\\` escaped, `\n`, `\r` and `\t` by their short
/// escapes, the other control characters as `\u00XX`, everything else as it is (UTF-8).
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_as_json_requires() {
        let mut out = String::new();
        super::string(&mut out, "a\"b\\c\nd\re\tf\u{1}g\u{e9}");
        assert_eq!(out, "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\u{e9}\"");
    }
}
