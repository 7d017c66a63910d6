//! The C encoders and decoders: `_encode`/`_decode` per struct and union variant, the `_t` and
//! `_view_t` structs of variable-size types, and the `_at` readers of their number arrays. The
//! helpers they call are in `wire.rs`; the writers built on them in `writers.rs` and `variants.rs`.
//!
//! Every function produces or consumes the exact wire bytes on a host of either byte order: a
//! number is put and got by shifts, and a packed struct is copied whole only where the compiler
//! reports that the host has the wire's order. Decoders check every length before reading and
//! return an error code; nothing allocates.
//!
//! Over 800 lines: the encoder and decoder of every field kind side by side, as in the Rust
//! back end's `codec.rs`, so that one rule's two directions stay together.

use std::fmt::Write;

use super::wire::{base_prim, get, prefix_max, put};
use super::{c_string, int_lit, prim_c, snake, Gen};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, Prim, Struct, Ty, TypeDef, TypeId, Union};

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// The C expression of a variable-width integer's byte count: its bits of the width field, plus one.
fn var_width(sh: &Shape, width: &logspec_ir::ir::Width) -> String {
    let w = sh.fields.get(width.field).map_or("0", |f| f.name.as_str());
    format!("(size_t)(((uint64_t)v->{w} >> {}) & 0x{:x}u) + 1u", width.lo, (1u64 << width.bits) - 1)
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
    pub(super) fn fixed(&self) -> bool {
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

impl Gen<'_> {
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
            // A variable-width integer (WPILOG's record header) takes the byte count its width
            // field's bits give; `_fit_widths` sets those bits to the fewest bytes.
            Ty::VarInt { .. } => true,
            Ty::ParamUnion { .. } => false,
        }
    }

    /// The fewest bytes a value of the type takes (bounds a count before a walk), by the one
    /// rule every back end shares ([`logspec_ir::layout::min_size`]).
    pub(super) fn min_size(&self, ty: &Ty) -> u32 {
        u32::try_from(logspec_ir::layout::min_size(self.s, ty)).unwrap_or(u32::MAX)
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
        let uses_k = body.contains("&k)") || body.contains("&k, at + n)");
        // Under layout rules beyond packed, a variable-size shape's functions take `at`: where
        // `buf` is from the start of the outermost value (for CDR, the payload after its
        // encapsulation header), which natural alignment counts from.
        let at_fn = self.at_fn(sh);
        if at_fn {
            putln!(
                self.out,
                "/** Encodes `v` into `buf` (`cap` bytes), `buf` being `at` bytes from the start of the outermost value (natural alignment counts from there); on success stores the bytes written in `*written` (if not NULL). */"
            );
            putln!(
                self.out,
                "static inline int {}_encode_at(uint8_t *buf, size_t cap, const {enc} *v, size_t *written, size_t at)\n{{\n    size_t n = 0;\n    (void)at;",
                sh.stem
            );
        } else {
            putln!(
                self.out,
                "/** Encodes `v` into `buf` (`cap` bytes); on success stores the bytes written in `*written` (if not NULL). */"
            );
            putln!(
                self.out,
                "static inline int {}_encode(uint8_t *buf, size_t cap, const {enc} *v, size_t *written)\n{{\n    size_t n = 0;",
                sh.stem
            );
        }
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
        if at_fn {
            putln!(
                self.out,
                "/** Encodes `v` into `buf` (`cap` bytes) as a whole value (alignment counted from `buf`); on success stores the bytes written in `*written` (if not NULL). */\nstatic inline int {0}_encode(uint8_t *buf, size_t cap, const {enc} *v, size_t *written)\n{{\n    return {0}_encode_at(buf, cap, v, written, 0u);\n}}",
                sh.stem
            );
        }
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
        let uses_k = body.contains("&k)") || body.contains("&k, at + n)");
        if at_fn {
            putln!(
                self.out,
                "/** Decodes `buf` (`len` bytes) into `*v`, `buf` being `at` bytes from the start of the outermost value (natural alignment counts from there); on success stores the bytes used in `*used` (if not NULL). */"
            );
            putln!(
                self.out,
                "static inline int {}_decode_at({view} *v, const uint8_t *buf, size_t len, size_t *used, size_t at)\n{{\n    size_t n = 0;\n    (void)at;",
                sh.stem
            );
        } else {
            putln!(
                self.out,
                "/** Decodes `buf` (`len` bytes) into `*v`; on success stores the bytes used in `*used` (if not NULL). */"
            );
            putln!(
                self.out,
                "static inline int {}_decode({view} *v, const uint8_t *buf, size_t len, size_t *used)\n{{\n    size_t n = 0;",
                sh.stem
            );
        }
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
        if at_fn {
            putln!(
                self.out,
                "/** Decodes `buf` (`len` bytes) into `*v` as a whole value (alignment counted from `buf`); on success stores the bytes used in `*used` (if not NULL). */\nstatic inline int {0}_decode({view} *v, const uint8_t *buf, size_t len, size_t *used)\n{{\n    return {0}_decode_at(v, buf, len, used, 0u);\n}}",
                sh.stem
            );
        }
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
        self.fit_widths(sh);
        self.out.push('\n');
    }

    /// `_fit_widths` of a shape with variable-width integers: sets their width bits to the fewest
    /// bytes that hold each value (what a writer wants before `_encode`; a decoded value keeps
    /// the widths it was read with), as the Rust type's `fit_widths`.
    fn fit_widths(&mut self, sh: &Shape) {
        let mut body = String::new();
        for f in sh.fields {
            let Ty::VarInt { prim, width } = &f.ty else { continue };
            let w = &sh.fields[width.field];
            let wt = match base_prim(self, &w.ty) {
                Some(p) => prim_c(p),
                None => "uint8_t".into(),
            };
            let mask = format!("0x{:x}u", width.mask());
            putln!(
                body,
                "    {{\n        uint64_t x = (uint64_t)(uint{}_t)v->{};\n        uint64_t w = 1u;\n        while (w < 8u && (x >> (8u * w)) != 0) w++;\n        v->{} = ({wt})(((uint64_t)v->{} & ~(uint64_t){mask}) | (((w - 1u) << {}) & {mask}));\n    }}",
                prim.size() * 8,
                f.name,
                w.name,
                w.name,
                width.lo
            );
        }
        if body.is_empty() {
            return;
        }
        putln!(
            self.out,
            "/** Sets the width bits of every variable-width integer of `v` to the fewest bytes that hold its value. */\nstatic inline void {}_fit_widths({} *v)\n{{\n{body}}}",
            sh.stem,
            sh.enc_ty()
        );
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

    /// Whether a shape's functions take `at` (see [`Self::functions`]): a variable-size shape
    /// of a schema with layout rules beyond packed.
    pub(super) fn at_fn(&self, sh: &Shape) -> bool {
        !sh.fixed() && !self.s.format.rules.is_packed()
    }

    /// The call of a nested struct's `_encode` or `_decode` (`what`), with `at + n` when it
    /// takes `at`: `stem_what(args)` or `stem_what_at(args, at + n)`.
    fn nested_call(&self, id: TypeId, what: &str, args: &str) -> String {
        let sh = self.struct_shape(id, self.s.strukt(id));
        if self.at_fn(&sh) {
            format!("{}_{what}_at({args}, at + n)", sh.stem)
        } else {
            format!("{}_{what}({args})", sh.stem)
        }
    }

    /// Under natural alignment, the width a value of `ty` is padded to before it (a number, an
    /// enum's or flags' base, the first element of a fixed array of them); 1 for none.
    fn lead(&self, ty: &Ty) -> u32 {
        if !self.s.format.rules.natural_align {
            return 1;
        }
        match ty {
            Ty::Array { elem, len: Len::Fixed(k) } if *k > 0 => self.lead(elem),
            t => base_prim(self, t).map_or(1, |p| p.size()),
        }
    }

    /// The padding before a number of `w` bytes under natural alignment (none for `w` of 1):
    /// zero bytes written (`enc`) or skipped, the space checked first.
    fn pad(&self, out: &mut String, w: u32, enc: bool) {
        if w <= 1 || !self.s.format.rules.natural_align {
            return;
        }
        let (l, u) = (&self.n.lower, &self.n.upper);
        if enc {
            putln!(
                out,
                "    {{\n        size_t p_ = {l}_pad(at + n, {w}u);\n        if (cap - n < p_) return {u}_ERR_SPACE;\n        {u}_MEMSET(buf + n, 0, p_);\n        n += p_;\n    }}"
            );
        } else {
            putln!(
                out,
                "    {{\n        size_t p_ = {l}_pad(at + n, {w}u);\n        if (len - n < p_) return {u}_ERR_SHORT;\n        n += p_;\n    }}"
            );
        }
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
                self.pad(out, self.lead(&Ty::Prim(p)), true);
                self.need(out, checked, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                putln!(out, "    {}\n    n += {}u;", put(l, p, f.endian, "buf + n", &int_lit(*c, p)), p.size());
            }
            (None, Ty::Pad(k)) => {
                self.need(out, checked, &format!("{k}u"), "ERR_SPACE", "cap");
                putln!(out, "    {u}_MEMSET(buf + n, 0, {k}u);\n    n += {k}u;");
            }
            (None, Ty::VarInt { prim, width }) => {
                // The byte count is the width field's (the caller's, or `_fit_widths`'s); a value
                // that does not fit it is a range error, as in the Rust and Python encoders.
                let bits = prim.size() * 8;
                let x = if bits == 64 { format!("(uint64_t){src}") } else { format!("(uint64_t)(uint{bits}_t){src}") };
                putln!(out, "    {{\n        uint64_t x = {x};");
                putln!(out, "        size_t w = {};\n        size_t i;", var_width(sh, width));
                let fits = "(w < 8u && (x >> (8u * w)) != 0)";
                if width.max_bytes() > prim.size() {
                    putln!(out, "        if (w > {}u || {fits}) return {u}_ERR_RANGE;", prim.size());
                } else {
                    putln!(out, "        if {fits} return {u}_ERR_RANGE;");
                }
                putln!(out, "        if (cap - n < w) return {u}_ERR_SPACE;");
                let at = if f.endian == Endian::Big { "n + w - 1u - i" } else { "n + i" };
                putln!(out, "        for (i = 0; i < w; i++) buf[{at}] = (uint8_t)(x >> (8u * i));");
                putln!(out, "        n += w;\n    }}");
            }
            (None, Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_)) | Ty::Prim(_) | Ty::Bool | Ty::Named(_))
            | (None, Ty::Array { len: Len::Fixed(_), .. })
                if self.s.size_of(&f.ty).is_some() =>
            {
                self.enc_value(out, &f.ty, f.endian, &src, checked, 0);
            }
            (None, Ty::Named(id)) => {
                putln!(
                    out,
                    "    e = {};\n    if (e) return e;\n    n += k;",
                    self.nested_call(*id, "encode", &format!("buf + n, cap - n, &{src}, &k"))
                );
            }
            (None, Ty::Bytes(len) | Ty::Str(len)) => {
                // Under `string_nul`, a counted string's length counts its terminating NUL.
                let nul = self.s.format.rules.string_nul && matches!(f.ty, Ty::Str(_)) && len.prefix().is_some();
                if let Some(p) = len.prefix() {
                    // A `size_t` always fits a 64-bit prefix (and the comparison would be constant).
                    if p.size() < 8 {
                        let op = if nul { ">=" } else { ">" };
                        putln!(out, "    if ({src}_len {op} {}) return {u}_ERR_RANGE;", prefix_max(p));
                    }
                    self.pad(out, self.lead(&Ty::Prim(p)), true);
                    self.need(out, true, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                    let val = if nul { format!("{src}_len + 1u") } else { format!("{src}_len") };
                    putln!(out, "    {}\n    n += {}u;", put(l, p, f.endian, "buf + n", &val), p.size());
                }
                self.need(out, true, &format!("{src}_len"), "ERR_SPACE", "cap");
                putln!(out, "    if ({src}_len) {u}_MEMCPY(buf + n, {src}, {src}_len);\n    n += {src}_len;");
                if nul {
                    self.need(out, true, "1u", "ERR_SPACE", "cap");
                    putln!(out, "    buf[n] = 0u;\n    n += 1u;");
                }
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
                    self.pad(out, self.lead(&Ty::Prim(p)), true);
                    self.need(out, true, &format!("{}u", p.size()), "ERR_SPACE", "cap");
                    putln!(out, "    {}\n    n += {}u;", put(l, p, f.endian, "buf + n", &val), p.size());
                }
                // Numbers: the first element aligned, the rest follow it (none for no elements).
                let w = self.lead(elem);
                if w > 1 {
                    putln!(out, "    if ({src}_count > 0u)");
                    self.pad(out, w, true);
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
        // The elements of a fixed array follow its aligned first one.
        if depth == 0 {
            self.pad(out, self.lead(ty), true);
        }
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
                        "    e = {};\n    if (e) return e;\n    n += k;",
                        self.nested_call(*id, "encode", &format!("buf + n, cap - n, &{src}, &k"))
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
                self.pad(out, self.lead(&Ty::Prim(p)), false);
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
            (None, Ty::VarInt { prim, width }) => {
                // Signed values are the wire's two's complement at the type's full width, so a
                // negative value takes every byte.
                let bits = prim.size() * 8;
                putln!(out, "    {{\n        uint64_t x = 0;");
                putln!(out, "        size_t w = {};\n        size_t i;", var_width(sh, width));
                if width.max_bytes() > prim.size() {
                    putln!(out, "        if (w > {}u) return {u}_ERR_COUNT;", prim.size());
                }
                putln!(out, "        if (len - n < w) return {u}_ERR_SHORT;");
                let at = if f.endian == Endian::Big { "n + w - 1u - i" } else { "n + i" };
                putln!(out, "        for (i = 0; i < w; i++) x |= (uint64_t)buf[{at}] << (8u * i);");
                let cast = if prim.is_signed() {
                    format!("({})(uint{bits}_t)", prim_c(*prim))
                } else {
                    format!("({})", prim_c(*prim))
                };
                putln!(out, "        {dst} = {cast}x;\n        n += w;\n    }}");
            }
            (None, t) if self.s.size_of(t).is_some() && !matches!(t, Ty::Named(id) if self.is_var_struct(*id)) => {
                self.dec_value(out, t, f.endian, &dst, checked, 0);
            }
            (None, Ty::Named(id)) => {
                putln!(
                    out,
                    "    e = {};\n    if (e) return e;\n    n += k;",
                    self.nested_call(*id, "decode", &format!("&{dst}, buf + n, len - n, &k"))
                );
            }
            (None, Ty::Bytes(len) | Ty::Str(len)) => {
                let cast = if matches!(f.ty, Ty::Str(_)) { "(const char *)" } else { "" };
                match len.prefix() {
                    Some(p) => {
                        self.pad(out, self.lead(&Ty::Prim(p)), false);
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
                // Under `string_nul`, the text is the counted bytes but their terminating NUL.
                if self.s.format.rules.string_nul && matches!(f.ty, Ty::Str(_)) && len.prefix().is_some() {
                    putln!(out, "    if ({dst}_len > 0u) {dst}_len -= 1u;");
                }
            }
            (None, Ty::Array { elem, len }) => {
                let esize = self.s.size_of(elem);
                match len.prefix() {
                    Some(p) => {
                        self.pad(out, self.lead(&Ty::Prim(p)), false);
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
                // Numbers: the first element aligned, the rest follow it (none for no elements).
                let w = self.lead(elem);
                if w > 1 {
                    putln!(out, "    if ({dst}_count > 0u)");
                    self.pad(out, w, false);
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
                            "    if ({dst}_count > (len - n) / {min}u) return {u}_ERR_COUNT;\n    {{\n        size_t i;\n        {} tmp;\n        size_t start = n;\n        for (i = 0; i < {dst}_count; i++) {{\n            e = {};\n            if (e) return e;\n            n += k;\n        }}\n        {dst}_size = n - start;\n    }}",
                            es.view_ty(),
                            self.nested_call(*eid, "decode", "&tmp, buf + n, len - n, &k")
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
        // The elements of a fixed array follow its aligned first one.
        if depth == 0 {
            self.pad(out, self.lead(ty), false);
        }
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
}
