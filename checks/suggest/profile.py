"""A table's profile: what ``lookout suggest`` observed of it, read through the guarded path.

One aggregate statement reads, per column, its non-NULL count, distinct count,
and (numbers, dates, timestamps) its min and max; a table estimated above
``sampling.SAMPLE_ABOVE`` rows is read on a sample (``checks.suggest.sampling``),
its row count still counted exactly. Then: the values of each low-cardinality
text column (at most ``LOW_CARDINALITY`` distinct), each key candidate
confirmed on the whole table, and the daily volume before the newest value of
each timestamp column. Every statement is a sqlglot tree run by
``Source.query`` (the guard, the source's limits); each is cut to the time left
of the table's budget, and what did not fit is listed in ``skipped``.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from checks.errors import QueryError
from checks.sources.base import Source
from checks.sql.catalog import DataSet
from checks.sql.types import NUMBER_FAMILIES, TEMPORAL_FAMILIES, family
from checks.suggest.sampling import SAMPLE_ABOVE, Sample, plan, sampled_table

LOW_CARDINALITY = 20
"""Most distinct values of a text column listed as its accepted values."""
KEY_FAMILIES = frozenset({"integer", "text", "uuid"})
"""The families a key candidate may have (an amount or a float is not a key)."""
VOLUME_DAYS = 57
"""Days of daily volume read before a timestamp column's newest value."""


@dataclass
class ColumnProfile:
    """One column as observed.

    Attributes:
        name, type: as the catalog has them; ``family`` the type's (``integer``,
            ``text``, … ``checks.sql.types``; None when unknown).
        non_null, distinct: counts over the rows read (the sample, if sampled).
        low, high: min and max for numbers, dates and timestamps; None otherwise.
        values: each value and its rows, for a low-cardinality text column.
        unique: a key candidate: no NULL, every value distinct on the whole table.
    """

    name: str
    type: str
    family: str | None
    non_null: int = 0
    distinct: int = 0
    low: Any = None
    high: Any = None
    values: dict[str, int] | None = None
    unique: bool = False

    def nulls(self, rows: int) -> int:
        """NULLs among ``rows`` read."""
        return rows - self.non_null


@dataclass
class TableProfile:
    """One table as observed at ``at`` (UTC).

    Attributes:
        rows: its exact row count; ``read`` the rows the column counts are of.
        sample: how the rows were read.
        daily: per timestamp column, the rows per UTC day (ISO date → count)
            of the ``VOLUME_DAYS`` days before its newest value.
        skipped: what the time budget left out, in words.
    """

    name: str
    rows: int
    read: int
    sample: Sample
    at: dt.datetime
    columns: list[ColumnProfile]
    daily: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def column(self, name: str) -> ColumnProfile:
        """The profile of column ``name``; KeyError if the table has none."""
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    @property
    def keys(self) -> list[ColumnProfile]:
        """Its key candidates: unique, never NULL."""
        return [c for c in self.columns if c.unique]


def _table(name: str) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name, quoted=True))


def _col(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


class _Budget:
    """The seconds left of a table's time budget, as each query's time limit."""

    def __init__(self, seconds: float, source: Source) -> None:
        self.ends = time.monotonic() + seconds
        self.cap = source.limits.query_timeout_s

    def left(self) -> float:
        return min(self.cap, self.ends - time.monotonic())


def profile_table(
    source: Source,
    data_set: DataSet,
    *,
    budget_s: float,
    now: dt.datetime,
    sample_above: int = SAMPLE_ABOVE,
) -> TableProfile:
    """Profile ``data_set`` of ``source`` within ``budget_s`` seconds.

    ``sample_above``: tables estimated above this many rows are sampled
    (``checks.suggest.sampling``).

    The row count and column aggregates are required; the value lists, key
    confirmations and daily volumes each run if time is left, else they are
    named in ``skipped``.

    Raises:
        QueryError: the row count or the column aggregates failed or timed out.
    """
    budget = _Budget(budget_s, source)
    dialect = source.dialect
    table = _table(data_set.name)
    rows = int(_one(source, exp.select(exp.Count(this=exp.Star())).from_(table), budget)[0])
    estimated = data_set.row_count if data_set.row_count is not None else rows
    percent = plan(estimated, sample_above)
    source_rows, sample = sampled_table(table, percent, dialect, estimated)
    columns = [ColumnProfile(c.name, c.type, family(c.type, dialect)) for c in data_set.columns]
    terms: list[exp.Expr] = [exp.Count(this=exp.Star())]
    for c in columns:
        terms += [
            exp.Count(this=_col(c.name)),
            exp.Count(this=exp.Distinct(expressions=[_col(c.name)])),
        ]
        if _ordered(c):
            terms += [exp.Min(this=_col(c.name)), exp.Max(this=_col(c.name))]
    named = [exp.alias_(t, f"v{i}") for i, t in enumerate(terms)]
    row = list(_one(source, exp.select(*named).from_(source_rows), budget))
    read = int(row.pop(0))
    for c in columns:
        c.non_null, c.distinct = int(row.pop(0)), int(row.pop(0))
        if _ordered(c):
            c.low, c.high = _temporal(c, row.pop(0)), _temporal(c, row.pop(0))
    found = TableProfile(data_set.name, rows, read, sample, now, columns)
    for c in columns:
        _values(source, found, c, budget)
        _unique(source, found, c, budget)
        _daily(source, found, c, budget)
    return found


def _temporal(column: ColumnProfile, value: Any) -> Any:
    """A date or timestamp an engine returns as ISO text (SQLite) read as one; else as it is."""
    if column.family in TEMPORAL_FAMILIES and isinstance(value, str):
        try:
            found = dt.datetime.fromisoformat(value)
        except ValueError:
            return None  # not a time: no bound, no freshness
        return found.date() if column.family == "date" and len(value) <= 10 else found
    return value


def _ordered(column: ColumnProfile) -> bool:
    return column.family in NUMBER_FAMILIES | TEMPORAL_FAMILIES


def _one(source: Source, select: exp.Select, budget: _Budget) -> tuple[Any, ...]:
    left = budget.left()
    if left <= 0:
        raise QueryError("the profile's time budget ran out")
    result = source.query(select.sql(dialect=source.dialect), max_rows=1, timeout_s=left)
    return result.rows[0]


def _values(source: Source, found: TableProfile, c: ColumnProfile, budget: _Budget) -> None:
    """The values of a text column with few distinct values among many rows."""
    if c.family != "text" or not 0 < c.distinct <= LOW_CARDINALITY or c.non_null < 5 * c.distinct:
        return
    select = (
        exp.select(exp.alias_(_col(c.name), "value"), exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(_table(found.name))
        .where(exp.Not(this=exp.Is(this=_col(c.name), expression=exp.Null())))
        .group_by(_col(c.name))
    )
    result = _many(source, select, LOW_CARDINALITY + 1, budget, found, f"{c.name}'s values")
    if result is not None and len(result) <= LOW_CARDINALITY:
        c.values = {str(value): int(n) for value, n in result}


def _unique(source: Source, found: TableProfile, c: ColumnProfile, budget: _Budget) -> None:
    """Whether a column read as all distinct and never NULL is so on the whole table."""
    if found.rows == 0 or c.non_null != found.read or c.distinct != found.read:
        return
    if c.family not in KEY_FAMILIES:
        return
    if found.sample.whole:
        c.unique = True
        return
    distinct = exp.Count(this=exp.Distinct(expressions=[_col(c.name)]))
    select = exp.select(distinct).from_(_table(found.name))
    rows = _many(source, select, 1, budget, found, f"{c.name} as a key")
    c.unique = rows is not None and int(rows[0][0]) == found.rows


def _daily(source: Source, found: TableProfile, c: ColumnProfile, budget: _Budget) -> None:
    """Rows per UTC day over the ``VOLUME_DAYS`` days before the column's newest value."""
    if c.family not in {"timestamp", "timestamptz"} or not isinstance(c.high, dt.datetime):
        return
    newest = c.high if c.high.tzinfo else c.high.replace(tzinfo=dt.UTC)
    start = (newest.astimezone(dt.UTC) - dt.timedelta(days=VOLUME_DAYS)).date()
    kind = "TIMESTAMPTZ" if c.family == "timestamptz" else "TIMESTAMP"
    bound = exp.cast(exp.Literal.string(f"{start.isoformat()} 00:00:00"), kind)
    day = exp.cast(_col(c.name), "DATE")
    select = (
        exp.select(exp.alias_(day, "day"), exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(_table(found.name))
        .where(exp.GTE(this=_col(c.name), expression=bound))
        .group_by(day)
        .order_by(exp.column("day"))
    )
    rows = _many(source, select, VOLUME_DAYS + 2, budget, found, f"{c.name}'s daily volume")
    if rows is not None:
        found.daily[c.name] = {str(d)[:10]: int(n) for d, n in rows}


def _many(
    source: Source,
    select: exp.Select,
    max_rows: int,
    budget: _Budget,
    found: TableProfile,
    what: str,
) -> list[tuple[Any, ...]] | None:
    """Rows of an optional query; None, named in ``skipped``, when out of time or failed."""
    left = budget.left()
    if left <= 0:
        found.skipped.append(f"{what}: the time budget ran out")
        return None
    try:
        return source.query(
            select.sql(dialect=source.dialect), max_rows=max_rows, timeout_s=left
        ).rows
    except QueryError as error:
        found.skipped.append(f"{what}: {error}")
        return None
