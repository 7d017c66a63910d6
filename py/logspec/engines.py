"""Raw logs as tables of the query engines people run (docs/engines.md in the repository).

``logspec.scan(inputs, table)`` is a Polars ``LazyFrame`` over one table of many logs, read where
they sit: files, directories (searched recursively) and glob patterns, each log named as the
Parquet export names it (``log=<name>``: its file name without the extension), so that the frame
has the columns of ``logspec export --parquet`` read with Hive partitioning: the table's columns,
then ``log``. DuckDB's Python client queries the frame by its variable name and hands it its
projection and filters, as Polars does (``duckdb.sql("SELECT ... FROM frame WHERE ...")``).

Pushed down into the scan:

- the columns asked for (the others are dropped as each batch is made);
- the table: only its channels are decoded, every other channel of a log is skipped unread;
- conditions on ``log`` (``==``, ``is_in``, any expression of ``log`` alone): the other logs are
  not opened;
- bounds on ``log_elapsed_ns`` (``>``, ``>=``, ``<``, ``<=``, ``==``, ``is_between``): samples
  outside the window are not handed on (the whole predicate is still applied to what is).

``logspec.spark`` is the same for Spark (a PySpark 4 Python data source, ``format("logspec")``), and
``logspec.datafusion_table(inputs, table)`` for DataFusion: a table provider handed to the
``datafusion`` package through its FFI capsule (``SessionContext.register_table``), with the
columns, conditions on ``log`` and bounds on ``log_elapsed_ns`` pushed down by DataFusion itself.

A log that fails part-way (cut short, corrupted) keeps its complete rows, as the export does;
``on_error="warn"`` (the default) then warns with a :class:`logspec.LogspecWarning` naming the
log, the byte offset and the field, ``on_error="raise"`` raises the :class:`logspec.LogspecError`
after the rows before the fault. An input that is not a log is the same warning or error.
"""

from __future__ import annotations

import io
import json
import os
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

from logspec import _logspec
from logspec._logspec import FilterError, LogspecWarning, UsageError

__all__ = ["Logs", "datafusion_table", "scan"]

_ON_ERROR = ("raise", "warn")


def _paths(inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]) -> List[str]:
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    return [os.fsdecode(p) for p in inputs]


def _warn_or_raise(error: Exception, on_error: str) -> None:
    if on_error == "raise":
        raise error
    w = LogspecWarning(str(error))
    for name in ("file", "offset", "record", "field", "message"):
        setattr(w, name, getattr(error, name, None))
    w.error = error
    warnings.warn(w, stacklevel=4)


class Logs:
    """One table of a set of logs: the logs found (``logs``: ``[(file, log)]``), the table's
    Arrow schema (``schema``: the table's columns in the first log that has it, then ``log``),
    and each log's batches (:meth:`batches`). The engines' sources are built on it; it is
    picklable (a Spark partition carries what it needs)."""

    def __init__(
        self,
        inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
        table: str,
        *,
        format: Optional[str] = None,  # noqa: A002
        schema: Optional[Union[str, "os.PathLike[str]"]] = None,
        on_error: str = "warn",
    ) -> None:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error must be 'raise' or 'warn', not {on_error!r}")
        if not isinstance(table, str) or not table:
            raise UsageError("`table` names one table (a channel, as `Log.tables()` names them)")
        self.table = table
        self.format = format
        self.schema_file = None if schema is None else os.fsdecode(schema)
        self.on_error = on_error
        found, not_logs = _logspec.find_logs(_paths(inputs), format, self.schema_file)
        self.logs: List[Tuple[str, str]] = [(os.fsdecode(f), log) for f, log in found]
        self.not_logs: List[Tuple[str, str]] = not_logs
        self._schema: Any = None

    def warn_not_logs(self) -> None:
        """The inputs that are not logs, each a warning (or, with ``on_error="raise"``, an error)."""
        for file, reason in self.not_logs:
            e = _logspec.FormatError(f"{file}: not read: {reason}")
            e.file = file
            _warn_or_raise(e, self.on_error)

    @property
    def schema(self) -> Any:
        """The table's Arrow schema, from the first log that has the table."""
        if self._schema is None:
            import pyarrow as pa

            for file, _ in self.logs:
                try:
                    s = _logspec.table_schema(file, self.table, self.format, self.schema_file)
                except _logspec.LogspecError:
                    continue  # A log that cannot be read says so when it is scanned.
                if s is not None:
                    self._schema = pa.RecordBatchReader.from_stream(s).schema
                    break
            else:
                raise FilterError(f"no log among the {len(self.logs)} has a table `{self.table}`")
        return self._schema

    def batches(
        self,
        file: str,
        log: str,
        columns: Optional[Sequence[str]] = None,
        since: Optional[float] = None,
        until: Optional[float] = None,
        part: Optional[Tuple[int, int, int]] = None,
    ) -> Iterator[Any]:
        """The batches of one log's table (pyarrow ``RecordBatch``es with the columns of
        ``schema`` asked for, in its order), read a few batches ahead on a thread of their own;
        then the log's warnings, and its fault as ``on_error`` says. With ``part`` (one of
        ``parts``), only that part of the log."""
        import pyarrow as pa

        schema = self.schema
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in schema.names if c in set(columns)], metadata=schema.metadata)
        scan = _logspec.scan_table(
            file, log, self.table, list(schema.names), since, until, self.format, self.schema_file, part
        )
        reader = pa.RecordBatchReader.from_stream(scan)
        for b in reader:
            if b.num_rows:
                yield _align(b, schema)
        _, warns, error = scan.outcome()
        for w in warns:
            warnings.warn(w, stacklevel=3)
        if error is not None:
            _warn_or_raise(error, self.on_error)


    def parts(
        self,
        file: str,
        since: Optional[float] = None,
        until: Optional[float] = None,
        target_bytes: Optional[int] = None,
    ) -> List[Optional[Tuple[int, int, int]]]:
        """The parts of one log that hold the time window's samples, of about ``target_bytes``
        each (64 MiB by default), from the log's time index: ``[None]`` (the whole log) when it
        has none yet, ``[]`` when no part meets the window."""
        return _logspec.plan_parts(file, self.table, since, until, target_bytes, self.format, self.schema_file)

    def plan(
        self,
        keep: Optional[set] = None,
        since: Optional[float] = None,
        until: Optional[float] = None,
        target_bytes: Optional[int] = None,
        parallelism: int = 1,
    ) -> List[List[Tuple[str, str, Optional[Tuple[int, int, int]]]]]:
        """The partitions of a scan of the logs (those named in ``keep``, or all): each a list of
        ``(file, log, part)`` read one after the other (``part`` as :meth:`parts` gives it).
        Consecutive small logs are packed together and a log with a time index is split at its
        chunks, about ``target_bytes`` (64 MiB by default) a partition; at least twice
        ``parallelism`` partitions (the tasks run at once), a multiple of it, when there are that
        many parts. Only a log's size and index are read."""
        logs = [(f, log) for f, log in self.logs if keep is None or log in keep]
        return [
            [(os.fsdecode(f), log, part) for f, log, part in p]
            for p in _logspec.plan_partitions(
                logs, self.table, since, until, target_bytes, parallelism, self.format, self.schema_file
            )
        ]


def _align(b: Any, schema: Any) -> Any:
    """A batch with exactly the columns and types of `schema`: a column a log lacks, or has with
    another type (a log of another schema version), is null."""
    import pyarrow as pa

    if b.schema.equals(schema):
        return b
    cols = []
    for f in schema:
        i = b.schema.get_field_index(f.name)
        if i >= 0 and b.schema.field(i).type.equals(f.type):
            cols.append(b.column(i))
        else:
            cols.append(pa.nulls(b.num_rows, f.type))
    return pa.RecordBatch.from_arrays(cols, schema=pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata))


# --- Polars (and DuckDB through it) ---------------------------------------------------------------

_OPS = {"Gt": ">", "GtEq": ">=", "Lt": "<", "LtEq": "<=", "Eq": "=="}
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "=="}


def _conjuncts(node: Any) -> Iterator[Any]:
    """The parts of an expression's JSON tree joined by `&`."""
    b = node.get("BinaryExpr") if isinstance(node, dict) else None
    if b is not None and b.get("op") in ("And", "LogicalAnd"):
        yield from _conjuncts(b["left"])
        yield from _conjuncts(b["right"])
    else:
        yield node


def _expr(pl: Any, node: Any) -> Any:
    return pl.Expr.deserialize(io.StringIO(json.dumps(node)), format="json")


def _pushdown(pl: Any, predicate: Any, names: List[str]) -> Tuple[Optional[float], Optional[float], Optional[set]]:
    """What a Polars predicate says of the time window (seconds, from bounds on `log_elapsed_ns`,
    widened by a microsecond: the predicate itself decides at the edges) and of the logs (the
    names that parts of it on `log` alone keep). Parts it cannot read push nothing."""
    since = until = None
    keep: Optional[set] = None
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # noqa: BLE001 (an expression Polars cannot serialise: nothing pushed)
        return None, None, None
    for part in _conjuncts(tree):
        try:
            expr = _expr(pl, part)
            roots = set(expr.meta.root_names())
        except Exception:  # noqa: BLE001
            continue
        if roots == {"log"}:
            kept = pl.DataFrame({"log": names}).filter(expr)["log"].to_list()
            keep = set(kept) if keep is None else keep & set(kept)
        elif roots == {"log_elapsed_ns"}:
            for op, lit in _bounds(part):
                try:
                    v = pl.select(_expr(pl, lit)).item()
                    ns = int(v) if not hasattr(v, "total_seconds") else int(v.total_seconds() * 1e9)
                except Exception:  # noqa: BLE001
                    continue
                s = ns / 1e9
                if op in (">", ">=", "=="):
                    lo = s - 1e-6
                    since = lo if since is None else max(since, lo)
                if op in ("<", "<=", "=="):
                    hi = s + 1e-6
                    until = hi if until is None else min(until, hi)
    return since, until, keep


def _bounds(part: Any) -> List[Tuple[str, Any]]:
    """The bounds a condition on `log_elapsed_ns` alone puts on it, as (op, literal) with the
    column on the left: a comparison with a literal, or `is_between` (its ends, taken as closed:
    the predicate decides at the edges)."""
    col = {"Column": "log_elapsed_ns"}
    b = part.get("BinaryExpr") if isinstance(part, dict) else None
    if b is not None:
        op = _OPS.get(b.get("op"))
        if op is None:
            return []
        if b["left"] == col:
            return [(op, b["right"])]
        if b["right"] == col:
            return [(_FLIP[op], b["left"])]
        return []
    f = part.get("Function") if isinstance(part, dict) else None
    if f is not None and "IsBetween" in json.dumps(f.get("function")):
        args = f.get("input", [])
        if len(args) == 3 and args[0] == col:
            return [(">=", args[1]), ("<=", args[2])]
    return []


def scan(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    table: str,
    *,
    format: Optional[str] = None,  # noqa: A002
    schema: Optional[Union[str, "os.PathLike[str]"]] = None,
    on_error: str = "warn",
) -> Any:
    """One table of the logs among ``inputs`` (files, directories, glob patterns) as a Polars
    ``LazyFrame``: the table's columns, then ``log``. Nothing is read until it is collected;
    the columns, conditions on ``log`` and bounds on ``log_elapsed_ns`` are pushed into the
    scan (module doc). DuckDB queries it by name with the same pushdown."""
    import polars as pl
    from polars.io.plugins import register_io_source

    logs = Logs(inputs, table, format=format, schema=schema, on_error=on_error)
    logs.warn_not_logs()
    arrow = logs.schema
    pl_schema = pl.from_arrow(arrow.empty_table()).schema

    def source(with_columns: Optional[List[str]], predicate: Any, n_rows: Optional[int], batch_size: Optional[int]) -> Iterator[Any]:
        since = until = None
        keep = None
        if predicate is not None:
            since, until, keep = _pushdown(pl, predicate, [log for _, log in logs.logs])
        left = n_rows
        for file, log in logs.logs:
            if keep is not None and log not in keep:
                continue
            for b in logs.batches(file, log, with_columns, since, until):
                df = pl.from_arrow(b)
                if predicate is not None:
                    df = df.filter(predicate)
                if with_columns is not None:
                    df = df.select(with_columns)
                if left is not None:
                    df = df.head(left)
                    left -= df.height
                if df.height:
                    yield df
                if left == 0:
                    return

    return register_io_source(source, schema=pl_schema, explain_name="logspec", explain_detail=f"table {table!r} of {len(logs.logs)} log(s)")


# --- DataFusion ---------------------------------------------------------------------------------


def datafusion_table(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    table: str,
    *,
    format: Optional[str] = None,  # noqa: A002
    schema: Optional[Union[str, "os.PathLike[str]"]] = None,
    on_error: str = "warn",
) -> Any:
    """One table of the logs among ``inputs`` (files, directories, glob patterns) as a DataFusion
    table: ``SessionContext().register_table(name, logspec.datafusion_table(...))``, for the
    ``datafusion`` package of the DataFusion major logspec is built with (55). The table's columns,
    then ``log``. DataFusion hands the scan its projection, the conditions on ``log`` (the other
    logs are not opened) and the bounds on ``log_elapsed_ns`` (the time window). A log that fails
    part-way keeps its complete rows and is named in a :class:`LogspecWarning` (``on_error="warn"``)
    or fails the query with DataFusion's own exception naming the log (``on_error="raise"``)."""
    cls = getattr(_logspec, "DataFusionTable", None)
    if cls is None:
        raise ImportError("this build of logspec has no DataFusion table provider (the `datafusion` feature of py/Cargo.toml is off)")
    return cls(_paths(inputs), table, format, None if schema is None else os.fsdecode(schema), on_error)
