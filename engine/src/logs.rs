//! The set of logs a query or an export reads: files, directories (searched recursively) and
//! glob patterns, each log with its partition name, `log=<name>` in the Parquet export
//! ([`partition`]) and the `log` column of the engines' scans ([`crate::stream`]), so that both
//! give the same columns. docs/parquet.md, docs/engines.md.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use logspec::log::{Error, Open};

/// A log among the inputs: its file and its partition name (`log=<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    pub file: PathBuf,
    pub log: String,
}

/// An input that is not a log logspec reads (not exported, not scanned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotExported {
    /// The file, as shown in messages.
    pub file: String,
    /// Why: the detection's error (the file's first bytes and the formats expected), or why the
    /// file could not be opened.
    pub reason: String,
}

/// The file extensions of logs (compared without regard to case): a file with one of them that
/// is found in a directory and is not a log of a format logspec reads is reported. A file found
/// there without one is a log when its content is one (a project schema's log, an RLOG named
/// `.dat`) and passed over silently otherwise.
pub const LOG_EXTENSIONS: [&str; 6] = ["usvlog", "bin", "rlog", "wpilog", "bag", "log"];

/// What the inputs hold: the logs, and the files that are not.
#[derive(Debug)]
pub struct Found {
    /// The logs, in the order of the inputs (a directory's files sorted).
    pub logs: Vec<LogFile>,
    /// Every file named (or matched by a pattern), and every file with a log extension found in
    /// a directory, whose format was not recognised.
    pub not_logs: Vec<NotExported>,
    /// Files without a log extension found in directories that are not logs either: only counted.
    pub passed_over: usize,
}

/// A file among the inputs.
struct Candidate {
    file: PathBuf,
    /// Named on the command line or matched by a pattern (not found in a directory).
    named: bool,
}

/// The logs named by the inputs (files, directories searched recursively, glob patterns), each
/// with its partition name, and the inputs that are not logs; two logs that would share a name
/// are refused. A file named by the user, or found in a directory with a log extension
/// ([`LOG_EXTENSIONS`]), is a log or is reported ([`NotExported`]); a file found without one is
/// a log if its content says so and is passed over otherwise. Inputs with no log and no other
/// file are an error; inputs whose files are all [`NotExported`] are not (the caller says it). Files under `exclude` (an output
/// directory inside an input directory) are left out.
pub fn find(inputs: &[PathBuf], how: &Open, exclude: Option<&Path>) -> Result<Found, Error> {
    let mut files = Vec::new();
    for input in inputs {
        let text = input.to_string_lossy();
        if input.as_os_str() == "-" {
            return Err(Error::Usage("logs are read from files, not standard input".into()));
        }
        if !input.exists() && text.contains(['*', '?', '[']) {
            let paths = glob::glob(&text).map_err(|e| Error::Usage(format!("{text}: bad pattern: {e}")))?;
            let mut n = 0;
            for p in paths {
                let p = p.map_err(|e| Error::Input(format!("{text}: {e}")))?;
                if is_index(&p) {
                    continue;
                }
                add(&p, &mut files)?;
                n += 1;
            }
            if n == 0 {
                return Err(Error::Input(format!("{text}: no file matches the pattern")));
            }
        } else {
            add(input, &mut files)?;
        }
    }
    let out = exclude.and_then(|o| std::fs::canonicalize(o).ok());
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut plan = Found { logs: Vec::new(), not_logs: Vec::new(), passed_over: 0 };
    for Candidate { file, named } in files {
        if let (Some(out), Ok(f)) = (&out, std::fs::canonicalize(&file)) {
            if f.starts_with(out) {
                continue; // Our own output, when OUT is under an input directory.
            }
        }
        if by_name.get(&partition(&file)) == Some(&file) {
            continue; // Named twice.
        }
        let shown = file.display().to_string();
        if named || has_log_extension(&file) {
            // Read as the conversion will read it (`--format`, `--schema` included).
            if let Err(e) = sniff(&file, how) {
                let reason = e.to_string();
                let reason = reason.strip_prefix(&format!("{shown}: ")).map_or(reason.clone(), str::to_string);
                plan.not_logs.push(NotExported { file: shown, reason });
                continue;
            }
        } else if sniff(&file, &Open::default()).is_err() {
            plan.passed_over += 1;
            continue;
        }
        let log = partition(&file);
        if let Some(other) = by_name.get(&log) {
            return Err(Error::Usage(format!(
                "{} and {} would both be log={log}: a log's partition is its file name without the extension; rename one, or export or query them in separate runs",
                other.display(),
                file.display()
            )));
        }
        by_name.insert(log.clone(), file.clone());
        plan.logs.push(LogFile { file, log });
    }
    if plan.logs.is_empty() && plan.not_logs.is_empty() {
        return Err(Error::Usage(format!(
            "no log files among the inputs (files with the extensions {} are looked for in directories; name a log of another name directly)",
            LOG_EXTENSIONS.map(|x| format!(".{x}")).join(", ")
        )));
    }
    Ok(plan)
}

/// A log's partition name: its file name without the extension, escaped.
pub fn partition(file: &Path) -> String {
    let stem = file.file_stem().map_or_else(|| "log".to_string(), |s| s.to_string_lossy().into_owned());
    crate::names::fit(&crate::parquet::escape(&stem), "log=".len())
}

/// Adds a file named by the user, or every file under a directory (sorted; hidden files, whose
/// names start with `.`, skipped).
fn add(path: &Path, files: &mut Vec<Candidate>) -> Result<(), Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
    if !meta.is_dir() || is_bag(path) {
        files.push(Candidate { file: path.to_path_buf(), named: true });
        return Ok(());
    }
    search(path, files)
}

/// Whether a directory is a rosbag2 bag (it holds a `metadata.yaml`): one log, its storage files
/// read together.
fn is_bag(dir: &Path) -> bool {
    dir.join("metadata.yaml").is_file()
}

fn search(dir: &Path, files: &mut Vec<Candidate>) -> Result<(), Error> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Input(format!("{}: cannot list: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) && !is_index(p))
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() && is_bag(&e) {
            files.push(Candidate { file: e, named: true });
        } else if e.is_dir() {
            search(&e, files)?;
        } else {
            files.push(Candidate { file: e, named: false });
        }
    }
    Ok(())
}

/// Whether a file is a log's time index (`<log>.logspec-idx`, [`crate::index`]), which a search
/// of directories or a pattern passes over.
fn is_index(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "logspec-idx")
}

/// Whether a file's extension is one of [`LOG_EXTENSIONS`].
pub fn has_log_extension(path: &Path) -> bool {
    path.extension().is_some_and(|x| LOG_EXTENSIONS.iter().any(|l| x.eq_ignore_ascii_case(l)))
}

/// Detects a file's format from its first bytes, as reading it will.
fn sniff(path: &Path, how: &Open) -> Result<(), Error> {
    if path.is_dir() {
        return logspec::log::open(path, how).map(drop);
    }
    let f = File::open(path).map_err(|e| Error::Input(format!("{}: cannot open: {e}", path.display())))?;
    logspec::log::detect(path, Box::new(f), how).map(drop)
}
