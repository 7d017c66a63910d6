"""The query engines over raw logs (`logspec.scan`: Polars, and DuckDB querying the Polars frame;
`logspec.datafusion_table`: DataFusion through its FFI table provider) give the answers DuckDB gives over the Parquet export of the same logs: rows, min/max/mean of a
column and rows in a time window, per log, for the bundled logs of every format, a generated
fleet of a few hundred logs, and logs cut short (their complete rows, the log named in a
warning). Spark's side is test_spark_cluster.py."""

from __future__ import annotations

import warnings
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
    polars_aggregates,
    sql_aggregates,
    table_dirs,
    window_of,
)

pl = need("polars")
duckdb = need("duckdb")
need("pyarrow")
dfn = need("datafusion")
import logspec  # noqa: E402


def parquet_rel(con, out: Path, table: str, log: str = "*") -> str:
    """The export's table (of one log, or of all) in DuckDB, `log` from the Hive partitions."""
    d = table_dirs(out)[table]
    part = "*" if log == "*" else f"log={log}"
    return f"read_parquet('{d}/{part}/*.parquet', hive_partitioning=true, hive_types_autocast=false)"


def on_frame(lf):
    """A DuckDB connection with the Polars frame registered as `frame`."""
    con = duckdb.connect()
    con.register("frame", lf)
    return con


def duck(con):
    return lambda q: con.sql(q).fetchall()


def on_datafusion(inputs, table: str, **kw):
    """A DataFusion session with the logs' table registered as `t` (through the FFI capsule)."""
    ctx = dfn.SessionContext()
    ctx.register_table("t", logspec.datafusion_table(inputs, table, **kw))
    return lambda q: [tuple(r.values()) for r in ctx.sql(q).to_arrow_table().to_pylist()]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fleet")
    make_fleet(d / "logs")
    return d


def test_duckdb_pushes_into_the_polars_frame(fleet: Path) -> None:
    """The installed DuckDB hands a Polars lazy frame its projection and filter: the source sees
    them (so DuckDB needs no pyarrow.dataset of its own)."""
    seen = []

    def source(with_columns, predicate, n_rows, batch_size):
        seen.append((with_columns, predicate))
        yield pl.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}).filter(predicate).select(with_columns)

    from polars.io.plugins import register_io_source

    frame = register_io_source(source, schema={"a": pl.Int64, "b": pl.Int64, "c": pl.Int64})
    assert duckdb.sql("SELECT b FROM frame WHERE a > 1").fetchall() == [(5,), (6,)]
    assert seen and seen[0][0] is not None and set(seen[0][0]) == {"a", "b"}
    assert seen[0][1] is not None and "col(\"a\")" in str(seen[0][1])


def test_fleet_polars_duckdb_and_the_parquet_export_agree(fleet: Path, logspec_bin: str) -> None:
    logs = sorted((fleet / "logs").glob("*.rlog"))
    assert len(logs) == FLEET_LOGS
    out = fleet / "parquet"
    p = export(logspec_bin, out, fleet / "logs")
    assert p.returncode == 0, p.stderr
    con = duckdb.connect()
    for table, col in [("/Drive/Voltage", "value"), ("/Drive/Count", "value"), ("/Drive/Enabled", "log_elapsed_ns")]:
        rel = parquet_rel(con, out, table)
        lo, hi = window_of(duck(con), rel)
        want = sql_aggregates(duck(con), rel, col, lo, hi)
        assert len(want) == FLEET_LOGS
        lf = logspec.scan(fleet / "logs", table)
        assert_same(polars_aggregates(lf, col, lo, hi), want, f"polars {table}")
        got = sql_aggregates(duck(on_frame(lf)), "frame", col, lo, hi)
        assert_same(got, want, f"duckdb {table}")
        assert_same(sql_aggregates(on_datafusion(fleet / "logs", table), "t", col, lo, hi), want, f"datafusion {table}")
        # A glob and a list of files name the same logs.
        lf2 = logspec.scan([str(fleet / "logs" / "fleet_0*.rlog"), logs[-1]], table)
        names = set(lf2.select("log").unique().collect()["log"].to_list())
        assert names == {p.stem for p in logs if p.stem.startswith("fleet_0")} | {logs[-1].stem}


def test_a_filter_on_log_reads_only_those_logs(fleet: Path, monkeypatch) -> None:
    """Conditions on `log` are pushed down: the other logs are never scanned."""
    import logspec.engines as engines

    scanned = []
    real = engines._logspec.scan_table

    def spy(file, log, *args):
        scanned.append(log)
        return real(file, log, *args)

    monkeypatch.setattr(engines._logspec, "scan_table", spy)
    lf = logspec.scan(fleet / "logs", "/Drive/Count")
    n = lf.filter(pl.col("log").is_in(["fleet_003", "fleet_007"])).select(pl.len()).collect().item()
    assert sorted(scanned) == ["fleet_003", "fleet_007"]
    assert n == logspec.open(fleet / "logs" / "fleet_003.rlog").table("/Drive/Count").num_rows + logspec.open(
        fleet / "logs" / "fleet_007.rlog"
    ).table("/Drive/Count").num_rows
    scanned.clear()
    got = duckdb.sql("SELECT count(*) FROM lf WHERE log = 'fleet_011'").fetchall()[0][0]
    assert scanned == ["fleet_011"]
    scanned.clear()
    assert on_frame(lf).sql("SELECT count(*) FROM frame WHERE log = 'fleet_011'").fetchall()[0][0] == got
    assert scanned == ["fleet_011"]
    assert got == logspec.open(fleet / "logs" / "fleet_011.rlog").table("/Drive/Count").num_rows


def test_the_time_window_is_pushed_into_the_scan(fleet: Path, monkeypatch) -> None:
    import logspec.engines as engines

    calls = []
    real = engines._logspec.scan_table

    def spy(file, log, table, columns, since, until, *rest):
        calls.append((since, until, columns))
        return real(file, log, table, columns, since, until, *rest)

    monkeypatch.setattr(engines._logspec, "scan_table", spy)
    lf = logspec.scan(fleet / "logs" / "fleet_100.rlog", "/Drive/Voltage")
    got = lf.filter((pl.col("log_elapsed_ns") >= 500_000_000) & (pl.col("log_elapsed_ns") < 1_000_000_000)).select("value").collect()
    (since, until, columns), = calls
    assert since is not None and abs(since - 0.5) < 1e-5 and until is not None and abs(until - 1.0) < 1e-5
    assert "value" in columns and "log_time" not in columns
    t = logspec.open(fleet / "logs" / "fleet_100.rlog").table("/Drive/Voltage").to_pydict()
    want = [v for v, e in zip(t["value"], t["log_elapsed_ns"]) if 500_000_000 <= e < 1_000_000_000]
    assert got["value"].to_list() == want and want
    calls.clear()
    between = lf.filter(pl.col("log_elapsed_ns").is_between(500_000_000, 1_000_000_000, closed="left")).select("value").collect()
    ((since, until, _),) = calls
    assert abs(since - 0.5) < 1e-5 and abs(until - 1.0) < 1e-5
    assert between["value"].to_list() == want


def test_bundled_logs_of_every_format_agree(tmp_path: Path, logspec_bin: str) -> None:
    picked = bundled_tables()
    kinds = {f.parent.name for f, _, _ in picked}
    assert {"usvlog", "rlog", "wpilog", "carla", "rosbag", "ulog"} <= kinds, kinds
    out = tmp_path / "parquet"
    export(logspec_bin, out, *(f for f, _, _ in picked))
    dirs = table_dirs(out)
    con = duckdb.connect()
    for f, table, col in picked:
        name = f.stem
        assert table in dirs, (f, table)
        rel = parquet_rel(con, out, table, name)
        where = f"log = '{name}'"
        lo, hi = window_of(duck(con), rel, where)
        want = sql_aggregates(duck(con), rel, col, lo, hi, where)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lf = logspec.scan(f, table)
            assert_same(polars_aggregates(lf, col, lo, hi), want, f"polars {f.name} {table}")
            assert_same(sql_aggregates(duck(on_frame(lf)), "frame", col, lo, hi), want, f"duckdb {f.name} {table}")
            got = sql_aggregates(on_datafusion(f, table), "t", col, lo, hi, where)
            assert_same(got, want, f"datafusion {f.name} {table}")


def test_logs_cut_short_keep_their_complete_rows_and_are_named(tmp_path: Path, logspec_bin: str) -> None:
    cut = cut_copies(tmp_path / "cut")
    out = tmp_path / "parquet"
    p = export(logspec_bin, out, *cut)
    dirs = table_dirs(out) if out.exists() else {}
    con = duckdb.connect()
    checked = 0
    for f in cut:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tables = logspec.open(f).tables(on_error="warn") if f.stat().st_size else {}
        failed = [w for w in caught if issubclass(w.category, logspec.LogspecWarning) and w.message.error is not None]
        for table, t in tables.items():
            if t.num_rows == 0 or table not in dirs:
                continue
            rel = parquet_rel(con, out, table, f.stem)
            want = con.sql(f"SELECT count(*) FROM {rel} WHERE log = '{f.stem}'").fetchall()[0][0]
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = logspec.scan(f, table).select(pl.len()).collect().item()
            assert got == want == t.num_rows, (f, table)
            if failed:
                named = [w for w in seen if issubclass(w.category, logspec.LogspecWarning) and w.message.error is not None]
                assert named and str(f) in str(named[0].message) and named[0].message.offset is not None, (f, [str(w.message) for w in seen])
                assert f.name in p.stderr
                # on_error="raise": the engine's own error, naming the log.
                with pytest.raises(Exception, match=f.name):
                    logspec.scan(f, table, on_error="raise").collect()
            # DataFusion: the complete rows and a warning naming the log, or its own exception.
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = on_datafusion(f, table)("SELECT count(*) FROM t")[0][0]
            assert got == want, (f, table, "datafusion")
            if failed:
                # The fault has its place (warnings of what was skipped before it may come first).
                named = [w for w in seen if issubclass(w.category, logspec.LogspecWarning) and w.message.offset is not None]
                assert named and f.name in str(named[0].message), (f, [str(w.message) for w in seen])
                with pytest.raises(Exception, match=f"log={f.stem}: .*{f.name}") as raised:
                    on_datafusion(f, table, on_error="raise")("SELECT count(*) FROM t")
                assert not isinstance(raised.value, logspec.LogspecError)
            checked += 1
            break
    assert checked >= 5, checked


def test_a_table_no_log_has_and_an_input_that_is_not_a_log(fleet: Path, tmp_path: Path) -> None:
    with pytest.raises(logspec.FilterError, match="no log among the 240 has a table `/No/Such`"):
        logspec.scan(fleet / "logs", "/No/Such")
    bad = tmp_path / "notes.rlog"
    bad.write_text('{"error": "not a log"}')
    one = fleet / "logs" / "fleet_005.rlog"
    with pytest.warns(logspec.LogspecWarning, match="notes.rlog: not read"):
        lf = logspec.scan([one, bad], "/Drive/Count")
    assert lf.select(pl.len()).collect().item() == logspec.open(one).table("/Drive/Count").num_rows
    with pytest.raises(logspec.FormatError, match="notes.rlog"):
        logspec.scan([one, bad], "/Drive/Count", on_error="raise")


def _big_usvlog(path: Path, n: int) -> list:
    """A USVLOG of `n` gyro records (`REC_SENSOR_GYRO`, id 13) written here with `struct`, record
    `i` at `i` ms with `z_gyro = i`: about 4.8 MB for 200 000, several chunks of the time index.
    Returns the `z_gyro` values in file order."""
    import struct

    head = struct.pack("<6sIBQ13x", b"USVLOG", 1, 1, 0)
    body = b"".join(struct.pack("<QHHffB3x", i * 1000, 13, 12, float(i), 0.5, 1) for i in range(n))
    path.write_bytes(head + body)
    return [float(i) for i in range(n)]


def test_a_large_log_reads_the_same_in_partitions_with_its_time_index(tmp_path: Path, monkeypatch) -> None:
    """The first whole scan writes the log's time index beside it; then the log splits into
    partitions (`Logs.parts`, what the Spark source plans) and a time window reads only the chunks
    it meets: every way gives the values written."""
    from logspec.engines import Logs

    monkeypatch.setenv("LOGSPEC_INDEX", "beside")
    path = tmp_path / "big.usvlog"
    n = 200_000
    want = _big_usvlog(path, n)
    logs = Logs([str(path)], "REC_SENSOR_GYRO", on_error="raise")
    assert logs.parts(str(path)) == [None], "no index yet: the whole log"
    got = logspec.scan(path, "REC_SENSOR_GYRO").select("z_gyro").collect()["z_gyro"].to_list()
    assert got == want
    assert (tmp_path / "big.usvlog.logspec-idx").is_file(), "the whole scan wrote the index"
    parts = logs.parts(str(path), target_bytes=1 << 20)
    assert len(parts) >= 4 and all(p is not None for p in parts), parts
    values = []
    for p in parts:
        for b in logs.batches(str(path), "big", ["z_gyro"], part=p):
            values.extend(b.column(0).to_pylist())
    assert values == want
    since, until = 0.45 * n / 1e3, 0.55 * n / 1e3
    in_window = [v for v in want if since <= v / 1e3 <= until]
    wparts = logs.parts(str(path), since, until, target_bytes=1 << 20)
    assert 0 < len(wparts) < len(parts), wparts
    values = []
    for p in wparts:
        for b in logs.batches(str(path), "big", ["z_gyro"], since, until, part=p):
            values.extend(b.column(0).to_pylist())
    assert values == in_window
    lf = logspec.scan(path, "REC_SENSOR_GYRO")
    got = lf.filter((pl.col("log_elapsed_ns") >= int(since * 1e9)) & (pl.col("log_elapsed_ns") <= int(until * 1e9)))
    assert got.select("z_gyro").collect()["z_gyro"].to_list() == in_window
    # The log changed: its index is stale, the whole log is one part again and read right.
    want = _big_usvlog(path, n + 1000)
    assert logs.parts(str(path)) == [None]
    got = logspec.scan(path, "REC_SENSOR_GYRO").select("z_gyro").collect()["z_gyro"].to_list()
    assert got == want


def _big_rlog(path: Path, n: int) -> dict:
    """An R1 RLOG of `n` cycles written here with `struct` (big-endian messages: 00 timestamp,
    01 key definition, 02 value with its type code), cycle `i` at `i` ms: `/a` the double `i`
    every cycle; `/b` the double `i` every other cycle of the first half, then the string `s<i>`
    (another type: the table `/b#string`); `/late`, an integer defined three quarters in, `i`
    from there. About 5 MB for 200 000 cycles, several chunks of the time index, with key
    definitions and first values in several of them. Returns each table's `(ms, value)` rows."""
    import struct

    def key(kid: int, name: str) -> bytes:
        b = name.encode()
        return struct.pack(">BhH", 1, kid, len(b)) + b

    out = [b"\x01"]
    rows: dict = {"/a": [], "/b": [], "/b#string": [], "/late": []}
    for i in range(n):
        out.append(struct.pack(">Bd", 0, i / 1e3))
        if i == 0:
            out += [key(1, "/a"), key(2, "/b")]
        out.append(struct.pack(">BhBd", 2, 1, 5, float(i)))
        rows["/a"].append((i, float(i)))
        if i % 2 == 0 and i < n // 2:
            out.append(struct.pack(">BhBd", 2, 2, 5, float(i)))
            rows["/b"].append((i, float(i)))
        elif i % 2 == 0:
            s = f"s{i}".encode()
            out.append(struct.pack(">BhBH", 2, 2, 7, len(s)) + s)
            rows["/b#string"].append((i, f"s{i}"))
        if i == 3 * n // 4:
            out.append(key(3, "/late"))
        if i >= 3 * n // 4:
            out.append(struct.pack(">BhBi", 2, 3, 3, i))
            rows["/late"].append((i, i))
    path.write_bytes(b"".join(out))
    return rows


def test_a_large_rlog_reads_the_same_in_partitions_with_its_time_index(tmp_path: Path, monkeypatch) -> None:
    """An RLOG file's time index: written by the first whole scan (not with `LOGSPEC_INDEX=off`;
    only in the cache directory with `cache`); then each table, read in partitions that start
    after key definitions and after `/b` changed type, and in a time window, gives the rows
    written."""
    from logspec.engines import Logs

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "big.rlog"
    n = 200_000
    want = _big_rlog(path, n)
    beside = tmp_path / "big.rlog.logspec-idx"
    cache = tmp_path / "cache" / "logspec"
    values = lambda lf: lf.select("value").collect()["value"].to_list()  # noqa: E731
    for keep in ["off", "cache"]:
        monkeypatch.setenv("LOGSPEC_INDEX", keep)
        assert values(logspec.scan(path, "/a")) == [v for _, v in want["/a"]]
        assert not beside.exists(), keep
        assert len(list(cache.glob("*.idx")) if cache.exists() else []) == (keep == "cache"), keep
    for f in cache.glob("*.idx"):
        f.unlink()
    monkeypatch.delenv("LOGSPEC_INDEX")
    logs = Logs([str(path)], "/a", on_error="raise")
    assert logs.parts(str(path)) == [None], "no index yet: the whole log"
    assert values(logspec.scan(path, "/a")) == [v for _, v in want["/a"]]
    assert beside.is_file(), "the whole scan wrote the index beside the log"
    since, until = 0.45 * n / 1e3 + 5e-4, 0.55 * n / 1e3 + 5e-4
    for table, rows in want.items():
        logs = Logs([str(path)], table, on_error="raise")
        parts = logs.parts(str(path), target_bytes=1 << 20)
        assert len(parts) >= 4 and all(p is not None for p in parts), parts
        got = []
        for p in parts:
            for b in logs.batches(str(path), "big", ["value"], part=p):
                got.extend(b.column(0).to_pylist())
        assert got == [v for _, v in rows], table
        in_window = [v for ms, v in rows if since <= ms / 1e3 <= until]
        got = []
        for p in logs.parts(str(path), since, until, target_bytes=1 << 20):
            for b in logs.batches(str(path), "big", ["value"], since, until, part=p):
                got.extend(b.column(0).to_pylist())
        assert got == in_window, table
        lf = logspec.scan(path, table).filter(
            (pl.col("log_elapsed_ns") >= int(since * 1e9)) & (pl.col("log_elapsed_ns") <= int(until * 1e9))
        )
        assert values(lf) == in_window, table


def test_the_spark_source_plans_a_partition_per_group_of_chunks(tmp_path: Path) -> None:
    """The Spark source's reader, planned and read here without a cluster (the cluster test is
    test_spark_cluster.py): with the log's index, a partition per group of chunks of
    `partitionBytes`, their rows together the log's."""
    need("pyspark")
    from pyspark.sql.types import DoubleType, FloatType, StructField, StructType

    from logspec.spark import LogspecDataSource

    path = tmp_path / "big.usvlog"
    want = _big_usvlog(path, 200_000)
    logspec.scan(path, "REC_SENSOR_GYRO").select("z_gyro").collect()  # writes the index
    src = LogspecDataSource({"path": str(path), "table": "REC_SENSOR_GYRO", "partitionBytes": str(1 << 20), "mode": "FAILFAST"})
    schema = StructType([StructField("z_gyro", FloatType(), True), StructField("log", DoubleType(), True)][:1])
    reader = src.reader(schema)
    parts = reader.partitions()
    assert len(parts) >= 4 and all(part is not None for p in parts for _, _, part in p.parts)
    values = [v for p in parts for b in reader.read(p) for v in b.column(0).to_pylist()]
    assert values == want


def test_the_spark_source_packs_small_logs_and_names_a_cut_one(fleet: Path, tmp_path: Path) -> None:
    """The Spark source's reader without a cluster: small logs packed into a few partitions (at
    least twice `parallelism`, a multiple of it), every log's rows once; a log cut short among
    them keeps its complete rows and has its own `_corrupt_record` row (PERMISSIVE), and the logs
    after it in its partition are read; FAILFAST raises naming it."""
    need("pyspark")
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from logspec.spark import LogspecDataSource

    logs = sorted((fleet / "logs").glob("*.rlog"))[:9]
    src_dir = tmp_path / "logs"
    src_dir.mkdir()
    for f in logs:
        (src_dir / f.name).write_bytes(f.read_bytes())
    cut_src = logs[4]
    data = cut_src.read_bytes()
    cut = src_dir / "fleet_004_cut.rlog"
    cut.write_bytes(data[: len(data) * 7 // 10])
    want = {f.stem: logspec.open(f).table("/Drive/Count").num_rows for f in src_dir.glob("*.rlog") if f != cut}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want[cut.stem] = logspec.open(cut).table("/Drive/Count", on_error="warn").num_rows
    assert 0 < want[cut.stem] < want[cut_src.stem]
    schema = StructType([StructField("value", LongType(), True), StructField("log", StringType(), True), StructField("_corrupt_record", StringType(), True)])
    for parallelism, partitions in [(1, 2), (2, 4), (3, 6), (8, 10)]:
        src = LogspecDataSource({"path": str(src_dir), "table": "/Drive/Count", "parallelism": str(parallelism)})
        reader = src.reader(schema)
        parts = reader.partitions()
        assert len(parts) == partitions, (parallelism, [p.parts for p in parts])
        assert [log for p in parts for _, log, _ in p.parts] == sorted(want), "every log once, in order"
        rows: dict = {}
        corrupt = []
        for p in parts:
            for b in reader.read(p):
                for log, bad in zip(b.column(1).to_pylist(), b.column(2).to_pylist()):
                    if bad is None:
                        rows[log] = rows.get(log, 0) + 1
                    else:
                        corrupt.append((log, bad))
        assert rows == want
        assert len(corrupt) == 1 and corrupt[0][0] == cut.stem and str(cut) in corrupt[0][1]
    src = LogspecDataSource({"path": str(src_dir), "table": "/Drive/Count", "parallelism": "1", "mode": "FAILFAST"})
    reader = src.reader(schema)
    with pytest.raises(logspec.LogspecError, match=cut.name):
        for p in reader.partitions():
            list(reader.read(p))


def test_datafusion_pushes_the_log_filter_and_the_time_window(fleet: Path) -> None:
    """Through the FFI capsule DataFusion hands the scan the conditions on `log` (taken as exact:
    only those logs are read, a partition each) and the bounds on
    `log_elapsed_ns` (inexact: the time window, DataFusion filters again); the answers are those
    of the logs read in full."""
    ctx = dfn.SessionContext()
    t = logspec.datafusion_table(fleet / "logs", "/Drive/Voltage")
    assert len(t.logs) == FLEET_LOGS
    ctx.register_table("t", t)

    def plan(q: str) -> str:
        return "\n".join(r["plan"] for r in ctx.sql("EXPLAIN " + q).to_arrow_table().to_pylist())

    q = "SELECT log, count(*) AS n FROM t WHERE log IN ('fleet_003', 'fleet_007') GROUP BY log ORDER BY log"
    # Exact: DataFusion keeps no filter of its own; the scan has a partition per log kept.
    p = plan(q)
    assert "full_filters=[t.log = " in p and "FilterExec" not in p, p
    assert "input_partitions=2" in p and "FFI_ExecutionPlan: LogScan" in p, p
    got = ctx.sql(q).to_arrow_table().to_pylist()
    want = [{"log": n, "n": logspec.open(fleet / "logs" / f"{n}.rlog").table("/Drive/Voltage").num_rows} for n in ("fleet_003", "fleet_007")]
    assert got == want
    w = "log = 'fleet_100' AND log_elapsed_ns >= 500000000 AND log_elapsed_ns < 1000000000"
    p = plan(f"SELECT value FROM t WHERE {w}")
    assert "projection=[log_elapsed_ns, value]" in p and "full_filters=[t.log = " in p and "partial_filters=[t.log_elapsed_ns >=" in p, p
    got = ctx.sql(f"SELECT value FROM t WHERE {w}").to_arrow_table().column("value").to_pylist()
    d = logspec.open(fleet / "logs" / "fleet_100.rlog").table("/Drive/Voltage").to_pydict()
    assert got == [v for v, e in zip(d["value"], d["log_elapsed_ns"]) if 500_000_000 <= e < 1_000_000_000] and got
