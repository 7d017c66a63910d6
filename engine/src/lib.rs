//! A log's samples as Arrow tables, typed from the IR: what the `logspec` command and the Python
//! package share above the library's [`logspec::log`].
//!
//! - [`tables`]: every table of a log in memory as record batches ([`tables::read`]), the
//!   Python package's `tables()`; [`columns`] types Arrow columns from IR types.
//! - [`parquet`]: logs into a Parquet dataset, one table per channel (`export --parquet`).
// `unsafe` only where ARCHITECTURE.md names it (an `#[allow(unsafe_code)]` on the item, its reason beside it).
#![deny(unsafe_code)]

pub mod columns;
pub mod parquet;
pub mod tables;

pub use logspec::log::Error;
