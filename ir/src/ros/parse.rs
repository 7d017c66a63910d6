//! The `.msg` line grammar (genmsg's `msg_loader`): comments, constants, fields, and the `MSG:`
//! sections of a `message_definition` blob. Names are left as written; [`super::MsgSet::resolve`]
//! resolves them.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::{Arity, Base, Builtin, Dialect, MsgConst, MsgField, MsgSpec};
use crate::diag::{Code, Diagnostic};

/// Splits a blob into its sections (the main type, then one per `MSG: pkg/Type` after a line of
/// `=`) and parses each. Returns the specs that parsed and every diagnostic.
pub fn parse_definition(
    type_name: &str,
    text: &str,
    source: usize,
    dialect: Dialect,
) -> (Vec<MsgSpec>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut specs: Vec<MsgSpec> = Vec::new();
    let mut current = MsgSpec { name: type_name.to_string(), fields: Vec::new(), constants: Vec::new(), source };
    let mut expect_msg_line: Option<Range<usize>> = None;
    // The field and constant names of the current section, so that a duplicate is found in
    // constant time (a definition may hold many thousands of fields).
    let mut names: HashSet<String> = HashSet::new();
    // Where each section's `MSG:` line is, by section index.
    let mut msg_lines: Vec<usize> = vec![0];
    let mut offset = 0usize;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim();
        if !trimmed.is_empty() && trimmed.bytes().all(|b| b == b'=') {
            // A separator: the section so far is done, a `MSG:` line must follow.
            specs.push(std::mem::replace(
                &mut current,
                MsgSpec { name: String::new(), fields: Vec::new(), constants: Vec::new(), source },
            ));
            expect_msg_line = Some(start..start + line.len());
            names.clear();
            continue;
        }
        if let Some(sep) = expect_msg_line.take() {
            if trimmed.is_empty() {
                expect_msg_line = Some(sep);
                continue;
            }
            let name = trimmed.strip_prefix("MSG:").map(str::trim).map(|n| match dialect {
                Dialect::Ros1 => n.to_string(),
                Dialect::Ros2 => super::ros2_name(n),
            });
            match name {
                Some(name) if is_type_name(&name) && name.contains('/') => {
                    current.name = name;
                    msg_lines.push(start);
                    continue;
                }
                _ => {
                    diags.push(
                        Diagnostic::new(Code::MsgSection, start..start + line.len(), "expected `MSG: pkg/Type`")
                            .label("a section separator must be followed by the section's type")
                            .help(
                                "each dependency of a message_definition starts with a line of `=` and `MSG: pkg/Type`",
                            ),
                    );
                    current.name = format!("<section at byte {start}>");
                    msg_lines.push(start);
                    continue;
                }
            }
        }
        if let Err(d) = parse_line(line, start, &mut current, &mut names, dialect) {
            diags.push(d);
        }
    }
    if expect_msg_line.is_some() {
        let end = text.len();
        diags.push(Diagnostic::new(Code::MsgSection, end..end, "the definition ends after a section separator"));
    } else {
        specs.push(current);
    }
    // ROS 2 writers (rosbag2 before Iron, the Go `mcap` library) repeat a dependency once per
    // type that uses it: the first section of a name stands.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, s) in specs.iter().enumerate().filter(|_| dialect == Dialect::Ros1) {
        if seen.insert(&s.name, i).is_some() {
            let at = msg_lines.get(i).copied().unwrap_or(0);
            let len = text[at..].find('\n').unwrap_or(text.len() - at);
            diags.push(Diagnostic::new(
                Code::MsgSection,
                at..at + len,
                format!("`{}` is defined twice in this definition", s.name),
            ));
        }
    }
    (specs, diags)
}

/// Whether `s` is `Name` or `pkg/Name` (letters, digits and `_`, starting with a letter).
fn is_type_name(s: &str) -> bool {
    let mut parts = s.split('/');
    let ok = |p: &str| p.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && p.chars().all(is_word);
    let first = parts.next().is_some_and(ok);
    let second = parts.next().is_none_or(ok);
    first && second && parts.next().is_none()
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_field_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && s.chars().all(is_word)
}

/// The whitespace-separated tokens of `s`, with their byte ranges (offset by `at`).
fn tokens(s: &str, at: usize) -> Vec<(&str, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        match (c.is_whitespace(), start) {
            (true, Some(b)) => {
                out.push((&s[b..i], at + b..at + i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

/// Parses one line into a field or constant of `spec`.
/// `names` holds the field and constant names of `spec` so far.
fn parse_line(
    line: &str,
    at: usize,
    spec: &mut MsgSpec,
    names: &mut HashSet<String>,
    dialect: Dialect,
) -> Result<(), Diagnostic> {
    let clean = match dialect {
        Dialect::Ros1 => line.split('#').next().unwrap_or(""),
        Dialect::Ros2 => &line[..comment_start(line)],
    };
    let toks = tokens(clean, at);
    if toks.is_empty() {
        return Ok(());
    }
    if dialect == Dialect::Ros2 && toks[0].0.starts_with("---") {
        return Err(Diagnostic::new(
            Code::MsgSection,
            toks[0].1.clone(),
            "a service or action definition (`---`) is not a message",
        )
        .help("the message types a service is recorded as (`Name_Event`, `Name_Request`) are not supported"));
    }
    // A constant has `=` after its type (ROS 2 types may hold `<=` themselves).
    let after_type = &clean[toks[0].1.end - at..];
    let constant = match dialect {
        Dialect::Ros1 => clean.contains('='),
        Dialect::Ros2 => after_type.contains('='),
    };
    if constant {
        let c = parse_constant(line, clean, at, &toks, dialect)?;
        if !names.insert(c.name.clone()) {
            return Err(Diagnostic::new(
                Code::DuplicateField,
                at..at + line.len(),
                format!("`{}` is defined twice", c.name),
            ));
        }
        spec.constants.push(c);
        return Ok(());
    }
    // ROS 2: a default value follows the name; it does not change the wire.
    let toks = if dialect == Dialect::Ros2 && toks.len() > 2 { &toks[..2] } else { &toks[..] };
    if toks.len() != 2 {
        let whole = toks[0].1.start..toks[toks.len() - 1].1.end;
        return Err(Diagnostic::new(
            Code::MsgSyntax,
            whole,
            "expected a field `TYPE NAME` or a constant `TYPE NAME=VALUE`",
        )
        .label(format!("{} word(s)", toks.len())));
    }
    let ((ty, ty_span), (name, name_span)) = (toks[0].clone(), toks[1].clone());
    if !is_field_name(name) {
        return Err(Diagnostic::new(Code::BadName, name_span, format!("`{name}` is not a valid field name"))
            .help("field names start with a letter and hold letters, digits and `_`"));
    }
    if names.contains(name) {
        return Err(Diagnostic::new(Code::DuplicateField, name_span, format!("field `{name}` is defined twice")));
    }
    let (base_text, arity) = split_array(ty, dialect).ok_or_else(|| {
        let help = match dialect {
            Dialect::Ros1 => "a field type is `T`, `T[]` or `T[N]`, with one dimension",
            Dialect::Ros2 => "a field type is `T`, `T[]`, `T[N]` or `T[<=N]`, with one dimension",
        };
        Diagnostic::new(Code::BadTypeSyntax, ty_span.clone(), format!("`{ty}` is not a valid field type")).help(help)
    })?;
    let (base_text, base) = match dialect {
        Dialect::Ros1 => (base_text.to_string(), Builtin::from_name(base_text)),
        Dialect::Ros2 => ros2_base(base_text, &ty_span)?,
    };
    let base_text = base_text.as_str();
    let base = match base {
        Some(b) => Base::Builtin(b),
        None if is_type_name(base_text) => Base::Msg(base_text.to_string()),
        None => {
            return Err(Diagnostic::new(
                Code::BadTypeSyntax,
                ty_span,
                format!("`{base_text}` is not a valid type name"),
            ))
        }
    };
    names.insert(name.to_string());
    spec.fields.push(MsgField { name: name.to_string(), base, arity, written: ty.to_string(), span: ty_span });
    Ok(())
}

/// A ROS 2 base type: its name as this front end keys it (`pkg/msg/Type` as `pkg/Type`, a
/// bounded `string<=N` as `string`) and its builtin, if it is one (`time` and `duration` are
/// not: ROS 2 has messages for them); `wstring` is refused.
fn ros2_base(text: &str, span: &Range<usize>) -> Result<(String, Option<Builtin>), Diagnostic> {
    let (name, bound) = match text.split_once("<=") {
        Some((n, b)) => (n, Some(b)),
        None => (text, None),
    };
    if name == "wstring" {
        return Err(Diagnostic::new(Code::BadTypeSyntax, span.clone(), format!("`{text}` is not supported"))
            .label("wide strings")
            .help("a wstring's wire form depends on the ROS 2 middleware (Fast DDS writes 4-byte characters); this type cannot be decoded"));
    }
    let builtin = Builtin::from_name(name).filter(|b| !matches!(b, Builtin::Time | Builtin::Duration));
    if let Some(b) = bound {
        let ok = builtin == Some(Builtin::String) && !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit());
        if !ok {
            return Err(Diagnostic::new(Code::BadTypeSyntax, span.clone(), format!("`{text}` is not a valid type"))
                .help("only strings take a bound: `string<=N`"));
        }
    }
    Ok((super::ros2_name(name), builtin))
}

/// Where a ROS 2 line's comment starts (its length when it has none): the first `#` outside a
/// quoted string (`'…'` or `"…"`, with `\` escapes), as `rosidl_adapter` strips comments.
fn comment_start(line: &str) -> usize {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '#' => return i,
            None if c == '"' || c == '\'' => quote = Some(c),
            None => {}
        }
    }
    line.len()
}

/// `T` / `T[]` / `T[N]` (ROS 2 also `T[<=N]`, a sequence) into the base and the arity.
fn split_array(ty: &str, dialect: Dialect) -> Option<(&str, Arity)> {
    let Some(open) = ty.find('[') else { return Some((ty, Arity::Scalar)) };
    let inner = ty[open + 1..].strip_suffix(']')?;
    let bounded = inner.strip_prefix("<=").filter(|b| dialect == Dialect::Ros2 && !b.is_empty());
    let arity = if let Some(b) = bounded {
        // The bound is not on the wire (and no reader checks it): a sequence.
        b.bytes().all(|c| c.is_ascii_digit()).then_some(())?;
        Arity::Var
    } else if inner.is_empty() {
        Arity::Var
    } else if inner.bytes().all(|b| b.is_ascii_digit()) {
        Arity::Fixed(inner.parse().ok()?)
    } else {
        return None;
    };
    Some((&ty[..open], arity))
}

/// A constant line (genmsg `_load_constant_line`): a string constant takes everything after the
/// first `=` of the original line; other types split the comment-stripped line on `=`.
fn parse_constant(
    line: &str,
    clean: &str,
    at: usize,
    toks: &[(&str, Range<usize>)],
    dialect: Dialect,
) -> Result<MsgConst, Diagnostic> {
    let (ty_text, ty_span) = toks[0].clone();
    let ty_text = if dialect == Dialect::Ros2 { ty_text.split_once("<=").map_or(ty_text, |(t, _)| t) } else { ty_text };
    let ty = Builtin::from_name(ty_text).filter(|b| b.is_constant_type()).ok_or_else(|| {
        Diagnostic::new(Code::BadConst, ty_span.clone(), format!("a constant cannot have type `{ty_text}`"))
            .help("constants are of a primitive type: integers, floats, bool, char, byte or string")
    })?;
    let after_type = ty_span.end - at;
    let (name, value) = if ty == Builtin::String {
        let eq = line[after_type..].find('=').map(|i| after_type + i).expect("a constant line has `=` after its type");
        (line[after_type..eq].trim(), line[eq + 1..].trim())
    } else {
        let rest = &clean[after_type..];
        let mut parts = rest.split('=');
        let (n, v) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if parts.next().is_some() {
            return Err(Diagnostic::new(Code::MsgSyntax, at..at + clean.trim_end().len(), "a constant has one `="));
        }
        (n.trim(), v.trim())
    };
    let whole = at..at + line.trim_end().len();
    if !is_field_name(name) {
        return Err(Diagnostic::new(Code::BadName, whole, format!("`{name}` is not a valid constant name")));
    }
    check_constant_value(ty, value, dialect).map_err(|m| Diagnostic::new(Code::BadConst, whole, m))?;
    Ok(MsgConst { ty, name: name.to_string(), value: value.to_string() })
}

/// Whether a constant's value text is a value of its type.
fn check_constant_value(ty: Builtin, v: &str, dialect: Dialect) -> Result<(), String> {
    let range = match ty {
        // ROS 2's `byte` is an unsigned octet.
        Builtin::Byte if dialect == Dialect::Ros2 => Some((0, 255)),
        Builtin::Int8 | Builtin::Byte => Some((-128i128, 127i128)),
        Builtin::Uint8 | Builtin::Char => Some((0, 255)),
        Builtin::Int16 => Some((i16::MIN.into(), i16::MAX.into())),
        Builtin::Uint16 => Some((0, u16::MAX.into())),
        Builtin::Int32 => Some((i32::MIN.into(), i32::MAX.into())),
        Builtin::Uint32 => Some((0, u32::MAX.into())),
        Builtin::Int64 => Some((i64::MIN.into(), i64::MAX.into())),
        Builtin::Uint64 => Some((0, u64::MAX.into())),
        _ => None,
    };
    if let Some((lo, hi)) = range {
        let n: i128 = v.parse().map_err(|_| format!("`{v}` is not an integer"))?;
        if n < lo || n > hi {
            return Err(format!("{n} is out of range for `{}` ({lo}..={hi})", ty.name()));
        }
        return Ok(());
    }
    match ty {
        Builtin::Float32 | Builtin::Float64 => {
            v.parse::<f64>().map(|_| ()).map_err(|_| format!("`{v}` is not a number"))
        }
        Builtin::Bool => parse_bool(v).map(|_| ()).ok_or_else(|| format!("`{v}` is not a bool (true, false, 1, 0)")),
        _ => Ok(()),
    }
}

/// A bool constant's value (`True`/`true`/`1`, `False`/`false`/`0`).
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}
