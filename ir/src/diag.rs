//! Schema diagnostics: values with a stable code and a byte span, rendered at the edge as
//! `file:line:col` with the offending line and a caret.

use std::fmt;
use std::ops::Range;

/// Every kind of schema error, with a stable code. Codes never change meaning once released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// The file is not valid TOML (or cannot be read).
    TomlSyntax,
    /// A key that the schema language does not know, or one that does not apply where it is
    /// written (e.g. `name` in a padding entry).
    UnknownKey,
    /// A required key is absent (including `count`/`size` of a variable-length sequence).
    MissingKey,
    /// A key holds the wrong kind of TOML value.
    WrongValueType,
    /// A ROS `.msg` line that is neither `TYPE NAME` (a field) nor `TYPE NAME=VALUE` (a constant).
    MsgSyntax,
    /// A ROS `message_definition` section separator (a line of `=`) not followed by `MSG: pkg/Type`,
    /// or a section whose type is defined twice.
    MsgSection,
    /// A WPILib struct schema declaration that does not parse.
    StructSyntax,
    /// A WPILib struct schema bit-field on a type that cannot be one, or of a width the type cannot hold.
    StructBitField,
    /// A WPILib struct schema enum on a type that is not an integer.
    StructEnum,
    /// A comma where a WPILib struct schema wants `;` between declarations (an error when
    /// compiling; read as `;` with a warning in logs).
    StructComma,
    /// A type name that is neither built in nor declared.
    UnknownType,
    /// A type expression that does not parse, or a form that is not supported (`string[]`,
    /// arrays of unions).
    BadTypeSyntax,
    /// An endianness other than `little` or `big`, or an `endian` that cannot apply where it is
    /// given (on a field of struct or union type).
    BadEndian,
    /// A name that is not a valid identifier in every target language, or is reserved.
    BadName,
    /// Two types, records or variants share a name.
    DuplicateName,
    /// Two fields of one struct share a name.
    DuplicateField,
    /// Two records share an id.
    DuplicateRecordId,
    /// Two enum values or flags share a name, value or bit, or two union variants share a tag.
    DuplicateValue,
    /// A number that does not fit where it goes: an enum, const, record id or schema id value
    /// outside its integer type, or a padding width below 1.
    ValueOutOfRange,
    /// A flag bit beyond the width of its base type.
    FlagOutOfRange,
    /// A base or prefix type that must be an integer is not.
    NotAnInteger,
    /// A payload can be larger than the framing's length field can express.
    PayloadTooLarge,
    /// A union field whose tag field is missing, after it, or not an integer or enum; or a `tag`
    /// on a field that is not a union.
    BadUnionTag,
    /// A union variant whose tag the tag field's type cannot hold, or a tag enum value without a variant.
    UnmatchedUnionTag,
    /// A field's `param` that names no declared parameter, is on a field that is not a union (or
    /// a union selected by type name), or comes together with `tag`.
    BadParamUse,
    /// A `[[param]]` whose name is taken or whose type is not an integer or enum.
    BadParam,
    /// A framing role that names a missing or unsuitable header field.
    BadFraming,
    /// A struct that contains itself.
    RecursiveType,
    /// Types nested deeper than the compiler walks (ROS `.msg` definitions: 100 levels).
    TooDeep,
    /// A const value whose kind does not match the field's type, or a string const whose length
    /// differs from its fixed field's.
    BadConst,
    /// A schema id that is inconsistent with the header.
    BadSchemaId,
    /// A framing `sync` or `checksum` that cannot apply: a sync field that is not the record
    /// header's first field or has no const; a checksum field that is not an unsigned integer of
    /// the CRC's width; an unknown algorithm or span.
    BadIntegrity,
    /// A struct that must have a fixed size (file or record header) does not.
    NotFixedSize,
    /// A length rule that cannot apply here: `rest` anywhere but a record's last field (or without
    /// a framing length), `count` with `size`, a length on a fixed or non-sequence type, `[0]`.
    BadLength,
    /// A `width` that cannot give a variable-width integer its byte count: not on a plain integer
    /// field, bad `field[lo..hi]` syntax, no such earlier unsigned integer field, a bit range
    /// outside that field, or a range that can announce more bytes than the integer holds.
    BadWidth,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::TomlSyntax => "E0001",
            Code::UnknownKey => "E0002",
            Code::MissingKey => "E0003",
            Code::WrongValueType => "E0004",
            Code::MsgSyntax => "E0701",
            Code::MsgSection => "E0702",
            Code::StructSyntax => "E0801",
            Code::StructBitField => "E0802",
            Code::StructEnum => "E0803",
            Code::StructComma => "E0804",
            Code::UnknownType => "E0101",
            Code::BadTypeSyntax => "E0102",
            Code::BadEndian => "E0103",
            Code::BadName => "E0104",
            Code::DuplicateName => "E0201",
            Code::DuplicateField => "E0202",
            Code::DuplicateRecordId => "E0203",
            Code::DuplicateValue => "E0204",
            Code::ValueOutOfRange => "E0301",
            Code::FlagOutOfRange => "E0302",
            Code::NotAnInteger => "E0303",
            Code::PayloadTooLarge => "E0304",
            Code::BadConst => "E0305",
            Code::BadLength => "E0306",
            Code::NotFixedSize => "E0307",
            Code::BadWidth => "E0308",
            Code::BadUnionTag => "E0401",
            Code::UnmatchedUnionTag => "E0402",
            Code::BadParamUse => "E0403",
            Code::BadParam => "E0404",
            Code::BadFraming => "E0501",
            Code::BadSchemaId => "E0502",
            Code::BadIntegrity => "E0503",
            Code::RecursiveType => "E0601",
            Code::TooDeep => "E0602",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in a schema, located by a byte range of its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub span: Range<usize>,
    /// Short text printed next to the caret.
    pub label: Option<String>,
    /// A suggestion on how to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, span: Range<usize>, message: impl Into<String>) -> Self {
        Diagnostic { code, message: message.into(), span, label: None, help: None }
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// 1-based line and column (in characters) of the span's start.
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        line_col(source, self.span.start)
    }

    /// Renders the diagnostic the way rustc does:
    ///
    /// ```text
    /// error[E0101]: unknown type `f31`
    ///   --> schemas/usvlog.toml:12:31
    ///    |
    /// 12 |   { name = "x", type = "f31" },
    ///    |                        ^^^^^ not a built-in or declared type
    ///    = help: did you mean `f32`?
    /// ```
    pub fn render(&self, path: &str, source: &str) -> String {
        use fmt::Write;
        let start = self.span.start.min(source.len());
        let (line, col) = line_col(source, start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let text = source[line_start..line_end].trim_end_matches('\r');
        let end = self.span.end.clamp(start, line_end);
        let width = source[start..end].chars().count().max(1);
        let gutter = line.to_string().len();
        let pad = " ".repeat(gutter);
        let mut out = String::new();
        let _ = writeln!(out, "error[{}]: {}", self.code, self.message);
        let _ = writeln!(out, "{pad}--> {path}:{line}:{col}");
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{line} | {text}");
        let _ = write!(out, "{pad} | {}{}", " ".repeat(col - 1), "^".repeat(width));
        if let Some(label) = &self.label {
            let _ = write!(out, " {label}");
        }
        out.push('\n');
        if let Some(help) = &self.help {
            let _ = writeln!(out, "{pad} = help: {help}");
        }
        out
    }
}

/// 1-based line and column (in characters) of a byte offset of `source`.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Every diagnostic of one schema file, with the file's text so they can be rendered.
#[derive(Clone, Debug)]
pub struct SchemaError {
    pub path: String,
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl SchemaError {
    /// All diagnostics rendered, in source order, followed by a count.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            out.push_str(&d.render(&self.path, &self.source));
            out.push('\n');
        }
        let n = self.diagnostics.len();
        out.push_str(&format!(
            "error: could not compile schema `{}` due to {} previous error{}\n",
            self.path,
            n,
            if n == 1 { "" } else { "s" }
        ));
        out
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for SchemaError {}

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("feilds", ["fields", "name", "doc"]), Some("fields"));
        assert_eq!(did_you_mean("f31", ["f32", "u32"]), Some("f32"));
        assert_eq!(did_you_mean("zzzzzz", ["fields"]), None);
    }

    #[test]
    fn line_and_column() {
        let src = "a = 1\nbb = 2\n";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 6), (2, 1));
        assert_eq!(line_col(src, 11), (2, 6));
    }
}
