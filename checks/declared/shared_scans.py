"""One run's count queries that share a scan: run as one statement, their rows split back.

``SharedScans`` is the run's view of its source while the declared checks
run. Before they start, ``plan`` is given every check's counts query (a typed
kind's ``Compiled.counts_sql``, a raw check's ``sql``); those on the same
table and scope that ``checks.declared.scan_plan`` proves can share a
statement are grouped, each group into one ``SELECT`` (a group over the
limits' SQL or column-name budget is cut into several). Each check then runs
as before and asks for its own query; the first to ask runs its group's
statement, within that check's time limit (the query limit, or what is left
of the run's deadline, whichever is less: ``limits.query_timeout_s`` applies
to each shared statement as to any other), and every member gets its own
columns back as the result of its own query: its own SQL (the evidence shows
it), its own column names, fingerprint and row hashes, as if it had run alone.

When a shared statement fails (one check's column has the wrong type, the
database refuses it, it runs out of time), each of its checks runs alone, so
an error stays with the check that has it. A query nothing shares with runs
as it always did. Each shared statement is reported to ``on_statement``
(the run's trace: ``lookout show RUN_ID --trace``) with the checks in it, its
SQL, how long it took, and its error if it failed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checks.declared.projection_names import fits, names_probe, probe_texts, renamed
from checks.declared.scan_plan import (
    ANY_WHERE,
    ROWS,
    Shape,
    prefix,
    scope,
    shape,
    statement_of,
)
from checks.errors import QueryError
from checks.sources.base import Source
from checks.sources.budget import names_chars
from checks.sources.fingerprint import collect
from checks.sources.result import Column, DataSet, QueryResult
from checks.sql.facts import SourceFacts

NAMES_KEPT = 256
"""Names statements' answers a process keeps: a column's name comes from its text alone."""

_NAMES: dict[tuple[str, str, str], list[str]] = {}  # (source, dialect, names statement): names
_NAMES_LOCK = threading.Lock()

Report = Callable[[dict[str, Any]], None]
"""Receives one shared statement's record (``SharedScans`` says what it holds)."""


@dataclass(frozen=True)
class Planned:
    """One check's counts query offered to ``SharedScans.plan``.

    Attributes:
        position: the check's 1-based position (its columns' prefix, ``c3__``).
        name: the check's name (the trace lists them).
        sql: its counts query as the check sends it.
        grouped: a typed ``over:`` query (``GROUP BY`` its buckets), which may
            share only with one grouped identically.
        raw: a raw ``sql:`` check (its table's empty probe folds into the count).
    """

    position: int
    name: str
    sql: str
    grouped: bool = False
    raw: bool = False


@dataclass
class _Shared:
    """One shared statement: its members, its SQL, and once run its row(s) or its error."""

    members: list[tuple[Planned, Shape]]
    sql: str
    done: bool = False
    rows: list[tuple[Any, ...]] | None = None
    columns: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    error: str | None = None
    names: dict[tuple[int, int], str] = field(default_factory=dict)  # renamed: the database's

    @property
    def table(self) -> str:
        return self.members[0][1].table

    @property
    def filtered(self) -> bool:
        """Whether the statement's scope is less than the whole table."""
        return scope(self._pairs) is not None

    @property
    def _pairs(self) -> list[tuple[int, Shape]]:
        return [(query.position, found) for query, found in self.members]


class SharedScans(Source):
    """``source`` seen by one run's declared checks, their shared statements planned.

    Attributes:
        source: the run's view of the source (``RunCache``) every statement runs on.
        statements: the shared statements planned, in the order of their first check.
    """

    def __init__(self, source: Source, *, on_statement: Report | None = None) -> None:
        super().__init__()
        self.source = source
        self.name, self.dialect = source.name, source.dialect
        self.schema, self.limits = source.schema, source.limits
        self.statements: list[_Shared] = []
        self._by_sql: dict[str, tuple[_Shared, int]] = {}  # checked text: statement, member
        self._guarded: dict[str, str] = {}  # a query as written: the guard's text, planned
        self._report = on_statement
        self._lock = threading.Lock()

    def _load_catalog(self) -> list[DataSet]:
        return self.source.catalog()

    def _load_facts(self) -> SourceFacts | None:
        return self.source.facts()

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """The wrapped source's columns of ``name``, read afresh (``Source.table_columns``)."""
        return self.source.table_columns(name)

    def plan(self, queries: Sequence[Planned]) -> None:
        """Group the queries that share a scan (see the module docstring).

        A query the guard refuses is left out (it fails on its own when the
        check runs); so is one whose text another query already has (the run
        cache shares it). A group of one typed query gains nothing and is left
        out; a lone raw one is kept: its count answers its table's empty probe.
        """
        groups: dict[tuple[Any, ...], list[tuple[Planned, Shape, str]]] = {}
        for query in queries:
            checked = self._checked(query.sql)
            if checked is not None:
                self._guarded[query.sql] = checked
            if checked is None or any(checked == c for g in groups.values() for *_, c in g):
                continue
            found = shape(checked, self.dialect, grouped=query.grouped)
            if found is None or not fits(query.position, found, self.limits.max_cell_chars):
                continue
            groups.setdefault((query.grouped, *found.group_key), []).append((query, found, checked))
        _join_same_scope(groups)
        for members in groups.values():
            if len(members) == 1 and not members[0][0].raw:
                continue
            for chunk in self._chunks(members):
                shared = _Shared([(q, s) for q, s, _ in chunk], "")
                shared.sql = statement_of(
                    tuple((q.position, c, q.grouped) for q, _, c in chunk), self.dialect
                )
                self.statements.append(shared)
                for index, (*_, checked) in enumerate(chunk):
                    self._by_sql[checked] = (shared, index)

    def query(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None
    ) -> QueryResult:
        """``Source.query``, with the guard's text of a planned query taken from the plan.

        The guard ran on it when planned, on the same catalog and facts: it is
        not run twice for one check.
        """
        checked = self._guarded.get(sql)
        if checked is None:
            return super().query(sql, max_rows=max_rows, timeout_s=timeout_s)
        from checks.sql.normal_form import query_key

        result = self._execute(
            checked,
            max_rows=self.limits.max_rows if max_rows is None else max_rows,
            timeout_s=self.limits.query_timeout_s if timeout_s is None else timeout_s,
        )
        result.query_key = query_key(sql, self.dialect)
        return result

    def _checked(self, sql: str) -> str | None:
        """The guard's text of ``sql`` (what ``query`` would run), None when refused."""
        from checks.sql.guard import guard

        try:
            self.catalog()
            return guard(
                sql,
                dialect=self.dialect,
                allowed_tables=self._names,
                max_chars=self.limits.max_sql_chars,
                schema=self.schema,
                facts=self.facts(),
            )
        except QueryError:
            return None

    def _chunks(
        self, members: list[tuple[Planned, Shape, str]]
    ) -> list[list[tuple[Planned, Shape, str]]]:
        """``members`` cut into statements within the SQL and column-name budgets."""
        sql_budget = self.limits.max_sql_chars * 9 // 10
        names_budget = self.limits.max_result_chars // 2 - len(ROWS) - 4
        chunks: list[list[tuple[Planned, Shape, str]]] = [[]]
        sql_used = names_used = 0
        for member in members:
            query, found, checked = member
            names = [
                prefix(query.position) + n.name if n is not None else v.sql()
                for n, v in zip(found.names, found.values, strict=True)
            ]
            sql_cost, names_cost = len(checked), names_chars(names)
            over = sql_used + sql_cost > sql_budget or names_used + names_cost > names_budget
            if chunks[-1] and over:
                chunks.append([])
                sql_used = names_used = 0
            chunks[-1].append(member)
            sql_used += sql_cost
            names_used += names_cost
        return chunks

    def table_has_rows(self, table: str, timeout_s: float) -> bool | None:
        """Whether data set ``table`` has a row, from a shared count; None when none can tell.

        A table-wide count tells either way; a filtered one only when it is
        above 0. Only statements holding a raw check are run for this (the
        check asking is one of them): the probe folds into its count.
        """
        candidates = [s for s in self.statements if s.table == self._folded(table)]
        candidates.sort(key=lambda s: (s.filtered, not s.done))
        for shared in candidates:
            if not shared.done and not any(q.raw for q, _ in shared.members):
                continue
            rows = self._run(shared, timeout_s, 1)
            if rows is None or not rows:
                continue
            count = rows[0][0]
            if not isinstance(count, int):
                continue
            if count > 0 or not shared.filtered:
                return count > 0
        return None

    def _folded(self, table: str) -> str:
        from checks.sql.tables import fold

        return fold(table, self.dialect)

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        found = self._by_sql.get(sql)
        if found is None:
            return self.source._execute(sql, max_rows=max_rows, timeout_s=timeout_s)
        shared, index = found
        rows = self._run(shared, timeout_s, max_rows)
        if rows is None:  # the shared statement failed: this check runs alone
            return self.source._execute(sql, max_rows=max_rows, timeout_s=timeout_s)
        return self._split(shared, index, sql, rows, max_rows)

    def _run(
        self, shared: _Shared, timeout_s: float, max_rows: int
    ) -> list[tuple[Any, ...]] | None:
        """The shared statement's rows (run now if not yet), None when it failed."""
        with self._lock:  # the run's checks go one by one; a second caller waits
            if not shared.done:
                started = time.monotonic()
                try:
                    found = self.source.query(shared.sql, max_rows=max_rows, timeout_s=timeout_s)
                    self._name(shared, timeout_s - (time.monotonic() - started))
                    shared.rows, shared.columns = list(found.rows), list(found.columns)
                except QueryError as error:
                    shared.error = str(error)
                shared.elapsed_ms = (time.monotonic() - started) * 1000
                shared.done = True
                self._tell(shared)
            return shared.rows

    def _name(self, shared: _Shared, timeout_s: float) -> None:
        """The database's names of the projections the shared statement renamed.

        Raises:
            QueryError: the names statement failed (the shared statement counts as failed).
        """
        probe = names_probe(shared._pairs, self.dialect)
        if probe is None:
            return
        key = (self.name, self.dialect, probe)
        columns = _NAMES.get(key)
        if columns is None:
            found = self.source.query(probe, max_rows=1, timeout_s=max(timeout_s, 1.0))
            columns = list(found.columns)
            with _NAMES_LOCK:
                _NAMES[key] = columns
                if len(_NAMES) > NAMES_KEPT:
                    _NAMES.pop(next(iter(_NAMES)))
        texts = probe_texts(shared._pairs, self.dialect)
        distinct = list(dict.fromkeys(texts))
        if len(columns) != len(distinct):
            raise QueryError(f"the names statement returned {len(columns)} columns")
        named = dict(zip(distinct, columns, strict=True))
        wanted = renamed(shared._pairs, self.dialect)
        shared.names = {at: named[text] for at, text in zip(wanted, texts, strict=True)}

    def _split(
        self, shared: _Shared, index: int, sql: str, rows: list[tuple[Any, ...]], max_rows: int
    ) -> QueryResult:
        """Member ``index``'s own columns of the shared rows, as the result of its own query."""
        start = 0 if shared.members[0][1].grouped else 1
        start += sum(len(found.names) for _, found in shared.members[:index])
        query, found = shared.members[index]
        width = len(found.names)
        head = len(prefix(query.position))
        names = [  # a named column under its own name; one not named as the database named it
            shared.names.get((index, k), shown if name is None else shown[head:])
            for k, (name, shown) in enumerate(
                zip(found.names, shared.columns[start : start + width], strict=True)
            )
        ]
        own = [tuple(row[start : start + width]) for row in rows]
        batches = [own, []]
        result = collect(
            lambda _n: batches.pop(0) if batches else [],
            sql=sql,
            columns=names,
            max_rows=max_rows,
            scan_rows=self.limits.fingerprint_max_rows,
            started=time.monotonic(),
            timeout_s=float("inf"),
            limits=self.limits,
        )
        result.elapsed_ms = shared.elapsed_ms
        return result

    def _tell(self, shared: _Shared) -> None:
        if self._report is None:
            return
        record: dict[str, Any] = {
            "checks": [query.name for query, _ in shared.members],
            "positions": [query.position for query, _ in shared.members],
            "table": shared.table,
            "sql": shared.sql,
            "elapsed_ms": round(shared.elapsed_ms, 1),
        }
        if shared.error is not None:
            record |= {"error": shared.error, "then": "each check ran alone"}
        self._report(record)

    def close(self) -> None:
        """Nothing to release: the run's view below stays open (the run does not own it)."""


def _join_same_scope(groups: dict[tuple[Any, ...], list[tuple[Planned, Shape, str]]]) -> None:
    """Move a group whose queries cannot filter their own aggregates into a filterable one.

    In place: a group whose aggregates ``CASE`` would change (a median where the
    dialect has no ``FILTER``) joins its table's filterable group when every query
    there has the same ``WHERE`` as its own; the statement then keeps that ``WHERE``
    and filters nothing. The joined group stays in check order.
    """
    for key in list(groups):
        grouped, table, where, *rest = key
        if where == ANY_WHERE:
            continue
        into = groups.get((grouped, table, ANY_WHERE, *rest))
        if into and all(found.key[1] == where for _, found, _ in into):
            into.extend(groups.pop(key))
            into.sort(key=lambda member: member[0].position)
