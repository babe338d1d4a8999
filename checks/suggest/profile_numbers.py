"""The numbers a profile holds, and the numbers a text cites that it does not hold.

As the agent's report may cite only evidence ids that ran in the run
(``checks.agent.contract``), a goal written from a profile may cite only
numbers the profile holds. A number is read from the text as written
(``336,776``, ``2.45``, ``-43``, ``0.7 %`` is ``0.7``); a date or time
(``2013-12-31``, ``23:00``) as one token. It is held when it equals a number
of the profile's facts (``facts``), or one of them rounded to 0, 1 or 2
decimals, or a date or time written in them. Everything else is a claim the
profile does not support: the goal citing it is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b")
_NUMBER = re.compile(
    r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\w.])-?\d+(?:\.\d+)?(?!\d)"
)


def _walk(data: Any) -> Iterable[Any]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from _walk(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _walk(value)
    else:
        yield data


def held(facts: Any) -> tuple[frozenset[Decimal], frozenset[str]]:
    """The numbers (each exact and rounded to 0–2 decimals) and dates/times ``facts`` holds."""
    numbers: set[Decimal] = set()
    dates: set[str] = set()
    for value in _walk(facts):
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float | Decimal):
            exact = Decimal(str(value))
            if not exact.is_finite():  # NaN and infinity: no number a text can cite
                continue
            numbers.add(exact.normalize())
            for places in (0, 1, 2):
                numbers.add(round(exact, places).normalize())
        elif isinstance(value, str):
            for found in _DATE.findall(value):
                dates.add(found)
                dates.update(found.replace("T", " ").split(" "))
            for found in _NUMBER.findall(_DATE.sub(" ", value)):
                numbers.add(Decimal(found.replace(",", "")).normalize())
    return frozenset(numbers), frozenset(dates)


def unsupported(text: str, facts: Any) -> list[str]:
    """The numbers and dates ``text`` cites that ``facts`` does not hold, as written, in order."""
    numbers, dates = held(facts)
    missing = [d for d in _DATE.findall(text) if d not in dates]
    for found in _NUMBER.findall(_DATE.sub(" ", text)):
        try:
            value = Decimal(found.replace(",", "")).normalize()
        except InvalidOperation:  # the pattern only matches numbers; never reached
            missing.append(found)
            continue
        if value not in numbers:
            missing.append(found)
    return missing
