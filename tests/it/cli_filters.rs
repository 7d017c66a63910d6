//! Errors that do not hide: a channel filter that matches nothing is an error (exit 1) that lists
//! the log's channels with a did-you-mean, for every format and every verb that filters; `plot`
//! with an unknown column lists that channel's columns; an empty time window says so. Nothing is
//! written when the filter matches nothing.

use crate::scratch;

use crate::common;

use common::data;

fn run(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_logspec")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn path(rel: &str) -> String {
    data(rel).to_str().unwrap().to_string()
}

/// (file, filter flag, a near miss, the channel it should suggest, another channel listed)
fn cases() -> Vec<(String, &'static str, &'static str, &'static str, &'static str)> {
    vec![
        (path("usvlog/step.usvlog"), "--record", "REC_SENSOR_GYR", "REC_SENSOR_GYRO", "REC_NAV_SOLUTION"),
        (path("usvlog/step.usvlog"), "--record", "rec_sensor_gyro", "REC_SENSOR_GYRO", "REC_EKF_DIAG"),
        (path("rlog/gen_akit_head_r2_alltypes.rlog"), "--key", "/double", "/Double", "/StringArr"),
        (path("rlog/gen_akit_v1.8.1_r1_alltypes.rlog"), "--key", "/Nope", "", "/"),
        (path("carla/878-supp-mat_crash.log"), "--packet", "FrameStrat", "FrameStart", "AnimBiker"),
        (path("rosbag/test_none.bag"), "--topic", "/chater", "/chatter", "/imu"),
    ]
}

#[test]
fn a_filter_that_matches_nothing_is_an_error_for_every_format_and_verb() {
    let dir = scratch::temp_dir().join(format!("logspec-filters-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mcap = dir.join("out.mcap");
    let csv = dir.join("csv");
    for (file, flag, miss, hint, other) in cases() {
        for verb in [
            vec!["dump", &file, flag, miss],
            vec!["convert", &file, "-o", mcap.to_str().unwrap(), flag, miss],
            vec!["export", &file, "--csv", csv.to_str().unwrap(), flag, miss],
        ] {
            let (code, err) = run(&verb);
            assert_eq!(code, 1, "{verb:?}: {err}");
            assert!(err.contains(&format!("matches `{miss}`")), "{verb:?}: {err}");
            assert!(err.contains(other), "{verb:?}: the channels are listed: {err}");
            if !hint.is_empty() {
                assert!(err.contains(&format!("did you mean `{hint}`?")), "{verb:?}: {err}");
            }
        }
        assert!(!mcap.exists(), "convert wrote nothing");
        let written = std::fs::read_dir(&csv).map_or(0, |d| d.count());
        assert_eq!(written, 0, "export wrote nothing");
    }
}

#[test]
fn an_empty_time_window_says_so() {
    for (file, ..) in cases() {
        let (code, err) = run(&["dump", &file, "--since", "1000000"]);
        assert_eq!(code, 1, "{file}: {err}");
        assert!(err.contains("no sample in the time window --since 1000000"), "{file}: {err}");
        assert!(err.contains("the selected samples span"), "{file}: {err}");
    }
}

#[test]
fn plot_lists_the_columns_of_the_channel_it_was_given() {
    let dir = scratch::temp_dir().join(format!("logspec-filters-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("p.svg");
    let file = path("usvlog/step.usvlog");
    let (code, err) = run(&["plot", &file, "-o", out.to_str().unwrap(), "--field", "REC_SENSOR_GYRO.z_gryo"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no column of REC_SENSOR_GYRO matches `z_gryo`"), "{err}");
    assert!(err.contains("did you mean `z_gyro`?") && err.contains("b_g_est") && err.contains("valid"), "{err}");
    let (code, err) = run(&["plot", &file, "-o", out.to_str().unwrap(), "--field", "REC_SENSOR_GYR0.z_gyro"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `REC_SENSOR_GYRO`?"), "{err}");
    assert!(!out.exists());
}
