"""Spark over a fleet of raw logs on one worker against two (issue 31), run by `datafusion/benches/spark.rs`.

A standalone cluster on this machine (`py/tests/spark_cluster.py`, the cluster the Spark test
starts: a master and two workers of one core each) stays up for the whole run; each round runs
the query in two applications, one after the other, the order swapped every round: one with
`spark.cores.max=1` (one executor of one core: the fleet on one worker) and one with
`spark.cores.max=2` (an executor of one core on each worker). Each application is a driver
process of its own; it runs the query once untimed (executors start, their Python workers import
logspec), then `--queries` times timed. For each timed query it prints the wall time and the CPU
time (user + system) of the processes in the workers' process groups (the worker daemons, their
executors and Python workers: those alive at the end of the query).

The query: `SELECT count(*), min(value), max(value), avg(value)` over `--table` of every log
under `--fleet`, through `spark.read.format("logspec")`. Prints one JSON object per timed query
(`{"cores": 1, "round": 0, "seconds": ..., "cpu_seconds": ..., "answer": [...]}`).

Usage: python spark_bench.py --fleet DIR --table KEY [--rounds 3] [--queries 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The cluster the Spark test starts.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "py" / "tests"))
from spark_cluster import GUARD, Cluster  # noqa: E402

DRIVER = r"""
import json, os, sys, time
from pathlib import Path
from pyspark.sql import SparkSession
from logspec.spark import LogspecDataSource

args = json.loads(sys.argv[1])
spark = (
    SparkSession.builder.master(args["master"]).appName(f"logspec-bench-{args['cores']}")
    .config("spark.driver.memory", "512m").config("spark.executor.memory", "512m")
    .config("spark.executor.cores", "1").config("spark.cores.max", str(args["cores"]))
    .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
    .config("spark.pyspark.python", sys.executable)
    .config("spark.sql.python.filterPushdown.enabled", "true").config("spark.sql.adaptive.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
spark.dataSource.register(LogspecDataSource)
spark.read.format("logspec").option("table", args["table"]).load(args["fleet"]).createOrReplaceTempView("t")
q = "SELECT count(*), min(value), max(value), avg(value) FROM t"
TICK = os.sysconf("SC_CLK_TCK")


def cpu() -> float:
    # User + system seconds of every process in the workers' sessions (each worker started a
    # session of its own; its executors and their Python workers are in it).
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[3]) in args["sessions"]:
            total += int(f[11]) + int(f[12])
    return total / TICK


spark.sql(q).collect()
# Every executor registered (a second one may come late) before the clock starts.
deadline = time.monotonic() + 120
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 < args["cores"] and time.monotonic() < deadline:
    time.sleep(0.2)
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
for i in range(args["queries"]):
    c, t = cpu(), time.perf_counter()
    r = spark.sql(q).collect()[0]
    seconds, cpu_seconds = time.perf_counter() - t, cpu() - c
    print(json.dumps({"cores": args["cores"], "executors": executors, "round": args["round"], "seconds": seconds,
                      "cpu_seconds": cpu_seconds, "answer": [r[0], r[1], r[2], r[3]]}), flush=True)
spark.stop()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fleet", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="logspec-spark-bench-") as tmp:
        tmp = Path(tmp)
        cluster = Cluster(tmp, workers=2)
        try:
            cluster.start()
            sessions = [w.pid for w in cluster.workers]
            for r in range(a.rounds):
                for cores in ([1, 2] if r % 2 == 0 else [2, 1]):
                    args = {"master": cluster.url, "cores": cores, "fleet": a.fleet, "table": a.table,
                            "queries": a.queries, "round": r, "sessions": sessions}
                    p = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(args)], env=cluster.env,
                                       capture_output=True, text=True, timeout=GUARD)
                    if p.returncode != 0:
                        raise SystemExit(f"the driver failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}")
                    sys.stdout.write("".join(line + "\n" for line in p.stdout.splitlines() if line.startswith("{")))
                    sys.stdout.flush()
        finally:
            cluster.stop()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
