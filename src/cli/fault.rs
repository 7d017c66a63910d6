//! The located input problem of the library ([`logspec::log::Fault`]), under the path the verbs
//! and the Python package name it by.

pub use logspec::log::fault::{field_of, Fault, FaultKind, Locate};
