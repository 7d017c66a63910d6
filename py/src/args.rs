//! Arguments as Python passes them: a file path is what `os.fsdecode` accepts (`str`, `bytes`
//! or an `os.PathLike` of either), as Python's own file functions take it; anything else is a
//! `TypeError` that names the argument (pyo3 adds `argument 'NAME': `).

use std::path::PathBuf;

use pyo3::prelude::*;

/// A path argument (`#[pyo3(from_py_with = args::path)]`).
pub fn path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    // `os.fsdecode` turns bytes into the str Python's file functions would use (undecodable
    // bytes as surrogates), which becomes the same bytes again as a `PathBuf`.
    obj.py().import("os")?.call_method1("fsdecode", (obj,))?.extract()
}

/// An optional path argument: `None`, or as [`path`].
pub fn optional_path(obj: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    if obj.is_none() {
        return Ok(None);
    }
    path(obj).map(Some)
}
