//! One scratch directory per test process, removed when the process exits, so that repeated
//! test runs leave nothing behind in the system's temporary folder.
//!
//! Set `LOGSPEC_KEEP_SCRATCH=1` to keep it (its path is `logspec-tests-<pid>` in the temporary
//! folder) when a failing test's files are wanted.

use std::path::PathBuf;
use std::sync::OnceLock;

static ROOT: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_root() {
    if let Some(root) = ROOT.get() {
        let _ = std::fs::remove_dir_all(root);
    }
}

/// This process's scratch directory: created on first use, removed at exit.
// `atexit`, a call into the C library.
#[allow(unsafe_code)]
pub fn temp_dir() -> PathBuf {
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("logspec-tests-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create the scratch directory");
        if std::env::var_os("LOGSPEC_KEEP_SCRATCH").is_none() {
            // SAFETY: `remove_root` is a plain `extern "C" fn` that only reads a `OnceLock` set
            // before it is registered; `atexit` runs it once, as the process exits normally
            // (libtest returns from `main` or calls `exit`, both of which run it).
            unsafe { libc::atexit(remove_root) };
        }
        root
    })
    .clone()
}
