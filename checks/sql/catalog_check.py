"""A query checked before it runs: the guard, parsing in the dialect, the catalog's names.

``check_query`` gives every problem ``lookout validate`` reports for one
query, with its line and column inside the SQL where they are known:

1. the SQL guard (``checks.sql.guard``) exactly as a run applies it — a
   ``DELETE``, a statement that does not parse in the source's dialect, a
   table that is not one of the source's data sets;
2. the columns, against the catalog: sqlglot qualifies the query against a
   schema built from the catalog (``sqlglot.optimizer.qualify``) and a column
   no table in sight has is reported, with the closest name.

Without a catalog (``lookout validate --no-sources``) only what needs no
source is checked: the guard runs with the query's own tables allowed, so
``unknown-table`` cannot fire, and columns are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from checks.errors import QueryRejected
from checks.fields.rules import did_you_mean
from checks.sql.catalog import DataSet
from checks.sql.guard import guard
from checks.sql.tables import fold, tables_read

_UNKNOWN_COLUMN = (
    re.compile(r"Column '([^']+)' could not be resolved"),
    re.compile(r"Unknown column: (\S+)"),
)


@dataclass(frozen=True)
class QueryProblem:
    """One reason a query would fail (or be refused) when it runs.

    Attributes:
        message: one line, e.g. ``rejected (write): DELETE is not allowed …``.
        line: 1-based line in the SQL, when known.
        column: 1-based column in the SQL, when known.
    """

    message: str
    line: int | None = None
    column: int | None = None


def check_query(
    sql: str,
    *,
    dialect: str,
    catalog: Sequence[DataSet] | None,
    schema: str | None = None,
    max_chars: int = 20_000,
) -> list[QueryProblem]:
    """Return what is wrong with one query before it runs (empty: nothing found).

    Args:
        sql: the query as written.
        dialect: the source's sqlglot dialect.
        catalog: the source's data sets; None checks only what needs no source.
        schema: the source's schema (``Source.schema``), as the guard takes it.
        max_chars: the longest query the source accepts (``Limits.max_sql_chars``).

    """
    if catalog is None:
        allowed: list[str] = _own_tables(sql, dialect)
    else:
        allowed = [d.name for d in catalog]
    try:
        guard(sql, dialect=dialect, allowed_tables=allowed, max_chars=max_chars, schema=schema)
    except QueryRejected as rejected:
        return [QueryProblem(str(rejected), *_where_rejected(sql, dialect, rejected))]
    if catalog is None:
        return []
    problem = _unknown_column(sql, dialect, catalog)
    return [problem] if problem else []


def condition_error(error: Exception) -> str:
    """Why a ``filter:`` is not one SQL condition, in words (no parser internals)."""
    first = str(error).splitlines()[0] if str(error) else ""
    if not first or first.startswith("Failed to parse"):
        return "the filter is not one SQL condition (e.g. amount > 0 AND status = 'paid')"
    return f"the filter is not one SQL condition: {first}"


def row_condition_problem(condition: exp.Expr, dialect: str) -> str | None:
    """Why a parsed ``filter:`` cannot be a ``WHERE`` condition on each row, or None.

    SQL evaluates ``WHERE`` once per row, so an aggregate (``count(*) > 1``) or a
    window function outside a subquery is refused by every database; a query
    parameter (``?``, ``$1``, ``:name``) is never bound, since Lookout sends no
    parameters. Each is said here, before a run fails in the database's words.
    """
    for node in condition.walk():
        if isinstance(node, exp.Placeholder) or (
            isinstance(node, exp.Parameter) and node.name.isdigit()
        ):
            shown = node.sql(dialect=dialect)
            return (
                f"the filter holds a query parameter ({shown}), which nothing fills: "
                "write the value itself"
            )
    for kind, what in ((exp.Window, "a window function"), (exp.AggFunc, "an aggregate")):
        for node in condition.find_all(kind):
            if node.find_ancestor(exp.Query) is None:
                return (
                    f"the filter is a condition on each row: {node.sql(dialect=dialect)} is "
                    f"{what} (put it in a subquery, or write a sql: check)"
                )
    return None


def check_condition(
    text: str,
    *,
    table: str,
    dialect: str,
    catalog: Sequence[DataSet] | None,
    schema: str | None = None,
) -> list[QueryProblem]:
    """Return what is wrong with a typed check's ``filter:`` over ``table``.

    Positions are inside ``text``. The condition must parse as one SQL
    condition on each row (``row_condition_problem``), pass the guard inside
    a query over ``table``, and name only columns the catalog has.
    """
    try:
        condition = sqlglot.parse_one(text, read=dialect, into=exp.Condition)
    except ParseError as error:
        found = error.errors[0] if error.errors else {}
        return [QueryProblem(condition_error(error), found.get("line"), found.get("col"))]
    except Exception as error:  # a tokenizer error carries no position
        return [QueryProblem(condition_error(error))]
    not_per_row = row_condition_problem(condition, dialect)
    if not_per_row is not None:
        return [QueryProblem(not_per_row)]
    tree = (
        exp.select(exp.Star())
        .from_(exp.Table(this=exp.to_identifier(table, quoted=True)))
        .where(condition)
    )
    sql = tree.sql(dialect=dialect)
    allowed = [d.name for d in catalog] if catalog is not None else _own_tables(sql, dialect)
    try:
        guard(sql, dialect=dialect, allowed_tables=allowed, schema=schema)
    except QueryRejected as rejected:
        return [QueryProblem(str(rejected))]
    if catalog is None:
        return []
    problem = _unknown_column_in(tree, dialect, catalog)
    return [problem] if problem else []


def _own_tables(sql: str, dialect: str) -> list[str]:
    try:
        return tables_read(sqlglot.parse_one(sql, read=dialect), dialect)
    except Exception:  # the guard reports what does not parse
        return []


def _first_token(sql: str) -> tuple[int, int]:
    for number, text in enumerate(sql.splitlines(), start=1):
        stripped = text.lstrip()
        if stripped and not stripped.startswith("--"):
            return number, len(text) - len(stripped) + 1
    return 1, 1


def _where_rejected(sql: str, dialect: str, rejected: QueryRejected) -> tuple[int, int]:
    """The line and column a refusal is about: the parse error's, the table's, else the start."""
    if rejected.rule == "parse-error":
        try:
            sqlglot.parse(sql, read=dialect)
        except ParseError as error:
            if error.errors and error.errors[0].get("line"):
                found = error.errors[0]
                return int(found["line"]), max(int(found.get("col") or 1), 1)
        except Exception:  # a tokenizer error carries no position
            pass
    if rejected.rule in ("unknown-table", "system-catalog", "schema", "file-read"):
        try:
            tree = sqlglot.parse_one(sql, read=dialect)
        except Exception:
            return _first_token(sql)
        for table in tree.find_all(exp.Table):
            identifier = table.this
            if isinstance(identifier, exp.Identifier) and identifier.name in rejected.reason:
                meta = identifier.meta
                if "line" in meta:
                    return int(meta["line"]), max(int(meta["col"]) - len(identifier.name) + 1, 1)
    return _first_token(sql)


def _unknown_column(sql: str, dialect: str, catalog: Sequence[DataSet]) -> QueryProblem | None:
    """The first column no table in sight has, or None (also when sqlglot cannot tell)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return None
    return _unknown_column_in(tree, dialect, catalog)


def _unknown_column_in(
    tree: exp.Expr, dialect: str, catalog: Sequence[DataSet]
) -> QueryProblem | None:
    by_fold = {fold(d.name, dialect): d for d in catalog}
    read = [by_fold[name] for name in tables_read(tree, dialect) if name in by_fold]
    mapping: dict[str, object] = {d.name: {c.name: c.type for c in d.columns} for d in catalog}
    try:
        schema = MappingSchema(mapping, dialect=dialect, normalize=dialect != "postgres")
        qualify(tree.copy(), schema=schema, dialect=dialect, validate_qualify_columns=True)
    except OptimizeError as error:
        name = next((m.group(1) for p in _UNKNOWN_COLUMN if (m := p.search(str(error)))), None)
        if name is None:
            return None
        return _column_problem(tree, name, read, dialect)
    except Exception:  # sqlglot cannot follow this query: leave it to the database
        return None
    return None


def _column_problem(
    tree: exp.Expr, name: str, read: Sequence[DataSet], dialect: str
) -> QueryProblem | None:
    bare = name.split(".")[-1].strip('"`')
    known = [c.name for d in read for c in d.columns]
    aliases = {a.alias for a in tree.find_all(exp.Alias)} | {
        t.alias for t in tree.find_all(exp.TableAlias) for t in [t] if t.name
    }
    if bare.lower() in {k.lower() for k in known} or bare in aliases:
        return None  # sqlglot lost its way (a lateral alias, a struct field): not ours to say
    where = next(
        (c for c in tree.find_all(exp.Column) if c.name.lower() == bare.lower()),
        None,
    )
    line = column = None
    if where is not None and "line" in where.this.meta:
        line = int(where.this.meta["line"])
        column = max(int(where.this.meta["col"]) - len(where.name) + 1, 1)
    tables = ", ".join(d.name for d in read) or "the tables read"
    hint = did_you_mean(bare, known)
    return QueryProblem(f"unknown column {bare!r}: not in {tables}{hint}", line, column)
