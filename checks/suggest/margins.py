"""The margins a suggested bound leaves for normal variation (docs/suggest.md, Margins).

- A range: the observed min and max widened by a tenth of their span on each
  side (a tenth of the value when the span is 0), rounded outward to two
  significant figures, never across zero when every value was on one side.
- A share of NULLs: the observed share plus half of it, at least half a
  percentage point, at most half way to 100 %, rounded up to a tenth.
- A row count with no live timestamp: at least nine tenths of the rows,
  rounded down to two significant figures.
- A freshness bound: twice the newest value's age, at least a day, rounded up
  to whole hours.
"""

from __future__ import annotations

import math

RANGE_MARGIN = 0.1
NULL_MARGIN = 0.5
ROWS_KEPT = 0.9


def _nice(value: float, *, up: bool) -> float:
    """``value`` rounded up (or down) to two significant figures."""
    if value == 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(abs(value))) - 1)
    steps = round(value / step, 9)  # 0.0009 / 0.00001 is 89.99999999999999 in floats
    return float((math.ceil if up else math.floor)(steps) * step)


def _tidy(value: float, whole: bool) -> int | float:
    """An int for whole-number columns and whole results; floats with few digits otherwise."""
    if whole or float(value).is_integer():
        return round(value)
    return float(f"{value:.6g}")


def range_bounds(low: float, high: float, *, whole: bool) -> tuple[int | float, int | float]:
    """The suggested ``(min, max)`` of a column observed between ``low`` and ``high``.

    Raises:
        ValueError: ``low`` or ``high`` is NaN or infinite (no bound holds it).
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"no range around {low} and {high}: a bound needs finite numbers")
    span = high - low or abs(high) or 1.0
    lower = _nice(low - RANGE_MARGIN * span, up=False)
    upper = _nice(high + RANGE_MARGIN * span, up=True)
    if low >= 0:
        lower = max(lower, 0.0)
    if high <= 0:
        upper = min(upper, 0.0)
    if whole:
        lower, upper = math.floor(lower), math.ceil(upper)
    return _tidy(lower, whole), _tidy(upper, whole)


def null_bound(percent: float) -> float:
    """The largest share of NULLs (a percent) suggested for a column observed at ``percent``."""
    bound = min(percent + max(NULL_MARGIN * percent, 0.5), percent + (100 - percent) / 2)
    return min(100.0, math.ceil(bound * 10 - 1e-9) / 10)


def rows_floor(rows: int) -> int:
    """The fewest rows suggested for a table with no live timestamp, observed at ``rows``."""
    return int(_nice(ROWS_KEPT * rows, up=False))


def freshness_bound(age_s: float) -> float:
    """The oldest the newest value may be, in seconds, for one observed ``age_s`` old."""
    return math.ceil(max(2 * age_s, 86400.0) / 3600) * 3600.0
