"""Each typed kind's queries as sqlglot trees: its counts in one pass, a sample of its violations.

``_Compiler`` builds one typed check's two queries over its scope (the table
after ``filter:``), as ``checks.declared.compile`` describes them; names are
resolved against the catalog and a filter parsed as one condition
(``checks.declared.catalog_names``), values written as literals
(``literal``). ``compile_check`` (``checks.declared.compile``) keeps what it
builds per process.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlglot import exp

from checks.automation.check_kinds import (
    AcceptedValues,
    Duplicates,
    Freshness,
    Kind,
    Missing,
    Range,
    Relationships,
    RowCount,
    Schema,
)
from checks.automation.time_buckets import Over
from checks.declared.buckets import BUCKET, BucketSql, Window, bucket_sql
from checks.declared.catalog_names import parse_filter, resolve_column, resolve_table
from checks.errors import CheckDefinitionError
from checks.sources.base import Column, DataSet
from checks.sql.types import family

ROWS = "rows"
"""Name of the per-value row count in value samples (``accepted_values``, …)."""

_ORDERABLE = frozenset({"integer", "decimal", "float", "text", "boolean", "date", "timestamp"})
_ORDER_COLUMNS = 5


@dataclass(frozen=True)
class Compiled:
    """One typed check as SQL.

    Attributes:
        counts_sql: the one-row counts query; its columns are the metric names.
        sample_sql: the violating rows' sample (``LIMIT sample_rows``), or None.
        scope: the scope in words, e.g. ``orders where name = 'Diana'``.
        table: the data set read, as the catalog names it.
        column_type: the catalog type of the check's column, when it has one.
    """

    counts_sql: str
    sample_sql: str | None
    scope: str
    table: str
    column_type: str | None = None


def _count_when(condition: exp.Expr) -> exp.Expr:
    return exp.Count(this=exp.Case().when(condition, exp.Literal.number(1)))


def _is_null(column: exp.Expr) -> exp.Expr:
    return exp.Is(this=column.copy(), expression=exp.Null())


def _not_null(column: exp.Expr) -> exp.Expr:
    return exp.Not(this=_is_null(column))


def literal(value: Any, *, as_text: bool = False) -> exp.Expr:
    """A YAML value as a SQL literal; ``as_text`` writes numbers as text (a text column)."""
    if isinstance(value, bool):
        return exp.Literal.string(str(value).lower()) if as_text else exp.Boolean(this=value)
    if isinstance(value, int | float | Decimal):
        text = repr(value) if isinstance(value, float) else str(value)
        return exp.Literal.string(text) if as_text else exp.Literal.number(text)
    if isinstance(value, dt.datetime):
        to = "TIMESTAMPTZ" if value.tzinfo else "TIMESTAMP"
        return exp.Cast(
            this=exp.Literal.string(value.isoformat(sep=" ")), to=exp.DataType.build(to)
        )
    if isinstance(value, dt.date):
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))
    return exp.Literal.string(str(value))


class _Compiler:
    """Builds one typed check's counts and sample queries (``compile``) in a dialect."""

    def __init__(
        self,
        spec: Kind,
        catalog: Sequence[DataSet],
        dialect: str,
        limit: int,
        over: Over | None = None,
        buckets: Window | None = None,
    ) -> None:
        self.spec = spec
        self.dialect = dialect
        self.limit = limit
        self.at = spec.KIND
        self.data_set = resolve_table(spec.table, catalog, f"{self.at}.table")
        self.catalog = catalog
        self.where = (
            parse_filter(spec.filter, dialect, f"{self.at}.filter") if spec.filter else None
        )
        self.buckets: BucketSql | None = None
        if over is not None and buckets is not None:
            time = resolve_column(self.data_set, over.column, "over.column")
            self.buckets = bucket_sql(
                over, buckets, self.col(time.name), family(time.type, dialect), time.name
            )

    def source(self, alias: str = "t", data_set: DataSet | None = None) -> exp.Table:
        name = (data_set or self.data_set).name
        return exp.Table(
            this=exp.to_identifier(name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(alias)),
        )

    def col(self, name: str, table: str = "t") -> exp.Column:
        return exp.column(name, table=table, quoted=True)

    def column(self, name: str, field: str = "column") -> Column:
        return resolve_column(self.data_set, name, f"{self.at}.{field}")

    def scoped(
        self, *projections: exp.Expr, extra: exp.Expr | None = None, sample: bool = False
    ) -> exp.Select:
        query = exp.select(*projections).from_(self.source())
        conditions = [c for c in (self.where, extra) if c is not None]
        if self.buckets is not None:
            conditions.append(self.buckets.tested if sample else self.buckets.window)
        if conditions:
            query = query.where(exp.and_(*(exp.paren(c.copy()) for c in conditions)))
        return query

    def sql(self, tree: exp.Expr) -> str:
        return tree.sql(dialect=self.dialect)

    def scope_text(self) -> str:
        if not self.spec.filter:
            return self.data_set.name
        return f"{self.data_set.name} where {' '.join(self.spec.filter.split())}"

    def row_order(self, first: str | None) -> list[exp.Expr]:
        """Columns that order a row sample the same way every run (orderable types only)."""
        names = [first] if first else []
        for column in self.data_set.columns:
            if len(names) >= _ORDER_COLUMNS:
                break
            if column.name not in names and family(column.type, self.dialect) in _ORDERABLE:
                names.append(column.name)
        return [self.col(name) for name in names]

    def row_sample(self, violation: exp.Expr, first: str | None) -> str:
        query = self.scoped(exp.Star(), extra=violation, sample=True)
        order = self.row_order(first)
        if order:
            query = query.order_by(*order)
        return self.sql(query.limit(self.limit))

    def value_sample(self, value: exp.Expr, name: str, violation: exp.Expr) -> str:
        rows = exp.Count(this=exp.Star())
        query = (
            self.scoped(
                exp.alias_(value.copy(), name, quoted=True),
                exp.alias_(rows, ROWS, quoted=True),
                extra=violation,
                sample=True,
            )
            .group_by(value.copy())
            .order_by(exp.Ordered(this=rows.copy(), desc=True), value.copy())
            .limit(self.limit)
        )
        return self.sql(query)

    def done(self, counts: exp.Select, sample: str | None, column: Column | None) -> Compiled:
        if self.buckets is not None:
            key = self.buckets.key
            counts = counts.select(exp.alias_(key.copy(), BUCKET), append=True)
            counts = counts.group_by(key.copy()).order_by(key.copy())
        return Compiled(
            self.sql(counts),
            sample,
            self.scope_text(),
            self.data_set.name,
            column.type if column else None,
        )

    def compile(self) -> Compiled:
        spec = self.spec
        in_scope = exp.alias_(exp.Count(this=exp.Star()), "rows_in_scope")
        if isinstance(spec, RowCount | Schema):
            return self.done(self.scoped(in_scope), None, None)
        if isinstance(spec, Missing):
            return self.missing(spec, in_scope)
        if isinstance(spec, Duplicates):
            return self.duplicates(spec)
        if isinstance(spec, AcceptedValues):
            return self.accepted_values(spec, in_scope)
        if isinstance(spec, Relationships):
            return self.relationships(spec, in_scope)
        if isinstance(spec, Freshness):
            return self.freshness(spec, in_scope)
        if isinstance(spec, Range):
            return self.range(spec, in_scope)
        raise CheckDefinitionError(f"{spec.KIND} cannot be compiled", field=self.at)

    def missing(self, spec: Missing, in_scope: exp.Expr) -> Compiled:
        column = self.column(spec.column)
        ref = self.col(column.name)
        text = family(column.type, self.dialect) == "text"
        missing: exp.Expr = _is_null(ref)
        if spec.missing_values:
            listed = [literal(v, as_text=text) for v in spec.missing_values]
            missing = exp.or_(missing, exp.In(this=ref.copy(), expressions=listed))
        counts = self.scoped(in_scope, exp.alias_(_count_when(missing), "missing"))
        return self.done(counts, self.row_sample(missing, None), column)

    def duplicates(self, spec: Duplicates) -> Compiled:
        keys = [self.column(name, f"columns.{i}") for i, name in enumerate(spec.columns)]
        refs = [self.col(k.name) for k in keys]
        aliases = [f"key_{i}" for i in range(1, len(keys) + 1)]
        grouped = self.scoped(
            *(exp.alias_(r, a) for r, a in zip(refs, aliases, strict=True)),
            exp.alias_(exp.Count(this=exp.Star()), "group_rows"),
        ).group_by(*(r.copy() for r in refs))
        n = exp.column("group_rows")
        any_null = exp.or_(*(_is_null(exp.column(a)) for a in aliases))
        repeated: exp.Expr = exp.GT(this=n.copy(), expression=exp.Literal.number(1))
        if spec.nulls == "distinct":
            repeated = exp.and_(repeated, exp.Not(this=exp.paren(any_null.copy())))

        def total(expression: exp.Expr, condition: exp.Expr | None = None) -> exp.Expr:
            summed = expression if condition is None else exp.Case().when(condition, expression)
            return exp.Coalesce(this=exp.Sum(this=summed), expressions=[exp.Literal.number(0)])

        counts = exp.select(
            exp.alias_(total(n.copy()), "rows_in_scope"),
            exp.alias_(_count_when(repeated.copy()), "duplicate_groups"),
            exp.alias_(
                total(exp.Sub(this=n.copy(), expression=exp.Literal.number(1)), repeated.copy()),
                "surplus_rows",
            ),
            exp.alias_(total(n.copy(), repeated.copy()), "rows_in_duplicate_groups"),
            exp.alias_(total(n.copy(), any_null.copy()), "rows_with_null_key"),
        ).from_(grouped.subquery("keyed"))
        rows = exp.Count(this=exp.Star())
        having: exp.Expr = exp.GT(this=rows.copy(), expression=exp.Literal.number(1))
        if spec.nulls == "distinct":
            having = exp.and_(having, *(_not_null(r) for r in refs))
        sample = (
            self.scoped(
                *(
                    exp.alias_(r.copy(), k.name, quoted=True)
                    for r, k in zip(refs, keys, strict=True)
                ),
                exp.alias_(rows, ROWS, quoted=True),
            )
            .group_by(*(r.copy() for r in refs))
            .having(having)
            .order_by(exp.Ordered(this=rows.copy(), desc=True), *(r.copy() for r in refs))
            .limit(self.limit)
        )
        return self.done(counts, self.sql(sample), None)

    def accepted_values(self, spec: AcceptedValues, in_scope: exp.Expr) -> Compiled:
        column = self.column(spec.column)
        ref = self.col(column.name)
        text = family(column.type, self.dialect) == "text"
        listed = [literal(v, as_text=text) for v in spec.values]
        invalid = exp.and_(
            _not_null(ref), exp.Not(this=exp.In(this=ref.copy(), expressions=listed))
        )
        counts = self.scoped(
            in_scope,
            exp.alias_(_count_when(invalid), "invalid_values"),
            exp.alias_(_count_when(_is_null(ref)), "null_values"),
            exp.alias_(
                exp.Count(
                    this=exp.Distinct(expressions=[exp.Case().when(invalid.copy(), ref.copy())])
                ),
                "distinct_invalid_values",
            ),
        )
        violation = invalid if spec.null == "allowed" else exp.or_(_is_null(ref), invalid.copy())
        return self.done(counts, self.value_sample(ref, column.name, violation), column)

    def relationships(self, spec: Relationships, in_scope: exp.Expr) -> Compiled:
        column = self.column(spec.column)
        parent = resolve_table(spec.to_table, self.catalog, f"{self.at}.to")
        target = resolve_column(parent, spec.to_column, f"{self.at}.to")
        ref = self.col(column.name)
        match = (
            exp.select(exp.Literal.number(1))
            .from_(self.source("p", parent))
            .where(exp.EQ(this=self.col(target.name, "p"), expression=ref.copy()))
        )
        orphan = exp.and_(_not_null(ref), exp.Not(this=exp.Exists(this=match)))
        counts = self.scoped(
            in_scope,
            exp.alias_(_count_when(orphan), "orphans"),
            exp.alias_(
                exp.Count(
                    this=exp.Distinct(expressions=[exp.Case().when(orphan.copy(), ref.copy())])
                ),
                "orphan_keys",
            ),
            exp.alias_(_count_when(_is_null(ref)), "null_keys"),
        )
        return self.done(counts, self.value_sample(ref, column.name, orphan.copy()), column)

    def freshness(self, spec: Freshness, in_scope: exp.Expr) -> Compiled:
        column = self.column(spec.column)
        ref = self.col(column.name)
        counts = self.scoped(
            in_scope,
            exp.alias_(exp.Count(this=ref.copy()), "rows_with_value"),
            exp.alias_(exp.Max(this=ref.copy()), "latest"),
        )
        return self.done(counts, None, column)

    def range(self, spec: Range, in_scope: exp.Expr) -> Compiled:
        column = self.column(spec.column)
        ref = self.col(column.name)
        below = (
            exp.LT(this=ref.copy(), expression=literal(spec.min)) if spec.min is not None else None
        )
        above = (
            exp.GT(this=ref.copy(), expression=literal(spec.max)) if spec.max is not None else None
        )
        projections = [in_scope]
        projections.append(
            exp.alias_(_count_when(below) if below else exp.Literal.number(0), "below_min")
        )
        projections.append(
            exp.alias_(_count_when(above) if above else exp.Literal.number(0), "above_max")
        )
        projections.append(exp.alias_(_count_when(_is_null(ref)), "null_values"))
        counts = self.scoped(*projections)
        outside: list[exp.Expr] = [c.copy() for c in (below, above) if c is not None]
        if spec.null == "violation":
            outside.append(_is_null(ref))
        violation = exp.or_(*outside) if len(outside) > 1 else outside[0]
        return self.done(counts, self.row_sample(violation, column.name), column)
