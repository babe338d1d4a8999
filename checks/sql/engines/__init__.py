"""What each engine's own SQL must not call, beyond what the guard refuses everywhere.

``checks.sql.denied`` holds the rules for every dialect. An engine whose SQL has
readers or side effects of its own (a table function reading a URL, a function
calling Java, a stage) adds one module here, written from that engine's
documentation, and one line in ``ENGINE_MODULES``: its ``DENIED_FUNCTIONS`` has
the shape of ``checks.sql.denied.DENIED_FUNCTIONS`` (rule, why, a pattern fully
matched against the lower-case function name) and its ``DENIED_SCHEMAS`` names
the schemas (or catalogs) whose functions and tables a query may not name. Optional:
``FILE_FORMATS``, schema names that read a file instead (Spark's ``parquet.`path```),
and ``DENIED_TEXT``, patterns refused anywhere in the text that runs (rule, reason,
pattern).
"""

from __future__ import annotations

import importlib
import re
from functools import cache

ENGINE_MODULES: dict[str, str] = {
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
