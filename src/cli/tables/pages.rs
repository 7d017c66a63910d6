//! A growable column of numbers for the in-memory tables' big columns (an R1 RLOG file read in
//! two halves, `source::rlog_split`): a `Vec` while it is small, then pages of its own (an
//! anonymous mapping) that grow without a copy (`mremap`) and become the Arrow buffer as they
//! are. Joining the second half's column to the first's ([`PageVec::append`]) moves the second's
//! pages to follow the first's, then slides its values down by less than a page into place:
//! no new memory is mapped and written, which on a virtual machine costs more than the copy
//! itself (each fresh page is a fault, often the host's too).
//!
//! Elsewhere than Linux with glibc (where `mremap` is not bound) a `PageVec` is a `Vec` all the
//! way, and [`PageVec::append`] copies.

use std::ptr::NonNull;

use arrow_buffer::{ArrowNativeType, Buffer};

/// The numbers a [`PageVec`] holds: plain values whose size divides a page.
pub trait Plain: ArrowNativeType + Copy + Send + Sync + 'static {}
impl Plain for i64 {}
impl Plain for f64 {}
impl Plain for f32 {}

/// A column's values: a `Vec`'s allocation, or (once larger than [`MAP_FROM`] bytes) a mapping
/// of its own.
pub struct PageVec<T: Plain> {
    ptr: NonNull<T>,
    len: usize,
    /// Elements there is room for (a mapping: its bytes over the element size).
    cap: usize,
    mapped: bool,
}

// SAFETY: a `PageVec` owns its values as a `Vec` does; `T` is `Send + Sync`.
unsafe impl<T: Plain> Send for PageVec<T> {}
// SAFETY: as above; `&PageVec` only reads.
unsafe impl<T: Plain> Sync for PageVec<T> {}

/// Columns larger than this move to pages of their own when they grow.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAP_FROM: usize = 64 << 10;
/// The address space a column's first mapping takes: it grows within it without a call (its
/// pages are mapped in as they are written; the rest costs nothing), so most columns never
/// `mremap`, which stops the other threads for a TLB flush.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const FIRST_MAP: usize = 4 << 20;

/// The columns' mappings not yet unmapped, and the most there may be at once: a joined column
/// can take three of the system's memory areas (`vm.max_map_count`, 65,530 by default), which
/// the rest of the process needs too. Past it, new columns stay `Vec`s.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAX_MAPPINGS: usize = 8192;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const PAGE: usize = 4096;

impl<T: Plain> Default for PageVec<T> {
    fn default() -> Self {
        PageVec::from_vec(Vec::new())
    }
}

impl<T: Plain> PageVec<T> {
    pub fn new() -> Self {
        Self::default()
    }

    fn from_vec(v: Vec<T>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
        // A `Vec`'s pointer is never null (dangling when it has no room).
        PageVec { ptr: NonNull::new(ptr).expect("a Vec's pointer"), len, cap, mapped: false }
    }

    /// A column of one value.
    pub fn one(x: T) -> Self {
        Self::from_vec(vec![x])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the first `len` values (of plain numbers: nothing to drop).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized values (and is aligned and non-null when empty).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Appends a value, growing the room fourfold when it is full (as `tables::push_row`).
    #[inline(always)]
    pub fn push(&mut self, x: T) {
        if self.len == self.cap {
            self.grow(self.cap.max(256) * 3);
        }
        // SAFETY: `len < cap`: the slot is inside the allocation.
        unsafe { self.ptr.as_ptr().add(self.len).write(x) };
        self.len += 1;
    }

    /// Appends an iterator's values, making room for all of them at once (at most as many as
    /// it says it has).
    #[inline]
    pub fn extend_exact(&mut self, it: impl ExactSizeIterator<Item = T>) {
        let n = it.len();
        if self.cap - self.len < n {
            self.grow(n);
        }
        // SAFETY: there is room for `n` values after `len`, and `take(n)` writes no more.
        let start = unsafe { self.ptr.as_ptr().add(self.len) };
        let mut written = 0;
        for x in it.take(n) {
            // SAFETY: `written < n`: inside the room made above.
            unsafe { start.add(written).write(x) };
            written += 1;
        }
        self.len += written;
    }

    /// Appends values, making exactly the room they need (and mapping its pages in one call).
    pub fn extend_from_slice(&mut self, x: &[T]) {
        if self.cap - self.len < x.len() {
            self.grow(x.len());
        }
        // SAFETY: the room after `len` is uninitialized, inside the allocation, and long enough.
        let spare = unsafe {
            std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(self.len).cast::<std::mem::MaybeUninit<T>>(), x.len())
        };
        super::passes::prefault(spare);
        // SAFETY: `x` (borrowed) cannot overlap the room this column owns exclusively.
        unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), self.ptr.as_ptr().add(self.len), x.len()) };
        self.len += x.len();
    }

    /// Makes room for at least `more` values more.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, more: usize) {
        let want = self.len.checked_add(more).expect("a column of more than usize::MAX values");
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            let bytes = want.checked_mul(size_of::<T>()).expect("a column larger than memory");
            if self.mapped || bytes > MAP_FROM {
                let bytes = if self.mapped { bytes } else { bytes.max(FIRST_MAP) }.next_multiple_of(PAGE);
                if self.map(bytes) {
                    return;
                }
            }
        }
        let mut v = self.take_vec();
        v.reserve(want - v.len());
        *self = Self::from_vec(v);
    }

    /// The values as a `Vec` (taken out of `self`, which becomes empty); from a mapping, a copy.
    fn take_vec(&mut self) -> Vec<T> {
        let this = std::mem::take(self);
        let this = std::mem::ManuallyDrop::new(this);
        if !this.mapped {
            // SAFETY: the parts of a `Vec` (`from_vec`), not dropped twice (`ManuallyDrop`).
            return unsafe { Vec::from_raw_parts(this.ptr.as_ptr(), this.len, this.cap) };
        }
        let v = this.as_slice().to_vec();
        // SAFETY: the mapping is this column's own; nothing borrows it now.
        unsafe { unmap_whole(this.ptr.as_ptr().cast(), this.cap * size_of::<T>()) };
        v
    }

    /// Moves the values to (or grows them in) a mapping of `bytes` bytes (a multiple of the
    /// page size); false (nothing changed) when the system would not map it.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn map(&mut self, bytes: usize) -> bool {
        if self.mapped {
            let old = self.cap * size_of::<T>();
            // SAFETY: the column's own mapping of `old` bytes; it may move, its pages kept.
            let p = unsafe { libc::mremap(self.ptr.as_ptr().cast(), old, bytes, libc::MREMAP_MAYMOVE) };
            if p == libc::MAP_FAILED {
                return false;
            }
            self.ptr = NonNull::new(p.cast()).expect("a mapping");
            self.cap = bytes / size_of::<T>();
            return true;
        }
        let Some(p) = map_anon(bytes) else { return false };
        // SAFETY: the new mapping holds `bytes >= len * size` bytes; the old values are
        // initialized and cannot overlap a new mapping.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), p.as_ptr().cast::<T>(), self.len) };
        let len = self.len;
        drop(self.take_vec());
        *self = PageVec { ptr: p.cast(), len, cap: bytes / size_of::<T>(), mapped: true };
        true
    }

    /// Appends `other`'s values. An empty column takes `other` as it is; when both are mapped,
    /// `other`'s pages are moved after this column's last and its values slid down into place
    /// (less than a page's worth of distance); else they are copied.
    pub fn append(&mut self, other: PageVec<T>) {
        if self.is_empty() {
            // Nothing to keep: `other` becomes the column as it is.
            *self = other;
            return;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if self.mapped && other.mapped && self.append_pages(&other) {
            // `other`'s pages are this column's now, or unmapped.
            std::mem::forget(other);
            released();
            return;
        }
        self.extend_from_slice(other.as_slice());
    }

    /// [`PageVec::append`] by moving pages; false (no value moved; this column's room may have
    /// grown) when the system would not.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn append_pages(&mut self, other: &PageVec<T>) -> bool {
        let (a, b) = (self.len * size_of::<T>(), other.len * size_of::<T>());
        // `other`'s first page goes to the first page boundary at or after this column's end.
        let at = a.next_multiple_of(PAGE);
        let (b_pages, b_mapped) = (b.next_multiple_of(PAGE), other.cap * size_of::<T>());
        let need = at + b_pages;
        if self.cap * size_of::<T>() < need && !self.map(need) {
            return false;
        }
        let base = self.ptr.as_ptr().cast::<u8>();
        if b_pages > 0 {
            // SAFETY: `other`'s first `b_pages` bytes are its own mapping; the target range lies
            // inside this column's mapping, past its values (`at >= a`), so replacing the pages
            // there loses nothing.
            let p = unsafe {
                libc::mremap(
                    other.ptr.as_ptr().cast(),
                    b_pages,
                    b_pages,
                    libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                    base.add(at).cast::<libc::c_void>(),
                )
            };
            if p == libc::MAP_FAILED {
                return false;
            }
        }
        if b_mapped > b_pages {
            // SAFETY: the rest of `other`'s mapping, which nothing uses.
            unsafe { unmap(other.ptr.as_ptr().cast::<u8>().add(b_pages), b_mapped - b_pages) };
        }
        // SAFETY: both ranges lie inside this column's mapping; `copy` allows the overlap.
        unsafe { std::ptr::copy(base.add(at), base.add(a), b) };
        self.len += other.len;
        true
    }

    /// The values as an Arrow buffer. A mapping keeps its spare room (pages never written, so
    /// never mapped in: address space, not memory) until the buffer is dropped: unmapping it
    /// now would cost a call and stop the other threads for a TLB flush. A `Vec` is shrunk.
    pub fn into_buffer(self) -> Buffer {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if self.mapped {
            let this = std::mem::ManuallyDrop::new(self);
            let base = this.ptr.as_ptr().cast::<u8>();
            let owner = std::sync::Arc::new(Mapping { ptr: base as usize, bytes: this.cap * size_of::<T>() });
            // SAFETY: `len * size` initialized bytes at `base`, which stay mapped until the
            // owner (held by the buffer) is dropped.
            return unsafe { Buffer::from_custom_allocation(this.ptr.cast(), this.len * size_of::<T>(), owner) };
        }
        let mut v = { self }.take_vec();
        v.shrink_to_fit();
        Buffer::from_vec(v)
    }
}

/// A column of lists of numbers: Arrow's offsets (from 0, one more than the rows) and the
/// items of every row, in order.
pub struct Lists<T: Plain> {
    pub offsets: Vec<i32>,
    pub items: PageVec<T>,
}

impl<T: Plain> Default for Lists<T> {
    fn default() -> Self {
        Lists { offsets: vec![0], items: PageVec::new() }
    }
}

impl<T: Plain> Lists<T> {
    /// Appends a row of these items; false (nothing appended) when the column would hold more
    /// items than Arrow's 32-bit offsets count.
    #[inline(always)]
    pub fn push(&mut self, items: impl ExactSizeIterator<Item = T>) -> bool {
        let before = self.items.len();
        self.items.extend_exact(items);
        let Ok(end) = i32::try_from(self.items.len()) else {
            self.items.truncate(before);
            return false;
        };
        super::push_row(&mut self.offsets, end);
        true
    }

    /// Whether `more` items more fit the offsets.
    pub fn fits(&self, more: usize) -> bool {
        self.items.len().checked_add(more).is_some_and(|n| n <= i32::MAX as usize)
    }

    /// Appends rows given as offsets into `items` (`offsets[0]` is where `items` start), which
    /// fit ([`Lists::fits`]).
    pub fn extend(&mut self, offsets: &[i32], items: &[T]) {
        let shift = self.items.len() as i64 - i64::from(offsets[0]);
        self.offsets.extend(offsets[1..].iter().map(|o| (i64::from(*o) + shift) as i32));
        self.items.extend_from_slice(items);
    }

    /// Appends another column's rows (which fit), its items' pages moved after these
    /// ([`PageVec::append`]); taken as it is when this column has no rows.
    pub fn append(&mut self, other: Lists<T>) {
        if self.offsets.len() == 1 {
            *self = other;
            return;
        }
        let shift = self.items.len() as i64;
        self.offsets.extend(other.offsets[1..].iter().map(|o| (i64::from(*o) + shift) as i32));
        self.items.append(other.items);
    }
}

impl<T: Plain> Drop for PageVec<T> {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: the column's own mapping, dropped once.
            unsafe { unmap_whole(self.ptr.as_ptr().cast(), self.cap * size_of::<T>()) };
        } else {
            // SAFETY: the parts of a `Vec` (`from_vec`).
            drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, self.cap) });
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for PageVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Pages of a buffer handed to Arrow, unmapped when the last array using them is dropped.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
struct Mapping {
    /// The address (as a number, so that the owner is `Send` and `Sync`).
    ptr: usize,
    bytes: usize,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the pages `PageVec::into_buffer` gave this owner, unmapped once.
        unsafe { unmap_whole(self.ptr as *mut u8, self.bytes) };
    }
}

/// A fresh private anonymous mapping of `bytes` bytes (a multiple of the page size); `None`
/// when the system would not map it or [`MAX_MAPPINGS`] are mapped.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn map_anon(bytes: usize) -> Option<NonNull<u8>> {
    use std::sync::atomic::Ordering;
    if MAPPINGS.fetch_add(1, Ordering::Relaxed) >= MAX_MAPPINGS {
        released();
        return None;
    }
    // SAFETY: a new mapping at an address of the system's choosing; nothing else is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    let p = (p != libc::MAP_FAILED).then(|| NonNull::new(p.cast())).flatten();
    if p.is_none() {
        released();
    }
    p
}

/// One mapping fewer ([`MAPPINGS`]).
fn released() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    MAPPINGS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
}

/// Unmaps the whole of a mapping that [`map_anon`] made (grown or moved since).
///
/// # Safety
/// As [`unmap`].
unsafe fn unmap_whole(ptr: *mut u8, bytes: usize) {
    // SAFETY: the caller's promise.
    unsafe { unmap(ptr, bytes) };
    released();
}

/// Unmaps `bytes` bytes at `ptr` (page-aligned; a no-op for none).
///
/// # Safety
/// The range must be a mapping (or part of one) that nothing uses any more.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    if bytes > 0 {
        // SAFETY: the caller's promise.
        unsafe { libc::munmap(ptr.cast(), bytes) };
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
unsafe fn unmap(_: *mut u8, _: usize) {
    unreachable!("nothing is mapped here")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn filled(n: usize, from: i64) -> PageVec<i64> {
        let mut v = PageVec::new();
        (0..n as i64).for_each(|i| v.push(from + i));
        v
    }

    /// The tests that count the mappings, or make any, run one at a time.
    pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn mappings() -> usize {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        return MAPPINGS.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        0
    }

    /// Appending keeps every value in order, whether either side is mapped, small or empty,
    /// and whatever the first side's length is within a page; every mapping is counted out
    /// when it is gone.
    #[test]
    fn append_keeps_values_in_order() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let before = mappings();
        let sizes = [0usize, 1, 511, 512, 513, 40_000, 131_071, 131_072, 131_073, 300_001];
        for &a in &sizes {
            for &b in &sizes {
                let mut x = filled(a, 0);
                x.append(filled(b, a as i64));
                assert_eq!(x.len(), a + b);
                assert!(x.as_slice().iter().enumerate().all(|(i, v)| *v == i as i64), "{a} + {b}");
                let buf = x.into_buffer();
                let got: &[i64] = buf.typed_data();
                assert!(got.iter().enumerate().all(|(i, v)| *v == i as i64), "{a} + {b} as a buffer");
                assert_eq!(got.len(), a + b);
            }
        }
        assert_eq!(mappings(), before);
    }

    /// Pushing after an append, appending twice and extending keep on growing the same column.
    #[test]
    fn grows_after_an_append() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let before = mappings();
        let mut x = filled(200_000, 0);
        x.append(filled(150_000, 200_000));
        x.push(350_000);
        x.extend_from_slice(&(350_001..360_000).collect::<Vec<i64>>());
        x.append(filled(140_000, 360_000));
        assert!(x.as_slice().iter().enumerate().all(|(i, v)| *v == i as i64));
        assert_eq!(x.len(), 500_000);
        x.extend_exact((500_000..600_000).collect::<Vec<i64>>().into_iter());
        x.extend_exact(std::iter::empty());
        assert!(x.as_slice().iter().enumerate().all(|(i, v)| *v == i as i64));
        assert_eq!(x.len(), 600_000);
        let f: PageVec<f64> = {
            let mut f = PageVec::new();
            (0..300_000).for_each(|i| f.push(f64::from(i) * 0.5));
            f
        };
        let b = f.into_buffer();
        assert_eq!(b.typed_data::<f64>()[299_999], 149_999.5);
        drop((x, b));
        assert_eq!(mappings(), before);
    }

    /// Past the most mappings there may be, new columns stay `Vec`s and still hold their
    /// values; and a column of a `Vec` appends a mapped one by copying it.
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn past_the_most_mappings_columns_stay_vecs() {
        use std::sync::atomic::Ordering;
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mapped = filled(20_000, 0);
        assert!(mapped.mapped);
        let before = MAPPINGS.swap(MAX_MAPPINGS, Ordering::Relaxed);
        let mut vec = filled(20_000, 0);
        MAPPINGS.store(before, Ordering::Relaxed);
        assert!(!vec.mapped);
        vec.append(filled(20_000, 20_000));
        assert!(vec.as_slice().iter().enumerate().all(|(i, v)| *v == i as i64));
        assert_eq!(vec.into_buffer().len(), 40_000 * 8);
        drop(mapped);
        assert_eq!(MAPPINGS.load(Ordering::Relaxed), before - 1);
    }
}
