"""Running an automation's declared checks: the authoritative, deterministic part of a run.

A raw ``sql`` check runs its query through the read-only layer and compares
the result (``checks.fields.judgement.evaluate``); a typed check runs
through ``checks.declared.typed``. Either way a check that could not look at
any data is **not evaluated**, never passed:

- a raw query that reads a table with 0 rows (the tables come from sqlglot;
  each is probed with ``SELECT 1 … LIMIT 1``, once per run) is not evaluated,
  and its reason names the empty table, unless the check says
  ``allow_empty: true`` (it then runs and its reason notes the empty table);
- a percent over a total of 0 is undefined: not evaluated.

Identical statements of one run (the same text once the guard has
regenerated it, the same rows kept) execute once and share their result
(``checks.sources.run_cache``); each check is still evaluated and reported.

An ``expect: empty`` query whose result is longer than the fingerprint scan
is counted (``SELECT count(*) FROM (…)``), so its value is the true number of
violating rows, never the scan's cap.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Callable, Collection

import sqlglot
from sqlglot import exp

from checks.automation.check import Check
from checks.automation.model import Automation
from checks.clock import utcnow
from checks.declared import anomaly, buckets
from checks.declared.anomaly import VALUE, History
from checks.declared.compare_run import Sources, run_compare_check
from checks.declared.compile import compile_check
from checks.declared.schema_changes import RecordedSchemas
from checks.declared.shared_scans import Planned, Report, SharedScans
from checks.declared.typed import run_typed_check
from checks.errors import CheckDefinitionError, QueryError, SourceError
from checks.fields.judgement import evaluate
from checks.fields.warn_level import breaks_warning
from checks.report import CheckOutcome, CheckResult, Evidence
from checks.settings.limits import Limits
from checks.sources import Source
from checks.sources.run_cache import RunCache
from checks.sql.lint import lint
from checks.sql.tables import fold, tables_read

Clock = Callable[[], dt.datetime]


class EmptyTables:
    """Which tables of a source hold no row, probed once per run (``SELECT 1 … LIMIT 1``).

    ``counted`` (``SharedScans.table_has_rows``) answers from a count a shared
    statement already makes, when one can tell; the probe runs only when none can.
    """

    def __init__(
        self, source: Source, counted: Callable[[str, float], bool | None] | None = None
    ) -> None:
        self.source = source
        self.counted = counted
        self._empty: dict[str, bool] = {}

    def among(self, sql: str, *, timeout_s: float) -> list[str]:
        """Return the data sets ``sql`` reads that have no row, as the catalog names them.

        Raises:
            QueryError: a probe failed (the check is then in error).

        """
        dialect = self.source.dialect
        read = _tables_in(sql, dialect)
        if read is None:  # the guard reports it when the check's query runs
            return []
        by_fold = {fold(d.name, dialect): d.name for d in self.source.catalog()}
        found = [by_fold[name] for name in read if name in by_fold]
        return [name for name in found if self._is_empty(name, timeout_s)]

    def _is_empty(self, name: str, timeout_s: float) -> bool:
        if name not in self._empty and self.counted is not None:
            has_rows = self.counted(name, timeout_s)
            if has_rows is not None:
                self._empty[name] = not has_rows
        if name not in self._empty:
            probe = _probe(name, self.source.dialect)
            result = self.source.query(probe, max_rows=1, timeout_s=timeout_s)
            self._empty[name] = result.row_count == 0
        return self._empty[name]


_CACHE_SIZE = 1024  # texts: the same checks' queries every run; the keys hold them


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _tables_in(sql: str, dialect: str) -> tuple[str, ...] | None:
    """``tables_read`` of ``sql`` (folded names); None when it does not parse. Kept per process."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # sqlglot's errors, and a recursion too deep: not parsed
        return None
    return tuple(tables_read(tree, dialect))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _probe(name: str, dialect: str) -> str:
    """``SELECT 1 FROM "name" LIMIT 1`` in ``dialect``: whether the table has a row."""
    tree = (
        exp.select(exp.Literal.number(1))
        .from_(exp.Table(this=exp.to_identifier(name, quoted=True)))
        .limit(1)
    )
    return tree.sql(dialect=dialect)


def _empty_reason(tables: list[str]) -> str:
    if len(tables) == 1:
        return f"table {tables[0]} has 0 rows"
    return f"tables {', '.join(tables[:-1])} and {tables[-1]} have 0 rows"


def run_check(
    check: Check,
    source: Source,
    limits: Limits,
    *,
    evidence_id: str,
    timeout_s: float,
    empty_tables: EmptyTables | None = None,
    timezone: str = "UTC",
    history: History | None = None,
    slot: dt.datetime | None = None,
) -> tuple[CheckResult, Evidence | None]:
    """Run one raw ``sql`` check through the read-only layer and compare it with its expectation.

    Returns the result and, when the query ran, its evidence (id ``evidence_id``).
    A rejected, failing or timed-out query is an error on the check, never a
    pass; a query reading an empty table is not evaluated (see the module docstring).
    Lint warnings (``checks.sql.lint``; ``timezone`` is the automation's) go in
    the result's ``warnings``. An ``anomaly`` expectation judges the one number
    against ``history`` (the check's values in past completed runs) at ``slot``.
    """
    assert check.sql is not None  # raw checks only; typed ones go to run_typed_check
    expect = check.expectation
    result = CheckResult(check.name, check.sql, expect.text, None, CheckOutcome.NOT_EVALUATED)
    result.warnings = _lint(check.sql, source, timezone)
    probes = empty_tables or EmptyTables(source)
    try:
        empty = probes.among(check.sql, timeout_s=timeout_s)
        if empty and not check.allow_empty:
            result.reason = _empty_reason(empty)
            result.outcome = CheckOutcome.NOT_EVALUATED
            return result, None
        found = source.query(check.sql, max_rows=limits.max_rows, timeout_s=timeout_s)
        row_count = found.row_count
        if not expect.scalar and found.scan_capped:
            row_count = _true_count(found.sql, source, timeout_s)
    except (QueryError, SourceError) as exc:
        result.error = str(exc)
        result.outcome = CheckOutcome.ERROR
        return result, None
    outcome = evaluate(expect, found.columns, found.rows, row_count)
    evidence = Evidence.of_result(
        found,
        evidence_id=evidence_id,
        origin="check",
        limits=limits,
        sql=check.sql,
        row_count=row_count,
        row_count_exact=not found.scan_capped or not expect.scalar,  # rows: recounted
    )
    result.value, result.error = outcome.value, outcome.error
    result.evidence_id = evidence_id
    if not expect.scalar:
        result.metrics = {"rows": row_count}
    elif expect.unit == "percent" and outcome.error is None and found.rows:
        count, total = found.rows[0][0], found.rows[0][1]
        result.metrics = {"count": int(count), "total": int(total)}
    if outcome.error is not None:
        result.outcome = CheckOutcome.ERROR
    elif outcome.not_evaluated is not None:
        result.outcome, result.reason = CheckOutcome.NOT_EVALUATED, outcome.not_evaluated
    else:
        result.outcome = CheckOutcome.PASSED if outcome.passed else CheckOutcome.FAILED
    if expect.anomaly is not None:
        baseline = history(check.name, VALUE) if history else []
        anomaly.apply(
            result, expect.anomaly, slot or utcnow(), baseline, source="runs", zone=timezone
        )
    if empty:
        result.reason = f"{_empty_reason(empty)} (allowed: allow_empty)"
    return result, evidence


def _lint(sql: str, source: Source, timezone: str) -> list[str]:
    try:
        catalog = source.catalog()
    except SourceError:
        catalog = None
    return [
        w.message for w in lint(sql, dialect=source.dialect, catalog=catalog, timezone=timezone)
    ]


def _true_count(sql: str, source: Source, timeout_s: float) -> int:
    """Count the rows of ``sql``'s full result (it was longer than the fingerprint scan)."""
    inner = sqlglot.parse_one(sql, read=source.dialect)
    assert isinstance(inner, exp.Query)  # the guard let only a query through
    counted = exp.select(exp.Count(this=exp.Star())).from_(inner.subquery("violations"))
    result = source.query(counted.sql(dialect=source.dialect), max_rows=1, timeout_s=timeout_s)
    return int(result.rows[0][0])


def _counts_queries(
    automation: Automation,
    source: Source,
    limits: Limits,
    clock: Clock,
    slot: dt.datetime | None,
) -> list[Planned]:
    """Each check's counts query as it will send it (a check that does not compile: none).

    A segmented check (``by:``) is none: its grouped query has one row per segment, so it
    runs alone (and ``scan_plan.shape`` would refuse its ``GROUP BY`` anyway).
    """
    planned: list[Planned] = []
    now = slot or clock()
    for position, check in enumerate(automation.checks or [], start=1):
        if check.sql is not None:
            planned.append(Planned(position, check.name, check.sql, raw=True))
            continue
        if check.spec is None or check.spec.by or check.spec.OWN_RUN:
            continue
        found = buckets.window(check.over, automation.timezone, now) if check.over else None
        try:
            compiled = compile_check(
                check.spec,
                source.catalog(),
                source.dialect,
                sample_rows=limits.max_rows,
                over=check.over,
                buckets=found,
            )
        except (CheckDefinitionError, SourceError):
            continue  # the check reports it when it runs
        planned.append(
            Planned(position, check.name, compiled.counts_sql, grouped=found is not None)
        )
    return planned


def warn_level(result: CheckResult, check: Check) -> CheckResult:
    """Set ``result`` ``warned`` when it passed but its value breaks the check's ``warn:``.

    Only a passed check with a value is judged against its warning level
    (``checks.fields.warn_level``); its ``reason`` then names the level. Every
    other outcome stands: a failure is never softened to a warning. A segmented
    check's segments were each set against it already (``checks.declared.segments``).
    """
    if check.warn is None:
        return result
    result.warn = check.warn.text
    if (
        result.outcome is not CheckOutcome.PASSED
        or result.value is None
        or result.segments is not None
    ):
        return result
    if breaks_warning(check.warn, result.value, result.metrics).passed is False:
        result.outcome = CheckOutcome.WARNED
        note = f"beyond the warning level {check.warn.text}"
        result.reason = "; ".join(part for part in (result.reason, note) if part)
    return result


def run_checks(
    automation: Automation,
    source: Source,
    limits: Limits,
    *,
    deadline: float,
    clock: Clock = utcnow,
    history: History | None = None,
    slot: dt.datetime | None = None,
    shared: bool = True,
    on_statement: Report | None = None,
    schemas: RecordedSchemas | None = None,
    sources: Sources | None = None,
    source_names: Collection[str] | None = None,
) -> tuple[list[CheckResult], list[Evidence]]:
    """Run every declared check in order; evidence ids are ``C1``, ``C2``… by position.

    A check with ``warn:`` that passed is set against its warning level (``warn_level``).

    A typed check's sample of violating rows is ``S<n>`` beside its ``C<n>``.
    Checks on the same table and scope share one statement
    (``checks.declared.shared_scans``); each is still judged and reported alone.

    Args:
        deadline: ``time.monotonic()`` value after which no check starts; a check
            that could not start is recorded as an error ("the run's time limit ran out").
        clock: the current time, zone-aware; freshness ages are measured from it.
        history: past values of the automation's checks, for anomaly expectations.
        slot: the run's slot time (an anomaly's tested point; ``over:`` buckets end there).
        shared: whether checks on one scope share a statement (False: each runs its own).
        on_statement: told of each shared statement once it ran (the run's trace).
        schemas: the schemas recorded in earlier runs, for ``schema`` checks' ``changes``.
        sources: the process's other sources by name, for ``compare``'s ``with.source``
            (``SourcePool.get``); None: only ``source``.
        source_names: the configured sources' names (an unknown one is named closest).
    """
    results: list[CheckResult] = []
    evidence: list[Evidence] = []
    cache = RunCache(source)  # identical statements of this run execute once
    source = scans = SharedScans(cache, on_statement=on_statement)
    if shared:
        scans.plan(_counts_queries(automation, scans, limits, clock, slot))
    empty_tables = EmptyTables(source, counted=scans.table_has_rows)
    for position, check in enumerate(automation.checks or [], start=1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            results.append(
                CheckResult(
                    check.name,
                    check.sql or "",
                    check.expectation.text,
                    None,
                    CheckOutcome.ERROR,
                    f"not run: the automation's time limit ({automation.timeout_s:g} s) ran out",
                    kind=check.kind,
                    warn=check.warn.text if check.warn else None,
                )
            )
            continue
        timeout_s = min(limits.query_timeout_s, remaining)
        if check.spec is not None and check.spec.OWN_RUN:
            result, found = run_compare_check(
                check,
                source,
                limits,
                position=position,
                timeout_s=timeout_s,
                clock=clock,
                sources=sources,
                names=source_names,
            )
            results.append(warn_level(result, check))
            evidence.extend(found)
            continue
        if check.spec is not None:
            result, found = run_typed_check(
                check,
                source,
                limits,
                position=position,
                timeout_s=timeout_s,
                clock=clock,
                timezone=automation.timezone,
                history=history,
                slot=slot,
                schemas=schemas,
            )
            results.append(warn_level(result, check))
            evidence.extend(found)
            continue
        result, ev = run_check(
            check,
            source,
            limits,
            evidence_id=f"C{position}",
            timeout_s=timeout_s,
            empty_tables=empty_tables,
            timezone=automation.timezone,
            history=history,
            slot=slot,
        )
        results.append(warn_level(result, check))
        if ev is not None:
            evidence.append(ev)
    return results, evidence
