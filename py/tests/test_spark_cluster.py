"""`logspec.spark` on a real standalone Spark cluster on this machine: a master and two workers
started by the test (small memory: 256 MB daemons, 512 MB executors), the `logspec` package
importable on the workers (their Python is this one), and the answers equal to those of DuckDB
over the Parquet export (the single-machine answer): a generated fleet of a few hundred logs, the
bundled logs of every format and logs cut short (their complete rows, and the log named in
`_corrupt_record`), and a log with a time index read as several partitions (its answers known
from how it was written). A worker is killed while it runs a task; Spark runs the task again on the
other worker and the answer is still exact. The cluster is stopped at the end, even on failure.

The driver runs in a process of its own (`spark_driver.py` below, written to a temporary
folder), so that no SparkSession of another test in this process is reused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need
from engines_common import (
    FLEET_LOGS,
    assert_same,
    bundled_tables,
    cut_copies,
    export,
    make_fleet,
    sql_aggregates,
    table_dirs,
    window_of,
)

pyspark = need("pyspark")
duckdb = need("duckdb")
need("pyarrow")


def _java() -> None:
    from shutil import which

    if which("java") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("java is missing (CI=true: every test must run); apt-get install openjdk-17-jre-headless")
        pytest.skip("java is missing (apt-get install openjdk-17-jre-headless)", allow_module_level=True)


_java()

from spark_cluster import GUARD, Cluster, wait_for  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("spark"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


DRIVER = r'''
import json, os, sys, time
from pathlib import Path
from pyspark.sql import SparkSession
from logspec.spark import LogspecDataSource

args = json.loads(Path(sys.argv[1]).read_text())
spark = (
    SparkSession.builder.master(args["master"]).appName("logspec-test")
    .config("spark.driver.memory", "512m").config("spark.executor.memory", "512m")
    .config("spark.executor.cores", "1").config("spark.cores.max", "2")
    .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
    .config("spark.sql.python.filterPushdown.enabled", "true")
    .config("spark.pyspark.python", sys.executable).config("spark.task.maxFailures", "4")
    .config("spark.sql.adaptive.enabled", "false").config("spark.sql.shuffle.partitions", "4")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
spark.dataSource.register(LogspecDataSource)


def rows(q):
    return [tuple(r) for r in spark.sql(q).collect()]


def aggregates(path, table, col, lo, hi, where="TRUE", mode="PERMISSIVE", view="t", fmt="logspec"):
    spark.read.format(fmt).option("table", table).option("mode", mode).load(path).createOrReplaceTempView(view)
    if mode == "PERMISSIVE":
        where = f"({where}) AND _corrupt_record IS NULL"
    # One scan per job: the rows in the window counted beside the rest (the killed query below
    # filters on the window instead, which goes to pushFilters).
    q1 = (f"SELECT log, count(*), min(`{col}`), max(`{col}`), avg(`{col}`), "
          f"sum(CASE WHEN log_elapsed_ns BETWEEN {lo} AND {hi} THEN 1 ELSE 0 END) FROM {view} WHERE {where} GROUP BY log")
    conv = lambda r: [x if isinstance(x, (int, float, str)) or x is None else float(x) for x in r]
    main = [conv(r) for r in rows(q1)]
    return [r[:5] for r in main], [[r[0], r[5]] for r in main if r[5]]


def windowed(path, table, col, lo, hi, fmt):
    spark.read.format(fmt).option("table", table).load(path).createOrReplaceTempView("w")
    q = f"SELECT log, count(*), min(`{col}`), max(`{col}`), avg(`{col}`) FROM w WHERE log_elapsed_ns BETWEEN {lo} AND {hi} AND _corrupt_record IS NULL GROUP BY log"
    return [[x if isinstance(x, (int, float, str)) or x is None else float(x) for x in r] for r in rows(q)]


out = {}
t0 = time.monotonic()


def log(what):
    print(f"{time.monotonic() - t0:7.1f} s: {what}", flush=True)


log("session")
# Which Python the workers run, and that it imports logspec.
out["workers"] = spark.sparkContext.parallelize(range(4), 4).map(lambda _: __import__("logspec").__file__).distinct().collect()
out["jobs"] = []
for j in args["jobs"]:
    out["jobs"].append(aggregates(*j))
    log(f"job {j[0]} {j[1]}")
# Pushdown: a filter on log plans one partition; the time bounds go to the scan. The small logs
# packed: twice `parallelism` partitions.
spark.read.format("logspec").option("table", args["fleet_table"]).option("parallelism", "2").load(args["fleet"]).createOrReplaceTempView("f")
out["partitions_all"] = spark.sql("SELECT * FROM f").rdd.getNumPartitions()
out["partitions_one"] = spark.sql("SELECT * FROM f WHERE log = 'fleet_003'").rdd.getNumPartitions()
out["partitions_two"] = spark.sql("SELECT * FROM f WHERE log IN ('fleet_003', 'fleet_004')").rdd.getNumPartitions()
out["one"] = rows("SELECT count(*) FROM f WHERE log = 'fleet_003'")
# FAILFAST: the task fails with the log's fault.
try:
    spark.read.format("logspec").option("table", args["cut_table"]).option("mode", "FAILFAST").load(args["cut"]).count()
    out["failfast"] = None
except Exception as e:
    out["failfast"] = str(e)
# PERMISSIVE: the corrupt row names the log.
spark.read.format("logspec").option("table", args["cut_table"]).load(args["cut"]).createOrReplaceTempView("c")
out["corrupt"] = rows("SELECT log, _corrupt_record FROM c WHERE _corrupt_record IS NOT NULL")
log("pushdown and modes")
# A log with a time index: a partition per group of chunks of `partitionBytes`.
spark.read.format("logspec").option("table", "REC_SENSOR_GYRO").option("partitionBytes", str(1 << 20)).load(args["big"]).createOrReplaceTempView("big")
out["big_partitions"] = spark.sql("SELECT * FROM big").rdd.getNumPartitions()
out["big"] = rows("SELECT count(*), sum(CAST(z_gyro AS DOUBLE)), min(z_gyro), max(z_gyro) FROM big WHERE _corrupt_record IS NULL")
out["big_window"] = rows(f"SELECT count(*) FROM big WHERE log_elapsed_ns BETWEEN {args['big_window'][0]} AND {args['big_window'][1]}")
log("partitions of an indexed log")


# A worker killed mid-query: each task's first attempt says it started and waits for `go`.
class Blocking(LogspecDataSource):
    @classmethod
    def name(cls):
        return "logspec_blocking"

    def reader(self, schema):
        r = super().reader(schema)
        marks = args["marks"]

        class R(type(r)):
            def read(self, partition):
                first = partition.parts[0][1]  # the partition named by its first log
                Path(marks, f"{first}.{os.getpid()}.{time.monotonic_ns()}").write_text(str(os.getpid()))
                deadline = time.monotonic() + 600
                while not Path(marks, "go").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                yield from super().read(partition)

        r.__class__ = R
        return r


spark.dataSource.register(Blocking)
print("READY-TO-KILL", flush=True)
out["killed"] = windowed(args["fleet"], *args["kill_job"], fmt="logspec_blocking")
log("killed query done")
Path(args["out"]).write_text(json.dumps(out))
spark.stop()
'''


def test_spark_cluster_answers_as_duckdb_over_the_export(cluster: Cluster, tmp_path: Path, logspec_bin: str) -> None:
    fleet = tmp_path / "fleet"
    make_fleet(fleet)
    cut = cut_copies(tmp_path / "cut")
    # One log of each format that reads without a fault (test_engines.py holds every bundled
    # log, faulty ones too, to the export; the cut copies below cover faults here).
    picked, kinds = [], set()
    for f, table, col in bundled_tables(clean_only=True):
        if f.parent.name not in kinds:
            kinds.add(f.parent.name)
            picked.append((f, table, col))
    out = tmp_path / "parquet"
    p = export(logspec_bin, out, fleet, *(f for f, _, _ in picked))
    assert p.returncode == 0, p.stderr
    dirs = table_dirs(out)
    con = duckdb.connect()
    duck = lambda q: con.sql(q).fetchall()  # noqa: E731

    def rel(table: str, log: str = "*") -> str:
        part = "*" if log == "*" else f"log={log}"
        return f"read_parquet('{dirs[table]}/{part}/*.parquet', hive_partitioning=true, hive_types_autocast=false)"

    jobs, wants = [], []
    for table, col in [("/Drive/Voltage", "value")]:
        lo, hi = window_of(duck, rel(table))
        jobs.append([str(fleet), table, col, lo, hi])
        wants.append((f"fleet {table}", sql_aggregates(duck, rel(table), col, lo, hi)))
    for f, table, col in picked:
        where = f"log = '{f.stem}'"
        lo, hi = window_of(duck, rel(table, f.stem), where)
        jobs.append([str(f), table, col, lo, hi])
        wants.append((f"{f.name} {table}", sql_aggregates(duck, rel(table, f.stem), col, lo, hi, where)))
    # Logs cut short: their complete rows, as the export keeps them.
    cut_out = tmp_path / "cut-parquet"
    cp = export(logspec_bin, cut_out, *cut)
    cut_dirs = table_dirs(cut_out)
    cut_log = next(f for f in cut if f.suffix == ".usvlog")
    cut_table = "REC_NAV_SOLUTION"
    cut_rel = f"read_parquet('{cut_dirs[cut_table]}/*/*.parquet', hive_partitioning=true, hive_types_autocast=false)"
    lo, hi = window_of(duck, cut_rel)
    jobs.append([str(cut_log), cut_table, "x", lo, hi])
    wants.append(("cut usvlog", sql_aggregates(duck, cut_rel, "x", lo, hi)))
    assert cut_log.name in cp.stderr

    # A log large enough for several chunks, indexed by `logspec index`: record `i` at `i` ms with
    # `z_gyro = i` (struct-packed here, so the answers are known without reading it).
    import struct

    big, n = tmp_path / "big" / "big.usvlog", 150_000
    big.parent.mkdir()
    head = struct.pack("<6sIBQ13x", b"USVLOG", 1, 1, 0)
    big.write_bytes(head + b"".join(struct.pack("<QHHffB3x", i * 1000, 13, 12, float(i), 0.5, 1) for i in range(n)))
    ix = subprocess.run([logspec_bin, "index", str(big)], capture_output=True, text=True, env=dict(os.environ, LOGSPEC_INDEX="beside"))
    assert ix.returncode == 0 and (tmp_path / "big" / "big.usvlog.logspec-idx").is_file(), ix.stderr
    big_window = (40_000_000_000, 60_000_000_000)

    kill_lo, kill_hi = window_of(duck, rel("/Drive/Count"))
    kill_want = sql_aggregates(duck, rel("/Drive/Count"), "value", kill_lo, kill_hi, f"log_elapsed_ns BETWEEN {kill_lo} AND {kill_hi}")
    marks = tmp_path / "marks"
    marks.mkdir()
    args = {
        "master": cluster.url,
        "jobs": jobs,
        "fleet": str(fleet),
        "fleet_table": "/Drive/Count",
        "cut": str(cut_log),
        "cut_table": cut_table,
        "marks": str(marks),
        "kill_job": ["/Drive/Count", "value", kill_lo, kill_hi],
        "out": str(tmp_path / "out.json"),
        "big": str(big),
        "big_window": big_window,
    }
    (tmp_path / "args.json").write_text(json.dumps(args))
    (tmp_path / "spark_driver.py").write_text(DRIVER)
    driver_log = tmp_path / "driver.log"
    driver = subprocess.Popen(
        [sys.executable, str(tmp_path / "spark_driver.py"), str(tmp_path / "args.json")],
        stdout=driver_log.open("w"),
        stderr=subprocess.STDOUT,
        env=cluster.env,
        start_new_session=True,
    )
    try:
        logs = [driver_log, *cluster.logs]
        # Both executors are in a task of the blocking query: kill the first one's worker.
        def started() -> list[tuple[str, int]]:
            """(log, worker) of every task attempt so far: the worker whose process started the
            Python that read it."""
            return [(m.name.split(".")[0], worker_of(int(m.read_text()))) for m in marks.iterdir() if m.name != "go" and m.read_text()]

        def worker_of(pid: int) -> int:
            workers = {w.pid for w in cluster.workers}
            while pid > 1 and pid not in workers:
                try:
                    pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    return 0
            return pid

        wait_for("a task on each worker", lambda: len({g for _, g in started() if g}) >= 2 or driver.poll() is not None, logs)
        assert driver.poll() is None, driver_log.read_text()[-3000:]
        victim_log, victim = next((log, g) for log, g in started() if g)
        cluster.kill_group(victim)
        (marks / "go").write_text("")
        driver.wait(timeout=GUARD)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 0, driver_log.read_text()[-5000:]
    got = json.loads((tmp_path / "out.json").read_text())

    assert got["workers"] and all(w.startswith(str(Path(__import__("logspec").__file__).parent)) for w in got["workers"])
    for (what, want), (main, window) in zip(wants, got["jobs"]):
        from engines_common import combine

        assert_same(combine(main, window), want, f"spark {what}")
    assert len(wants[0][1]) == FLEET_LOGS
    assert got["partitions_all"] == 4, "the small logs packed into twice `parallelism` partitions"
    assert got["partitions_one"] == 1 and got["partitions_two"] == 2
    assert got["big_partitions"] >= 3, got["big_partitions"]
    assert got["big"] == [[n, float(n * (n - 1) // 2), 0.0, float(n - 1)]], got["big"]
    assert got["big_window"] == [[sum(1 for i in range(n) if big_window[0] <= i * 1_000_000 <= big_window[1])]]
    assert got["one"][0][0] == duck(f"SELECT count(*) FROM {rel('/Drive/Count', 'fleet_003')}")[0][0]
    assert got["failfast"] is not None and cut_log.name in got["failfast"]
    assert len(got["corrupt"]) == 1 and got["corrupt"][0][0] == cut_log.stem and str(cut_log) in got["corrupt"][0][1]
    # The killed worker's task ran again elsewhere; the answer is exact.
    from engines_common import combine

    assert_same(combine(got["killed"], [[r[0], r[1]] for r in got["killed"]]), kill_want, "spark with a worker killed")
    attempts = [m for m in marks.iterdir() if m.name.split(".")[0] == victim_log]
    assert len(attempts) >= 2, f"the task of {victim_log} was not run again after its worker was killed"
