//! derive.
