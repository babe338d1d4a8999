"""Foreign-key candidates between profiled tables: by name, else by value inclusion.

A column ``A.c`` may point at a key candidate ``B.k`` (``TableProfile.keys``)
of the same type family when ``c`` is named as ``k`` (``carrier`` →
``airlines.carrier``, ``plane_id`` → ``planes.id``), or, for a text column,
when at least 90 % of its distinct values are values of ``B.k``
(``origin`` → ``airports.faa``); a name match needs half of them
(``INCLUDED``). Each pair is measured by one statement (a
sqlglot tree through ``Source.query``): the column's distinct values, those
with no row in ``B``, and the rows holding them; a candidate with orphans is
a real problem the suggestion reveals. Declared constraints are not read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlglot import exp

from checks.errors import QueryError
from checks.sources.base import Source
from checks.suggest.profile import KEY_FAMILIES, ColumnProfile, TableProfile

INCLUDED = {"values": 0.9, "name": 0.5}
"""The share of a column's distinct values a key must hold for it to point there, by how found."""


@dataclass(frozen=True)
class ForeignKey:
    """``table.column`` points at ``to_table.to_column``.

    Attributes:
        by: ``name`` or ``values`` (how it was found).
        keys: the column's distinct non-NULL values; ``orphan_keys`` of them
            have no row in the target, held by ``orphan_rows`` rows.
    """

    table: str
    column: str
    to_table: str
    to_column: str
    by: str
    keys: int
    orphan_keys: int
    orphan_rows: int


def _named_as(column: str, table: str, key: str) -> bool:
    """Whether ``column`` is named for ``table.key`` (``carrier``; ``plane_id`` for planes.id)."""
    singular = table[:-1] if table.endswith("s") else table
    return column.lower() in {key.lower(), f"{singular}_{key}".lower(), f"{table}_{key}".lower()}


def foreign_keys(
    source: Source, profiles: list[TableProfile], *, budget_s: float
) -> tuple[list[ForeignKey], list[str]]:
    """Every column's best foreign-key candidate, and what the time budget left out.

    Returns ``(candidates, skipped)``: one candidate at most per column (a
    name match first, then the most values found), ``skipped`` in words.
    """
    ends = time.monotonic() + budget_s
    found: list[ForeignKey] = []
    skipped: list[str] = []
    for a in profiles:
        for c in a.columns:
            if c.unique or c.family not in KEY_FAMILIES or c.distinct == 0:
                continue
            best: ForeignKey | None = None
            for b in profiles:
                for k in b.keys if b is not a else []:
                    by = _pair(a, c, b, k)
                    if by is None:
                        continue
                    left = min(source.limits.query_timeout_s, ends - time.monotonic())
                    if left <= 0:
                        skipped.append(
                            f"{a.name}.{c.name} → {b.name}.{k.name}: the time budget ran out"
                        )
                        continue
                    try:
                        measured = _measure(source, a.name, c.name, b.name, k.name, left)
                    except QueryError as error:
                        skipped.append(f"{a.name}.{c.name} → {b.name}.{k.name}: {error}")
                        continue
                    keys, orphan_keys, orphan_rows = measured
                    if keys == 0 or keys - orphan_keys < INCLUDED[by] * keys:
                        continue
                    fk = ForeignKey(
                        a.name, c.name, b.name, k.name, by, keys, orphan_keys, orphan_rows
                    )
                    if best is None or _better(fk, best):
                        best = fk
            if best is not None:
                found.append(best)
    return found, skipped


def _pair(a: TableProfile, c: ColumnProfile, b: TableProfile, k: ColumnProfile) -> str | None:
    """How ``a.c`` may point at ``b.k``: ``name``, ``values``, or None (not a candidate)."""
    if c.family != k.family and {c.family, k.family} != {"integer", "decimal"}:
        return None
    if _named_as(c.name, b.name, k.name):
        return "name"
    if c.family == "text" and c.distinct <= b.rows and c.distinct > 1:
        return "values"
    return None


def _better(new: ForeignKey, old: ForeignKey) -> bool:
    if (new.by == "name") != (old.by == "name"):
        return new.by == "name"
    return new.orphan_keys / new.keys < old.orphan_keys / old.keys


def _measure(
    source: Source, table: str, column: str, to_table: str, to_column: str, timeout_s: float
) -> tuple[int, int, int]:
    """``(distinct keys, orphan keys, orphan rows)`` of ``table.column`` in ``to_table``."""
    here = exp.column(column, table="a", quoted=True)
    there = exp.column(to_column, table="b", quoted=True)
    missing = exp.Is(this=there, expression=exp.Null())
    orphan = exp.Case(ifs=[exp.If(this=missing, true=here)])
    orphan_row = exp.Case(ifs=[exp.If(this=missing.copy(), true=exp.Literal.number(1))])
    select = (
        exp.select(
            exp.alias_(exp.Count(this=exp.Distinct(expressions=[here.copy()])), "keys"),
            exp.alias_(exp.Count(this=exp.Distinct(expressions=[orphan])), "orphan_keys"),
            exp.alias_(exp.Count(this=orphan_row), "orphan_rows"),
        )
        .from_(
            exp.Table(
                this=exp.to_identifier(table, quoted=True),
                alias=exp.TableAlias(this=exp.to_identifier("a")),
            )
        )
        .join(
            exp.Table(
                this=exp.to_identifier(to_table, quoted=True),
                alias=exp.TableAlias(this=exp.to_identifier("b")),
            ),
            on=exp.EQ(this=here.copy(), expression=there.copy()),
            join_type="LEFT",
        )
        .where(exp.Not(this=exp.Is(this=here.copy(), expression=exp.Null())))
    )
    row = source.query(select.sql(dialect=source.dialect), max_rows=1, timeout_s=timeout_s).rows[0]
    return int(row[0]), int(row[1]), int(row[2])
