//! Format detection (`src/cli/sniff.rs`, by each schema's generated header decoder): every
//! sample log in `tests/data` is detected as the format of its folder (a captured RLOG stream,
//! `*_stream.bin`, as `rlog-stream`), and heads that are cut inside a magic, or hold a wrong one, are not
//! taken for any format.

use crate::scratch;

use crate::common;

use std::path::{Path, PathBuf};

use common::{data, logspec};

/// The format `info --json` detects for `path`, or its error output.
fn detected(path: &Path) -> Result<String, String> {
    let out = logspec(&["info", "--json", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().next().and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        Some(v) => Ok(v["format"].as_str().unwrap_or_default().to_string()),
        None => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch::temp_dir().join(format!("logspec-detect-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn every_sample_is_detected_as_its_format() {
    let mut seen = 0;
    for (dir, ext, format) in [
        ("usvlog", "usvlog", "usvlog"),
        ("rlog", "rlog", "rlog"),
        ("rlog", "bin", "rlog"),
        ("carla", "log", "carla"),
        ("rosbag", "bag", "rosbag"),
        ("wpilog", "wpilog", "wpilog"),
        ("ulog", "ulg", "ulog"),
        ("dataflash", "BIN", "dataflash"),
        ("dataflash", "bin", "dataflash"),
    ] {
        for e in std::fs::read_dir(data(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) != Some(ext) {
                continue;
            }
            // A captured live stream is named `*_stream.bin`.
            let stream = p.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.ends_with("_stream"));
            let format = if stream { "rlog-stream" } else { format };
            assert_eq!(detected(&p).as_deref(), Ok(format), "{}", p.display());
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} samples");
}

#[test]
fn heads_are_detected_only_when_their_consts_hold() {
    // A CARLA header cut after its magic is CARLA (the reader then says what is missing); one
    // cut inside the magic, or with a wrong magic length, is not.
    let carla = std::fs::read(data("carla/878-supp-mat_crash.log")).unwrap();
    let unrecognised = |name: &str, bytes: &[u8]| {
        let err = detected(&tmp(name, bytes)).expect_err(name);
        assert!(err.contains("unrecognised format"), "{name}: {err}");
    };
    let err = detected(&tmp("carla-head", &carla[..20])).expect_err("a cut header");
    assert!(err.contains("not a CARLA recorder file") && err.contains("InfoHeader.date"), "{err}");
    unrecognised("carla-cut-magic", &carla[..9]);
    // (Version 7: versions 1 and 2 with a zero byte after them also start like RLOG.)
    let mut v7 = carla[..40].to_vec();
    v7[0] = 7;
    let err = detected(&tmp("carla-v7", &v7)).expect_err("version 7");
    assert!(err.contains("unsupported CARLA recorder version 7"), "{err}");
    v7[2] = 13;
    unrecognised("carla-wrong-len", &v7);
    // WPILOG: the magic alone is enough; a cut magic is not.
    let err = detected(&tmp("wpilog-magic", b"WPILOG")).expect_err("a cut header");
    assert!(err.contains("the file ends inside the file header"), "{err}");
    unrecognised("wpilog-cut", b"WPILO");
    // ULog: the magic (7 bytes) decides; a cut one is not ULog.
    let err = detected(&tmp("ulog-magic", b"ULog\x01\x12\x35\x01")).expect_err("a cut header");
    assert!(err.contains("ULog") && err.contains("file header"), "{err}");
    unrecognised("ulog-cut", b"ULog\x01\x12");
    // RLOG: a revision byte and a whole timestamp message (kind 0, f64), or a timestamp
    // message alone; a cut timestamp is not enough.
    let ts = [0u8, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0];
    assert_eq!(detected(&tmp("rlog-r1", &[&[1u8][..], &ts].concat())).as_deref(), Ok("rlog"));
    let err = detected(&tmp("rlog-bare", &ts)).expect_err("no revision byte");
    assert!(err.contains("rlog: at byte 0: the file starts without a revision byte"), "{err}");
    unrecognised("rlog-cut", &[1, 0, 0x3f, 0xf0]);
    // A stream frame: a big-endian i32 length, then a payload that starts like an RLOG file.
    let frame = [&[0u8, 0, 0, 10][..], &[2], &ts].concat();
    assert_eq!(detected(&tmp("rlog-stream", &frame)).as_deref(), Ok("rlog-stream"));
    unrecognised("empty", b"");
    unrecognised("text", b"time,value\n0,1\n");
}
