"""``duplicates``: rows sharing a key (``columns``) with another row.

::

    duplicates: {table, columns, nulls?, count?, filter?}          expect "== 0"

NULL rule: ``nulls: distinct`` (default, the SQL standard, as a UNIQUE
constraint) never counts a key holding a NULL as a duplicate; ``nulls: equal``
groups NULLs together as GROUP BY does. Rows with a NULL key are counted either
way (``rows_with_null_key``). ``count`` picks the compared metric:
``surplus_rows`` (rows beyond the first of each group, default),
``duplicate_groups`` or ``rows_in_duplicate_groups``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator
from sqlglot import exp

from checks.fields.rules import not_blank
from checks.kinds.base import Compiled, Counts, Judged, Kind, Loc, Scope
from checks.kinds.in_words import metric, rows
from checks.kinds.sql_terms import ROWS, SEGMENT, count, count_when, is_null, not_null, nulls_last
from checks.report import CheckResult


class Duplicates(Kind):
    """``duplicates``: rows sharing a key (``columns``) with another row."""

    KIND: ClassVar[str] = "duplicates"

    columns: list[str] = Field(min_length=1)
    nulls: Literal["distinct", "equal"] = "distinct"
    count: Literal["surplus_rows", "duplicate_groups", "rows_in_duplicate_groups"] = "surplus_rows"

    @field_validator("columns")
    @classmethod
    def _columns(cls, value: list[str]) -> list[str]:
        cleaned = [not_blank(c.strip(), "must name a column") for c in value]
        if len({c.lower() for c in cleaned}) != len(cleaned):
            raise ValueError("a column is listed twice")
        return cleaned

    @property
    def compared(self) -> str:
        """The metric the expectation compares: ``count``."""
        return self.count

    @property
    def columns_used(self) -> list[str]:
        """The key columns."""
        return list(self.columns)

    def sql(self, scope: Scope) -> Compiled:
        """Group by the key, then sum the groups; the sample is the repeated keys."""
        keys = [scope.column(name, f"columns.{i}") for i, name in enumerate(self.columns)]
        refs = [scope.col(k.name) for k in keys]
        aliases = [f"key_{i}" for i in range(1, len(keys) + 1)]
        segments = scope.segment_refs()  # ``by:``: a key is counted within its segment
        grouped = scope.scoped(
            *(exp.alias_(r, a) for r, a in zip(refs, aliases, strict=True)),
            *(exp.alias_(r.copy(), f"{SEGMENT}{i}") for i, r in enumerate(segments, start=1)),
            exp.alias_(count(exp.Star()), "group_rows"),
        ).group_by(*(r.copy() for r in refs), *(r.copy() for r in segments))
        n = exp.column("group_rows")
        any_null = exp.or_(*(is_null(exp.column(a)) for a in aliases))
        repeated: exp.Expr = exp.GT(this=n.copy(), expression=exp.Literal.number(1))
        if self.nulls == "distinct":
            repeated = exp.and_(repeated, exp.Not(this=exp.paren(any_null.copy())))

        def total(expression: exp.Expr, condition: exp.Expr | None = None) -> exp.Expr:
            summed = expression if condition is None else exp.Case().when(condition, expression)
            return exp.Coalesce(this=exp.Sum(this=summed), expressions=[exp.Literal.number(0)])

        counts = exp.select(
            exp.alias_(total(n.copy()), "rows_in_scope"),
            exp.alias_(count_when(repeated.copy()), "duplicate_groups"),
            exp.alias_(
                total(exp.Sub(this=n.copy(), expression=exp.Literal.number(1)), repeated.copy()),
                "surplus_rows",
            ),
            exp.alias_(total(n.copy(), repeated.copy()), "rows_in_duplicate_groups"),
            exp.alias_(total(n.copy(), any_null.copy()), "rows_with_null_key"),
        ).from_(grouped.subquery("keyed"))
        sample = self._sample(scope, refs, [k.name for k in keys])
        return scope.done(counts, sample, None, segments_in="keyed" if segments else None)

    def _sample(self, scope: Scope, refs: list[exp.Column], names: list[str]) -> str:
        rows_held = count(exp.Star())
        segments = [r for r in scope.segment_refs() if r.name not in names]
        refs = [*segments, *refs]  # a key repeated within each failing segment
        names = [*(r.name for r in segments), *names]
        having: exp.Expr = exp.GT(this=rows_held.copy(), expression=exp.Literal.number(1))
        if self.nulls == "distinct":
            having = exp.and_(having, *(not_null(r) for r in refs[len(segments) :]))
        sample = (
            scope.scoped(
                *(exp.alias_(r.copy(), k, quoted=True) for r, k in zip(refs, names, strict=True)),
                exp.alias_(rows_held, ROWS, quoted=True),
                sample=True,  # with ``by:``, the failing segments only
            )
            .group_by(*(r.copy() for r in refs))
            .having(having)
            .order_by(exp.Ordered(this=rows_held.copy(), desc=True), *(nulls_last(r) for r in refs))
            .limit(scope.limit)
        )
        return scope.sql(sample)

    def judged(self, counts: Counts) -> Judged:
        """``count`` against ``expect``; the sample holds the duplicate groups."""
        return counts.judge_compared(self, sample_rows=counts.count("duplicate_groups"))

    def nothing_compared(self, counts: Counts) -> str | None:
        """With ``nulls: distinct``, a key holding a NULL in every row compared nothing."""
        if self.nulls != "distinct" or counts.count("rows_with_null_key") < counts.in_scope:
            return None
        key = ", ".join(self.columns)
        return (
            f"the key ({key}) holds a NULL in all {counts.in_scope} rows in scope: {counts.scope}"
        )

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``2 duplicate groups holding 5 rows (3 surplus) in 1,000 rows``."""
        groups, surplus = metric(result, "duplicate_groups"), metric(result, "surplus_rows")
        within = metric(result, "rows_in_duplicate_groups")
        scope = metric(result, "rows_in_scope")
        return (
            f"{groups:,} duplicate group{'' if groups == 1 else 's'} holding {rows(within)} "
            f"({surplus:,} surplus) in {rows(scope)}"
        )

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """None: any type can be a key."""
        return []
