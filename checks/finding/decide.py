"""The one rule that decides a run's finding: ``decide``.

Pure: it reads the declared checks' outcomes, the agent's verified report and
the pinned plan's state (``RunFacts``) and returns the run's status, finding,
finding source, error and summary (``Decision``); it runs nothing and calls
no model. The run path (``checks.run``) calls it once per run.

In order, the first that applies decides:

1. No declared checks, no LLM and no pinned plan: **skipped** (``NEEDS_LLM``).
2. The source did not open: **error**, no finding.
3. The pinned plan was taken: its finding (``pinned``), its summary.
4. The agent was asked and its report passed the contract: its finding
   (``agent``). Else the declared checks decide (``checks``) and the summary
   says why the agent did not; with no checks either, **error**, no finding.
5. No declared checks, no LLM, a pinned plan not taken: **skipped**, with why.
6. The declared checks alone (``checks``; ``checks.finding.from_checks``).

Whatever decided, the rules hold: a Clear — the agent's or a plan's — never
stands against a declared check that failed, was in error or was not evaluated
(``checks.finding.override``: Needs attention, ``override``); a check in error
puts the run in **error** (its finding still recorded); a check not evaluated
is never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from checks.finding.check_lines import declared_lines
from checks.finding.from_checks import Decision, decide_from_checks, errors_text
from checks.finding.inputs import (
    NEEDS_LLM,
    AgentAnswer,
    PlanState,
    PlanStatus,
    RunFacts,
    SubmittedReport,
)
from checks.finding.override import AcceptedReport, accept
from checks.report import CheckResult, FindingSource, Status


def decide(facts: RunFacts) -> Decision:
    """Decide how a run ends from ``facts``; the rules are in the module docstring.

    Args:
        facts: the checks' results, the agent's answer and the plan's state.

    Returns:
        the status, finding, finding source, error and summary; ``accepted``
        is set when the agent's report decided (a new pinned plan keeps it).

    Raises:
        ValueError: the plan is taken but has no finding (``PlanState`` misbuilt).
    """
    plan, checks = facts.plan, facts.checks
    if not facts.declared and not facts.llm and plan.status is PlanStatus.NONE:
        return _skipped(NEEDS_LLM)
    if facts.source_error is not None:
        return Decision(Status.ERROR, None, f"**Error** — {facts.source_error}", facts.source_error)
    if plan.status is PlanStatus.TAKEN:
        return _from_plan(plan, checks)
    if facts.agent is not None or facts.llm:
        return _from_agent(facts.agent or AgentAnswer(None, "the agent was not asked"), checks)
    if not facts.declared:  # goal-only, its plan not taken, and no LLM to ask
        return _skipped(f"{NEEDS_LLM}; its pinned plan was not taken: {plan.reason or ''}")
    if not checks:
        why = "the declared checks did not run"
        return Decision(Status.ERROR, None, f"**Error** — {why}.", why)
    return decide_from_checks(checks)


def _skipped(why: str) -> Decision:
    return Decision(Status.SKIPPED, None, f"**Skipped** — {why}.", why)


def _from_plan(plan: PlanState, checks: Sequence[CheckResult]) -> Decision:
    """A taken plan's finding; held to the same rules as the agent's report it was."""
    if plan.finding is None:
        raise ValueError("a taken plan has a finding")
    said = SubmittedReport(plan.finding, plan.summary, [], "low")
    standing = accept(said, checks, source=FindingSource.PINNED, who="the pinned plan")
    return _standing(standing, standing.summary, checks, keep=False)


def _from_agent(answer: AgentAnswer, checks: Sequence[CheckResult]) -> Decision:
    """The agent's verified report as it stands, or the checks' finding when it gave none."""
    if answer.report is None:
        return _fall_back(checks, why=answer.why or "the agent did not report")
    standing = accept(answer.report, checks)
    return _standing(standing, standing.summary.rstrip(), checks, keep=True)


def _standing(
    standing: AcceptedReport, summary: str, checks: Sequence[CheckResult], *, keep: bool
) -> Decision:
    """A report's finding, its summary followed by the declared checks; in error if one is."""
    error = errors_text(checks)
    return Decision(
        Status.ERROR if error else Status.COMPLETED,
        standing.finding,
        summary + declared_lines(checks),
        error,
        standing.finding_source,
        standing if keep else None,
    )


def _fall_back(checks: Sequence[CheckResult], *, why: str) -> Decision:
    """The declared checks decide because the agent did not; ``why`` says why.

    With no declared checks the run ends in ``error`` with ``why`` in the
    message and no finding: never Clear.
    """
    reason = f"the agent did not decide: {why}"
    if checks:
        return decide_from_checks(checks, why=reason)
    return Decision(
        Status.ERROR,
        None,
        f"**Error** — {reason}. This automation has no declared checks, so nothing decided "
        "it; it is not reported Clear.",
        f"no valid agent report and no declared checks to fall back on: {why}",
    )
