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
//! A lock file next to a schema (`schemas/usvlog.lock`) adds the layouts of its older schema ids,
//! as `usvlog::history::schema_<id>` modules that `with_file_format` dispatches to.

use std::path::{Path, PathBuf};

use crate::backend::rust::RustBackend;
use crate::diag::SchemaError;

/// Configures and runs schema compilation from a build script.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    out_dir: Option<PathBuf>,
    runtime_path: Option<String>,
    emit_rerun: bool,
}

/// A failure of [`Builder::compile`]: schema diagnostics or an I/O error.
#[derive(Debug)]
pub enum BuildError {
    Schema(Vec<SchemaError>),
    Io(PathBuf, std::io::Error),
    /// A lock file that cannot be read, or whose history cannot be rebuilt.
    Lock(String),
    NoOutDir,
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
            BuildError::Lock(m) => f.write_str(m),
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
            BuildError::Lock(_) | BuildError::NoOutDir => None,
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
    pub fn new() -> Self {
        Builder { out_dir: None, runtime_path: None, emit_rerun: true }
    }

    /// Where to write `<format>.rs` (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The path generated code uses for the runtime (default `::logspec_runtime`; use
    /// `::logspec::runtime` when depending on the `logspec` facade only).
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = Some(path.into());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: yes).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun = yes;
        self
    }

    /// Compiles every schema, reporting the diagnostics of all of them before failing. Returns the
    /// paths of the generated files.
    pub fn compile(&self, schemas: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or(BuildError::NoOutDir)?,
        };
        let backend = RustBackend {
            runtime_path: self.runtime_path.clone().unwrap_or_else(|| RustBackend::default().runtime_path),
        };
        let mut errors = Vec::new();
        let mut written = Vec::new();
        for path in schemas {
            let path = path.as_ref();
            if self.emit_rerun {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            match crate::compile_file(path) {
                Ok(schema) => {
                    let history = self.history(path, &schema)?;
                    let out = out_dir.join(format!("{}.rs", schema.format.name));
                    std::fs::write(&out, backend.source_with_history(&schema, &history))
                        .map_err(|e| BuildError::Io(out.clone(), e))?;
                    written.push(out);
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(written)
        } else {
            Err(BuildError::Schema(errors))
        }
    }

    /// Compiles ROS1 `.msg` files (each at `<package>/msg/<Type>.msg` or `<package>/<Type>.msg`)
    /// into one Rust file, `<module>.rs`: a struct per message type (and per type they use), with
    /// decoders, encoders, visitors and the messages' constants.
    ///
    /// ```no_run
    /// // In build.rs:
    /// logspec_codegen::Builder::new()
    ///     .compile_msgs("ros_msgs", &["msg/sensor_msgs/msg/Imu.msg", "msg/std_msgs/msg/Header.msg"])
    ///     .unwrap_or_else(|e| e.exit());
    /// ```
    pub fn compile_msgs(&self, module: &str, msgs: &[impl AsRef<Path>]) -> Result<PathBuf, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or(BuildError::NoOutDir)?,
        };
        if self.emit_rerun {
            for p in msgs {
                println!("cargo:rerun-if-changed={}", p.as_ref().display());
            }
        }
        let set = crate::ros::compile_msg_files(msgs).map_err(BuildError::Schema)?;
        let roots: Vec<&str> = set.types.keys().map(String::as_str).collect();
        let runtime = self.runtime_path.clone().unwrap_or_else(|| RustBackend::default().runtime_path);
        let from = format!("{} .msg file(s)", msgs.len());
        let text = crate::ros::rust::source(&set, &roots, module, &runtime, Some(from));
        let out = out_dir.join(format!("{module}.rs"));
        std::fs::write(&out, text).map_err(|e| BuildError::Io(out.clone(), e))?;
        Ok(out)
    }

    /// Compiles WPILib struct schemas (`wpiutil/doc/struct.adoc`), given as `(name, schema text)`
    /// pairs such as `("Pose2d", "Translation2d translation;Rotation2d rotation")`, into one Rust
    /// file, `<module>.rs`: a struct per schema, with decoders, encoders and visitors; bit-fields
    /// are a storage integer per run with a getter per field.
    ///
    /// ```no_run
    /// // In build.rs:
    /// logspec_codegen::Builder::new()
    ///     .compile_struct_schemas("geometry", &[("Translation2d", "double x;double y")])
    ///     .unwrap_or_else(|e| e.exit());
    /// ```
    pub fn compile_struct_schemas(&self, module: &str, schemas: &[(&str, &str)]) -> Result<PathBuf, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or(BuildError::NoOutDir)?,
        };
        let set = crate::wpistruct::compile_schemas(module, schemas).map_err(BuildError::Schema)?;
        let roots: Vec<&str> = set.types.keys().map(String::as_str).collect();
        let runtime = self.runtime_path.clone().unwrap_or_else(|| RustBackend::default().runtime_path);
        let from = format!("{} struct schema(s)", schemas.len());
        let text = crate::wpistruct::rust_source(&set, &roots, module, &runtime, Some(from));
        let out = out_dir.join(format!("{module}.rs"));
        std::fs::write(&out, text).map_err(|e| BuildError::Io(out.clone(), e))?;
        Ok(out)
    }

    /// The older layouts of the lock file next to the schema (`x.toml` -> `x.lock`), if any.
    fn history(&self, path: &Path, schema: &crate::ir::Schema) -> Result<Vec<crate::ir::Schema>, BuildError> {
        let (lock_path, lock) = crate::lock::read_next_to(path).map_err(BuildError::Lock)?;
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
            Some(l) => crate::history::history(schema, &l)
                .map_err(|e| BuildError::Lock(format!("{}: {e}", lock_path.display()))),
            None => Ok(Vec::new()),
        }
    }
}
