"""A typed check's scope as sqlglot trees: the table after ``filter:``, and ``over:``'s buckets.

``ScopeSql`` is the ``checks.kinds.scope.Scope`` each kind builds its two
queries on (``Kind.sql``), as ``checks.declared.compile`` describes them:
names are resolved against the catalog and a filter parsed as one condition
(``checks.declared.catalog_names``), identifiers quoted; with ``over:`` the
counts are grouped per bucket and the sample reads the tested bucket only;
with ``by:`` they are grouped per segment too and the sample reads the failing
segments only (``checks.declared.segment_sql``).
``compile_check`` (``checks.declared.compile``) keeps what it builds per process.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from checks.automation.time_buckets import Over
from checks.declared import segment_sql
from checks.declared.buckets import BUCKET, BucketSql, Window, bucket_sql
from checks.declared.catalog_names import parse_filter, resolve_column, resolve_table
from checks.declared.segment_sql import SegmentValues
from checks.errors import CheckDefinitionError
from checks.kinds.base import Compiled, Kind
from checks.kinds.sql_terms import ROWS, count, nulls_last
from checks.sources.base import Column, DataSet
from checks.sql.engines import kind_sql
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
        failing: Sequence[SegmentValues] | None = None,
    ) -> None:
        """Resolve the check's names against ``catalog``.

        Args:
            failing: the failing segments' values (``by:``): the sample reads only those.

        Raises:
            CheckDefinitionError: an unknown table or column (``by.0``, with the closest name).
        """
        self.spec = spec
        self.dialect = dialect
        self.limit = limit
        self.at = spec.KIND
        self.data_set = resolve_table(spec.table, catalog, f"{self.at}.table")
        self.catalog = catalog
        self.where = (
            parse_filter(spec.filter, dialect, f"{self.at}.filter") if spec.filter else None
        )
        self.segments = [
            resolve_column(self.data_set, name, f"{self.at}.by.{i}")
            for i, name in enumerate(spec.by or [])
        ]
        self.failing = failing
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
        if sample and self.segments and self.failing is not None:
            conditions.append(segment_sql.matching(self.segment_refs(), self.failing, self.dialect))
        if conditions:
            query = query.where(exp.and_(*(exp.paren(c.copy()) for c in conditions)))
        return query

    def segment_refs(self) -> list[exp.Column]:
        """The ``by:`` columns as quoted columns of ``t`` (none without ``by:``)."""
        return [self.col(column.name) for column in self.segments]

    def sql(self, tree: exp.Expr) -> str:
        """A tree as SQL in the dialect, as the engine must run it (``engines.kind_sql``).

        Raises:
            CheckDefinitionError: the dialect cannot express part of it (MySQL has no
                ``AT TIME ZONE``): sqlglot would drop it, and the query count otherwise.

        """
        rewrite = kind_sql(self.dialect)
        tree = rewrite(tree) if rewrite else tree
        try:
            return tree.sql(dialect=self.dialect, unsupported_level=ErrorLevel.RAISE)
        except UnsupportedError as error:
            why = str(error).splitlines()[0] if str(error) else "unsupported"
            raise CheckDefinitionError(
                f"{self.at} cannot be written in this source's SQL ({self.dialect}): {why}",
                field="over" if self.buckets is not None else self.at,
            ) from None

    def scope_text(self) -> str:
        """The scope in words: ``orders where status = 'paid'``."""
        if not self.spec.filter:
            return self.data_set.name
        return f"{self.data_set.name} where {' '.join(self.spec.filter.split())}"

    def row_order(self, first: str | None) -> list[exp.Column]:
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
        segments = self.segment_refs()
        names = {ref.name for ref in segments}
        order = [*segments, *(o for o in self.row_order(first) if o.name not in names)]
        if order:
            query = query.order_by(*(nulls_last(o) for o in order))
        return self.sql(query.limit(self.limit))

    def value_sample(self, value: exp.Expr, name: str, violation: exp.Expr) -> str:
        """The violating values with how many rows hold each, most first, as SQL."""
        rows = count(exp.Star())
        segments = self.segment_refs()  # each failing segment's values apart
        query = (
            self.scoped(
                *(
                    exp.alias_(r, c.name, quoted=True)
                    for r, c in zip(segments, self.segments, strict=True)
                ),
                exp.alias_(value.copy(), name, quoted=True),
                exp.alias_(rows, ROWS, quoted=True),
                extra=violation,
                sample=True,
            )
            .group_by(*(r.copy() for r in segments), value.copy())
            .order_by(exp.Ordered(this=rows.copy(), desc=True), nulls_last(value))
            .limit(self.limit)
        )
        return self.sql(query)

    def done(
        self,
        counts: exp.Select,
        sample: str | None,
        column: Column | None,
        segments_in: str | None = None,
    ) -> Compiled:
        """The counts query (grouped per bucket with ``over:``, per segment with ``by:``), as SQL.

        ``segments_in`` names the subquery ``counts`` reads when the kind already
        projected the segment columns in it (``segment_sql.projections``).
        """
        if self.segments:
            if segments_in is None:
                refs = self.segment_refs()
            else:
                names = segment_sql.result_names(len(self.segments))
                refs = [exp.column(name, table=segments_in) for name in names]
            counts = counts.select(*segment_sql.projections(refs), append=True)
            counts = counts.group_by(*(r.copy() for r in refs))
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
            tuple(c.name for c in self.segments),
        )
