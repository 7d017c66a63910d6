//! A visit recorded to be replayed later, on another thread: the calls a [`Visitor`] (and a
//! [`ValueSink`]) receives, kept as a list of small operations (16 bytes each; strings, bytes
//! and 128-bit numbers beside them), and [`Tape::replay`] making the same calls, in the same
//! order, on any other sink. It lives only in memory: nothing of it is ever written out.
//!
//! It is what lets `logspec dump` format on two threads: the reading thread records its
//! records into a tape (a few stores per value), and a second thread replays the tape into the
//! one JSON writer ([`crate::json::JsonWriter`]), so the text is made by the same code either
//! way ([`crate::log::records::TwoThreads`]).
//!
//! Names (and string values) are kept once per tape: a name is looked up in a small table by its
//! length and its first and last 8 bytes, which are the whole text of a name of up to 16 bytes;
//! a longer one is compared with the text kept before it is reused. So a name costs a lookup,
//! not a copy, and a replay hands out the text kept, checked as UTF-8 once.

use logspec_runtime::{Endian, NumberType, Numbers, Visitor};

use crate::json::Key;
use crate::value::ValueSink;

/// A recorded visit: [`Visitor`] and [`ValueSink`] calls, to be [`replay`](Tape::replay)ed.
pub struct Tape {
    ops: Vec<Op>,
    /// The names and string values used, one after another, and each one's span in it.
    text: String,
    spans: Vec<(u32, u32)>,
    /// The bytes of `bytes` and `numbers` values, one after another.
    blobs: Vec<u8>,
    /// Enum values and union tags (128 bits: kept aside so that an operation stays small).
    wide: Vec<i128>,
    /// The `&'static str`s (a union's variant, an enum's label), by index.
    statics: Vec<&'static str>,
    /// Names seen, by their [`Key`], with their index in `spans`.
    seen: Box<[(Key, u32); SEEN]>,
}

/// One recorded call. `N` is a name's index in the tape's names ([`NONE`] for `None`).
#[derive(Clone, Copy)]
enum Op {
    Uint(N, u64),
    Int(N, i64),
    F32(N, f32),
    F64(N, f64),
    Bool(N, bool),
    /// The string's index among the names.
    Str(N, u32),
    /// The bytes' span in `blobs`.
    Bytes(N, u32, u32),
    /// The elements' type and byte order, their bytes' span in `blobs`.
    Numbers(N, NumberType, Endian, u32, u32),
    /// The value's index in `wide`, the label's in `statics` (or [`NONE`]).
    Enum(N, u32, u32),
    Flags(N, u64),
    BeginStruct(N),
    EndStruct,
    BeginArray(N, u64),
    EndArray,
    /// The variant's index in `statics`, the tag's in `wide`.
    BeginVariant(N, u32, u32),
    EndVariant,
    Null(N),
    Mark,
}

/// A name's index in a tape's names.
type N = u32;

const _: () = assert!(std::mem::size_of::<Op>() == 16);

/// Slots of the table of names seen (a power of two), in pairs: a name is in one of two.
const SEEN: usize = 256;

/// No name (`None`), as a name's index.
const NONE: u32 = u32::MAX;

impl Default for Tape {
    fn default() -> Tape {
        Tape::new()
    }
}

impl Tape {
    pub fn new() -> Tape {
        Tape {
            ops: Vec::new(),
            text: String::new(),
            spans: Vec::new(),
            blobs: Vec::new(),
            wide: Vec::new(),
            statics: Vec::new(),
            seen: Box::new([(Key::default(), NONE); SEEN]),
        }
    }

    /// The calls recorded.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// About how many bytes the tape holds.
    pub fn size(&self) -> usize {
        self.ops.len() * std::mem::size_of::<Op>() + self.text.len() + self.blobs.len()
    }

    /// Forgets everything recorded, keeping the buffers.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.text.clear();
        self.spans.clear();
        self.blobs.clear();
        self.wide.clear();
        self.statics.clear();
        self.seen.fill((Key::default(), NONE));
    }

    /// Forgets the calls recorded after the first `len` ([`Tape::len`] then).
    pub fn truncate(&mut self, len: usize) {
        self.ops.truncate(len);
    }

    /// Records a mark: [`Tape::replay`] calls its `mark` there (between records, say).
    pub fn mark(&mut self) {
        self.ops.push(Op::Mark);
    }

    /// The index of `name` in this tape's names, added if it is not there.
    #[inline(always)]
    fn name(&mut self, name: Option<&str>) -> N {
        match name {
            Some(name) => self.intern(name),
            None => NONE,
        }
    }

    #[inline(always)]
    fn intern(&mut self, name: &str) -> u32 {
        let key = Key::of(name.as_bytes());
        let slot = key.slot(SEEN);
        for at in [slot, slot + 1] {
            let (k, i) = self.seen[at];
            if k == key && i != NONE && (name.len() <= 16 || self.kept(i) == Some(name.as_bytes())) {
                return i;
            }
        }
        self.add(name, key, slot)
    }

    /// Keeps `name`, not seen with its `key` in its two slots from `slot`: in the first free one,
    /// else in place of the one in the second.
    #[cold]
    #[inline(never)]
    fn add(&mut self, name: &str, key: Key, slot: usize) -> u32 {
        let start = index(self.text.len());
        self.text.push_str(name);
        let i = index(self.spans.len());
        self.spans.push((start, index(self.text.len())));
        let at = if self.seen[slot].1 == NONE { slot } else { slot + 1 };
        self.seen[at] = (key, i);
        i
    }

    /// The bytes of name `i`.
    fn kept(&self, i: u32) -> Option<&[u8]> {
        let (start, end) = *self.spans.get(i as usize)?;
        self.text.as_bytes().get(start as usize..end as usize)
    }

    fn blob(&mut self, b: &[u8]) -> (u32, u32) {
        let start = index(self.blobs.len());
        self.blobs.extend_from_slice(b);
        (start, index(self.blobs.len()))
    }

    fn wide(&mut self, v: i128) -> u32 {
        self.wide.push(v);
        index(self.wide.len() - 1)
    }

    fn static_str(&mut self, s: &'static str) -> u32 {
        self.statics.push(s);
        index(self.statics.len() - 1)
    }

    /// Makes the recorded calls on `sink`, in order, and `mark` at each [`Tape::mark`].
    pub fn replay<S: ValueSink + ?Sized>(&self, sink: &mut S, mut mark: impl FnMut(&mut S)) {
        let names: Vec<&str> =
            self.spans.iter().map(|&(a, z)| self.text.get(a as usize..z as usize).unwrap_or("")).collect();
        let name = |i: N| names.get(i as usize).copied();
        let blob = |a: u32, z: u32| self.blobs.get(a as usize..z as usize).unwrap_or(&[]);
        let wide = |i: u32| self.wide.get(i as usize).copied().unwrap_or(0);
        let stat = |i: u32| self.statics.get(i as usize).copied();
        for op in &self.ops {
            match *op {
                Op::Uint(n, v) => sink.uint(name(n), v),
                Op::Int(n, v) => sink.int(name(n), v),
                Op::F32(n, v) => sink.f32(name(n), v),
                Op::F64(n, v) => sink.f64(name(n), v),
                Op::Bool(n, v) => sink.bool(name(n), v),
                Op::Str(n, v) => sink.str(name(n), name(v).unwrap_or("")),
                Op::Bytes(n, a, z) => sink.bytes(name(n), blob(a, z)),
                Op::Numbers(n, ty, order, a, z) => {
                    // Recorded from whole elements, so whole again.
                    if let Some(v) = Numbers::new(blob(a, z), ty, order) {
                        sink.numbers(name(n), v);
                    }
                }
                Op::Enum(n, v, label) => sink.enumeration(name(n), wide(v), stat(label)),
                Op::Flags(n, v) => sink.flags(name(n), v),
                Op::BeginStruct(n) => sink.begin_struct(name(n)),
                Op::EndStruct => sink.end_struct(),
                Op::BeginArray(n, len) => sink.begin_array(name(n), usize::try_from(len).unwrap_or(usize::MAX)),
                Op::EndArray => sink.end_array(),
                Op::BeginVariant(n, v, tag) => sink.begin_variant(name(n), stat(v).unwrap_or(""), wide(tag)),
                Op::EndVariant => sink.end_variant(),
                Op::Null(n) => sink.null(name(n)),
                Op::Mark => mark(sink),
            }
        }
    }
}

/// An index or offset within a tape (a tape is handed on long before it holds 4 GiB).
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl Visitor for Tape {
    fn uint(&mut self, name: Option<&str>, v: u64) {
        let n = self.name(name);
        self.ops.push(Op::Uint(n, v));
    }
    fn int(&mut self, name: Option<&str>, v: i64) {
        let n = self.name(name);
        self.ops.push(Op::Int(n, v));
    }
    fn f32(&mut self, name: Option<&str>, v: f32) {
        let n = self.name(name);
        self.ops.push(Op::F32(n, v));
    }
    fn f64(&mut self, name: Option<&str>, v: f64) {
        let n = self.name(name);
        self.ops.push(Op::F64(n, v));
    }
    fn bool(&mut self, name: Option<&str>, v: bool) {
        let n = self.name(name);
        self.ops.push(Op::Bool(n, v));
    }
    fn str(&mut self, name: Option<&str>, v: &str) {
        let n = self.name(name);
        let v = self.intern(v);
        self.ops.push(Op::Str(n, v));
    }
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        let n = self.name(name);
        let (a, z) = self.blob(v);
        self.ops.push(Op::Bytes(n, a, z));
    }
    fn enumeration(&mut self, name: Option<&str>, raw: i128, label: Option<&'static str>) {
        let n = self.name(name);
        let v = self.wide(raw);
        let label = label.map_or(NONE, |l| self.static_str(l));
        self.ops.push(Op::Enum(n, v, label));
    }
    fn flags(&mut self, name: Option<&str>, raw: u64) {
        let n = self.name(name);
        self.ops.push(Op::Flags(n, raw));
    }
    fn begin_struct(&mut self, name: Option<&str>) {
        let n = self.name(name);
        self.ops.push(Op::BeginStruct(n));
    }
    fn end_struct(&mut self) {
        self.ops.push(Op::EndStruct);
    }
    fn begin_array(&mut self, name: Option<&str>, len: usize) {
        let n = self.name(name);
        self.ops.push(Op::BeginArray(n, len as u64));
    }
    fn end_array(&mut self) {
        self.ops.push(Op::EndArray);
    }
    fn numbers(&mut self, name: Option<&str>, v: Numbers<'_>) {
        let n = self.name(name);
        let (a, z) = self.blob(v.bytes());
        self.ops.push(Op::Numbers(n, v.ty(), v.order(), a, z));
    }
    fn begin_variant(&mut self, name: Option<&str>, variant: &'static str, tag: i128) {
        let n = self.name(name);
        let (v, tag) = (self.static_str(variant), self.wide(tag));
        self.ops.push(Op::BeginVariant(n, v, tag));
    }
    fn end_variant(&mut self) {
        self.ops.push(Op::EndVariant);
    }
}

impl ValueSink for Tape {
    fn null(&mut self, name: Option<&str>) {
        let n = self.name(name);
        self.ops.push(Op::Null(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonWriter;

    /// Every call, replayed into the JSON writer, makes the text the writer makes when called
    /// directly; names at one address with other text are told apart.
    #[test]
    fn a_replay_makes_the_calls_recorded() {
        fn visit(w: &mut (impl ValueSink + ?Sized), reused: &mut String) {
            w.begin_struct(None);
            w.uint(Some("u"), u64::MAX);
            w.int(Some("i"), -5);
            w.f32(Some("f"), 0.2);
            w.f64(Some("d"), f64::NAN);
            w.bool(Some("b"), true);
            w.str(Some("s \"q\""), "text\n\u{e9}");
            w.bytes(Some("h"), &[0, 255, 16]);
            w.enumeration(Some("e"), -3, Some("MINUS"));
            w.flags(Some("fl"), 6);
            w.begin_array(Some("a"), 2);
            w.numbers(None, Numbers::u8s(&[1, 2]));
            w.numbers(None, Numbers::new(&[0x3f, 0xc0, 0, 0, 0xc1, 0x20, 0, 0], NumberType::F32, Endian::Big).unwrap());
            w.null(None);
            w.end_array();
            reused.clear();
            reused.push_str("first");
            w.uint(Some(reused.as_str()), 1);
            reused.clear();
            reused.push_str("other");
            w.uint(Some(reused.as_str()), 2);
            w.begin_variant(Some("v"), "Var", 7);
            w.begin_struct(None);
            w.end_struct();
            w.end_variant();
            w.end_struct();
        }
        let mut direct = JsonWriter::new();
        let mut name = String::with_capacity(16);
        visit(&mut direct, &mut name);
        direct.newline();
        let mut tape = Tape::new();
        visit(&mut tape, &mut name);
        tape.mark();
        let mut replayed = JsonWriter::new();
        tape.replay(&mut replayed, |w| w.newline());
        assert_eq!(replayed.as_str(), direct.as_str());
        assert!(replayed.as_str().contains("\"first\":1,\"other\":2"), "{}", replayed.as_str());
        // A cleared tape records anew.
        tape.clear();
        assert!(tape.is_empty());
        visit(&mut tape, &mut name);
        let mut again = JsonWriter::new();
        tape.replay(&mut again, |_| {});
        assert_eq!(format!("{}\n", again.as_str()), direct.as_str());
    }
}
