//! The bundled formats, generated at build time from `schemas/*.toml`.

/// USVLOG, the USV autopilot's `timeseries.bin` (`schemas/usvlog.toml`).
pub mod usvlog {
    /// The schema this module was generated from (`schemas/usvlog.toml`), for tools that need
    /// what only the schema says (units, docs).
    pub const SCHEMA_TOML: &str = include_str!("../../schemas/usvlog.toml");
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}

/// AdvantageKit RLOG (R1 and R2 files, and the TCP live stream): the message types generated from
/// `schemas/rlog.toml`, and the stateful reader, writer and network server built on them.
pub mod rlog;

/// CARLA recorder logs (UE4, 0.9.4-0.9.16): the packet types generated from
/// `schemas/carla.toml`, and the streaming reader and writer of whole recordings.
pub mod carla;
/// ROS1 bags (format 2.0): the container, and messages decoded from their connections' embedded
/// `.msg` definitions.
pub mod rosbag;

/// WPILib DataLog (`.wpilog`): the header, record header and control record types generated from
/// `schemas/wpilog.toml`, and the streaming reader and writer that keep the entry table.
pub mod wpilog;
/// WPILib struct and protobuf values (`struct:X`, `proto:X`), as RLOG and WPILOG files carry
/// them, decoded through the schemas in the log (the struct-schema front end and `prost-reflect`).
pub mod wpistruct;
