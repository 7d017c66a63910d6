//! `logspec rlog serve` and `logspec rlog record`: the RLOG live stream on the command line.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use logspec::formats::rlog::net::{
    ClientEnd, LiveEvent, Reconnecting, Server, ServerOptions, Stopper, DEFAULT_PORT, IDLE_TIMEOUT,
};
use logspec::formats::rlog::{Cycle, Reader, RlogErrorKind, RlogWriteError, Value, Writer};

use super::{open, shown, Error};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Verb,
}

#[derive(clap::Subcommand, Debug)]
pub enum Verb {
    /// Replay an RLOG file (or a captured stream) as a live stream, like AdvantageKit's
    /// RLOGServer: AdvantageScope connects to it as to a robot.
    ///
    /// Each cycle of the file is published in turn (only changed values are sent); a client that
    /// connects gets the current state first. At the end of the file the server keeps serving the
    /// final state until Ctrl-C, unless `--exit-at-end` or `--loop`.
    ///
    /// A file has no deadline: at any `--rate`, `max` included, the server waits for a client
    /// that is slow but reading, so every such client gets every cycle. A client that accepts
    /// nothing for 3 s (it stopped reading), or sends nothing (no heartbeat) for 3 s, is dropped.
    /// At the end, a line per client says how many cycles it was sent and whether it was dropped;
    /// the exit status is 1 when any client was dropped.
    ///
    /// Example: `logspec rlog serve robot.rlog --rate real` then, in AdvantageScope, "Connect to
    /// simulator" (127.0.0.1:5800).
    Serve(ServeArgs),
    /// Connect to a live stream (a robot, a simulator or `logspec rlog serve`) and write it as an
    /// RLOG file, until Ctrl-C, `--duration` or the server closes the connection. Only complete
    /// cycles are written; a cycle that repeats the timestamp of the catch-up state right after
    /// joining (AdvantageKit's server sends the cycle of its snapshot twice at times) joins the
    /// catch-up cycle instead of repeating its timestamp. The file is written through a
    /// temporary file beside OUT, renamed to OUT at the end.
    ///
    /// At the end, `record` says whether the stream ended (the server closed it at a frame
    /// boundary; exit 0) or was cut (inside a frame, or the connection failed; exit 1). The
    /// protocol has no end-of-stream message: a server that drops a slow client closes it at a
    /// frame boundary too, which looks the same as an end. "cannot connect" means no server
    /// accepted the connection; "connection lost after N s" that one did and the connection
    /// ended (or sent nothing, not even a keep-alive, for 3 s) N seconds later.
    ///
    /// What a server sends is bounded: a frame announced larger than 64 MiB (logspec's ceiling;
    /// the format allows 2 GiB) is refused at once, and the recording stops with an error once
    /// `--max-mib-per-second` was written within one second of the stream's time (a server whose
    /// time does not advance); the file keeps the cycles before.
    ///
    /// Example: `logspec rlog record 10.12.34.2 -o match.rlog --reconnect`
    Record(RecordArgs),
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The RLOG file, or a captured RLOG stream (detected).
    pub file: PathBuf,
    /// The TCP port (0 picks a free one; the address is printed on stderr).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// The address to listen on (`0.0.0.0` for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Pace: `real` (by the file's timestamps), a number of cycles per second, or `max`.
    #[arg(long, default_value = "real", value_parser = parse_rate)]
    pub rate: Rate,
    /// Replay the file again and again, timestamps shifted to keep increasing.
    #[arg(long = "loop")]
    pub repeat: bool,
    /// Publish nothing before a first client has connected.
    #[arg(long)]
    pub wait_for_client: bool,
    /// Publish nothing before N clients have connected.
    #[arg(long, value_name = "N", conflicts_with = "wait_for_client")]
    pub wait_for_clients: Option<usize>,
    /// Exit after the last cycle, once clients have received it (at most 3 s), instead of
    /// serving the final state until Ctrl-C.
    #[arg(long, conflicts_with = "repeat")]
    pub exit_at_end: bool,
    /// Read a file that has no revision byte as R1 (AdvantageKit#15).
    #[arg(long)]
    pub assume_r1: bool,
}

/// How fast `serve` publishes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// As the file's timestamps say.
    Real,
    /// This many cycles per second.
    PerSecond(f64),
    /// As fast as possible.
    Max,
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    match s {
        "real" => Ok(Rate::Real),
        "max" => Ok(Rate::Max),
        n => n
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(Rate::PerSecond)
            .ok_or_else(|| format!("expected `real`, `max` or a positive number of cycles per second, got {s:?}")),
    }
}

#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// The server: HOST or HOST:PORT (port 5800 when omitted), e.g. `10.12.34.2` or
    /// `127.0.0.1:5810`.
    pub addr: String,
    /// The RLOG file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Stop after this many seconds.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Keep recording across disconnects: reconnect after 0.5 s (as AdvantageScope does), and
    /// keep trying while the server is down. Each connection starts with the server's current
    /// state, written as a cycle unless it is empty. When the server's time restarted (a new
    /// server), the file so far is complete and recording goes on in OUT.2.EXT, OUT.3.EXT, ...,
    /// so time never steps back inside one file.
    #[arg(long)]
    pub reconnect: bool,
    /// Seconds to wait for each connection attempt.
    #[arg(long, default_value_t = 3.0)]
    pub connect_timeout: f64,
    /// At most this many MiB written per second of stream time (the cycles' timestamps): a
    /// stream that sends this much within one second of its time (its time stands still, or
    /// creeps) ends the recording with an error, the file holding what came before. A robot
    /// sends well under 1 MiB per second.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_mib_per_second: u64,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    match args.command {
        Verb::Serve(a) => serve(a),
        Verb::Record(a) => record(a),
    }
}

/// Makes Ctrl-C (and SIGTERM, SIGHUP) stop `stopper`.
fn on_interrupt(stopper: &Stopper) {
    let s = stopper.clone();
    if let Err(e) = ctrlc::set_handler(move || s.stop()) {
        eprintln!("logspec: warning: cannot handle Ctrl-C: {e}");
    }
}

fn seconds(s: f64, what: &str) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(s).map_err(|_| Error::Usage(format!("{what}: expected a number of seconds, got {s}")))
}

// ---------------------------------------------------------------------------------------------
// serve

/// Opens the file as an RLOG reader (a file or a captured stream).
fn open_rlog(file: &Path, assume_r1: bool) -> Result<Reader<Box<dyn Read>>, Error> {
    let input = super::InputArgs { assume_r1, ..Default::default() };
    open(file, &input)?.into_rlog()
}

/// When each cycle is due.
struct Pacer {
    rate: Rate,
    start: Option<Instant>,
    first_ts: f64,
    n: u64,
}

impl Pacer {
    /// Waits until the cycle at `ts` is due; returns whether stopped meanwhile.
    fn wait(&mut self, ts: f64, stop: &Stopper) -> bool {
        let start = *self.start.get_or_insert_with(|| {
            self.first_ts = ts;
            Instant::now()
        });
        let after = match self.rate {
            Rate::Max => return stop.is_stopped(),
            Rate::Real => ts - self.first_ts,
            Rate::PerSecond(r) => self.n as f64 / r,
        };
        self.n += 1;
        let after = Duration::try_from_secs_f64(after).unwrap_or(Duration::ZERO);
        stop.sleep_until(start.checked_add(after))
    }
}

fn serve(a: ServeArgs) -> Result<ExitCode, Error> {
    let path = shown(&a.file);
    if a.repeat && a.file.as_os_str() == "-" {
        return Err(Error::Usage("--loop needs a file, not standard input".into()));
    }
    let mut reader = open_rlog(&a.file, a.assume_r1)?;
    let revision = reader.revision();
    // A file has no deadline: the server waits for a client that is slow but reading, and drops
    // one that stopped reading only after it accepted nothing for the client timeout (3 s).
    let options =
        ServerOptions { stall_timeout: Some(IDLE_TIMEOUT), shutdown_grace: IDLE_TIMEOUT, ..ServerOptions::default() };
    let server = Server::bind((a.bind.as_str(), a.port), revision, options)
        .map_err(|e| Error::Input(format!("cannot listen on {}:{}: {e}", a.bind, a.port)))?;
    let stop = Stopper::new();
    on_interrupt(&stop);
    eprintln!("logspec rlog serve: listening on {} ({revision}, {path}); Ctrl-C stops", server.local_addr());
    let wait_for = a.wait_for_clients.unwrap_or(usize::from(a.wait_for_client));
    if wait_for > 0 {
        eprintln!("logspec rlog serve: waiting for {wait_for} client(s)");
        while server.client_count() < wait_for && !stop.sleep(Duration::from_millis(10)) {}
    }

    let mut pacer = Pacer { rate: a.rate, start: None, first_ts: 0.0, n: 0 };
    let mut failed = false;
    let mut warnings = 0u64;
    let mut published = 0u64;
    // Added to the file's timestamps, so that each pass of --loop continues the one before.
    let mut shift = 0.0;
    'passes: loop {
        let (mut first, mut last, mut n) = (None::<f64>, 0.0, 0u64);
        while let Some(cycle) = reader.next_cycle() {
            let cycle = match cycle {
                Ok(c) => c,
                Err(e) if e.is_recoverable() => {
                    warn(&mut warnings, format_args!("{path}: {e}"));
                    continue;
                }
                Err(e) => {
                    eprintln!("logspec: {path}: {e}");
                    failed = true;
                    break 'passes;
                }
            };
            let ts = cycle.timestamp + shift;
            first.get_or_insert(cycle.timestamp);
            last = cycle.timestamp;
            n += 1;
            if pacer.wait(ts, &stop) {
                break 'passes;
            }
            let mut values: Vec<(&str, Option<&str>, Value)> = Vec::with_capacity(cycle.values.len());
            for (id, v) in cycle.values {
                match reader.key(id) {
                    Some(k) => values.push((&k.name, k.declared_type.as_deref(), v)),
                    None => warn(
                        &mut warnings,
                        format_args!("{path}: a value of key id {id}, never defined, is not published"),
                    ),
                }
            }
            if let Err(e) = server.publish_cycle_with(ts, values) {
                warn(&mut warnings, format_args!("{path}: at {ts} s: {e}"));
            }
            published += 1;
        }
        let Some(first) = first else { break };
        if !a.repeat {
            break;
        }
        let step = if n > 1 { (last - first) / (n - 1) as f64 } else { 0.02 };
        let step = if step.is_finite() && step > 0.0 { step } else { 0.02 };
        shift += last - first + step;
        reader = open_rlog(&a.file, a.assume_r1)?;
        if reader.revision() != revision {
            return Err(Error::Input(format!("{path}: the file changed revision while serving")));
        }
    }

    if !stop.is_stopped() && !a.exit_at_end {
        eprintln!("logspec rlog serve: end of {path} after {published} cycles; serving the final state until Ctrl-C");
        stop.sleep_until(None);
    }
    let reports = server.shutdown_reports();
    let dropped = reports.iter().filter(|r| r.end.is_some_and(|e| e.dropped())).count();
    eprintln!(
        "logspec rlog serve: published {published} cycles to {} client connection(s); {dropped} dropped",
        reports.len()
    );
    for r in &reports {
        let end = match r.end {
            Some(ClientEnd::Served) | None => "every cycle written".to_string(),
            Some(ClientEnd::Closed) => "closed the connection".to_string(),
            Some(ClientEnd::CutAtShutdown) => {
                format!("DROPPED: still receiving {} s after the end", IDLE_TIMEOUT.as_secs())
            }
            Some(ClientEnd::DroppedSlow) => {
                format!("DROPPED: stopped reading for {} s", IDLE_TIMEOUT.as_secs())
            }
            Some(ClientEnd::DroppedIdle) => {
                format!("DROPPED: sent nothing (no heartbeat) for {} s", IDLE_TIMEOUT.as_secs())
            }
        };
        eprintln!("logspec rlog serve:   client {}: {} cycles sent; {end}", r.peer, r.cycles);
    }
    if dropped > 0 {
        failed = true;
    }
    if warnings > MAX_WARNINGS {
        eprintln!("logspec rlog serve: {warnings} warnings in all ({} shown)", MAX_WARNINGS);
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

const MAX_WARNINGS: u64 = 20;

fn warn(count: &mut u64, msg: std::fmt::Arguments<'_>) {
    *count += 1;
    if *count <= MAX_WARNINGS {
        eprintln!("logspec: warning: {msg}");
    }
}

// ---------------------------------------------------------------------------------------------
// record

/// `HOST`, `HOST:PORT`, `IP`, `IP:PORT`, `[IPv6]:PORT`; port 5800 when omitted.
fn resolve(s: &str) -> Result<Vec<SocketAddr>, Error> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    if let Ok(ip) = s.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, DEFAULT_PORT)]);
    }
    let spec = if s.contains(':') { s.to_string() } else { format!("{s}:{DEFAULT_PORT}") };
    let addrs: Vec<SocketAddr> =
        spec.to_socket_addrs().map_err(|e| Error::Usage(format!("{s}: cannot resolve the address: {e}")))?.collect();
    if addrs.is_empty() {
        return Err(Error::Usage(format!("{s}: the name resolves to no address")));
    }
    Ok(addrs)
}

/// The output file, counting the bytes written to it.
struct Counted {
    file: logspec_engine::output::OutFile,
    bytes: Rc<Cell<u64>>,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The output file: stream key ids mapped to the file's, which stay the same across reconnects.
struct Recording {
    writer: Writer<Counted>,
    /// Bytes written to the file so far (up to the writer's 64 KiB buffer behind).
    bytes: Rc<Cell<u64>>,
    /// The second of stream time the latest cycle reached (`floor` of the greatest timestamp),
    /// and the bytes written when it was reached.
    window: (f64, u64),
    /// File key id per (name, declared type).
    ids: HashMap<(String, Option<String>), i16>,
    /// File key id per stream key id, for the current connection.
    current: Vec<Option<i16>>,
    cycles: u64,
    values: u64,
    /// The timestamp of the last cycle written.
    last: Option<f64>,
}

impl Recording {
    /// Writes a cycle. With `repeat` (a cycle that repeats the catch-up's timestamp right after
    /// joining), its values join the catch-up cycle instead of repeating the timestamp.
    fn cycle(&mut self, live: &Reconnecting, cycle: Cycle, repeat: bool) -> Result<(), RlogWriteError> {
        // Time that does not advance (or is not a number) stays in the current window.
        let second = cycle.timestamp.floor();
        if second.is_finite() && second > self.window.0 {
            self.window = (second, self.bytes.get());
        }
        if !repeat {
            self.writer.timestamp(cycle.timestamp)?;
            self.cycles += 1;
            self.last = Some(cycle.timestamp);
        }
        for (sid, value) in cycle.values {
            let i = usize::from(sid as u16);
            let id = match self.current.get(i).copied().flatten() {
                Some(id) => id,
                None => {
                    let Some(key) = live.key(sid) else {
                        return Err(RlogWriteError::UndefinedKey { key_id: sid });
                    };
                    let named = (key.name.clone(), key.declared_type.clone());
                    let id = match self.ids.get(&named) {
                        Some(&id) => id,
                        None => {
                            if self.ids.len() > usize::from(u16::MAX) {
                                return Err(RlogWriteError::TooManyKeys);
                            }
                            let id = self.ids.len() as u16 as i16;
                            self.writer.define(id, &named.0, named.1.as_deref())?;
                            self.ids.insert(named, id);
                            id
                        }
                    };
                    if self.current.len() <= i {
                        self.current.resize(i + 1, None);
                    }
                    self.current[i] = Some(id);
                    id
                }
            };
            self.writer.value(id, value)?;
            self.values += 1;
        }
        Ok(())
    }

    /// The bytes written since the stream's time reached its current second, when over `cap`.
    fn over_cap(&self, cap: u64) -> Option<u64> {
        let n = self.bytes.get() - self.window.1;
        (n > cap).then_some(n)
    }
}

fn record(a: RecordArgs) -> Result<ExitCode, Error> {
    let addrs = resolve(&a.addr)?;
    let timeout = seconds(a.connect_timeout, "--connect-timeout")?;
    let duration = a.duration.map(|d| seconds(d, "--duration")).transpose()?;
    // Refused before connecting: an output that exists as a directory, or cannot be created.
    // A killed recording's temporary file is kept: it holds what was recorded.
    let first = logspec_engine::output::OutFile::create_keeping_stale(&a.output, &[])?;
    let cap = a.max_mib_per_second << 20;
    let mut live =
        Reconnecting::new(&addrs[..], timeout, a.reconnect).map_err(|e| Error::Usage(format!("{}: {e}", a.addr)))?;
    let stop = live.stopper();
    on_interrupt(&stop);
    if let Some(d) = duration {
        let s = stop.clone();
        std::thread::spawn(move || {
            s.sleep(d);
            s.stop();
        });
    }

    let mut files = Files { base: a.output.clone(), next: Some(first), rec: None, done: Vec::new(), revision: None };
    let mut failure: Option<String> = None;
    let mut connect_failures = 0u64;
    // Set at each connection: the next cycle is the server's catch-up (newcomer) state.
    let mut catch_up = false;
    // The catch-up's timestamp, until the cycle after it: AdvantageKit's server can send the
    // cycle it took the snapshot in once more, right after it.
    let mut joined_at: Option<f64> = None;
    // Whether the current connection has written no cycle yet (a restart of time is checked then).
    let mut fresh = false;
    // The current connection: its peer and when it was made.
    let mut connection: Option<(SocketAddr, Instant)> = None;
    let mut connections = 0u64;
    while let Some(ev) = live.next_event() {
        match ev {
            LiveEvent::Connected { peer, revision } => {
                eprintln!("logspec rlog record: connected to {peer} ({revision}), writing {}", files.current_name());
                connection = Some((peer, Instant::now()));
                connections += 1;
                connect_failures = 0;
                (catch_up, joined_at, fresh) = (true, None, true);
                if let Some(r) = &mut files.rec {
                    if r.writer.revision() != revision {
                        failure = Some(format!(
                            "{peer}: the stream is now {revision}, the file is {}; stopping",
                            r.writer.revision()
                        ));
                        break;
                    }
                    r.current.clear();
                }
                files.revision = Some(revision);
            }
            LiveEvent::Cycle(cycle) => {
                let was_catch_up = std::mem::take(&mut catch_up);
                // A catch-up without values carries no state (a server that has published
                // nothing yet): it is not a cycle.
                if was_catch_up && cycle.values.is_empty() {
                    continue;
                }
                let repeat = joined_at.take() == Some(cycle.timestamp);
                if fresh {
                    fresh = false;
                    // A server that restarted counts time from zero again: a new file, so that
                    // time never steps back inside one.
                    if files.rec.as_ref().and_then(|r| r.last).is_some_and(|last| cycle.timestamp < last) {
                        let note = files.rotate().map_err(|e| Error::Input(e.to_string()))?;
                        eprintln!("logspec rlog record: {note}");
                    }
                }
                let r = match files.recording() {
                    Ok(r) => r,
                    Err(e) => {
                        failure = Some(e.to_string());
                        break;
                    }
                };
                let ts = cycle.timestamp;
                if let Err(e) = r.cycle(&live, cycle, repeat) {
                    failure = Some(format!("{}: {e}", a.output.display()));
                    break;
                }
                if let Some(n) = r.over_cap(cap) {
                    failure = Some(format!(
                        "{}: {n} bytes written within one second of the stream's time (the cycle at {ts} s, \
                         after {} cycles), over the cap of {} MiB per second of stream time \
                         (--max-mib-per-second): the server's time does not advance; stopping",
                        a.addr, r.cycles, a.max_mib_per_second
                    ));
                    break;
                }
                if was_catch_up {
                    joined_at = r.last;
                }
            }
            LiveEvent::Skipped(e) => eprintln!("logspec: warning: {}: {e}", a.addr),
            LiveEvent::Disconnected(e) => {
                let (peer, since) = connection.take().map_or((None, None), |(p, t)| (Some(p), Some(t)));
                let how = match &e {
                    None => "the server closed the stream at a frame boundary: it ended (a server that drops a \
                             client closes it the same way)"
                        .to_string(),
                    // The connection failed (it ended inside a frame, or went silent), as opposed
                    // to a stream that does not decode, or a frame refused.
                    Some(e) if matches!(&e.kind, RlogErrorKind::Io(io) if io.kind() != std::io::ErrorKind::InvalidData) =>
                    {
                        let after = since.map_or(0.0, |t| t.elapsed().as_secs_f64());
                        let peer = peer.map_or_else(|| a.addr.clone(), |p| p.to_string());
                        let silent = matches!(&e.kind, RlogErrorKind::Io(io) if silence(io.kind()));
                        format!(
                            "connection to {peer} lost after {after:.1} s: {}",
                            if silent { silent_for() } else { e.to_string() }
                        )
                    }
                    Some(e) => format!("the stream was cut: {e}"),
                };
                match (e, a.reconnect) {
                    (_, true) => eprintln!("logspec rlog record: {how}; reconnecting"),
                    (None, false) => eprintln!("logspec rlog record: {how}"),
                    (Some(_), false) => failure = Some(format!("{}: {how}", a.addr)),
                }
            }
            LiveEvent::Lost { peer, after, error } => {
                let why = if silence(error.kind()) { silent_for() } else { error.to_string() };
                let how = format!(
                    "connection to {peer} lost after {:.1} s, before the stream began (the server sent no \
                     state, only keep-alives if anything): {why}",
                    after.as_secs_f64()
                );
                if a.reconnect {
                    eprintln!("logspec rlog record: {how}; reconnecting");
                } else {
                    failure = Some(format!("{}: {how}", a.addr));
                }
            }
            LiveEvent::ConnectFailed(e) => {
                if !a.reconnect {
                    failure = Some(format!("{}: cannot connect: {e}", a.addr));
                } else if connect_failures == 0 {
                    eprintln!("logspec rlog record: cannot connect to {} ({e}); retrying", a.addr);
                }
                connect_failures += 1;
            }
        }
    }
    stop.stop();

    if files.rec.is_none() && files.done.is_empty() {
        // Nothing was written: the temporary file goes, an existing output stays as it was.
        let nothing = if connections == 0 {
            format!("{}: nothing recorded: never connected", a.addr)
        } else {
            format!("{}: nothing recorded: the server sent no cycle with a value", a.addr)
        };
        return Err(Error::Input(failure.unwrap_or(nothing)));
    }
    files.finish()?;
    for (name, cycles, values, keys) in &files.done {
        eprintln!("logspec rlog record: wrote {cycles} cycles ({values} values, {keys} keys) to {name}");
    }
    match failure {
        Some(f) => {
            eprintln!("logspec: {f}");
            Ok(ExitCode::from(1))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Whether a read error is the idle timeout: the server sent nothing for [`IDLE_TIMEOUT`].
fn silence(kind: std::io::ErrorKind) -> bool {
    matches!(kind, std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

fn silent_for() -> String {
    format!("the server sent nothing, not even a keep-alive, for {} s", IDLE_TIMEOUT.as_secs())
}

/// The files of one `record`: `OUT`, then `OUT.2.EXT`, `OUT.3.EXT`, ... when a reconnect finds
/// that the server's time restarted.
struct Files {
    base: PathBuf,
    /// The output file of the next recording, created but not yet written.
    next: Option<logspec_engine::output::OutFile>,
    rec: Option<Recording>,
    /// Committed files: name, cycles, values, keys.
    done: Vec<(String, u64, u64, usize)>,
    revision: Option<logspec::formats::rlog::Revision>,
}

impl Files {
    /// The name of the file being (or about to be) written.
    fn current_name(&self) -> String {
        self.name(self.done.len() + 1).display().to_string()
    }

    /// `OUT` for the first file, `OUT-STEM.N.EXT` after.
    fn name(&self, n: usize) -> PathBuf {
        if n == 1 {
            return self.base.clone();
        }
        let stem = self.base.file_stem().map_or_else(|| "recording".into(), |s| s.to_string_lossy().into_owned());
        let name = match self.base.extension() {
            Some(x) => format!("{stem}.{n}.{}", x.to_string_lossy()),
            None => format!("{stem}.{n}"),
        };
        self.base.with_file_name(name)
    }

    /// The recording being written, started on its first cycle.
    fn recording(&mut self) -> Result<&mut Recording, Error> {
        if self.rec.is_none() {
            let file = match self.next.take() {
                Some(f) => f,
                None => logspec_engine::output::OutFile::create_keeping_stale(&self.name(self.done.len() + 1), &[])?,
            };
            let revision = self.revision.expect("a cycle comes after a connection");
            let bytes = Rc::new(Cell::new(0));
            let writer = Writer::new(Counted { file, bytes: Rc::clone(&bytes) }, revision);
            self.rec = Some(Recording {
                writer,
                bytes,
                window: (f64::NEG_INFINITY, 0),
                ids: HashMap::new(),
                current: Vec::new(),
                cycles: 0,
                values: 0,
                last: None,
            });
        }
        Ok(self.rec.as_mut().expect("set above"))
    }

    /// Commits the current file; the next cycle starts a new one.
    fn rotate(&mut self) -> Result<String, Error> {
        let ended = self.current_name();
        self.commit()?;
        Ok(format!("the server's time restarted: {ended} is complete; continuing in {}", self.current_name()))
    }

    fn commit(&mut self) -> Result<(), Error> {
        let Some(r) = self.rec.take() else { return Ok(()) };
        let name = self.current_name();
        let (cycles, values, keys) = (r.cycles, r.values, r.ids.len());
        r.writer.finish().map_err(|e| Error::Input(format!("{name}: {e}")))?.file.commit()?;
        self.done.push((name, cycles, values, keys));
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        self.commit()
    }
}
