"""One side of a ``compare``: its table on its source, and the few questions the row diff asks it.

A side answers, each with one guarded query through ``Source.query`` (so the
SQL guard, the read-only connection and the time limit hold for every one):

- ``summary``: its rows and, for an integer key, the lowest and highest (no hashing);
- ``segments``: for key ranges, each cut in its own number of equal sub-ranges,
  each sub-range's rows and hash sum (one ``GROUP BY`` statement for all of them);
- ``keyed``: each row's key (in its normal text) and row hash, in some ranges;
- ``values``: a few keys' rows as they are, for the samples.

A key position is the key itself where the key is one integer column (so
ranges are key ranges the engine can skip to), else 60 bits of the MD5 of the
key's normal text (so every key type and a compound key cut evenly).
``SqlSide`` hashes in the engine's SQL (``checks.declared.row_text.HASHED_IN_SQL``);
``PythonSide`` (SQLite, and every other engine without MD5) fetches the side's
rows once, at most ``Limits.fingerprint_max_rows`` of them, and answers from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from checks.declared import row_text
from checks.declared.row_text import KEY_DIGITS, ROW_DIGITS, Rule
from checks.errors import QueryError
from checks.sources import QueryResult, Source
from checks.sources.base import Column, DataSet

Range = tuple[int, int]
"""Key positions ``[low, high)``."""

Told = Callable[[str, QueryResult], None]
"""Told of each query a side ran: what it asked (``summary``…), and its result."""


@dataclass(frozen=True)
class Summary:
    """A side's rows, its lowest and highest integer key (None when empty or not one).

    ``null_keys`` counts the rows whose integer key is NULL: they are placed just
    below the lowest key of both sides (``SideSpec.null_at``), so they are compared too.
    """

    rows: int
    low: int | None
    high: int | None
    null_keys: int = 0


@dataclass
class SideSpec:
    """What one side reads: where, which rows, and how each column is written.

    Attributes:
        label: ``table`` or ``with``, as the check names the side.
        source: the open source.
        data_set: its table, as its catalog names it.
        where: its ``filter:`` as a condition, or None.
        keys: the key columns; ``key_rules`` their normal forms.
        columns: the compared columns; ``rules`` their normal forms.
        int_key: the key is one integer column on both sides (its position is itself).
    """

    label: str
    source: Source
    data_set: DataSet
    where: exp.Expr | None
    keys: list[Column]
    key_rules: list[Rule]
    columns: list[Column]
    rules: list[Rule]
    int_key: bool
    timeout_s: float
    told: Told
    fetch_cap: int = 100_000
    null_at: int | None = None  # the position of a NULL integer key, once both summaries ran

    @property
    def dialect(self) -> str:
        """The side's sqlglot dialect."""
        return self.source.dialect


class Side(Protocol):
    """What the row diff asks of a side (``checks.declared.row_diff_bisect``)."""

    spec: SideSpec

    def summary(self) -> Summary:
        """Rows, and the integer key's bounds."""
        ...

    def segments(self, ranges: Sequence[tuple[Range, int]]) -> dict[Range, tuple[int, int]]:
        """Each range cut in its number of parts: each non-empty part's ``(rows, hash sum)``."""
        ...

    def keyed(self, ranges: Sequence[Range], rows: int) -> dict[str, list[int]]:
        """Each key's row hashes (more than one when the key repeats), in ``ranges``."""
        ...

    def values(self, ranges: Sequence[Range], keys: Sequence[str]) -> QueryResult | None:
        """The rows of ``keys`` as they are (key text first), or None when not queried."""
        ...


def sub_ranges(whole: Range, parts: int) -> list[Range]:
    """``whole`` cut in at most ``parts`` ranges of equal width (the last may be narrower)."""
    low, high = whole
    step = max(1, -(-(high - low) // parts))
    return [(start, min(start + step, high)) for start in range(low, high, step)]


class SqlSide:
    """A side whose engine hashes its rows (``row_text.HASHED_IN_SQL``)."""

    def __init__(self, spec: SideSpec) -> None:
        self.spec = spec

    def _col(self, column: Column) -> exp.Column:
        return exp.column(column.name, table="t", quoted=True)

    def key_text(self) -> exp.Expr:
        """The key's normal text."""
        texts = [
            row_text.sql_text(self._col(c), rule, c.type, self.spec.dialect)
            for c, rule in zip(self.spec.keys, self.spec.key_rules, strict=True)
        ]
        return row_text.sql_row_text(texts)

    def position(self) -> exp.Expr:
        """The key's position: the integer key, else a 60-bit hash of its text."""
        if self.spec.int_key:
            key = exp.cast(self._col(self.spec.keys[0]), exp.DataType.build("BIGINT"))
            if self.spec.null_at is None:
                return key
            return exp.Coalesce(this=key, expressions=[exp.Literal.number(self.spec.null_at)])
        return row_text.hash_sql(self.key_text(), self.spec.dialect, KEY_DIGITS)

    def row_hash(self) -> exp.Expr:
        """The row's 60-bit hash: its key and compared columns' normal texts."""
        texts = [
            row_text.sql_text(self._col(c), rule, c.type, self.spec.dialect)
            for c, rule in zip(
                [*self.spec.keys, *self.spec.columns],
                [*self.spec.key_rules, *self.spec.rules],
                strict=True,
            )
        ]
        return row_text.hash_sql(row_text.sql_row_text(texts), self.spec.dialect, ROW_DIGITS)

    def _select(self, *projections: exp.Expr, ranges: Sequence[Range] = ()) -> exp.Select:
        table = exp.Table(
            this=exp.to_identifier(self.spec.data_set.name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier("t")),
        )
        query = exp.select(*projections).from_(table)
        conditions = [exp.paren(self.spec.where.copy())] if self.spec.where is not None else []
        if ranges:
            conditions.append(exp.paren(exp.or_(*(self._within(r) for r in ranges))))
        return query.where(exp.and_(*conditions)) if conditions else query

    def _within(self, whole: Range) -> exp.Expr:
        pos = self.position()
        return exp.and_(
            exp.GTE(this=pos, expression=exp.Literal.number(whole[0])),
            exp.LT(this=pos.copy(), expression=exp.Literal.number(whole[1])),
        )

    def _run(self, asked: str, tree: exp.Expr, max_rows: int) -> QueryResult:
        sql = tree.sql(dialect=self.spec.dialect)
        found = self.spec.source.query(sql, max_rows=max_rows, timeout_s=self.spec.timeout_s)
        self.spec.told(asked, found)
        return found

    def summary(self) -> Summary:
        """One statement: ``count(*)``, and ``min``/``max`` of an integer key."""
        bounds: list[exp.Expr] = []
        if self.spec.int_key:
            pos = self.position()
            bounds = [
                exp.alias_(exp.Min(this=pos), "low"),
                exp.alias_(exp.Max(this=pos.copy()), "high"),
                exp.alias_(exp.Count(this=pos.copy()), "keys"),
            ]
        tree = self._select(exp.alias_(exp.Count(this=exp.Star()), "row_count"), *bounds)
        row = self._run("summary", tree, 1).rows[0]
        if not self.spec.int_key:
            return Summary(int(row[0]), None, None)
        low, high = row[1], row[2]
        return Summary(
            int(row[0]),
            None if low is None else int(low),
            None if high is None else int(high),
            int(row[0]) - int(row[3]),
        )

    def _floor_div(self, offset: exp.Expr, step: int) -> exp.Expr:
        """``offset`` (a whole number ≥ 0) divided by ``step``, rounded down, as an integer."""
        if self.spec.dialect == "postgres":  # bigint / bigint divides whole (DIV: NUMERIC's)
            return exp.Div(this=exp.paren(offset), expression=exp.Literal.number(step), typed=True)
        return exp.IntDiv(this=exp.paren(offset), expression=exp.Literal.number(step))

    def segments(self, ranges: Sequence[tuple[Range, int]]) -> dict[Range, tuple[int, int]]:
        """One ``GROUP BY`` over every part of ``ranges``: rows and hash sum of each."""
        cuts = [sub_ranges(whole, parts) for whole, parts in ranges]
        pos = self.position()
        ifs = []
        base = 0
        for (whole, _), cut in zip(ranges, cuts, strict=True):
            step = cut[0][1] - cut[0][0]
            offset = exp.Sub(this=pos.copy(), expression=exp.Literal.number(whole[0]))
            index = exp.Add(this=exp.Literal.number(base), expression=self._floor_div(offset, step))
            ifs.append(exp.If(this=self._within(whole), true=index))
            base += len(cut)
        wholes = [whole for whole, _ in ranges]
        inner = self._select(
            exp.alias_(exp.Case(ifs=ifs) if len(ifs) > 1 else ifs[0].args["true"], "segment"),
            exp.alias_(self.row_hash(), "row_hash"),
            ranges=wholes,
        )
        segment = exp.column("segment", table="s")
        tree = (
            exp.select(
                segment,
                exp.alias_(exp.Count(this=exp.Star()), "row_count"),
                exp.alias_(exp.Sum(this=exp.column("row_hash", table="s")), "checksum"),
            )
            .from_(inner.subquery("s"))
            .group_by(segment.copy())
        )
        flat = [r for cut in cuts for r in cut]
        found = self._run("segments", tree, len(flat))
        return {flat[int(i)]: (int(n), int(s)) for i, n, s in found.rows}

    def keyed(self, ranges: Sequence[Range], rows: int) -> dict[str, list[int]]:
        """Each row's key text and hash in ``ranges`` (at most ``rows`` rows are read)."""
        tree = self._select(
            exp.alias_(self.key_text(), "key_text"),
            exp.alias_(self.row_hash(), "row_hash"),
            ranges=ranges,
        )
        found = self._run("rows", tree, rows)
        out: dict[str, list[int]] = {}
        for key, hashed in found.rows:
            out.setdefault(str(key), []).append(int(hashed))
        return out

    def values(self, ranges: Sequence[Range], keys: Sequence[str]) -> QueryResult | None:
        """The rows of ``keys`` in ``ranges``, their columns as stored."""
        if not keys:
            return None
        listed = exp.In(this=self.key_text(), expressions=[exp.Literal.string(k) for k in keys])
        named = [exp.alias_(self._col(c), c.name, quoted=True) for c in self.spec.keys]
        shown = [exp.alias_(self._col(c), c.name, quoted=True) for c in self.spec.columns]
        tree = self._select(*named, *shown, ranges=ranges).where(listed)
        return self._run("sample", tree, len(keys) * 2)


@dataclass
class _Row:
    key: str
    position: int | None  # None: a NULL integer key (at ``SideSpec.null_at``)
    row_hash: int
    values: tuple[Any, ...] = field(default=())


class PythonSide:
    """A side whose engine has no MD5: its rows fetched once and hashed in Python.

    Raises (from its first question):
        QueryError: the side holds more than ``fetch_cap`` rows.
    """

    def __init__(self, spec: SideSpec) -> None:
        self.spec = spec
        self._rows: list[_Row] | None = None
        self.result: QueryResult | None = None

    def _all(self) -> list[_Row]:
        if self._rows is not None:
            return self._rows
        spec = self.spec
        table = exp.Table(
            this=exp.to_identifier(spec.data_set.name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier("t")),
        )
        picked = [*spec.keys, *spec.columns]
        tree = exp.select(*(exp.column(c.name, table="t", quoted=True) for c in picked)).from_(
            table
        )
        if spec.where is not None:
            tree = tree.where(spec.where.copy())
        sql = tree.sql(dialect=spec.dialect)
        found = spec.source.query(sql, max_rows=spec.fetch_cap, timeout_s=spec.timeout_s)
        spec.told("all rows", found)
        if found.truncated or found.row_count > spec.fetch_cap:
            raise QueryError(
                f"{spec.label} side ({spec.source.name}, {spec.source.dialect}) is hashed in "
                f"Python and holds more than {spec.fetch_cap:,} rows (limits.fingerprint_max_rows)"
            )
        rules = [*spec.key_rules, *spec.rules]
        width = len(spec.keys)
        rows = []
        for raw in found.rows:
            texts = [row_text.py_text(v, r) for v, r in zip(raw, rules, strict=True)]
            key = row_text.py_row_text(texts[:width])
            position: int | None = row_text.py_hash(key, KEY_DIGITS)
            if spec.int_key:
                position = None if raw[0] is None else int(raw[0])
            hashed = row_text.py_hash(row_text.py_row_text(texts), ROW_DIGITS)
            rows.append(_Row(key, position, hashed, tuple(raw)))
        self._rows, self.result = rows, found
        return rows

    def summary(self) -> Summary:
        """From the fetched rows."""
        rows = self._all()
        positions = [r.position for r in rows if r.position is not None]
        if not self.spec.int_key:
            return Summary(len(rows), None, None)
        nulls = len(rows) - len(positions)
        return Summary(len(rows), min(positions, default=None), max(positions, default=None), nulls)

    def _at(self, row: _Row) -> int:
        """A row's position (a NULL key's is ``null_at``)."""
        if row.position is not None:
            return row.position
        assert self.spec.null_at is not None  # set by the row diff once it saw the NULLs
        return self.spec.null_at

    def segments(self, ranges: Sequence[tuple[Range, int]]) -> dict[Range, tuple[int, int]]:
        """From the fetched rows."""
        out: dict[Range, tuple[int, int]] = {}
        for whole, parts in ranges:
            cut = sub_ranges(whole, parts)
            step = cut[0][1] - cut[0][0]
            for r in self._all():
                at = self._at(r)
                if whole[0] <= at < whole[1]:
                    part = cut[(at - whole[0]) // step]
                    count, total = out.get(part, (0, 0))
                    out[part] = (count + 1, total + r.row_hash)
        return out

    def keyed(self, ranges: Sequence[Range], rows: int) -> dict[str, list[int]]:
        """From the fetched rows."""
        out: dict[str, list[int]] = {}
        for r in self._all():
            if any(low <= self._at(r) < high for low, high in ranges):
                out.setdefault(r.key, []).append(r.row_hash)
        return out

    def values(self, ranges: Sequence[Range], keys: Sequence[str]) -> QueryResult | None:
        """None: the rows were fetched whole (its one query is the evidence)."""
        return None

    def values_of(self, keys: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """The fetched rows of ``keys``, as stored."""
        wanted = set(keys)
        return {r.key: r.values for r in self._all() if r.key in wanted}
