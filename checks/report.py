"""The report of one run: what ran, what it returned, and the finding.

These dataclasses are what ``checks.run`` produces, what ``checks.store.store``
saves and loads, and what ``lookout run --json`` prints (``RunReport.to_dict``).
Values are JSON-safe (see ``json_value``) except ``CheckResult.value``, which
keeps the raw database value until it is serialised.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the plan imports this module
    from checks.pinned.plan import PinnedPlan
    from checks.settings.limits import Limits
    from checks.sources.base import QueryResult

from checks.sources.row_set import RowSet


class Status(StrEnum):
    """Where a run is. ``completed`` runs have a finding; the others do not."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"
    SKIPPED = "skipped"


class Finding(StrEnum):
    """The answer a completed run gives."""

    CLEAR = "clear"
    NEEDS_ATTENTION = "needs_attention"


class CheckOutcome(StrEnum):
    """How one declared check came out.

    ``not_evaluated`` is neither a pass nor a failure: the check could not look
    at any data (0 rows in its scope, an empty table, a percent over 0 rows).
    It makes the run Needs attention, with its reason, unless the check allows
    an empty scope (``allow_empty: true``; it then counts as passed and says so).
    """

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    NOT_EVALUATED = "not_evaluated"


class FindingSource(StrEnum):
    """Who decided the finding: the checks, the agent, the runtime overriding it, or a plan.

    ``pinned``: the automation's pinned plan, an earlier accepted agent report
    whose evidence is unchanged (``checks.pinned``); no LLM was asked.
    """

    CHECKS = "checks"
    AGENT = "agent"
    OVERRIDE = "override"
    PINNED = "pinned"


FRESH_TRIGGER = "fresh"
"""The trigger of an on-demand service run asked to ignore the pinned plan (``run-now --fresh``).

Runs are triggered ``schedule``, ``manual``, ``eval`` or ``fresh``.
"""


def json_value(value: Any) -> Any:
    """Return ``value`` as a JSON-safe value without losing exactness.

    Decimals become numbers when a float holds them exactly (``0.0245``) and
    strings otherwise; dates and times become ISO 8601 strings; bytes become
    ``"<N bytes>"``; NaN and infinities become strings.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value) < 2**63:
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return str(value)


@dataclass
class Evidence:
    """One query that ran in this run, with a bounded sample of its result.

    Attributes:
        id: ``C1``… for declared checks, ``S1``… for the sample of violating
            rows of typed check 1, ``Q1``… for the agent's queries.
        rows: at most ``limits.max_rows`` rows, JSON-safe, cells cut to the budget.
        row_count: rows in the full result (a lower bound when ``row_count_exact``
            is False). For a sample (``S…``), whose SQL
            ends in ``LIMIT``, the number of violating rows the check counted.
        truncated: ``rows`` holds fewer rows than ``row_count``.
        fingerprint: sha256 hex of the result's column names and rows
            (``checks.sources.base.QueryResult.fingerprint``): of every row, or of
            the first ``limits.fingerprint_max_rows`` when ``row_count_exact`` is False.
        row_count_exact: False when the result had more rows than
            ``limits.fingerprint_max_rows``: the scan stopped there, so
            ``row_count`` is only "at least".
        query_key: the key of the SQL's normal form (``checks.sql.normal_form``):
            how the same query is found in other runs; None when unknown.
        row_set: the result's row hashes (``checks.sources.row_set``), its
            sample's cut to ``rows``; None when not read. Stored apart, never
            in ``--json``.
    """

    id: str
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    fingerprint: str
    origin: str = "check"
    row_count_exact: bool = True
    query_key: str | None = None
    row_set: RowSet | None = None

    @classmethod
    def of_result(
        cls,
        result: QueryResult,
        *,
        evidence_id: str,
        origin: str,
        limits: Limits,
        sql: str | None = None,
        row_count: int | None = None,
        row_count_exact: bool | None = None,
    ) -> Evidence:
        """The evidence of a query's ``result``: every field read from it, one way for all.

        Rows are made JSON-safe within ``limits.max_cell_chars`` and
        ``limits.max_result_chars`` (``QueryResult.jsonable``); the row set keeps
        the hashes of the rows kept as its sample.

        Args:
            sql: the SQL to show, when not the statement that ran (a raw check
                shows the check's own text).
            row_count: the result's row count, when counted apart (a raw
                check recounts a capped scan); ``truncated`` then also says
                whether fewer rows are kept than that.
            row_count_exact: overrides the result's flag (a recount is exact).

        """
        rows, cut = result.jsonable(
            max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
        )
        count = result.row_count if row_count is None else row_count
        return cls(
            id=evidence_id,
            sql=result.sql if sql is None else sql,
            columns=list(result.columns),
            rows=rows,
            row_count=count,
            truncated=result.truncated or cut or count > len(rows),
            fingerprint=result.fingerprint,
            origin=origin,
            row_count_exact=result.row_count_exact if row_count_exact is None else row_count_exact,
            query_key=result.query_key,
            row_set=result.row_set.with_sample(len(rows)) if result.row_set else None,
        )


@dataclass
class Anomaly:
    """What an anomaly expectation computed: the value, its band, its score and its baseline.

    Computed by ``checks.declared.anomaly`` (the formulas are there and in the
    README); numbers are floats in the check's own unit (rows, for a count).

    Attributes:
        method: ``zscore`` or ``mad``.
        sensitivity: how many spreads from ``center`` the band reaches.
        direction: ``both``, ``up`` or ``down``.
        seasonality: ``none`` or ``weekly``.
        min_history: the baseline points needed to judge.
        source: ``runs`` (the check's values in past completed runs) or
            ``buckets`` (earlier time buckets of the same query, ``over:``).
        value: the tested value; None when there was none.
        tested_at: ISO 8601: the tested bucket's start, or the run's slot.
        baseline: the baseline points as ``[at (ISO 8601), value]``, oldest first.
        center: the baseline's mean (zscore) or median (mad); None when not judged.
        spread: its standard deviation (zscore) or 1.4826 × its median absolute
            deviation (mad; see the README for the fallback); 0 for a constant baseline.
        low: the lowest value inside the band; None: unbounded (``direction: up``).
        high: the highest; None: unbounded (``direction: down``).
        score: ``(value - center) / spread``; None when the spread is 0 or nothing was judged.
        constant: every baseline point is the same value (any change is an anomaly).
    """

    method: str
    sensitivity: float
    direction: str
    seasonality: str
    min_history: int
    source: str
    value: float | None = None
    tested_at: str | None = None
    baseline: list[list[Any]] = field(default_factory=list)
    center: float | None = None
    spread: float | None = None
    low: float | None = None
    high: float | None = None
    score: float | None = None
    constant: bool = False

    @property
    def baseline_size(self) -> int:
        """How many points the baseline holds."""
        return len(self.baseline)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``--json``, the store): the fields, with ``baseline_size``."""
        data = asdict(self)
        data["baseline_size"] = self.baseline_size
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Anomaly:
        """Rebuild one stored by ``to_dict``."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Buckets:
    """How an ``over:`` check cut its data into time buckets, and which one it tested.

    Attributes:
        column: the time column.
        bucket: ``hour``, ``day`` or ``week``.
        timezone: the zone the bucket boundaries follow (the automation's).
        tested_start: ISO 8601 start of the tested bucket (the latest complete one).
        tested_end: ISO 8601 end of it (exclusive).
        filling_start: ISO 8601 start of the bucket still filling (not tested).
        filling_value: the compared metric in that bucket so far.
        count: how many buckets the query covered, the tested and the filling one included.
    """

    column: str
    bucket: str
    timezone: str
    tested_start: str
    tested_end: str
    filling_start: str
    filling_value: float | None
    count: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``--json``, the store)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Buckets:
        """Rebuild one stored by ``to_dict``."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


Metrics = dict[str, int | float | str | None]
"""A check's numbers by name (``rows_in_scope``, ``missing``…); see ``CheckResult``."""


@dataclass
class CheckResult:
    """One declared check: its SQL, the value it returned and how it came out.

    Attributes:
        name: the check's name.
        sql: the SQL that computed the value (for a typed check, the SQL
            Lookout compiled from it).
        expect: the expectation's normalised text.
        value: the value compared, JSON-safe (``checks.automation.expectation.Value``).
        passed: True or False when judged; None when in error or not evaluated.
        error: why the check could not be judged; an error is never a pass.
        evidence_id: ``C…``: the evidence of ``sql``'s result, when it ran.
        kind: ``sql`` for a raw query, else the typed kind (``missing``, …).
        outcome: ``CheckOutcome``; derived from ``passed`` and ``error`` when
            not given.
        reason: why the check was not evaluated ("0 rows in scope: orders
            where name = 'Diana'"), or, for a check that allows an empty scope,
            the note saying it was empty.
        metrics: the numbers a reviewer needs, by name; for every typed check
            at least ``rows_in_scope``. Numbers, except where a kind says
            otherwise (``compared`` names the one the expectation compared).
        warnings: lint warnings about the SQL (``checks.sql.lint``).
        sample_id: ``S…``: the evidence holding a bounded sample of the
            violating rows, when there were any to show.
        anomaly: what an ``anomaly`` expectation computed (value, band,
            score, baseline); None for the other expectations.
        buckets: the time buckets of an ``over:`` check; None otherwise.
    """

    name: str
    sql: str
    expect: str
    value: Any
    passed: bool | None
    error: str | None
    evidence_id: str | None = None
    kind: str = "sql"
    outcome: CheckOutcome | None = None
    reason: str | None = None
    metrics: Metrics = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sample_id: str | None = None
    anomaly: Anomaly | None = None
    buckets: Buckets | None = None

    def __post_init__(self) -> None:
        if self.outcome is None:
            if self.error is not None:
                self.outcome = CheckOutcome.ERROR
            elif self.passed is None:
                self.outcome = CheckOutcome.NOT_EVALUATED
            else:
                self.outcome = CheckOutcome.PASSED if self.passed else CheckOutcome.FAILED
        else:
            self.outcome = CheckOutcome(self.outcome)

    @property
    def not_evaluated(self) -> bool:
        """Whether the check could not look at any data (and does not allow that)."""
        return self.outcome is CheckOutcome.NOT_EVALUATED

    def to_dict(self) -> dict[str, Any]:
        """Return the check as ``--json`` prints it (see ``RunReport.to_dict``)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "sql": self.sql,
            "value": json_value(self.value),
            "expect": self.expect,
            "outcome": str(self.outcome),
            "passed": self.passed,
            "error": self.error,
            "reason": self.reason,
            "metrics": {k: json_value(v) for k, v in self.metrics.items()},
            "warnings": list(self.warnings),
            "evidence_id": self.evidence_id,
            "sample_id": self.sample_id,
            "anomaly": self.anomaly.to_dict() if self.anomaly else None,
            "buckets": self.buckets.to_dict() if self.buckets else None,
        }


@dataclass
class RunReport:
    """Everything known about one run; ``to_dict`` is the ``--json`` document.

    ``pinning`` says what the automation's pinned plan did in this run
    (``checks.pinned.consult.PlanCheck.record``): taken (``used``), or why the
    agent was asked again; None when there was no plan. ``new_plan`` is the
    plan this run's accepted agent report makes, written with the run by
    ``Store.finish_run``; it is never in ``--json``.
    """

    automation: str
    scheduled_for: dt.datetime
    status: Status
    run_id: int | None = None
    trigger: str = "manual"
    finding: Finding | None = None
    finding_source: FindingSource | None = None
    summary: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    agent: dict[str, Any] | None = None
    second_opinion: dict[str, Any] | None = None
    error: str | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    definition: dict[str, Any] = field(default_factory=dict)
    attempt: int = 0
    pinning: dict[str, Any] | None = None
    new_plan: PinnedPlan | None = field(default=None, repr=False, compare=False)

    def clean_text(self, clean: Callable[[str], str]) -> None:
        """Pass every text a person or a model wrote through ``clean``, in place.

        That is the summary, the errors (the run's and each check's), each
        check's reason and lint warnings, every string inside ``agent``,
        ``pinning`` and ``second_opinion``, and the new plan's summary; used to redact secrets
        once, before a report is stored or shown (``checks.settings.config.redact``).
        Evidence rows are data, kept as the query returned them.
        """
        self.summary = clean(self.summary)
        self.error = clean(self.error) if self.error else self.error
        self.checks = [
            replace(
                c,
                error=clean(c.error) if c.error else c.error,
                reason=clean(c.reason) if c.reason else c.reason,
                warnings=[clean(w) for w in c.warnings],
            )
            for c in self.checks
        ]
        self.agent = _clean_tree(self.agent, clean)
        self.pinning = _clean_tree(self.pinning, clean)
        if self.new_plan is not None:
            self.new_plan = replace(self.new_plan, summary=clean(self.new_plan.summary))
        self.second_opinion = _clean_tree(self.second_opinion, clean)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON document ``lookout run --json`` and ``show --json`` print."""
        return {
            "run_id": self.run_id,
            "automation": self.automation,
            "scheduled_for": self.scheduled_for.isoformat(),
            "trigger": self.trigger,
            "status": str(self.status),
            "finding": str(self.finding) if self.finding else None,
            "finding_source": str(self.finding_source) if self.finding_source else None,
            "summary": self.summary,
            "checks": [c.to_dict() for c in self.checks],
            "evidence": [
                {k: v for k, v in asdict(replace(e, row_set=None)).items() if k not in _INTERNAL}
                for e in self.evidence
            ],
            "agent": self.agent,
            "second_opinion": self.second_opinion,
            "pinning": self.pinning,
            "error": self.error,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


_INTERNAL = frozenset({"origin", "query_key", "row_set"})
"""Evidence fields kept out of ``--json``."""


def _clean_tree(value: Any, clean: Callable[[str], str]) -> Any:
    """``value`` with every string in it (dict values, list items) passed through ``clean``."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: _clean_tree(v, clean) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_tree(v, clean) for v in value]
    return value
