//! Where a log's bytes come from ([`Source`]): a regular file mapped and read in place, or any
//! other input (a pipe, standard input, a reader a program hands in) read through a buffer; and
//! the generated framed readers over either (`FramedRead`), so that an adapter's loop is
//! written once and serves both.

use std::io::{self, Read};
use std::sync::Arc;

use crate::runtime::{
    decode_event, with_file_format, Event, FramedFormat, RawRecord, ReadError, Reader, SliceReader, Versioned, Visit,
    Visitor, WithFormat,
};

pub use super::mapped::{Mapped, Progress};

/// A log's bytes.
pub enum Source {
    /// A regular file, mapped ([`Mapped`]).
    Mapped(Arc<Mapped>),
    /// Anything else, read front to back.
    Stream(Box<dyn Read>),
}

impl Source {
    /// The bytes as a [`Read`], for readers that take one.
    pub fn into_read(self) -> Box<dyn Read> {
        match self {
            Source::Mapped(map) => Box::new(MapRead { map, pos: 0 }),
            Source::Stream(s) => s,
        }
    }
}

/// A mapped file read as a [`Read`]: copies from the map, moving its window along.
struct MapRead {
    map: Arc<Mapped>,
    pos: usize,
}

impl Read for MapRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.map.bytes()[self.pos..];
        let n = rest.len().min(buf.len());
        self.map.advance(self.pos + n);
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

/// A framed format's reader: [`SliceReader`] over a mapped file, [`Reader`] over a stream.
pub(super) trait FramedRead<F: FramedFormat> {
    fn file_header(&self) -> &F::FileHeader;
    /// Byte offset of the next record.
    fn position(&self) -> u64;
    /// The next record, decoded (see [`Reader::next_event`]).
    fn next_event(&mut self) -> Option<Result<Event<'_, F::Record>, ReadError>>;
    /// The next record's framing and payload, not decoded (see [`Reader::next_raw`]):
    /// `next_event` is this and [`decode_event`](crate::runtime::decode_event).
    fn next_raw(&mut self) -> Option<Result<RawRecord<'_>, ReadError>>;
    /// The next record, checked, its value built only if it is visited: a record whose length
    /// proves it decodes ([`Framing::decodes_by_length`](crate::runtime::Framing::decodes_by_length))
    /// is lent undecoded ([`Checked::Undecoded`]), so that a sink that keeps the record's bytes
    /// (or skips it) never decodes it; any other is decoded here ([`Checked::Decoded`]), with
    /// the errors, unknown types and resumption of [`next_event`](Self::next_event).
    #[inline]
    fn next_checked(&mut self) -> Option<Result<Event<'_, Checked<'_, F>>, ReadError>> {
        let raw = match self.next_raw()? {
            Ok(raw) => raw,
            Err(e) => return Some(Err(e)),
        };
        let (tag, payload) = (raw.header.tag, raw.payload);
        if F::decodes_by_length(tag, payload.len()) {
            return Some(Ok(Event::Record { raw, record: Checked::Undecoded { tag, payload } }));
        }
        Some(decode_event::<F>(raw).map(|ev| match ev {
            Event::Record { raw, record } => Event::Record { raw, record: Checked::Decoded(record) },
            Event::Unknown { raw } => Event::Unknown { raw },
        }))
    }
    /// Every record checked, its framing and whether its type is known lent to `f`, until the end
    /// or an error (see [`Reader::check_each`]).
    fn check_each(&mut self, f: impl FnMut(&RawRecord<'_>, bool)) -> Result<(), ReadError>;
    /// Moves to byte offset `pos`, a record boundary where the record numbered `index` starts
    /// (a chunk of the time index); `false` when the reader cannot (a stream: the caller skips the
    /// records before it instead).
    fn seek(&mut self, pos: u64, index: u64) -> bool;
    /// The mapped file the records are read in place from (`None`: a stream through a buffer).
    fn mapped(&self) -> Option<&Arc<Mapped>> {
        None
    }
}

/// The value of a record from [`FramedRead::next_checked`]: checked, and decoded now or when
/// visited. Its visit is the decoded record's.
pub(super) enum Checked<'a, F: FramedFormat> {
    /// A payload whose length proves it decodes, decoded each time it is visited.
    Undecoded { tag: u64, payload: &'a [u8] },
    /// A payload decoded while checking it.
    Decoded(F::Record),
}

impl<F: FramedFormat> Visit for Checked<'_, F> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        match self {
            Checked::Undecoded { tag, payload } => {
                // The record is matched by reference, not moved out (see the runtime's `lend`).
                // Its length proved that it decodes.
                let decoded = F::decode_record(*tag, payload);
                if let Some(Ok(record)) = &decoded {
                    record.visit(name, v);
                }
            }
            Checked::Decoded(record) => record.visit(name, v),
        }
    }
}

impl<R: Read, F: FramedFormat> FramedRead<F> for Reader<R, F> {
    fn file_header(&self) -> &F::FileHeader {
        Reader::file_header(self)
    }
    fn position(&self) -> u64 {
        Reader::position(self)
    }
    #[inline]
    fn next_event(&mut self) -> Option<Result<Event<'_, F::Record>, ReadError>> {
        Reader::next_event(self)
    }
    #[inline]
    fn next_raw(&mut self) -> Option<Result<RawRecord<'_>, ReadError>> {
        Reader::next_raw(self)
    }
    #[inline]
    fn check_each(&mut self, f: impl FnMut(&RawRecord<'_>, bool)) -> Result<(), ReadError> {
        Reader::check_each(self, f)
    }
    fn seek(&mut self, _pos: u64, _index: u64) -> bool {
        false
    }
}

/// A [`SliceReader`] over a mapped file, moving the map's window as it goes.
pub(super) struct MappedReader<'a, F: FramedFormat> {
    reader: SliceReader<'a, F>,
    header: F::FileHeader,
    map: &'a Arc<Mapped>,
}

impl<F: FramedFormat> FramedRead<F> for MappedReader<'_, F> {
    fn file_header(&self) -> &F::FileHeader {
        &self.header
    }
    fn position(&self) -> u64 {
        self.reader.position()
    }
    #[inline]
    fn next_event(&mut self) -> Option<Result<Event<'_, F::Record>, ReadError>> {
        self.map.advance(self.reader.position() as usize);
        self.reader.next_event()
    }
    #[inline]
    fn next_raw(&mut self) -> Option<Result<RawRecord<'_>, ReadError>> {
        self.map.advance(self.reader.position() as usize);
        self.reader.next()
    }
    #[inline]
    fn check_each(&mut self, mut f: impl FnMut(&RawRecord<'_>, bool)) -> Result<(), ReadError> {
        let map = self.map;
        self.reader.check_each(|raw, known| {
            map.advance(raw.offset as usize);
            f(raw, known)
        })
    }
    fn seek(&mut self, pos: u64, index: u64) -> bool {
        self.map.advance(usize::try_from(pos).unwrap_or(usize::MAX));
        self.reader.seek(pos, index);
        true
    }
    fn mapped(&self) -> Option<&Arc<Mapped>> {
        Some(self.map)
    }
}

/// What runs over a framed reader of either kind, whichever layout the file's schema id picks
/// ([`framed`]).
pub(super) trait FramedJob {
    type Output;
    fn call<F: FramedFormat>(self, reader: impl FramedRead<F>) -> Self::Output;
}

/// Picks the layout of the file's schema id among `V`'s (`with_file_format`, from the first
/// bytes `head`), opens its reader over `source` (the file header checked), and runs `job` over it.
pub(super) fn framed<V: Versioned, J: FramedJob>(head: &[u8], source: Source, job: J) -> Result<J::Output, ReadError> {
    struct Open<J> {
        source: Source,
        job: J,
    }
    impl<J: FramedJob> WithFormat for Open<J> {
        type Output = Result<J::Output, ReadError>;
        fn call<F: FramedFormat>(self) -> Self::Output {
            match self.source {
                Source::Mapped(map) => {
                    map.advance(0);
                    let (header, reader) = SliceReader::<F>::new(map.bytes())?;
                    Ok(self.job.call(MappedReader { reader, header, map: &map }))
                }
                Source::Stream(input) => Ok(self.job.call(Reader::<_, F>::new(input)?)),
            }
        }
    }
    with_file_format::<V, _>(head, Open { source, job }).and_then(|r| r)
}
