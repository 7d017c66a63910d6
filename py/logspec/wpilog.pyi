"""Type stubs for `logspec.wpilog`: the WPILib DataLog writer."""

from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Optional, Type, Union

_Path = Union[str, bytes, "PathLike[str]", "PathLike[bytes]"]

class Writer:
    """Writes a `.wpilog` file: `start` entries with a name and type, `append` values (timestamps
    in microseconds). Refuses an existing file unless `overwrite=True`."""

    def __init__(self, path: _Path, *, extra_header: str = "", overwrite: bool = False) -> None: ...
    def start(
        self, name: str, type: str, metadata: str = "", timestamp: int = 0, entry: Optional[int] = None
    ) -> int:
        """Starts an entry and returns its id."""
    def append(self, entry: Union[int, str], value: Any, timestamp: int) -> None:
        """Appends a value, encoded as the entry's type (bytes for `raw`, `json`, `struct:...`)."""
    def finish(self, entry: Union[int, str], timestamp: int = 0) -> None: ...
    def set_metadata(self, entry: Union[int, str], metadata: str, timestamp: int = 0) -> None: ...
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
    def entries(self) -> Dict[str, int]: ...
