"""The result budget: column names and cells cut to fit, as JSON-safe values.

See ``QueryResult.jsonable`` (``checks.sources.result``) and ``collect``
(``checks.sources.fingerprint``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from collections.abc import Sequence
from typing import Any, TypeAlias

from checks.errors import QueryFailed
from checks.sources.cells import Oversized

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
"""A JSON-safe value: what ``to_jsonable`` gives and ``json`` encodes."""

ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)``, without building an encoder per call."""

MIN_NAME_CHARS = 8
"""Shortest a shown column name is cut to when many long names share the result budget."""


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one ``…`` when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def names_chars(names: Sequence[str]) -> int:
    """Return the length of the JSON list of ``names`` (what showing them costs)."""
    return len(ENCODE(list(names)))


def shown_names(names: Sequence[str], *, max_cell_chars: int, max_result_chars: int) -> list[str]:
    """Return column names as a result may show them, within the character budgets.

    Each name is cut to ``max_cell_chars`` characters ending in ``…``, like a
    cell. When the names together (as JSON) would still take more than half of
    ``max_result_chars``, every name is cut to the same shorter length, the
    longest that fits that half, but not below ``MIN_NAME_CHARS``; so the rows
    keep at least half of the budget, and a result of few names is unchanged.
    The result may still exceed the budget when there are very many columns
    (see ``check_width``).
    """
    cut = [cut_text(name, max_cell_chars) for name in names]
    half = max_result_chars // 2
    if names_chars(cut) <= half:
        return cut
    low, high = MIN_NAME_CHARS, max(MIN_NAME_CHARS, max_cell_chars)
    while low < high:  # the longest cap whose names fit in half the budget
        middle = (low + high + 1) // 2
        if names_chars([cut_text(name, middle) for name in cut]) <= half:
            low = middle
        else:
            high = middle - 1
    return [cut_text(name, low) for name in cut]


def check_width(names: Sequence[str], *, max_result_chars: int) -> None:
    """Refuse a result whose column names, already cut short, cannot fit the result budget.

    Raises:
        QueryFailed: naming the number of columns; select fewer columns.

    """
    size = names_chars(names)
    if size > max_result_chars:
        raise QueryFailed(
            f"the result has {len(names):,} columns: their names alone take {size:,} "
            f"characters, more than the result budget of {max_result_chars:,}; "
            "select only the columns you need"
        )


def _plain(value: Any) -> JSONValue:
    """Convert one value to JSON-safe form without any length limit."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Oversized):
        return _oversized_text(value)
    return str(value)  # timedelta, UUID, anything else a driver returns


def _oversized_text(value: Oversized) -> str:
    """Show a cell that was not fetched: its head ending in ``…``, or a note."""
    if isinstance(value.head, str):
        return value.head + "…"
    if isinstance(value.head, list):
        return ENCODE(_plain(value.head))[:-1] + ", …"
    if value.type == "BLOB":
        return f"<{value.size} bytes>"
    return repr(value)


def to_jsonable(value: Any, max_cell_chars: int) -> JSONValue:
    """Convert one cell to a JSON-safe value no longer than ``max_cell_chars`` characters."""
    kind = type(value)
    if kind is str:
        return value if len(value) <= max_cell_chars else cut_text(value, max_cell_chars)
    if value is None or kind is int or kind is bool:
        return value  # type: ignore[no-any-return]
    plain = _plain(value)
    if isinstance(plain, str):
        return cut_text(plain, max_cell_chars)
    if isinstance(plain, (list, dict)):
        text = ENCODE(plain)
        return plain if len(text) <= max_cell_chars else cut_text(text, max_cell_chars)
    return plain
