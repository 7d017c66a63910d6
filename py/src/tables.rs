//! Arrow tables handed to Python without copying: a schema and record batches behind the Arrow
//! PyCapsule interface (`__arrow_c_stream__`), which `pyarrow.table()`,
//! `pyarrow.RecordBatchReader.from_stream()` and polars take. The batches' buffers are shared
//! with the consumer, not copied.

use std::ffi::CString;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowStream>()
}

/// One table: its schema and batches. Each `__arrow_c_stream__` call exports a new stream over
/// the same (shared) batches.
#[pyclass(module = "logspec._logspec", frozen)]
pub struct ArrowStream {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl ArrowStream {
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        ArrowStream { schema, batches }
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow C stream of the table, as a PyCapsule named `arrow_array_stream`. A requested
    /// schema is not honoured (the table has one schema); consumers cast if they need to.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(self.batches.clone().into_iter().map(Ok), self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out of the capsule (and marks it released); a capsule
        // that was never consumed releases it when it is dropped (FFI_ArrowArrayStream's Drop).
        PyCapsule::new(py, stream, Some(CString::new("arrow_array_stream").expect("no NUL in the name")))
    }

    /// How many rows the table has.
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}
