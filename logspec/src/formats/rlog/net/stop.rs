//! [`Stopper`]: a stop signal shared between threads that also shuts down a socket, so that a
//! thread blocked reading it returns at once.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::lock;

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
