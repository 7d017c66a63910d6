"""Read and write binary robot and simulation logs with logspec's Rust readers."""

from logspec._logspec import __version__

__all__ = ["__version__"]
