//! A decode plan: the IR of one type compiled once into steps, so that decoding a value costs
//! one bounds check per run of fixed-size fields instead of one interpretation per field, and
//! builds no values. Its decode hands every part of the value, in wire order, to a [`Sink`]:
//! numbers read in their field's byte order, strings checked as UTF-8, arrays of numbers lent
//! as the bytes they are packed in (a [`Sink`] decides whether to read the elements).
//!
//! The plan follows the same IR rules as the walk of [`super::decode`] (length rules, byte
//! orders, the count bound against the bytes left, the budget of values that take no bytes), so
//! both accept exactly the same bytes. Its faults are found cheaply and said precisely: when a
//! step fails, the walk decodes the same bytes again to name the field, offset and reason, so a
//! plan's [`Fault`] is the walk's.
//!
//! What a run is: the fields of a fixed-size struct (nested fixed-size structs, fixed arrays and
//! fixed strings included) and consecutive fixed-size fields of any struct. A struct such as ROS
//! `sensor_msgs/Imu` is one run for its header's `seq` and `stamp`, one string, and one run of
//! 296 bytes for the rest. Under natural alignment (CDR) a struct has no fixed size in the IR
//! (its padding depends on where it starts), but one whose first number is aligned as wide as
//! any later one is a run all the same, aligned once at its start (`Compiler::fixed_run`):
//! ROS 2 `Imu` is one run for its header's `stamp`, one string, and one run of 296 bytes.
//!
//! One file, over 1,000 lines: the plan's build (the IR into steps), its execution, its check
//! and its tests share the private `Step`, `Part` and `Num` types and the `by_num!` dispatch,
//! which a split would have to make crate-visible; the number reads are one concept (each
//! number at the type and byte order the IR gives) and stay in one place.

use logspec_ir::ir::{ConstValue, Endian, Len, Prim, Rules, Schema, Ty, TypeDef};

use super::{Check, Fault, EMPTY_BUDGET};

/// Receives the parts of a value, in wire order, from [`Plan::decode`]. `name` is the field
/// name, `None` for array elements and the value itself. Enums and flags arrive as the numbers
/// of their base type; a padding field as an empty struct.
pub trait Sink {
    fn begin_struct(&mut self, name: Option<&str>);
    fn end_struct(&mut self);
    fn begin_array(&mut self, name: Option<&str>, len: usize);
    fn end_array(&mut self);
    /// A number of type `p`: its bits, zero-extended to 64 (as [`super::Build::number`]).
    fn number(&mut self, name: Option<&str>, p: Prim, raw: u64);
    fn bool(&mut self, name: Option<&str>, v: bool);
    /// A string that is valid UTF-8.
    fn str(&mut self, name: Option<&str>, v: &str);
    /// A string that is not valid UTF-8, as its bytes.
    fn raw_str(&mut self, name: Option<&str>, v: &[u8]);

    /// An array of numbers of type `p`, packed in `bytes` in byte order `e` (whole elements).
    /// By default each element is read and handed to [`Sink::number`].
    fn numbers(&mut self, name: Option<&str>, p: Prim, e: Endian, bytes: &[u8]) {
        self.begin_array(name, bytes.len() / p.size() as usize);
        super::each_number(bytes, p, e, |_, raw| self.number(None, p, raw));
        self.end_array();
    }

    /// An array of bools, one byte each.
    fn bools(&mut self, name: Option<&str>, bytes: &[u8]) {
        self.begin_array(name, bytes.len());
        for b in bytes {
            self.bool(None, *b != 0);
        }
        self.end_array();
    }

    /// A `bytes` field: by default, an array of `u8`.
    fn bytes(&mut self, name: Option<&str>, v: &[u8]) {
        self.numbers(name, Prim::U8, Endian::Little, v);
    }

    /// A string of a fixed length, with its NUL padding: by default [`Sink::str`] (or
    /// [`Sink::raw_str`]) of all its bytes.
    fn fixed_str(&mut self, name: Option<&str>, v: &[u8]) {
        match std::str::from_utf8(v) {
            Ok(s) => self.str(name, s),
            Err(_) => self.raw_str(name, v),
        }
    }

    /// A const field of a plan that shows them ([`Plan::showing_consts`]), as the schema states
    /// its value (the bytes were checked to hold it). By default nothing.
    fn constant(&mut self, _name: Option<&str>, _value: &ConstValue) {}

    /// A padding field (skipped bytes): by default an empty struct.
    fn padding(&mut self, name: Option<&str>) {
        self.begin_struct(name);
        self.end_struct();
    }
}

/// A type compiled for [`Plan::decode`].
#[derive(Clone, Debug)]
pub struct Plan {
    root: Ty,
    step: Step,
    /// The schema's layout rules (natural alignment, strings with their NUL).
    rules: Rules,
}

/// One step of a plan.
#[derive(Clone, Debug)]
enum Step {
    /// Fixed-size fields: one bounds check, then each part at its offset.
    Run(Run),
    /// A string or bytes of a variable length.
    Text { name: Option<Box<str>>, len: Len, e: Endian, bytes: bool },
    /// An array of numbers (`Some`) or bools (`None`) of a variable count.
    Numbers { name: Option<Box<str>>, p: Option<Prim>, e: Endian, len: Len },
    /// An array of other elements.
    Array(Box<ArrayStep>),
    /// A struct of a variable size: its fields' steps.
    Struct { name: Option<Box<str>>, steps: Vec<Step> },
    /// A type the walk does not read either (it says why).
    Unsupported,
}

#[derive(Clone, Debug)]
struct ArrayStep {
    name: Option<Box<str>>,
    len: Len,
    e: Endian,
    elem: Step,
    /// The element size when it is fixed.
    fixed: Option<usize>,
    /// The fewest bytes an element takes.
    min: usize,
    /// The element is a run of a fixed size above 0 with no const and nothing of size 0: a
    /// check takes all elements' bytes at once.
    plain: Option<usize>,
}

#[derive(Clone, Debug, Default)]
struct Run {
    size: usize,
    /// Under natural alignment, the padding to a multiple of this (1 or 0: none) comes before
    /// the run; its parts' offsets hold from there.
    align: usize,
    /// Whether a part is a [`Part::Const`] (what a check that reads no field still compares).
    consts: bool,
    /// Values that take no bytes in the run (structs of size 0 and the elements of arrays of
    /// them), counted against the budget as the walk counts them.
    empty: usize,
    /// The run is one struct's value whose first [`Part::Begin`] and last [`Part::End`] were
    /// taken out of `parts` ([`unwrap`]): the sink hears of its start and end without a part
    /// dispatched for each (`Some(name)`).
    wrap: Option<Option<Box<str>>>,
    parts: Vec<Part>,
}

/// One part of a run, at its offset from the start of the run.
#[derive(Clone, Debug)]
enum Part {
    Begin(Option<Box<str>>),
    End,
    BeginArray(Option<Box<str>>, usize),
    EndArray,
    Number {
        at: usize,
        name: Option<Box<str>>,
        num: Num,
    },
    /// Consecutive numbers of one type and byte order (the fields `x`, `y`, `z` of a vector):
    /// one part, so that the run dispatches once for all of them.
    Scalars {
        at: usize,
        names: Box<[Option<Box<str>>]>,
        num: Num,
    },
    Bool {
        at: usize,
        name: Option<Box<str>>,
    },
    /// Consecutive bools (a message's flags): one part, as [`Part::Scalars`] for numbers.
    BoolScalars {
        at: usize,
        names: Box<[Option<Box<str>>]>,
    },
    Numbers {
        at: usize,
        name: Option<Box<str>>,
        p: Prim,
        e: Endian,
        n: usize,
    },
    Bools {
        at: usize,
        name: Option<Box<str>>,
        n: usize,
    },
    Text {
        at: usize,
        name: Option<Box<str>>,
        n: usize,
        bytes: bool,
        /// A fixed-length string (`str[N]`, NUL-padded).
        fixed: bool,
    },
    Pad(Option<Box<str>>),
    /// A field that must hold these bytes (a schema's `const`, e.g. a magic): checked, and
    /// handed to the sink only in a plan that shows consts ([`Plan::showing_consts`]).
    Const {
        at: usize,
        expect: Box<[u8]>,
        /// The field's name and value, in a plan that shows consts.
        shown: Option<Box<(Option<Box<str>>, ConstValue)>>,
    },
}

/// A number's type and byte order as one tag: a run reads a number and hands it on with one
/// dispatch, the sink's [`Sink::number`] seeing its type as a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    U8,
    I8,
    U16L,
    U16B,
    I16L,
    I16B,
    U32L,
    U32B,
    I32L,
    I32B,
    U64L,
    U64B,
    I64L,
    I64B,
    F32L,
    F32B,
    F64L,
    F64B,
}

impl Num {
    fn of(p: Prim, e: Endian) -> Num {
        use Endian::{Big as B, Little as L};
        match (p, e) {
            (Prim::U8, _) => Num::U8,
            (Prim::I8, _) => Num::I8,
            (Prim::U16, L) => Num::U16L,
            (Prim::U16, B) => Num::U16B,
            (Prim::I16, L) => Num::I16L,
            (Prim::I16, B) => Num::I16B,
            (Prim::U32, L) => Num::U32L,
            (Prim::U32, B) => Num::U32B,
            (Prim::I32, L) => Num::I32L,
            (Prim::I32, B) => Num::I32B,
            (Prim::U64, L) => Num::U64L,
            (Prim::U64, B) => Num::U64B,
            (Prim::I64, L) => Num::I64L,
            (Prim::I64, B) => Num::I64B,
            (Prim::F32, L) => Num::F32L,
            (Prim::F32, B) => Num::F32B,
            (Prim::F64, L) => Num::F64L,
            (Prim::F64, B) => Num::F64B,
        }
    }

    fn size(self) -> usize {
        match self {
            Num::U8 | Num::I8 => 1,
            Num::U16L | Num::U16B | Num::I16L | Num::I16B => 2,
            Num::U32L | Num::U32B | Num::I32L | Num::I32B | Num::F32L | Num::F32B => 4,
            _ => 8,
        }
    }
}

/// `$m!(prim, unsigned type of its width, from_le_bytes or from_be_bytes)` for the [`Num`]
/// `$num`: one arm per type and byte order, each with its type as a constant.
macro_rules! by_num {
    ($num:expr, $m:ident) => {
        match $num {
            Num::U8 => $m!(U8, u8, from_le_bytes),
            Num::I8 => $m!(I8, u8, from_le_bytes),
            Num::U16L => $m!(U16, u16, from_le_bytes),
            Num::U16B => $m!(U16, u16, from_be_bytes),
            Num::I16L => $m!(I16, u16, from_le_bytes),
            Num::I16B => $m!(I16, u16, from_be_bytes),
            Num::U32L => $m!(U32, u32, from_le_bytes),
            Num::U32B => $m!(U32, u32, from_be_bytes),
            Num::I32L => $m!(I32, u32, from_le_bytes),
            Num::I32B => $m!(I32, u32, from_be_bytes),
            Num::U64L => $m!(U64, u64, from_le_bytes),
            Num::U64B => $m!(U64, u64, from_be_bytes),
            Num::I64L => $m!(I64, u64, from_le_bytes),
            Num::I64B => $m!(I64, u64, from_be_bytes),
            Num::F32L => $m!(F32, u32, from_le_bytes),
            Num::F32B => $m!(F32, u32, from_be_bytes),
            Num::F64L => $m!(F64, u64, from_le_bytes),
            Num::F64B => $m!(F64, u64, from_be_bytes),
        }
    };
}

/// Fixed arrays of structs are unrolled into their run up to this many parts; a longer one is
/// an array step.
const MAX_UNROLL: usize = 4096;

impl Plan {
    /// Compiles `ty` of `schema` (its root byte order is the schema's).
    pub fn new(schema: &Schema, min: &[u64], ty: &Ty) -> Plan {
        Plan::compile(Compiler { schema, min, show_consts: false }, ty)
    }

    /// As [`Plan::new`], for a plan that hands const fields to the sink too, as a file header is
    /// shown (the consts of every other struct are checked and left out, as the generated
    /// visitors do).
    pub fn showing_consts(schema: &Schema, min: &[u64], ty: &Ty) -> Plan {
        Plan::compile(Compiler { schema, min, show_consts: true }, ty)
    }

    fn compile(c: Compiler<'_>, ty: &Ty) -> Plan {
        let rules = c.schema.format.rules;
        let schema = c.schema;
        let mut steps = Vec::new();
        c.field(ty, schema.format.endian, None, &mut steps);
        // `field` gives one step for one value (a run of a fixed-size struct holds its begin and
        // end).
        let mut step =
            if steps.len() == 1 { steps.pop().expect("one step") } else { Step::Struct { name: None, steps } };
        step.finish();
        Plan { root: ty.clone(), step, rules }
    }

    /// Decodes one whole value from `bytes` into `sink`; trailing bytes are an error. On a fault
    /// the sink has seen the parts before it; the fault is the walk's ([`super::decode`]).
    pub fn decode(&self, schema: &Schema, min: &[u64], bytes: &[u8], sink: &mut impl Sink) -> Result<(), Fault> {
        let mut r = Exec { b: bytes, pos: 0, empty_left: EMPTY_BUDGET.saturating_add(bytes.len()), rules: self.rules };
        let done = r.step::<true>(&self.step, sink).and_then(|()| if r.at_end() { Ok(()) } else { Err(Stop) });
        match done {
            Ok(()) => Ok(()),
            Err(Stop) => Err(match super::decode(schema, min, &self.root, bytes, &mut Check) {
                Err(f) => f,
                Ok(()) => Fault {
                    offset: r.pos,
                    path: Vec::new(),
                    message: "the decode plan and the IR walk disagree about these bytes".into(),
                },
            }),
        }
    }
}

impl Plan {
    /// Whether `bytes` decode as one whole value, keeping nothing: [`Plan::decode`] without
    /// reading a field (only the lengths, counts and bounds it follows and the consts it
    /// compares), so it accepts and rejects exactly what [`Plan::decode`] does, with the same
    /// fault, at a fraction of its cost. A value that passes decodes with no fault.
    pub fn check(&self, schema: &Schema, min: &[u64], bytes: &[u8]) -> Result<(), Fault> {
        let mut r = Exec { b: bytes, pos: 0, empty_left: EMPTY_BUDGET.saturating_add(bytes.len()), rules: self.rules };
        let done = r.step::<false>(&self.step, &mut Ignore).and_then(|()| if r.at_end() { Ok(()) } else { Err(Stop) });
        match done {
            Ok(()) => Ok(()),
            // The fault, as [`Plan::decode`] says it.
            Err(Stop) => self.decode(schema, min, bytes, &mut Ignore),
        }
    }
}

struct Compiler<'s> {
    schema: &'s Schema,
    min: &'s [u64],
    show_consts: bool,
}

fn boxed(name: Option<&str>) -> Option<Box<str>> {
    name.map(Into::into)
}

impl Compiler<'_> {
    fn size(&self, ty: &Ty) -> Option<usize> {
        self.schema.size_of(ty).map(|s| s as usize)
    }

    fn min(&self, ty: &Ty) -> usize {
        let m = if self.min.len() == self.schema.types.len() {
            logspec_ir::layout::min_size_with(&|id| self.min[id.0], ty)
        } else {
            logspec_ir::layout::min_size(self.schema, ty)
        };
        usize::try_from(m).unwrap_or(usize::MAX)
    }

    /// Appends the steps of a field of type `ty` in byte order `e`, joining a field whose parts
    /// all have fixed sizes to the run before it.
    fn field(&self, ty: &Ty, e: Endian, name: Option<&str>, out: &mut Vec<Step>) {
        match self.fixed_run(ty, e, name) {
            Some(run) => push_run(out, run),
            None => out.push(self.step(ty, e, name)),
        }
    }

    /// The run of a value whose parts all have fixed sizes: one bounds check, then each part at
    /// its offset. Under natural alignment ([`Rules::natural_align`]) a struct has no fixed size
    /// in the IR (its padding depends on where it starts), but when its first part of a size
    /// above 0 is aligned at least as wide as every later one (a ROS 2 `Time`, `Vector3` or
    /// `Pose`, a `float64[9]`), the run starts at that part's padding and every part lands at a
    /// fixed offset from there (a part aligned to `a` after a start aligned to `a` or wider).
    /// `None` for a value with a part of a variable size or a type the walk does not read, an
    /// array too long to unroll, and one whose first part is narrower than a later one
    /// (`uint8` then `float64`: the padding before the `float64` depends on where the value
    /// starts), which keep a step per field.
    fn fixed_run(&self, ty: &Ty, e: Endian, name: Option<&str>) -> Option<Run> {
        let mut run = Run::default();
        let mut lay = Lay { rules: self.schema.format.rules, at: 0, first: None, widest: 1 };
        self.flatten(ty, e, name, &mut lay, &mut run)?;
        let first = lay.first.unwrap_or(1);
        if lay.widest > first {
            return None;
        }
        run.size = lay.at;
        run.align = first;
        Some(run)
    }

    /// Adds the parts of a value of `ty` to `run` at the offsets its layout gives them from the
    /// run's start ([`Lay`]); `None` when a part is of a variable size or a type the walk does
    /// not read, or an array is too long to unroll.
    fn flatten(&self, ty: &Ty, e: Endian, name: Option<&str>, lay: &mut Lay, run: &mut Run) -> Option<()> {
        let boxed_name = boxed(name);
        match ty {
            Ty::Prim(p) => {
                let at = lay.place(p.size() as usize, p.size() as usize)?;
                run.parts.push(Part::Number { at, name: boxed_name, num: Num::of(*p, e) });
            }
            Ty::Bool => {
                let at = lay.place(1, 1)?;
                run.parts.push(Part::Bool { at, name: boxed_name });
            }
            Ty::Pad(n) => {
                lay.place(1, *n as usize)?;
                run.parts.push(Part::Pad(boxed_name));
            }
            Ty::Str(Len::Fixed(n)) | Ty::Bytes(Len::Fixed(n)) => {
                let at = lay.place(1, *n as usize)?;
                let bytes = matches!(ty, Ty::Bytes(_));
                run.parts.push(Part::Text { at, name: boxed_name, n: *n as usize, bytes, fixed: true });
            }
            Ty::Array { elem, len: Len::Fixed(n) } => {
                let n = *n as usize;
                match **elem {
                    Ty::Prim(p) => {
                        let size = p.size() as usize;
                        // An empty array is not aligned to (as the walk reads it).
                        let at = lay.place(if n > 0 { size } else { 1 }, n.checked_mul(size)?)?;
                        run.parts.push(Part::Numbers { at, name: boxed_name, p, e, n });
                    }
                    Ty::Bool => {
                        let at = lay.place(1, n)?;
                        run.parts.push(Part::Bools { at, name: boxed_name, n });
                    }
                    _ => {
                        if n.saturating_mul(self.parts(elem)) > MAX_UNROLL {
                            return None;
                        }
                        if self.size(elem) == Some(0) && n > 0 {
                            run.empty = run.empty.saturating_add(n);
                        }
                        run.parts.push(Part::BeginArray(boxed_name, n));
                        for _ in 0..n {
                            self.flatten(elem, e, None, lay, run)?;
                        }
                        run.parts.push(Part::EndArray);
                    }
                }
            }
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => {
                    if s.size == Some(0) {
                        run.empty = run.empty.saturating_add(1);
                    }
                    run.parts.push(Part::Begin(boxed_name));
                    for f in &s.fields {
                        match super::const_bytes(self.schema, f) {
                            // Checked where its type puts it (as the walk reads it, then
                            // compares its bytes) and, where consts are shown, handed on.
                            Some(expect) => {
                                let at = lay.place(self.run_align(&f.ty, expect.len()), expect.len())?;
                                run.parts.push(Part::Const { at, expect: expect.into(), shown: self.shown(f) });
                                run.consts = true;
                            }
                            None => self.flatten(&f.ty, f.endian, Some(&f.name), lay, run)?,
                        }
                    }
                    run.parts.push(Part::End);
                }
                TypeDef::Enum(en) => {
                    let at = lay.place(en.base.size() as usize, en.base.size() as usize)?;
                    run.parts.push(Part::Number { at, name: boxed_name, num: Num::of(en.base, e) });
                }
                TypeDef::Flags(fl) => {
                    let at = lay.place(fl.base.size() as usize, fl.base.size() as usize)?;
                    run.parts.push(Part::Number { at, name: boxed_name, num: Num::of(fl.base, e) });
                }
                _ => return None,
            },
            _ => return None,
        }
        Some(())
    }

    /// The alignment a run of a value of `ty` (of `size` bytes) starts at: under natural
    /// alignment ([`Rules::natural_align`]) its numbers' size (a value of a fixed size holds
    /// numbers of one size: a struct has a fixed size there only when all its fields are one
    /// byte wide); 1 otherwise.
    fn run_align(&self, ty: &Ty, size: usize) -> usize {
        if !self.schema.format.rules.natural_align || size == 0 {
            return 1;
        }
        let base = |ty: &Ty| match ty {
            Ty::Prim(p) => p.size() as usize,
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Enum(en) => en.base.size() as usize,
                TypeDef::Flags(fl) => fl.base.size() as usize,
                _ => 1,
            },
            _ => 1,
        };
        match ty {
            Ty::Array { elem, .. } => base(elem),
            other => base(other),
        }
    }

    /// The step of a value that is not joined to a run.
    fn step(&self, ty: &Ty, e: Endian, name: Option<&str>) -> Step {
        match ty {
            Ty::Str(len) | Ty::Bytes(len) => {
                Step::Text { name: boxed(name), len: *len, e, bytes: matches!(ty, Ty::Bytes(_)) }
            }
            Ty::Array { elem, len } => match **elem {
                Ty::Prim(p) => Step::Numbers { name: boxed(name), p: Some(p), e, len: *len },
                Ty::Bool => Step::Numbers { name: boxed(name), p: None, e, len: *len },
                _ => {
                    let mut steps = Vec::new();
                    self.field(elem, e, None, &mut steps);
                    let elem_step =
                        if steps.len() == 1 { steps.pop().expect("one") } else { Step::Struct { name: None, steps } };
                    let plain = match &elem_step {
                        Step::Run(r) if r.size > 0 && r.empty == 0 && !r.consts && r.align <= 1 => Some(r.size),
                        _ => None,
                    };
                    Step::Array(Box::new(ArrayStep {
                        name: boxed(name),
                        len: *len,
                        e,
                        elem: elem_step,
                        fixed: self.size(elem),
                        min: self.min(elem),
                        plain,
                    }))
                }
            },
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => {
                    let mut steps = Vec::new();
                    for f in &s.fields {
                        match super::const_bytes(self.schema, f) {
                            // A const has a fixed size: a run of its own (joined to the one
                            // before), checked and, where consts are shown, handed on.
                            Some(expect) => {
                                let mut run = Run {
                                    size: expect.len(),
                                    consts: true,
                                    align: self.run_align(&f.ty, expect.len()),
                                    ..Run::default()
                                };
                                run.parts.push(Part::Const { at: 0, expect: expect.into(), shown: self.shown(f) });
                                push_run(&mut steps, run);
                            }
                            None => self.field(&f.ty, f.endian, Some(&f.name), &mut steps),
                        }
                    }
                    Step::Struct { name: boxed(name), steps }
                }
                _ => Step::Unsupported,
            },
            _ => Step::Unsupported,
        }
    }

    /// A const field's name and value, where the plan shows consts.
    fn shown(&self, f: &logspec_ir::ir::Field) -> Option<Box<(Option<Box<str>>, ConstValue)>> {
        let value = f.value.clone()?;
        self.show_consts.then(|| Box::new((boxed(Some(&f.name)), value)))
    }

    /// How many parts a fixed-size value flattens into (to bound unrolling).
    fn parts(&self, ty: &Ty) -> usize {
        match ty {
            Ty::Array { elem, len: Len::Fixed(n) } if !matches!(**elem, Ty::Prim(_) | Ty::Bool) => {
                (*n as usize).saturating_mul(self.parts(elem)).saturating_add(2)
            }
            Ty::Named(id) => match self.schema.ty(*id) {
                TypeDef::Struct(s) => s.fields.iter().fold(2usize, |a, f| a.saturating_add(self.parts(&f.ty))),
                _ => 1,
            },
            _ => 1,
        }
    }
}

/// Where the parts of a run land (`Compiler::fixed_run`): one after another, each padded to its
/// alignment under natural alignment.
struct Lay {
    /// The schema's layout rules ([`Rules::natural_align`]).
    rules: Rules,
    /// The offset after the parts so far, from the run's start.
    at: usize,
    /// The alignment of the first part of a size above 0 (the run's own).
    first: Option<usize>,
    /// The widest alignment of any part of a size above 0.
    widest: usize,
}

impl Lay {
    /// Places a part of `size` bytes aligned to `align` (under natural alignment); its offset.
    fn place(&mut self, align: usize, size: usize) -> Option<usize> {
        let align = if self.rules.natural_align { align } else { 1 };
        let at = self.at.checked_add(super::padding(self.rules, self.at, align))?;
        if size > 0 {
            self.first.get_or_insert(align);
            self.widest = self.widest.max(align);
        }
        self.at = at.checked_add(size)?;
        Some(at)
    }
}

impl Step {
    /// [`scalars`] and [`unwrap`] in every run.
    fn finish(&mut self) {
        match self {
            Step::Run(run) => {
                run.parts = scalars(std::mem::take(&mut run.parts));
                run.wrap = unwrap(&mut run.parts);
            }
            Step::Array(a) => a.elem.finish(),
            Step::Struct { steps, .. } => steps.iter_mut().for_each(Step::finish),
            Step::Text { .. } | Step::Numbers { .. } | Step::Unsupported => {}
        }
    }
}

/// Appends a run of fixed-size fields, joined to the run before it.
fn push_run(out: &mut Vec<Step>, run: Run) {
    match out.last_mut() {
        // A run joins the one before when it needs no padding after it: under natural alignment,
        // when the one before starts at a multiple of this one's alignment and ends at one.
        Some(Step::Run(prev)) if run.align.max(1) <= prev.align.max(1) && prev.size % run.align.max(1) == 0 => {
            let at = prev.size;
            for mut p in run.parts {
                p.shift(at);
                prev.parts.push(p);
            }
            prev.size += run.size;
            prev.empty = prev.empty.saturating_add(run.empty);
            prev.consts |= run.consts;
        }
        _ => out.push(Step::Run(run)),
    }
}

/// Joins consecutive numbers of one type and byte order into [`Part::Scalars`], and consecutive
/// bools into [`Part::BoolScalars`].
fn scalars(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::with_capacity(parts.len());
    let mut names: Vec<Option<Box<str>>> = Vec::new();
    // The open group: where it starts, and its numbers' type (`None`: bools).
    let mut open: Option<(usize, Option<Num>)> = None;
    let flush = |out: &mut Vec<Part>, names: &mut Vec<Option<Box<str>>>, open: &mut Option<(usize, Option<Num>)>| {
        if let Some((at, num)) = open.take() {
            let names = std::mem::take(names);
            out.push(match (<[_; 1]>::try_from(names), num) {
                (Ok([name]), Some(num)) => Part::Number { at, name, num },
                (Ok([name]), None) => Part::Bool { at, name },
                (Err(names), Some(num)) => Part::Scalars { at, names: names.into(), num },
                (Err(names), None) => Part::BoolScalars { at, names: names.into() },
            });
        }
    };
    for part in parts {
        let (at, name, num) = match part {
            Part::Number { at, name, num } => (at, name, Some(num)),
            Part::Bool { at, name } => (at, name, None),
            other => {
                flush(&mut out, &mut names, &mut open);
                out.push(other);
                continue;
            }
        };
        let size = num.map_or(1, Num::size);
        let joins = open.is_some_and(|(start, on)| on == num && start + names.len() * size == at);
        if !joins {
            flush(&mut out, &mut names, &mut open);
            open = Some((at, num));
        }
        names.push(name);
    }
    flush(&mut out, &mut names, &mut open);
    out
}

/// Takes a run's first [`Part::Begin`] and last [`Part::End`] out of `parts` when they are one
/// struct's, the whole run (a struct's value, an element of an array of structs); its name.
fn unwrap(parts: &mut Vec<Part>) -> Option<Option<Box<str>>> {
    if !matches!(parts.last(), Some(Part::End)) {
        return None;
    }
    // The first part opens a struct that closes at the last part, and not before.
    let mut depth = 0usize;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Begin(_) => depth += 1,
            Part::End => depth = depth.checked_sub(1)?,
            _ => {}
        }
        if depth == 0 && i + 1 < parts.len() {
            return None;
        }
    }
    let name = match parts.first_mut() {
        Some(Part::Begin(name)) => name.take(),
        _ => return None,
    };
    parts.pop();
    parts.remove(0);
    Some(name)
}

impl Part {
    fn shift(&mut self, by: usize) {
        match self {
            Part::Number { at, .. }
            | Part::Scalars { at, .. }
            | Part::Bool { at, .. }
            | Part::BoolScalars { at, .. }
            | Part::Numbers { at, .. }
            | Part::Bools { at, .. }
            | Part::Text { at, .. }
            | Part::Const { at, .. } => *at += by,
            Part::Begin(_) | Part::End | Part::BeginArray(..) | Part::EndArray | Part::Pad(_) => {}
        }
    }
}

/// A step failed; the walk says where and why.
struct Stop;

struct Exec<'b> {
    b: &'b [u8],
    pos: usize,
    empty_left: usize,
    rules: Rules,
}

impl<'b> Exec<'b> {
    /// Whether the value ended where the bytes do (under natural alignment, up to
    /// [`super::MAX_END_PADDING`] bytes before).
    fn at_end(&self) -> bool {
        let left = self.b.len() - self.pos;
        left == 0 || (self.rules.natural_align && left <= super::MAX_END_PADDING)
    }

    /// Skips the padding before a number of `size` bytes.
    #[inline]
    fn align(&mut self, size: usize) -> Result<(), Stop> {
        let pad = super::padding(self.rules, self.pos, size);
        if pad > 0 {
            self.take(pad)?;
        }
        Ok(())
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'b [u8], Stop> {
        let s = self.b.get(self.pos..self.pos.checked_add(n).ok_or(Stop)?).ok_or(Stop)?;
        self.pos += n;
        Ok(s)
    }

    /// A count or length prefix, as [`super::load`] reads it. Each width is taken at a constant
    /// size, so its padding and bounds are one mask and one comparison (the size looked up for
    /// each of them was 5% of a scan).
    #[inline]
    fn uint(&mut self, p: Prim, e: Endian) -> Result<u64, Stop> {
        macro_rules! at {
            ($n:literal) => {{
                self.align($n)?;
                super::load(self.take($n)?, 0, p, e).ok_or(Stop)?
            }};
        }
        Ok(match p.size() {
            1 => at!(1),
            2 => at!(2),
            4 => at!(4),
            _ => at!(8),
        })
    }

    fn spend(&mut self, n: usize) -> Result<(), Stop> {
        self.empty_left = self.empty_left.checked_sub(n).ok_or(Stop)?;
        Ok(())
    }

    /// The count `len` gives, as the walk's `count` reads it.
    fn count(&mut self, len: Len, e: Endian, elem: Option<usize>) -> Result<Option<usize>, Stop> {
        let whole = |bytes: usize| match elem {
            Some(s) if s != 0 && bytes % s == 0 => Ok(Some(bytes / s)),
            _ => Err(Stop),
        };
        match len {
            Len::Fixed(n) => Ok(Some(n as usize)),
            Len::Count(p) => Ok(Some(usize::try_from(self.uint(p, e)?).unwrap_or(usize::MAX))),
            Len::Size(p) => whole(usize::try_from(self.uint(p, e)?).unwrap_or(usize::MAX)),
            Len::Rest => match elem {
                None => Ok(None),
                Some(_) => whole(self.b.len() - self.pos),
            },
        }
    }

    /// Follows `step`, handing its parts to `sink` when `READ` (without, only what can fail is
    /// done: lengths, counts, bounds, consts).
    fn step<const READ: bool>(&mut self, step: &Step, sink: &mut impl Sink) -> Result<(), Stop> {
        match step {
            Step::Run(run) => self.run::<READ>(run, sink),
            Step::Text { name, len, e, bytes } => {
                let n = self.count(*len, *e, Some(1))?.unwrap_or(0);
                let b = self.take(n)?;
                if READ {
                    let b = if *bytes { b } else { super::text_of(self.rules, *len, b) };
                    text(sink, name.as_deref(), b, *bytes);
                }
                Ok(())
            }
            Step::Numbers { name, p, e, len } => {
                let size = p.map_or(1, |p| p.size() as usize);
                let n = self.count(*len, *e, Some(size))?.unwrap_or(0);
                if n > 0 {
                    self.align(size)?;
                }
                let b = self.take(n.checked_mul(size).ok_or(Stop)?)?;
                if READ {
                    match p {
                        Some(p) => sink.numbers(name.as_deref(), *p, *e, b),
                        None => sink.bools(name.as_deref(), b),
                    }
                }
                Ok(())
            }
            Step::Array(a) => self.array::<READ>(a, sink),
            Step::Struct { name, steps } => {
                if READ {
                    sink.begin_struct(name.as_deref());
                }
                for s in steps {
                    // A run, the most common field step, without a call of `step` for it.
                    match s {
                        Step::Run(run) => self.run::<READ>(run, sink)?,
                        s => self.step::<READ>(s, sink)?,
                    }
                }
                if READ {
                    sink.end_struct();
                }
                Ok(())
            }
            Step::Unsupported => Err(Stop),
        }
    }

    fn array<const READ: bool>(&mut self, a: &ArrayStep, sink: &mut impl Sink) -> Result<(), Stop> {
        let name = a.name.as_deref();
        if let (Len::Size(p), None) = (a.len, a.fixed) {
            // Elements of a variable size within a byte length: as many as its span holds, the
            // last ending exactly at its end.
            let bytes = usize::try_from(self.uint(p, a.e)?).unwrap_or(usize::MAX);
            let end = self.pos.checked_add(bytes).filter(|z| *z <= self.b.len()).ok_or(Stop)?;
            let all = self.b;
            self.b = &all[..end];
            let r = self.to_end::<READ>(a, sink);
            self.b = all;
            return r;
        }
        match self.count(a.len, a.e, a.fixed)? {
            Some(n) => {
                if matches!(a.len, Len::Count(_) | Len::Size(_)) {
                    let left = self.b.len() - self.pos;
                    if n.saturating_mul(a.min.max(1)) > left && (a.min > 0 || n > left) {
                        return Err(Stop);
                    }
                }
                if n > 0 && a.fixed == Some(0) {
                    self.spend(n)?;
                }
                if let (false, Some(size)) = (READ, a.plain) {
                    // Runs that cannot fail once their bytes are there.
                    self.take(n.checked_mul(size).ok_or(Stop)?)?;
                    return Ok(());
                }
                if READ {
                    sink.begin_array(name, n);
                }
                for _ in 0..n {
                    self.step::<READ>(&a.elem, sink)?;
                }
                if READ {
                    sink.end_array();
                }
            }
            None => self.to_end::<READ>(a, sink)?,
        }
        Ok(())
    }

    /// Elements of a variable size, as many as the bytes hold: counted first, so the sink hears
    /// the length before the elements.
    #[allow(clippy::wrong_self_convention)] // reads to the end of the bytes; not a conversion
    fn to_end<const READ: bool>(&mut self, a: &ArrayStep, sink: &mut impl Sink) -> Result<(), Stop> {
        let (start, empty) = (self.pos, self.empty_left);
        let mut n = 0usize;
        while self.pos < self.b.len() {
            self.step::<false>(&a.elem, &mut Ignore)?;
            n += 1;
        }
        if !READ {
            return Ok(());
        }
        (self.pos, self.empty_left) = (start, empty);
        sink.begin_array(a.name.as_deref(), n);
        for _ in 0..n {
            self.step::<true>(&a.elem, sink)?;
        }
        sink.end_array();
        Ok(())
    }

    #[inline]
    fn run<const READ: bool>(&mut self, run: &Run, sink: &mut impl Sink) -> Result<(), Stop> {
        if run.empty > 0 {
            self.spend(run.empty)?;
        }
        if run.align > 1 {
            self.align(run.align)?;
        }
        let b = self.take(run.size)?;
        if !READ {
            if run.consts {
                for part in &run.parts {
                    if let Part::Const { at, expect, .. } = part {
                        if b.get(*at..*at + expect.len()) != Some(&expect[..]) {
                            return Err(Stop);
                        }
                    }
                }
            }
            return Ok(());
        }
        if let Some(name) = &run.wrap {
            sink.begin_struct(name.as_deref());
        }
        for part in &run.parts {
            match part {
                Part::Number { at, name, num } => {
                    macro_rules! one {
                        ($p:ident, $t:ty, $from:ident) => {{
                            const N: usize = std::mem::size_of::<$t>();
                            let x: [u8; N] = b.get(*at..*at + N).and_then(|s| s.try_into().ok()).ok_or(Stop)?;
                            sink.number(name.as_deref(), Prim::$p, u64::from(<$t>::$from(x)));
                        }};
                    }
                    by_num!(num, one)
                }
                Part::Scalars { at, names, num } => {
                    macro_rules! many {
                        ($p:ident, $t:ty, $from:ident) => {{
                            const N: usize = std::mem::size_of::<$t>();
                            let bytes = b.get(*at..*at + names.len() * N).ok_or(Stop)?;
                            for (name, x) in names.iter().zip(bytes.chunks_exact(N)) {
                                let Ok(x) = x.try_into() else { return Err(Stop) };
                                sink.number(name.as_deref(), Prim::$p, u64::from(<$t>::$from(x)));
                            }
                        }};
                    }
                    by_num!(num, many)
                }
                Part::Bool { at, name } => sink.bool(name.as_deref(), *b.get(*at).ok_or(Stop)? != 0),
                Part::BoolScalars { at, names } => {
                    let bytes = b.get(*at..*at + names.len()).ok_or(Stop)?;
                    for (name, x) in names.iter().zip(bytes) {
                        sink.bool(name.as_deref(), *x != 0);
                    }
                }
                Part::Numbers { at, name, p, e, n } => {
                    let bytes = b.get(*at..*at + n * p.size() as usize).ok_or(Stop)?;
                    sink.numbers(name.as_deref(), *p, *e, bytes);
                }
                Part::Bools { at, name, n } => sink.bools(name.as_deref(), b.get(*at..*at + n).ok_or(Stop)?),
                Part::Text { at, name, n, bytes, fixed } => {
                    let v = b.get(*at..*at + n).ok_or(Stop)?;
                    match (bytes, fixed) {
                        (false, true) => sink.fixed_str(name.as_deref(), v),
                        _ => text(sink, name.as_deref(), v, *bytes),
                    }
                }
                Part::Const { at, expect, shown } => {
                    if b.get(*at..*at + expect.len()) != Some(&expect[..]) {
                        return Err(Stop);
                    }
                    if let Some(shown) = shown {
                        sink.constant(shown.0.as_deref(), &shown.1);
                    }
                }
                Part::Begin(name) => sink.begin_struct(name.as_deref()),
                Part::End => sink.end_struct(),
                Part::BeginArray(name, n) => sink.begin_array(name.as_deref(), *n),
                Part::EndArray => sink.end_array(),
                Part::Pad(name) => sink.padding(name.as_deref()),
            }
        }
        if run.wrap.is_some() {
            sink.end_struct();
        }
        Ok(())
    }
}

#[inline]
fn text(sink: &mut impl Sink, name: Option<&str>, b: &[u8], bytes: bool) {
    if bytes {
        sink.bytes(name, b);
    } else {
        match std::str::from_utf8(b) {
            Ok(s) => sink.str(name, s),
            Err(_) => sink.raw_str(name, b),
        }
    }
}

/// A sink that keeps nothing (to count the elements of an array that runs to the end, and for
/// [`Plan::check`]).
struct Ignore;

impl Sink for Ignore {
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, _: usize) {}
    fn end_array(&mut self) {}
    fn number(&mut self, _: Option<&str>, _: Prim, _: u64) {}
    fn bool(&mut self, _: Option<&str>, _: bool) {}
    fn str(&mut self, _: Option<&str>, _: &str) {}
    fn raw_str(&mut self, _: Option<&str>, _: &[u8]) {}
    fn numbers(&mut self, _: Option<&str>, _: Prim, _: Endian, _: &[u8]) {}
    fn bools(&mut self, _: Option<&str>, _: &[u8]) {}
    fn fixed_str(&mut self, _: Option<&str>, _: &[u8]) {}
    fn padding(&mut self, _: Option<&str>) {}
}

#[cfg(test)]
mod tests;
