"""Cron expressions and durations as written in automation files.

Rules from docs/design.md ("Scheduling") and the issue that specified schedules:

- A schedule is a 5-field cron expression (minute hour day-of-month month
  day-of-week) or one of croniter's aliases (``@hourly``, ``@daily``,
  ``@midnight``, ``@weekly``, ``@monthly``, ``@yearly``, ``@annually``).
  croniter also reads 6 and 7 fields (seconds, year), so a pasted Quartz
  string would silently mean something else: it is refused here.
- Expressions are checked with croniter 7's ``strict=True``, which also refuses
  days that never occur (``0 0 31 2 *``).
- When day-of-month and day-of-week are both restricted, cron runs on days
  matching *either*; the automation must then say ``day_match: any|all``.
- croniter accepts some expressions in strict mode that it can never compute
  a date for (``0 0 1 * 1#2`` with either ``day_match``): ``check_computable``
  asks it for the next occurrence after a fixed date, as the scheduler would,
  and refuses the schedule when there is none (it would silently never run).
- Durations are seconds as a number, or a string ``<number><unit>`` with unit
  ``s``, ``m``, ``h`` or ``d`` (``"90s"``, ``"30m"``, ``"1.5h"``, ``"2d"``),
  at most ``MAX_DURATION_S`` (3650 days): a ``datetime.timedelta`` holds at
  most 999,999,999 days and a thread's wait about 292 years
  (``threading.TIMEOUT_MAX``), so a larger one would raise ``OverflowError``
  wherever it is added to a time (a dispatch tick, a run's lease) instead of
  being refused in the file.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re

from checks.fields.expectation import DURATION_UNITS_S
from checks.fields.yaml_messages import shown

CRON_FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")
CRON_ALIASES: dict[str, str] = {
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
CRON_FIELD_RANGES: dict[str, str] = {
    "minute": "0-59",
    "hour": "0-23",
    "day-of-month": "1-31",
    "month": "1-12 or JAN-DEC",
    "day-of-week": "0-7 (0 and 7 are Sunday) or SUN-SAT",
}
"""The values each field takes (croniter's), shown when one is out of range."""
MAX_DURATION_DAYS = 3650
MAX_DURATION_S = MAX_DURATION_DAYS * 86400.0
"""The longest duration or time limit a file may give (ten years), in seconds."""

_TAKES = f"Lookout takes 5 fields: {' '.join(CRON_FIELD_NAMES)}"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_DURATION_FORMS = "seconds as a number, or a string like '90s', '30m', '1h', '2d'"
_REFERENCE = dt.datetime(2000, 1, 1)  # a fixed start: the check gives the same answer every day
_CACHED = 4096  # expressions whose checks are kept: pure functions, and croniter is slow


def cron_fields(expression: str) -> list[str]:
    """Split a cron expression into its raw fields, replacing an ``@alias`` by its 5 fields.

    The scheduler uses the raw minute and hour fields to tell fixed-time
    schedules from interval ones (docs/design.md, Scheduling). No validation is done here.
    """
    stripped = expression.strip()
    return CRON_ALIASES.get(stripped.lower(), stripped).split()


@functools.lru_cache(maxsize=_CACHED)
def validate_cron(expression: str) -> str:
    """Check a schedule and return it without surrounding spaces.

    Raises:
        ValueError: the expression is not 5 fields (the message says what 6 or
            7 fields look like), is an unknown ``@alias``, or croniter's strict
            mode refuses it (the message carries croniter's reason).

    """
    stripped = expression.strip()
    fields = cron_fields(stripped)
    if stripped.startswith("@") and stripped.lower() not in CRON_ALIASES:
        known = ", ".join(CRON_ALIASES)
        raise ValueError(f"unknown cron alias {stripped!r}; the aliases are {known}")
    if len(fields) == 6:
        raise ValueError(f"6 fields: looks like a Quartz/seconds cron; {_TAKES}")
    if len(fields) == 7:
        raise ValueError(f"7 fields: looks like a Quartz cron with seconds and year; {_TAKES}")
    if len(fields) != 5:
        raise ValueError(f"{len(fields)} field{'' if len(fields) == 1 else 's'}; {_TAKES}")
    try:
        _expanded(stripped)
    except (ValueError, TypeError) as exc:  # croniter's errors derive from these
        raise ValueError(f"invalid cron expression: {_field_problem(fields) or exc}") from None
    return stripped


@functools.lru_cache(maxsize=_CACHED)
def _expanded(expression: str) -> tuple[list[list[int | str]], dict[int, set[int]]]:
    """Return croniter's strict expansion of an expression, read once for all its checks.

    Shared: callers only read it. Raises what ``croniter.expand`` raises (not kept).
    """
    from croniter import croniter  # on first use: its import runs `file` on the interpreter

    fields, nth_weekdays = croniter.expand(expression, strict=True)
    return fields, nth_weekdays


def _field_problem(fields: list[str]) -> str | None:
    """Name the first field croniter refuses on its own, with the values it takes.

    Each field is tried in an expression where every other field is ``*``; None
    when each is fine alone (the fields only clash together, ``0 0 31 2 *``).
    """
    from croniter import croniter

    for i, (name, raw) in enumerate(zip(CRON_FIELD_NAMES, fields, strict=True)):
        alone = ["*"] * 5
        alone[i] = raw
        try:
            croniter.expand(" ".join(alone), strict=True)
        except (ValueError, TypeError) as exc:
            step = re.search(r"step '([^']*)'", str(exc))
            what = (
                "is out of range"
                if "out of range" in str(exc)
                else f"has a step of {step.group(1)}, which is not acceptable"
                if step
                else "is not acceptable"
            )
            return f"the {name} field {raw!r} {what}: {name} takes {CRON_FIELD_RANGES[name]}"
    return None


@functools.lru_cache(maxsize=_CACHED)
def needs_day_match(expression: str) -> bool:
    """Whether day-of-month and day-of-week are both restricted in a valid expression.

    Decided as croniter decides whether to OR the two fields: a field counts as
    unrestricted when it expands to every value (``*``, ``?``, ``1-31``, ``*/1``).

    Raises:
        ValueError: the expression is not valid (see ``validate_cron``).

    """
    expanded = _expanded(validate_cron(expression))[0]
    day_of_month, day_of_week = expanded[2], expanded[4]
    return day_of_month[0] != "*" and day_of_week[0] != "*"


@functools.lru_cache(maxsize=_CACHED)
def check_computable(expression: str, day_match: str | None) -> None:
    """Refuse a valid expression for which croniter can compute no date.

    The next occurrence after 2000-01-01 00:00 is computed with croniter as
    the scheduler computes occurrences (``day_or`` from ``day_match``); its
    search is bounded (croniter gives up past its horizon of years, in
    milliseconds).

    Raises:
        ValueError: croniter finds no date (``0 0 1 * 1#2``), or fails on the
            expression in another way; the message says the schedule would
            never run.

    """
    from croniter import CroniterError, croniter

    day_or = day_match != "all"
    try:
        fields, nth_weekdays = _expanded(validate_cron(expression))
        if fields[2] == ["*"] and fields[4] == ["*"] and not nth_weekdays:
            return  # every day matches, so some minute of some month comes: no search needed
        croniter(
            validate_cron(expression), _REFERENCE, ret_type=dt.datetime, day_or=day_or
        ).get_next()
    except (CroniterError, ValueError, TypeError, OverflowError) as exc:
        how = f" with day_match: {day_match}" if day_match else ""
        raise ValueError(
            f"croniter cannot compute any date for {expression.strip()!r}{how} ({exc}), so it "
            "would never run; write the days another way (e.g. without '#' or 'L' beside a "
            "day of the month)"
        ) from None


def parse_duration(value: object) -> float:
    """Read a duration and return it in seconds.

    Args:
        value: an ``int``/``float`` number of seconds, or a string such as
            ``"90s"``, ``"30m"``, ``"1h"``, ``"2d"``, ``"1w"``.

    Raises:
        ValueError: the value is not one of those forms, is not more than 0, or
            is more than ``MAX_DURATION_S`` (3650 days).

    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected a duration: {_DURATION_FORMS} (got {shown(value)})")
    if isinstance(value, str):
        match = _DURATION.fullmatch(value.strip())
        if not match:
            raise ValueError(f"expected a duration: {_DURATION_FORMS} (got {shown(value)})")
        seconds = float(match.group(1)) * DURATION_UNITS_S[match.group(2)]
    else:
        seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"a duration must be more than 0 seconds (got {shown(value)})")
    if seconds > MAX_DURATION_S:
        raise ValueError(f"a duration is at most {MAX_DURATION_DAYS} days (got {shown(value)})")
    return seconds
