//! Output files that never destroy data: every verb that writes a file goes through
//! [`OutFile`], which refuses an output that is one of the verb's inputs (also through symbolic
//! or hard links) and writes into a temporary file in the output's directory that is renamed
//! over the output only when the verb commits it. A failed or interrupted run leaves the old
//! output as it was and no half-written file under the output's name.
//!
//! # Temporary files
//!
//! Every temporary file a process writes is named with its process id, so that a later run can
//! tell a live writer's file from one left by a run that was killed:
//!
//! - [`OutFile`]: `.NAME.logspec-PID-XXXXXX.tmp[.EXT]` beside the output `NAME[.EXT]` (`XXXXXX`
//!   random);
//! - `export --parquet`: `.part-0.parquet.logspec-PID.tmp` beside each `part-0.parquet`
//!   ([`parquet_temp`]).
//!
//! Each is registered while it exists, so that [`remove_temps`] (what the CLI runs on Ctrl-C,
//! SIGTERM or SIGHUP before it exits) removes every one this process made. A run killed outright
//! (SIGKILL) leaves its temporary files; the next run over the same output removes those whose
//! process is gone ([`remove_stale`]), and only files named as above: never another file, never
//! the file of a process still running (a process id that was reused keeps its file, safely).
//! `rlog record` keeps a killed recording's file ([`OutFile::create_keeping_stale`]): it holds
//! the cycles recorded.

use std::collections::BTreeMap;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary files this process made and has not yet renamed or removed, each with the
/// directories made for it (removed with it when empty); `closed` once [`remove_temps`] ran.
struct Temps {
    files: BTreeMap<PathBuf, Vec<PathBuf>>,
    /// Output directories this process made (removed when empty).
    dirs: Vec<PathBuf>,
    closed: bool,
}

static TEMPS: Mutex<Temps> = Mutex::new(Temps { files: BTreeMap::new(), dirs: Vec::new(), closed: false });

fn temps() -> MutexGuard<'static, Temps> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `create` (which makes a temporary file, and the directories it needs, and returns the
/// file's path and the directories it made) and registers the file, with those directories, in
/// one step with respect to [`remove_temps`]. Refused once [`remove_temps`] ran: no temporary
/// file is made after it.
pub(crate) fn create_temp<T>(create: impl FnOnce() -> io::Result<(T, PathBuf, Vec<PathBuf>)>) -> io::Result<T> {
    let mut t = temps();
    if t.closed {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    let (made, path, dirs) = create()?;
    t.files.insert(path, dirs);
    Ok(made)
}

/// Runs `persist` (which renames the temporary file `tmp` into place) and forgets the file; under
/// the same lock as [`remove_temps`], so a file is either renamed or removed, never both.
pub(crate) fn persist_temp<T>(tmp: &Path, persist: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let mut t = temps();
    if t.closed {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    let done = persist()?;
    t.files.remove(tmp);
    Ok(done)
}

/// Creates the output directory `dir` (and its parents) if missing; [`remove_temps`] removes
/// what this made if it is still empty then.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut t = temps();
    let mut missing = Vec::new();
    let mut d = Some(dir);
    while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        missing.push(p.to_path_buf());
        d = p.parent();
    }
    std::fs::create_dir_all(dir)?;
    t.dirs.extend(missing);
    Ok(())
}

/// Forgets a temporary file that was removed.
pub(crate) fn forget_temp(tmp: &Path) {
    temps().files.remove(tmp);
}

/// Removes every temporary file this process made and has not renamed into place, and the
/// directories made for them that are left empty; no temporary file is made after it. Returns
/// the number of files removed. For a signal handler that exits next (the CLI's Ctrl-C).
pub fn remove_temps() -> usize {
    let mut t = temps();
    t.closed = true;
    let mut removed = 0;
    let mut dirs = std::mem::take(&mut t.dirs);
    for (file, made) in std::mem::take(&mut t.files) {
        if std::fs::remove_file(&file).is_ok() {
            removed += 1;
        }
        dirs.extend(made);
    }
    prune(dirs);
    removed
}

/// Removes the directories of `dirs` that are empty, the deepest first.
fn prune(mut dirs: Vec<PathBuf>) {
    dirs.sort_by(|a, b| b.components().count().cmp(&a.components().count()).then_with(|| a.cmp(b)));
    dirs.dedup();
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
}

/// The marker of logspec's temporary file names: `logspec-PID`.
fn marker() -> String {
    format!("logspec-{}", std::process::id())
}

/// The temporary file of `part-0.parquet` in `dir`: `.part-0.parquet.logspec-PID.tmp`.
pub fn parquet_temp(dir: &Path) -> PathBuf {
    dir.join(format!(".part-0.parquet.{}.tmp", marker()))
}

/// Whether the process `pid` may be running: only a process known to be gone lets its files be
/// removed.
#[allow(unsafe_code)]
fn may_be_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else { return true };
        if pid <= 0 {
            return true;
        }
        // SAFETY: signal 0 sends nothing; kill only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// The process id in a temporary file's name: `NAME` is `{head}logspec-{PID}{rest}`, where
/// `rest` passes `tail`.
fn temp_pid(name: &str, head: &str, tail: &dyn Fn(&str) -> bool) -> Option<u32> {
    let rest = name.strip_prefix(head)?.strip_prefix("logspec-")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (pid, rest) = rest.split_at(digits);
    if pid.is_empty() || pid.len() > 10 || !tail(rest) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temporary files that runs killed outright left for the output `dest` (named as
/// the module docs say, of processes that are gone); returns how many.
pub fn remove_stale(dest: &Path) -> usize {
    let (dir, name) = match (dest.parent(), dest.file_name()) {
        (Some(d), Some(n)) if !d.as_os_str().is_empty() => (d.to_path_buf(), n),
        (_, Some(n)) => (PathBuf::from("."), n),
        _ => return 0,
    };
    let head = format!(".{}.", name.to_string_lossy());
    let suffix = temp_suffix(dest);
    // `-XXXXXX` (tempfile's random part) then the suffix, exactly.
    let tail = |rest: &str| {
        rest.strip_prefix('-')
            .and_then(|r| r.strip_suffix(suffix.as_str()))
            .is_some_and(|r| r.len() == RANDOM_LEN && r.chars().all(|c| c.is_ascii_alphanumeric()))
    };
    let mut removed = 0;
    for file in temp_names(&dir) {
        let Some(pid) = temp_pid(&file, &head, &tail) else { continue };
        let path = dir.join(&file);
        let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if is_file && !may_be_running(pid) && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The names in `dir` that may be temporary files (hidden, with the marker), listed once per
/// process and directory: a verb that writes many files into one directory (`export --csv`)
/// reads it once, not once per file.
fn temp_names(dir: &Path) -> Vec<String> {
    static LISTED: Mutex<BTreeMap<PathBuf, Vec<String>>> = Mutex::new(BTreeMap::new());
    let mut listed = LISTED.lock().unwrap_or_else(|e| e.into_inner());
    listed
        .entry(dir.to_path_buf())
        .or_insert_with(|| {
            let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with('.') && n.contains(".logspec-"))
                .collect()
        })
        .clone()
}

/// Removes the stale temporary Parquet files in `dir` (a `log=NAME` folder of a dataset): those
/// of processes that are gone, and `.part-0.parquet.tmp`, the name of earlier versions; then
/// `dir` and its parent (the table's folder) if they are empty (a run killed between making the
/// folders and its file leaves them so). Returns how many files.
pub fn remove_stale_parquet(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for e in entries.filter_map(Result::ok) {
        let Ok(file) = e.file_name().into_string() else { continue };
        let stale = file == ".part-0.parquet.tmp"
            || temp_pid(&file, ".part-0.parquet.", &|rest| rest == ".tmp").is_some_and(|pid| !may_be_running(pid));
        if stale && e.file_type().is_ok_and(|t| t.is_file()) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    prune([Some(dir.to_path_buf()), dir.parent().map(Path::to_path_buf)].into_iter().flatten().collect());
    removed
}

/// The length of the random part of an [`OutFile`]'s temporary name.
const RANDOM_LEN: usize = 6;

/// `.tmp.EXT`, or `.tmp` for an output without an extension. The extension is kept at the end:
/// some writers pick the encoding by it (PNG, SVG).
fn temp_suffix(dest: &Path) -> String {
    match dest.extension() {
        Some(x) => format!(".tmp.{}", x.to_string_lossy()),
        None => ".tmp".to_string(),
    }
}

use logspec::log::Error;

/// Refuses `out` when it is one of `inputs` (`-`, standard input, is never a file here), or when
/// its directory does not exist (checked before a verb reads its input, not after).
pub fn refuse_input(out: &Path, inputs: &[&Path]) -> Result<(), Error> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "{}: the output directory {} does not exist (create it first, or choose another path)",
            out.display(),
            dir.display()
        )));
    }
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        if same_file(out, input) {
            return Err(Error::Usage(format!(
                "the output {} is the input {}; writing it would destroy the input (choose another output path)",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist (links of
/// every kind), else the same canonical path of the parent directory and the same name.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (canonical(a), canonical(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The canonical path of `p`, or of its directory joined with its name when `p` does not exist.
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.canonicalize().ok()?,
        _ => std::env::current_dir().ok()?,
    };
    Some(dir.join(p.file_name()?))
}

/// A file being written to `dest` through a temporary file beside it. Dropping it without
/// [`commit`](Self::commit) removes the temporary file and leaves `dest` untouched.
#[must_use = "an OutFile that is not committed is discarded"]
pub struct OutFile {
    tmp: tempfile::NamedTempFile,
    dest: PathBuf,
    _registered: Registered,
}

/// Forgets the temporary file when the [`OutFile`] goes (renamed, or removed by `tempfile`).
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        forget_temp(&self.0);
    }
}

impl OutFile {
    /// Checks that `dest` is none of `inputs`, removes the temporary files that killed runs left
    /// for it ([`remove_stale`]) and creates the temporary file in its directory.
    pub fn create(dest: &Path, inputs: &[&Path]) -> Result<OutFile, Error> {
        refuse_input(dest, inputs)?;
        remove_stale(dest);
        Self::new(dest)
    }

    /// [`OutFile::create`], leaving the temporary files of killed runs as they are (a killed
    /// recording's file holds what it recorded).
    pub fn create_keeping_stale(dest: &Path, inputs: &[&Path]) -> Result<OutFile, Error> {
        refuse_input(dest, inputs)?;
        Self::new(dest)
    }

    fn new(dest: &Path) -> Result<OutFile, Error> {
        if dest.is_dir() {
            return Err(Error::Usage(format!("the output {} is a directory", dest.display())));
        }
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dest.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let prefix = format!(".{name}.{}-", marker());
        let tmp = create_temp(|| {
            let t = tempfile::Builder::new()
                .prefix(&prefix)
                .rand_bytes(RANDOM_LEN)
                .suffix(&temp_suffix(dest))
                .tempfile_in(&dir)?;
            let path = t.path().to_path_buf();
            Ok((t, path, Vec::new()))
        })
        .map_err(|e| {
            // tempfile's error names the random temporary path; the user knows only `dest`.
            let cause = e.get_ref().and_then(|p| p.source()).map_or_else(|| e.to_string(), |s| s.to_string());
            Error::Input(format!("{}: cannot create a file in {}: {cause}", dest.display(), dir.display()))
        })?;
        let registered = Registered(tmp.path().to_path_buf());
        Ok(OutFile { tmp, dest: dest.to_path_buf(), _registered: registered })
    }

    /// The temporary file's path, for writers that open the file by name.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Flushes the file to disk and renames it over the destination.
    pub fn commit(self) -> Result<(), Error> {
        let dest = self.dest;
        let err = |e: &dyn std::fmt::Display| Error::Input(format!("{}: cannot write: {e}", dest.display()));
        self.tmp.as_file().sync_all().map_err(|e| err(&e))?;
        // The temporary file is created 0600: keep the permissions of the file it replaces, or
        // give a new one the usual 0644.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dest).map(|m| m.permissions().mode()).unwrap_or(0o644);
            let _ = self.tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode));
        }
        let tmp_path = self.tmp.path().to_path_buf();
        let tmp = self.tmp;
        persist_temp(&tmp_path, || tmp.persist(&dest).map_err(|e| e.error)).map_err(|e| err(&e))?;
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.as_file_mut().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.tmp.as_file_mut().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.as_file_mut().flush()
    }
}

impl Seek for OutFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.tmp.as_file_mut().seek(pos)
    }
}

/// Writes `bytes` to `dest` through an [`OutFile`].
pub fn write_file(dest: &Path, inputs: &[&Path], bytes: &[u8]) -> Result<(), Error> {
    let mut f = OutFile::create(dest, inputs)?;
    f.write_all(bytes).map_err(|e| Error::Input(format!("{}: cannot write: {e}", dest.display())))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only logspec's own names, exactly, give a process id.
    #[test]
    fn temp_names_match_exactly() {
        let tail = |rest: &str| {
            rest.strip_prefix('-')
                .and_then(|r| r.strip_suffix(".tmp.mcap"))
                .is_some_and(|r| r.len() == RANDOM_LEN && r.chars().all(|c| c.is_ascii_alphanumeric()))
        };
        let pid = |name: &str| temp_pid(name, ".x.mcap.", &tail);
        assert_eq!(pid(".x.mcap.logspec-123-aB3xYz.tmp.mcap"), Some(123));
        for other in [
            ".x.mcap.abcdef.tmp.mcap",                 // an earlier version's name: no process id
            ".x.mcap.logspec--aB3xYz.tmp.mcap",        // no digits
            ".x.mcap.logspec-123-aB3xY.tmp.mcap",      // five random characters
            ".x.mcap.logspec-123-aB3xYz.tmp.mcap.bak", // something after
            ".y.mcap.logspec-123-aB3xYz.tmp.mcap",     // another output
            "x.mcap.logspec-123-aB3xYz.tmp.mcap",      // not hidden
            ".x.mcap.logspec-12345678901-aB3xYz.tmp.mcap",
        ] {
            assert_eq!(pid(other), None, "{other}");
        }
        let parquet = |name: &str| temp_pid(name, ".part-0.parquet.", &|rest| rest == ".tmp");
        assert_eq!(parquet(".part-0.parquet.logspec-77.tmp"), Some(77));
        assert_eq!(parquet(".part-0.parquet.logspec-77.tmp.keep"), None);
        assert_eq!(parquet(".part-0.parquet.logspec-77x.tmp"), None);
        assert_eq!(
            parquet_temp(Path::new("d")),
            Path::new("d").join(format!(".part-0.parquet.logspec-{}.tmp", std::process::id()))
        );
    }

    /// This process, and a process id that cannot be one, may be running; a child that has
    /// ended is gone.
    #[cfg(unix)]
    #[test]
    fn a_process_that_ended_is_gone() {
        assert!(may_be_running(std::process::id()));
        assert!(may_be_running(0));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!may_be_running(pid));
    }
}
