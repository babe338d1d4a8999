"""What a kind's ``sql`` part builds on and gives: the check's ``Scope`` and its ``Compiled`` SQL.

Both re-exported by ``checks.kinds.base``, where kinds import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from checks.sources.base import Column, DataSet


@dataclass(frozen=True)
class Compiled:
    """One typed check as SQL.

    Attributes:
        counts_sql: the one-row counts query; its columns are the metric names.
        sample_sql: the violating rows' sample (``LIMIT sample_rows``), or None.
        scope: the scope in words, e.g. ``orders where name = 'Diana'``.
        table: the data set read, as the catalog names it.
        column_type: the catalog type of the check's column, when it has one.
        segments: the ``by:`` columns as the catalog names them (none without ``by:``).
    """

    counts_sql: str
    sample_sql: str | None
    scope: str
    table: str
    column_type: str | None = None
    segments: tuple[str, ...] = ()


class Scope(Protocol):
    """A check's scope (its table after ``filter:``) as sqlglot trees, for a kind's ``sql``.

    ``checks.declared.scope_sql.ScopeSql`` is the one implementation: it
    resolves names against the catalog (errors name the field under the kind,
    ``missing.column``), adds an ``over:`` check's buckets and keeps the SQL.
    """

    dialect: str
    limit: int  # the sample's rows

    def column(self, name: str, field: str = "column") -> Column:
        """The check's table's column ``name`` as the catalog names it (error at ``field``)."""
        ...

    def table(self, name: str, field: str) -> DataSet:
        """Another data set of the catalog (``relationships``' parent), error at ``field``."""
        ...

    def column_of(self, data_set: DataSet, name: str, field: str) -> Column:
        """A column of another data set, error at ``field``."""
        ...

    def source(self, alias: str = "t", data_set: DataSet | None = None) -> exp.Table:
        """The check's table (or ``data_set``) as a quoted table with an alias."""
        ...

    def col(self, name: str, table: str = "t") -> exp.Column:
        """A quoted column of the alias ``table``."""
        ...

    def scoped(
        self, *projections: exp.Expr, extra: exp.Expr | None = None, sample: bool = False
    ) -> exp.Select:
        """``SELECT projections FROM table WHERE filter [AND extra]`` (and the buckets)."""
        ...

    def row_sample(self, violation: exp.Expr, first: str | None) -> str:
        """The violating rows, ordered the same way every run, as SQL."""
        ...

    def value_sample(self, value: exp.Expr, name: str, violation: exp.Expr) -> str:
        """The violating values with how many rows hold each, as SQL."""
        ...

    def sql(self, tree: exp.Expr) -> str:
        """A tree as SQL in the dialect."""
        ...

    def segment_refs(self) -> list[exp.Column]:
        """The ``by:`` columns of ``t`` (empty without ``by:``).

        A kind counting in a subquery projects them there, as ``segment_1``….
        """
        ...

    def done(
        self,
        counts: exp.Select,
        sample: str | None,
        column: Column | None,
        segments_in: str | None = None,
    ) -> Compiled:
        """The counts query (grouped per bucket with ``over:``, per segment with ``by:``), kept.

        ``segments_in``: the subquery of ``counts`` that projects the segment columns.
        """
        ...
