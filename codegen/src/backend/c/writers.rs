//! The typed writers and the record reader of framed formats (`<format>_write_file_header`,
//! `<format>_write_<record>`, `<format>_next_record`), and the per-variant writers of tagged
//! messages (`rlog_r2_message_write_field`): the functions that pair a tag with its body.

use std::fmt::Write;

use super::codec::ident;
use super::codec::Shape;
use super::wire::{base_prim, prefix_max};
use super::{int_lit, one_line, prim_c, snake, Gen};
use logspec_ir::ir::{Field, Prim, Struct, Ty, TypeDef, TypeId};

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

impl Gen<'_> {
    /// The typed writers and the record reader of a framed format.
    pub(super) fn framing_functions(&mut self) {
        let s = self.s;
        let (l, u) = (self.n.lower.clone(), self.n.upper.clone());
        if let Some(fh) = s.file_header {
            let st = s.strukt(fh);
            let sh = self.struct_shape(fh, st);
            if sh.fixed() && self.supported(&Ty::Named(fh)) {
                let sid = s.format.schema_id.as_ref().and_then(|id| id.field.map(|f| (f, id.macro_name.clone())));
                let settable: Vec<&Field> = st
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(i, f)| !f.is_padding() && f.value.is_none() && sid.as_ref().map(|x| x.0) != Some(*i))
                    .map(|(_, f)| f)
                    .collect();
                let scalar = settable.iter().all(|f| base_prim(self, &f.ty).is_some() || f.ty == Ty::Bool);
                let params: Vec<String> = if scalar {
                    settable
                        .iter()
                        .map(|f| format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name))
                        .collect()
                } else {
                    vec![format!("const {} *fields", sh.enc_ty())]
                };
                let mut doc = format!("Writes the file header ({} bytes) at `buf`: constants", st.size.unwrap_or(0));
                if let Some((_, m)) = &sid {
                    doc.push_str(&format!(" and {m}"));
                }
                doc.push_str(" filled in, padding zeroed. Returns the bytes written, or 0 when `cap` is too small.");
                self.block(&doc, true);
                let mut p = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
                p.extend(params);
                putln!(self.out, "static inline size_t {l}_write_file_header({})\n{{", p.join(", "));
                putln!(self.out, "    {} h;\n    size_t k = 0;", sh.enc_ty());
                if scalar {
                    putln!(self.out, "    {u}_MEMSET(&h, 0, sizeof h);");
                    for f in &settable {
                        putln!(self.out, "    h.{0} = {0};", f.name);
                    }
                } else {
                    putln!(self.out, "    h = *fields;");
                }
                if let Some((i, m)) = &sid {
                    putln!(self.out, "    h.{} = {m};", st.fields[*i].name);
                }
                putln!(self.out, "    return {}_encode(buf, cap, &h, &k) == {u}_OK ? k : 0u;\n}}", sh.stem);
                // Reading it back.
                self.block(
                    &format!(
                        "Reads the file header at `buf` (`len` bytes) into `*h`, checking its constants{}. Returns {u}_OK or an error code.",
                        if sid.is_some() { " and schema id" } else { "" }
                    ),
                    true,
                );
                putln!(
                    self.out,
                    "static inline int {l}_read_file_header({} *h, const uint8_t *buf, size_t len)\n{{\n    int e = {}_decode(h, buf, len, NULL);\n    if (e) return e;",
                    sh.enc_ty(),
                    sh.stem
                );
                if let Some((i, m)) = &sid {
                    putln!(self.out, "    if (h->{} != {m}) return {u}_ERR_SCHEMA;", st.fields[*i].name);
                }
                putln!(self.out, "    return {u}_OK;\n}}\n");
            }
        }
        let Some(fr) = &s.framing else { return };
        let hst = s.strukt(fr.header);
        let hsh = self.struct_shape(fr.header, hst);
        let Some(hsize) = hst.size.filter(|_| self.supported(&Ty::Named(fr.header))) else { return };
        let tag_f = &hst.fields[fr.tag];
        let tag_p = base_prim(self, &tag_f.ty).unwrap_or(Prim::U64);
        let len_f = fr.length.map(|i| &hst.fields[i]);
        let extra: Vec<&Field> = hst
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                !f.is_padding()
                    && f.value.is_none()
                    && *i != fr.tag
                    && Some(*i) != fr.length
                    && Some(*i) != fr.timestamp
                    && Some(*i) != fr.checksum.map(|c| c.field)
            })
            .map(|(_, f)| f)
            .collect();
        if !extra.iter().all(|f| base_prim(self, &f.ty).is_some()) {
            return;
        }
        let seal = fr.checksum.map(|c| self.checksum_functions(hsize, c));
        for r in &s.records {
            let body = s.strukt(r.body);
            if !self.supported(&Ty::Named(r.body)) && body.size != Some(0) {
                continue;
            }
            let bsh = self.struct_shape(r.body, body);
            let mut params = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
            if let Some(ts) = fr.timestamp {
                let f = &hst.fields[ts];
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            for f in &extra {
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            let empty = body.size == Some(0);
            if !empty {
                params.push(format!("const {} *p", bsh.enc_ty()));
            }
            self.block(
                &format!(
                    "Writes one {} record (header and payload) at `buf`. Returns the bytes written, or 0 when it does not fit in `cap` bytes{}.",
                    r.name,
                    if body.size.is_none() { " or a length does not fit its field" } else { "" }
                ),
                true,
            );
            let fname = format!("{l}_write_{}", snake(&r.name).to_ascii_lowercase());
            putln!(self.out, "static inline size_t {fname}({})\n{{", params.join(", "));
            putln!(self.out, "    {} h;\n    size_t k = 0;\n    if (cap < {hsize}u) return 0u;", hsh.enc_ty());
            if !empty {
                putln!(
                    self.out,
                    "    if ({}_encode(buf + {hsize}u, cap - {hsize}u, p, &k) != {u}_OK) return 0u;",
                    bsh.stem
                );
            }
            putln!(self.out, "    {u}_MEMSET(&h, 0, sizeof h);");
            putln!(
                self.out,
                "    h.{} = ({}){};",
                tag_f.name,
                self.c_decl(&tag_f.ty).map(|d| d.0).unwrap_or_default(),
                int_lit(r.id.into(), tag_p)
            );
            if let Some(lf) = len_f {
                let lp = base_prim(self, &lf.ty).unwrap_or(Prim::U64);
                // A `size_t` always fits a 64-bit length (and the comparison would be constant).
                if lp.size() < 8 {
                    putln!(self.out, "    if (k > {}) return 0u;", prefix_max(lp));
                }
                putln!(self.out, "    h.{} = ({})k;", lf.name, prim_c(lp));
            }
            if let Some(ts) = fr.timestamp {
                putln!(self.out, "    h.{0} = {0};", hst.fields[ts].name);
            }
            for f in &extra {
                putln!(self.out, "    h.{0} = {0};", f.name);
            }
            putln!(self.out, "    (void){}_encode(buf, {hsize}u, &h, NULL);", hsh.stem);
            if let Some(seal) = &seal {
                putln!(self.out, "    {seal}(buf, {hsize}u + k);");
            }
            putln!(self.out, "    return {hsize}u + k;\n}}\n");
        }
        let trailer = s.framing.as_ref().and_then(|f| f.trailer_bytes(s));
        if trailer.is_some() {
            self.block(
                &format!("Writes the file trailer ({u}_TRAILER_LEN bytes, {u}_TRAILER) at `buf`: the file's last bytes, after its last record. Returns the bytes written, or 0 when `cap` is too small."),
                true,
            );
            putln!(
                self.out,
                "static inline size_t {l}_write_trailer(uint8_t *buf, size_t cap)\n{{\n    if (cap < {u}_TRAILER_LEN) return 0u;\n    {u}_MEMCPY(buf, {u}_TRAILER, {u}_TRAILER_LEN);\n    return {u}_TRAILER_LEN;\n}}\n"
            );
        }
        // The reader.
        let rec_t = format!("{l}_framed_record_t");
        self.block(
            &format!("One record found by {l}_next_record: its decoded header and where its payload is in the buffer."),
            true,
        );
        putln!(
            self.out,
            "typedef struct {l}_framed_record {{\n    {} header;\n    const uint8_t *payload; /**< Points into the buffer given to {l}_next_record. */\n    size_t payload_len;\n    size_t offset; /**< Of the record header, from the start of the buffer. */\n}} {rec_t};",
            hsh.enc_ty()
        );
        self.block(
            &format!(
                "Reads the record at `*pos` in `buf` (`len` bytes; records only, after the file header) into `*rec` and advances `*pos` past it. Returns 1 for a record, 0 at the end of the buffer, or an error code (with `*pos` left at the bad record: every record before it was returned). {}",
                if len_f.is_some() {
                    format!("A known record whose length is not its fixed size is {u}_ERR_LENGTH; an unknown id is returned like any other (skip it by its length).")
                } else {
                    format!("Records carry no length, so an unknown id is {u}_ERR_TAG.")
                } + &if trailer.is_some() {
                    format!(" The buffer ends with the file trailer: 0 where exactly {u}_TRAILER_LEN bytes are left and they are {u}_TRAILER; fewer are {u}_ERR_SHORT, others {u}_ERR_CONST.")
                } else {
                    String::new()
                }
            ),
            true,
        );
        let end = if trailer.is_some() {
            format!("if (at >= len || len - at <= {u}_TRAILER_LEN) {{\n        if (at > len || len - at < {u}_TRAILER_LEN) return {u}_ERR_SHORT;\n        return {u}_MEMCMP(buf + at, {u}_TRAILER, {u}_TRAILER_LEN) == 0 ? 0 : {u}_ERR_CONST;\n    }}")
        } else {
            "if (at >= len) return 0;".to_string()
        };
        putln!(
            self.out,
            "static inline int {l}_next_record(const uint8_t *buf, size_t len, size_t *pos, {rec_t} *rec)\n{{\n    size_t at = *pos, plen = 0;\n    int e;\n    {end}\n    e = {}_decode(&rec->header, buf + at, len - at, NULL);\n    if (e) return e;",
            hsh.stem
        );
        match len_f {
            Some(lf) => {
                putln!(
                    self.out,
                    "    plen = (size_t)rec->header.{};\n    if (plen > len - at - {hsize}u) return {u}_ERR_SHORT;\n    switch (rec->header.{}) {{",
                    lf.name,
                    tag_f.name
                );
                for r in &s.records {
                    if let Some(n) = s.strukt(r.body).size {
                        let rmac = if r.name.starts_with("REC_") {
                            r.name.clone()
                        } else {
                            format!("{}_ID", self.n.mac(r.body))
                        };
                        putln!(
                            self.out,
                            "    case {rmac}:\n        if (plen != {n}u) return {u}_ERR_LENGTH;\n        break;"
                        );
                    }
                }
                putln!(self.out, "    default:\n        break;\n    }}");
            }
            None => {
                putln!(self.out, "    switch (rec->header.{}) {{", tag_f.name);
                for r in &s.records {
                    let rmac =
                        if r.name.starts_with("REC_") { r.name.clone() } else { format!("{}_ID", self.n.mac(r.body)) };
                    let body = s.strukt(r.body);
                    match body.size {
                        Some(n) => putln!(self.out, "    case {rmac}:\n        plen = {n}u;\n        break;"),
                        None if self.supported(&Ty::Named(r.body)) => {
                            let bsh = self.struct_shape(r.body, body);
                            putln!(
                                self.out,
                                "    case {rmac}: {{\n        {} tmp;\n        e = {}_decode(&tmp, buf + at + {hsize}u, len - at - {hsize}u, &plen);\n        if (e) return e;\n        break;\n    }}",
                                bsh.view_ty(),
                                bsh.stem
                            );
                        }
                        None => {}
                    }
                }
                putln!(self.out, "    default:\n        return {u}_ERR_TAG;\n    }}\n    if (plen > len - at - {hsize}u) return {u}_ERR_SHORT;");
            }
        }
        if let Some(c) = fr.checksum {
            putln!(
                self.out,
                "    if ({l}_record_crc(buf + at, {hsize}u + plen) != (uint32_t)rec->header.{}) return {u}_ERR_CHECKSUM;",
                hst.fields[c.field].name
            );
        }
        putln!(
            self.out,
            "    rec->payload = buf + at + {hsize}u;\n    rec->payload_len = plen;\n    rec->offset = at;\n    *pos = at + {hsize}u + plen;\n    return 1;\n}}\n"
        );
        if fr.sync.is_some() || fr.checksum.is_some() {
            self.block(
                &format!(
                    "After {l}_next_record returned an error at `from` (a bad CRC, a length past the end, a wrong sync), the offset of the next record that checks out, searching from `from + 1`; `len` when there is none. The bytes in between are the corrupted region to report."
                ),
                true,
            );
            putln!(
                self.out,
                "static inline size_t {l}_resync(const uint8_t *buf, size_t len, size_t from)\n{{\n    size_t at;\n    {rec_t} r;\n    for (at = from + 1u; at < len; at++) {{\n        size_t p = at;\n        if ({l}_next_record(buf, len, &p, &r) == 1) return at;\n    }}\n    return len;\n}}\n"
            );
        }
    }

    /// The CRC of a framing's `checksum`: a bit-by-bit update (no table: firmware keeps its
    /// flash), the CRC of a whole record, and the function that writes it into the record's
    /// header. Returns that function's name.
    fn checksum_functions(&mut self, hsize: u32, c: logspec_ir::ir::Checksum) -> String {
        let (l, u) = (self.n.lower.clone(), self.n.upper.clone());
        let s = self.s;
        let fr = s.framing.as_ref().expect("a checksum is part of a framing");
        let f = &s.strukt(fr.header).fields[c.field];
        let p = c.algorithm.params();
        let w = p.width;
        let mask = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        let at = f.offset.unwrap_or(0);
        let n = w / 8;
        self.block(
            &format!(
                "{} (width {w}, poly {:#x}, init {:#x}, {}reflected, xorout {:#x}; check value {:#x}): the register after `n` bytes at `p`, from `reg` ({u}_CRC_INIT before the first byte). Bit by bit, no table.",
                c.algorithm.name().to_ascii_uppercase(),
                p.poly,
                p.init,
                if p.reflect { "" } else { "not " },
                p.xorout,
                p.check
            ),
            true,
        );
        let init = if p.reflect { p.init.reverse_bits() >> (32 - w) } else { p.init };
        putln!(self.out, "#define {u}_CRC_INIT {init:#x}u");
        putln!(
            self.out,
            "static inline uint32_t {l}_crc_update(uint32_t reg, const uint8_t *p, size_t n)
{{
    size_t i;
    int b;
    for (i = 0; i < n; i++) {{"
        );
        if p.reflect {
            let rpoly = p.poly.reverse_bits() >> (32 - w);
            putln!(
                self.out,
                "        reg ^= (uint32_t)p[i];
        for (b = 0; b < 8; b++) reg = (reg & 1u) ? (reg >> 1) ^ {rpoly:#x}u : reg >> 1;"
            );
        } else {
            putln!(
                self.out,
                "        reg ^= (uint32_t)p[i] << {};
        for (b = 0; b < 8; b++) reg = ((reg & {:#x}u) ? (reg << 1) ^ {:#x}u : reg << 1) & {mask:#x}u;",
                w - 8,
                1u32 << (w - 1),
                p.poly
            );
        }
        putln!(
            self.out,
            "    }}
    return reg;
}}
"
        );
        let covered = match c.over {
            logspec_ir::ir::ChecksumSpan::Record => {
                format!("the record header without the {} field, then the payload", f.name)
            }
            logspec_ir::ir::ChecksumSpan::Payload => "the payload".to_string(),
        };
        self.block(&format!("The CRC of the record at `rec` (`n` bytes, header and payload) over {covered}."), true);
        putln!(
            self.out,
            "static inline uint32_t {l}_record_crc(const uint8_t *rec, size_t n)
{{
    uint32_t reg = {u}_CRC_INIT;"
        );
        if c.over == logspec_ir::ir::ChecksumSpan::Record {
            if at > 0 {
                putln!(self.out, "    reg = {l}_crc_update(reg, rec, {at}u);");
            }
            if at + n < hsize {
                putln!(self.out, "    reg = {l}_crc_update(reg, rec + {}u, {}u);", at + n, hsize - at - n);
            }
        }
        putln!(
            self.out,
            "    reg = {l}_crc_update(reg, rec + {hsize}u, n - {hsize}u);
    return reg ^ {:#x}u;
}}
",
            p.xorout
        );
        self.block(
            &format!(
                "Writes the CRC of the record at `rec` (`n` bytes, header and payload) into its {} field.",
                f.name
            ),
            true,
        );
        putln!(
            self.out,
            "static inline void {l}_record_seal(uint8_t *rec, size_t n)
{{
    uint32_t c = {l}_record_crc(rec, n);"
        );
        for i in 0..n {
            let shift = match f.endian {
                logspec_ir::ir::Endian::Little => 8 * i,
                logspec_ir::ir::Endian::Big => 8 * (n - 1 - i),
            };
            putln!(self.out, "    rec[{}u] = (uint8_t)(c >> {shift});", at + i);
        }
        putln!(
            self.out, "}}
"
        );
        format!("{l}_record_seal")
    }

    /// Message writers: for a struct whose body is a union selected by one of its own fields (an
    /// RLOG message: kind byte, then the body), one `<struct>_write_<variant>` per variant that
    /// sets the tag, so that a tag cannot be paired with the wrong body.
    pub(super) fn message_writers(&mut self, id: TypeId, st: &Struct) {
        let u = self.n.upper.clone();
        let Some((ui, uid, tag)) = single_union(&st.fields) else { return };
        let (ui, uid, tag) = (&ui, &uid, &tag);
        let others: Vec<&Field> = st
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| i != ui && i != tag && !f.is_padding() && f.value.is_none())
            .map(|(_, f)| f)
            .collect();
        if !others.iter().all(|f| base_prim(self, &f.ty).is_some() || f.ty == Ty::Bool)
            || !self.supported(&Ty::Named(id))
        {
            return;
        }
        let TypeDef::Union(un) = self.s.ty(*uid) else { return };
        let sh = self.struct_shape(id, st);
        let tag_f = &st.fields[*tag];
        let tag_c = self.c_decl(&tag_f.ty).map(|d| d.0).unwrap_or_default();
        for (i, var) in un.variants.iter().enumerate() {
            let vs = self.variant_shape(*uid, un, i);
            let mut params = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
            for f in &others {
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            if !var.fields.is_empty() {
                params.push(format!("const {} *p", vs.enc_ty()));
            }
            let mut doc = format!("Writes one {} with the {} body ({} = {}).", st.name, var.name, tag_f.name, var.tag);
            if let Some(d) = &var.doc {
                doc.push(' ');
                doc.push_str(&one_line(d));
            }
            doc.push_str(" Returns the bytes written, or 0 when it does not fit in `cap` bytes or a length does not fit its prefix.");
            self.block(&doc, true);
            let vname = ident(&var.name).trim_end_matches('_').to_string();
            putln!(self.out, "static inline size_t {}_write_{vname}({})\n{{", sh.stem, params.join(", "));
            putln!(self.out, "    {} m;\n    size_t k = 0;\n    {u}_MEMSET(&m, 0, sizeof m);", sh.enc_ty());
            putln!(self.out, "    m.{} = ({tag_c}){};", tag_f.name, int_lit(var.tag, Prim::I64).trim_end_matches("LL"));
            for f in &others {
                putln!(self.out, "    m.{0} = {0};", f.name);
            }
            if !var.fields.is_empty() {
                putln!(self.out, "    m.{}.{} = *p;", st.fields[*ui].name, ident(&var.name));
            }
            putln!(self.out, "    return {}_encode(buf, cap, &m, &k) == {u}_OK ? k : 0u;\n}}\n", sh.stem);
            self.typed_writers(&sh, st, (*ui, *uid, *tag), &others, i);
        }
    }

    /// For a message variant whose body holds a tagged union of its own (RLOG R1's Field: a key
    /// id, the value's type code, the value), one writer per value type that writes the type code
    /// itself: `rlog_r1_message_write_field_double(buf, cap, key_id, &value)`.
    fn typed_writers(&mut self, sh: &Shape, st: &Struct, outer: (usize, TypeId, usize), others: &[&Field], vi: usize) {
        let u = self.n.upper.clone();
        let (ui, uid, tag) = outer;
        let TypeDef::Union(un) = self.s.ty(uid) else { return };
        let var = &un.variants[vi];
        let Some((ii, iid, itag)) = single_union(&var.fields) else { return };
        let (ii, iid, itag) = (&ii, &iid, &itag);
        let TypeDef::Union(iun) = self.s.ty(*iid) else { return };
        if iun.by_name {
            return;
        }
        let rest: Vec<&Field> = var
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| i != ii && i != itag && !f.is_padding() && f.value.is_none())
            .map(|(_, f)| f)
            .collect();
        if !rest.iter().all(|f| base_prim(self, &f.ty).is_some() || f.ty == Ty::Bool) {
            return;
        }
        let tag_f = &st.fields[tag];
        let tag_c = self.c_decl(&tag_f.ty).map(|d| d.0).unwrap_or_default();
        let itag_f = &var.fields[*itag];
        let itag_c = self.c_decl(&itag_f.ty).map(|d| d.0).unwrap_or_default();
        let body = format!("{}.{}", st.fields[ui].name, ident(&var.name));
        let vname = ident(&var.name).trim_end_matches('_').to_string();
        for (j, iv) in iun.variants.iter().enumerate() {
            if !iv.fields.iter().all(|f| self.supported(&f.ty)) {
                continue;
            }
            let ivs = self.variant_shape(*iid, iun, j);
            let mut params = vec!["uint8_t *buf".to_string(), "size_t cap".to_string()];
            for f in others.iter().chain(&rest) {
                params.push(format!("{} {}", self.c_decl(&f.ty).map(|d| d.0).unwrap_or_default(), f.name));
            }
            if !iv.fields.is_empty() {
                params.push(format!("const {} *p", ivs.enc_ty()));
            }
            let doc = format!(
                "Writes one {} with the {} body ({} = {}) holding a {} {} ({} = {}, written here). Returns the bytes written, or 0 when it does not fit in `cap` bytes or a length does not fit its prefix.",
                st.name, var.name, tag_f.name, var.tag, iv.name, iun.name, itag_f.name, iv.tag
            );
            self.block(&doc, true);
            let ivname = ident(&iv.name).trim_end_matches('_').to_string();
            putln!(self.out, "static inline size_t {}_write_{vname}_{ivname}({})\n{{", sh.stem, params.join(", "));
            putln!(self.out, "    {} m;\n    size_t k = 0;\n    {u}_MEMSET(&m, 0, sizeof m);", sh.enc_ty());
            putln!(self.out, "    m.{} = ({tag_c}){};", tag_f.name, int_lit(var.tag, Prim::I64).trim_end_matches("LL"));
            for f in others {
                putln!(self.out, "    m.{0} = {0};", f.name);
            }
            for f in &rest {
                putln!(self.out, "    m.{body}.{0} = {0};", f.name);
            }
            putln!(
                self.out,
                "    m.{body}.{} = ({itag_c}){};",
                itag_f.name,
                int_lit(iv.tag, Prim::I64).trim_end_matches("LL")
            );
            if !iv.fields.is_empty() {
                putln!(self.out, "    m.{body}.{}.{} = *p;", var.fields[*ii].name, ident(&iv.name));
            }
            putln!(self.out, "    return {}_encode(buf, cap, &m, &k) == {u}_OK ? k : 0u;\n}}\n", sh.stem);
        }
    }
}

/// The one union field of a field list, with its union and tag field (`None` when there is none
/// or more than one): the body a message writer sets by its tag.
fn single_union(fields: &[Field]) -> Option<(usize, TypeId, usize)> {
    let mut unions = fields.iter().enumerate().filter_map(|(i, f)| match f.ty {
        Ty::Union { id, tag_field } => Some((i, id, tag_field)),
        _ => None,
    });
    let one = unions.next()?;
    unions.next().is_none().then_some(one)
}
