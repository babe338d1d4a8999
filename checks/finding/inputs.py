"""What the finding is decided from: the checks, the agent's verified report, the pinned plan.

``RunFacts`` gathers them for ``checks.finding.decide.decide``. The run path
(``checks.run``) fills it once the checks ran, the plan was consulted and the
agent (if any) answered; nothing here runs a query or calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from checks.report import CheckResult, Finding

Confidence = Literal["low", "medium", "high"]

NEEDS_LLM = (
    "needs an LLM: set LOOKOUT_LLM_BASE_URL and LOOKOUT_LLM_MODEL (or llm: in the config) "
    "to run goal-only automations"
)
"""Why a goal-only automation is skipped when no LLM is configured."""


@dataclass(frozen=True)
class SubmittedReport:
    """The arguments of one well-formed ``submit_report`` call (``checks.agent.contract``)."""

    finding: Finding
    summary: str
    evidence: list[str]
    confidence: Confidence


@dataclass(frozen=True)
class AgentAnswer:
    """What the agent said and what verification found.

    Attributes:
        report: the report that passed the contract (every cited id ran), or
            None: the agent gave none (the LLM failed, the budget ran out) or
            its report was still invalid after the repair turn.
        why: why there is no report (None when there is one).
    """

    report: SubmittedReport | None
    why: str | None = None


class PlanStatus(StrEnum):
    """Whether the automation had a pinned plan, and whether this run took it."""

    NONE = "none"
    TAKEN = "taken"
    NOT_TAKEN = "not_taken"


@dataclass(frozen=True)
class PlanState:
    """The pinned plan's part in the run (``checks.pinned.consult.PlanCheck.state``).

    Attributes:
        status: none, taken or not taken.
        finding: the plan's finding (when taken).
        summary: the plan's summary and the note naming the run it came from
            (when taken).
        reason: why it was not taken (when not taken).
    """

    status: PlanStatus = PlanStatus.NONE
    finding: Finding | None = None
    summary: str = ""
    reason: str | None = None


NO_PLAN = PlanState()


@dataclass(frozen=True)
class RunFacts:
    """Everything the finding is decided from.

    Attributes:
        declared: the automation declares checks (its results may still be
            missing when the source did not open).
        llm: an LLM is configured.
        checks: the declared checks' results, in order (empty when none ran).
        source_error: why the source could not be opened, or None.
        plan: the pinned plan's state.
        agent: the agent's answer; None when the agent was not asked (no LLM,
            the plan was taken, or the run stopped before it).
    """

    declared: bool
    llm: bool
    checks: tuple[CheckResult, ...] = field(default_factory=tuple)
    source_error: str | None = None
    plan: PlanState = NO_PLAN
    agent: AgentAnswer | None = None
