"""The finding of a run, decided by one pure rule (``decide``), and the checks in words.

``inputs`` what it is decided from (``RunFacts``: the checks, the agent's
verified report, the pinned plan's state); ``decide`` the rule; ``override``
a Clear against the declared checks; ``from_checks`` the checks' own finding
and the ``Decision`` every finding is; ``check_lines`` each check as a line.
"""

from checks.finding.check_lines import (
    anomaly_lines,
    check_line,
    declared_lines,
    not_evaluated_lines,
    warned_lines,
)
from checks.finding.decide import decide
from checks.finding.from_checks import Decision, decide_from_checks
from checks.finding.inputs import (
    NEEDS_LLM,
    NO_PLAN,
    AgentAnswer,
    Confidence,
    PlanState,
    PlanStatus,
    RunFacts,
    SubmittedReport,
)
from checks.finding.override import AcceptedReport, accept, failing_checks

__all__ = [
    "NEEDS_LLM",
    "NO_PLAN",
    "AcceptedReport",
    "AgentAnswer",
    "Confidence",
    "Decision",
    "PlanState",
    "PlanStatus",
    "RunFacts",
    "SubmittedReport",
    "accept",
    "anomaly_lines",
    "check_line",
    "decide",
    "decide_from_checks",
    "declared_lines",
    "failing_checks",
    "not_evaluated_lines",
    "warned_lines",
]
