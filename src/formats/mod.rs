//! The bundled formats, generated at build time from `schemas/*.toml`.

/// USVLOG, the USV autopilot's `timeseries.bin` (`schemas/usvlog.toml`).
pub mod usvlog {
    include!(concat!(env!("OUT_DIR"), "/usvlog.rs"));
}

/// AdvantageKit RLOG (R1 and R2 files, and the TCP live stream): the message types generated from
/// `schemas/rlog.toml`, and the stateful reader, writer and network server built on them.
pub mod rlog;

/// ROS1 bags (format 2.0): the container, and messages decoded from their connections' embedded
/// `.msg` definitions.
pub mod rosbag;
