//! `logspec init [DIR]`: starts logspec in a repository: `schemas/<format>.toml` (a starter schema
//! with a file header, framing and one record), its lock file and `logspec.toml`, then prints the
//! next steps and the line for CI. Never overwrites a file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::project::{self, FILE};
use super::Error;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  logspec init\n  logspec init ../usv-autopilot --format usvlog --header firmware/src/logging/record_types.h\n\nThen edit schemas/<format>.toml, run `logspec gen`, and commit the schema, its lock file and the\ngenerated files. In CI: `logspec check` (and `logspec diff --against origin/main` on pull requests)."
)]
pub struct Args {
    /// The repository to start (created if missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// The format's name: the schema's file name, the Python module's and the C prefix
    /// [default: the directory's name, as an identifier].
    #[arg(long, value_name = "NAME")]
    pub format: Option<String>,
    /// Where the C header goes, relative to DIR (`{format}` stands for the format's name).
    #[arg(long, value_name = "PATH", default_value = "include/{format}/record_types.h")]
    pub header: String,
}

/// `name` as a format name: lower-case letters, digits and `_`, starting with a letter.
fn identifier(name: &str) -> Option<String> {
    let id: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    let id = id.trim_matches('_').to_string();
    (id.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && id.len() <= 32).then_some(id)
}

/// The starter schema: a file header that carries a magic and the schema id, the usual record
/// header (time, type, length) and one record to copy from. Its first line, a TOML comment, points
/// editors that read `#:schema` (Taplo, Even Better TOML) at the schema language's JSON Schema.
fn starter(format: &str) -> String {
    let upper = format.to_ascii_uppercase();
    let magic: String = upper.chars().filter(char::is_ascii_alphanumeric).take(8).collect();
    let magic = if magic.is_empty() { "LOG".to_string() } else { magic };
    let n = magic.len();
    format!(
        r#"#:schema {json_schema}
# {format}: describe your log here; `logspec gen` writes the C header, the Python module, the
# docs and the golden vectors from it (where logspec.toml says), `logspec check` fails in CI when
# they are stale. Field order is wire order; units are SI.
#
# Add a record: a new [[record]] with the next free id, then `logspec gen`.
# Change a record that files were already written with: bump schema_id, then `logspec lock`.
# The schema language: docs/schema-language.md in the logspec repository.

[format]
name = "{format}"
title = "{format} log"
doc = "A {header_len}-byte file header, then records: u64 t_us, u16 type, u16 len, then len payload bytes. Unknown types are skipped by len."
endian = "little"
version = "1"
schema_id = {{ value = 1, name = "{upper}_SCHEMA", field = "schema" }}

[file_header]
name = "FileHeader"
doc = "Written once at the start of the file."
fields = [
  {{ name = "magic", type = "bytes[{n}]", const = "{magic}", doc = "ASCII `{magic}`." }},
  {{ name = "schema", type = "u32", doc = "The {upper}_SCHEMA the file was written under." }},
]

[framing]
name = "RecordHeader"
doc = "Precedes every record."
tag = "type"
length = "len"
timestamp = "t_us"
fields = [
  {{ name = "t_us", type = "u64", unit = "us", doc = "Monotonic microseconds." }},
  {{ name = "type", type = "u16", doc = "Record type id (REC_*)." }},
  {{ name = "len", type = "u16", unit = "B", doc = "Payload length in bytes." }},
]

[[record]]
name = "REC_HEARTBEAT"
id = 1
doc = "Sent once a second: the system is alive."
fields = [
  {{ name = "uptime", type = "u32", unit = "ms", doc = "Time since boot." }},
  {{ name = "battery", type = "f32", unit = "V", doc = "Battery voltage." }},
]
"#,
        header_len = n + 4,
        json_schema = logspec::ir::language::JSON_SCHEMA_URL,
    )
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let dir = &args.dir;
    let format = match &args.format {
        Some(f) => identifier(f).filter(|id| id == f).ok_or_else(|| {
            Error::Usage(format!(
                "--format {f:?}: a format name is lower-case letters, digits and `_`, starting with a letter (at most 32)"
            ))
        })?,
        None => {
            let name = dir
                .canonicalize()
                .ok()
                .or_else(|| std::env::current_dir().ok().map(|d| d.join(dir)))
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            identifier(&name).unwrap_or_else(|| "mylog".to_string())
        }
    };
    let header = args.header.replace("{format}", &format);
    if header.trim().is_empty() || Path::new(&header).is_absolute() || header.contains("..") {
        return Err(Error::Usage(format!("--header {header:?}: a path relative to {}, inside it", dir.display())));
    }
    let schema_path = project::tidy(&dir.join("schemas").join(format!("{format}.toml")));
    let config_path = project::tidy(&dir.join(FILE));
    for p in [&schema_path, &config_path] {
        if p.exists() {
            return Err(Error::Usage(format!(
                "{}: already exists; `logspec init` never overwrites a file (remove it, or edit it by hand)",
                p.display()
            )));
        }
    }
    let mkdir =
        |d: &Path| std::fs::create_dir_all(d).map_err(|e| Error::Input(format!("{}: cannot create: {e}", d.display())));
    mkdir(&dir.join("schemas"))?;
    logspec_engine::output::write_file(&schema_path, &[], starter(&format).as_bytes())?;
    logspec_engine::output::write_file(&config_path, &[], project::template("schemas", &args.header).as_bytes())?;
    super::write_stdout(
        format!("wrote     {}\nwrote     {}\n", schema_path.display(), config_path.display()).as_bytes(),
    )?;
    // The first lock: schema id 1 as it is now.
    let project = project::Args { config: Some(config_path.clone()), ..Default::default() }.resolve()?;
    for (path, schema) in super::lock::schemas(&project.schemas)? {
        super::lock::update(&project, &path, &schema, false, &super::report::Reporter::new(Default::default()))?;
    }
    let cd = if dir == Path::new(".") { String::new() } else { format!("cd {} && ", dir.display()) };
    let next = format!(
        "\nNext: edit {}, then `{cd}logspec gen` (writes {header} and the rest, as {FILE} says).\nCommit schemas/, {FILE} and the generated files. In CI, run:\n\n    logspec check\n\n(and `logspec diff --against origin/main` on pull requests).\n",
        schema_path.display()
    );
    super::write_stdout(next.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
