//! Bounded work on hostile input, checked by counting every allocation of this test binary.
//!
//! - The fuzz regression corpus (`fuzz/corpus/<target>/*`) is replayed through the fuzz targets'
//!   bodies (`logspec::fuzz`), each input under an allocation limit proportional to its size.
//! - The hostile bags (a fixed array of messages without fields, a definition with 100,000
//!   fields, an index that lists one chunk 800 times, a definition chaining 20,000 types) are
//!   built here; each is decoded under an allocation limit, and `logspec dump` on each ends with
//!   the messages it could decode and a clear error where it could not.
//! - The bags of issue 34 (bz2 chunks that inflate to far more than the chunk budget, 20,000
//!   chunks that all overlap in time) are built in the section at the end; the library is held
//!   to an allocation limit, the command (`info`, `dump`, `export --parquet`) to 64 MiB of peak
//!   RSS and a few lines of stderr.

#[path = "common/scratch.rs"]
mod scratch;

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::PathBuf;

use common::logspec;
use logspec::formats::rosbag::{Bag, BagError, Decoders, Order};

/// Counts, per thread, the bytes allocated and not yet freed, and the peak since the last
/// [`peak_of`]. Per thread, so that tests running in parallel do not count each other's work
/// (`LOGSPEC_THREADS=1` keeps bag decompression on the calling thread).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + n;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// An allocator that counts: `GlobalAlloc` is an unsafe trait.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            add(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        add(-(l.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            add(new as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The peak number of bytes `f` holds allocated at once on this thread, above what was live
/// before it.
fn peak_of(f: impl FnOnce()) -> usize {
    std::env::set_var("LOGSPEC_THREADS", "1");
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    (PEAK.with(Cell::get) - base).max(0) as usize
}

/// The allocation limit of one input: a fixed allowance (buffers, compiled schemas, the JSON of
/// one value) plus a multiple of the input's size.
fn limit(target: &str, len: usize) -> usize {
    let per_byte = match target {
        // A schema is compiled and every back end's text generated from it (the Rust back end
        // writes each type twice: the owned type and its borrowed view).
        "schema" | "msg" | "wpistruct" => 1024,
        _ => 64,
    };
    (4 << 20) + per_byte * len
}

#[test]
fn fuzz_corpus_replays_within_its_allocation_limit() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut replayed = 0;
    for (name, body) in logspec::fuzz::TARGETS {
        let dir = root.join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (every target has a committed corpus)", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        for f in files {
            let data = std::fs::read(&f).unwrap();
            let peak = peak_of(|| body(&data));
            let max = limit(name, data.len());
            assert!(
                peak <= max,
                "{}: {peak} bytes allocated at once for {} bytes of input (limit {max})",
                f.display(),
                data.len()
            );
            replayed += 1;
        }
    }
    assert!(replayed >= logspec::fuzz::TARGETS.len());
}

/// A bag record: header fields, then data.
fn record(fields: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in fields {
        h.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        h.extend_from_slice(k.as_bytes());
        h.push(b'=');
        h.extend_from_slice(v);
    }
    let mut r = (h.len() as u32).to_le_bytes().to_vec();
    r.extend_from_slice(&h);
    r.extend_from_slice(&(data.len() as u32).to_le_bytes());
    r.extend_from_slice(data);
    r
}

/// A connection record (op 7) of connection 0 on `/hostile`.
fn connection(ty: &str, definition: &str) -> Vec<u8> {
    let mut data = Vec::new();
    for (k, v) in [("topic", "/hostile"), ("type", ty), ("md5sum", "*"), ("message_definition", definition)] {
        let f = record(&[(k, v.as_bytes())], b"");
        // A field list is a header without the record framing: drop the header and data lengths.
        data.extend_from_slice(&f[4..f.len() - 4]);
    }
    record(&[("op", &[7]), ("conn", &0u32.to_le_bytes()), ("topic", b"/hostile")], &data)
}

fn time(sec: u32) -> Vec<u8> {
    let mut t = sec.to_le_bytes().to_vec();
    t.extend_from_slice(&0u32.to_le_bytes());
    t
}

/// A bag with one connection and one uncompressed chunk holding `messages` (one a second, from
/// t = 1), whose index lists that chunk `refs` times.
fn bag(ty: &str, definition: &str, messages: &[Vec<u8>], refs: u32) -> Vec<u8> {
    let conn = connection(ty, definition);
    let mut chunk = conn.clone();
    for (i, m) in messages.iter().enumerate() {
        chunk.extend(record(&[("op", &[2]), ("conn", &0u32.to_le_bytes()), ("time", &time(i as u32 + 1))], m));
    }
    let mut out = b"#ROSBAG V2.0\n".to_vec();
    let header_at = out.len();
    let header_len =
        record(&[("op", &[3]), ("index_pos", &[0; 8]), ("conn_count", &[0; 4]), ("chunk_count", &[0; 4])], &[b' '; 64])
            .len();
    out.resize(header_at + header_len, 0);
    let chunk_pos = out.len() as u64;
    out.extend(record(
        &[("op", &[5]), ("compression", b"none"), ("size", &(chunk.len() as u32).to_le_bytes())],
        &chunk,
    ));
    let index_pos = out.len() as u64;
    out.extend(conn);
    let mut counts = 0u32.to_le_bytes().to_vec();
    counts.extend_from_slice(&(messages.len() as u32).to_le_bytes());
    for _ in 0..refs {
        out.extend(record(
            &[
                ("op", &[6]),
                ("ver", &1u32.to_le_bytes()),
                ("chunk_pos", &chunk_pos.to_le_bytes()),
                ("start_time", &time(1)),
                ("end_time", &time(messages.len().max(1) as u32)),
                ("count", &1u32.to_le_bytes()),
            ],
            &counts,
        ));
    }
    let header = record(
        &[
            ("op", &[3]),
            ("index_pos", &index_pos.to_le_bytes()),
            ("conn_count", &1u32.to_le_bytes()),
            ("chunk_count", &refs.to_le_bytes()),
        ],
        &[b' '; 64],
    );
    out[header_at..header_at + header_len].copy_from_slice(&header);
    out
}

/// The hostile classes of issue 16.
fn zero_size_array_bag() -> Vec<u8> {
    bag("pkg/Hostile", "pkg/E[4294967295] e\n================================================================================\nMSG: pkg/E\n", &[vec![], vec![]], 1)
}

fn many_fields_bag() -> Vec<u8> {
    let mut def = String::new();
    for i in 0..100_000 {
        def.push_str(&format!("int32 f{i}\n"));
    }
    let msg: Vec<u8> = (0..100_000i32).flat_map(|i| i.to_le_bytes()).collect();
    bag("pkg/Wide", &def, &[msg], 1)
}

fn repeated_chunk_bag() -> Vec<u8> {
    bag(
        "pkg/Blob",
        "uint8[] data",
        &[vec![0, 0, 16, 0].into_iter().chain(std::iter::repeat_n(7, 1 << 20)).collect()],
        800,
    )
}

/// Messages decoded (and failed) in `order`, and the peak allocation while reading.
fn decode_all(bytes: &[u8], order: Order) -> (usize, usize, usize) {
    let (mut ok, mut bad) = (0, 0);
    let peak = peak_of(|| {
        let mut bag = Bag::open(Cursor::new(bytes)).expect("opens");
        let decoders = Decoders::new("hostile", &bag.connections, None);
        bag.for_each_message(order, None, |m| -> Result<(), BagError> {
            match decoders.get(m.conn).and_then(|t| t.decoder.as_ref()).map(|d| d.decode(m.data)) {
                Some(Ok(_)) => ok += 1,
                _ => bad += 1,
            }
            Ok(())
        })
        .expect("walks");
    });
    (ok, bad, peak)
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = scratch::temp_dir().join(format!("logspec-bounded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn fixed_array_of_empty_messages_is_refused_not_allocated() {
    let bytes = zero_size_array_bag();
    let (ok, bad, peak) = decode_all(&bytes, Order::Time);
    assert_eq!((ok, bad), (0, 2));
    assert!(peak < 16 << 20, "{peak} bytes");
    let p = write_temp("zero_size.bag", &bytes);
    let out = logspec(&["dump", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("4294967295 elements that take no bytes"), "{err}");
    // The connection is printed, both messages are reported as not decoded, and the exit status
    // says so.
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    assert!(err.contains("2 message(s) could not be decoded"), "{err}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_definition_of_100000_fields_parses_in_linear_time() {
    let bytes = many_fields_bag();
    let (ok, bad, peak) = decode_all(&bytes, Order::Time);
    assert_eq!((ok, bad), (1, 0));
    // The definition is 1.1 MB; its IR and decoded value take a few times that.
    assert!(peak < 64 << 20, "{peak} bytes");
    // A duplicate among them is still found.
    let dup = bag("pkg/Wide", "int32 a\nint32 b\nint32 a\n", &[vec![0; 12]], 1);
    let p = write_temp("dup.bag", &dup);
    let out = logspec(&["dump", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("field `a` is defined twice"), "{err}");
}

#[test]
fn an_index_listing_one_chunk_800_times_reads_it_once() {
    let bytes = repeated_chunk_bag();
    let bag = Bag::open(Cursor::new(&bytes[..])).unwrap();
    assert_eq!(bag.chunks.len(), 1);
    assert_eq!(bag.duplicate_chunk_refs, 799);
    for order in [Order::Time, Order::File] {
        let (ok, bad, peak) = decode_all(&bytes, order);
        assert_eq!((ok, bad), (1, 0), "{order:?}");
        assert!(peak < 16 << 20, "{order:?}: {peak} bytes");
    }
    let p = write_temp("repeated.bag", &bytes);
    let out = logspec(&["info", p.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("799 duplicate chunk reference"), "{text}");
    let out = logspec(&["dump", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

/// Writes the hostile bags to `$LOGSPEC_HOSTILE_DIR` for measuring `logspec dump` by hand
/// (docs/fuzzing.md); does nothing without it.
#[test]
fn write_hostile_bags_for_measurement() {
    let Some(dir) = std::env::var_os("LOGSPEC_HOSTILE_DIR") else { return };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bags: BTreeMap<&str, Vec<u8>> = BTreeMap::from([
        ("zero_size_array.bag", zero_size_array_bag()),
        ("many_fields.bag", many_fields_bag()),
        ("repeated_chunk.bag", repeated_chunk_bag()),
        ("deep_chain.bag", deep_chain_bag()),
        // Issue 34's, with bombs that inflate to 1000 MiB (the tests use 96 MiB).
        ("bz2_bomb.bag", hostile_bag_bz2_bombs(1, 1000 << 20, 1000 << 20, true)),
        ("bz2_bomb_unindexed.bag", hostile_bag_bz2_bombs(1, 1000 << 20, 1000 << 20, false)),
        ("bz2_bombs_4.bag", hostile_bag_bz2_bombs(4, 1000 << 20, 1000 << 20, true)),
        ("overlapping.bag", hostile_bag_overlapping(20_000)),
    ]);
    for (name, bytes) in bags {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// A definition that chains 20,000 message types, each the only field of the one before: every
/// recursive walk over it (md5, lowering, decoding) would exhaust the stack. It is refused
/// (E0602, more than 100 levels), in time linear in its size.
fn deep_chain_bag() -> Vec<u8> {
    let sep = "=".repeat(80);
    let mut def = String::from("pkg/T1 t\n");
    for i in 1..20_000 {
        def.push_str(&format!("{sep}\nMSG: pkg/T{i}\npkg/T{} t\n", i + 1));
    }
    def.push_str(&format!("{sep}\nMSG: pkg/T20000\nint32 v\n"));
    bag("pkg/Deep", &def, &[7i32.to_le_bytes().to_vec()], 1)
}

#[test]
fn a_chain_of_20000_message_types_is_refused_not_a_stack_overflow() {
    let bytes = deep_chain_bag();
    // Run on a thread with a small stack, as the test harness does: a recursive walk would
    // overflow it long before 20,000 levels.
    let (ok, bad, peak) = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || decode_all(&bytes, Order::Time))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!((ok, bad), (0, 1), "no decoder for the connection");
    assert!(peak < 64 << 20, "{peak} bytes");
    let p = write_temp("deep.bag", &deep_chain_bag());
    let out = logspec(&["dump", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error[E0602]") && err.contains("more than 100 levels deep"), "{err}");
}

// The hostile inputs of issue 34 (tests/common/hostile.rs), at a scale a debug build runs in a
// few seconds, through the command as users run it. Each verb is held to the bounds that do not
// depend on the build: its peak RSS (a constant, plus twice the bytes of the definitions the
// reader must keep), its standard error (a constant: the first few faults of each kind and the
// counts), and `dump`'s standard output (its documented lines for the records the file holds).
// `cargo bench --bench hostile` runs them at full size, with the time bound, in release.

#[path = "common/hostile.rs"]
mod hostile;

/// Standard error may hold the first few faults of each kind in full and one line per kind.
const STDERR_MAX: u64 = 16 * 1024;
const RSS_MAX_KIB: u64 = 64 * 1024;

/// Runs `info`, `dump` and `export --parquet` on `path` and holds each to the bounds;
/// `dump_lines` is the most lines `dump` may print. Returns the export's folder.
fn verbs_within_bounds(path: &std::path::Path, definitions: u64, dump_lines: u64) -> PathBuf {
    let bin = env!("CARGO_BIN_EXE_logspec");
    let p = path.to_str().unwrap();
    let out = path.with_extension("parquet.d");
    let _ = std::fs::remove_dir_all(&out);
    let o = out.to_str().unwrap();
    for args in [vec!["info", p], vec!["dump", p], vec!["export", "--parquet", o, p]] {
        let r = hostile::measure(bin, &args);
        let what = format!("logspec {}: {r:?}", args.join(" "));
        assert!(r.max_rss_kib <= RSS_MAX_KIB + 2 * definitions / 1024, "peak RSS over the bound: {what}");
        assert!(r.stderr_bytes <= STDERR_MAX, "standard error over the bound: {what}");
        if args[0] == "dump" {
            assert!(r.stdout_lines <= dump_lines, "more lines than the records: {what}");
        }
        if args[0] == "info" {
            assert!(r.stdout_lines < 40, "info is a summary: {what}");
        }
    }
    out
}

#[test]
fn records_that_do_not_decode_are_counted_not_printed_each() {
    let dir = scratch::temp_dir().join(format!("logspec-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 200,000 REC_NAV_SOLUTION records of length 0 (each needs 24 bytes): every one a fault.
    let known = dir.join("known.usvlog");
    std::fs::write(&known, hostile::usvlog_empty_records(Vec::new(), 200_000, 1)).unwrap();
    verbs_within_bounds(&known, 0, 0);
    let info = logspec(&["info", known.to_str().unwrap()]);
    let text = String::from_utf8(info.stdout).unwrap();
    assert!(text.contains("integrity:   damaged: 200000 records that do not decode"), "{text}");
    let err = String::from_utf8(logspec(&["dump", known.to_str().unwrap()]).stderr).unwrap();
    assert_eq!(err.matches("needed 24 bytes, found 0").count(), 5, "{err}");
    assert!(err.contains("200000 records that do not decode in all; the first 5 are shown"), "{err}");
    // 200,000 records of an unknown type: one dump line each (the documented line of an unknown
    // record), no warning.
    let unknown = dir.join("unknown.usvlog");
    std::fs::write(&unknown, hostile::usvlog_empty_records(Vec::new(), 200_000, 200)).unwrap();
    verbs_within_bounds(&unknown, 0, 200_000);
    let json = logspec(&["info", "--json", unknown.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["unknown_records_total"], 200_000);
    assert_eq!(v["unknown_records"].as_array().unwrap().len(), 5);
    assert_eq!(v["faults"]["records of unknown type"], 200_000);
    // CARLA: 200,000 packets announcing 65,535 records in 2 bytes. `dump` prints the header,
    // and a line per packet (the FrameStart and FrameEnd of each frame too).
    let carla = dir.join("counts.log");
    std::fs::write(&carla, hostile::carla_false_counts(Vec::new(), 2_000, 100)).unwrap();
    verbs_within_bounds(&carla, 0, 1 + 2_000 * 102);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run of sync patterns in a framing with a CRC: each `A3 95` is a candidate record claiming
/// 38 KiB whose CRC fails. The run is passed over, the good record after it found, in bounded
/// memory. The time bound (a CRC over a span costs the log of its length, `runtime::sync::SpanCrc`,
/// where checking each candidate byte by byte cost the run's length times 38 KiB) is held by
/// `cargo bench --bench hostile` on 200 MB of it, in release.
#[test]
fn a_run_of_sync_patterns_is_passed_over_in_linear_time() {
    let dir = scratch::temp_dir().join(format!("logspec-syncrun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("syncrun.chk");
    std::fs::write(&path, hostile::checked_sync_run(Vec::new(), 1_000_000)).unwrap();
    let p = path.to_str().unwrap();
    for verb in ["dump", "info"] {
        let r = hostile::measure(env!("CARGO_BIN_EXE_logspec"), &[verb, "--schema", common::checked::SCHEMA, p]);
        let what = format!("logspec {verb}: {r:?}");
        let told = if verb == "dump" { &r.stderr_head } else { &r.stdout_head };
        assert!(told.contains("1000000 bytes passed over to the next good record at byte 1000008"), "{what}");
        assert!(r.max_rss_kib <= RSS_MAX_KIB, "peak RSS over the bound: {what}");
        if verb == "dump" {
            assert_eq!(r.stdout_lines, 1, "the one good record: {what}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn definitions_cost_memory_in_proportion_to_their_bytes() {
    let dir = scratch::temp_dir().join(format!("logspec-definitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 100,000 WPILOG Start records and no data: `dump` prints a line per record.
    let starts = dir.join("starts.wpilog");
    std::fs::write(&starts, hostile::wpilog_starts(Vec::new(), 100_000)).unwrap();
    let len = std::fs::metadata(&starts).unwrap().len();
    verbs_within_bounds(&starts, len, 1 + 100_000);
    // 100,000 CARLA actors, each in one Position record (28 bytes): a channel each.
    let actors = dir.join("actors.log");
    std::fs::write(&actors, hostile::carla_many_actors(Vec::new(), 10, 10_000)).unwrap();
    let len = std::fs::metadata(&actors).unwrap().len();
    verbs_within_bounds(&actors, len, 1 + 10 * 3);
    // 2,000 RLOG keys of 1 KiB names, two cycles: `dump` prints a line per value.
    let keys = dir.join("keys.rlog");
    std::fs::write(&keys, hostile::rlog_long_keys(Vec::new(), 2_000, 1024, 2)).unwrap();
    let out = verbs_within_bounds(&keys, 2_000 * 1030, 4_000);
    // Every key is a table, in a folder whose name the file system takes (shortened with a
    // hash), the name whole in the file's metadata.
    let folders: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(folders.len(), 2_000);
    for f in &folders {
        assert!(f.file_name().unwrap().len() <= 255, "{}", f.display());
    }
    let first = folders.iter().find(|f| f.file_name().unwrap().to_str().unwrap().starts_with("k00000.")).unwrap();
    let file = std::fs::File::open(first.join("log=keys/part-0.parquet")).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    let meta = reader.metadata().file_metadata().key_value_metadata().unwrap();
    let table = meta.iter().find(|kv| kv.key == "logspec.table").and_then(|kv| kv.value.clone());
    let expected = format!("/k00000/{}", "x".repeat(1024 - "/k00000/".len()));
    assert_eq!(table.as_deref(), Some(expected.as_str()));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Issue 34: decompression and time order within the chunk budget (ROS bags), and the `wpilog`
// fuzz target's malformed descriptor.
//
// `hostile_bag_*` build the bags; the tests hold the library to an allocation limit (this
// binary's counting allocator) and the command to a peak RSS (`wait4`'s `ru_maxrss` of the
// child, `hostile::measure`) and to the size of its output. `LOGSPEC_HOSTILE_DIR=DIR cargo test --test bounded
// write_hostile_bags` writes them for measuring the release binary by hand (docs/fuzzing.md).

/// The message type of the issue 34 bags: `uint8[] data` (a u32 length, then the bytes).
const BLOB: (&str, &str) = ("pkg/Blob", "uint8[] data");

/// A chunk record (op 5) of `compression` whose header declares `size` uncompressed bytes.
fn chunk_record(compression: &str, size: u32, data: &[u8]) -> Vec<u8> {
    record(&[("op", &[5]), ("compression", compression.as_bytes()), ("size", &size.to_le_bytes())], data)
}

/// The records of one message of connection 0 at `t` seconds (`nsec`), holding `len` bytes.
fn blob_message(t: u32, nsec: u32, len: usize) -> Vec<u8> {
    let mut time = t.to_le_bytes().to_vec();
    time.extend_from_slice(&nsec.to_le_bytes());
    let mut data = (len as u32).to_le_bytes().to_vec();
    data.extend(std::iter::repeat_n((t % 251) as u8, len));
    record(&[("op", &[2]), ("conn", &0u32.to_le_bytes()), ("time", &time)], &data)
}

/// One chunk of a hostile bag: its record bytes, and what its chunk info and index data say.
struct HostileChunk {
    record: Vec<u8>,
    /// (time, offset in the uncompressed chunk) of each message, in the chunk's order.
    messages: Vec<((u32, u32), u32)>,
}

/// An uncompressed chunk holding messages at `times` (seconds, nanoseconds) of `len` bytes each.
fn plain_chunk(times: &[(u32, u32)], len: usize) -> HostileChunk {
    let mut data = Vec::new();
    let mut messages = Vec::new();
    for &(s, ns) in times {
        messages.push(((s, ns), data.len() as u32));
        data.extend(blob_message(s, ns, len));
    }
    HostileChunk { record: chunk_record("none", data.len() as u32, &data), messages }
}

/// A bag of connection 0 (`pkg/Blob`) and `chunks`, in file order, each followed by its index
/// data record; with an index (connection, chunk infos) when `indexed`, else `index_pos` 0.
fn hostile_bag(chunks: &[HostileChunk], indexed: bool) -> Vec<u8> {
    let conn = connection(BLOB.0, BLOB.1);
    let mut out = b"#ROSBAG V2.0\n".to_vec();
    let header_at = out.len();
    let header_len =
        record(&[("op", &[3]), ("index_pos", &[0; 8]), ("conn_count", &[0; 4]), ("chunk_count", &[0; 4])], &[b' '; 64])
            .len();
    out.resize(header_at + header_len, 0);
    // The connection in a chunk of its own (as the scan of an unindexed bag finds it).
    let mut infos = Vec::new();
    let conn_chunk = chunk_record("none", conn.len() as u32, &conn);
    out.extend(&conn_chunk);
    for c in chunks {
        let pos = out.len() as u64;
        out.extend(&c.record);
        let mut entries = Vec::new();
        for ((s, ns), offset) in &c.messages {
            entries.extend_from_slice(&s.to_le_bytes());
            entries.extend_from_slice(&ns.to_le_bytes());
            entries.extend_from_slice(&offset.to_le_bytes());
        }
        let count = c.messages.len() as u32;
        out.extend(record(
            &[
                ("op", &[4]),
                ("ver", &1u32.to_le_bytes()),
                ("conn", &0u32.to_le_bytes()),
                ("count", &count.to_le_bytes()),
            ],
            &entries,
        ));
        let start = c.messages.iter().map(|m| m.0).min().unwrap_or((0, 0));
        let end = c.messages.iter().map(|m| m.0).max().unwrap_or((0, 0));
        infos.push((pos, start, end, count));
    }
    let index_pos = if indexed { out.len() as u64 } else { 0 };
    if indexed {
        out.extend(&conn);
        for (pos, start, end, count) in &infos {
            let t = |(s, ns): (u32, u32)| [s.to_le_bytes(), ns.to_le_bytes()].concat();
            let mut counts = 0u32.to_le_bytes().to_vec();
            counts.extend_from_slice(&count.to_le_bytes());
            out.extend(record(
                &[
                    ("op", &[6]),
                    ("ver", &1u32.to_le_bytes()),
                    ("chunk_pos", &pos.to_le_bytes()),
                    ("start_time", &t(*start)),
                    ("end_time", &t(*end)),
                    ("count", &1u32.to_le_bytes()),
                ],
                &counts,
            ));
        }
    }
    let chunk_count = if indexed { infos.len() as u32 } else { 0 };
    let header = record(
        &[
            ("op", &[3]),
            ("index_pos", &index_pos.to_le_bytes()),
            ("conn_count", &u32::from(indexed).to_le_bytes()),
            ("chunk_count", &chunk_count.to_le_bytes()),
        ],
        &[b' '; 64],
    );
    out[header_at..header_at + header_len].copy_from_slice(&header);
    out
}

/// `n` bz2 chunks each declaring `declared` bytes uncompressed, whose data inflates to
/// `inflated` zero bytes (a few hundred bytes of bz2 for a gigabyte), between a good chunk of
/// two messages (t = 1, 2) before and one after (t = 20, 21). The chunk infos say one message
/// at t = 10 in each bomb.
fn hostile_bag_bz2_bombs(n: usize, declared: u32, inflated: usize, indexed: bool) -> Vec<u8> {
    use std::io::Write;
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated >> 20 {
        enc.write_all(&zeros).unwrap();
    }
    enc.write_all(&zeros[..inflated & ((1 << 20) - 1)]).unwrap();
    let bz = enc.finish().unwrap();
    let mut chunks = vec![plain_chunk(&[(1, 0), (2, 0)], 8)];
    for _ in 0..n {
        chunks.push(HostileChunk { record: chunk_record("bz2", declared, &bz), messages: vec![((10, 0), 0)] });
    }
    chunks.push(plain_chunk(&[(20, 0), (21, 0)], 8));
    hostile_bag(&chunks, indexed)
}

/// `n` uncompressed chunks that all overlap in time: chunk `i` holds 20 messages of 96 bytes,
/// message `j` at `1 + 50 j + i % 50` seconds (and `i` nanoseconds), in time order inside the
/// chunk. 20,000 of them make the 57 MB bag of issue 34.
fn hostile_bag_overlapping(n: usize) -> Vec<u8> {
    let chunks: Vec<HostileChunk> = (0..n)
        .map(|i| {
            let times: Vec<(u32, u32)> = (0..20).map(|j| (1 + 50 * j + (i % 50) as u32, i as u32)).collect();
            plain_chunk(&times, 96)
        })
        .collect();
    hostile_bag(&chunks, true)
}

/// (seconds, nanoseconds) of every message a walk hands out, the walk's result, the peak of
/// bytes allocated, and what it could not merge.
#[allow(clippy::type_complexity)]
fn walk_hostile(
    bytes: &[u8],
    order: Order,
    budget: u64,
) -> (Vec<(u32, u32)>, Result<(), BagError>, usize, Option<logspec::formats::rosbag::Unmerged>) {
    let mut times = Vec::new();
    let mut result = Ok(());
    let mut unmerged = None;
    let peak = peak_of(|| {
        let mut bag = Bag::open_with(Cursor::new(bytes), budget).expect("opens");
        result = bag.for_each_message(order, None, |m| -> Result<(), BagError> {
            times.push((m.time.sec, m.time.nsec));
            Ok(())
        });
        unmerged = bag.unmerged.clone();
    });
    (times, result, peak, unmerged)
}

/// `logspec args` run to its end, with its peak RSS, exit code and output
/// ([`hostile::measure`]).
fn logspec_rss(args: &[&str]) -> hostile::Run {
    hostile::measure(env!("CARGO_BIN_EXE_logspec"), args)
}

/// The zero bytes each bz2 bomb of the tests inflates to: more than the 64 MiB a reader may take,
/// so that decompressing one would show in the peaks, and quick to compress.
const BOMB: usize = 96 << 20;

/// The peak RSS a command may reach on the issue 34 bags (KiB): 64 MiB, the bound, which
/// the debug build's larger binary must keep too.
const MAX_RSS_KIB: u64 = 64 << 10;

fn assert_bounded_cli(what: &str, r: &hostile::Run, exit: i32) {
    let err = &r.stderr_head;
    assert_eq!(r.code, Some(exit), "{what}: exit code; stderr: {err}");
    assert!(r.max_rss_kib <= MAX_RSS_KIB, "{what}: peak RSS {} KiB (limit {MAX_RSS_KIB} KiB)", r.max_rss_kib);
    // A few lines, however many chunks are refused or unmerged.
    assert!(r.stderr_bytes < 4096, "{what}: {} bytes of stderr: {err}", r.stderr_bytes);
}

#[test]
fn chunks_over_the_budget_are_refused_unread_and_reading_goes_on() {
    use logspec::formats::rosbag::DEFAULT_CHUNK_BUDGET;
    // Three bz2 chunks that declare 1000 MiB (over the 256 MiB budget): refused by their header
    // alone, indexed or scanned, in either order; the messages before and after are read.
    for indexed in [true, false] {
        let bytes = hostile_bag_bz2_bombs(3, 1000 << 20, BOMB, indexed);
        for order in [Order::Time, Order::File] {
            let (times, result, peak, _) = walk_hostile(&bytes, order, DEFAULT_CHUNK_BUDGET);
            assert_eq!(times, [(1, 0), (2, 0), (20, 0), (21, 0)], "indexed {indexed}, {order:?}");
            let e = result.expect_err("the refusals are the walk's error").to_string();
            for part in [
                "chunk (bz2): its header declares 1048576000 bytes uncompressed (1000.0 MiB)",
                "more than the chunk budget of 268435456 bytes (256.0 MiB); the chunk is skipped",
                "--chunk-budget MIB",
                "2 more chunk(s) refused",
            ] {
                assert!(e.contains(part), "indexed {indexed}, {order:?}: {part:?} in {e}");
            }
            assert!(peak < 4 << 20, "indexed {indexed}, {order:?}: {peak} bytes");
        }
    }
    // A chunk that declares 4 KiB but inflates to 96 MiB: refused one byte past what it declares.
    let bytes = hostile_bag_bz2_bombs(1, 4096, BOMB, true);
    let (times, result, peak, _) = walk_hostile(&bytes, Order::Time, DEFAULT_CHUNK_BUDGET);
    assert_eq!(times.len(), 4);
    let e = result.expect_err("refused").to_string();
    assert!(e.contains("its data inflates past the 4096 bytes its header declares; the chunk is skipped"), "{e}");
    assert!(peak < 4 << 20, "{peak} bytes");
    // The budget is the option: under 96 MiB the honest bomb is refused, above it read (its
    // zeros are no records: a bad record, after the messages before it).
    let honest = hostile_bag_bz2_bombs(1, BOMB as u32, BOMB, true);
    let (_, result, peak, _) = walk_hostile(&honest, Order::File, 64 << 20);
    assert!(result.expect_err("refused").to_string().contains("chunk budget of 67108864 bytes"));
    assert!(peak < 4 << 20, "{peak} bytes");
    let (times, result, _, _) = walk_hostile(&honest, Order::File, 128 << 20);
    assert_eq!(times, [(1, 0), (2, 0)]);
    assert!(result.expect_err("zeros are no records").to_string().contains("in the chunk"));

    // The command: four 1000 MiB chunks, every verb within 64 MiB and a few lines of stderr.
    for indexed in [true, false] {
        let bytes = hostile_bag_bz2_bombs(4, 1000 << 20, BOMB, indexed);
        let p = write_temp(&format!("bombs_{indexed}.bag"), &bytes);
        let p = p.to_str().unwrap();
        let info = logspec_rss(&["info", p]);
        assert_bounded_cli("info", &info, 1);
        let text = info.stdout_head.clone();
        if indexed {
            assert!(text.contains("4 chunk(s) declare more than the chunk budget of 256.0 MiB"), "{text}");
        } else {
            assert!(text.contains("4 chunk(s) refused by the scan"), "{text}");
        }
        let dump = logspec_rss(&["dump", p]);
        assert_bounded_cli("dump", &dump, 1);
        // The connection and the four messages of the good chunks.
        assert_eq!(dump.stdout_lines, 5);
        let err = dump.stderr_head.clone();
        assert!(err.contains("3 more chunk(s) refused"), "{err}");
        // Refused chunks take no room in a merge: nothing to say of their overlap.
        assert!(!err.contains("overlap"), "{err}");
        let out = scratch::temp_dir().join(format!("logspec-bounded-{}/bombs_{indexed}", std::process::id()));
        let export = logspec_rss(&["export", p, "--parquet", out.to_str().unwrap()]);
        assert_bounded_cli("export --parquet", &export, 1);
        // Raised to what they declare, the budget lets the command try them one at a time (and
        // find fewer bytes than declared).
        let dump = logspec_rss(&["dump", p, "--chunk-budget", "1000"]);
        // One 96 MiB bomb in memory at a time, not the pipeline's window of them.
        assert!(dump.max_rss_kib < 180 << 10, "{} KiB", dump.max_rss_kib);
        assert!(dump.stderr_head.clone().contains("decompressed to 100663296 bytes, the chunk header says 1048576000"));
    }
}

#[test]
fn chunks_that_overlap_past_the_merge_window_are_read_chunk_by_chunk() {
    use logspec::formats::rosbag::DEFAULT_CHUNK_BUDGET;
    let bytes = hostile_bag_overlapping(20_000);
    assert!(bytes.len() > 55_000_000, "{} bytes", bytes.len());
    // The default budget's window (32 MiB) is less than the 57 MB of chunks: chunk by chunk,
    // each chunk's 20 messages in time order, the chunks by start time, and it says so.
    let (times, result, peak, unmerged) = walk_hostile(&bytes, Order::Time, DEFAULT_CHUNK_BUDGET);
    result.expect("reads");
    assert_eq!(times.len(), 400_000);
    let u = unmerged.expect("not merged");
    assert_eq!((u.runs, u.chunks, u.first_chunks, u.window), (1, 20_000, 20_000, 32 << 20));
    let mut starts = Vec::new();
    for c in times.chunks(20) {
        // One chunk (its index in the nanoseconds), in time order.
        assert!(c.iter().all(|t| t.1 == c[0].1) && c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
        starts.push(c[0]);
    }
    assert!(starts.windows(2).all(|w| w[0].0 <= w[1].0), "chunks by start time");
    // The chunk index (a chunk info per chunk, twice) and the messages' times; no chunk data.
    assert!(peak < 16 << 20, "{peak} bytes");
    // A budget whose window holds them merges them: every message in time order.
    let (times, result, _, unmerged) = walk_hostile(&bytes, Order::Time, 1 << 30);
    result.expect("reads");
    assert!(unmerged.is_none());
    assert_eq!(times.len(), 400_000);
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "merged in time order");

    let p = write_temp("overlapping.bag", &bytes);
    let p = p.to_str().unwrap();
    let dump = logspec_rss(&["dump", p]);
    assert_bounded_cli("dump", &dump, 0);
    // The connection line and one line per message.
    assert_eq!(dump.stdout_lines, 400_001);
    assert!(dump.stderr_head.clone().contains("20000 chunk(s) in 1 run(s) overlap in time"));
    // Exit 1: the connection's md5sum is `*` (a mismatch); the bag itself is whole.
    let info = logspec_rss(&["info", p]);
    assert_bounded_cli("info", &info, 1);
    assert!(!info.stdout_head.clone().contains("integrity:"));
    // The Parquet writer closes a row group by its Arrow data too (its pages' buffers are sized
    // for the worst case: 159 MB for this `uint8[]` column before).
    let out = scratch::temp_dir().join(format!("logspec-bounded-{}/overlapping", std::process::id()));
    let export = logspec_rss(&["export", p, "--parquet", out.to_str().unwrap()]);
    assert_bounded_cli("export --parquet", &export, 0);
}

/// A `proto:FileDescriptorProto` whose `syntax` is neither proto2 nor proto3 made prost-reflect
/// 0.16.5 panic (found by the `wpilog` fuzz target; its input is in `fuzz/corpus/wpilog/`, which
/// the replay above reads): it is an error that names the file and the syntax, and nothing
/// catches a panic any more.
#[test]
fn a_descriptor_of_an_unknown_syntax_is_an_error_not_a_panic() {
    use logspec::formats::wpistruct::TypeRegistry;
    // FileDescriptorProto { name (1): "x.proto", syntax (12): "prOto3" }, by hand.
    let mut descriptor = vec![0x0a, 7];
    descriptor.extend_from_slice(b"x.proto");
    descriptor.extend_from_slice(&[0x62, 6]);
    descriptor.extend_from_slice(b"prOto3");
    let mut schemas = TypeRegistry::new();
    assert!(schemas.offer("/.schema/proto:x.proto", "proto:FileDescriptorProto", &descriptor));
    assert_eq!(
        schemas.take_warnings(),
        ["/.schema/proto:x.proto: protobuf file `x.proto` is not valid: unknown syntax \"prOto3\" (expected \"proto2\" or \"proto3\")"]
    );
    // The fuzz input, through the command: warned, no panic.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus/wpilog/prost_reflect_panic_malformed_descriptor.wpilog");
    let out = logspec(&["dump", input.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("protobuf file `geometry2d.proto` is not valid: unknown syntax \"prOto3\""), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// A bag walked forward through its map holds the map's window, not the file: each chunk's
/// index data (right after the chunk) is checked as the walk reaches the chunk. Checked all
/// before the walk, they mapped pages all over the file (on a kernel whose page cache holds large
/// folios, a whole folio at a touch: `dump` of a 100 MB bag peaked at 60 MB against 29 MB), and
/// the map's window drops pages only once the walk has passed them.
#[test]
fn a_large_bag_is_dumped_with_the_maps_window_in_memory() {
    // 192 chunks of 16 messages of 64 KiB (192 MiB), in time order, indexed.
    let chunks: Vec<HostileChunk> =
        (0..192u32).map(|i| plain_chunk(&(0..16).map(|j| (1 + 16 * i + j, 0)).collect::<Vec<_>>(), 64 << 10)).collect();
    let bytes = hostile_bag(&chunks, true);
    assert!(bytes.len() > 192 << 20, "{} bytes", bytes.len());
    let p = write_temp("large.bag", &bytes);
    drop(bytes);
    let dump = logspec_rss(&["dump", p.to_str().unwrap()]);
    assert_bounded_cli("dump", &dump, 0);
    // The connection line and one line per message.
    assert_eq!(dump.stdout_lines, 1 + 192 * 16);
    let _ = std::fs::remove_file(&p);
}
