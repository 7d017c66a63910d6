//! `#[record(schema = "...")]`: the check of a derived struct against the record of the same
//! name in a schema file, field by field.

use proc_macro2::Span;

use super::Errors;
use logspec_ir::ir::{self, Ty, TypeDef};

/// Checks the struct (lowered into `mini`) against record `name` of the schema file `lit`:
/// the same fields, in the same order, with the same wire types (hand-written nested types are
/// checked by name only). Returns the schema's record, whose id, name and fingerprint the derive
/// then uses.
pub(super) fn cross_check(
    lit: &syn::LitStr,
    name: &str,
    id: Option<(u64, Span)>,
    mini: &ir::Schema,
    spans: &[Span],
    errors: &mut Errors,
) -> Option<(ir::Record, std::path::PathBuf)> {
    let base = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from).unwrap_or_default();
    let path = base.join(lit.value());
    let schema = match crate::compile_file(&path) {
        Ok(s) => s,
        Err(e) => {
            let first = e.diagnostics.first().map_or(String::new(), |d| d.message.clone());
            errors.at(lit.span(), format!("cannot use schema `{}`: {first}", path.display()));
            return None;
        }
    };
    let Some(rec) = schema.records.iter().find(|r| r.name == name) else {
        let names: Vec<&str> = schema.records.iter().map(|r| r.name.as_str()).collect();
        let hint = logspec_ir::diag::did_you_mean(name, names.iter().copied())
            .map_or_else(|| format!("its records are {}", names.join(", ")), |h| format!("did you mean `{h}`?"));
        errors.at(
            lit.span(),
            format!("schema `{}` has no record `{name}`; {hint} (set it with `name = \"...\"`)", lit.value()),
        );
        return None;
    };
    if let Some((given, span)) = id {
        if given != rec.id {
            errors.at(span, format!("record {name} has id {} in `{}`, not {given}", rec.id, lit.value()));
        }
    }
    let TypeDef::Struct(ours) = &mini.types[0] else { return None };
    let theirs = schema.strukt(rec.body);
    let describe = |s: &ir::Schema, f: &ir::Field| {
        if f.is_padding() {
            format!("{} bytes of padding", logspec_ir::layout::size_of(s, &f.ty).unwrap_or(0))
        } else {
            format!("`{}: {}`", f.name, logspec_ir::fingerprint::field_type(s, f))
        }
    };
    let mut ok = true;
    for (i, theirs_f) in theirs.fields.iter().enumerate() {
        let Some(ours_f) = ours.fields.get(i) else {
            let span = spans.last().copied().unwrap_or_else(Span::call_site);
            errors.at(
                span,
                format!(
                    "{name} in `{}` continues with {}, which this struct lacks",
                    lit.value(),
                    describe(&schema, theirs_f)
                ),
            );
            ok = false;
            break;
        };
        let extern_ty = matches!(&ours_f.ty, Ty::Named(id) if matches!(mini.types[id.0], TypeDef::Extern(_)));
        let same_name =
            ours_f.is_padding() == theirs_f.is_padding() && (ours_f.is_padding() || ours_f.name == theirs_f.name);
        let same_type = extern_ty
            || logspec_ir::fingerprint::field_type(mini, ours_f)
                == logspec_ir::fingerprint::field_type(&schema, theirs_f);
        if !same_name || !same_type {
            errors.at(
                spans[i],
                format!(
                    "this struct disagrees with {name} in `{}`: field {} is {} there, {} here",
                    lit.value(),
                    i + 1,
                    describe(&schema, theirs_f),
                    describe(mini, ours_f)
                ),
            );
            ok = false;
            break;
        }
    }
    if ok && ours.fields.len() > theirs.fields.len() {
        let extra = &ours.fields[theirs.fields.len()];
        errors.at(
            spans[theirs.fields.len()],
            format!(
                "{name} in `{}` has no field after this point, but this struct has {}",
                lit.value(),
                describe(mini, extra)
            ),
        );
    }
    Some((rec.clone(), path))
}
