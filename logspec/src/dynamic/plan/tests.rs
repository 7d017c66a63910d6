//! The plan held to the walk ([`super::super::decode`]), which reads each field on its own:
//! the numbers a run hands on (every type in both byte orders, alone and joined into
//! [`Part::Scalars`]), and [`Plan::check`] on every length around a value's size.

use super::*;
use crate::dynamic::{decode, Build, Check};
use logspec_ir::ir::{Enum, Flags, Struct};
use logspec_ir::layout;

/// Every number in wire order, as `(type, bits)`.
#[derive(Default)]
struct Numbers(Vec<(Prim, u64)>);

impl Sink for Numbers {
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, _: usize) {}
    fn end_array(&mut self) {}
    fn number(&mut self, _: Option<&str>, p: Prim, raw: u64) {
        self.0.push((p, raw));
    }
    fn bool(&mut self, _: Option<&str>, _: bool) {}
    fn str(&mut self, _: Option<&str>, _: &str) {}
    fn raw_str(&mut self, _: Option<&str>, _: &[u8]) {}
}

impl Build for Numbers {
    type Value = ();
    fn bool(&mut self, _: bool) {}
    fn number(&mut self, p: Prim, raw: u64) {
        self.0.push((p, raw));
    }
    fn text(&mut self, _: &[u8], _: Len) {}
    fn bytes(&mut self, _: &[u8]) {}
    fn numbers(&mut self, _: Prim, _: Endian, _: &[u8]) -> Option<()> {
        None
    }
    fn bools(&mut self, _: &[u8]) -> Option<()> {
        None
    }
    fn list(&mut self, _: Vec<()>) {}
    fn strukt(&mut self, _: &Schema, _: &Struct, _: Vec<()>) {}
    fn enumeration(&mut self, e: &Enum, raw: u64) {
        self.0.push((e.base, raw));
    }
    fn flags(&mut self, _: &Schema, f: &Flags, raw: u64) {
        self.0.push((f.base, raw));
    }
    fn padding(&mut self) {}
}

/// Every number type in both byte orders, alone and in runs of one type, a fixed array of
/// structs, and a string between runs.
const TYPES: &str = r#"
[format]
name = "types"
endian = "little"

[[struct]]
name = "V"
fields = [{ name = "x", type = "f64" }, { name = "y", type = "f64" }, { name = "z", type = "f64", endian = "big" }]

[[record]]
name = "All"
id = 1
fields = [
  { name = "u8", type = "u8" },
  { name = "i8", type = "i8" },
  { name = "u16", type = "u16" },
  { name = "u16b", type = "u16", endian = "big" },
  { name = "i16", type = "i16" },
  { name = "i16b", type = "i16", endian = "big" },
  { name = "u32", type = "u32" },
  { name = "u32b", type = "u32", endian = "big" },
  { name = "i32", type = "i32" },
  { name = "i32b", type = "i32", endian = "big" },
  { name = "u64", type = "u64" },
  { name = "u64b", type = "u64", endian = "big" },
  { name = "i64", type = "i64" },
  { name = "i64b", type = "i64", endian = "big" },
  { name = "f32", type = "f32" },
  { name = "f32b", type = "f32", endian = "big" },
  { name = "f64", type = "f64" },
  { name = "f64b", type = "f64", endian = "big" },
  { name = "a", type = "i16" },
  { name = "b", type = "i16" },
  { name = "c", type = "i16" },
  { name = "vs", type = "V[2]" },
  { name = "s", type = "string", count = "u8" },
  { name = "d", type = "u32", endian = "big" },
  { name = "e", type = "u32", endian = "big" },
]

[[record]]
name = "Fixed"
id = 2
fields = [{ name = "a", type = "u16" }, { name = "b", type = "f32[3]" }, { name = "c", type = "string[5]" }]
"#;

/// A struct of a fixed size under natural alignment (its fields one byte wide).
const ALIGNED: &str = r#"
[format]
name = "aligned"
align = "natural"
string_nul = true

[[record]]
name = "Bytes"
id = 1
fields = [{ name = "a", type = "u8" }, { name = "b", type = "i8" }, { name = "c", type = "u8[3]" }]
"#;

fn compiled(toml: &str, name: &str) -> (Schema, Vec<u64>, Ty) {
    let schema = logspec_ir::compile_str("plan.toml", toml).expect("schema");
    let ty = Ty::Named(schema.type_by_name(name).expect("type"));
    let min = layout::min_sizes(&schema);
    (schema, min, ty)
}

#[test]
fn plan_numbers_are_the_walks() {
    let (schema, min, ty) = compiled(TYPES, "All");
    let plan = Plan::new(&schema, &min, &ty);
    // Bytes that tell every position and byte order apart, with the string's count at its
    // place: the sizes before it are 1+1 + 4*2 + 4*4 + 4*8 + 2*4 + 2*8 + 3*2 + 6*8 = 136.
    let mut bytes: Vec<u8> = (0..136u32).map(|i| (i * 37 + 11) as u8 | 0x80).collect();
    bytes.push(2);
    bytes.extend(b"hi");
    bytes.extend((0..8u8).map(|i| 0xf0 ^ i));
    let mut walk = Numbers::default();
    decode(&schema, &min, &ty, &bytes, &mut walk).expect("the walk decodes");
    let mut planned = Numbers::default();
    plan.decode(&schema, &min, &bytes, &mut planned).expect("the plan decodes");
    assert_eq!(walk.0.len(), 18 + 3 + 6 + 2);
    assert_eq!(planned.0, walk.0);
    // A cut inside the last run: the same numbers up to it, and the walk's fault.
    let cut = &bytes[..bytes.len() - 3];
    let mut walk = Numbers::default();
    let e = decode(&schema, &min, &ty, cut, &mut walk).expect_err("cut");
    let mut planned = Numbers::default();
    assert_eq!(plan.decode(&schema, &min, cut, &mut planned).expect_err("cut"), e);
    assert_eq!(planned.0, walk.0[..walk.0.len() - 1]);
}

#[test]
fn plan_check_at_every_length_is_the_walk() {
    for (toml, name, size) in [(TYPES, "All", None), (TYPES, "Fixed", Some(2 + 12 + 5)), (ALIGNED, "Bytes", Some(5))] {
        let (schema, min, ty) = compiled(toml, name);
        let plan = Plan::new(&schema, &min, &ty);
        let bytes: Vec<u8> = (0..200u8).collect();
        for n in 0..=size.map_or(150, |s| s + 6) {
            let walk = decode(&schema, &min, &ty, &bytes[..n], &mut Check).map(|_| ());
            assert_eq!(plan.check(&schema, &min, &bytes[..n]), walk, "{name}, {n} bytes");
        }
    }
}

/// Bools in a row (joined into [`Part::BoolScalars`]), structs nested in a run, an array of
/// structs of a fixed size (each element a run whose struct is [`unwrap`]ped) and a struct of a
/// variable size around them.
const NESTED: &str = r#"
[format]
name = "nested"
endian = "little"

[[struct]]
name = "Flags"
fields = [{ name = "a", type = "bool" }, { name = "b", type = "bool" }, { name = "c", type = "bool" }, { name = "n", type = "u8" }]

[[struct]]
name = "Inner"
fields = [{ name = "f", type = "Flags" }, { name = "x", type = "f32" }, { name = "y", type = "f32" }, { name = "ok", type = "bool" }]

[[record]]
name = "Fixed"
id = 1
fields = [
  { name = "t", type = "u64" },
  { name = "on", type = "bool" },
  { name = "off", type = "bool" },
  { name = "inner", type = "Inner" },
  { name = "pair", type = "Inner[2]" },
  { name = "last", type = "bool" },
]

[[record]]
name = "Variable"
id = 2
fields = [
  { name = "head", type = "Flags" },
  { name = "items", type = "Inner[]", count = "u8" },
  { name = "s", type = "string", count = "u8" },
  { name = "tail", type = "Inner" },
]
"#;

/// Every call a visitor hears, through the plan ([`Visiting`]) and through the walk's value tree
/// ([`ValueView`]), as the JSON text each makes: names, bools, numbers, structs and arrays.
#[test]
fn plan_calls_are_the_walks() {
    use crate::formats::rosbag::{decode_value, ValueView, Visiting};
    use crate::runtime::Visit;
    let json = |toml: &str, name: &str, bytes: &[u8]| {
        let (schema, min, ty) = compiled(toml, name);
        let plan = Plan::new(&schema, &min, &ty);
        let mut walked = crate::json::JsonWriter::new();
        let a = decode_value(&schema, &min, &ty, bytes)
            .map(|v| ValueView { schema: &schema, ty: &ty, value: &v }.visit(None, &mut walked));
        let mut planned = crate::json::JsonWriter::new();
        let b = plan.decode(&schema, &min, bytes, &mut Visiting::new(&mut planned, None));
        (a.map(|()| walked.as_str().to_string()), b.map(|()| planned.as_str().to_string()))
    };
    // Bools of every byte value that is not 0 or 1 too.
    let fixed: Vec<u8> = (0..8 + 2 + 13 + 26 + 1).map(|i: u32| (i * 53 + 7) as u8 % 5).collect();
    let (walk, plan) = json(NESTED, "Fixed", &fixed);
    let walk = walk.expect("the walk decodes");
    assert_eq!(plan.expect("the plan decodes"), walk);
    assert!(walk.contains(r#""pair":[{"f":{"a":"#), "{walk}");
    let mut variable = vec![1, 0, 1, 9, 2];
    variable.extend((0..26).map(|i: u8| i.wrapping_mul(77)));
    variable.extend([2, b'h', b'i']);
    variable.extend((0..13).map(|i: u8| i % 3));
    let (walk, plan) = json(NESTED, "Variable", &variable);
    assert_eq!(plan.expect("the plan decodes"), walk.expect("the walk decodes"));
    for n in 0..variable.len() {
        let (walk, plan) = json(NESTED, "Variable", &variable[..n]);
        assert!(walk.is_err() && plan.is_err(), "{n} bytes");
    }
}

/// Structs under natural alignment (CDR's rules): ones whose first part is aligned as wide as
/// any later one (`V`, `Pose`, `Stamp`) become runs; `Late` (a `u8` before an `f64`) does
/// not, since its padding depends on where it starts. Each after a prefix of 0 to 8 bytes, so
/// that every value starts at every alignment.
const NATURAL: &str = r#"
[format]
name = "natural"
align = "natural"
string_nul = true

[[enum]]
name = "Mode"
base = "u16"
values = [{ name = "a", value = 1 }]

[[struct]]
name = "V"
fields = [{ name = "x", type = "f64" }, { name = "y", type = "f64" }, { name = "z", type = "f64" }]

[[struct]]
name = "Stamp"
fields = [{ name = "sec", type = "i32" }, { name = "mode", type = "Mode" }, { name = "ok", type = "bool" }]

[[struct]]
name = "Pose"
fields = [
  { name = "at", type = "V" },
  { name = "stamp", type = "Stamp" },
  { name = "q", type = "f32[3]" },
  { name = "pair", type = "Stamp[2]" },
  { name = "tail", type = "u8" },
]

[[struct]]
name = "Late"
fields = [{ name = "a", type = "u8" }, { name = "b", type = "f64" }]

[[record]]
name = "Rec"
id = 1
fields = [
  { name = "prefix", type = "u8[]", count = "u8" },
  { name = "pose", type = "Pose" },
  { name = "late", type = "Late" },
  { name = "v", type = "V" },
  { name = "vs", type = "V[]", count = "u32" },
  { name = "s", type = "string", count = "u32" },
  { name = "stamp", type = "Stamp" },
]
"#;

#[test]
fn natural_runs_are_the_walks_at_every_alignment() {
    use crate::formats::rosbag::{decode_value, ValueView, Visiting};
    use crate::runtime::Visit;
    let (schema, min, ty) = compiled(NATURAL, "Rec");
    let plan = Plan::new(&schema, &min, &ty);
    // `prefix` a step; `pose` one run; `late` a struct of two runs; `v` one run; `vs` an array
    // whose element is one run; `s`; `stamp` one run.
    let Step::Struct { steps, .. } = &plan.step else { panic!("{:?}", plan.step) };
    let kinds: Vec<&str> = steps
        .iter()
        .map(|s| match s {
            Step::Run(_) => "run",
            Step::Struct { .. } => "struct",
            Step::Array(_) => "array",
            Step::Numbers { .. } => "numbers",
            Step::Text { .. } => "text",
            Step::Unsupported => "unsupported",
        })
        .collect();
    assert_eq!(kinds, ["numbers", "run", "struct", "run", "array", "text", "run"]);
    let json = |bytes: &[u8]| {
        let mut walked = crate::json::JsonWriter::new();
        let a = decode_value(&schema, &min, &ty, bytes)
            .map(|v| ValueView { schema: &schema, ty: &ty, value: &v }.visit(None, &mut walked));
        let mut planned = crate::json::JsonWriter::new();
        let b = plan.decode(&schema, &min, bytes, &mut Visiting::new(&mut planned, None));
        (a.map(|()| walked.as_str().to_string()), b.map(|()| planned.as_str().to_string()))
    };
    let mut decoded = 0;
    for prefix in 0..=8u8 {
        // Each value written as CDR writes it: padding (zeros) to its size, then its bytes,
        // distinct and not zero.
        let mut bytes = vec![prefix];
        let mut next = 0u8;
        let mut put = |bytes: &mut Vec<u8>, size: usize| {
            while bytes.len() % size != 0 {
                bytes.push(0);
            }
            for _ in 0..size {
                next = next.wrapping_add(37) | 1;
                bytes.push(next);
            }
        };
        for _ in 0..prefix {
            put(&mut bytes, 1);
        }
        let stamp = |bytes: &mut Vec<u8>, put: &mut dyn FnMut(&mut Vec<u8>, usize)| {
            put(bytes, 4);
            put(bytes, 2);
            put(bytes, 1);
        };
        (0..3).for_each(|_| put(&mut bytes, 8)); // pose.at
        stamp(&mut bytes, &mut put);
        (0..3).for_each(|_| put(&mut bytes, 4)); // pose.q
        (0..2).for_each(|_| stamp(&mut bytes, &mut put));
        put(&mut bytes, 1); // pose.tail
        put(&mut bytes, 1); // late.a
        put(&mut bytes, 8); // late.b
        (0..3).for_each(|_| put(&mut bytes, 8)); // v
        while bytes.len() % 4 != 0 {
            bytes.push(0);
        }
        bytes.extend([2, 0, 0, 0]); // vs: a count of 2 elements (u32, little-endian)
        (0..6).for_each(|_| put(&mut bytes, 8));
        while bytes.len() % 4 != 0 {
            bytes.push(0);
        }
        bytes.extend([3, 0, 0, 0]); // s: 3 bytes, "hi" and its NUL
        bytes.extend(b"hi\0");
        stamp(&mut bytes, &mut put);
        for n in 0..=bytes.len() {
            let cut = &bytes[..n];
            let walk = decode(&schema, &min, &ty, cut, &mut Check).map(|_| ());
            assert_eq!(plan.check(&schema, &min, cut), walk, "prefix {prefix}, {n} bytes");
            let (walked, planned) = json(cut);
            assert_eq!(planned, walked, "prefix {prefix}, {n} bytes");
            decoded += usize::from(walked.is_ok());
        }
        assert!(json(&bytes).0.is_ok(), "prefix {prefix}: {:?}", json(&bytes).0);
    }
    // Some of the cuts decode whole (the value ending there, with at most the end padding).
    assert!(decoded > 0);
}
