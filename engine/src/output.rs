//! Output files that never destroy data: every verb that writes a file goes through
//! [`OutFile`], which refuses an output that is one of the verb's inputs (also through symbolic
//! or hard links) and writes into a temporary file in the output's directory that is renamed
//! over the output only when the verb commits it. A failed or interrupted run leaves the old
//! output as it was and no half-written file under the output's name (a run killed outright
//! leaves its temporary file, `.NAME.*.tmp[.EXT]`, beside it, holding what was written).

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

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
}

impl OutFile {
    /// Checks that `dest` is none of `inputs` and creates the temporary file in its directory.
    pub fn create(dest: &Path, inputs: &[&Path]) -> Result<OutFile, Error> {
        refuse_input(dest, inputs)?;
        if dest.is_dir() {
            return Err(Error::Usage(format!("the output {} is a directory", dest.display())));
        }
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dest.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        // The extension is kept at the end: some writers pick the encoding by it (PNG, SVG).
        let suffix = match dest.extension() {
            Some(x) => format!(".tmp.{}", x.to_string_lossy()),
            None => ".tmp".to_string(),
        };
        let tmp =
            tempfile::Builder::new().prefix(&format!(".{name}.")).suffix(&suffix).tempfile_in(&dir).map_err(|e| {
                // tempfile's error names the random temporary path; the user knows only `dest`.
                let cause = e.get_ref().and_then(|p| p.source()).map_or_else(|| e.to_string(), |s| s.to_string());
                Error::Input(format!("{}: cannot create a file in {}: {cause}", dest.display(), dir.display()))
            })?;
        Ok(OutFile { tmp, dest: dest.to_path_buf() })
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
        self.tmp.persist(&dest).map_err(|e| err(&e.error))?;
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
