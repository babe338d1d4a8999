"""One declared check's result: value, outcome, metrics, and its anomaly or buckets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from checks.report.evidence import json_value
from checks.report.vocabulary import CheckOutcome

if TYPE_CHECKING:
    from checks.report.segments import Segments


@dataclass
class Anomaly:
    """What an anomaly expectation computed: the value, its band, its score and its baseline.

    Computed by ``checks.declared.anomaly`` (the formulas are there and in
    docs/checks.md); numbers are floats in the check's own unit (rows, for a count).

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
            deviation (mad; see docs/checks.md for the fallback); 0 for a constant baseline.
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


def passed_of(outcome: CheckOutcome) -> bool | None:
    """The old two-valued ``passed`` of an outcome: True, False, or None when not judged.

    A ``warned`` check held its expectation: True.
    """
    if outcome in (CheckOutcome.PASSED, CheckOutcome.WARNED):
        return True
    return False if outcome is CheckOutcome.FAILED else None


def outcome_of(passed: bool | None, error: str | None) -> CheckOutcome:
    """The outcome of a check stored before outcomes were kept (only ``passed`` and ``error``)."""
    if error is not None:
        return CheckOutcome.ERROR
    if passed is None:
        return CheckOutcome.NOT_EVALUATED
    return CheckOutcome.PASSED if passed else CheckOutcome.FAILED


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
        value: the value compared, JSON-safe (``checks.fields.judgement.Value``).
        outcome: how it came out (``CheckOutcome``), the check's one state:
            ``passed``, ``warned``, ``failed``, ``error`` or ``not_evaluated``.
        error: why the check could not be judged; an error is never a pass.
        evidence_id: ``C…``: the evidence of ``sql``'s result, when it ran.
        kind: ``sql`` for a raw query, else the typed kind (``missing``, …).
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
        warn: the warning level's normalised text (``warn:``), or None
            when the check has none; a value breaking it while meeting
            ``expect`` is ``warned``.
        segments: a segmented check's segments (``by:``, ``checks.report.segments``),
            each judged alone; None for a check without ``by:``. Its ``value`` is
            then how many segments failed.
        recorded_schema: the table's columns a ``schema`` check with
            ``changes`` saw (``{"table", "dialect", "columns": [[name, type], …]}``),
            kept for the next run to compare with; None for every other check.
    """

    name: str
    sql: str
    expect: str
    value: Any
    outcome: CheckOutcome
    error: str | None = None
    evidence_id: str | None = None
    kind: str = "sql"
    reason: str | None = None
    metrics: Metrics = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sample_id: str | None = None
    anomaly: Anomaly | None = None
    buckets: Buckets | None = None
    warn: str | None = None
    segments: Segments | None = None
    recorded_schema: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.outcome = CheckOutcome(self.outcome)  # a stored or JSON text reads as the enum

    @property
    def passed(self) -> bool | None:
        """The ``passed`` key of ``--json`` and the store, derived from ``outcome``.

        True when passed or warned, False when failed, None in error or not evaluated.
        Deciding anything reads ``outcome``: this exists for the shapes that
        carried it before outcomes did.
        """
        return passed_of(self.outcome)

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
            "warn": self.warn,
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
            "segments": self.segments.to_dict() if self.segments else None,
            "failed_segments": (
                [s.to_dict() for s in self.segments.failed] if self.segments else None
            ),
            "recorded_schema": self.recorded_schema,
        }
