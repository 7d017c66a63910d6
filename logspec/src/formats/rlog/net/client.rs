//! The live-stream client side: [`Connection`] (a socket with its heartbeat thread), [`Client`]
//! (decodes the stream cycle by cycle) and [`Reconnecting`] (reconnects as AdvantageScope does).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::frames::{FrameCounters, FrameReader};
use super::stop::Stopper;
use super::{HEARTBEAT, HEARTBEAT_INTERVAL, IDLE_TIMEOUT, RECONNECT_DELAY};
use crate::formats::rlog::{Cycle, Event, Key, Reader, Revision, RlogError, RlogErrorKind};

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
    /// A connection attempt failed: no server accepted it.
    ConnectFailed(io::Error),
    /// The server accepted the connection, but it ended `after` that, before the first byte of
    /// the stream (the revision byte of the newcomer frame): a server that sends only keep-alives
    /// and then drops, or closes at once.
    Lost { peer: SocketAddr, after: Duration, error: io::Error },
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

    /// A client, or the event that says why there is none: [`LiveEvent::ConnectFailed`] when no
    /// address accepted the connection, [`LiveEvent::Lost`] when one did but the stream ended
    /// before its first byte.
    fn connect(&self) -> Result<Client, LiveEvent> {
        let mut last = None;
        for a in &self.addrs {
            match TcpStream::connect_timeout(a, self.connect_timeout) {
                Ok(s) => {
                    let since = Instant::now();
                    // Attached before the newcomer frame is awaited, so a stop cuts the wait short.
                    return self
                        .stopper
                        .attach(&s)
                        .and_then(|()| Client::from_stream(s))
                        .map_err(|error| LiveEvent::Lost { peer: *a, after: since.elapsed(), error });
                }
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to"));
        Err(LiveEvent::ConnectFailed(e))
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
                Err(ev) => {
                    self.stopper.detach();
                    if self.stopper.is_stopped() {
                        continue;
                    }
                    self.done = !self.reconnect;
                    return Some(ev);
                }
            }
        }
    }
}
