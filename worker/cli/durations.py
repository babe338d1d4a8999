"""How long a run took, for people: ``12 ms``, ``3.2 s``, ``2 min 05 s``, ``1 h 02 min``.

One scheme wherever the terminal gives a run's duration (``lookout reports``'
``took`` column, the totals line of ``lookout run``), so a fast run stays
visible: under a second in whole milliseconds, never ``0.0 s`` for a run that
took 12 ms, and ``< 1 ms`` for one that took less than half a millisecond but
not nothing. From a second on, tenths of a second; from a minute, minutes and
seconds; from an hour, hours and minutes. Seconds and minutes after a larger
unit have two digits, as the docs write times (``9 min 08 s``), so a
right-aligned column lines up. A value and its unit are separated by a space,
which ``worker.cli.no_break`` never breaks a line at.
"""

from __future__ import annotations

import math

__all__ = ["duration_text"]


def duration_text(seconds: float) -> str:
    """``seconds`` (a non-negative duration) in the scheme of the module docstring.

    Each form is rounded to its own precision first, so a value never reads
    as the next unit's overflow (0.9996 s is ``1.0 s``, not ``1000 ms``;
    59.96 s is ``1 min 00 s``, not ``60.0 s``).

    Raises:
        ValueError: ``seconds`` is negative or not a finite number.
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration is a finite number of seconds >= 0, not {seconds!r}")
    millis = round(seconds * 1000)
    if millis < 1000:
        return "< 1 ms" if millis == 0 and seconds > 0 else f"{millis} ms"
    tenths = round(seconds * 10)
    if tenths < 600:
        return f"{tenths // 10}.{tenths % 10} s"
    whole = round(seconds)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"
