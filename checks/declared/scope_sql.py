"""A typed check's scope as sqlglot trees: the table after ``filter:``, and ``over:``'s buckets.

``ScopeSql`` is the ``checks.kinds.base.Scope`` each kind builds its two
queries on (``Kind.sql``), as ``checks.declared.compile`` describes them:
names are resolved against the catalog and a filter parsed as one condition
(``checks.declared.catalog_names``), identifiers quoted; with ``over:`` the
counts are grouped per bucket and the sample reads the tested bucket only.
``compile_check`` (``checks.declared.compile``) keeps what it builds per process.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from checks.automation.time_buckets import Over
from checks.declared.buckets import BUCKET, BucketSql, Window, bucket_sql
from checks.declared.catalog_names import parse_filter, resolve_column, resolve_table
from checks.kinds.base import Compiled, Kind
from checks.kinds.sql_terms import ROWS
from checks.sources.base import Column, DataSet
from checks.sql.types import family

_ORDERABLE = frozenset({"integer", "decimal", "float", "text", "boolean", "date", "timestamp"})
_ORDER_COLUMNS = 5


class ScopeSql:
    """One typed check's scope in a dialect; ``compile`` has its kind build its queries."""

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

    def compile(self) -> Compiled:
        """The kind's counts and sample queries over this scope."""
        return self.spec.sql(self)

    def table(self, name: str, field: str) -> DataSet:
        """A data set of the catalog (error at ``field``, with the closest name)."""
        return resolve_table(name, self.catalog, field)

    def column_of(self, data_set: DataSet, name: str, field: str) -> Column:
        """A column of ``data_set`` (error at ``field``, with the closest name)."""
        return resolve_column(data_set, name, field)

    def source(self, alias: str = "t", data_set: DataSet | None = None) -> exp.Table:
        """The check's table (or ``data_set``) as a quoted table with an alias."""
        name = (data_set or self.data_set).name
        return exp.Table(
            this=exp.to_identifier(name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(alias)),
        )

    def col(self, name: str, table: str = "t") -> exp.Column:
        """A quoted column of the alias ``table``."""
        return exp.column(name, table=table, quoted=True)

    def column(self, name: str, field: str = "column") -> Column:
        """The check's table's column ``name`` (error at ``<kind>.<field>``)."""
        return resolve_column(self.data_set, name, f"{self.at}.{field}")

    def scoped(
        self, *projections: exp.Expr, extra: exp.Expr | None = None, sample: bool = False
    ) -> exp.Select:
        """``SELECT projections FROM table WHERE filter [AND extra]`` and the buckets' range."""
        query = exp.select(*projections).from_(self.source())
        conditions = [c for c in (self.where, extra) if c is not None]
        if self.buckets is not None:
            conditions.append(self.buckets.tested if sample else self.buckets.window)
        if conditions:
            query = query.where(exp.and_(*(exp.paren(c.copy()) for c in conditions)))
        return query

    def sql(self, tree: exp.Expr) -> str:
        """A tree as SQL in the dialect, NULLs sorted last on every engine (``nulls_last``)."""
        return nulls_last(tree).sql(dialect=self.dialect)

    def scope_text(self) -> str:
        """The scope in words: ``orders where status = 'paid'``."""
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
        """The violating rows, ordered the same way every run, as SQL."""
        query = self.scoped(exp.Star(), extra=violation, sample=True)
        order = self.row_order(first)
        if order:
            query = query.order_by(*order)
        return self.sql(query.limit(self.limit))

    def value_sample(self, value: exp.Expr, name: str, violation: exp.Expr) -> str:
        """The violating values with how many rows hold each, most first, as SQL."""
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
        """The counts query (grouped per bucket with ``over:``) and the sample, as SQL."""
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


def nulls_last(tree: exp.Expr) -> exp.Expr:
    """A copy of ``tree`` whose every ORDER BY item sorts its NULLs last, said explicitly.

    A bare ``ORDER BY x`` puts NULLs where each engine does: last in DuckDB and
    PostgreSQL, first in Spark and MySQL. Marking each item ``nulls_first=False``
    lets sqlglot write what that dialect needs (``NULLS LAST``, or nothing where it
    is the default), so a sample lists the same rows in the same order everywhere.
    """

    def mark(node: exp.Expr) -> exp.Expr:
        if isinstance(node.parent, exp.Order) and node.arg_key == "expressions":
            if not isinstance(node, exp.Ordered):
                return exp.Ordered(this=node, nulls_first=False)
            if node.args.get("nulls_first") is None:
                node.set("nulls_first", False)
        return node

    return tree.transform(mark)
