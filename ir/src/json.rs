//! The one JSON string escaper of the project: the dump's and `info --json`'s strings
//! (`logspec::json`) and the JSON the back ends write as text (golden vectors, JSON Schemas)
//! escape alike.

/// Whether a byte needs an escape inside a JSON string: `"`, `\` and the control characters.
const ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether any of the 8 bytes of `x` needs an escape: one below 0x20, a `"` or a `\\` (the
/// bit tricks of "Bit Twiddling Hacks": `x - 0x01..01 * n` borrows into a byte's top bit only
/// where the byte was below `n`; bytes of 0x80 and above are masked out).
#[inline]
fn needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOPS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & TOPS != 0;
    below(x, 0x20) || below(x ^ (ONES * u64::from(b'"')), 1) || below(x ^ (ONES * u64::from(b'\\')), 1)
}

/// How many bytes at the start of `b` surely need no escape: whole words of 8 bytes, and all of
/// `b` when its last 8 bytes need none either. A string shorter than 8 bytes (most field names)
/// is checked in one word too: its bytes, the rest filled with spaces.
#[inline]
fn clean_prefix(b: &[u8]) -> usize {
    let word =
        |i: usize| u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
    if b.len() < 8 {
        let short = b.iter().rev().fold(0x2020_2020_2020_2020u64, |w, &x| (w << 8) | u64::from(x));
        return if needs_escape(short) { 0 } else { b.len() };
    }
    let mut i = 0;
    while i + 8 <= b.len() && !needs_escape(word(i)) {
        i += 8;
    }
    if i == b.len() || (i + 8 > b.len() && !needs_escape(word(b.len() - 8))) {
        return b.len();
    }
    i
}

/// Appends `s` as a JSON string literal: `"` and `\\` escaped, `\n`, `\r` and `\t` by their short
/// escapes, the other control characters as `\u00XX`, everything else as it is (UTF-8).
///
/// By bytes: the runs between bytes that need an escape are copied whole, so a clean string
/// (every name of a schema) is one scan, 8 bytes at a time, and one copy. Every byte escaped is
/// ASCII, so each run begins and ends on a character boundary.
#[inline]
pub fn string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let clean = clean_prefix(bytes);
    if clean == bytes.len() {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate().skip(clean) {
        if !ESCAPE[usize::from(b)] {
            continue;
        }
        out.push_str(&s[start..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
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

    /// Every character below U+0100 alone and between others, against the escaping by
    /// characters that JSON's grammar states (RFC 8259, section 7), written out here.
    #[test]
    fn every_byte_as_the_grammar_says() {
        fn reference(s: &str) -> String {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        for c in (0u32..0x100).filter_map(char::from_u32) {
            let long = "abcdefghijklmnopq";
            for s in [
                c.to_string(),
                format!("ab{c}"),
                format!("{c}\u{e9}x{c}{c}"),
                format!("\u{1F600}{c}z"),
                format!("{long}{c}"),
                format!("{long}{c}{long}"),
                format!("{long}{long}{c}"),
                format!("abcdefg{c}"),
                format!("abcdefgh{c}"),
                format!("abcdefghi{c}xyz"),
            ] {
                let mut out = String::new();
                super::string(&mut out, &s);
                assert_eq!(out, reference(&s), "{s:?}");
            }
        }
        let mut out = String::new();
        super::string(&mut out, "");
        assert_eq!(out, "\"\"");
    }
}
