//! The `build.rs` API: compile schemas into Rust source in `OUT_DIR`, like `prost-build`.
//!
//! ```no_run
//! // In build.rs:
//! logspec_codegen::Builder::new()
//!     .compile(&["schemas/usvlog.toml"])
//!     .unwrap_or_else(|e| e.exit());
//! ```
//! and in the crate: `mod usvlog { include!(concat!(env!("OUT_DIR"), "/usvlog.rs")); }`.
//!
//! The options users reach for in `prost-build`:
//!
//! ```no_run
//! // In build.rs:
//! logspec_codegen::Builder::new()
//!     .type_attribute(".", "#[derive(serde::Serialize)]")
//!     .field_attribute("RecText.text", "#[serde(rename = \"message\")]")
//!     .include_file("logs.rs")
//!     .compile(&["schemas/usvlog.toml", "schemas/mylog.toml"])
//!     .unwrap_or_else(|e| e.exit());
//! ```
//! and in the crate, one module tree: `include!(concat!(env!("OUT_DIR"), "/logs.rs"));`.
//!
//! A lock file next to a schema (`schemas/usvlog.lock`) adds the layouts of its older schema ids,
//! as `usvlog::history::schema_<id>` modules that `with_file_format` dispatches to.

mod attrs;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::backend::rust::{parse_runtime_path, RustBackend, DEFAULT_RUNTIME_PATH};
use logspec_ir::diag::SchemaError;

/// Writes `text` unless the file already holds it: an unchanged file keeps its modification time,
/// so a build script that reruns does not make cargo recompile the crate that includes it.
fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| BuildError::Io(path.to_path_buf(), e))
}

/// Configures and runs schema compilation from a build script.
///
/// `Builder::default()` is `Builder::new()`. Every `compile*` method returns the paths of the
/// files it wrote.
#[derive(Clone, Debug)]
pub struct Builder {
    out_dir: Option<PathBuf>,
    runtime_path: Option<String>,
    emit_rerun: bool,
    type_attributes: Vec<(String, String)>,
    field_attributes: Vec<(String, String)>,
    include_file: Option<PathBuf>,
    /// Whether the including crate has an allocator (see [`Builder::alloc`]).
    alloc: bool,
    /// The modules written so far by this builder, `(module name, file)`, for `include_file`.
    modules: RefCell<Vec<(String, PathBuf)>>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// A failure of [`Builder::compile`]: schema diagnostics or an I/O error.
#[derive(Debug)]
pub enum BuildError {
    Schema(Vec<SchemaError>),
    Io(PathBuf, std::io::Error),
    /// A lock file that cannot be read, or whose history cannot be rebuilt.
    Lock(String),
    NoOutDir,
    /// A builder option that cannot be used: an invalid runtime path or attribute.
    Option(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Schema(errors) => {
                for e in errors {
                    write!(f, "{}", e.render())?;
                }
                Ok(())
            }
            BuildError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            BuildError::Lock(m) | BuildError::Option(m) => f.write_str(m),
            BuildError::NoOutDir => f.write_str("OUT_DIR is not set; call Builder::out_dir or run from a build script"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io(_, e) => Some(e),
            // Several diagnostics: the first is the source, `Display` renders them all.
            BuildError::Schema(errors) => errors.first().map(|e| e as &(dyn std::error::Error + 'static)),
            BuildError::Lock(_) | BuildError::NoOutDir | BuildError::Option(_) => None,
        }
    }
}

impl BuildError {
    /// Prints the error (every diagnostic, with carets) to stderr and exits with status 1: the
    /// friendliest failure inside a build script.
    pub fn exit(self) -> ! {
        eprintln!("{self}");
        std::process::exit(1)
    }
}

impl Builder {
    /// A builder with the defaults: output in `$OUT_DIR`, the runtime at
    /// [`DEFAULT_RUNTIME_PATH`] (`::logspec_runtime`, as `#[derive(Record)]`), and
    /// `cargo:rerun-if-changed` lines printed.
    pub fn new() -> Self {
        Builder {
            out_dir: None,
            runtime_path: None,
            emit_rerun: true,
            type_attributes: Vec::new(),
            field_attributes: Vec::new(),
            include_file: None,
            alloc: true,
            modules: RefCell::new(Vec::new()),
        }
    }

    /// Whether the crate that includes the generated code has an allocator (default: `true`).
    /// With `false`, for a `#![no_std]` crate whose `logspec-runtime` has neither `alloc` nor
    /// `std`, a type whose owned form would hold a `Vec` or `String` is generated as its borrowed
    /// view only (`FooRef<'a>`, checked, encodable, without `to_owned`), and a framed format with
    /// such records gets its view record enum but no owned record enum and no `FramedFormat`
    /// impl. Fixed-size types and every view are the same either way. A crate with its own
    /// `alloc` feature passes it on from its build script:
    /// `.alloc(std::env::var_os("CARGO_FEATURE_ALLOC").is_some())`.
    pub fn alloc(mut self, alloc: bool) -> Self {
        self.alloc = alloc;
        self
    }

    /// Where to write the generated files (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The path generated code uses for the runtime (default [`DEFAULT_RUNTIME_PATH`],
    /// `::logspec_runtime`; use `::logspec::runtime` when depending on the `logspec` facade only).
    /// A path that is not a Rust path makes `compile*` fail.
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = Some(path.into());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: yes).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun = yes;
        self
    }

    /// Adds attributes to the generated types that `path` matches: `"."` matches every type,
    /// otherwise the Rust name of a type (`"RecNavSolution"`). `attribute` is Rust attribute
    /// syntax, for example `"#[derive(serde::Serialize)]"`. Called several times, the attributes
    /// add up, in order.
    pub fn type_attribute(mut self, path: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.type_attributes.push((path.into(), attribute.into()));
        self
    }

    /// Adds attributes to the generated fields (and enum variants) that `path` matches: `"."`
    /// matches every field, `"Type.field"` one field, `"Type"` every field of a type; for example
    /// `.field_attribute("RecText.text", "#[serde(rename = \"message\")]")`.
    pub fn field_attribute(mut self, path: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.field_attributes.push((path.into(), attribute.into()));
        self
    }

    /// Also writes `file` (relative to the output directory unless absolute): one module tree,
    /// `pub mod <name> { include!("<name>.rs"); }` for every module this builder has written so
    /// far, so that the crate needs a single `include!(concat!(env!("OUT_DIR"), "/<file>"));`.
    pub fn include_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.include_file = Some(file.into());
        self
    }

    /// Compiles every schema, reporting the diagnostics of all of them before failing. Returns the
    /// paths of the generated files (`<format>.rs` per schema, and the include file if set).
    pub fn compile(&self, schemas: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = self.resolved_out_dir()?;
        let backend = RustBackend { runtime_path: self.checked_runtime_path()?, alloc: self.alloc };
        let attrs = self.attributes()?;
        let mut errors = Vec::new();
        let mut texts = Vec::new();
        for path in schemas {
            let path = path.as_ref();
            if self.emit_rerun {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            match crate::compile_file(path) {
                Ok(schema) => {
                    crate::backend::supported(&schema).map_err(BuildError::Option)?;
                    let history = self.history(path, &schema)?;
                    texts.push((schema.format.name.clone(), backend.source_with_history(&schema, &history)));
                }
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(BuildError::Schema(errors));
        }
        let mut written = Vec::new();
        for (module, text) in texts {
            written.push(self.write_module(&out_dir, &module, text, &attrs)?);
        }
        written.extend(self.write_include_file(&out_dir)?);
        Ok(written)
    }

    /// Compiles ROS1 `.msg` files (each at `<package>/msg/<Type>.msg` or `<package>/<Type>.msg`)
    /// into one Rust file, `<module>.rs`: a struct per message type (and per type they use), with
    /// decoders, encoders, visitors and the messages' constants. Returns the paths of the
    /// generated files, as [`compile`](Self::compile) does.
    ///
    /// ```no_run
    /// // In build.rs:
    /// logspec_codegen::Builder::new()
    ///     .compile_msgs("ros_msgs", &["msg/sensor_msgs/msg/Imu.msg", "msg/std_msgs/msg/Header.msg"])
    ///     .unwrap_or_else(|e| e.exit());
    /// ```
    pub fn compile_msgs(&self, module: &str, msgs: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = self.resolved_out_dir()?;
        let runtime = self.checked_runtime_path()?;
        let attrs = self.attributes()?;
        if self.emit_rerun {
            for p in msgs {
                println!("cargo:rerun-if-changed={}", p.as_ref().display());
            }
        }
        let set = crate::ros::compile_msg_files(msgs).map_err(BuildError::Schema)?;
        let roots: Vec<&str> = set.types.keys().map(String::as_str).collect();
        let from = format!("{} .msg file(s)", msgs.len());
        let backend = RustBackend { runtime_path: runtime, alloc: self.alloc };
        let text = crate::ros::rust::source_for(&backend, &set, &roots, module, Some(from));
        let mut written = vec![self.write_module(&out_dir, module, text, &attrs)?];
        written.extend(self.write_include_file(&out_dir)?);
        Ok(written)
    }

    /// Compiles ROS 2 `.msg` files (each at `<package>/msg/<Type>.msg`, as ROS 2 packages lay
    /// them out) into one Rust file, `<module>.rs`: a struct per message type (and per type they
    /// use) whose decoder reads a CDR payload, the bytes after a message's 4-byte encapsulation
    /// header (little-endian, `00 01`), with the messages' constants. Returns the paths of the
    /// generated files, as [`compile`](Self::compile) does. The types follow CDR's layout rules
    /// (natural alignment counted from the payload's start, strings with their NUL); they are
    /// owned types (no borrowed views yet).
    ///
    /// ```no_run
    /// // In build.rs:
    /// logspec_codegen::Builder::new()
    ///     .compile_ros2_msgs("ros2_msgs", &["msg/std_msgs/msg/String.msg"])
    ///     .unwrap_or_else(|e| e.exit());
    /// ```
    pub fn compile_ros2_msgs(&self, module: &str, msgs: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = self.resolved_out_dir()?;
        let runtime = self.checked_runtime_path()?;
        let attrs = self.attributes()?;
        if self.emit_rerun {
            for p in msgs {
                println!("cargo:rerun-if-changed={}", p.as_ref().display());
            }
        }
        let set = crate::ros::compile_ros2_msg_files(msgs).map_err(BuildError::Schema)?;
        let roots: Vec<&str> = set.types.keys().map(String::as_str).collect();
        let from = format!("{} ROS 2 .msg file(s)", msgs.len());
        let backend = RustBackend { runtime_path: runtime, alloc: self.alloc };
        let text =
            crate::ros::rust::cdr_source_for(&backend, &set, &roots, module, Some(from)).map_err(BuildError::Option)?;
        let mut written = vec![self.write_module(&out_dir, module, text, &attrs)?];
        written.extend(self.write_include_file(&out_dir)?);
        Ok(written)
    }

    /// Compiles WPILib struct schemas (`wpiutil/doc/struct.adoc`), given as `(name, schema text)`
    /// pairs such as `("Pose2d", "Translation2d translation;Rotation2d rotation")`, into one Rust
    /// file, `<module>.rs`: a struct per schema, with decoders, encoders and visitors; bit-fields
    /// are a storage integer per run with a getter per field. Returns the paths of the generated
    /// files, as [`compile`](Self::compile) does.
    ///
    /// ```no_run
    /// // In build.rs:
    /// logspec_codegen::Builder::new()
    ///     .compile_struct_schemas("geometry", &[("Translation2d", "double x;double y")])
    ///     .unwrap_or_else(|e| e.exit());
    /// ```
    pub fn compile_struct_schemas(&self, module: &str, schemas: &[(&str, &str)]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = self.resolved_out_dir()?;
        let runtime = self.checked_runtime_path()?;
        let attrs = self.attributes()?;
        let set = crate::wpistruct::compile_schemas(module, schemas).map_err(BuildError::Schema)?;
        let roots: Vec<&str> = set.types.keys().map(String::as_str).collect();
        let from = format!("{} struct schema(s)", schemas.len());
        let backend = RustBackend { runtime_path: runtime, alloc: self.alloc };
        let text = crate::wpistruct::rust_source_for(&backend, &set, &roots, module, Some(from));
        let mut written = vec![self.write_module(&out_dir, module, text, &attrs)?];
        written.extend(self.write_include_file(&out_dir)?);
        Ok(written)
    }

    fn resolved_out_dir(&self) -> Result<PathBuf, BuildError> {
        match &self.out_dir {
            Some(d) => Ok(d.clone()),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or(BuildError::NoOutDir),
        }
    }

    fn checked_runtime_path(&self) -> Result<String, BuildError> {
        let path = self.runtime_path.as_deref().unwrap_or(DEFAULT_RUNTIME_PATH);
        parse_runtime_path(path).map_err(BuildError::Option)?;
        Ok(path.to_string())
    }

    fn attributes(&self) -> Result<attrs::Attributes, BuildError> {
        attrs::Attributes::parse(&self.type_attributes, &self.field_attributes).map_err(BuildError::Option)
    }

    /// Writes `<module>.rs` (with the configured attributes) and remembers it for the include file.
    fn write_module(
        &self,
        out_dir: &Path,
        module: &str,
        text: String,
        attrs: &attrs::Attributes,
    ) -> Result<PathBuf, BuildError> {
        let text = attrs.apply(&text).map_err(BuildError::Option)?;
        let out = out_dir.join(format!("{module}.rs"));
        write_if_changed(&out, &text)?;
        let mut modules = self.modules.borrow_mut();
        modules.retain(|(m, _)| m != module);
        modules.push((module.to_string(), out.clone()));
        Ok(out)
    }

    /// Rewrites the include file, if one is set, with every module written so far.
    fn write_include_file(&self, out_dir: &Path) -> Result<Option<PathBuf>, BuildError> {
        let Some(file) = &self.include_file else { return Ok(None) };
        let path = out_dir.join(file);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut modules = self.modules.borrow().clone();
        modules.sort();
        let mut text = format!("// @generated by logspec-codegen {}; do not edit\n", env!("CARGO_PKG_VERSION"));
        for (module, file) in &modules {
            // Relative to the include file when beside it, so that the tree moves with it.
            let shown = file.strip_prefix(&dir).unwrap_or(file).display().to_string().replace('\\', "/");
            text.push_str(&format!("\npub mod {module} {{\n    include!({shown:?});\n}}\n"));
        }
        write_if_changed(&path, &text)?;
        Ok(Some(path))
    }

    /// The older layouts of the lock file next to the schema (`x.toml` -> `x.lock`), if any.
    fn history(&self, path: &Path, schema: &logspec_ir::ir::Schema) -> Result<Vec<logspec_ir::ir::Schema>, BuildError> {
        let (lock_path, lock) = logspec_ir::lock::read_next_to(path).map_err(BuildError::Lock)?;
        if self.emit_rerun {
            // Cargo treats a watched path that does not exist as changed on every build, so a
            // missing lock file is watched through its folder (which changes when it is created).
            let watched = match (&lock, lock_path.parent()) {
                (None, Some(dir)) if !dir.as_os_str().is_empty() => dir,
                _ => lock_path.as_path(),
            };
            println!("cargo:rerun-if-changed={}", watched.display());
        }
        match lock {
            Some(l) => logspec_ir::history::history(schema, &l)
                .map_err(|e| BuildError::Lock(format!("{}: {e}", lock_path.display()))),
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_new() {
        assert_eq!(format!("{:?}", Builder::default()), format!("{:?}", Builder::new()));
        assert!(Builder::default().emit_rerun);
    }

    #[test]
    fn an_invalid_runtime_path_is_an_error() {
        let dir = std::env::temp_dir();
        let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas/usvlog.toml");
        for bad in ["logspec runtime", "::logspec::<u8>", ""] {
            let b = Builder::new().out_dir(&dir).emit_rerun_if_changed(false).runtime_path(bad);
            let e = b.compile(&[schema]).unwrap_err();
            assert!(e.to_string().starts_with(&format!("invalid runtime path `{bad}`")), "{e}");
            let e = b.compile_struct_schemas("x", &[("A", "double x")]).unwrap_err();
            assert!(matches!(e, BuildError::Option(_)), "{e}");
        }
    }

    #[test]
    fn ros2_msgs_are_read_in_the_ros2_dialect_and_laid_out_as_cdr() {
        let dir = std::env::temp_dir().join(format!("logspec-build-ros2-{}", std::process::id()));
        let msg = dir.join("demo/msg/Bounded.msg");
        std::fs::create_dir_all(msg.parent().unwrap()).unwrap();
        // Bounded types and a default value: the ROS 2 dialect only.
        std::fs::write(&msg, "string<=5 name\nint32[<=3] xs\nuint8 n 7\nfloat64 after\n").unwrap();
        let b = Builder::new().out_dir(&dir).emit_rerun_if_changed(false);
        assert_eq!(b.compile_ros2_msgs("ros2", &[&msg]).unwrap(), vec![dir.join("ros2.rs")]);
        // Natural alignment: `after` (f64) pads to 8 from the payload's start; no fixed offset.
        let src = std::fs::read_to_string(dir.join("ros2.rs")).unwrap();
        assert!(src.contains("pub struct Bounded") && !src.contains("OFFSET_AFTER"), "{src}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_compile_method_returns_the_written_files() {
        let dir = std::env::temp_dir().join(format!("logspec-build-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let msg = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/msg");
        let msgs: Vec<PathBuf> = ["std_msgs/msg/Header.msg", "demo/msg/Point.msg", "demo/msg/Sample.msg"]
            .iter()
            .map(|m| Path::new(msg).join(m))
            .collect();
        let b = Builder::new().out_dir(&dir).emit_rerun_if_changed(false).include_file("all.rs");
        let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas/usvlog.toml");
        assert_eq!(b.compile(&[schema]).unwrap(), vec![dir.join("usvlog.rs"), dir.join("all.rs")]);
        assert_eq!(
            b.compile_struct_schemas("geom", &[("T2", "double x;double y")]).unwrap(),
            vec![dir.join("geom.rs"), dir.join("all.rs")]
        );
        let all = std::fs::read_to_string(dir.join("all.rs")).unwrap();
        assert!(all.contains("pub mod geom {\n    include!(\"geom.rs\");\n}"), "{all}");
        assert!(all.contains("pub mod usvlog {\n    include!(\"usvlog.rs\");\n}"), "{all}");
        let written = b.compile_msgs("ros", &msgs).unwrap();
        assert_eq!(written, vec![dir.join("ros.rs"), dir.join("all.rs")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
