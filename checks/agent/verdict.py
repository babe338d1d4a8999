"""The run's verdict when an LLM is configured: the agent's report, or the fallback.

A valid agent report decides the finding (``agent``, or
``override`` when a Clear stood against a failed declared check). Without one
— the LLM unreachable after retries, the contract still invalid after the
repair turn, the budget spent with no report — the declared checks decide
(``finding_source: checks``) and the summary says why the agent did not. An
automation with no declared checks and no valid agent report ends in
``error``: never Clear.
"""

from __future__ import annotations

from checks.agent.result import AgentResult
from checks.declared.finding import check_line, decide_from_checks
from checks.report import FindingSource, RunReport, Status


def apply_agent_result(report: RunReport, result: AgentResult) -> None:
    """Fill ``report`` (checks already run) from the agent's result; see the module docstring.

    Sets ``status``, ``finding``, ``finding_source``, ``summary``, ``error`` and
    ``agent``, and appends the agent's ``Q…`` evidence after the checks' ``C…``.
    A declared check in error keeps the run in ``error`` (a failure is never Clear),
    whatever the agent said; the finding is still recorded.
    """
    report.evidence = [*report.evidence, *result.evidence]
    report.agent = result.stats.to_dict()
    accepted = result.report
    if accepted is None:
        fall_back(report, why=result.why or "the agent did not report")
        return
    errored = [c for c in report.checks if c.error is not None]
    summary = accepted.summary.rstrip()
    if report.checks:
        summary += "\n\nDeclared checks:\n" + "\n".join(check_line(c) for c in report.checks)
    report.finding = accepted.finding
    report.finding_source = accepted.finding_source
    report.summary = summary
    report.status = Status.ERROR if errored else Status.COMPLETED
    report.error = "; ".join(f"check '{c.name}': {c.error}" for c in errored) or None


def fall_back(report: RunReport, *, why: str) -> None:
    """Decide ``report`` from its declared checks because the agent did not; ``why`` says why.

    With no declared checks the run ends in ``error`` with ``why`` in the
    message and no finding.
    """
    reason = f"the agent did not decide: {why}"
    if report.checks:
        decision = decide_from_checks(report.checks, why=reason)
        report.status = decision.status
        report.finding = decision.finding
        report.finding_source = FindingSource.CHECKS if decision.finding else None
        report.summary = decision.summary
        report.error = decision.error
        return
    report.status = Status.ERROR
    report.finding = None
    report.finding_source = None
    report.error = f"no valid agent report and no declared checks to fall back on: {why}"
    report.summary = (
        f"**Error** — {reason}. This automation has no declared checks, so nothing decided "
        "it; it is not reported Clear."
    )
