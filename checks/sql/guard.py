"""The SQL guard: layer 1 of reading data safely (docs/design.md, Reading data safely).

``guard`` parses a statement with sqlglot in the source's dialect, walks the
whole tree and either returns the SQL to run (regenerated from the checked
tree, comments dropped) or raises ``QueryRejected(rule, reason)``. It fails
closed: anything sqlglot cannot parse, or parses only with a warning (e.g. its
fallback to an opaque ``Command``), is refused.

Rules, in the order they are checked (``rule``: what breaks it):

- ``too-long``: the text is longer than ``max_chars``.
- ``parse-error``: sqlglot raised or logged a warning while parsing or
  regenerating, or the regenerated text does not read back the same.

- ``multiple-statements``: more than one statement.
- ``write``: INSERT/UPDATE/DELETE/MERGE/COPY anywhere, including inside WITH.
- ``ddl``: CREATE/DROP/ALTER/TRUNCATE/GRANT/COMMENT/ANALYZE/… anywhere.
- ``transaction``: BEGIN/COMMIT/ROLLBACK.
- ``explain``: EXPLAIN [ANALYZE].
- ``command``: SET/PRAGMA/ATTACH/DETACH/INSTALL/LOAD/USE/SHOW/DESCRIBE/CALL/…
- ``select-into``: ``SELECT … INTO``.
- ``locking``: ``FOR UPDATE``/``FOR SHARE``.
- ``not-a-query``: the root is not SELECT/UNION/INTERSECT/EXCEPT/VALUES.
- ``file-read``: a function reading files or URLs (read_csv, glob, lo_import,
  pg_read_file, …), or a quoted table name that looks like a path or URL
  (``FROM 'x.csv'``).
- ``function``: a function reading settings, the environment or the
  database's own metadata, with side effects, or running SQL given as text
  (getenv, current_setting, set_config, pg_sleep, nextval, query, dblink,
  version, inet_server_addr, obj_description, …); MySQL ``@@`` session
  variables; each engine's own refusals (``checks.sql.engines``: MySQL's
  ``@user`` variables, its replication waits, …); and, given the source's
  ``SourceFacts``, any function the
  database does not mark as safe (``checks.sql.facts``).
- ``schema`` (functions and types): a function or type of another schema.
- ``system-catalog`` (types): a cast to a catalog type (``regclass``, …).
- ``type``: a cast to a user-defined type the source does not own.
- ``table-function``: a table-valued function in FROM other than
  generate_series, range or unnest.
- ``schema``: a schema other than the source's, or a catalog-qualified name.
- ``system-catalog``: information_schema, pg_catalog, pg_*/duckdb_*/sqlite_*.
- ``unknown-table``: a table that is neither one of the source's data sets nor
  a CTE visible at that point.

Sources: docs/design.md, Reading data safely; sqlglot 30's classes (``dir(sqlglot.exp)``);
the DuckDB and PostgreSQL function lists for the deny patterns.

Importing this module adds a handler to the ``sqlglot`` logger (and sets its
level to WARNING when unset) so that warnings during ``guard`` are seen.

What runs is the text regenerated from the checked tree, and it must read back
as that tree: the regenerated text is parsed again and, when the two trees are
the same node for node (types and every argument, names compared exactly), the
checks made on the first hold for it. When they differ (sqlglot normalised
something), the second tree is checked in full and must regenerate to the same
text. Results are kept per process (``functools.lru_cache`` of
``_CACHE_SIZE`` statements, rejections included), so a statement seen before
costs a dictionary look-up: a scheduled automation sends the same statements
on every run.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Collection
from contextvars import ContextVar
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from checks.errors import QueryRejected
from checks.sql.denied import (
    ALLOWED_FUNCTIONS,
    DENIED_FUNCTIONS,
    DENIED_NODES,
    KEYWORD_FUNCTION_DIALECTS,
    KEYWORD_FUNCTIONS,
    METADATA_NODES,
    SYSTEM_FUNCTION_SCHEMAS,
)
from checks.sql.engines import (
    denied_functions,
    denied_nodes,
    denied_schemas,
    denied_text,
    engine_check,
)
from checks.sql.facts import SourceFacts, check_call, check_types
from checks.sql.tables import check_tables, function_name

__all__ = ["guard"]

_warnings: ContextVar[list[str] | None] = ContextVar("sqlglot_warnings", default=None)
_CACHE_SIZE = 512  # statements; each at most max_sql_chars (20,000 by default)
_TOKEN = re.compile(  # sqlglot's repr of a token, inside some parse errors
    r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, "
    r"start: \d+, end: \d+, comments: \[.*?\]>"
)
_MISSING_ARGUMENT = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>")


class _WarningCollector(logging.Handler):
    """Collects sqlglot log warnings raised inside ``guard`` (fail closed on them)."""

    def emit(self, record: logging.LogRecord) -> None:
        found = _warnings.get()
        if found is not None and record.levelno >= logging.WARNING:
            found.append(record.getMessage())


_sqlglot_logger = logging.getLogger("sqlglot")
_sqlglot_logger.addHandler(_WarningCollector())
if _sqlglot_logger.level == logging.NOTSET:
    _sqlglot_logger.setLevel(logging.WARNING)


def guard(
    sql: str,
    *,
    dialect: str,
    allowed_tables: Collection[str],
    max_chars: int = 20_000,
    schema: str | None = None,
    facts: SourceFacts | None = None,
) -> str:
    """Check one read-only query and return the SQL to execute.

    Args:
        sql: the statement as written by a person or the agent.
        dialect: sqlglot dialect of the source: ``duckdb``, ``postgres``,
            ``sqlite`` or ``mysql``.
        allowed_tables: the source's data sets, compared the way the database
            folds names: ignoring the case of A-Z only (never of Ä, Σ, …) in
            ``duckdb`` and ``sqlite``; in ``postgres`` an unquoted name is
            folded the same way and a quoted one must match exactly; in
            ``mysql`` names must match exactly.
        max_chars: longest accepted text, in characters (``Limits.max_sql_chars``).
        schema: the only schema a qualified name may use (``public.orders``);
            when ``None``, ``main`` and ``public`` are accepted. Catalog-qualified
            (three-part) names are always refused.
        facts: what the source's database allows to be called and cast to
            (``Source.facts()``); without them only the deny lists and the
            rules needing no facts apply.

    Returns:
        The statement regenerated by sqlglot from the checked tree in the same
        dialect, without comments: this, not ``sql``, is what must run.

    Raises:
        QueryRejected: with the ``rule`` (see the module docstring) and a
            one-line reason naming what broke it.

    """
    if len(sql) > max_chars:
        raise QueryRejected(
            "too-long", f"the query has {len(sql)} characters; the limit is {max_chars}"
        )
    allowed = allowed_tables if isinstance(allowed_tables, frozenset) else frozenset(allowed_tables)
    checked, rule, reason = _guard_once(sql, dialect, allowed, schema, facts)
    if checked is None:
        raise QueryRejected(rule, reason)
    return checked


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _guard_once(
    sql: str,
    dialect: str,
    allowed_tables: frozenset[str],
    schema: str | None,
    facts: SourceFacts | None,
) -> tuple[str | None, str, str]:
    """``(checked, "", "")``, or ``(None, rule, reason)``: a pure function, hence cached."""
    try:
        return _guard(sql, dialect, allowed_tables, schema, facts), "", ""
    except QueryRejected as rejected:
        return None, rejected.rule, rejected.reason


def _guard(
    sql: str,
    dialect: str,
    allowed_tables: frozenset[str],
    schema: str | None,
    facts: SourceFacts | None,
) -> str:
    tree = _checked_tree(sql, dialect, allowed_tables, schema, facts)
    checked = _generate(tree, dialect)
    for rule, reason, pattern in denied_text(dialect):  # text the engine rewrites itself
        if pattern.search(checked):
            raise QueryRejected(rule, reason)
    # What runs must read back as what was checked. The same tree node for node
    # means the checks above hold for it; otherwise check it in full and require
    # it to regenerate to itself.
    again, warnings = _parse_one(checked, dialect)
    if not warnings and same_tree(tree, again):
        return checked
    again = _checked_tree(checked, dialect, allowed_tables, schema, facts)
    if _generate(again, dialect) != checked:
        raise QueryRejected(
            "parse-error", "the query does not read back the same after regeneration"
        )
    return checked


def _is_set(value: Any) -> bool:
    """Whether an argument counts: sqlglot treats None, False and [] as absent."""
    return value is not None and value is not False and not (type(value) is list and not value)


def same_tree(a: exp.Expr, b: exp.Expr) -> bool:
    """Whether two trees are the same node for node: types, and every argument exactly.

    Every name and literal is compared exactly (``"Orders"`` is not
    ``"orders"``), not through sqlglot's hash-based ``==``. Comments are not
    compared: they are never generated, so they never run.
    """
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if not isinstance(x, exp.Expr):
            if x != y:
                return False
            continue
        xs = {k: v for k, v in x.args.items() if _is_set(v)}
        ys = {k: v for k, v in y.args.items() if _is_set(v)}
        if xs.keys() != ys.keys():
            return False
        for key, value in xs.items():
            other = ys[key]
            if type(value) is list:
                if type(other) is not list or len(value) != len(other):
                    return False
                stack.extend(zip(value, other, strict=True))
            else:
                stack.append((value, other))
    return True


def _checked_tree(
    sql: str,
    dialect: str,
    allowed_tables: Collection[str],
    schema: str | None,
    facts: SourceFacts | None,
) -> exp.Expr:
    tree, warnings = _parse_one(sql, dialect)
    _check_nodes(tree)
    if warnings:
        raise QueryRejected("parse-error", f"the query parses only with a warning: {warnings[0]}")
    if not isinstance(tree, (exp.Query, exp.Values)):
        snippet = " ".join(sql.split())[:40]
        raise QueryRejected("not-a-query", f"'{snippet}' is not a query (SELECT, UNION, VALUES, …)")
    _check_functions(tree, dialect, schema, facts)
    own = engine_check(dialect)
    if own is not None:
        own(tree)
    check_types(tree, dialect=dialect, schema=schema, facts=facts, allowed_tables=allowed_tables)
    check_tables(tree, dialect, allowed_tables, schema)
    return tree


def _parse_one(sql: str, dialect: str) -> tuple[exp.Expr, list[str]]:
    found: list[str] = []
    token = _warnings.set(found)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except Exception as error:  # fail closed: ParseError, TokenError, RecursionError, …
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise QueryRejected(
            "parse-error", f"the query does not parse: {_in_words(first)}"
        ) from None
    finally:
        _warnings.reset(token)
    if len(statements) > 1:
        raise QueryRejected("multiple-statements", f"found {len(statements)} statements; send one")
    if not statements:
        raise QueryRejected("parse-error", "the query is empty")
    return statements[0], found


def _in_words(message: str) -> str:
    """A sqlglot parse error without its internals: no token or class reprs.

    ``got <Token token_type: TokenType.SENTINEL, …>`` becomes ``got the end of the
    query`` (another token: its text, quoted), ``Required keyword: 'this' missing
    for <class 'sqlglot.expressions.query.Where'>`` becomes ``WHERE is incomplete``.
    """

    def token(match: re.Match[str]) -> str:
        return "the end of the query" if match.group(1) == "SENTINEL" else f"'{match.group(2)}'"

    message = _TOKEN.sub(token, message)
    return _MISSING_ARGUMENT.sub(lambda m: f"{m.group(1).upper()} is incomplete", message)


def _generate(tree: exp.Expr, dialect: str) -> str:
    found: list[str] = []
    token = _warnings.set(found)
    try:
        sql = tree.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE)
    except Exception as error:
        raise QueryRejected("parse-error", f"the query cannot be regenerated: {error}") from None
    finally:
        _warnings.reset(token)
    if found:
        raise QueryRejected("parse-error", f"the query regenerates only with a warning: {found[0]}")
    return sql


def _label(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return node.name.upper() or "command"
    if isinstance(node, exp.Transaction):
        return "BEGIN"
    if isinstance(node, exp.Lock):
        return "FOR UPDATE" if node.args.get("update") else "FOR SHARE"
    if isinstance(node, exp.Into):
        return "SELECT … INTO"
    return node.key.upper()


def _check_nodes(tree: exp.Expr) -> None:
    for node in tree.walk():
        for types, rule in DENIED_NODES:
            if isinstance(node, types):
                if _is_explain(node):
                    raise QueryRejected("explain", "EXPLAIN is not allowed; run the query itself")
                where = " inside a WITH clause" if node.find_ancestor(exp.CTE) else ""
                raise QueryRejected(
                    rule, f"{_label(node)}{where} is not allowed in a read-only query"
                )


def _is_explain(node: exp.Expr) -> bool:
    if isinstance(node, exp.Command):
        return node.name.upper() == "EXPLAIN"
    return isinstance(node, exp.Describe) and isinstance(node.this, exp.Query)  # MySQL EXPLAIN


def _check_functions(
    tree: exp.Expr, dialect: str, schema: str | None, facts: SourceFacts | None
) -> None:
    calls: list[tuple[exp.Func, str]] = []
    for node in tree.find_all(exp.Func):
        if isinstance(node, METADATA_NODES):
            raise QueryRejected(
                "function",
                f"{node.sql(dialect=dialect)} is not allowed: it reads the database's own metadata",
            )
        name = function_name(node)
        if name in ALLOWED_FUNCTIONS:
            continue
        for rule, why, pattern in (*DENIED_FUNCTIONS, *denied_functions(dialect)):
            if pattern.fullmatch(name):
                raise QueryRejected(rule, f"function {name}() is not allowed: it {why}")
        calls.append((node, name))
    for dot in tree.find_all(exp.Dot):
        owner = dot.this
        if isinstance(
            owner, (exp.Identifier, exp.Column)
        ) and owner.name.lower() in SYSTEM_FUNCTION_SCHEMAS | denied_schemas(dialect):
            raise QueryRejected("system-catalog", f"{owner.name}.… refers to a system schema")
    for column in tree.find_all(exp.Column):
        ident = column.this
        if (
            dialect in KEYWORD_FUNCTION_DIALECTS
            and not column.table
            and isinstance(ident, exp.Identifier)
            and not ident.quoted
            and ident.name.lower() in KEYWORD_FUNCTIONS
        ):
            raise QueryRejected(
                "function",
                f"{ident.name} is not allowed: it reads the database's own metadata"
                " (a column of that name is written in double quotes)",
            )
    for node, name in calls:
        check_call(node, name, dialect=dialect, schema=schema, facts=facts)
    for session in tree.find_all(exp.SessionParameter):
        raise QueryRejected("function", f"session variable @@{session.name} is not allowed")
    _check_engine_nodes(tree, dialect)


def _check_engine_nodes(tree: exp.Expr, dialect: str) -> None:
    """The nodes the engine's own module refuses (``checks.sql.engines.denied_nodes``)."""
    for types, rule, why in denied_nodes(dialect):
        for found in tree.find_all(*types):
            raise QueryRejected(rule, f"{found.sql(dialect=dialect)} is not allowed: it {why}")
