//! The `logspec` command as a Python wheel (`pyproject.toml` at the root: maturin, `bindings =
//! "bin"`), and the pre-commit hooks (`.pre-commit-hooks.yaml`) installed through it.
//!
//! - `cli_wheel_without_cargo`: `maturin build` (a debug wheel, in the wheels' target directory,
//!   [`wheels_target_dir`]), the wheel installed into a fresh venv, then `logspec init`, `gen` and
//!   `check` in a scratch git repository, run with a `PATH` of only the venv's `bin` and
//!   `/usr/bin:/bin`, on which `cargo` must not be found.
//! - `pre_commit_blocks_a_stale_header`: the real `pre-commit` (py/requirements-test.txt) with a
//!   `.pre-commit-config.yaml` naming this repository (a commit of its working tree, tracked and
//!   untracked files, in a scratch clone) in a scratch logspec project: a schema change committed
//!   without `logspec gen` is refused with `logspec check`'s diagnostic, the `logspec-gen` hook
//!   rewrites the header, and the next commit passes. pre-commit installs the hooks by `pip install
//!   .` of the hook repository, which builds the wheel from source with cargo (a debug build here,
//!   `MATURIN_PEP517_ARGS=--profile dev`, in the wheels' target directory) and fetches maturin
//!   from the package index.

use crate::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::tools;

use tools::{trial, Need};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs `cmd`, panicking with its output (and `what`) when it fails; returns its output.
fn run(what: &str, cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(o.status.success(), "{what} failed ({}):\n{}", o.status, text(&o));
    text(&o)
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir).args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]);
    c
}

/// The cargo target directory where both trials build the command's wheel: `<target>/wheels`,
/// beside this test run's (`CARGO_TARGET_TMPDIR` is its `tmp/`), kept between runs.
///
/// One directory for both, because they build the same thing: the command alone, whose
/// dependencies resolve to other features than in `cargo test --workspace` (the tests' and the
/// other members' dependencies unify into those), so neither could reuse the tests' build, and
/// each compiled the command's dependencies on its own. Not the test run's own: maturin moves
/// the binary cargo leaves in `debug/` into its own folder, and there that is the `logspec` the
/// other trials run at the same time. Cargo names a workspace's artifacts by paths relative to
/// the workspace, so the hook repository's clone and this checkout take each other's place here,
/// which costs the workspace's own crates again, not their dependencies.
fn wheels_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("CARGO_TARGET_TMPDIR has a parent").join("wheels")
}

/// Held around each build in [`wheels_target_dir`]: maturin moves the binary cargo left there
/// into its own folder after cargo is done, so two builds at once (the trials run in parallel)
/// could take each other's binary away.
static WHEEL_BUILDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_build_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    WHEEL_BUILDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn fresh(name: &str) -> PathBuf {
    let dir = scratch::temp_dir().join(format!("wheel-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    assert!(!dir.starts_with(env!("CARGO_MANIFEST_DIR")), "the scratch directory must be outside the workspace");
    dir
}

/// Where `logspec init --header` puts the C header, as a firmware repository would have it.
const HEADER: &str = "firmware/record_types.h";

/// The record a schema change adds (the header that `gen` wrote before it is then stale).
const BATTERY: &str = "\n[[record]]\nname = \"REC_BATTERY\"\nid = 2\ndoc = \"Battery state.\"\nfields = [\n  { name = \"volts\", type = \"f32\", unit = \"V\" },\n]\n";

/// The record type id that the header at `path` gives `name` (`#define NAME ID`), if any.
fn record_id(path: &Path, name: &str) -> Option<String> {
    let header = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    header.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some("#define") && words.next() == Some(name)).then(|| words.next().unwrap_or("").to_string())
    })
}

fn cli_wheel_without_cargo() {
    let root = fresh("bin");
    let dist = root.join("dist");
    // The wheel: a debug build, in the wheels' target directory.
    let building = one_build_at_a_time();
    let said = run(
        "maturin build",
        Command::new("maturin")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--locked", "--out"])
            .arg(&dist)
            .env("CARGO_TARGET_DIR", wheels_target_dir()),
    );
    drop(building);
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel in {}: {wheels:?}\n{said}", dist.display());
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let stem = format!("logspec_cli-{}-py3-none-", env!("CARGO_PKG_VERSION"));
    assert!(
        name.starts_with(&stem),
        "the wheel {name} is not {stem}<platform>.whl (distribution logspec-cli, the crate's version, any Python)"
    );

    // A fresh venv (not the one running the tests), the wheel installed from its file alone.
    let venv = root.join("venv");
    run("python3 -m venv", Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(
        "pip install the wheel",
        Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--quiet"])
            .arg(wheel),
    );

    // Only the venv and the system's directories on PATH, and no cargo among them.
    let bin = venv.join("bin");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let bare = |dir: &Path, program: &str| {
        let mut c = Command::new(program);
        c.current_dir(dir).env_clear().env("PATH", &path).env("HOME", &home);
        c
    };
    let which = |program: &str| {
        bare(&root, "/bin/sh").args(["-c", &format!("command -v {program}")]).output().expect("/bin/sh")
    };
    let cargo = which("cargo");
    assert!(
        !cargo.status.success(),
        "cargo is on the PATH of the no-toolchain test ({path}): {}; this test needs a machine whose /usr/bin and /bin have no cargo",
        text(&cargo).trim()
    );
    let found = which("logspec");
    assert!(found.status.success(), "logspec is not on PATH after installing {name}:\n{}", text(&found));
    assert_eq!(text(&found).trim(), bin.join("logspec").display().to_string(), "logspec comes from the venv");
    let said = run("logspec --version", bare(&root, "logspec").arg("--version"));
    assert!(said.contains(env!("CARGO_PKG_VERSION")), "{said}");

    // init, gen, check in a scratch git repository.
    let repo = root.join("fw");
    std::fs::create_dir_all(&repo).unwrap();
    run("git init", git(&repo).args(["init", "-q"]));
    let said = run("logspec init", bare(&repo, "logspec").args(["init", "--format", "fw", "--header", HEADER]));
    assert!(said.contains("logspec check"), "init prints the CI line:\n{said}");
    assert!(repo.join("schemas/fw.toml").is_file() && repo.join("logspec.toml").is_file(), "{said}");
    let said = run("logspec gen", bare(&repo, "logspec").arg("gen"));
    assert!(said.contains(&format!("wrote     {HEADER}")), "{said}");
    assert_eq!(record_id(&repo.join(HEADER), "REC_HEARTBEAT").as_deref(), Some("1"), "the header that gen wrote");
    let said = run("logspec check", bare(&repo, "logspec").arg("check"));
    assert!(said.contains("every generated file and lock file is up to date"), "{said}");
    run("git add", git(&repo).args(["add", "."]));
    run("git commit", git(&repo).args(["commit", "-qm", "logspec init"]));

    // A schema change without `gen`: check fails, naming the header; gen fixes it.
    let schema = std::fs::read_to_string(repo.join("schemas/fw.toml")).unwrap();
    std::fs::write(repo.join("schemas/fw.toml"), schema + BATTERY).unwrap();
    let o = bare(&repo, "logspec").arg("check").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "check of a stale header:\n{}", text(&o));
    assert!(text(&o).contains("differ from the schemas") && text(&o).contains(HEADER), "{}", text(&o));
    run("logspec gen", bare(&repo, "logspec").arg("gen"));
    run("logspec check", bare(&repo, "logspec").arg("check"));
    assert_eq!(record_id(&repo.join(HEADER), "REC_BATTERY").as_deref(), Some("2"), "the header that gen rewrote");
    let _ = std::fs::remove_dir_all(&root);
}

/// A commit of this repository's working tree as it is (tracked files with their changes, and
/// untracked files that .gitignore does not exclude), in a scratch clone whose branch `hooks`
/// points at it: what pre-commit clones. The repository's own index and branches are untouched
/// (a separate index file; only new objects are written).
fn hook_repository(root: &Path) -> (PathBuf, String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let index = root.join("index");
    let with_index = |args: &[&str]| {
        let mut c = git(src);
        c.env("GIT_INDEX_FILE", &index).args(args);
        run(&format!("git {args:?} in {} (the hooks' repository must be a git checkout)", src.display()), &mut c)
    };
    with_index(&["read-tree", "HEAD"]);
    with_index(&["add", "-A"]);
    let tree = with_index(&["write-tree"]).trim().to_string();
    let commit =
        with_index(&["commit-tree", &tree, "-p", "HEAD", "-m", "the working tree, for pre-commit"]).trim().to_string();
    let clone = root.join("hooks-repo");
    run("git clone --shared", git(root).args(["clone", "--quiet", "--shared", "--no-checkout"]).arg(src).arg(&clone));
    run("git update-ref", git(&clone).args(["update-ref", "refs/heads/hooks", &commit]));
    let listed = std::fs::read_to_string(src.join(".pre-commit-hooks.yaml")).expect(".pre-commit-hooks.yaml");
    assert!(listed.contains("id: logspec-check") && listed.contains("id: logspec-gen"), "{listed}");
    (clone, commit)
}

/// Whether pre-commit's output has the line `<name>.....<verdict>` for the hook named `name`.
fn hook_said(output: &str, name: &str, verdict: &str) -> bool {
    output
        .lines()
        .any(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with('.') && rest.trim_end().ends_with(verdict)))
}

fn pre_commit_blocks_a_stale_header() {
    let root = fresh("pre-commit");
    let (hooks, rev) = hook_repository(&root);
    let home = root.join("pre-commit-home");
    // pre-commit and the git hook it installs, with its cache in the scratch directory and the
    // wheel built as a debug build in the wheels' target directory ([`wheels_target_dir`]).
    let with_env = |mut c: Command| {
        c.env("PRE_COMMIT_HOME", &home)
            .env("CARGO_TARGET_DIR", wheels_target_dir())
            .env("MATURIN_PEP517_ARGS", "--profile dev")
            .env_remove("PRE_COMMIT")
            .env_remove("SKIP");
        c
    };

    let repo = root.join("fw");
    std::fs::create_dir_all(&repo).unwrap();
    run("git init", git(&repo).args(["init", "-q"]));
    let logspec = |args: &[&str]| {
        run(&format!("logspec {args:?}"), Command::new(env!("CARGO_BIN_EXE_logspec")).current_dir(&repo).args(args))
    };
    logspec(&["init", "--format", "fw", "--header", HEADER]);
    logspec(&["gen"]);
    std::fs::write(
        repo.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: logspec-check\n      - id: logspec-gen\n",
            hooks.display()
        ),
    )
    .unwrap();
    run("git add", git(&repo).args(["add", "."]));
    run("git commit", git(&repo).args(["commit", "-qm", "logspec init"]));
    run("pre-commit install", with_env(Command::new("pre-commit")).current_dir(&repo).arg("install"));
    // The hooks' environment: `pip install .` of the hook repository, which builds the wheel.
    let building = one_build_at_a_time();
    run("pre-commit install-hooks", with_env(Command::new("pre-commit")).current_dir(&repo).arg("install-hooks"));
    drop(building);

    // A schema change committed without `logspec gen`: the commit is refused with check's diagnostic.
    let schema = std::fs::read_to_string(repo.join("schemas/fw.toml")).unwrap();
    std::fs::write(repo.join("schemas/fw.toml"), schema + BATTERY).unwrap();
    run("git add", git(&repo).args(["add", "schemas/fw.toml"]));
    let head = run("git rev-parse", git(&repo).args(["rev-parse", "HEAD"]));
    let o = with_env(git(&repo)).args(["commit", "-m", "battery record"]).output().unwrap();
    let said = text(&o);
    assert!(!o.status.success(), "a commit with a stale header passed the hooks:\n{said}");
    assert_eq!(run("git rev-parse", git(&repo).args(["rev-parse", "HEAD"])), head, "no commit was made:\n{said}");
    assert!(hook_said(&said, "logspec check", "Failed"), "{said}");
    assert!(said.contains("generated file(s) differ from the schemas") && said.contains(HEADER), "{said}");
    assert!(said.contains("run `logspec gen`"), "{said}");
    // The gen hook, after it, rewrote the header (pre-commit fails a hook that changes files).
    assert!(hook_said(&said, "logspec gen", "Failed") && said.contains("files were modified by this hook"), "{said}");
    assert_eq!(record_id(&repo.join(HEADER), "REC_BATTERY").as_deref(), Some("2"), "{said}");

    // Add what gen wrote: the commit passes both hooks.
    run("git add", git(&repo).args(["add", "-A"]));
    let said = run("git commit (after logspec gen)", with_env(git(&repo)).args(["commit", "-m", "battery record"]));
    assert!(hook_said(&said, "logspec check", "Passed") && hook_said(&said, "logspec gen", "Passed"), "{said}");
    let status = run("git status", git(&repo).args(["status", "--porcelain"]));
    assert!(status.trim().is_empty(), "the commit left changes:\n{status}");
    let _ = std::fs::remove_dir_all(&root);
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        trial(
            "cli_wheel_without_cargo",
            &[Need::Program("maturin"), Need::Program("git"), Need::PyModule("ensurepip")],
            cli_wheel_without_cargo,
        ),
        trial(
            "pre_commit_blocks_a_stale_header",
            &[Need::Program("pre-commit"), Need::Program("git"), Need::Program("cargo")],
            pre_commit_blocks_a_stale_header,
        ),
    ]
}
