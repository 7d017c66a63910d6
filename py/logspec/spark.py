"""Raw logs as a Spark table: a PySpark 4 Python data source (docs/engines.md in the repository).

::

    from logspec.spark import LogspecDataSource
    spark.dataSource.register(LogspecDataSource)
    df = (spark.read.format("logspec").option("table", "REC_NAV_SOLUTION")
          .load("/data/logs"))          # files, directories, glob patterns; or .load([a, b])

Options: ``table`` (required: a channel, as ``Log.tables()`` names it), ``format`` or
``schema`` (as ``logspec.open``), ``mode``: ``PERMISSIVE`` (the default, as Spark's file
sources) keeps a failed log's complete rows and adds one row for it with every column null but
``log`` and ``_corrupt_record`` (the fault: file, byte offset, field, what was expected);
``FAILFAST`` fails the task with the fault as its error.

The columns are those of ``logspec export --parquet`` read by Spark, then ``log``: unsigned
integers as the next wider signed type (``uint64`` as ``decimal(20,0)``), timestamps in
microseconds (``log_elapsed_ns`` keeps the nanoseconds).

Partitions: of about ``partitionBytes`` (an option, 64 MiB by default) each: consecutive small
logs packed into one (read one after the other by its task), and a log with a time index
(``logspec index``, or written by a scan that read it whole) split at its chunks among those the
pushed time bounds meet; at least twice ``parallelism`` partitions (an option: the tasks the
cluster runs at once, e.g. ``spark.sparkContext.defaultParallelism``; by default the CPU count of
the machine that plans the query) and a multiple of it, when there are that many parts of logs.
Pushed down (``pushFilters``, with ``spark.sql.python.filterPushdown.enabled`` set): conditions on ``log`` (``=``, ``IN``;
the other logs are not planned) and bounds on ``log_elapsed_ns`` (samples outside are not read
out; Spark applies those bounds again); the table's channels only are decoded. Every worker needs
the ``logspec`` package (with pyarrow) in the Python that runs its tasks.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StringType, StructField, StructType

__all__ = ["LogspecDataSource"]

_MODES = ("PERMISSIVE", "FAILFAST")
CORRUPT = "_corrupt_record"


def _spark_arrow(t: Any) -> Any:
    """The Arrow type Spark holds a logspec column in."""
    import pyarrow as pa

    if pa.types.is_uint8(t):
        return pa.int16()
    if pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return pa.list_(_spark_field(t.value_field))
    if pa.types.is_struct(t):
        return pa.struct([_spark_field(t.field(i)) for i in range(t.num_fields)])
    return t


def _spark_field(f: Any) -> Any:
    return f.with_type(_spark_arrow(f.type)).with_nullable(True)


def _paths(options: Any) -> List[str]:
    paths: List[str] = []
    if "paths" in options and options["paths"]:
        raw = options["paths"]
        paths.extend(json.loads(raw) if raw.startswith("[") else [raw])
    if "path" in options and options["path"]:
        paths.append(options["path"])
    if not paths:
        raise ValueError("logspec: give the logs: .load(path) or .load([path, ...])")
    return paths


class LogspecDataSource(DataSource):
    """``spark.read.format("logspec")``: one table of raw logs (module doc)."""

    @classmethod
    def name(cls) -> str:
        return "logspec"

    def _logs(self) -> Any:
        from logspec.engines import Logs

        if "_found" not in self.__dict__:
            table = self.options.get("table")
            if not table:
                raise ValueError('logspec: the option "table" names the table to read (a channel, as Log.tables() names it)')
            mode = self.options.get("mode", "PERMISSIVE").upper()
            if mode not in _MODES:
                raise ValueError(f"logspec: mode must be PERMISSIVE or FAILFAST, not {mode!r}")
            logs = Logs(
                _paths(self.options),
                table,
                format=self.options.get("format"),
                schema=self.options.get("schema"),
                on_error="raise",
            )
            if logs.not_logs and mode == "FAILFAST":
                file, reason = logs.not_logs[0]
                raise ValueError(f"logspec: {file}: not a log: {reason}")
            self.__dict__["_found"] = logs
        return self.__dict__["_found"]

    def schema(self) -> StructType:
        import pyarrow as pa
        from pyspark.sql.pandas.types import from_arrow_schema

        arrow = pa.schema([_spark_field(f) for f in self._logs().schema])
        st = from_arrow_schema(arrow, prefer_timestamp_ntz=True)
        if self.options.get("mode", "PERMISSIVE").upper() == "PERMISSIVE":
            st = st.add(StructField(CORRUPT, StringType(), True))
        return st

    def reader(self, schema: StructType) -> "DataSourceReader":
        target = self.options.get("partitionBytes")
        parallelism = self.options.get("parallelism")
        if parallelism is not None and not (str(parallelism).isdigit() and int(parallelism) > 0):
            raise ValueError(f"logspec: the option parallelism is the tasks run at once, a positive integer, not {parallelism!r}")
        return LogspecReader(
            self._logs(),
            schema,
            self.options.get("mode", "PERMISSIVE").upper(),
            int(target) if target else None,
            int(parallelism) if parallelism else None,
        )


class LogPartition(InputPartition):
    """Parts of logs read one after the other: ``parts`` is ``[(file, log, part)]``, ``part`` a
    byte range of chunks of the log's time index or ``None`` for the whole log."""

    def __init__(self, parts: List[Tuple[str, str, Optional[Tuple[int, int, int]]]]) -> None:
        super().__init__(parts)

    @property
    def parts(self) -> List[Tuple[str, str, Optional[Tuple[int, int, int]]]]:
        return self.value


class LogspecReader(DataSourceReader):
    def __init__(
        self, logs: Any, schema: StructType, mode: str, target: Optional[int] = None, parallelism: Optional[int] = None
    ) -> None:
        import os

        self.logs = logs
        self.logs_target = target
        self.parallelism = max(1, parallelism if parallelism else (os.cpu_count() or 1))
        self.schema = schema
        self.mode = mode
        self.keep: Optional[set] = None
        self.since: Optional[float] = None
        self.until: Optional[float] = None

    def pushFilters(self, filters: List[Any]) -> Iterator[Any]:
        for f in filters:
            col = f.attribute if hasattr(f, "attribute") else None
            if col == ("log",) and isinstance(f, (EqualTo, In)):
                names = {f.value} if isinstance(f, EqualTo) else set(f.value)
                self.keep = names if self.keep is None else self.keep & names
                continue  # exact: the other logs are not planned
            if col == ("log_elapsed_ns",) and isinstance(f, (GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, EqualTo)):
                try:
                    s = int(f.value) / 1e9
                except (TypeError, ValueError):
                    yield f
                    continue
                if isinstance(f, (GreaterThan, GreaterThanOrEqual, EqualTo)):
                    self.since = s - 1e-6 if self.since is None else max(self.since, s - 1e-6)
                if isinstance(f, (LessThan, LessThanOrEqual, EqualTo)):
                    self.until = s + 1e-6 if self.until is None else min(self.until, s + 1e-6)
            # Spark applies the time bounds again: the scan's window is only a superset.
            yield f

    def partitions(self) -> Sequence[InputPartition]:
        planned = self.logs.plan(self.keep, self.since, self.until, self.logs_target, self.parallelism)
        return [LogPartition(p) for p in planned] or [LogPartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        target = to_arrow_schema(self.schema, timezone="UTC")
        columns = [n for n in target.names if n != CORRUPT]
        permissive = self.mode == "PERMISSIVE"
        for file, log, part in partition.parts:
            gen = self.logs.batches(file, log, columns, self.since, self.until, part)
            try:
                for b in gen:
                    arrays = [b.column(b.schema.get_field_index(f.name)).cast(f.type, safe=False) if f.name != CORRUPT else pa.nulls(b.num_rows, pa.string()) for f in target]
                    yield pa.RecordBatch.from_arrays(arrays, schema=target)
            except Exception as e:  # noqa: BLE001 (a log's fault, raised after its complete rows)
                from logspec import LogspecError

                if not permissive or not isinstance(e, LogspecError):
                    raise
                arrays = [
                    pa.array([log], pa.string()) if f.name == "log"
                    else pa.array([str(e)], pa.string()) if f.name == CORRUPT
                    else pa.nulls(1, f.type)
                    for f in target
                ]
                yield pa.RecordBatch.from_arrays(arrays, schema=target)
