"""The report of one run: its checks, evidence, finding and second opinion; the ``--json`` shape."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from checks.report.check_result import CheckResult
from checks.report.evidence import Evidence
from checks.report.pinned_plan import PinnedPlan
from checks.report.vocabulary import Finding, FindingSource, Status


@dataclass
class RunReport:
    """Everything known about one run; ``to_dict`` is the ``--json`` document.

    ``pinning`` says what the automation's pinned plan did in this run
    (``checks.pinned.consult.PlanCheck.record``): taken (``used``), or why the
    agent was asked again; None when there was no plan. ``new_plan`` is the
    plan this run's accepted agent report makes, written with the run by
    ``Store.finish_run``; it is never in ``--json``. ``scanned`` is what the
    run's statements were estimated to read (``checks.declared.scan_budget.scanned_entry``),
    None when nothing was estimated.
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
    scanned: dict[str, Any] | None = None
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
            "scanned": self.scanned,
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
