//! The native module of the Python package `logspec` (`logspec._logspec`).
//!
//! Each submodule file registers its classes and functions in the module `_logspec`; the Python side
//! (`py/logspec/__init__.py`) re-exports them and documents them in the `.pyi` stubs.

// `unsafe` only where ARCHITECTURE.md names it (an `#[allow(unsafe_code)]` on the item, its reason beside it).
#![deny(unsafe_code)]
use pyo3::prelude::*;

mod args;
#[cfg(feature = "datafusion")]
mod datafusion;
mod errors;
mod file;
mod records;
mod scan;
mod tables;
mod usvlog;
mod writers;

/// The native module. Python code imports `logspec`, not this.
#[pymodule]
fn _logspec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    file::register(m)?;
    tables::register(m)?;
    scan::register(m)?;
    #[cfg(feature = "datafusion")]
    datafusion::register(m)?;
    writers::register(m)?;
    usvlog::register(m)?;
    Ok(())
}
