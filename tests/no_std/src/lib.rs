//! The generated USVLOG and RLOG code in a `#![no_std]` crate, against `logspec-runtime` with
//! `default-features = false`: `cargo build -p logspec-no-std` fails if generated code or the
//! framed-format traits need `std`, and, without this crate's `alloc` feature (the runtime then
//! has neither `alloc` nor `std`, and this crate cannot allocate), if the views or the fixed-size
//! types need an allocator. The build script generates owned variable-size types only with
//! `alloc` (`Builder::alloc`). The functions here decode from byte slices through the generated
//! views and the format's `FramedFormat` implementation, without allocating; `tests/decode.rs`
//! runs them on the sample files.

#![forbid(unsafe_code)]
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;

use logspec_runtime::{Cursor, Decode, DecodeError, Endian, FramedFormat, Framing, View};

#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod usvlog {
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}

#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod rlog {
    include!(concat!(env!("OUT_DIR"), "/rlog.rs"));
}

// CARLA and WPILOG are built too, so that the generated code of every bundled schema is held to
// `no_std` with and without `alloc`.
#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod carla {
    include!(concat!(env!("OUT_DIR"), "/carla.rs"));
}

#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod wpilog {
    include!(concat!(env!("OUT_DIR"), "/wpilog.rs"));
}

// And the code generator's test schemas, which use every construct of the schema language.
#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod everything {
    include!(concat!(env!("OUT_DIR"), "/everything.rs"));
}

#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod allkinds {
    include!(concat!(env!("OUT_DIR"), "/allkinds.rs"));
}

// ROS `.msg` definitions (`Builder::compile_msgs`) and WPILib struct schemas
// (`Builder::compile_struct_schemas`), generated with the same `alloc` choice.
#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod demo_msgs {
    include!(concat!(env!("OUT_DIR"), "/demo_msgs.rs"));
}

#[allow(clippy::all, dead_code, non_upper_case_globals)]
pub mod geometry {
    include!(concat!(env!("OUT_DIR"), "/geometry.rs"));
}

/// Calls `f` with the tag and the view of every record of a USVLOG file, in order, and returns
/// how many there were. Stops at the first error: a file header or record header that does not
/// decode, a payload cut by the end of `bytes`, or a payload that does not decode.
pub fn usvlog_records<'a>(
    bytes: &'a [u8],
    mut f: impl FnMut(u64, usvlog::UsvlogRecordRef<'a>),
) -> Result<usize, DecodeError> {
    type F = usvlog::Usvlog;
    let mut c = Cursor::new(bytes);
    <F as FramedFormat>::FileHeader::decode(&mut c, Endian::Little)?;
    let mut n = 0;
    while !c.is_empty() {
        let at = c.position();
        let h = F::parse_record_header(c.rest()).map_err(|e| e.at(at))?;
        c.take(F::RECORD_HEADER_SIZE)?;
        let len = usize::try_from(h.len).map_err(|_| DecodeError::eof(usize::MAX, c.remaining()).at(c.position()))?;
        let payload = c.take(len)?;
        if let Some(r) = usvlog::UsvlogRecordRef::decode(h.tag, payload) {
            f(h.tag, r.map_err(|e| e.at(at + F::RECORD_HEADER_SIZE))?);
        }
        n += 1;
    }
    Ok(n)
}

/// The messages of an R1 RLOG file, as views: the revision byte, then `f` with each message.
pub fn rlog_r1_messages<'a>(bytes: &'a [u8], mut f: impl FnMut(rlog::R1MessageRef<'a>)) -> Result<usize, DecodeError> {
    let mut c = Cursor::new(bytes);
    let header = rlog::FileHeaderRef::decode_view(&mut c, Endian::Big)?;
    if header.revision != 1 {
        return Err(DecodeError::new(logspec_runtime::DecodeErrorKind::InvalidValue {
            value: i128::from(header.revision),
        })
        .in_type("FileHeader"));
    }
    let mut n = 0;
    while !c.is_empty() {
        f(rlog::R1MessageRef::decode_view(&mut c, Endian::Big)?);
        n += 1;
    }
    Ok(n)
}

/// Every combination of CARLA's reader-parameter values (each header version the schema knows,
/// with each wheel layout), for views that borrow their parameters for as long as the input.
const CARLA_SETS: usize = carla::RecorderVersion::ALL.len() * carla::WheelSize::ALL.len();
static CARLA_PARAMS: [[i128; carla::PARAMS.len()]; CARLA_SETS] = {
    let wheels = carla::WheelSize::ALL.len();
    let mut t = [[0i128; carla::PARAMS.len()]; CARLA_SETS];
    let mut i = 0;
    while i < CARLA_SETS {
        t[i][carla::PARAM_VERSION] = carla::RecorderVersion::ALL[i / wheels].0 as i128;
        t[i][carla::PARAM_WHEEL_SIZE] = carla::WheelSize::ALL[i % wheels].0 as i128;
        i += 1;
    }
    t
};

/// Calls `f` with the id and the view of every packet of a CARLA recording, through the format's
/// [`Framing`] (which a format with a framing has with or without `alloc`; without it, CARLA has
/// no owned records and so no `FramedFormat`) and the info header's view. A PhysicsControl packet
/// is viewed with each wheel layout until one fills it. Stops at the first error.
pub fn carla_packets<'a>(
    bytes: &'a [u8],
    mut f: impl FnMut(u64, carla::CarlaRecordRef<'a>),
) -> Result<usize, DecodeError> {
    type F = carla::Carla;
    let mut c = Cursor::new(bytes);
    let header = carla::InfoHeaderRef::decode_view(&mut c, Endian::Little)?;
    let version = carla::RecorderVersion::ALL.iter().position(|v| v.0 == header.version).ok_or_else(|| {
        DecodeError::new(logspec_runtime::DecodeErrorKind::InvalidValue { value: i128::from(header.version) })
            .in_type("InfoHeader")
    })?;
    let sets = &CARLA_PARAMS[version * carla::WheelSize::ALL.len()..(version + 1) * carla::WheelSize::ALL.len()];
    let mut n = 0;
    while !c.is_empty() {
        let at = c.position();
        let h = F::parse_record_header(c.rest()).map_err(|e| e.at(at))?;
        c.take(F::RECORD_HEADER_SIZE)?;
        let len = usize::try_from(h.len).map_err(|_| DecodeError::eof(usize::MAX, c.remaining()).at(c.position()))?;
        let payload = c.take(len)?;
        let mut last = None;
        for params in sets {
            match carla::CarlaRecordRef::decode_with(h.tag, payload, params) {
                Some(Ok(r)) => {
                    last = Some(Ok(r));
                    break;
                }
                other => last = other,
            }
        }
        if let Some(r) = last {
            f(h.tag, r.map_err(|e| e.at(at + F::RECORD_HEADER_SIZE))?);
        }
        n += 1;
    }
    Ok(n)
}
