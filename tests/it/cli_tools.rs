//! The verbs that treat every format alike: `export` (CSV), `convert` (MCAP) and `plot`, checked
//! against the independent reference decodes of the test data (the usv-autopilot reader's dump,
//! AdvantageScope's decode) and, for MCAP, read back with an MCAP reader.

use crate::scratch;

use crate::common;

use std::path::{Path, PathBuf};

use common::{data, jsonl, logspec};
use serde_json::Value;

fn tmp(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-tools-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(args: &[&str]) -> String {
    let out = logspec(args);
    assert!(out.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stderr).unwrap()
}

fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_string).collect();
    (header, lines.map(|l| l.split(',').map(str::to_string).collect()).collect())
}

/// The reference dump of step.usvlog: `(t_us, name, fields)`.
fn usvlog_expected() -> Vec<(u64, String, Value)> {
    let text = std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap();
    jsonl(&text)
        .into_iter()
        .map(|v| (v["t_us"].as_u64().unwrap(), v["name"].as_str().unwrap().to_string(), v["fields"].clone()))
        .collect()
}

/// AdvantageScope's records of one key: `(t, value)`.
fn rlog_expected(file: &str, key: &str) -> Vec<(f64, Value)> {
    let text = std::fs::read_to_string(data(&format!("rlog/{file}.expected.json"))).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["fields"][key]["records"].as_array().unwrap().iter().map(|r| (r[0].as_f64().unwrap(), r[1].clone())).collect()
}

#[test]
fn csv_columns_equal_the_reference_values() {
    let dir = tmp("csv");
    let file = data("usvlog/step.usvlog");
    let msg = ok(&["export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap()]);
    assert!(msg.contains("wrote 13 CSV file(s)"), "{msg}");
    let (header, rows) = csv(&dir.join("REC_NAV_SOLUTION.csv"));
    assert_eq!(header, ["t [s]", "x [m]", "y [m]", "psi [rad]", "v [m/s]", "r [rad/s]", "b_g [rad/s]"]);
    let expected: Vec<_> = usvlog_expected().into_iter().filter(|(_, n, _)| n == "REC_NAV_SOLUTION").collect();
    assert_eq!(rows.len(), expected.len());
    for (row, (t_us, _, fields)) in rows.iter().zip(&expected) {
        assert_eq!(row[0].parse::<f64>().unwrap(), *t_us as f64 / 1e6, "{row:?}");
        assert_eq!(row[1].parse::<f64>().unwrap(), fields["x"].as_f64().unwrap(), "{row:?}");
        assert_eq!(row[3].parse::<f64>().unwrap(), fields["psi"].as_f64().unwrap(), "{row:?}");
    }

    // RLOG: one file per key, named after it.
    let dir = tmp("csv-rlog");
    let file = data("rlog/akit_v1.8.1_robotlog.rlog");
    ok(&["export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap(), "--key", "/DriveTrain/*"]);
    let (header, rows) = csv(&dir.join("DriveTrain_GyroAngleDegrees.csv"));
    assert_eq!(header, ["t [s]", "value"]);
    let expected = rlog_expected("akit_v1.8.1_robotlog", "/DriveTrain/GyroAngleDegrees");
    assert_eq!(rows.len(), expected.len());
    for (row, (t, v)) in rows.iter().zip(&expected) {
        assert_eq!(row[0].parse::<f64>().unwrap(), *t);
        assert_eq!(row[1].parse::<f64>().unwrap(), v.as_f64().unwrap());
    }
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert!(files > 0 && files < 98, "the --key filter keeps only /DriveTrain/* ({files} files)");
}

#[test]
fn aligned_table_holds_the_last_value_at_each_time() {
    let dir = tmp("aligned");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    ok(&["export", f, "--csv", dir.to_str().unwrap(), "--aligned", "7", "--record", "REC_SENSOR_GYRO", "--since", "1"]);
    let (header, rows) = csv(&dir.join("aligned.csv"));
    assert_eq!(
        header,
        ["t [s]", "REC_SENSOR_GYRO.z_gyro [rad/s]", "REC_SENSOR_GYRO.b_g_est [rad/s]", "REC_SENSOR_GYRO.valid"]
    );
    let gyro: Vec<(u64, f64)> = usvlog_expected()
        .into_iter()
        .filter(|(t, n, _)| n == "REC_SENSOR_GYRO" && *t >= 1_000_000)
        .map(|(t, _, f)| (t, f["z_gyro"].as_f64().unwrap()))
        .collect();
    let (first, last) = (gyro[0].0, gyro.last().unwrap().0);
    let step = 1e6 / 7.0;
    assert_eq!(rows.len() as u64, ((last - first) as f64 / step).floor() as u64 + 1);
    for row in &rows {
        let t_us = (row[0].parse::<f64>().unwrap() * 1e6).round() as u64;
        let held = gyro.iter().rev().find(|(t, _)| *t <= t_us).unwrap().1;
        assert_eq!(row[1].parse::<f64>().unwrap(), held, "row {row:?}");
    }
}

#[test]
fn mcap_reads_back_with_every_message() {
    let dir = tmp("mcap");
    let out = dir.join("step.mcap");
    let file = data("usvlog/step.usvlog");
    let msg = ok(&["convert", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(msg.contains("wrote 5201 message(s) on 13 channel(s)"), "{msg}");
    let bytes = std::fs::read(&out).unwrap();
    let expected = usvlog_expected();
    let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
    assert_eq!(messages.len(), expected.len());
    for (m, (t_us, name, fields)) in messages.iter().zip(&expected) {
        assert_eq!(m.channel.topic, format!("/{name}"));
        assert_eq!(m.channel.message_encoding, "json");
        assert_eq!(m.log_time, t_us * 1000);
        let value: Value = serde_json::from_slice(&m.data).unwrap();
        assert_eq!(&value, fields, "{name} at {t_us}");
    }
    let schema = messages[0].channel.schema.as_ref().expect("a schema");
    assert_eq!(schema.encoding, "jsonschema");
    let schema: Value = serde_json::from_slice(&schema.data).unwrap();
    assert_eq!(schema["title"], "REC_NAV_SOLUTION");
    assert_eq!(schema["properties"]["x"]["description"], "North position. [m]");

    // RLOG: one channel per key, every value.
    let out = dir.join("robot.mcap");
    let file = data("rlog/akit_v1.8.1_robotlog.rlog");
    ok(&["convert", file.to_str().unwrap(), "-o", out.to_str().unwrap(), "--compression", "none"]);
    let bytes = std::fs::read(&out).unwrap();
    let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
    assert_eq!(messages.len(), 9440);
    let gyro: Vec<&mcap::Message> =
        messages.iter().filter(|m| m.channel.topic == "/DriveTrain/GyroAngleDegrees").collect();
    let expected = rlog_expected("akit_v1.8.1_robotlog", "/DriveTrain/GyroAngleDegrees");
    assert_eq!(gyro.len(), expected.len());
    for (m, (t, v)) in gyro.iter().zip(&expected) {
        assert_eq!(m.log_time, (t * 1e9).round() as u64);
        let value: Value = serde_json::from_slice(&m.data).unwrap();
        assert_eq!(value["value"].as_f64(), v.as_f64());
    }
}

#[test]
fn bad_input_and_bad_usage_exit_codes() {
    let dir = tmp("bad");
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, b"\x89PNG\r\n\x1a\nnot a log").unwrap();
    let out = logspec(&["export", junk.to_str().unwrap(), "--csv", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("junk.bin") && err.contains("89 50 4e 47"), "{err}");
    let file = data("usvlog/step.usvlog");
    let out = logspec(&["export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap(), "--aligned", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = logspec(&["convert", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "missing -o is a usage error");
}

#[test]
fn plot_writes_an_image_of_the_requested_size() {
    let dir = tmp("plot");
    let png = dir.join("x.png");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    let msg = ok(&[
        "plot",
        f,
        "--field",
        "REC_NAV_SOLUTION.x",
        "-f",
        "REC_SENSOR_GNSS.x",
        "-o",
        png.to_str().unwrap(),
        "--width",
        "640",
        "--height",
        "400",
    ]);
    // Every NAV_SOLUTION and GNSS sample is a point.
    let expected = usvlog_expected();
    let n = expected.iter().filter(|(_, name, _)| name == "REC_NAV_SOLUTION" || name == "REC_SENSOR_GNSS").count();
    assert!(msg.contains(&format!("{n} point(s)")), "{msg}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 640);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 400);
    assert!(bytes.len() > 5_000, "a plot with lines and labels, not a blank image");

    // SVG: the legend names the fields with their units.
    let svg = dir.join("gyro.svg");
    let rlog = data("rlog/akit_v1.8.1_robotlog.rlog");
    ok(&["plot", rlog.to_str().unwrap(), "-f", "/DriveTrain/GyroAngleDegrees", "-o", svg.to_str().unwrap()]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("/DriveTrain/GyroAngleDegrees") && text.contains("time [s]"), "{}", &text[..200]);
    let out = logspec(&["plot", f, "-f", "REC_NAV_SOLUTION.x", "-o", svg.to_str().unwrap(), "--width", "640"]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("REC_NAV_SOLUTION.x [m]"), "the unit comes from the schema");

    // A field the log does not have: a usage error that lists the channels.
    let out = logspec(&["plot", f, "-f", "REC_NOPE.x", "-o", png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("REC_NOPE.x") && err.contains("REC_NAV_SOLUTION"), "{err}");
}

#[test]
fn carla_actors_export_and_convert() {
    let file = data("carla/878-supp-mat_crash.log");
    let f = file.to_str().unwrap();
    // The reference dump of the first 3 frames: every Position record of actor 24.
    let head = std::fs::read_to_string(data("carla/878-supp-mat_crash.expected.head.jsonl")).unwrap();
    let expected: Vec<(f64, Value)> = jsonl(&head)
        .into_iter()
        .filter(|p| p["name"] == "Position")
        .flat_map(|p| {
            let t = p["elapsed"].as_f64().unwrap();
            let recs = p["fields"]["records"].as_array().unwrap().clone();
            recs.into_iter().filter(|r| r["db_id"] == 24).map(move |r| (t, r))
        })
        .collect();
    assert_eq!(expected.len(), 3);

    let dir = tmp("carla");
    ok(&["export", f, "--csv", dir.to_str().unwrap(), "--channel", "Position/24", "--until", "0.08"]);
    let (header, rows) = csv(&dir.join("Position_24.csv"));
    assert_eq!(header[2], "location.x [cm]", "the unit of a Vec3 field applies to x, y, z");
    assert_eq!(rows.len(), 3);
    for (row, (t, r)) in rows.iter().zip(&expected) {
        assert!((row[0].parse::<f64>().unwrap() - t).abs() < 1e-9);
        assert_eq!(row[2].parse::<f64>().unwrap(), r["location"]["x"].as_f64().unwrap());
        assert_eq!(row[7].parse::<f64>().unwrap(), r["rotation"]["z"].as_f64().unwrap());
    }

    let out = dir.join("crash.mcap");
    ok(&["convert", f, "-o", out.to_str().unwrap(), "--channel", "Position/*"]);
    let bytes = std::fs::read(&out).unwrap();
    let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
    let actor: Vec<&mcap::Message> = messages.iter().filter(|m| m.channel.topic == "/Position/24").collect();
    assert_eq!(actor.len(), 158, "one Position record per frame for a live actor");
    let first: Value = serde_json::from_slice(&actor[0].data).unwrap();
    assert_eq!(first, expected[0].1);
}

#[test]
fn dump_filters_by_channel_and_time() {
    let file = data("usvlog/step.usvlog");
    let out = logspec(&["dump", file.to_str().unwrap(), "--record", "REC_SENSOR_*", "--since", "1", "--until", "2.5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected: Vec<Value> = jsonl(&std::fs::read_to_string(data("usvlog/step.expected.jsonl")).unwrap())
        .into_iter()
        .filter(|v| {
            let t = v["t_us"].as_u64().unwrap();
            v["name"].as_str().unwrap().starts_with("REC_SENSOR_") && (1_000_000..=2_500_000).contains(&t)
        })
        .collect();
    assert!(!expected.is_empty());
    common::assert_lines_eq(&ours, &expected);

    let rlog = data("rlog/akit_v1.8.1_robotlog.rlog");
    let out = logspec(&["dump", rlog.to_str().unwrap(), "--key", "/DriveTrain/GyroAngleDegrees", "--until", "5"]);
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    let expected: Vec<(f64, Value)> = rlog_expected("akit_v1.8.1_robotlog", "/DriveTrain/GyroAngleDegrees")
        .into_iter()
        .filter(|(t, _)| *t <= 5.0)
        .collect();
    assert_eq!(ours.len(), expected.len());
    for (o, (t, v)) in ours.iter().zip(&expected) {
        assert_eq!(o["t"].as_f64(), Some(*t));
        assert_eq!(o["value"].as_f64(), v.as_f64());
    }

    let carla = data("carla/878-supp-mat_crash.log");
    let out = logspec(&["dump", carla.to_str().unwrap(), "--packet", "FrameStart"]);
    let ours = jsonl(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(ours[0]["kind"], "header");
    assert_eq!(ours.len(), 1 + 158, "the header and one FrameStart per frame");
    assert!(ours[1..].iter().all(|p| p["name"] == "FrameStart"));
}

/// The message lines of a bag's reference dump.
fn bag_expected(stem: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(data(&format!("rosbag/{stem}.expected.jsonl"))).unwrap();
    jsonl(&text).into_iter().filter(|v| v["kind"] == "message").collect()
}

fn ros_time_ns(t: &Value) -> u64 {
    t["sec"].as_u64().unwrap() * 1_000_000_000 + t["nsec"].as_u64().unwrap()
}

/// ROS bags convert losslessly: the messages' bytes pass through as `ros1` messages with the
/// definitions as `ros1msg` schemas. Read back with the `mcap` crate, every message decodes (from
/// the MCAP schema alone) to the reference decoder's value, at the record time.
#[test]
fn rosbag_converts_to_ros1_mcap() {
    use logspec::formats::rosbag::{Connection, Decoders};
    use logspec::runtime::Visit;
    let dir = tmp("rosbag-mcap");
    for stem in ["test_lz4", "test_bz2", "rosbagjs-example"] {
        let out = dir.join(format!("{stem}.mcap"));
        let file = data(&format!("rosbag/{stem}.bag"));
        ok(&["convert", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        let bytes = std::fs::read(&out).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary section");
        let expected = bag_expected(stem);
        assert_eq!(summary.stats.as_ref().unwrap().message_count, expected.len() as u64, "{stem}");
        let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
        assert_eq!(messages.len(), expected.len(), "{stem}");
        for (i, (m, e)) in messages.iter().zip(&expected).enumerate() {
            assert_eq!(m.channel.topic, e["topic"].as_str().unwrap(), "{stem} message {i}");
            assert_eq!(m.channel.message_encoding, "ros1");
            assert_eq!(m.log_time, ros_time_ns(&e["time"]), "{stem} message {i}");
            let schema = m.channel.schema.as_ref().expect("a schema");
            assert_eq!(schema.encoding, "ros1msg");
            assert_eq!(schema.name, e["type"].as_str().unwrap());
            // Decode with nothing but what the MCAP file says.
            let conn = Connection {
                id: 0,
                topic: m.channel.topic.clone(),
                ty: schema.name.clone(),
                md5sum: m.channel.metadata["md5sum"].clone(),
                message_definition: String::from_utf8(schema.data.to_vec()).unwrap(),
                callerid: m.channel.metadata.get("callerid").cloned(),
                latching: m.channel.metadata.get("latching").cloned(),
                offset: 0,
            };
            let decoders = Decoders::new("mcap", &[(0, conn)].into_iter().collect(), None);
            let t = decoders.get(0).unwrap();
            assert!(t.md5_ok, "{stem}: {}: the definition in the MCAP schema gives the md5sum", schema.name);
            let d = t.decoder.as_ref().expect("a decoder");
            let v = d.decode(&m.data).unwrap();
            let mut w = logspec::json::JsonWriter::new();
            d.view(&v).visit(None, &mut w);
            let ours: Value = serde_json::from_str(&w.take()).unwrap();
            if let Some(diff) = common::json_diff(&ours, &e["data"], &format!("{stem} message {i}")) {
                panic!("{diff}");
            }
        }
    }
    // Two publishers on one topic keep their own caller ids (two MCAP channels, one topic).
    let bytes = std::fs::read(dir.join("test_lz4.mcap")).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let mut callers: Vec<&str> =
        summary.channels.values().filter(|c| c.topic == "/chatter").map(|c| c.metadata["callerid"].as_str()).collect();
    callers.sort();
    assert_eq!(callers, ["/talker_a", "/talker_b"]);
    let header = mcap::read::LinearReader::new(&bytes).unwrap().next().unwrap().unwrap();
    assert!(matches!(header, mcap::records::Record::Header(h) if h.profile == "ros1"));

    // Topic and time filters (seconds from the bag's first message).
    let out = dir.join("imu.mcap");
    let file = data("rosbag/test_lz4.bag");
    ok(&["convert", file.to_str().unwrap(), "-o", out.to_str().unwrap(), "--topic", "/imu", "--since", "0.1"]);
    let expected = bag_expected("test_lz4");
    let start = expected.iter().map(|e| ros_time_ns(&e["time"])).min().unwrap();
    let want =
        expected.iter().filter(|e| e["topic"] == "/imu" && ros_time_ns(&e["time"]) - start >= 100_000_000).count();
    let bytes = std::fs::read(&out).unwrap();
    let n = mcap::MessageStream::new(&bytes).unwrap().count();
    assert!(want > 0 && n == want, "{n} != {want}");
}

/// ROS bags in CSV (one file per topic, times in Unix seconds), plots (time from the first
/// message) and the dump's time filter.
#[test]
fn rosbag_export_plot_and_time_filter() {
    let dir = tmp("rosbag-csv");
    let file = data("rosbag/test_none.bag");
    let f = file.to_str().unwrap();
    ok(&["export", f, "--csv", dir.to_str().unwrap()]);
    let expected = bag_expected("test_none");
    let imu: Vec<&Value> = expected.iter().filter(|e| e["topic"] == "/imu").collect();
    let (header, rows) = csv(&dir.join("imu.csv"));
    assert_eq!(header[0], "t [s]");
    let col = header.iter().position(|h| h == "linear_acceleration.z").expect("a linear_acceleration.z column");
    assert_eq!(rows.len(), imu.len());
    for (row, e) in rows.iter().zip(&imu) {
        let t = e["time"]["sec"].as_f64().unwrap() + e["time"]["nsec"].as_f64().unwrap() * 1e-9;
        assert!((row[0].parse::<f64>().unwrap() - t).abs() < 1e-6, "{} vs {t}", row[0]);
        assert_eq!(row[col].parse::<f64>().unwrap(), e["data"]["linear_acceleration"]["z"].as_f64().unwrap());
    }

    let png = dir.join("imu.png");
    let msg = ok(&["plot", f, "-f", "/imu.linear_acceleration.z", "-o", png.to_str().unwrap(), "--width", "500"]);
    assert!(msg.contains(&format!("{} point(s)", imu.len())), "{msg}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 500);

    // `dump --since/--until`: seconds from the first message, inclusive.
    let out = logspec(&["dump", f, "--since", "0.2", "--until", "0.6"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<Value> =
        jsonl(&String::from_utf8(out.stdout).unwrap()).into_iter().filter(|v| v["kind"] == "message").collect();
    let start = expected.iter().map(|e| ros_time_ns(&e["time"])).min().unwrap();
    let want: Vec<&Value> =
        expected.iter().filter(|e| (200_000_000..=600_000_000).contains(&(ros_time_ns(&e["time"]) - start))).collect();
    assert!(!want.is_empty() && want.len() < expected.len());
    assert_eq!(got.len(), want.len());
    for (g, e) in got.iter().zip(want) {
        assert_eq!(g, e);
    }
}

/// The first numeric leaf of a JSON value, as a column path (`a.b[0].c`).
fn first_number(v: &Value, path: &str) -> Option<String> {
    match v {
        Value::Number(_) => Some(path.to_string()),
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| first_number(x, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") })),
        Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| first_number(x, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// Every verb on every log file in `tests/data`: `info` (text and JSON), `dump`, `export`,
/// `convert` (read back: as many MCAP messages as dump lines, except for CARLA's per-actor
/// channels) and `plot` of a field taken from the dump. Only the truncated bag fails, with exit
/// status 1 and every complete message still written.
#[test]
fn every_verb_on_every_testdata_file() {
    let dir = tmp("every");
    let mut files = Vec::new();
    for sub in ["usvlog", "rlog", "carla", "rosbag", "wpilog", "ulog", "dataflash"] {
        for e in std::fs::read_dir(data(sub)).unwrap() {
            let p = e.unwrap().path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if ["usvlog", "rlog", "bin", "BIN", "log", "bag", "wpilog", "ulg"].contains(&ext) {
                files.push((sub, p));
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20, "{} files", files.len());
    for (format, file) in &files {
        let f = file.to_str().unwrap();
        let name = file.file_name().unwrap().to_str().unwrap();
        // DataFlash: two test files end inside a message (as logs pulled from a vehicle do).
        let bad = name.contains("truncated") || name.starts_with("gen_df_corner") || name.starts_with("pymavlink_test");
        let code = |out: &std::process::Output, verb: &str| {
            let want = if bad { 1 } else { 0 };
            assert_eq!(out.status.code(), Some(want), "{verb} {name}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let out = logspec(&["info", f]);
        code(&out, "info");
        assert!(!out.stdout.is_empty(), "info {name}");
        let out = logspec(&["info", "--json", f]);
        code(&out, "info --json");
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("info --json {name}: {e}"));
        assert!(summary.is_object());

        let out = logspec(&["dump", f]);
        code(&out, "dump");
        let lines = jsonl(&String::from_utf8(out.stdout).unwrap());
        let records: Vec<&Value> = match *format {
            // WPILOG: the samples are the data records of started entries (control records and
            // orphans are not samples).
            "wpilog" => lines.iter().filter(|l| l["rec"] == "data" && !l["name"].is_null()).collect(),
            // ULog: the samples are the Data messages.
            "ulog" => lines.iter().filter(|l| l["kind"] == "data").collect(),
            _ => lines.iter().filter(|l| l["kind"] != "connection").collect(),
        };
        if *format == "wpilog" && records.is_empty() {
            // The specification's example: its one value is an orphan.
            assert!(lines.len() > 1, "dump {name}");
            continue;
        }
        assert!(!records.is_empty(), "dump {name}");

        let csv_dir = dir.join(format!("{name}.csv"));
        let out = logspec(&["-q", "export", f, "--csv", csv_dir.to_str().unwrap()]);
        code(&out, "export");
        let csvs: Vec<PathBuf> = std::fs::read_dir(&csv_dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(!csvs.is_empty(), "export {name}");
        for c in &csvs {
            let (header, _) = csv(c);
            assert_eq!(header[0], "t [s]", "{}", c.display());
        }

        let mcap_file = dir.join(format!("{name}.mcap"));
        let out = logspec(&["-q", "convert", f, "-o", mcap_file.to_str().unwrap()]);
        code(&out, "convert");
        let bytes = std::fs::read(&mcap_file).unwrap();
        let n = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).count();
        if *format == "carla" {
            assert!(n >= records.len(), "convert {name}: {n} messages for {} packets", records.len());
        } else {
            assert_eq!(n, records.len(), "convert {name}");
        }

        let field = match *format {
            "usvlog" => "REC_NAV_SOLUTION.x".to_string(),
            "rlog" => {
                let r = records.iter().find(|r| r["type"] == "double").expect("a double");
                r["key"].as_str().unwrap().to_string()
            }
            "wpilog" => {
                let r = records
                    .iter()
                    .find(|r| r["type"] == "double" && !r["name"].as_str().unwrap().contains('.'))
                    .expect("a double");
                r["name"].as_str().unwrap().to_string()
            }
            "dataflash" => "FMT.Length".to_string(),
            "ulog" => {
                let (r, path) = records
                    .iter()
                    .filter(|r| r["multi_id"] == 0)
                    .find_map(|r| first_number(&r["data"], "").map(|p| (r, p)))
                    .expect("a message with a number");
                format!("{}.{path}", r["name"].as_str().unwrap())
            }
            "carla" => {
                let r = records.iter().find(|r| r["name"] == "Position").expect("a Position packet");
                format!("Position/{}.location.x", r["fields"]["records"][0]["db_id"])
            }
            _ => {
                let (r, path) = records
                    .iter()
                    .find_map(|r| first_number(&r["data"], "").map(|p| (r, p)))
                    .expect("a message with a number");
                format!("{}.{path}", r["topic"].as_str().unwrap())
            }
        };
        let png = dir.join(format!("{name}.png"));
        let out = logspec(&["-q", "plot", f, "-f", &field, "-o", png.to_str().unwrap()]);
        code(&out, &format!("plot -f {field}"));
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "plot {name}");
    }
}

/// `info` on several files: one summary per file (JSON Lines with `--json`), each the same as
/// for the file alone; an unreadable file is reported, the others still summarised, exit 1.
#[test]
fn info_on_several_files() {
    let files = [
        data("usvlog/step.usvlog"),
        data("rosbag/test_lz4.bag"),
        data("rlog/psikit_core_logs_testLog.rlog"),
        data("carla/878-supp-mat_crash.log"),
    ];
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let alone: Vec<String> =
        names.iter().map(|f| String::from_utf8(logspec(&["info", "--json", f]).stdout).unwrap()).collect();
    let mut args = vec!["info", "--json"];
    args.extend(&names);
    let out = logspec(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone.concat());

    let mut args = vec!["info", "--json", names[0], "no/such/file.rlog", names[1]];
    let out = logspec(&args);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), [alone[0].as_str(), alone[1].as_str()].concat());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.rlog"));

    // Text: one block per file, separated by a blank line.
    args = vec!["info", names[0], names[2]];
    let text = String::from_utf8(logspec(&args).stdout).unwrap();
    let a = String::from_utf8(logspec(&["info", names[0]]).stdout).unwrap();
    let b = String::from_utf8(logspec(&["info", names[2]]).stdout).unwrap();
    assert_eq!(text, format!("{a}\n{b}"));
}

/// `logspec dump BIG | head -1`: when the reader closes the pipe, dump stops at once and exits 0.
/// The input is an endless RLOG stream on stdin (the real robot log's messages again and again,
/// up to 4 GB): dump must quit long before the writer runs out, which it notices as a broken pipe.
#[test]
fn dump_into_a_closed_pipe_exits_at_once_with_status_0() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let log = std::fs::read(data("rlog/akit_v1.8.1_robotlog.rlog")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["dump", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    const LIMIT: u64 = 4 << 30;
    let writer = std::thread::spawn(move || {
        let mut written = 0u64;
        if stdin.write_all(&log).is_err() {
            return written;
        }
        written += log.len() as u64;
        while written < LIMIT {
            // The messages without the revision byte, as if the robot kept logging.
            if stdin.write_all(&log[1..]).is_err() {
                break;
            }
            written += log.len() as u64 - 1;
        }
        written
    });
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // `head -1` has its line and closes the pipe (the reader is dropped here).
    let v: Value = serde_json::from_str(&first).unwrap();
    assert!(v["key"].is_string(), "{first}");
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "exit status {status:?}: {err}");
    assert!(err.is_empty(), "nothing on stderr for a closed pipe: {err}");
    let written = writer.join().unwrap();
    assert!(written < LIMIT, "dump kept reading after its output was closed");
}

/// The oracle of the interpreter path: a USVLOG file read through `--schema schemas/usvlog.toml`
/// (the path a project's own schema takes) gives what the bundled generated reader gives, byte
/// for byte and with the same messages and exit status, for `info --json`, `dump` and the CSV
/// export: on the reference file, on copies cut at every kind of place, and on copies with a
/// corrupted record length and a corrupted magic.
#[test]
fn a_schema_read_through_the_interpreter_equals_the_bundled_reader() {
    let dir = tmp("schema-oracle");
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml");
    let bytes = std::fs::read(data("usvlog/step.usvlog")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = vec![("whole".into(), bytes.clone())];
    // Inside the file header, at a record boundary (32 + 30), inside a record header, inside a
    // payload, and one byte short of the end.
    for cut in [10, 32, 62, 66, 80, bytes.len() - 1] {
        cases.push((format!("cut-{cut}"), bytes[..cut].to_vec()));
    }
    let mut long = bytes.clone();
    long[32 + 10] = 0xff; // the first record's length: past the end of the file
    cases.push(("bad-length".into(), long));
    let mut short = bytes.clone();
    short[32 + 10] = 3; // the first record's length: too short for its type (skipped, recoverable)
    short[32 + 11] = 0;
    cases.push(("short-payload".into(), short));
    for (name, b) in &cases {
        let file = dir.join(format!("{name}.usvlog"));
        std::fs::write(&file, b).unwrap();
        let f = file.to_str().unwrap();
        for verb in [&["info", "--json"][..], &["dump"][..]] {
            let bundled = logspec(&[verb, &[f]].concat());
            let own = logspec(&[verb, &["--schema", schema, f]].concat());
            assert_eq!(own.status.code(), bundled.status.code(), "{name} {verb:?}");
            assert_eq!(
                String::from_utf8_lossy(&own.stdout),
                String::from_utf8_lossy(&bundled.stdout),
                "{name} {verb:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&own.stderr),
                String::from_utf8_lossy(&bundled.stderr),
                "{name} {verb:?}"
            );
        }
        let (a, b) = (dir.join(format!("{name}-a")), dir.join(format!("{name}-b")));
        let bundled = logspec(&["export", f, "--csv", a.to_str().unwrap()]);
        let own = logspec(&["export", "--schema", schema, f, "--csv", b.to_str().unwrap()]);
        assert_eq!(own.status.code(), bundled.status.code(), "{name} export");
        for entry in std::fs::read_dir(&a).into_iter().flatten() {
            let p = entry.unwrap().path();
            let other = b.join(p.file_name().unwrap());
            assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&other).unwrap(), "{name}: {}", p.display());
        }
    }
    let mut magic = bytes.clone();
    magic[0] = b'X';
    let file = dir.join("magic.usvlog");
    std::fs::write(&file, magic).unwrap();
    let own = logspec(&["info", "--schema", schema, file.to_str().unwrap()]);
    assert_eq!(own.status.code(), Some(1));
    let said = String::from_utf8_lossy(&own.stderr);
    assert!(said.contains("file header") && said.contains("magic") && said.contains("\"USVLOG\""), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
