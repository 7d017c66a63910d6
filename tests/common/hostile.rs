//! Generators of the hostile inputs of issue 34: files a reader must handle in memory, time and
//! output bounded by what their bytes justify. Each is built through the format's own writer, so
//! only the hostile part (a count, a length, a repetition) is chosen here. `tests/bounded.rs`
//! runs them at a scale a debug build can afford; `benches/hostile.rs` at the sizes of the
//! issue, against the release binary.
#![allow(dead_code)]

use std::io::Write;

use logspec::formats::carla::{InfoHeader, Writer as CarlaWriter};
use logspec::formats::rlog::{R2Value, Revision, Value, Writer as RlogWriter};
use logspec::formats::usvlog::{FileHeader, Usvlog};
use logspec::formats::wpilog::Writer as WpilogWriter;
use logspec::runtime::Writer;

mod checked {
    #![allow(dead_code, clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/test_schemas/checked.rs"));
}

/// A log of the test schema with a sync and a CRC (`codegen/tests/schemas/checked.toml`):
/// `garbage` bytes of its sync pattern `A3 95` repeated after the file header, then one good
/// record (REC_SAMPLE, t_us 7). Each pattern is a candidate record of type 0xA3 that claims
/// 38,307 bytes (0x95A3) and fails its CRC, so a reader that checked each candidate's CRC byte
/// by byte would pass over the run in its length times 38 KiB.
pub fn checked_sync_run<W: Write>(mut out: W, garbage: u64) -> W {
    use checked::{Checked, CheckedRecord, FileHeader, RecSample};
    let header = FileHeader { schema: 1 };
    let mut w = Writer::<_, Checked>::new(Vec::new(), &header).unwrap();
    w.write(7, &CheckedRecord::RecSample(RecSample { value: 1.5, count: 7 })).unwrap();
    let with_record = w.finish().unwrap();
    let head = Writer::<_, Checked>::new(Vec::new(), &header).unwrap().finish().unwrap();
    out.write_all(&head).unwrap();
    let run = [0xA3, 0x95].repeat(1 << 15);
    let mut left = garbage / 2 * 2;
    while left > 0 {
        let n = left.min(run.len() as u64) as usize;
        out.write_all(&run[..n]).unwrap();
        left -= n as u64;
    }
    out.write_all(&with_record[head.len()..]).unwrap();
    out
}

/// A USVLOG of `n` records of type `tag` and length 0 (12 bytes each). Type 1
/// (`REC_NAV_SOLUTION`, 24 bytes) makes every record a decode fault; type 200 an unknown record.
pub fn usvlog_empty_records<W: Write>(out: W, n: u64, tag: u16) -> W {
    let header = FileHeader { fw_model_schema: logspec::formats::usvlog::FW_MODEL_SCHEMA, t0_us: 0 };
    let mut w = Writer::<_, Usvlog>::new(out, &header).unwrap();
    for i in 0..n {
        w.write_raw(tag.into(), i, &[]).unwrap();
    }
    w.finish().unwrap()
}

/// A CARLA recording of `frames` frames, each holding `per_frame` Position packets whose body is
/// only a record count of 65,535 (2 bytes where 65,535 records of 28 bytes were announced).
pub fn carla_false_counts<W: Write>(out: W, frames: u64, per_frame: u64) -> W {
    let header = InfoHeader { version: 1, date: 1_700_000_000, map: "Town01".into() };
    let mut w = CarlaWriter::new(out, &header).unwrap();
    for _ in 0..frames {
        w.begin_frame(0.05).unwrap();
        for _ in 0..per_frame {
            w.raw(6, &[0xff, 0xff]).unwrap();
        }
        w.end_frame().unwrap();
    }
    w.finish().unwrap()
}

/// A WPILOG of `n` Start records, each for a new entry, with no data record.
pub fn wpilog_starts<W: Write>(out: W, n: u32) -> W {
    let mut w = WpilogWriter::new(out, "").unwrap();
    for i in 1..=n {
        w.start(i, &format!("/e{i}"), "double", "", i64::from(i)).unwrap();
    }
    w.finish_file().unwrap()
}

/// An RLOG (revision 2) of `keys` keys (at most 65,535) whose names are `name_len` bytes long,
/// each with one double value in each of `cycles` cycles.
pub fn rlog_long_keys<W: Write>(out: W, keys: u32, name_len: usize, cycles: u32) -> W {
    assert!(keys <= 65_535);
    let mut w = RlogWriter::new(out, Revision::R2);
    let name = |k: u32| {
        let mut s = format!("/k{k:05}/");
        s.extend(std::iter::repeat_n('x', name_len.saturating_sub(s.len())));
        s
    };
    for c in 0..cycles {
        w.timestamp(f64::from(c) * 0.02).unwrap();
        for k in 0..keys {
            let id = k as u16 as i16;
            if c == 0 {
                w.define(id, &name(k), Some("double")).unwrap();
            }
            w.value(id, Value::R2(R2Value::Double { value: f64::from(k) })).unwrap();
        }
    }
    w.finish().unwrap()
}

/// What one run of a command cost and wrote.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    /// The exit code (`None`: ended by a signal).
    pub code: Option<i32>,
    pub seconds: f64,
    /// The peak resident set of the process, in KiB (`ru_maxrss` of `wait4`).
    pub max_rss_kib: u64,
    pub stdout_bytes: u64,
    pub stdout_lines: u64,
    /// The first 4 KiB of standard output.
    pub stdout_head: String,
    pub stderr_bytes: u64,
    /// The first 4 KiB of standard error, for messages.
    pub stderr_head: String,
}

/// Counts the bytes and lines of a pipe, keeping the first 4 KiB.
fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<(u64, u64, Vec<u8>)> {
    std::thread::spawn(move || {
        let (mut bytes, mut lines, mut head) = (0u64, 0u64, Vec::new());
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    bytes += n as u64;
                    lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                    let room = 4096usize.saturating_sub(head.len());
                    head.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        (bytes, lines, head)
    })
}

/// The launcher [`measure`] runs a command through: it forks (from a small process, so that the
/// child's peak RSS is its own: a child forked from a large test process would inherit that
/// process's high-water mark across `exec`), waits with `wait4`, writes the child's
/// `ru_maxrss` to the file named by its first argument, and exits with the child's status. A
/// hang guard kills the child after 300 s.
const LAUNCHER: &str = "import os, signal, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
signal.alarm(300)
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], 'w').write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
";

/// Runs `program args` to its end, counting its output (not keeping it) and taking its peak
/// RSS from the kernel when it is reaped (a Python launcher on PATH as `python3`; Linux).
pub fn measure(program: &str, args: &[&str]) -> Run {
    use std::process::{Command, Stdio};
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let rss_file = std::env::temp_dir().join(format!("logspec-rss-{}-{n}", std::process::id()));
    let start = std::time::Instant::now();
    let mut child = Command::new("python3")
        .args(["-c", LAUNCHER])
        .arg(&rss_file)
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python3 (the launcher)");
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let status = child.wait().unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let (stdout_bytes, stdout_lines, out_head) = out.join().unwrap();
    let (stderr_bytes, _, head) = err.join().unwrap();
    let rss = std::fs::read_to_string(&rss_file).unwrap_or_default();
    let _ = std::fs::remove_file(&rss_file);
    Run {
        success: status.success(),
        code: status.code(),
        seconds,
        max_rss_kib: rss
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the launcher wrote no peak RSS for {program} {args:?}")),
        stdout_bytes,
        stdout_lines,
        stdout_head: String::from_utf8_lossy(&out_head).into_owned(),
        stderr_bytes,
        stderr_head: String::from_utf8_lossy(&head).into_owned(),
    }
}

/// A CARLA recording of `frames` frames, each with one Position packet of `per_frame` records,
/// every record of an actor not seen before: one channel per record.
pub fn carla_many_actors<W: Write>(out: W, frames: u64, per_frame: u16) -> W {
    let header = InfoHeader { version: 1, date: 1_700_000_000, map: "Town01".into() };
    let mut w = CarlaWriter::new(out, &header).unwrap();
    let mut body = Vec::with_capacity(2 + 28 * usize::from(per_frame));
    for f in 0..frames {
        w.begin_frame(0.05).unwrap();
        body.clear();
        body.extend_from_slice(&per_frame.to_le_bytes());
        for i in 0..u64::from(per_frame) {
            let id = (f * u64::from(per_frame) + i) as u32;
            body.extend_from_slice(&id.to_le_bytes());
            body.extend_from_slice(&[0u8; 24]); // location and rotation: 6 x f32 zero
        }
        w.raw(6, &body).unwrap();
        w.end_frame().unwrap();
    }
    w.finish().unwrap()
}
