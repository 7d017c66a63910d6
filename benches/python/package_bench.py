"""One timed read through the Python package `logspec`, for `cargo bench --bench python_package`.

Usage: python3 package_bench.py MODE FILE, MODE one of
  arrow    `logspec.open(path).tables()`: every channel as a pyarrow Table
  numpy    the same, then every number column as a numpy array (`Log.numpy`'s conversion)
  timeseries  `logspec.usvlog.read_timeseries_bin(path)` (USVLOG into numpy, upstream's shape)
  standin  `upstream_standin.read_timeseries_bin(path)` (the USVLOG baseline)

Prints one JSON object: the seconds the read took (imports excluded; wall clock, and the CPU time
of the process's threads, `time.process_time()`), the rows (records or values) it returned, and
the bytes of the columns it returned (Arrow buffers or numpy arrays).
"""
import json
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
if mode in ("standin", "timeseries"):
    import numpy  # noqa: F401

    if mode == "standin":
        from upstream_standin import read_timeseries_bin
    else:
        from logspec.usvlog import read_timeseries_bin

    t0, c0 = time.perf_counter(), time.process_time()
    result = read_timeseries_bin(path)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = sum(result.record_counts.values())
    nbytes = sum(c.nbytes for cols in result.records.values() for c in cols.values())
else:
    import numpy  # noqa: F401
    import pyarrow  # noqa: F401

    import logspec

    t0, c0 = time.perf_counter(), time.process_time()
    tables = logspec.open(path).tables()
    if mode == "numpy":
        # `Log.numpy`'s conversion (`_numpy_columns`; a build without it: the chunked arrays').
        convert = getattr(logspec, "_numpy_columns", None) or (
            lambda t: {c: t.column(c).to_numpy() for c in t.column_names if t.schema.field(c).type.num_fields == 0})
        columns = {name: convert(t) for name, t in tables.items()}
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = sum(t.num_rows for t in tables.values())
    if mode == "numpy":
        nbytes = sum(a.nbytes for cols in columns.values() for a in cols.values())
    else:
        nbytes = sum(t.nbytes for t in tables.values())
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "records": rows, "array_bytes": nbytes}))
