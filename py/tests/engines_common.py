"""What the engines' tests share (test_engines.py, test_spark_cluster.py): a generated fleet of
small RLOG logs, cut copies of a log of every format, the bundled logs with a table and a
numeric column each, and the aggregates each engine is asked for. The reference is DuckDB over
the Parquet export that the `logspec` command writes (another path of the engine: its own sink,
its own writer), read back with Hive partitioning."""

from __future__ import annotations

import math
import random
import subprocess
from pathlib import Path

from conftest import DATA, inputs

FLEET_LOGS = 240


def make_fleet(dir_: Path) -> list[Path]:
    """FLEET_LOGS small RLOG logs (`fleet_000.rlog`...), each of its own length and values: a
    double, an int64 and a boolean key plus a dozen keys the queries do not ask for."""
    from logspec import rlog

    dir_.mkdir(parents=True, exist_ok=True)
    rng = random.Random(31)
    out = []
    for i in range(FLEET_LOGS):
        p = dir_ / f"fleet_{i:03d}.rlog"
        cycles = rng.randint(5, 120)
        with rlog.Writer(p, overwrite=True) as w:
            for c in range(cycles):
                values = {
                    "/Drive/Voltage": rng.uniform(8.0, 13.0),
                    "/Drive/Count": rng.randint(-(10**12), 10**12),
                    "/Drive/Enabled": rng.random() < 0.5,
                }
                for k in range(12):
                    values[f"/Other/Key{k}"] = rng.random()
                w.cycle(0.02 * c + 0.001 * i, values)
        out.append(p)
    return out


def cut_copies(dir_: Path) -> list[Path]:
    """A copy of the first bundled log of every format cut at 70% of its length, named
    `cut_<name>`: a log that fails part-way."""
    dir_.mkdir(parents=True, exist_ok=True)
    seen = set()
    out = []
    for f in inputs():
        kind = f.parent.name
        if kind in seen:
            continue
        seen.add(kind)
        data = f.read_bytes()
        p = dir_ / f"cut_{f.name}"
        p.write_bytes(data[: len(data) * 7 // 10])
        out.append(p)
    return out


NUMERIC = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float", "double")


def pick_column(schema) -> str:
    """The first top-level numeric value column of a table (`log_elapsed_ns` when there is none)."""
    for f in schema:
        if f.name in ("log_time", "log_elapsed_ns", "log"):
            continue
        if str(f.type) in NUMERIC:
            return f.name
    return "log_elapsed_ns"


def bundled_tables(clean_only: bool = False) -> list[tuple[Path, str, str]]:
    """(log, table, column) for every bundled log with a table: its first table with a numeric
    column whose values have no NaN (engines order NaN differently in min and max). With
    `clean_only`, only the logs that read without a fault or a warning."""
    import logspec
    import pyarrow.compute as pc
    import warnings

    out = []
    for f in inputs():
        with warnings.catch_warnings():
            warnings.simplefilter("error" if clean_only else "ignore")
            try:
                tables = logspec.open(f).tables(on_error="raise" if clean_only else "warn")
            except (logspec.LogspecError, Warning):
                continue
        best = None
        for name, t in tables.items():
            if t.num_rows == 0:
                continue
            col = pick_column(t.schema)
            c = t.column(col)
            if str(c.type) in ("float", "double") and pc.any(pc.is_nan(c)).as_py():
                continue
            if best is None or col != "log_elapsed_ns":
                best = (f, name, col)
            if col != "log_elapsed_ns":
                break
        if best is not None:
            out.append(best)
    return out


def export(bin_: str, out: Path, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([bin_, "--quiet", "export", "--parquet", str(out), *map(str, paths)], capture_output=True, text=True, timeout=900)


def table_dirs(out: Path) -> dict[str, Path]:
    """The Parquet dataset's table folders by table name (each file's `logspec.table`)."""
    import pyarrow.parquet as pq

    found = {}
    for d in out.iterdir():
        files = sorted(d.glob("*/*.parquet"))
        if files:
            found[pq.read_metadata(files[0]).metadata[b"logspec.table"].decode()] = d
    return found


def sql_aggregates(con, rel: str, col: str, lo: int, hi: int, where: str = "TRUE") -> dict:
    """Per log: rows, min/max/mean of `col`, rows with `log_elapsed_ns` in [lo, hi], through SQL
    on `rel` (DuckDB). The column is quoted: channel fields may be SQL keywords (DataFlash's `By`)."""
    c = '"' + col.replace('"', '""') + '"'
    q1 = f"SELECT log, count(*), min({c}), max({c}), avg({c}) FROM {rel} WHERE {where} GROUP BY log"
    q2 = f"SELECT log, count(*) FROM {rel} WHERE {where} AND log_elapsed_ns BETWEEN {lo} AND {hi} GROUP BY log"
    return combine(con(q1), con(q2))


def combine(main, window) -> dict:
    out = {r[0]: {"rows": int(r[1]), "min": num(r[2]), "max": num(r[3]), "mean": num(r[4]), "window": 0} for r in main}
    for r in window:
        out[r[0]]["window"] = int(r[1])
    return out


def num(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    f = float(v)
    return int(f) if f.is_integer() and abs(f) < 2**53 and not isinstance(v, float) else f


def polars_aggregates(lf, col: str, lo: int, hi: int) -> dict:
    import polars as pl

    main = lf.group_by("log").agg(pl.len(), pl.col(col).min().alias("lo"), pl.col(col).max().alias("hi"), pl.col(col).mean().alias("mean")).collect().rows()
    window = lf.filter(pl.col("log_elapsed_ns").is_between(lo, hi)).group_by("log").agg(pl.len()).collect().rows()
    return combine(main, window)


def assert_same(got: dict, want: dict, what: str) -> None:
    """Counts, minima and maxima exactly; means closely (summation order and width differ)."""
    assert set(got) == set(want), f"{what}: logs {sorted(set(got) ^ set(want))[:5]} differ"
    for log, w in want.items():
        g = got[log]
        for k in ("rows", "window", "min", "max"):
            a, b = g[k], w[k]
            if isinstance(a, float) or isinstance(b, float):
                assert float(a) == float(b), f"{what}: log={log} {k}: {a} != {b}"
            else:
                assert a == b, f"{what}: log={log} {k}: {a} != {b}"
        if w["mean"] is not None:
            # Engines sum 32-bit floats in 32 bits or 64: the means agree to a millionth of the
            # values' magnitude.
            scale = max(abs(float(w["min"])), abs(float(w["max"])))
            tol = 1e-6 * scale if isinstance(w["min"], float) else 1e-9 * scale
            assert math.isclose(float(g["mean"]), float(w["mean"]), rel_tol=1e-9, abs_tol=tol), f"{what}: log={log} mean: {g['mean']} != {w['mean']}"


def window_of(con, rel: str, where: str = "TRUE") -> tuple[int, int]:
    """A tenth of the time span of `rel`'s rows, from a tenth in: [lo, hi] in ns."""
    a, b = con(f"SELECT min(log_elapsed_ns), max(log_elapsed_ns) FROM {rel} WHERE {where}")[0]
    a, b = int(a), int(b)
    return a + (b - a) // 10, a + 2 * (b - a) // 10


DATA_DIR = DATA
