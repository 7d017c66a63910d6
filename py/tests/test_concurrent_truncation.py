"""An R1 RLOG file that another thread cuts short and writes back over and over while
`tables()` reads it (two halves at once, `src/cli/tables/split.rs`): every read gives a Python
exception or, for each table, the rows written before the cut, never a dead interpreter. A
memory-mapped input would end the process with SIGBUS when a page it still reads is cut away,
so the reads run in a subprocess whose exit status is checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import need

KEYS = 16
CYCLES = 120_000  # about 24 MB: several times the size from which the file is read in halves

# Run in the subprocess: argv = path, keys, seconds, cycles. Prints one JSON object.
CHILD = r"""
import json, os, sys, threading, time, warnings
import numpy as np
import logspec

path, keys, seconds, cycles = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
original = memoryview(open(path, "rb").read())
stop = threading.Event()
cuts = [0]

def cut_and_restore():
    fd = os.open(path, os.O_RDWR)
    fractions = (0.35, 0.8, 0.5, 0.95, 0.65, 0.4, 0.7)
    try:
        while not stop.is_set():
            at = int(len(original) * fractions[cuts[0] % len(fractions)])
            os.ftruncate(fd, at)
            cuts[0] += 1
            time.sleep(0.003)
            os.pwrite(fd, original[at:], at)
            time.sleep(0.001)
    finally:
        os.pwrite(fd, original, 0)
        os.close(fd)

outcomes = {"full": 0, "cut": 0, "raised": 0}
errors = []
cutter = threading.Thread(target=cut_and_restore)
cutter.start()
start = time.monotonic()
try:
    while outcomes["full"] + outcomes["cut"] + outcomes["raised"] < 200:
        elapsed = time.monotonic() - start
        # At least 5 reads and one that met a cut file, or until the time is up.
        if elapsed > seconds or (outcomes["cut"] + outcomes["raised"] > 0 and sum(outcomes.values()) >= 5):
            break
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tables = logspec.open(path).tables(on_error="warn")
        except (logspec.LogspecError, OSError) as e:
            outcomes["raised"] += 1
            errors.append(f"{type(e).__name__}: {e}")
            continue
        for k in range(keys):
            t = tables[f"/Value{k}"]
            n = t.num_rows
            c = np.arange(n, dtype=np.float64)
            # Exactly the first n values and times written, whatever n the cut left.
            assert np.array_equal(t.column("value").to_numpy(), c * 0.25 + k), k
            times = np.round((1.0 + c / 64) * 1e9).astype(np.int64)
            assert np.array_equal(t.column("log_elapsed_ns").to_numpy(), times), k
        rows = [tables[f"/Value{k}"].num_rows for k in range(keys)]
        outcomes["full" if not caught and min(rows) == cycles else "cut"] += 1
finally:
    stop.set()
    cutter.join()
print(json.dumps({"outcomes": outcomes, "cuts": cuts[0], "errors": errors[:3], "package": logspec.__file__}))
"""


def build(path: Path) -> None:
    """Writes `CYCLES` cycles of `KEYS` doubles (`/Value{k}`: cycle * 0.25 + k, at time
    1 + cycle / 64 s), the keys defined in the first cycle, as AdvantageKit writes R1."""
    np = need("numpy")
    import struct

    head = bytearray(b"\x01\x00" + struct.pack(">d", 1.0))
    for k in range(KEYS):
        name = f"/Value{k}".encode()
        head += b"\x01" + struct.pack(">hH", k, len(name)) + name
    fields = [("ts", "u1"), ("t", ">f8")]
    for k in range(KEYS):
        fields += [(f"m{k}", "u1"), (f"k{k}", ">i2"), (f"c{k}", "u1"), (f"v{k}", ">f8")]
    cycles = np.zeros(CYCLES, dtype=np.dtype(fields))
    c = np.arange(CYCLES, dtype=np.float64)
    cycles["t"] = 1.0 + c / 64
    for k in range(KEYS):
        cycles[f"m{k}"], cycles[f"k{k}"], cycles[f"c{k}"] = 2, k, 5
        cycles[f"v{k}"] = c * 0.25 + k
    body = cycles.tobytes()
    # The first cycle's timestamp is in `head`, its values after the definitions.
    path.write_bytes(bytes(head) + body[9:])


def test_a_file_cut_during_tables_never_kills_the_interpreter(tmp_path: Path):
    need("numpy")
    need("pyarrow")  # the tables
    path = tmp_path / "cut_while_read.rlog"
    build(path)
    assert path.stat().st_size > 16 << 20
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(KEYS), "60", str(CYCLES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert p.returncode >= 0, f"the reading process was killed by signal {-p.returncode}\n{p.stderr}"
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    outcomes = report["outcomes"]
    assert report["cuts"] > 0, report
    # At least one read met the file cut short (else nothing was tested).
    assert outcomes["cut"] + outcomes["raised"] > 0, report
