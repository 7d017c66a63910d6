"""AdvantageKit RLOG files: a writer.

``Writer`` writes cycle by cycle; each key is defined on first use (R2: with its declared
type), and every value is encoded through the schema's value types (``schemas/rlog.toml``)::

    with logspec.rlog.Writer("robot.rlog") as w:          # revision=2 by default
        w.cycle(0.02, {"/Drive/LeftVelocity": 1.5, "/Drive/Enabled": True})
        w.cycle(0.04, {"/Drive/Pose": b"..."}, types={"/Drive/Pose": "struct:Pose2d"})
"""

from logspec._logspec import RlogWriter as Writer

__all__ = ["Writer"]
