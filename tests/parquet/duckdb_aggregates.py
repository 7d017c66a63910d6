"""Aggregates over a fleet dataset with DuckDB, as a user would write them (docs/parquet.md).

usage: duckdb_aggregates.py OUT; prints one JSON line (see tests/external/parquet.rs, check_answer).
"""

import json
import os
import sys

import duckdb

out = sys.argv[1]
con = duckdb.connect()
nav = os.path.join(out, "REC_NAV_SOLUTION", "**", "*.parquet")
per_log = con.execute(
    f"""SELECT log, count(*), sum(x), min(psi), max(psi), min(epoch_ns(log_time))
        FROM read_parquet('{nav}', hive_partitioning = true)
        GROUP BY log ORDER BY log"""
).fetchall()
per_channel = {}
for table in sorted(os.listdir(out)):
    per_channel[table] = con.execute(f"SELECT count(*) FROM '{os.path.join(out, table, '**', '*.parquet')}'").fetchone()[0]
one_log = con.execute(f"SELECT count(*) FROM read_parquet('{nav}', hive_partitioning = true) WHERE log = 'run_007'").fetchone()[0]
print(json.dumps({"per_log": [list(r) for r in per_log], "per_channel": per_channel, "one_log": one_log}))
