"""SQL that runs but answers another question: warnings, never refusals.

Messages write an elision as ``...``: ``…`` is what Lookout's output uses to
mark text it cut.

``lint`` reads one query (``lint_condition`` one ``filter:``) with sqlglot in
the source's dialect and warns, with the line and column in the SQL where it
can, about the classic traps of data checks:

- ``not-in-subquery``: ``x NOT IN (SELECT col …)`` where ``col`` can be NULL:
  while the subquery returns a NULL, NOT IN is true for no row and nothing is
  found (rows found today only mean it holds no NULL yet). Use ``NOT EXISTS``.
- ``not-in-null``: ``col NOT IN (…list…)`` where ``col`` can be NULL and the
  query does not say what a NULL means (no ``col IS NULL OR …`` beside it, no
  ``col IS NOT NULL AND …``): NOT IN is never true for a NULL, so those rows
  are silently skipped. Also a NULL inside the list, which makes NOT IN never
  true at all.
- ``integer-division``: an integer divided by an integer that is not a
  constant, in a dialect where that truncates (PostgreSQL, SQLite): a ratio of
  counts becomes 0. Cast one side to a decimal.
- ``session-time-zone``: ``current_date``, ``now()``, ``current_timestamp``…
  in an automation whose ``timezone:`` is not UTC: sessions run in UTC, so the
  date is UTC's, not the automation's.

A column "can be NULL" unless the catalog says it is NOT NULL (without a
catalog every column can). Nothing here refuses a query: the SQL guard does
that (``checks.sql.guard``); a query that does not parse gets no warning here.

The warnings are a pure function of the text, the dialect, the catalog's
tables (names and columns: names, types, nullability; not row counts) and
the time zone, and are kept per process on all of them
(``functools.lru_cache`` of ``CACHE_SIZE`` answers): a scheduled automation
lints the same queries on every run, and a changed column is a new key.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from checks.sql.catalog import Column, DataSet
from checks.sql.null_tests import null_handled, owner_table, says_not_null
from checks.sql.tables import fold

CACHE_SIZE = 1024
"""Answers kept per function (each key holds the query's text and the catalog's columns)."""

Tables = tuple[tuple[str, tuple[Column, ...]], ...]
"""What lint reads of a catalog: each data set's name and columns, in catalog order."""

_TRUNCATING = frozenset({"postgres", "sqlite"})
_NOW_FUNCTIONS = frozenset(
    {"now", "today", "get_current_timestamp", "transaction_timestamp", "statement_timestamp",
     "clock_timestamp", "localtime", "current_localtimestamp"}
)  # fmt: skip
_NOW_NODES: tuple[type[exp.Expr], ...] = (
    exp.CurrentDate,
    exp.CurrentTimestamp,
    exp.CurrentTime,
    exp.Localtimestamp,
)


@dataclass(frozen=True)
class LintWarning:
    """One warning about a query.

    Attributes:
        rule: ``not-in-subquery``, ``not-in-null``, ``integer-division`` or
            ``session-time-zone``.
        message: one line: what is wrong, why, and what to write instead.
        line: 1-based line in the SQL, when known.
        column: 1-based column in the SQL, when known.
    """

    rule: str
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return self.message


def lint(
    sql: str,
    *,
    dialect: str,
    catalog: Sequence[DataSet] | None = None,
    timezone: str = "UTC",
) -> list[LintWarning]:
    """Return the warnings for one query, in the order they appear.

    Args:
        sql: the query as written.
        dialect: the source's sqlglot dialect.
        catalog: the source's data sets (column types and nullability); None
            when the source is not at hand (every column can then be NULL).
        timezone: the automation's ``timezone:`` (IANA name).

    """
    return list(_lint(sql, dialect, _frozen(catalog), timezone))


def lint_condition(
    text: str,
    *,
    table: str,
    dialect: str,
    catalog: Sequence[DataSet] | None = None,
    timezone: str = "UTC",
) -> list[LintWarning]:
    """Return the warnings for a typed check's ``filter:`` over ``table``."""
    return list(_lint_condition(text, table, dialect, _frozen(catalog), timezone))


def _frozen(catalog: Sequence[DataSet] | None) -> Tables | None:
    """What lint reads of ``catalog``, as a cache key (columns are frozen: equal means same)."""
    return None if catalog is None else tuple((d.name, d.columns) for d in catalog)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _lint(sql: str, dialect: str, tables: Tables | None, timezone: str) -> tuple[LintWarning, ...]:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # the guard reports what does not parse
        return ()
    return tuple(_Linter(dialect, tables, timezone, text=sql).run(tree))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _lint_condition(
    text: str, table: str, dialect: str, tables: Tables | None, timezone: str
) -> tuple[LintWarning, ...]:
    try:
        condition = sqlglot.parse_one(text, read=dialect, into=exp.Condition)
    except Exception:  # the check's compile reports it
        return ()
    tree = exp.select(exp.Star()).from_(exp.to_table(table)).where(condition)
    return tuple(_Linter(dialect, tables, timezone, text=text).run(tree))


class _Linter:
    def __init__(
        self, dialect: str, catalog: Tables | None, timezone: str, *, text: str = ""
    ) -> None:
        self.text = text  # the statement as written, where nodes' places point
        self.dialect = dialect
        self.catalog = catalog
        self.timezone = timezone
        self.tables: dict[str, dict[str, Column]] = {
            fold(name, dialect): {c.name.lower(): c for c in columns}
            for name, columns in catalog or ()
        }

    def run(self, tree: exp.Expr) -> list[LintWarning]:
        found: list[LintWarning] = []
        for node in tree.walk():
            if isinstance(node, exp.Not) and isinstance(node.this, exp.In):
                found += self.not_in(node.this)
            elif (  # Snowflake's parser reads ``x NOT IN (SELECT …)`` as ``x <> ALL (SELECT …)``
                isinstance(node, exp.NEQ)
                and isinstance(node.expression, exp.All)
                and isinstance(node.expression.this, exp.Query)
            ):
                found += self.not_in_subquery(node, node.expression.this)
        found += self.divisions(tree)
        found += self.clock(tree)
        return sorted(found, key=lambda w: (w.line is None, w.line or 0, w.column or 0))

    # -- NULLs ------------------------------------------------------------

    def not_in(self, node: exp.In) -> list[LintWarning]:
        # ClickHouse's IN skips the NULLs of its set (its docs, "NULL processing"): a NULL
        # in the list or returned by the subquery hides nothing there.
        skips_set_nulls = self.dialect == "clickhouse"
        subquery = node.args.get("query")
        if subquery is not None:
            return [] if skips_set_nulls else self.not_in_subquery(node, subquery)
        values = node.expressions
        line, col = _position(node)
        if any(isinstance(v, exp.Null) for v in values) and not skips_set_nulls:
            return [
                LintWarning(
                    "not-in-null",
                    f"{_cut(node.this.sql(dialect=self.dialect))} NOT IN (..., NULL): a NULL "
                    "in the list makes NOT IN true for no row; "
                    "leave NULL out of the list",
                    line,
                    col,
                )
            ]
        target = node.this
        if not isinstance(target, exp.Column) or not self.can_be_null(target):
            return []
        if null_handled(node, target):
            return []
        name = target.sql(dialect=self.dialect)
        return [
            LintWarning(
                "not-in-null",
                f"{name} NOT IN (...) is never true where {name} is NULL, so those rows are "
                f"skipped; say what a NULL means: ({name} IS NULL OR {name} NOT IN (...)), or "
                f"{name} IS NOT NULL AND ...",
                line,
                col,
            )
        ]

    def not_in_subquery(self, node: exp.In | exp.NEQ, subquery: exp.Expr) -> list[LintWarning]:
        inner = subquery.this if isinstance(subquery, exp.Subquery) else subquery
        if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
            return []
        picked = inner.expressions[0]
        picked = picked.this if isinstance(picked, exp.Alias) else picked
        if not isinstance(picked, exp.Column) or not self.can_be_null(picked):
            return []
        where = inner.args.get("where")
        if where is not None and says_not_null(where.this, picked):
            return []
        table = owner_table(picked) or "the subquery"
        outer = node.this.sql(dialect=self.dialect)
        target = node.this
        match = f"{picked.name} = {outer}"
        if isinstance(target, exp.Column) and target.name.lower() == picked.name.lower():
            outer_table = target.table or owner_table(target)
            if outer_table and outer_table != table:  # same names: say which side is which
                match = f"{table}.{picked.name} = {outer_table}.{target.name}"
        line, col = _position(node)
        return [
            LintWarning(
                "not-in-subquery",
                f"{outer} NOT IN (SELECT {picked.name} FROM {table} ...): {picked.name} can be "
                "NULL, and while the subquery returns a NULL, NOT IN is true for no row and "
                f"nothing is found; use NOT EXISTS (SELECT 1 FROM {table} WHERE {match})",
                line,
                col,
            )
        ]

    def can_be_null(self, column: exp.Column) -> bool:
        """Whether the catalog lets ``column`` hold NULL (True when it cannot tell)."""
        table = owner_table(column)
        if table is None or not self.tables:
            return True
        found = self.tables.get(fold(table, self.dialect), {}).get(column.name.lower())
        return found is None or found.nullable is not False

    # -- integer division -------------------------------------------------

    def divisions(self, tree: exp.Expr) -> list[LintWarning]:
        if self.dialect not in _TRUNCATING or tree.find(exp.Div) is None:
            return []
        schema: dict[str, object] = {
            name: {c.name: c.type for c in columns} for name, columns in self.catalog or ()
        }
        typed = tree.copy()
        try:
            mapping = MappingSchema(schema, dialect=self.dialect) if schema else None
            if mapping is not None:
                typed = qualify(
                    typed, schema=mapping, dialect=self.dialect, validate_qualify_columns=False
                )
            typed = annotate_types(typed, schema=mapping, dialect=self.dialect)
        except Exception:  # a query sqlglot cannot type gets no division warning
            return []
        found = []
        written = list(tree.find_all(exp.Div))
        for index, div in enumerate(typed.find_all(exp.Div)):
            left, right = div.left, div.right
            if isinstance(right, exp.Literal) or not (_integer(left) and _integer(right)):
                continue
            original = written[index] if index < len(written) else div
            line, col = _position(original)
            shown = original.sql(dialect=self.dialect)
            found.append(
                LintWarning(
                    "integer-division",
                    f"{_cut(shown)} divides an integer by an integer: {self.dialect_name} "
                    "drops the fraction (3 / 1000000 is 0); make one side a decimal, "
                    "e.g. CAST(... AS NUMERIC) / count(*), or 100.0 * count(...) / count(*)",
                    line,
                    col,
                )
            )
        return found

    @property
    def dialect_name(self) -> str:
        return {"postgres": "PostgreSQL", "sqlite": "SQLite"}.get(self.dialect, self.dialect)

    # -- the session's clock ----------------------------------------------

    def as_written(self, node: exp.Expr) -> str:
        """A function call as the query wrote it (``now()``), not as sqlglot regenerates it.

        sqlglot reads PostgreSQL's ``now()`` as ``CURRENT_TIMESTAMP``; its place in
        the text (``meta`` start and end) gives the name back, with its ``()``.
        """
        start, end = node.meta.get("start"), node.meta.get("end")
        if not self.text or start is None or end is None:
            return node.sql()  # the generic form: ClickHouse writes CURRENT_DATE()
        called = re.match(r"\s*\(\s*\)", self.text[end + 1 :])
        return self.text[start : end + 1] + ("()" if called else "")

    def clock(self, tree: exp.Expr) -> list[LintWarning]:
        if _is_utc(self.timezone):
            return []
        found = []
        seen: set[str] = set()
        for node in tree.walk():
            named = isinstance(node, exp.Anonymous) and node.name.lower() in _NOW_FUNCTIONS
            if not (isinstance(node, _NOW_NODES) or named):
                continue
            shown = self.as_written(node)
            if shown in seen:
                continue
            seen.add(shown)
            found.append(
                LintWarning(
                    "session-time-zone",
                    f"{shown} is read in UTC (sessions run in UTC), not in {self.timezone}, "
                    f"this automation's time zone; for its local time write "
                    f"(now() AT TIME ZONE '{self.timezone}'), and ::date for its local date",
                )
            )
        return found


def _integer(node: exp.Expr) -> bool:
    kind = node.type
    return kind is not None and kind.is_type(*exp.DataType.INTEGER_TYPES)


def _is_utc(zone: str) -> bool:
    try:
        info = ZoneInfo(zone)
    except Exception:  # an unknown zone is reported where the automation is loaded
        return True
    days = (dt.datetime(2025, 1, 15), dt.datetime(2025, 7, 15))
    return all(info.utcoffset(day) == dt.timedelta(0) for day in days)


def _position(node: exp.Expr) -> tuple[int | None, int | None]:
    """The first (line, column) of the identifiers in ``node`` whose place sqlglot kept."""
    starts = []
    for identifier in node.find_all(exp.Identifier):
        meta = identifier.meta
        if "line" in meta and "col" in meta:
            # sqlglot's col is the last character of the token; report its first.
            width = len(identifier.name) + (2 if identifier.quoted else 0)
            starts.append((int(meta["line"]), max(int(meta["col"]) - width + 1, 1)))
    if not starts:
        return None, None
    line, column = min(starts)
    return line, column


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
