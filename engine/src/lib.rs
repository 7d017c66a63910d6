//! What the `logspec` command and the Python package do with a log, above the library's
//! [`logspec::log`] (which opens any log and scans its samples): its samples as Arrow tables
//! typed from the IR, and its exports. Each reads a log through [`logspec::log::Log::scan`] and
//! names no format.
//!
//! - [`tables`]: every table of a log in memory as record batches ([`tables::read`]), the
//!   Python package's `tables()`; [`columns`] types Arrow columns from IR types.
//! - [`parquet`]: logs into a Parquet dataset, one table per channel (`export --parquet`).
//! - [`index`]: the time indexes of logs on disk (`logspec index`, and the scans that write them).
//! - [`logs`]: the logs named by files, directories and glob patterns, each with its `log=` name.
//! - [`stream`]: one table of many logs as a stream of record batches, with the projection, time
//!   window and set of logs pushed down: what the query engines (Polars, DuckDB, Spark) read.
//! - [`csv`]: one CSV file per channel, or one time-aligned table (`export --csv`).
//! - `mcap` (feature `mcap`): a log as an MCAP file for Foxglove (`convert -o x.mcap`).
//! - `plot` (feature `plot`): fields over time as PNG or SVG (`plot`).
//! - [`output`]: output files that never overwrite an input and appear only when complete.
// `unsafe` only where ARCHITECTURE.md names it (an `#[allow(unsafe_code)]` on the item, its reason beside it).
#![deny(unsafe_code)]

pub mod columns;
pub mod csv;
pub mod index;
pub mod logs;
#[cfg(feature = "mcap")]
pub mod mcap;
pub mod names;
pub mod output;
pub mod parquet;
#[cfg(feature = "plot")]
pub mod plot;
pub mod stream;
pub mod tables;

pub use logspec::log::Error;
