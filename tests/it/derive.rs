//! `#[derive(Record)]`: behaviour (round trips checked against Python's `struct` module). Its
//! compile-fail diagnostics are the derive crate's own tests (`derive/tests/compile_fail.rs`).

use crate::common;

use common::python_pack;
use logspec::runtime::{Decode, Encode, Endian, Fixed, Record as _, View as _};
use logspec::Record;

/// A hand-written record: the USVLOG ACTUATOR_REQ layout `<2fB3x`, plus a C-like enum.
#[derive(Record, Debug, Clone, Copy, PartialEq)]
#[record(id = 3, name = "REC_ACTUATOR_REQ")]
struct ActuatorReq {
    /// Requested surge.
    u_s_req: f32,
    u_d_req: f32,
    #[record(pad_after = 3)]
    src: Source,
}

#[derive(Record, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Source {
    Autopilot = 0,
    Manual = 1,
    Test = 2,
}

#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 9, endian = "big")]
struct Status {
    seq: u16,
    #[record(endian = "little")]
    flags: u32,
    #[record(count = "u8")]
    name: String,
    pos: [i16; 3],
    #[record(count = "u16")]
    samples: Vec<f64>,
    inner: ActuatorReq,
    #[record(rest)]
    tail: Vec<u8>,
}

#[test]
fn fixed_layout_matches_python_struct() {
    let r = ActuatorReq { u_s_req: 0.5, u_d_req: -0.25, src: Source::Manual };
    assert_eq!(<ActuatorReq as Fixed>::SIZE, 12);
    assert_eq!(ActuatorReq::ID, 3);
    assert_eq!(ActuatorReq::NAME, "REC_ACTUATOR_REQ");
    let bytes = r.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<2fB3x", "0.5, -0.25, 1"));
    assert_eq!(ActuatorReq::decode_exact(&bytes).unwrap(), r);
}

#[test]
fn derived_record_has_the_schema_fingerprint() {
    // The same layout in the bundled schema has the same fingerprint only if names and types
    // agree; ours names the enum field `src` and types it `u8`-based, as the schema does, but the
    // schema's enum has named values, so the fingerprints must differ. This checks that the derive
    // and the schema share one fingerprint algorithm: a struct with plain u8 matches exactly.
    #[derive(Record)]
    #[record(id = 13)]
    #[allow(non_snake_case, dead_code)]
    struct Gyro {
        z_gyro: f32,
        b_g_est: f32,
        #[record(pad_after = 3)]
        valid: u8,
    }
    use logspec::formats::usvlog::RecSensorGyro;
    assert_eq!(Gyro::FINGERPRINT, RecSensorGyro::FINGERPRINT);
    assert_ne!(ActuatorReq::FINGERPRINT, logspec::formats::usvlog::RecActuatorReq::FINGERPRINT);
}

#[test]
fn invalid_enum_value_is_an_error_not_a_panic() {
    let mut b = python_pack("<2fB3x", "0.5, -0.25, 1");
    b[8] = 7;
    let e = ActuatorReq::decode_exact(&b).unwrap_err();
    assert!(e.to_string().contains("7 is not a valid value"), "{e}");
}

#[test]
fn variable_layout_matches_python_struct() {
    let s = Status {
        seq: 258,
        flags: 0x0102_0304,
        name: "näme".to_string(),
        pos: [-1, 2, -3],
        samples: vec![1.5, -2.0],
        inner: ActuatorReq { u_s_req: 1.0, u_d_req: 2.0, src: Source::Test },
        tail: vec![9, 8, 7],
    };
    let bytes = s.to_bytes().unwrap();
    let name = "näme".as_bytes();
    let mut expected = python_pack(">H", "258");
    expected.extend(python_pack("<I", "0x01020304"));
    expected.extend(python_pack(&format!(">B{}s", name.len()), &format!("{}, {:?}.encode()", name.len(), "näme")));
    expected.extend(python_pack(">3hH2d", "-1, 2, -3, 2, 1.5, -2.0"));
    expected.extend(python_pack("<2fB3x", "1.0, 2.0, 2"));
    expected.extend([9, 8, 7]);
    assert_eq!(bytes, expected);
    assert_eq!(s.encoded_len(), bytes.len());
    assert_eq!(Status::decode_exact(&bytes).unwrap(), s);

    // Truncation anywhere is an error naming a field, never a panic.
    for cut in 0..bytes.len() - 3 {
        let mut c = logspec::runtime::Cursor::new(&bytes[..cut]);
        let e = Status::decode(&mut c, Endian::Big).unwrap_err();
        assert!(e.field.is_some(), "cut at {cut}: {e}");
    }
}

#[test]
fn string_too_long_for_its_prefix_is_refused() {
    let s = Status {
        seq: 0,
        flags: 0,
        name: "x".repeat(300),
        pos: [0; 3],
        samples: vec![],
        inner: ActuatorReq { u_s_req: 0.0, u_d_req: 0.0, src: Source::Autopilot },
        tail: vec![],
    };
    let e = s.to_bytes().unwrap_err();
    assert_eq!(e.to_string(), "name: length 300 does not fit its length prefix (max 255)");
}

/// A hand-written struct checked against the bundled schema at compile time.
#[derive(Record, Debug, PartialEq)]
#[record(schema = "schemas/usvlog.toml", name = "REC_NAV_SOLUTION")]
struct Nav {
    x: f32,
    y: f32,
    psi: f32,
    v: f32,
    r: f32,
    b_g: f32,
}

#[test]
fn schema_checked_derive_agrees_with_the_generated_type() {
    use logspec::formats::usvlog::RecNavSolution;
    assert_eq!(Nav::ID, RecNavSolution::ID);
    assert_eq!(Nav::FINGERPRINT, RecNavSolution::FINGERPRINT);
    let g = RecNavSolution { x: 1.0, y: 2.0, psi: 3.0, v: 4.0, r: 5.0, b_g: 6.0 };
    let n = Nav::decode_exact(&g.to_bytes().unwrap()).unwrap();
    assert_eq!(n, Nav { x: 1.0, y: 2.0, psi: 3.0, v: 4.0, r: 5.0, b_g: 6.0 });
}

/// binrw-style bare keywords (`big`, `count = u8`) and magic numbers: a byte-string magic at the
/// start of the struct, an integer magic (typed by its suffix) before a field.
#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 10, big, magic = b"MINI")]
struct Tagged {
    #[record(magic = 0xA55Au16, little)]
    seq: u16,
    #[record(count = u8)]
    name: String,
    #[record(size = u16, endian = little)]
    samples: Vec<i16>,
}

#[test]
fn bare_keywords_and_magic_match_python_struct() {
    let t = Tagged { seq: 7, name: "ab".into(), samples: vec![1, -2] };
    let bytes = t.to_bytes().unwrap();
    let mut expected = python_pack("<4sHH", "b'MINI', 0xA55A, 7");
    expected.extend(python_pack(">B2s", "2, b'ab'"));
    expected.extend(python_pack("<H2h", "4, 1, -2"));
    assert_eq!(bytes, expected);
    assert_eq!(Tagged::decode_exact(&bytes).unwrap(), t);
    assert_eq!(Tagged::ID, 10);

    // A wrong magic is a decode error at its offset, never a value.
    for (at, magic_at) in [(0, 0), (5, 4)] {
        let mut bad = bytes.clone();
        bad[at] ^= 0xFF;
        let e = Tagged::decode_exact(&bad).unwrap_err();
        assert_eq!(e.offset, magic_at, "{e}");
        assert!(matches!(e.kind, logspec::runtime::DecodeErrorKind::BadConst { .. }), "{e}");
    }
}

/// An enum as the schema language has it: a newtype with a const per named value, which keeps
/// values it does not name (a newer writer's values survive a round trip).
#[derive(Record, Debug, Clone, Copy, PartialEq, Eq)]
#[record(values(IDLE = 0, RUN = 1, FAULT = -1))]
struct Mode(i8);

#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 11)]
struct WithMode {
    #[record(pad_after = 1)]
    mode: Mode,
    speed: f32,
}

#[test]
fn open_enum_keeps_unknown_values() {
    assert_eq!(Mode::RUN, Mode(1));
    assert_eq!(Mode::ALL, &[Mode::IDLE, Mode::RUN, Mode::FAULT]);
    assert_eq!(Mode::FAULT.name(), Some("FAULT"));
    assert_eq!(Mode(9).name(), None);
    for raw in [1i8, -1, 9, -128] {
        let bytes = python_pack("<bxf", &format!("{raw}, 2.5"));
        let w = WithMode::decode_exact(&bytes).unwrap();
        assert_eq!(w, WithMode { mode: Mode(raw), speed: 2.5 });
        assert_eq!(w.to_bytes().unwrap(), bytes);
    }
    assert_eq!(<WithMode as Fixed>::SIZE, 6);
}

/// A union as the schema language has it (`[[union]]` selected by an earlier tag field): an
/// enum with data, whose variants have named fields and tag values.
#[derive(Record, Debug, Clone, PartialEq)]
enum Command {
    #[record(tag = 1)]
    Stop,
    #[record(tag = 2)]
    Move {
        #[record(unit = "m")]
        x: f32,
        #[record(big)]
        y: i16,
    },
    #[record(tag = 7)]
    Say {
        #[record(count = u8)]
        text: String,
    },
}

/// The tag written just before the union (`tag(kind: u8)`), after a named const.
#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 12, const(version = 2u8))]
struct Packet {
    seq: u16,
    #[record(tag(kind: u8))]
    cmd: Command,
}

/// The tag declared on an earlier field (`tag_field(kind: u16)`) and used later (`tag = kind`),
/// with a named const before a field.
#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 13)]
struct Later {
    #[record(tag_field(kind: u16))]
    seq: u32,
    #[record(const(marker = b"OK"))]
    when: u64,
    #[record(tag = kind)]
    cmd: Command,
}

#[test]
fn derived_unions_and_consts_match_python_struct() {
    let p = Packet { seq: 5, cmd: Command::Move { x: 1.5, y: -3 } };
    let bytes = p.to_bytes().unwrap();
    let mut expected = python_pack("<BHBf", "2, 5, 2, 1.5");
    expected.extend(python_pack(">h", "-3"));
    assert_eq!(bytes, expected);
    assert_eq!(Packet::decode_exact(&bytes).unwrap(), p);

    let p = Packet { seq: 6, cmd: Command::Say { text: "hi".into() } };
    let bytes = p.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<BHBB2s", "2, 6, 7, 2, b'hi'"));
    assert_eq!(Packet::decode_exact(&bytes).unwrap(), p);
    let stop = Packet { seq: 7, cmd: Command::Stop };
    assert_eq!(stop.to_bytes().unwrap(), python_pack("<BHB", "2, 7, 1"));
    assert_eq!(Packet::decode_exact(&python_pack("<BHB", "2, 7, 1")).unwrap(), stop);

    let l = Later { seq: 9, when: 1_000, cmd: Command::Stop };
    let bytes = l.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<HI2sQ", "1, 9, b'OK', 1000"));
    assert_eq!(Later::decode_exact(&bytes).unwrap(), l);

    // An unknown tag, a wrong const: errors at their offsets, never a value.
    let e = Packet::decode_exact(&python_pack("<BHBf", "2, 5, 3, 1.5")).unwrap_err();
    assert!(matches!(e.kind, logspec::runtime::DecodeErrorKind::UnknownVariant { .. }), "{e}");
    let e = Packet::decode_exact(&python_pack("<BHB", "3, 7, 1")).unwrap_err();
    assert_eq!(e.offset, 0, "{e}");
    assert!(matches!(e.kind, logspec::runtime::DecodeErrorKind::BadConst { .. }), "{e}");

    // The const and the variant show in a visit, as a schema's do (`dump`).
    let mut b = logspec::value::ValueBuilder::default();
    logspec::runtime::Visit::visit(&Packet { seq: 5, cmd: Command::Move { x: 1.5, y: -3 } }, None, &mut b);
    let shown = format!("{:?}", b.finish());
    assert!(shown.contains("version") && shown.contains("Move"), "{shown}");
}

/// The bytes a test runs through both decoders: the encoding, every cut of it, and copies with
/// each byte flipped three ways.
fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![bytes.to_vec()];
    out.extend((0..bytes.len()).map(|i| bytes[..i].to_vec()));
    for i in 0..bytes.len() {
        for x in [0xffu8, 0x01, 0x80] {
            let mut p = bytes.to_vec();
            p[i] ^= x;
            out.push(p);
        }
    }
    out
}

/// Holds a derived type's view to its owned decoder on `value`'s encoding and on every cut and
/// corrupted copy of it: both accept the same bytes with the same value (`to_owned()`) and encode
/// it to the same bytes, or both reject them with the same error (kind, offset, type, field).
/// Returns how many of the copies decoded.
fn view_agrees<'a, T, V>(value: &T, bytes: &'a mut Vec<Vec<u8>>, to_owned: impl Fn(&V) -> T) -> usize
where
    T: Decode + Encode + PartialEq + std::fmt::Debug,
    V: logspec::runtime::View<'a> + Encode + std::fmt::Debug,
{
    let encoded = value.to_bytes().unwrap();
    *bytes = variants(&encoded);
    let mut ok = 0;
    for (i, p) in bytes.iter().enumerate() {
        let owned = T::decode_exact(p);
        let view = V::view_exact(p);
        match (owned, view) {
            (Ok(o), Ok(v)) => {
                assert_eq!(to_owned(&v), o, "copy {i}: {v:?}");
                assert_eq!(v.encoded_len(), p.len(), "copy {i}: encoded length");
                assert_eq!(v.to_bytes().unwrap(), o.to_bytes().unwrap(), "copy {i}: the view encodes otherwise");
                ok += 1;
            }
            (Err(a), Err(b)) => assert_eq!(b.detail(), a.detail(), "copy {i}: the errors differ"),
            (Ok(_), Err(e)) => panic!("copy {i}: the owned decoder accepts what the view rejects: {e}"),
            (Err(e), Ok(v)) => panic!("copy {i}: the view accepts what the owned decoder rejects ({e}): {v:?}"),
        }
    }
    // The untouched encoding always decodes, to the value itself.
    assert_eq!(to_owned(&V::view_exact(&bytes[0]).unwrap()), *value);
    ok
}

/// A derived type gets the borrowed view of a schema type (`ActuatorReqRef<'a>`, ...), generated
/// by the same code: held here to the owned decoder on every derive test type.
#[test]
fn derived_views_agree_with_owned() {
    let mut b = Vec::new();
    let a = ActuatorReq { u_s_req: 0.5, u_d_req: -0.25, src: Source::Manual };
    // A flipped `src` byte is an invalid C-like enum value: rejected by both.
    assert!(view_agrees(&a, &mut b, ActuatorReqRef::to_owned) > 1);
    let v = ActuatorReqRef::view_exact(&b[0]).unwrap();
    assert_eq!((v.u_s_req, v.u_d_req, v.src), (0.5, -0.25, Source::Manual));
    assert_eq!(v.as_bytes(), &b[0][..]);
    // The named consts of a schema struct: size and field offsets.
    assert_eq!((ActuatorReq::SIZE, ActuatorReq::OFFSET_U_D_REQ, ActuatorReq::OFFSET_SRC), (12, 4, 8));

    let s = Status {
        seq: 1,
        flags: 0xdead_beef,
        name: "sensor".into(),
        pos: [1, -2, 3],
        samples: vec![0.5, -1.0],
        inner: a,
        tail: vec![9, 8, 7],
    };
    view_agrees(&s, &mut b, StatusRef::to_owned);
    let v = StatusRef::view_exact(&b[0]).unwrap();
    // Strings and bytes are borrowed from the input, numbers by value, number arrays decoded as read,
    // and a field of a hand-written type (`inner`) held by value.
    assert_eq!((v.name, v.tail, v.inner), ("sensor", &[9u8, 8, 7][..], a));
    assert_eq!(v.samples.iter().collect::<Vec<f64>>(), [0.5, -1.0]);
    assert_eq!(v.pos.to_array(), [1, -2, 3]);
    // Fields before the first variable-size one have constant offsets.
    assert_eq!((Status::OFFSET_SEQ, Status::OFFSET_FLAGS, Status::OFFSET_NAME), (0, 2, 6));
    // A name that is not UTF-8 is an error of the view too, at the same offset.
    let mut bad = b[0].clone();
    bad[7] = 0xff;
    assert_eq!(StatusRef::view_exact(&bad).unwrap_err().detail(), Status::decode_exact(&bad).unwrap_err().detail());

    view_agrees(&Tagged { seq: 7, name: "ab".into(), samples: vec![1, -2] }, &mut b, TaggedRef::to_owned);
    // A view of a variable-size struct with magics covers all of its bytes.
    assert_eq!(TaggedRef::view_exact(&b[0]).unwrap().as_bytes(), &b[0][..]);
    for raw in [1i8, -1, 9] {
        view_agrees(&WithMode { mode: Mode(raw), speed: 2.5 }, &mut b, WithModeRef::to_owned);
    }
    view_agrees(&Nav { x: 1.0, y: 2.0, psi: 3.0, v: 4.0, r: 5.0, b_g: 6.0 }, &mut b, NavRef::to_owned);
    for cmd in [Command::Stop, Command::Move { x: 1.5, y: -3 }, Command::Say { text: "hi".into() }] {
        view_agrees(&Packet { seq: 5, cmd: cmd.clone() }, &mut b, PacketRef::to_owned);
        view_agrees(&Later { seq: 9, when: 1_000, cmd }, &mut b, LaterRef::to_owned);
    }
}

/// A derived union gets the enum of views and the tag consts of a schema union.
#[test]
fn derived_union_view() {
    use logspec::runtime::Cursor;
    assert_eq!((Command::TAG_STOP, Command::TAG_MOVE, Command::TAG_SAY), (1, 2, 7));
    let bytes = python_pack("<B2s", "2, b'hi'");
    let v = CommandRef::decode_variant(Command::TAG_SAY, &mut Cursor::new(&bytes)).unwrap();
    assert_eq!(v, CommandRef::Say { text: "hi" });
    assert_eq!(v.tag(), 7);
    assert_eq!(v.to_owned(), Command::Say { text: "hi".into() });
    let mut out = Vec::new();
    v.encode_variant(&mut out).unwrap();
    assert_eq!(out, bytes);
    // A cut string: the same error as the owned union's.
    let cut = &bytes[..2];
    let e = CommandRef::decode_variant(7, &mut Cursor::new(cut)).unwrap_err();
    let o = <Command as logspec::runtime::Union>::decode_variant(7, &mut Cursor::new(cut)).unwrap_err();
    assert_eq!(e.detail(), o.detail());
}

/// A hand-written field type with none of `Clone`, `Debug` or `PartialEq` (only what the derive
/// needs: the codec), in a derived struct and a derived union.
#[derive(Record)]
struct Bare {
    a: u16,
    b: i8,
}

#[derive(Record)]
#[record(id = 21)]
struct HoldsBare {
    seq: u32,
    bare: Bare,
    #[record(count = "u8")]
    name: String,
}

#[derive(Record)]
enum BareChoice {
    #[record(tag = 1)]
    One { bare: Bare },
    #[record(tag = 2)]
    Two { n: u8 },
}

#[derive(Record)]
#[record(id = 22)]
struct HoldsBareChoice {
    #[record(tag(kind: u8))]
    choice: BareChoice,
}

/// The views of structs and unions with such a field build (their `Clone`, `Copy`, `Debug` and
/// `PartialEq` are there only while the field type has them), read the field by value and
/// encode and visit as the owned value does; with a field type that has the traits, the view has
/// them too.
#[test]
fn views_of_fields_without_common_traits() {
    let owned = HoldsBare { seq: 7, bare: Bare { a: 513, b: -2 }, name: "ok".into() };
    let bytes = owned.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<IHbB2s", "7, 513, -2, 2, b'ok'"));
    let v = HoldsBareRef::view_exact(&bytes).unwrap();
    assert_eq!((v.seq, v.bare.a, v.bare.b, v.name), (7, 513, -2, "ok"));
    assert_eq!(v.to_bytes().unwrap(), bytes);
    let shown = |x: &dyn Fn(&mut logspec::value::ValueBuilder)| {
        let mut b = logspec::value::ValueBuilder::default();
        x(&mut b);
        format!("{:?}", b.finish())
    };
    let of_view = shown(&|b| logspec::runtime::Visit::visit(&v, None, b));
    assert_eq!(of_view, shown(&|b| logspec::runtime::Visit::visit(&owned, None, b)));
    assert!(of_view.contains("513"), "{of_view}");

    let owned = HoldsBareChoice { choice: BareChoice::One { bare: Bare { a: 1, b: 2 } } };
    let bytes = owned.to_bytes().unwrap();
    assert_eq!(bytes, python_pack("<BHb", "1, 1, 2"));
    // A derived struct holds a hand-written union by value too.
    let v = HoldsBareChoiceRef::view_exact(&bytes).unwrap();
    match &v.choice {
        BareChoice::One { bare } => assert_eq!((bare.a, bare.b), (1, 2)),
        BareChoice::Two { .. } => panic!("the tag says One"),
    }
    assert_eq!(v.to_bytes().unwrap(), bytes);
    assert_eq!(
        shown(&|b| logspec::runtime::Visit::visit(&v, None, b)),
        shown(&|b| logspec::runtime::Visit::visit(&owned, None, b))
    );
    // The union's own view holds `Bare` by value in a variant.
    let u = BareChoiceRef::decode_variant(1, &mut logspec::runtime::Cursor::new(&bytes[1..])).unwrap();
    match &u {
        BareChoiceRef::One { bare } => assert_eq!((bare.a, bare.b), (1, 2)),
        BareChoiceRef::Two { .. } => panic!("tag 1 is One"),
    }
    let mut out = Vec::new();
    u.encode_variant(&mut out).unwrap();
    assert_eq!(out, &bytes[1..]);
    let two = BareChoiceRef::decode_variant(2, &mut logspec::runtime::Cursor::new(&[9])).unwrap();
    assert!(matches!(two, BareChoiceRef::Two { n: 9 }));

    // With field types that have the traits, so has the view that holds them: `ActuatorReq` is
    // `Copy`, `Command` is not.
    fn common<T: Clone + std::fmt::Debug + PartialEq>() {}
    fn copy<T: Copy>() {}
    common::<StatusRef<'static>>();
    copy::<StatusRef<'static>>();
    common::<PacketRef<'static>>();
    common::<CommandRef<'static>>();
}
