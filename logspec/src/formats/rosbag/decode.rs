//! Per-connection message types: each connection's `message_definition` compiled by the `.msg`
//! front end, its genmsg md5 checked against the connection's `md5sum`, and a [`Registry`] of
//! user-supplied `.msg` files (keyed by type and md5) for connections whose definition is empty
//! or does not match.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use logspec_ir::ir::Ty;
use logspec_ir::ros::{self, lower, MsgSet};
use logspec_ir::SchemaError;
use logspec_runtime::{Visit, Visitor};

use super::value::{self, DecodeFault, Value, ValueView, Visiting};
use super::Connection;
use crate::dynamic::{Plan, Sink};

/// md5 of the empty text: `std_msgs/Empty`, or the tell-tale of a connection recorded without a
/// definition.
pub const EMPTY_MD5: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// A compiled message type: the IR of the type and everything it uses.
#[derive(Debug)]
pub struct MsgDecoder {
    pub lowered: lower::Lowered,
    /// `pkg/Type`.
    pub name: String,
    /// genmsg's md5 of the definition.
    pub md5: String,
    root: Ty,
    /// The fewest bytes of each type of `lowered` (bounds array counts before allocating).
    min: Vec<u64>,
    /// The root type compiled for [`MsgDecoder::decode_into`].
    plan: Plan,
}

impl MsgDecoder {
    /// The decoder of `name` from a resolved set.
    pub fn new(set: &MsgSet, name: &str) -> Option<MsgDecoder> {
        let md5 = ros::md5::md5(set, name)?;
        let lowered = lower::lower(set, &[name], "ros", None);
        let root = Ty::Named(*lowered.ids.get(name)?);
        let min = logspec_ir::layout::min_sizes(&lowered.schema);
        let plan = Plan::new(&lowered.schema, &min, &root);
        Some(MsgDecoder { lowered, name: name.to_string(), md5, root, min, plan })
    }

    /// The decoder of the ROS 2 type `name` (`pkg/Type`) of a resolved [`ros::Dialect::Ros2`]
    /// set, for CDR payloads (after the 4-byte encapsulation header) of byte order `endian`
    /// ([`lower::lower_cdr`]). ROS 2 has no genmsg md5: `md5` is empty.
    pub fn cdr(set: &MsgSet, name: &str, endian: logspec_ir::ir::Endian) -> Option<MsgDecoder> {
        let lowered = lower::lower_cdr(set, &[name], "ros2", endian);
        let root = Ty::Named(*lowered.ids.get(name)?);
        let min = logspec_ir::layout::min_sizes(&lowered.schema);
        let plan = Plan::new(&lowered.schema, &min, &root);
        Some(MsgDecoder { lowered, name: name.to_string(), md5: String::new(), root, min, plan })
    }

    /// The message as an owned [`Value`] tree.
    pub fn decode(&self, bytes: &[u8]) -> Result<Value, DecodeFault> {
        value::decode(&self.lowered.schema, &self.min, &self.root, bytes)
    }

    /// Decodes the message without building a value: every part goes to `sink` as it is read
    /// (numbers in their byte order, strings checked as UTF-8, arrays of numbers lent as their
    /// packed bytes). Accepts and rejects exactly what [`MsgDecoder::decode`] does, with the same
    /// fault; on a fault, `sink` has seen the parts before it.
    pub fn decode_into(&self, bytes: &[u8], sink: &mut impl Sink) -> Result<(), DecodeFault> {
        self.plan.decode(&self.lowered.schema, &self.min, bytes, sink)
    }

    /// Decodes the message straight into a [`Visitor`], which sees what it would see from
    /// [`MsgDecoder::view`] of [`MsgDecoder::decode`]'s value, without the value being built.
    pub fn visit(&self, bytes: &[u8], v: &mut impl Visitor) -> Result<(), DecodeFault> {
        self.visit_as(bytes, None, v)
    }

    /// [`MsgDecoder::visit`] as a struct named `name` (the dump's `"data"`); on a fault, `v` has
    /// seen the parts before it.
    pub fn visit_as(
        &self,
        bytes: &[u8],
        name: Option<&str>,
        v: &mut (impl Visitor + ?Sized),
    ) -> Result<(), DecodeFault> {
        self.decode_into(bytes, &mut Visiting::new(v, name))
    }

    /// The message checked to decode whole ([`crate::dynamic::Plan::check`]: its lengths,
    /// counts and bounds, no field read), to be shown to visitors through the plan with no
    /// value built; or the fault [`MsgDecoder::decode`] gives, before anything was shown.
    pub fn checked<'a>(&'a self, bytes: &'a [u8]) -> Result<Checked<'a>, DecodeFault> {
        self.plan.check(&self.lowered.schema, &self.min, bytes)?;
        Ok(Checked { decoder: self, bytes })
    }

    /// The message to be decoded as it is shown, once, without a check first
    /// ([`crate::log::TryVisit`]): a visit that meets a fault stops there and keeps the fault
    /// ([`Unchecked::fault`]).
    pub fn unchecked<'a>(&'a self, bytes: &'a [u8]) -> Unchecked<'a> {
        Unchecked { decoder: self, bytes, fault: Cell::new(None) }
    }

    /// The value with its field names, for a visitor.
    pub fn view<'a>(&'a self, v: &'a Value) -> ValueView<'a> {
        ValueView { schema: &self.lowered.schema, ty: &self.root, value: v }
    }
}

/// A message decoded as it is shown ([`MsgDecoder::unchecked`]).
pub struct Unchecked<'a> {
    decoder: &'a MsgDecoder,
    bytes: &'a [u8],
    fault: Cell<Option<DecodeFault>>,
}

impl Unchecked<'_> {
    /// Why the visit stopped partway, if it did (taken: asked again, `None`).
    pub fn fault(&self) -> Option<DecodeFault> {
        self.fault.take()
    }
}

impl crate::log::TryVisit for Unchecked<'_> {
    fn try_visit_dyn(&self, v: &mut dyn Visitor) -> bool {
        match self.decoder.visit_as(self.bytes, None, v) {
            Ok(()) => true,
            Err(f) => {
                self.fault.set(Some(f));
                false
            }
        }
    }
}

/// A message that decodes ([`MsgDecoder::checked`]): each visit decodes it through the plan,
/// showing what [`MsgDecoder::view`] of its [`Value`] shows, under the visit's name.
#[derive(Clone, Copy)]
pub struct Checked<'a> {
    decoder: &'a MsgDecoder,
    bytes: &'a [u8],
}

impl Checked<'_> {
    /// The message's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }
}

impl Visit for Checked<'_> {
    fn visit<V: Visitor + ?Sized>(&self, name: Option<&str>, v: &mut V) {
        // Checked: the plan decodes the bytes whole (what fails, the check failed on).
        let decoded = self.decoder.visit_as(self.bytes, name, v);
        debug_assert!(decoded.is_ok(), "a checked message decodes");
    }
}

/// Message types from `.msg` files, by (`pkg/Type`, md5).
#[derive(Debug, Default)]
pub struct Registry {
    types: BTreeMap<(String, String), Arc<MsgDecoder>>,
}

impl Registry {
    /// Every `.msg` file under `dirs` (searched recursively; packages from the paths, see
    /// [`MsgSet::add_msg_file`]).
    pub fn from_dirs(dirs: &[PathBuf]) -> Result<Registry, Vec<SchemaError>> {
        let mut files = Vec::new();
        for d in dirs {
            collect_msg_files(d, &mut files);
        }
        files.sort();
        let set = ros::compile_msg_files(&files)?;
        let mut r = Registry::default();
        for name in set.types.keys() {
            if let Some(d) = MsgDecoder::new(&set, name) {
                r.types.insert((name.clone(), d.md5.clone()), Arc::new(d));
            }
        }
        Ok(r)
    }

    pub fn get(&self, ty: &str, md5: &str) -> Option<&Arc<MsgDecoder>> {
        self.types.get(&(ty.to_string(), md5.to_string()))
    }

    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
}

fn collect_msg_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_msg_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "msg") {
            out.push(p);
        }
    }
}

/// What is known about one connection's type.
#[derive(Clone, Debug)]
pub struct ConnType {
    /// Whether genmsg's md5 of the embedded definition equals the connection's `md5sum`.
    pub md5_ok: bool,
    /// genmsg's md5 of the embedded definition, when it compiles.
    pub computed_md5: Option<String>,
    /// What is wrong, if anything (empty definition, md5 mismatch, a definition that does not
    /// compile), and what was done about it.
    pub problem: Option<String>,
    /// The decoder used for its messages, if there is one.
    pub decoder: Option<Arc<MsgDecoder>>,
}

/// The types of every connection of a bag.
#[derive(Debug, Default)]
pub struct Decoders {
    pub conns: BTreeMap<u32, ConnType>,
}

impl Decoders {
    /// Compiles every connection's definition (once per distinct type and text). `label` names
    /// the bag in diagnostics.
    pub fn new(label: &str, conns: &BTreeMap<u32, Connection>, registry: Option<&Registry>) -> Decoders {
        let mut cache: BTreeMap<(&str, &str), Result<Arc<MsgDecoder>, String>> = BTreeMap::new();
        let mut out = Decoders::default();
        for (id, c) in conns {
            let compiled = cache
                .entry((c.ty.as_str(), c.message_definition.as_str()))
                .or_insert_with(|| compile(label, c))
                .clone();
            let from_registry = registry.and_then(|r| r.get(&c.ty, &c.md5sum)).cloned();
            let t = match compiled {
                Ok(d) if d.md5 == c.md5sum => {
                    ConnType { md5_ok: true, computed_md5: Some(d.md5.clone()), problem: None, decoder: Some(d) }
                }
                Ok(d) => {
                    let what = if c.message_definition.trim().is_empty() {
                        format!("empty message_definition (md5 {EMPTY_MD5}), but md5sum is {}", c.md5sum)
                    } else {
                        format!("md5 mismatch: md5sum is {}, the definition hashes to {}", c.md5sum, d.md5)
                    };
                    let (problem, decoder) = match from_registry {
                        Some(r) => (format!("{what}; decoded with the registered .msg of the same md5"), Some(r)),
                        None if c.message_definition.trim().is_empty() => {
                            (format!("{what}; not decoded (supply its .msg files with --msg-path)"), None)
                        }
                        None => (format!("{what}; decoded with the embedded definition"), Some(d.clone())),
                    };
                    ConnType { md5_ok: false, computed_md5: Some(d.md5.clone()), problem: Some(problem), decoder }
                }
                Err(e) => {
                    let problem = match &from_registry {
                        Some(_) => format!("{e}; decoded with the registered .msg of the same md5"),
                        None => format!("{e}; not decoded"),
                    };
                    ConnType { md5_ok: false, computed_md5: None, problem: Some(problem), decoder: from_registry }
                }
            };
            out.conns.insert(*id, t);
        }
        out
    }

    pub fn get(&self, conn: u32) -> Option<&ConnType> {
        self.conns.get(&conn)
    }
}

/// The decoder of a connection's embedded definition, or the rendered diagnostics.
fn compile(label: &str, c: &Connection) -> Result<Arc<MsgDecoder>, String> {
    let path = format!("{label}: connection {} ({}) message_definition", c.id, c.topic);
    let set = ros::compile_definition(&path, &c.ty, &c.message_definition)
        .map_err(|errs| errs.iter().map(SchemaError::render).collect::<String>().trim_end().to_string())?;
    MsgDecoder::new(&set, &c.ty)
        .map(Arc::new)
        .ok_or_else(|| format!("{path}: the definition does not define `{}`", c.ty))
}
