//! Wire access in C: the error codes, the copy macros, the host byte order, and the `get`/`put`
//! helpers every generated function reads and writes numbers with (shifts, so they are right on a
//! host of either byte order).

use std::fmt::Write;

use super::{defines, prim_c, u_lit, Def, Gen};
use logspec_ir::ir::{Endian, Prim, Ty, TypeDef};

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// A `get` expression: the value of type `p` at `ptr`, in byte order `e`.
pub(super) fn get(l: &str, p: Prim, e: Endian, ptr: &str) -> String {
    let o = if p.size() == 1 { "" } else { order(e) };
    match p {
        Prim::U8 => format!("({ptr})[0]"),
        Prim::I8 => format!("(int8_t)({ptr})[0]"),
        Prim::U16 | Prim::U32 | Prim::U64 => format!("{l}_get_{}{o}({ptr})", p.name()),
        Prim::I16 | Prim::I32 | Prim::I64 => {
            format!("({})({l}_get_u{}{o}({ptr}))", prim_c(p), p.size() * 8)
        }
        Prim::F32 | Prim::F64 => format!("{l}_get_{}{o}({ptr})", p.name()),
    }
}

/// A statement that puts `val` (of type `p`) at `ptr` in byte order `e`.
pub(super) fn put(l: &str, p: Prim, e: Endian, ptr: &str, val: &str) -> String {
    let o = if p.size() == 1 { "" } else { order(e) };
    match p {
        Prim::U8 | Prim::I8 => format!("({ptr})[0] = (uint8_t)({val});"),
        Prim::U16 | Prim::U32 | Prim::U64 => format!("{l}_put_{}{o}({ptr}, ({})({val}));", p.name(), prim_c(p)),
        Prim::I16 | Prim::I32 | Prim::I64 => {
            let u = p.size() * 8;
            format!("{l}_put_u{u}{o}({ptr}, (uint{u}_t)({val}));")
        }
        Prim::F32 | Prim::F64 => format!("{l}_put_{}{o}({ptr}, {val});", p.name()),
    }
}

fn order(e: Endian) -> &'static str {
    match e {
        Endian::Little => "le",
        Endian::Big => "be",
    }
}

/// The integer behind an enum, flags or prim type (for the declarations in `mod.rs`).
pub(super) fn base_prim_of(g: &Gen, ty: &Ty) -> Option<Prim> {
    base_prim(g, ty)
}

/// The integer behind an enum, flags or prim type.
pub(super) fn base_prim(g: &Gen, ty: &Ty) -> Option<Prim> {
    match ty {
        Ty::Prim(p) => Some(*p),
        Ty::Named(id) => match g.s.ty(*id) {
            TypeDef::Enum(e) => Some(e.base),
            TypeDef::Flags(f) => Some(f.base),
            _ => None,
        },
        _ => None,
    }
}

/// Unsigned maximum of a length prefix, as a C literal of a width that holds it.
pub(super) fn prefix_max(p: Prim) -> String {
    let (_, hi) = p.int_range().unwrap_or((0, 0));
    u_lit(hi as u64)
}

impl Gen<'_> {
    /// The error codes and the byte-order helpers, once per header.
    pub(super) fn codec_preamble(&mut self) {
        let (l, u) = (self.n.lower.clone(), self.n.upper.clone());
        self.block(
            "Error codes of the functions below: 0 is success, every failure is negative. Decoders check every \
             length before they read, so a short or corrupt buffer returns an error, never reads past its end.",
            false,
        );
        let codes: Vec<Def> = [
            ("OK", "0", "Success."),
            ("ERR_SHORT", "(-1)", "The input ends before the value does."),
            ("ERR_CONST", "(-2)", "A constant field (magic, marker) holds another value."),
            ("ERR_TAG", "(-3)", "A union tag selects no variant."),
            (
                "ERR_COUNT",
                "(-4)",
                "A length or count runs past the end of the input, or is not a whole number of elements.",
            ),
            ("ERR_SPACE", "(-5)", "Encoding: the output buffer is too small."),
            ("ERR_RANGE", "(-6)", "Encoding: a length or count does not fit its prefix."),
            ("ERR_SCHEMA", "(-7)", "The file header's schema id is not the one this header describes."),
            ("ERR_LENGTH", "(-8)", "A known record's length field disagrees with its fixed size."),
            // Only in headers whose framing declares a checksum, so the others stay as they were.
            ("ERR_CHECKSUM", "(-9)", "A record's CRC field is not the CRC of its bytes."),
        ]
        .iter()
        .filter(|(n, ..)| *n != "ERR_CHECKSUM" || self.s.framing.as_ref().is_some_and(|f| f.checksum.is_some()))
        .map(|(n, v, d)| (format!("{u}_{n}"), v.to_string(), Some(d.to_string())))
        .collect();
        defines(&mut self.out, &codes);
        self.out.push('\n');
        self.block(
            "Wire access: numbers are read and written byte by byte with shifts, so these are right on a host of \
             either byte order; compilers merge them into single loads and stores where the orders agree. Floats \
             travel as their IEEE 754 bit patterns.",
            false,
        );
        let o = &mut self.out;
        putln!(
            o,
            "/* Byte copies: the compiler's builtins where it has them, so that they inline even under \
             -ffreestanding or -fno-builtin; define {u}_MEMCPY, {u}_MEMSET and {u}_MEMCMP first to use others. */\n\
             #ifndef {u}_MEMCPY\n\
             #if defined(__GNUC__) || defined(__clang__)\n\
             #define {u}_MEMCPY(d, s, n) __builtin_memcpy((d), (s), (n))\n\
             #define {u}_MEMSET(d, c, n) __builtin_memset((d), (c), (n))\n\
             #define {u}_MEMCMP(a, b, n) __builtin_memcmp((a), (b), (n))\n\
             #else\n\
             #define {u}_MEMCPY(d, s, n) memcpy((d), (s), (n))\n\
             #define {u}_MEMSET(d, c, n) memset((d), (c), (n))\n\
             #define {u}_MEMCMP(a, b, n) memcmp((a), (b), (n))\n\
             #endif\n\
             #endif\n"
        );
        putln!(
            o,
            "/* The host's byte order, where the compiler says it: a packed struct whose numbers are all in \
             the host's order is copied to and from the wire whole. Elsewhere, field by field. */\n\
             #ifndef {u}_HOST_LE\n\
             #if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__\n\
             #define {u}_HOST_LE 1\n\
             #else\n\
             #define {u}_HOST_LE 0\n\
             #endif\n\
             #endif\n\
             #ifndef {u}_HOST_BE\n\
             #if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__\n\
             #define {u}_HOST_BE 1\n\
             #else\n\
             #define {u}_HOST_BE 0\n\
             #endif\n\
             #endif\n"
        );
        for (e, be) in [("le", false), ("be", true)] {
            for bits in [16u32, 32, 64] {
                let n = bits / 8;
                let shift = |i: u32| if be { (n - 1 - i) * 8 } else { i * 8 };
                let ty = format!("uint{bits}_t");
                let acc = if bits == 16 { "unsigned".to_string() } else { ty.clone() };
                let terms: Vec<String> = (0..n)
                    .map(|i| match shift(i) {
                        0 => format!("({acc})p[{i}]"),
                        s => format!("(({acc})p[{i}] << {s})"),
                    })
                    .collect();
                putln!(
                    o,
                    "static inline {ty} {l}_get_u{bits}{e}(const uint8_t *p)\n{{\n    return ({ty})({});\n}}",
                    terms.join(" | ")
                );
                putln!(o, "static inline void {l}_put_u{bits}{e}(uint8_t *p, {ty} v)\n{{");
                for i in 0..n {
                    match shift(i) {
                        0 => putln!(o, "    p[{i}] = (uint8_t)v;"),
                        s => putln!(o, "    p[{i}] = (uint8_t)(v >> {s});"),
                    }
                }
                putln!(o, "}}");
            }
            for (f, bits, ty) in [("f32", 32, "float"), ("f64", 64, "double")] {
                putln!(
                    o,
                    "static inline {ty} {l}_get_{f}{e}(const uint8_t *p)\n{{\n    uint{bits}_t u = {l}_get_u{bits}{e}(p);\n    {ty} v;\n    {u}_MEMCPY(&v, &u, sizeof v);\n    return v;\n}}"
                );
                putln!(
                    o,
                    "static inline void {l}_put_{f}{e}(uint8_t *p, {ty} v)\n{{\n    uint{bits}_t u;\n    {u}_MEMCPY(&u, &v, sizeof u);\n    {l}_put_u{bits}{e}(p, u);\n}}"
                );
            }
        }
        if self.s.format.rules.natural_align {
            putln!(
                o,
                "/* Natural alignment: the zero bytes before a number of `w` bytes at position `pos` of the outermost value. */\nstatic inline size_t {l}_pad(size_t pos, size_t w)\n{{\n    return (w - pos % w) % w;\n}}"
            );
        }
        o.push('\n');
    }
}
