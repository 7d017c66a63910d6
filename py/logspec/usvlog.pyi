"""Type stubs for `logspec.usvlog`: the USVLOG writer and `read_timeseries_bin`."""

from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Tuple, Type, Union

import numpy as np

from logspec._logspec import DecodeError

_Path = Union[str, bytes, "PathLike[str]", "PathLike[bytes]"]

class TimeseriesHeader:
    magic: str
    fw_model_schema: int
    endianness: str
    t0_us: int
    def __init__(self, magic: str, fw_model_schema: int, endianness: str, t0_us: int) -> None: ...

class UnknownRecord:
    t_us: int
    type_id: int
    payload_len: int
    def __init__(self, t_us: int, type_id: int, payload_len: int) -> None: ...

class TimeseriesData:
    header: TimeseriesHeader
    records: Dict[str, Dict[str, np.ndarray]]
    record_counts: Dict[str, int]
    unknown_records: Tuple[UnknownRecord, ...]
    def __init__(
        self,
        header: TimeseriesHeader,
        records: Dict[str, Dict[str, np.ndarray]],
        record_counts: Dict[str, int],
        unknown_records: Tuple[UnknownRecord, ...],
    ) -> None: ...

class TimeseriesReadError(DecodeError, ValueError):
    """A `logspec.DecodeError` and a `ValueError` (upstream's class): `file`/`path`, `offset`
    (where the failing header or record starts), `record`/`record_index` (its 0-based index,
    None for the file header), `type_id` and `record_name` (its type), `message`, and `partial`
    (the complete records before the fault)."""

    file: str
    path: str
    offset: int
    record: Optional[int]
    record_index: Optional[int]
    type_id: Optional[int]
    record_name: Optional[str]
    field: None
    message: str
    partial: Optional[TimeseriesData]

def read_timeseries_bin(
    path: _Path,
    *,
    record_layouts: Optional[Mapping[int, Any]] = None,
    strict_payload_len: bool = True,
    keep_unknown: bool = True,
    threads: Optional[int] = None,
) -> TimeseriesData:
    """Reads a USVLOG `timeseries.bin` into per-record dicts of numpy arrays (usv-autopilot's
    `read_timeseries_bin` signature and result). Raises `TimeseriesReadError` with the offset.
    `threads`: how many threads fill the arrays (default: one per core, at most 2, for files of
    8 MiB a thread or more); the result does not depend on it."""

class Writer:
    """Writes a USVLOG file: `with Writer(path) as w: w.write("REC_SENSOR_GYRO", t_us, z_gyro=...)`.
    Refuses an existing file unless `overwrite=True`; closing writes out what is buffered."""

    def __init__(self, path: _Path, *, t0_us: int = 0, overwrite: bool = False) -> None: ...
    def write(
        self, record: Union[str, int], t_us: int, values: Optional[Mapping[str, Any]] = None, **fields: Any
    ) -> None:
        """One record by name or type id; fields from `values` and keywords, checked against the
        schema (missing/unknown fields and out-of-range numbers raise `ValueError`, wrong kinds
        `TypeError`)."""
    def write_raw(self, type_id: int, t_us: int, payload: bytes) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> Path: ...
    @property
    def t0_us(self) -> int: ...
    @property
    def fw_model_schema(self) -> int: ...
