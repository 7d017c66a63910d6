"""The package as a user gets it: a wheel built by maturin, installed into a fresh venv that has
nothing else (no numpy, no pyarrow, no access to this checkout's sources), then used: a bundled
file opened, iterated and summarised, a file written and read back, and the column calls saying
which package they miss. Then the README's `pip install ./py`, as written, into another fresh
venv.

These build a wheel and make venvs (a minute or two with a warm target directory), so they run
under CI=true (`.ci/run`) or with LOGSPEC_WHEEL_TEST=1, and are skipped, with that reason,
otherwise. The wheel is a debug build (`maturin build` without `--release`), into the
workspace's target directory, with the package's `workspace` feature as `.ci/run`'s `maturin
develop` has it (the third-party crates compiled with the features `cargo test --workspace` gave
them: py/Cargo.toml), so CI builds little beyond what those two built. The package's Python side
and its calls into logspec are the same without it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import DATA, ROOT

# What both builds add to maturin's arguments (see above).
FEATURES = ["--features", "workspace"]

WANTED = os.environ.get("CI") == "true" or os.environ.get("LOGSPEC_WHEEL_TEST") == "1"
pytestmark = pytest.mark.skipif(
    not WANTED, reason="builds a wheel and fresh venvs: runs under CI=true or LOGSPEC_WHEEL_TEST=1"
)

SMOKE = textwrap.dedent(
    r"""
    import sys, warnings
    import logspec

    # Nothing but the package: numpy and pyarrow are optional.
    for missing in ("numpy", "pyarrow"):
        try:
            __import__(missing)
        except ImportError:
            pass
        else:
            raise SystemExit(f"{missing} is importable in the fresh venv")
    assert logspec.__file__.startswith(sys.prefix), logspec.__file__

    usvlog, rlog, out = sys.argv[1], sys.argv[2], sys.argv[3]
    log = logspec.open(usvlog)
    assert log.format == "usvlog"
    info = log.info()
    records = list(log)
    assert len(records) == info["records_total"] > 0, (len(records), info["records_total"])
    assert isinstance(records[0]["fields"], dict)
    values = sum(1 for _ in logspec.open(rlog))
    assert values > 0

    # A bad file is a DecodeError with its place, after its complete records.
    cut = out + ".cut"
    open(cut, "wb").write(open(usvlog, "rb").read()[:100_000])
    got = []
    try:
        for r in logspec.open(cut):
            got.append(r)
        raise SystemExit("a cut file read to its end")
    except logspec.DecodeError as e:
        assert e.file == cut and e.offset is not None and str(e.offset) in str(e), e
    assert got == records[: len(got)] and got

    # Writers need nothing else either.
    with logspec.usvlog.Writer(out) as w:
        w.write("REC_SENSOR_GYRO", 50_000, z_gyro=0.25, b_g_est=0.0, valid=1)
    [rec] = list(logspec.open(out))
    assert rec["fields"]["z_gyro"] == 0.25, rec

    # The column calls say what they miss.
    for call, name in [
        (lambda: log.tables(), "pyarrow"),
        (lambda: log.numpy("REC_NAV_SOLUTION"), "numpy"),
        (lambda: logspec.usvlog.read_timeseries_bin(usvlog), "numpy"),
    ]:
        try:
            call()
            raise SystemExit(f"a column call worked without {name}")
        except ImportError as e:
            assert name in str(e) and "pip install" in str(e), str(e)
    print("smoke ok")
    """
)


def _fresh_venv(where: Path) -> Path:
    """A venv without the system's site packages; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    return where / "bin" / "python"


def _smoke(python: Path, tmp: Path) -> None:
    script = tmp / "smoke.py"
    script.write_text(SMOKE)
    usvlog, rlog = DATA / "usvlog" / "step.usvlog", DATA / "rlog" / "akit_v1.8.1_robotlog.rlog"
    # Run from the temporary directory, so that `import logspec` cannot find the checkout's.
    r = subprocess.run(
        [str(python), str(script), str(usvlog), str(rlog), str(tmp / "written.usvlog")],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0 and "smoke ok" in r.stdout, r.stdout + r.stderr


def test_wheel_in_a_fresh_venv(tmp_path: Path):
    maturin = shutil.which("maturin")
    if maturin is None:
        pytest.fail("maturin is not installed (`pip install maturin`); it builds the wheel")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [maturin, "build", "--locked", "--quiet", *FEATURES, "--out", str(wheels)],
        cwd=ROOT / "py",
        check=True,
        timeout=1800,
    )
    [wheel] = list(wheels.glob("logspec-*.whl"))
    python = _fresh_venv(tmp_path / "venv")
    # The wheel has no required dependencies, so nothing comes from an index.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", str(wheel)], check=True)
    _smoke(python, tmp_path)


def test_readme_pip_install_from_the_checkout(tmp_path: Path):
    # README: `python3 -m pip install ./py`, run from the checkout. pip builds the wheel with
    # maturin from the index (the build-system requirement); MATURIN_PEP517_ARGS makes it a
    # debug build with the CI build's features, as above, to keep CI short.
    python = _fresh_venv(tmp_path / "venv")
    env = dict(os.environ, MATURIN_PEP517_ARGS=" ".join(["--profile", "dev", *FEATURES]))
    env.pop("VIRTUAL_ENV", None)
    r = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "./py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    _smoke(python, tmp_path)
