"""``lookout eval``: suite format, case data, runner, scoring, the reliability diagram."""

from pathlib import Path

DEFAULT_CONCURRENCY = 4
"""Most eval runs at once (``lookout eval --concurrency``)."""
DEFAULT_PLOT = Path(".lookout/eval-reliability.png")
"""Where ``lookout eval`` writes the reliability diagram (``--plot``)."""
