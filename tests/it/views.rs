//! The generated borrowed views held to the owned decoders: on every record of every sample file,
//! and on cut and corrupted copies of each, a view and the owned decoder agree on whether the bytes
//! decode, on the error (kind, offset, type, field) when they do not, on the value (`to_owned()`)
//! and on the bytes each encodes to when they do.

use std::path::{Path, PathBuf};

use logspec::formats::{carla, rlog, usvlog, wpilog};
use logspec::runtime::{Cursor, Decode, DecodeError, Encode, Endian, FramedFormat, SliceReader, Union, View, Visit};
use logspec::value::Value;

fn data(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no .{ext} files in {}", dir.display());
    v
}

/// The variants of one payload a test runs through both decoders: the payload, every cut of its
/// first 48 bytes, and copies with one of its first 48 bytes flipped.
fn variants(payload: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let n = payload.len().min(48);
    std::iter::once(payload.to_vec()).chain((0..n).map(move |i| payload[..i].to_vec())).chain((0..n).flat_map(
        move |i| {
            [0xffu8, 0x01, 0x80].into_iter().map(move |x| {
                let mut p = payload.to_vec();
                p[i] ^= x;
                p
            })
        },
    ))
}

/// Holds two values to the same `Debug` text, showing where they first differ.
fn same_debug(what: &str, view: &impl std::fmt::Debug, owned: &impl std::fmt::Debug) {
    let (a, b) = (format!("{view:?}"), format!("{owned:?}"));
    if a != b {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = a[..at].char_indices().rev().nth(80).map_or(0, |(i, _)| i);
        panic!(
            "{what}: the view's value differs from the owned decoder's at char {at}:\n view: ...{}\nowned: ...{}",
            a[from..].chars().take(200).collect::<String>(),
            b[from..].chars().take(200).collect::<String>()
        );
    }
}

/// Holds one view result to one owned result: the same value, the same bytes when encoded, the
/// same walk for a visitor (what `dump` prints), or the same error.
fn agree<O, V>(what: &str, owned: Result<O, DecodeError>, view: Result<V, DecodeError>, to_owned: impl Fn(&V) -> O)
where
    O: PartialEq + std::fmt::Debug + Encode + Visit,
    V: Encode + Visit,
{
    match (owned, view) {
        (Ok(o), Ok(v)) => {
            // Compared as printed, so that NaNs compare equal (the encoded bytes are compared below).
            same_debug(what, &to_owned(&v), &o);
            same_debug(&format!("{what} (visited)"), &Value::of(&v), &Value::of(&o));
            assert_eq!(v.encoded_len(), o.encoded_len(), "{what}: encoded length");
            let (mut a, mut b) = (Vec::new(), Vec::new());
            o.encode(&mut a, Endian::Little).unwrap();
            v.encode(&mut b, Endian::Little).unwrap();
            assert_eq!(b, a, "{what}: the view encodes to other bytes than the owned value");
        }
        (Err(a), Err(b)) => assert_eq!(b.detail(), a.detail(), "{what}: the errors differ"),
        (Ok(_), Err(e)) => panic!("{what}: the owned decoder accepts what the view rejects: {e}"),
        (Err(e), Ok(_)) => panic!("{what}: the view accepts what the owned decoder rejects: {e}"),
    }
}

/// Every record of a framed format, through the record enum and its view.
fn framed<F: FramedFormat>(
    dir: &str,
    ext: &str,
    view: impl for<'a> Fn(u64, &'a [u8]) -> Option<Result<F::Record, DecodeError>>,
) -> usize
where
    F::Record: Clone + PartialEq + std::fmt::Debug + Encode + Visit,
{
    let mut n = 0;
    for path in data(dir, ext) {
        let bytes = std::fs::read(&path).unwrap();
        let (_, reader) = SliceReader::<F>::new(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for raw in reader {
            let Ok(raw) = raw else { break };
            for p in variants(raw.payload) {
                let what = format!("{} record #{} (tag {})", path.display(), raw.index, raw.header.tag);
                let owned = F::decode_record(raw.header.tag, &p);
                let viewed = view(raw.header.tag, &p);
                match (owned, viewed) {
                    (None, None) => {}
                    (Some(o), Some(v)) => agree(&what, o, v, |r: &F::Record| r.clone()),
                    _ => panic!("{what}: the view and the owned decoder disagree on whether the tag is known"),
                }
                n += 1;
            }
        }
    }
    n
}

#[test]
fn usvlog_views_agree_with_owned() {
    let n = framed::<usvlog::Usvlog>("usvlog", "usvlog", |tag, p| {
        usvlog::UsvlogRecordRef::decode(tag, p).map(|r| {
            r.map(|v| {
                // The view itself must also encode like the owned value.
                let o = v.to_owned();
                let (mut a, mut b) = (Vec::new(), Vec::new());
                o.encode(&mut a, Endian::Little).unwrap();
                v.encode(&mut b, Endian::Little).unwrap();
                assert_eq!(a, b);
                o
            })
        })
    });
    assert!(n > 100, "{n} payloads checked");
}

/// CARLA packets (after the info header), with the reader parameters the CARLA reader uses: the
/// file's version and each wheel layout.
#[test]
fn carla_views_agree_with_owned() {
    let mut checked = 0;
    for path in data("carla", "log") {
        let bytes = std::fs::read(&path).unwrap();
        // The info header is the format's file header: the runtime's framed reader reads it.
        let (header, reader) = SliceReader::<carla::Carla>::new(&bytes).unwrap();
        for raw in reader.take(300) {
            let Ok(raw) = raw else { break };
            for w in carla::WheelSize::ALL {
                let mut params = [0i128; carla::PARAMS.len()];
                params[carla::PARAM_VERSION] = i128::from(header.version);
                params[carla::PARAM_WHEEL_SIZE] = i128::from(w.0);
                for p in variants(raw.payload) {
                    let what = format!("{} packet #{} (id {})", path.display(), raw.index, raw.header.tag);
                    let owned = carla::Carla::decode_record_with(raw.header.tag, &p, &params);
                    let viewed = carla::CarlaRecordRef::decode_with(raw.header.tag, &p, &params);
                    match (owned, viewed) {
                        (None, None) => {}
                        (Some(o), Some(v)) => agree(&what, o, v, |v| v.to_owned()),
                        _ => panic!("{what}: the view and the owned decoder disagree on whether the id is known"),
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked} payloads checked");
}

#[test]
fn wpilog_control_record_views_agree_with_owned() {
    let mut checked = 0;
    for path in data("wpilog", "wpilog") {
        let bytes = std::fs::read(&path).unwrap();
        let mut r = wpilog::Reader::new(&bytes[..]).unwrap();
        while let Some(rec) = r.next_record() {
            let Ok(rec) = rec else { break };
            if rec.header.entry != 0 {
                continue;
            }
            for v in variants(rec.payload) {
                let what = format!("{} control record at {}", path.display(), rec.offset);
                let owned = wpilog::ControlRecord::decode_exact(&v);
                let viewed = wpilog::ControlRecordRef::view_exact(&v);
                agree(&what, owned, viewed, |x| x.to_owned());
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} payloads checked");
}

/// Every message of every RLOG sample, at its position in the file: the owned message decoder and
/// the view read the same message from the same bytes (to the end of the message and 16 bytes on,
/// so that a message cut by a corrupted length reads on into the next one alike), and consume the
/// same bytes.
macro_rules! rlog_messages {
    ($revision:expr, $owned:ty, $view:ident) => {{
        let mut checked = 0;
        for path in data("rlog", "rlog") {
            let bytes = std::fs::read(&path).unwrap();
            if bytes.first() != Some(&$revision) {
                continue;
            }
            let mut pos = 1;
            let mut messages = 0;
            while pos < bytes.len() && messages < 5000 {
                let rest = &bytes[pos..];
                let mut c = Cursor::new(rest);
                let Ok(_) = <$owned>::decode(&mut c, Endian::Big) else { break };
                let len = c.position();
                let span = (len + 16).min(rest.len());
                for v in variants(&rest[..span]) {
                    let what = format!("{} message at byte {pos}", path.display());
                    let (mut a, mut b) = (Cursor::new(&v), Cursor::new(&v));
                    let o = <$owned>::decode(&mut a, Endian::Big);
                    let w = rlog::$view::decode_view(&mut b, Endian::Big);
                    if o.is_ok() && w.is_ok() {
                        assert_eq!(a.position(), b.position(), "{what}: bytes consumed");
                    }
                    agree(&what, o, w, |v| v.to_owned());
                    checked += 1;
                }
                pos += len;
                messages += 1;
            }
        }
        checked
    }};
}

#[test]
fn rlog_r1_views_agree_with_owned() {
    let n = rlog_messages!(1, rlog::R1Message, R1MessageRef);
    assert!(n > 1000, "{n}");
}

#[test]
fn rlog_r2_views_agree_with_owned() {
    let n = rlog_messages!(2, rlog::R2Message, R2MessageRef);
    assert!(n > 100, "{n}");
}

/// R2 values by their declared type names, on every value of the R2 samples.
#[test]
fn rlog_r2_value_views_agree_with_owned() {
    let mut checked = 0;
    for path in data("rlog", "rlog") {
        let bytes = std::fs::read(&path).unwrap();
        if bytes.first() != Some(&2) {
            continue;
        }
        let mut types: std::collections::HashMap<i16, String> = Default::default();
        let mut c = Cursor::new(&bytes[1..]);
        while !c.is_empty() {
            let Ok(m) = rlog::R2Message::decode(&mut c, Endian::Big) else { break };
            match m.body {
                rlog::R2Body::KeyDef { key_id, r#type, .. } => {
                    types.insert(key_id, r#type);
                }
                rlog::R2Body::Field { key_id, value } => {
                    let Some(t) = types.get(&key_id) else { continue };
                    for v in variants(&value) {
                        let what = format!("{} value of type {t}", path.display());
                        let o = rlog::R2Value::decode_named(t, &v);
                        let w = rlog::R2ValueRef::decode_named(t, &v);
                        match (o, w) {
                            (Ok(o), Ok(w)) => {
                                same_debug(&what, &w.to_owned(), &o);
                                same_debug(&what, &Value::of(&w), &Value::of(&o));
                                let (mut a, mut b) = (Vec::new(), Vec::new());
                                o.encode_variant(&mut a).unwrap();
                                w.encode_variant(&mut b).unwrap();
                                assert_eq!(b, a, "{what}");
                            }
                            (Err(a), Err(b)) => assert_eq!(b.detail(), a.detail(), "{what}"),
                            (o, w) => panic!("{what}: owned {:?}, view {:?}", o.is_ok(), w.is_ok()),
                        }
                        checked += 1;
                    }
                }
                _ => {}
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// `DecodeError` stays small (the runtime also asserts this at compile time).
#[test]
fn decode_error_is_small() {
    assert!(std::mem::size_of::<DecodeError>() <= 24);
    assert!(std::mem::size_of::<Result<f64, DecodeError>>() <= 24);
}

/// The CARLA readers lend packets as views: on the first frames of every sample, cut at every
/// byte and with every byte flipped, the slice reader and the streaming reader return the same
/// packets and the same error, and every packet's view agrees with the owned decoder run with
/// the reader parameters the reader chose (value, encoded bytes, and the error of a mismatch).
#[test]
fn carla_reader_views_agree_with_owned() {
    fn check(what: &str, bytes: &[u8]) -> usize {
        let (slice, stream) = (carla::SliceReader::new(bytes), carla::Reader::new(bytes));
        let (mut slice, mut stream) = match (slice, stream) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(a), Err(b)) => {
                assert_eq!((a.offset, a.to_string()), (b.offset, b.to_string()), "{what}: header errors");
                return 0;
            }
            (a, b) => panic!("{what}: slice reader ok: {}, stream reader ok: {}", a.is_ok(), b.is_ok()),
        };
        assert_eq!(slice.header(), stream.header(), "{what}");
        let mut params = [0i128; carla::PARAMS.len()];
        params[carla::PARAM_VERSION] = i128::from(slice.header().version);
        let mut n = 0;
        loop {
            let (a, b) = (slice.next(), stream.next_packet_ref());
            let (a, b) = match (a, b) {
                (None, None) => break,
                (Some(Ok(a)), Some(Ok(b))) => (a, b),
                (Some(Err(a)), Some(Err(b))) => {
                    assert_eq!((a.offset, a.to_string()), (b.offset, b.to_string()), "{what}: errors");
                    break;
                }
                (a, b) => panic!("{what}: packet {n}: slice {a:?}, stream {b:?}"),
            };
            // Compared as printed, so that NaNs compare equal.
            same_debug(&format!("{what}: packet {n}"), &a, &b);
            same_debug(&format!("{what}: frame state after packet {n}"), slice.frame(), stream.frame());
            let at = a.offset as usize + carla::PACKET_HEADER;
            let payload = &bytes[at..at + a.size as usize];
            let what = format!("{what}: packet #{n} (id {}) at {}", a.id, a.offset);
            match &a.body {
                carla::BodyRef::Unknown(raw) => {
                    assert_eq!(*raw, payload, "{what}");
                    assert!(carla::Carla::decode_record_with(u64::from(a.id), payload, &params).is_none(), "{what}");
                }
                carla::BodyRef::Record { record, wheel_size } => {
                    let w = wheel_size.unwrap_or(carla::WheelSize::ALL[0]);
                    params[carla::PARAM_WHEEL_SIZE] = i128::from(w.0);
                    let owned = carla::Carla::decode_record_with(u64::from(a.id), payload, &params);
                    let owned = owned.expect("a known id").or_else(|e| {
                        // A PhysicsControl without wheels decodes with either layout.
                        params[carla::PARAM_WHEEL_SIZE] = i128::from(carla::WheelSize::ALL[1].0);
                        carla::Carla::decode_record_with(u64::from(a.id), payload, &params)
                            .expect("known")
                            .map_err(|_| e)
                    });
                    agree(&what, owned, Ok(*record), |v| v.to_owned());
                }
                carla::BodyRef::Mismatch { raw, error, .. } => {
                    assert_eq!(*raw, payload, "{what}");
                    let mut rejected = 0;
                    for w in carla::WheelSize::ALL {
                        params[carla::PARAM_WHEEL_SIZE] = i128::from(w.0);
                        let owned = carla::Carla::decode_record_with(u64::from(a.id), payload, &params);
                        if let Some(Err(e)) = owned {
                            rejected += 1;
                            if a.id != 15 {
                                assert_eq!(e.detail(), error.detail(), "{what}");
                            }
                        }
                    }
                    assert_eq!(rejected, carla::WheelSize::ALL.len(), "{what}: the owned decoder rejects it too");
                }
            }
            n += 1;
        }
        n
    }
    let mut checked = 0;
    for path in data("carla", "log") {
        let bytes = std::fs::read(&path).unwrap();
        checked += check(&path.display().to_string(), &bytes);
        // The header and the first packets: every cut, and every byte flipped.
        let head = &bytes[..bytes.len().min(1500)];
        for i in 0..head.len() {
            checked += check(&format!("{} cut at {i}", path.display()), &head[..i]);
            let mut flipped = head.to_vec();
            flipped[i] ^= 0xff;
            checked += check(&format!("{} byte {i} flipped", path.display()), &flipped);
        }
    }
    assert!(checked > 20_000, "{checked} packets checked");
}
