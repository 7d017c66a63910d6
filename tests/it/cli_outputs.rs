//! Outputs never destroy data: a verb refuses an output that is one of its inputs (by name,
//! through a symbolic link or a hard link), and a failed run leaves an existing output as it was
//! and no temporary file behind.

use crate::scratch;

use crate::common;

use std::path::{Path, PathBuf};

use common::data;

fn scratch(name: &str) -> PathBuf {
    let dir = scratch::temp_dir().join(format!("logspec-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_logspec")).current_dir(dir).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The names in `dir` (temporary files start with a dot).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = scratch("same");
    let original = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    std::fs::write(dir.join("copy.usvlog"), &original).unwrap();
    std::os::unix::fs::symlink("copy.usvlog", dir.join("link.mcap")).unwrap();
    std::fs::hard_link(dir.join("copy.usvlog"), dir.join("hard.png")).unwrap();
    for args in [
        &["convert", "copy.usvlog", "-o", "copy.usvlog"][..],
        &["convert", "copy.usvlog", "-o", "./link.mcap"],
        &["convert", "link.mcap", "-o", "copy.usvlog"],
        &["convert", "copy.usvlog", "-o", "hard.png"],
        &["plot", "copy.usvlog", "-o", "hard.png", "--field", "REC_SENSOR_GYRO.z_gyro"],
    ] {
        let (code, err) = run(&dir, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("would destroy the input"), "{args:?}: {err}");
        assert_eq!(std::fs::read(dir.join("copy.usvlog")).unwrap(), original, "{args:?}");
    }
    assert_eq!(names(&dir), ["copy.usvlog", "hard.png", "link.mcap"]);
    // `doc` and `lock` refuse to write over their schema.
    std::fs::copy(data("../../schemas/usvlog.toml"), dir.join("usvlog.toml")).unwrap();
    let (code, err) = run(&dir, &["doc", "usvlog.toml", "-o", "usvlog.toml"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_failed_run_leaves_the_old_output_and_no_temporary_file() {
    let dir = scratch("failed");
    std::fs::write(dir.join("junk.usvlog"), b"junk").unwrap();
    std::fs::write(dir.join("out.mcap"), b"old").unwrap();
    let (code, err) = run(&dir, &["convert", "junk.usvlog", "-o", "out.mcap"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read(dir.join("out.mcap")).unwrap(), b"old");
    assert_eq!(names(&dir), ["junk.usvlog", "out.mcap"]);
    // A successful run replaces it whole, and leaves nothing else.
    std::fs::copy(data("usvlog/step.usvlog"), dir.join("step.usvlog")).unwrap();
    let (code, err) = run(&dir, &["convert", "step.usvlog", "-o", "out.mcap"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(dir.join("out.mcap")).unwrap().starts_with(b"\x89MCAP0\r\n"));
    assert_eq!(names(&dir), ["junk.usvlog", "out.mcap", "step.usvlog"]);
    // A plot that cannot find its field writes nothing.
    let (code, err) = run(&dir, &["plot", "step.usvlog", "-o", "p.svg", "--field", "REC_NOPE.x"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(names(&dir), ["junk.usvlog", "out.mcap", "step.usvlog"]);
}

#[test]
fn export_refuses_to_write_a_csv_over_its_input() {
    let dir = scratch("export");
    // The channel REC_SENSOR_GYRO is written to REC_SENSOR_GYRO.csv; make that the input.
    let original = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    std::fs::write(dir.join("REC_SENSOR_GYRO.csv"), &original).unwrap();
    let (code, err) = run(&dir, &["export", "REC_SENSOR_GYRO.csv", "--csv", "."]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("would destroy the input"), "{err}");
    assert_eq!(std::fs::read(dir.join("REC_SENSOR_GYRO.csv")).unwrap(), original);
    assert_eq!(names(&dir), ["REC_SENSOR_GYRO.csv"]);
}
