"""The names a shared statement gives its projections, and the database's names it asks for.

A shared statement (``checks.declared.scan_plan.statement``) names each check's
projections ``c<position>__<name>`` (``prefix``), so a name must stay whole once
prefixed (``fits``). A projection not named is named by the database from its
text (DuckDB, SQLite, MariaDB, Spark, ClickHouse) or from its outermost function
(PostgreSQL, ``NAMES_BY_FUNCTION``). Where its own filter changes that text, the
shared statement names it ``c<position>__<k>`` (``renamed``) and ``names_probe``
builds the statement that asks the database the name it gives the projection as
written (``… LIMIT 0``: no row read).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from checks.declared.aggregate_filter import NAMES_BY_FUNCTION
from checks.declared.scan_plan import Shape, prefix, scope

MAX_NAME_BYTES = 63
"""Longest column name a shared statement uses: PostgreSQL cuts longer names (NAMEDATALEN - 1)."""


def fits(position: int, found: Shape, max_chars: int) -> bool:
    """Whether every name of the check at ``position``, prefixed, stays whole in a result.

    At most ``MAX_NAME_BYTES`` bytes and ``max_chars`` characters (a longer name
    is cut where results show it, ``Limits.max_cell_chars``).
    """
    head = prefix(position)
    limit = min(MAX_NAME_BYTES, max_chars)
    return all(len((head + n.name).encode()) <= limit for n in found.names if n is not None)


def renamed(members: list[tuple[int, Shape]], dialect: str) -> list[tuple[int, int]]:
    """(member, projection) indexes of the projections ``statement`` names ``c<position>__<k>``.

    Projections not named whose own filter changes their text (so their name), in
    ``scan_plan.statement``.
    """
    if dialect in NAMES_BY_FUNCTION or scope(members) is not None:
        return []
    return [
        (m, k)
        for m, (_, found) in enumerate(members)
        if found.where is not None
        for k, name in enumerate(found.names)
        if name is None
    ]


def names_probe(members: list[tuple[int, Shape]], dialect: str) -> str | None:
    """The statement asking the database the names it gives the ``renamed`` projections.

    Its columns are named as the projections written alone would be, one per
    distinct text (``probe_texts``); None when there are none.

    ``SELECT <projections> FROM table AS t LIMIT 0``: DuckDB and PostgreSQL plan
    it without reading a row. One column per distinct text, since a driver may
    rename a repeated name.
    """
    texts = probe_texts(members, dialect)
    if not texts:
        return None
    values = [sqlglot.parse_one(text, read=dialect) for text in dict.fromkeys(texts)]
    query = exp.select(*values).from_(members[0][1].source.copy()).limit(0)
    return query.sql(dialect=dialect)


def probe_texts(members: list[tuple[int, Shape]], dialect: str) -> list[str]:
    """The text of each ``renamed`` projection, in that order (repeats kept)."""
    return [members[m][1].values[k].sql(dialect=dialect) for m, k in renamed(members, dialect)]
