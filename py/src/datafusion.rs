//! DataFusion's door (`logspec.datafusion_table`; docs/engines.md): one table of a set of logs as
//! a DataFusion table provider (`logspec_datafusion::LogTable`), handed to the `datafusion`
//! Python package through its FFI table-provider capsule (`__datafusion_table_provider__`, a
//! PyCapsule named `datafusion_table_provider` holding a `datafusion_ffi` `FFI_TableProvider`),
//! at the DataFusion major of the `datafusion` package pinned in py/requirements-test.txt.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use logspec_datafusion::{LogError, LogTable, OnError};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DataFusionTable>()?;
    Ok(())
}

/// One table of a set of logs as a DataFusion table: `SessionContext.register_table(name, t)`.
#[pyclass(module = "logspec._logspec", frozen)]
pub struct DataFusionTable {
    table: LogTable,
}

/// A fault kept under `on_error="warn"`, or a warning of a log's reading, as a `LogspecWarning`
/// (written as unraisable when the warnings filter makes it an error: the reading thread has no
/// caller to raise it to).
fn warn(py: Python<'_>, e: &LogError) {
    let mut fault = e.fault.clone();
    fault.message = e.to_string();
    let done = errors::warning(py, &fault).and_then(|w| py.import("warnings")?.call_method1("warn", (w,)).map(drop));
    if let Err(err) = done {
        err.write_unraisable(py, None);
    }
}

#[pymethods]
impl DataFusionTable {
    #[new]
    #[pyo3(signature = (inputs, table, format = None, schema = None, on_error = "warn"))]
    fn new(
        py: Python<'_>,
        inputs: Vec<PathBuf>,
        table: String,
        format: Option<&str>,
        #[pyo3(from_py_with = crate::args::optional_path)] schema: Option<PathBuf>,
        on_error: &str,
    ) -> PyResult<DataFusionTable> {
        let on_error = match on_error {
            "raise" => OnError::Raise,
            "warn" => OnError::Keep,
            other => return Err(PyValueError::new_err(format!("on_error must be 'raise' or 'warn', not {other:?}"))),
        };
        let how = crate::scan::how(format, schema)?;
        let table = py
            .detach(|| LogTable::with_options(&inputs, &table, &how, on_error))
            .map_err(|e| errors::from_cli(py, &e, ""))?;
        // The inputs that are not logs, now; a log's fault when its reading ends, from its thread.
        for e in table.faults() {
            warn(py, &e);
        }
        // What did not stop a log's reading (a record skipped, a value kept as hex) warns too,
        // as `scan()` and `tables()` warn of it.
        let table = table
            .with_on_fault(Arc::new(|e: &LogError| Python::attach(|py| warn(py, e))))
            .with_on_warning(Arc::new(|e: &LogError| Python::attach(|py| warn(py, e))));
        Ok(DataFusionTable { table })
    }

    /// The logs, as `[(file, log)]`.
    #[getter]
    fn logs(&self) -> Vec<(PathBuf, String)> {
        self.table.logs().iter().map(|l| (l.file.clone(), l.log.clone())).collect()
    }

    /// The FFI table provider, for the session (or logical codec) `session` that DataFusion hands.
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = logical_codec(&session)?;
        let provider = FFI_TableProvider::new_with_ffi_codec(Arc::new(self.table.clone()), true, None, codec);
        PyCapsule::new(py, provider, Some(c"datafusion_table_provider".into()))
    }
}

/// The session's logical extension codec: its `__datafusion_logical_extension_codec__()` capsule,
/// or `session` itself when DataFusion hands the capsule.
#[allow(unsafe_code)] // A capsule checked to be named `datafusion_logical_extension_codec` holds one (ARCHITECTURE.md).
fn logical_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    const NAME: &std::ffi::CStr = c"datafusion_logical_extension_codec";
    let attr = "__datafusion_logical_extension_codec__";
    let capsule = if session.hasattr(attr)? { session.getattr(attr)?.call0()? } else { session.clone() };
    let capsule = capsule
        .cast::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err("DataFusion handed no logical extension codec capsule"))?;
    let ptr = capsule.pointer_checked(Some(NAME))?.cast::<FFI_LogicalExtensionCodec>();
    // SAFETY: `pointer_checked` checked the capsule's name and that the pointer is not null;
    // DataFusion stores an `FFI_LogicalExtensionCodec` under that name, alive as long as the capsule.
    let codec = unsafe { ptr.as_ref() };
    Ok(codec.clone())
}
