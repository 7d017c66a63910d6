//! The schema id (`[format.schema_id]`): its C macro name, its value, and the file-header field
//! that holds it.

use super::{is_ident, Cx};
use crate::diag::{did_you_mean, Code};
use crate::ir::{self, Ty};
use crate::schema::SchemaFile;

impl Cx {
    pub(super) fn schema_id(&mut self, file: &SchemaFile, schema: &ir::Schema) -> Option<ir::SchemaId> {
        let sid = file.format.as_ref()?.schema_id.as_ref()?;
        if !sid.name.is_placeholder()
            && (!is_ident(&sid.name.value) || sid.name.value.chars().any(|c| c.is_ascii_lowercase()))
        {
            self.err(
                Code::BadName,
                &sid.name.span,
                format!("schema id macro `{}` must be an UPPER_CASE identifier", sid.name.value),
            )
            .help = Some("it names a C macro, e.g. `FW_MODEL_SCHEMA`".into());
        }
        let value_ok = sid.value.is_placeholder() || (0..=i128::from(u32::MAX)).contains(&sid.value.value);
        if !value_ok {
            self.err(
                Code::ValueOutOfRange,
                &sid.value.span,
                format!("schema id {} is outside 0..=4294967295", sid.value.value),
            )
            .label = Some("schema ids are u32".into());
        }
        let mut field = None;
        if let Some(fname) = &sid.field {
            match schema.file_header.map(|h| schema.strukt(h)) {
                None => {
                    self.err(
                        Code::BadSchemaId,
                        &fname.span,
                        "`field` names a file-header field, but there is no `[file_header]`",
                    )
                    .help =
                        Some("add a `[file_header]` with an integer field for the schema id, or remove `field`".into());
                }
                Some(h) => match h.fields.iter().position(|f| f.name == fname.value && !f.is_padding()) {
                    None => {
                        let names: Vec<&str> =
                            h.fields.iter().filter(|f| !f.is_padding()).map(|f| f.name.as_str()).collect();
                        let hint = did_you_mean(&fname.value, names.iter().copied()).map(str::to_string);
                        let d = self.err(
                            Code::BadSchemaId,
                            &fname.span,
                            format!("the file header has no field `{}`", fname.value),
                        );
                        d.label = Some("not a field of `[file_header]`".into());
                        d.help = Some(match hint {
                            Some(hh) => format!("did you mean `{hh}`?"),
                            None => format!("the file header's fields are: {}", names.join(", ")),
                        });
                    }
                    Some(i) => match &h.fields[i].ty {
                        Ty::Prim(p) if !p.is_float() => {
                            if sid.value.is_placeholder()
                                || !value_ok
                                || self.fits(sid.value.value, *p, &sid.value.span, "schema id")
                            {
                                field = Some(i);
                            }
                        }
                        Ty::Pad(0) => {}
                        _ => {
                            self.err(
                                Code::BadSchemaId,
                                &fname.span,
                                format!("schema id field `{}` must be an integer", fname.value),
                            )
                            .label = Some("not an integer field".into());
                        }
                    },
                },
            }
        }
        Some(ir::SchemaId {
            value: sid.value.value.clamp(0, i128::from(u32::MAX)) as u64,
            macro_name: sid.name.value.clone(),
            field,
        })
    }
}
