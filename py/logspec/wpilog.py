"""WPILib DataLog (``.wpilog``) files: a writer.

``Writer`` starts entries with a name and a type and appends values to them, each encoded as its
entry's type through the schema (``schemas/wpilog.toml``); timestamps are microseconds::

    with logspec.wpilog.Writer("robot.wpilog") as w:
        speed = w.start("/drive/speed", "double")
        w.append(speed, 1.25, timestamp=20_000)
        w.append("/drive/speed", 1.5, timestamp=40_000)
"""

from logspec._logspec import WpilogWriter as Writer

__all__ = ["Writer"]
