//! The data user's papercuts (issue 33, point 7), each found by trying the tools on real logs and
//! held here by a test: `export --parquet` names every input it did not export and says so in
//! its exit status; plot axes carry the channels' units with one tick style each and a tick at
//! the start time; `plot -f` takes a key with dots as the Parquet folder shows it.

use std::path::{Path, PathBuf};

use crate::common::{data, logspec};
use crate::scratch;

fn tmp(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-papercuts-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the command: its exit code and standard error.
fn run(args: &[&str]) -> (i32, String) {
    let out = logspec(args);
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stderr).unwrap())
}

/// A JSON document of exactly 321 bytes: what a download page saved under a `.bag` name.
fn json_321() -> Vec<u8> {
    let mut text = String::from("{\"error\": \"not found\", \"detail\": \"the bag was moved\", \"pad\": \"");
    while text.len() < 321 - 3 {
        text.push('x');
    }
    text.push_str("\"}\n");
    assert_eq!(text.len(), 321);
    text.into_bytes()
}

/// The folders of the dataset's tables that hold a partition `log=<log>`.
fn tables_of(out: &Path, log: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().join(format!("log={log}")).is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A directory holding a log, a JSON file named `.bag`, an empty `.rlog`, notes and a log named
/// without a log extension: the two files with a log extension that are not logs are named with
/// their reason, the notes are passed over (counted), the log without a log extension is found by
/// its content, and the exit status is 1.
#[test]
fn export_names_every_log_file_it_did_not_export() {
    let dir = tmp("export-dir");
    let logs = dir.join("logs");
    std::fs::create_dir_all(logs.join("sub")).unwrap();
    std::fs::copy(data("usvlog/step.usvlog"), logs.join("step.usvlog")).unwrap();
    std::fs::copy(data("usvlog/step.usvlog"), logs.join("sub/run.dat")).unwrap();
    std::fs::write(logs.join("download.bag"), json_321()).unwrap();
    std::fs::write(logs.join("sub/empty.rlog"), b"").unwrap();
    std::fs::write(logs.join("README.md"), b"# Logs of the 3rd of May\n").unwrap();
    std::fs::write(logs.join("sub/notes.txt"), b"the battery was low\n").unwrap();
    let out = dir.join("out");
    let (code, err) = run(&["export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 1, "an input was not exported: {err}");
    let bag = logs.join("download.bag").display().to_string();
    let rlog = logs.join("sub/empty.rlog").display().to_string();
    assert!(
        err.contains(&format!(
            "logspec: error: {bag}: not exported: unrecognised format: the file starts with [7b 22 65 72 72 6f 72 22]"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "logspec: error: {rlog}: not exported: unrecognised format: the file starts with [] (empty file)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "from 2 log(s) to {} (13 table(s) in the dataset); 2 file(s) not exported, not logs logspec reads: {bag}, {rlog}; 2 other file(s) in the directories passed over (no log extension, and not a log)",
            out.display()
        )),
        "{err}"
    );
    assert!(!err.contains("README") && !err.contains("notes.txt"), "notes are passed over silently: {err}");
    // Both logs are in the dataset, the files that are not logs nowhere.
    assert!(out.join("REC_NAV_SOLUTION/log=step/part-0.parquet").is_file());
    assert!(out.join("REC_NAV_SOLUTION/log=run/part-0.parquet").is_file());
    assert_eq!(tables_of(&out, "step").len(), 13);
    assert!(tables_of(&out, "download").is_empty() && tables_of(&out, "empty").is_empty());

    // --quiet keeps the summary of a run that left inputs out.
    let (code, err) = run(&["-q", "export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("2 file(s) not exported") && !err.contains("log=step ("), "{err}");

    // Without the two files, the same directory exports cleanly.
    std::fs::remove_file(logs.join("download.bag")).unwrap();
    std::fs::remove_file(logs.join("sub/empty.rlog")).unwrap();
    let (code, err) = run(&["export", "--parquet", out.to_str().unwrap(), logs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("not exported"), "{err}");
    assert!(err.contains("from 2 log(s)") && err.contains("2 other file(s) in the directories passed over"), "{err}");
}

/// A file named on the command line is an input whatever its name: one that is not a log is
/// named, the others are exported, exit 1; when no input is a log, nothing is written.
#[test]
fn export_names_a_named_file_that_is_not_a_log() {
    let dir = tmp("export-named");
    let fake = dir.join("notes.txt");
    std::fs::write(&fake, b"the battery was low\n").unwrap();
    let step = data("usvlog/step.usvlog");
    let out = dir.join("out");
    let (code, err) =
        run(&["export", "--parquet", out.to_str().unwrap(), fake.to_str().unwrap(), step.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: not exported: unrecognised format: the file starts with [74 68 65 20 62 61 74 74]",
            fake.display()
        )),
        "{err}"
    );
    assert!(err.contains("from 1 log(s)") && err.contains("1 file(s) not exported"), "{err}");
    assert!(out.join("REC_NAV_SOLUTION/log=step/part-0.parquet").is_file());

    let empty = dir.join("empty.rlog");
    std::fs::write(&empty, b"").unwrap();
    let out2 = dir.join("out2");
    let (code, err) = run(&["export", "--parquet", out2.to_str().unwrap(), empty.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "no log to export: {}: unrecognised format: the file starts with [] (empty file)",
            empty.display()
        )),
        "{err}"
    );
    assert!(!out2.exists(), "nothing is written when no input is a log");
}

/// The texts of an SVG: (x, y, text-anchor, text), in document order.
fn svg_texts(svg: &str) -> Vec<(f64, f64, String, String)> {
    let attr = |e: &str, name: &str| -> Option<String> {
        let at = e.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(e[at..at + e[at..].find('"')?].to_string())
    };
    svg.split("<text")
        .skip(1)
        .filter_map(|e| {
            let open = e.find('>')?;
            let text = e[open + 1..e.find("</text>")?].trim().to_string();
            let x = attr(&e[..open], "x")?.parse().ok()?;
            let y = attr(&e[..open], "y")?.parse().ok()?;
            Some((x, y, attr(&e[..open], "text-anchor").unwrap_or_default(), text))
        })
        .collect()
}

/// Plots `fields` of the test log `file` into an SVG and returns its text.
fn plot(name: &str, file: &str, fields: &[&str]) -> String {
    let svg = tmp(name).join("p.svg");
    let f = data(file);
    let mut args = vec!["-q", "plot", f.to_str().unwrap(), "-o", svg.to_str().unwrap()];
    for field in fields {
        args.extend(["-f", field]);
    }
    let (code, err) = run(&args);
    assert_eq!(code, 0, "plot {fields:?}: {err}");
    std::fs::read_to_string(svg).unwrap()
}

/// The time of the first sample of each of these RLOG keys, from the reference decode.
fn first_time(reference: &str, keys: &[&str]) -> f64 {
    let text = std::fs::read_to_string(data(reference)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    keys.iter().map(|k| v["fields"][*k]["records"][0][0].as_f64().unwrap()).fold(f64::INFINITY, f64::min)
}

/// Whether the tick labels are written in one style: all plain numbers, or all with the same
/// SI prefix or power of ten.
fn one_style(labels: &[&str]) -> bool {
    let suffix = |l: &str| -> String {
        let l = l.trim_start_matches('-');
        if l == "0" {
            return "any".into();
        }
        match l.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
            Some(i) => l[i..].chars().filter(|c| !c.is_ascii_digit() && *c != '-').collect(),
            None => String::new(),
        }
    };
    let styles: std::collections::BTreeSet<String> = labels.iter().map(|l| suffix(l)).filter(|s| s != "any").collect();
    styles.len() <= 1
}

/// Degrees and radians in one RLOG plot: the degrees on the left axis, the radians on the right,
/// each axis described with its unit (read from AdvantageKit's unit suffixes: the log has no
/// units), the legend naming each key with its unit; each axis's ticks in one style; the first
/// x tick at the start time.
#[test]
fn plot_axes_carry_units_and_start_at_the_start() {
    let keys = ["/DriveTrain/GyroAngleDegrees", "/DriveTrain/LeftPositionRadians"];
    let svg = plot("plot-units", "rlog/akit_v1.8.1_robotlog.rlog", &keys);
    let texts = svg_texts(&svg);
    let has = |t: &str| texts.iter().any(|(.., text)| text == t);
    assert!(has("value [deg]") && has("value [rad]"), "{texts:?}");
    assert!(!has("value"), "no axis says only `value`: {texts:?}");
    assert!(has("/DriveTrain/GyroAngleDegrees [deg]") && has("/DriveTrain/LeftPositionRadians [rad]"), "{texts:?}");
    // The axis descriptions: degrees left of the plot, radians right of it.
    let x_of = |t: &str| texts.iter().find(|(.., text)| text == t).unwrap().0;
    assert!(x_of("value [deg]") < 100.0 && x_of("value [rad]") > 1180.0, "{texts:?}");
    // The tick labels of each y axis: the left ones end at their x, the right ones start there.
    let numeric = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let left: Vec<&str> =
        texts.iter().filter(|(x, _, a, t)| a == "end" && *x < 640.0 && numeric(t)).map(|(.., t)| t.as_str()).collect();
    let right: Vec<&str> = texts
        .iter()
        .filter(|(x, _, a, t)| a != "middle" && *x > 640.0 && numeric(t) && !t.contains('/'))
        .map(|(.., t)| t.as_str())
        .collect();
    assert!(left.len() >= 3 && right.len() >= 3, "ticks on both axes: {left:?} {right:?}");
    assert!(one_style(&left) && one_style(&right), "{left:?} {right:?}");
    // The x ticks (centred under the plot, lowest of the texts but the axis description): the
    // first at the start time, written to the millisecond.
    let x_ticks: Vec<&(f64, f64, String, String)> =
        texts.iter().filter(|(_, _, a, t)| a == "middle" && numeric(t)).collect();
    let t0 = first_time("rlog/akit_v1.8.1_robotlog.expected.json", &keys);
    let want = format!("{t0:.3}").trim_end_matches('0').trim_end_matches('.').to_string();
    let first = x_ticks.iter().min_by(|a, b| a.0.total_cmp(&b.0)).expect("x ticks");
    assert_eq!(first.3, want, "the first x tick is the start time; x ticks: {x_ticks:?}");
}

/// A key spelled as its Parquet folder shows it (`/` as `.`, no leading `/`) is that key, even
/// with a column after it or brackets in it; a near miss names the closest key as it was
/// spelled.
#[test]
fn plot_takes_keys_with_dots() {
    let svg = plot("plot-dots", "rlog/akit_v1.8.1_robotlog.rlog", &["SystemStats.BatteryVoltage"]);
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|(.., t)| t == "SystemStats.BatteryVoltage [V]"), "{texts:?}");
    assert!(texts.iter().any(|(.., t)| t == "value [V]"), "{texts:?}");
    let svg = plot(
        "plot-brackets",
        "rlog/akit_v1.8.1_robotlog.rlog",
        &["NetworkTables.LiveWindow.Ungrouped.PowerDistributionPanel[0].Voltage"],
    );
    assert!(svg.contains("NetworkTables.LiveWindow.Ungrouped.PowerDistributionPanel[0].Voltage [V]"));
    // A WPILOG struct key: the column follows the key.
    let svg = plot("plot-struct", "wpilog/gen_wpilib_structs.wpilog", &["Robot.Pose.translation.x"]);
    assert!(svg.contains("Robot.Pose.translation.x"), "{}", &svg[..300]);

    let out = tmp("plot-typo").join("p.svg");
    let f = data("rlog/akit_v1.8.1_robotlog.rlog");
    let (code, err) =
        run(&["plot", f.to_str().unwrap(), "-f", "SystemStats.BatteryVoltag", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no channel matches `SystemStats.BatteryVoltag` (did you mean `SystemStats.BatteryVoltage`?)"),
        "{err}"
    );
    assert!(err.contains("/DriveTrain/GyroAngleDegrees"), "the log's channels are listed: {err}");
    assert!(!out.exists());
}

/// A ROS bag's messages carry no units; the documented units of common messages label the axes
/// (sensor_msgs/Imu: accelerations in m/s^2, angular velocities in rad/s), and more units than
/// two share the left axis, the legend telling them apart.
#[test]
fn plot_units_of_ros_messages_and_of_three_kinds() {
    let svg = plot("plot-imu", "rosbag/test_lz4.bag", &["/imu.linear_acceleration.z", "/imu.angular_velocity.x"]);
    let texts = svg_texts(&svg);
    let has = |t: &str| texts.iter().any(|(.., text)| text == t);
    assert!(has("value [m/s^2]") && has("value [rad/s]"), "{texts:?}");
    assert!(has("/imu.linear_acceleration.z [m/s^2]") && has("/imu.angular_velocity.x [rad/s]"), "{texts:?}");
    let svg = plot(
        "plot-three",
        "rlog/akit_v1.8.1_robotlog.rlog",
        &["/DriveTrain/GyroAngleDegrees", "/DriveTrain/LeftPositionRadians", "/DriveTrain/LeftCurrentAmps"],
    );
    let texts = svg_texts(&svg);
    let has = |t: &str| texts.iter().any(|(.., text)| text == t);
    assert!(has("value (units in the legend)") && !has("value [deg]") && !has("value [rad]"), "{texts:?}");
    assert!(has("/DriveTrain/LeftCurrentAmps [A]"), "{texts:?}");
    // One unit: one axis, described with it.
    let svg = plot("plot-one", "usvlog/step.usvlog", &["REC_NAV_SOLUTION.x", "REC_NAV_SOLUTION.y"]);
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|(.., t)| t == "value [m]"), "{texts:?}");
}
