//! C back end (being written).
