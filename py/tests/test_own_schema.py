"""A log of the user's own framed schema, read through the IR interpreter: `open(path,
schema=...)`, and the project's schemas found through its logspec.toml.

The independent sides: the bundled USVLOG reader (generated code) on the same file, and, for a
schema of our own, the bytes written here with Python's `struct` from the values compared."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

import logspec

from conftest import DATA, ROOT, need

USVLOG = DATA / "usvlog" / "step.usvlog"
SCHEMA = ROOT / "schemas" / "usvlog.toml"


def test_schema_equals_the_bundled_reader():
    need("pyarrow")
    bundled = logspec.open(USVLOG)
    own = logspec.open(USVLOG, schema=SCHEMA)
    assert own.format == "usvlog"
    assert own.info() == bundled.info()
    assert list(own.records()) == list(bundled.records())
    a, b = bundled.tables(), own.tables()
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


BOAT = """
[format]
name = "boat"
endian = "big"
schema_id = { value = 3, name = "BOAT_SCHEMA", field = "schema" }

[file_header]
fields = [
  { name = "magic", type = "bytes[4]", const = "BOAT" },
  { name = "schema", type = "u8" },
]

[framing]
tag = "kind"
length = "len"
timestamp = "t_ms"
fields = [
  { name = "t_ms", type = "u32", unit = "ms" },
  { name = "kind", type = "u8" },
  { name = "len", type = "u16" },
]

[[enum]]
name = "Mode"
base = "u8"
values = [{ name = "IDLE", value = 0 }, { name = "AUTO", value = 1 }]

[[record]]
name = "STATE"
id = 7
fields = [
  { name = "mode", type = "Mode" },
  { name = "rpm", type = "i16[2]", unit = "rpm" },
  { name = "note", type = "string", count = "u8" },
]
"""


def _boat_log(path: Path, rows: list[tuple[int, int, int, int, str]]) -> None:
    out = b"BOAT" + bytes([3])
    for t, mode, r0, r1, note in rows:
        text = note.encode()
        payload = struct.pack(">Bhh B", mode, r0, r1, len(text)) + text
        out += struct.pack(">IBH", t, 7, len(payload)) + payload
    path.write_bytes(out)


ROWS = [(0, 0, 100, -1, "start"), (50, 1, 200, -2, ""), (100, 1, -300, 3, "lap 1")]


def test_own_schema_tables_and_records(tmp_path: Path):
    pa = need("pyarrow")
    schema = tmp_path / "boat.toml"
    schema.write_text(BOAT)
    log = tmp_path / "run.bin"
    _boat_log(log, ROWS)
    opened = logspec.open(log, schema=schema)
    assert opened.format == "boat"
    records = list(opened.records())
    assert [(r["t_ms"], r["name"], r["fields"]) for r in records] == [
        (t, "STATE", {"mode": m, "rpm": [a, b], "note": n}) for t, m, a, b, n in ROWS
    ]
    table = opened.tables()["STATE"]
    assert isinstance(table, pa.Table)
    assert table.column("rpm").to_pylist() == [[a, b] for _, _, a, b, _ in ROWS]
    assert table.column("note").to_pylist() == [n for *_, n in ROWS]


def test_project_schema_is_found_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "boat.toml").write_text(BOAT)
    (tmp_path / "logspec.toml").write_text('schemas = "schemas"\n')
    log = tmp_path / "run.bin"
    _boat_log(log, ROWS)
    monkeypatch.chdir(tmp_path)
    assert logspec.open(log).format == "boat"
    monkeypatch.chdir(ROOT)
    with pytest.raises(logspec.FormatError):
        logspec.open(log)


def test_a_schema_that_is_not_a_format_is_a_clear_error(tmp_path: Path):
    schema = tmp_path / "noframing.toml"
    schema.write_text('[format]\nname = "x"\n')
    with pytest.raises(logspec.LogspecError, match="framing"):
        logspec.open(USVLOG, schema=schema)
    with pytest.raises(logspec.UsageError):
        logspec.open(USVLOG, format="usvlog", schema=SCHEMA)
