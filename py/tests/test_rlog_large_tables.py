"""An R1 RLOG file of several MB (many batches per key), written here with `struct` as
AdvantageKit writes R1 (keys defined once, in the first cycle): the tables hold exactly the
values and times that were written, number and number-list columns in one chunk (the batches
joined, `engine/src/tables/joined.rs`), and equal the Parquet export; the same file cut inside a
message in its second half gives every value before the cut, then the error at its offset."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import pytest

import logspec

from conftest import need, run

KEYS = [(f"/Drive/Module{i}/Speed", "double") for i in range(16)] + [
    ("/Count", "int"),
    ("/Enabled", "boolean"),
    ("/Mode", "string"),
    ("/Pose", "double[]"),
]
CYCLES = 20_000


def build(path: Path) -> dict:
    """Writes the file; returns each key's (times in ns, values) as written."""
    out = bytearray(b"\x01")
    expected = {name: ([], []) for name, _ in KEYS}
    for c in range(CYCLES):
        t = 1.0 + c / 64  # exact in binary, so its nanoseconds are exact too
        out += b"\x00" + struct.pack(">d", t)
        for k, (name, kind) in enumerate(KEYS):
            if c == 0:
                out += b"\x01" + struct.pack(">hH", k, len(name)) + name.encode()
            if kind == "double":
                v = c * 0.25 + k
                out += struct.pack(">BhBd", 2, k, 5, v)
            elif kind == "int":
                v = c - 7
                out += struct.pack(">BhBi", 2, k, 3, v)
            elif kind == "boolean":
                v = c % 3 == 0
                out += struct.pack(">BhBB", 2, k, 1, v)
            elif kind == "string":
                v = f"mode {c % 5}"
                out += struct.pack(">BhBH", 2, k, 7, len(v)) + v.encode()
            else:
                v = [float(c), -0.5 * c, 3.0]
                out += struct.pack(">BhBH", 2, k, 6, len(v)) + struct.pack(f">{len(v)}d", *v)
            expected[name][0].append(round(t * 1e9))
            expected[name][1].append(v)
    path.write_bytes(bytes(out))
    assert len(out) > 4 << 20
    return expected


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("halves") / "big.rlog"
    return path, build(path)


def test_tables_hold_what_was_written(big):
    need("pyarrow")  # the tables
    path, expected = big
    tables = logspec.open(path).tables()
    assert list(tables) == [name for name, _ in KEYS]
    for name, kind in KEYS:
        t = tables[name]
        times, values = expected[name]
        assert t.column("log_elapsed_ns").to_pylist() == times, name
        assert t.column("value").to_pylist() == values, name
        if kind in ("double", "int", "boolean", "double[]"):
            # One chunk per column: numpy views it (`Log.numpy`); a list column's items too.
            assert all(t.column(c).num_chunks == 1 for c in t.column_names), name


def test_tables_equal_parquet_export(big, logspec_bin: str, tmp_path: Path):
    pq = need("pyarrow.parquet")
    path, _ = big
    out = tmp_path / "fleet"
    p = run(logspec_bin, "export", "--parquet", str(out), str(path))
    assert p.returncode == 0, p.stderr
    exported = {}
    for part in sorted(out.glob("**/part-0.parquet")):
        exported[pq.ParquetFile(part).metadata.metadata[b"logspec.table"].decode()] = part
    tables = logspec.open(path).tables()
    assert set(tables) == set(exported)
    for name, table in tables.items():
        assert table.schema == pq.read_schema(exported[name]).remove_metadata(), name
        assert table.to_pydict() == pq.read_table(exported[name]).to_pydict(), name


def test_a_cut_second_half_gives_the_values_before_the_cut(big, tmp_path: Path):
    need("pyarrow")  # the tables
    path, expected = big
    data = path.read_bytes()
    # Inside the `/Pose` value of cycle 15,000 (in the second half).
    cycle = 15_000
    pose = struct.pack(">BhBH", 2, len(KEYS) - 1, 6, 3) + struct.pack(">3d", float(cycle), -0.5 * cycle, 3.0)
    at = data.index(pose)
    cut = tmp_path / "cut.rlog"
    cut.write_bytes(data[: at + 7])
    with pytest.raises(logspec.DecodeError) as info:
        logspec.open(cut).tables()
    assert info.value.offset == at
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = logspec.open(cut).tables(on_error="warn")
    assert any(getattr(w.message, "offset", None) == at for w in caught)
    for name, _ in KEYS:
        n = cycle + (name != "/Pose")
        assert tables[name].column("value").to_pylist() == expected[name][1][:n], name
