//! The RLOG live-stream server under load: a producer publishing at 50 Hz (AdvantageKit's robot
//! cycle) to 50 clients over loopback, one of which never reads.
//!
//! `cargo bench --bench rlog_net` (optionally `-- --secs 10 --clients 50 --keys 300 --blobs 4`).
//! Each cycle changes `keys` doubles and `blobs` raw values of 32 KB (camera frames, say: enough
//! for the stalled client's socket buffers to fill within the run). Reports the producer's
//! `publish_cycle` time (median, 99th percentile, worst) against the 20 ms cycle budget, whether
//! every reading client got every cycle in order, and when the stalled client was disconnected
//! (its socket buffers fill first; then its queue fills, or its writer makes no progress for the
//! client timeout, whichever comes first).

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use logspec::formats::rlog::net::{Client, Server, ServerOptions, HEARTBEAT, HEARTBEAT_INTERVAL};
use logspec::formats::rlog::{R2Value, Revision, Value};

const CYCLE: Duration = Duration::from_millis(20);

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: expected a number, got {v}")))
        .unwrap_or(default)
}

fn main() {
    let secs = arg("--secs", 10);
    let clients = arg("--clients", 50).max(2) as usize;
    let keys = arg("--keys", 300) as usize;
    let blobs = arg("--blobs", 4) as usize;
    const BLOB: usize = 32767;

    let server = Server::bind("127.0.0.1:0", Revision::R2, ServerOptions::default()).unwrap();
    let addr = server.local_addr();
    let names: Vec<String> = (0..keys).map(|k| format!("/RealOutputs/Module{}/Value{k}", k % 4)).collect();
    let blob_names: Vec<String> = (0..blobs).map(|b| format!("/Camera{b}/Frame")).collect();

    // One client heartbeats but never reads.
    let stalled = TcpStream::connect(addr).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let beat = {
        let (mut s, done) = (stalled.try_clone().unwrap(), Arc::clone(&done));
        thread::spawn(move || {
            while !done.load(Ordering::Relaxed) && s.write_all(&HEARTBEAT).is_ok() {
                thread::sleep(HEARTBEAT_INTERVAL);
            }
        })
    };
    // The others read and check every cycle.
    let readers: Vec<_> = (0..clients - 1)
        .map(|_| {
            thread::spawn(move || {
                let mut c = Client::connect(addr, Duration::from_secs(5)).unwrap();
                c.next_cycle().unwrap().unwrap(); // the (empty) catch-up state
                let mut n = 0u64;
                let mut in_order = true;
                while let Some(Ok(cycle)) = c.next_cycle() {
                    in_order &= cycle.timestamp == n as f64 * 0.02;
                    n += 1;
                }
                (n, in_order)
            })
        })
        .collect();
    while server.client_count() < clients {
        thread::sleep(Duration::from_millis(5));
    }

    let total = secs * 50;
    let mut times = Vec::with_capacity(total as usize);
    let mut stalled_dropped_at = None;
    let start = Instant::now();
    for i in 0..total {
        let due = start + CYCLE * i as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let mut values: Vec<(&str, Option<&str>, Value)> = names
            .iter()
            .enumerate()
            .map(|(k, name)| (name.as_str(), None, Value::R2(R2Value::Double { value: (i * 1000 + k as u64) as f64 })))
            .collect();
        for (b, name) in blob_names.iter().enumerate() {
            values.push((
                name.as_str(),
                Some("raw"),
                Value::R2(R2Value::Raw { value: vec![(i + b as u64) as u8; BLOB] }),
            ));
        }
        let t = Instant::now();
        server.publish_cycle_with(i as f64 * 0.02, values).unwrap();
        times.push(t.elapsed());
        if stalled_dropped_at.is_none() && server.stats().dropped_slow > 0 {
            stalled_dropped_at = Some(start.elapsed());
        }
    }
    let stats = server.stats();
    let t = Instant::now();
    server.shutdown();
    let shutdown = t.elapsed();
    done.store(true, Ordering::Relaxed);
    drop(stalled);
    beat.join().unwrap();
    let received: Vec<(u64, bool)> = readers.into_iter().map(|r| r.join().unwrap()).collect();

    times.sort();
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let (median, p99, worst) = (pct(0.5), pct(0.99), *times.last().unwrap());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let frame = keys * 13 + blobs * (BLOB + 7) + 9;
    println!(
        "rlog_net: {clients} clients (1 never reads), {total} cycles at 50 Hz over {secs} s, ~{} KB per frame",
        frame / 1024
    );
    println!(
        "publish_cycle: median {:.3} ms, p99 {:.3} ms, worst {:.3} ms; worst / 20 ms budget = {:.3} (median {:.4})",
        ms(median),
        ms(p99),
        ms(worst),
        worst.as_secs_f64() / CYCLE.as_secs_f64(),
        median.as_secs_f64() / CYCLE.as_secs_f64()
    );
    let complete = received.iter().filter(|(n, ok)| *n == total && *ok).count();
    println!("reading clients with every cycle, in order: {complete} of {}", clients - 1);
    match stalled_dropped_at {
        Some(t) => println!("stalled client disconnected after {:.1} s", t.as_secs_f64()),
        None => println!("stalled client still connected at the end (its socket buffers had not filled)"),
    }
    println!(
        "server: {} dropped as slow, {} as silent; shutdown took {:.0} ms",
        stats.dropped_slow,
        stats.dropped_idle,
        ms(shutdown)
    );
}
