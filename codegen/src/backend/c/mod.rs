//! C back end: one header per format (`include/<format>/record_types.h`) with packed structs,
//! record ids and compile-time layout checks, meant as a drop-in for a hand-written firmware header.
//!
//! Naming scheme. C has one global namespace and firmware often includes several formats, so every
//! name the header defines carries the format's prefix: types are `<format>_<snake>_t` (with the
//! struct tag `<format>_<snake>` so they can be forward-declared) and macros are
//! `<FORMAT>_<SNAKE>...`. The only exceptions are the contract names that firmware and upstream
//! tests already spell without a prefix: the schema id macro (`FW_MODEL_SCHEMA`) and the record id
//! macros (`REC_NAV_SOLUTION`). A record's payload type is named after the record, not after its
//! Rust-style type name: `REC_NAV_SOLUTION` -> `usvlog_rec_nav_solution_t`.
//!
//! Over 800 lines: the header's declarations in the order they appear in it (guards, ids,
//! enums, structs, layout checks); the codecs, writers, wire helpers and union variants are the
//! submodules.

mod codec;
mod variants;
mod wire;
mod writers;

use std::collections::BTreeSet;
use std::fmt::Write;

use super::{generated_banner, Artifact, Backend};
use logspec_ir::ir::{ConstValue, Endian, Field, Len, Prim, Schema, Struct, Ty, TypeDef, TypeId, Union};

/// `write!`/`writeln!` into a `String`, which cannot fail.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {{
        let _ = write!($out, $($arg)*);
    }};
}
macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Generates `include/<format>/record_types.h`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CBackend;

impl Backend for CBackend {
    fn name(&self) -> &'static str {
        "c"
    }

    fn generate(&self, schema: &Schema) -> Vec<Artifact> {
        vec![Artifact {
            path: format!("include/{}/record_types.h", Names::new(schema).lower),
            contents: header(schema),
        }]
    }
}

/// The whole header text for one schema.
pub fn header(schema: &Schema) -> String {
    let mut g = Gen { s: schema, n: Names::new(schema), out: String::new() };
    g.run();
    g.out
}

/// The C typedef name of a schema type when the header defines a packed struct for it (fixed,
/// non-zero size), e.g. `usvlog_rec_nav_solution_t`. Tests use it to probe the generated layout.
pub fn struct_type_name(schema: &Schema, id: TypeId) -> Option<String> {
    let n = Names::new(schema);
    match schema.ty(id) {
        TypeDef::Struct(s) if has_c_struct(s) => Some(n.ty(id)),
        _ => None,
    }
}

/// The C stem of a struct's type and functions (`usvlog_rec_nav_solution`: `_t`, `_view_t`,
/// `_encode`, `_decode`), when the header gives it functions. Tests use it to call them.
pub fn function_stem(schema: &Schema, id: TypeId) -> Option<String> {
    let g = Gen { s: schema, n: Names::new(schema), out: String::new() };
    match schema.ty(id) {
        TypeDef::Struct(st) if g.supported(&Ty::Named(id)) => Some(g.struct_shape(id, st).stem),
        _ => None,
    }
}

/// The C stem of variant `i` of union `id` (`rlog_r1_value_double`), when it has functions.
pub fn variant_stem(schema: &Schema, id: TypeId, i: usize) -> Option<String> {
    let g = Gen { s: schema, n: Names::new(schema), out: String::new() };
    match schema.ty(id) {
        TypeDef::Union(u)
            if !u.variants.get(i)?.fields.is_empty() && u.variants[i].fields.iter().all(|f| g.supported(&f.ty)) =>
        {
            Some(g.variant_shape(id, u, i).stem)
        }
        _ => None,
    }
}

/// The member name of a union variant in the struct that holds the union (`double_`).
pub fn variant_member(name: &str) -> String {
    codec::ident(name)
}

/// Whether a struct becomes a C struct: it needs a fixed size, and ISO C has no empty structs.
fn has_c_struct(s: &Struct) -> bool {
    matches!(s.size, Some(n) if n > 0)
}

/// The C spelling of every schema name, computed once so that all sections agree.
struct Names {
    /// `usvlog`: the prefix of types.
    lower: String,
    /// `USVLOG`: the prefix of macros.
    upper: String,
    /// The snake-case stem of each type, unique within the schema.
    stems: Vec<String>,
}

impl Names {
    fn new(schema: &Schema) -> Self {
        // A schema built by the derive front end may lack a format name; the header still needs one.
        let lower = if schema.format.name.is_empty() { "logspec".to_string() } else { snake(&schema.format.name) };
        let mut used = BTreeSet::new();
        let stems = (0..schema.types.len())
            .map(|i| {
                let base = match schema.record_for(TypeId(i)) {
                    Some(r) => snake(&r.name),
                    None => snake(schema.types[i].name()),
                };
                // Two schema names can snake-case alike (`FooBar`, `Foo_Bar`); the index keeps
                // the C names apart deterministically.
                let stem = if used.contains(&base) { format!("{base}_{i}") } else { base };
                used.insert(stem.clone());
                stem
            })
            .collect();
        Names { upper: lower.to_ascii_uppercase(), lower, stems }
    }

    /// `usvlog_rec_nav_solution_t`.
    fn ty(&self, id: TypeId) -> String {
        format!("{}_{}_t", self.lower, self.stems[id.0])
    }

    /// `USVLOG_REC_NAV_SOLUTION`: the stem of a type's macros.
    fn mac(&self, id: TypeId) -> String {
        format!("{}_{}", self.upper, self.stems[id.0].to_ascii_uppercase())
    }
}

/// `EkfStatus` -> `ekf_status`, `GNSSFix` -> `gnss_fix`, `REC_NAV_SOLUTION` -> `rec_nav_solution`.
fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = if i > 0 { Some(chars[i - 1]) } else { None };
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next_lower,
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Comment text that can neither end a comment early, nor open a nested one (a `-Wcomment`
/// warning), nor form a trigraph, which `-std=c11` still translates.
fn clean(s: &str) -> String {
    let mut t = s.replace('\r', "");
    // Breaking one pattern can form another (`*/*` becomes `* /*`), so repeat until none is left.
    while t.contains("*/") || t.contains("/*") || t.contains("??") {
        t = t.replace("*/", "* /").replace("/*", "/ *").replace("??", "? ?");
    }
    t
}

/// Comment text on one line (for trailing comments).
fn one_line(s: &str) -> String {
    clean(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Word-wraps `text` into lines of at most `width` characters (longer words stay whole), keeping
/// blank-line paragraph breaks.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in clean(text).split("\n\n") {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// A C string literal for arbitrary bytes. `?` is escaped so that no trigraph can form, and
/// non-printable bytes use three-digit octal escapes, which (unlike `\x`) cannot swallow the
/// characters after them.
fn c_string(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'"' | b'\\' | b'?' => {
                s.push('\\');
                s.push(char::from(b));
            }
            0x20..=0x7e => s.push(char::from(b)),
            _ => {
                put!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

/// An integer literal of `base`'s type, portable to 16-bit `int` targets and free of the
/// "integer constant is so large that it is unsigned" trap for the most negative values.
fn int_lit(v: i128, base: Prim) -> String {
    let wide = base.size() == 8;
    if base.is_signed() {
        let suffix = if wide { "LL" } else { "" };
        match base.int_range() {
            Some((lo, hi)) if v == lo => format!("(-{hi}{suffix} - 1)"),
            _ if v < 0 => format!("({v}{suffix})"),
            _ => format!("{v}{suffix}"),
        }
    } else {
        format!("{v}{}", if wide { "ULL" } else { "u" })
    }
}

/// An unsigned size or count literal.
fn u_lit(v: u64) -> String {
    if v > u64::from(u32::MAX) {
        format!("{v}ULL")
    } else {
        format!("{v}u")
    }
}

/// The exact-width C type of a number (`float` and `double` are IEEE 754 binary32/64 on every
/// target this header is for).
fn prim_c(p: Prim) -> String {
    match p {
        Prim::F32 => "float".into(),
        Prim::F64 => "double".into(),
        _ => format!("{}int{}_t", if p.is_unsigned() { "u" } else { "" }, p.size() * 8),
    }
}

/// One `#define`: name, value and an optional trailing comment.
type Def = (String, String, Option<String>);

/// A run of `#define NAME VALUE /* comment */` lines with names and values in aligned columns, as
/// a person would lay out a table of constants.
fn defines(out: &mut String, rows: &[Def]) {
    let w1 = rows.iter().map(|d| d.0.len()).max().unwrap_or(0);
    let w2 = rows.iter().filter(|d| d.2.is_some()).map(|d| d.1.len()).max().unwrap_or(0);
    for (name, value, comment) in rows {
        match comment.as_deref().map(one_line).filter(|c| !c.is_empty()) {
            Some(c) => {
                putln!(out, "#define {name:<w1$} {value:<w2$} /* {c} */");
            }
            None => {
                putln!(out, "#define {name:<w1$} {value}");
            }
        }
    }
}

/// Writes one header, section by section, into `out`.
struct Gen<'a> {
    s: &'a Schema,
    n: Names,
    out: String,
}

impl Gen<'_> {
    fn run(&mut self) {
        let (lower, upper) = (self.n.lower.clone(), self.n.upper.clone());
        putln!(self.out, "// {}", one_line(&generated_banner(self.s)));
        self.preamble();
        put!(
            self.out,
            "#ifndef {upper}_RECORD_TYPES_H\n#define {upper}_RECORD_TYPES_H\n\n\
             #include <stddef.h> /* offsetof, size_t */\n#include <stdint.h>\n#include <string.h> /* memcpy, memset, memcmp */\n\n\
             #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n\
             /* Compile-time layout checks, in C11 and C++11 (and in C99 through a negative array size). */\n\
             #ifndef {upper}_STATIC_ASSERT\n\
             #if defined(__cplusplus) && (__cplusplus >= 201103L || (defined(_MSC_VER) && _MSC_VER >= 1600))\n\
             #define {upper}_STATIC_ASSERT(cond, msg) static_assert(cond, msg)\n\
             #elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n\
             #define {upper}_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)\n\
             #else\n\
             #define {upper}_STATIC_ASSERT_JOIN2(a, b) a##b\n\
             #define {upper}_STATIC_ASSERT_JOIN(a, b) {upper}_STATIC_ASSERT_JOIN2(a, b)\n\
             #define {upper}_STATIC_ASSERT(cond, msg) \\\n    \
             typedef char {upper}_STATIC_ASSERT_JOIN({lower}_static_assert_, __LINE__)[(cond) ? 1 : -1]\n\
             #endif\n#endif\n\n"
        );
        self.constants();
        self.record_ids();
        self.enums();
        self.codec_preamble();
        self.structs();
        self.framing_functions();
        put!(self.out, "#ifdef __cplusplus\n}} /* extern \"C\" */\n#endif\n\n#endif /* {upper}_RECORD_TYPES_H */\n");
    }

    /// The opening comment: what the format is, and the rules the structs rely on.
    fn preamble(&mut self) {
        let (f, l, u) = (&self.s.format, &self.n.lower, &self.n.upper);
        let title = f.title.clone().unwrap_or_else(|| format!("The {l} log format"));
        let version = f.version.as_ref().map(|v| format!(", version {v}")).unwrap_or_default();
        let (order, other) = match f.endian {
            Endian::Little => ("little", "big"),
            Endian::Big => ("big", "little"),
        };
        let mut paras = vec![format!("{title} ({l}{version}).")];
        paras.extend(f.doc.clone());
        paras.push(format!(
            "Byte order: every multi-byte value is {order}-endian on the wire unless its comment says otherwise. \
             The fixed-size structs below are packed (`#pragma pack(1)`) with their padding spelled out; their \
             members hold host values. Move them to and from the wire with the generated <type>_encode and \
             <type>_decode functions, which produce and check the exact wire bytes on a host of either byte order \
             (so a {other}-endian host needs no hand swapping). Variable-size types get a _t struct to encode \
             from (pointer and length members) and a _view_t struct that _decode fills with pointers into the \
             input buffer; nothing allocates. Members of a packed struct may be misaligned: copy them out \
             instead of taking their address."
        ));
        paras.push(format!(
            "Names: types are {l}_<name>_t and macros {u}_<NAME>..., except the contract macros (the schema id \
             and the REC_* record ids), which firmware spells without a prefix."
        ));
        paras.push(format!(
            "Layout fingerprints ({u}_*_FINGERPRINT) are 64-bit FNV-1a hashes of a record's canonical layout (see \
             docs/schema-language.md): they change exactly when the payload's bytes change meaning, which is a \
             breaking change."
        ));
        self.comment_open(&paras.join("\n\n"), false);
        self.out.push_str(" */\n");
    }

    /// Opens a block comment and writes `text` word-wrapped into it. Doc comments (`/**`) are
    /// for text that documents the declaration right after it, so that Doxygen attaches it.
    fn comment_open(&mut self, text: &str, doc: bool) {
        self.out.push_str(if doc { "/**\n" } else { "/*\n" });
        for line in wrap(text, 96) {
            putln!(self.out, " *{}{line}", if line.is_empty() { "" } else { " " });
        }
    }

    /// A whole block comment; on one line when the text fits.
    fn block(&mut self, text: &str, doc: bool) {
        match wrap(text, 96).as_slice() {
            [line] => {
                putln!(self.out, "{} {line} */", if doc { "/**" } else { "/*" });
            }
            _ => {
                self.comment_open(text, doc);
                self.out.push_str(" */\n");
            }
        }
    }

    fn constants(&mut self) {
        let s = self.s;
        let u = self.n.upper.clone();
        let mut defs: Vec<(String, String, Option<String>)> = Vec::new();
        if let Some(id) = &s.format.schema_id {
            let mut why = "Bump on every breaking layout change".to_string();
            if let (Some(h), Some(fi)) = (s.file_header, id.field) {
                put!(why, "; stored in {}.{}", self.n.ty(h), field_name(s.strukt(h), fi));
            }
            defs.push((id.macro_name.clone(), id.value.to_string(), Some(why + ".")));
        }
        if let Some(m) = s.magic() {
            defs.push((
                format!("{u}_MAGIC"),
                c_string(m),
                Some("The first bytes of every file (no NUL on the wire).".into()),
            ));
            defs.push((format!("{u}_MAGIC_LEN"), u_lit(m.len() as u64), None));
        }
        if let Some(t) = s.framing.as_ref().and_then(|f| f.trailer_bytes(s)) {
            defs.push((
                format!("{u}_TRAILER"),
                c_string(&t),
                Some("The last bytes of every file, after the last record (no NUL on the wire).".into()),
            ));
            defs.push((format!("{u}_TRAILER_LEN"), u_lit(t.len() as u64), None));
        }
        // Stable role names for the two framing structs, unless the struct's own size macro
        // already has that name or another type would claim it.
        let own: BTreeSet<String> = (0..s.types.len()).map(|i| format!("{}_SIZE", self.n.mac(TypeId(i)))).collect();
        let roles = [("FILE_HEADER", s.file_header), ("RECORD_HEADER", s.framing.as_ref().map(|f| f.header))];
        for (role, id) in roles {
            let Some(id) = id else { continue };
            let name = format!("{u}_{role}_SIZE");
            if let (Some(size), false) = (s.strukt(id).size, own.contains(&name)) {
                defs.push((name, u_lit(size.into()), Some(format!("sizeof({})", self.n.ty(id)))));
            }
        }
        defs.push((format!("{u}_RECORD_COUNT"), u_lit(s.records.len() as u64), Some("Number of record types.".into())));
        // Firmware sizes its staging buffers by the largest record, when every record is fixed.
        let sizes: Option<Vec<u32>> = s.records.iter().map(|r| s.strukt(r.body).size).collect();
        if let (Some(max), Some(fr)) = (sizes.and_then(|v| v.into_iter().max()), &s.framing) {
            defs.push((format!("{u}_MAX_PAYLOAD_SIZE"), u_lit(max.into()), Some("The largest record payload.".into())));
            if let Some(h) = s.strukt(fr.header).size {
                defs.push((
                    format!("{u}_MAX_RECORD_SIZE"),
                    u_lit(u64::from(h) + u64::from(max)),
                    Some("Record header plus the largest payload: a staging buffer for any record.".into()),
                ));
            }
        }
        self.out.push_str("/* Format constants. */\n");
        defines(&mut self.out, &defs);
        self.out.push('\n');
    }

    fn record_ids(&mut self) {
        let s = self.s;
        if s.records.is_empty() {
            return;
        }
        let mut text = "Record type ids".to_string();
        if let Some(fr) = &s.framing {
            let h = s.strukt(fr.header);
            put!(text, ": the value of {}.{}", self.n.ty(fr.header), field_name(h, fr.tag));
            match fr.length {
                Some(l) => {
                    put!(text, ". A reader skips a record with an unknown id by its {} field", field_name(h, l));
                }
                None => text.push_str(". Records carry no length, so an unknown id cannot be skipped"),
            }
        }
        text.push_str(". Never reuse or renumber an id without a new schema id.");
        self.block(&text, false);
        let ids: Vec<Def> = s
            .records
            .iter()
            .map(|r| {
                let body = s.strukt(r.body);
                let what = match body.size {
                    Some(n) if has_c_struct(body) => format!("{}, {n} bytes", self.n.ty(r.body)),
                    Some(_) => "no payload".to_string(),
                    None => "variable size".to_string(),
                };
                // The contract regex wants bare decimal digits after a REC_ name.
                if r.name.starts_with("REC_") {
                    (r.name.clone(), r.id.to_string(), Some(what))
                } else {
                    (format!("{}_ID", self.n.mac(r.body)), u_lit(r.id), Some(what))
                }
            })
            .collect();
        defines(&mut self.out, &ids);
        self.out.push('\n');
    }

    /// Enums and flags become a fixed-width typedef plus value macros: a C `enum` has an
    /// implementation-defined width, so it could not describe a wire field.
    fn enums(&mut self) {
        for (i, t) in self.s.types.iter().enumerate() {
            let id = TypeId(i);
            let (ty, mac) = (self.n.ty(id), self.n.mac(id));
            let def = |name: &str, value: String, doc: &Option<String>| {
                (format!("{mac}_{}", name.to_ascii_uppercase()), value, doc.clone())
            };
            let (base, kind, values): (Prim, &str, Vec<Def>) = match t {
                TypeDef::Enum(e) => (
                    e.base,
                    "Values",
                    e.values.iter().map(|v| def(&v.name, int_lit(v.value, e.base), &v.doc)).collect(),
                ),
                TypeDef::Flags(f) => {
                    let one = if f.base.size() == 8 { "1ULL" } else { "1u" };
                    let bits = f.flags.iter().map(|b| def(&b.name, format!("({one} << {})", b.bit), &b.doc)).collect();
                    (f.base, "Bits", bits)
                }
                _ => continue,
            };
            let mut text = format!("{} ({}).", t.name(), base.name());
            if let Some(d) = t.doc() {
                put!(text, " {d}");
            }
            put!(text, " {kind}: {mac}_*.");
            self.block(&text, true);
            putln!(self.out, "typedef {} {ty};", prim_c(base));
            defines(&mut self.out, &values);
            self.out.push('\n');
        }
    }

    /// Every struct, union and extern type, nested types before the structs that contain them.
    fn structs(&mut self) {
        let mut order = Vec::new();
        let mut seen = vec![false; self.s.types.len()];
        for i in 0..self.s.types.len() {
            visit(self.s, i, &mut seen, &mut order);
        }
        for id in order {
            let supported = self.supported(&Ty::Named(id));
            match self.s.ty(id) {
                TypeDef::Struct(st) if has_c_struct(st) => {
                    self.c_struct(id, st);
                    if supported {
                        let sh = self.struct_shape(id, st);
                        self.functions(&sh);
                    } else {
                        self.no_functions(st);
                    }
                }
                TypeDef::Struct(st) => {
                    self.wire_comment(id, st);
                    if supported {
                        let sh = self.struct_shape(id, st);
                        self.var_structs(&sh, &format!("{}.", st.name));
                        self.functions(&sh);
                        self.message_writers(id, st);
                    } else if st.size != Some(0) {
                        self.no_functions(st);
                    }
                }
                TypeDef::Union(u) => {
                    self.union_comment(id, u);
                    self.union_variants(id, u);
                }
                TypeDef::Extern(x) => {
                    putln!(self.out, "/* {}: defined outside the schema; no C type. */\n", one_line(&x.path));
                }
                TypeDef::Enum(_) | TypeDef::Flags(_) => {}
            }
        }
    }

    /// Says why a struct gets no functions: the first field whose layout the bytes do not
    /// determine (a reader-parameter union, an extern type, a union selected by a type name),
    /// directly or through the types it holds, and what firmware can use instead.
    fn no_functions(&mut self, st: &Struct) {
        let reason = st
            .fields
            .iter()
            .find_map(|f| self.why_unsupported(&f.ty).map(|why| format!("its field `{}` {why}", f.name)))
            .unwrap_or_else(|| "one of its fields has no C layout".to_string());
        self.block(&format!("{}: no encode/decode functions, because {reason}.", st.name), false);
        self.out.push('\n');
    }

    /// Why a type has no C functions (completing "its field `x` ..."), or `None` when it has them.
    fn why_unsupported(&self, ty: &Ty) -> Option<String> {
        if self.supported(ty) {
            return None;
        }
        match ty {
            Ty::ParamUnion { id, param } => {
                let TypeDef::Union(u) = self.s.ty(*id) else { return None };
                let p = self.s.params.get(*param).map_or("?", |p| p.name.as_str());
                let variants: Vec<String> = (0..u.variants.len())
                    .filter(|&i| !u.variants[i].fields.is_empty())
                    .map(|i| format!("{}_encode/_decode", self.variant_shape(*id, u, i).stem))
                    .collect();
                let mut why = format!(
                    "is the union {} whose variant the reader parameter `{p}` selects: that value is not in these \
                     bytes (a reader learns it from the file header or by trying the layouts), so a decoder here \
                     could not tell the layout",
                    u.name
                );
                if !variants.is_empty() {
                    why.push_str(&format!(
                        "; with `{p}` known, write the fields by the wire layouts in this header and the union with {}",
                        variants.join(", ")
                    ));
                }
                Some(why)
            }
            Ty::Array { elem, len: Len::Size(p) } if self.s.size_of(elem).is_none() && self.supported(elem) => {
                Some(format!(
                    "is an array of variable-size elements whose {p} prefix counts bytes, not elements: \
                     C holds an array as a count and a pointer, which such an array does not give without \
                     decoding every element; read it element by element with the element's decoder over \
                     the prefix's span"
                ))
            }
            Ty::Array { elem, .. } => self.why_unsupported(elem).map(|w| format!("is an array whose element {w}")),
            Ty::Named(id) | Ty::Union { id, .. } => match self.s.ty(*id) {
                TypeDef::Extern(x) => Some(format!("has the type `{}`, defined outside the schema", one_line(&x.path))),
                TypeDef::Union(u) if u.by_name => {
                    Some(format!("is the union {}, selected by a type name the bytes do not hold", u.name))
                }
                TypeDef::Struct(st) => {
                    let inner = st.fields.iter().find_map(|f| self.why_unsupported(&f.ty).map(|w| (f, w)));
                    match inner {
                        Some((f, w)) => Some(format!("is the struct {}, whose field `{}` {w}", st.name, f.name)),
                        None => Some(format!("is the struct {}, which has no C functions", st.name)),
                    }
                }
                TypeDef::Union(u) => {
                    let inner = u
                        .variants
                        .iter()
                        .flat_map(|v| v.fields.iter().map(move |f| (v, f)))
                        .find_map(|(v, f)| self.why_unsupported(&f.ty).map(|w| (v, f, w)));
                    inner.map(|(v, f, w)| {
                        format!("is the union {}, whose variant {}'s field `{}` {w}", u.name, v.name, f.name)
                    })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// A union has no fixed size, hence no C type: its variants are described in a comment, and
    /// each variant's tag value gets a macro.
    fn union_comment(&mut self, id: TypeId, u: &Union) {
        let mut text = format!("{}: a tagged union; variable size, so no C type.", u.name);
        if let Some(d) = &u.doc {
            put!(text, " {d}");
        }
        text.push_str(if u.by_name {
            " A type name given with the value selects the variant:"
        } else {
            " The tag value selects the variant:"
        });
        self.comment_open(&text, false);
        for v in &u.variants {
            let doc = v.doc.as_deref().map(|d| format!(" {}", one_line(d))).unwrap_or_default();
            let sel = match &v.select {
                None => v.tag.to_string(),
                Some(logspec_ir::ir::NameMatch::Exact(names)) => names.join(" | "),
                Some(logspec_ir::ir::NameMatch::Prefix(p)) => format!("{p}*"),
                Some(logspec_ir::ir::NameMatch::Default) => "any other name".to_string(),
            };
            putln!(self.out, " *   {} = {sel}:{doc}", v.name);
            self.field_table(&v.fields, "  ", u.endian);
        }
        self.out.push_str(" */\n");
        if u.by_name {
            self.out.push('\n');
            return;
        }
        let mac = self.n.mac(id);
        // Tags print without a type suffix: their width is the tag field's, which may differ per use.
        let tags: Vec<Def> = u
            .variants
            .iter()
            .map(|v| (format!("{mac}_{}_TAG", v.name.to_ascii_uppercase()), int_lit(v.tag, Prim::I32), None))
            .collect();
        defines(&mut self.out, &tags);
        self.out.push('\n');
    }

    /// The heading of a struct's comment: record name and id, or the schema type name, and docs.
    fn title(&self, id: TypeId, st: &Struct) -> String {
        let rec = self.s.record_for(id);
        let mut text = match rec {
            Some(r) => format!("{} (id {}).", r.name, r.id),
            None => format!("{}.", st.name),
        };
        if let Some(d) = rec.and_then(|r| r.doc.as_deref()).or(st.doc.as_deref()) {
            put!(text, " {d}");
        }
        text
    }

    /// The size macro (when the size is fixed) and, for a record, its fingerprint macro.
    fn size_defs(&self, id: TypeId, size: Option<u32>) -> Vec<Def> {
        let mac = self.n.mac(id);
        let mut defs = Vec::new();
        if let Some(n) = size {
            defs.push((format!("{mac}_SIZE"), u_lit(n.into()), None));
        }
        if let Some(r) = self.s.record_for(id) {
            defs.push((format!("{mac}_FINGERPRINT"), format!("0x{:016x}ULL", r.fingerprint), None));
        }
        defs
    }

    /// One macro per constant field (`USVLOG_FILE_HEADER_ENDIANNESS_VALUE 1u`): the value the
    /// encoder writes and the decoder checks.
    fn const_defs(&self, mac: &str, fields: &[Field]) -> Vec<Def> {
        fields
            .iter()
            .filter_map(|f| {
                let value = match (&f.value, &f.ty) {
                    (Some(ConstValue::Int(v)), Ty::Bool) => u_lit(*v as u64),
                    (Some(ConstValue::Int(v)), t) => int_lit(*v, wire::base_prim_of(self, t).unwrap_or(Prim::I64)),
                    (Some(ConstValue::Bytes(b)), _) => c_string(b),
                    (None, _) => return None,
                };
                let name = format!("{mac}_{}_VALUE", f.name.to_ascii_uppercase());
                Some((name, value, Some(format!("The constant `{}`.", f.name))))
            })
            .collect()
    }

    fn c_struct(&mut self, id: TypeId, st: &Struct) {
        let (ty, mac) = (self.n.ty(id), self.n.mac(id));
        let size = st.size.unwrap_or(0);
        let mut text = self.title(id, st);
        put!(text, "\n\n{size} bytes on the wire, {}-endian.", st.endian.as_str());
        if let Some(r) = self.s.record_for(id) {
            put!(text, " Layout fingerprint 0x{:016x}.", r.fingerprint);
        }
        self.comment_open(&text, true);
        self.out.push_str(" */\n");
        let members = self.members(Some(id), st);
        putln!(self.out, "#pragma pack(push, 1)\ntypedef struct {}_{} {{", self.n.lower, self.n.stems[id.0]);
        let width = members.iter().filter(|m| !m.1.is_empty()).map(|m| m.0.len()).max().unwrap_or(0);
        for (decl, comment) in &members {
            if comment.is_empty() {
                putln!(self.out, "    {decl}");
            } else {
                putln!(self.out, "    {decl:<width$} /**< {comment} */");
            }
        }
        putln!(self.out, "}} {ty};\n#pragma pack(pop)");
        let mut defs = self.size_defs(id, st.size);
        defs.extend(self.const_defs(&self.n.mac(id), &st.fields));
        defines(&mut self.out, &defs);
        let sa = format!("{}_STATIC_ASSERT", self.n.upper);
        putln!(self.out, "{sa}(sizeof({ty}) == {mac}_SIZE, \"{ty} must be {size} bytes\");");
        for f in &st.fields {
            if f.is_padding() || self.s.size_of(&f.ty) == Some(0) {
                continue;
            }
            if let Some(off) = f.offset {
                putln!(
                    self.out,
                    "{sa}(offsetof({ty}, {n}) == {off}u, \"{ty}.{n} must be at byte {off}\");",
                    n = f.name
                );
            }
        }
        self.out.push('\n');
    }

    /// The declaration and doc comment (empty for none) of each member of a fixed-size struct.
    /// Padding is named `_pad0`, `_pad1`, ..., made unique against the real field names.
    fn members(&self, id: Option<TypeId>, st: &Struct) -> Vec<(String, String)> {
        // The file header's fields point at the format constants that firmware writes into them.
        let is_file_header = id.is_some() && self.s.file_header == id;
        let schema_id = self.s.format.schema_id.as_ref().filter(|_| is_file_header);
        let mut pads = 0;
        let mut out = Vec::new();
        for (i, f) in st.fields.iter().enumerate() {
            let mut comment = self.field_comment(f, st.endian);
            if let Some(sid) = schema_id.filter(|sid| sid.field == Some(i)) {
                comment = format!("{comment} Holds {}.", sid.macro_name).trim_start().to_string();
            }
            if is_file_header && i == 0 && self.s.magic().is_some() {
                comment = format!("{comment} See {}_MAGIC.", self.n.upper).trim_start().to_string();
            }
            let name = if f.is_padding() {
                let mut name = format!("_pad{pads}");
                pads += 1;
                while st.fields.iter().any(|g| !g.is_padding() && g.name == name) {
                    name.push('_');
                }
                if comment.is_empty() {
                    comment = "Padding, zero on the wire.".into();
                }
                name
            } else {
                f.name.clone()
            };
            let decl = match self.c_decl(&f.ty).filter(|_| self.s.size_of(&f.ty) != Some(0)) {
                Some((base, dims)) => {
                    let dims: String = dims.iter().map(|d| format!("[{d}]")).collect();
                    format!("{base} {name}{dims};")
                }
                // ISO C has no zero-length arrays or empty structs; such a field occupies no bytes,
                // so it is only noted, in the one comment the line may have.
                None => {
                    let doc = std::mem::take(&mut comment);
                    format!("/* {name}: no bytes on the wire. {doc}").trim_end().to_string() + " */"
                }
            };
            out.push((decl, comment));
        }
        out
    }

    /// The member comment: the field's doc and unit, then what the C type cannot say.
    fn field_comment(&self, f: &Field, endian: Endian) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(d) = &f.doc {
            parts.push(one_line(d));
        }
        if let Some(u) = &f.unit {
            parts.push(format!("[{}]", one_line(u)));
        }
        let mut note = |s: String| parts.push(s);
        match &f.ty {
            Ty::Bool => note("bool: 0 or 1.".into()),
            Ty::Str(Len::Fixed(_)) => note("UTF-8, NUL-padded.".into()),
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Enum(_) => note(format!("One of {}_*.", self.n.mac(*id))),
                TypeDef::Flags(_) => note(format!("Bits {}_*.", self.n.mac(*id))),
                _ => {}
            },
            _ => {}
        }
        match &f.value {
            Some(ConstValue::Int(v)) => note(format!("Always {v}.")),
            Some(ConstValue::Bytes(b)) => note(format!("Always {}.", c_string(b))),
            None => {}
        }
        if self.multi_byte(&f.ty) && f.endian != endian {
            note(match f.endian {
                Endian::Little => "Little-endian on the wire.".into(),
                Endian::Big => "Big-endian on the wire.".into(),
            });
        }
        parts.join(" ")
    }

    /// Whether a field holds numbers wider than a byte, whose byte order therefore matters.
    fn multi_byte(&self, t: &Ty) -> bool {
        match t {
            Ty::Array { elem, .. } => self.multi_byte(elem),
            Ty::Named(id) if !matches!(self.s.ty(*id), TypeDef::Enum(_) | TypeDef::Flags(_)) => false,
            Ty::Prim(_) | Ty::Named(_) => self.s.size_of(t) > Some(1),
            _ => false,
        }
    }

    /// The C element type of a fixed-size type and the array dimensions after the member name.
    fn c_decl(&self, ty: &Ty) -> Option<(String, Vec<u32>)> {
        match ty {
            Ty::Prim(p) | Ty::VarInt { prim: p, .. } => Some((prim_c(*p), vec![])),
            Ty::Bool => Some(("uint8_t".into(), vec![])),
            Ty::Pad(n) | Ty::Bytes(Len::Fixed(n)) => Some(("uint8_t".into(), vec![*n])),
            Ty::Str(Len::Fixed(n)) => Some(("char".into(), vec![*n])),
            Ty::Array { elem, len: Len::Fixed(n) } => {
                let (base, mut dims) = self.c_decl(elem)?;
                dims.insert(0, *n);
                Some((base, dims))
            }
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Struct(st) if has_c_struct(st) => Some((self.n.ty(*id), vec![])),
                TypeDef::Enum(_) | TypeDef::Flags(_) => Some((self.n.ty(*id), vec![])),
                _ => None,
            },
            _ => None,
        }
    }

    /// A variable-size (or empty) struct: no C struct, but its wire layout in a comment, so that
    /// firmware can still encode it by hand.
    fn wire_comment(&mut self, id: TypeId, st: &Struct) {
        let mut text = self.title(id, st);
        match st.size {
            Some(_) => text.push_str("\n\nNo payload bytes, so no C struct."),
            None => {
                put!(text, "\n\nVariable size, so no C struct. Wire layout ({}-endian):", st.endian.as_str());
            }
        }
        self.comment_open(&text, false);
        if st.size != Some(0) || !st.fields.is_empty() {
            self.field_table(&st.fields, "", st.endian);
        }
        self.out.push_str(" */\n");
        let mut defs = self.size_defs(id, st.size);
        defs.extend(self.const_defs(&self.n.mac(id), &st.fields));
        defines(&mut self.out, &defs);
        self.out.push('\n');
    }

    /// Comment lines `offset  name  type  doc` for a field list (offset `-` once it varies).
    fn field_table(&mut self, fields: &[Field], indent: &str, endian: Endian) {
        let rows: Vec<(String, String, String, String)> = fields
            .iter()
            .map(|f| {
                let off = f.offset.map_or("-".to_string(), |o| o.to_string());
                let name = if f.is_padding() { "(padding)".to_string() } else { f.name.clone() };
                let mut doc = self.field_comment(f, endian);
                if let Ty::Union { tag_field, .. } = &f.ty {
                    let tag = fields.get(*tag_field).map_or("?", |t| t.name.as_str());
                    doc = format!("Variant selected by `{tag}`. {doc}");
                }
                if let Ty::ParamUnion { param, .. } = &f.ty {
                    let p = self.s.params.get(*param).map_or("?", |p| p.name.as_str());
                    doc = format!("Variant selected by the reader parameter `{p}`. {doc}");
                }
                if let Ty::VarInt { width, .. } = &f.ty {
                    let w = fields.get(width.field).map_or("?", |t| t.name.as_str());
                    let (lo, hi) = (width.lo, width.lo + width.bits);
                    doc = format!("Byte count: bits {lo}..{hi} of `{w}`, plus one. {doc}");
                }
                (off, name, self.describe(&f.ty, f.endian), doc)
            })
            .collect();
        let w1 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        let w2 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
        let w3 = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
        for (off, name, ty, doc) in rows {
            let line = format!("{indent}  {off:<w1$}  {name:<w2$}  {ty:<w3$}  {doc}");
            putln!(self.out, " * {}", line.trim_end());
        }
        if fields.is_empty() {
            putln!(self.out, " * {indent}  (no fields)");
        }
    }

    /// A type as the schema language writes it, with the length rule spelled out.
    fn describe(&self, ty: &Ty, e: Endian) -> String {
        let order = |p: Prim| match e {
            _ if p.size() == 1 => "",
            Endian::Little => "le",
            Endian::Big => "be",
        };
        let len = |l: &Len| match l {
            Len::Fixed(n) => format!("[{n}]"),
            Len::Count(p) => format!("[count {}{}]", p.name(), order(*p)),
            Len::Size(p) => format!("[byte size {}{}]", p.name(), order(*p)),
            Len::Rest => "[rest of payload]".to_string(),
        };
        match ty {
            Ty::Prim(p) => p.name().to_string(),
            Ty::Bool => "bool".into(),
            Ty::Pad(n) => format!("pad[{n}]"),
            Ty::Bytes(l) => format!("bytes{}", len(l)),
            Ty::Str(l) => format!("string{}", len(l)),
            Ty::Array { elem, len: l } => format!("{}{}", self.describe(elem, e), len(l)),
            Ty::Named(id) => match self.s.ty(*id) {
                TypeDef::Struct(st) if has_c_struct(st) => self.n.ty(*id),
                other => other.name().to_string(),
            },
            Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => format!("union {}", self.s.ty(*id).name()),
            Ty::VarInt { prim, width } => format!("{}{}[1..{} bytes]", prim.name(), order(*prim), width.max_bytes()),
        }
    }
}

/// A field's name by index; the IR guarantees the index, but a header is no place to panic.
fn field_name(st: &Struct, i: usize) -> &str {
    st.fields.get(i).map_or("?", |f| f.name.as_str())
}

/// Depth-first: a type's nested structs first, then the type. Marking before descending keeps a
/// (never valid, but possible in hand-built IR) cycle from recursing forever.
fn visit(s: &Schema, i: usize, seen: &mut [bool], out: &mut Vec<TypeId>) {
    if std::mem::replace(&mut seen[i], true) {
        return;
    }
    let fields: Vec<&Field> = match &s.types[i] {
        TypeDef::Struct(st) => st.fields.iter().collect(),
        TypeDef::Union(u) => u.variants.iter().flat_map(|v| v.fields.iter()).collect(),
        _ => Vec::new(),
    };
    for f in fields {
        let mut t = &f.ty;
        while let Ty::Array { elem, .. } = t {
            t = elem;
        }
        if let Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } = t {
            visit(s, id.0, seen, out);
        }
    }
    out.push(TypeId(i));
}
