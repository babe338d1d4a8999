"""What each engine's own SQL must not call, beyond what the guard refuses everywhere.

``checks.sql.denied`` holds the rules for every dialect. An engine whose SQL has
readers or side effects of its own (a table function reading a URL, a function
calling Java, a stage) adds one module here, written from that engine's
documentation, and one line in ``ENGINE_MODULES``: its ``DENIED_FUNCTIONS`` has
the shape of ``checks.sql.denied.DENIED_FUNCTIONS`` (rule, why, a pattern fully
matched against the lower-case function name), its ``DENIED_SCHEMAS`` names
the schemas (or catalogs) whose functions and tables a query may not name, and its
optional ``DENIED_NODES`` (node types, rule, why) the sqlglot nodes it may not hold
(MySQL's ``@user`` variables); an optional ``check(tree)`` refuses clauses of its own
(``QueryRejected``: a subquery's ``SETTINGS`` in ClickHouse, BigQuery's ``@@``
variables), and an optional ``kind_sql(tree)`` rewrites a typed kind's query where the
engine answers it otherwise. Optional too: ``FILE_FORMATS``, schema names that
read a file instead (Spark's ``parquet.`path```), and ``DENIED_TEXT``, patterns refused
anywhere in the text that runs (rule, reason, pattern).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from sqlglot import exp

ENGINE_MODULES: dict[str, str] = {
    "trino": "checks.sql.engines.trino",
    "redshift": "checks.sql.engines.redshift",
    "tsql": "checks.sql.engines.sqlserver",
    "clickhouse": "checks.sql.engines.clickhouse",
    "snowflake": "checks.sql.engines.snowflake",
    "bigquery": "checks.sql.engines.bigquery",
    "mysql": "checks.sql.engines.mysql",
    "spark": "checks.sql.engines.spark",
    "databricks": "checks.sql.engines.spark",
}
"""sqlglot dialect -> the module of ``checks.sql.engines`` holding its refusals."""

Refusal = tuple[str, str, re.Pattern[str]]
"""(rule, why, pattern): a call whose lower-case name fully matches is refused."""


@cache
def denied_functions(dialect: str) -> tuple[Refusal, ...]:
    """The refusals of ``dialect``'s own functions (empty for a dialect with none)."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return ()
    return tuple(importlib.import_module(module).DENIED_FUNCTIONS)


@cache
def denied_schemas(dialect: str) -> frozenset[str]:
    """The lower-case schema or catalog names ``dialect``'s queries may not name."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return frozenset()
    return frozenset(getattr(importlib.import_module(module), "DENIED_SCHEMAS", ()))


NodeRefusal = tuple[tuple[type[exp.Expr], ...], str, str]
"""(node types, rule, why): a node of one of these types anywhere in a query is refused."""


@cache
def denied_nodes(dialect: str) -> tuple[NodeRefusal, ...]:
    """The sqlglot nodes ``dialect``'s queries may not hold (empty for a dialect with none)."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return ()
    return tuple(getattr(importlib.import_module(module), "DENIED_NODES", ()))


@cache
def engine_check(dialect: str) -> Callable[[Any], None] | None:
    """``dialect``'s own ``check(tree)`` of clauses it refuses, or None."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return None
    found: Callable[[Any], None] | None = getattr(importlib.import_module(module), "check", None)
    return found


@cache
def kind_sql(dialect: str) -> Callable[[Any], Any] | None:
    """``dialect``'s own ``kind_sql(tree)``: a typed kind's query as that engine must run it."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return None
    found: Callable[[Any], Any] | None = getattr(importlib.import_module(module), "kind_sql", None)
    return found


@cache
def file_formats(dialect: str) -> frozenset[str]:
    """The lower-case qualifiers that make ``qualifier.`path``` read a file in ``dialect``."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return frozenset()
    return frozenset(getattr(importlib.import_module(module), "FILE_FORMATS", ()))


@cache
def denied_text(dialect: str) -> tuple[Refusal, ...]:
    """(rule, reason, pattern) refused wherever the pattern occurs in ``dialect``'s text."""
    module = ENGINE_MODULES.get(dialect)
    if module is None:
        return ()
    return tuple(getattr(importlib.import_module(module), "DENIED_TEXT", ()))
