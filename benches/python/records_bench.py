"""One timed iteration over a log's records, for `cargo bench --bench python_records`.

Usage: python3 records_bench.py MODE FILE, MODE one of
  package  `for r in logspec.open(path)`: the package's records, built in Rust as Python objects
  json     the same records the way the package made them before (and any caller of the command
           can): `logspec dump` lines parsed with `json.loads` (the command is $LOGSPEC_BIN)

Prints one JSON object: the seconds the iteration took (imports excluded) and the records.
"""
import json
import os
import subprocess
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
n = 0
if mode == "package":
    import logspec

    t = time.perf_counter()
    for _ in logspec.open(path):
        n += 1
    seconds = time.perf_counter() - t
elif mode == "json":
    t = time.perf_counter()
    loads = json.loads
    with subprocess.Popen([os.environ["LOGSPEC_BIN"], "--quiet", "dump", path], stdout=subprocess.PIPE) as p:
        for line in p.stdout:
            loads(line)
            n += 1
    seconds = time.perf_counter() - t
    assert p.returncode == 0, p.returncode
else:
    raise SystemExit(f"unknown mode {mode!r}")
print(json.dumps({"seconds": seconds, "records": n}))
