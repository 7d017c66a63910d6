//! Enums and flags: their integer base type, and their values' names, numbers and bits.

use std::collections::{BTreeMap, BTreeSet};

use super::names::bad_ident;
use super::{inner_span, is_ident, Cx};
use crate::diag::Code;
use crate::ir::{self, Prim, TypeDef};
use crate::schema::{EnumDecl, FlagsDecl, Sp};

impl Cx {
    fn base(&mut self, base: &Sp<String>, unsigned: bool) -> Prim {
        match Prim::from_name(&base.value) {
            Some(p) if !p.is_float() && (!unsigned || p.is_unsigned()) => p,
            _ if base.is_placeholder() => Prim::U8,
            _ => {
                let want =
                    if unsigned { "an unsigned integer type (u8..u64)" } else { "an integer type (u8..u64, i8..i64)" };
                self.err(
                    Code::NotAnInteger,
                    &inner_span(&base.span),
                    format!("`base` must be {want}, found `{}`", base.value),
                );
                Prim::U8
            }
        }
    }

    pub(super) fn enumeration(&mut self, e: &EnumDecl) -> TypeDef {
        let base = self.base(&e.base, false);
        let mut values = Vec::new();
        let mut names = BTreeSet::new();
        let mut seen = BTreeMap::new();
        let base_ok = !e.base.is_placeholder() && Prim::from_name(&e.base.value).is_some_and(|p| !p.is_float());
        for v in &e.values {
            self.value_name("enum", &e.name.value, &v.name, &mut names);
            if v.value.is_placeholder() {
                continue;
            }
            if let Some(prev) = seen.insert(v.value.value, v.name.value.clone()) {
                self.err(
                    Code::DuplicateValue,
                    &v.value.span,
                    format!("value {} is used by both `{prev}` and `{}`", v.value.value, v.name.value),
                )
                .help =
                    Some("each value of an enum needs its own number; to give one value two names, drop one".into());
            }
            if base_ok {
                self.fits(v.value.value, base, &v.value.span, &format!("enum value `{}` =", v.name.value));
            }
            values.push(ir::EnumValue {
                name: v.name.value.clone(),
                value: v.value.value,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
            });
        }
        TypeDef::Enum(ir::Enum {
            name: e.name.value.clone(),
            doc: e.doc.as_ref().map(|d| d.value.clone()),
            base,
            values,
        })
    }

    /// Checks the name of an enum value or a flag: an identifier, used once in its type.
    fn value_name(&mut self, kind: &str, owner: &str, name: &Sp<String>, names: &mut BTreeSet<String>) {
        if name.is_placeholder() {
            return;
        }
        if !is_ident(&name.value) {
            bad_ident(self, &name.span, &format!("`{}` is not a valid identifier", name.value), &name.value);
        }
        if !names.insert(name.value.clone()) {
            self.err(Code::DuplicateValue, &name.span, format!("{kind} `{owner}` names `{}` twice", name.value));
        }
    }

    pub(super) fn flags(&mut self, f: &FlagsDecl) -> TypeDef {
        let base = self.base(&f.base, true);
        let mut flags = Vec::new();
        let mut names = BTreeSet::new();
        let mut bits = BTreeMap::new();
        let base_ok = !f.base.is_placeholder() && Prim::from_name(&f.base.value).is_some_and(|p| p.is_unsigned());
        for v in &f.flags {
            self.value_name("flags", &f.name.value, &v.name, &mut names);
            if v.value.is_placeholder() {
                continue;
            }
            if let Some(prev) = bits.insert(v.value.value, v.name.value.clone()) {
                self.err(
                    Code::DuplicateValue,
                    &v.value.span,
                    format!("bit {} is used by both `{prev}` and `{}`", v.value.value, v.name.value),
                );
            }
            let width = i128::from(base.size() * 8);
            if base_ok && (v.value.value < 0 || v.value.value >= width) {
                self.err(Code::FlagOutOfRange, &v.value.span, format!("bit {} is outside `{base}`", v.value.value))
                    .label = Some(format!("`{base}` has bits 0..={}", width - 1));
            }
            flags.push(ir::Flag {
                name: v.name.value.clone(),
                bit: v.value.value.clamp(0, 63) as u32,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
            });
        }
        TypeDef::Flags(ir::Flags {
            name: f.name.value.clone(),
            doc: f.doc.as_ref().map(|d| d.value.clone()),
            base,
            flags,
            fields: Vec::new(),
        })
    }
}
