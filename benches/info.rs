//! Whole-process `logspec info`, against the limits and peers it is held to, all measured side
//! by side in interleaved rounds of one run (files in the page cache):
//!
//! - **USVLOG** (the `usvlog` bench's 200 MB stream): `logspec info` against
//!   - the *mmap-and-walk limit*: this program maps the file (windows prefaulted ahead and dropped
//!     behind, as logspec does) and walks the record headers, counting records per type and
//!     keeping the first and last timestamps: what any summary must at least do;
//!   - the *zerocopy decoder*: the file read into memory (`std::fs::read`), then every record's
//!     header and payload taken as `zerocopy` references of hand-written structs (lengths
//!     checked), counted per type with the time span: what a Rust user writes without logspec.
//! - **CARLA** (the `carla` bench's 199 MB recording): `logspec info` against the binrw-derived
//!   decoder of `carla/peers.rs` over the recording in memory (file reading not counted); beside
//!   them, only the packet headers (`id` u8, `size` u32) walked, reading ahead (the file mapped
//!   as for USVLOG, and in memory), and the floor of a whole-process summary: a process that maps
//!   the file, walks its headers and exits, timed as `logspec info` is (with the pages faulting
//!   in, and with a second thread mapping them ahead).
//! - **RLOG** (the `rlog` bench's 97 MB R1 input): `logspec info` against the in-process loop of
//!   views over the same bytes (`Reader::from_slice`, `for_each_event_ref`, values counted per
//!   key) plus the time to map them (this program maps the file, prefaulting it).
//!
//! `cargo bench --bench info` (options: `-- --mb 50` scales the USVLOG and CARLA inputs and halves
//! for RLOG; `--rounds N`, default 9; `--keep DIR` writes the inputs there and leaves them). Prints medians of wall time; the `logspec` binary is the
//! release build of this checkout. Peak RSS of each `logspec info` is printed too, and CPU time
//! (user and system, from `getrusage`: every thread of `logspec`, this thread for the in-process
//! lines) beside the wall clock, with the ratios by both.

mod common;
#[path = "carla/peers.rs"]
mod peers;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::window::Window;
use common::{arg, arg_mb, median};
use zerocopy::little_endian::{F32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// CPU time (user and system) used so far by this process (`RUSAGE_SELF`: the in-process lines,
/// which run on this thread alone) or by its waited-for children and theirs (`RUSAGE_CHILDREN`:
/// `/usr/bin/time` and the `logspec` it ran, every thread of it).
fn cpu(who: libc::c_int) -> Duration {
    // SAFETY: `getrusage` fills the struct it is given.
    #[allow(unsafe_code)]
    let r = unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut r);
        r
    };
    let us = |t: libc::timeval| Duration::from_micros(t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64);
    us(r.ru_utime) + us(r.ru_stime)
}

/// `logspec info FILE`, whole process: wall time, CPU time and peak RSS (kB, from `wait4`'s rusage).
fn info(file: &Path) -> (Duration, Duration, u64) {
    process(PathBuf::from(env!("CARGO_BIN_EXE_logspec")), &["info".to_string(), file.display().to_string()])
}

/// `program ARGS` under `/usr/bin/time`, its output dropped: wall time, CPU time (it and its
/// threads) and peak RSS (kB).
fn process(program: PathBuf, args: &[String]) -> (Duration, Duration, u64) {
    let c = cpu(libc::RUSAGE_CHILDREN);
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "@@ %M"])
        .arg(&program)
        .args(args)
        .stdout(Stdio::null())
        .output()
        .expect("run a process under /usr/bin/time");
    let wall = t.elapsed();
    let cpu = cpu(libc::RUSAGE_CHILDREN) - c;
    assert!(out.status.success(), "{} {args:?} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stderr);
    let rss = text.lines().find_map(|l| l.strip_prefix("@@ ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    (wall, cpu, rss)
}

/// Wall time and CPU time of an in-process line.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, Duration) {
    let c = cpu(libc::RUSAGE_SELF);
    let t = Instant::now();
    black_box(f());
    (t.elapsed(), cpu(libc::RUSAGE_SELF) - c)
}

// ---------------------------------------------------------------- USVLOG peers

/// The file header: magic, schema, endianness, t0, 13 reserved bytes (32 bytes).
const USVLOG_HEADER: usize = 32;
/// The record header: `t_us` u64, `type` u16, `len` u16.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RecordHeader {
    t_us: U64,
    ty: U16,
    len: U16,
}

/// A summary as `info` makes one: records per type, first and last timestamps.
#[derive(Default, PartialEq, Debug)]
struct Tally {
    counts: BTreeMap<u16, u64>,
    first: Option<u64>,
    last: Option<u64>,
}

/// Counts per type in an array (type ids are small), folded into a [`Tally`] at the end.
struct Counts([u64; 256], Option<u64>, Option<u64>);

impl Counts {
    fn new() -> Self {
        Counts([0; 256], None, None)
    }
    #[inline(always)]
    fn add(&mut self, ty: u16, t: u64) {
        self.0[usize::from(ty as u8)] += 1;
        self.1.get_or_insert(t);
        self.2 = Some(t);
    }
    fn tally(self) -> Tally {
        let counts = self.0.iter().enumerate().filter(|(_, n)| **n > 0).map(|(t, n)| (t as u16, *n)).collect();
        Tally { counts, first: self.1, last: self.2 }
    }
}

/// The USVLOG limit: the file mapped ([`Window`]), the record headers walked.
fn walk_mapped(path: &Path) -> Tally {
    let w = Window::open(path);
    let b: &[u8] = &w.map;
    let mut c = Counts::new();
    let mut pos = USVLOG_HEADER;
    while pos + 12 <= b.len() {
        w.advance(pos);
        let t = u64::from_le_bytes(b[pos..pos + 8].try_into().unwrap());
        let ty = u16::from_le_bytes([b[pos + 8], b[pos + 9]]);
        let len = usize::from(u16::from_le_bytes([b[pos + 10], b[pos + 11]]));
        c.add(ty, t);
        pos += 12 + len;
    }
    c.tally()
}

/// The CARLA walk: the file mapped ([`Window`]), the packet headers (`id` u8, `size` u32) walked
/// from `header` (the end of the file's info header), packets and their payload bytes counted
/// per id. Less than `info` does (it also reads each packet's record count and checks that its
/// records fill it).
fn carla_walk_mapped(path: &Path, header: usize) -> Vec<(u8, u64, u64)> {
    let w = Window::open(path);
    carla_walk(&w.map, header, |pos| w.advance(pos))
}

/// How far ahead of a packet [`carla_walk`] asks for the lines of the file.
const AHEAD: usize = 4096;

/// Asks the processor for the cache line at `b[at]` (a hint: it reads nothing, waits for
/// nothing, and is dropped for a page that is not mapped).
#[inline(always)]
fn prefetch(b: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < b.len() {
        // SAFETY: `_mm_prefetch` only hints at an address (inside `b`); it never faults.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(b.as_ptr().add(at).cast())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (b, at);
}

/// The packet headers of `b` walked from `header`, `at` told each packet's offset first. Each
/// header's place is known only from the size in the one before, a chain of loads that would
/// wait for memory at every packet; the lines up to [`AHEAD`] bytes past each packet are asked
/// for first (prefetched), so the chain finds them in the cache: 4.9x faster than the same walk
/// without (BENCHMARKS.md).
#[inline(always)]
fn carla_walk(b: &[u8], header: usize, at: impl Fn(usize)) -> Vec<(u8, u64, u64)> {
    let mut c = [(0u64, 0u64); 256];
    let mut pos = header;
    let mut ahead = header;
    while pos + 5 <= b.len() {
        at(pos);
        while ahead < pos + AHEAD {
            prefetch(b, ahead);
            ahead += 64;
        }
        let id = b[pos];
        let size = u32::from_le_bytes([b[pos + 1], b[pos + 2], b[pos + 3], b[pos + 4]]) as usize;
        let e = &mut c[usize::from(id)];
        e.0 += 1;
        e.1 += size as u64;
        pos += 5 + size;
    }
    c.iter().enumerate().filter(|(_, e)| e.0 > 0).map(|(id, e)| (id as u8, e.0, e.1)).collect()
}

/// The floor of a whole-process summary of a CARLA file, run as a process of its own (this
/// program with `--walk-process FILE HEADER [--populate]`, timed as `logspec info` is): map the
/// file, walk its packet headers ([`carla_walk`]), print the packet count, exit. The pages fault
/// in as the walk reaches them; with `--populate`, a second thread maps them ahead of the walk
/// (`MADV_POPULATE_READ`, 4 MiB at a time, at most 16 MiB ahead). Nothing is dropped behind: the
/// process's exit unmaps it all, as a drop behind would.
fn walk_process(file: &Path, header: usize, populate: bool) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let f = std::fs::File::open(file).unwrap();
    // SAFETY: a bench input no other process writes.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
    let at = AtomicUsize::new(0);
    let packets = std::thread::scope(|s| {
        if populate {
            s.spawn(|| {
                const STEP: usize = 4 << 20;
                let mut ready = 0;
                while ready < map.len() {
                    let pos = at.load(Ordering::Relaxed);
                    if pos == usize::MAX {
                        break;
                    }
                    if ready > pos + 4 * STEP {
                        std::thread::yield_now();
                        continue;
                    }
                    let n = STEP.min(map.len() - ready);
                    let _ = map.advise_range(memmap2::Advice::PopulateRead, ready, n);
                    ready += n;
                }
            });
        }
        let walked = carla_walk(&map, header, |pos| {
            if populate {
                at.store(pos, Ordering::Relaxed)
            }
        });
        at.store(usize::MAX, Ordering::Relaxed);
        walked.iter().map(|e| e.1).sum::<u64>()
    });
    println!("{packets}");
}

/// [`walk_process`] run and timed as [`info`] runs `logspec info`.
fn walk_as_process(file: &Path, header: usize, populate: bool) -> (Duration, Duration, u64) {
    let mut args = vec!["--walk-process".to_string(), file.display().to_string(), header.to_string()];
    if populate {
        args.push("--populate".into());
    }
    process(std::env::current_exe().expect("this bench's path"), &args)
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct NavSolution {
    x: F32,
    y: F32,
    psi: F32,
    v: F32,
    r: F32,
    b_g: F32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct GuidanceRef {
    psi_d: F32,
    v_d: F32,
    e_y: F32,
    e_psi: F32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct ActuatorReq {
    u_s_req: F32,
    u_d_req: F32,
    src: u8,
    _pad: [u8; 3],
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct Pair {
    a: F32,
    b: F32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct MissionState {
    idx: U16,
    active: u8,
    done: u8,
    _pad: [u8; 4],
    x0: F32,
    y0: F32,
    x1: F32,
    y1: F32,
    v_seg: F32,
    d_wp: F32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct MixerFeedback {
    u_s_ach: F32,
    u_d_ach: F32,
    sat_l: u8,
    sat_r: u8,
    sat_any: u8,
    _pad: [u8; 5],
    u_l_ach: F32,
    u_r_ach: F32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct SpeedSchedDebug {
    v_seg: F32,
    v_cap: F32,
    v_d: F32,
    e_psi: F32,
    d_wp: F32,
    dv: F32,
    cap_wp: u8,
    cap_psi: u8,
    _pad: [u8; 2],
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct SpeedCtrlDebug {
    v_d: F32,
    v_hat: F32,
    e_v: F32,
    u_s_raw: F32,
    u_s_req: F32,
    i_v: F32,
    sat_u_s: u8,
    _pad: [u8; 3],
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct YawCtrlDebug {
    psi_d: F32,
    psi: F32,
    e_psi: F32,
    r_d: F32,
    r: F32,
    e_r: F32,
    u_d_req: F32,
    sat_u_d: u8,
    _pad: [u8; 3],
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct EkfDiag {
    p_xx: F32,
    p_yy: F32,
    p_psi: F32,
    p_v: F32,
    p_r: F32,
    p_bg: F32,
    status_flags: U32,
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct SensorGnss {
    x: F32,
    y: F32,
    cog: F32,
    sog: F32,
    valid: u8,
    _pad: [u8; 3],
}
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct SensorGyro {
    z_gyro: F32,
    b_g_est: F32,
    valid: u8,
    _pad: [u8; 3],
}

/// One payload as a reference of its type's struct (its length checked); `false` if it is not.
#[inline(always)]
fn payload<T: FromBytes + KnownLayout + Immutable>(p: &[u8]) -> bool {
    T::ref_from_bytes(p).map(black_box).is_ok()
}

/// The peer: the file read into memory, every record taken as zerocopy references.
fn zerocopy_read(path: &Path) -> Tally {
    let b = std::fs::read(path).unwrap();
    let _magic = U32::ref_from_prefix(&b[6..]).unwrap();
    let mut c = Counts::new();
    let mut rest = &b[USVLOG_HEADER..];
    while let Ok((h, after)) = RecordHeader::ref_from_prefix(rest) {
        let len = usize::from(h.len.get());
        let Some(p) = after.get(..len) else { break };
        let ok = match h.ty.get() {
            1 => payload::<NavSolution>(p),
            2 => payload::<GuidanceRef>(p),
            3 => payload::<ActuatorReq>(p),
            4 | 5 => payload::<Pair>(p),
            6 => payload::<MissionState>(p),
            7 => payload::<MixerFeedback>(p),
            8 => payload::<SpeedSchedDebug>(p),
            9 => payload::<SpeedCtrlDebug>(p),
            10 => payload::<YawCtrlDebug>(p),
            11 => payload::<EkfDiag>(p),
            12 => payload::<SensorGnss>(p),
            13 => payload::<SensorGyro>(p),
            _ => false,
        };
        assert!(ok, "every record of the bench input decodes");
        c.add(h.ty.get(), h.t_us.get());
        rest = &after[len..];
    }
    c.tally()
}

// ---------------------------------------------------------------- RLOG peer

/// The in-process loop of views over the mapped file (prefaulted), values counted per key.
fn rlog_views(path: &Path) -> u64 {
    use logspec::formats::rlog::{EventRef, Reader};
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: a bench input no other process writes.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.unwrap();
    let mut per_key = vec![0u64; 1 << 16];
    let mut r = Reader::from_slice(&map).unwrap();
    r.for_each_event_ref(
        #[inline(always)]
        |ev| {
            if let EventRef::Value { key_id, value, .. } = ev {
                black_box(value);
                per_key[key_id as u16 as usize] += 1;
            }
        },
    )
    .unwrap();
    per_key.iter().sum()
}

// ---------------------------------------------------------------- main

struct Line {
    name: &'static str,
    times: Vec<Duration>,
    cpu: Vec<Duration>,
    rss: Vec<u64>,
}

impl Line {
    fn new(name: &'static str) -> Self {
        Line { name, times: Vec::new(), cpu: Vec::new(), rss: Vec::new() }
    }
    fn median(&self) -> Duration {
        median(self.times.clone())
    }
    fn median_cpu(&self) -> Duration {
        median(self.cpu.clone())
    }
    fn push(&mut self, (wall, cpu): (Duration, Duration)) {
        self.times.push(wall);
        self.cpu.push(cpu);
    }
    fn push_info(&mut self, (wall, cpu, rss): (Duration, Duration, u64)) {
        self.push((wall, cpu));
        self.rss.push(rss);
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--walk-process") {
        let header = args[i + 2].parse().expect("--walk-process FILE HEADER");
        walk_process(Path::new(&args[i + 1]), header, args.iter().any(|a| a == "--populate"));
        return;
    }
    let mb = arg_mb(200.0);
    let rounds: usize = arg("--rounds", "9").parse().expect("--rounds N");
    let keep = arg("--keep", "");
    let dir = match keep.as_str() {
        "" => std::env::temp_dir().join(format!("logspec-bench-info-{}", std::process::id())),
        d => PathBuf::from(d),
    };
    std::fs::create_dir_all(&dir).unwrap();
    eprintln!("building the inputs ({mb} MB USVLOG and CARLA, {} MB RLOG)...", mb / 2.0);
    let usv = write(&dir, "big.usvlog", &common::usvlog_input::build(mb));
    let (carla_buf, _) = common::carla_input::build(mb);
    let carla = write(&dir, "big.carla.log", &carla_buf);
    let rlog = write(&dir, "big.rlog", &common::rlog_input::build_r1(mb / 2.0));
    let carla_header = logspec::formats::carla::SliceReader::new(&carla_buf).unwrap().position() as usize;
    let sizes = [&usv, &carla, &rlog].map(|p| std::fs::metadata(p).unwrap().len());

    // The peers agree with each other before anything is timed.
    assert_eq!(walk_mapped(&usv), zerocopy_read(&usv), "the limit walk and the zerocopy peer agree");
    let packets = peers::binrw_all(&carla_buf, carla_header);
    assert!(packets > 0);
    let walked = carla_walk_mapped(&carla, carla_header);
    assert_eq!(walked.iter().map(|e| e.1).sum::<u64>(), packets, "the CARLA limit walk and binrw agree");
    assert_eq!(carla_walk(&carla_buf, carla_header, |_| ()), walked, "the walk in memory is the mapped walk's");
    let values = rlog_views(&rlog);
    println!(
        "inputs: USVLOG {} B, CARLA {} B ({packets} packets), RLOG {} B ({values} values); {rounds} rounds",
        sizes[0], sizes[1], sizes[2]
    );

    let mut lines = [
        Line::new("USVLOG  logspec info (whole process)"),
        Line::new("USVLOG  mmap-and-walk limit"),
        Line::new("USVLOG  zerocopy decoder, file read into memory"),
        Line::new("CARLA   logspec info (whole process)"),
        Line::new("CARLA   binrw decoder in memory"),
        Line::new("CARLA   packet headers walked, file mapped"),
        Line::new("CARLA   packet headers walked in memory"),
        Line::new("CARLA   floor: a process maps, walks, exits"),
        Line::new("CARLA   floor, a second thread mapping ahead"),
        Line::new("RLOG    logspec info (whole process)"),
        Line::new("RLOG    views in process + map"),
    ];
    for _ in 0..rounds {
        lines[0].push_info(info(&usv));
        lines[1].push(timed(|| walk_mapped(&usv)));
        lines[2].push(timed(|| zerocopy_read(&usv)));
        lines[3].push_info(info(&carla));
        lines[4].push(timed(|| peers::binrw_all(&carla_buf, carla_header)));
        lines[5].push(timed(|| carla_walk_mapped(&carla, carla_header)));
        lines[6].push(timed(|| carla_walk(&carla_buf, carla_header, |_| ())));
        lines[7].push_info(walk_as_process(&carla, carla_header, false));
        lines[8].push_info(walk_as_process(&carla, carla_header, true));
        lines[9].push_info(info(&rlog));
        lines[10].push(timed(|| rlog_views(&rlog)));
    }
    if keep.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (i, l) in lines.iter().enumerate() {
        let size = sizes[match i {
            0..=2 => 0,
            3..=8 => 1,
            _ => 2,
        }];
        let rss = l.rss.iter().max().map_or(String::new(), |m| format!("   peak RSS {:.1} MB", *m as f64 / 1024.0));
        println!(
            "{:<50} {:>8.1} ms  {:>7.0} MB/s   CPU {:>6.1} ms{rss}",
            l.name,
            ms(l.median()),
            size as f64 / 1e6 / l.median().as_secs_f64(),
            ms(l.median_cpu()),
        );
    }
    // The ratios by wall clock, then by CPU time (the measure on a loaded machine, where the wall
    // clock measures a process's share of the cores).
    let ratio = |a: usize, b: usize| lines[b].median().as_secs_f64() / lines[a].median().as_secs_f64();
    let by_cpu = |a: usize, b: usize| lines[b].median_cpu().as_secs_f64() / lines[a].median_cpu().as_secs_f64();
    println!();
    println!("                                     wall clock / CPU time");
    println!(
        "USVLOG info / mmap-and-walk limit:   {:.2}x / {:.2}x the limit's time (goal: at most 2x)",
        1.0 / ratio(0, 1),
        1.0 / by_cpu(0, 1)
    );
    println!(
        "USVLOG info vs the zerocopy decoder: {:.2}x / {:.2}x as fast (goal: at least 1.6x)",
        ratio(0, 2),
        by_cpu(0, 2)
    );
    println!(
        "CARLA info vs binrw in memory:       {:.2}x / {:.2}x as fast (goal: at least 10x)",
        ratio(3, 4),
        by_cpu(3, 4)
    );
    println!(
        "CARLA header walk vs binrw:          {:.2}x / {:.2}x as fast (mapped; in memory {:.2}x / {:.2}x)",
        ratio(5, 4),
        by_cpu(5, 4),
        ratio(6, 4),
        by_cpu(6, 4)
    );
    println!(
        "CARLA floor process vs binrw:        {:.2}x / {:.2}x as fast (with a thread mapping ahead {:.2}x / {:.2}x)",
        ratio(7, 4),
        by_cpu(7, 4),
        ratio(8, 4),
        by_cpu(8, 4)
    );
    println!(
        "RLOG info / views + map:             {:.2}x / {:.2}x the loop's time (goal: at most 1.5x)",
        1.0 / ratio(9, 10),
        1.0 / by_cpu(9, 10)
    );
}
