"""One timed read of an ArduPilot DataFlash log by pymavlink's DFReader, for `cargo bench --bench dataflash`.

Usage: python3 dfreader_bench.py MODE FILE, MODE one of
  recv    `DFReader_binary(path)` and `recv_msg()` until it returns None (every message unpacked)
  fields  the same, and every column of every message read (`getattr`: the scaled characters
          divided, texts decoded): what `logspec dump` does with every message

Needs pymavlink (pinned in py/requirements-test.txt). `PYMAVLINK_FAST_INDEX` is left as installed.
Prints one JSON object: the seconds the read took (opening included, imports excluded; wall clock and
`time.process_time()`), the messages it returned, and `array_bytes` 0.
"""
import json
import sys
import time

from pymavlink import DFReader

mode, path = sys.argv[1], sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
r = DFReader.DFReader_binary(path, zero_time_base=False)
n = 0
while True:
    m = r.recv_msg()
    if m is None:
        break
    if mode == "fields":
        for col in m.fmt.columns:
            getattr(m, col)
    n += 1
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "records": n, "array_bytes": 0}))
