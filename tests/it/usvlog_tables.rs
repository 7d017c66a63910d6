//! The in-memory tables of a USVLOG file by the two passes (`tables::read_usvlog`, the Python
//! package's `tables()`/`table()`/`numpy()`) against the sample source's path it replaces (the
//! `Tables` sink, which `export --parquet` shares): the same tables in the same order, schemas
//! with their metadata, values, warnings and errors, on one to four threads, for the bundled
//! sample, a larger file with unknown records, cut files, and the channel and time filters; the
//! cases the fast path declines (a filter that matches nothing, a record that does not decode,
//! a bad header) are left to the sample source; and a file that changes between the passes
//! gives an error and only rows of the file as it was, never rows of another layout.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use logspec::formats::usvlog::{FileHeader, Usvlog, FW_MODEL_SCHEMA};
use logspec::log::Select;
use logspec::log::{detect, Error};
use logspec::runtime::{SliceReader, Writer};
use logspec_engine::tables::{read_usvlog, Tables};

use crate::scratch;

/// What a read gives: tables `(name, schema, batches)`, warnings, and the error as text.
type Read = (Vec<(String, SchemaRef, Vec<RecordBatch>)>, Vec<String>, Option<String>);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sample() -> Vec<u8> {
    std::fs::read(root().join("tests/data/usvlog/step.usvlog")).unwrap()
}

/// The error as the Python package raises it: the message and, for a located one, its place.
fn shown(e: Error) -> String {
    match e {
        Error::At(f) => format!("{f:?}"),
        other => other.to_string(),
    }
}

/// The sample source's tables, as `tables()` builds them on that path.
fn generic(path: &Path, select: &Select) -> Read {
    let f = std::fs::File::open(path).unwrap();
    let d = detect(path, Box::new(f), &Default::default()).unwrap();
    let mut sink = Tables::new(false);
    let outcome = d.scan(select, &mut sink);
    let (tables, mut warnings) = sink.finish().unwrap();
    let (error, more) = match outcome {
        Ok(o) => (o.fault.map(Error::from).or(o.error.map(Error::Input)), o.warnings),
        Err(e) => (Some(e), Vec::new()),
    };
    warnings.splice(0..0, more);
    (tables.into_iter().map(|t| (t.name, t.builder.schema, t.batches)).collect(), warnings, error.map(shown))
}

/// The two passes' tables on `parts` threads; `None` when the path declines the file.
fn fast(path: &Path, select: &Select, parts: Option<usize>, hook: Option<&dyn Fn()>) -> Option<Read> {
    let r = read_usvlog(path, &path.display().to_string(), select, parts, hook).unwrap()?;
    let tables = r.tables.into_iter().map(|t| (t.name, t.builder.schema, t.batches)).collect();
    Some((tables, r.warnings, r.error.map(shown)))
}

fn assert_same(path: &Path, select: &Select, what: &str) {
    let want = generic(path, select);
    assert!(!want.0.is_empty() || want.2.is_some(), "{what}: the reference read nothing");
    for parts in [None, Some(1), Some(2), Some(3), Some(4)] {
        let got = fast(path, select, parts, None).unwrap_or_else(|| panic!("{what}: the fast path declined"));
        assert_eq!(got.0.len(), want.0.len(), "{what} ({parts:?} parts): tables");
        for (g, w) in got.0.iter().zip(&want.0) {
            assert_eq!(g.0, w.0, "{what}: table order");
            assert_eq!(g.1, w.1, "{what}: {}: schema and metadata", w.0);
            assert_eq!(g.2.len(), 1, "{what}: {}: one batch", w.0);
            assert_eq!(g.2, w.2, "{what} ({parts:?} parts): {}: values", w.0);
        }
        assert_eq!(got.1, want.1, "{what}: warnings");
        assert_eq!(got.2, want.2, "{what}: error");
    }
}

/// A file of the sample's records `copies` times over (an unknown record of type 200 after
/// every copy when `unknown`), with the timestamps of each copy after the last.
pub(crate) fn big(copies: u64, unknown: bool) -> Vec<u8> {
    let bytes = sample();
    let header = FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 5 };
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    for k in 0..copies {
        let (_, r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
        for raw in r {
            let raw = raw.unwrap();
            let t = raw.header.timestamp.unwrap() + k * 20_000_001;
            w.write_raw(raw.header.tag, t, raw.payload).unwrap();
        }
        if unknown {
            w.write_raw(200, k, &[1, 2, 3]).unwrap();
        }
    }
    w.finish().unwrap()
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch::temp_dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn the_sample_and_a_larger_file_equal_the_sample_source() {
    let step = root().join("tests/data/usvlog/step.usvlog");
    assert_same(&step, &Select::default(), "step.usvlog");
    let path = write("big.usvlog", &big(40, true));
    assert_same(&path, &Select::default(), "40 copies with unknown records");
    let (_, warnings, _) = generic(&path, &Select::default());
    // The first 5 unknown records in full, then their count.
    assert_eq!(warnings.len(), 6, "{warnings:?}");
    assert!(warnings[5].ends_with("40 records of unknown type in all; the first 5 are shown"), "{warnings:?}");
}

#[test]
fn cut_files_give_every_complete_record_then_the_same_error() {
    let bytes = big(12, true);
    let len = bytes.len();
    // Inside the header of a record, inside a payload, at a record boundary (clean), and the
    // last byte of the file gone.
    for cut in [len / 3, len / 3 + 5, len / 2 + 13, len * 2 / 3 + 7, len - 1] {
        let path = write(&format!("cut_{cut}.usvlog"), &bytes[..cut]);
        assert_same(&path, &Select::default(), &format!("cut at {cut}"));
    }
    // A file cut inside its header: the sample source's error (the fast path declines).
    let path = write("header_cut.usvlog", &bytes[..20]);
    let _ = std::fs::File::open(&path);
    assert!(fast(&path, &Select::default(), Some(2), None).is_none());
}

#[test]
fn channel_and_time_filters_equal_the_sample_source() {
    let path = write("filters.usvlog", &big(20, true));
    let cases = [
        Select { channels: vec!["REC_NAV_SOLUTION".into()], ..Default::default() },
        Select { channels: vec!["REC_SENSOR*".into(), "REC_EKF_DIAG".into()], ..Default::default() },
        Select { since: Some(15.5), ..Default::default() },
        Select { until: Some(100.0), ..Default::default() },
        Select { since: Some(33.3), until: Some(250.25), ..Default::default() },
        Select { channels: vec!["REC_YAW*".into()], tables: false, since: Some(0.5), until: Some(41.0) },
    ];
    for select in cases {
        assert_same(&path, &select, &format!("{select:?}"));
    }
    // Filters that match nothing are the sample source's errors (with the channel list): the
    // fast path leaves them to it.
    for select in [
        Select { channels: vec!["REC_NAV_SOLUTON".into()], ..Default::default() },
        Select { channels: vec!["REC_NAV_SOLUTION".into(), "NOPE".into()], ..Default::default() },
        Select { since: Some(1e6), ..Default::default() },
    ] {
        assert!(generic(&path, &select).2.is_some(), "{select:?}: the sample source's error");
        assert!(fast(&path, &select, Some(2), None).is_none(), "{select:?}: declined");
    }
}

#[test]
fn a_record_that_does_not_decode_is_left_to_the_sample_source() {
    let mut bytes = big(3, false);
    let header = FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 5 };
    let mut w = Writer::<_, Usvlog>::new(Vec::new(), &header).unwrap();
    // REC_NAV_SOLUTION is 24 bytes: 3 bytes does not decode (the source warns and skips it).
    w.write_raw(1, 7, &[0, 0, 0]).unwrap();
    bytes.extend_from_slice(&w.finish().unwrap()[32..]);
    bytes.extend_from_slice(&big(1, false)[32..]);
    let path = write("misfit.usvlog", &bytes);
    assert!(fast(&path, &Select::default(), Some(2), None).is_none());
    assert!(generic(&path, &Select::default()).1.iter().any(|w| w.contains("skipped")));
}

#[cfg(unix)]
#[test]
fn a_file_that_changes_between_the_passes_gives_an_error_and_no_rows_of_another_file() {
    let bytes = big(20, false);
    let whole = generic(&write("whole.usvlog", &bytes), &Select::default());
    // Cut to half after pass 1 counted the whole file.
    for parts in [1, 2, 3] {
        let path = write(&format!("shrinks_{parts}.usvlog"), &bytes);
        let cut =
            || std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(bytes.len() as u64 / 2).unwrap();
        let (tables, _, error) = fast(&path, &Select::default(), Some(parts), Some(&cut)).unwrap();
        let error = error.expect("an error");
        assert!(error.contains("the file changed while it was read"), "{error}");
        // Every row given is the file's: a prefix of each table of the whole file.
        for (name, _, batches) in &tables {
            let w = &whole.0.iter().find(|t| &t.0 == name).unwrap().2[0];
            let g = &batches[0];
            assert!(g.num_rows() < w.num_rows(), "{name}: fewer rows");
            assert_eq!(g, &w.slice(0, g.num_rows()), "{name}: the rows before the change");
        }
    }
    // A record's type changed in place (REC_NAV_SOLUTION's 24 bytes now said to be a
    // REC_GUIDANCE_REF, of 16): an error, not a row read with another layout.
    let path = write("retyped.usvlog", &bytes);
    let at = bytes.len() as u64 * 3 / 4;
    let (_, r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    let victim = r.map(Result::unwrap).find(|raw| raw.offset >= at && raw.header.tag == 1).unwrap().offset;
    let retype = || {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&2u16.to_le_bytes(), victim + 8).unwrap();
    };
    let (_, _, error) = fast(&path, &Select::default(), Some(2), Some(&retype)).unwrap();
    assert!(error.expect("an error").contains("the file changed while it was read"));
}
