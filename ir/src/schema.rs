//! The TOML front end's first stage: a spanned mirror of the schema file.
//!
//! This stage only checks the file's shape (known keys, required keys, value kinds) and keeps every
//! value's byte span. The shape is the table of [`crate::language`]: every key is read through it,
//! and the keys it does not list are reported. Meaning (types, names, layout) is checked by
//! [`crate::lower`].

use std::cell::RefCell;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::language::{self, Kind, Section};

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
    /// `align`: `packed` (the default) or `natural` ([`crate::ir::Rules`]).
    pub align: Option<Sp<String>>,
    /// `string_nul`: counted strings include a terminating NUL.
    pub string_nul: Option<Sp<bool>>,
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
    pub sync: Option<Sp<String>>,
    pub checksum: Option<ChecksumDecl>,
    /// `trailer = "<struct>"`: the struct whose const bytes end the file, after the last record.
    pub trailer: Option<Sp<String>>,
}

/// `checksum = { field = "crc", algorithm = "crc-32c", over = "payload" }` in `[framing]`.
#[derive(Clone, Debug)]
pub struct ChecksumDecl {
    pub field: Sp<String>,
    pub algorithm: Sp<String>,
    pub over: Option<Sp<String>>,
    pub span: Span,
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
    let mut t = Table::new(root.get_ref(), span, &language::ROOT, &diags);
    file.format = t.table("format").map(|(t, span)| format_decl(t, span));
    file.file_header = t.table("file_header").map(|(t, span)| struct_decl(t, span));
    file.framing = t.table("framing").map(|(mut t, span)| {
        let tag = t.str("tag");
        let length = t.str("length");
        let timestamp = t.str("timestamp");
        let bounded = t.boolean("bounded");
        let sync = t.str("sync");
        let trailer = t.str("trailer");
        let checksum = t.table("checksum").map(|(mut c, cspan)| {
            let field = c.str("field").unwrap_or_else(|| Sp::placeholder(String::new(), cspan.start));
            let algorithm = c.str("algorithm").unwrap_or_else(|| Sp::placeholder(String::new(), cspan.start));
            let over = c.str("over");
            c.finish();
            ChecksumDecl { field, algorithm, over, span: cspan }
        });
        let body = struct_decl(t, span.clone());
        let tag = tag.unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
        FramingDecl { tag, length, timestamp, bounded, sync, checksum, trailer, body }
    });
    file.structs = t.tables("struct").into_iter().map(|(t, s)| struct_decl(t, s)).collect();
    file.enums = t.tables("enum").into_iter().map(|(t, s)| enum_decl(t, s)).collect();
    file.flags = t.tables("flags").into_iter().map(|(t, s)| flags_decl(t, s)).collect();
    file.unions = t.tables("union").into_iter().map(|(t, s)| union_decl(t, s)).collect();
    file.records = t.tables("record").into_iter().map(|(t, s)| record_decl(t, s)).collect();
    file.params = t.tables("param").into_iter().map(|(t, s)| param_decl(t, s)).collect();
    t.finish();
    (file, diags.into_inner())
}

fn format_decl(mut t: Table<'_, '_>, span: Span) -> FormatDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let title = t.str("title");
    let doc = t.str("doc");
    let endian = t.str("endian");
    let version = t.str("version");
    let align = t.str("align");
    let string_nul = t.boolean("string_nul");
    let schema_id = t.table("schema_id").map(|(mut s, sspan)| {
        let value = s.int("value").unwrap_or_else(|| Sp::placeholder(0, sspan.start));
        let name = s.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), sspan.start));
        let field = s.str("field");
        s.finish();
        SchemaIdDecl { value, name, field, span: sspan }
    });
    t.finish();
    FormatDecl { name, title, doc, endian, version, schema_id, align, string_nul, span }
}

/// The struct body of `[[struct]]`, `[file_header]` or `[framing]` (whose role keys the caller has
/// read). Only `[[struct]]` requires a `name`: the headers default to `FileHeader` and
/// `RecordHeader`.
fn struct_decl(mut t: Table<'_, '_>, span: Span) -> StructDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc");
    let endian = t.str("endian");
    let fields = t.fields("fields");
    t.finish();
    StructDecl { name, doc, endian, fields, span }
}

fn enum_decl(mut t: Table<'_, '_>, span: Span) -> EnumDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc");
    let base = t.str("base").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let values = t.values("values", "value");
    t.finish();
    EnumDecl { name, doc, base, values, span }
}

fn flags_decl(mut t: Table<'_, '_>, span: Span) -> FlagsDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc");
    let base = t.str("base").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let flags = t.values("flags", "bit");
    t.finish();
    FlagsDecl { name, doc, base, flags, span }
}

fn union_decl(mut t: Table<'_, '_>, span: Span) -> UnionDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let doc = t.str("doc");
    let endian = t.str("endian");
    let variants = t
        .tables("variants")
        .into_iter()
        .map(|(mut v, vspan)| {
            let name = v.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), vspan.start));
            v.named(&name);
            let tag = v.int("tag");
            let matches = v.str_list("match");
            let prefix = v.str("prefix");
            let default = v.boolean("default");
            let doc = v.str("doc");
            let fields = v.fields("fields");
            v.finish();
            VariantDecl { name, tag, matches, prefix, default, doc, fields, span: vspan }
        })
        .collect();
    t.finish();
    UnionDecl { name, doc, endian, variants, span }
}

fn record_decl(mut t: Table<'_, '_>, span: Span) -> RecordDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let id = t.int("id").unwrap_or_else(|| Sp::placeholder(-1, span.start));
    let doc = t.str("doc");
    let endian = t.str("endian");
    let fields = t.fields("fields");
    t.finish();
    RecordDecl { name, id, doc, endian, fields, span }
}

fn param_decl(mut t: Table<'_, '_>, span: Span) -> ParamDecl {
    let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    t.named(&name);
    let ty = t.str("type").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
    let doc = t.str("doc");
    t.finish();
    ParamDecl { name, ty, doc, span }
}

/// One entry of a `fields` array, a [`language::FIELD`] or, with `pad`, a [`language::PADDING`].
fn field_decl(mut t: Table<'_, '_>, span: Span) -> FieldDecl {
    if t.get("pad").is_some() {
        // `{ pad = N }`: N reserved zero bytes, with nothing else but an optional `doc`.
        t.section = &language::PADDING;
        t.what = language::PADDING.what.to_string();
        let pad = t.int("pad");
        let doc = t.str("doc");
        t.finish_except(
            &language::FIELD,
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
    let name = t.str("name");
    if let Some(n) = &name {
        t.what = format!("field `{}`", n.value);
    }
    let ty = t.str("type");
    // A present but malformed `count`, `size` or `tag` becomes a placeholder, so that later stages
    // do not also report it as absent.
    let keep = |t: &mut Table<'_, '_>, key: &str| {
        let v = t.str(key);
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
    let endian = t.str("endian");
    let doc = t.str("doc");
    let unit = t.str("unit");
    let value = t.konst("const");
    t.finish();
    FieldDecl { name, ty, pad: None, count, size, tag, param, width, endian, doc, unit, value, span }
}

/// A cursor over one TOML table of a [`Section`]: every key is read through it as the section's
/// table says (kind, required), and [`Table::finish`] reports the keys the section does not take,
/// with a suggestion.
struct Table<'a, 'd> {
    table: &'a DeTable<'a>,
    span: Span,
    /// The keys this table takes.
    section: &'static Section,
    /// How messages name this table: "[[record]] `REC_A`", "field `x`".
    what: String,
    diags: &'d RefCell<Vec<Diagnostic>>,
    /// Required keys found absent, reported by [`Table::finish`] unless an unknown key there is
    /// a misspelling of one of them (then only the misspelling is reported).
    missing: Vec<(String, Diagnostic)>,
    /// The keys read so far: by [`Table::finish`], every key of the section (checked in debug
    /// builds, so that the key table cannot list a key that the parser ignores).
    read: Vec<&'static str>,
}

impl<'a, 'd> Table<'a, 'd> {
    fn new(table: &'a DeTable<'a>, span: Span, section: &'static Section, diags: &'d RefCell<Vec<Diagnostic>>) -> Self {
        Table { table, span, section, what: section.what.to_string(), diags, missing: Vec::new(), read: Vec::new() }
    }

    fn get(&self, key: &str) -> Option<&'a Spanned<DeValue<'a>>> {
        self.table.get(key)
    }

    /// Reads `key`: its value, after reporting it as missing if the section requires it. The key
    /// must be in the section's table with a kind that `is_kind` accepts (a mistake in this file,
    /// not in the schema).
    fn key(
        &mut self,
        key: &str,
        is_kind: fn(&Kind) -> bool,
    ) -> Option<(&'static language::Key, &'a Spanned<DeValue<'a>>)> {
        let Some(k) = self.section.key(key) else {
            panic!("the parser reads `{key}` in {}, which the key table does not list", self.section.id)
        };
        debug_assert!(is_kind(&k.kind), "`{key}` in {} is read as another kind than the key table's", self.section.id);
        self.read.push(k.name);
        let value = self.get(key);
        if value.is_none() && k.required {
            let why = missing_help(self.section, k);
            self.missing(key, &why);
        }
        value.map(|v| (k, v))
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

    fn str(&mut self, key: &str) -> Option<Sp<String>> {
        let (_, v) = self.key(key, |k| matches!(k, Kind::Str))?;
        match v.get_ref().as_str() {
            Some(s) => Some(Sp::new(s.to_string(), v.span())),
            None => {
                self.wrong(key, "a string", v);
                None
            }
        }
    }

    fn int(&mut self, key: &str) -> Option<Sp<i128>> {
        let (_, v) = self.key(key, |k| matches!(k, Kind::Int))?;
        match v.get_ref().as_integer().and_then(parse_int) {
            Some(i) => Some(Sp::new(i, v.span())),
            None => {
                self.wrong(key, "an integer", v);
                None
            }
        }
    }

    /// A string, or an array of strings.
    fn str_list(&mut self, key: &str) -> Vec<Sp<String>> {
        let Some((_, v)) = self.key(key, |k| matches!(k, Kind::StrOrStrs)) else { return Vec::new() };
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
        let (_, v) = self.key(key, |k| matches!(k, Kind::Bool))?;
        match v.get_ref().as_bool() {
            Some(b) => Some(Sp::new(b, v.span())),
            None => {
                self.wrong(key, "`true` or `false`", v);
                None
            }
        }
    }

    fn konst(&mut self, key: &str) -> Option<Sp<ConstDecl>> {
        let (_, v) = self.key(key, |k| matches!(k, Kind::IntOrStr))?;
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

    fn table(&mut self, key: &str) -> Option<(Table<'a, 'd>, Span)> {
        let (k, v) = self.key(key, |k| matches!(k, Kind::Table(_)))?;
        let Kind::Table(section) = k.kind else { unreachable!("checked by `key`") };
        match v.get_ref().as_table() {
            Some(t) => Some((Table::new(t, v.span(), section, self.diags), v.span())),
            None => {
                self.wrong(key, "a table", v);
                None
            }
        }
    }

    /// The elements of an array of tables (`[[key]]` or `key = [{...}, ...]`), each a table of
    /// `section`.
    fn array_of_tables(&mut self, key: &str, section: &'static Section) -> Vec<(Table<'a, 'd>, Span)> {
        let Some((_, v)) = self.key(key, |k| matches!(k, Kind::Tables(_) | Kind::Fields)) else { return Vec::new() };
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
        out.into_iter().map(|(t, span)| (Table::new(t, span.clone(), section, self.diags), span)).collect()
    }

    /// The elements of a key of kind [`Kind::Tables`].
    fn tables(&mut self, key: &str) -> Vec<(Table<'a, 'd>, Span)> {
        match self.section.key(key).map(|k| k.kind) {
            Some(Kind::Tables(section)) => self.array_of_tables(key, section),
            _ => panic!("the parser reads `{key}` in {} as tables, which the key table does not", self.section.id),
        }
    }

    /// The entries of a `fields` array; [`field_decl`] tells a padding entry from a data field.
    fn fields(&mut self, key: &str) -> Vec<FieldDecl> {
        self.array_of_tables(key, &language::FIELD).into_iter().map(|(t, s)| field_decl(t, s)).collect()
    }

    /// The entries of an enum's `values` or a flags type's `flags`: a name, an integer
    /// (`value_key`) and a doc.
    fn values(&mut self, key: &str, value_key: &'static str) -> Vec<ValueDecl> {
        self.tables(key)
            .into_iter()
            .map(|(mut t, span)| {
                let name = t.str("name").unwrap_or_else(|| Sp::placeholder(String::new(), span.start));
                t.named(&name);
                let value = t.int(value_key).unwrap_or_else(|| Sp::placeholder(0, span.start));
                let doc = t.str("doc");
                t.finish();
                ValueDecl { name, value, doc }
            })
            .collect()
    }

    /// Reports every key of the table that its section does not take, then the missing required
    /// keys.
    fn finish(self) {
        self.report(None);
    }

    /// Like [`Table::finish`], but keys of `other` (a similar table) are reported with `why`
    /// instead of as unknown.
    fn finish_except(self, other: &'static Section, why: &str) {
        self.report(Some((other, why)));
    }

    fn report(mut self, elsewhere: Option<(&'static Section, &str)>) {
        let known = self.section.names();
        debug_assert!(
            known.iter().all(|k| self.read.contains(k)),
            "the parser does not read every key that the key table lists for {}: {known:?}, read {:?}",
            self.section.id,
            self.read
        );
        let mut out = Vec::new();
        for (k, _) in self.table.iter() {
            let key: &str = k.get_ref();
            if known.contains(&key) {
                continue;
            }
            if let Some((_, why)) = elsewhere.filter(|(other, _)| other.key(key).is_some()) {
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

/// The help of a missing required key.
fn missing_help(section: &Section, key: &language::Key) -> String {
    let k = key.name;
    match (section.id, k) {
        ("schema", "format") => "every schema starts with `[format]` and at least `name = \"...\"`".to_string(),
        ("field", "name") => "a field needs a `name` (or is a padding entry `{ pad = N }`)".to_string(),
        ("field", "type") => "a field needs a `type`, e.g. `type = \"u16\"`".to_string(),
        _ => match key.kind {
            Kind::Str | Kind::StrOrStrs => format!("add `{k} = \"...\"`"),
            Kind::Int => format!("add `{k} = <integer>`"),
            Kind::Bool => format!("add `{k} = true`"),
            Kind::IntOrStr => format!("add `{k} = <integer or string>`"),
            Kind::Table(_) => format!("add a `[{k}]` table"),
            Kind::Tables(_) | Kind::Fields => format!("add `{k} = [ ... ]`"),
        },
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
