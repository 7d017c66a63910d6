"""numpy, pandas and polars views of the tables, checked against the records' values."""

from __future__ import annotations

import math

import logspec

from conftest import DATA, need

STEP = DATA / "usvlog" / "step.usvlog"


def test_numpy_columns_hold_the_record_values():
    np = need("numpy")
    need("pyarrow")  # Log.numpy goes through the table
    records = [r for r in logspec.open(STEP) if r["name"] == "REC_NAV_SOLUTION"]
    cols = logspec.open(STEP).numpy("REC_NAV_SOLUTION")
    assert cols["x"].dtype == np.float32
    assert cols["log_time"].dtype == np.dtype("datetime64[ns]")
    for name in ("x", "y", "psi", "v", "r", "b_g"):
        assert cols[name].tolist() == [np.float32(r["fields"][name]) for r in records]
    assert (cols["log_elapsed_ns"] == np.array([r["t_us"] * 1000 for r in records])).all()


def test_pandas_and_polars_through_pyarrow():
    for module in ("pyarrow", "pandas", "polars"):
        need(module)
    df = logspec.open(STEP).to_pandas("REC_SENSOR_GNSS")
    assert len(df) == 400 and "x" in df.columns
    pl_df = logspec.open(STEP).polars("REC_SENSOR_GNSS")
    assert pl_df.height == 400 and pl_df["x"].to_list() == df["x"].tolist()


def test_rlog_values_as_columns():
    need("pyarrow")  # log.table
    path = DATA / "rlog" / "gen_akit_head_r2_alltypes.rlog"
    records = [r for r in logspec.open(path) if r["key"] == "/Double"]
    t = logspec.open(path).table("/Double")
    # The dump spells NaN and the infinities as strings (docs/output.md); the column holds floats.
    spelled = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
    expected = [spelled.get(r["value"], r["value"]) if isinstance(r["value"], str) else r["value"] for r in records]
    got = t.column("value").to_pylist()
    assert len(got) == len(expected) > 0
    for g, e in zip(got, expected):
        assert (math.isnan(g) and math.isnan(e)) or g == e


def test_tables_share_buffers_across_calls():
    # The stream can be consumed twice (each call exports the same batches again).
    pa = need("pyarrow")

    log = logspec.open(STEP)
    streams, _, _ = log._native.tables(["REC_NAV_SOLUTION"], None, None)
    name, stream = streams[0]
    assert pa.table(stream).equals(pa.table(stream))
    assert stream.num_rows() == 401


def test_numpy_conversion_equals_pyarrows():
    # `Log.numpy` views one-chunk number and time columns itself (pyarrow's `to_numpy` imports
    # pandas first); the arrays equal pyarrow's, for every kind of column and a sliced chunk.
    np = need("numpy")
    pa = need("pyarrow")

    n = 7
    cols = {
        "i8": pa.array(range(-3, n - 3), pa.int8()),
        "u64": pa.array([2**64 - 1 - k for k in range(n)], pa.uint64()),
        "f16": pa.array(np.arange(n, dtype="f2")),
        "f32": pa.array([0.5 * k for k in range(n)], pa.float32()),
        "f64": pa.array([float("nan")] + [1.5] * (n - 1), pa.float64()),
        "t_ns": pa.array(range(n), pa.timestamp("ns")),
        "t_ms": pa.array(range(n), pa.timestamp("ms")),
        "t_utc": pa.array(range(n), pa.timestamp("ns", tz="UTC")),
        "nulls": pa.array([1, None] + [3] * (n - 2), pa.int32()),
        "bools": pa.array([True, False] * 3 + [True]),
        "text": pa.array(["a"] * n),
    }
    table = pa.table(cols)
    for t in (table, table.slice(2, 4), pa.concat_tables([table, table])):
        got = logspec._numpy_columns(t)
        for name in t.column_names:
            want = t.column(name).to_numpy()
            assert got[name].dtype == want.dtype, name
            assert got[name].tolist() == want.tolist() or np.array_equal(got[name], want, equal_nan=True), name
