//! Unit tests of the schema reader.

use super::*;
use crate::encode::encode_fields;
use crate::value::Value;

/// Record types are found by their tag below the dense table's end, at it and past it (by
/// search), and a tag the schema does not name is unknown on both sides.
#[test]
fn record_types_are_found_on_both_sides_of_the_dense_table() {
    let known = [0u32, 7, 255, 256, 300, 70_000];
    let mut toml = String::from(
        "[format]\nname = \"tags\"\nendian = \"little\"\n\n[file_header]\nfields = [{ name = \"magic\", type = \"bytes[2]\", const = \"TG\" }]\n\n\
         [framing]\ntag = \"kind\"\nlength = \"len\"\nfields = [{ name = \"kind\", type = \"u32\" }, { name = \"len\", type = \"u16\" }]\n",
    );
    for id in known {
        toml.push_str(&format!(
            "\n[[record]]\nname = \"R{id}\"\nid = {id}\nfields = [{{ name = \"v\", type = \"u16\" }}]\n"
        ));
    }
    let schema = logspec_ir::compile_str("tags.toml", &toml).expect("the schema compiles");
    let format = Arc::new(SchemaFormat::new(schema, Vec::new()).expect("a framed schema"));
    let tags = [256u32, 0, 70_000, 8, 255, 257, 7, 300, 69_999];
    // The file written through the IR interpreter's encoder, from the schema's own layouts.
    let schema = format.schema();
    let fields = |id| &schema.strukt(id).fields;
    let mut file = Vec::new();
    encode_fields(schema, fields(schema.file_header.expect("a file header")), &Value::Object(Vec::new()), &mut file)
        .expect("the file header encodes");
    let header = schema.framing.as_ref().expect("a framing").header;
    for t in tags {
        let head = [("kind".to_string(), Value::UInt(t.into())), ("len".to_string(), Value::UInt(2))];
        encode_fields(schema, fields(header), &Value::Object(head.to_vec()), &mut file).expect("a record header");
        // The payload: any two bytes (a record's `v: u16`, or an unknown record's body).
        file.extend([0u8; 2]);
    }
    let mut reader = format.read(&file[..]).expect("the header reads");
    let mut names = Vec::new();
    while let Some(rec) = reader.next_record() {
        let rec = rec.expect("every record frames");
        names.push(rec.value.as_ref().map(|v| v.name().to_string()));
    }
    let expected: Vec<Option<String>> = tags.iter().map(|t| known.contains(t).then(|| format!("R{t}"))).collect();
    assert_eq!(names, expected);
}
