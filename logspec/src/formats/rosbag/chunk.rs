//! Chunk payloads: decompression (none, bz2, lz4 frames of both flavours) and the pipeline that
//! decompresses a sequence of chunks on worker threads, a bounded window of them in flight, and
//! hands them back in order.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{mpsc, Mutex};

use super::BagError;

/// The compression of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Compression {
    None,
    Bz2,
    Lz4,
}

impl Compression {
    pub fn parse(v: &[u8]) -> Option<Compression> {
        match v {
            b"none" => Some(Compression::None),
            b"bz2" => Some(Compression::Bz2),
            b"lz4" => Some(Compression::Lz4),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Bz2 => "bz2",
            Compression::Lz4 => "lz4",
        }
    }
}

/// A chunk's bytes as stored in the file: read into a buffer, or lent by a source that holds
/// the whole file in memory (see [`super::Source`]).
pub struct RawChunk<'a> {
    /// File offset of the chunk record.
    pub pos: u64,
    pub compression: Compression,
    /// The uncompressed size from the chunk header.
    pub size: u32,
    pub data: Cow<'a, [u8]>,
}

/// The default of the chunk budget ([`super::Bag::open_with`], `Open::chunk_budget`): 256 MiB,
/// four times the 64 MiB a reader of a hostile file may take. Real chunks are far smaller
/// (`rosbag record` closes a chunk past 768 KiB; only a single larger message makes a larger
/// chunk), so every bag a recorder writes fits, while a chunk that claims more (the 1 KB bz2
/// chunk that inflates to 1000 MiB) is refused before any of it is decompressed.
pub const DEFAULT_CHUNK_BUDGET: u64 = 256 << 20;

/// How to raise the chunk budget, for messages.
pub const RAISE_BUDGET: &str =
    "raise the chunk budget to read it (`--chunk-budget MIB`; Python: `logspec.open(..., chunk_budget=MIB)`)";

/// A size in MiB, for messages.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// The refusal of the chunk at `pos` when its declared uncompressed `size` is over `budget`.
fn over_budget(pos: u64, compression: Compression, size: u32, budget: u64) -> Option<BagError> {
    (u64::from(size) > budget).then(|| {
        BagError::at(
            pos,
            format!(
                "chunk ({}): its header declares {size} bytes uncompressed ({}), more than the chunk budget of \
                 {budget} bytes ({}); the chunk is skipped: {RAISE_BUDGET}",
                compression.as_str(),
                mib(u64::from(size)),
                mib(budget)
            ),
        )
    })
}

impl<'a> RawChunk<'a> {
    /// The uncompressed records (an uncompressed chunk's stored bytes as they are, lent when they
    /// were lent). The result must be exactly `size` bytes, and `size` at most `budget`: a chunk
    /// that declares more is refused before anything is decompressed, and one whose data
    /// inflates past its declared size is refused as soon as it does (one byte past it).
    pub fn decompress(self, budget: u64) -> Result<Cow<'a, [u8]>, BagError> {
        let size = self.size as usize;
        if let Some(e) = over_budget(self.pos, self.compression, self.size, budget) {
            return Err(e);
        }
        let err = |m: String| BagError::at(self.pos, format!("chunk ({}): {m}", self.compression.as_str()));
        let out = match self.compression {
            Compression::None => self.data,
            Compression::Bz2 => read_all(bzip2::read::BzDecoder::new(&self.data[..]), size)
                .map(Cow::Owned)
                .map_err(|e| err(format!("bz2 data does not decompress: {e}; the chunk is skipped")))?,
            // lz4_flex's frame decoder takes both the roslz4 flavour (content checksum, no content
            // size) and the generic one (content size, no checksum).
            Compression::Lz4 => read_all(lz4_flex::frame::FrameDecoder::new(&self.data[..]), size)
                .map(Cow::Owned)
                .map_err(|e| err(format!("lz4 frame does not decompress: {e}; the chunk is skipped")))?,
        };
        if out.len() > size && self.compression != Compression::None {
            return Err(err(format!(
                "its data inflates past the {size} bytes its header declares; the chunk is skipped"
            )));
        }
        if out.len() != size {
            return Err(err(format!(
                "decompressed to {} bytes, the chunk header says {size}; the chunk is skipped",
                out.len()
            )));
        }
        Ok(out)
    }
}

/// Reads at most `size + 1` bytes (one more than expected shows an oversized stream without
/// decompressing all of it).
fn read_all(r: impl Read, size: usize) -> std::io::Result<Vec<u8>> {
    // The claimed size is reserved only up to a few MiB: a larger buffer grows as bytes arrive.
    let mut out = Vec::with_capacity(size.min(8 << 20));
    r.take(size as u64 + 1).read_to_end(&mut out)?;
    Ok(out)
}

/// How many chunks may be read ahead of the one being consumed, per worker thread.
const WINDOW_PER_THREAD: usize = 2;

/// Reads `n` chunks in order with `read(i)`, decompresses them (on up to `threads` worker
/// threads, at most 8, when any is compressed) and calls `consume(i, bytes)` in order, with the
/// chunk's bytes or why it could not be decompressed (`consume` decides whether that stops the
/// walk). At most a bounded window of chunks is in memory: a few per thread, and chunks of at
/// most `budget` bytes in all (`cost(i)`: what chunk `i` takes; always one at least). A read
/// error of chunk `i` is returned after chunks `0..i` were consumed; an error of `consume` stops
/// everything at once.
pub fn pipeline<'a, E: From<BagError>>(
    n: usize,
    mut read: impl FnMut(usize) -> Result<RawChunk<'a>, BagError>,
    mut consume: impl FnMut(usize, Result<Cow<'a, [u8]>, BagError>) -> Result<(), E>,
    (compressed, threads): (bool, usize),
    (budget, cost): (u64, &dyn Fn(usize) -> u64),
) -> Result<(), E> {
    let threads = threads.min(8);
    if !compressed || threads < 2 || n < 2 {
        for i in 0..n {
            let bytes = read(i)?.decompress(budget);
            consume(i, bytes)?;
        }
        return Ok(());
    }
    let window = threads * WINDOW_PER_THREAD;
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, RawChunk<'a>)>(window);
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|s| {
        // Owned by the closure, so that any return drops it and the workers stop.
        let job_tx = job_tx;
        let (res_tx, res_rx) = mpsc::channel::<(usize, Result<Cow<'a, [u8]>, BagError>)>();
        for _ in 0..threads {
            let (job_rx, res_tx) = (&job_rx, res_tx.clone());
            s.spawn(move || loop {
                let job = job_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((i, raw))) = job else { break };
                if res_tx.send((i, raw.decompress(budget))).is_err() {
                    break;
                }
            });
        }
        drop(res_tx);
        let mut sent = 0usize;
        // What the chunks `next..sent` take.
        let mut in_flight = 0u64;
        let mut read_error: Option<(usize, BagError)> = None;
        let mut pending: BTreeMap<usize, Result<Cow<'a, [u8]>, BagError>> = BTreeMap::new();
        for next in 0..n {
            while read_error.is_none()
                && sent < n
                && sent - next < window
                && (sent == next || in_flight + cost(sent) <= budget)
            {
                in_flight += cost(sent);
                match read(sent) {
                    Ok(raw) => {
                        if job_tx.send((sent, raw)).is_err() {
                            break;
                        }
                    }
                    Err(e) => read_error = Some((sent, e)),
                }
                sent += 1;
            }
            if read_error.as_ref().is_some_and(|(i, _)| *i == next) {
                return Err(read_error.take().expect("checked").1.into());
            }
            let bytes = loop {
                if let Some(r) = pending.remove(&next) {
                    break r;
                }
                match res_rx.recv() {
                    Ok((i, r)) => {
                        pending.insert(i, r);
                    }
                    Err(_) => return Err(BagError::at(0, "a decompression thread stopped").into()),
                }
            };
            in_flight -= cost(next);
            consume(next, bytes)?;
        }
        Ok(())
    })
}
