"""The suggested daily volume check: rows a day against the table's own history.

The day tested is yesterday (UTC), the latest complete day a run at the
suggested schedule tests. Its baseline is the ``lookback`` days before it, and
the anomaly machinery counts a day with no rows as 0 (``checks.declared.buckets``):
so the lookback reaches only over days the table already had rows. It is
``LOOKBACK_DAYS``, or fewer: the *full days of history*, from the first day
wholly after the column's oldest value (that day itself when the oldest value
is at midnight) to the day before the one tested. With at least ``MIN_HISTORY``
such days the check is ``expect: anomaly`` over them; with fewer it is a plain
``"> 0"`` rows each day, and the note says from when a run of ``lookout
suggest`` would suggest the anomaly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from checks.declared.anomaly import Point, describe, judge
from checks.fields.anomaly_rule import rule_from_mapping
from checks.suggest.profile import ColumnProfile, TableProfile

LOOKBACK_DAYS = 56
"""Days of history the volume check reads before the day it tests: 8 of each weekday."""
VOLUME = "anomaly"
"""The volume check's expectation: the defaults, 3 standard deviations of the days before.

Measured on bench/bench_suggest.py: over 28 days, a 3-day outage's own zeros
in the baseline widened the band until the outage passed; over 56 they do not.
A median (``mad``) over the same weekdays found an ordinary holiday's 7 % dip
an anomaly: too tight for a first suggestion.
"""
MIN_HISTORY = rule_from_mapping(None).min_history
"""Full days of history the anomaly needs (its ``min_history``, 7); fewer: ``"> 0"`` a day."""
EVERY_DAY = "> 0"
"""The young table's expectation: rows every day."""


@dataclass(frozen=True)
class Volume:
    """The volume check of one timestamp column, before it is named.

    Attributes:
        spec: the check's keys but ``name``: ``row_count``, ``over``, ``expect``.
        observed: what was seen, one line.
        problem: why it fails on today's data, or None.
        note: why the lookback is short or the check is ``"> 0"``, or None.
    """

    spec: dict[str, Any]
    observed: str
    problem: str | None = None
    note: str | None = None


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), dt.UTC)


def first_full_day(c: ColumnProfile, daily: dict[str, int]) -> dt.date | None:
    """The first UTC day wholly after the column's oldest value (that day if it is at midnight).

    The oldest value is the older of the profile's min (of the sample, if
    sampled) and the oldest day of the daily volume (of the whole table);
    None without either.
    """
    days = [dt.date.fromisoformat(d) for d in daily]
    low = c.low
    if isinstance(low, dt.datetime):
        at = (low if low.tzinfo else low.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
        if not days or at.date() <= min(days):
            return at.date() if at.time() == dt.time() else at.date() + dt.timedelta(days=1)
    if not days:
        return None
    return min(days) + dt.timedelta(days=1)  # its time of day unknown: maybe a partial day


def _spread(counts: list[int]) -> str:
    """``24`` or ``562 to 840``; ``none`` for no days."""
    if not counts:
        return "none"
    low, high = min(counts), max(counts)
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"


def _days(n: int) -> str:
    return f"{n} day{'' if n == 1 else 's'}"


def volume(profile: TableProfile, c: ColumnProfile) -> Volume | None:
    """The daily volume check of ``c``: only when yesterday (UTC), the day tested, has rows.

    Its test is made here as the check will make it (``checks.declared.anomaly.judge``
    with ``VOLUME``'s rule, over the lookback's days before it): an anomaly
    already is a problem the output names.
    """
    daily = profile.daily.get(c.name)
    day = profile.at.date() - dt.timedelta(days=1)
    yesterday = day.isoformat()
    if c.family == "date" or not daily or yesterday not in daily:
        return None
    tested = daily[yesterday]
    first = first_full_day(c, daily) or day
    history = max(0, min(LOOKBACK_DAYS, (day - first).days))
    over = {"column": c.name, "bucket": "day"}
    since = f"{c.name}'s first full day {first.isoformat()}"
    if history < MIN_HISTORY:
        ready = first + dt.timedelta(days=MIN_HISTORY + 1)
        note = (
            f"{profile.name}.{c.name}: {_days(history)} of history before {yesterday} (since"
            f" {since}), fewer than the {MIN_HISTORY} an anomaly needs: rows every day"
            f" suggested; lookout suggest on {ready.isoformat()} or later suggests the anomaly"
        )
        return Volume(
            {
                "row_count": {"table": profile.name},
                "over": {**over, "lookback": "1d"},
                "expect": EVERY_DAY,
            },
            f"{tested:,} rows on {yesterday} by {c.name}; {_days(history)} of history before:"
            " too few for an anomaly",
            note=note,
        )
    days = [day - dt.timedelta(days=history - i) for i in range(history)]
    before = [Point(_midnight(d), float(daily.get(d.isoformat(), 0))) for d in days]
    rule = rule_from_mapping(None)  # VOLUME: every default
    found, passed, _ = judge(rule, float(tested), _midnight(day), before, source="buckets")
    problem = None
    if passed is False:
        problem = f"{profile.name}: {tested:,} rows on {yesterday} by {c.name}: {describe(found)}"
    counts = [int(p.value) for p in before if p.value]
    shorter: str | None = None
    if history < LOOKBACK_DAYS:
        shorter = (
            f"{profile.name}.{c.name}: lookback {history}d, not {LOOKBACK_DAYS}d: the days"
            f" before {since} had no rows yet, and would count as 0"
        )
    return Volume(
        {
            "row_count": {"table": profile.name},
            "over": {**over, "lookback": f"{history}d"},
            "expect": VOLUME,
        },
        f"{tested:,} rows on {yesterday} by {c.name}; {_spread(counts)} a day on the"
        f" {len(counts)} day{'' if len(counts) == 1 else 's'} with rows before",
        problem,
        shorter,
    )
