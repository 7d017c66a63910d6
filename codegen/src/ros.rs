//! The ROS1 `.msg` front end, from the light crate ([`logspec_ir::ros`]), and the Rust types it
//! generates ([`rust`]).

pub use logspec_ir::ros::*;

pub mod rust;
