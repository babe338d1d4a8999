"""Which count queries of a run can share one statement, proven from their sqlglot trees.

A check's counts query (a typed kind's ``Compiled.counts_sql``, or a raw ``sql:``
check's query) joins a shared statement only when its tree (``shape``) is one
``SELECT`` of aggregates over one table, and nothing else:

- no ``WITH``, join, subquery (in ``FROM``, a projection or the ``WHERE``; but
  ``SELECT * FROM (query) AS x`` is ``query``),
  window function, ``DISTINCT``, ``HAVING``, ``QUALIFY``, ``LIMIT``/``OFFSET``,
  ``TABLESAMPLE`` or set operation, and a table not qualified by a schema;
- every projection named (``AS name``: the shared statement returns it under
  a name made unique per check, and the check's result shows it under its own),
  or short and with no qualified column (the shared statement keeps its text,
  so the database names it as it would alone: ``count(*)``), with every column
  it reads inside an aggregate function (or an ordered-set aggregate's
  ``WITHIN GROUP (ORDER BY …)``: ``PERCENTILE_CONT``), and at least one aggregate
  (so the result is one row whatever the table holds);
- ``GROUP BY`` and ``ORDER BY`` only in typed kinds' ``over:`` queries, which share
  a statement only with queries grouped by the identical bucket expression.

Queries sharing a statement have the same table (as the dialect folds its
name) and the same grouping. When they also have the same ``WHERE`` (compared
as SQL once the table's qualifiers and the outer parentheses are dropped), the
statement keeps it; when their ``WHERE`` clauses differ, the statement reads the
whole table and each aggregate of a query with a ``WHERE`` carries it as its
own filter: ``FILTER (WHERE …)`` where the dialect has it (``FILTER_DIALECTS``),
else the aggregate's argument in ``CASE WHEN … THEN … END``, which only
aggregates that skip NULLs allow (``CASE_AGGREGATES``: a query with any other
shares only with queries of its own ``WHERE``). A query without a ``WHERE``
aggregates every row, as alone. ``duplicates`` (its
counts read a grouped subquery) and ``relationships`` (a join to its parent)
never qualify: each stays its own statement (bench/README.md, Shared scans,
has the measurements). The statement a group shares is built by ``statement``:
``SELECT count(*) AS lookout__rows, <each check's projections> FROM table AS t
WHERE …``; ``lookout__rows`` is the rows in the statement's scope (the whole
table when the members' ``WHERE`` clauses differ), which answers the empty-table probe
of a raw check (``checks.declared.check``).

A projection not named is named by the database from its text (DuckDB, SQLite,
MariaDB, Spark, ClickHouse) or from its outermost function (PostgreSQL). Where
its own filter changes that text, the shared statement names it
``c<position>__<k>``; ``checks.declared.projection_names`` asks the database
the name it gives the projection as written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from checks.declared.aggregate_filter import (
    FILTER_DIALECTS,
    NAMES_BY_FUNCTION,
    case_safe,
    filtered,
)
from checks.sql.tables import tables_read

ALIAS = "t"
"""The table's alias in a shared statement (the typed kinds' own)."""

ROWS = "lookout__rows"
"""The shared statement's first column: the rows its scope holds."""

MAX_STABLE_CHARS = 40
"""Longest text of a projection not named that may share a statement (its name is its text)."""

_SELECT_ARGS = frozenset({"expressions", "from", "from_", "where", "group", "order"})
_TABLE_ARGS = frozenset({"this", "alias"})
_NESTED = (exp.Subquery, exp.Exists, exp.Window, exp.Union, exp.Intersect, exp.Except)

ANY_WHERE = "*"
"""The ``WHERE`` part of ``Shape.group_key`` for a query that may carry its own filter."""


@dataclass(frozen=True)
class Shape:
    """A counts query that can share a statement: its parts, qualified to the alias ``t``.

    Attributes:
        key: what must be equal to share a statement: the table (folded), the
            ``WHERE``, ``GROUP BY`` and ``ORDER BY`` as SQL.
        table: the folded name of the table read.
        source: the ``FROM`` table, aliased ``t``.
        where: the condition, or None.
        group: the ``GROUP BY`` expressions (``over:`` queries only).
        order: the ``ORDER BY``, or None.
        names: each projection's name (its identifier, quoting kept); None for
            one not named, which the database names from its text.
        values: each projection's expression.
    """

    key: tuple[str, str, str, str]
    table: str
    source: exp.Table
    where: exp.Expr | None
    group: tuple[exp.Expr, ...]
    order: exp.Order | None
    names: tuple[exp.Identifier | None, ...]
    values: tuple[exp.Expr, ...]
    filterable: bool = False

    @property
    def group_key(self) -> tuple[str, str, str, str]:
        """What queries sharing a statement have equal.

        ``key``, with any ``WHERE`` when each may carry its own (``filterable``).
        """
        if not self.filterable:
            return self.key
        return (self.key[0], ANY_WHERE, *self.key[2:])

    @property
    def filtered(self) -> bool:
        """Whether the scope is less than the whole table."""
        return self.where is not None

    @property
    def grouped(self) -> bool:
        """Whether the query returns one row per group (``over:``'s buckets)."""
        return bool(self.group)


@functools.lru_cache(maxsize=1024)
def shape(sql: str, dialect: str, *, grouped: bool = False) -> Shape | None:
    """The parts of ``sql`` when its tree proves it can share a statement, else None.

    A pure function, hence cached per process (a warm worker plans the same
    queries run after run); the ``Shape``'s trees are never changed after it
    returns (every use copies them).

    Args:
        sql: one checked query (the guard's text) in ``dialect``.
        dialect: the source's sqlglot dialect.
        grouped: whether ``GROUP BY``/``ORDER BY`` may appear (typed kinds' ``over:``).
    """
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # sqlglot's errors: not proven, so not shared
        return None
    tree = _unwrapped(tree)
    if not isinstance(tree, exp.Select) or not _plain_select(tree, grouped):
        return None
    source = tree.args.get("from") or tree.args.get("from_")
    table = source.this if isinstance(source, exp.From) else None
    if not isinstance(table, exp.Table) or not _plain_table(table):
        return None
    read = tables_read(tree, dialect)
    if len(read) != 1 or any(True for node in tree.find_all(*_NESTED)):
        return None
    if sum(1 for _ in tree.find_all(exp.Select)) != 1:
        return None
    projections = list(tree.expressions)
    if not projections or not all(_named(p) or _stable(p, dialect) for p in projections):
        return None
    own = {table.alias_or_name, table.name}
    if not all(_requalify(column, own) for column in tree.find_all(exp.Column)):
        return None
    group = tuple(tree.args["group"].expressions) if tree.args.get("group") else ()
    if not group and not _aggregated(projections):
        return None
    where_node = tree.args.get("where")
    where = where_node.this if isinstance(where_node, exp.Where) else None
    order = tree.args.get("order")
    aliased = exp.Table(this=table.this.copy(), alias=exp.TableAlias(this=exp.to_identifier(ALIAS)))
    filterable = not group and (
        dialect in FILTER_DIALECTS or all(case_safe(p) for p in projections)
    )
    key = (
        read[0],
        _text(where, dialect),
        ", ".join(_text(g, dialect) for g in group),
        _text(order, dialect),
    )
    return Shape(
        key=key,
        table=read[0],
        source=aliased,
        where=where,
        group=group,
        order=order if isinstance(order, exp.Order) else None,
        names=tuple(p.args["alias"] if _named(p) else None for p in projections),
        values=tuple(p.this if _named(p) else p for p in projections),
        filterable=filterable,
    )


def prefix(position: int) -> str:
    """The prefix of check ``position``'s columns in a shared statement (``c3__``)."""
    return f"c{position}__"


def scope(members: list[tuple[int, Shape]]) -> exp.Expr | None:
    """The ``WHERE`` of the statement ``members`` share.

    Theirs when they all have the same one, else None (the whole table: each
    member filters its own aggregates).
    """
    wheres = {found.key[1] for _, found in members}
    return members[0][1].where if len(wheres) == 1 else None


def statement(members: list[tuple[int, Shape]], dialect: str) -> str:
    """One statement computing every member's projections over their shared scope.

    ``members`` are (check position, shape) pairs with one ``group_key``; each
    projection is named ``c<position>__<name>`` with the name's quoting, so
    the database returns the check's own name after the prefix (a dialect
    folding unquoted names folds both alike). An ungrouped statement starts
    with ``count(*) AS lookout__rows``. When the members' ``WHERE`` clauses differ, a
    member's own ``WHERE`` filters each of its aggregates, and a projection not
    named that the filter renames is named ``c<position>__<k>``
    (``checks.declared.projection_names.renamed``).
    """
    first = members[0][1]
    where = scope(members)
    projections: list[exp.Expr] = []
    if not first.grouped:
        projections.append(exp.alias_(exp.Count(this=exp.Star()), ROWS))
    for position, found in members:
        own = found.where if where is None else None
        for k, (name, value) in enumerate(zip(found.names, found.values, strict=True)):
            shown = value.copy() if own is None else filtered(value, own, dialect)
            if name is None and own is not None and dialect not in NAMES_BY_FUNCTION:
                name = exp.to_identifier(f"{k}", quoted=True)
            if name is None:  # as written: the database names it as it would alone
                projections.append(shown)
                continue
            label = exp.Identifier(this=prefix(position) + name.name, quoted=name.quoted)
            projections.append(exp.Alias(this=shown, alias=label))
    query = exp.select(*projections).from_(first.source.copy())
    if where is not None:
        query = query.where(where.copy())
    if first.group:
        query = query.group_by(*(g.copy() for g in first.group))
    if first.order is not None:
        query.set("order", first.order.copy())
    return query.sql(dialect=dialect)


@functools.lru_cache(maxsize=256)
def statement_of(members: tuple[tuple[int, str, bool], ...], dialect: str) -> str:
    """``statement`` of the members given as (position, checked SQL, grouped), cached.

    Each query's ``shape`` must be one (``shape`` is not None for it).
    """
    shapes: list[tuple[int, Shape]] = []
    for position, sql, grouped in members:
        found = shape(sql, dialect, grouped=grouped)
        if found is None:
            raise ValueError(f"not a shared query: {sql}")
        shapes.append((position, found))
    return statement(shapes, dialect)


def _unwrapped(tree: exp.Expr) -> exp.Expr:
    """The query inside ``SELECT * FROM (query) AS x`` (nothing else around it), else ``tree``.

    The same rows under the same column names: ``*`` over a derived table is its columns.
    """
    while isinstance(tree, exp.Select) and not tree.args.get("with"):
        source = tree.args.get("from") or tree.args.get("from_")
        inner = source.this if isinstance(source, exp.From) else None
        star = len(tree.expressions) == 1 and isinstance(tree.expressions[0], exp.Star)
        others = [
            k for k, v in tree.args.items() if v and k not in ("expressions", "from", "from_")
        ]
        if not star or others or not isinstance(inner, exp.Subquery):
            break
        if not isinstance(inner.this, exp.Select) or any(
            v for k, v in inner.args.items() if k not in ("this", "alias")
        ):
            break
        if any(tree.expressions[0].args.values()):  # * EXCLUDE, REPLACE, RENAME, ILIKE
            break
        tree = inner.this
    return tree


def _plain_select(tree: exp.Select, grouped: bool) -> bool:
    """Nothing but projections, one FROM, WHERE (and, grouped, GROUP BY and ORDER BY)."""
    allowed = _SELECT_ARGS if grouped else _SELECT_ARGS - {"group", "order"}
    return all(not value or name in allowed for name, value in tree.args.items())


def _plain_table(table: exp.Table) -> bool:
    """A bare table name, perhaps aliased: no schema, sample, hint or table function."""
    if not isinstance(table.this, exp.Identifier):
        return False
    return all(not value or name in _TABLE_ARGS for name, value in table.args.items())


def _requalify(column: exp.Column, own: set[str]) -> bool:
    """A qualified ``column`` qualified by the alias ``t`` instead (a bare one stays bare).

    False when it names anything but the one table.
    """
    if column.args.get("db") or column.args.get("catalog"):
        return False
    qualifier = column.args.get("table")
    if qualifier is None:
        return True  # one table: a bare name is its column
    if qualifier.name not in own:
        return False  # another name (a struct's field?), or one in another case: not proven
    column.set("table", exp.to_identifier(ALIAS))
    return True


def _stable(projection: exp.Expr, dialect: str) -> bool:
    """A projection not named whose text the shared statement keeps as the check wrote it.

    The database names such a column from its text (PostgreSQL by its function,
    DuckDB and SQLite by the text itself): no column in it may be qualified (the
    shared statement's alias would change the text), and a text it names by stays short.
    """
    if isinstance(projection, exp.Alias | exp.Star):
        return False
    if any(column.args.get("table") for column in projection.find_all(exp.Column)):
        return False
    if dialect in NAMES_BY_FUNCTION:  # named by its function: its length does not matter
        return True
    return len(projection.sql()) <= MAX_STABLE_CHARS


def _named(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Alias) and isinstance(
        projection.args.get("alias"), exp.Identifier
    )


def _aggregated(projections: list[exp.Expr]) -> bool:
    """At least one aggregate, and every column and ``*`` read inside one."""
    if not any(p.find(exp.AggFunc) for p in projections):
        return False
    for projection in projections:
        for node in projection.find_all(exp.Column, exp.Star):
            # an ordered-set aggregate's column is in its WITHIN GROUP (ORDER BY …)
            if node.find_ancestor(exp.AggFunc, exp.WithinGroup) is None:
                return False
    return True


def _text(node: exp.Expr | None, dialect: str) -> str:
    """``node`` as SQL with the table's qualifiers and the outer parentheses dropped."""
    if node is None:
        return ""
    bare = node.copy()
    for column in bare.find_all(exp.Column):
        column.set("table", None)
    while isinstance(bare, exp.Paren):
        bare = bare.this
    return bare.sql(dialect=dialect)
