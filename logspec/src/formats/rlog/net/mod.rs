//! The RLOG live stream over TCP: what AdvantageKit's `RLOGServer` serves and AdvantageScope's
//! live source reads (spec §5), with std threads and sockets only.
//!
//! # Wire format
//!
//! A stream is a sequence of frames, each `len: i32` big-endian then `len` payload bytes (at most
//! [`MAX_FRAME`], 64 MiB: logspec's ceiling, since the format bounds nothing below 2 GiB). The first
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
//!
//! # Layout
//!
//! `frames` holds the framing ([`FrameReader`] and the frame header), `stop` the [`Stopper`]
//! shared by both sides, `server` the [`Server`] and `client` the [`Client`], its
//! [`Connection`] and [`Reconnecting`]; every public item is re-exported here.
//!
//! [`Reader`]: super::Reader
//! [`Encoder`]: super::Encoder

mod client;
mod frames;
mod server;
mod stop;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub use client::{Client, Connection, LiveEvent, Reconnecting};
pub use frames::{FrameCounters, FrameReader, MAX_FRAME};
pub use server::{ClientEnd, ClientReport, Server, ServerOptions, ServerStats};
pub use stop::Stopper;

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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
