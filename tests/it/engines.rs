//! The engines' scan (`logspec_engine::stream`: one table of one log, streamed) held to the
//! generic path of `tests/it/fast_paths.rs` (every sample as a value tree into the `Tables`
//! sink) on every bundled log: each table's rows alike, with the `log` column; a time window
//! keeps exactly the rows whose `log_elapsed_ns` the window holds; a projection keeps the
//! columns asked for; a log without the table gives no rows and no fault.

use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use logspec::log::{Open, Select};
use logspec_engine::logs::{partition, LogFile};
use logspec_engine::stream::{self, Query, LOG_COLUMN};

use crate::fast_paths::{arrow_select_concat, bundled, generic};

fn scan(file: &LogFile, query: &Query) -> (Vec<RecordBatch>, stream::Scanned) {
    let mut batches = Vec::new();
    let done = stream::scan(file, &Open::default(), query, None, &mut |b| {
        batches.push(b);
        Ok(())
    })
    .unwrap();
    (batches, done)
}

/// The batches without their `log` column (checked to be the log's name), as one.
fn without_log(batches: &[RecordBatch], log: &str) -> Option<RecordBatch> {
    if batches.is_empty() {
        return None;
    }
    let parts: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let i = b.schema().index_of(LOG_COLUMN).unwrap();
            let names = b.column(i).as_any().downcast_ref::<StringArray>().unwrap();
            assert!(names.iter().all(|n| n == Some(log)), "the log column names the log");
            let mut b = b.clone();
            b.remove_column(i);
            b
        })
        .collect();
    Some(arrow_select_concat(&parts[0].schema(), &parts))
}

#[test]
fn every_table_of_every_bundled_log_streams_as_the_generic_path_reads_it() {
    let mut tables = 0;
    for path in bundled() {
        let Ok((want, _, error)) = generic(&path, &Select::default()) else { continue };
        let file = LogFile { file: path.clone(), log: partition(&path) };
        for (name, schema, rows) in &want {
            let query = Query { table: name.clone(), ..Query::default() };
            let (batches, done) = scan(&file, &query);
            let got = without_log(&batches, &file.log);
            let got_rows = got.as_ref().map_or(0, RecordBatch::num_rows);
            assert_eq!(got_rows as u64, done.rows, "{}: {name}: rows counted", path.display());
            match (&got, rows) {
                (Some(g), Some(w)) => {
                    assert_eq!(g.schema().fields(), schema.fields(), "{}: {name}: columns", path.display());
                    assert_eq!(g.columns(), w.columns(), "{}: {name}: rows", path.display());
                }
                (None, None) => {}
                (g, w) => panic!(
                    "{}: {name}: {} rows streamed, {} read",
                    path.display(),
                    g.as_ref().map_or(0, |b| b.num_rows()),
                    w.as_ref().map_or(0, |b| b.num_rows())
                ),
            }
            // A log that fails part-way fails the same way for one table.
            assert_eq!(done.fault.is_some(), error.is_some(), "{}: {name}: the fault", path.display());
            tables += 1;
        }
    }
    assert!(tables > 100, "{tables} tables");
}

#[test]
fn a_time_window_keeps_the_rows_whose_elapsed_time_it_holds() {
    let mut checked = 0;
    for path in bundled() {
        let Ok((want, _, _)) = generic(&path, &Select::default()) else { continue };
        let file = LogFile { file: path.clone(), log: partition(&path) };
        // The largest table, its middle third.
        let Some((name, _, Some(rows))) = want.iter().max_by_key(|t| t.2.as_ref().map_or(0, |r| r.num_rows())) else {
            continue;
        };
        let elapsed = rows.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let (lo, hi) = (elapsed.iter().flatten().min().unwrap(), elapsed.iter().flatten().max().unwrap());
        let (since, until) = ((lo + (hi - lo) / 3) as f64 / 1e9, (lo + 2 * (hi - lo) / 3) as f64 / 1e9);
        let keep: BooleanArray =
            elapsed.iter().map(|e| e.map(|e| e as f64 / 1e9 >= since && e as f64 / 1e9 <= until)).collect();
        let expected = arrow_select_filter(rows, &keep);
        let query = Query { table: name.clone(), since: Some(since), until: Some(until), ..Query::default() };
        let (batches, _) = scan(&file, &query);
        let got = without_log(&batches, &file.log);
        match got {
            Some(g) => assert_eq!(g.columns(), expected.columns(), "{}: {name}", path.display()),
            None => assert_eq!(expected.num_rows(), 0, "{}: {name}", path.display()),
        }
        checked += 1;
    }
    assert!(checked > 20);
}

/// The rows of `b` where `keep` is true.
fn arrow_select_filter(b: &RecordBatch, keep: &BooleanArray) -> RecordBatch {
    let idx: Vec<usize> = (0..keep.len()).filter(|&i| keep.value(i)).collect();
    let parts: Vec<RecordBatch> = idx.iter().map(|&i| b.slice(i, 1)).collect();
    if parts.is_empty() {
        return b.slice(0, 0);
    }
    arrow_select_concat(&b.schema(), &parts)
}

#[test]
fn a_projection_keeps_the_columns_asked_for_and_another_table_gives_nothing() {
    let path = crate::common::data("usvlog/step.usvlog");
    let file = LogFile { file: path.clone(), log: partition(&path) };
    let query =
        Query { table: "REC_NAV_SOLUTION".into(), columns: Some(vec!["x".into(), "log".into()]), ..Query::default() };
    let (batches, done) = scan(&file, &query);
    assert!(done.fault.is_none());
    let names: Vec<String> = batches[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["x", "log"]);
    let full = stream::schema(&path, &Open::default(), "REC_NAV_SOLUTION").unwrap().unwrap();
    assert_eq!(full.fields().last().unwrap().name(), LOG_COLUMN);
    assert_eq!(stream::schema(&path, &Open::default(), "/no/such").unwrap(), None);
    let (batches, done) = scan(&file, &Query { table: "/no/such".into(), ..Query::default() });
    assert!(batches.is_empty() && done.fault.is_none() && done.rows == 0);
    // The full schema given: the columns asked for, in its order.
    let mut got = Vec::new();
    stream::scan(&file, &Open::default(), &query, Some(&Arc::clone(&full)), &mut |b| {
        got.push(b);
        Ok(())
    })
    .unwrap();
    assert_eq!(got[0].schema().fields().len(), 2);
    assert_eq!(got.iter().map(|b| b.column(0).len()).sum::<usize>(), batches_rows(&path));
}

fn batches_rows(path: &std::path::Path) -> usize {
    let (want, _, _) = generic(path, &Select::default()).unwrap();
    want.iter().find(|t| t.0 == "REC_NAV_SOLUTION").unwrap().2.as_ref().unwrap().num_rows()
}
