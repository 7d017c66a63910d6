//! The small things a new user trips over (issue 18, item 8), each held by a test: negative
//! `--since`, CSV file names that are never hidden, distinct `--aligned` column names, plots of a
//! single sample, tick labels and the legend, a missing output directory, `info` labels, `diff`
//! with nothing to say, the top-level help and `gen`'s verdict on an unbumped breaking change.

use crate::scratch;

use crate::common;

use std::path::PathBuf;

use common::{data, jsonl, logspec};

fn tmp(name: &str) -> PathBuf {
    let d = scratch::temp_dir().join(format!("logspec-rough-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(args: &[&str]) -> (String, String) {
    let out = logspec(args);
    assert!(out.status.success(), "logspec {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// `--since -1` is a time (before the log's origin, so it keeps every sample), not a flag.
#[test]
fn negative_since_is_a_time() {
    let dir = tmp("since");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    let (all, with) = (dir.join("all"), dir.join("since"));
    ok(&["-q", "export", f, "--csv", all.to_str().unwrap()]);
    ok(&["-q", "export", f, "--csv", with.to_str().unwrap(), "--since", "-1", "--until", "1e9"]);
    let a = std::fs::read(all.join("REC_NAV_SOLUTION.csv")).unwrap();
    let b = std::fs::read(with.join("REC_NAV_SOLUTION.csv")).unwrap();
    assert!(a.len() > 100);
    assert_eq!(a, b, "--since -1 keeps every sample");
    let png = dir.join("p.png");
    ok(&["-q", "plot", f, "-f", "REC_NAV_SOLUTION.x", "--since", "-1", "-o", png.to_str().unwrap()]);
    assert!(png.is_file());
    // And a window that ends before the origin is the usual error of a filter matching nothing.
    let out = logspec(&["export", f, "--csv", dir.join("none").to_str().unwrap(), "--until", "-1"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--until -1"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// RLOG keys under `/.schema/` are written to visible files.
#[test]
fn no_hidden_csv_files() {
    let dir = tmp("hidden");
    let file = data("rlog/gen_akit_head_r2_alltypes.rlog");
    ok(&["-q", "export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap()]);
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.len() > 5, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')), "hidden files: {names:?}");
    assert!(names.iter().any(|n| n == "_schema_struct_Translation2d.csv"), "{names:?}");
}

/// Two publishers on one ROS topic get a column each, named by the publisher, holding that
/// publisher's messages (as the reference dump of the bag attributes them).
#[test]
fn aligned_columns_have_distinct_names() {
    let dir = tmp("aligned");
    let file = data("rosbag/test_none.bag");
    ok(&["-q", "export", file.to_str().unwrap(), "--csv", dir.to_str().unwrap(), "--aligned", "100"]);
    let rows = parse_csv(&std::fs::read_to_string(dir.join("aligned.csv")).unwrap());
    let header: Vec<&str> = rows[0].iter().map(String::as_str).collect();
    let mut sorted = header.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), header.len(), "duplicate column names in {header:?}");
    // The reference dump says which connection (publisher) sent what.
    let expected = jsonl(&std::fs::read_to_string(data("rosbag/test_none.expected.jsonl")).unwrap());
    let callers: Vec<&str> = expected
        .iter()
        .filter(|v| v["kind"] == "connection" && v["topic"] == "/chatter")
        .map(|v| v["callerid"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["/talker_a", "/talker_b"]);
    for (conn, caller) in callers.iter().enumerate() {
        let column = format!("/chatter@{caller}.data");
        let i = header.iter().position(|h| *h == column).unwrap_or_else(|| panic!("{column} in {header:?}"));
        let sent: Vec<&str> = expected
            .iter()
            .filter(|v| v["kind"] == "message" && v["conn"] == conn)
            .map(|v| v["data"]["data"].as_str().unwrap())
            .collect();
        assert!(!sent.is_empty());
        let cells: Vec<String> = rows[1..].iter().map(|r| r[i].clone()).collect();
        assert!(cells.iter().all(|c| c.is_empty() || sent.contains(&c.as_str())), "{column}: {cells:?} vs {sent:?}");
        assert!(sent.iter().all(|s| cells.iter().any(|c| c == s)), "{column}: {cells:?} vs {sent:?}");
    }
}

/// RFC 4180 CSV: quoted cells may hold commas, quotes (doubled) and line breaks.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell, mut quoted) = (Vec::new(), Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut cell)),
            ('\n', false) => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (c, _) => cell.push(c),
        }
    }
    rows
}

/// An output in a directory that does not exist is a usage error that names the directory,
/// before the log is read, with no temporary path or debug text in it.
#[test]
fn missing_output_directory_is_a_clean_error() {
    let dir = tmp("nodir");
    let file = data("usvlog/step.usvlog");
    let f = file.to_str().unwrap();
    let missing = dir.join("not-there");
    for (verb, out) in [("plot", "x.png"), ("convert", "x.mcap"), ("doc", "x.md")] {
        let out = missing.join(out);
        let o = out.to_str().unwrap();
        let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/usvlog.toml");
        let args: Vec<&str> = match verb {
            "plot" => vec!["plot", f, "-f", "REC_NAV_SOLUTION.x", "-o", o],
            "convert" => vec!["convert", f, "-o", o],
            _ => vec!["doc", schema.to_str().unwrap(), "-o", o],
        };
        let res = logspec(&args);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{verb}: {err}");
        assert_eq!(
            err.trim(),
            format!(
                "logspec: {}: the output directory {} does not exist (create it first, or choose another path)",
                out.display(),
                missing.display()
            ),
            "{verb}"
        );
        assert!(!missing.exists(), "{verb} created the directory");
    }
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git is needed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `diff` with nothing changed says so, per schema, instead of printing nothing.
#[test]
fn diff_without_changes_says_so() {
    let dir = tmp("diff");
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let head = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml")).unwrap();
    std::fs::write(schemas.join("usvlog.toml"), head).unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "base"]);
    let (stdout, _) = ok(&["diff", "--against", "HEAD", "--schemas", schemas.to_str().unwrap()]);
    assert_eq!(stdout.trim(), format!("{}: no schema changes since HEAD", schemas.join("usvlog.toml").display()));
}

/// The top-level help shows examples and where the full reference is.
#[test]
fn top_level_help_has_examples() {
    for flag in ["--help", "-h"] {
        let (stdout, _) = ok(&[flag]);
        assert!(stdout.contains("Examples:"), "{stdout}");
        assert!(stdout.contains("logspec export run.bin --csv out/"), "{stdout}");
        assert!(stdout.contains("docs/cli.md"), "{stdout}");
    }
}

/// The numbers of an SVG attribute (`points="1,2 3,4 "`, `x="5"`).
fn attr<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&element[start..start + element[start..].find('"')?])
}

fn num(element: &str, name: &str) -> f64 {
    attr(element, name).unwrap_or_else(|| panic!("{name} in {element}")).parse().unwrap()
}

/// What a plot's SVG shows: the legend box, the data (lines of width 2 and markers) and the y
/// tick labels with their right edge.
struct Drawn {
    legend: (f64, f64, f64, f64),
    lines: Vec<Vec<(f64, f64)>>,
    markers: Vec<(f64, f64)>,
    y_ticks: Vec<(f64, f64, String)>,
}

fn drawn(svg: &str) -> Drawn {
    let elements: Vec<&str> = svg.split('<').collect();
    let legend = elements
        .iter()
        .find(|e| e.starts_with("rect") && attr(e, "stroke") == Some("#000000"))
        .map(|e| {
            let (x, y) = (num(e, "x"), num(e, "y"));
            (x, y, x + num(e, "width"), y + num(e, "height"))
        })
        .expect("a legend box");
    let inside = |(x, y): (f64, f64)| x >= legend.0 && x <= legend.2 && y >= legend.1 && y <= legend.3;
    let lines = elements
        .iter()
        .filter(|e| e.starts_with("polyline") && attr(e, "stroke-width") == Some("2"))
        .map(|e| {
            attr(e, "points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect::<Vec<(f64, f64)>>()
        })
        // The legend's own sample lines.
        .filter(|l| !l.iter().all(|p| inside(*p)))
        .collect();
    let markers = elements
        .iter()
        .filter(|e| e.starts_with("circle"))
        .map(|e| (num(e, "cx"), num(e, "cy")))
        .filter(|p| !inside(*p))
        .collect();
    let y_ticks = elements
        .iter()
        .filter(|e| e.starts_with("text") && attr(e, "text-anchor") == Some("end"))
        .map(|e| (num(e, "x"), num(e, "font-size"), e[e.find('>').unwrap() + 1..].trim().to_string()))
        .collect();
    Drawn { legend, lines, markers, y_ticks }
}

fn plot_svg(name: &str, file: &str, fields: &[&str]) -> Drawn {
    let dir = tmp(name);
    let svg = dir.join("p.svg");
    let f = data(file);
    let mut args = vec!["-q", "plot", f.to_str().unwrap(), "-o", svg.to_str().unwrap()];
    for field in fields {
        args.extend(["-f", field]);
    }
    ok(&args);
    drawn(&std::fs::read_to_string(svg).unwrap())
}

/// The legend covers no line and no marker: every segment is walked in half-pixel steps.
fn assert_legend_hides_nothing(d: &Drawn, what: &str) {
    let (x0, y0, x1, y1) = d.legend;
    let hit = |(x, y): (f64, f64)| x > x0 && x < x1 && y > y0 && y < y1;
    for p in &d.markers {
        assert!(!hit(*p), "{what}: the legend {:?} hides the marker at {p:?}", d.legend);
    }
    for line in &d.lines {
        for w in line.windows(2) {
            let (a, b) = (w[0], w[1]);
            let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()) * 2.0).ceil().max(1.0) as usize;
            for i in 0..=steps {
                let t = i as f64 / steps as f64;
                let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                assert!(!hit(p), "{what}: the legend {:?} hides the line at {p:?}", d.legend);
            }
        }
    }
}

/// A key with one sample is drawn as a marker; the legend moves off the data (the top right
/// corner, where it used to be, is crossed by the other line here); the y tick labels of values
/// near 9.2e18 are short and start inside the image.
#[test]
fn single_samples_ticks_and_legend() {
    let d = plot_svg("plot-int", "rlog/gen_akit_head_r2_alltypes.rlog", &["/Int", "/Sub/Constant"]);
    assert_eq!(d.markers.len(), 1, "/Sub/Constant has one sample, drawn as one marker");
    assert_eq!(d.lines.len(), 1, "/Int is a line");
    assert_legend_hides_nothing(&d, "/Int");
    assert!(d.y_ticks.len() >= 4, "{:?}", d.y_ticks);
    for (x, size, text) in &d.y_ticks {
        assert!(text.len() <= 8, "tick label {text:?} is long");
        // A right-aligned label starts about its width to the left of x: at most a font size
        // per character, which must still be inside the image.
        assert!(x - size * text.chars().count() as f64 >= 0.0, "tick label {text:?} at x={x} is clipped");
        assert!(text.contains('e') || text == "0", "{text:?} in scientific notation");
    }
    // The step log: x rises to the top right, y lies flat at the bottom.
    let d = plot_svg("plot-step", "usvlog/step.usvlog", &["REC_NAV_SOLUTION.x", "REC_NAV_SOLUTION.y"]);
    assert_eq!(d.lines.len(), 2);
    assert_legend_hides_nothing(&d, "step");
    // Every corner taken: the y range grows so that the legend sits above the data.
    let d = plot_svg(
        "plot-corners",
        "usvlog/step.usvlog",
        &["REC_NAV_SOLUTION.x", "REC_NAV_SOLUTION.y", "REC_NAV_SOLUTION.psi", "REC_SENSOR_GYRO.z_gyro"],
    );
    assert_legend_hides_nothing(&d, "four fields");
}

/// `info` says the same things the same way in every format: `file:` and `format:` first, values
/// in one column, and a `time:` line with units (`A .. B UNIT (D s)`).
#[test]
fn info_labels_agree_across_formats() {
    let files = [
        ("usvlog/step.usvlog", "0 .. 20000000 us (20.000 s)"),
        ("rlog/akit_v1.8.1_robotlog.rlog", "0.922605 .. 28.946178 s (28.024 s)"),
        ("rlog/gen_akit_head_r2_stream.bin", "1.294567 .. 1.394567 s (0.100 s)"),
        ("wpilog/nukkeldev_spec_example.wpilog", "1 .. 1 s (0.000 s)"),
        ("rosbag/test_none.bag", "1700000000.000 .. 1700000000.900 s (0.900 s)"),
        ("carla/878-supp-mat_crash.log", "0.000 .. 4.741 s (4.741 s)"),
    ];
    for (file, time) in files {
        let path = data(file);
        let (text, _) = ok(&["info", path.to_str().unwrap()]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(&format!("file:        {}", path.display())), "{file}:\n{text}");
        assert!(lines[1].starts_with("format:      "), "{file}:\n{text}");
        assert!(lines.contains(&format!("time:        {time}").as_str()), "{file}:\n{text}");
        // Every `label: value` line at the top level puts its value in column 13.
        for l in lines.iter().filter(|l| !l.starts_with(' ')) {
            let Some((label, rest)) = l.split_once(':') else { continue };
            if label.contains(' ') || rest.is_empty() {
                continue; // a table heading such as `value types (by key):`
            }
            assert!(label.len() < 12 && l.len() > 13, "{file}: {l:?}");
            assert!(l.as_bytes()[12] == b' ' && l.as_bytes()[13] != b' ', "{file}: value not in column 13: {l:?}");
        }
    }
}
