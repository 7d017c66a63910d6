//! genmsg's md5 of a message type (`gentools.compute_md5`), the fingerprint every ROS1
//! connection carries: constants first (`TYPE NAME=VALUE`), then fields, builtins as written
//! (`float64[9] x`), message fields as the md5 of their type with the array suffix dropped.

use std::collections::BTreeMap;

use md5::{Digest, Md5};

use super::{Base, MsgSet};

/// The md5 text of `name` (what genmsg hashes). `memo` caches the md5 of nested types.
pub fn md5_text(set: &MsgSet, name: &str, memo: &mut BTreeMap<String, String>) -> Option<String> {
    let spec = set.get(name)?;
    let mut lines = Vec::with_capacity(spec.constants.len() + spec.fields.len());
    for c in &spec.constants {
        lines.push(format!("{} {}={}", c.ty.name(), c.name, c.value));
    }
    for f in &spec.fields {
        match &f.base {
            Base::Builtin(_) => lines.push(format!("{} {}", f.written, f.name)),
            Base::Msg(sub) => lines.push(format!("{} {}", md5_memo(set, sub, memo)?, f.name)),
        }
    }
    Some(lines.join("\n").trim().to_string())
}

/// The md5 of `name` as 32 lowercase hex digits, or `None` when `name` (or a type it uses) is
/// not in the set. The set must be resolved (no cycles).
pub fn md5(set: &MsgSet, name: &str) -> Option<String> {
    md5_memo(set, name, &mut BTreeMap::new())
}

fn md5_memo(set: &MsgSet, name: &str, memo: &mut BTreeMap<String, String>) -> Option<String> {
    if let Some(m) = memo.get(name) {
        return Some(m.clone());
    }
    let text = md5_text(set, name, memo)?;
    let digest = Md5::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    memo.insert(name.to_string(), hex.clone());
    Some(hex)
}
