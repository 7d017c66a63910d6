"""One timed read of a USVLOG file, for `cargo bench --bench python_module`.

Usage: python3 read_bench.py MODE FILE, MODE one of
  numpy    the generated module, `read_usvlog(path, numpy=True)` (numpy arrays)
  plain    the generated module, `read_usvlog(path)` (lists; numpy is made unimportable first)
  standin  `upstream_standin.read_timeseries_bin(path)` (the baseline; see that file)
  package  the `logspec` package's `logspec.usvlog.read_timeseries_bin(path)` (Rust; `pip install ./py`)

Prints one JSON object: the seconds the read took (imports excluded; wall clock, and the CPU time
of the process's threads, `time.process_time()`), the records it returned, and the bytes of the
columns it returned (numpy arrays: their buffers; lists: not counted).
"""
import json
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
if mode == "plain":
    sys.modules["numpy"] = None
    import usvlog
    read = lambda: usvlog.read_usvlog(path)
elif mode == "numpy":
    import numpy  # noqa: F401  (imported before the clock starts, as the stand-in's is)
    import usvlog
    read = lambda: usvlog.read_usvlog(path, numpy=True)
elif mode == "package":
    import numpy  # noqa: F401
    import logspec.usvlog
    read = lambda: logspec.usvlog.read_timeseries_bin(path)
else:
    import upstream_standin
    read = lambda: upstream_standin.read_timeseries_bin(path)
t0, c0 = time.perf_counter(), time.process_time()
result = read()
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
if mode in ("standin", "package"):
    columns, records = result.records, sum(result.record_counts.values())
else:
    columns, records = result.columns, result.records_total
nbytes = sum(getattr(c, "nbytes", 0) for cols in columns.values() for c in cols.values())
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "records": records, "array_bytes": nbytes}))
