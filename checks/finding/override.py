"""A report's Clear against the declared checks: it never stands.

The declared checks are authoritative: a Clear — the agent's, or a pinned
plan's — while a declared check failed, was in error or was not evaluated
becomes Needs attention with ``finding_source: override`` and the reason
written into the summary. Any other finding stands as reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checks.finding.inputs import Confidence, SubmittedReport
from checks.report import CheckOutcome, CheckResult, Finding, FindingSource


@dataclass(frozen=True)
class AcceptedReport:
    """A verified report as it stands against the declared checks.

    Attributes:
        finding: the run's finding.
        finding_source: ``agent`` (or the source given), or ``override`` when
            the runtime changed a Clear.
        summary: the report's Markdown, plus the override's reason when there is one.
        evidence: the ids the finding rests on.
        confidence: the reporter's stated confidence.
        override_reason: why the finding was overridden, or None.
    """

    finding: Finding
    finding_source: FindingSource
    summary: str
    evidence: list[str]
    confidence: Confidence
    override_reason: str | None = None


def failing_checks(checks: Sequence[CheckResult]) -> list[CheckResult]:
    """The declared checks a Clear cannot stand against: every one that did not pass.

    A ``warned`` check held its expectation: a Clear stands beside it.
    """
    return [c for c in checks if c.outcome not in (CheckOutcome.PASSED, CheckOutcome.WARNED)]


def accept(
    report: SubmittedReport,
    checks: Sequence[CheckResult],
    *,
    source: FindingSource = FindingSource.AGENT,
    who: str = "the agent",
) -> AcceptedReport:
    """Return ``report`` as it stands against ``checks``: its own finding, or a Clear overridden.

    Args:
        report: a verified report (the agent's, or a pinned plan's).
        checks: the declared checks of this run.
        source: who decided when nothing is overridden.
        who: the reporter as the override's reason names it.
    """
    against = failing_checks(checks)
    if report.finding is not Finding.CLEAR or not against:
        return AcceptedReport(
            report.finding, source, report.summary, report.evidence, report.confidence
        )
    parts = []
    for c in against:
        if c.outcome is CheckOutcome.FAILED:
            state = "failed"
        elif c.outcome is CheckOutcome.NOT_EVALUATED:
            state = f"was not evaluated ({c.reason})"
        else:
            state = f"was in error ({c.error})"
        cite = f" [{c.evidence_id}]" if c.evidence_id else ""
        parts.append(f"**{c.name}** {state}{cite}")
    reason = f"{who} reported Clear, but declared checks are authoritative and " + "; ".join(parts)
    summary = f"{report.summary.rstrip()}\n\n**Overridden by Lookout — Needs attention:** {reason}."
    return AcceptedReport(
        Finding.NEEDS_ATTENTION,
        FindingSource.OVERRIDE,
        summary,
        report.evidence,
        report.confidence,
        override_reason=reason,
    )
