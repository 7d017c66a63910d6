//! Struct and variant sizes: computed with the field offsets in dependency order (which also
//! finds the types that contain themselves), and required to be fixed for a header.

use std::collections::BTreeMap;

use super::{Cx, Decl};
use crate::diag::Code;
use crate::ir::{self, Ty, TypeDef, TypeId};
use crate::layout;
use crate::schema::{Span, StructDecl};

impl Cx {
    /// Reports the first field that keeps a header struct from having a fixed size.
    pub(super) fn fixed_size(&mut self, schema: &ir::Schema, id: TypeId, decl: &StructDecl, what: &str) {
        let s = schema.strukt(id);
        if s.size.is_some() {
            return;
        }
        let Some((f, fd)) = s.fields.iter().zip(&decl.fields).find(|(f, _)| schema.size_of(&f.ty).is_none()) else {
            return;
        };
        let span = fd.ty.as_ref().map_or(fd.span.clone(), |t| t.span.clone());
        let d = self.err(
            Code::NotFixedSize,
            &span,
            format!("{what} must have a fixed size, but field `{}` does not", f.name),
        );
        d.label = Some("its size depends on the data".into());
        d.help = Some("use fixed-size types only: numbers, `bool`, enums, flags, `T[N]`, `bytes[N]`, `string[N]` and structs made of those".into());
    }

    /// Computes struct and variant sizes and field offsets, in dependency order, and reports
    /// structs that contain themselves.
    pub(super) fn compute_sizes(&mut self, types: &mut [TypeDef], decls: &[(String, Span, Decl<'_>)]) -> bool {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Todo,
            Busy,
            Done,
        }
        fn deps(ty: &Ty) -> Option<usize> {
            match ty {
                Ty::Named(id) | Ty::Union { id, .. } | Ty::ParamUnion { id, .. } => Some(id.0),
                Ty::Array { elem, .. } => deps(elem),
                _ => None,
            }
        }
        /// `stack` holds the types being visited, each with the field (`Type.field`) leading on.
        fn visit(
            rules: ir::Rules,
            i: usize,
            types: &mut [TypeDef],
            state: &mut [State],
            stack: &mut Vec<(usize, String)>,
            cycles: &mut BTreeMap<usize, String>,
        ) {
            if state[i] == State::Done {
                return;
            }
            if state[i] == State::Busy {
                let from = stack.iter().position(|(t, _)| *t == i).unwrap_or(0);
                let path: Vec<&str> = stack[from..].iter().map(|(_, via)| via.as_str()).collect();
                let name = types[i].name().to_string();
                cycles.entry(i).or_insert_with(|| format!("{} -> {name}", path.join(" -> ")));
                return;
            }
            state[i] = State::Busy;
            let mut d: Vec<(usize, String)> = Vec::new();
            match &types[i] {
                TypeDef::Struct(s) => {
                    d.extend(s.fields.iter().filter_map(|f| Some((deps(&f.ty)?, format!("{}.{}", s.name, f.name)))));
                }
                TypeDef::Union(u) => {
                    for v in &u.variants {
                        d.extend(
                            v.fields
                                .iter()
                                .filter_map(|f| Some((deps(&f.ty)?, format!("{}.{}.{}", u.name, v.name, f.name)))),
                        );
                    }
                }
                _ => {}
            }
            for (j, via) in d {
                stack.push((i, via));
                visit(rules, j, types, state, stack, cycles);
                stack.pop();
            }
            let sizes: Vec<Option<u32>> = types
                .iter()
                .map(|t| match t {
                    TypeDef::Struct(s) => s.size,
                    TypeDef::Enum(e) => Some(e.base.size()),
                    TypeDef::Flags(f) => Some(f.base.size()),
                    _ => None,
                })
                .collect();
            let named = |id: TypeId| sizes[id.0];
            match &mut types[i] {
                TypeDef::Struct(s) => s.size = layout::place_fields(rules, &named, &mut s.fields),
                TypeDef::Union(u) => {
                    for v in &mut u.variants {
                        v.size = layout::place_fields(rules, &named, &mut v.fields);
                    }
                }
                _ => {}
            }
            state[i] = State::Done;
        }
        let mut state = vec![State::Todo; types.len()];
        let mut cycles = BTreeMap::new();
        for i in 0..types.len() {
            visit(self.rules, i, types, &mut state, &mut Vec::new(), &mut cycles);
        }
        let recursive = !cycles.is_empty();
        for (i, path) in cycles {
            let d = self.err(Code::RecursiveType, &decls[i].1, format!("`{}` contains itself: {path}", decls[i].0));
            d.label = Some("recursive type".into());
            d.help = Some("a type cannot contain itself, directly or through other types, not even in an array".into());
        }
        recursive
    }
}
