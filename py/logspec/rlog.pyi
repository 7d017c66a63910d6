"""Type stubs for `logspec.rlog`: the AdvantageKit RLOG writer."""

from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Type, Union

_Path = Union[str, bytes, "PathLike[str]", "PathLike[bytes]"]

class Writer:
    """Writes an RLOG file cycle by cycle (`revision` 1 or 2; 2 by default). Keys are defined on
    first use; a key's type comes from `types`, its definition, or the Python value. Refuses an
    existing file unless `overwrite=True`."""

    def __init__(self, path: _Path, *, revision: int = 2, overwrite: bool = False) -> None: ...
    def define(self, key: str, type: Optional[str] = None) -> int:
        """Defines a key now and returns its id (R2 keys need a type)."""
    def cycle(self, timestamp: float, values: Mapping[str, Any], types: Optional[Mapping[str, str]] = None) -> None:
        """Writes one cycle: the timestamp (seconds), then each key's value."""
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
    def revision(self) -> int: ...
    @property
    def keys(self) -> Dict[str, int]: ...
