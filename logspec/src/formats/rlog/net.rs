//! The RLOG live stream over TCP: what AdvantageKit's `RLOGServer` serves and AdvantageScope's
//! live source reads (spec §5), with std threads and sockets only.
//!
//! # Wire format
//!
//! A stream is a sequence of frames, each `len: i32` big-endian then `len` payload bytes. The first
//! frame a client gets (the *newcomer* frame) starts with the revision byte and holds the current
//! state: the last timestamp, every key definition and every key's current value. Every later
//! non-empty frame is one cycle (`00 <timestamp>`, new key definitions, changed values); empty
//! frames are keep-alives. The concatenation of the non-empty payloads is a valid RLOG file, which
//! is what [`FrameReader`] yields, so a [`Reader`] reads a live stream (or a captured one) like a
//! file.
//!
//! # Server
//!
//! [`Server`] encodes each published cycle once, with one shared [`Encoder`], and hands the frame
//! to every client's queue. Each client has a writer thread (its queue to its socket) and a reader
//! thread (which reads and ignores the client's heartbeat bytes):
//!
//! - **Catch-up is exact.** A new client's newcomer frame is built and the client registered in
//!   the same critical section that [`Server::publish_cycle`] encodes and broadcasts in, so the
//!   snapshot and the client's first cycle frame are consecutive: no cycle is lost or seen twice,
//!   and timestamps never step back (AdvantageKit writes the snapshot before registering the
//!   client, which can do either).
//! - **Keep-alives.** A client gets an empty frame whenever [`ServerOptions::keepalive_interval`]
//!   (20 ms) passes without a frame, so a client that drops silent servers after 3 s (as
//!   AdvantageScope does) keeps its connection while nothing is published.
//! - **Heartbeats.** A client that sent nothing for [`ServerOptions::client_timeout`] (3 s) is
//!   dropped, as AdvantageKit does; AdvantageScope sends [`HEARTBEAT`] every 500 ms.
//! - **A slow client is disconnected, not starved.** Publishing never blocks: each client has a
//!   bounded queue ([`ServerOptions::queue_frames`], 500 frames) that the producer fills with a
//!   non-blocking `try_send`. When a client's queue is full, that client is **disconnected**; it
//!   may reconnect and gets a fresh newcomer frame. Dropping frames instead (as AdvantageKit drops
//!   whole cycles when its shared queue is full) would corrupt the client's state, since frames are
//!   diffs: a value sent only in a dropped frame would never reach it. A client that accepts no
//!   bytes for `client_timeout` while its writer is blocked is disconnected the same way. Other
//!   clients and the producer are never held up by a slow or dead one. This is the policy for
//!   live robot code, which cannot wait (the default, [`ServerOptions::stall_timeout`] `None`).
//! - **A file replay waits instead.** With [`ServerOptions::stall_timeout`] `Some(t)` (what
//!   `logspec rlog serve FILE` uses, with `t` = 3 s), publishing waits while a client's queue is
//!   full, so a client that is slow but reading gets every cycle at any rate; a client whose
//!   queue stays full for `t` (it stopped reading) is disconnected, holding the others up at most
//!   `t`, once.
//! - **Loss is never silent.** [`Server::client_reports`] (and [`Server::shutdown_reports`]) say
//!   for every connection how many cycles were written to it and how it ended ([`ClientEnd`]).
//!   The protocol has no end-of-stream message, so a client cannot tell a drop from an end:
//!   both close the stream at a frame boundary.
//! - **Shutdown frees everything.** [`Server::shutdown`] (also run on drop) stops accepting and
//!   closes the listening socket, lets each client receive what was queued for it (for at most
//!   [`ServerOptions::shutdown_grace`]), closes every connection and joins every thread, so the port
//!   can be bound again at once (AdvantageKit#190). The standard library sets `SO_REUSEADDR` on
//!   Unix listeners, so connections left in `TIME_WAIT` do not hold the port.
//!
//! # Client
//!
//! [`Client`] connects, sends a heartbeat every 500 ms from a background thread, and decodes the
//! stream cycle by cycle: [`Client::next_cycle`] returns a cycle as soon as its frame is complete
//! (not when the next one starts), and never returns part of a frame. [`Reconnecting`] wraps it as
//! AdvantageScope does: on a disconnect it reconnects after 500 ms, with a fresh decoder.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use logspec_runtime::{Endian, Fixed};

use super::{
    Cycle, Encoder, Event, Key, Reader, Revision, RlogError, RlogErrorKind, RlogWriteError, StreamFrameHeader, Value,
};

/// The size of a frame's header (`StreamFrameHeader` of `schemas/rlog.toml`).
const FRAME_HEADER: usize = <StreamFrameHeader as Fixed>::SIZE;

/// The default TCP port of AdvantageKit's `RLOGServer` and AdvantageScope's `rlogPort`.
pub const DEFAULT_PORT: u16 = 5800;
/// The heartbeat AdvantageScope sends; the server ignores what the bytes are.
pub const HEARTBEAT: [u8; 4] = [0x06, 0x03, 0x02, 0x08];
/// How often a [`Client`] sends [`HEARTBEAT`].
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_millis(500);
/// How long either side waits for bytes before it drops the other.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long [`Reconnecting`] waits before it reconnects.
pub const RECONNECT_DELAY: Duration = Duration::from_millis(500);

// ---------------------------------------------------------------------------------------------
// Frames

/// A [`Read`] adapter over a framed stream that yields the concatenated payloads of its frames:
/// an RLOG file. Keep-alive (empty) frames are skipped and counted.
///
/// A negative length is an `InvalidData` error naming the byte offset of the frame in the stream;
/// a stream that ends inside a frame or a length is an `UnexpectedEof` error. Both are sticky.
/// Other I/O errors (a read timeout) are passed through and reading can be retried. Offsets in
/// a [`Reader`]'s errors count payload bytes; [`FrameReader::offset`] counts stream bytes.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    /// Payload bytes of the current frame not yet read.
    remaining: u32,
    /// The declared length of the current frame.
    frame_len: u32,
    /// The bytes of a frame length read so far.
    header: [u8; FRAME_HEADER],
    header_len: usize,
    /// Stream bytes taken from `inner`.
    offset: u64,
    /// Stream offset of the current frame's length.
    frame_start: u64,
    counters: FrameCounters,
    failed: Option<(io::ErrorKind, String)>,
}

/// Progress counters of a [`FrameReader`], shared: they stay readable while a [`Reader`] owns the
/// frame reader.
#[derive(Clone, Debug, Default)]
pub struct FrameCounters(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    frames: AtomicU64,
    keepalives: AtomicU64,
    payload: AtomicU64,
    /// Whether no frame is partly read.
    boundary: AtomicBool,
}

impl FrameCounters {
    /// Non-empty frames started.
    pub fn frames(&self) -> u64 {
        self.0.frames.load(Ordering::Relaxed)
    }

    /// Keep-alive (empty) frames skipped.
    pub fn keepalives(&self) -> u64 {
        self.0.keepalives.load(Ordering::Relaxed)
    }

    /// Payload bytes yielded so far.
    pub fn payload_bytes(&self) -> u64 {
        self.0.payload.load(Ordering::Relaxed)
    }

    /// Whether every frame started was read to its end.
    pub fn at_frame_boundary(&self) -> bool {
        self.0.boundary.load(Ordering::Relaxed)
    }
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        let counters = FrameCounters::default();
        counters.0.boundary.store(true, Ordering::Relaxed);
        FrameReader {
            inner,
            remaining: 0,
            frame_len: 0,
            header: [0; FRAME_HEADER],
            header_len: 0,
            offset: 0,
            frame_start: 0,
            counters,
            failed: None,
        }
    }

    /// Non-empty frames started.
    pub fn frames(&self) -> u64 {
        self.counters.frames()
    }

    /// Keep-alive (empty) frames skipped.
    pub fn keepalives(&self) -> u64 {
        self.counters.keepalives()
    }

    /// Stream bytes read (lengths and payloads).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// A handle on the counters that stays valid after this reader is moved into a [`Reader`].
    pub fn counters(&self) -> FrameCounters {
        self.counters.clone()
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    fn fail(&mut self, kind: io::ErrorKind, msg: String) -> io::Error {
        self.failed = Some((kind, msg.clone()));
        io::Error::new(kind, msg)
    }

    /// Reads the next frame length. `Ok(false)` at a clean end (no byte of a length).
    fn read_header(&mut self) -> io::Result<bool> {
        while self.header_len < FRAME_HEADER {
            let n = self.inner.read(&mut self.header[self.header_len..])?;
            if n == 0 {
                if self.header_len == 0 {
                    return Ok(false);
                }
                let at = self.offset - self.header_len as u64;
                let msg = format!(
                    "rlog stream: the stream ends inside the length of the frame at byte {at} ({} of {FRAME_HEADER} bytes)",
                    self.header_len
                );
                return Err(self.fail(io::ErrorKind::UnexpectedEof, msg));
            }
            self.header_len += n;
            self.offset += n as u64;
            self.counters.0.boundary.store(false, Ordering::Relaxed);
        }
        self.header_len = 0;
        self.frame_start = self.offset - FRAME_HEADER as u64;
        // The whole header is there, so decoding it cannot fail.
        let len = StreamFrameHeader::decode_fixed(&self.header, Endian::Big).map_or(0, |h| h.length);
        if len < 0 {
            let h = self.header;
            let msg = format!(
                "rlog stream: the frame at byte {} has a negative length, {len} ({:02x} {:02x} {:02x} {:02x}): \
                 this is not an RLOG live stream, or it is corrupt",
                self.frame_start, h[0], h[1], h[2], h[3]
            );
            return Err(self.fail(io::ErrorKind::InvalidData, msg));
        }
        if len == 0 {
            self.counters.0.keepalives.fetch_add(1, Ordering::Relaxed);
            self.counters.0.boundary.store(true, Ordering::Relaxed);
        } else {
            self.counters.0.frames.fetch_add(1, Ordering::Relaxed);
            self.remaining = len as u32;
            self.frame_len = len as u32;
        }
        Ok(true)
    }

    /// The payload of the next non-empty frame (or the rest of the current one, if [`Read::read`]
    /// stopped inside it); `None` at a clean end of the stream. After an error, what was read of
    /// the frame is lost.
    pub fn next_frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        if let Some((kind, msg)) = &self.failed {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        while self.remaining == 0 {
            if !self.read_header()? {
                return Ok(None);
            }
        }
        // Grown as bytes arrive, so a corrupt length cannot make it allocate what is not there.
        let mut out = Vec::with_capacity((self.remaining as usize).min(CHUNK));
        while self.remaining > 0 {
            let start = out.len();
            out.resize(start + (self.remaining as usize).min(CHUNK), 0);
            match self.read(&mut out[start..]) {
                Ok(n) => out.truncate(start + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => out.truncate(start),
                Err(e) => return Err(e),
            }
        }
        Ok(Some(out))
    }
}

const CHUNK: usize = 64 * 1024;

impl<R: Read> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((kind, msg)) = &self.failed {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.remaining > 0 {
                let want = buf.len().min(self.remaining as usize);
                let n = self.inner.read(&mut buf[..want])?;
                if n == 0 {
                    let msg = format!(
                        "rlog stream: the stream ends inside the frame at byte {}: it declares {} payload bytes, the last {} are missing",
                        self.frame_start, self.frame_len, self.remaining
                    );
                    return Err(self.fail(io::ErrorKind::UnexpectedEof, msg));
                }
                self.remaining -= n as u32;
                self.offset += n as u64;
                self.counters.0.payload.fetch_add(n as u64, Ordering::Relaxed);
                if self.remaining == 0 {
                    self.counters.0.boundary.store(true, Ordering::Relaxed);
                }
                return Ok(n);
            }
            if !self.read_header()? {
                return Ok(0);
            }
        }
    }
}

/// Writes the header of the frame `frame[FRAME_HEADER..]` into `frame[..FRAME_HEADER]`, reserved
/// for it.
fn seal(frame: &mut [u8]) -> io::Result<()> {
    let length = i32::try_from(frame.len() - FRAME_HEADER)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "rlog stream: a frame over 2 GiB"))?;
    StreamFrameHeader { length }.encode_fixed(&mut frame[..FRAME_HEADER], Endian::Big);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Stopping

/// A stop signal shared between threads: it wakes [`Stopper::sleep`]ers and shuts down the socket
/// attached to it, so a thread blocked reading it returns at once. Clones share the signal.
#[derive(Clone, Debug, Default)]
pub struct Stopper(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    stopped: AtomicBool,
    socket: Mutex<Option<TcpStream>>,
    wake: Condvar,
}

impl Stopper {
    pub fn new() -> Self {
        Self::default()
    }

    /// Signals the stop (idempotent); shuts the attached socket down, if any.
    pub fn stop(&self) {
        let guard = lock(&self.0.socket);
        self.0.stopped.store(true, Ordering::SeqCst);
        if let Some(s) = guard.as_ref() {
            let _ = s.shutdown(Shutdown::Both);
        }
        self.0.wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::SeqCst)
    }

    /// Sleeps for `d`, or until the stop. Returns whether it was stopped.
    pub fn sleep(&self, d: Duration) -> bool {
        self.sleep_until(Instant::now().checked_add(d))
    }

    /// Sleeps until `deadline` (forever for `None`), or until the stop. Returns whether it was
    /// stopped.
    pub fn sleep_until(&self, deadline: Option<Instant>) -> bool {
        let mut guard = lock(&self.0.socket);
        loop {
            if self.is_stopped() {
                return true;
            }
            match deadline {
                None => guard = self.0.wake.wait(guard).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    guard = self.0.wake.wait_timeout(guard, d - now).unwrap_or_else(|e| e.into_inner()).0;
                }
            }
        }
    }

    /// Attaches a socket (a clone of it); it is shut down at the stop, at once if stopped already.
    pub fn attach(&self, socket: &TcpStream) -> io::Result<()> {
        let clone = socket.try_clone()?;
        let mut guard = lock(&self.0.socket);
        if self.is_stopped() {
            let _ = clone.shutdown(Shutdown::Both);
        }
        *guard = Some(clone);
        Ok(())
    }

    pub fn detach(&self) {
        *lock(&self.0.socket) = None;
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Server

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

// ---------------------------------------------------------------------------------------------
// Client

/// A client's socket, as a [`Read`]er of the raw stream, with the heartbeat thread that lives as
/// long as it does. Dropping it closes the connection.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    heartbeat: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl Connection {
    /// Wraps a connected socket and starts sending [`HEARTBEAT`] every [`HEARTBEAT_INTERVAL`].
    pub fn new(stream: TcpStream) -> io::Result<Connection> {
        let peer = stream.peer_addr()?;
        let mut beat = stream.try_clone()?;
        // A heartbeat must not wait forever on a server that does not read.
        beat.set_write_timeout(Some(IDLE_TIMEOUT))?;
        let (tx, rx) = mpsc::channel::<()>();
        let h = thread::Builder::new().name("rlog-heartbeat".into()).spawn(move || loop {
            if beat.write_all(&HEARTBEAT).is_err() {
                return;
            }
            if !matches!(rx.recv_timeout(HEARTBEAT_INTERVAL), Err(RecvTimeoutError::Timeout)) {
                return;
            }
        })?;
        Ok(Connection { stream, peer, heartbeat: Some((tx, h)) })
    }

    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }
}

impl Read for Connection {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.read(buf)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
        if let Some((tx, h)) = self.heartbeat.take() {
            drop(tx);
            let _ = h.join();
        }
    }
}

fn rlog_to_io(e: RlogError) -> io::Error {
    match &e.kind {
        RlogErrorKind::Io(io) => io::Error::new(io.kind(), e.to_string()),
        _ => io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
    }
}

/// A live-stream client: decodes the stream cycle by cycle (see the module docs).
pub struct Client {
    reader: Reader<FrameReader<Connection>>,
    counters: FrameCounters,
    /// A handle on the socket for timeouts and stopping.
    control: TcpStream,
    peer: SocketAddr,
    /// The cycle being read.
    cycle: Option<Cycle>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .field("revision", &self.reader.revision())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects (trying each address for at most `timeout`), starts the heartbeat, and reads the
    /// revision byte of the newcomer frame. The connection is dropped when the server sends
    /// nothing for [`IDLE_TIMEOUT`] (see [`Client::set_idle_timeout`]).
    pub fn connect(addr: impl ToSocketAddrs, timeout: Duration) -> io::Result<Client> {
        let mut last = None;
        for a in addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => return Client::from_stream(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to")))
    }

    /// [`Client::connect`] over an already connected socket.
    pub fn from_stream(stream: TcpStream) -> io::Result<Client> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
        let control = stream.try_clone()?;
        let conn = Connection::new(stream)?;
        let peer = conn.peer_addr();
        let frames = FrameReader::new(conn);
        let counters = frames.counters();
        let reader = Reader::new(frames).map_err(rlog_to_io)?;
        Ok(Client { reader, counters, control, peer, cycle: None })
    }

    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    pub fn revision(&self) -> Revision {
        self.reader.revision()
    }

    /// How long to wait for bytes (keep-alives included) before the connection counts as lost;
    /// `None` waits forever.
    pub fn set_idle_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.control.set_read_timeout(timeout)
    }

    /// Attaches the socket to a [`Stopper`], whose stop makes a blocked [`Client::next_cycle`]
    /// return.
    pub fn attach(&self, stopper: &Stopper) -> io::Result<()> {
        stopper.attach(&self.control)
    }

    /// A key defined so far.
    pub fn key(&self, key_id: i16) -> Option<&Key> {
        self.reader.key(key_id)
    }

    /// The frame counters (non-empty frames, keep-alives).
    pub fn counters(&self) -> &FrameCounters {
        &self.counters
    }

    /// The decoder (for its key table and revision).
    pub fn reader(&self) -> &Reader<FrameReader<Connection>> {
        &self.reader
    }

    /// The decoder, to read messages one by one. Its `next_cycle` returns a cycle only when the
    /// next one starts, one frame later than [`Client::next_cycle`].
    pub fn into_reader(self) -> Reader<FrameReader<Connection>> {
        self.reader
    }

    /// Whether the decoder has consumed every byte of every frame received.
    fn frame_done(&self) -> bool {
        self.counters.at_frame_boundary() && self.reader.position() == self.counters.payload_bytes()
    }

    /// The next cycle, as soon as the frame that holds it is complete: the newcomer frame first,
    /// then one per published cycle. `None` when the server closed the stream at a frame
    /// boundary. A cycle is never returned in part: after an error that ends the stream (a lost
    /// connection, a truncated frame, a message that does not decode), the cycle being read is
    /// dropped. After a recoverable error (an R2 value that does not decode as its declared type)
    /// reading goes on, and the rest of the cycle comes with the next call.
    pub fn next_cycle(&mut self) -> Option<Result<Cycle, RlogError>> {
        loop {
            if self.cycle.is_some() && self.frame_done() {
                return self.cycle.take().map(Ok);
            }
            match self.reader.next_event() {
                // A clean end is at a frame boundary (the frame reader says so otherwise).
                None => return self.cycle.take().map(Ok),
                Some(Err(e)) => {
                    if !e.is_recoverable() {
                        self.cycle = None;
                    }
                    return Some(Err(e));
                }
                Some(Ok(Event::Timestamp(timestamp))) => {
                    // Streams hold one cycle per frame; a frame with two is read as two.
                    if let Some(done) = self.cycle.replace(Cycle { timestamp, values: Vec::new() }) {
                        return Some(Ok(done));
                    }
                }
                Some(Ok(Event::KeyDef { .. })) => {}
                Some(Ok(Event::Value { timestamp, key_id, value })) => {
                    self.cycle
                        .get_or_insert_with(|| Cycle { timestamp, values: Vec::new() })
                        .values
                        .push((key_id, value));
                }
            }
        }
    }
}

/// What [`Reconnecting::next_event`] yields.
#[derive(Debug)]
pub enum LiveEvent {
    /// A connection is up, with a fresh decoder: the next cycle is its newcomer (catch-up) state,
    /// and key ids are those of this connection (see [`Reconnecting::key`]).
    Connected { peer: SocketAddr, revision: Revision },
    /// A complete cycle.
    Cycle(Cycle),
    /// A value was skipped (it does not decode as its key's declared type); reading goes on.
    Skipped(RlogError),
    /// The connection ended: closed by the server (`None`) or lost.
    Disconnected(Option<RlogError>),
    /// A connection attempt failed.
    ConnectFailed(io::Error),
}

/// A client that reconnects, as AdvantageScope does: after a disconnect or a failed attempt it
/// waits [`RECONNECT_DELAY`] and connects again, with a fresh decoder. Without `reconnect` it
/// ends after the first connection (or the first failed attempt).
#[derive(Debug)]
pub struct Reconnecting {
    addrs: Vec<SocketAddr>,
    connect_timeout: Duration,
    reconnect: bool,
    stopper: Stopper,
    client: Option<Client>,
    attempts: u64,
    done: bool,
}

impl Reconnecting {
    pub fn new(addr: impl ToSocketAddrs, connect_timeout: Duration, reconnect: bool) -> io::Result<Reconnecting> {
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
        if addrs.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to"));
        }
        Ok(Reconnecting {
            addrs,
            connect_timeout,
            reconnect,
            stopper: Stopper::new(),
            client: None,
            attempts: 0,
            done: false,
        })
    }

    /// The stop signal: [`Stopper::stop`] (from any thread) ends the current connection and makes
    /// [`Reconnecting::next_event`] return `None`. A cycle being received then is dropped; every
    /// cycle returned before was complete.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// A key of the current connection.
    pub fn key(&self, key_id: i16) -> Option<&Key> {
        self.client.as_ref()?.key(key_id)
    }

    /// The current connection.
    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    fn connect(&self) -> io::Result<Client> {
        let mut last = None;
        for a in &self.addrs {
            match TcpStream::connect_timeout(a, self.connect_timeout) {
                Ok(s) => {
                    // Attached before the newcomer frame is awaited, so a stop cuts the wait short.
                    self.stopper.attach(&s)?;
                    return Client::from_stream(s);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to")))
    }

    /// The next event; `None` once stopped, or, without `reconnect`, after the first connection
    /// ended.
    pub fn next_event(&mut self) -> Option<LiveEvent> {
        loop {
            if self.done {
                return None;
            }
            if self.stopper.is_stopped() {
                self.client = None;
                self.stopper.detach();
                self.done = true;
                return None;
            }
            if let Some(client) = &mut self.client {
                match client.next_cycle() {
                    Some(Ok(c)) => return Some(LiveEvent::Cycle(c)),
                    Some(Err(e)) if e.is_recoverable() => return Some(LiveEvent::Skipped(e)),
                    end => {
                        self.client = None;
                        self.stopper.detach();
                        if self.stopper.is_stopped() {
                            continue;
                        }
                        self.done = !self.reconnect;
                        return Some(LiveEvent::Disconnected(end.and_then(Result::err)));
                    }
                }
            }
            if self.attempts > 0 {
                if !self.reconnect {
                    self.done = true;
                    continue;
                }
                if self.stopper.sleep(RECONNECT_DELAY) {
                    continue;
                }
            }
            self.attempts += 1;
            match self.connect() {
                Ok(c) => {
                    let ev = LiveEvent::Connected { peer: c.peer_addr(), revision: c.revision() };
                    self.client = Some(c);
                    return Some(ev);
                }
                Err(e) => {
                    self.stopper.detach();
                    if self.stopper.is_stopped() {
                        continue;
                    }
                    self.done = !self.reconnect;
                    return Some(LiveEvent::ConnectFailed(e));
                }
            }
        }
    }
}
