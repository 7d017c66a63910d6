//! Progress on standard error for work over about a second: a bar over the bytes read from an
//! input file, shown only when standard error is a terminal and `--quiet` was not given.

use std::io::{IsTerminal, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no progress bars and no summary lines on standard error (errors still print).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Prints a note (a summary of what was done) on standard error, unless `--quiet`.
pub fn note(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("logspec: {msg}");
    }
}

/// How long work runs before its bar appears: quick jobs print nothing.
const DELAY: Duration = Duration::from_millis(800);

/// A bar over `len` bytes of an input file, drawn after [`DELAY`] and cleared when dropped.
pub struct Bar {
    bar: ProgressBar,
    started: Instant,
    shown: AtomicBool,
}

impl Bar {
    /// A bar labelled with the file name, if one is wanted (standard error a terminal, no
    /// `--quiet`, a file with a length).
    pub fn new(len: u64, label: &str) -> Option<Bar> {
        let wanted = !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal() && len > 0;
        wanted.then(|| {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(label.to_string());
            Bar { bar, started: Instant::now(), shown: AtomicBool::new(false) }
        })
    }

    /// The reading is at byte `pos`.
    pub fn at(&self, pos: u64) {
        self.bar.set_position(pos);
        if !self.shown.load(Ordering::Relaxed) && self.started.elapsed() > DELAY {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown.store(true, Ordering::Relaxed);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A reader that moves a bar along as it reads.
pub struct Progress<R> {
    inner: R,
    bar: Bar,
    pos: u64,
}

impl<R: Read> Progress<R> {
    pub fn new(inner: R, bar: Bar) -> Self {
        Progress { inner, bar, pos: 0 }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        self.bar.at(self.pos);
        Ok(n)
    }
}
