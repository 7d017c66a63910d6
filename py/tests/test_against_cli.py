"""Every file in tests/data through the package equals the `logspec` command's output: the
records equal `logspec dump` value for value, `info()` equals `info --json`, and the pyarrow
tables have the types (and the rows) of `export --parquet` read back by pyarrow.parquet."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest

import logspec

from conftest import DATA, assert_records_equal, dump_objects, dump_run, inputs, need, run

FILES = inputs()
IDS = [str(f.relative_to(DATA)) for f in FILES]


def test_every_format_is_covered():
    formats = {logspec.open(f).format for f in FILES}
    assert formats >= {"usvlog", "rlog", "rlog-stream", "carla", "rosbag", "wpilog", "ulog", "dataflash", "mcap"}


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_records_equal_dump(path: Path, logspec_bin: str):
    expected, status, notes = dump_run(logspec_bin, path)
    log = logspec.open(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = list(log.records(on_error="warn"))
    assert_records_equal(got, expected, log.format)
    assert all(isinstance(r, dict) for r in got)
    # What the command says on stderr, the package says as warnings, in the same words and
    # order (with on_error="warn", the error that ended the dump is the last one).
    assert [str(w.message) for w in caught] == notes
    assert all(issubclass(w.category, logspec.LogspecWarning) for w in caught)
    assert all(w.message.file == str(path) for w in caught)
    if status != 0:
        with pytest.raises(logspec.DecodeError) as info:
            for _ in logspec.open(path):
                pass
        assert info.value.file == str(path)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_info_equals_info_json(path: Path, logspec_bin: str):
    p = run(logspec_bin, "info", "--json", str(path))
    assert p.stdout, p.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert logspec.open(path).info() == json.loads(p.stdout)
    # What the command notes on stderr (a bag scanned without its index), the package warns.
    notes = [line.removeprefix("logspec: ") for line in p.stderr.splitlines()]
    assert [str(w.message) for w in caught] == notes
    assert all(issubclass(w.category, logspec.LogspecWarning) for w in caught)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_tables_equal_parquet_export(path: Path, logspec_bin: str, tmp_path: Path):
    pq = need("pyarrow.parquet")
    # pyarrow turns nanosecond times into Python objects (`to_pydict`, `_rows`) through pandas.
    need("pandas")
    out = tmp_path / "fleet"
    p = run(logspec_bin, "export", "--parquet", str(out), str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", logspec.LogspecWarning)
        tables = logspec.open(path).tables(on_error="warn")
    exported = {}
    for part in sorted(out.glob("**/part-0.parquet")):
        meta = pq.ParquetFile(part).metadata.metadata
        exported[meta[b"logspec.table"].decode()] = part
    assert set(tables) == set(exported), p.stderr
    for name, table in tables.items():
        schema = pq.read_schema(exported[name])
        assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in schema], name
        # The field metadata (units, docs, enum tables) travels with the types.
        for f in table.schema:
            assert (f.metadata or {}) == (schema.field(f.name).metadata or {}), f"{name}.{f.name}"
        assert _rows(table) == _rows(pq.read_table(exported[name])), name


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_table_takes_every_key_of_tables(path: Path):
    # Every name `tables()` gives (a CARLA packet kind whose per-actor channels `Position/<id>`
    # make one table, an R1 key or ROS topic whose type changed, `name#type`) is a name
    # `table()` takes, and gives the same table: the same schema (its metadata too) and rows.
    need("pyarrow")
    need("pandas")  # nanosecond times as Python objects (`_rows`)
    log = logspec.open(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", logspec.LogspecWarning)
        tables = log.tables(on_error="warn")
        assert tables or path.name == "nukkeldev_spec_example.wpilog", "a log without tables"
        for name, expected in tables.items():
            got = log.table(name, on_error="warn")
            assert got.schema.equals(expected.schema, check_metadata=True), name
            assert got.schema.metadata == expected.schema.metadata, name
            assert _rows(got) == _rows(expected), name


def _nan_free(v):
    """A value with NaN replaced by a marker, so that equal tables compare equal."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return {k: _nan_free(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan_free(x) for x in v]
    return v


def _rows(table):
    return _nan_free(table.to_pydict())


def test_filters_match_the_cli(logspec_bin: str):
    need("pyarrow")  # log.table, log.tables
    path = DATA / "usvlog" / "step.usvlog"
    expected, _ = dump_objects(logspec_bin, path, "--record", "REC_SENSOR_GNSS", "--since", "1", "--until", "2")
    got = list(logspec.open(path).records("REC_SENSOR_GNSS", since=1, until=2))
    assert_records_equal(got, expected, "usvlog")
    assert len(got) > 0
    t = logspec.open(path).table("REC_SENSOR_GNSS", since=1, until=2)
    assert t.num_rows == len(expected)
    assert t.column("log_elapsed_ns").to_pylist() == [r["t_us"] * 1000 for r in expected]
    prefix = logspec.open(path).tables(["REC_SENSOR_*"])
    assert sorted(prefix) == ["REC_SENSOR_GNSS", "REC_SENSOR_GYRO"]


def test_carla_frames_match_the_cli(logspec_bin: str):
    path = DATA / "carla" / "878-supp-mat_crash.log"
    expected, _ = dump_objects(logspec_bin, path, "--frames", "0..3")
    assert_records_equal(list(logspec.open(path).records(frames=(0, 3))), expected, "carla")
