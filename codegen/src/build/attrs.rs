//! `Builder::type_attribute` and `Builder::field_attribute`: user attributes added to the items of
//! generated Rust source, on its syntax tree (never by editing text).

use syn::parse::Parser;

/// Parsed attribute options: `(path, attributes)` for types and for fields.
#[derive(Default)]
pub(super) struct Attributes {
    types: Vec<(String, Vec<syn::Attribute>)>,
    fields: Vec<(String, Vec<syn::Attribute>)>,
}

fn parse_all(options: &[(String, String)], what: &str) -> Result<Vec<(String, Vec<syn::Attribute>)>, String> {
    options
        .iter()
        .map(|(path, text)| {
            let attrs = syn::Attribute::parse_outer.parse_str(text).map_err(|e| {
                format!(
                    "{what}({path:?}, {text:?}): not a Rust attribute ({e}); write it as `#[derive(serde::Serialize)]`"
                )
            })?;
            if attrs.is_empty() {
                return Err(format!("{what}({path:?}, {text:?}): no attribute given; write it as `#[...]`"));
            }
            Ok((path.clone(), attrs))
        })
        .collect()
}

impl Attributes {
    pub(super) fn parse(types: &[(String, String)], fields: &[(String, String)]) -> Result<Self, String> {
        Ok(Attributes { types: parse_all(types, "type_attribute")?, fields: parse_all(fields, "field_attribute")? })
    }

    /// The generated source `text` (a comment banner, then items) with the attributes added.
    pub(super) fn apply(&self, text: &str) -> Result<String, String> {
        if self.types.is_empty() && self.fields.is_empty() {
            return Ok(text.to_string());
        }
        // The banner is a plain comment, which the syntax tree does not keep.
        let body_at: usize =
            text.lines().take_while(|l| l.starts_with("//") || l.is_empty()).map(|l| l.len() + 1).sum();
        let (banner, body) = text.split_at(body_at.min(text.len()));
        let mut file = syn::parse_file(body).map_err(|e| format!("generated source does not parse: {e}"))?;
        self.items(&mut file.items);
        Ok(format!("{banner}{}", prettyplease::unparse(&file)))
    }

    fn items(&self, items: &mut [syn::Item]) {
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    let name = s.ident.to_string();
                    s.attrs.extend(self.for_type(&name));
                    if let syn::Fields::Named(named) = &mut s.fields {
                        for f in &mut named.named {
                            let field = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                            f.attrs.extend(self.for_field(&name, &field));
                        }
                    }
                }
                syn::Item::Enum(e) => {
                    let name = e.ident.to_string();
                    e.attrs.extend(self.for_type(&name));
                    for v in &mut e.variants {
                        v.attrs.extend(self.for_field(&name, &v.ident.to_string()));
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &mut m.content {
                        self.items(inner);
                    }
                }
                _ => {}
            }
        }
    }

    fn for_type(&self, name: &str) -> Vec<syn::Attribute> {
        self.types.iter().filter(|(p, _)| p == "." || p == name).flat_map(|(_, a)| a.iter().cloned()).collect()
    }

    fn for_field(&self, ty: &str, field: &str) -> Vec<syn::Attribute> {
        let matches = |p: &str| match p.split_once('.') {
            _ if p == "." || p == ty => true,
            Some((t, f)) => t == ty && f == field,
            None => false,
        };
        self.fields.iter().filter(|(p, _)| matches(p)).flat_map(|(_, a)| a.iter().cloned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Attributes;

    const SRC: &str = "// @generated\n\npub struct A {\n    pub x: u8,\n    pub y: u8,\n}\npub enum B {\n    P,\n    Q,\n}\npub mod history {\n    pub struct A {\n        pub x: u8,\n    }\n}\n";

    fn opts(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn type_and_field_attributes_land_on_the_matching_items_only() {
        let a = Attributes::parse(
            &opts(&[("A", "#[derive(Hash)]"), (".", "#[allow(dead_code)]")]),
            &opts(&[("A.y", "#[doc(hidden)]"), ("B.Q", "#[default]")]),
        )
        .unwrap();
        let out = a.apply(SRC).unwrap();
        assert!(out.starts_with("// @generated\n"), "{out}");
        let expected = "pub struct A {\n    pub x: u8,\n    #[doc(hidden)]\n    pub y: u8,\n}";
        assert!(out.contains(&format!("#[derive(Hash)]\n#[allow(dead_code)]\n{expected}")), "{out}");
        assert!(out.contains("#[allow(dead_code)]\npub enum B {\n    P,\n    #[default]\n    Q,\n}"), "{out}");
        // Nested modules (the lock history) get them too.
        assert!(out.contains("    #[derive(Hash)]\n    #[allow(dead_code)]\n    pub struct A {"), "{out}");
    }

    #[test]
    fn no_options_leave_the_text_alone() {
        assert_eq!(Attributes::default().apply(SRC).unwrap(), SRC);
    }

    #[test]
    fn an_attribute_that_does_not_parse_is_an_error() {
        let e = Attributes::parse(&opts(&[("A", "derive(Hash)")]), &[]).err().unwrap();
        assert!(e.contains("type_attribute(\"A\", \"derive(Hash)\")"), "{e}");
        let e = Attributes::parse(&[], &opts(&[("A.x", "#[serde(")])).err().unwrap();
        assert!(e.contains("field_attribute"), "{e}");
    }
}
