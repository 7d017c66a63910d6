"""Read binary robot and simulation logs with logspec's Rust readers (see the module docstring)."""

import os
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from logspec._logspec import DecodeError as DecodeError
from logspec._logspec import FilterError as FilterError
from logspec._logspec import FormatError as FormatError
from logspec._logspec import LogspecError as LogspecError
from logspec._logspec import LogspecWarning as LogspecWarning
from logspec._logspec import UsageError as UsageError

__version__: str

def scan(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    table: str,
    *,
    format: Optional[str] = None,
    schema: Optional[Union[str, "os.PathLike[str]"]] = None,
    on_error: str = "warn",
) -> Any:
    """One table of the logs among `inputs` (files, directories, glob patterns) as a Polars
    LazyFrame: the table's columns, then `log` (the export's `log=` name). Columns, conditions on
    `log` and bounds on `log_elapsed_ns` are pushed into the scan; DuckDB queries the frame by
    name with the same pushdown (docs/engines.md)."""

def datafusion_table(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    table: str,
    *,
    format: Optional[str] = None,
    schema: Optional[Union[str, "os.PathLike[str]"]] = None,
    on_error: str = "warn",
) -> Any:
    """One table of the logs among `inputs` as a DataFusion table provider (`__datafusion_table_provider__`):
    `datafusion.SessionContext().register_table(name, logspec.datafusion_table(inputs, table))`.
    Columns, conditions on `log` and bounds on `log_elapsed_ns` are pushed into the scan; a log
    that fails part-way keeps its complete rows and warns (`on_error="warn"`) or fails the query
    naming the log (`on_error="raise"`) (docs/engines.md)."""

Channels = Union[None, str, Sequence[str]]

def open(
    path: Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"],
    format: Optional[str] = None,
    *,
    assume_r1: bool = False,
    schema: Optional[Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]] = None,
    chunk_budget: Optional[int] = None,
) -> Log:
    """Open a log and detect its format (`format` forces usvlog, rlog, rlog-stream, carla, rosbag, wpilog, ulog, dataflash or mcap;
    `schema` reads it with a TOML schema of your own; `chunk_budget`: ROS bags, the most decompressed
    chunk data held at once, in MiB)."""

class Log:
    """An opened log; every call reads the file again."""

    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str:
        """`usvlog`, `rlog`, `rlog-stream`, `carla`, `rosbag`, `wpilog`, `ulog`, `dataflash`, `mcap`, or a schema's own name."""
    def __repr__(self) -> str: ...
    def info(self) -> Dict[str, Any]:
        """The `logspec info --json` object; what the command notes on stderr (a bag scanned without its index) is a LogspecWarning."""
    def __iter__(self) -> Iterator[Dict[str, Any]]:
        """Every record as a dict: the objects of `logspec dump` lines."""
    def records(
        self,
        channels: Channels = None,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        frames: Optional[Tuple[int, int]] = None,
        file_order: bool = False,
        on_error: str = "raise",
    ) -> Iterator[Dict[str, Any]]:
        """Every record as a dict (the `logspec dump` objects, docs/output.md), in file order.

        USVLOG `{"t_us", "type", "name", "fields"}`; RLOG one dict per value
        (`{"t", "key", "type", "value"}`); WPILOG the header, then one per record (`{"rec", "ts",
        "entry", ...}`); CARLA a header dict, then one per packet; ROS bags a dict per
        connection, then per message. Built in Rust, no JSON between: ints exact, floats
        `float` (NaN, infinities and a WPILOG value's negative zero too, where the dump writes
        strings), byte values `bytes` (the dump's hex; `payload_hex` keys stay hex text).
        What the command reports on stderr and goes on from is a LogspecWarning
        (`warnings.warn`). Raises DecodeError after the complete records (`on_error="warn"`:
        a LogspecWarning).
        """
    def tables(
        self,
        channels: Channels = None,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
        flatten: bool = False,
    ) -> Dict[str, pa.Table]:
        """Every channel as a pyarrow Table (the columns of `export --parquet`), zero-copy; `flatten=True`: struct fields as `a.b` columns."""
    def table(
        self,
        channel: str,
        *,
        since: Optional[float] = None,
        until: Optional[float] = None,
        on_error: str = "raise",
        flatten: bool = False,
    ) -> pa.Table:
        """One table as a pyarrow Table: any name of `tables()`, or a channel's name (its table, with that channel's rows); `flatten=True`: struct fields as `a.b` columns."""
    def numpy(
        self, channel: str, *, since: Optional[float] = None, until: Optional[float] = None, on_error: str = "raise"
    ) -> Dict[str, np.ndarray]:
        """One channel's columns as numpy arrays."""
    def to_pandas(self, channel: str, **kwargs: Any) -> Any:
        """One channel as a pandas DataFrame (through pyarrow)."""
    def polars(self, channel: str, **kwargs: Any) -> Any:
        """One channel as a polars DataFrame (through pyarrow)."""
