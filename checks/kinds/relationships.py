"""``relationships``: rows whose key has no match in ``to`` (``table.column``).

::

    relationships: {table, column, to: table.column, filter?}          expect "== 0"

NULL rule: a NULL key points at nothing and is no orphan; it is counted as
``null_keys``. Orphans are counted with a LEFT JOIN to the parent's distinct
keys (an anti-join: bench/README.md, Shared scans, has the measurements) and
sampled with NOT EXISTS, never NOT IN (which finds nothing once the parent
column holds a NULL). Metrics: ``rows_in_scope``,
``orphans``, ``orphan_keys`` (distinct), ``null_keys``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import field_validator
from sqlglot import exp

from checks.fields.yaml_messages import shown
from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope
from checks.kinds.in_words import metric, rows
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_distinct_when, count_when, is_null, not_null
from checks.report import CheckResult

_TO = re.compile(r"\s*([^.\s]+)\s*\.\s*([^.\s]+)\s*")
PARENT_KEY = "lookout_parent_key"
"""The parent's key in the counts' join: a name no ``filter:`` is likely to use unqualified."""


class Relationships(OneColumn):
    """``relationships``: rows whose key has no match in ``to`` (``table.column``)."""

    KIND: ClassVar[str] = "relationships"
    COMPARED: ClassVar[str] = "orphans"
    OVER: ClassVar[bool] = True

    to: str

    @field_validator("to")
    @classmethod
    def _to(cls, value: str) -> str:
        if not _TO.fullmatch(value):
            raise ValueError(
                f"'to' is the parent table and column as table.column (got {shown(value)})"
            )
        return value

    @property
    def to_table(self) -> str:
        """The parent table."""
        match = _TO.fullmatch(self.to)
        assert match is not None  # checked when loaded
        return match.group(1)

    @property
    def to_column(self) -> str:
        """The parent column."""
        match = _TO.fullmatch(self.to)
        assert match is not None
        return match.group(2)

    def tables_read(self) -> dict[str, list[str]]:
        """The table and the parent table, with the column read of each."""
        named = super().tables_read()
        named.setdefault(self.to_table, []).append(self.to_column)
        return named

    def sql(self, scope: Scope) -> Compiled:
        """Orphans by NOT EXISTS; the sample is the orphan keys."""
        column = scope.column(self.column)
        parent = scope.table(self.to_table, f"{self.KIND}.to")
        target = scope.column_of(parent, self.to_column, f"{self.KIND}.to")
        ref = scope.col(column.name)
        match = (
            exp.select(exp.Literal.number(1))
            .from_(scope.source("p", parent))
            .where(exp.EQ(this=scope.col(target.name, "p"), expression=ref.copy()))
        )
        orphan = exp.and_(not_null(ref), exp.Not(this=exp.Exists(this=match)))
        # The counts join the parent's distinct keys (at most one match a row, so no
        # row is counted twice): an anti-join each engine plans as a hash join on the
        # parent, where NOT EXISTS inside a CASE may materialise every child key.
        keys = (
            exp.select(exp.alias_(scope.col(target.name, "p"), PARENT_KEY))
            .distinct()
            .from_(scope.source("p", parent))
        )
        matched = exp.column(PARENT_KEY, table="p")
        unmatched = exp.and_(not_null(ref), is_null(matched))
        counts = scope.scoped(
            in_scope(),
            exp.alias_(count_when(unmatched), "orphans"),
            exp.alias_(count_distinct_when(unmatched, ref), "orphan_keys"),
            exp.alias_(count_when(is_null(ref)), "null_keys"),
        ).join(
            keys.subquery("p"),
            on=exp.EQ(this=matched.copy(), expression=ref.copy()),
            join_type="LEFT",
        )
        return scope.done(counts, scope.value_sample(ref, column.name, orphan.copy()), column)

    def judged(self, counts: Counts) -> Judged:
        """``orphans`` against ``expect``; the sample holds the orphan keys."""
        return counts.judge_compared(self, sample_rows=counts.count("orphan_keys"))

    def nothing_compared(self, counts: Counts) -> str | None:
        """A key NULL in every row pointed at nothing: nothing compared."""
        if counts.count("null_keys") < counts.in_scope:
            return None
        return f"{self.column} is NULL in all {counts.in_scope} rows in scope: {counts.scope}"

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``3 rows with no match (2 distinct keys), 1 NULL key skipped, in 1,000 rows``."""
        orphans, keys = metric(result, "orphans"), metric(result, "orphan_keys")
        nulls = metric(result, "null_keys")
        return (
            f"{rows(orphans)} with no match ({keys:,} distinct key{'' if keys == 1 else 's'}),"
            f" {nulls:,} NULL key{'' if nulls == 1 else 's'} skipped,"
            f" in {rows(metric(result, 'rows_in_scope'))}"
        )

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """None: the database compares the key with its parent's."""
        return []
