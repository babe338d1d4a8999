"""Numbers, percents, durations and row counts as a check's words show them.

A percent is shown rounded, but never as 0 % when the count is not 0, nor as
100 % when it is not all rows (``< 0.01 %``, ``> 99.99 %``): the comparison
itself was exact.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from checks.report import CheckResult, json_value


def number(value: Any) -> str:
    """A value as JSON shows it (``8255``, ``0.0245``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(json_value(value))


def percent(count: int, total: int) -> str:
    """``count`` of ``total`` as a percent for people: 2 decimals, never falsely 0 or 100."""
    if total == 0:
        return "undefined (0 rows)"
    return percent_text(Fraction(count, total) * 100)


def percent_text(value: float | Fraction) -> str:
    """A percent (``2.45`` is 2.45 %) for people: 2 decimals, never falsely 0 or 100.

    ``< 0.01 %`` for a value above 0 that rounds to 0, ``> 99.99 %`` for one
    under 100 that rounds to 100 (and their negatives alike).
    """
    shown = f"{float(value):.2f}"
    if value != 0 and float(shown) == 0:
        return "< 0.01 %" if value > 0 else "> -0.01 %"
    if value != 100 and float(shown) == 100:
        return "> 99.99 %"
    return f"{shown} %"


def duration(seconds: float) -> str:
    """``3h 12m``, ``2d 4h``, ``45s``; negative ages read ``… in the future``."""
    if seconds < 0:
        return f"{duration(-seconds)} in the future"
    whole = int(seconds)
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size or (unit == "s" and not parts):
            amount, whole = divmod(whole, size)
            parts.append(f"{amount}{unit}")
    return " ".join(parts[:2])


def rows(n: int) -> str:
    """``1 row``, ``1,234 rows``."""
    return f"{n:,} row{'' if n == 1 else 's'}"


def metric(result: CheckResult, name: str) -> int:
    """A result's metric ``name`` as a whole number (0 when absent or not a number)."""
    value = result.metrics.get(name)
    return int(value) if isinstance(value, int | float) else 0
