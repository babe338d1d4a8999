"""Cells too large to fetch whole, and how the database measures them before they reach Python.

A query whose result has variable-size columns (text, blobs, lists, structs…)
runs wrapped in a projection that measures each such cell in SQL first: a cell
larger than ``Limits.fetch_cell_chars`` never reaches Python whole (turning one
huge value into Python objects can neither be interrupted nor bounded in
memory); it arrives as an ``Oversized`` holding its head, size and the
database's hash (``CellFetch``). DuckDB knows the result's types before it runs
(``duckdb_weight``); PostgreSQL gives their OIDs (``pg_weight``); SQLite has none, so
every cell is measured (``SQLITE_WEIGHT``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

FETCH_CELL_CHARS = 10_000
"""A cell larger than this (about, in characters; at least ``max_cell_chars``)
is not fetched whole by a source that can tell before fetching (DuckDB): it
arrives as an ``Oversized`` instead, so one huge value can neither fill the
worker's memory nor outlast the time limit while it is turned into Python."""


@dataclass(frozen=True)
class Oversized:
    """What a result holds instead of a cell too large to fetch (see ``FETCH_CELL_CHARS``).

    Attributes:
        type: the database's type of the value, e.g. ``VARCHAR``.
        size: its size in characters (bytes for text and blobs) as the database
            measured it; for a list of fixed-size items, 16 per item.
        digest: a hash of the whole value computed by the database, so the
            fingerprint still tells two different huge values apart.
        head: its start, enough to fill a cell: text, or the first items of a
            list; ``None`` when nothing of it was fetched.

    """

    type: str
    size: int
    digest: str
    head: str | list[Any] | None = None

    def __repr__(self) -> str:
        return f"<{self.type} value of about {self.size:,} characters, not fetched>"


# Types whose values are small and fixed in size: fetched as they are.
_FIXED_TYPES = frozenset(
    {"boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
     "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "date", "time", "time_ns",
     "time with time zone", "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns",
     "timestamp with time zone", "interval", "uuid", "enum", "null"}
)  # fmt: skip
_ITEM_CHARS = 16  # what one fixed-size item of a list counts for


@dataclass(frozen=True)
class _Weight:
    """How to measure one column's cells in SQL, and what to keep of an oversized one."""

    size: str  # SQL over {x}: the cell's size in characters (about)
    head: str | None  # SQL over {x} and {n}: its start, or None to keep nothing
    type: str = ""  # shown in Oversized; filled in by CellFetch


# PostgreSQL type OIDs (pg_type.oid, fixed since 8.x) of small, fixed-size values.
_PG_FIXED_OIDS = frozenset(
    {16, 18, 20, 21, 23, 26, 28, 29, 700, 701, 790, 829, 869, 650, 1082, 1083, 1114, 1184,
     1186, 1266, 1700, 2278, 2950, 3220}
)  # fmt: skip
_PG_TEXT_OIDS = frozenset({19, 25, 114, 142, 705, 1042, 1043, 3802})  # name, text, json, xml…
_PG_BYTEA_OID = 17

SQLITE_WEIGHT = _Weight("length(CAST({x} AS BLOB))", "substr({x}, 1, {n})")
"""How SQLite cells are measured: each one, by its bytes (SQLite types values, not columns)."""


def pg_weight(oid: int) -> _Weight | None:
    """Return how to measure PostgreSQL cells of type ``oid``, or None if fixed-size."""
    if oid in _PG_FIXED_OIDS:
        return None
    if oid == _PG_BYTEA_OID:
        return _Weight("octet_length({x})", None)
    if oid in _PG_TEXT_OIDS:
        return _Weight("octet_length({x}::text)", "left({x}::text, {n})")
    return _Weight("octet_length({x}::text)", None)


def duckdb_weight(type_: Any) -> _Weight | None:
    """Return how to measure cells of ``type_`` (a ``DuckDBPyType``), or None if fixed-size."""
    kind = type_.id
    if kind in _FIXED_TYPES:
        return None
    if kind == "varchar":  # JSON too; strlen counts bytes, never fewer than characters
        return _Weight("strlen({x})", "left({x}, {n})")
    if kind == "blob":
        return _Weight("octet_length({x})", None)
    if kind == "bit":
        return _Weight("bit_length({x})", "left(CAST({x} AS VARCHAR), {n})")
    if kind in ("list", "array"):
        item = dict(type_.children)["child"]
        if getattr(item, "id", None) in _FIXED_TYPES:
            return _Weight(f"len({{x}}) * {_ITEM_CHARS}", "{x}[1:{n}]")
    # Anything else (structs, maps, unions, variants, big numbers, lists of
    # those or of text): measured by its text, which DuckDB makes quickly.
    return _Weight("strlen(CAST({x} AS VARCHAR))", None)


class CellFetch:
    """Wraps a checked query so that no cell above ``fetch_chars`` reaches Python whole.

    The wrapper only projects: ``SELECT … FROM (SELECT …, <size> FROM (<sql>)
    AS lookout_q(c0, c1, …)) AS lookout_w`` (SQLite, which has no column
    list on a subquery: ``WITH lookout_q(c0, …) AS (<sql>) SELECT …``). Rows, their
    order and every cell within the limit come back exactly as ``sql`` returns
    them (PostgreSQL: with ``OFFSET 0`` fences, so that its planner does not
    copy a cell's expression into every use of it); an oversized cell comes
    back as NULL plus its size, the database's
    hash of the whole value (``digest``, e.g. DuckDB's ``hash({x})``) and its
    head, and is read as an ``Oversized``. ``sql`` is the guard's
    regenerated text of one statement, placed alone between parentheses (after
    a line break, so nothing can reach past it); the wrapper must then parse
    as one SELECT and have the planned width, or the query fails.
    """

    def __init__(
        self,
        types: list[str],
        weights: list[_Weight | None],
        *,
        fetch_chars: int,
        head_chars: int,
        digest: str | None = "hash({x})",
        cte: bool = False,
        fence: bool = False,
        quote: str = '"',
    ) -> None:
        self.weights = [
            None if w is None else _Weight(w.size, w.head, t)
            for w, t in zip(weights, types, strict=True)
        ]
        self.fetch_chars = fetch_chars
        self.head_chars = head_chars
        self.digest = digest
        self.cte = cte
        self.fence = fence
        self.quote = quote  # how the dialect quotes a name: Spark's backquote
        self.needed = any(w is not None for w in self.weights)
        self.width = sum(1 if w is None else 3 + (w.head is not None) for w in self.weights)

    def wrap(self, sql: str) -> str:
        """Return ``sql`` wrapped so that each cell above ``fetch_chars`` comes back measured."""
        q = self.quote
        names = ", ".join(f"{q}c{i}{q}" for i in range(len(self.weights)))
        inner: list[str] = []
        outer: list[str] = []
        limit = self.fetch_chars
        for i, weight in enumerate(self.weights):
            x, w = f"{q}c{i}{q}", f"{q}w{i}{q}"
            inner.append(x)
            if weight is None:
                outer.append(x)
                continue
            inner.append(f"{weight.size.format(x=x)} AS {w}")
            big = f"{w} > {limit}"
            digest = self.digest.format(x=x) if self.digest else "NULL"
            outer += [
                f"CASE WHEN {w} <= {limit} THEN {x} END",
                f"CASE WHEN {big} THEN {w} END",
                f"CASE WHEN {big} THEN {digest} END",
            ]
            if weight.head is not None:
                head = weight.head.format(x=x, n=self.head_chars)
                outer.append(f"CASE WHEN {big} THEN {head} END")
        if self.cte:
            return (
                f"WITH lookout_q({names}) AS (\n{sql}\n) SELECT {', '.join(outer)}"
                f" FROM (SELECT {', '.join(inner)} FROM lookout_q) AS lookout_w"
            )
        if self.fence:  # OFFSET 0: PostgreSQL computes each cell once, not once per use
            return (
                f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM"
                f" (SELECT * FROM (\n{sql}\n) AS lookout_s OFFSET 0) AS lookout_q({names})"
                " OFFSET 0) AS lookout_w"
            )
        return (
            f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM (\n{sql}\n)"
            f" AS lookout_q({names})) AS lookout_w"
        )

    def reader(
        self, fetchmany: Callable[[int], Sequence[Sequence[Any]]]
    ) -> Callable[[int], list[tuple[Any, ...]]]:
        """Return a ``fetchmany`` giving rows in the query's own shape."""
        values: list[int] = []  # where each cell's value is in a wrapped row
        sizes: list[tuple[int, int, _Weight]] = []  # (cell, its size's place, how measured)
        at = 0
        for cell, weight in enumerate(self.weights):
            values.append(at)
            if weight is None:
                at += 1
            else:
                sizes.append((cell, at + 1, weight))
                at += 4 if weight.head is not None else 3

        def fetch(size: int) -> list[tuple[Any, ...]]:
            rows = []
            for wide in fetchmany(size):
                row = [wide[i] for i in values]
                for cell, where, weight in sizes:
                    if wide[where] is not None:  # oversized: NULL value, then size, hash, head
                        head = wide[where + 2] if weight.head is not None else None
                        row[cell] = Oversized(
                            weight.type, int(wide[where]), str(wide[where + 1]), head
                        )
                rows.append(tuple(row))
            return rows

        return fetch


_SPARK_FIXED = re.compile(
    r"boolean|tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\)|date|timestamp"
    r"|timestamp_ntz|interval .*|void"
)


def spark_weight(type_name: str) -> _Weight | None:
    """How to measure Spark cells of ``type_name`` (``DataType.simpleString()``); None if fixed.

    Text is measured in bytes (``octet_length``, never fewer than characters) and
    keeps its head; binary values by their bytes; arrays, maps, structs and
    variants by their text (``CAST(… AS STRING)``).
    """
    if _SPARK_FIXED.fullmatch(type_name):
        return None
    if type_name == "string" or type_name.startswith(("varchar(", "char(", "string collate")):
        return _Weight("octet_length({x})", "left({x}, {n})")
    if type_name == "binary":
        return _Weight("octet_length({x})", None)
    return _Weight("octet_length(CAST({x} AS STRING))", None)
