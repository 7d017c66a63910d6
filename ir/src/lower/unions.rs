//! Unions and what selects their variants: a tag field (an earlier integer or enum field), a
//! reader parameter (`[[param]]`), or a type name given at run time (`match`, `prefix`,
//! `default`); and the checks that every variant's tag can be selected.

use std::collections::{BTreeMap, BTreeSet};

use super::names::bad_ident;
use super::{is_ident, Cx, Decl};
use crate::diag::{did_you_mean, Code};
use crate::ir::{self, Endian, Prim, Ty, TypeDef, TypeId};
use crate::schema::{FieldDecl, ParamDecl, Sp, Span, UnionDecl};

/// What selects a union's variant, for messages: a tag field or a reader parameter.
struct TagSource<'a> {
    /// E.g. "the tag field `kind` (u8) of `RecMsg`".
    what: &'a str,
    name: &'a str,
    /// "tag field" or "parameter".
    kind: &'a str,
    /// The `tag` or `param` key of the union field.
    span: &'a Span,
}

impl Cx {
    /// The index of the reader parameter that selects a union field's variant (`param = "..."`).
    pub(super) fn union_param(&mut self, f: &FieldDecl) -> Option<usize> {
        let p = f.param.as_ref().filter(|p| !p.is_placeholder())?;
        if let Some(t) = f.tag.as_ref().filter(|t| !t.is_placeholder()) {
            self.err(Code::BadParamUse, &t.span, "a union field takes either `tag` or `param`, not both").help =
                Some("`tag` names an earlier field; `param` a reader parameter declared with `[[param]]`".into());
            return None;
        }
        if let Some(i) = self.param_names.iter().position(|n| *n == p.value) {
            return Some(i);
        }
        let hint = did_you_mean(&p.value, self.param_names.iter().map(String::as_str)).map(str::to_string);
        let d = self.err(Code::BadParamUse, &p.span, format!("no reader parameter named `{}`", p.value));
        d.label = Some("not declared with `[[param]]`".into());
        d.help = Some(match hint {
            Some(h) => format!("did you mean `{h}`?"),
            None => format!("declare it: `[[param]]` with `name = \"{}\"` and an integer or enum `type`", p.value),
        });
        None
    }

    /// Lowers the `[[param]]` declarations: unique identifiers with an integer or enum type.
    pub(super) fn params(
        &mut self,
        decls: &[ParamDecl],
        names: &BTreeMap<String, TypeId>,
        types: &[(String, Span, Decl<'_>)],
    ) -> Vec<ir::Param> {
        let mut out = Vec::with_capacity(decls.len());
        for (i, p) in decls.iter().enumerate() {
            if !p.name.is_placeholder() {
                if !is_ident(&p.name.value) {
                    bad_ident(
                        self,
                        &p.name.span,
                        &format!("parameter name `{}` is not a valid identifier", p.name.value),
                        &p.name.value,
                    );
                } else if decls[..i].iter().any(|q| q.name.value == p.name.value) {
                    self.err(Code::BadParam, &p.name.span, format!("parameter `{}` is declared twice", p.name.value))
                        .label = Some("declared again here".into());
                }
            }
            let ty = match (Prim::from_name(&p.ty.value), names.get(&p.ty.value)) {
                (Some(prim), _) if !prim.is_float() => Ty::Prim(prim),
                (None, Some(id)) if matches!(types[id.0].2, Decl::Enum(_)) => Ty::Named(*id),
                _ => {
                    if !p.ty.is_placeholder() {
                        let d = self.err(
                            Code::BadParam,
                            &p.ty.span,
                            format!("a parameter's type must be an integer type or an enum, found `{}`", p.ty.value),
                        );
                        d.label = Some("not an integer or enum type".into());
                        d.help = Some("e.g. `type = \"u16\"`, or the name of an `[[enum]]`".into());
                    }
                    Ty::Prim(Prim::I64)
                }
            };
            out.push(ir::Param { name: p.name.value.clone(), ty, doc: p.doc.as_ref().map(|d| d.value.clone()) });
        }
        out
    }

    pub(super) fn union_tag(&mut self, f: &FieldDecl, earlier: &[ir::Field], later: &[FieldDecl]) -> Option<usize> {
        let Some(tag) = &f.tag else {
            let span = f.ty.as_ref().map_or(f.span.clone(), |t| t.span.clone());
            self.err(
                Code::BadUnionTag,
                &span,
                "a union field needs `tag`, the name of an earlier field that selects the variant",
            )
            .help = Some(match earlier.last() {
                Some(prev) => format!("add `tag = \"<field name>\"`, e.g. `tag = \"{}\"`", prev.name),
                None => "add an integer or enum field before it, and `tag = \"<that field>\"`".into(),
            });
            return None;
        };
        if tag.is_placeholder() {
            return None;
        }
        match earlier.iter().position(|e| e.name == tag.value && !e.is_padding()) {
            Some(i) => Some(i),
            None if later.iter().any(|l| l.name.as_ref().is_some_and(|n| n.value == tag.value)) => {
                let this = f.name.as_ref().map_or("", |n| n.value.as_str());
                let d = self.err(
                    Code::BadUnionTag,
                    &tag.span,
                    format!("union tag field `{}` comes after the union field `{this}`", tag.value),
                );
                d.label = Some("declared later".into());
                d.help =
                    Some(format!("move `{}` before `{this}`: a decoder must read the tag before the union", tag.value));
                None
            }
            None => {
                let hint = did_you_mean(&tag.value, earlier.iter().map(|e| e.name.as_str())).map(str::to_string);
                let d = self.err(
                    Code::BadUnionTag,
                    &tag.span,
                    format!("union tag field `{}` is not an earlier field of this struct", tag.value),
                );
                d.label = Some("no such field before this one".into());
                d.help = Some(match hint {
                    Some(h) => format!("did you mean `{h}`?"),
                    None => "the tag must be an integer or enum field declared before the union field".into(),
                });
                None
            }
        }
    }

    pub(super) fn union(
        &mut self,
        u: &UnionDecl,
        default: Endian,
        names: &BTreeMap<String, TypeId>,
        decls: &[(String, Span, Decl<'_>)],
    ) -> TypeDef {
        let endian = u.endian.as_ref().map(|e| self.endian(e)).unwrap_or(default);
        let mut variants = Vec::new();
        let mut vnames = BTreeSet::new();
        let mut tags = BTreeMap::new();
        let mut names_seen = BTreeMap::new();
        let mut default_seen: Option<String> = None;
        let by_name = u.variants.iter().any(|v| !v.matches.is_empty() || v.prefix.is_some() || v.default.is_some());
        for v in &u.variants {
            if !v.name.is_placeholder() {
                if !is_ident(&v.name.value) {
                    bad_ident(
                        self,
                        &v.name.span,
                        &format!("`{}` is not a valid identifier", v.name.value),
                        &v.name.value,
                    );
                }
                if !vnames.insert(v.name.value.clone()) {
                    self.err(
                        Code::DuplicateName,
                        &v.name.span,
                        format!("union `{}` has two variants named `{}`", u.name.value, v.name.value),
                    );
                }
            }
            let selectors = usize::from(!v.matches.is_empty())
                + usize::from(v.prefix.is_some())
                + usize::from(v.default.as_ref().is_some_and(|d| d.value));
            let select = if by_name {
                if let Some(t) = &v.tag {
                    self.err(
                        Code::BadUnionTag,
                        &t.span,
                        format!(
                            "union `{}` is selected by type name, so its variants have no integer `tag`",
                            u.name.value
                        ),
                    )
                    .help = Some(
                        "select this variant with `match = [\"name\", ...]`, `prefix = \"...\"` or `default = true`"
                            .into(),
                    );
                }
                if selectors != 1 {
                    self.err(Code::BadUnionTag, &v.name.span, format!("variant `{}` of a union selected by type name needs exactly one of `match`, `prefix` and `default = true`", v.name.value));
                }
                for m in &v.matches {
                    if let Some(prev) = names_seen.insert(m.value.clone(), v.name.value.clone()) {
                        self.err(
                            Code::DuplicateValue,
                            &m.span,
                            format!("type name {:?} selects both `{prev}` and `{}`", m.value, v.name.value),
                        );
                    }
                }
                if v.default.as_ref().is_some_and(|d| d.value) {
                    if let Some(prev) = default_seen.replace(v.name.value.clone()) {
                        self.err(
                            Code::DuplicateValue,
                            &v.name.span,
                            format!(
                                "union `{}` has two default variants, `{prev}` and `{}`",
                                u.name.value, v.name.value
                            ),
                        );
                    }
                }
                Some(match (&v.prefix, v.matches.is_empty()) {
                    (Some(p), _) => ir::NameMatch::Prefix(p.value.clone()),
                    (None, false) => ir::NameMatch::Exact(v.matches.iter().map(|m| m.value.clone()).collect()),
                    (None, true) => ir::NameMatch::Default,
                })
            } else {
                match &v.tag {
                    Some(t) => {
                        if let Some(prev) = tags.insert(t.value, v.name.value.clone()) {
                            self.err(
                                Code::DuplicateValue,
                                &t.span,
                                format!("tag {} selects both `{prev}` and `{}`", t.value, v.name.value),
                            );
                        }
                    }
                    None => {
                        self.err(Code::MissingKey, &v.span, format!("missing key `tag` in variant `{}`", v.name.value))
                            .help = Some("add `tag = <integer>`: the value of the tag field that selects this variant (or, for a union selected by type name, `match`, `prefix` or `default = true`)".into());
                    }
                }
                None
            };
            // A variant of a union selected by name is decoded from exactly the value's bytes, so
            // its last field may run to the end.
            let fields = self.fields(&v.fields, endian, names, decls, by_name);
            variants.push(ir::Variant {
                name: v.name.value.clone(),
                tag: if by_name { variants.len() as i128 } else { v.tag.as_ref().map_or(0, |t| t.value) },
                select,
                doc: v.doc.as_ref().map(|d| d.value.clone()),
                fields,
                size: None,
            });
        }
        TypeDef::Union(ir::Union {
            name: u.name.value.clone(),
            doc: u.doc.as_ref().map(|d| d.value.clone()),
            endian,
            variants,
            by_name,
        })
    }

    /// A union's tag field must be an integer (or enum) that can hold every variant's tag; with an
    /// enum tag, every variant's tag must be one of the enum's values.
    pub(super) fn check_unions(&mut self, types: &[TypeDef], decls: &[(String, Span, Decl<'_>)], params: &[ir::Param]) {
        for (ti, t) in types.iter().enumerate() {
            // Each field list (a struct's, or one union variant's) is checked on its own, because a
            // tag field index counts within its own list.
            let lists: Vec<(Vec<&ir::Field>, Vec<&FieldDecl>)> = match (t, decls[ti].2) {
                (TypeDef::Struct(s), Decl::Struct(d)) => vec![(s.fields.iter().collect(), d.fields.iter().collect())],
                (TypeDef::Struct(s), Decl::Record(d)) => vec![(s.fields.iter().collect(), d.fields.iter().collect())],
                (TypeDef::Union(u), Decl::Union(d)) => u
                    .variants
                    .iter()
                    .zip(&d.variants)
                    .map(|(v, vd)| (v.fields.iter().collect(), vd.fields.iter().collect()))
                    .collect(),
                _ => continue,
            };
            let owner = match decls[ti].2 {
                Decl::Record(r) => r.name.value.as_str(),
                _ => decls[ti].0.as_str(),
            };
            for (fields, field_decls) in lists {
                for (fi, f) in fields.iter().enumerate() {
                    if let (Ty::ParamUnion { id, param }, Some(pdecl)) = (&f.ty, field_decls[fi].param.as_ref()) {
                        self.check_param_union(types, decls, params, (*id, *param), pdecl);
                        continue;
                    }
                    let Ty::Union { id, tag_field } = &f.ty else { continue };
                    let Some(tag_decl) = field_decls[fi].tag.as_ref() else { continue };
                    let TypeDef::Union(u) = &types[id.0] else { continue };
                    if u.by_name {
                        self.err(Code::BadUnionTag, &tag_decl.span, format!("union `{}` is selected by a type name given at run time, not by a field", u.name))
                            .help = Some(format!("store the value as bytes (e.g. `size = \"u16\"`) and decode it with `{}::decode_named(type_name, bytes)`", u.name));
                        continue;
                    }
                    // The tag field is found among the same struct's earlier fields; for variants, the
                    // flattened list still puts it before the union field.
                    let Some(tag) = fields.get(*tag_field) else { continue };
                    let (base, enum_values) = match &tag.ty {
                        // The tag field's own type is wrong, and already reported.
                        Ty::Pad(0) => continue,
                        Ty::Prim(p) if !p.is_float() => (*p, None),
                        Ty::Named(eid) => match &types[eid.0] {
                            TypeDef::Enum(e) => (e.base, Some(e)),
                            _ => {
                                self.err(
                                    Code::BadUnionTag,
                                    &tag_decl.span,
                                    format!("union tag `{}` must be an integer or enum field", tag.name),
                                )
                                .label = Some(format!("`{}` is a {}", tag.name, kind_of(&types[eid.0])));
                                continue;
                            }
                        },
                        _ => {
                            let written = field_decls
                                .iter()
                                .find(|d| d.name.as_ref().is_some_and(|n| n.value == tag.name))
                                .and_then(|d| d.ty.as_ref())
                                .map_or(String::new(), |t| t.value.clone());
                            self.err(
                                Code::BadUnionTag,
                                &tag_decl.span,
                                format!("union tag `{}` must be an integer or enum field", tag.name),
                            )
                            .label = Some(format!("`{}` is `{written}`", tag.name));
                            continue;
                        }
                    };
                    let union_decl = match decls[id.0].2 {
                        Decl::Union(ud) => ud,
                        _ => continue,
                    };
                    let what = format!("the tag field `{}` ({base}) of `{owner}`", tag.name);
                    let sel = TagSource { what: &what, name: &tag.name, kind: "tag field", span: &tag_decl.span };
                    self.check_variant_tags(u, union_decl, base, enum_values, &sel);
                }
            }
        }
    }

    /// Checks a union's variant tags against what selects them (a tag field or a parameter of
    /// integer type `base`, or of an enum type): every tag fits, and every enum value has a variant.
    fn check_variant_tags(
        &mut self,
        u: &ir::Union,
        union_decl: &UnionDecl,
        base: Prim,
        enum_values: Option<&ir::Enum>,
        sel: &TagSource<'_>,
    ) {
        for (v, vd) in u.variants.iter().zip(&union_decl.variants) {
            let Some(vtag) = &vd.tag else { continue };
            let (lo, hi) = base.int_range().expect("integer");
            if v.tag < lo || v.tag > hi {
                let d = self.err(
                    Code::UnmatchedUnionTag,
                    &vtag.span,
                    format!("variant `{}` has tag {}, which {} cannot hold", v.name, v.tag, sel.what),
                );
                d.label = Some(format!("`{base}` holds {lo}..={hi}"));
                d.help = Some(format!("widen the {} `{}`, or renumber the variant", sel.kind, sel.name));
            } else if let Some(e) = enum_values {
                if !e.values.iter().any(|ev| ev.value == v.tag) {
                    self.err(
                        Code::UnmatchedUnionTag,
                        &vtag.span,
                        format!(
                            "variant `{}` has tag {}, which is not a value of the tag enum `{}`",
                            v.name, v.tag, e.name
                        ),
                    )
                    .help = Some(format!(
                        "`{}` has values {}",
                        e.name,
                        e.values.iter().map(|ev| format!("{}={}", ev.name, ev.value)).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        if let Some(e) = enum_values {
            let missing: Vec<String> = e
                .values
                .iter()
                .filter(|ev| !u.variants.iter().any(|v| v.tag == ev.value))
                .map(|ev| format!("{} = {}", ev.name, ev.value))
                .collect();
            if !missing.is_empty() {
                let d = self.err(
                    Code::UnmatchedUnionTag,
                    sel.span,
                    format!(
                        "tag enum `{}` has values that no variant of union `{}` handles: {}",
                        e.name,
                        u.name,
                        missing.join(", ")
                    ),
                );
                d.label = Some(format!("`{}` is a `{}`", sel.name, e.name));
                d.help = Some(
                    "add a variant (it may have no fields) for each value, so that every valid tag decodes".into(),
                );
            }
        }
    }

    /// Checks a union selected by a reader parameter: not selected by name, and with variant tags
    /// that the parameter's type can hold.
    fn check_param_union(
        &mut self,
        types: &[TypeDef],
        decls: &[(String, Span, Decl<'_>)],
        params: &[ir::Param],
        (id, param): (TypeId, usize),
        pdecl: &Sp<String>,
    ) {
        let Some(p) = params.get(param) else { return };
        let (TypeDef::Union(u), Decl::Union(union_decl)) = (&types[id.0], decls[id.0].2) else { return };
        if u.by_name {
            self.err(
                Code::BadParamUse,
                &pdecl.span,
                format!("union `{}` is selected by a type name given at run time, not by a parameter", u.name),
            )
            .help = Some(format!("decode it with `{}::decode_named(type_name, bytes)`", u.name));
            return;
        }
        let (base, enum_values) = match &p.ty {
            Ty::Prim(b) => (*b, None),
            Ty::Named(eid) => match &types[eid.0] {
                TypeDef::Enum(e) => (e.base, Some(e)),
                _ => return,
            },
            _ => return,
        };
        let what = format!("the parameter `{}` ({base})", p.name);
        let sel = TagSource { what: &what, name: &p.name, kind: "parameter", span: &pdecl.span };
        self.check_variant_tags(u, union_decl, base, enum_values, &sel);
    }
}

fn kind_of(t: &TypeDef) -> &'static str {
    match t {
        TypeDef::Struct(_) => "struct",
        TypeDef::Enum(_) => "enum",
        TypeDef::Flags(_) => "flags type",
        TypeDef::Union(_) => "union",
        TypeDef::Extern(_) => "external type",
    }
}
