"""Shared fixtures: the repository's test data and the `logspec` command, the independent side
of every comparison. Under CI=true a missing command or package fails the suite instead of
skipping it."""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _skip_or_fail(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (CI=true: every test must run)")
    # Called at a module's top (`need` there), this skips the whole module.
    pytest.skip(why, allow_module_level=True)


def need(module: str):
    """The optional package `module` (numpy, pyarrow, pandas, polars, wpiutil...), imported, for a
    test that calls or compares against it; when it is missing, the test (or, called at a
    module's top, the module) is skipped saying so, and under CI=true it fails instead."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        _skip_or_fail(f"needs {module} ({e}; `pip install -r py/requirements-test.txt`)")
        raise AssertionError("unreachable")


def inputs() -> list[Path]:
    """Every log in tests/data (not the expected outputs, docs, .msg files, the scripts that made
    logs, or the time index files a scan writes beside a log of more than one chunk)."""
    found = []
    for sub in sorted(p for p in DATA.iterdir() if p.is_dir() and p.name != "history"):
        for f in sorted(sub.iterdir()):
            if f.is_file() and ".expected." not in f.name and f.suffix not in (".md", ".json", ".jsonl", ".toml", ".lock", ".py", ".logspec-idx"):
                found.append(f)
    return found


@pytest.fixture(scope="session")
def logspec_bin() -> str:
    """The `logspec` command: $LOGSPEC_BIN, else target/debug/logspec (built by `cargo build`)."""
    env = os.environ.get("LOGSPEC_BIN")
    candidates = [env] if env else [str(ROOT / "target" / "debug" / "logspec"), shutil.which("logspec") or ""]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    _skip_or_fail("the logspec command is not built (cargo build, or set LOGSPEC_BIN)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session", autouse=True)
def _index_files_in_a_temporary_cache(tmp_path_factory):
    """Time index files go only to a cache directory in a temporary folder (`LOGSPEC_INDEX=cache`,
    `XDG_CACHE_HOME`), for this process and every one it starts (the command, Spark's workers):
    a scan of a bundled log of more than one chunk would otherwise write one beside it, into
    tests/data. A test of where index files go says `LOGSPEC_INDEX` itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        mp.setenv("LOGSPEC_INDEX", "cache")
        yield


def run(bin_: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([bin_, "--quiet", *args], capture_output=True, text=True, timeout=600)


def dump_objects(bin_: str, path: Path, *args: str) -> tuple[list, int]:
    """`logspec dump`'s lines, parsed, and its exit status."""
    objects, status, _ = dump_run(bin_, path, *args)
    return objects, status


def dump_run(bin_: str, path: Path, *args: str) -> tuple[list, int, list]:
    """`logspec dump`'s lines, parsed, its exit status and its messages on stderr (each line
    without its `logspec: ` prefix)."""
    p = run(bin_, "dump", str(path), *args)
    notes = [line.removeprefix("logspec: ") for line in p.stderr.splitlines()]
    return [json.loads(line) for line in p.stdout.splitlines()], p.returncode, notes


def as_dumped(v, neg_zero_string: bool = False):
    """A record of the package in the spelling of `logspec dump`'s JSON (docs/output.md), so that
    it can be compared with the dump's parsed line: bytes as lowercase hex, NaN and the
    infinities as the strings "NaN", "Infinity", "-Infinity", and (a WPILOG record's `value`,
    `neg_zero_string`) a float negative zero as the string "-0". Everything else is already the same Python value."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        if neg_zero_string and v == 0.0 and math.copysign(1.0, v) < 0:
            return "-0"
        return v
    if isinstance(v, dict):
        return {k: as_dumped(x, neg_zero_string) for k, x in v.items()}
    if isinstance(v, list):
        return [as_dumped(x, neg_zero_string) for x in v]
    return v


def typed(v):
    """A value with the Python type of every leaf next to it, so that `==` also tells `True` from
    `1` and `1` from `1.0`, and a float's sign of zero."""
    if isinstance(v, dict):
        return ("dict", list(v.keys()), {k: typed(x) for k, x in v.items()})
    if isinstance(v, list):
        return ("list", [typed(x) for x in v])
    if isinstance(v, float):
        return ("float", v, math.copysign(1.0, v))
    return (type(v).__name__, v)


def assert_records_equal(got: list, expected: list, fmt: str) -> None:
    """The package's records equal the dump's, value for value and type for type."""
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        d = as_dumped(g)
        if fmt == "wpilog" and "value" in g:
            # Only a WPILOG record's standard value spells negative zero "-0" (not `decoded`).
            d["value"] = as_dumped(g["value"], neg_zero_string=True)
        assert typed(d) == typed(e), f"record {i}: {d!r} != {e!r}"
