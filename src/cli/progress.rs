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

/// A reader that advances a progress bar over `len` bytes.
pub struct Progress<R> {
    inner: R,
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
}

impl<R: Read> Progress<R> {
    /// Wraps `inner`; the bar is labelled with the file name.
    pub fn new(inner: R, len: u64, label: &str) -> Self {
        let wanted = !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal() && len > 0;
        let bar = wanted.then(|| {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(label.to_string());
            bar
        });
        Progress { inner, bar, started: Instant::now(), shown: false }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
            if !self.shown && self.started.elapsed() > DELAY {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                self.shown = true;
            }
        }
        Ok(n)
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
