"""Whether a checked query's result is provably small, read from its sqlglot tree.

A source that streams large results through a server-side cursor can run a
small one as a plain statement instead: PostgreSQL never plans a cursor's
query in parallel (``DECLARE`` runs it as a portal that may be suspended,
PostgreSQL docs, When Can Parallel Query Be Used?), while a plain statement
whose whole result is fetched at once can use parallel workers. A result is
small when the outermost query is

- one aggregate row: a ``SELECT`` with an aggregate function outside any
  window and no ``GROUP BY`` (a count, the shared count of many checks), or
- limited: a ``LIMIT`` of at most ``MAX_ROWS`` rows written as a number.

Anything else (a set operation, an unparsed text, a ``LIMIT`` given by an
expression) may be large.
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

MAX_ROWS = 10_000
"""The largest ``LIMIT`` a result is small under."""


@functools.lru_cache(maxsize=1024)
def is_small(sql: str, dialect: str) -> bool:
    """Whether ``sql`` returns at most one aggregate row or ``MAX_ROWS`` rows (kept per text)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # not parsed: not proven small
        return False
    if not isinstance(tree, exp.Select):
        return False
    limit = tree.args.get("limit")
    if isinstance(limit, exp.Limit):
        rows = limit.expression
        if isinstance(rows, exp.Literal) and rows.is_int and int(rows.this) <= MAX_ROWS:
            return True
    if tree.args.get("group"):
        return False
    # An aggregate of this query itself: not of a subquery, not under a window.
    return any(
        node.find_ancestor(exp.Window, exp.Select) is tree for node in tree.find_all(exp.AggFunc)
    )
