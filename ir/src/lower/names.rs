//! Names: the identifier rule, the words that generated C and Rust cannot use, and the checks
//! that report a bad field or type name with a suggestion.

use super::Cx;
use crate::diag::Code;
use crate::schema::{Sp, Span};

impl Cx {
    pub(super) fn field_name(&mut self, n: &Sp<String>) {
        if !is_ident(&n.value) {
            bad_ident(self, &n.span, &format!("field name `{}` is not a valid identifier", n.value), &n.value);
        } else if C_KEYWORDS.contains(&n.value.as_str()) || RUST_RESERVED.contains(&n.value.as_str()) {
            let d =
                self.err(Code::BadName, &n.span, format!("field name `{}` is a reserved word in C or Rust", n.value));
            d.label = Some("reserved word".into());
            d.help = Some(format!("generated code could not use it; rename it, e.g. `{}_`", n.value));
        }
    }
}

/// Reports a name that is not an identifier, suggesting one made of its letters and digits.
pub(super) fn bad_ident(cx: &mut Cx, span: &Span, message: &str, name: &str) {
    let fixed: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let fixed = if fixed.starts_with(|c: char| c.is_ascii_digit()) { format!("_{fixed}") } else { fixed };
    let d = cx.err(Code::BadName, span, message);
    d.label = Some("not an identifier".into());
    d.help = Some(if is_ident(&fixed) && fixed != name {
        format!("names start with a letter or `_` and contain only ASCII letters, digits and `_`, e.g. `{fixed}`")
    } else {
        "names start with a letter or `_` and contain only ASCII letters, digits and `_`".into()
    });
}

/// `_pad0`, `_pad1`, ...: the names generated code gives padding entries.
pub(super) fn is_pad_name(name: &str) -> bool {
    name.strip_prefix("_pad").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// How a header's name (optional) is located: the name if written, else the table.
pub(super) fn name_span(name: &Sp<String>, table: &Span) -> Span {
    if name.is_placeholder() {
        table.clone()
    } else {
        name.span.clone()
    }
}

pub(super) fn name_or(n: &Sp<String>, default: &str) -> String {
    if n.value.is_empty() {
        default.to_string()
    } else {
        n.value.clone()
    }
}

/// `REC_NAV_SOLUTION` -> `RecNavSolution`; `FrameStart` stays as it is.
pub fn camel_case(name: &str) -> String {
    let mut out = String::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            let rest: String = chars.collect();
            if part.chars().all(|c| !c.is_ascii_lowercase()) {
                out.push_str(&rest.to_ascii_lowercase());
            } else {
                out.push_str(&rest);
            }
        }
    }
    out
}

pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "_"
}

pub(super) const BUILTIN_TYPES: &[&str] = &["bool", "string", "bytes"];

/// Words that cannot name a field in generated C (C11 and C++11 keywords).
const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "class",
    "namespace",
    "template",
    "this",
    "new",
    "delete",
    "private",
    "public",
    "protected",
    "virtual",
    "operator",
    "friend",
    "bool",
    "true",
    "false",
    "catch",
    "throw",
    "try",
    "using",
    "typename",
    "explicit",
    "mutable",
    "nullptr",
];

/// Words that not even a raw identifier can use in Rust.
const RUST_RESERVED: &[&str] = &["self", "Self", "super", "crate"];
