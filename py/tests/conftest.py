"""Shared fixtures: the repository's test data and the `logspec` command, the independent side
of every comparison. Under CI=true a missing command or package fails the suite instead of
skipping it."""

from __future__ import annotations

import json
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
    pytest.skip(why)


def inputs() -> list[Path]:
    """Every log in tests/data (not the expected outputs, docs or .msg files)."""
    found = []
    for sub in sorted(p for p in DATA.iterdir() if p.is_dir() and p.name != "history"):
        for f in sorted(sub.iterdir()):
            if f.is_file() and ".expected." not in f.name and f.suffix not in (".md", ".json", ".jsonl", ".toml", ".lock"):
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


def run(bin_: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([bin_, "--quiet", *args], capture_output=True, text=True, timeout=600)


def dump_objects(bin_: str, path: Path, *args: str) -> tuple[list, int]:
    """`logspec dump`'s lines, parsed, and its exit status."""
    p = run(bin_, "dump", str(path), *args)
    return [json.loads(line) for line in p.stdout.splitlines()], p.returncode
