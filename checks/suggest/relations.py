"""Foreign-key candidates between profiled tables: by name, else by value inclusion.

A column ``A.c`` may point at a key candidate ``B.k`` (``TableProfile.keys``)
of the same type family when ``c`` is named as ``k`` (``carrier`` →
``airlines.carrier``, ``plane_id`` → ``planes.id``), or, for a text column,
when at least 90 % of its distinct values are values of ``B.k``
(``origin`` → ``airports.faa``); a name match needs half of them
(``INCLUDED``). Each pair is measured by one statement (a
sqlglot tree through ``Source.query``): the column's distinct values, those
with no row in ``B``, and the rows holding them; a candidate with orphans is
a real problem the suggestion reveals. A constraint the catalog declares
(``Source.foreign_keys``) is taken first, whatever its values hold.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from checks.errors import QueryError
from checks.sources.base import Source
from checks.sql.catalog import ForeignKeyConstraint
from checks.suggest.profile import KEY_FAMILIES, ColumnProfile, TableProfile

INCLUDED = {"values": 0.9, "name": 0.5}
"""The share of a column's distinct values a key must hold for it to point there, by how found."""


@dataclass(frozen=True)
class ForeignKey:
    """``table.column`` points at ``to_table.to_column``.

    Attributes:
        by: ``declared`` (a constraint of the catalog), ``name`` or ``values``
            (how it was found).
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
    source: Source,
    profiles: list[TableProfile],
    *,
    budget_s: float,
    declared: Sequence[ForeignKeyConstraint] = (),
) -> tuple[list[ForeignKey], list[str]]:
    """Every column's foreign key: declared, else its best candidate; and what was left out.

    ``declared``: the catalog's constraints (``Source.foreign_keys``), kept
    whatever their values hold. Returns ``(keys, skipped)``: one key at most
    per column (declared, then a name match, then the most values found),
    ``skipped`` in words (the time budget ran out, a statement failed).
    """
    pairs = _Pairs(source, time.monotonic() + budget_s)
    tables = {p.name: p for p in profiles}
    found: list[ForeignKey] = []
    done: set[tuple[str, str]] = set()
    for key in declared:
        if key.table in tables and key.to_table in tables and (key.table, key.column) not in done:
            fk = pairs.measure(key.table, key.column, key.to_table, key.to_column, "declared")
            if fk is not None:
                found.append(fk)
                done.add((key.table, key.column))
    for a in profiles:
        for c in a.columns:
            if (a.name, c.name) in done or c.unique or c.family not in KEY_FAMILIES:
                continue
            best: ForeignKey | None = None
            for b, k, by in _candidates(a, c, profiles):
                fk = pairs.measure(a.name, c.name, b.name, k.name, by)
                if fk is None or fk.keys == 0 or fk.keys - fk.orphan_keys < INCLUDED[by] * fk.keys:
                    continue
                if best is None or _better(fk, best):
                    best = fk
            if best is not None:
                found.append(best)
    return found, pairs.skipped


def _candidates(
    a: TableProfile, c: ColumnProfile, profiles: list[TableProfile]
) -> list[tuple[TableProfile, ColumnProfile, str]]:
    """The keys of other tables ``a.c`` may point at, and how each was found."""
    if c.distinct == 0:
        return []
    found = []
    for b in profiles:
        for k in b.keys if b is not a else []:
            by = _pair(a, c, b, k)
            if by is not None:
                found.append((b, k, by))
    return found


class _Pairs:
    """Measures pairs within one deadline, noting each left out."""

    def __init__(self, source: Source, ends: float) -> None:
        self.source, self.ends = source, ends
        self.skipped: list[str] = []

    def measure(
        self, table: str, column: str, to: str, to_column: str, by: str
    ) -> ForeignKey | None:
        """The pair measured, or None (noted in ``skipped``) when out of time or failed."""
        left = min(self.source.limits.query_timeout_s, self.ends - time.monotonic())
        pair = f"{table}.{column} → {to}.{to_column}"
        if left <= 0:
            self.skipped.append(f"{pair}: the time budget ran out")
            return None
        try:
            keys, orphan_keys, orphan_rows = _measure(
                self.source, table, column, to, to_column, left
            )
        except QueryError as error:
            self.skipped.append(f"{pair}: {error}")
            return None
        return ForeignKey(table, column, to, to_column, by, keys, orphan_keys, orphan_rows)


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
    """A name match over values; then the fewer orphans."""
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
