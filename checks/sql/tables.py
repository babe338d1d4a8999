"""Which tables a query may read: the source's data sets and the CTEs in sight.

Part of the SQL guard (``checks.sql.guard``, layer 1 of reading data safely,
docs/design.md, Reading data safely): the rules ``table-function``, ``schema``, ``system-catalog``,
``file-read`` (a quoted table name that looks like a path) and ``unknown-table``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from sqlglot import exp

from checks.errors import QueryRejected
from checks.fields.rules import did_you_mean
from checks.sql.engines import file_formats

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_DEFAULT_SCHEMAS = frozenset({"main", "public"})
_PATH_LIKE = re.compile(r"[./\\:*?~]")
_SYSTEM_SCHEMAS = frozenset(
    {"information_schema", "pg_catalog", "pg_toast", "pg_temp", "system", "temp", "mysql",
     "performance_schema", "sys"}
)  # fmt: skip
_SYSTEM_TABLE = re.compile(r"pg_\w+|duckdb_\w+|sqlite_\w+|information_schema")
_TABLE_FUNCTIONS = frozenset({"generate_series", "range", "unnest"})
_EXACT_NAMES = frozenset({"postgres", "mysql", "clickhouse"})  # case-sensitive names, stored as is


def function_name(node: exp.Func) -> str:
    """Return a function call's name in lower case, as the deny and allow lists spell it."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return node.sql_name().lower()


def check_tables(
    tree: exp.Expr, dialect: str, allowed_tables: Collection[str], schema: str | None
) -> None:
    """Refuse any table, table function or qualifier the query may not read.

    Names compare as the dialect folds them (see ``checks.sql.guard.guard``).

    Raises:
        QueryRejected: rule ``table-function``, ``schema``, ``system-catalog``,
            ``file-read`` or ``unknown-table``, with a one-line reason.

    """
    allowed = {_fold_name(name, dialect) for name in allowed_tables}
    schemas = {_fold_name(schema, dialect)} if schema else set(_DEFAULT_SCHEMAS)
    for node in tree.walk():
        if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Func):
            _check_table_function(node.this)
        elif isinstance(node, exp.TableFromRows):
            raise QueryRejected("table-function", "TABLE(…) table functions are not allowed")
        elif isinstance(node, exp.Table):
            _check_table(node, dialect, allowed, schemas)


def tables_read(tree: exp.Expr, dialect: str) -> list[str]:
    """Return the data sets a checked query reads, folded as the dialect folds names.

    CTEs in sight are not data sets and are left out; each name appears once,
    in the order it first appears.
    """
    names: list[str] = []
    for node in tree.find_all(exp.Table):
        target = node.this
        if not isinstance(target, exp.Identifier):
            continue
        name = _resolve(target, dialect)
        qualified = node.args.get("db") or node.args.get("catalog")
        if not qualified and name in _visible_ctes(node, dialect):
            continue
        if name not in names:
            names.append(name)
    return names


def fold(name: str, dialect: str) -> str:
    """Fold a data set's name as ``tables_read`` folds the names it returns."""
    return _fold_name(name, dialect)


def _check_table_function(func: exp.Func) -> None:
    if isinstance(func, (exp.GenerateSeries, exp.Unnest)):
        return
    name = function_name(func)
    if name not in _TABLE_FUNCTIONS:
        raise QueryRejected(
            "table-function",
            f"table function {name}() is not allowed; only generate_series, range, unnest",
        )


def _check_table(table: exp.Table, dialect: str, allowed: set[str], schemas: set[str]) -> None:
    target = table.this
    if isinstance(target, exp.Func):
        _check_table_function(target)
        return
    if target is None and table.args.get("rows_from"):
        return  # ROWS FROM (…): each function inside is a Table node of its own
    if not isinstance(target, exp.Identifier):
        raise QueryRejected(
            "unknown-table", f"unsupported table reference {table.sql(dialect=dialect)}"
        )
    shown = table.sql(dialect=dialect, comments=False)
    name = _resolve(target, dialect)
    if table.args.get("catalog") or table.args.get("db"):
        _check_qualifier(table, dialect, schemas, shown)
    elif name in _visible_ctes(table, dialect):
        return
    if name in allowed:
        return
    if _SYSTEM_TABLE.fullmatch(name.lower()):
        raise QueryRejected("system-catalog", f"{shown} is a system catalog")
    if target.quoted and _PATH_LIKE.search(target.name):
        raise QueryRejected(
            "file-read", f"{shown} looks like a file or URL; only data sets can be read"
        )
    hint = did_you_mean(name, allowed)
    raise QueryRejected("unknown-table", f"{shown} is not a data set of this source{hint}")


def _check_qualifier(table: exp.Table, dialect: str, schemas: set[str], shown: str) -> None:
    if table.args.get("catalog"):
        raise QueryRejected("schema", f"{shown}: catalog-qualified names are not allowed")
    db = table.args["db"]
    if not isinstance(db, exp.Identifier):
        raise QueryRejected("schema", f"{shown}: unsupported schema reference")
    db_name = _resolve(db, dialect)
    if db_name.lower() in file_formats(dialect):
        raise QueryRejected(
            "file-read", f"{shown} reads a {db.name} file directly; only data sets can be read"
        )
    if db_name.lower() in _SYSTEM_SCHEMAS:
        raise QueryRejected("system-catalog", f"{shown} is in a system schema")
    if db_name not in schemas:
        raise QueryRejected("schema", f"{shown}: schema {db.name} is not this source's schema")


def _ascii_lower(name: str) -> str:
    """Lower-case A-Z only, as the databases fold identifiers (``str.lower`` folds Ä too)."""
    return name.translate(_ASCII_LOWER)


def _resolve(ident: exp.Identifier, dialect: str) -> str:
    """Return the name the database looks up, folded the way it folds names.

    PostgreSQL folds an unquoted name's A-Z only (``Ärzte`` stays ``Ärzte``,
    not ``ärzte``; ``downcase_identifier`` in a UTF-8 database) and keeps a
    quoted name as written. SQLite and DuckDB compare names ignoring the case
    of A-Z only, quoted or not. MySQL table names are case-sensitive where they
    live on a case-sensitive file system, ClickHouse's always: compared exactly.
    """
    name = str(ident.name)
    if dialect == "postgres":
        return name if ident.quoted else _ascii_lower(name)
    return _fold_name(name, dialect)


def _fold_name(name: str, dialect: str) -> str:
    """Fold a data set or schema name as it is stored, to compare with ``_resolve``."""
    return name if dialect in _EXACT_NAMES else _ascii_lower(name)


def _visible_ctes(table: exp.Table, dialect: str) -> set[str]:
    """CTE names in scope at ``table``.

    In a WITH list a CTE sees only the CTEs before it; under RECURSIVE it also
    sees itself when its body is a set operation (the recursive shape). Anything
    looser could let ``WITH x AS (SELECT * FROM x)`` read a real table ``x``.
    """
    names: set[str] = set()
    child: exp.Expr = table
    for parent in _ancestors(table):
        if isinstance(parent, exp.With) and isinstance(child, exp.CTE):
            ctes = list(parent.expressions)
            index = next(i for i, cte in enumerate(ctes) if cte is child)
            visible = ctes[:index]
            if parent.args.get("recursive") and isinstance(child.this, exp.SetOperation):
                visible.append(child)
            names.update(_resolve(cte.args["alias"].this, dialect) for cte in visible)
        else:
            with_ = parent.args.get("with_")
            if isinstance(with_, exp.With) and with_ is not child:
                names.update(_resolve(cte.args["alias"].this, dialect) for cte in with_.expressions)
        child = parent
    return names


def _ancestors(node: exp.Expr) -> Iterator[exp.Expr]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent
