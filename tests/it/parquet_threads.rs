//! `export --parquet` reads a log on one thread and writes its tables on others (issue 35): a
//! table that cannot be written while the log is read stops the export with that table's error,
//! leaves no file of it and no temporary file, and every other table keeps the rows read before
//! the stop, the first rows of the whole export, in order; and the files are the same bytes
//! however many threads write them.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::common::logspec;
use crate::scratch;
use crate::usvlog_tables::big;

/// The `log_elapsed_ns` column of a table's file.
fn elapsed(file: &Path) -> Vec<i64> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap()).unwrap().build().unwrap();
    let mut v = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        v.extend(batch.column_by_name("log_elapsed_ns").unwrap().as_primitive::<Int64Type>().values().iter());
    }
    v
}

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_table_that_cannot_be_written_stops_the_export_and_the_others_keep_their_first_rows() {
    let dir = scratch::temp_dir().join(format!("logspec-parquet-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 60 copies of the sample: 24,060 rows of REC_NAV_SOLUTION, whose first batch (8,192 rows)
    // is handed to the writing thread long before the log ends.
    let log: PathBuf = dir.join("run.usvlog");
    std::fs::write(&log, big(60, false)).unwrap();
    let whole = dir.join("whole");
    let out = logspec(&["-q", "export", "--parquet", whole.to_str().unwrap(), log.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // The table's folder is taken by a file: its partition cannot be created.
    let blocked = dir.join("blocked");
    std::fs::create_dir_all(&blocked).unwrap();
    std::fs::write(blocked.join("REC_NAV_SOLUTION"), b"not a folder").unwrap();
    let out = logspec(&["-q", "export", "--parquet", blocked.to_str().unwrap(), log.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let folder = blocked.join("REC_NAV_SOLUTION").join("log=run");
    let cannot = format!("{}: cannot create", folder.display());
    // Once while the log was read (the reading stopped there), once when the table was closed.
    assert_eq!(stderr.matches(&cannot).count(), 2, "{stderr}");
    assert!(stderr.contains("; then "), "{stderr}");

    let written = files(&blocked);
    assert!(written.iter().all(|f| f == "REC_NAV_SOLUTION" || f.ends_with("/log=run/part-0.parquet")), "{written:?}");
    let all = files(&whole);
    assert_eq!(written.len(), all.len(), "every other table is written: {written:?}");
    let mut fewer = 0;
    for f in written.iter().filter(|f| f.ends_with(".parquet")) {
        let (got, expected) = (elapsed(&blocked.join(f)), elapsed(&whole.join(f)));
        assert!(!got.is_empty() && got.len() <= expected.len(), "{f}: {} rows of {}", got.len(), expected.len());
        assert_eq!(got[..], expected[..got.len()], "{f}: the first rows of the log");
        fewer += usize::from(got.len() < expected.len());
    }
    assert!(fewer > 0, "the export stopped before the end of the log");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file of `dir`, with its bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
}

#[test]
fn the_files_are_the_same_bytes_on_one_writing_thread_and_on_several() {
    let dir = scratch::temp_dir().join(format!("logspec-parquet-writers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 200 copies of the sample (34 MB): tables past 2 MiB of Arrow data close row groups (five
    // or more have more than one, asserted below).
    let log: PathBuf = dir.join("run.usvlog");
    std::fs::write(&log, big(200, false)).unwrap();
    let export = |threads: &str| {
        let out = dir.join(format!("threads{threads}"));
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_logspec"))
            .env("LOGSPEC_THREADS", threads)
            .args(["-q", "export", "--parquet", out.to_str().unwrap(), log.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(run.status.success(), "LOGSPEC_THREADS={threads}: {}", String::from_utf8_lossy(&run.stderr));
        contents(&out)
    };
    let one = export("1");
    let groups: Vec<usize> = one
        .iter()
        .map(|(f, _)| {
            let file = std::fs::File::open(dir.join("threads1").join(f)).unwrap();
            ParquetRecordBatchReaderBuilder::try_new(file).unwrap().metadata().num_row_groups()
        })
        .collect();
    assert!(groups.iter().filter(|n| **n > 1).count() >= 5, "row groups per table: {groups:?}");
    for threads in ["2", "3"] {
        let several = export(threads);
        assert_eq!(
            several.iter().map(|f| &f.0).collect::<Vec<_>>(),
            one.iter().map(|f| &f.0).collect::<Vec<_>>(),
            "LOGSPEC_THREADS={threads}: files"
        );
        for ((f, got), (_, want)) in several.iter().zip(&one) {
            assert!(got == want, "LOGSPEC_THREADS={threads}: {f} differs from the one-thread export");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
