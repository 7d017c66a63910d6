//! The C functions of the header: wire helpers, error codes, `_encode`/`_decode` per struct and
//! union variant, view structs for variable-size types, and the typed writers and reader of framed
//! formats and of tagged messages.
//!
//! Every function produces or consumes the exact wire bytes on a host of either byte order: a
//! number is put and got by shifts (compilers merge them into one load or store where the host
//! order is the wire order), so no code path depends on how the host lays out a struct. Decoders
//! check every length before reading and return an error code; nothing allocates.

use std::fmt::Write;

use super::{c_string, defines, int_lit, one_line, prim_c, snake, u_lit, Def, Gen};
use crate::ir::{ConstValue, Endian, Field, Len, Prim, Struct, Ty, TypeDef, TypeId, Union};

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// C and C++ keywords a member name must not be (`double`, `float`, `struct` are RLOG variants).
const KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "namespace",
    "new",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

/// A C identifier from a schema name: snake case, with `_` after a keyword.
pub(super) fn ident(name: &str) -> String {
    let s = snake(name).to_ascii_lowercase();
    if KEYWORDS.contains(&s.as_str()) {
        s + "_"
    } else {
        s
    }
}

/// Something that gets C functions: a schema struct, or one variant of a union.
#[derive(Clone)]
pub(super) struct Shape<'a> {
    /// `usvlog_rec_nav_solution`: the stem of its type (`_t`, `_view_t`) and function names.
    pub stem: String,
    /// `USVLOG_REC_NAV_SOLUTION`: the stem of its macros.
    pub mac: String,
    pub fields: &'a [Field],
    pub endian: Endian,
    pub size: Option<u32>,
}

impl Shape<'_> {
    fn fixed(&self) -> bool {
        matches!(self.size, Some(n) if n > 0)
    }
    /// The type `_encode` takes.
    pub fn enc_ty(&self) -> String {
        format!("{}_t", self.stem)
    }
    /// The type `_decode` fills: the packed struct itself for a fixed size.
    pub fn view_ty(&self) -> String {
        if self.fixed() {
            self.enc_ty()
        } else {
            format!("{}_view_t", self.stem)
        }
    }
}

/// A `get` expression: the value of type `p` at `ptr`, in byte order `e`.
fn get(l: &str, p: Prim, e: Endian, ptr: &str) -> String {
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
fn put(l: &str, p: Prim, e: Endian, ptr: &str, val: &str) -> String {
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
fn base_prim(g: &Gen, ty: &Ty) -> Option<Prim> {
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
fn prefix_max(p: Prim) -> String {
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
        ]
        .iter()
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
        o.push('\n');
    }

    /// Whether a type can be encoded and decoded by generated C: everything but reader-parameter
    /// unions and extern types, and sequences of what C cannot hold as one element.
    pub(super) fn supported(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Prim(_) | Ty::Bool | Ty::Pad(_) | Ty::Bytes(_) | Ty::Str(_) => true,
            Ty::Array { elem, len: Len::Fixed(_) } => self.supported(elem) && self.s.size_of(elem).is_some(),
            Ty::Array { elem, len } => {
                let simple = matches!(**elem, Ty::Prim(_) | Ty::Bool)
                    || matches!(**elem, Ty::Named(id) if !matches!(self.s.ty(id), TypeDef::Union(_) | TypeDef::Extern(_)));
                let sized = self.s.size_of(elem).is_some() || (!matches!(len, Len::Size(_)) && self.min_size(elem) > 0);
                simple && sized && self.supported(elem)
            }
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Struct(s) => s.size != Some(0) && s.fields.iter().all(|f| self.supported(&f.ty)),
                TypeDef::Enum(_) | TypeDef::Flags(_) => true,
                TypeDef::Union(_) | TypeDef::Extern(_) => false,
            },
            Ty::Union { id, .. } => match self.s.ty(*id) {
                TypeDef::Union(u) => {
                    !u.by_name && u.variants.iter().all(|v| v.fields.iter().all(|f| self.supported(&f.ty)))
                }
                _ => false,
            },
            // Variable-width integers (WPILOG's record header) are not generated in C yet: the
            // header documents their layout in a comment.
            Ty::ParamUnion { .. } | Ty::VarInt { .. } => false,
        }
    }

    /// The fewest bytes a value of the type takes (bounds a count before a walk).
    fn min_size(&self, ty: &Ty) -> u32 {
        if let Some(n) = self.s.size_of(ty) {
            return n;
        }
        match ty {
            Ty::Bytes(l) | Ty::Str(l) | Ty::Array { len: l, .. } => l.prefix().map_or(0, |p| p.size()),
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Struct(s) => s.fields.iter().map(|f| self.min_size(&f.ty)).sum(),
                _ => 0,
            },
            _ => 0,
        }
    }

    /// The shape of a schema struct.
    pub(super) fn struct_shape<'s>(&self, id: TypeId, st: &'s Struct) -> Shape<'s> {
        Shape {
            stem: format!("{}_{}", self.n.lower, self.n.stems[id.0]),
            mac: self.n.mac(id),
            fields: &st.fields,
            endian: st.endian,
            size: st.size,
        }
    }

    /// The shape of a union's variant.
    pub(super) fn variant_shape<'s>(&self, id: TypeId, u: &'s Union, i: usize) -> Shape<'s> {
        let v = &u.variants[i];
        let mut stem = format!("{}_{}", self.n.stems[id.0], ident(&v.name).trim_end_matches('_'));
        // A variant must not take the name of a schema type (`AttributeType.V1` and `AttributeTypeV1`).
        if self.n.stems.contains(&stem) {
            stem.push_str("_variant");
        }
        Shape {
            stem: format!("{}_{stem}", self.n.lower),
            mac: format!("{}_{}", self.n.upper, stem.to_ascii_uppercase()),
            fields: &v.fields,
            endian: u.endian,
            size: v.size,
        }
    }

    /// The `_t` and `_view_t` of a variable-size shape: numbers as values, sequences as pointer
    /// and length (host values to encode; wire bytes in the view, pointing into the input).
    pub(super) fn var_structs(&mut self, sh: &Shape, title: &str) {
        for view in [false, true] {
            let ty = if view { sh.view_ty() } else { sh.enc_ty() };
            let what = if view {
                "decoded by _decode; pointers point into the input buffer, sequences of numbers stay as wire bytes (read them with the _at functions)"
            } else {
                "the input of _encode; pointers are the caller's, sequences are host values"
            };
            self.block(&format!("{title} Variable size: {what}."), true);
            putln!(self.out, "typedef struct {} {{", ty.trim_end_matches("_t"));
            let mut any = false;
            for f in sh.fields.iter().filter(|f| !f.is_padding() && f.value.is_none()) {
                for m in self.member(f, view) {
                    putln!(self.out, "    {m}");
                    any = true;
                }
            }
            if !any {
                putln!(self.out, "    uint8_t unused_; /* ISO C has no empty structs. */");
            }
            putln!(self.out, "}} {ty};");
        }
    }

    /// The member declarations of one field of a `_t` or `_view_t`.
    fn member(&self, f: &Field, view: bool) -> Vec<String> {
        let name = &f.name;
        let doc = self.field_comment(f, f.endian);
        let doc = if doc.is_empty() { String::new() } else { format!(" /**< {doc} */") };
        match &f.ty {
            Ty::Bytes(l) if !matches!(l, Len::Fixed(_)) => {
                vec![format!("const uint8_t *{name};{doc}"), format!("size_t {name}_len;")]
            }
            Ty::Str(l) if !matches!(l, Len::Fixed(_)) => {
                vec![format!("const char *{name};{doc}"), format!("size_t {name}_len; /**< In bytes. */")]
            }
            Ty::Array { elem, len } if !matches!(len, Len::Fixed(_)) => {
                if view {
                    let mut v =
                        vec![format!("const uint8_t *{name};{doc} /* wire bytes */"), format!("size_t {name}_count;")];
                    if self.s.size_of(elem).is_none() {
                        v.push(format!("size_t {name}_size; /**< In bytes; walk the elements with their _decode. */"));
                    }
                    v
                } else {
                    vec![format!("const {} *{name};{doc}", self.elem_c(elem)), format!("size_t {name}_count;")]
                }
            }
            Ty::Named(id) if self.s.size_of(&f.ty).is_none() => {
                let sh = self.struct_shape(*id, self.s.strukt(*id));
                vec![format!("{} {name};{doc}", if view { sh.view_ty() } else { sh.enc_ty() })]
            }
            Ty::Union { id, .. } => {
                let TypeDef::Union(u) = self.s.ty(*id) else { return vec![] };
                let arms: Vec<String> = (0..u.variants.len())
                    .filter(|&i| !u.variants[i].fields.is_empty())
                    .map(|i| {
                        let sh = self.variant_shape(*id, u, i);
                        let t = if view { sh.view_ty() } else { sh.enc_ty() };
                        format!("{t} {};", ident(&u.variants[i].name))
                    })
                    .collect();
                if arms.is_empty() {
                    return vec![];
                }
                vec![format!("union {{ {} }} {name};{doc}", arms.join(" "))]
            }
            _ => match self.c_decl(&f.ty) {
                Some((base, dims)) => {
                    let dims: String = dims.iter().map(|d| format!("[{d}]")).collect();
                    vec![format!("{base} {name}{dims};{doc}")]
                }
                None => vec![],
            },
        }
    }

    /// The host C type of one element of a variable-length array.
    fn elem_c(&self, elem: &Ty) -> String {
        match elem {
            Ty::Prim(p) => prim_c(*p),
            Ty::Bool => "uint8_t".into(),
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Struct(st) => self.struct_shape(*id, st).enc_ty(),
                _ => self.n.ty(*id),
            },
            _ => "uint8_t".into(),
        }
    }

    /// `_encode` and `_decode` of a shape, plus `_at` readers for arrays of numbers in a view.
    pub(super) fn functions(&mut self, sh: &Shape) {
        let l = self.n.lower.clone();
        let u = self.n.upper.clone();
        let fixed = sh.fixed();
        let (enc, view) = (sh.enc_ty(), sh.view_ty());
        // A packed struct whose bytes are its wire bytes on a host of one order: copied whole there.
        let whole = if fixed { self.copy_order(sh.fields, true, sh.endian) } else { None };
        let host = whole.map(|e| match e {
            Endian::Little => format!("{u}_HOST_LE"),
            Endian::Big => format!("{u}_HOST_BE"),
        });
        // Encode.
        let mut body = String::new();
        if let Some(n) = sh.size.filter(|_| fixed) {
            putln!(body, "    if (cap < {n}u) return {u}_ERR_SPACE;");
        }
        if let (Some(h), Some(size)) = (&host, sh.size) {
            putln!(body, "#if {h}\n    {u}_MEMCPY(buf, v, {size}u);");
            for f in sh.fields {
                if let (Ty::Pad(k), Some(off)) = (&f.ty, f.offset) {
                    putln!(body, "    {u}_MEMSET(buf + {off}u, 0, {k}u);");
                }
            }
            putln!(body, "    n = {size}u;\n#else");
        }
        for f in sh.fields {
            self.enc_field(&mut body, f, sh, !fixed);
        }
        if host.is_some() {
            putln!(body, "#endif");
        }
        let uses_e = body.contains(" e = ");
        let uses_k = body.contains("&k)");
        putln!(
            self.out,
            "/** Encodes `v` into `buf` (`cap` bytes); on success stores the bytes written in `*written` (if not NULL). */"
        );
        putln!(
            self.out,
            "static inline int {}_encode(uint8_t *buf, size_t cap, const {enc} *v, size_t *written)\n{{\n    size_t n = 0;",
            sh.stem
        );
        // Both may go unused on the whole-copy path of the host's byte order.
        if uses_e {
            putln!(self.out, "    int e = 0;");
        }
        if uses_k {
            putln!(self.out, "    size_t k = 0;");
        }
        if uses_e {
            putln!(self.out, "    (void)e;");
        }
        if uses_k {
            putln!(self.out, "    (void)k;");
        }
        self.out.push_str(&body);
        putln!(
            self.out,
            "    (void)buf;\n    (void)cap;\n    (void)v;\n    if (written) *written = n;\n    return {u}_OK;\n}}"
        );
        // Decode.
        let mut body = String::new();
        if let Some(n) = sh.size.filter(|_| fixed) {
            putln!(body, "    if (len < {n}u) return {u}_ERR_SHORT;");
        }
        if let (Some(h), Some(size)) = (&host, sh.size) {
            putln!(body, "#if {h}\n    {u}_MEMCPY(v, buf, {size}u);\n    n = {size}u;\n#else");
        }
        for f in sh.fields {
            self.dec_field(&mut body, f, sh, !fixed);
        }
        if host.is_some() {
            putln!(body, "#endif");
        }
        let uses_e = body.contains(" e = ");
        let uses_k = body.contains("&k)");
        putln!(
            self.out,
            "/** Decodes `buf` (`len` bytes) into `*v`; on success stores the bytes used in `*used` (if not NULL). */"
        );
        putln!(
            self.out,
            "static inline int {}_decode({view} *v, const uint8_t *buf, size_t len, size_t *used)\n{{\n    size_t n = 0;",
            sh.stem
        );
        // Both may go unused on the whole-copy path of the host's byte order.
        if uses_e {
            putln!(self.out, "    int e = 0;");
        }
        if uses_k {
            putln!(self.out, "    size_t k = 0;");
        }
        if uses_e {
            putln!(self.out, "    (void)e;");
        }
        if uses_k {
            putln!(self.out, "    (void)k;");
        }
        self.out.push_str(&body);
        putln!(
            self.out,
            "    (void)buf;\n    (void)len;\n    (void)v;\n    if (used) *used = n;\n    return {u}_OK;\n}}"
        );
        // Element readers of the view's number arrays.
        if !fixed {
            for f in sh.fields {
                let Ty::Array { elem, len } = &f.ty else { continue };
                if matches!(len, Len::Fixed(_)) {
                    continue;
                }
                let (ret, expr) = match &**elem {
                    Ty::Bool => ("uint8_t".to_string(), "(uint8_t)(v->NAME[i] != 0)".to_string()),
                    t => match base_prim(self, t) {
                        Some(p) => {
                            let ret = if matches!(t, Ty::Named(_)) { self.elem_c(t) } else { prim_c(p) };
                            (ret, get(&l, p, f.endian, &format!("(v->NAME + {}u * i)", p.size())))
                        }
                        None => continue,
                    },
                };
                let name = &f.name;
                putln!(
                    self.out,
                    "/** Element `i` (below `v->{name}_count`) of a decoded `{name}`. */\nstatic inline {ret} {}_{name}_at(const {view} *v, size_t i)\n{{\n    return {};\n}}",
                    sh.stem,
                    expr.replace("NAME", name)
                );
            }
        }
        self.out.push('\n');
    }

    /// The one byte order in which a fixed-size layout's wire bytes are its packed struct's memory:
    /// no constant to write or check, no bool to normalise, padding only at the top level (zeroed
    /// after the copy), and every number in that order. `None` when there is none.
    fn copy_order(&self, fields: &[Field], top: bool, default: Endian) -> Option<Endian> {
        let mut order: Option<Endian> = None;
        let mut agree = |e: Endian| match order {
            Some(o) if o != e => false,
            _ => {
                order = Some(e);
                true
            }
        };
        for f in fields {
            if f.value.is_some() {
                return None;
            }
            let mut t = &f.ty;
            while let Ty::Array { elem, .. } = t {
                t = elem;
            }
            match t {
                Ty::Bool => return None,
                Ty::Pad(_) if !top => return None,
                Ty::Pad(_) | Ty::Bytes(_) | Ty::Str(_) => {}
                Ty::Named(id) if matches!(self.s.ty(*id), TypeDef::Struct(_)) => {
                    let st = self.s.strukt(*id);
                    let e = self.copy_order(&st.fields, false, st.endian)?;
                    if !agree(e) {
                        return None;
                    }
                }
                t => match base_prim(self, t) {
                    Some(p) if p.size() > 1 => {
                        if !agree(f.endian) {
                            return None;
                        }
                    }
                    Some(_) => {}
                    None => return None,
                },
            }
        }
        Some(order.unwrap_or(default))
    }

    fn need(&self, out: &mut String, checked: bool, what: &str, err: &str, limit: &str) {
        if checked {
            putln!(out, "    if ({limit} - n < {what}) return {}_{err};", self.n.upper);
        }
    }

    fn enc_field(&self, out: &mut String, f: &Field, sh: &Shape, checked: bool) {
        let l = &self.n.lower;
        let u = &self.n.upper;
        let src = format!("v->{}", f.name);
        match (&f.value, &f.ty) {
            (Some(ConstValue::Bytes(b)), _) => {
                self.need(out, checked, &format!("{}u", b.len()), "ERR_SPACE", "cap");
                putln!(out, "    {u}_MEMCPY(buf + n, {}, {}u);\n    n += {}u;", c_string(b), b.len(), b.len());
            }
            (Some(ConstValue::Int(c)), t) => {
                let p = base_prim(self, t).unwrap_or(Prim::U8);
                let p = if matches!(t, Ty::Bool) { Prim::U8 } else { p };
                self.need(out, checked, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                putln!(out, "    {}\n    n += {}u;", put(l, p, f.endian, "buf + n", &int_lit(*c, p)), p.size());
            }
            (None, Ty::Pad(k)) => {
                self.need(out, checked, &format!("{k}u"), "ERR_SPACE", "cap");
                putln!(out, "    {u}_MEMSET(buf + n, 0, {k}u);\n    n += {k}u;");
            }
            (None, Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_)) | Ty::Prim(_) | Ty::Bool | Ty::Named(_))
            | (None, Ty::Array { len: Len::Fixed(_), .. })
                if self.s.size_of(&f.ty).is_some() =>
            {
                self.enc_value(out, &f.ty, f.endian, &src, checked, 0);
            }
            (None, Ty::Named(id)) => {
                let sh2 = self.struct_shape(*id, self.s.strukt(*id));
                putln!(
                    out,
                    "    e = {}_encode(buf + n, cap - n, &{src}, &k);\n    if (e) return e;\n    n += k;",
                    sh2.stem
                );
            }
            (None, Ty::Bytes(len) | Ty::Str(len)) => {
                if let Some(p) = len.prefix() {
                    // A `size_t` always fits a 64-bit prefix (and the comparison would be constant).
                    if p.size() < 8 {
                        putln!(out, "    if ({src}_len > {}) return {u}_ERR_RANGE;", prefix_max(p));
                    }
                    self.need(out, true, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                    putln!(
                        out,
                        "    {}\n    n += {}u;",
                        put(l, p, f.endian, "buf + n", &format!("{src}_len")),
                        p.size()
                    );
                }
                self.need(out, true, &format!("{src}_len"), "ERR_SPACE", "cap");
                putln!(out, "    if ({src}_len) {u}_MEMCPY(buf + n, {src}, {src}_len);\n    n += {src}_len;");
            }
            (None, Ty::Array { elem, len }) => {
                let esize = self.s.size_of(elem);
                if let Some(p) = len.prefix() {
                    let val = match (len, esize) {
                        (Len::Size(_), Some(s)) => {
                            putln!(out, "    if ({src}_count > {} / {s}u) return {u}_ERR_RANGE;", prefix_max(p));
                            format!("{src}_count * {s}u")
                        }
                        _ => {
                            if p.size() < 8 {
                                putln!(out, "    if ({src}_count > {}) return {u}_ERR_RANGE;", prefix_max(p));
                            }
                            format!("{src}_count")
                        }
                    };
                    self.need(out, true, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                    putln!(out, "    {}\n    n += {}u;", put(l, p, f.endian, "buf + n", &val), p.size());
                }
                if let Some(s) = esize {
                    putln!(out, "    if ({src}_count > (cap - n) / {s}u) return {u}_ERR_SPACE;");
                }
                putln!(out, "    {{\n        size_t i;\n        for (i = 0; i < {src}_count; i++) {{");
                let mut inner = String::new();
                self.enc_value(&mut inner, elem, f.endian, &format!("{src}[i]"), esize.is_none(), 0);
                for line in inner.lines() {
                    putln!(out, "        {line}");
                }
                putln!(out, "        }}\n    }}");
            }
            (None, Ty::Union { id, tag_field }) => {
                let TypeDef::Union(un) = self.s.ty(*id) else { return };
                let tag = &sh.fields[*tag_field].name;
                putln!(out, "    switch (v->{tag}) {{");
                for (i, var) in un.variants.iter().enumerate() {
                    putln!(out, "    case {}:", int_lit(var.tag, Prim::I64).trim_end_matches("LL"));
                    if !var.fields.is_empty() {
                        let vs = self.variant_shape(*id, un, i);
                        putln!(
                            out,
                            "        e = {}_encode(buf + n, cap - n, &{src}.{}, &k);\n        if (e) return e;\n        n += k;",
                            vs.stem,
                            ident(&var.name)
                        );
                    }
                    putln!(out, "        break;");
                }
                putln!(out, "    default:\n        return {u}_ERR_TAG;\n    }}");
            }
            (None, _) => {}
        }
    }

    /// Encodes one fixed-size value (or one element of a variable-length array) from `src`.
    fn enc_value(&self, out: &mut String, ty: &Ty, e: Endian, src: &str, checked: bool, depth: usize) {
        let l = &self.n.lower;
        let size = self.s.size_of(ty);
        if let (Some(s), true) = (size, checked) {
            self.need(out, true, &format!("{s}u"), "ERR_SPACE", "cap");
        }
        match ty {
            Ty::Bool => putln!(out, "    buf[n] = (uint8_t)({src} != 0);\n    n += 1u;"),
            Ty::Bytes(Len::Fixed(k)) | Ty::Str(Len::Fixed(k)) => {
                putln!(out, "    {}_MEMCPY(buf + n, {src}, {k}u);\n    n += {k}u;", self.n.upper)
            }
            Ty::Pad(k) => putln!(out, "    {}_MEMSET(buf + n, 0, {k}u);\n    n += {k}u;", self.n.upper),
            Ty::Array { elem, len: Len::Fixed(k) } => {
                let i = format!("i{depth}");
                putln!(out, "    {{\n    size_t {i};\n    for ({i} = 0; {i} < {k}u; {i}++) {{");
                self.enc_value(out, elem, e, &format!("{src}[{i}]"), false, depth + 1);
                putln!(out, "    }}\n    }}");
            }
            Ty::Named(id) if matches!(self.s.ty(*id), TypeDef::Struct(_)) => {
                let sh = self.struct_shape(*id, self.s.strukt(*id));
                if sh.fixed() {
                    putln!(
                        out,
                        "    (void){}_encode(buf + n, cap - n, &{src}, NULL);\n    n += {}u;",
                        sh.stem,
                        size.unwrap_or(0)
                    );
                } else {
                    putln!(
                        out,
                        "    e = {}_encode(buf + n, cap - n, &{src}, &k);\n    if (e) return e;\n    n += k;",
                        sh.stem
                    );
                }
            }
            t => {
                if let Some(p) = base_prim(self, t) {
                    putln!(out, "    {}\n    n += {}u;", put(l, p, e, "buf + n", src), p.size());
                }
            }
        }
    }

    fn dec_field(&self, out: &mut String, f: &Field, sh: &Shape, checked: bool) {
        let l = &self.n.lower;
        let u = &self.n.upper;
        let dst = format!("v->{}", f.name);
        match (&f.value, &f.ty) {
            (Some(ConstValue::Bytes(b)), _) => {
                self.need(out, checked, &format!("{}u", b.len()), "ERR_SHORT", "len");
                putln!(out, "    if ({u}_MEMCMP(buf + n, {}, {}u) != 0) return {u}_ERR_CONST;", c_string(b), b.len());
                if sh.fixed() {
                    putln!(out, "    {u}_MEMCPY({dst}, buf + n, {}u);", b.len());
                }
                putln!(out, "    n += {}u;", b.len());
            }
            (Some(ConstValue::Int(c)), t) => {
                let p = if matches!(t, Ty::Bool) { Prim::U8 } else { base_prim(self, t).unwrap_or(Prim::U8) };
                self.need(out, checked, &format!("{}u", p.size()), "ERR_SHORT", "len");
                let g = get(l, p, f.endian, "(buf + n)");
                putln!(out, "    if ({g} != {}) return {u}_ERR_CONST;", int_lit(*c, p));
                if sh.fixed() {
                    putln!(out, "    {dst} = {g};");
                }
                putln!(out, "    n += {}u;", p.size());
            }
            (None, Ty::Pad(k)) => {
                self.need(out, checked, &format!("{k}u"), "ERR_SHORT", "len");
                putln!(out, "    n += {k}u;");
            }
            (None, t) if self.s.size_of(t).is_some() && !matches!(t, Ty::Named(id) if self.is_var_struct(*id)) => {
                self.dec_value(out, t, f.endian, &dst, checked, 0);
            }
            (None, Ty::Named(id)) => {
                let sh2 = self.struct_shape(*id, self.s.strukt(*id));
                putln!(
                    out,
                    "    e = {}_decode(&{dst}, buf + n, len - n, &k);\n    if (e) return e;\n    n += k;",
                    sh2.stem
                );
            }
            (None, Ty::Bytes(len) | Ty::Str(len)) => {
                let cast = if matches!(f.ty, Ty::Str(_)) { "(const char *)" } else { "" };
                match len.prefix() {
                    Some(p) => {
                        self.need(out, true, &format!("{}u", p.size()), "ERR_SHORT", "len");
                        self.wide_prefix_guard(out, p, f.endian);
                        putln!(
                            out,
                            "    {dst}_len = (size_t){};\n    n += {}u;",
                            get(l, p, f.endian, "(buf + n)"),
                            p.size()
                        );
                        putln!(out, "    if ({dst}_len > len - n) return {u}_ERR_COUNT;");
                    }
                    None => putln!(out, "    {dst}_len = len - n;"),
                }
                putln!(out, "    {dst} = {cast}(buf + n);\n    n += {dst}_len;");
            }
            (None, Ty::Array { elem, len }) => {
                let esize = self.s.size_of(elem);
                match len.prefix() {
                    Some(p) => {
                        self.need(out, true, &format!("{}u", p.size()), "ERR_SHORT", "len");
                        self.wide_prefix_guard(out, p, f.endian);
                        putln!(
                            out,
                            "    {dst}_count = (size_t){};\n    n += {}u;",
                            get(l, p, f.endian, "(buf + n)"),
                            p.size()
                        );
                        if let (Len::Size(_), Some(s)) = (len, esize) {
                            putln!(
                                out,
                                "    if ({dst}_count > len - n || {dst}_count % {s}u != 0) return {u}_ERR_COUNT;\n    {dst}_count /= {s}u;"
                            );
                        }
                    }
                    None => {
                        let s = esize.unwrap_or(1);
                        putln!(
                            out,
                            "    if ((len - n) % {s}u != 0) return {u}_ERR_COUNT;\n    {dst}_count = (len - n) / {s}u;"
                        );
                    }
                }
                putln!(out, "    {dst} = buf + n;");
                match esize {
                    Some(s) => {
                        putln!(out, "    if ({dst}_count > (len - n) / {s}u) return {u}_ERR_COUNT;\n    n += {dst}_count * {s}u;")
                    }
                    None => {
                        // Each element takes at least one byte (checked by `supported`), so the
                        // count is bounded by the input before the walk starts.
                        let min = self.min_size(elem).max(1);
                        let Ty::Named(eid) = &**elem else { return };
                        let es = self.struct_shape(*eid, self.s.strukt(*eid));
                        putln!(
                            out,
                            "    if ({dst}_count > (len - n) / {min}u) return {u}_ERR_COUNT;\n    {{\n        size_t i;\n        {} tmp;\n        size_t start = n;\n        for (i = 0; i < {dst}_count; i++) {{\n            e = {}_decode(&tmp, buf + n, len - n, &k);\n            if (e) return e;\n            n += k;\n        }}\n        {dst}_size = n - start;\n    }}",
                            es.view_ty(),
                            es.stem
                        );
                    }
                }
            }
            (None, Ty::Union { id, tag_field }) => {
                let TypeDef::Union(un) = self.s.ty(*id) else { return };
                let tag = &sh.fields[*tag_field].name;
                putln!(out, "    switch (v->{tag}) {{");
                for (i, var) in un.variants.iter().enumerate() {
                    putln!(out, "    case {}:", int_lit(var.tag, Prim::I64).trim_end_matches("LL"));
                    if !var.fields.is_empty() {
                        let vs = self.variant_shape(*id, un, i);
                        putln!(
                            out,
                            "        e = {}_decode(&{dst}.{}, buf + n, len - n, &k);\n        if (e) return e;\n        n += k;",
                            vs.stem,
                            ident(&var.name)
                        );
                    }
                    putln!(out, "        break;");
                }
                putln!(out, "    default:\n        return {u}_ERR_TAG;\n    }}");
            }
            (None, _) => {}
        }
    }

    /// A 64-bit length or count could be cut by the conversion to a 32-bit `size_t`: check it
    /// against the bytes left first (every element takes at least one byte).
    fn wide_prefix_guard(&self, out: &mut String, p: Prim, e: Endian) {
        if p.size() == 8 {
            let g = get(&self.n.lower, p, e, "(buf + n)");
            putln!(out, "    if ((uint64_t){g} > (uint64_t)(len - n - 8u)) return {}_ERR_COUNT;", self.n.upper);
        }
    }

    fn is_var_struct(&self, id: TypeId) -> bool {
        matches!(self.s.ty(id), TypeDef::Struct(s) if s.size.is_none())
    }

    /// Decodes one fixed-size value into `dst`.
    fn dec_value(&self, out: &mut String, ty: &Ty, e: Endian, dst: &str, checked: bool, depth: usize) {
        let l = &self.n.lower;
        let size = self.s.size_of(ty);
        if let (Some(s), true) = (size, checked) {
            self.need(out, true, &format!("{s}u"), "ERR_SHORT", "len");
        }
        match ty {
            Ty::Bool => putln!(out, "    {dst} = (uint8_t)(buf[n] != 0);\n    n += 1u;"),
            Ty::Bytes(Len::Fixed(k)) | Ty::Str(Len::Fixed(k)) => {
                putln!(out, "    {}_MEMCPY({dst}, buf + n, {k}u);\n    n += {k}u;", self.n.upper)
            }
            Ty::Pad(k) => putln!(out, "    n += {k}u;"),
            Ty::Array { elem, len: Len::Fixed(k) } => {
                let i = format!("i{depth}");
                putln!(out, "    {{\n    size_t {i};\n    for ({i} = 0; {i} < {k}u; {i}++) {{");
                self.dec_value(out, elem, e, &format!("{dst}[{i}]"), false, depth + 1);
                putln!(out, "    }}\n    }}");
            }
            Ty::Named(id) if matches!(self.s.ty(*id), TypeDef::Struct(_)) => {
                let sh = self.struct_shape(*id, self.s.strukt(*id));
                putln!(
                    out,
                    "    e = {}_decode(&{dst}, buf + n, len - n, NULL);\n    if (e) return e;\n    n += {}u;",
                    sh.stem,
                    size.unwrap_or(0)
                );
            }
            t => {
                if let Some(p) = base_prim(self, t) {
                    putln!(out, "    {dst} = {};\n    n += {}u;", get(l, p, e, "(buf + n)"), p.size());
                }
            }
        }
    }

    /// The typed writers and the record reader of a framed format.
    pub(super) fn framing_functions(&mut self) {
        let s = self.s;
        let (l, u) = (self.n.lower.clone(), self.n.upper.clone());
        if let Some(fh) = s.file_header {
            let st = s.strukt(fh);
            let sh = self.struct_shape(fh, st);
            if sh.fixed() && self.supported(&Ty::Named(fh)) {
                let sid = s.format.schema_id.as_ref().and_then(|id| id.field.map(|f| (f, id.macro_name.clone())));
                let settable: Vec<&Field> = st
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(i, f)| !f.is_padding() && f.value.is_none() && sid.as_ref().map(|x| x.0) != Some(*i))
                    .map(|(_, f)| f)
                    .collect();
                let scalar = settable.iter().all(|f| base_prim(self, &f.ty).is_some() || f.ty == Ty::Bool);
                let params: Vec<String> = if scalar {
                    settable
                        .iter()
                        .map(|f| format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name))
                        .collect()
                } else {
                    vec![format!("const {} *fields", sh.enc_ty())]
                };
                let mut doc = format!("Writes the file header ({} bytes) at `buf`: constants", st.size.unwrap_or(0));
                if let Some((_, m)) = &sid {
                    doc.push_str(&format!(" and {m}"));
                }
                doc.push_str(" filled in, padding zeroed. Returns the bytes written, or 0 when `cap` is too small.");
                self.block(&doc, true);
                let mut p = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
                p.extend(params);
                putln!(self.out, "static inline size_t {l}_write_file_header({})\n{{", p.join(", "));
                putln!(self.out, "    {} h;\n    size_t k = 0;", sh.enc_ty());
                if scalar {
                    putln!(self.out, "    {u}_MEMSET(&h, 0, sizeof h);");
                    for f in &settable {
                        putln!(self.out, "    h.{0} = {0};", f.name);
                    }
                } else {
                    putln!(self.out, "    h = *fields;");
                }
                if let Some((i, m)) = &sid {
                    putln!(self.out, "    h.{} = {m};", st.fields[*i].name);
                }
                putln!(self.out, "    return {}_encode(buf, cap, &h, &k) == {u}_OK ? k : 0u;\n}}", sh.stem);
                // Reading it back.
                self.block(
                    &format!(
                        "Reads the file header at `buf` (`len` bytes) into `*h`, checking its constants{}. Returns {u}_OK or an error code.",
                        if sid.is_some() { " and schema id" } else { "" }
                    ),
                    true,
                );
                putln!(
                    self.out,
                    "static inline int {l}_read_file_header({} *h, const uint8_t *buf, size_t len)\n{{\n    int e = {}_decode(h, buf, len, NULL);\n    if (e) return e;",
                    sh.enc_ty(),
                    sh.stem
                );
                if let Some((i, m)) = &sid {
                    putln!(self.out, "    if (h->{} != {m}) return {u}_ERR_SCHEMA;", st.fields[*i].name);
                }
                putln!(self.out, "    return {u}_OK;\n}}\n");
            }
        }
        let Some(fr) = &s.framing else { return };
        let hst = s.strukt(fr.header);
        let hsh = self.struct_shape(fr.header, hst);
        let Some(hsize) = hst.size.filter(|_| self.supported(&Ty::Named(fr.header))) else { return };
        let tag_f = &hst.fields[fr.tag];
        let tag_p = base_prim(self, &tag_f.ty).unwrap_or(Prim::U64);
        let len_f = fr.length.map(|i| &hst.fields[i]);
        let extra: Vec<&Field> = hst
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                !f.is_padding()
                    && f.value.is_none()
                    && *i != fr.tag
                    && Some(*i) != fr.length
                    && Some(*i) != fr.timestamp
            })
            .map(|(_, f)| f)
            .collect();
        if !extra.iter().all(|f| base_prim(self, &f.ty).is_some()) {
            return;
        }
        for r in &s.records {
            let body = s.strukt(r.body);
            if !self.supported(&Ty::Named(r.body)) && body.size != Some(0) {
                continue;
            }
            let bsh = self.struct_shape(r.body, body);
            let mut params = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
            if let Some(ts) = fr.timestamp {
                let f = &hst.fields[ts];
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            for f in &extra {
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            let empty = body.size == Some(0);
            if !empty {
                params.push(format!("const {} *p", bsh.enc_ty()));
            }
            self.block(
                &format!(
                    "Writes one {} record (header and payload) at `buf`. Returns the bytes written, or 0 when it does not fit in `cap` bytes{}.",
                    r.name,
                    if body.size.is_none() { " or a length does not fit its field" } else { "" }
                ),
                true,
            );
            let fname = format!("{l}_write_{}", snake(&r.name).to_ascii_lowercase());
            putln!(self.out, "static inline size_t {fname}({})\n{{", params.join(", "));
            putln!(self.out, "    {} h;\n    size_t k = 0;\n    if (cap < {hsize}u) return 0u;", hsh.enc_ty());
            if !empty {
                putln!(
                    self.out,
                    "    if ({}_encode(buf + {hsize}u, cap - {hsize}u, p, &k) != {u}_OK) return 0u;",
                    bsh.stem
                );
            }
            putln!(self.out, "    {u}_MEMSET(&h, 0, sizeof h);");
            putln!(
                self.out,
                "    h.{} = ({}){};",
                tag_f.name,
                self.c_decl(&tag_f.ty).map(|d| d.0).unwrap_or_default(),
                int_lit(r.id.into(), tag_p)
            );
            if let Some(lf) = len_f {
                let lp = base_prim(self, &lf.ty).unwrap_or(Prim::U64);
                putln!(self.out, "    if (k > {}) return 0u;", prefix_max(lp));
                putln!(self.out, "    h.{} = ({})k;", lf.name, prim_c(lp));
            }
            if let Some(ts) = fr.timestamp {
                putln!(self.out, "    h.{0} = {0};", hst.fields[ts].name);
            }
            for f in &extra {
                putln!(self.out, "    h.{0} = {0};", f.name);
            }
            putln!(self.out, "    (void){}_encode(buf, {hsize}u, &h, NULL);\n    return {hsize}u + k;\n}}\n", hsh.stem);
        }
        // The reader.
        let rec_t = format!("{l}_framed_record_t");
        self.block(
            &format!("One record found by {l}_next_record: its decoded header and where its payload is in the buffer."),
            true,
        );
        putln!(
            self.out,
            "typedef struct {l}_framed_record {{\n    {} header;\n    const uint8_t *payload; /**< Points into the buffer given to {l}_next_record. */\n    size_t payload_len;\n    size_t offset; /**< Of the record header, from the start of the buffer. */\n}} {rec_t};",
            hsh.enc_ty()
        );
        self.block(
            &format!(
                "Reads the record at `*pos` in `buf` (`len` bytes; records only, after the file header) into `*rec` and advances `*pos` past it. Returns 1 for a record, 0 at the end of the buffer, or an error code (with `*pos` left at the bad record: every record before it was returned). {}",
                if len_f.is_some() {
                    format!("A known record whose length is not its fixed size is {u}_ERR_LENGTH; an unknown id is returned like any other (skip it by its length).")
                } else {
                    format!("Records carry no length, so an unknown id is {u}_ERR_TAG.")
                }
            ),
            true,
        );
        putln!(
            self.out,
            "static inline int {l}_next_record(const uint8_t *buf, size_t len, size_t *pos, {rec_t} *rec)\n{{\n    size_t at = *pos, plen = 0;\n    int e;\n    if (at >= len) return 0;\n    e = {}_decode(&rec->header, buf + at, len - at, NULL);\n    if (e) return e;",
            hsh.stem
        );
        match len_f {
            Some(lf) => {
                putln!(
                    self.out,
                    "    plen = (size_t)rec->header.{};\n    if (plen > len - at - {hsize}u) return {u}_ERR_SHORT;\n    switch (rec->header.{}) {{",
                    lf.name,
                    tag_f.name
                );
                for r in &s.records {
                    if let Some(n) = s.strukt(r.body).size {
                        let rmac = if r.name.starts_with("REC_") {
                            r.name.clone()
                        } else {
                            format!("{}_ID", self.n.mac(r.body))
                        };
                        putln!(
                            self.out,
                            "    case {rmac}:\n        if (plen != {n}u) return {u}_ERR_LENGTH;\n        break;"
                        );
                    }
                }
                putln!(self.out, "    default:\n        break;\n    }}");
            }
            None => {
                putln!(self.out, "    switch (rec->header.{}) {{", tag_f.name);
                for r in &s.records {
                    let rmac =
                        if r.name.starts_with("REC_") { r.name.clone() } else { format!("{}_ID", self.n.mac(r.body)) };
                    let body = s.strukt(r.body);
                    match body.size {
                        Some(n) => putln!(self.out, "    case {rmac}:\n        plen = {n}u;\n        break;"),
                        None if self.supported(&Ty::Named(r.body)) => {
                            let bsh = self.struct_shape(r.body, body);
                            putln!(
                                self.out,
                                "    case {rmac}: {{\n        {} tmp;\n        e = {}_decode(&tmp, buf + at + {hsize}u, len - at - {hsize}u, &plen);\n        if (e) return e;\n        break;\n    }}",
                                bsh.view_ty(),
                                bsh.stem
                            );
                        }
                        None => {}
                    }
                }
                putln!(self.out, "    default:\n        return {u}_ERR_TAG;\n    }}\n    if (plen > len - at - {hsize}u) return {u}_ERR_SHORT;");
            }
        }
        putln!(
            self.out,
            "    rec->payload = buf + at + {hsize}u;\n    rec->payload_len = plen;\n    rec->offset = at;\n    *pos = at + {hsize}u + plen;\n    return 1;\n}}\n"
        );
    }

    /// Message writers: for a struct whose body is a union selected by one of its own fields (an
    /// RLOG message: kind byte, then the body), one `<struct>_write_<variant>` per variant that
    /// sets the tag, so that a tag cannot be paired with the wrong body.
    pub(super) fn message_writers(&mut self, id: TypeId, st: &Struct) {
        let u = self.n.upper.clone();
        let unions: Vec<(usize, TypeId, usize)> = st
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match f.ty {
                Ty::Union { id, tag_field } => Some((i, id, tag_field)),
                _ => None,
            })
            .collect();
        let [(ui, uid, tag)] = unions.as_slice() else { return };
        let others: Vec<&Field> = st
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| i != ui && i != tag && !f.is_padding() && f.value.is_none())
            .map(|(_, f)| f)
            .collect();
        if !others.iter().all(|f| base_prim(self, &f.ty).is_some() || f.ty == Ty::Bool)
            || !self.supported(&Ty::Named(id))
        {
            return;
        }
        let TypeDef::Union(un) = self.s.ty(*uid) else { return };
        let sh = self.struct_shape(id, st);
        let tag_f = &st.fields[*tag];
        let tag_c = self.c_decl(&tag_f.ty).map(|d| d.0).unwrap_or_default();
        for (i, var) in un.variants.iter().enumerate() {
            let vs = self.variant_shape(*uid, un, i);
            let mut params = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
            for f in &others {
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            if !var.fields.is_empty() {
                params.push(format!("const {} *p", vs.enc_ty()));
            }
            let mut doc = format!("Writes one {} with the {} body ({} = {}).", st.name, var.name, tag_f.name, var.tag);
            if let Some(d) = &var.doc {
                doc.push(' ');
                doc.push_str(&one_line(d));
            }
            doc.push_str(" Returns the bytes written, or 0 when it does not fit in `cap` bytes or a length does not fit its prefix.");
            self.block(&doc, true);
            let vname = ident(&var.name).trim_end_matches('_').to_string();
            putln!(self.out, "static inline size_t {}_write_{vname}({})\n{{", sh.stem, params.join(", "));
            putln!(self.out, "    {} m;\n    size_t k = 0;\n    {u}_MEMSET(&m, 0, sizeof m);", sh.enc_ty());
            putln!(self.out, "    m.{} = ({tag_c}){};", tag_f.name, int_lit(var.tag, Prim::I64).trim_end_matches("LL"));
            for f in &others {
                putln!(self.out, "    m.{0} = {0};", f.name);
            }
            if !var.fields.is_empty() {
                putln!(self.out, "    m.{}.{} = *p;", st.fields[*ui].name, ident(&var.name));
            }
            putln!(self.out, "    return {}_encode(buf, cap, &m, &k) == {u}_OK ? k : 0u;\n}}\n", sh.stem);
        }
    }

    /// A union's variants: a packed struct (fixed size) or `_t`/`_view_t` (variable size) each,
    /// with their functions. For a union selected by a type name, also the name lookup.
    pub(super) fn union_variants(&mut self, id: TypeId, un: &Union) {
        let mut any = false;
        for (i, var) in un.variants.iter().enumerate() {
            if var.fields.is_empty() || !var.fields.iter().all(|f| self.supported(&f.ty)) {
                continue;
            }
            any = true;
            let sh = self.variant_shape(id, un, i);
            let mut title = format!("{}.{}: the body of this variant.", un.name, var.name);
            if let Some(d) = &var.doc {
                title.push(' ');
                title.push_str(d);
            }
            if sh.fixed() {
                self.packed_variant(&sh, &title);
            } else {
                self.var_structs(&sh, &title);
            }
            self.functions(&sh);
        }
        if any && un.by_name {
            let l = self.n.lower.clone();
            let mac = self.n.mac(id);
            let idx: Vec<Def> = un
                .variants
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    (
                        format!("{mac}_{}_INDEX", ident(&v.name).trim_end_matches('_').to_ascii_uppercase()),
                        format!("{i}"),
                        None,
                    )
                })
                .collect();
            defines(&mut self.out, &idx);
            self.block(
                &format!(
                    "The variant of {} that a type name selects (one of {mac}_*_INDEX): exact names first, then prefixes, then the default; -1 when none does.",
                    un.name
                ),
                true,
            );
            let stem = format!("{l}_{}", self.n.stems[id.0]);
            putln!(self.out, "static inline int {stem}_select(const char *name, size_t len)\n{{");
            let mut prefixes = Vec::new();
            let mut default = None;
            for (i, v) in un.variants.iter().enumerate() {
                match &v.select {
                    Some(crate::ir::NameMatch::Exact(names)) => {
                        for n in names {
                            putln!(
                                self.out,
                                "    if (len == {}u && {}_MEMCMP(name, {}, {}u) == 0) return {i};",
                                n.len(),
                                self.n.upper,
                                c_string(n.as_bytes()),
                                n.len()
                            );
                        }
                    }
                    Some(crate::ir::NameMatch::Prefix(p)) => prefixes.push((i, p.clone())),
                    Some(crate::ir::NameMatch::Default) => default = Some(i),
                    None => {}
                }
            }
            for (i, p) in prefixes {
                putln!(
                    self.out,
                    "    if (len >= {}u && {}_MEMCMP(name, {}, {}u) == 0) return {i};",
                    p.len(),
                    self.n.upper,
                    c_string(p.as_bytes()),
                    p.len()
                );
            }
            putln!(
                self.out,
                "    (void)name;\n    (void)len;\n    return {};\n}}\n",
                default.map_or("-1".to_string(), |d| d.to_string())
            );
        }
    }

    /// A fixed-size variant's packed struct, size macro and static asserts.
    fn packed_variant(&mut self, sh: &Shape, title: &str) {
        let size = sh.size.unwrap_or(0);
        self.block(&format!("{title} {size} bytes on the wire, {}-endian.", sh.endian.as_str()), true);
        let st =
            Struct { name: String::new(), doc: None, endian: sh.endian, fields: sh.fields.to_vec(), size: sh.size };
        let members = self.members(None, &st);
        putln!(self.out, "#pragma pack(push, 1)\ntypedef struct {} {{", sh.stem);
        for (decl, comment) in &members {
            if comment.is_empty() {
                putln!(self.out, "    {decl}");
            } else {
                putln!(self.out, "    {decl} /**< {comment} */");
            }
        }
        putln!(self.out, "}} {};\n#pragma pack(pop)", sh.enc_ty());
        let mut defs = vec![(format!("{}_SIZE", sh.mac), u_lit(size.into()), None)];
        defs.extend(self.const_defs(&sh.mac, sh.fields));
        defines(&mut self.out, &defs);
        let sa = format!("{}_STATIC_ASSERT", self.n.upper);
        putln!(self.out, "{sa}(sizeof({}) == {}_SIZE, \"{} must be {size} bytes\");", sh.enc_ty(), sh.mac, sh.enc_ty());
    }
}
