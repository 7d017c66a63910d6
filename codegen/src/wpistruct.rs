//! The WPILib struct schema front end, from the light crate ([`logspec_ir::wpistruct`]), and the
//! Rust types it generates ([`rust_source`]).

pub use logspec_ir::wpistruct::*;

/// The formatted Rust source (the Rust back end's items) for `roots` and every struct they use.
pub fn rust_source(set: &StructSet, roots: &[&str], module: &str, runtime_path: &str, from: Option<String>) -> String {
    let backend = crate::backend::rust::RustBackend { runtime_path: runtime_path.to_string(), alloc: true };
    rust_source_for(&backend, set, roots, module, from)
}

/// [`rust_source`] for a given back end configuration (`alloc`: WPILib structs are fixed-size,
/// so their owned types need no allocator either way, but the choice is the builder's).
pub fn rust_source_for(
    backend: &crate::backend::rust::RustBackend,
    set: &StructSet,
    roots: &[&str],
    module: &str,
    from: Option<String>,
) -> String {
    let lowered = lower::lower(set, roots, module, from);
    let tokens = backend.tokens(&lowered.schema);
    let mut file: syn::File = match syn::parse2(tokens.clone()) {
        Ok(f) => f,
        Err(e) => return format!("compile_error!({:?});\n{tokens}", e.to_string()),
    };
    // Enum values keep the schema's spelling (`idle`), which is how logs name them.
    let enums: Vec<&str> = lowered
        .schema
        .types
        .iter()
        .filter_map(|t| match t {
            logspec_ir::ir::TypeDef::Enum(e) => Some(e.name.as_str()),
            _ => None,
        })
        .collect();
    for item in &mut file.items {
        if let syn::Item::Impl(i) = item {
            let is_enum = matches!(&*i.self_ty, syn::Type::Path(p) if p.path.get_ident().is_some_and(|id| enums.iter().any(|e| id == e)));
            if is_enum && i.trait_.is_none() {
                i.attrs.push(syn::parse_quote!(#[allow(non_upper_case_globals)]));
            }
        }
    }
    format!("// {}\n\n{}", crate::backend::generated_banner(&lowered.schema), prettyplease::unparse(&file))
}
