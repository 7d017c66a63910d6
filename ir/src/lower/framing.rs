//! The record framing: the roles (tag, length, timestamp) of the record header's fields, and the
//! records it frames, with their ids and the payload bound that the length field sets.

use std::collections::BTreeMap;

use super::{Cx, Decl};
use crate::diag::{did_you_mean, Code};
use crate::ir::{self, Len, Ty, TypeId};
use crate::layout;
use crate::schema::{ChecksumDecl, SchemaFile, Sp, Span};

impl Cx {
    pub(super) fn framing(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::Framing> {
        let fr = file.framing.as_ref()?;
        let header = TypeId(usize::from(file.file_header.is_some()));
        self.fixed_size(schema, header, &fr.body, "the record header (`[framing]`)");
        let s = schema.strukt(header);
        let role = |cx: &mut Cx, r: &Sp<String>, what: &str| -> Option<usize> {
            if r.is_placeholder() {
                return None;
            }
            match s.fields.iter().position(|f| f.name == r.value && !f.is_padding()) {
                Some(i) => match &s.fields[i].ty {
                    Ty::Prim(p) if !p.is_float() => Some(i),
                    Ty::Pad(0) => None,
                    _ => {
                        let written = fr.body.fields[i].ty.as_ref().map_or(String::new(), |t| t.value.clone());
                        cx.err(
                            Code::BadFraming,
                            &r.span,
                            format!("the {what} field `{}` must be an integer", r.value),
                        )
                        .label = Some(format!("`{}` is `{written}`", r.value));
                        None
                    }
                },
                None => {
                    let names = s.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str());
                    let hint = did_you_mean(&r.value, names).map(str::to_string);
                    let d = cx.err(
                        Code::BadFraming,
                        &r.span,
                        format!("the {what} field `{}` is not a field of the record header", r.value),
                    );
                    d.label = Some("not in `[framing]` `fields`".into());
                    d.help = Some(match hint {
                        Some(h) => format!("did you mean `{h}`?"),
                        None => format!("add an integer field `{}` to `[framing]` `fields`", r.value),
                    });
                    None
                }
            }
        };
        let tag = role(self, &fr.tag, "tag");
        let length = fr.length.as_ref().and_then(|l| role(self, l, "length"));
        let timestamp = fr.timestamp.as_ref().and_then(|t| role(self, t, "timestamp"));
        let sync = fr.sync.as_ref().and_then(|r| self.sync(s, r));
        let checksum = fr.checksum.as_ref().and_then(|c| self.checksum(s, c));
        let trailer = fr.trailer.as_ref().and_then(|t| self.trailer(file, schema, header, t));
        Some(ir::Framing { header, tag: tag?, length, timestamp, sync, checksum, trailer })
    }

    /// `trailer = "<struct>"`: a struct (not a record's payload, not the record header) of a fixed
    /// size whose every field is a const, so that its bytes are known (E0501).
    fn trailer(&mut self, file: &SchemaFile, schema: &ir::Schema, header: TypeId, t: &Sp<String>) -> Option<TypeId> {
        if t.is_placeholder() {
            return None;
        }
        let structs = || {
            schema.types.iter().enumerate().filter_map(|(i, d)| match d {
                ir::TypeDef::Struct(s)
                    if TypeId(i) != header
                        && !file.records.iter().any(|r| super::camel_case(&r.name.value) == s.name) =>
                {
                    Some((TypeId(i), s))
                }
                _ => None,
            })
        };
        let Some((id, _)) = structs().find(|(_, s)| s.name == t.value) else {
            let names: Vec<&str> = structs().map(|(_, s)| s.name.as_str()).collect();
            let d =
                self.err(Code::BadFraming, &t.span, format!("the trailer `{}` is not a struct of the schema", t.value));
            d.label = Some(
                "not a `[[struct]]` or the `[file_header]` (records and the record header cannot end a file)".into(),
            );
            d.help = Some(match did_you_mean(&t.value, names.iter().copied()) {
                Some(h) => format!("did you mean `{h}`?"),
                None => "name a struct whose fields are all consts, e.g. the file header's magic".into(),
            });
            return None;
        };
        if ir::const_bytes(schema, id).is_none() {
            let d = self.err(
                Code::BadFraming,
                &t.span,
                format!("the trailer `{}` must have a fixed size and a `const` in every field", t.value),
            );
            d.label = Some("its bytes are not all known".into());
            d.help = Some("a trailer's bytes end every file, so each of its fields needs a `const` (numbers, `bytes[N]` or `string[N]`; no padding)".into());
            return None;
        }
        Some(id)
    }

    /// `sync = "<field>"`: the record header's first field, with a const value (E0503).
    fn sync(&mut self, s: &ir::Struct, r: &Sp<String>) -> Option<usize> {
        if r.is_placeholder() {
            return None;
        }
        let Some(i) = s.fields.iter().position(|f| f.name == r.value && !f.is_padding()) else {
            let hint = did_you_mean(&r.value, s.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str()));
            let d = self.err(
                Code::BadIntegrity,
                &r.span,
                format!("the sync field `{}` is not a field of the record header", r.value),
            );
            d.help = Some(match hint {
                Some(h) => format!("did you mean `{h}`?"),
                None => format!("add a const field `{}` as the first of `[framing]` `fields`", r.value),
            });
            return None;
        };
        if i != 0 || s.fields[i].value.is_none() {
            let d = self.err(
                Code::BadIntegrity,
                &r.span,
                format!("the sync field `{}` must be the record header's first field and have a `const`", r.value),
            );
            d.label = Some(if i != 0 { "not the first field".into() } else { "no `const`".into() });
            d.help = Some("the sync bytes begin every record: e.g. `{ name = \"sync\", type = \"u16\", const = 0x95A3 }` first in `fields`".into());
            return None;
        }
        Some(i)
    }

    /// `checksum = { field, algorithm, over }`: an unsigned header field of the CRC's width, a
    /// known algorithm and span (E0503).
    fn checksum(&mut self, s: &ir::Struct, c: &ChecksumDecl) -> Option<ir::Checksum> {
        let algorithm = if c.algorithm.is_placeholder() {
            None
        } else {
            let a = ir::Crc::from_name(&c.algorithm.value);
            if a.is_none() {
                let names = ir::Crc::ALL.map(ir::Crc::name);
                let d = self.err(
                    Code::BadIntegrity,
                    &c.algorithm.span,
                    format!("unknown checksum algorithm `{}`", c.algorithm.value),
                );
                d.label = Some(format!("expected one of {}", names.map(|n| format!("`{n}`")).join(", ")));
                if let Some(h) = did_you_mean(&c.algorithm.value, names) {
                    d.help = Some(format!("did you mean `{h}`?"));
                }
            }
            a
        };
        let over = match &c.over {
            None => Some(ir::ChecksumSpan::Record),
            Some(o) => {
                let v = ir::ChecksumSpan::ALL.into_iter().find(|x| x.name() == o.value);
                if v.is_none() {
                    self.err(Code::BadIntegrity, &o.span, format!("unknown checksum span `{}`", o.value)).label =
                        Some("expected `record` or `payload`".into());
                }
                v
            }
        };
        if c.field.is_placeholder() {
            return None;
        }
        let Some(i) = s.fields.iter().position(|f| f.name == c.field.value && !f.is_padding()) else {
            let hint =
                did_you_mean(&c.field.value, s.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str()));
            let d = self.err(
                Code::BadIntegrity,
                &c.field.span,
                format!("the checksum field `{}` is not a field of the record header", c.field.value),
            );
            d.help = Some(match hint {
                Some(h) => format!("did you mean `{h}`?"),
                None => format!("add a field `{}` to `[framing]` `fields`", c.field.value),
            });
            return None;
        };
        let algorithm = algorithm?;
        let width = algorithm.params().width;
        let f = &s.fields[i];
        let ok = matches!(f.ty, Ty::Prim(p) if p.is_unsigned() && p.size() * 8 == width) && f.value.is_none();
        if !ok {
            let d = self.err(
                Code::BadIntegrity,
                &c.field.span,
                format!(
                    "the checksum field `{}` must be a `u{width}` without a `const` to hold a {}",
                    f.name,
                    algorithm.name()
                ),
            );
            d.label = Some(if f.value.is_some() { "has a `const`".into() } else { format!("not a `u{width}`") });
            return None;
        }
        Some(ir::Checksum { field: i, algorithm, over: over? })
    }

    pub(super) fn records(
        &mut self,
        file: &SchemaFile,
        schema: &ir::Schema,
        decls: &[(String, Span, Decl<'_>)],
        check_bounds: bool,
    ) -> Vec<ir::Record> {
        let framing_hdr = schema.framing.as_ref().map(|f| schema.strukt(f.header));
        let tag_prim = schema.framing.as_ref().and_then(|f| match &framing_hdr?.fields[f.tag].ty {
            Ty::Prim(p) => Some(*p),
            _ => None,
        });
        let len_field = schema.framing.as_ref().and_then(|f| {
            let field = &framing_hdr?.fields[f.length?];
            match &field.ty {
                Ty::Prim(p) => Some((*p, field.name.as_str())),
                _ => None,
            }
        });
        let mut ids: BTreeMap<i128, &str> = BTreeMap::new();
        let mut out = Vec::new();
        for r in &file.records {
            let Some(body) = decls.iter().position(|(_, _, d)| matches!(d, Decl::Record(x) if std::ptr::eq(*x, r)))
            else {
                continue;
            };
            let id = r.id.value;
            let mut id_ok = !r.id.is_placeholder();
            if id_ok {
                if let Some(prev) = ids.insert(id, &r.name.value) {
                    self.err(
                        Code::DuplicateRecordId,
                        &r.id.span,
                        format!("record id {id} is used by both `{prev}` and `{}`", r.name.value),
                    )
                    .label = Some("duplicate id".into());
                }
                id_ok = match tag_prim {
                    Some(p) => self.fits(id, p, &r.id.span, "record id"),
                    None => {
                        if id < 0 || id > i128::from(u64::MAX) {
                            self.err(
                                Code::ValueOutOfRange,
                                &r.id.span,
                                format!("record id {id} is outside 0..={}", u64::MAX),
                            );
                        }
                        (0..=i128::from(u64::MAX)).contains(&id)
                    }
                };
            }
            let s = schema.strukt(TypeId(body));
            // `count = "rest"` runs to the end of the payload, which only the length field gives.
            if let (Some(fr), Some(last)) = (&schema.framing, s.fields.last()) {
                let rest =
                    matches!(&last.ty, Ty::Bytes(Len::Rest) | Ty::Str(Len::Rest) | Ty::Array { len: Len::Rest, .. });
                if rest && fr.length.is_none() {
                    let span =
                        r.fields.last().and_then(|f| f.count.as_ref()).map_or(r.name.span.clone(), |c| c.span.clone());
                    self.err(Code::BadLength, &span, "`count = \"rest\"` needs a length field in `[framing]`")
                        .help = Some("without `length`, nothing says where a payload ends; add a `length` role, or use a count prefix".into());
                }
            }
            if let (Some((lp, lname)), true) = (len_field, check_bounds) {
                let (_, hi) = lp.int_range().expect("integer");
                match layout::max_size(schema, &Ty::Named(TypeId(body))) {
                    Some(max) if max > hi as u128 => {
                        // Point at the field that contributes most, usually the one to shrink.
                        let biggest = s
                            .fields
                            .iter()
                            .zip(&r.fields)
                            .filter_map(|(f, fd)| Some((layout::max_size(schema, &f.ty)?, f, fd)))
                            .max_by_key(|(m, _, _)| *m);
                        let (span, label) = match biggest {
                            Some((m, f, fd)) => (
                                fd.count
                                    .as_ref()
                                    .or(fd.size.as_ref())
                                    .or(fd.ty.as_ref())
                                    .map_or(fd.span.clone(), |x| x.span.clone()),
                                format!("field `{}` alone can be {m} bytes", f.name),
                            ),
                            None => (r.name.span.clone(), String::new()),
                        };
                        let d = self.err(Code::PayloadTooLarge, &span, format!("record `{}` can be {max} bytes long, but the length field `{lname}` ({lp}) holds at most {hi}", r.name.value));
                        if !label.is_empty() {
                            d.label = Some(label);
                        }
                        d.help = Some(format!("shrink the field (a smaller array or length prefix), or widen the framing's length field `{lname}` (a breaking change)"));
                    }
                    _ => {}
                }
            }
            out.push(ir::Record {
                name: r.name.value.clone(),
                id: if id_ok { id as u64 } else { 0 },
                doc: r.doc.as_ref().map(|d| d.value.clone()),
                body: TypeId(body),
                // Filled in once the whole schema is known to be valid.
                fingerprint: 0,
            });
        }
        out
    }
}
