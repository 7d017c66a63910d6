//! Prints the JSON Schema of schema files (`logspec_ir::language::json_schema`). The checked-in
//! copy is regenerated with
//!
//! ```text
//! cargo run -p logspec-ir --example json_schema > docs/logspec-schema.json
//! ```
//!
//! and `ir/tests/language.rs` fails while the two differ.

fn main() {
    print!("{}", logspec_ir::language::json_schema());
}
