"""A query's normal form: the key that matches the same query across runs.

Two texts of one query — other whitespace, keyword case, unquoted identifier
case, comments — have one normal form: sqlglot parses the text in the
source's dialect, folds identifiers as that dialect does
(``sqlglot.optimizer.normalize_identifiers``: unquoted names to lower case on
DuckDB and PostgreSQL, quoted ones kept) and writes it back without comments.
String literals and everything else keep their meaning, so ``x = 'A'`` and
``x = 'a'`` stay two queries.

``query_key`` is pure and kept per process (``functools.lru_cache`` of
``CACHE_SIZE`` texts): a scheduled automation sends the same statements on
every run, and the parse and regeneration cost milliseconds each.
"""

from __future__ import annotations

import functools
import hashlib

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

CACHE_SIZE = 1024
"""Keys kept; each text at most ``Limits.max_sql_chars`` (20,000 by default)."""


def normal_sql(sql: str, dialect: str | None) -> str:
    """Return ``sql`` in its normal form (see the module docstring).

    Text sqlglot cannot parse falls back to its words joined by single spaces,
    so it still matches itself across whitespace changes.
    """
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return " ".join(sql.split())
    return normalize_identifiers(tree, dialect=dialect).sql(dialect=dialect, comments=False)


@functools.lru_cache(maxsize=CACHE_SIZE)
def query_key(sql: str, dialect: str | None) -> str:
    """Return the sha256 hex (64 characters) of ``normal_sql(sql, dialect)``."""
    return hashlib.sha256(normal_sql(sql, dialect).encode()).hexdigest()
