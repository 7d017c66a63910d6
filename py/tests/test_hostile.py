"""Hostile inputs (issue 34, as tests/common/hostile.rs builds them for the command) through
`logspec.open(p).tables()`: the peak memory of the reading stays within a constant plus twice the
bytes of the definitions the reader must keep, and the warnings are the first 5 of each kind
plus one count per kind, however many records are bad. Each reading runs in a child process,
whose own high-water mark (`VmHWM`, not inherited from this process) is read before and after."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import logspec
from conftest import need

need("pyarrow")

RSS_MAX_KIB = 64 * 1024

# Runs in the child: reads the file's tables, prints the memory it took and the warnings.
CHILD = r"""
import json, sys, warnings, logspec
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
import pyarrow
base = hwm()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tables = logspec.open(sys.argv[1]).tables()
print(json.dumps({"kib": hwm() - base, "tables": len(tables),
                  "warnings": [str(w.message) for w in caught]}))
"""


def read_tables(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_records_that_do_not_decode_cost_no_memory_or_warnings_each(tmp_path: Path):
    p = tmp_path / "known.usvlog"
    with logspec.usvlog.Writer(p) as w:
        for i in range(200_000):
            w.write_raw(1, i, b"")  # REC_NAV_SOLUTION needs 24 bytes
    got = read_tables(p)
    assert got["kib"] <= RSS_MAX_KIB, got["kib"]
    assert len(got["warnings"]) == 6, got["warnings"]
    assert "200000 records that do not decode in all; the first 5 are shown" in got["warnings"][-1]

    p = tmp_path / "unknown.usvlog"
    with logspec.usvlog.Writer(p) as w:
        for i in range(200_000):
            w.write_raw(200, i, b"")
    got = read_tables(p)
    assert got["kib"] <= RSS_MAX_KIB and got["tables"] == 0, got
    assert got["warnings"][-1].endswith("200000 records of unknown type in all; the first 5 are shown")


def test_carla_packets_that_lie_about_their_counts(tmp_path: Path):
    # The info header (docs/format-notes.md, the CARLA spec: version, magic, date, map), then
    # frames of a FrameStart, 100 Position packets whose body is only a count of 65,535, a FrameEnd.
    def s(text: bytes) -> bytes:
        return struct.pack("<H", len(text)) + text
    body = bytearray(struct.pack("<H", 1) + s(b"CARLA_RECORDER") + struct.pack("<q", 1_700_000_000) + s(b"Town01"))
    for f in range(2_000):
        body += struct.pack("<BIQdd", 0, 24, f + 1, 0.05, f * 0.05)
        body += struct.pack("<BIH", 6, 2, 65535) * 100
        body += struct.pack("<BI", 1, 0)
    p = tmp_path / "counts.log"
    p.write_bytes(bytes(body))
    got = read_tables(p)
    assert got["kib"] <= RSS_MAX_KIB, got["kib"]
    assert len(got["warnings"]) <= 12, got["warnings"]
    assert any("200000 packets whose layout does not fit their size in all" in w for w in got["warnings"]), got


def test_definitions_cost_memory_in_proportion_to_their_bytes(tmp_path: Path):
    p = tmp_path / "starts.wpilog"
    with logspec.wpilog.Writer(p) as w:
        for i in range(100_000):
            w.start(f"/e{i}", "double", "", i)
    got = read_tables(p)
    assert got["kib"] <= RSS_MAX_KIB + 2 * p.stat().st_size // 1024, got["kib"]

    p = tmp_path / "keys.rlog"
    names = [f"/k{k:05}/" + "x" * (1024 - 8) for k in range(2_000)]
    with logspec.rlog.Writer(p) as w:
        for c in range(2):
            w.cycle(c * 0.02, {n: float(k) for k, n in enumerate(names)}, {n: "double" for n in names})
    got = read_tables(p)
    assert got["tables"] == 2_000
    assert got["kib"] <= RSS_MAX_KIB + 2 * 2_000 * 1030 // 1024, got["kib"]
