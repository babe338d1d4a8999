"""A database value's kind and value in words, for messages that never show a Python repr."""

from __future__ import annotations

import datetime as dt
import math
import numbers
from decimal import Decimal
from typing import Any

from checks.fields.expectation import DURATION_UNITS_S


def describe(value: Any) -> str:
    """Name a database value's kind in words, with a short form of it: ``text 'abc'``.

    Used in error messages, which never show a Python repr.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, Decimal | float) and not finite(value):
        return non_finite_name(value)
    if isinstance(value, numbers.Number):
        return f"a number ({_short(str(value))})"
    if isinstance(value, str):
        return f"text '{_short(value)}'"
    return _describe_other(value)


def _describe_other(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return f"a timestamp ({_short(value.isoformat(sep=' '))})"
    if isinstance(value, dt.date):
        return f"a date ({value.isoformat()})"
    if isinstance(value, dt.time):
        return f"a time of day ({value.isoformat()})"
    if isinstance(value, dt.timedelta):
        return f"an interval ({interval_text(value)})"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"binary data ({len(bytes(value))} bytes)"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a structure"
    return "a value of another kind"


def interval_text(value: dt.timedelta) -> str:
    """Write an interval in the units ``expect`` takes: ``3h``, ``1d 2h 30m``, ``-90s``, ``0.5s``.

    Exact to the microsecond; never Python's ``1 day, 2:00:00``.
    """
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign, micros = ("-" if micros < 0 else ""), abs(micros)
    whole, fraction = divmod(micros, 1_000_000)
    parts = []
    for unit in ("d", "h", "m"):
        amount, whole = divmod(whole, DURATION_UNITS_S[unit])
        if amount:
            parts.append(f"{amount}{unit}")
    if whole or fraction or not parts:
        seconds = Decimal(whole) + Decimal(fraction).scaleb(-6)
        parts.append(f"{seconds.normalize():f}s")
    return sign + " ".join(parts)


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def finite(value: Decimal | float) -> bool:
    """Whether a decimal or float is a finite number (not NaN, not an infinity)."""
    return value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)


def non_finite_name(value: Decimal | float) -> str:
    """``NaN``, ``Infinity`` or ``-Infinity``: a value that is not finite, named as SQL names it."""
    if (isinstance(value, Decimal) and value.is_nan()) or (
        isinstance(value, float) and math.isnan(value)
    ):
        return "NaN"
    return "-Infinity" if value < 0 else "Infinity"
