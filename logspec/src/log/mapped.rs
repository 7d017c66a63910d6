//! A regular file read through a memory map, in place: the cheapest route into a reader that
//! goes front to back (BENCHMARKS.md, "Whole-process `info`"), and one that survives the file
//! being truncated underneath.
//!
//! This module is one of the places ARCHITECTURE.md allows `unsafe`, for two reasons:
//!
//! - **Mapping.** Reading a mapped file is reading memory another process can change. A change
//!   of bytes is only a change of input (every reader checks what it reads); a truncation makes
//!   the pages past the new end fault with `SIGBUS`, which kills the process by default.
//! - **Surviving a truncation.** A process-wide `SIGBUS` handler, installed with the first map,
//!   looks the faulting address up among the live maps. In one of them, it maps zero pages over
//!   the rest of that map (anonymous, `MAP_FIXED`), notes the offset, and returns: the reader
//!   reads zeros from there on, and [`Mapped::truncated`] reports the truncation as an error
//!   once it is done. Anywhere else, it hands the signal to the handler it replaced (Rust's own,
//!   which reports stack overflows), or to the default action.
//!
//! Memory stays flat in the file's size: [`Mapped::advance`], called by a reader as it moves on,
//! drops the pages more than a window behind from the process, 4 MiB at a time (`MADV_DONTNEED`:
//! they stay in the page cache, and are read again from it if touched). The pages ahead fault in
//! as the reader reaches them; the kernel maps the cached pages around each fault at once
//! (fault-around), which costs less than asking for them ahead: a thread that prefaulted a window
//! ahead of the reader (`MADV_POPULATE_READ`) took more CPU time than the faults it saved, made
//! `info` 1.2x slower and the bag and MCAP scans at most 1.1x faster (BENCHMARKS.md, "Mapped
//! files: no prefaulting").

use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::runtime::WindowBuf;

/// How many bytes are kept mapped behind the reader, and how often it tells the map where it is.
const WINDOW: usize = 1 << 20;

/// How many bytes behind the kept window are dropped at once.
const DROP: usize = 4 * WINDOW;

/// How many maps can be live at once (one per log being read); past that, logs are read.
const SLOTS: usize = 64;

/// A live map's address range, for the signal handler (`end` 0: a free slot), and the offset
/// of its first fault past the file's end plus one (0: none).
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    fault: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), fault: AtomicUsize::new(0) };
static LIVE: [Slot; SLOTS] = [FREE; SLOTS];
/// The system's page size.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The `SIGBUS` disposition the handler replaced (`None`: it could not be installed).
static PREVIOUS: OnceLock<Option<Previous>> = OnceLock::new();

struct Previous(libc::sigaction);
// SAFETY: a `sigaction` is plain data (a function address, flags and a signal mask); it is
// written once, before any handler can read it, and never changed.
#[allow(unsafe_code)]
unsafe impl Send for Previous {}
#[allow(unsafe_code)]
unsafe impl Sync for Previous {}

/// A file mapped whole and read in place.
pub struct Mapped {
    map: memmap2::Mmap,
    slot: usize,
    /// The pages before this offset were dropped from the process.
    kept: AtomicUsize,
    /// The next position at which [`advance`](Mapped::advance) does its work.
    next: AtomicUsize,
    /// Told how far the reader got, each half window.
    progress: Option<Progress>,
}

/// Told how many bytes of a mapped file a reader has gone past, every few MiB (a progress bar).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

impl Mapped {
    /// Maps `file` if it is a regular, non-empty file and the handler is in place; `None`
    /// otherwise (the caller reads it instead).
    pub fn new(file: &File, progress: Option<Progress>) -> Option<Mapped> {
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() == 0 || usize::try_from(meta.len()).is_err() {
            return None;
        }
        PREVIOUS.get_or_init(install).as_ref()?;
        // SAFETY: see the module doc: a change of the file's bytes is a change of input, and a
        // truncation is caught by the handler installed above, for as long as the slot holds
        // the map's range (until `drop`, before the map is unmapped).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
        let (start, end) = (map.as_ptr() as usize, map.as_ptr() as usize + map.len());
        let slot = LIVE
            .iter()
            .position(|s| s.start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire).is_ok())?;
        LIVE[slot].fault.store(0, Ordering::Release);
        LIVE[slot].end.store(end, Ordering::Release);
        let (kept, next) = (AtomicUsize::new(0), AtomicUsize::new(0));
        Some(Mapped { map, slot, kept, next, progress })
    }

    /// The file's bytes, as long as it was when mapped.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The file's bytes lent a window at a time, for a reader over the runtime's `Input`: each
    /// window that opens moves the map along ([`advance`](Mapped::advance)).
    pub fn window(&self) -> WindowBuf<'_, impl FnMut(u64) + '_> {
        WindowBuf::new(&self.map, WINDOW, move |pos| self.advance(pos as usize))
    }

    /// The reader is at byte `pos`: the pages more than a window behind it are dropped. Cheap to
    /// call for every record.
    #[inline(always)]
    pub fn advance(&self, pos: usize) {
        if pos >= self.next.load(Ordering::Relaxed) {
            self.moved(pos);
        }
    }

    #[cold]
    fn moved(&self, pos: usize) {
        if let Some(Progress(tell)) = &self.progress {
            tell(pos as u64);
        }
        self.next.store(pos + WINDOW / 2, Ordering::Relaxed);
        let page = PAGE.load(Ordering::Relaxed);
        let base = self.map.as_ptr() as usize;
        let behind = pos.saturating_sub(WINDOW) & !(page - 1);
        let kept = self.kept.load(Ordering::Relaxed);
        // Dropped a few windows at once: each drop interrupts the process's other running
        // threads (a dump's or an export's) to flush their TLBs.
        if behind >= kept + DROP {
            // SAFETY: the range is inside the map, page-aligned; for a file mapping, dropped pages
            // are read again from the file if touched, so no view of them is invalidated.
            #[allow(unsafe_code)]
            unsafe {
                libc::madvise((base + kept) as *mut libc::c_void, behind - kept, libc::MADV_DONTNEED)
            };
            self.kept.store(behind, Ordering::Relaxed);
        }
    }

    /// Whether the file turned out shorter than mapped while it was read: the offset of the
    /// first byte that could not be read (from there on the reader saw zeros).
    pub fn truncated(&self) -> Option<u64> {
        match LIVE[self.slot].fault.load(Ordering::Acquire) {
            0 => None,
            at => Some(at as u64 - 1),
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // The slot is freed before `map` is unmapped (fields drop after this).
        LIVE[self.slot].end.store(0, Ordering::Release);
        LIVE[self.slot].start.store(0, Ordering::Release);
    }
}

/// Installs the handler; the disposition it replaced, or `None` if it could not.
fn install() -> Option<Previous> {
    // SAFETY: `sysconf` and `sigaction` with valid arguments; the handler only reads atomics,
    // calls `mmap` (a system call that takes no lock) and the previous handler.
    #[allow(unsafe_code)]
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE);
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigbus as *const () as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGBUS, &new, &mut old) == 0).then_some(Previous(old))
    }
}

/// The `SIGBUS` handler (see the module doc).
#[allow(unsafe_code)]
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &LIVE {
        let (start, end) = (s.start.load(Ordering::Acquire), s.end.load(Ordering::Acquire));
        if start <= addr && addr < end {
            let from = addr & !(page - 1);
            // SAFETY: replaces the rest of a live map (its slot is filled until the map is
            // unmapped) with zero pages; nothing else lives in that range.
            let r = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if r != libc::MAP_FAILED {
                let _ = s.fault.compare_exchange(0, addr - start + 1, Ordering::AcqRel, Ordering::Acquire);
                return;
            }
        }
    }
    // Not a map of ours: what would have happened without this handler.
    match PREVIOUS.get() {
        Some(Some(Previous(old))) if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN => {
            // SAFETY: the previous handler, called as it was installed (with or without
            // `SA_SIGINFO`).
            unsafe {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(old.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
                    f(sig);
                }
            }
        }
        _ => {
            // SAFETY: back to the default action; the fault happens again on return and ends
            // the process as it would have.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_truncated_underneath_reads_as_zeros_and_is_reported() {
        let dir = std::env::temp_dir().join(format!("logspec-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shrinks.bin");
        let len = 3 * WINDOW + 123;
        std::fs::File::create(&path).unwrap().write_all(&vec![7u8; len]).unwrap();
        let file = File::open(&path).unwrap();
        let m = Mapped::new(&file, None).expect("a regular file maps");
        let bytes = m.bytes();
        m.advance(0);
        assert_eq!(bytes[0], 7);
        assert_eq!(m.truncated(), None);
        // Another writer cuts the file to one window and a bit.
        let cut = WINDOW + 10;
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut as u64).unwrap();
        let mut sum = 0u64;
        for (i, b) in bytes.iter().enumerate().step_by(512) {
            m.advance(i);
            sum += u64::from(*b);
        }
        // Every byte before the cut's page was the file's; every byte from the next page on reads 0.
        let page = PAGE.load(Ordering::Relaxed);
        let first_gone = cut.div_ceil(page) * page;
        let at = m.truncated().expect("the truncation is reported");
        assert!(at >= first_gone as u64 && at < first_gone as u64 + page as u64, "{at} vs {first_gone}");
        assert_eq!(bytes[len - 1], 0);
        assert_eq!(sum, 7 * (cut as u64).div_ceil(512));
        drop(m);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
