//! The encoding half of `export --parquet`: a table's Parquet file written as parquet's
//! `ArrowWriter` writes it (the same calls in the same order, so the same bytes), with the columns
//! of each batch encoded, and each row group's columns closed, by a small pool of threads
//! ([`Pool`]). parquet's own column API ([`ArrowRowGroupWriterFactory`], [`compute_leaves`]) encodes each
//! column on its own; the file is written in column order as before.

use std::collections::VecDeque;
use std::fs::File;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{FieldRef, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// A table's Parquet file: what `ArrowWriter::try_new(file, schema, Some(props))` writes, given
/// the same batches and row group closes.
pub(super) struct FileWriter {
    file: SerializedFileWriter<File>,
    schema: SchemaRef,
    /// The Parquet leaf columns of each field of the schema, in order (a struct or list field
    /// has as many as its leaves; a number one).
    leaves: Vec<usize>,
    max_rows: usize,
    /// The columns of the open row group, and its rows.
    group: Option<(Vec<ArrowColumnWriter>, usize)>,
}

impl FileWriter {
    pub(super) fn try_new(file: File, schema: SchemaRef, mut props: WriterProperties) -> Result<Self> {
        let parquet = ArrowSchemaConverter::new().with_coerce_types(props.coerce_types()).convert(&schema)?;
        add_encoded_arrow_schema_to_metadata(&schema, &mut props);
        let max_rows = props.max_row_group_row_count().unwrap_or(usize::MAX);
        let leaves = parquet.root_schema().get_fields().iter().map(|f| leaf_count(f)).collect();
        let file = SerializedFileWriter::new(file, parquet.root_schema_ptr(), Arc::new(props))?;
        Ok(FileWriter { file, schema, leaves, max_rows, group: None })
    }

    /// The anticipated encoded size of the open row group (`ArrowWriter::in_progress_size`).
    pub(super) fn in_progress_size(&self) -> usize {
        self.group.as_ref().map_or(0, |(w, _)| w.iter().map(ArrowColumnWriter::get_estimated_total_bytes).sum())
    }

    /// Encodes a batch into the open row group; a row group that reaches the writer's row limit
    /// is closed, the batch split across it (as `ArrowWriter::write`).
    pub(super) fn write(&mut self, batch: &RecordBatch, pool: &Pool) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.group.is_none() {
            let factory = ArrowRowGroupWriterFactory::new(&self.file, Arc::clone(&self.schema));
            let writers = factory.create_column_writers(self.file.flushed_row_groups().len())?;
            self.group = Some((writers, 0));
        }
        let (writers, rows) = self.group.as_mut().expect("opened above");
        if *rows + batch.num_rows() > self.max_rows {
            let first = self.max_rows - *rows;
            self.write(&batch.slice(0, first), pool)?;
            return self.write(&batch.slice(first, batch.num_rows() - first), pool);
        }
        *rows += batch.num_rows();
        // A job per field: its leaves computed (levels of lists and structs) and each written
        // into its column's writer, on whichever thread takes it.
        let mut all = std::mem::take(writers).into_iter();
        let jobs = self
            .schema
            .fields()
            .iter()
            .zip(batch.columns())
            .zip(&self.leaves)
            .map(|((field, column), n)| {
                Job::Write(all.by_ref().take(*n).collect(), Arc::clone(field), Arc::clone(column))
            })
            .collect();
        let mut first_err = None;
        for done in pool.run(jobs) {
            if let Done::Written(w, r) = done {
                writers.extend(w);
                if let Err(e) = r {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        if *rows >= self.max_rows {
            self.flush(pool)?;
        }
        Ok(())
    }

    /// Closes the open row group: its columns' last pages encoded, their chunks written in
    /// column order (`ArrowWriter::flush`).
    pub(super) fn flush(&mut self, pool: &Pool) -> Result<()> {
        let Some((writers, _)) = self.group.take() else { return Ok(()) };
        let mut group = self.file.next_row_group()?;
        let mut chunks = Vec::with_capacity(writers.len());
        for done in pool.run(writers.into_iter().map(Job::Close).collect()) {
            if let Done::Closed(chunk) = done {
                chunks.push(chunk?);
            }
        }
        for chunk in chunks {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        Ok(())
    }

    /// Closes the open row group and writes the footer (`ArrowWriter::close`).
    pub(super) fn close(mut self, pool: &Pool) -> Result<()> {
        self.flush(pool)?;
        self.file.close()?;
        Ok(())
    }
}

/// A column's work.
// A closing writer moves once per row group: cheaper than a box for each.
#[allow(clippy::large_enum_variant)]
enum Job {
    /// A field's column of a batch, into the writers of its leaves.
    Write(Vec<ArrowColumnWriter>, FieldRef, ArrayRef),
    Close(ArrowColumnWriter),
}

/// A column's work done.
// A column writer moves by value once per batch and back: cheaper than a box for each.
#[allow(clippy::large_enum_variant)]
enum Done {
    Written(Vec<ArrowColumnWriter>, Result<()>),
    Closed(Result<ArrowColumnChunk>),
    /// A helper's job panicked: the panic goes on in the thread that asked for it.
    Panicked(Box<dyn std::any::Any + Send>),
}

impl Job {
    fn run(self) -> Done {
        match self {
            Job::Write(mut writers, field, column) => {
                let r = compute_leaves(&field, &column)
                    .and_then(|leaves| writers.iter_mut().zip(leaves).try_for_each(|(w, leaf)| w.write(&leaf)));
                Done::Written(writers, r)
            }
            Job::Close(w) => Done::Closed(w.close()),
        }
    }
}

/// The Parquet leaf columns under a schema node.
fn leaf_count(t: &Type) -> usize {
    if t.is_primitive() {
        1
    } else {
        t.get_fields().iter().map(|f| leaf_count(f)).sum()
    }
}

/// The jobs waiting for a thread, each with its place in its batch.
struct Queue {
    jobs: VecDeque<(usize, Job)>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The threads that encode a log's columns: the thread that writes the files, and `helpers`
/// more that take the columns of a batch with it ([`Pool::run`]). Without helpers the columns
/// are encoded one after another on the writing thread.
pub(super) struct Pool {
    shared: Arc<Shared>,
    done: Receiver<(usize, Done)>,
    helpers: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    pub(super) fn new(helpers: usize) -> Pool {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue { jobs: VecDeque::new(), closed: false }),
            ready: Condvar::new(),
        });
        let (done_tx, done) = channel();
        let helpers = (0..helpers)
            .map(|_| {
                let (shared, done_tx) = (shared.clone(), done_tx.clone());
                std::thread::spawn(move || help(&shared, &done_tx))
            })
            .collect();
        Pool { shared, done, helpers }
    }

    /// Runs the jobs, on this thread and the helpers; their results in the jobs' order.
    fn run(&self, jobs: Vec<Job>) -> Vec<Done> {
        let n = jobs.len();
        if self.helpers.is_empty() || n < 2 {
            return jobs.into_iter().map(Job::run).collect();
        }
        self.shared.lock().jobs.extend(jobs.into_iter().enumerate());
        self.shared.ready.notify_all();
        let mut done: Vec<Option<Done>> = (0..n).map(|_| None).collect();
        let mut got = 0;
        loop {
            let job = self.shared.lock().jobs.pop_front();
            let Some((i, job)) = job else { break };
            done[i] = Some(job.run());
            got += 1;
        }
        while got < n {
            // Helpers stop only when the pool is dropped, and send every job's result (a panic's too).
            let Ok((i, d)) = self.done.recv() else { break };
            if let Done::Panicked(p) = d {
                std::panic::resume_unwind(p);
            }
            done[i] = Some(d);
            got += 1;
        }
        assert_eq!(got, n, "a Parquet encoding thread stopped");
        done.into_iter().flatten().collect()
    }
}

/// A helper's loop: the next job, until the pool is dropped.
fn help(shared: &Shared, done: &Sender<(usize, Done)>) {
    loop {
        let job = {
            let mut q = shared.lock();
            loop {
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                if q.closed {
                    return;
                }
                q = shared.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let (i, job) = job;
        let d = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run())).unwrap_or_else(Done::Panicked);
        if done.send((i, d)).is_err() {
            return;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Float64Builder, ListBuilder, StringBuilder, UInt16Builder};
    use arrow_array::{ArrayRef, Int64Array, StructArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::EnabledStatistics;
    use parquet::schema::types::ColumnPath;

    /// Columns of every shape the export writes: nullable numbers, text (dictionary-encoded),
    /// lists and a struct.
    fn batch(schema: &SchemaRef, start: usize, rows: usize) -> RecordBatch {
        let ints = Int64Array::from_iter_values((start..start + rows).map(|i| (i * i) as i64));
        let mut floats = Float64Builder::new();
        let mut text = StringBuilder::new();
        let mut list = ListBuilder::new(UInt16Builder::new());
        for i in start..start + rows {
            if i % 7 == 0 {
                floats.append_null();
            } else {
                floats.append_value(i as f64 / 3.0);
            }
            text.append_value(format!("frame{}", i % 13));
            for k in 0..i % 4 {
                list.values().append_value((i + k) as u16);
            }
            list.append(i % 11 != 0);
        }
        let DataType::Struct(fields) = schema.field(3).data_type() else { unreachable!() };
        let inner = StructArray::new(
            fields.clone(),
            vec![Arc::new(floats.finish()) as ArrayRef, Arc::new(text.finish()) as ArrayRef],
            None,
        );
        let columns: Vec<ArrayRef> =
            vec![Arc::new(ints), Arc::new(list.finish()), Arc::new(Int64Array::from(vec![7; rows])), Arc::new(inner)];
        RecordBatch::try_new(schema.clone(), columns).unwrap()
    }

    #[test]
    fn files_are_the_bytes_arrow_writer_writes_on_any_number_of_threads() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, false),
            Field::new("list", DataType::List(Arc::new(Field::new("item", DataType::UInt16, true))), true),
            Field::new("constant", DataType::Int64, false),
            Field::new(
                "s",
                DataType::Struct(
                    vec![Field::new("f", DataType::Float64, true), Field::new("text", DataType::Utf8, false)].into(),
                ),
                false,
            ),
        ]));
        // The export's settings, with small pages and a row limit that splits batches.
        let props = || {
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_dictionary_enabled(false)
                .set_column_dictionary_enabled(ColumnPath::new(vec!["s".into(), "text".into()]), true)
                .set_data_page_size_limit(4 << 10)
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_max_row_group_row_count(Some(10_000))
                .build()
        };
        // Batches of uneven sizes; a row group closed by hand after some of them.
        let sizes = [3000, 4096, 1, 8192, 5000, 2500, 7000];
        let close_after = [1, 4];
        let dir = tempfile::tempdir().unwrap();
        // The open row group's anticipated size after each batch (what the export closes row groups by).
        let mut sizes_expected = Vec::new();
        let expected = {
            let path = dir.path().join("arrow_writer.parquet");
            let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema.clone(), Some(props())).unwrap();
            let mut start = 0;
            for (k, n) in sizes.iter().enumerate() {
                w.write(&batch(&schema, start, *n)).unwrap();
                sizes_expected.push(w.in_progress_size());
                start += n;
                if close_after.contains(&k) {
                    w.flush().unwrap();
                }
            }
            w.close().unwrap();
            std::fs::read(&path).unwrap()
        };
        for helpers in [0, 1, 3] {
            let pool = Pool::new(helpers);
            let path = dir.path().join(format!("pool{helpers}.parquet"));
            let mut w = FileWriter::try_new(File::create(&path).unwrap(), schema.clone(), props()).unwrap();
            let mut start = 0;
            let mut sizes_got = Vec::new();
            for (k, n) in sizes.iter().enumerate() {
                w.write(&batch(&schema, start, *n), &pool).unwrap();
                sizes_got.push(w.in_progress_size());
                start += n;
                if close_after.contains(&k) {
                    w.flush(&pool).unwrap();
                }
            }
            w.close(&pool).unwrap();
            assert_eq!(sizes_got, sizes_expected, "{helpers} helper thread(s)");
            let got = std::fs::read(&path).unwrap();
            assert!(got == expected, "{helpers} helper thread(s): {} bytes, ArrowWriter {}", got.len(), expected.len());
        }
    }
}
