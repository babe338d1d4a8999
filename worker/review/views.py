"""What the report page shows, as typed views (the JSON API's schema comes from them).

Built by ``worker.review.detail``; times are zone-aware UTC; values of data
(check values, evidence rows) are JSON-safe as stored.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from checks.opinion.row_diff import RowChange
from worker.alerts.delivery_log import DeliveryRecord
from worker.review.history import CheckHistory
from worker.review.timeline import TimelineEntry
from worker.review.vocabulary import Action, ReviewState


@dataclass(frozen=True)
class CheckView:
    """One declared check: its SQL, expectation, value (JSON-safe) and result.

    ``outcome`` is ``passed``, ``warned``, ``failed``, ``error`` or
    ``not_evaluated``; ``reason`` says why it was not evaluated (or notes an
    allowed empty scope, or the warning level a ``warned`` value is beyond);
    ``metrics`` are its counts; ``sample_id`` names the evidence holding a
    sample of its violating rows; ``segments_by`` the ``by:`` columns of a
    segmented check, and ``failed_segments`` its failing segments (name, and
    what it measured in words; the names are data, escaped by the page).
    """

    name: str
    sql: str
    expect: str
    value: Any
    passed: bool | None
    error: str | None
    evidence_id: str | None
    kind: str = "sql"
    outcome: str = "passed"
    reason: str | None = None
    metrics: dict[str, Any] | None = None
    warnings: list[str] | None = None
    sample_id: str | None = None
    segments_by: list[str] | None = None
    failed_segments: list[tuple[str, str]] | None = None


@dataclass(frozen=True)
class EvidenceView:
    """One evidence query: ``C1``… (declared checks) or ``Q1``… (the agent), with sample rows."""

    id: str
    origin: str
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    fingerprint: str


@dataclass(frozen=True)
class CalibratedView:
    """One answer recalibrated on ops' verdicts (``checks.opinion.calibration``).

    ``p`` the calibrated probability, ``raw`` the answer as given, ``reviews``
    the labelled runs the map was fitted on, ``words`` "calibrated on N reviews".
    """

    p: float
    raw: float
    reviews: int
    words: str


@dataclass(frozen=True)
class OpinionView:
    """The second opinion (``SecondOpinion.to_dict``), probabilities 0–1.

    ``goal_met`` and the urgency probabilities are the raw answers; ``calibrated``
    holds, by question (``goal_met``, ``act``: P(act soon or now)), the answers
    a recalibration covers.
    """

    backend: str
    model: str | None
    goal_met: float | None
    same_as_last_run: float | None
    urgency: str | None
    urgency_probabilities: dict[str, float] | None
    flags: list[str]
    calibrated: dict[str, CalibratedView]
    error: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class ChangeView:
    """One evidence entry added, removed or changed; fingerprints (sha256 hex) before and after."""

    id: str
    sql: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class DiffView:
    """This run's evidence against the previous completed run's, and that run's finding.

    ``rows``: each query compared row by row with its own previous completed
    run (``checks.opinion.row_diff``); rows and names in it are untrusted.
    """

    first_run: bool
    previous_run_id: int | None
    previous_finding: str | None
    added: list[ChangeView]
    removed: list[ChangeView]
    changed: list[ChangeView]
    unchanged: list[str]
    rows: list[RowChange] = field(default_factory=list)


@dataclass(frozen=True)
class RecentRun:
    """One of the automation's recent runs, for the strip; ``current`` marks the one shown."""

    run_id: int
    scheduled_for: dt.datetime
    status: str
    finding: str | None
    flags: list[str]
    urgency: str | None
    current: bool


@dataclass(frozen=True)
class IncidentView:
    """The incident the run belongs to (``checks.store.incidents``)."""

    id: int
    kind: str
    opened_at: dt.datetime
    opened_run_id: int | None
    closed_at: dt.datetime | None
    closed_run_id: int | None
    reminders: int


@dataclass(frozen=True)
class ReportView:
    """Everything the report page shows except the trace (``trace_of``).

    ``history`` is each check's value over the last runs up to this one
    (``worker.review.history``), in the order of ``checks``. ``declared_checks``
    counts the checks its definition declares, whether or not they ran.
    ``scanned`` is what the run's statements were estimated to read, in words
    (``checks.sources.scan.scanned_words``), None when nothing was estimated.
    """

    run_id: int
    automation: str
    description: str | None
    goal: str | None
    instructions: str | None
    owner: str | None
    tags: list[str]
    source: str | None
    severity: str | None
    scheduled_for: dt.datetime
    trigger: str
    status: str
    finding: str | None
    finding_source: str | None
    summary: str
    error: str | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    agent: dict[str, Any] | None
    pinning: dict[str, Any] | None
    checks: list[CheckView]
    evidence: list[EvidenceView]
    opinion: OpinionView | None
    diff: DiffView
    recent: list[RecentRun]
    incident: IncidentView | None
    review: ReviewState
    needs_me: bool
    actions: list[Action]
    deliveries: list[DeliveryRecord]
    timeline: list[TimelineEntry]
    history: list[CheckHistory]
    declared_checks: int = 0
    scanned: str | None = None


@dataclass(frozen=True)
class TraceEventView:
    """One event of the agent's trace (``checks.agent.trace``), payload redacted."""

    seq: int
    at: dt.datetime
    kind: str
    payload: dict[str, Any]
