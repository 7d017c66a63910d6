//! The live-stream [`Server`]: one shared encoder, a bounded queue and two threads per client,
//! exact catch-up, keep-alives, heartbeat timeouts, and the slow-client policy described in the
//! module docs of `net`.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::frames::{seal, FRAME_HEADER};
use super::{lock, IDLE_TIMEOUT};
use crate::formats::rlog::{Encoder, Revision, RlogWriteError, Value};

/// How a [`Server`] treats its clients.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Frames a client may have waiting to be written; a client whose queue is full is
    /// disconnected (see the module docs). At least 1.
    pub queue_frames: usize,
    /// An empty frame is sent to a client after this long without a frame.
    pub keepalive_interval: Duration,
    /// A client is dropped when it sent nothing for this long, or accepted no byte for this long.
    pub client_timeout: Duration,
    /// How long [`Server::shutdown`] lets clients receive what is queued for them before it
    /// closes their connections.
    pub shutdown_grace: Duration,
    /// `None` (live robot code, the default): publishing never blocks, and a client whose queue
    /// is full is disconnected. `Some(t)` (replaying a file, which has no deadline): publishing
    /// waits for a client whose queue is full, so that every client that keeps reading gets
    /// every cycle, and disconnects it only when its queue stayed full for `t` (it stopped
    /// reading); the others are held up at most `t`, once.
    pub stall_timeout: Option<Duration>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            queue_frames: 500,
            keepalive_interval: Duration::from_millis(20),
            client_timeout: IDLE_TIMEOUT,
            shutdown_grace: Duration::from_secs(1),
            stall_timeout: None,
        }
    }
}

/// What a [`Server`] has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Clients connected now.
    pub clients: usize,
    /// Connections accepted.
    pub accepted: u64,
    /// Cycles published.
    pub cycles: u64,
    /// Clients disconnected because their queue was full, or they accepted no byte for
    /// `client_timeout`.
    pub dropped_slow: u64,
    /// Clients disconnected because they sent nothing for `client_timeout`.
    pub dropped_idle: u64,
    /// Connections closed by the client, or lost to a socket error.
    pub closed: u64,
}

type Frame = Arc<Vec<u8>>;

/// Why a client went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientEnd {
    /// Still connected when the server stopped, and every frame queued for it was written.
    Served,
    /// Still connected when the server stopped, but cut before its queue was written out
    /// (after [`ServerOptions::shutdown_grace`]).
    CutAtShutdown,
    /// Disconnected as too slow: its queue was full (or stayed full for the stall timeout), or
    /// it accepted no byte for `client_timeout`.
    DroppedSlow,
    /// Disconnected because it sent nothing (no heartbeat) for `client_timeout`.
    DroppedIdle,
    /// It closed the connection, or the socket failed.
    Closed,
}

impl ClientEnd {
    /// Whether the server dropped the client (it may have missed cycles).
    pub fn dropped(self) -> bool {
        matches!(self, ClientEnd::DroppedSlow | ClientEnd::DroppedIdle | ClientEnd::CutAtShutdown)
    }
}

/// One client connection as [`Server::client_reports`] tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientReport {
    pub peer: SocketAddr,
    /// Cycle frames written to its socket (the newcomer frame not counted).
    pub cycles: u64,
    /// `None` while it is connected.
    pub end: Option<ClientEnd>,
}

type Reason = ClientEnd;

/// One client connection, shared by the publisher and the client's two threads.
struct Conn {
    /// A handle to shut the socket down with.
    stream: TcpStream,
    dead: AtomicBool,
    peer: SocketAddr,
    /// Frames written, the newcomer frame included.
    frames: AtomicU64,
    /// Set by its writer once every frame queued for it is written (at shutdown).
    drained: AtomicBool,
    end: Mutex<Option<ClientEnd>>,
}

impl Conn {
    fn dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    fn report(&self) -> ClientReport {
        ClientReport {
            peer: self.peer,
            cycles: self.frames.load(Ordering::Relaxed).saturating_sub(1),
            end: *lock(&self.end),
        }
    }

    /// Disconnects the client (once): shuts the socket down, which wakes both its threads.
    fn kill(&self, shared: &Shared, reason: Reason) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = self.stream.shutdown(Shutdown::Both);
        if shared.stop.load(Ordering::Acquire) {
            let end = if self.drained.load(Ordering::Acquire) { ClientEnd::Served } else { ClientEnd::CutAtShutdown };
            *lock(&self.end) = Some(end);
            return;
        }
        *lock(&self.end) = Some(reason);
        let counter = match reason {
            Reason::DroppedSlow | Reason::CutAtShutdown => &shared.dropped_slow,
            Reason::DroppedIdle => &shared.dropped_idle,
            Reason::Closed | Reason::Served => &shared.closed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

struct Slot {
    conn: Arc<Conn>,
    tx: SyncSender<Frame>,
}

/// What publishing and registering share, under one lock.
struct State {
    encoder: Encoder,
    clients: Vec<Slot>,
    /// The last frame's size, to size the next one.
    last_len: usize,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    options: ServerOptions,
    /// Every client thread not yet joined.
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Every connection ever accepted, for the reports.
    all: Mutex<Vec<Arc<Conn>>>,
    accepted: AtomicU64,
    cycles: AtomicU64,
    dropped_slow: AtomicU64,
    dropped_idle: AtomicU64,
    closed: AtomicU64,
}

/// How often the accept thread looks for a connection (and for the stop).
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// A live-stream server: see the module docs for what it guarantees.
pub struct Server {
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    addr: SocketAddr,
    revision: Revision,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).field("revision", &self.revision).finish_non_exhaustive()
    }
}

impl Server {
    /// Listens on `addr` (port 0 picks a free port; see [`Server::local_addr`]) and serves a
    /// stream of this revision.
    pub fn bind(addr: impl ToSocketAddrs, revision: Revision, options: ServerOptions) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State { encoder: Encoder::new(revision), clients: Vec::new(), last_len: 64 }),
            stop: AtomicBool::new(false),
            options,
            threads: Mutex::new(Vec::new()),
            all: Mutex::new(Vec::new()),
            accepted: AtomicU64::new(0),
            cycles: AtomicU64::new(0),
            dropped_slow: AtomicU64::new(0),
            dropped_idle: AtomicU64::new(0),
            closed: AtomicU64::new(0),
        });
        let s = Arc::clone(&shared);
        let accept = thread::Builder::new().name("rlog-accept".into()).spawn(move || accept_loop(listener, s))?;
        Ok(Server { shared, accept: Some(accept), addr: local, revision })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Encodes one cycle (only values that changed are sent; see [`Encoder::encode_cycle`]) and
    /// queues the frame for every client, without blocking: a client whose queue is full is
    /// disconnected. `values` are `(key, R2 declared type, value)`; the type is read only when a
    /// key is new, and may be `None` where the value implies it.
    ///
    /// On an error, the values before the failing one are still published (the encoder has
    /// recorded them as sent), and the error is returned.
    pub fn publish_cycle(
        &self,
        timestamp: f64,
        values: Vec<(String, Option<String>, Value)>,
    ) -> Result<(), RlogWriteError> {
        let (keys, values): (Vec<(String, Option<String>)>, Vec<Value>) =
            values.into_iter().map(|(k, t, v)| ((k, t), v)).unzip();
        self.publish_cycle_with(timestamp, keys.iter().zip(values).map(|((k, t), v)| (k.as_str(), t.as_deref(), v)))
    }

    /// [`Server::publish_cycle`] with borrowed key names and types.
    pub fn publish_cycle_with<'a>(
        &self,
        timestamp: f64,
        values: impl IntoIterator<Item = (&'a str, Option<&'a str>, Value)>,
    ) -> Result<(), RlogWriteError> {
        let shared = &*self.shared;
        let mut st = lock(&shared.state);
        let mut frame = Vec::with_capacity(st.last_len + st.last_len / 4);
        frame.extend_from_slice(&[0; FRAME_HEADER]);
        let result = st.encoder.encode_cycle(timestamp, values, &mut frame).map(|_| ());
        if frame.len() == 4 {
            return result;
        }
        st.last_len = frame.len();
        if let Err(e) = seal(&mut frame) {
            // Every client would miss this cycle's values: none may go on with a wrong state.
            for slot in st.clients.drain(..) {
                slot.conn.kill(shared, Reason::DroppedSlow);
            }
            return Err(RlogWriteError::Io(e));
        }
        let frame = Arc::new(frame);
        let stall = shared.options.stall_timeout;
        st.clients.retain(|slot| {
            if slot.conn.dead() {
                return false;
            }
            let mut waited_since: Option<Instant> = None;
            loop {
                match slot.tx.try_send(Arc::clone(&frame)) {
                    Ok(()) => return true,
                    Err(TrySendError::Full(_)) => {
                        // Live: never block. Replay: wait while the client reads, up to `stall`.
                        let Some(limit) = stall else { break };
                        let since = *waited_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= limit || slot.conn.dead() {
                            break;
                        }
                        thread::sleep(Duration::from_micros(200));
                    }
                    Err(TrySendError::Disconnected(_)) => {
                        slot.conn.kill(shared, Reason::Closed);
                        return false;
                    }
                }
            }
            slot.conn.kill(shared, Reason::DroppedSlow);
            false
        });
        shared.cycles.fetch_add(1, Ordering::Relaxed);
        result
    }

    /// Clients connected now.
    pub fn client_count(&self) -> usize {
        lock(&self.shared.state).clients.iter().filter(|s| !s.conn.dead()).count()
    }

    /// Every connection accepted so far: where from, the cycles written to it, and how it ended.
    pub fn client_reports(&self) -> Vec<ClientReport> {
        lock(&self.shared.all).iter().map(|c| c.report()).collect()
    }

    pub fn stats(&self) -> ServerStats {
        let s = &*self.shared;
        ServerStats {
            clients: self.client_count(),
            accepted: s.accepted.load(Ordering::Relaxed),
            cycles: s.cycles.load(Ordering::Relaxed),
            dropped_slow: s.dropped_slow.load(Ordering::Relaxed),
            dropped_idle: s.dropped_idle.load(Ordering::Relaxed),
            closed: s.closed.load(Ordering::Relaxed),
        }
    }

    /// Stops the server: closes the listening socket (the port is free when this returns), lets
    /// clients receive what is queued for them for at most [`ServerOptions::shutdown_grace`],
    /// closes every connection and joins every thread. Dropping the server does the same.
    pub fn shutdown(mut self) {
        self.stop();
    }

    /// [`Server::shutdown`], then every connection's report (each has an end).
    pub fn shutdown_reports(mut self) -> Vec<ClientReport> {
        self.stop();
        self.client_reports()
    }

    fn stop(&mut self) {
        let Some(accept) = self.accept.take() else { return };
        let shared = &*self.shared;
        shared.stop.store(true, Ordering::Release);
        // The accept thread owns the listener: once it has returned, the port is free, and no
        // client can be registered any more.
        let _ = accept.join();
        let slots = std::mem::take(&mut lock(&shared.state).clients);
        let conns: Vec<Arc<Conn>> = slots.iter().map(|s| Arc::clone(&s.conn)).collect();
        // Closing the queues lets each writer write what is queued, then end its side.
        drop(slots);
        let handles = std::mem::take(&mut *lock(&shared.threads));
        let deadline = Instant::now() + shared.options.shutdown_grace;
        while Instant::now() < deadline && !handles.iter().all(JoinHandle::is_finished) {
            thread::sleep(Duration::from_millis(5));
        }
        for c in &conns {
            c.kill(shared, Reason::Closed);
        }
        for h in handles {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    while !shared.stop.load(Ordering::Acquire) {
        match listener.accept() {
            // A client that cannot be set up is dropped; the others are not concerned.
            Ok((stream, _)) => drop(add_client(&shared, stream)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // WouldBlock (nothing to accept), or e.g. out of file descriptors: wait.
            Err(_) => {
                lock(&shared.threads).retain(|h| !h.is_finished());
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

fn add_client(shared: &Arc<Shared>, stream: TcpStream) -> io::Result<()> {
    let o = &shared.options;
    // Accepted sockets inherit non-blocking mode on some systems.
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(o.client_timeout))?;
    stream.set_write_timeout(Some(o.client_timeout))?;
    let conn = Arc::new(Conn {
        stream: stream.try_clone()?,
        dead: AtomicBool::new(false),
        peer: stream.peer_addr()?,
        frames: AtomicU64::new(0),
        drained: AtomicBool::new(false),
        end: Mutex::new(None),
    });
    let (tx, rx) = mpsc::sync_channel::<Frame>(o.queue_frames.max(1));
    let writer_stream = stream.try_clone()?;
    {
        // The snapshot and the registration in one critical section with publishing: the client
        // gets exactly the cycles after the snapshot, and the snapshot first.
        let mut st = lock(&shared.state);
        let mut frame = vec![0; FRAME_HEADER];
        st.encoder.newcomer(&mut frame);
        seal(&mut frame)?;
        // The queue is empty, and holds at least one frame.
        let _ = tx.try_send(Arc::new(frame));
        st.clients.push(Slot { conn: Arc::clone(&conn), tx });
    }
    let spawned = (|| {
        let (c, s) = (Arc::clone(&conn), Arc::clone(shared));
        let w =
            thread::Builder::new().name("rlog-client-tx".into()).spawn(move || writer_loop(writer_stream, rx, c, s))?;
        lock(&shared.threads).push(w);
        let (c, s) = (Arc::clone(&conn), Arc::clone(shared));
        let r = thread::Builder::new().name("rlog-client-rx".into()).spawn(move || reader_loop(stream, c, s))?;
        lock(&shared.threads).push(r);
        io::Result::Ok(())
    })();
    if let Err(e) = spawned {
        // Unregistered by the next publish.
        conn.kill(shared, Reason::Closed);
        return Err(e);
    }
    shared.accepted.fetch_add(1, Ordering::Relaxed);
    lock(&shared.all).push(conn);
    Ok(())
}

/// Writes a client's queue to its socket, with a keep-alive after each idle interval.
fn writer_loop(mut stream: TcpStream, rx: Receiver<Frame>, conn: Arc<Conn>, shared: Arc<Shared>) {
    let keepalive = shared.options.keepalive_interval;
    let mut last = Instant::now();
    while !conn.dead() {
        let written = match rx.recv_timeout(keepalive.saturating_sub(last.elapsed())) {
            Ok(frame) => stream.write_all(&frame).map(|()| {
                conn.frames.fetch_add(1, Ordering::Relaxed);
            }),
            Err(RecvTimeoutError::Timeout) => stream.write_all(&[0; FRAME_HEADER]),
            Err(RecvTimeoutError::Disconnected) => {
                // Unregistered by shutdown, and everything queued is written: end our side, and
                // let the client close its own.
                conn.drained.store(true, Ordering::Release);
                let _ = stream.shutdown(Shutdown::Write);
                return;
            }
        };
        match written {
            Ok(()) => last = Instant::now(),
            Err(e) => {
                let reason = match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Reason::DroppedSlow,
                    _ => Reason::Closed,
                };
                conn.kill(&shared, reason);
                return;
            }
        }
    }
}

/// Reads and ignores what a client sends; drops it after `client_timeout` of silence.
fn reader_loop(mut stream: TcpStream, conn: Arc<Conn>, shared: Arc<Shared>) {
    let mut buf = [0; 256];
    while !conn.dead() {
        match stream.read(&mut buf) {
            Ok(0) => conn.kill(&shared, Reason::Closed),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                conn.kill(&shared, Reason::DroppedIdle)
            }
            Err(_) => conn.kill(&shared, Reason::Closed),
        }
    }
}
