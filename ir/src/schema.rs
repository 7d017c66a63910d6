//! The TOML front end's first stage: a spanned mirror of the schema file.
//!
//! This stage only checks the file's shape (known keys, required keys, value kinds) and keeps every
//! value's byte span. Meaning (types, names, layout) is checked by [`crate::lower`].

use std::cell::RefCell;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diag::{did_you_mean, Code, Diagnostic};

pub type Span = Range<usize>;

/// A value with the byte span of its source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sp<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Sp<T> {
    pub fn new(value: T, span: Span) -> Self {
        Sp { value, span }
    }

    /// A stand-in for a required value that is missing or malformed (already reported by
    /// [`parse`]). It has an empty span at `at`, so later stages can tell it from a real value and
    /// skip their own checks of it instead of reporting the same mistake again.
    pub fn placeholder(value: T, at: usize) -> Self {
        Sp { value, span: at..at }
    }

    /// Whether this is a [`Sp::placeholder`] rather than a value written in the file.
    pub fn is_placeholder(&self) -> bool {
        self.span.is_empty()
    }
}

/// A whole schema file.
#[derive(Clone, Debug, Default)]
pub struct SchemaFile {
    pub format: Option<FormatDecl>,
    pub file_header: Option<StructDecl>,
    pub framing: Option<FramingDecl>,
    pub structs: Vec<StructDecl>,
    pub enums: Vec<EnumDecl>,
    pub flags: Vec<FlagsDecl>,
    pub unions: Vec<UnionDecl>,
    pub records: Vec<RecordDecl>,
    pub params: Vec<ParamDecl>,
}

/// A reader parameter: `[[param]]` with `name`, `type` (an integer type or an enum) and `doc`.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub name: Sp<String>,
    pub ty: Sp<String>,
    pub doc: Option<Sp<String>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct FormatDecl {
    pub name: Sp<String>,
    pub title: Option<Sp<String>>,
    pub doc: Option<Sp<String>>,
    pub endian: Option<Sp<String>>,
    pub version: Option<Sp<String>>,
    pub schema_id: Option<SchemaIdDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SchemaIdDecl {
    pub value: Sp<i128>,
    pub name: Sp<String>,
    pub field: Option<Sp<String>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct StructDecl {
    pub name: Sp<String>,
    pub doc: Option<Sp<String>>,
    pub endian: Option<Sp<String>>,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct FramingDecl {
    pub body: StructDecl,
    pub tag: Sp<String>,
    pub length: Option<Sp<String>>,
    pub timestamp: Option<Sp<String>>,
    /// `bounded = false`: payloads may exceed what the length field can express (E0304 is not
    /// checked); writers reject an oversized record at run time.
    pub bounded: Option<Sp<bool>>,
}

/// A const value as written: an integer or a string (whose UTF-8 bytes are the value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstDecl {
    Int(i128),
    Str(String),
}

#[derive(Clone, Debug)]
pub struct FieldDecl {
    pub name: Option<Sp<String>>,
    pub ty: Option<Sp<String>>,
    pub pad: Option<Sp<i128>>,
    pub count: Option<Sp<String>>,
    pub size: Option<Sp<String>>,
    pub tag: Option<Sp<String>>,
    /// The reader parameter that selects the variant of a union-typed field.
    pub param: Option<Sp<String>>,
    /// The bit range of an earlier field that gives a variable-width integer's byte count
    /// (`"lengths[0..2]"`).
    pub width: Option<Sp<String>>,
    pub endian: Option<Sp<String>>,
    pub doc: Option<Sp<String>>,
    pub unit: Option<Sp<String>>,
    pub value: Option<Sp<ConstDecl>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct EnumDecl {
    pub name: Sp<String>,
    pub doc: Option<Sp<String>>,
    pub base: Sp<String>,
    pub values: Vec<ValueDecl>,
    pub span: Span,
}

/// One named value of an enum (`value`) or one bit of a flags type (`bit`).
#[derive(Clone, Debug)]
pub struct ValueDecl {
    pub name: Sp<String>,
    pub value: Sp<i128>,
    pub doc: Option<Sp<String>>,
}

#[derive(Clone, Debug)]
pub struct FlagsDecl {
    pub name: Sp<String>,
    pub doc: Option<Sp<String>>,
    pub base: Sp<String>,
    pub flags: Vec<ValueDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct UnionDecl {
    pub name: Sp<String>,
    pub doc: Option<Sp<String>>,
    pub endian: Option<Sp<String>>,
    pub variants: Vec<VariantDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct VariantDecl {
    pub name: Sp<String>,
    /// The integer tag, for a union selected by a tag field.
    pub tag: Option<Sp<i128>>,
    /// For a union selected by a type name: the exact names (`match`), a name prefix (`prefix`), or
    /// the fallback for every other name (`default = true`).
    pub matches: Vec<Sp<String>>,
    pub prefix: Option<Sp<String>>,
    pub default: Option<Sp<bool>>,
    pub doc: Option<Sp<String>>,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct RecordDecl {
    pub name: Sp<String>,
    pub id: Sp<i128>,
    pub doc: Option<Sp<String>>,
    pub endian: Option<Sp<String>>,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// Parses schema text into the spanned model, collecting every shape error.
pub fn parse(source: &str) -> (SchemaFile, Vec<Diagnostic>) {
    let diags = RefCell::new(Vec::new());
    let root = match DeTable::parse(source) {
        Ok(root) => root,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().trim().to_string();
            let d = Diagnostic::new(Code::TomlSyntax, span, format!("invalid TOML: {message}"));
            return (SchemaFile::default(), vec![d]);
        }
    };
    let mut file = SchemaFile::default();
    let span = root.span();
    let mut t = Table::new(root.get_ref(), span, "the schema".to_string(), &diags);
    file.format = t.table("format", true).map(|(t, span)| format_decl(t, span));
    file.file_header = t.table("file_header", false).map(|(t, span)| struct_decl(t, span, StructKind::FileHeader));
    file.framing = t.table("framing", false).map(|(mut t, span)| {
        let tag = t.str("tag", true);
        let length = t.str("length", false);
        let timestamp = t.str("timestamp", false);
        let bounded = t.boolean("bounded");
        let body = struct_decl(t, span.clone(), StructKind::Framing);
        let tag = tag.unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
        FramingDecl { tag, length, timestamp, bounded, body }
    });
    file.structs = t.tables("struct").into_iter().map(|(t, s)| struct_decl(t, s, StructKind::Struct)).collect();
    file.enums = t.tables("enum").into_iter().map(|(t, s)| enum_decl(t, s)).collect();
    file.flags = t.tables("flags").into_iter().map(|(t, s)| flags_decl(t, s)).collect();
    file.unions = t.tables("union").into_iter().map(|(t, s)| union_decl(t, s)).collect();
    file.records = t.tables("record").into_iter().map(|(t, s)| record_decl(t, s)).collect();
    file.params = t.tables("param").into_iter().map(|(t, s)| param_decl(t, s)).collect();
    t.finish(&["format", "file_header", "framing", "struct", "enum", "flags", "union", "record", "param"]);
    (file, diags.into_inner())
}

fn format_decl(mut t: Table<'_, '_>, span: Span) -> FormatDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let title = t.str("title", false);
    let doc = t.str("doc", false);
    let endian = t.str("endian", false);
    let version = t.str("version", false);
    let schema_id = t.table("schema_id", false).map(|(mut s, sspan)| {
        let value = s.int("value", true).unwrap_or_else(|| Sp::placeholder(0, sspan.start));
        let name = s.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), sspan.start));
        let field = s.str("field", false);
        s.finish(&["value", "name", "field"]);
        SchemaIdDecl { value, name, field, span: sspan }
    });
    t.finish(&["name", "title", "doc", "endian", "version", "schema_id"]);
    FormatDecl { name, title, doc, endian, version, schema_id, span }
}

/// Which table a struct body comes from: only `[[struct]]` needs a `name` (the headers default to
/// `FileHeader` and `RecordHeader`), and only `[framing]` has role keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StructKind {
    Struct,
    FileHeader,
    Framing,
}

fn struct_decl(mut t: Table<'_, '_>, span: Span, kind: StructKind) -> StructDecl {
    let name = t.str("name", kind == StructKind::Struct).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc", false);
    let endian = t.str("endian", false);
    let fields = t.fields("fields", true);
    if kind == StructKind::Framing {
        t.finish(&["name", "doc", "endian", "fields", "tag", "length", "timestamp", "bounded"]);
    } else {
        t.finish(&["name", "doc", "endian", "fields"]);
    }
    StructDecl { name, doc, endian, fields, span }
}

fn enum_decl(mut t: Table<'_, '_>, span: Span) -> EnumDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc", false);
    let base = t.str("base", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let values = t.values("values", "value");
    t.finish(&["name", "doc", "base", "values"]);
    EnumDecl { name, doc, base, values, span }
}

fn flags_decl(mut t: Table<'_, '_>, span: Span) -> FlagsDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc", false);
    let base = t.str("base", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let flags = t.values("flags", "bit");
    t.finish(&["name", "doc", "base", "flags"]);
    FlagsDecl { name, doc, base, flags, span }
}

fn union_decl(mut t: Table<'_, '_>, span: Span) -> UnionDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc", false);
    let endian = t.str("endian", false);
    let variants = t
        .array_of_tables("variants", true)
        .into_iter()
        .map(|(mut v, vspan)| {
            let name = v.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), vspan.start));
            v.named(&name);
            let tag = v.int("tag", false);
            let matches = v.str_list("match");
            let prefix = v.str("prefix", false);
            let default = v.boolean("default");
            let doc = v.str("doc", false);
            let fields = v.fields("fields", false);
            v.finish(&["name", "tag", "match", "prefix", "default", "doc", "fields"]);
            VariantDecl { name, tag, matches, prefix, default, doc, fields, span: vspan }
        })
        .collect();
    t.finish(&["name", "doc", "endian", "variants"]);
    UnionDecl { name, doc, endian, variants, span }
}

fn record_decl(mut t: Table<'_, '_>, span: Span) -> RecordDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let id = t.int("id", true).unwrap_or_else(|| Sp::placeholder(-1, span.start));
    let doc = t.str("doc", false);
    let endian = t.str("endian", false);
    let fields = t.fields("fields", true);
    t.finish(&["name", "id", "doc", "endian", "fields"]);
    RecordDecl { name, id, doc, endian, fields, span }
}

fn param_decl(mut t: Table<'_, '_>, span: Span) -> ParamDecl {
    let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let ty = t.str("type", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let doc = t.str("doc", false);
    t.finish(&["name", "type", "doc"]);
    ParamDecl { name, ty, doc, span }
}

const FIELD_KEYS: &[&str] =
    &["name", "type", "pad", "count", "size", "tag", "param", "width", "endian", "doc", "unit", "const"];

fn field_decl(mut t: Table<'_, '_>, span: Span) -> FieldDecl {
    if t.get("pad").is_some() {
        // `{ pad = N }`: N reserved zero bytes, with nothing else but an optional `doc`.
        let pad = t.int("pad", false);
        let doc = t.str("doc", false);
        t.what = "a padding entry".to_string();
        t.finish_except(
            &["pad", "doc"],
            FIELD_KEYS,
            "a padding entry `{ pad = N }` takes only `pad` and `doc`; padding has no name, type or value",
        );
        return FieldDecl {
            name: None,
            ty: None,
            pad,
            count: None,
            size: None,
            tag: None,
            param: None,
            width: None,
            endian: None,
            doc,
            unit: None,
            value: None,
            span,
        };
    }
    let name = t.str("name", false);
    let ty = t.str("type", false);
    match &name {
        Some(n) => t.what = format!("field `{}`", n.value),
        None => t.missing("name", "a field needs a `name` (or is a padding entry `{ pad = N }`)"),
    }
    if ty.is_none() {
        t.missing("type", "a field needs a `type`, e.g. `type = \"u16\"`");
    }
    // A present but malformed `count`, `size` or `tag` becomes a placeholder, so that later stages
    // do not also report it as absent.
    let keep = |t: &mut Table<'_, '_>, key: &str| {
        let v = t.str(key, false);
        match (&v, t.get(key)) {
            (None, Some(raw)) => Some(Sp::placeholder(String::new(), raw.span().start)),
            _ => v,
        }
    };
    let count = keep(&mut t, "count");
    let size = keep(&mut t, "size");
    let tag = keep(&mut t, "tag");
    let param = keep(&mut t, "param");
    let width = keep(&mut t, "width");
    let endian = t.str("endian", false);
    let doc = t.str("doc", false);
    let unit = t.str("unit", false);
    let value = t.konst("const");
    t.finish(FIELD_KEYS);
    FieldDecl { name, ty, pad: None, count, size, tag, param, width, endian, doc, unit, value, span }
}

/// A cursor over one TOML table that records which keys were read, so that the rest can be
/// reported as unknown, with a suggestion.
struct Table<'a, 'd> {
    table: &'a DeTable<'a>,
    span: Span,
    /// How messages name this table: "[[record]] `REC_A`", "field `x`".
    what: String,
    diags: &'d RefCell<Vec<Diagnostic>>,
    /// Required keys found absent, reported by [`Table::finish`] unless an unknown key there is
    /// a misspelling of one of them (then only the misspelling is reported).
    missing: Vec<(String, Diagnostic)>,
}

impl<'a, 'd> Table<'a, 'd> {
    fn new(table: &'a DeTable<'a>, span: Span, what: String, diags: &'d RefCell<Vec<Diagnostic>>) -> Self {
        Table { table, span, what, diags, missing: Vec::new() }
    }

    fn get(&self, key: &str) -> Option<&'a Spanned<DeValue<'a>>> {
        self.table.get(key)
    }

    /// Adds the table's name to how messages refer to it, once it is known.
    fn named(&mut self, name: &Sp<String>) {
        if !name.is_placeholder() {
            self.what = format!("{} `{}`", self.what, name.value);
        }
    }

    fn missing(&mut self, key: &str, why: &str) {
        let d = if self.what == "the schema" {
            // The root table spans the whole file; point at its start.
            Diagnostic::new(Code::MissingKey, 0..0, format!("the schema has no `[{key}]` table"))
                .label(format!("expected a `[{key}]` table"))
                .help(why.to_string())
        } else {
            // A table's span is its `[header]` or its whole `{ inline table }`; the caret is cut
            // at the end of the first line.
            Diagnostic::new(Code::MissingKey, self.span.clone(), format!("missing key `{key}` in {}", self.what))
                .label(format!("this table has no `{key}`"))
                .help(why.to_string())
        };
        self.missing.push((key.to_string(), d));
    }

    fn wrong(&self, key: &str, expected: &str, v: &Spanned<DeValue<'_>>) {
        let mut d = Diagnostic::new(
            Code::WrongValueType,
            v.span(),
            format!("`{key}` must be {expected}, found {}", v.get_ref().type_str()),
        )
        .label(format!("expected {expected}"));
        // The usual slip is quoting a number, or not quoting a name.
        let value = v.get_ref();
        if let Some(text) = value.as_str().filter(|t| t.trim().parse::<i128>().is_ok()) {
            if expected.contains("integer") {
                d = d.help(format!("remove the quotes: `{key} = {}`", text.trim()));
            }
        } else if let Some(i) = value.as_integer() {
            if key == "count" || key == "size" {
                d = d.help(format!(
                    "`{key}` names the integer type of the length prefix, e.g. `{key} = \"u16\"`; for exactly {} elements, write the type as `T[{}]`",
                    i.as_str(),
                    i.as_str()
                ));
            } else if expected.contains("string") {
                d = d.help(format!("quote it: `{key} = \"{}\"`", i.as_str()));
            }
        }
        self.diags.borrow_mut().push(d);
    }

    fn str(&mut self, key: &str, required: bool) -> Option<Sp<String>> {
        match self.get(key) {
            None => {
                if required {
                    self.missing(key, &format!("add `{key} = \"...\"`"));
                }
                None
            }
            Some(v) => match v.get_ref().as_str() {
                Some(s) => Some(Sp::new(s.to_string(), v.span())),
                None => {
                    self.wrong(key, "a string", v);
                    None
                }
            },
        }
    }

    fn int(&mut self, key: &str, required: bool) -> Option<Sp<i128>> {
        match self.get(key) {
            None => {
                if required {
                    self.missing(key, &format!("add `{key} = <integer>`"));
                }
                None
            }
            Some(v) => match v.get_ref().as_integer().and_then(parse_int) {
                Some(i) => Some(Sp::new(i, v.span())),
                None => {
                    self.wrong(key, "an integer", v);
                    None
                }
            },
        }
    }

    /// A string, or an array of strings.
    fn str_list(&mut self, key: &str) -> Vec<Sp<String>> {
        let Some(v) = self.get(key) else { return Vec::new() };
        if let Some(s) = v.get_ref().as_str() {
            return vec![Sp::new(s.to_string(), v.span())];
        }
        let Some(items) = v.get_ref().as_array() else {
            self.wrong(key, "a string or an array of strings", v);
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) => out.push(Sp::new(s.to_string(), item.span())),
                None => self.wrong(key, "a string or an array of strings", item),
            }
        }
        out
    }

    fn boolean(&mut self, key: &str) -> Option<Sp<bool>> {
        let v = self.get(key)?;
        match v.get_ref().as_bool() {
            Some(b) => Some(Sp::new(b, v.span())),
            None => {
                self.wrong(key, "`true` or `false`", v);
                None
            }
        }
    }

    fn konst(&mut self, key: &str) -> Option<Sp<ConstDecl>> {
        let v = self.get(key)?;
        let value = v.get_ref();
        if let Some(i) = value.as_integer().and_then(parse_int) {
            Some(Sp::new(ConstDecl::Int(i), v.span()))
        } else if let Some(s) = value.as_str() {
            Some(Sp::new(ConstDecl::Str(s.to_string()), v.span()))
        } else {
            self.wrong(key, "an integer or a string", v);
            None
        }
    }

    fn table(&mut self, key: &str, required: bool) -> Option<(Table<'a, 'd>, Span)> {
        match self.get(key) {
            None => {
                if required {
                    let help = if key == "format" {
                        "every schema starts with `[format]` and at least `name = \"...\"`".to_string()
                    } else {
                        format!("add a `[{key}]` table")
                    };
                    self.missing(key, &help);
                }
                None
            }
            Some(v) => match v.get_ref().as_table() {
                Some(t) => Some((Table::new(t, v.span(), what_is(key).to_string(), self.diags), v.span())),
                None => {
                    self.wrong(key, "a table", v);
                    None
                }
            },
        }
    }

    /// The elements of an array of tables (`[[key]]` or `key = [{...}, ...]`).
    fn array_of_tables(&mut self, key: &str, required: bool) -> Vec<(Table<'a, 'd>, Span)> {
        let Some(v) = self.get(key) else {
            if required {
                self.missing(key, &format!("add `{key} = [ ... ]`"));
            }
            return Vec::new();
        };
        let Some(items) = v.get_ref().as_array() else {
            self.wrong(key, "an array of tables", v);
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut bad = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_table() {
                Some(t) => out.push((t, item.span())),
                None => bad.push(item),
            }
        }
        for item in bad {
            self.wrong(key, "an array of tables", item);
        }
        let what = what_is(key);
        out.into_iter().map(|(t, span)| (Table::new(t, span.clone(), what.to_string(), self.diags), span)).collect()
    }

    fn tables(&mut self, key: &str) -> Vec<(Table<'a, 'd>, Span)> {
        self.array_of_tables(key, false)
    }

    fn fields(&mut self, key: &str, required: bool) -> Vec<FieldDecl> {
        self.array_of_tables(key, required).into_iter().map(|(t, s)| field_decl(t, s)).collect()
    }

    fn values(&mut self, key: &str, value_key: &'static str) -> Vec<ValueDecl> {
        self.array_of_tables(key, true)
            .into_iter()
            .map(|(mut t, span)| {
                t.what = if value_key == "bit" { "a flag" } else { "an enum value" }.to_string();
                let name = t.str("name", true).unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
                t.named(&name);
                let value = t.int(value_key, true).unwrap_or_else(|| Sp::placeholder(0, span.start));
                let doc = t.str("doc", false);
                t.finish(&["name", value_key, "doc"]);
                ValueDecl { name, value, doc }
            })
            .collect()
    }

    /// Reports every key of the table that is not in `known`, then the missing required keys.
    fn finish(self, known: &[&str]) {
        self.finish_except(known, &[], "");
    }

    /// Like [`Table::finish`], but keys in `elsewhere` (valid in similar tables, not in this one)
    /// are reported with `why` instead of as unknown.
    fn finish_except(mut self, known: &[&str], elsewhere: &[&str], why: &str) {
        let mut out = Vec::new();
        for (k, _) in self.table.iter() {
            let key: &str = k.get_ref();
            if known.contains(&key) {
                continue;
            }
            if elsewhere.contains(&key) {
                out.push(
                    Diagnostic::new(Code::UnknownKey, k.span(), format!("`{key}` does not apply to {}", self.what))
                        .label("not allowed here")
                        .help(why.to_string()),
                );
                continue;
            }
            let mut d = Diagnostic::new(Code::UnknownKey, k.span(), format!("unknown key `{key}` in {}", self.what))
                .label("not a key of the schema language");
            d = match did_you_mean(key, known.iter().copied()) {
                Some(s) => {
                    // A misspelt required key: report the spelling, not also the absence.
                    if let Some(i) = self.missing.iter().position(|(m, _)| m == s) {
                        self.missing.remove(i);
                    }
                    d.help(format!("did you mean `{s}`?"))
                }
                None => d.help(format!("known keys here: {}", known.join(", "))),
            };
            out.push(d);
        }
        let mut diags = self.diags.borrow_mut();
        diags.extend(self.missing.drain(..).map(|(_, d)| d));
        diags.extend(out);
    }
}

/// Describes the table a key opens, for messages ("unknown key `x` in [[record]]").
fn what_is(key: &str) -> &'static str {
    match key {
        "format" => "[format]",
        "schema_id" => "[format.schema_id]",
        "file_header" => "[file_header]",
        "framing" => "[framing]",
        "struct" => "[[struct]]",
        "enum" => "[[enum]]",
        "flags" => "[[flags]]",
        "union" => "[[union]]",
        "record" => "[[record]]",
        "fields" => "a field",
        "variants" => "a union variant",
        "values" => "an enum value",
        _ => "a table",
    }
}

/// Integers are parsed as i128 so that every u64 and i64 value fits, with its sign.
fn parse_int(i: &toml::de::DeInteger<'_>) -> Option<i128> {
    let s = i.as_str().replace('_', "");
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d.to_string()),
        None => (false, s.trim_start_matches('+').to_string()),
    };
    let v = i128::from_str_radix(&digits, i.radix()).ok()?;
    Some(if neg { -v } else { v })
}
