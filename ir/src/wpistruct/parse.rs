//! The grammar of one WPILib struct schema (`wpiutil/doc/struct.adoc`): declarations separated
//! by `;`, each `[enum {name=value, ...}] type name [\[N\] | :bits]`, with any whitespace between
//! tokens. Names of nested structs stay unresolved here ([`super::StructSet::resolve`]).

use std::ops::Range;

use super::{Member, MemberType, Scalar};
use crate::diag::{Code, Diagnostic};

/// The result of parsing one schema: its members, the errors, and the places where a comma was
/// read as a declaration separator (see [`super`] on the leniency).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub members: Vec<Member>,
    pub errors: Vec<Diagnostic>,
    pub commas: Vec<Diagnostic>,
}

/// Parses the text of a struct schema. Never panics; every problem is a diagnostic with a span
/// into `text`.
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => {
                declaration(text, start..i, &mut out);
                start = i + 1;
            }
            b',' if depth == 0 => {
                out.commas.push(
                    Diagnostic::new(Code::StructComma, i..i + 1, "a comma between declarations")
                        .label("struct.adoc separates declarations with `;`")
                        .help("write `;` here (logspec reads this comma as `;` in logs, with a warning)"),
                );
                declaration(text, start..i, &mut out);
                start = i + 1;
            }
            _ => {}
        }
    }
    declaration(text, start..text.len(), &mut out);
    let mut seen: Vec<&str> = Vec::new();
    for m in &out.members {
        if seen.contains(&m.name.as_str()) {
            out.errors.push(
                Diagnostic::new(
                    Code::DuplicateField,
                    m.name_span.clone(),
                    format!("member `{}` is declared twice", m.name),
                )
                .label("a second member of this name"),
            );
        }
        seen.push(&m.name);
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Int(i128),
    Punct(u8),
    /// A character that has no place in a schema.
    Bad(char),
}

fn tokens(text: &str, range: Range<usize>) -> Vec<(Tok<'_>, Range<usize>)> {
    let s = &text[range.clone()];
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        let at = range.start + i;
        if c.is_whitespace() {
            it.next();
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut end = i;
            while let Some(&(j, d)) = it.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    it.next();
                } else {
                    break;
                }
            }
            out.push((Tok::Word(&s[i..end]), at..range.start + end));
        } else if c.is_ascii_digit() || c == '-' {
            let mut end = i + 1;
            it.next();
            while let Some(&(j, d)) = it.peek() {
                if d.is_ascii_alphanumeric() {
                    end = j + 1;
                    it.next();
                } else {
                    break;
                }
            }
            let t = &s[i..end];
            let v = if let Some(h) = t.strip_prefix("0x") {
                i128::from_str_radix(h, 16).ok()
            } else {
                t.parse::<i128>().ok()
            };
            out.push((v.map_or(Tok::Bad(c), Tok::Int), at..range.start + end));
        } else if matches!(c, '{' | '}' | '=' | ',' | '[' | ']' | ':') {
            it.next();
            out.push((Tok::Punct(c as u8), at..at + 1));
        } else {
            it.next();
            out.push((Tok::Bad(c), at..at + c.len_utf8()));
        }
    }
    out
}

fn syntax(span: Range<usize>, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::StructSyntax, span, msg)
        .help("a declaration is `[enum {a=1, b=2}] TYPE NAME`, optionally followed by `[N]` (an array) or `:BITS` (a bit-field)")
}

/// Parses one declaration (between separators); an empty one is allowed (a trailing `;`).
fn declaration(text: &str, range: Range<usize>, out: &mut Parsed) {
    let toks = tokens(text, range.clone());
    if toks.is_empty() {
        return;
    }
    let whole = toks[0].1.start..toks[toks.len() - 1].1.end;
    if let Some((Tok::Bad(c), sp)) = toks.iter().find(|(t, _)| matches!(t, Tok::Bad(_))) {
        out.errors.push(syntax(sp.clone(), format!("unexpected character `{c}` in a declaration")));
        return;
    }
    let mut i = 0;
    // The enum specification: `enum {..}` or `{..}`.
    let mut enumeration = None;
    if matches!(toks[0].0, Tok::Word("enum")) || toks[0].0 == Tok::Punct(b'{') {
        let open = if toks[0].0 == Tok::Word("enum") { 1 } else { 0 };
        if toks.get(open).map(|t| &t.0) != Some(&Tok::Punct(b'{')) {
            out.errors.push(syntax(toks[0].1.clone(), "`enum` must be followed by `{`"));
            return;
        }
        let Some(close) = toks.iter().position(|t| t.0 == Tok::Punct(b'}')) else {
            out.errors.push(syntax(toks[0].1.start..whole.end, "this enum has no closing `}`"));
            return;
        };
        let mut values: Vec<(String, i128, Range<usize>)> = Vec::new();
        for item in toks[open + 1..close].split(|t| t.0 == Tok::Punct(b',')) {
            match item {
                [] => {}
                [(Tok::Word(n), sp), (Tok::Punct(b'='), _), (Tok::Int(v), vs)] => {
                    if values.iter().any(|x| x.0 == *n) {
                        out.errors.push(
                            Diagnostic::new(
                                Code::DuplicateValue,
                                sp.clone(),
                                format!("enum value `{n}` is named twice"),
                            )
                            .label("a second value of this name"),
                        );
                    }
                    values.push((n.to_string(), *v, sp.start..vs.end));
                }
                other => {
                    let sp = other[0].1.start..other[other.len() - 1].1.end;
                    out.errors.push(syntax(sp, "an enum value must be `NAME=INTEGER`"));
                    return;
                }
            }
        }
        enumeration = Some(values);
        i = close + 1;
    }
    let (ty, type_span) = match toks.get(i) {
        Some((Tok::Word(w), sp)) => (*w, sp.clone()),
        Some((_, sp)) => {
            out.errors.push(syntax(sp.clone(), "expected a type name"));
            return;
        }
        None => {
            out.errors.push(syntax(whole, "a declaration needs a type and a name after its enum"));
            return;
        }
    };
    let (name, name_span) = match toks.get(i + 1) {
        Some((Tok::Word(w), sp)) => (*w, sp.clone()),
        Some((_, sp)) => {
            out.errors.push(syntax(sp.clone(), "expected a member name after the type"));
            return;
        }
        None => {
            out.errors.push(syntax(type_span, format!("`{ty}` has no member name")).label("a type without a name"));
            return;
        }
    };
    let mut array = None;
    let mut bits = None;
    let rest = &toks[i + 2..];
    match rest {
        [] => {}
        [(Tok::Punct(b'['), _), (Tok::Int(n), ns), (Tok::Punct(b']'), _)] => match u32::try_from(*n) {
            Ok(n) if n > 0 => array = Some(n),
            _ => {
                out.errors.push(
                    Diagnostic::new(Code::ValueOutOfRange, ns.clone(), format!("array size {n} is out of range"))
                        .label("must be 1 or more"),
                );
                return;
            }
        },
        [(Tok::Punct(b':'), _), (Tok::Int(n), ns)] => bits = Some((*n, ns.clone())),
        [(_, sp), ..] => {
            let sp = sp.start..rest[rest.len() - 1].1.end;
            out.errors
                .push(syntax(sp, format!("unexpected text after member `{name}`")).label("not `[N]` nor `:BITS`"));
            return;
        }
    }
    let ty = match Scalar::from_name(ty) {
        Some(s) => MemberType::Scalar(s),
        None => MemberType::Struct(ty.to_string()),
    };
    let is_int = matches!(&ty, MemberType::Scalar(s) if s.prim().is_some_and(|p| !p.is_float()) && *s != Scalar::Char);
    if let Some(values) = &enumeration {
        if !is_int {
            out.errors.push(
                Diagnostic::new(Code::StructEnum, type_span.clone(), "an enum needs an integer type")
                    .label("not an `int*` or `uint*` type"),
            );
            return;
        }
        if let MemberType::Scalar(s) = &ty {
            let (lo, hi) = s.prim().and_then(|p| p.int_range()).unwrap_or((0, 0));
            for (n, v, sp) in values {
                if *v < lo || *v > hi {
                    out.errors.push(
                        Diagnostic::new(
                            Code::ValueOutOfRange,
                            sp.clone(),
                            format!("enum value `{n}` = {v} does not fit"),
                        )
                        .label(format!("`{}` holds {lo}..={hi}", s.name())),
                    );
                }
            }
        }
    }
    let bit_width = match bits {
        None => None,
        Some((n, ns)) => {
            let max = match &ty {
                MemberType::Scalar(Scalar::Bool) => Some(1),
                MemberType::Scalar(s) if is_int => s.prim().map(|p| i128::from(p.size() * 8)),
                _ => None,
            };
            match max {
                None => {
                    out.errors.push(
                        Diagnostic::new(
                            Code::StructBitField,
                            type_span.clone(),
                            "only integers and `bool` can be bit-fields",
                        )
                        .label("not an integer or `bool`"),
                    );
                    return;
                }
                Some(max) if n < 1 || n > max => {
                    out.errors.push(
                        Diagnostic::new(Code::StructBitField, ns, format!("bit-field width {n} is out of range"))
                            .label(format!("`{}` takes 1..={max} bits", ty.name())),
                    );
                    return;
                }
                Some(_) => Some(n as u32),
            }
        }
    };
    out.members.push(Member {
        name: name.to_string(),
        ty,
        array,
        bits: bit_width,
        enumeration: enumeration.map(|v| v.into_iter().map(|(n, v, _)| (n, v)).collect()),
        type_span,
        name_span,
    });
}
