"""``freshness``: how long ago the newest ``column`` value in scope is.

::

    freshness: {table, column, max_age, timezone?, future_tolerance?, filter?}
                                                                 expect "<= max_age"

NULL rule: NULL timestamps are ignored; a scope holding only NULLs is not
evaluated. A timestamp without a time zone is read in ``timezone`` (default
UTC); a date is its midnight there; a zone-aware column's values are instants,
even when its driver hands them over without their zone (MySQL's ``TIMESTAMP``,
read in the session's UTC). A newest value more than
``future_tolerance`` (default 5 minutes: clocks differ a little) ahead of now
fails the check, whatever ``expect`` says: a row mistyped a year ahead, or a
local time read as UTC, would otherwise make a table look fresh for ever.
Metrics: ``rows_in_scope``, ``rows_with_value``, ``latest`` (ISO 8601, UTC),
``age_s`` (negative: in the future), and, only when the newest value is past
the tolerance, ``future_rows``: the rows past it, counted by one more query.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator
from sqlglot import exp

from checks.errors import QueryError, SourceError
from checks.fields.expectation import Unit, duration_text
from checks.fields.judgement import Judgement, failure, judge_duration
from checks.fields.rules import DurationS, time_zone
from checks.fields.value_words import describe
from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope
from checks.kinds.in_words import duration, metric, rows
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count
from checks.report import CheckResult, Metrics
from checks.sql.types import TEMPORAL_FAMILIES, family


class Freshness(OneColumn):
    """``freshness``: how long ago the newest ``column`` value in scope is."""

    KIND: ClassVar[str] = "freshness"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"duration"})
    COMPARED: ClassVar[str] = "age_s"

    max_age_s: DurationS | None = Field(default=None, alias="max_age")
    timezone: str | None = None
    future_tolerance_s: DurationS = Field(default=300.0, alias="future_tolerance")

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        return None if value is None else time_zone(value)

    def default_expect(self) -> str:
        """``<= max_age``."""
        if self.max_age_s is None:
            raise ValueError("freshness needs max_age (or an expect such as '< 3h')")
        return f"<= {duration_text(Decimal(repr(self.max_age_s)))}"

    def expect_conflict(self) -> str | None:
        """``max_age`` is an ``expect`` already."""
        if self.max_age_s is None:
            return None
        return "give max_age or expect, not both: max_age is the same as expect '<= max_age'"

    def sql(self, scope: Scope) -> Compiled:
        """Rows with a value and the newest; no sample."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        counts = scope.scoped(
            in_scope(),
            exp.alias_(count(ref.copy()), "rows_with_value"),
            exp.alias_(exp.Max(this=ref.copy()), "latest"),
        )
        return scope.done(counts, None, column)

    def judged(self, counts: Counts) -> Judged:
        """The newest value's age, from the clock, against ``expect``."""
        metrics = counts.metrics
        metrics["compared"] = self.compared
        metrics.update(latest=None, age_s=None)
        if counts.in_scope == 0:
            return Judged(Judgement(value=None, passed=True))
        latest: Any = counts.row.get("latest")
        if isinstance(latest, dt.datetime) and latest.tzinfo is None and self._zoned(counts):
            latest = latest.replace(tzinfo=dt.UTC)  # an instant the driver gave without its zone
        if latest is None:
            note = f"{self.column} is NULL in all {counts.in_scope} rows in scope: {counts.scope}"
            return Judged(Judgement(value=None, passed=None, not_evaluated=note))
        zone = ZoneInfo(self.timezone or "UTC")
        if isinstance(latest, str):
            latest = from_text(latest)
        if isinstance(latest, dt.datetime):
            instant = latest if latest.tzinfo else latest.replace(tzinfo=zone)
        elif isinstance(latest, dt.date):
            instant = dt.datetime.combine(latest, dt.time(), tzinfo=zone)
        else:
            return Judged(failure(f"{self.column} holds {describe(latest)}, not a timestamp"))
        now = counts.clock()
        metrics["latest"] = instant.astimezone(dt.UTC).isoformat()
        outcome = judge_duration(counts.expect, now - instant)
        metrics["age_s"] = outcome.value if isinstance(outcome.value, float) else None
        ahead = (instant - now).total_seconds()
        if ahead > self.future_tolerance_s:
            boundary = now + dt.timedelta(seconds=self.future_tolerance_s)
            metrics["future_rows"] = self._future_rows(counts, latest, boundary, zone)
            return Judged(
                Judgement(value=outcome.value, passed=False),
                f"the newest {self.column} is {duration(ahead)} in the future (beyond the"
                f" {duration(self.future_tolerance_s)} tolerance): a mistyped row, or a local"
                " time read as UTC (timezone:)",
            )
        return Judged(outcome)

    def _zoned(self, counts: Counts) -> bool:
        """Whether the column holds instants (``timestamptz``) though its values came naive.

        MySQL's ``TIMESTAMP`` is kept in UTC and read in the session's zone, which every
        source pins to UTC; its driver hands the value over without a zone. Such a value
        is a UTC instant: ``timezone:`` is for columns without one.
        """
        for data_set in counts.source.catalog():
            if data_set.name == counts.table:
                for column in data_set.columns:
                    if column.name.lower() == self.column.lower():
                        return family(column.type, counts.source.dialect) == "timestamptz"
        return False

    def _future_rows(
        self, counts: Counts, latest: dt.date, boundary: dt.datetime, zone: ZoneInfo
    ) -> int | None:
        """Rows in scope past ``boundary``, counted by one more query (None if it fails).

        Run only when the newest value is already in the future: ``boundary`` is
        written in the column's own terms (a date, a local time without zone, or
        an instant), so the count is the database's.
        """
        if isinstance(latest, dt.datetime) and latest.tzinfo is not None:
            at = boundary.astimezone(dt.UTC).isoformat(sep=" ")  # SQLite: as its texts compare
            bound = exp.cast(exp.Literal.string(at), "TIMESTAMPTZ")
        elif isinstance(latest, dt.datetime):
            local = boundary.astimezone(zone).replace(tzinfo=None)
            bound = exp.cast(exp.Literal.string(local.isoformat(sep=" ")), "TIMESTAMP")
        else:
            bound = exp.cast(
                exp.Literal.string(boundary.astimezone(zone).date().isoformat()), "DATE"
            )
        dialect = counts.source.dialect
        if dialect == "sqlite":  # its dates are texts: a CAST to TIMESTAMP would read 2024
            bound = bound.this
        column = exp.column(self.column, quoted=True)
        where: exp.Expr = exp.GT(this=column, expression=bound)
        if self.filter:
            where = exp.and_(exp.paren(exp.condition(self.filter, dialect=dialect)), where)
        table = exp.Table(this=exp.to_identifier(counts.table, quoted=True))
        query = exp.select(count(exp.Star())).from_(table).where(where)
        try:
            result = counts.source.query(query.sql(dialect=dialect), max_rows=1)
        except (QueryError, SourceError):
            return None
        value = result.rows[0][0] if result.rows else None
        return int(value) if isinstance(value, int) else None

    def unmeasured(self, metrics: Metrics) -> None:
        """No newest value, no age."""
        metrics.update(latest=None, age_s=None)

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``newest 2026-12-01 02:00:00 UTC, 3h 12m old`` (or ``… 7h 59m in the future``)."""
        age, latest = result.metrics.get("age_s"), result.metrics.get("latest")
        if isinstance(age, int | float) and latest:
            when = f"newest {str(latest)[:19].replace('T', ' ')} UTC"
            if age < 0:
                return f"{when}, {duration(-age)} in the future"
            return f"{when}, {duration(age)} old"
        return f"{rows(metric(result, 'rows_in_scope'))} in scope"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """Its column must be a date or a timestamp."""
        if have in TEMPORAL_FAMILIES:
            return []
        return [
            (
                ("column",),
                f"{self.column} is {column_type}, not a date or timestamp: freshness needs one",
            )
        ]


def from_text(text: str) -> dt.date | str:
    """A date or date-time an engine keeps as ISO 8601 text (SQLite has no such types).

    ``2024-01-08`` is a date; ``2024-01-10 05:00:00`` a naive date-time;
    ``2024-01-10 01:30:00+00`` one with its offset. Any other text is returned as it is
    (and judged as text, not a timestamp).
    """
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return text
