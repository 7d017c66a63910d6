"""Aggregates over a fleet dataset with DataFusion, as docs/parquet.md shows it (a table
registered with `register_parquet` and the `log` partition column).

usage: datafusion_aggregates.py OUT; prints one JSON line (see tests/external/parquet.rs, check_answer).
"""

import json
import os
import sys

from datafusion import SessionContext

out = sys.argv[1]
ctx = SessionContext()
ctx.register_parquet("nav", os.path.join(out, "REC_NAV_SOLUTION", ""), table_partition_cols=[("log", "string")])


def rows(sql):
    table = ctx.sql(sql).to_arrow_table()
    return [list(r.values()) for r in table.to_pylist()]


per_log = rows(
    """SELECT log, count(*), sum(CAST(x AS DOUBLE)), min(psi), max(psi), CAST(min(log_time) AS BIGINT)
       FROM nav GROUP BY log ORDER BY log"""
)
per_channel = {}
for i, table in enumerate(sorted(os.listdir(out))):
    ctx.register_parquet(f"t{i}", os.path.join(out, table, ""), table_partition_cols=[("log", "string")])
    per_channel[table] = rows(f"SELECT count(*) FROM t{i}")[0][0]
one_log = rows("SELECT count(*) FROM nav WHERE log = 'run_007'")[0][0]
print(json.dumps({"per_log": per_log, "per_channel": per_channel, "one_log": one_log}))
