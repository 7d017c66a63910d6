//! The keys of the schema language, in one table: which keys each table of a schema file takes,
//! the kind of TOML value each holds, and which are required.
//!
//! Both readers of schema files follow it. The parser ([`crate::schema::parse`]) reads every key
//! through it: a key it reads must be in the table with the kind it reads, whether the key is
//! required comes from the table, and the keys a table does not list are reported (E0002). And
//! [`json_schema`] writes it as the JSON Schema (draft-07) that editors check schema files with
//! (`docs/logspec-schema.json`, see `docs/schema-language.md`). What the JSON Schema checks is
//! therefore exactly the shape the parser checks (E0002..E0004); meaning (types, names, byte
//! orders, layout) is checked by [`crate::lower`] alone.

use crate::json;

/// Where `logspec init` points a new schema's `#:schema` line: the checked-in JSON Schema on the
/// repository's main branch. Also the JSON Schema's `$id`.
pub const JSON_SCHEMA_URL: &str = "https://raw.githubusercontent.com/logspec/logspec/main/docs/logspec-schema.json";

/// What a key holds.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Str,
    Int,
    Bool,
    /// An integer or a string (`const`).
    IntOrStr,
    /// A string or an array of strings (`match`).
    StrOrStrs,
    /// A table (`[format]`, `schema_id = { ... }`).
    Table(&'static Section),
    /// An array of tables (`[[record]]`, `values = [{ ... }]`).
    Tables(&'static Section),
    /// An array of fields, each a data field ([`FIELD`]) or a padding entry ([`PADDING`]).
    Fields,
}

/// One key of a table.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// What it means, in a sentence or two (the JSON Schema's `description`, shown by editors).
    pub doc: &'static str,
}

/// The keys of one kind of table.
#[derive(Debug)]
pub struct Section {
    /// A short name: its entry in the JSON Schema's `definitions` (for the tables that are
    /// elements of an array; the others are written where their key is).
    pub id: &'static str,
    /// How messages name it: `[[record]]`, "a field".
    pub what: &'static str,
    pub keys: &'static [Key],
}

impl Section {
    /// The key named `name`, if this table takes it.
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The names of its keys, in the table's order.
    pub fn names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }
}

const fn req(name: &'static str, kind: Kind, doc: &'static str) -> Key {
    Key { name, kind, required: true, doc }
}

const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> Key {
    Key { name, kind, required: false, doc }
}

const DOC: Key = opt("doc", Kind::Str, "Description (generated doc comments).");
const ENDIAN: Key = opt(
    "endian",
    Kind::Str,
    "Byte order of its fields: \"little\" (or \"le\") or \"big\" (or \"be\"); default: the format's.",
);

/// The top level of a schema file.
pub static ROOT: Section = Section {
    id: "schema",
    what: "the schema",
    keys: &[
        req("format", Kind::Table(&FORMAT), "Name and defaults of the format."),
        opt("file_header", Kind::Table(&FILE_HEADER), "A struct written once at the start of a file."),
        opt("framing", Kind::Table(&FRAMING), "The per-record header struct and the roles of its fields."),
        opt("struct", Kind::Tables(&STRUCT), "Named structs, usable as field types."),
        opt("enum", Kind::Tables(&ENUM), "Named integer values."),
        opt("flags", Kind::Tables(&FLAGS), "Named bits."),
        opt(
            "union",
            Kind::Tables(&UNION),
            "Tagged unions: one of several layouts, selected by a tag field, a reader parameter or a type name.",
        ),
        opt("record", Kind::Tables(&RECORD), "The record types of the record stream."),
        opt(
            "param",
            Kind::Tables(&PARAM),
            "Reader parameters: values given to the decoder at run time that select union variants.",
        ),
    ],
};

pub static FORMAT: Section = Section {
    id: "format",
    what: "[format]",
    keys: &[
        req(
            "name",
            Kind::Str,
            "Short identifier of the format: lowercase letters, digits and `_`, starting with a letter or \
             `_`. Used for module, file and C prefix names.",
        ),
        opt("title", Kind::Str, "One-line human title (used in generated comments)."),
        opt("doc", Kind::Str, "Description of the format."),
        opt(
            "endian",
            Kind::Str,
            "Default byte order: \"little\" (or \"le\") or \"big\" (or \"be\"). Default \"little\".",
        ),
        opt("version", Kind::Str, "Free-form version text, shown in generated code. Has no effect on layout."),
        opt(
            "align",
            Kind::Str,
            "Alignment rule: \"packed\" (fields follow each other; the default) or \"natural\" (every number \
             of 2, 4 or 8 bytes, length prefixes included, starts at a multiple of its size counted from the \
             start of the record's payload, as CDR lays out ROS 2 messages).",
        ),
        opt(
            "string_nul",
            Kind::Bool,
            "Whether a counted string's length includes one terminating NUL that is not part of the text \
             (CDR's strings). Default false.",
        ),
        opt(
            "schema_id",
            Kind::Table(&SCHEMA_ID),
            "The format's schema id: a number that every breaking layout change must bump.",
        ),
    ],
};

pub static SCHEMA_ID: Section = Section {
    id: "schema_id",
    what: "[format.schema_id]",
    keys: &[
        req("value", Kind::Int, "The current schema id, 0..=4294967295."),
        req("name", Kind::Str, "The name of the C macro (and Rust const) that carries it: an UPPER_CASE identifier."),
        opt("field", Kind::Str, "The name of the [file_header] field that stores it."),
    ],
};

pub static FILE_HEADER: Section = Section {
    id: "file_header",
    what: "[file_header]",
    keys: &[
        opt("name", Kind::Str, "Type name; default `FileHeader`."),
        DOC,
        ENDIAN,
        req("fields", Kind::Fields, "The fields, in wire order."),
    ],
};

pub static FRAMING: Section = Section {
    id: "framing",
    what: "[framing]",
    keys: &[
        opt("name", Kind::Str, "Type name; default `RecordHeader`."),
        DOC,
        ENDIAN,
        req("fields", Kind::Fields, "The record header's fields, in wire order."),
        req("tag", Kind::Str, "The field whose value is the record's `id`: it selects the record type."),
        opt("length", Kind::Str, "The field that holds the payload length in bytes."),
        opt("timestamp", Kind::Str, "The field that holds the record's timestamp."),
        opt(
            "bounded",
            Kind::Bool,
            "`false`: do not check that every record fits the `length` field (E0304). Default `true`.",
        ),
        opt(
            "sync",
            Kind::Str,
            "The record header's first field, a const: its bytes begin every record, and readers resynchronise on them.",
        ),
        opt("checksum", Kind::Table(&CHECKSUM), "A per-record CRC in a record-header field, verified by every reader."),
        opt(
            "trailer",
            Kind::Str,
            "A struct of fixed size whose every field is a const (the file header's, or a [[struct]]): its bytes end the file, after the last record.",
        ),
    ],
};

pub static CHECKSUM: Section = Section {
    id: "checksum",
    what: "[framing.checksum]",
    keys: &[
        req("field", Kind::Str, "The record-header field that holds the CRC: an unsigned integer of the CRC's width."),
        req(
            "algorithm",
            Kind::Str,
            "\"crc-16/ccitt-false\", \"crc-16/xmodem\", \"crc-32\" (ISO-HDLC, zlib's) or \"crc-32c\" (Castagnoli).",
        ),
        opt(
            "over",
            Kind::Str,
            "\"record\": the record header without the CRC field's bytes, then the payload; \"payload\": the payload alone. Default \"record\".",
        ),
    ],
};

pub static STRUCT: Section = Section {
    id: "struct",
    what: "[[struct]]",
    keys: &[
        req("name", Kind::Str, "Type name (an identifier)."),
        DOC,
        ENDIAN,
        req("fields", Kind::Fields, "The fields, in wire order. May be empty."),
    ],
};

pub static RECORD: Section = Section {
    id: "record",
    what: "[[record]]",
    keys: &[
        req("name", Kind::Str, "The record's contract name, an identifier; conventionally `REC_UPPER_SNAKE`."),
        req("id", Kind::Int, "The value of the framing's `tag` field that announces this record. Unique."),
        DOC,
        ENDIAN,
        req("fields", Kind::Fields, "The payload, in wire order. May be empty."),
    ],
};

pub static ENUM: Section = Section {
    id: "enum",
    what: "[[enum]]",
    keys: &[
        req("name", Kind::Str, "Type name."),
        DOC,
        req("base", Kind::Str, "The integer type on the wire: `u8`..`u64` or `i8`..`i64`."),
        req("values", Kind::Tables(&ENUM_VALUE), "The named values."),
    ],
};

pub static ENUM_VALUE: Section = Section {
    id: "enum_value",
    what: "an enum value",
    keys: &[
        req("name", Kind::Str, "The value's name, an identifier."),
        req("value", Kind::Int, "The value; it must fit the enum's `base`."),
        DOC,
    ],
};

pub static FLAGS: Section = Section {
    id: "flags",
    what: "[[flags]]",
    keys: &[
        req("name", Kind::Str, "Type name."),
        DOC,
        req("base", Kind::Str, "`u8`, `u16`, `u32` or `u64`."),
        req("flags", Kind::Tables(&FLAG), "The named bits."),
    ],
};

pub static FLAG: Section = Section {
    id: "flag",
    what: "a flag",
    keys: &[
        req("name", Kind::Str, "The flag's name, an identifier."),
        req("bit", Kind::Int, "Its bit; bit 0 is the least significant."),
        DOC,
    ],
};

pub static UNION: Section = Section {
    id: "union",
    what: "[[union]]",
    keys: &[
        req("name", Kind::Str, "Type name."),
        DOC,
        ENDIAN,
        req("variants", Kind::Tables(&VARIANT), "The variants."),
    ],
};

pub static VARIANT: Section = Section {
    id: "variant",
    what: "a union variant",
    keys: &[
        req("name", Kind::Str, "Variant name: an identifier, unique within the union."),
        opt("tag", Kind::Int, "The tag value that selects it (a union selected by a tag field or a reader parameter)."),
        opt("match", Kind::StrOrStrs, "The exact type names that select it (a union selected by a type name)."),
        opt("prefix", Kind::Str, "Every type name that starts with it selects it (a union selected by a type name)."),
        opt(
            "default",
            Kind::Bool,
            "`true`: every type name no other variant selects (a union selected by a type name).",
        ),
        DOC,
        opt("fields", Kind::Fields, "The variant's body, in wire order; absent or empty for a variant with no body."),
    ],
};

pub static PARAM: Section = Section {
    id: "param",
    what: "[[param]]",
    keys: &[
        req("name", Kind::Str, "An identifier, unique among the parameters."),
        req("type", Kind::Str, "An integer type (`u8`..`u64`, `i8`..`i64`) or an [[enum]]."),
        opt("doc", Kind::Str, "Where the value comes from."),
    ],
};

/// A data field; a `fields` entry with `pad` is a [`PADDING`] entry instead.
pub static FIELD: Section = Section {
    id: "field",
    what: "a field",
    keys: &[
        req("name", Kind::Str, "Field name, unique within its struct or variant."),
        req("type", Kind::Str, "A type expression: `u16`, `f32[3]`, `bytes[6]`, `string`, `Vec3`, `u8[]`, ..."),
        opt(
            "count",
            Kind::Str,
            "Length rule of a `string`, `bytes` or `T[]`: the integer type of its element-count prefix, or \"rest\".",
        ),
        opt(
            "size",
            Kind::Str,
            "Length rule of a `string`, `bytes` or `T[]`: the integer type of its byte-size prefix.",
        ),
        opt("tag", Kind::Str, "The earlier field whose value selects the variant of this union-typed field."),
        opt("param", Kind::Str, "The reader parameter whose value selects the variant of this union-typed field."),
        opt(
            "width",
            Kind::Str,
            "\"<field>[lo..hi]\": the integer takes bits lo..hi of an earlier field, plus one, bytes on the wire.",
        ),
        opt("endian", Kind::Str, "Byte order of this field's numbers: \"little\" (or \"le\") or \"big\" (or \"be\")."),
        opt("doc", Kind::Str, "Description (generated doc comments)."),
        opt("unit", Kind::Str, "Physical unit, free text (\"m/s\", \"rad\"); documentation only."),
        opt(
            "const",
            Kind::IntOrStr,
            "A value the field must always hold: an integer, or a string whose bytes are the value.",
        ),
    ],
};

/// A padding entry `{ pad = N }`.
pub static PADDING: Section = Section {
    id: "padding",
    what: "a padding entry",
    keys: &[req("pad", Kind::Int, "N reserved zero bytes."), opt("doc", Kind::Str, "Description.")],
};

/// The JSON Schema (draft-07) of schema files, as pretty-printed JSON text ending in a newline:
/// `docs/logspec-schema.json`.
pub fn json_schema() -> String {
    let definitions = [&STRUCT, &ENUM, &ENUM_VALUE, &FLAGS, &FLAG, &UNION, &VARIANT, &RECORD, &PARAM, &FIELD, &PADDING];
    let mut root = vec![
        ("$schema", J::str("http://json-schema.org/draft-07/schema#")),
        ("$id", J::str(JSON_SCHEMA_URL)),
        ("title", J::str("logspec schema")),
        (
            "description",
            J::str(
                "A logspec schema: one TOML file that describes one binary log format. Reference: \
                 docs/schema-language.md in the logspec repository.",
            ),
        ),
    ];
    root.extend(object(&ROOT));
    root.push(("definitions", J::Obj(definitions.iter().map(|s| (s.id, J::Obj(object(s)))).collect())));
    let mut out = String::new();
    J::Obj(root).write(&mut out, 0);
    out.push('\n');
    out
}

/// The members of a section's object schema.
fn object(section: &Section) -> Vec<(&'static str, J)> {
    let properties = section.keys.iter().map(|k| (k.name, property(k))).collect();
    let required: Vec<J> = section.keys.iter().filter(|k| k.required).map(|k| J::str(k.name)).collect();
    let mut members = vec![("type", J::str("object")), ("properties", J::Obj(properties))];
    if !required.is_empty() {
        members.push(("required", J::Arr(required)));
    }
    members.push(("additionalProperties", J::Bool(false)));
    members
}

/// The schema of one key's value.
fn property(key: &Key) -> J {
    let reference = |s: &Section| J::Obj(vec![("$ref", J::Str(format!("#/definitions/{}", s.id)))]);
    let mut members = vec![("description", J::str(key.doc))];
    match key.kind {
        Kind::Str => members.push(("type", J::str("string"))),
        Kind::Int => members.push(("type", J::str("integer"))),
        Kind::Bool => members.push(("type", J::str("boolean"))),
        Kind::IntOrStr => members.push(("type", J::Arr(vec![J::str("integer"), J::str("string")]))),
        Kind::StrOrStrs => {
            members.push(("type", J::Arr(vec![J::str("string"), J::str("array")])));
            members.push(("items", J::Obj(vec![("type", J::str("string"))])));
        }
        // A table is written out in place: each is the value of one key only.
        Kind::Table(s) => members.extend(object(s)),
        Kind::Tables(s) => {
            members.push(("type", J::str("array")));
            members.push(("items", reference(s)));
        }
        Kind::Fields => {
            members.push(("type", J::str("array")));
            members.push(("items", J::Obj(vec![("anyOf", J::Arr(vec![reference(&FIELD), reference(&PADDING)]))])));
        }
    }
    J::Obj(members)
}

/// Just enough JSON to write the schema: objects keep their members' order.
enum J {
    Str(String),
    Bool(bool),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    fn str(s: &str) -> J {
        J::Str(s.to_string())
    }

    /// Writes the value indented by two spaces a level; an array of strings stays on one line.
    fn write(&self, out: &mut String, level: usize) {
        let indent = |out: &mut String, level: usize| out.push_str(&"  ".repeat(level));
        match self {
            J::Str(s) => json::string(out, s),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Arr(items) if items.iter().all(|i| matches!(i, J::Str(_))) => {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push_str(", ");
                    }
                    item.write(out, level);
                }
                out.push(']');
            }
            J::Arr(items) => {
                out.push_str("[\n");
                for (n, item) in items.iter().enumerate() {
                    indent(out, level + 1);
                    item.write(out, level + 1);
                    out.push_str(if n + 1 < items.len() { ",\n" } else { "\n" });
                }
                indent(out, level);
                out.push(']');
            }
            J::Obj(members) => {
                out.push_str("{\n");
                for (n, (name, value)) in members.iter().enumerate() {
                    indent(out, level + 1);
                    json::string(out, name);
                    out.push_str(": ");
                    value.write(out, level + 1);
                    out.push_str(if n + 1 < members.len() { ",\n" } else { "\n" });
                }
                indent(out, level);
                out.push('}');
            }
        }
    }
}
