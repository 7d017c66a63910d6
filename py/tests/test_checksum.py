"""A schema whose `[framing]` has a sync word and a per-record CRC (codegen/tests/schemas/
checked.toml), read through the package: a corrupted length field costs that one record, the
region passed over is a warning with its offset (the `logspec dump` line), and every other record
is kept. The bytes are written here with Python's `struct` and a bitwise CRC-32C of our own."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import logspec

from conftest import ROOT, dump_run

SCHEMA = ROOT / "codegen" / "tests" / "schemas" / "checked.toml"


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def record(kind: int, t_us: int, payload: bytes) -> bytes:
    # sync A3 95, kind (u8), len (u16), t_us (u32), then the CRC-32C of those 9 bytes and the payload.
    head = struct.pack("<BBBHI", 0xA3, 0x95, kind, len(payload), t_us)
    return head + struct.pack("<I", crc32c(head + payload)) + payload


def log(n: int) -> tuple[bytes, list[int]]:
    out = b"CHKD" + struct.pack("<H2x", 1)
    at = []
    for i in range(n):
        at.append(len(out))
        out += record(1, 100 * i, struct.pack("<fH", float(i), i))
    return out, at


def test_a_corrupted_length_costs_one_record(tmp_path: Path, logspec_bin: str):
    data, at = log(6)
    bad = bytearray(data)
    bad[at[2] + 3 : at[2] + 5] = b"\xff\xff"
    p = tmp_path / "corrupt.chk"
    p.write_bytes(bytes(bad))
    expected, status, notes = dump_run(logspec_bin, p, "--schema", str(SCHEMA))
    assert status == 1 and len(notes) == 2, notes
    assert [r["fields"]["count"] for r in expected] == [0, 1, 3, 4, 5]
    got = []
    with pytest.warns(logspec.LogspecWarning) as caught:
        with pytest.raises(logspec.DecodeError):
            for r in logspec.open(p, schema=SCHEMA):
                got.append(r)
    assert [r["fields"]["count"] for r in got] == [0, 1, 3, 4, 5]
    [w] = [w.message for w in caught]
    assert str(w) == notes[0]
    assert (w.file, w.offset, w.record) == (str(p), at[2], 2)
    assert f"{at[3] - at[2]} bytes passed over to the next good record at byte {at[3]}" in str(w)


def test_a_clean_log_reads_whole(tmp_path: Path):
    data, _ = log(4)
    p = tmp_path / "good.chk"
    p.write_bytes(data)
    got = list(logspec.open(p, schema=SCHEMA))
    assert [r["fields"]["count"] for r in got] == [0, 1, 2, 3]
    assert [r["t_us"] for r in got] == [0, 100, 200, 300]
