"""Aggregates over a fleet dataset with Polars, as docs/parquet.md shows it (`scan_parquet` with
`hive_partitioning=True`, so `log` is a column).

usage: polars_aggregates.py OUT; prints one JSON line (see tests/external/parquet.rs, check_answer).
"""

import json
import os
import sys

import polars as pl

out = sys.argv[1]
nav = pl.scan_parquet(os.path.join(out, "REC_NAV_SOLUTION", "**", "*.parquet"), hive_partitioning=True)
per_log = (
    nav.group_by("log")
    .agg(
        pl.len().alias("rows"),
        # Summed in double precision, as DuckDB and Spark sum a float column.
        pl.col("x").cast(pl.Float64).sum().alias("sum_x"),
        pl.col("psi").min().alias("min_psi"),
        pl.col("psi").max().alias("max_psi"),
        pl.col("log_time").min().dt.epoch("ns").alias("first_ns"),
    )
    .sort("log")
    .collect()
)
per_channel = {}
for table in sorted(os.listdir(out)):
    t = pl.scan_parquet(os.path.join(out, table, "**", "*.parquet"), hive_partitioning=True)
    per_channel[table] = t.select(pl.len()).collect().item()
one_log = nav.filter(pl.col("log") == "run_007").select(pl.len()).collect().item()
rows = [[r[0], r[1], r[2], float(r[3]), float(r[4]), r[5]] for r in per_log.iter_rows()]
print(json.dumps({"per_log": rows, "per_channel": per_channel, "one_log": one_log}))
