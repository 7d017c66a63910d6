"""A standalone Spark cluster on this machine, for the Spark cluster test
(`test_spark_cluster.py`) and the Spark bench (`benches/python/spark_bench.py`): a master and
`workers` workers of one core each, every daemon in a process group of its own (a worker's
executor and Python workers are in its group: killing the group kills all of them), stopped by
`stop`. The workers' Python is this one (`PYSPARK_PYTHON`), so that `logspec` imports there as it
does here."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# A hang guard only: nothing is timed.
GUARD = 600


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, ok, proc_logs: list[Path]) -> None:
    deadline = time.monotonic() + GUARD
    while not ok():
        if time.monotonic() > deadline:
            tails = "\n".join(p.read_text(errors="replace")[-2000:] for p in proc_logs if p.exists())
            raise AssertionError(f"hang guard: {what} did not happen in {GUARD} s\n{tails}")
        time.sleep(0.2)


class Cluster:
    """A standalone master and `workers` workers of one core and 768 MB each (256 MB daemons)."""

    def __init__(self, tmp: Path, workers: int = 2) -> None:
        self.tmp = tmp
        self.count = workers
        self.home = spark_home()
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.workers: list[subprocess.Popen] = []
        self.env = dict(
            os.environ,
            SPARK_HOME=str(self.home),
            SPARK_DAEMON_MEMORY="256m",
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOG_DIR=str(tmp / "spark-logs"),
            PYSPARK_PYTHON=sys.executable,
            SPARK_WORKER_DIR=str(tmp / "work"),
        )

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        p = subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *args],
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
        )
        self.procs.append(p)
        self.logs.append(log)
        return p

    def start(self) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(_free_port()))
        wait_for("the master listening", lambda: "Starting Spark master" in (self.tmp / "master.log").read_text(errors="replace") and self._port_open(), self.logs)
        for i in range(self.count):
            self.workers.append(
                self._start(
                    f"worker{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    self.url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "768m",
                    "--webui-port",
                    str(_free_port()),
                    "--work-dir",
                    str(self.tmp / f"work{i}"),
                )
            )
        for i in range(self.count):
            wait_for(f"worker {i} registered", lambda i=i: "Successfully registered with master" in (self.tmp / f"worker{i}.log").read_text(errors="replace"), self.logs)

    def _port_open(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def kill_group(self, pgid: int) -> None:
        os.killpg(pgid, signal.SIGKILL)

    def stop(self) -> None:
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=60)
