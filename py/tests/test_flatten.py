"""Struct columns as flat `a.b` columns for pandas users (`flatten=True`), checked against
pyarrow's own `Table.flatten()`; and the install hint of a missing pandas names the extra that
holds it."""

from __future__ import annotations

import math
import sys

import pytest

import logspec

from conftest import DATA, ROOT, need

BAG = DATA / "rosbag" / "test_lz4.bag"


def _pyarrow_flatten(table):
    """pyarrow's own flatten, applied until no struct column is left."""
    pa = need("pyarrow")
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _same(a, b) -> bool:
    """Tables equal in schema and values (NaN equal to NaN, which `Table.equals` denies)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for x, y in zip(a.columns, b.columns):
        for u, v in zip(x.to_pylist(), y.to_pylist()):
            if u != v and not (isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v)):
                return False
    return True


def test_flatten_gives_struct_fields_as_columns():
    pa = need("pyarrow")
    log = logspec.open(BAG)
    nested = log.table("/pose")
    flat = log.table("/pose", flatten=True)
    # geometry_msgs/PoseStamped: header (std_msgs/Header: seq, stamp (time: sec, nsec),
    # frame_id) and pose (position: x, y, z; orientation: x, y, z, w), three levels deep.
    assert flat.column_names == [
        "log_time",
        "log_elapsed_ns",
        "header.seq",
        "header.stamp.sec",
        "header.stamp.nsec",
        "header.frame_id",
        "pose.position.x",
        "pose.position.y",
        "pose.position.z",
        "pose.orientation.x",
        "pose.orientation.y",
        "pose.orientation.z",
        "pose.orientation.w",
    ]
    assert flat.equals(nested.flatten().flatten())
    assert not any(pa.types.is_struct(f.type) for f in flat.schema)
    assert flat.num_rows == nested.num_rows == 6
    # A table without structs is given back as it is.
    plain = logspec.open(DATA / "usvlog" / "step.usvlog").table("REC_NAV_SOLUTION")
    assert logspec.open(DATA / "usvlog" / "step.usvlog").table("REC_NAV_SOLUTION", flatten=True).equals(plain)


def test_tables_and_pandas_flatten_alike():
    need("pandas")
    for path in (BAG, DATA / "carla" / "878-supp-mat_crash.log"):
        log = logspec.open(path)
        nested = log.tables()
        flat = log.tables(flatten=True)
        assert list(flat) == list(nested)
        for name, t in nested.items():
            assert _same(flat[name], _pyarrow_flatten(t)), f"{path.name}: {name}"
    log = logspec.open(DATA / "carla" / "878-supp-mat_crash.log")
    df = log.to_pandas("Position", flatten=True)
    want = ["log_time", "log_elapsed_ns", "db_id"] + [f"{s}.{a}" for s in ("location", "rotation") for a in "xyz"]
    assert list(df.columns) == want
    table = log.table("Position")
    assert df["location.x"].tolist() == [p["x"] for p in table.column("location").to_pylist()]
    assert len(df) == 1974


def test_missing_pandas_names_the_extra_that_installs_it(monkeypatch):
    # A `None` in sys.modules makes the import fail as a missing package does.
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError) as e:
        logspec._need("pandas", "logspec.Log.to_pandas()")
    assert "pip install 'logspec[columns]'" in str(e.value)
    # ... and that extra does hold pandas.
    import tomllib

    extras = tomllib.loads((ROOT / "py" / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.split(">")[0].split("=")[0].strip() == "pandas" for dep in extras["columns"])
    assert any(dep.startswith("polars") for dep in extras["polars"])
