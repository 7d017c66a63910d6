//! Writers never lose what they were given: the framed (USVLOG), RLOG and CARLA writers write out
//! their buffer when dropped without `finish` (as `std::io::BufWriter` does), a writer process
//! killed with SIGKILL leaves files whose complete prefix decodes, and `write_raw` refuses a tag
//! that the record header cannot hold.

use crate::scratch;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use logspec::formats::carla::{self, InfoHeader};
use logspec::formats::rlog::{self, R1Value, Revision, Value};
use logspec::formats::usvlog::*;
use logspec::runtime::{Event, Reader, WriteError, Writer};

fn usvlog_header() -> FileHeader {
    FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 0 }
}

/// Record `i` of the USVLOG stream these tests write.
fn gyro(i: u64) -> UsvlogRecord {
    RecSensorGyro { z_gyro: i as f32, b_g_est: 0.5, valid: 1 }.into()
}

/// The z_gyro values of every record of a USVLOG file, up to the end or the first error; and
/// whether it ended cleanly.
fn usvlog_values(bytes: &[u8]) -> (Vec<f32>, bool) {
    let mut r = Reader::<_, Usvlog>::new(bytes).expect("the header was written first");
    let mut out = Vec::new();
    while let Some(ev) = r.next_event() {
        match ev {
            Ok(Event::Record { record: UsvlogRecord::RecSensorGyro(g), .. }) => out.push(g.z_gyro),
            Ok(_) => panic!("only gyro records were written"),
            Err(_) => return (out, false),
        }
    }
    (out, true)
}

fn rlog_timestamps(bytes: &[u8]) -> (Vec<f64>, bool) {
    let mut r = rlog::Reader::new(bytes).expect("the revision byte was written first");
    let mut out = Vec::new();
    while let Some(c) = r.next_cycle() {
        match c {
            Ok(c) => out.push(c.timestamp),
            Err(_) => return (out, false),
        }
    }
    (out, true)
}

fn carla_frames(bytes: &[u8]) -> Vec<u64> {
    let mut r = carla::Reader::new(bytes).expect("the header was written first");
    let mut out = Vec::new();
    while let Some(Ok(f)) = r.next_frame() {
        if f.complete {
            out.push(f.start.frame_id);
        }
    }
    out
}

#[test]
fn dropped_writers_write_out_what_they_buffered() {
    // Far less than one 64 KiB buffer: before, all of it was lost.
    let mut usv = Vec::new();
    {
        let mut w = Writer::<_, Usvlog>::new(&mut usv, &usvlog_header()).unwrap();
        for i in 0..100 {
            w.write(i, &gyro(i)).unwrap();
        }
    }
    let (values, clean) = usvlog_values(&usv);
    assert!(clean);
    assert_eq!(values, (0..100).map(|i| i as f32).collect::<Vec<_>>());

    let mut rl = Vec::new();
    {
        let mut w = rlog::Writer::new(&mut rl, Revision::R1);
        w.define(0, "/x", None).unwrap();
        for i in 0..100 {
            w.timestamp(i as f64).unwrap();
            w.value(0, Value::R1(R1Value::Double { value: i as f64 })).unwrap();
        }
    }
    let (ts, clean) = rlog_timestamps(&rl);
    assert!(clean);
    assert_eq!(ts.len(), 100);

    let mut ca = Vec::new();
    {
        let header = InfoHeader { version: 1, date: 0, map: "Town01".into() };
        let mut w = carla::Writer::new(&mut ca, &header).unwrap();
        for _ in 0..10 {
            w.begin_frame(0.05).unwrap();
            w.end_frame().unwrap();
        }
    }
    assert_eq!(carla_frames(&ca), (1..=10).collect::<Vec<_>>());
}

#[test]
fn write_raw_refuses_a_tag_that_does_not_fit() {
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &usvlog_header()).unwrap();
    let max = <Usvlog as logspec::runtime::Framing>::MAX_TAG;
    assert_eq!(max, 65535, "USVLOG's record type is a u16 (schemas/usvlog.toml)");
    let e = w.write_raw(max + 1, 0, b"").unwrap_err();
    assert!(matches!(e, WriteError::TagTooLarge { tag: 65536, max: 65535, .. }), "{e}");
    assert!(e.to_string().contains("does not fit"), "{e}");
    w.write_raw(max, 7, b"").unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Reader::<_, Usvlog>::new(&bytes[..]).unwrap();
    match r.next_event() {
        Some(Ok(Event::Unknown { raw })) => assert_eq!(raw.header.tag, 65535),
        other => {
            panic!("expected the one raw record, got {:?}", other.map(|e| e.map(|_| ()).map_err(|e| e.to_string())))
        }
    }
    assert!(r.next_event().is_none());
}

/// Where the child writes, when this test binary runs as the writer child.
const CHILD_DIR: &str = "LOGSPEC_KILLED_WRITER_DIR";

/// The child: writes the three formats forever, in small steps, until it is killed.
#[test]
#[ignore = "the writer child of `a_writer_killed_mid_write_leaves_a_decodable_prefix`"]
fn killed_writer_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else { return };
    let dir = PathBuf::from(dir);
    let file = |n: &str| std::fs::File::create(dir.join(n)).unwrap();
    let mut usv = Writer::<_, Usvlog>::new(file("out.usvlog"), &usvlog_header()).unwrap();
    let mut rl = rlog::Writer::new(file("out.rlog"), Revision::R1);
    rl.define(0, "/x", None).unwrap();
    let header = InfoHeader { version: 1, date: 0, map: "Town01".into() };
    let mut ca = carla::Writer::new(file("out.carla"), &header).unwrap();
    for i in 0u64.. {
        usv.write(i, &gyro(i)).unwrap();
        rl.timestamp(i as f64).unwrap();
        rl.value(0, Value::R1(R1Value::Double { value: i as f64 })).unwrap();
        ca.begin_frame(0.05).unwrap();
        ca.end_frame().unwrap();
        if i % 1000 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

#[test]
fn a_writer_killed_mid_write_leaves_a_decodable_prefix() {
    let dir = scratch::temp_dir().join(format!("logspec-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "writers::killed_writer_child", "--nocapture"])
        .env(CHILD_DIR, &dir)
        .spawn()
        .unwrap();
    // Wait until every file holds several buffers' worth, then kill it outright.
    let deadline = Instant::now() + Duration::from_secs(60);
    while ["out.usvlog", "out.rlog", "out.carla"].iter().any(|n| size(&dir.join(n)) < 300_000) {
        assert!(Instant::now() < deadline, "the child wrote too little");
        assert!(child.try_wait().unwrap().is_none(), "the child ended by itself");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix: no destructor runs.
    child.wait().unwrap();

    let usv = std::fs::read(dir.join("out.usvlog")).unwrap();
    let (values, _) = usvlog_values(&usv);
    assert!(values.len() > 10_000, "{}", values.len());
    assert!(values.iter().enumerate().all(|(i, v)| *v == i as f32), "records in order, none missing");

    let rl = std::fs::read(dir.join("out.rlog")).unwrap();
    let (ts, _) = rlog_timestamps(&rl);
    assert!(ts.len() > 10_000, "{}", ts.len());
    assert!(ts.iter().enumerate().all(|(i, t)| *t == i as f64));

    let ca = std::fs::read(dir.join("out.carla")).unwrap();
    let frames = carla_frames(&ca);
    assert!(frames.len() > 1_000, "{}", frames.len());
    assert!(frames.iter().enumerate().all(|(i, f)| *f == i as u64 + 1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that fails after its first bytes.
struct Failing<'a>(&'a [u8]);

impl std::io::Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn errors_expose_what_they_wrap() {
    use std::error::Error;
    let io = || std::io::Error::other("the disk went away");
    let wrapped: Vec<Box<dyn Error>> = vec![
        Box::new(WriteError::Io(io())),
        Box::new(logspec::formats::rlog::RlogWriteError::Io(io())),
        Box::new(logspec::formats::carla::CarlaWriteError::Io(io())),
    ];
    for e in wrapped {
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("the disk went away"), "{e}");
    }
    // Read errors: an I/O error after the header, and a record that does not decode.
    let mut bytes = Vec::new();
    {
        let mut w = Writer::<_, Usvlog>::new(&mut bytes, &usvlog_header()).unwrap();
        w.write(0, &gyro(0)).unwrap();
    }
    let mut r = Reader::<_, Usvlog>::new(Failing(&bytes)).unwrap();
    let e = loop {
        match r.next_event() {
            Some(Err(e)) => break e,
            Some(Ok(_)) => {}
            None => panic!("the reader must report the failure"),
        }
    };
    assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("the disk went away"), "{e}");
    let e = match rlog::Reader::new(Failing(&[])) {
        Err(e) => e,
        Ok(_) => panic!("an input that fails at once has no revision byte"),
    };
    assert!(e.source().is_some(), "{e}");
    let e = match carla::Reader::new(Failing(&[])) {
        Err(e) => e,
        Ok(_) => panic!("an input that fails at once has no header"),
    };
    assert!(e.source().is_some(), "{e}");
}
