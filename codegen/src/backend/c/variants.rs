//! Union variants: a packed struct (fixed size) or `_t`/`_view_t` (variable size) per variant,
//! with its functions, and the name lookup of a union selected by a type name.

use std::fmt::Write;

use super::codec::{ident, Shape};
use super::{c_string, defines, u_lit, Def, Gen};
use logspec_ir::ir::{Struct, TypeId, Union};

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

impl Gen<'_> {
    /// A union's variants: a packed struct (fixed size) or `_t`/`_view_t` (variable size) each,
    /// with their functions. For a union selected by a type name, also the name lookup.
    pub(super) fn union_variants(&mut self, id: TypeId, un: &Union) {
        let mut any = false;
        for (i, var) in un.variants.iter().enumerate() {
            if var.fields.is_empty() || !var.fields.iter().all(|f| self.supported(&f.ty)) {
                continue;
            }
            any = true;
            let sh = self.variant_shape(id, un, i);
            let mut title = format!("{}.{}: the body of this variant.", un.name, var.name);
            if let Some(d) = &var.doc {
                title.push(' ');
                title.push_str(d);
            }
            if sh.fixed() {
                self.packed_variant(&sh, &title);
            } else {
                self.var_structs(&sh, &title);
            }
            self.functions(&sh);
        }
        if any && un.by_name {
            let l = self.n.lower.clone();
            let mac = self.n.mac(id);
            let idx: Vec<Def> = un
                .variants
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    (
                        format!("{mac}_{}_INDEX", ident(&v.name).trim_end_matches('_').to_ascii_uppercase()),
                        format!("{i}"),
                        None,
                    )
                })
                .collect();
            defines(&mut self.out, &idx);
            self.block(
                &format!(
                    "The variant of {} that a type name selects (one of {mac}_*_INDEX): exact names first, then prefixes, then the default; -1 when none does.",
                    un.name
                ),
                true,
            );
            let stem = format!("{l}_{}", self.n.stems[id.0]);
            putln!(self.out, "static inline int {stem}_select(const char *name, size_t len)\n{{");
            let mut prefixes = Vec::new();
            let mut default = None;
            for (i, v) in un.variants.iter().enumerate() {
                match &v.select {
                    Some(logspec_ir::ir::NameMatch::Exact(names)) => {
                        for n in names {
                            putln!(
                                self.out,
                                "    if (len == {}u && {}_MEMCMP(name, {}, {}u) == 0) return {i};",
                                n.len(),
                                self.n.upper,
                                c_string(n.as_bytes()),
                                n.len()
                            );
                        }
                    }
                    Some(logspec_ir::ir::NameMatch::Prefix(p)) => prefixes.push((i, p.clone())),
                    Some(logspec_ir::ir::NameMatch::Default) => default = Some(i),
                    None => {}
                }
            }
            for (i, p) in prefixes {
                putln!(
                    self.out,
                    "    if (len >= {}u && {}_MEMCMP(name, {}, {}u) == 0) return {i};",
                    p.len(),
                    self.n.upper,
                    c_string(p.as_bytes()),
                    p.len()
                );
            }
            putln!(
                self.out,
                "    (void)name;\n    (void)len;\n    return {};\n}}\n",
                default.map_or("-1".to_string(), |d| d.to_string())
            );
        }
    }

    /// A fixed-size variant's packed struct, size macro and static asserts.
    fn packed_variant(&mut self, sh: &Shape, title: &str) {
        let size = sh.size.unwrap_or(0);
        self.block(&format!("{title} {size} bytes on the wire, {}-endian.", sh.endian.as_str()), true);
        let st =
            Struct { name: String::new(), doc: None, endian: sh.endian, fields: sh.fields.to_vec(), size: sh.size };
        let members = self.members(None, &st);
        putln!(self.out, "#pragma pack(push, 1)\ntypedef struct {} {{", sh.stem);
        for (decl, comment) in &members {
            if comment.is_empty() {
                putln!(self.out, "    {decl}");
            } else {
                putln!(self.out, "    {decl} /**< {comment} */");
            }
        }
        putln!(self.out, "}} {};\n#pragma pack(pop)", sh.enc_ty());
        let mut defs = vec![(format!("{}_SIZE", sh.mac), u_lit(size.into()), None)];
        defs.extend(self.const_defs(&sh.mac, sh.fields));
        defines(&mut self.out, &defs);
        let sa = format!("{}_STATIC_ASSERT", self.n.upper);
        putln!(self.out, "{sa}(sizeof({}) == {}_SIZE, \"{} must be {size} bytes\");", sh.enc_ty(), sh.mac, sh.enc_ty());
    }
}
