"""The report contract: what a ``submit_report`` call must hold before a report is accepted.

The report's contract: ``submit_report`` is called once with a valid payload (``finding``
clear or needs_attention, ``confidence`` low, medium or high, a non-empty
``evidence`` list of ids); every cited id — in ``evidence`` and every ``[Qn]``
or ``[Cn]`` in the summary — exists in this run; and a Clear while a declared
check failed (or was in error, or not evaluated) becomes Needs attention with
``finding_source: override`` and the reason written into the summary.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from checks.agent.toolspec import SUBMIT_REPORT, ToolArgumentError, check_arguments
from checks.report import CheckOutcome, CheckResult, Finding, FindingSource

Confidence = Literal["low", "medium", "high"]

_ID = re.compile(r"[QCS][1-9][0-9]*")
_CITATION = re.compile(r"\[\s*([QCS]\d+(?:\s*[,;]\s*[QCS]\d+)*)\s*\]")


@dataclass(frozen=True)
class SubmittedReport:
    """The arguments of one well-formed ``submit_report`` call."""

    finding: Finding
    summary: str
    evidence: list[str]
    confidence: Confidence


@dataclass(frozen=True)
class AcceptedReport:
    """A report that passed the contract, after any override.

    Attributes:
        finding: the run's finding.
        finding_source: ``agent``, or ``override`` when the runtime changed a Clear.
        summary: the agent's Markdown, plus the override's reason when there is one.
        evidence: the ids the finding rests on.
        confidence: the agent's stated confidence.
        override_reason: why the finding was overridden, or None.
    """

    finding: Finding
    finding_source: FindingSource
    summary: str
    evidence: list[str]
    confidence: Confidence
    override_reason: str | None = None


def cited_ids(summary: str) -> list[str]:
    """Return the ids cited as ``[Q1]``, ``[C2]`` or ``[Q1, Q3]``, in order, once each."""
    found: list[str] = []
    for group in _CITATION.findall(summary):
        for part in re.split(r"\s*[,;]\s*", group):
            if part not in found:
                found.append(part)
    return found


def read_report(arguments: str) -> tuple[SubmittedReport | None, list[str]]:
    """Parse a ``submit_report`` call's raw arguments; return the report or the problems.

    A problem is one line the model can act on (sent back in the repair turn).
    """
    try:
        args = check_arguments(SUBMIT_REPORT, arguments)
    except ToolArgumentError as exc:
        return None, [str(exc)]
    report = SubmittedReport(
        finding=Finding(args["finding"]),
        summary=args["summary"],
        evidence=list(args["evidence"]),
        confidence=cast(Confidence, args["confidence"]),
    )
    return report, []


def verify(report: SubmittedReport, known_ids: Collection[str]) -> list[str]:
    """Return what is wrong with a parsed report in this run (empty: nothing).

    Args:
        report: the parsed ``submit_report`` arguments.
        known_ids: the ids that exist in this run: ``C1``… for declared checks
            that ran and ``Q1``… for the agent's successful queries.
    """
    problems = []
    known = ", ".join(sorted(known_ids, key=_id_order)) or "none"
    if not report.summary.strip():
        problems.append("summary is empty")
    if not report.evidence:
        problems.append(
            f"evidence is empty: list the ids the finding rests on (ids in this run: {known})"
        )
    malformed = [e for e in report.evidence if not _ID.fullmatch(e)]
    if malformed:
        problems.append(f"evidence holds {_quoted(malformed)}, which are not ids like Q1 or C1")
    unknown = [e for e in report.evidence if _ID.fullmatch(e) and e not in known_ids]
    if unknown:
        problems.append(
            f"evidence cites {_quoted(unknown)}, which did not run in this run (ids: {known})"
        )
    unknown_cited = [c for c in cited_ids(report.summary) if c not in known_ids]
    if unknown_cited:
        problems.append(
            f"summary cites {', '.join(f'[{c}]' for c in unknown_cited)}, which did not run "
            f"in this run (ids: {known})"
        )
    return problems


def failing_checks(checks: Sequence[CheckResult]) -> list[CheckResult]:
    """The declared checks a Clear cannot stand against: failed or not evaluated."""
    return [c for c in checks if c.passed is not True]


def accept(report: SubmittedReport, checks: Sequence[CheckResult]) -> AcceptedReport:
    """Turn a verified report into the run's finding, overriding a Clear against failed checks."""
    against = failing_checks(checks)
    if report.finding is Finding.CLEAR and against:
        parts = []
        for c in against:
            if c.passed is False:
                state = "failed"
            elif c.outcome is CheckOutcome.NOT_EVALUATED:
                state = f"was not evaluated ({c.reason})"
            else:
                state = f"was in error ({c.error})"
            cite = f" [{c.evidence_id}]" if c.evidence_id else ""
            parts.append(f"**{c.name}** {state}{cite}")
        reason = "the agent reported Clear, but declared checks are authoritative and " + "; ".join(
            parts
        )
        summary = (
            f"{report.summary.rstrip()}\n\n**Overridden by Lookout — Needs attention:** {reason}."
        )
        return AcceptedReport(
            Finding.NEEDS_ATTENTION,
            FindingSource.OVERRIDE,
            summary,
            report.evidence,
            report.confidence,
            override_reason=reason,
        )
    return AcceptedReport(
        report.finding, FindingSource.AGENT, report.summary, report.evidence, report.confidence
    )


def repair_request(problems: Sequence[str], known_ids: Collection[str]) -> str:
    """The tool result sent back for a rejected report: exactly what was wrong, and what to do."""
    known = ", ".join(sorted(known_ids, key=_id_order)) or "none"
    lines = ["Report rejected. Problems:"]
    lines += [f"- {p}" for p in problems]
    lines.append(
        "Call submit_report once more with these fixed. "
        f"Cite only ids that exist in this run: {known}."
    )
    return "\n".join(lines)


def _id_order(query_id: str) -> tuple[str, int]:
    match = _ID.fullmatch(query_id)
    return (query_id[0], int(query_id[1:])) if match else (query_id, 0)


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(repr(v[:40]) for v in values[:10])
