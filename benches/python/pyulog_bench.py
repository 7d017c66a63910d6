"""One timed full parse of a PX4 ULog file by pyulog, for `cargo bench --bench ulog`.

Usage: python3 pyulog_bench.py MODE FILE, MODE one of
  parse   `ULog(path)`: every message read, every Data message's fields decoded into the numpy
          arrays of `data_list` (what `ulog_info`, `ulog2csv` and Flight Review call)
  header  `ULog(path, parse_header_only=True)`: the definitions section only (formats, info,
          parameters, subscriptions); no Data message is read. For scale: it counts nothing `info`
          counts

Needs pyulog (pinned in py/requirements-test.txt). Prints one JSON object: the seconds the read
took (opening included, imports excluded; wall clock and `time.process_time()`), the Data
messages it kept (`records`: the rows of every topic's arrays; 0 for `header`), and the bytes of
those arrays (`array_bytes`).
"""
import json
import sys
import time

from pyulog import ULog

mode, path = sys.argv[1], sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
ulog = ULog(path, parse_header_only=(mode == "header"))
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
n = 0
array_bytes = 0
for d in ulog.data_list:
    n += len(d.data["timestamp"])
    array_bytes += sum(a.nbytes for a in d.data.values())
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "records": n, "array_bytes": array_bytes}))
