//! The RLOG live stream over loopback: frames, catch-up of late clients, many clients with a
//! stalled one, abrupt disconnects, heartbeat timeouts, shutdown and port reuse, reconnecting,
//! and `logspec rlog serve` recorded back by `logspec rlog record`.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use logspec::formats::rlog::net::{
    Client, FrameReader, LiveEvent, Reconnecting, Server, ServerOptions, DEFAULT_PORT, HEARTBEAT,
};
use logspec::formats::rlog::{Cycle, R2Value, Reader, Revision, Value};

const SECOND: Duration = Duration::from_secs(1);

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/rlog").join(name)
}

fn int(v: i64) -> Value {
    Value::R2(R2Value::Int64 { value: v })
}

fn double(v: f64) -> Value {
    Value::R2(R2Value::Double { value: v })
}

fn text(s: &str) -> Value {
    Value::R2(R2Value::String { value: s.to_string() })
}

fn server(options: ServerOptions) -> Server {
    Server::bind("127.0.0.1:0", Revision::R2, options).expect("bind")
}

/// Waits for `cond`, failing the test after `limit`.
fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

/// A cycle's values by key name.
fn named(client: &Client, cycle: &Cycle) -> BTreeMap<String, Value> {
    cycle.values.iter().map(|(id, v)| (client.key(*id).expect("a defined key").name.clone(), v.clone())).collect()
}

fn connect(addr: SocketAddr) -> Client {
    Client::connect(addr, 5 * SECOND).expect("connect")
}

#[test]
fn frame_reader_reads_the_captured_stream_as_a_file() {
    let bytes = std::fs::read(data("gen_akit_head_r2_stream.bin")).unwrap();
    let mut frames = FrameReader::new(&bytes[..]);
    let mut payload = Vec::new();
    frames.read_to_end(&mut payload).unwrap();
    // Spec §5: 1 newcomer frame, 5 cycle frames, 26 keep-alives.
    assert_eq!((frames.frames(), frames.keepalives(), frames.offset()), (6, 26, bytes.len() as u64));
    assert_eq!(payload[0], 2);
    let mut reader = Reader::new(&payload[..]).unwrap();
    let mut cycles = 0;
    while let Some(c) = reader.next_cycle() {
        c.unwrap();
        cycles += 1;
    }
    assert_eq!(cycles, 6);

    // Frame by frame.
    let mut frames = FrameReader::new(&bytes[..]);
    let mut sizes = Vec::new();
    while let Some(f) = frames.next_frame().unwrap() {
        sizes.push(f.len());
    }
    assert_eq!(sizes, [724, 258, 250, 250, 250, 250]);
}

#[test]
fn frame_reader_errors_name_the_byte() {
    // A keep-alive, a 2-byte frame, then a negative length at byte 10.
    let bytes = [0, 0, 0, 0, 0, 0, 0, 2, 0xaa, 0xbb, 0xff, 0xff, 0xff, 0xfe, 1, 2];
    let mut r = FrameReader::new(&bytes[..]);
    assert_eq!(r.next_frame().unwrap(), Some(vec![0xaa, 0xbb]));
    let e = r.next_frame().unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("frame at byte 10 has a negative length, -2"), "{e}");
    // The error sticks.
    assert!(r.read(&mut [0; 8]).is_err());

    // The stream ends inside a frame, and inside a length.
    let mut out = Vec::new();
    let e = FrameReader::new(&[0, 0, 0, 5, 1, 2][..]).read_to_end(&mut out).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    assert!(e.to_string().contains("inside the frame at byte 0"), "{e}");
    let e = FrameReader::new(&[0, 0, 0, 1, 7, 0, 0][..]).read_to_end(&mut out).unwrap_err();
    assert!(e.to_string().contains("inside the length of the frame at byte 5"), "{e}");
}

#[test]
fn a_late_joiner_gets_the_current_state_then_every_cycle() {
    let server = server(ServerOptions::default());
    for i in 0..5 {
        let mut values = vec![("/Robot/x".to_string(), None, double(i as f64 * 0.5))];
        if i == 0 {
            values.push(("/Robot/name".to_string(), None, text("bot")));
        }
        if i == 3 {
            values.push(("/Robot/mode".to_string(), Some("string".to_string()), text("auto")));
        }
        server.publish_cycle(i as f64 * 0.02, values).unwrap();
    }

    let mut client = connect(server.local_addr());
    wait_until(5 * SECOND, "the client to register", || server.client_count() == 1);
    // The newcomer frame: the last timestamp and every current value.
    let first = client.next_cycle().unwrap().unwrap();
    assert_eq!(first.timestamp, 0.08);
    let want: BTreeMap<String, Value> = [
        ("/Robot/x".to_string(), double(2.0)),
        ("/Robot/name".to_string(), text("bot")),
        ("/Robot/mode".to_string(), text("auto")),
    ]
    .into();
    assert_eq!(named(&client, &first), want);
    assert_eq!(client.key(first.values[0].0).unwrap().declared_type.as_deref(), Some("double"));

    // Then each cycle, with only what changed.
    for i in 5..8 {
        server.publish_cycle(i as f64 * 0.02, vec![("/Robot/x".into(), None, double(i as f64 * 0.5))]).unwrap();
        server.publish_cycle(i as f64 * 0.02 + 0.01, vec![("/Robot/x".into(), None, double(i as f64 * 0.5))]).unwrap();
    }
    for i in 5..8 {
        let c = client.next_cycle().unwrap().unwrap();
        assert_eq!(c.timestamp, i as f64 * 0.02);
        assert_eq!(named(&client, &c), [("/Robot/x".to_string(), double(i as f64 * 0.5))].into());
        let c = client.next_cycle().unwrap().unwrap();
        assert_eq!(c.timestamp, i as f64 * 0.02 + 0.01);
        assert!(c.values.is_empty(), "an unchanged value is not sent again");
    }
    assert_eq!(client.counters().frames(), 7);
    server.shutdown();
    // The server's end is a clean end of the stream.
    assert!(client.next_cycle().is_none());
}

/// What the producer of `many_clients_and_a_stalled_one` publishes at cycle `i`.
fn blob(i: u64, k: u8) -> Value {
    Value::R2(R2Value::Raw { value: vec![(i % 251) as u8 ^ k; 30_000] })
}

#[test]
fn many_clients_and_a_stalled_one() {
    const READERS: usize = 49;
    const WINDOW: u64 = 4;
    let server = server(ServerOptions { queue_frames: 32, client_timeout: 60 * SECOND, ..ServerOptions::default() });
    let addr = server.local_addr();
    // Never reads, never writes.
    let mut stalled = TcpStream::connect(addr).unwrap();
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..READERS).map(|_| AtomicU64::new(0)).collect());
    let readers: Vec<_> = (0..READERS)
        .map(|k| {
            let progress = Arc::clone(&progress);
            thread::spawn(move || {
                let mut client = connect(addr);
                let newcomer = client.next_cycle().unwrap().unwrap();
                assert!(newcomer.values.is_empty(), "connected before the first cycle");
                let mut expect = 0u64;
                loop {
                    let cycle = client.next_cycle().expect("the stream ended early").expect("a cycle");
                    let values = named(&client, &cycle);
                    if let Some(Value::R2(R2Value::Int64 { value })) = values.get("end") {
                        assert_eq!(*value as u64, expect, "reader {k}");
                        return expect;
                    }
                    assert_eq!(cycle.timestamp, expect as f64 * 0.01, "reader {k}");
                    assert_eq!(values.get("n"), Some(&int(expect as i64)), "reader {k}, cycle {expect}");
                    if values.len() > 1 {
                        for b in 0..4u8 {
                            assert!(
                                values.get(&format!("blob{b}")) == Some(&blob(expect, b)),
                                "reader {k}, cycle {expect}"
                            );
                        }
                    }
                    expect += 1;
                    progress[k].store(expect, Ordering::Release);
                }
            })
        })
        .collect();
    wait_until(30 * SECOND, "every client to connect", || server.client_count() == READERS + 1);

    let mut i = 0u64;
    let publish = |i: u64, big: bool| {
        // Paced so that the reading clients stay a few cycles behind at most: their queues never
        // fill, while the stalled client's does.
        let start = Instant::now();
        while progress.iter().map(|p| p.load(Ordering::Acquire)).min().unwrap() + WINDOW < i {
            assert!(start.elapsed() < 60 * SECOND, "the readers stopped at cycle {i}");
            thread::yield_now();
        }
        let mut values = vec![("n".to_string(), None, int(i as i64))];
        if big {
            values.extend((0..4u8).map(|b| (format!("blob{b}"), None, blob(i, b))));
        }
        server.publish_cycle(i as f64 * 0.01, values).unwrap();
    };
    // Big cycles until the stalled client's socket buffers and queue are full.
    while server.stats().dropped_slow == 0 {
        assert!(i < 3000, "the stalled client was never dropped");
        publish(i, true);
        i += 1;
    }
    for _ in 0..200 {
        publish(i, false);
        i += 1;
    }
    server.publish_cycle(i as f64 * 0.01, vec![("end".into(), None, int(i as i64))]).unwrap();
    for r in readers {
        assert_eq!(r.join().unwrap(), i);
    }
    let stats = server.stats();
    assert_eq!((stats.dropped_slow, stats.dropped_idle), (1, 0), "{stats:?}");

    // The stalled client's stream ends (after what the kernel had buffered).
    stalled.set_read_timeout(Some(30 * SECOND)).unwrap();
    let mut buf = vec![0; 1 << 16];
    loop {
        match stalled.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the stalled client's stream did not end: {e}"),
        }
    }
    server.shutdown();
}

#[test]
fn clients_that_drop_mid_frame_do_not_disturb_the_others() {
    let server = server(ServerOptions::default());
    let addr = server.local_addr();
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..4).map(|_| AtomicU64::new(0)).collect());
    let readers: Vec<_> = (0..4)
        .map(|k| {
            let progress = Arc::clone(&progress);
            thread::spawn(move || {
                let mut client = connect(addr);
                client.next_cycle().unwrap().unwrap();
                for expect in 0..300u64 {
                    let cycle = client.next_cycle().expect("the stream ended early").expect("a cycle");
                    assert_eq!(named(&client, &cycle).get("n"), Some(&int(expect as i64)));
                    progress[k].store(expect + 1, Ordering::Release);
                }
            })
        })
        .collect();
    wait_until(10 * SECOND, "the clients to connect", || server.client_count() == 4);
    let mut abrupt = 0;
    for i in 0..300u64 {
        while progress.iter().map(|p| p.load(Ordering::Acquire)).min().unwrap() + 4 < i {
            thread::yield_now();
        }
        if i % 30 == 10 {
            // Half a heartbeat, part of a frame read, then gone with unread data (a reset).
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&HEARTBEAT[..2]).unwrap();
            let mut part = [0; 3];
            s.read_exact(&mut part).unwrap();
            abrupt += 1;
        }
        if i % 30 == 20 {
            // Gone while the server writes to it.
            let s = TcpStream::connect(addr).unwrap();
            s.shutdown(std::net::Shutdown::Both).unwrap();
            abrupt += 1;
        }
        let big = "x".repeat(if i % 2 == 0 { 20_000 } else { 10 });
        server
            .publish_cycle(i as f64, vec![("n".into(), None, int(i as i64)), ("pad".into(), None, text(&big))])
            .unwrap();
    }
    for r in readers {
        r.join().unwrap();
    }
    // Every connection, abrupt or finished, is gone; none was taken for a slow one.
    wait_until(10 * SECOND, "the connections to close", || server.stats().closed == abrupt + 4);
    assert_eq!(server.client_count(), 0);
    assert_eq!(server.stats().dropped_slow, 0);
}

#[test]
fn silent_clients_are_dropped_heartbeating_ones_are_not() {
    let server = server(ServerOptions { client_timeout: SECOND, ..ServerOptions::default() });
    let mut client = connect(server.local_addr());
    let _silent = TcpStream::connect(server.local_addr()).unwrap();
    wait_until(5 * SECOND, "the silent client to be dropped", || server.stats().dropped_idle == 1);
    thread::sleep(SECOND);
    assert_eq!(server.client_count(), 1);
    assert_eq!(server.stats().dropped_idle, 1);
    // Keep-alives kept the client's connection up while nothing was published.
    server.publish_cycle(1.0, vec![("a".into(), None, int(1))]).unwrap();
    client.next_cycle().unwrap().unwrap(); // newcomer
    let c = client.next_cycle().unwrap().unwrap();
    assert_eq!(named(&client, &c), [("a".to_string(), int(1))].into());
    assert!(client.counters().keepalives() > 10, "{}", client.counters().keepalives());
}

#[test]
fn shutdown_frees_the_port() {
    let first = server(ServerOptions::default());
    let addr = first.local_addr();
    let mut client = connect(addr);
    first.publish_cycle(0.5, vec![("a".into(), None, int(1))]).unwrap();
    client.next_cycle().unwrap().unwrap();
    first.shutdown();
    // The client sees the end of the stream, after every cycle.
    while let Some(c) = client.next_cycle() {
        c.unwrap();
    }
    drop(client);
    // The same port, at once; then once more after a drop.
    let second = Server::bind(addr, Revision::R2, ServerOptions::default()).expect("the port is free after shutdown");
    let mut client = connect(addr);
    assert!(client.next_cycle().unwrap().unwrap().values.is_empty());
    drop(second);
    drop(client);
    let third = Server::bind(addr, Revision::R1, ServerOptions::default()).expect("the port is free after drop");
    third.shutdown();
    assert_eq!(DEFAULT_PORT, 5800);
}

#[test]
fn reconnecting_client_gets_a_fresh_state_from_a_new_server() {
    let first = server(ServerOptions::default());
    let addr = first.local_addr();
    first.publish_cycle(1.0, vec![("a".into(), None, int(1)), ("b".into(), None, int(2))]).unwrap();
    let mut live = Reconnecting::new(addr, SECOND, true).unwrap();
    assert!(matches!(live.next_event(), Some(LiveEvent::Connected { revision: Revision::R2, .. })));
    let Some(LiveEvent::Cycle(c)) = live.next_event() else { panic!("the newcomer cycle") };
    assert_eq!(c.values.len(), 2);
    first.shutdown();
    assert!(matches!(live.next_event(), Some(LiveEvent::Disconnected(_))));

    // A new server on the same port, with other key ids.
    let second = Server::bind(addr, Revision::R2, ServerOptions::default()).unwrap();
    second.publish_cycle(2.0, vec![("b".into(), None, int(3))]).unwrap();
    let start = Instant::now();
    let ev = loop {
        match live.next_event() {
            Some(LiveEvent::ConnectFailed(_)) => {}
            ev => break ev,
        }
    };
    assert!(matches!(ev, Some(LiveEvent::Connected { .. })), "{ev:?}");
    assert!(start.elapsed() >= Duration::from_millis(400), "reconnects after 500 ms");
    let Some(LiveEvent::Cycle(c)) = live.next_event() else { panic!("the newcomer cycle") };
    assert_eq!((c.timestamp, c.values.len()), (2.0, 1));
    assert_eq!(live.key(c.values[0].0).unwrap().name, "b");

    // A stop ends it, from another thread, while it waits for a cycle.
    let stopper = live.stopper();
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        stopper.stop();
    });
    assert!(live.next_event().is_none());
    t.join().unwrap();
    second.shutdown();
}

/// Per key, its values in order with their timestamps, consecutive repeats dropped (a live
/// stream sends only changes); and the cycles' timestamps.
type History = (BTreeMap<String, Vec<(f64, String)>>, Vec<f64>);

fn history(path: &std::path::Path) -> History {
    let mut r = Reader::new(std::fs::File::open(path).unwrap()).unwrap();
    let (mut keys, mut times) = (BTreeMap::<String, Vec<(f64, String)>>::new(), Vec::new());
    while let Some(c) = r.next_cycle() {
        let c = c.unwrap();
        if c.values.is_empty() {
            continue;
        }
        times.push(c.timestamp);
        for (id, v) in c.values {
            let k = r.key(id).unwrap();
            let seq = keys.entry(format!("{} ({:?})", k.name, k.declared_type)).or_default();
            let shown = format!("{v:?}");
            if seq.last().map(|(_, s)| s) != Some(&shown) {
                seq.push((c.timestamp, shown));
            }
        }
    }
    (keys, times)
}

#[test]
fn serve_then_record_gives_the_same_values() {
    let bin = env!("CARGO_BIN_EXE_logspec");
    let input = data("gen_akit_head_r2_alltypes.rlog");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_recorded_{}.rlog", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let mut serve = Command::new(bin)
        .args(["rlog", "serve", "--port", "0", "--rate", "200", "--wait-for-client", "--exit-at-end"])
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(serve.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended without listening");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let drain = thread::spawn(move || {
        let mut rest = String::new();
        stderr.read_to_string(&mut rest).unwrap();
        rest
    });
    let record =
        Command::new(bin).args(["rlog", "record", &addr, "--duration", "60", "-o"]).arg(&out).output().unwrap();
    let record_err = String::from_utf8_lossy(&record.stderr);
    assert!(record.status.success(), "record failed: {record_err}");
    assert!(record_err.contains("wrote 8 cycles"), "{record_err}");
    let status = serve.wait().unwrap();
    let serve_err = drain.join().unwrap();
    assert!(status.success(), "serve failed: {serve_err}");
    assert!(serve_err.contains("published 8 cycles"), "{serve_err}");

    let (want, got) = (history(&input), history(&out));
    assert_eq!(got.1, want.1, "cycle timestamps");
    assert_eq!(got.0, want.0, "values per key");
    assert_eq!(want.0.len(), 17);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn record_without_a_server_fails_and_leaves_no_file() {
    // A port nobody listens on: bind one, then free it.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_nothing_{}.rlog", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["rlog", "record", &addr.to_string(), "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains("lost"), "{err}");
    assert!(!out.exists());
}

/// A file of `cycles` cycles, each changing a 2 KB byte array and a double, as AdvantageKit's
/// encoder writes it (only changed values, keys defined before their first value).
fn big_file(cycles: u32) -> Vec<u8> {
    use logspec::formats::rlog::{Encoder, R1Value};
    let mut enc = Encoder::new(Revision::R1);
    let mut out = vec![Revision::R1.byte()];
    for i in 0..cycles {
        let blob: Vec<u8> = (0..2000u32).map(|j| (i.wrapping_mul(31) ^ j) as u8).collect();
        let values = [
            ("/Blob", None, Value::R1(R1Value::ByteArray { value: blob })),
            ("/Double", None, Value::R1(R1Value::Double { value: f64::from(i) * 0.5 })),
        ];
        enc.encode_cycle(f64::from(i) * 0.02, values, &mut out).unwrap();
    }
    out
}

/// The acceptance test of the file replay: 20 `rlog record` clients and one client that never
/// reads (nor sends a heartbeat), on `rlog serve FILE --rate max`. Every recording is
/// byte-identical to the file; the stalled client is dropped (after the documented 3 s) and the
/// summary and exit status say so.
#[test]
fn serve_at_max_rate_delivers_every_cycle_to_20_recorders_and_drops_a_stalled_client() {
    let bin = env!("CARGO_BIN_EXE_logspec");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_twenty_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Far more than the socket buffers of a client that never reads can hold.
    let input = dir.join("big.rlog");
    let bytes = big_file(4000);
    assert!(bytes.len() > 8_000_000);
    std::fs::write(&input, &bytes).unwrap();
    let mut serve = Command::new(bin)
        .args(["rlog", "serve", "--port", "0", "--rate", "max", "--wait-for-clients", "21", "--exit-at-end"])
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(serve.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended without listening");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let drain = thread::spawn(move || {
        let mut rest = String::new();
        stderr.read_to_string(&mut rest).unwrap();
        rest
    });
    let stalled = TcpStream::connect(&addr).unwrap();
    let recorders: Vec<(PathBuf, std::process::Child)> = (0..20)
        .map(|i| {
            let out = dir.join(format!("rec{i}.rlog"));
            let child = Command::new(bin)
                .args(["rlog", "record", &addr, "--duration", "300", "-o"])
                .arg(&out)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    for (out, child) in recorders {
        let done = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{}: {err}", out.display());
        assert!(err.contains("it ended"), "{err}");
        assert!(std::fs::read(&out).unwrap() == bytes, "{} is not byte-identical to the file", out.display());
    }
    let status = serve.wait().unwrap();
    let summary = drain.join().unwrap();
    drop(stalled);
    assert_eq!(status.code(), Some(1), "a dropped client makes serve fail: {summary}");
    assert!(summary.contains("published 4000 cycles to 21 client connection(s); 1 dropped"), "{summary}");
    assert_eq!(summary.matches("4000 cycles sent; every cycle written").count(), 20, "{summary}");
    assert_eq!(summary.matches("DROPPED").count(), 1, "{summary}");
    assert!(summary.contains("for 3 s"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake server: on each accepted connection, the frames of one session (payloads), then close.
fn fake_server(sessions: Vec<Vec<Vec<u8>>>) -> (SocketAddr, thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = thread::spawn(move || {
        for frames in sessions {
            let (mut s, _) = listener.accept().unwrap();
            for f in frames {
                s.write_all(&(f.len() as i32).to_be_bytes()).unwrap();
                s.write_all(&f).unwrap();
            }
            s.flush().unwrap();
            // End our side, then read the client's heartbeats until it closes: closing with unread
            // bytes would reset the connection.
            s.shutdown(std::net::Shutdown::Write).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut sink = [0; 64];
            while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        }
    });
    (addr, t)
}

fn r1_cycle(enc: &mut logspec::formats::rlog::Encoder, t: f64, v: f64) -> Vec<u8> {
    let mut out = Vec::new();
    let value = Value::R1(logspec::formats::rlog::R1Value::Double { value: v });
    enc.encode_cycle(t, [("/a", None, value)], &mut out).unwrap();
    out
}

fn record_cmd(addr: SocketAddr, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_logspec"))
        .args(["rlog", "record", &addr.to_string(), "-o"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn timestamps(path: &std::path::Path) -> Vec<f64> {
    let mut r = Reader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(c) = r.next_cycle() {
        out.push(c.unwrap().timestamp);
    }
    out
}

/// AdvantageKit's server can send the cycle its newcomer snapshot was taken in once more right
/// after it: `record` does not repeat that timestamp.
#[test]
fn record_does_not_repeat_the_catch_up_timestamp() {
    use logspec::formats::rlog::Encoder;
    let mut enc = Encoder::new(Revision::R1);
    let _ = r1_cycle(&mut enc, 4.0, 1.0);
    let c5 = r1_cycle(&mut enc, 5.0, 2.0);
    let mut newcomer = Vec::new();
    enc.newcomer(&mut newcomer);
    let c6 = r1_cycle(&mut enc, 6.0, 3.0);
    let (addr, server) = fake_server(vec![vec![newcomer, c5, c6]]);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_repeat_{}.rlog", std::process::id()));
    let r = record_cmd(addr, &out, &[]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(err.contains("it ended"), "{err}");
    assert_eq!(timestamps(&out), [5.0, 6.0]);
    let _ = std::fs::remove_file(&out);
}

/// With `--reconnect`, an empty catch-up is never a cycle, and a server whose time restarted
/// gets a new file: time never steps back inside one.
#[test]
fn record_reconnect_across_a_server_restart_starts_a_new_file() {
    use logspec::formats::rlog::Encoder;
    let (mut a, mut b) = (Encoder::new(Revision::R1), Encoder::new(Revision::R1));
    let (mut empty_a, mut empty_b) = (Vec::new(), Vec::new());
    a.newcomer(&mut empty_a);
    b.newcomer(&mut empty_b);
    let first = vec![empty_a, r1_cycle(&mut a, 1.0, 1.0), r1_cycle(&mut a, 2.0, 2.0)];
    let second = vec![empty_b, r1_cycle(&mut b, 0.5, 5.0), r1_cycle(&mut b, 1.0, 6.0)];
    let (addr, server) = fake_server(vec![first, second]);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_restart_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.rlog");
    let r = record_cmd(addr, &out, &["--reconnect", "--duration", "3"]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(err.contains("the server's time restarted"), "{err}");
    assert_eq!(timestamps(&out), [1.0, 2.0]);
    assert_eq!(timestamps(&dir.join("run.2.rlog")), [0.5, 1.0]);
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["run.2.rlog", "run.rlog"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A frame announced larger than `MAX_FRAME` is refused at its length, before any of its bytes
/// is read; a smaller ceiling can be set.
#[test]
fn frame_reader_refuses_a_frame_over_the_ceiling() {
    use logspec::formats::rlog::net::MAX_FRAME;
    assert_eq!(MAX_FRAME, 64 << 20);
    let mut stream = vec![0, 0, 0, 1, 2];
    stream.extend_from_slice(&i32::MAX.to_be_bytes());
    stream.extend_from_slice(&[0; 100]);
    let mut frames = FrameReader::new(&stream[..]);
    assert_eq!(frames.next_frame().unwrap(), Some(vec![2]));
    let e = frames.next_frame().unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    let msg = e.to_string();
    assert!(msg.contains("the frame at byte 5 announces 2147483647 bytes, more than the 67108864 bytes"), "{msg}");
    // Nothing of the frame was read: the offset is that of its end of length.
    assert_eq!(frames.offset(), 9);

    let mut small = vec![0, 0, 0, 3, 2, 0, 0];
    small.extend_from_slice(&[0, 0, 0, 4, 1, 2, 3, 4]);
    let mut frames = FrameReader::new(&small[..]).with_max_frame(3);
    assert_eq!(frames.next_frame().unwrap(), Some(vec![2, 0, 0]));
    assert!(frames.next_frame().unwrap_err().to_string().contains("announces 4 bytes, more than the 3 bytes"));
}

/// A server that serves a newcomer frame, then what `flood` writes until the client hangs up
/// (or `flood` is done, each flood bounding what it sends), then closes.
fn flood_server(
    newcomer: Vec<u8>,
    mut flood: impl FnMut(&mut TcpStream) -> io::Result<()> + Send + 'static,
) -> (SocketAddr, thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        // A client that hangs up ends the flood with a write error; a hang guard for one that
        // does not.
        s.set_write_timeout(Some(30 * SECOND)).unwrap();
        s.write_all(&(newcomer.len() as i32).to_be_bytes()).unwrap();
        s.write_all(&newcomer).unwrap();
        let _ = flood(&mut s);
        // End our side, then read the client's heartbeats until it closes: closing with unread
        // bytes would reset the connection.
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.set_read_timeout(Some(2 * SECOND));
        let mut sink = [0; 64];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    (addr, t)
}

/// R1 timestamp-only cycles at time 0: `n` of them, 9 bytes each.
fn time_zero_cycles(n: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(9 * n);
    for _ in 0..n {
        // R1: a timestamp message is 0x00 then the f64, big-endian (0.0: eight zero bytes).
        bytes.extend_from_slice(&[0; 9]);
    }
    bytes
}

fn newcomer_r1() -> Vec<u8> {
    use logspec::formats::rlog::Encoder;
    let mut enc = Encoder::new(Revision::R1);
    let _ = r1_cycle(&mut enc, 0.0, 1.0);
    let mut newcomer = Vec::new();
    enc.newcomer(&mut newcomer);
    newcomer
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// The hostile server: a 2^31-1-byte frame, then cycles all at time 0 for as long as the
/// client reads. `record` refuses the frame at its length: a clear error, and a file holding only
/// the catch-up cycle (before: 857 MB written in 8 s).
#[test]
fn record_refuses_a_frame_of_two_gib() {
    let (addr, server) = flood_server(newcomer_r1(), |s| {
        s.write_all(&i32::MAX.to_be_bytes())?;
        let chunk = time_zero_cycles(7000);
        // At most 1 GiB, a hang guard: the client hangs up long before.
        for _ in 0..(1 << 30) / chunk.len() {
            s.write_all(&chunk)?;
        }
        Ok(())
    });
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_2gib_{}.rlog", std::process::id()));
    let r = record_cmd(addr, &out, &[]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("announces 2147483647 bytes, more than the 67108864 bytes (64 MiB)"), "{err}");
    assert!(err.contains("refused before reading it"), "{err}");
    assert!(!err.contains("cannot connect"), "{err}");
    // The revision byte, the key definition, the catch-up cycle's timestamp and value.
    assert!(file_len(&out) < 100, "{} bytes", file_len(&out));
    assert_eq!(timestamps(&out), [0.0]);
    let _ = std::fs::remove_file(&out);
}

/// Cycles all at time 0 in frames of a legal size: `record` stops once `--max-mib-per-second`
/// was written within one second of stream time, with a clear error, and keeps what came before.
#[test]
fn record_stops_a_flood_at_one_time() {
    let (addr, server) = flood_server(newcomer_r1(), |s| {
        let frame = time_zero_cycles(7000);
        // At most 1 GiB, a hang guard: the client hangs up long before.
        for _ in 0..(1 << 30) / frame.len() {
            s.write_all(&(frame.len() as i32).to_be_bytes())?;
            s.write_all(&frame)?;
        }
        Ok(())
    });
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_flood_{}.rlog", std::process::id()));
    let r = record_cmd(addr, &out, &["--max-mib-per-second", "1"]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("over the cap of 1 MiB per second of stream time (--max-mib-per-second)"), "{err}");
    assert!(err.contains("the cycle at 0 s"), "{err}");
    // 1 MiB, plus at most the writer's 64 KiB buffer and the cycle that passed the cap.
    let len = file_len(&out);
    assert!(len > 1 << 20 && len <= (1 << 20) + (64 << 10) + 9, "{len} bytes");
    let ts = timestamps(&out);
    assert!(ts.iter().all(|&t| t == 0.0));
    // The file holds every cycle written, each 9 bytes, after the catch-up.
    assert_eq!(ts.len() as u64, 1 + (len - file_len_of_catch_up()) / 9);
    let _ = std::fs::remove_file(&out);
}

/// The bytes of a file that holds only `newcomer_r1`'s cycle.
fn file_len_of_catch_up() -> u64 {
    // Revision byte, key definition of "/a" (1 + 2 + 2 + 2 bytes), timestamp (9), value (1 + 2 +
    // 1 + 8 bytes for an R1 double).
    1 + 7 + 9 + 12
}

/// A server that accepts and sends only keep-alives, then drops: "connection ... lost after",
/// never "cannot connect" (before: "cannot connect" after 8 s of being connected).
#[test]
fn record_words_a_connection_lost_after_keepalives() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        for _ in 0..20 {
            if s.write_all(&[0; 4]).is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rlog_net_lost_{}.rlog", std::process::id()));
    let r = record_cmd(addr, &out, &[]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("connection to {addr} lost after ")), "{err}");
    assert!(err.contains("before the stream began"), "{err}");
    assert!(!err.contains("cannot connect"), "{err}");
    assert!(!out.exists());

    // The same after the stream began: a connection cut inside a frame.
    let (addr, server) = flood_server(newcomer_r1(), |s| {
        s.write_all(&[0; 4])?;
        s.write_all(&100i32.to_be_bytes())?;
        s.write_all(&[0; 9])
    });
    let r = record_cmd(addr, &out, &[]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("connection to {addr} lost after ")), "{err}");
    assert!(err.contains("the stream ends inside the frame"), "{err}");
    assert!(!err.contains("cannot connect"), "{err}");
    assert_eq!(timestamps(&out), [0.0]);

    // A server that goes silent (no keep-alive) with the connection open: lost after the
    // client's idle timeout, 3 s.
    let (addr, server) = flood_server(newcomer_r1(), |s| {
        let mut sink = [0; 64];
        // Until the client hangs up (a hang guard of 30 s).
        s.set_read_timeout(Some(30 * SECOND))?;
        while s.read(&mut sink)? > 0 {}
        Ok(())
    });
    let r = record_cmd(addr, &out, &[]);
    server.join().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("connection to {addr} lost after ")), "{err}");
    assert!(err.contains("the server sent nothing, not even a keep-alive, for 3 s"), "{err}");
    assert_eq!(timestamps(&out), [0.0]);
    let _ = std::fs::remove_file(&out);
}
