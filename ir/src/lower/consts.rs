//! Const values (`value = ...`): checked against the field's type when the field is lowered, and
//! string consts against the field's fixed length once the whole schema is built.

use super::{Cx, Decl};
use crate::diag::Code;
use crate::ir::{self, ConstValue, Len, Prim, Ty, TypeDef};
use crate::schema::{ConstDecl, FieldDecl, Sp, Span};

impl Cx {
    pub(super) fn konst(
        &mut self,
        v: &Sp<ConstDecl>,
        f: &FieldDecl,
        ty: &Ty,
        decls: &[(String, Span, Decl<'_>)],
    ) -> Option<ConstValue> {
        match (&v.value, ty) {
            // The type is already reported as wrong; a const cannot be judged against it.
            (_, Ty::Pad(0)) => None,
            (ConstDecl::Int(i), Ty::Prim(p)) if !p.is_float() => {
                self.fits(*i, *p, &v.span, "const value");
                Some(ConstValue::Int(*i))
            }
            (ConstDecl::Int(i), Ty::Named(id)) if matches!(decls[id.0].2, Decl::Enum(_)) => {
                if let Decl::Enum(e) = decls[id.0].2 {
                    if let Some(p) = Prim::from_name(&e.base.value).filter(|p| !p.is_float()) {
                        self.fits(*i, p, &v.span, "const value");
                    }
                }
                Some(ConstValue::Int(*i))
            }
            // Only fixed-length fields: a const has one length, so a prefix would be redundant.
            (ConstDecl::Str(s), Ty::Bytes(Len::Fixed(_)) | Ty::Str(Len::Fixed(_))) => {
                Some(ConstValue::Bytes(s.as_bytes().to_vec()))
            }
            (value, _) => {
                let name = f.name.as_ref().map_or("", |n| n.value.as_str());
                let written = f.ty.as_ref().map_or(String::new(), |t| t.value.clone());
                let d = self.err(
                    Code::BadConst,
                    &v.span,
                    match value {
                        ConstDecl::Int(_) => {
                            format!("an integer const cannot go in field `{name}` of type `{written}`")
                        }
                        ConstDecl::Str(_) => format!("a string const cannot go in field `{name}` of type `{written}`"),
                    },
                );
                d.help = Some(match value {
                    ConstDecl::Str(s) => format!("string consts need a fixed-length `bytes[N]` or `string[N]`: e.g. `type = \"bytes[{}]\"` for these {} bytes", s.len(), s.len()),
                    ConstDecl::Int(_) => "integer consts need an integer or enum type; for bytes, write the const as a string".into(),
                });
                None
            }
        }
    }

    /// String consts must have exactly the length of their fixed field.
    pub(super) fn check_const_sizes(&mut self, schema: &ir::Schema, decls: &[(String, Span, Decl<'_>)]) {
        for (i, t) in schema.types.iter().enumerate() {
            let lists: Vec<(&[ir::Field], &[FieldDecl])> = match (t, decls[i].2) {
                (TypeDef::Struct(s), Decl::Struct(d)) => vec![(&s.fields, &d.fields)],
                (TypeDef::Struct(s), Decl::Record(d)) => vec![(&s.fields, &d.fields)],
                (TypeDef::Union(u), Decl::Union(d)) => {
                    u.variants.iter().zip(&d.variants).map(|(v, vd)| (&v.fields[..], &vd.fields[..])).collect()
                }
                _ => continue,
            };
            for (f, fd) in lists.into_iter().flat_map(|(fs, fds)| fs.iter().zip(fds)) {
                if let (Some(ConstValue::Bytes(b)), Ty::Bytes(Len::Fixed(n)) | Ty::Str(Len::Fixed(n))) =
                    (&f.value, &f.ty)
                {
                    if b.len() != *n as usize {
                        let span = fd.value.as_ref().map_or(fd.span.clone(), |v| v.span.clone());
                        let d = self.err(
                            Code::BadConst,
                            &span,
                            format!("const is {} bytes long, but field `{}` is {n} bytes", b.len(), f.name),
                        );
                        d.label = Some(format!("{} bytes", b.len()));
                        d.help = Some(format!(
                            "a const must fill its field exactly: write {n} bytes, or make the field `{}[{}]`",
                            if matches!(f.ty, Ty::Str(_)) { "string" } else { "bytes" },
                            b.len()
                        ));
                    }
                }
            }
        }
    }
}
