//! The Rust peers of the CARLA bench: decoders of the same packets written the way a Rust user
//! would without logspec, with binrw (owned values, like logspec's `Packet`) and with zerocopy
//! (references into the input, like logspec's views). Each decodes every packet of the bench
//! input, checks what its library checks (lengths, UTF-8 for binrw's strings), and returns the
//! number of packets, so that the bench can hold all decoders to the same count.
//!
//! The layouts are written out here by hand on purpose: that is what the peers are.

// The decoded values are only passed to `black_box`, so their fields are never read by name.
#![allow(dead_code)]
// binrw's `count = n` is a `usize::try_from` of the u16 counts, in impls an item's allow misses.
#![allow(clippy::unnecessary_fallible_conversions)]

use std::io::Cursor;

use binrw::{binread, BinRead, BinReaderExt};
use zerocopy::little_endian::{F32, F64, I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

// ---------------------------------------------------------------- binrw

#[binread]
#[br(little)]
#[derive(Debug)]
pub struct Str {
    #[br(temp)]
    len: u16,
    #[br(count = len, try_map = String::from_utf8)]
    pub s: String,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct Attribute {
    pub r#type: u8,
    pub id: Str,
    pub value: Str,
}

#[binread]
#[br(little)]
#[derive(Debug)]
pub struct ActorAdd {
    pub db_id: u32,
    pub r#type: u8,
    pub location: Vec3,
    pub rotation: Vec3,
    pub desc_uid: u32,
    pub desc_id: Str,
    #[br(temp)]
    n: u16,
    #[br(count = n)]
    pub attributes: Vec<Attribute>,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct ActorPosition {
    pub db_id: u32,
    pub location: Vec3,
    pub rotation: Vec3,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct TrafficLight {
    pub db_id: u32,
    pub is_frozen: u8,
    pub elapsed_time: f32,
    pub state: u8,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct VehicleAnim {
    pub db_id: u32,
    pub steering: f32,
    pub throttle: f32,
    pub brake: f32,
    pub handbrake: u8,
    pub gear: i32,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct Collision {
    pub id: u32,
    pub actor1: u32,
    pub actor2: u32,
    pub hero1: u8,
    pub hero2: u8,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct SceneLight {
    pub light_id: i32,
    pub intensity: f32,
    pub color: [f32; 4],
    pub on: u8,
    pub group: u8,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct Kinematics {
    pub db_id: u32,
    pub linear: Vec3,
    pub angular: Vec3,
}

#[derive(BinRead, Debug)]
#[br(little)]
pub struct TrafficLightTimes {
    pub db_id: u32,
    pub times: [f32; 3],
}

#[derive(BinRead, Debug)]
#[br(little, import(wheel_size: u32))]
pub struct WheelPhysics {
    pub head: [f32; 6],
    #[br(if(wheel_size == 48))]
    pub stiffness: Option<[f32; 3]>,
    pub position: Vec3,
}

#[binread]
#[br(little, import(wheel_size: u32))]
#[derive(Debug)]
pub struct VehiclePhysics {
    pub db_id: u32,
    pub head: [f32; 5],
    pub use_gear_autobox: u8,
    pub tail: [f32; 4],
    pub center_of_mass: Vec3,
    #[br(temp)]
    n_torque: u32,
    #[br(count = n_torque)]
    pub torque_curve: Vec<[f32; 2]>,
    #[br(temp)]
    n_gears: u32,
    #[br(count = n_gears)]
    pub forward_gears: Vec<[f32; 3]>,
    #[br(temp)]
    n_steering: u32,
    #[br(count = n_steering)]
    pub steering_curve: Vec<[f32; 2]>,
    #[br(temp)]
    n_wheels: u32,
    #[br(count = n_wheels, args { inner: (wheel_size,) })]
    pub wheels: Vec<WheelPhysics>,
}

/// A packet body: a u16 count, then that many `T`.
#[binread]
#[br(little)]
#[derive(Debug)]
pub struct Counted<T>
where
    T: for<'a> BinRead<Args<'a> = ()> + 'static,
{
    #[br(temp)]
    n: u16,
    #[br(count = n)]
    pub records: Vec<T>,
}

/// A PhysicsControl body, whose wheel layout is an argument.
#[binread]
#[br(little, import(wheel_size: u32))]
#[derive(Debug)]
pub struct PhysicsControl {
    #[br(temp)]
    n: u16,
    #[br(count = n, args { inner: (wheel_size,) })]
    pub records: Vec<VehiclePhysics>,
}

#[derive(Debug)]
pub enum BinrwPacket {
    FrameStart { frame_id: u64, duration_this: f64, elapsed: f64 },
    FrameEnd,
    EventAdd(Counted<ActorAdd>),
    EventDel(Counted<u32>),
    EventParent(Counted<Pair>),
    Collision(Counted<Collision>),
    Position(Counted<ActorPosition>),
    State(Counted<TrafficLight>),
    AnimVehicle(Counted<VehicleAnim>),
    AnimWalker(Counted<Pair>),
    VehicleLight(Counted<Pair>),
    SceneLight(Counted<SceneLight>),
    Kinematics(Counted<Kinematics>),
    BoundingBox(Counted<Kinematics>),
    PlatformTime(f64),
    PhysicsControl(PhysicsControl),
    TrafficLightTime(Counted<TrafficLightTimes>),
    Unknown(Vec<u8>),
}

fn whole<T>(body: &[u8], args: <T as BinRead>::Args<'_>) -> binrw::BinResult<T>
where
    T: BinRead,
{
    let mut c = Cursor::new(body);
    let v = T::read_options(&mut c, binrw::Endian::Little, args)?;
    if c.position() as usize != body.len() {
        return Err(binrw::Error::AssertFail { pos: c.position(), message: "trailing bytes".into() });
    }
    Ok(v)
}

/// Decodes one packet body with binrw; PhysicsControl tries 48- then 36-byte wheels.
pub fn binrw_packet(id: u8, body: &[u8]) -> binrw::BinResult<BinrwPacket> {
    Ok(match id {
        0 => {
            let [frame_id, d, e]: [u64; 3] = Cursor::new(body).read_le()?;
            BinrwPacket::FrameStart { frame_id, duration_this: f64::from_bits(d), elapsed: f64::from_bits(e) }
        }
        1 => BinrwPacket::FrameEnd,
        2 => BinrwPacket::EventAdd(whole(body, ())?),
        3 => BinrwPacket::EventDel(whole(body, ())?),
        4 => BinrwPacket::EventParent(whole(body, ())?),
        5 => BinrwPacket::Collision(whole(body, ())?),
        6 => BinrwPacket::Position(whole(body, ())?),
        7 => BinrwPacket::State(whole(body, ())?),
        8 => BinrwPacket::AnimVehicle(whole(body, ())?),
        9 => BinrwPacket::AnimWalker(whole(body, ())?),
        10 => BinrwPacket::VehicleLight(whole(body, ())?),
        11 => BinrwPacket::SceneLight(whole(body, ())?),
        12 => BinrwPacket::Kinematics(whole(body, ())?),
        13 => BinrwPacket::BoundingBox(whole(body, ())?),
        14 => BinrwPacket::PlatformTime(whole(body, ())?),
        15 => BinrwPacket::PhysicsControl(whole(body, (48,)).or_else(|_| whole(body, (36,)))?),
        16 => BinrwPacket::TrafficLightTime(whole(body, ())?),
        _ => BinrwPacket::Unknown(body.to_vec()),
    })
}

/// Every packet of a recording through binrw: the packet header, then the body by id.
pub fn binrw_all(buf: &[u8], header_len: usize) -> u64 {
    let mut c = Cursor::new(buf);
    c.set_position(header_len as u64);
    let mut n = 0;
    while (c.position() as usize) < buf.len() {
        let (id, size): (u8, u32) = c.read_le().expect("packet header");
        let start = c.position() as usize;
        let body = &buf[start..start + size as usize];
        std::hint::black_box(binrw_packet(id, body).expect("packet body"));
        c.set_position((start + size as usize) as u64);
        n += 1;
    }
    n
}

// ---------------------------------------------------------------- zerocopy

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZHeader {
    pub id: u8,
    pub size: U32,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZVec3 {
    pub x: F32,
    pub y: F32,
    pub z: F32,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZFrameStart {
    pub frame_id: U64,
    pub duration_this: F64,
    pub elapsed: F64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZActorPosition {
    pub db_id: U32,
    pub location: ZVec3,
    pub rotation: ZVec3,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZTrafficLight {
    pub db_id: U32,
    pub is_frozen: u8,
    pub elapsed_time: F32,
    pub state: u8,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZVehicleAnim {
    pub db_id: U32,
    pub steering: F32,
    pub throttle: F32,
    pub brake: F32,
    pub handbrake: u8,
    pub gear: I32,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZPair {
    pub a: U32,
    pub b: U32,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZCollision {
    pub id: U32,
    pub actor1: U32,
    pub actor2: U32,
    pub hero1: u8,
    pub hero2: u8,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZSceneLight {
    pub light_id: I32,
    pub intensity: F32,
    pub color: [F32; 4],
    pub on: u8,
    pub group: u8,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZKinematics {
    pub db_id: U32,
    pub a: ZVec3,
    pub b: ZVec3,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZTrafficLightTimes {
    pub db_id: U32,
    pub times: [F32; 3],
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ZActorAddHead {
    pub db_id: U32,
    pub r#type: u8,
    pub location: ZVec3,
    pub rotation: ZVec3,
    pub desc_uid: U32,
}

/// A u16-counted array of `T` filling `body` exactly.
fn counted<T: FromBytes + KnownLayout<PointerMetadata = usize> + Immutable + ?Sized>(body: &[u8]) -> Option<&T> {
    let (n, rest) = U16::ref_from_prefix(body).ok()?;
    T::ref_from_bytes_with_elems(rest, usize::from(n.get())).ok()
}

/// A u16-length string, UTF-8 checked, and the bytes after it.
fn z_str(b: &[u8]) -> Option<(&str, &[u8])> {
    let (n, rest) = U16::ref_from_prefix(b).ok()?;
    let n = usize::from(n.get());
    let s = std::str::from_utf8(rest.get(..n)?).ok()?;
    Some((s, &rest[n..]))
}

/// Checks an EventAdd body: fixed heads through zerocopy, strings and counts walked by hand.
fn z_event_add(body: &[u8]) -> Option<usize> {
    let (n, mut b) = U16::ref_from_prefix(body).ok()?;
    for _ in 0..n.get() {
        let (head, rest) = ZActorAddHead::ref_from_prefix(b).ok()?;
        std::hint::black_box(head);
        let (desc, rest) = z_str(rest)?;
        std::hint::black_box(desc);
        let (na, mut rest) = U16::ref_from_prefix(rest).ok()?;
        for _ in 0..na.get() {
            let (_ty, r) = u8::ref_from_prefix(rest).ok()?;
            let (k, r) = z_str(r)?;
            let (v, r) = z_str(r)?;
            std::hint::black_box((k, v));
            rest = r;
        }
        b = rest;
    }
    b.is_empty().then_some(usize::from(n.get()))
}

/// Checks a PhysicsControl body with `wheel` bytes per wheel.
fn z_physics(body: &[u8], wheel: usize) -> Option<usize> {
    let (n, mut b) = U16::ref_from_prefix(body).ok()?;
    for _ in 0..n.get() {
        // db_id, 5 x f32, bool, 4 x f32, center of mass: 4 + 20 + 1 + 16 + 12 bytes.
        let (_head, rest) = <[u8; 53]>::ref_from_prefix(b).ok()?;
        let mut rest = rest;
        for elem in [8usize, 12, 8, wheel] {
            let (k, r) = U32::ref_from_prefix(rest).ok()?;
            let len = (k.get() as usize).checked_mul(elem)?;
            rest = r.get(len..)?;
        }
        b = rest;
    }
    b.is_empty().then_some(usize::from(n.get()))
}

/// Checks one packet body through zerocopy references; `None` when it does not fit its size.
pub fn zerocopy_packet(id: u8, body: &[u8]) -> Option<usize> {
    match id {
        0 => ZFrameStart::ref_from_bytes(body).ok().map(|r| std::hint::black_box(r).frame_id.get() as usize),
        1 => body.is_empty().then_some(0),
        2 => z_event_add(body),
        3 => counted::<[U32]>(body).map(<[U32]>::len),
        4 | 9 | 10 => counted::<[ZPair]>(body).map(<[ZPair]>::len),
        5 => counted::<[ZCollision]>(body).map(<[ZCollision]>::len),
        6 => counted::<[ZActorPosition]>(body).map(<[ZActorPosition]>::len),
        7 => counted::<[ZTrafficLight]>(body).map(<[ZTrafficLight]>::len),
        8 => counted::<[ZVehicleAnim]>(body).map(<[ZVehicleAnim]>::len),
        11 => counted::<[ZSceneLight]>(body).map(<[ZSceneLight]>::len),
        12 | 13 | 17 => counted::<[ZKinematics]>(body).map(<[ZKinematics]>::len),
        14 => F64::ref_from_bytes(body).ok().map(|t| std::hint::black_box(t.get()) as usize),
        15 => z_physics(body, 48).or_else(|| z_physics(body, 36)),
        16 => counted::<[ZTrafficLightTimes]>(body).map(<[ZTrafficLightTimes]>::len),
        _ => Some(0),
    }
}

/// Every packet of a recording through zerocopy references.
pub fn zerocopy_all(buf: &[u8], header_len: usize) -> u64 {
    let mut b = &buf[header_len..];
    let mut n = 0;
    while !b.is_empty() {
        let (h, rest) = ZHeader::ref_from_prefix(b).expect("packet header");
        let (body, rest) = rest.split_at(h.size.get() as usize);
        std::hint::black_box(zerocopy_packet(h.id, body).expect("packet body"));
        b = rest;
        n += 1;
    }
    n
}
