//! A JSON writer driven by the runtime's [`Visitor`], for JSON Lines dumps.
//!
//! Numbers follow the conventions of the reference dumps: an `f32` is widened exactly to `f64`
//! and printed in shortest round-trip form (`0.2f32` prints as `0.20000000298023224`); NaN and
//! infinities are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`; enums and flags print as
//! their raw integers; bytes print as lowercase hex strings.
//!
//! The text is made for speed, byte for byte what `format!` would make: integers through `itoa`,
//! floats through `zmij` (shortest round trip) laid out as Rust's `{:?}` lays them out
//! ([`float`]), strings escaped by bytes ([`string`]), bytes in hex by a table. A
//! [`JsonWriter`] keeps the texts of the keys and of the floats it has written, so that a key or
//! a value that comes again (as they do in logs) is copied rather than made again.

use logspec_runtime::{Event, FramedFormat, NumberType, Numbers, RecordHeader, Visit, Visitor};

use crate::value::ValueSink;

/// A string's length and its first and last 8 bytes (fewer, for a shorter one): all of its text
/// up to 16 bytes. It finds a name in a small table of names seen (the dump's keys here, a
/// tape's names in [`crate::tape`]) without reading all of a long one.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Key(u64, u64, usize);

impl Key {
    #[inline]
    pub(crate) fn of(s: &[u8]) -> Key {
        let n = s.len();
        let word = |b: Option<&[u8; 8]>| b.map_or(0, |b| u64::from_ne_bytes(*b));
        let half = |b: Option<&[u8; 4]>| b.map_or(0, |b| u64::from(u32::from_ne_bytes(*b)));
        match n {
            8.. => Key(word(s.first_chunk()), word(s.last_chunk()), n),
            4..=7 => Key(half(s.first_chunk()) | half(s.last_chunk()) << 32, 0, n),
            1..=3 => Key(u64::from(s[0]) | u64::from(s[n / 2]) << 8 | u64::from(s[n - 1]) << 16, 0, n),
            0 => Key(0, 0, 0),
        }
    }

    /// Whether the key is all of the string's text (so equal keys are equal strings).
    #[inline]
    pub(crate) fn whole(self) -> bool {
        self.2 <= 16
    }

    /// The first of the two slots of a table of `slots` (a power of two) the key may be in; the
    /// second is the next one.
    #[inline]
    pub(crate) fn slot(self, slots: usize) -> usize {
        let h = (self.0 ^ self.1.rotate_left(29) ^ self.2 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 56) as usize & (slots - 1) & !1
    }
}

/// Slots of the writer's table of keys (a power of two, at most 256).
const KEYS: usize = 256;

/// Slots of the writer's table of float texts (a power of two).
const FLOATS: usize = 512;

/// A short text kept to be written again ([`JsonWriter::keys`], [`JsonWriter::floats`]): its
/// bytes padded with zeros to `N`, so that it is copied in one fixed-size piece and cut to its
/// length. Made only by [`Padded::new`], from a whole `str`.
#[derive(Clone, Copy)]
struct Padded<const N: usize> {
    len: u8,
    text: [u8; N],
}

impl<const N: usize> Padded<N> {
    const EMPTY: Self = Padded { len: 0, text: [0; N] };

    /// `s` kept, if it fits (in `N - 1` bytes: all of it is copied at once from its first or
    /// second byte).
    #[inline]
    fn new(s: &str) -> Option<Self> {
        let len = u8::try_from(s.len()).ok().filter(|&n| usize::from(n) < N && N <= 32)?;
        let mut text = [0; N];
        copy_short(&mut text, s.as_bytes());
        Some(Padded { len, text })
    }

    /// Appends the text to `out`, without its first byte if `skip` and that byte is ASCII.
    #[inline(always)]
    fn push(&self, out: &mut String, skip: bool) {
        let skip = usize::from(skip && self.text[0].is_ascii());
        // SAFETY: `text[..len]` is a whole `str`'s bytes and the rest zeros (`Padded::new`), and
        // the byte skipped is ASCII, so `out` stays UTF-8 throughout: with the bytes appended,
        // and cut after the text.
        #[allow(unsafe_code)]
        let v = unsafe { out.as_mut_vec() };
        let at = v.len();
        let (text, rest) = self.text.split_at(skip);
        v.extend_from_slice(&rest[..N - 1]);
        v.truncate(at + usize::from(self.len).saturating_sub(text.len()));
    }
}

/// A float's text kept by its bits, in [`JsonWriter::floats`] (`len` 0: an empty slot).
#[derive(Clone, Copy)]
struct FloatText {
    bits: u64,
    text: Padded<24>,
}

/// A key's text kept by its name's [`Key`], in [`JsonWriter::keys`]: `,"name":`, written
/// with its comma or without (`len` 0: an empty slot). One cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct KeyText {
    key: Key,
    text: Padded<32>,
}

impl KeyText {
    /// Whether this is the text of name `n`, whose key is `key`: the key is all of a short
    /// name, and a longer one is compared with the text's (a name that needs escaping is never
    /// found, and is escaped each time).
    #[inline]
    fn is(&self, key: Key, n: &str) -> bool {
        let len = usize::from(self.text.len);
        self.key == key && len != 0 && (key.whole() || self.text.text.get(2..len - 2) == Some(n.as_bytes()))
    }
}

/// Writes one JSON value (usually an object) into a string.
#[derive(Default)]
pub struct JsonWriter {
    out: String,
    /// Per open container: whether it has an element yet.
    stack: Vec<bool>,
    /// Whether a union's variant adds its fields to the enclosing object (instead of an object
    /// of its own with a `variant` key).
    flatten: bool,
    /// Keys written before, by their name's [`Key`], so that a name is escaped once (made at
    /// the first key); a name too long for a [`Padded`] text is escaped each time.
    keys: Vec<KeyText>,
    /// Floats written before, by their bits (one slot each, the last one there kept): logs
    /// repeat values (constants, zeros, quantised readings), and copying a text kept is several
    /// times cheaper than making it. Half or so of the floats are found here in the bundled
    /// logs' dumps (0.43 of a PX4 ULog's, 0.51 of the USVLOG bench input's, 0.81-0.85 of
    /// USVLOG, DataFlash and CARLA recordings').
    floats: Vec<FloatText>,
}

impl JsonWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that shows a union's variant by its fields alone, as members of the enclosing
    /// object: for formats whose reference dumps do not name variants (CARLA).
    pub fn flattening() -> Self {
        JsonWriter { flatten: true, ..Self::default() }
    }

    /// The text written so far; clears the writer for reuse.
    pub fn take(&mut self) -> String {
        self.stack.clear();
        std::mem::take(&mut self.out)
    }

    /// Goes on writing into `text` (emptied first), keeping the keys escaped before: for a
    /// writer whose text was [taken](Self::take), so that a batch of lines after another needs
    /// neither a new buffer nor its keys escaped again.
    pub fn reuse(&mut self, mut text: String) {
        text.clear();
        self.out = text;
        self.stack.clear();
    }

    pub fn as_str(&self) -> &str {
        &self.out
    }

    /// Clears the writer for reuse, keeping its buffer (no allocation for the next value).
    pub fn clear(&mut self) {
        self.out.clear();
        self.stack.clear();
    }

    /// The length of the text so far: a place to come back to with [`truncate`](Self::truncate).
    pub fn mark(&self) -> usize {
        self.out.len()
    }

    /// Forgets the text after `mark` and every container still open: several values written one
    /// after another (the dump's lines) and the one being written given up.
    pub fn truncate(&mut self, mark: usize) {
        self.out.truncate(mark);
        self.stack.clear();
    }

    /// Ends a line of JSON Lines (after a complete value).
    pub fn newline(&mut self) {
        self.out.push('\n');
    }

    /// Starts an element: a comma if needed, and the key inside an object.
    #[inline(always)]
    fn key(&mut self, name: Option<&str>) {
        let comma = self.stack.last_mut().is_some_and(|first| std::mem::replace(first, true));
        match name {
            Some(n) => self.name(n, comma),
            None if comma => self.out.push(','),
            None => {}
        }
    }

    /// `"n":`, after a comma if `comma`, escaped once per name ([`JsonWriter::keys`]); out of
    /// line, so that an element without a name (an array's) costs only its comma.
    #[inline(never)]
    fn name(&mut self, n: &str, comma: bool) {
        if self.keys.is_empty() {
            self.keys.resize(KEYS, KeyText { key: Key::default(), text: Padded::EMPTY });
        }
        let key = Key::of(n.as_bytes());
        let slot = key.slot(KEYS);
        for at in [slot, slot + 1] {
            let kept = &self.keys[at];
            if kept.is(key, n) {
                kept.text.push(&mut self.out, !comma);
                return;
            }
        }
        let start = self.out.len();
        self.out.push(',');
        string(&mut self.out, n);
        self.out.push(':');
        let text = Padded::new(&self.out[start..]);
        if !comma {
            self.out.remove(start);
        }
        if let Some(text) = text {
            let at = if self.keys[slot].text.len == 0 { slot } else { slot + 1 };
            self.keys[at] = KeyText { key, text };
        }
    }

    /// A finite or non-finite float as [`float`] writes it, its text found in
    /// [`JsonWriter::floats`] when the same value was written before.
    #[inline]
    fn float(&mut self, v: f64) {
        let bits = v.to_bits();
        let slot = (bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FLOATS.trailing_zeros())) as usize;
        match self.floats.get(slot) {
            Some(kept) if kept.bits == bits && kept.text.len != 0 => kept.text.push(&mut self.out, false),
            _ => self.new_float(v, slot),
        }
    }

    /// A float not in the table: made by [`float`] and kept in `slot`.
    #[inline(never)]
    fn new_float(&mut self, v: f64, slot: usize) {
        if self.floats.is_empty() {
            self.floats.resize(FLOATS, FloatText { bits: 0, text: Padded::EMPTY });
        }
        let at = self.out.len();
        float(&mut self.out, v);
        if let (Some(kept), Some(text)) = (self.floats.get_mut(slot), Padded::new(&self.out[at..])) {
            *kept = FloatText { bits: v.to_bits(), text };
        }
    }

    /// Opens an object that the caller fills with `key`/value calls.
    pub fn begin_object(&mut self, name: Option<&str>) {
        self.key(name);
        self.out.push('{');
        self.stack.push(false);
    }

    pub fn end_object(&mut self) {
        self.stack.pop();
        self.out.push('}');
    }

    /// Inserts already-rendered JSON as a value.
    pub fn raw(&mut self, name: Option<&str>, json: &str) {
        self.key(name);
        self.out.push_str(json);
    }

    pub fn null(&mut self, name: Option<&str>) {
        self.key(name);
        self.out.push_str("null");
    }
}

/// A JSON string literal (the project's one escaper, shared with the back ends' JSON).
pub use logspec_ir::json::string;

/// A float in shortest round-trip form, or a string for non-finite values.
///
/// The text is Rust's `format!("{v:?}")`: a decimal with at least one digit after the point for
/// `1e-4 <= |v| < 1e16` and zero (`0.001`, `12.0`, `-0.0`), else the exponent form with one digit
/// before the point and no `+` (`1e-5`, `1.5e16`). `zmij` gives the same shortest digits; it lays
/// out `1e-5 <= |v| < 1e16` as a decimal and writes `e+16`, so the values outside `std`'s decimal
/// range are laid out again here; so are the values halfway between two shortest forms, where
/// `std` takes the larger and `zmij` the even one.
pub fn float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else {
        let mut buf = zmij::Buffer::new();
        let text = buf.format_finite(v);
        let a = v.abs();
        let at = out.len();
        if a == 0.0 || (1e-4..1e16).contains(&a) {
            push_short(out, text);
        } else {
            exponent_form(out, text);
        }
        if halfway_below(v, text) {
            // `std` takes the larger of two shortest forms equally near, `zmij` (rounding to even)
            // took the smaller: its last digit one more.
            let end = out[at..].find('e').map_or(out.len(), |i| at + i);
            let last = out[at..end].rfind(|c: char| ('1'..='9').contains(&c)).map_or(at, |i| at + i);
            match out.as_bytes()[last] {
                d @ b'1'..=b'8' => out.replace_range(last..=last, char::from(d + 1).encode_utf8(&mut [0; 4])),
                // A 9 to carry over (not seen): `std`'s own text.
                _ => {
                    out.truncate(at);
                    let _ = std::fmt::Write::write_fmt(out, format_args!("{v:?}"));
                }
            }
        }
    }
}

/// Whether `v` lies exactly halfway between two decimals of as many digits as `text` has (the
/// shortest form `zmij` found) and `text` is the one nearer zero, which `std` does not choose.
/// `v` is `m * 2^e` (`m` odd), whose decimal digits end with a 5 at 10^e when `e < 0` (an integer
/// `v` is never halfway: its spacing is too narrow for such decimals); the shortest form is one
/// digit short of the exact value only when that has 16 to 18 digits. `text` is the smaller when
/// its last digit is the exact value's last but one.
fn halfway_below(v: f64, text: &str) -> bool {
    let bits = v.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (m, e) = if field == 0 { (fraction, -1074) } else { (fraction | (1 << 52), field - 1075) };
    if m == 0 {
        return false;
    }
    let e = e + m.trailing_zeros() as i32;
    // 5^27 > 10^18: too many digits for any m.
    if !(-26..0).contains(&e) {
        return false;
    }
    let exact = u128::from(m >> m.trailing_zeros()) * u128::from(5u64.pow(e.unsigned_abs()));
    if !(10u128.pow(15)..10u128.pow(18)).contains(&exact) {
        return false;
    }
    // The significant digits of `text`, before its exponent.
    let mantissa = text.split('e').next().unwrap_or(text).as_bytes();
    let nonzero = |c: &u8| (b'1'..=b'9').contains(c);
    let (Some(first), Some(last)) = (mantissa.iter().position(nonzero), mantissa.iter().rposition(nonzero)) else {
        return false;
    };
    let shown = mantissa[first..=last].iter().filter(|c| c.is_ascii_digit()).count();
    shown == exact.ilog10() as usize && u128::from(mantissa[last] - b'0') == (exact / 10) % 10
}

/// Lays out a finite float's text (a decimal or `D.DDDe±X`) as `{:?}`'s exponent form:
/// `D.DDDeX`, the exponent without `+`, no trailing zeros in the digits.
fn exponent_form(out: &mut String, text: &str) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The significant digits (at most 17), and how many zeros came before the first.
    let mut digits = [b'0'; 24];
    let (mut n, mut zeros) = (0, 0i32);
    for c in int.bytes().chain(frac.bytes()) {
        if n == 0 && c == b'0' {
            zeros += 1;
        } else if n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let exp = exp + int.len() as i32 - 1 - zeros;
    if negative {
        out.push('-');
    }
    out.push(char::from(digits[0]));
    if n > 1 {
        out.push('.');
        digits[1..n].iter().for_each(|&d| out.push(char::from(d)));
    }
    out.push('e');
    out.push_str(itoa::Buffer::new().format(exp));
}

/// An integer in decimal.
fn integer(out: &mut String, v: impl itoa::Integer) {
    push_short(out, itoa::Buffer::new().format(v));
}

/// Appends `s` to `out`; one of up to 32 bytes (a key's text, a number's digits) in a few
/// fixed-size copies, not a call of `memcpy` each (12-16% of a dump's time, `perf` of USVLOG).
#[inline(always)]
fn push_short(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let n = b.len();
    if n > 32 {
        out.push_str(s);
        return;
    }
    // SAFETY: `out` stays UTF-8 throughout: the 32 zeros appended are, and after the copies and
    // the truncation it holds its text before followed by `s`, whole.
    #[allow(unsafe_code)]
    let v = unsafe { out.as_mut_vec() };
    let at = v.len();
    v.extend_from_slice(&[0; 32]);
    copy_short(&mut v[at..at + 32], b);
    v.truncate(at + n);
}

/// Copies `b` (at most 32 bytes) to the start of `d` (at least as long) in a few fixed-size
/// copies, writing nothing of `d` past `b`'s length.
#[inline(always)]
fn copy_short(d: &mut [u8], b: &[u8]) {
    let n = b.len();
    match n {
        16.. => {
            d[..16].copy_from_slice(&b[..16]);
            d[n - 16..n].copy_from_slice(&b[n - 16..]);
        }
        8..=15 => {
            d[..8].copy_from_slice(&b[..8]);
            d[n - 8..n].copy_from_slice(&b[n - 8..]);
        }
        4..=7 => {
            d[..4].copy_from_slice(&b[..4]);
            d[n - 4..n].copy_from_slice(&b[n - 4..]);
        }
        1..=3 => {
            d[0] = b[0];
            d[n / 2] = b[n / 2];
            d[n - 1] = b[n - 1];
        }
        0 => {}
    }
}

/// One record of a framed stream as the JSON object of `logspec dump`: the timestamp and tag
/// fields of the record header (under their schema names), `name`, and `fields`; a record of a
/// type the schema does not know has `"name": null`, its length and `payload_hex` instead.
///
/// Any [`ValueSink`] takes it: this writer for the dump's text, a value builder for the Python
/// package.
pub fn framed_event<F: FramedFormat>(w: &mut (impl ValueSink + ?Sized), ev: &Event<'_, F::Record>) {
    let fields = FrameFields { tag: F::TAG_FIELD, length: F::LENGTH_FIELD, timestamp: F::TIMESTAMP_FIELD };
    match ev {
        Event::Record { raw, record } => {
            let name = F::record_name(raw.header.tag).unwrap_or("");
            framed_record(w, &fields, &raw.header, raw.payload, Some((name, record)));
        }
        Event::Unknown { raw } => framed_record::<()>(w, &fields, &raw.header, raw.payload, None),
    }
}

/// The names of a framing's record-header fields that hold the tag, the length and the
/// timestamp: the keys of a dump line.
pub struct FrameFields<'a> {
    pub tag: &'a str,
    pub length: &'a str,
    pub timestamp: Option<&'a str>,
}

/// One framed record as a dump line ([`framed_event`]'s, for any reader): the timestamp and
/// tag under their field names, then the record's `name` and `fields`, or, for a type the
/// schema does not know (`record` `None`), its length and `payload_hex`.
pub fn framed_record<V: Visit + ?Sized>(
    w: &mut (impl ValueSink + ?Sized),
    fields: &FrameFields<'_>,
    header: &RecordHeader,
    payload: &[u8],
    record: Option<(&str, &V)>,
) {
    w.begin_struct(None);
    if let (Some(name), Some(ts)) = (fields.timestamp, header.timestamp) {
        w.uint(Some(name), ts);
    }
    w.uint(Some(fields.tag), header.tag);
    match record {
        Some((name, value)) => {
            w.str(Some("name"), name);
            value.visit(Some("fields"), w);
        }
        None => {
            w.null(Some("name"));
            w.uint(Some(fields.length), header.len);
            let mut h = String::with_capacity(payload.len() * 2);
            hex(&mut h, payload);
            w.str(Some("payload_hex"), &h);
        }
    }
    w.end_struct();
}

/// Lowercase hex of a byte string.
pub fn hex(out: &mut String, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 * b.len());
    for &x in b {
        out.push(char::from(HEX[usize::from(x >> 4)]));
        out.push(char::from(HEX[usize::from(x & 0xf)]));
    }
}

impl Visitor for JsonWriter {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        self.key(name);
        integer(&mut self.out, v);
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        self.key(name);
        integer(&mut self.out, v);
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        self.key(name);
        self.float(f64::from(v));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        self.key(name);
        self.float(v);
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        self.key(name);
        self.out.push_str(if v { "true" } else { "false" });
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        self.key(name);
        string(&mut self.out, v);
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.key(name);
        self.out.push('"');
        hex(&mut self.out, v);
        self.out.push('"');
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, _label: Option<&'static str>) {
        self.key(name);
        integer(&mut self.out, raw);
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        self.key(name);
        integer(&mut self.out, raw);
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        self.begin_object(name);
    }
    fn end_struct(&mut self) {
        self.end_object();
    }
    fn begin_array(&mut self, name: Option<&str>, _len: usize) {
        self.key(name);
        self.out.push('[');
        self.stack.push(false);
    }
    fn end_array(&mut self) {
        self.stack.pop();
        self.out.push(']');
    }
    /// The numbers as an array, as [`Visitor::numbers`]'s default writes them; `u8`s each in at
    /// most three digits written directly (a ROS point cloud's bytes are most of a bag's text).
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        if v.ty() != NumberType::U8 {
            return v.show(name, self);
        }
        let v = v.bytes();
        self.key(name);
        self.out.reserve(v.len() * 4 + 2);
        self.out.push('[');
        for (i, &b) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            if b >= 100 {
                self.out.push(char::from(b'0' + b / 100));
            }
            if b >= 10 {
                self.out.push(char::from(b'0' + b / 10 % 10));
            }
            self.out.push(char::from(b'0' + b % 10));
        }
        self.out.push(']');
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, _tag: i128) {
        if !self.flatten {
            self.begin_object(name);
            self.str(Some("variant"), variant);
        }
    }
    fn end_variant(&mut self) {
        if !self.flatten {
            self.end_object();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_short` appends what `push_str` appends, for every length up to past its 32 bytes,
    /// ASCII and multi-byte text, after text of any length already there.
    #[test]
    fn push_short_is_push_str() {
        let chars = ['a', 'Z', '7', '"', 'é', '€', '🦀', '\u{0}'];
        for before in ["", "x", "{\"key\":", "0123456789abcdefghijklmnopqrstuvwxyz"] {
            for len in 0..48 {
                for start in 0..chars.len() {
                    let s: String = chars.iter().cycle().skip(start).take(len).collect();
                    let (mut short, mut whole) = (before.to_string(), before.to_string());
                    push_short(&mut short, &s);
                    whole.push_str(&s);
                    assert_eq!(short, whole, "{s:?} after {before:?}");
                }
            }
        }
    }

    #[test]
    fn floats_match_python_repr_values() {
        let mut s = String::new();
        float(&mut s, f64::from(0.2f32));
        assert_eq!(s, "0.20000000298023224");
        s.clear();
        float(&mut s, 0.0);
        assert_eq!(s, "0.0");
        s.clear();
        float(&mut s, f64::NAN);
        assert_eq!(s, "\"NaN\"");
    }

    /// `float` against `std`'s `format!("{v:?}")`, the independent reference, over random bit
    /// patterns of `f64` and of `f32` widened, subnormals, integers, and the powers of ten and
    /// their neighbours around the points where either layout switches form.
    #[test]
    fn floats_are_std_debug() {
        fn check(v: f64) {
            if !v.is_finite() {
                return;
            }
            let mut s = String::new();
            float(&mut s, v);
            assert_eq!(s, format!("{v:?}"), "bits {:#018x}", v.to_bits());
        }
        fn around(v: f64) {
            for d in 0..=3u64 {
                check(f64::from_bits(v.to_bits().wrapping_add(d)));
                check(f64::from_bits(v.to_bits().wrapping_sub(d)));
                check(-f64::from_bits(v.to_bits().wrapping_add(d)));
            }
        }
        // splitmix64: a fixed seed, the same values every run.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..300_000 {
            let r = next();
            check(f64::from_bits(r));
            check(f64::from(f32::from_bits(r as u32)));
            check(f64::from(f32::from_bits((r >> 32) as u32)));
            // Subnormals of both widths.
            check(f64::from_bits(r & 0x800f_ffff_ffff_ffff));
            check(f64::from(f32::from_bits((r as u32) & 0x807f_ffff)));
            // Integers, small and up to 2^63.
            check((r as i64 >> (r % 64)) as f64);
            check(f64::from((r >> 40) as u32 as i32 % 100_000));
            // `f32` values of 100 to 10^4 widened, often halfway between two shortest forms.
            check(f64::from(100f32 * 10f32.powf(2.0 * (r >> 40) as f32 / (1u64 << 24) as f32)));
            // Values near the switch points: [1e-6, 1e-3] and [1e14, 1e18].
            let m = (r >> 11) as f64 / (1u64 << 53) as f64;
            check(1e-6 * 10f64.powf(3.0 * m));
            check(1e14 * 10f64.powf(4.0 * m));
        }
        // Every 4099th `f32`, widened: each exponent of its range many times.
        for bits in (0..=u32::MAX).step_by(4099) {
            check(f64::from(f32::from_bits(bits)));
        }
        // Every power of two, subnormal and normal: the narrower interval below them.
        for k in -1074..=1023i64 {
            let bits = if k < -1022 { 1u64 << (k + 1074) } else { ((k + 1023) as u64) << 52 };
            around(f64::from_bits(bits));
        }
        for k in -330..=310 {
            let p: f64 = format!("1e{k}").parse().unwrap();
            around(p);
            around(f64::from(p as f32));
            for d in [2.0, 5.0, 9.5] {
                around(p * d);
            }
        }
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::from_bits(1),
            f64::from(f32::MAX),
            f64::from(f32::MIN_POSITIVE),
            f64::from(f32::from_bits(1)),
            9007199254740992.0,
            9999999999999998.0,
            1e16,
            0.0001,
            0.00009999999999999999,
            1e-5,
            // Halfway between two shortest forms: std takes the larger. 2038464050747632.25 and
            // 2^-24 (5.9604644775390625e-8, the interval below it narrower).
            f64::from_bits(0x431c_f7e3_9687_63c1),
            -f64::from_bits(0x431c_f7e3_9687_63c1),
            f64::from_bits(0x3e70_0000_0000_0000),
            1.5 + f64::EPSILON,
        ] {
            around(v);
        }
    }

    /// The writer's floats, texts kept by their bits ([`JsonWriter::floats`]), against `std`'s
    /// `format!("{v:?}")` (laid out as `float` lays it out): values drawn from a small set, so
    /// most are found kept and slots are taken over by other values, of every length (longest
    /// 24 bytes, not kept), NaN and the infinities among them; through `f32` and `f64`.
    #[test]
    fn kept_floats_are_std_debug() {
        let reference = |v: f64| match v {
            _ if v.is_nan() => "\"NaN\"".to_string(),
            f64::INFINITY => "\"Infinity\"".to_string(),
            f64::NEG_INFINITY => "\"-Infinity\"".to_string(),
            _ => format!("{v:?}"),
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut set: Vec<f64> = (0..4000).map(|_| f64::from_bits(next())).collect();
        set.extend((0..2000).map(|_| f64::from(f32::from_bits(next() as u32))));
        set.extend([0.0, -0.0, 1.0, 0.2, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.2345678901234567e-300]);
        set.extend((0..100).map(|k| f64::from(k) * 0.5));
        let mut w = JsonWriter::new();
        let mut expected = String::new();
        w.begin_array(None, 0);
        expected.push('[');
        for i in 0..200_000 {
            let v = set[(next() % set.len() as u64) as usize];
            if next() % 2 == 0 && f64::from(v as f32).to_bits() == v.to_bits() {
                w.f32(None, v as f32);
            } else {
                w.f64(None, v);
            }
            if i > 0 {
                expected.push(',');
            }
            expected.push_str(&reference(v));
        }
        w.end_array();
        expected.push(']');
        assert_eq!(w.as_str(), expected);
        assert!(w.floats.iter().filter(|k| k.text.len != 0).count() > FLOATS / 2);
    }

    /// Keys kept by their [`Key`] ([`JsonWriter::keys`]) against each key escaped by [`string`]:
    /// names of every length (some too long to keep), long names alike in their first and last
    /// 8 bytes and length, names that need escaping, more names than slots; with and without
    /// commas, in objects and arrays.
    #[test]
    fn kept_keys_are_escaped_names() {
        let mut names: Vec<String> = (0..40).map(|n| "k".repeat(n)).collect();
        names.extend((0..300).map(|i| format!("field_{i}")));
        names.extend((0..50).map(|i| format!("abcdefgh_{i:03}_12345678")));
        names.extend(["é", "a\"b", "tab\there", "x", "ünïcödé_name_long_enough", "", "\u{1}"].map(String::from));
        let mut w = JsonWriter::new();
        let mut expected = String::from("[");
        w.begin_array(None, 0);
        let mut state = 0x1234_5678_9abc_def1u64;
        for round in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if round > 0 {
                expected.push(',');
            }
            w.begin_object(None);
            expected.push('{');
            for k in 0..(state % 7) as usize {
                let name = &names[(state as usize / 7 + k * 13) % names.len()];
                if k > 0 {
                    expected.push(',');
                }
                string(&mut expected, name);
                expected.push_str(":1");
                w.uint(Some(name), 1);
            }
            w.end_object();
            expected.push('}');
        }
        w.end_array();
        expected.push(']');
        assert_eq!(w.as_str(), expected);
    }

    #[test]
    fn integers_and_hex() {
        let mut w = JsonWriter::new();
        w.begin_array(None, 0);
        for v in [0u64, 9, 10, 12345, u64::MAX] {
            w.uint(None, v);
        }
        for v in [i64::MIN, -1, 0, 77, i64::MAX] {
            w.int(None, v);
        }
        w.enumeration(None, i128::MIN, None);
        w.flags(None, 1 << 40);
        w.bytes(None, &[0x00, 0x0f, 0xa0, 0xff]);
        w.end_array();
        let expected = format!(
            "[0,9,10,12345,{},{},-1,0,77,{},{},{},\"000fa0ff\"]",
            u64::MAX,
            i64::MIN,
            i64::MAX,
            i128::MIN,
            1u64 << 40
        );
        assert_eq!(w.take(), expected);
    }

    /// `numbers` of `u8`s writes what the trait's default (each byte through `uint`) writes:
    /// every byte value, an empty array, and arrays as members after others.
    #[test]
    fn u8_arrays_as_numbers() {
        let all: Vec<u8> = (0..=255).collect();
        let mut direct = JsonWriter::new();
        let mut by_numbers = JsonWriter::new();
        for w in [&mut direct, &mut by_numbers] {
            w.begin_struct(None);
            w.uint(Some("n"), 1);
        }
        for v in [&all[..], &[], &[7, 100, 99, 10, 9]] {
            direct.numbers(Some("a"), Numbers::u8s(v));
            by_numbers.begin_array(Some("a"), v.len());
            for &b in v {
                by_numbers.uint(None, u64::from(b));
            }
            by_numbers.end_array();
        }
        direct.begin_array(None, 1);
        direct.numbers(None, Numbers::u8s(&[255]));
        direct.end_array();
        by_numbers.begin_array(None, 1);
        by_numbers.begin_array(None, 1);
        by_numbers.uint(None, 255);
        by_numbers.end_array();
        by_numbers.end_array();
        direct.end_struct();
        by_numbers.end_struct();
        assert_eq!(direct.take(), by_numbers.take());
    }

    #[test]
    fn nesting_and_escaping() {
        let mut w = JsonWriter::new();
        w.begin_struct(None);
        w.uint(Some("a"), 1);
        w.begin_array(Some("b"), 2);
        w.int(None, -1);
        w.str(None, "x\"y");
        w.end_array();
        w.bytes(Some("c"), &[0xde, 0xad]);
        w.end_struct();
        assert_eq!(w.take(), r#"{"a":1,"b":[-1,"x\"y"],"c":"dead"}"#);
    }
}
