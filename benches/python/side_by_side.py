"""Two builds of logspec side by side on the user-visible lines: `logspec info` and `dump` of
each format's large input, `export --parquet` of the USVLOG and RLOG inputs, and the Python
package's `tables()` of the USVLOG and RLOG inputs. Each line runs the two builds in turn,
`--rounds` times (the order swapped every round), each run a new process; prints the median wall
time of each build and the ratio new/old as a Markdown table (BENCHMARKS.md, "Before and
after").

    python3 benches/python/side_by_side.py --old-bin OLD/logspec --new-bin NEW/logspec \\
        --old-python OLDVENV/bin/python --new-python NEWVENV/bin/python --inputs DIR [--rounds 5]

DIR holds `bench.usvlog`, `bench.rlog`, `bench.wpilog`, `bench_carla.log` and `bench.bag` (the
lines of a missing input are left out).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TABLES = """
import sys, time, logspec
t = time.perf_counter()
tables = logspec.open(sys.argv[1]).tables()
n = sum(t.num_rows for t in tables.values())
print(time.perf_counter() - t, n)
"""


def run(cmd: list[str], stdout=subprocess.DEVNULL) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd}: exit status {p.returncode}")
    return elapsed


def python_tables(python: str, file: Path) -> float:
    out = subprocess.run([python, "-c", TABLES, str(file)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-bin", required=True)
    ap.add_argument("--new-bin", required=True)
    ap.add_argument("--old-python", required=True)
    ap.add_argument("--new-python", required=True)
    ap.add_argument("--inputs", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    files = {
        "USVLOG": a.inputs / "bench.usvlog",
        "RLOG": a.inputs / "bench.rlog",
        "WPILOG": a.inputs / "bench.wpilog",
        "CARLA": a.inputs / "bench_carla.log",
        "ROS bag": a.inputs / "bench.bag",
    }
    files = {k: v for k, v in files.items() if v.is_file()}
    scratch = Path(tempfile.mkdtemp(prefix="logspec-side-by-side-"))
    lines = []
    for name, f in files.items():
        lines.append((f"`info` {name}", lambda b, f=f: run([b, "info", str(f)]), "bin"))
        lines.append((f"`dump` {name}", lambda b, f=f: run([b, "dump", str(f)]), "bin"))
    for name in ("USVLOG", "RLOG"):
        if name in files:
            def export(b, f=files[name]):
                out = scratch / "parquet"
                shutil.rmtree(out, ignore_errors=True)
                return run([b, "export", "--parquet", str(out), str(f), "-j", "1"])
            lines.append((f"`export --parquet` {name}", export, "bin"))
    for name in ("USVLOG", "RLOG"):
        if name in files:
            lines.append((f"Python `tables()` {name}", lambda p, f=files[name]: python_tables(p, f), "python"))
    print(f"| line | MB | before | after | after/before |")
    print("|---|---|---|---|---|")
    for label, f, kind in lines:
        old = a.old_bin if kind == "bin" else a.old_python
        new = a.new_bin if kind == "bin" else a.new_python
        times = {"old": [], "new": []}
        f(new)  # warm the page cache and the binary
        for r in range(a.rounds):
            order = [("old", old), ("new", new)] if r % 2 == 0 else [("new", new), ("old", old)]
            for which, build in order:
                times[which].append(f(build))
        o, n = statistics.median(times["old"]), statistics.median(times["new"])
        mb = next((p.stat().st_size / 1e6 for k, p in files.items() if k in label), 0)
        print(f"| {label} | {mb:.0f} | {o:.3f} s | {n:.3f} s | {n / o:.2f}x |", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
