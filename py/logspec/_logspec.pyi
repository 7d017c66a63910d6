"""The native module of logspec (PyO3). Python code uses `logspec`, which wraps this."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

class LogspecError(Exception):
    """Any error of logspec; `file`, `offset` (byte of the failing record or header), `record`
    (its 0-based index), `field` (`Type.field`) say where, None when the engine does not know;
    `message` is the text the command prints (`str(e)`)."""

    file: Optional[str]
    offset: Optional[int]
    record: Optional[int]
    field: Optional[str]
    message: Optional[str]

class DecodeError(LogspecError): ...
class FormatError(LogspecError): ...
class FilterError(LogspecError): ...
class UsageError(LogspecError): ...

class LogspecWarning(UserWarning):
    """A problem the reading went on from (given to `warnings.warn`); the attributes of
    LogspecError, and `error`: the LogspecError that `on_error="warn"` turned into this warning."""

    file: Optional[str]
    offset: Optional[int]
    record: Optional[int]
    field: Optional[str]
    message: Optional[str]
    error: Optional[LogspecError]

class ArrowStream:
    """One table behind the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any: ...
    def num_rows(self) -> int: ...

class Batches:
    """The records of a log: lists of record dicts, with a LogspecWarning where the dump warns;
    raises the error that ended the reading after the last complete record."""

    def __iter__(self) -> "Batches": ...
    def __next__(self) -> Union[List[Dict[str, Any]], LogspecWarning]: ...

class NativeLog:
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str: ...
    def info_json(
        self,
    ) -> Tuple[Optional[Tuple[str, bool]], List[LogspecWarning], Optional[LogspecError]]: ...
    def records(
        self,
        channels: List[str] = ...,
        since: Optional[float] = None,
        until: Optional[float] = None,
        frames: Optional[Tuple[int, int]] = None,
        file_order: bool = False,
    ) -> Batches: ...
    def tables(
        self,
        channels: List[str] = ...,
        since: Optional[float] = None,
        until: Optional[float] = None,
        by_table: bool = False,
    ) -> Tuple[List[Tuple[str, ArrowStream]], List[str], Optional[LogspecError]]: ...

def open(
    path: Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"],
    format: Optional[str] = None,
    assume_r1: bool = False,
    schema: Optional[Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]] = None,
    chunk_budget: Optional[int] = None,
) -> NativeLog: ...

def find_logs(
    inputs: List[str], format: Optional[str] = None, schema: Optional[str] = None
) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]: ...
def table_schema(path: str, table: str, format: Optional[str] = None, schema: Optional[str] = None) -> Optional[ArrowStream]: ...

class TableScan:
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def outcome(self) -> Tuple[int, List[LogspecWarning], Optional[LogspecError]]: ...

def scan_table(
    path: str,
    log: str,
    table: str,
    columns: Optional[List[str]] = None,
    since: Optional[float] = None,
    until: Optional[float] = None,
    format: Optional[str] = None,
    schema: Optional[str] = None,
    part: Optional[Tuple[int, int, int]] = None,
) -> TableScan: ...
def plan_parts(
    path: str,
    table: str,
    since: Optional[float] = None,
    until: Optional[float] = None,
    target_bytes: Optional[int] = None,
    format: Optional[str] = None,
    schema: Optional[str] = None,
) -> List[Optional[Tuple[int, int, int]]]: ...
def plan_partitions(
    logs: Sequence[Tuple[str, str]],
    table: str,
    since: Optional[float] = None,
    until: Optional[float] = None,
    target_bytes: Optional[int] = None,
    parallelism: int = 1,
    format: Optional[str] = None,
    schema: Optional[str] = None,
) -> List[List[Tuple[str, str, Optional[Tuple[int, int, int]]]]]: ...

class DataFusionTable:
    """One table of a set of logs as a DataFusion table provider (`logspec.datafusion_table`)."""

    def __init__(
        self,
        inputs: Sequence[str],
        table: str,
        format: Optional[str] = None,
        schema: Optional[str] = None,
        on_error: str = "warn",
    ) -> None: ...
    @property
    def logs(self) -> List[Tuple[str, str]]:
        """The logs, as `[(file, log)]`."""
    def __datafusion_table_provider__(self, session: Any) -> Any:
        """The FFI table provider (a PyCapsule named `datafusion_table_provider`)."""
