//! The samples of a CARLA recording ([`scan`]), whole or a range of chunks of the time index
//! ([`index`]): a whole scan notes chunks at frames and the PhysicsControl packets where the
//! wheel layout changed; a ranged scan moves the reader to its chunk ([`index::start_at`]).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::formats::carla::{BodyRef, CarlaRecordRef, WheelSize};
use crate::ir::ir::{Schema, Ty, TypeDef};

use crate::log::fault::{kind, Fault};
use crate::log::index::{self, Chunk, Index, CHUNK_BYTES};
use crate::log::input::Source;
use crate::log::scan::{record_channel, seconds_to_ns, units_of, Channel, DynVisit, JsonSchema, State, ValueType};
use crate::log::Error;

use super::{read, Job, Packets};

/// The samples of a CARLA recording. With a `range` (chunks of the time index) and the state
/// messages before it, only the packets that start in it; without, every packet, and the time
/// index is noted ([`Outcome::index`](crate::log::Outcome::index)).
pub(in crate::log) fn scan(
    input: Source,
    path: &str,
    range: Option<(index::Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let schema = std::sync::Arc::clone(crate::formats::schemas::carla());
    struct Scan<'a, 's> {
        path: &'a str,
        schema: Arc<Schema>,
        range: Option<(index::Range, Vec<u64>)>,
        state: &'a mut State<'s>,
    }
    impl Job for Scan<'_, '_> {
        type Output = Result<(), Error>;
        fn run(self, r: &mut impl Packets) -> Self::Output {
            read_carla(r, self.path, &self.schema, self.range, self.state)
        }
    }
    read(input, path, Scan { path, schema, range, state })?
}

/// Moves the reader to `range`'s start with the reader's state there ([`Packets::start_at`]);
/// a range that starts at the first packet needs nothing. Whether the reader must then be at a
/// FrameStart (every chunk but the first starts at one).
fn start_at(r: &mut impl Packets, path: &str, range: index::Range, states: &[u64]) -> Result<bool, Fault> {
    if range.start < r.header_len() {
        return Err(index::wrong(path, range.start, "a chunk starts inside the file header"));
    }
    r.start_at(path, range, states)
}

/// Notes the chunks of a CARLA recording at the frames a whole scan passes: a chunk starts at a
/// frame's FrameStart (the first one at the first packet, whatever it is) and counts the frames
/// that start in it; its times are its frames' `elapsed`, and 0 s for packets before the first
/// frame (a chunk of those alone, with no frame, joins the first frame's).
struct Frames {
    chunks: Vec<Chunk>,
    open: Option<Chunk>,
    /// Where the packets start (after the header).
    first: u64,
}

impl Frames {
    fn new(first: u64) -> Frames {
        Frames { chunks: Vec::new(), open: None, first }
    }

    /// A packet before the first frame: at 0 s, in the first chunk.
    fn before(&mut self) {
        let first = self.first;
        let c = self.open.get_or_insert(Chunk {
            offset: first,
            length: 0,
            first_record: 0,
            records: 0,
            t_min_ns: 0,
            t_max_ns: 0,
        });
        c.t_min_ns = 0;
    }

    /// Frame `index` starts at `offset` (its FrameStart) at `t_ns`.
    fn frame(&mut self, offset: u64, index: u64, t_ns: u64) {
        match &mut self.open {
            Some(c) if c.records == 0 || offset < c.offset.saturating_add(CHUNK_BYTES) => {
                c.records += 1;
                c.t_min_ns = c.t_min_ns.min(t_ns);
                c.t_max_ns = c.t_max_ns.max(t_ns);
            }
            _ => {
                if let Some(mut c) = self.open.take() {
                    c.length = offset - c.offset;
                    self.chunks.push(c);
                }
                let (t_min_ns, t_max_ns) = (t_ns, t_ns);
                self.open = Some(Chunk { offset, length: 0, first_record: index, records: 1, t_min_ns, t_max_ns });
            }
        }
    }

    /// The chunks of a recording read whole to `end` (its size); none without a frame.
    fn finish(mut self, end: u64) -> Vec<Chunk> {
        if let Some(mut c) = self.open.take().filter(|c| c.records > 0) {
            c.length = end.saturating_sub(c.offset);
            self.chunks.push(c);
        }
        self.chunks
    }
}

/// CARLA: a packet whose records each belong to an actor (`db_id`) gives one channel per packet
/// kind and actor (`Position/231`), so that an actor's path is one series; other packets give one
/// channel per kind. Time is the frame's `elapsed`.
///
/// The samples depend on no state but the header's version, the frame a packet is in (chunks
/// start at a FrameStart) and, for a PhysicsControl packet whose bytes would decode with either
/// wheel layout, the layout that decoded the one before: the actor table (EventAdd, EventDel,
/// EventParent) names no channel and changes no sample. So the state messages of the time index
/// are the PhysicsControl packets where the wheel layout changed.
///
/// With a `range` (chunks of the time index) and the state messages before it, only the
/// packets that start in it; without, every packet, and the time index is noted
/// ([`Outcome::index`](crate::log::Outcome::index)).
fn read_carla(
    r: &mut impl Packets,
    path: &str,
    schema: &Arc<Schema>,
    range: Option<(index::Range, Vec<u64>)>,
    state: &mut State<'_>,
) -> Result<(), Error> {
    let (end, mut frames, mut at_frame) = match &range {
        None => (u64::MAX, Some(Frames::new(r.position())), false),
        // Nothing read yet: the wrong index is the scan's error (a fault, as a log that does
        // not open).
        Some((range, states)) => (range.end, None, start_at(r, path, *range, states).map_err(Error::at)?),
    };
    // The wheel layout of the last PhysicsControl packet, and where it changed.
    let (mut wheel, mut states) = (WheelSize::ALL[0], Vec::new());
    let mut faulted = false;
    // Breaks with the error that ends the scan, or with none at a fault of the log (noted).
    let stop = r.each_in_frame(end, |p| {
        let (p, frame) = match p {
            Ok(p) => p,
            Err(e) if at_frame => {
                return ControlFlow::Break(Some(Error::at(index::wrong(path, e.offset, &format!("{e}")))))
            }
            Err(e) => {
                state.outcome.fail(Fault::read(path, &e));
                faulted = true;
                return ControlFlow::Break(None);
            }
        };
        let starts = matches!(p.body, BodyRef::Record { record: CarlaRecordRef::FrameStart(_), .. });
        if at_frame && !starts {
            let wrong = index::wrong(path, p.offset, "not a frame's FrameStart packet");
            return ControlFlow::Break(Some(Error::at(wrong)));
        }
        at_frame = false;
        let t_ns = seconds_to_ns(frame.start.as_ref().map_or(0.0, |s| s.elapsed));
        if let Some(f) = frames.as_mut() {
            match frame.index {
                Some(i) if starts => f.frame(p.offset, i, t_ns),
                None => f.before(),
                Some(_) => {}
            }
            if let BodyRef::Record { wheel_size: Some(w), .. } = p.body {
                if w != wheel {
                    wheel = w;
                    states.push(p.offset);
                }
            }
        }
        let name = p.name().unwrap_or("?");
        match &p.body {
            BodyRef::Record { record, .. } => {
                // A packet of actors' records: each record on its actor's channel; any other
                // packet whole. Both handed as visits of the views (no value built).
                let per_actor = each_actor(record, &mut |id, bytes, item| {
                    let describe = || carla_actor_channel(schema, name, &format!("{name}/{id}"));
                    state.deliver_numbered((p.id, id), t_ns, bytes, item, describe)
                });
                let delivered = per_actor.and_then(|done| {
                    if done {
                        Ok(())
                    } else {
                        state.deliver_visit(name, t_ns, record, || record_channel(schema, name))
                    }
                });
                if let Err(e) = delivered {
                    return ControlFlow::Break(Some(e));
                }
            }
            BodyRef::Unknown(_) => state.warn(kind::UNKNOWN_PACKET, || {
                format!(
                    "{path}: offset {}: packet id {} is not a CARLA 0.9 packet; skipped by its size",
                    p.offset, p.id
                )
            }),
            BodyRef::Mismatch { error, .. } => state.warn(kind::MISFIT_PACKET, || {
                format!(
                    "{path}: offset {}: packet {name} does not decode in its {} bytes ({error}); skipped",
                    p.offset, p.size
                )
            }),
        }
        ControlFlow::Continue(())
    });
    if let Some(Some(e)) = stop {
        return Err(e);
    }
    let at = r.position();
    if range.is_some() && !faulted && at != end {
        state.outcome.fail(index::ended_elsewhere(path, at, end));
    }
    if let Some(f) = frames.filter(|_| !faulted) {
        let chunks = f.finish(at);
        if !chunks.is_empty() {
            state.outcome.index = Some(Index { origin_ns: 0, chunks, states, schemas: Vec::new() });
        }
    }
    Ok(())
}

/// The packets that are lists (one field, `records`): of actors' records, whose elements have a
/// `db_id` (each record goes to its actor's channel, `Position/<db_id>`), and of other records
/// (delivered whole). [`each_actor`] hands the actors' records on; an empty list of either kind
/// gives no sample. The lists are checked against the schema by a test.
macro_rules! record_lists {
    (actors: $($v:ident),* ; others: $($o:ident),* $(,)?) => {
        #[cfg(test)]
        const ACTOR_LISTS: &[&str] = &[$(stringify!($v)),*];
        #[cfg(test)]
        const OTHER_LISTS: &[&str] = &[$(stringify!($o)),*];

        /// Hands each record of a list of actors' records to `f` with its actor id and bytes;
        /// says whether the packet is done with (such a list, or an empty list of other
        /// records) or is to be delivered whole.
        fn each_actor(
            record: &CarlaRecordRef<'_>,
            f: &mut dyn FnMut(u64, &[u8], &dyn DynVisit) -> Result<(), Error>,
        ) -> Result<bool, Error> {
            match record {
                $(CarlaRecordRef::$v(r) => {
                    for item in r.records.iter() {
                        f(u64::from(item.db_id), item.as_bytes(), &item)?;
                    }
                    Ok(true)
                })*
                $(CarlaRecordRef::$o(r) => Ok(r.records.is_empty()),)*
                _ => Ok(false),
            }
        }
    };
}

record_lists!(
    actors: EventAdd, EventDel, EventParent, Position, State, AnimVehicle, AnimWalker, VehicleLight,
        Kinematics, BoundingBox, PhysicsControl, TrafficLightTime, TriggerVolume, WalkerBones,
        AnimVehicleWheels, AnimBiker, VehicleDoor;
    others: Collision, SceneLight, Weather
);

/// The channel of one actor's records of a packet kind: the element type of the packet's
/// `records` array.
fn carla_actor_channel(schema: &Arc<Schema>, packet: &str, channel: &str) -> Channel {
    let elem = schema.records.iter().find(|r| r.name == packet).and_then(|r| {
        let f = schema.strukt(r.body).fields.first()?;
        match &f.ty {
            Ty::Array { elem, .. } => match **elem {
                Ty::Named(id) if matches!(schema.ty(id), TypeDef::Struct(_)) => Some(id),
                _ => None,
            },
            _ => None,
        }
    });
    match elem {
        Some(id) => {
            let mut units = BTreeMap::new();
            units_of(schema, &schema.strukt(id).fields, "", &mut units);
            Channel {
                name: channel.to_string(),
                schema_name: schema.ty(id).name().to_string(),
                json_schema: JsonSchema::Struct {
                    ty: ValueType { schema: schema.clone(), id },
                    enum_names: false,
                    list: None,
                },
                units,
                ros1: None,
                ty: Some(ValueType { schema: schema.clone(), id }),
                group: Some(packet.to_string()),
            }
        }
        None => Channel { name: channel.to_string(), ..record_channel(schema, packet) },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The lists [`each_actor`] knows are the schema's: packets of one field, `records`, an array
    /// of structs, split by actor when the struct has a `db_id`.
    #[test]
    fn the_record_lists_are_the_schemas() {
        let schema = crate::formats::schemas::carla();
        let (mut actors, mut others) = (BTreeSet::new(), BTreeSet::new());
        for r in &schema.records {
            let [f] = schema.strukt(r.body).fields.as_slice() else { continue };
            let Ty::Array { elem, .. } = &f.ty else { continue };
            let (true, Ty::Named(id)) = (f.name == "records", &**elem) else { continue };
            let TypeDef::Struct(s) = schema.ty(*id) else { continue };
            if s.fields.iter().any(|f| f.name == "db_id") { &mut actors } else { &mut others }.insert(r.name.as_str());
        }
        assert_eq!(actors, ACTOR_LISTS.iter().copied().collect::<BTreeSet<_>>());
        assert_eq!(others, OTHER_LISTS.iter().copied().collect::<BTreeSet<_>>());
    }

    /// Chunks start at a FrameStart after `CHUNK_BYTES`, the first at the first packet: packets
    /// before the first frame are at 0 s in it, and a recording without a frame has no chunks.
    #[test]
    fn frames_make_chunks_at_framestarts() {
        let mut f = Frames::new(34);
        f.before();
        f.frame(100, 0, 2_000);
        f.frame(CHUNK_BYTES + 33, 1, 3_000);
        f.frame(CHUNK_BYTES + 34, 2, 1_000);
        f.frame(CHUNK_BYTES + 90, 3, 4_000);
        let chunks = f.finish(CHUNK_BYTES + 200);
        let c = |offset, length, first_record, records, t_min_ns, t_max_ns| Chunk {
            offset,
            length,
            first_record,
            records,
            t_min_ns,
            t_max_ns,
        };
        assert_eq!(chunks, vec![c(34, CHUNK_BYTES, 0, 2, 0, 3_000), c(CHUNK_BYTES + 34, 166, 2, 2, 1_000, 4_000)]);
        let mut none = Frames::new(34);
        none.before();
        assert!(none.finish(500).is_empty());
    }
}
