//! CARLA recorder logs (`client.start_recorder`), UE4 layout of CARLA 0.9.4 to 0.9.16.
//!
//! Every packet layout is generated from `schemas/carla.toml`, including the two that depend on
//! the recording (reader parameters of the schema): the EventAdd attribute type numbering of
//! header version 2, and the 36- or 48-byte PhysicsControl wheels. This module adds what a schema
//! cannot say:
//! - [`Reader`]: the info header, then packets, or whole [`Frame`]s, from any `Read` in bounded
//!   memory, on the runtime's framed reader; [`SliceReader`] the same over bytes in memory,
//!   without copying. Packets come as generated views ([`PacketRef`], `next_packet_ref`) or
//!   owned ([`Packet`], `next_packet`); unknown ids and packets whose decoded length differs from
//!   their `size` are kept raw and reported, never fatal; UE5 (CARLA 0.10) recordings are
//!   recognised and refused;
//! - [`Writer`]: files CARLA's replayer accepts, with the recorder's FrameStart duration patching.

/// The schema the packet types were generated from (`schemas/carla.toml`), for tools that need
/// what only the schema says (units, docs).
pub const SCHEMA_TOML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("LOGSPEC_SCHEMAS"), "/carla.toml"));

mod generated {
    #![allow(clippy::all)]
    // Enum values keep CARLA's own names (`ActorType::Vehicle`, `TrafficLightState::Green`).
    #![allow(non_upper_case_globals)]
    include!(concat!(env!("OUT_DIR"), "/carla.rs"));
}
mod reader;
mod writer;

pub use generated::*;
pub use reader::{
    Body, BodyRef, CarlaError, CarlaErrorKind, Frame, FrameState, Packet, PacketRef, Reader, SliceReader,
    KNOWN_VERSIONS, PACKET_HEADER,
};
pub use writer::{CarlaWriteError, Writer};

/// The raw attribute type byte of an EventAdd attribute, as stored (its numbering depends on the
/// header version).
pub fn attribute_type_byte(t: &AttributeType) -> u8 {
    match t {
        AttributeType::V1 { r#type } => r#type.0,
        AttributeType::V2 { r#type } => r#type.0,
    }
}

/// [`attribute_type_byte`] of a view.
pub fn attribute_type_byte_ref(t: &AttributeTypeRef) -> u8 {
    match t {
        AttributeTypeRef::V1 { r#type } => r#type.0,
        AttributeTypeRef::V2 { r#type } => r#type.0,
    }
}

/// The name of packet id `id` in CARLA's sources (`Position`), or `None` for ids the schema does
/// not know.
pub fn packet_name(id: u8) -> Option<&'static str> {
    <Carla as logspec_runtime::Framing>::record_name(u64::from(id))
}
