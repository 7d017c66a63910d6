"""The native module of logspec (PyO3). Python code uses `logspec`, which wraps this."""

from typing import Any, List, Optional, Tuple

__version__: str

class LogspecError(Exception):
    """Any error of logspec; `file`, `offset`, `record`, `field` say where (None when unknown)."""

    file: str
    offset: Optional[int]
    record: Optional[int]
    field: Optional[str]
    message: str

class DecodeError(LogspecError): ...
class FormatError(LogspecError): ...
class FilterError(LogspecError): ...
class UsageError(LogspecError): ...

class ArrowStream:
    """One table behind the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any: ...
    def num_rows(self) -> int: ...

class Lines:
    """The `logspec dump` lines of a log, in chunks of whole lines."""

    def __iter__(self) -> "Lines": ...
    def __next__(self) -> str: ...

class NativeLog:
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str: ...
    def info_json(self) -> Tuple[str, bool]: ...
    def dump_lines(
        self,
        channels: List[str] = ...,
        since: Optional[float] = None,
        until: Optional[float] = None,
        frames: Optional[Tuple[int, int]] = None,
        file_order: bool = False,
    ) -> Lines: ...
    def tables(
        self, channels: List[str] = ..., since: Optional[float] = None, until: Optional[float] = None
    ) -> Tuple[List[Tuple[str, ArrowStream]], List[str], Optional[LogspecError]]: ...

def open(path: str, format: Optional[str] = None, assume_r1: bool = False) -> NativeLog: ...
