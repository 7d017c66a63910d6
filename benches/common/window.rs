//! A file mapped as logspec's readers map one, for the benches' limit walks.

use std::cell::Cell;
use std::path::Path;

/// A file mapped for a limit walk: the pages prefaulted ahead of the walk and dropped behind it
/// in 4 MiB windows, as logspec's reader does.
pub struct Window {
    pub map: memmap2::Mmap,
    ready: Cell<usize>,
    kept: Cell<usize>,
}

impl Window {
    pub const W: usize = 4 << 20;

    pub fn open(path: &Path) -> Window {
        let file = std::fs::File::open(path).unwrap();
        // SAFETY: a bench input no other process writes.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        Window { map, ready: Cell::new(0), kept: Cell::new(0) }
    }

    /// The walk is at `pos`: the window ahead prefaulted, the pages a window behind dropped.
    #[inline(always)]
    pub fn advance(&self, pos: usize) {
        if pos + Self::W / 2 >= self.ready.get() {
            self.moved(pos);
        }
    }

    #[cold]
    fn moved(&self, pos: usize) {
        let (ready, kept) = (self.ready.get(), self.kept.get());
        let to = self.map.len().min(ready + Self::W);
        let _ = self.map.advise_range(memmap2::Advice::PopulateRead, ready, to - ready);
        self.ready.set(to.max(pos + Self::W / 2 + 1));
        let behind = pos.saturating_sub(Self::W) & !4095;
        if behind > kept {
            // SAFETY: dropping pages of a read-only file map; they are read again if touched.
            #[allow(unsafe_code)]
            let _ = unsafe { self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, kept, behind - kept) };
            self.kept.set(behind);
        }
    }
}

/// Every 64-byte line of the mapped file read, in order, through a [`Window`]: the floor of any
/// one-thread pass over a mapped log that looks at each of its messages where they are several
/// to a line (the page faults, the prefaulting and the memory reads, no decoding). Returns the
/// bytes read, folded so that no read is left out.
pub fn every_line(path: &Path) -> u64 {
    let w = Window::open(path);
    let b: &[u8] = &w.map;
    let mut fold = 0u64;
    let mut pos = 0;
    while pos < b.len() {
        w.advance(pos);
        fold = fold.wrapping_add(u64::from(b[pos]));
        pos += 64;
    }
    std::hint::black_box(fold);
    b.len() as u64
}
