//! The tests that hold logspec to independent references on the machine: bash (the GitHub
//! Action's steps), C compilers (gcc, clang, g++, the ARM and PowerPC cross compilers) and
//! emulators (qemu), WPILib's and Foxglove's Python readers, pymavlink's DFReader, pyarrow, DuckDB, Polars, DataFusion
//! and Spark, git, taplo, Python's jsonschema (the JSON Schema of schema files), maturin and
//! pre-commit (the command's wheel and its hooks). One module per area, one binary, without
//! libtest's harness: each trial says what it needs, and a trial whose tool is missing is
//! reported as ignored (under `CI=true`, as failed), never as passed (`common/tools.rs`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/scratch.rs"]
mod scratch;
#[path = "../common/tools.rs"]
mod tools;

mod action;
mod c_cdr;
mod c_checksum;
mod c_codec;
mod c_roundtrip;
mod cross_language;
mod dataflash_dfreader;
mod firmware;
mod foxglove_python;
mod json_schema;
mod parquet;
mod project;
mod python_module;
mod ros2_mcap;
mod wheel;
mod wpilog_wpiutil;
mod wpistruct_mcap;

fn main() {
    let trials = [
        ("action", action::trials()),
        ("c_cdr", c_cdr::trials()),
        ("c_checksum", c_checksum::trials()),
        ("c_codec", c_codec::trials()),
        ("c_roundtrip", c_roundtrip::trials()),
        ("cross_language", cross_language::trials()),
        ("dataflash_dfreader", dataflash_dfreader::trials()),
        ("firmware", firmware::trials()),
        ("foxglove_python", foxglove_python::trials()),
        ("json_schema", json_schema::trials()),
        ("parquet", parquet::trials()),
        ("project", project::trials()),
        ("python_module", python_module::trials()),
        ("ros2_mcap", ros2_mcap::trials()),
        ("wheel", wheel::trials()),
        ("wpilog_wpiutil", wpilog_wpiutil::trials()),
        ("wpistruct_mcap", wpistruct_mcap::trials()),
    ]
    .into_iter()
    .flat_map(|(module, trials)| trials.into_iter().map(move |t| t.with_kind(module)))
    .collect();
    // Two trials per core: much of a trial's time is spent waiting on the programs it runs.
    // On two cores, two at a time took 441 s (the trials one at a time, 590 s in all); four at
    // a time, 291 s.
    let conclusion = tools::conclude(trials, 2);
    parquet::cleanup();
    conclusion.exit()
}
