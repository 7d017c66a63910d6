"""Read binary robot and simulation logs with logspec's Rust readers.

``logspec.open(path)`` detects the format (USVLOG, AdvantageKit RLOG, WPILib DataLog, CARLA
recorder, ROS1 bag) as the ``logspec`` command does. A :class:`Log` then gives

- ``log.info()``: the ``logspec info --json`` object as a dict;
- ``iter(log)`` / ``log.records(...)``: one dict per record (RLOG: per value; WPILOG: per record; CARLA: per
  packet; ROS bags: per connection, then per message), exactly the objects of ``logspec dump``
  lines (docs/output.md in the repository);
- ``log.table(channel)`` / ``log.tables()``: pyarrow Tables with the columns of
  ``logspec export --parquet``, handed over through the Arrow C stream interface without copying;
- ``log.numpy(channel)``: a dict of numpy arrays, one per column;
- ``log.to_pandas(channel)`` and ``log.polars(channel)`` through pyarrow.

Filters are keyword arguments: ``channels`` (names; a trailing ``*`` matches a prefix),
``since`` and ``until`` (seconds from the log's time origin), as the command's ``--channel``,
``--since`` and ``--until``.

Writers: ``logspec.usvlog.Writer``, ``logspec.rlog.Writer`` and ``logspec.wpilog.Writer``;
``logspec.usvlog.read_timeseries_bin(path)`` has the signature and return shape of usv-autopilot's
reader of the same name.

Bad input raises :class:`DecodeError` (a :class:`LogspecError`) with ``file``, ``offset``,
``record`` and ``field`` attributes, after every complete record before the fault was given;
``on_error="warn"`` gives a :class:`LogspecWarning` instead and keeps what was read.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from logspec import _logspec
from logspec._logspec import (
    DecodeError,
    FilterError,
    FormatError,
    LogspecError,
    UsageError,
    __version__,
)
from logspec import rlog, usvlog, wpilog  # writers; usvlog.read_timeseries_bin

__all__ = [
    "open",
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

# Where an error is, when the message does not say (and for errors raised from Python).
LogspecError.file = None
LogspecError.offset = None
LogspecError.record = None
LogspecError.field = None


class LogspecWarning(UserWarning):
    """Something in the log was skipped or cut short, and ``on_error="warn"`` asked to go on.

    ``error`` holds the :class:`LogspecError` that would have been raised, if any.
    """

    def __init__(self, message: str, error: Optional[LogspecError] = None) -> None:
        super().__init__(message)
        self.error = error


def _channels(channels: Union[None, str, Sequence[str]]) -> List[str]:
    if channels is None:
        return []
    if isinstance(channels, str):
        return [channels]
    return list(channels)


def _check_on_error(on_error: str) -> None:
    if on_error not in _ON_ERROR:
        raise ValueError(f"on_error must be 'raise' or 'warn', not {on_error!r}")


def _fail(error: LogspecError, on_error: str) -> None:
    if on_error == "raise":
        raise error
    warnings.warn(LogspecWarning(str(error), error), stacklevel=3)


def open(  # noqa: A001 (the package's verb, like builtins.open)
    path: Union[str, "os.PathLike[str]"],
    format: Optional[str] = None,  # noqa: A002
    *,
    assume_r1: bool = False,
) -> "Log":
    """Open a log file and detect its format from its first bytes.

    ``format`` forces one of ``"usvlog"``, ``"rlog"``, ``"rlog-stream"``, ``"carla"``,
    ``"rosbag"``, ``"wpilog"``. ``assume_r1`` decodes an RLOG file written without its revision
    byte as R1. Raises ``FileNotFoundError`` (an ``OSError``) for a missing file and
    :class:`FormatError` for a file of no known format.
    """
    return Log(_logspec.open(os.fspath(path), format, assume_r1))


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
        """The format: ``usvlog``, ``rlog``, ``rlog-stream``, ``carla``, ``rosbag`` or ``wpilog``."""
        return self._native.format

    def __repr__(self) -> str:
        return f"<logspec.Log {self.path!r} ({self.format})>"

    def info(self) -> Dict[str, Any]:
        """What ``logspec info --json`` prints for the file, as a dict (keys per format in
        docs/output.md). A file with problems still gives its summary, with ``ok`` false and
        ``error`` (or ``integrity``) saying what is wrong; a file that cannot be read at all
        raises."""
        text, _ok = self._native.info_json()
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
        (``{"kind": "message", "topic", "type", "time", "data"}``). Integers are exact, NaN and
        the infinities are the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, bytes are
        lowercase hex, as in the dump (docs/output.md).

        ``frames=(a, b)`` keeps CARLA frames a..b (b excluded); ``file_order`` keeps a ROS bag's
        stored order. The records are read by a thread ahead of the loop, a chunk at a time.
        On bad input, every complete record is given first, then :class:`DecodeError` is raised
        (``on_error="warn"``: a :class:`LogspecWarning`, and the iteration ends).
        """
        _check_on_error(on_error)
        lines = self._native.dump_lines(
            _channels(channels), since, until, tuple(frames) if frames is not None else None, file_order
        )
        loads = json.loads
        while True:
            try:
                chunk = next(lines)
            except StopIteration:
                return
            except LogspecError as e:
                _fail(e, on_error)
                return
            for line in chunk.splitlines():
                yield loads(line)

    def _tables(self, channels, since, until, on_error):
        _check_on_error(on_error)
        import pyarrow as pa

        streams, notes, error = self._native.tables(_channels(channels), since, until)
        for note in notes:
            warnings.warn(LogspecWarning(note), stacklevel=3)
        if error is not None:
            _fail(error, on_error)
        return {name: pa.table(stream) for name, stream in streams}

    def tables(
        self,
        channels: Union[None, str, Sequence[str]] = None,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
    ) -> "Dict[str, Any]":
        """Every channel's samples as a ``pyarrow.Table``, by table name, in the order they first
        appear: the tables of ``logspec export --parquet`` (``log_time``, ``log_elapsed_ns``, then
        the value's columns typed from the schema; docs/parquet.md). The buffers are shared with
        the Rust reader, not copied. A table whose columns are all numbers, times and bools (every
        USVLOG record type, scalar RLOG and WPILOG channels) is one chunk per column, which numpy
        views without a copy (:meth:`numpy`)."""
        return self._tables(channels, since, until, on_error)

    def table(
        self,
        channel: str,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
    ) -> "Any":
        """One channel's samples as a ``pyarrow.Table`` (see :meth:`tables`). Raises
        :class:`FilterError` (with the log's channels and the closest name) when no channel has
        this name; a pattern ending in ``*`` that matches several is an error too."""
        found = self._tables([channel], since, until, on_error)
        if len(found) != 1:
            names = ", ".join(found)
            e = FilterError(f"{self.path}: `{channel}` matches {len(found)} tables ({names}); use tables()")
            e.file = self.path
            raise e
        return next(iter(found.values()))

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
        t = self.table(channel, since=since, until=until, on_error=on_error)
        out = {}
        for name in t.column_names:
            col = t.column(name)
            try:
                out[name] = col.to_numpy()
            except Exception:  # noqa: BLE001 (pyarrow raises several types for non-primitive columns)
                out[name] = col.to_numpy(zero_copy_only=False)
        return out

    def to_pandas(self, channel: str, **kwargs: Any) -> "Any":
        """One channel as a pandas DataFrame, through pyarrow (keywords as for :meth:`table`)."""
        return self.table(channel, **kwargs).to_pandas()

    def polars(self, channel: str, **kwargs: Any) -> "Any":
        """One channel as a polars DataFrame, through pyarrow (keywords as for :meth:`table`)."""
        import polars as pl

        return pl.from_arrow(self.table(channel, **kwargs))
