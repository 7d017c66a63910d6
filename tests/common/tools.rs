//! External tools the tests need (compilers, emulators, Python packages), and how a test that
//! cannot run says so.
//!
//! A test that needs a tool lives in a test target with `harness = false` and builds its list of
//! [`libtest_mimic::Trial`]s with [`trial`]. When a tool is missing, the trial is reported as
//! **ignored** in the runner's summary (never as a pass), with the reason printed once on stderr.
//! Under CI (`CI=true`), which installs every tool, a missing tool is a failure instead.
#![allow(dead_code)]

use std::process::{Command, Stdio};

use libtest_mimic::{Arguments, Failed, Trial};

/// Something a test needs from the machine.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// A program on `PATH`, probed with `--version`.
    Program(&'static str),
    /// A Python module importable by `python3` (`import name`).
    PyModule(&'static str),
}

impl Need {
    fn present(self) -> bool {
        let mut cmd = match self {
            Need::Program(p) => {
                let mut c = Command::new(p);
                c.arg("--version");
                c
            }
            Need::PyModule(m) => {
                let mut c = Command::new("python3");
                // From outside the repository: `python3 -c` looks in its working directory
                // first, where a folder of the module's name (`datafusion/`) would pass for it.
                c.args(["-c", &format!("import {m}")]).current_dir(std::env::temp_dir());
                c
            }
        };
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    }

    fn describe(self) -> String {
        match self {
            Need::Program(p) => format!("`{p}` on PATH"),
            Need::PyModule(m) => format!("the Python module `{m}`"),
        }
    }
}

/// Whether this run is under CI, where every tool must be present.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The needs of `needs` that this machine lacks, as a sentence, or `None` when all are present.
pub fn missing(needs: &[Need]) -> Option<String> {
    let gone: Vec<String> = needs.iter().filter(|n| !n.present()).map(|n| n.describe()).collect();
    (!gone.is_empty()).then(|| gone.join(", "))
}

/// A trial that runs `body` when every need is met. Otherwise it is marked ignored (and the
/// reason printed on stderr), except under CI, where it runs and fails naming what is missing.
/// A panic in `body` fails the trial with the panic's message.
pub fn trial(name: &str, needs: &[Need], body: fn()) -> Trial {
    let lacking = missing(needs);
    let ignore = lacking.is_some() && !under_ci();
    if let (true, Some(why)) = (ignore, &lacking) {
        eprintln!("*** SKIPPED {name}: needs {why} (reported as ignored; under CI=true it runs and fails)");
    }
    let owned = name.to_string();
    Trial::test(name, move || {
        if let Some(why) = lacking {
            return Err(Failed::from(format!("{owned} needs {why}; CI must install it")));
        }
        std::panic::catch_unwind(body).map_err(|e| {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the test panicked".to_string());
            Failed::from(msg)
        })
    })
    .with_ignored_flag(ignore)
}

/// Runs the trials one per core with the command-line arguments libtest would take, and exits
/// with the result.
pub fn run(trials: Vec<Trial>) -> ! {
    conclude(trials, 1).exit()
}

/// Runs the trials and returns their conclusion, for a harness that cleans up before it exits.
/// Unless `--test-threads` says how many, `per_core` trials run at once for each core: trials
/// that mostly wait on the programs they start (compilers, emulators, a JVM, Python) overlap
/// their waits. (libtest-mimic runs one per core and does not read `RUST_TEST_THREADS`.)
pub fn conclude(trials: Vec<Trial>, per_core: usize) -> libtest_mimic::Conclusion {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        args.test_threads = Some(cores * per_core);
    }
    libtest_mimic::run(&args, trials)
}
