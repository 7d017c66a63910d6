"""Read binary robot and simulation logs with logspec's Rust readers.

``logspec.open(path)`` detects the format (USVLOG, AdvantageKit RLOG, WPILib DataLog, CARLA
recorder, ROS1 bag) as the ``logspec`` command does. A :class:`Log` then gives

- ``log.info()``: the ``logspec info --json`` object as a dict;
- ``iter(log)`` / ``log.records(...)``: one dict per record (RLOG: per value; WPILOG: per record; CARLA: per
  packet; ROS bags: per connection, then per message), the objects of ``logspec dump`` lines
  (docs/output.md in the repository) in natural Python types (``bytes``, ``float`` NaN),
  built in Rust without JSON;
- ``log.table(channel)`` / ``log.tables()``: pyarrow Tables with the columns of
  ``logspec export --parquet``, handed over through the Arrow C stream interface without copying;
- ``log.numpy(channel)``: a dict of numpy arrays, one per column;
- ``log.to_pandas(channel)`` and ``log.polars(channel)`` through pyarrow;
- ``flatten=True`` on any of these: struct columns as their fields, ``location.x``, ``location.y``.

The column calls need pyarrow and numpy, and ``to_pandas`` pandas: ``pip install 'logspec[columns]'``
installs the three (``logspec[polars]``: pyarrow and polars).

Filters are keyword arguments: ``channels`` (names; a trailing ``*`` matches a prefix),
``since`` and ``until`` (seconds from the log's time origin), as the command's ``--channel``,
``--since`` and ``--until``.

Writers: ``logspec.usvlog.Writer``, ``logspec.rlog.Writer`` and ``logspec.wpilog.Writer``;
``logspec.usvlog.read_timeseries_bin(path)`` has the signature and return shape of usv-autopilot's
reader of the same name.

Bad input raises :class:`DecodeError` (a :class:`LogspecError`) with ``file``, ``offset``,
``record`` and ``field`` attributes, after every complete record before the fault was given;
``on_error="warn"`` gives a :class:`LogspecWarning` instead and keeps what was read. What the
``logspec`` command reports on standard error and goes on (a record skipped, a value kept as
hex, a bag scanned without its index) is a :class:`LogspecWarning` through
:func:`warnings.warn`, with the same attributes; nothing is printed.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from logspec import _logspec
from logspec._logspec import (
    DecodeError,
    FilterError,
    FormatError,
    LogspecError,
    LogspecWarning,
    UsageError,
    __version__,
)
from logspec import rlog, usvlog, wpilog  # writers; usvlog.read_timeseries_bin
from logspec.engines import datafusion_table, scan  # a table of many logs for Polars, DuckDB, DataFusion

__all__ = [
    "open",
    "scan",
    "datafusion_table",
    "Log",
    "LogspecError",
    "DecodeError",
    "FormatError",
    "FilterError",
    "UsageError",
    "LogspecWarning",
    "__version__",
]

_ON_ERROR = ("raise", "warn")

_PLACE = ("file", "offset", "record", "field", "message")


# The extra of the package (py/pyproject.toml) that installs each optional dependency.
_EXTRA = {"numpy": "columns", "pyarrow": "columns", "pandas": "columns", "polars": "polars"}


def _need(module: str, what: str) -> Any:
    """Imports an optional dependency of a column call, or says which one is missing and how to
    install it: the module itself, or the extra of logspec that holds it (the package itself
    needs neither numpy nor pyarrow)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        extra = _EXTRA[module]
        raise ImportError(
            f"{what} needs {module}, which is not installed: `pip install {module}` "
            f"(or install logspec with its `{extra}` extra: `pip install 'logspec[{extra}]'`)"
        ) from e


def _flatten(table: Any) -> Any:
    """A table whose struct columns are replaced by their fields, at every depth (`location`
    becomes `location.x`, `location.y`; `pose.position.x` from two levels): pyarrow's
    ``Table.flatten()`` repeated until no struct column is left. Lists of structs stay lists."""
    import pyarrow as pa

    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


# The checks of the public functions' arguments: a wrong type is a TypeError and a wrong value a
# ValueError, each naming the argument, before anything is read (never a value silently taken
# for another: the bytes of b"/x" for channel names, a dict's keys, NaN for a time).


def _type(value: Any) -> str:
    return type(value).__name__


def _channels(channels: Union[None, str, Sequence[str]], name: str = "channels") -> List[str]:
    if channels is None:
        return []
    if isinstance(channels, str):
        return [channels]
    if isinstance(channels, (bytes, bytearray, memoryview, Mapping)) or not isinstance(channels, Iterable):
        raise TypeError(f"{name} must be a str, a sequence of str or None, not {_type(channels)}")
    out = list(channels)
    for i, c in enumerate(out):
        if not isinstance(c, str):
            raise TypeError(f"{name}[{i}] must be a str (a channel name or pattern), not {_type(c)}")
    return out


def _seconds(value: Optional[float], name: str) -> Optional[float]:
    """A time bound (``since``, ``until``): None, or a number of seconds that is not NaN."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds (int or float) or None, not {_type(value)}")
    seconds = float(value)
    if math.isnan(seconds):
        raise ValueError(f"{name} must be a number of seconds, not NaN")
    return seconds


def _flag(value: Any, name: str) -> bool:
    """A bool argument: True or False (numpy's bool too), never any truthy value."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and _type(value) in ("bool_", "bool")):
        return bool(value)
    raise TypeError(f"{name} must be True or False, not {_type(value)}")


def _frames(frames: Any) -> Optional[Tuple[int, int]]:
    """CARLA frames ``(a, b)``: two ints, 0 <= a <= b."""
    if frames is None:
        return None
    if isinstance(frames, (str, bytes, bytearray, Mapping)) or not isinstance(frames, Iterable):
        raise TypeError(f"frames must be a pair of ints (first, end) or None, not {_type(frames)}")
    pair = tuple(frames)
    if len(pair) != 2 or any(isinstance(f, bool) or not isinstance(f, numbers.Integral) for f in pair):
        raise TypeError(f"frames must be a pair of ints (first, end), not {pair!r}")
    a, b = int(pair[0]), int(pair[1])
    if a < 0 or a > b:
        raise ValueError(f"frames must be (first, end) with 0 <= first <= end, not {pair!r}")
    return a, b


# numpy dtypes of the Arrow types whose values numpy views as they are.
_NUMPY_VIEWS = {
    "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "halffloat": "f2", "float": "f4", "double": "f8",
    "timestamp[s]": "datetime64[s]", "timestamp[ms]": "datetime64[ms]",
    "timestamp[us]": "datetime64[us]", "timestamp[ns]": "datetime64[ns]",
}


def _numpy_columns(table: "Any") -> "Dict[str, Any]":
    """A pyarrow Table's columns as numpy arrays, by name (:meth:`Log.numpy`)."""
    import numpy as np

    out = {}
    for name in table.column_names:
        col = table.column(name)
        if col.num_chunks == 1:
            # One chunk of numbers (or times without a zone) without nulls: numpy views the
            # Arrow buffer (read-only, as pyarrow's zero-copy `to_numpy` gives it), without
            # pyarrow's `to_numpy`, which imports pandas on first use (a quarter of a second of
            # CPU, more than reading a 200 MB USVLOG file) before it finds that no copy is needed.
            arr = col.chunk(0)
            dtype = _NUMPY_VIEWS.get(str(arr.type))
            if dtype is not None and arr.null_count == 0:
                data = arr.buffers()[1]
                out[name] = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("="), count=len(arr), offset=arr.offset * np.dtype(dtype).itemsize)
                continue
        try:
            out[name] = col.to_numpy()
        except Exception:  # noqa: BLE001 (pyarrow raises several types for non-primitive columns)
            out[name] = col.to_numpy(zero_copy_only=False)
    return out


def _check_on_error(on_error: str) -> None:
    if not isinstance(on_error, str):
        raise TypeError(f"on_error must be 'raise' or 'warn', not {_type(on_error)}")
    if on_error not in _ON_ERROR:
        raise ValueError(f"on_error must be 'raise' or 'warn', not {on_error!r}")


def _warning(message: str, error: Optional[LogspecError] = None, file: Optional[str] = None) -> LogspecWarning:
    """A :class:`LogspecWarning`; for an error, with its place and the error itself."""
    w = LogspecWarning(message)
    if error is not None:
        for name in _PLACE:
            setattr(w, name, getattr(error, name, None))
        w.error = error
    else:
        w.file, w.message = file, message
    return w


def _fail(error: LogspecError, on_error: str, stacklevel: int = 3) -> None:
    if on_error == "raise":
        raise error
    warnings.warn(_warning(str(error), error), stacklevel=stacklevel)


def open(  # noqa: A001 (the package's verb, like builtins.open)
    path: Union[str, "os.PathLike[str]"],
    format: Optional[str] = None,  # noqa: A002
    *,
    assume_r1: bool = False,
    schema: Optional[Union[str, "os.PathLike[str]"]] = None,
    chunk_budget: Optional[int] = None,
) -> "Log":
    """Open a log file and detect its format from its first bytes.

    ``format`` forces one of ``"usvlog"``, ``"rlog"``, ``"rlog-stream"``, ``"carla"``,
    ``"rosbag"``, ``"wpilog"``, ``"ulog"``, ``"dataflash"``, ``"mcap"``. ``path`` and ``schema`` are a ``str``, ``bytes`` or an
    ``os.PathLike`` of either, as :func:`os.fsdecode` takes them. ``schema`` reads the log with a TOML schema of your own (one
    with a ``[framing]``; files under an older schema id decode with the layouts of its lock
    file); without it, the schemas of the project around the current directory (its
    ``logspec.toml``) are tried after the bundled formats. ``assume_r1`` decodes an RLOG file
    written without its revision byte as R1. ``chunk_budget`` (ROS bags and MCAP files) is the most decompressed
    chunk data held at once, in MiB (default 256): a chunk that declares more is refused and
    skipped, and chunks that overlap in time are merged when they hold at most an eighth of it.
    Raises ``FileNotFoundError`` (an ``OSError``) for a missing file and :class:`FormatError` for a
    file of no known format.
    """
    if format is not None and not isinstance(format, str):
        raise TypeError(f"format must be a str (a format's name) or None, not {_type(format)}")
    if chunk_budget is not None and (isinstance(chunk_budget, bool) or not isinstance(chunk_budget, int)):
        raise TypeError(f"chunk_budget must be an int (MiB) or None, not {_type(chunk_budget)}")
    return Log(_logspec.open(path, format, _flag(assume_r1, "assume_r1"), schema, chunk_budget))


class Log:
    """An opened log. Reading never changes the file; every call reads it again."""

    def __init__(self, native: "_logspec.NativeLog") -> None:
        self._native = native

    @property
    def path(self) -> str:
        """The file's path, as given."""
        return str(self._native.path)

    @property
    def format(self) -> str:
        """The format: ``usvlog``, ``rlog``, ``rlog-stream``, ``carla``, ``rosbag``, ``wpilog``, or
        the name of the schema (``[format] name``) the log was read with."""
        return self._native.format

    def __repr__(self) -> str:
        return f"<logspec.Log {self.path!r} ({self.format})>"

    def info(self) -> Dict[str, Any]:
        """What ``logspec info --json`` prints for the file, as a dict (keys per format in
        docs/output.md). A file with problems still gives its summary, with ``ok`` false and
        ``error`` (or ``integrity``) saying what is wrong; a file that cannot be read at all
        raises. What the command notes on standard error (a bag scanned without its index) is a
        :class:`LogspecWarning`."""
        summary, notes, error = self._native.info_json()
        for note in notes:
            warnings.warn(note, stacklevel=2)
        if error is not None:
            raise error
        text, _ok = summary
        return json.loads(text)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self.records()

    def records(
        self,
        channels: Union[None, str, Sequence[str]] = None,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        frames: Optional[tuple] = None,
        file_order: bool = False,
        on_error: str = "raise",
    ) -> Iterator[Dict[str, Any]]:
        """Every record as a dict, in file order: the objects of ``logspec dump`` lines.

        USVLOG: ``{"t_us", "type", "name", "fields"}``; RLOG: one dict per value
        (``{"t", "key", "type", "value"}``); WPILOG: the header, then one dict per record
        (``{"rec": "start"|"data"|..., "ts", "entry", "name", "type", ...}``); CARLA: a header
        dict, then one dict per packet (``{"kind": "packet", "frame", "name", "fields", ...}``);
        ROS bags: a dict per connection, then per message
        (``{"kind": "message", "topic", "type", "time", "data"}``). The keys and values are
        the dump's, built in Rust as Python objects (no JSON in between), in their natural
        Python types: integers exact, floats ``float`` (NaN and the infinities too, where the
        dump writes the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; a WPILOG negative
        zero is ``-0.0``, the dump's ``"-0"``), byte values ``bytes`` (the dump's lowercase
        hex; keys named ``payload_hex`` stay hex text), dicts in wire order.

        ``frames=(a, b)`` keeps CARLA frames a..b (b excluded); ``file_order`` keeps a ROS bag's
        stored order. The records are read by a thread ahead of the loop, a batch at a time.
        What the dump reports and goes on from (a skipped record, a value kept as hex) is a
        :class:`LogspecWarning` through :func:`warnings.warn`, in order with the records. On
        bad input, every complete record is given first, then :class:`DecodeError` is raised
        (``on_error="warn"``: a :class:`LogspecWarning`, and the iteration ends).
        """
        _check_on_error(on_error)
        batches = self._native.records(
            _channels(channels),
            _seconds(since, "since"),
            _seconds(until, "until"),
            _frames(frames),
            _flag(file_order, "file_order"),
        )
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except LogspecError as e:
                _fail(e, on_error, stacklevel=2)
                return
            if type(batch) is list:
                yield from batch
            else:
                warnings.warn(batch, stacklevel=2)

    def _tables(self, channels, since, until, on_error, by_table=False):
        _check_on_error(on_error)
        pa = _need("pyarrow", "logspec.Log.tables()/table()/numpy()/to_pandas()/polars()")

        streams, notes, error = self._native.tables(
            _channels(channels), _seconds(since, "since"), _seconds(until, "until"), by_table
        )
        for note in notes:
            warnings.warn(_warning(note, file=self.path), stacklevel=3)
        if error is not None:
            _fail(error, on_error)
        # `RecordBatchReader.from_stream`, not `pa.table`: the latter first asks whether the
        # object is a pandas DataFrame, which imports pandas (most of a second) on first use.
        return {name: pa.RecordBatchReader.from_stream(stream).read_all() for name, stream in streams}

    def tables(
        self,
        channels: Union[None, str, Sequence[str]] = None,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
        flatten: bool = False,
    ) -> "Dict[str, Any]":
        """Every channel's samples as a ``pyarrow.Table``, by table name, in the order they first
        appear: the tables of ``logspec export --parquet`` (``log_time``, ``log_elapsed_ns``, then
        the value's columns typed from the schema; docs/parquet.md). The buffers are shared with
        the Rust reader, not copied. A table whose columns are all numbers, times and bools (every
        USVLOG record type, scalar RLOG and WPILOG channels) is one chunk per column, which numpy
        views without a copy (:meth:`numpy`); so is an RLOG table of ``double[]`` or
        ``int64[]`` lists. The GIL is released while reading; an RLOG file is read on two
        threads, each filling its share of the tables; a USVLOG file in two passes,
        counting the rows first, then filling the arrays in place on two threads.

        No file is memory-mapped: a file that another process truncates during the call is read
        as a file that ended there (the rows before its new end, then the error of a record cut
        there, raised or warned as ``on_error`` says), never a crash. A file that grows meanwhile
        is read at the length it had.

        ``flatten=True`` replaces each struct column by its fields, at every depth, named with
        dots (``location`` becomes ``location.x``, ``location.y``, ``location.z``; a union's
        ``u`` becomes ``u.variant`` and ``u.<Variant>.<field>``): the flat columns pandas users
        expect, as pyarrow's ``Table.flatten()`` makes them (applied until no struct is left).
        Lists stay lists.

        A wrong type of argument is a ``TypeError`` naming it (``channels=b"/x"``, a dict of
        channels); a NaN ``since`` or ``until`` is a ``ValueError``."""
        flatten = _flag(flatten, "flatten")
        found = self._tables(channels, since, until, on_error)
        return {name: _flatten(t) for name, t in found.items()} if flatten else found

    def table(
        self,
        channel: str,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
        flatten: bool = False,
    ) -> "Any":
        """One table as a ``pyarrow.Table`` (see :meth:`tables`; ``flatten=True`` gives struct
        fields as ``a.b`` columns): ``channel`` is any name of
        :meth:`tables` (the same table: a CARLA packet kind such as ``Position``, whose per-actor
        channels ``Position/<id>`` make one table; ``<name>#<type>`` for a channel whose type
        changed), or a channel's name (its table, with that channel's rows). Raises
        :class:`FilterError` (with the log's channels and the closest name) when no channel or
        table has this name; a pattern ending in ``*`` that matches several tables is an error
        too."""
        if not isinstance(channel, str):
            raise TypeError(f"channel must be a str (a table or channel name), not {_type(channel)}")
        flatten = _flag(flatten, "flatten")
        found = self._tables([channel], since, until, on_error, by_table=True)
        if channel in found:
            return _flatten(found[channel]) if flatten else found[channel]
        if len(found) != 1:
            names = ", ".join(found)
            what = f"`{channel}` matches" if channel.endswith("*") else f"no table is named `{channel}`; its channels make"
            e = FilterError(f"{self.path}: {what} {len(found)} tables ({names}); use tables()")
            e.file = self.path
            raise e
        table = next(iter(found.values()))
        return _flatten(table) if flatten else table

    def numpy(
        self,
        channel: str,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
    ) -> "Dict[str, Any]":
        """One channel's columns as numpy arrays, by column name (``log_time`` as
        ``datetime64[ns]``). Number columns without nulls become plain numpy arrays (without a
        copy when the table is one batch, as every table of numbers is); structs, lists and strings
        become object arrays."""
        _need("numpy", "logspec.Log.numpy()")
        return _numpy_columns(self.table(channel, since=since, until=until, on_error=on_error))

    def to_pandas(self, channel: str, **kwargs: Any) -> "Any":
        """One channel as a pandas DataFrame, through pyarrow (keywords as for :meth:`table`;
        ``flatten=True`` gives struct fields as ``a.b`` columns instead of dicts)."""
        _need("pandas", "logspec.Log.to_pandas()")
        return self.table(channel, **kwargs).to_pandas()

    def polars(self, channel: str, **kwargs: Any) -> "Any":
        """One channel as a polars DataFrame, through pyarrow (keywords as for :meth:`table`)."""
        pl = _need("polars", "logspec.Log.polars()")

        return pl.from_arrow(self.table(channel, **kwargs))
