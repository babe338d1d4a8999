"""The time buckets of an ``over:`` check: which ones, their boundaries, and their SQL.

At the run's slot time ``now``, in the automation's time zone:

- the **filling** bucket is the one holding ``now`` (today, this hour, this
  week from Monday): it is still filling and is never tested; the report says
  so, with its count so far;
- the **tested** bucket is the one just before it: the latest complete one;
- the **baseline** is the ``lookback`` / ``bucket`` buckets before that.

Boundaries are local wall-clock times: a day is midnight to midnight in the
automation's zone (23 or 25 hours across a DST change), a week starts on
Monday. Hourly buckets are local hours too, so the repeated autumn hour holds
two hours of data and the skipped spring hour is not a bucket.

The grouped query reads only ``[first baseline start, end of the filling
bucket)`` of the column (a range on the column itself, so an index on it
serves) and groups by the bucket's local start, computed in the database:
``date_trunc(bucket, column AT TIME ZONE zone)`` for a timestamp with a zone;
a timestamp without one is first read in ``over.timezone`` (default UTC); a
date is its own day. A bucket the query returns no row for had no rows: its
counts are 0.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sqlglot import exp

from checks.automation.time_buckets import Over
from checks.errors import CheckDefinitionError

BUCKET = "bucket"
"""The name of the bucket's local start in the grouped query's result."""


@dataclass(frozen=True)
class Window:
    """The buckets of one run, oldest first: the baseline, then the tested, then the filling one.

    Attributes:
        bucket: ``hour``, ``day`` or ``week``.
        zone: the automation's time zone.
        starts: each bucket's start, zone-aware in ``zone``.
        end: the end of the filling bucket (exclusive), zone-aware.
    """

    bucket: str
    zone: str
    starts: tuple[dt.datetime, ...]
    end: dt.datetime

    @property
    def tested(self) -> dt.datetime:
        """The start of the tested bucket (the latest complete one)."""
        return self.starts[-2]

    @property
    def filling(self) -> dt.datetime:
        """The start of the bucket still filling."""
        return self.starts[-1]

    @property
    def baseline(self) -> tuple[dt.datetime, ...]:
        """The starts of the baseline buckets."""
        return self.starts[:-2]

    @staticmethod
    def key(start: dt.datetime) -> dt.datetime:
        """A bucket's start as the query returns it: local wall-clock time, without a zone."""
        return start.replace(tzinfo=None)


def window(over: Over, zone: str, now: dt.datetime) -> Window:
    """The buckets of a run at ``now`` (zone-aware) in the automation's ``zone``."""
    where = ZoneInfo(zone)
    local = now.astimezone(where)
    count = over.baseline_buckets + 2
    if over.bucket == "hour":
        current = dt.datetime.combine(local.date(), dt.time(local.hour), tzinfo=where)
        # step back in real hours; a repeated local hour is one bucket, starting at its first
        by_key: dict[dt.datetime, dt.datetime] = {}
        instant = current.astimezone(dt.UTC)
        while True:
            start = instant.astimezone(where).replace(minute=0, second=0, microsecond=0)
            if Window.key(start) not in by_key and len(by_key) == count:
                break
            by_key[Window.key(start)] = start
            instant -= dt.timedelta(hours=1)
        starts = [by_key[key] for key in sorted(by_key)]
        end = current + dt.timedelta(hours=1)
        return Window(over.bucket, zone, tuple(starts), end.astimezone(where))
    day = local.date()
    step = 1 if over.bucket == "day" else 7
    if over.bucket == "week":
        day -= dt.timedelta(days=day.weekday())
    days = [day - dt.timedelta(days=step * i) for i in reversed(range(count))]
    starts = [_local(dt.datetime.combine(d, dt.time()), where) for d in days]
    end = _local(dt.datetime.combine(day + dt.timedelta(days=step), dt.time()), where)
    return Window(over.bucket, zone, tuple(starts), end)


def _local(wall: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """A local wall-clock time in ``zone`` (one in a DST gap moves forward, as clocks do)."""
    return wall.replace(tzinfo=zone).astimezone(dt.UTC).astimezone(zone)


@dataclass(frozen=True)
class BucketSql:
    """The pieces of an ``over:`` query: the bucket key, and the ranges read.

    Attributes:
        key: the bucket's local start (a ``TIMESTAMP`` without zone).
        window: the condition keeping the whole window's rows.
        tested: the condition keeping only the tested bucket's rows (the sample).
    """

    key: exp.Expr
    window: exp.Expr
    tested: exp.Expr


def bucket_sql(
    over: Over, found: Window, column: exp.Column, family: str | None, name: str
) -> BucketSql:
    """Build the bucket key and ranges for a column of type ``family`` (``checks.sql.types``).

    Raises:
        CheckDefinitionError: the column is not a date or timestamp, or hourly
            buckets over a date.
    """
    at = "over.column"
    zone = exp.Literal.string(found.zone)
    timestamp = exp.DataType.build("TIMESTAMP")
    if family == "timestamptz":
        # Every source's session is pinned to UTC: there an instant is already its UTC
        # wall-clock time (and MySQL, which has no AT TIME ZONE, can cut UTC buckets).
        local: exp.Expr = column.copy()
        if found.zone != "UTC":
            local = exp.AtTimeZone(this=column.copy(), zone=zone)
    elif family == "timestamp":
        local = column.copy()
        if over.timezone != found.zone:
            written = exp.AtTimeZone(this=column.copy(), zone=exp.Literal.string(over.timezone))
            local = exp.AtTimeZone(this=written, zone=zone)
    elif family == "date":
        if over.bucket == "hour":
            raise CheckDefinitionError(
                f"{name} is a date: it has no hours; use bucket: day or week", field=at
            )
        local = exp.Cast(this=column.copy(), to=timestamp)
    else:
        raise CheckDefinitionError(
            f"{name} is not a date or a timestamp; over: needs a time column", field=at
        )
    key = exp.Cast(
        this=exp.func("date_trunc", exp.Literal.string(over.bucket), local), to=timestamp
    )

    def bound(instant: dt.datetime) -> exp.Expr:
        if family == "timestamptz":
            return _literal(instant.astimezone(dt.UTC), "TIMESTAMPTZ")
        if family == "date":
            return exp.Cast(
                this=exp.Literal.string(instant.date().isoformat()),
                to=exp.DataType.build("DATE"),
            )
        written = instant.astimezone(ZoneInfo(over.timezone)).replace(tzinfo=None)
        return _literal(written, "TIMESTAMP")

    def between(start: dt.datetime, end: dt.datetime) -> exp.Expr:
        return exp.and_(
            exp.GTE(this=column.copy(), expression=bound(start)),
            exp.LT(this=column.copy(), expression=bound(end)),
        )

    return BucketSql(
        key=key,
        window=between(found.starts[0], found.end),
        tested=between(found.tested, found.filling),
    )


def _literal(value: dt.datetime, to: str) -> exp.Expr:
    return exp.Cast(this=exp.Literal.string(value.isoformat(sep=" ")), to=exp.DataType.build(to))


def by_bucket(
    columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]]
) -> dict[dt.datetime, dict[str, Any]]:
    """The grouped result by bucket key (local start), each row as ``{metric: value}``.

    A row whose bucket is not a timestamp (NULL: the column was NULL, and
    only when the window's range let it through) is left out.
    """
    found: dict[dt.datetime, dict[str, Any]] = {}
    for row in rows:
        cells = dict(zip(columns, row, strict=True))
        key = cells.pop(BUCKET, None)
        if isinstance(key, dt.datetime):
            found[key.replace(tzinfo=None)] = cells
        elif isinstance(key, dt.date):
            found[dt.datetime.combine(key, dt.time())] = cells
    return found
