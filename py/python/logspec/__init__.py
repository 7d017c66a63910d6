"""Read and write binary robot and simulation logs with logspec's Rust readers."""

from logspec._logspec import __version__
from logspec import rlog, usvlog, wpilog  # writers; usvlog.read_timeseries_bin

__all__ = ["__version__"]
