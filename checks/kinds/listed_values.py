"""Values a check lists (``accepted_values``' ``values``, ``missing``' ``missing_values``).

Each is text, a number or a boolean, written as a literal of the column's type;
text listed against a number column must read as a number, or no row can hold it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BeforeValidator

from checks.fields.yaml_messages import shown
from checks.kinds.base import Loc
from checks.sql.types import NUMBER_FAMILIES


def _scalar(value: object) -> object:
    """One listed value: text, a number or a boolean (one message, not one per type tried)."""
    if isinstance(value, str | int | float | bool):
        return value
    hint = ""
    if isinstance(value, dt.date):
        hint = "; quote it to list it as text"
    elif value is None:
        hint = "; NULL is never listed: accepted_values takes null: allowed, missing counts it"
    raise ValueError(f"a listed value is text, a number or a boolean (got {shown(value)}){hint}")


Scalar = Annotated[str | int | float | bool, BeforeValidator(_scalar)]
"""A value listed by ``accepted_values`` or ``missing_values``."""


def listed_problems(
    key: str, values: list[Any], column: str, column_type: str, have: str
) -> list[tuple[Loc, str]]:
    """The listed text values a number column cannot hold, each at its place under ``key``.

    The database casts such text to a number, or fails the run.
    """
    if have not in NUMBER_FAMILIES:
        return []
    return [
        ((key, index), f"{shown(value)} is text, and {column} is {column_type}: no row can hold it")
        for index, value in enumerate(values)
        if isinstance(value, str) and not reads_as_number(value)
    ]


def reads_as_number(text: str) -> bool:
    """Whether a text a number column is compared with casts to a number (``'2'``, ``' 4 '``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
