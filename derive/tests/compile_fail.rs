//! The derive's compile-fail diagnostics: each `tests/ui/*.rs` must fail to compile with the
//! message (and the span) of its `.stderr` file.
//!
//! They live in this crate, not with the workspace's other tests, because trybuild checks each
//! case in a project with the dependencies of the package that runs it: here the derive and the
//! runtime, rather than everything the command's tests pull in (Arrow, Parquet, SQLite...).

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
