//! logspec: describe a binary log format once, in a TOML schema, and get readers, writers,
//! C headers and tools from it.
//!
//! This facade re-exports the runtime (`logspec::runtime`) and the schema IR (`logspec::ir`),
//! and holds the formats bundled with logspec, generated at build time from `schemas/`. Two
//! features, off by default, add build-time weight: `derive` (`#[derive(Record)]`) and `codegen`
//! (`logspec::codegen`, the schema compiler's back ends).
//!
//! # Any log, one face
//!
//! [`log::open`] opens a log of any format logspec reads (USVLOG, RLOG, WPILOG, ROS bags,
//! CARLA recordings, or a log of a TOML schema with a `[framing]`), detecting its format, and
//! gives a [`log::Log`]: its summary ([`log::Log::info`]), its records in file order
//! ([`log::Log::records`]) and the samples of chosen channels and times ([`log::Log::scan`]),
//! each channel with its IR type, units and JSON Schema. No format is named:
//!
//! ```
//! use logspec::log::{Channel, Error, Open, Select, Samples};
//! use logspec::value::Value;
//!
//! /// Counts the samples of each channel.
//! #[derive(Default)]
//! struct Count(Vec<(String, u64)>);
//!
//! impl Samples for Count {
//!     fn channel(&mut self, _id: usize, c: &Channel) -> Result<(), Error> {
//!         self.0.push((c.name.clone(), 0));
//!         Ok(())
//!     }
//!     fn sample(&mut self, id: usize, _t_ns: u64, _value: &Value) -> Result<(), Error> {
//!         self.0[id].1 += 1;
//!         Ok(())
//!     }
//! }
//!
//! # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
//! # if !std::path::Path::new(dir).is_dir() { return Ok(()) }
//! for file in ["usvlog/step.usvlog", "rlog/gen_akit_head_r2_alltypes.rlog", "wpilog/gen_wpilib_structs.wpilog"] {
//!     # let file = format!("{dir}/{file}");
//!     let log = logspec::log::open(file.as_ref(), &Open::default())?;
//!     let mut count = Count::default();
//!     let outcome = log.scan(&Select::default(), &mut count)?;
//!     assert!(outcome.fault.is_none() && !count.0.is_empty());
//! }
//! # Ok::<(), Error>(())
//! ```
//!
//! `examples/channels.rs` prints each channel's type, units and rows; `logspec-engine` turns
//! the same scan into Arrow tables, Parquet, CSV, MCAP and plots.
//!
//! # Generated readers and writers
//!
//! Writing and reading a USVLOG file (a writer buffers; [`finish`](runtime::Writer::finish)
//! writes out the rest and reports any error, which dropping the writer cannot):
//!
//! ```
//! use logspec::formats::usvlog::{FileHeader, RecSensorGyro, Usvlog, UsvlogRecord, FW_MODEL_SCHEMA};
//! use logspec::runtime::{Event, Reader, Writer};
//!
//! let header = FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 0 };
//! let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header)?;
//! w.write(1_000, &RecSensorGyro { z_gyro: 0.25, b_g_est: 0.0, valid: 1 }.into())?;
//! let bytes: Vec<u8> = w.finish()?;
//!
//! let mut reader = Reader::<_, Usvlog>::new(&bytes[..])?;
//! while let Some(event) = reader.next_event() {
//!     if let Event::Record { raw, record: UsvlogRecord::RecSensorGyro(g) } = event? {
//!         assert_eq!((raw.header.timestamp, g.z_gyro), (Some(1_000), 0.25));
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every generated type also has a borrowed *view* (`RecNavSolutionRef<'a>` beside
//! `RecNavSolution`), checked once when it is made: numbers by value, strings as `&str`, byte
//! strings as `&[u8]`, number arrays decoded element by element on access. A view costs no
//! allocation; `to_owned()` gives the owned value and `as_bytes()` the bytes it was made from:
//!
//! ```
//! use logspec::formats::usvlog::{FileHeader, RecNavSolution, Usvlog, UsvlogRecordRef, FW_MODEL_SCHEMA};
//! use logspec::runtime::{SliceReader, Writer};
//!
//! let nav = RecNavSolution { x: 1.5, y: -2.0, psi: 0.0, v: 3.0, r: 0.0, b_g: 0.0 };
//! let mut w = Writer::<_, Usvlog>::new(Vec::new(), &FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 0 })?;
//! w.write(1_000, &nav.clone().into())?;
//! let bytes = w.finish()?;
//!
//! let (_header, records) = SliceReader::<Usvlog>::new(&bytes)?;
//! for raw in records {
//!     let raw = raw?;
//!     // `None` for a record type this schema does not know.
//!     if let Some(Ok(UsvlogRecordRef::RecNavSolution(view))) = UsvlogRecordRef::decode(raw.header.tag, raw.payload) {
//!         assert_eq!((view.x, view.y), (1.5, -2.0));
//!         assert_eq!(view.to_owned(), nav);
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cargo features
//!
//! - `derive`: `logspec::Record`, `#[derive(Record)]` on hand-written structs (builds `syn` and
//!   the schema compiler as a procedural macro).
//! - `codegen`: `logspec::codegen`, the schema compiler's back ends (Rust, C, Python, docs).
//!
//! Neither changes the formats; both add build time only.
// `unsafe` only where ARCHITECTURE.md names it (an `#[allow(unsafe_code)]` on the item, its reason beside it).
#![deny(unsafe_code)]
#![cfg_attr(
    feature = "derive",
    doc = r#"

`#[derive(Record)]` gives a hand-written struct the same encoder and decoder (the attributes
are listed in the docs of `logspec_codegen::derive`; this needs the `derive` feature):

```
use logspec::runtime::{Decode, Encode, Record as _};

#[derive(logspec::Record, Debug, PartialEq)]
#[record(id = 20, little, magic = b"PG")]
struct Ping {
    seq: u32,
    #[record(count = u8)]
    note: String,
}

let p = Ping { seq: 7, note: "hi".into() };
let bytes = p.to_bytes()?;
assert_eq!(bytes, b"PG\x07\0\0\0\x02hi");
assert_eq!(Ping::decode_exact(&bytes)?, p);
assert_eq!(Ping::ID, 20);
# Ok::<(), Box<dyn std::error::Error>>(())
```

An enum with data derives a tagged union, selected by a tag that precedes it; named consts
are written and checked like magic:

```
use logspec::runtime::{Decode, Encode};

// A field's hand-written type is held by value in the enclosing struct's view (`OrderRef`), so it
// is `Clone`, `Debug` and `PartialEq`.
#[derive(logspec::Record, Clone, Debug, PartialEq)]
enum Command {
    #[record(tag = 1)]
    Stop,
    #[record(tag = 2)]
    Turn { degrees: i16 },
}

#[derive(logspec::Record, Debug, PartialEq)]
#[record(id = 21, const(version = 2u8))]
struct Order {
    #[record(tag(kind: u8))]
    cmd: Command,
}

let o = Order { cmd: Command::Turn { degrees: -90 } };
let bytes = o.to_bytes()?;
assert_eq!(bytes, b"\x02\x02\xa6\xff"); // version 2, tag 2, -90 as i16le
assert_eq!(Order::decode_exact(&bytes)?, o);
# Ok::<(), Box<dyn std::error::Error>>(())
```
"#
)]

#[cfg(feature = "codegen")]
pub use logspec_codegen as codegen;
#[cfg(feature = "derive")]
pub use logspec_derive::Record;
pub use logspec_ir as ir;
pub use logspec_runtime as runtime;

pub mod dynamic;
pub mod encode;
pub mod formats;
#[doc(hidden)]
pub mod fuzz;
pub mod json;
pub mod log;
pub mod project;
pub mod tape;
pub mod value;
