//! What the tests that pin bundled schemas and snapshots say when they fail: what is pinned, why,
//! and what to do.
#![allow(dead_code)]

/// The record types upstream usv-autopilot defines (`tools/log_io/layout.py` at `a5c1f5d`,
/// FW_MODEL_SCHEMA 1), in id order: what `schemas/usvlog.toml` pins.
pub const USVLOG_UPSTREAM: [&str; 13] = [
    "REC_NAV_SOLUTION",
    "REC_GUIDANCE_REF",
    "REC_ACTUATOR_REQ",
    "REC_ACTUATOR_CMD",
    "REC_ESC_OUTPUT",
    "REC_MISSION_STATE",
    "REC_MIXER_FEEDBACK",
    "REC_SPEED_SCHED_DEBUG",
    "REC_SPEED_CTRL_DEBUG",
    "REC_YAW_CTRL_DEBUG",
    "REC_EKF_DIAG",
    "REC_SENSOR_GNSS",
    "REC_SENSOR_GYRO",
];

/// Why a test of `schemas/usvlog.toml` fails when the schema has records upstream does not, or
/// lacks one it does: the schema pins upstream's layout, and a user's records belong elsewhere.
pub fn usvlog_pinned(test: &str, names: &[&str]) -> String {
    let extra: Vec<&str> = names.iter().copied().filter(|n| !USVLOG_UPSTREAM.contains(n)).collect();
    let missing: Vec<&str> = USVLOG_UPSTREAM.iter().copied().filter(|n| !names.contains(n)).collect();
    format!(
        "{test}: schemas/usvlog.toml pins upstream usv-autopilot's 13 record types \
         (tools/log_io/layout.py at a5c1f5d, FW_MODEL_SCHEMA 1), \
         and this test holds it to them.{}{}\n\
         A record of your own belongs in your own repository's schema: `logspec init` starts one \
         (README, \"In your own repository\"). Change the bundled schema only to follow upstream, \
         and then update this test with it.",
        if extra.is_empty() { String::new() } else { format!(" Not upstream: {}.", extra.join(", ")) },
        if missing.is_empty() { String::new() } else { format!(" Missing: {}.", missing.join(", ")) },
    )
}

/// What a snapshot failure says: what the snapshot is and how to accept an intended change.
pub fn snapshot_help(name: &str, what: &str) -> String {
    format!(
        "snapshot `{name}` ({what}) differs from the one committed in codegen/tests/snapshots/.\n\
         If the change is intended (you edited a schema or a back end), review and accept it with \
         `cargo insta review` (install it with `cargo install cargo-insta`), or run \
         `INSTA_UPDATE=always cargo test -p logspec-codegen`, and commit the .snap file. \
         Otherwise the diff above shows what the back end now generates differently."
    )
}

/// `insta::assert_snapshot!(name, text)` (expanded in the calling test, so that the snapshot
/// keeps its file name) that, when the snapshot differs, says what it is and how to accept it.
/// (Not every test target that includes this module takes snapshots.)
#[allow(unused_macros)]
macro_rules! snapshot {
    ($name:expr, $what:expr, $text:expr) => {{
        let name: String = $name.into();
        let text = $text;
        if std::panic::catch_unwind(|| insta::assert_snapshot!(name.as_str(), text)).is_err() {
            panic!("{}", crate::support::snapshot_help(&name, $what));
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use snapshot;
