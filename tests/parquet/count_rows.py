"""Rows per table of one log of a dataset, read with pyarrow.

usage: count_rows.py OUT LOG; prints {table: rows} as JSON.
"""

import json
import os
import sys

import pyarrow.parquet as pq

out, log = sys.argv[1], sys.argv[2]
counts = {}
for table in sorted(os.listdir(out)):
    part = os.path.join(out, table, "log=" + log, "part-0.parquet")
    if os.path.exists(part):
        counts[table] = pq.ParquetFile(part).metadata.num_rows
print(json.dumps(counts))
