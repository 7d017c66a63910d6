"""USVLOG (the USV autopilot's ``timeseries.bin``): a writer, and ``read_timeseries_bin``.

``read_timeseries_bin`` has the signature and return shape of usv-autopilot's
``tools/log_io/io.py`` reader, so its tools switch by changing one import::

    # from tools.log_io.io import read_timeseries_bin
    from logspec.usvlog import read_timeseries_bin

The file is read in Rust, each field taken at the offset ``schemas/usvlog.toml`` gives it and
written a column at a time into arrays allocated once at their final size; the arrays have the
dtypes the upstream reader gives (``t_us`` ``uint64``, float fields ``float64``, integer fields
``int64``), in the machine's byte order, and own their memory.

``Writer`` writes files from Python values, each record's fields checked against the schema::

    with logspec.usvlog.Writer("timeseries.bin") as w:
        w.write("REC_SENSOR_GYRO", 50_000, z_gyro=0.01, b_g_est=0.0, valid=1)
        w.write("REC_NAV_SOLUTION", 50_000, {"x": 1.0, "y": 2.0, "psi": 0.1, "v": 0.5, "r": 0.0, "b_g": 0.0})
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple, Union

from logspec._logspec import DecodeError
from logspec._logspec import UsvlogWriter as Writer
from logspec._logspec import usvlog_read_columns as _read_columns

if TYPE_CHECKING:  # numpy is needed by read_timeseries_bin only, and imported there
    import numpy as np

__all__ = [
    "TimeseriesData",
    "TimeseriesHeader",
    "TimeseriesReadError",
    "UnknownRecord",
    "Writer",
    "read_timeseries_bin",
]

# Upstream's dataclasses are frozen and slotted; `slots` needs Python 3.10.
_DATACLASS = {"frozen": True, **({"slots": True} if sys.version_info >= (3, 10) else {})}


@dataclass(**_DATACLASS)
class TimeseriesHeader:
    """The file header: ``magic`` ``"USVLOG"``, ``fw_model_schema``, ``endianness`` ``"little"``,
    ``t0_us``."""

    magic: str
    fw_model_schema: int
    endianness: str
    t0_us: int


@dataclass(**_DATACLASS)
class UnknownRecord:
    """A record whose type id the schema does not know (skipped by its length)."""

    t_us: int
    type_id: int
    payload_len: int


@dataclass(**_DATACLASS)
class TimeseriesData:
    """What ``read_timeseries_bin`` returns: per record name (in order of first appearance), a
    dict of numpy arrays, ``t_us`` first and then the fields in wire order."""

    header: TimeseriesHeader
    records: Dict[str, Dict[str, np.ndarray]]
    record_counts: Dict[str, int]
    unknown_records: Tuple[UnknownRecord, ...]


class TimeseriesReadError(DecodeError, ValueError):
    """A USVLOG file that could not be read to its end.

    A :class:`logspec.DecodeError` (so a :class:`logspec.LogspecError`, with its attributes) and a
    ``ValueError``, as upstream raises, carrying where and why: ``file`` (also ``path``),
    ``offset`` (the byte where the failing header or record starts), ``record`` (the failing
    record's 0-based index, also ``record_index``; ``None`` for the file header), ``type_id``
    and ``record_name`` (the record's type, when known), ``message`` (the whole text), and
    ``partial``: a ``TimeseriesData`` of every complete record before the fault (``None`` when
    the file header itself is bad).
    """

    def __init__(self, message: str, *, path: str, offset: int, record_index: Optional[int],
                 type_id: Optional[int], record_name: Optional[str], partial: Optional[TimeseriesData]):
        text = f"{path}: {message}"
        super().__init__(text)
        self.file = self.path = path
        self.offset = offset
        self.record = self.record_index = record_index
        self.type_id = type_id
        self.record_name = record_name
        self.field = None
        self.message = text
        self.partial = partial


def _data(raw: Mapping[str, Any]) -> Optional[TimeseriesData]:
    if raw["header"] is None:
        return None
    from logspec import _need

    np = _need("numpy", "logspec.usvlog.read_timeseries_bin")
    magic, schema, endianness, t0 = raw["header"]
    records: Dict[str, Dict[str, np.ndarray]] = {}
    counts: Dict[str, int] = {}
    for name, _type_id, columns in raw["records"]:
        records[name] = {field: np.frombuffer(buf, dtype=dtype) for field, dtype, buf in columns}
        counts[name] = len(records[name]["t_us"])
    unknown = tuple(UnknownRecord(t_us=t, type_id=i, payload_len=n) for t, i, n in raw["unknown"])
    header = TimeseriesHeader(magic=magic, fw_model_schema=schema, endianness=endianness, t0_us=t0)
    return TimeseriesData(header=header, records=records, record_counts=counts, unknown_records=unknown)


def read_timeseries_bin(
    path: Union[str, bytes, "PathLike[str]", "PathLike[bytes]"],
    *,
    record_layouts: Optional[Mapping[int, Any]] = None,
    strict_payload_len: bool = True,
    keep_unknown: bool = True,
    threads: Optional[int] = None,
) -> TimeseriesData:
    """Reads a USVLOG ``timeseries.bin`` into per-record dicts of numpy arrays.

    The same signature and result as usv-autopilot's ``tools/log_io/io.py``
    ``read_timeseries_bin``: ``records[name][field]`` arrays (``t_us`` first), ``record_counts``
    and ``unknown_records`` (each ``(t_us, type_id, payload_len)``, kept unless
    ``keep_unknown=False``), record names in order of first appearance. With
    ``strict_payload_len`` (the default) a known record whose payload is not exactly its size is
    an error; without, a longer payload is decoded from its start.

    The file is read twice, streaming: the first pass frames and counts the records (so that
    every array is allocated once, at its final size), the second fills the arrays, in parts on
    ``threads`` threads (not an upstream argument; by default one per core, at most 2, and one
    for files under 8 MiB a thread; more than 64 count as 64), without holding the GIL. The result, and the error of a bad
    file, do not depend on ``threads``.

    The layouts are the schema's (``schemas/usvlog.toml``), for the file's ``fw_model_schema``;
    ``record_layouts`` (upstream's table of ``struct`` formats) is not taken: passing one raises
    ``NotImplementedError``.

    Raises ``TimeseriesReadError`` (a ``ValueError`` and a :class:`logspec.DecodeError`) for a bad header, a truncated record or a
    payload of the wrong length, with the byte offset, record index and type, and the complete
    records before the fault in ``.partial``; ``OSError`` when the file cannot be read.
    """
    if record_layouts is not None:
        raise NotImplementedError(
            "logspec reads USVLOG with the layouts of its schema (schemas/usvlog.toml); "
            "record_layouts is not supported"
        )
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int or None, not {threads!r}")
    raw = _read_columns(path, bool(strict_payload_len), bool(keep_unknown), threads)
    data = _data(raw)
    err = raw["error"]
    if err is not None:
        raise TimeseriesReadError(
            err["message"], path=os.fsdecode(path), offset=err["offset"], record_index=err["record_index"],
            type_id=err["type_id"], record_name=err["record"], partial=data,
        )
    assert data is not None
    return data
