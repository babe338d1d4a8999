"""The finding's one rule over every combination of checks, agent and pinned plan."""

from __future__ import annotations

import itertools

import pytest

from checks.finding import (
    NEEDS_LLM,
    NO_PLAN,
    AgentAnswer,
    Decision,
    PlanState,
    PlanStatus,
    RunFacts,
    SubmittedReport,
    decide,
)
from checks.report import CheckOutcome, CheckResult, Finding, FindingSource, Status

P, F, N, E, W = (
    CheckOutcome.PASSED,
    CheckOutcome.FAILED,
    CheckOutcome.NOT_EVALUATED,
    CheckOutcome.ERROR,
    CheckOutcome.WARNED,
)
CHECKS: dict[str, tuple[CheckOutcome, ...]] = {
    "failed": (F,),
    "passed": (P,),
    "not evaluated": (N,),
    "error": (E,),
    "none": (),
    "mixed": (P, F, N),
    "mixed with error": (P, F, E),
    "warned": (P, W),
    "warned and failed": (W, F),
}
AGENTS: dict[str, AgentAnswer | None] = {
    "not asked": None,  # no LLM configured
    "clear": AgentAnswer(SubmittedReport(Finding.CLEAR, "All good [Q1].", ["Q1"], "high")),
    "needs attention": AgentAnswer(
        SubmittedReport(Finding.NEEDS_ATTENTION, "Late rows [Q1].", ["Q1"], "medium")
    ),
    "invalid": AgentAnswer(None, "the agent's report was still invalid after one repair turn"),
    "absent": AgentAnswer(None, "the LLM endpoint failed: 503"),
}
PLANS: dict[str, PlanState] = {
    "none": NO_PLAN,
    "taken clear": PlanState(PlanStatus.TAKEN, Finding.CLEAR, "Pinned: all good [Q1]."),
    "taken needs attention": PlanState(PlanStatus.TAKEN, Finding.NEEDS_ATTENTION, "Late [Q1]."),
    "not taken": PlanState(PlanStatus.NOT_TAKEN, reason="the plan is 8 days old"),
}

C, NA = Finding.CLEAR, Finding.NEEDS_ATTENTION
DONE, ERR, SKIP = Status.COMPLETED, Status.ERROR, Status.SKIPPED
CK, AG, OV, PN = (
    FindingSource.CHECKS,
    FindingSource.AGENT,
    FindingSource.OVERRIDE,
    FindingSource.PINNED,
)
Row = tuple[Status, Finding | None, FindingSource | None]

BY_CHECKS: dict[str, Row] = {
    "failed": (DONE, NA, CK),
    "passed": (DONE, C, CK),
    "not evaluated": (DONE, NA, CK),
    "error": (ERR, None, None),
    "none": (ERR, None, None),  # the agent gave nothing and there are no checks: never Clear
    "mixed": (DONE, NA, CK),
    "mixed with error": (ERR, NA, CK),
    "warned": (DONE, C, CK),
    "warned and failed": (DONE, NA, CK),
}
AGENT_CLEAR: dict[str, Row] = {
    "failed": (DONE, NA, OV),
    "passed": (DONE, C, AG),
    "not evaluated": (DONE, NA, OV),
    "error": (ERR, NA, OV),
    "none": (DONE, C, AG),
    "mixed": (DONE, NA, OV),
    "mixed with error": (ERR, NA, OV),
    "warned": (DONE, C, AG),
    "warned and failed": (DONE, NA, OV),
}
PLAN_CLEAR: dict[str, Row] = {
    "failed": (DONE, NA, OV),
    "passed": (DONE, C, PN),
    "not evaluated": (DONE, NA, OV),
    "error": (ERR, NA, OV),
    "none": (DONE, C, PN),
    "mixed": (DONE, NA, OV),
    "mixed with error": (ERR, NA, OV),
    "warned": (DONE, C, PN),
    "warned and failed": (DONE, NA, OV),
}
ERRORED = {"error", "mixed with error"}


def expected(checks: str, agent: str, plan: str) -> Row:
    """The decision table: the plan taken first, then the agent, then the checks alone."""
    if plan == "taken clear":
        return PLAN_CLEAR[checks]
    if plan == "taken needs attention":
        return (ERR if checks in ERRORED else DONE, NA, PN)
    if agent == "clear":
        return AGENT_CLEAR[checks]
    if agent == "needs attention":
        return (ERR if checks in ERRORED else DONE, NA, AG)
    if agent == "not asked" and checks == "none":
        return (SKIP, None, None)  # goal-only and no LLM
    return BY_CHECKS[checks]


def results(outcomes: tuple[CheckOutcome, ...]) -> tuple[CheckResult, ...]:
    return tuple(
        CheckResult(
            f"check {i}",
            "SELECT 1",
            "== 0",
            None if outcome in (E, N) else i,
            outcome,
            "table missing" if outcome is E else None,
            f"C{i}",
            reason="0 rows in scope" if outcome is N else None,
        )
        for i, outcome in enumerate(outcomes, start=1)
    )


def facts(checks: str, agent: str, plan: str) -> RunFacts:
    return RunFacts(
        declared=bool(CHECKS[checks]),
        llm=agent != "not asked",
        checks=results(CHECKS[checks]),
        plan=PLANS[plan],
        agent=AGENTS[agent],
    )


COMBINATIONS = list(itertools.product(CHECKS, AGENTS, PLANS))


@pytest.mark.parametrize(("checks", "agent", "plan"), COMBINATIONS)
def test_every_combination_decides_as_the_table_says(checks: str, agent: str, plan: str) -> None:
    decision = decide(facts(checks, agent, plan))
    assert (decision.status, decision.finding, decision.finding_source) == expected(
        checks, agent, plan
    )


@pytest.mark.parametrize(("checks", "agent", "plan"), COMBINATIONS)
def test_the_rules_hold_in_every_combination(checks: str, agent: str, plan: str) -> None:
    outcomes = CHECKS[checks]
    decision = decide(facts(checks, agent, plan))
    # a failure is never Clear; a check that could not look at data is never a pass
    if F in outcomes or N in outcomes or E in outcomes:
        assert decision.finding is not Finding.CLEAR
    # a warning alone never keeps a run from Clear, nor makes one
    if set(outcomes) == {P, W} and agent in ("not asked", "absent", "invalid", "clear"):
        assert plan == "taken needs attention" or decision.finding is Finding.CLEAR
    # a check in error puts the run in error
    if E in outcomes:
        assert decision.status is Status.ERROR
    # a completed run has a finding, and a finding says who decided it
    if decision.status is Status.COMPLETED:
        assert decision.finding is not None
    assert (decision.finding is None) == (decision.finding_source is None)
    # the agent's report is kept (for a new pinned plan) only when it decided
    kept = decision.accepted is not None
    assert kept == (decision.finding_source in (AG, OV) and not plan.startswith("taken"))


def test_the_table_covers_every_combination() -> None:
    assert len(COMBINATIONS) == 9 * 5 * 4


def test_an_agent_clear_against_a_failed_check_says_why_it_was_overridden() -> None:
    decision = decide(facts("failed", "clear", "none"))
    assert decision.summary == (
        "All good [Q1].\n\n**Overridden by Lookout — Needs attention:** the agent reported "
        "Clear, but declared checks are authoritative and **check 1** failed [C1].\n\n"
        "Declared checks:\n- FAILED: **check 1** — 1 (expected == 0) [C1]"
    )
    assert decision.accepted is not None and decision.accepted.override_reason is not None


def test_a_pinned_plan_clear_never_stands_against_a_failed_check() -> None:
    decision = decide(facts("failed", "not asked", "taken clear"))
    assert (decision.finding, decision.finding_source) == (NA, OV)
    assert "the pinned plan reported Clear" in decision.summary
    assert decision.accepted is None  # a taken plan is not pinned again


def test_a_taken_plan_keeps_its_summary_then_the_declared_checks() -> None:
    decision = decide(facts("passed", "not asked", "taken clear"))
    assert decision.summary == (
        "Pinned: all good [Q1].\n\nDeclared checks:\n- passed: **check 1** — 1 (expected == 0) [C1]"
    )
    assert decision.error is None


def test_a_check_in_error_is_the_runs_error_whatever_the_agent_said() -> None:
    decision = decide(facts("mixed with error", "needs attention", "none"))
    assert decision.error == "check 'check 3': table missing"


def test_without_an_agent_report_the_checks_decide_and_say_why() -> None:
    decision = decide(facts("passed", "absent", "none"))
    assert decision.summary.startswith("**Clear** — the check passed.")
    assert "Decided by the declared checks alone: the agent did not decide: the LLM endpoint" in (
        decision.summary
    )
    nothing = decide(facts("none", "invalid", "none"))
    assert nothing.error == (
        "no valid agent report and no declared checks to fall back on: the agent's report was "
        "still invalid after one repair turn"
    )


def test_goal_only_without_an_llm_is_skipped_and_says_why() -> None:
    assert decide(facts("none", "not asked", "none")) == Decision(
        Status.SKIPPED, None, f"**Skipped** — {NEEDS_LLM}.", NEEDS_LLM
    )
    not_taken = decide(facts("none", "not asked", "not taken"))
    assert not_taken.error == f"{NEEDS_LLM}; its pinned plan was not taken: the plan is 8 days old"


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("llm", [True, False])
def test_a_source_that_did_not_open_is_an_error(plan: str, llm: bool) -> None:
    decision = decide(
        RunFacts(declared=True, llm=llm, source_error="cannot open shop.db", plan=PLANS[plan])
    )
    assert decision == Decision(
        Status.ERROR, None, "**Error** — cannot open shop.db", ("cannot open shop.db")
    )


def test_goal_only_without_an_llm_is_skipped_before_the_source_is_opened() -> None:
    decision = decide(RunFacts(declared=False, llm=False, source_error="cannot open shop.db"))
    assert decision.status is Status.SKIPPED


def test_a_clear_run_whose_check_drew_a_lint_warning_says_so_in_its_first_line() -> None:
    from checks.finding import decide_from_checks

    warned = CheckResult("no orphans", "SELECT 1", "== 0", 0, P)
    warned.warnings = ["customer_id NOT IN (SELECT id FROM customers ...): id can be NULL"]
    plain = CheckResult("rows", "SELECT 1", "> 0", 5, P)
    decision = decide_from_checks([warned, plain])
    assert (decision.status, decision.finding) == (DONE, C)
    assert decision.summary.splitlines()[0] == (
        "**Clear** — all 2 checks passed; 1 lint warning (on **no orphans**)."
    )
    assert decide_from_checks([plain]).summary.splitlines()[0] == "**Clear** — the check passed."


def test_a_run_with_a_warned_check_stays_clear_and_counts_the_warning() -> None:
    from checks.finding import decide_from_checks

    emails = CheckResult(
        "emails", "SELECT …", "<= 5%", 3.0, W, reason="beyond the warning level <= 1%"
    )
    emails.metrics = {"count": 3, "total": 100}
    checks = [
        CheckResult("rows", "SELECT 1", "> 0", 5, P),
        emails,
        CheckResult("ok", "x", "== 0", 0, P),
    ]
    decision = decide_from_checks(checks)
    assert (decision.status, decision.finding, decision.finding_source) == (DONE, C, CK)
    assert decision.summary.splitlines() == [
        "**Clear** — all 3 checks passed; 1 warning (on **emails**).",
        "",
        "- passed: **rows** — 5 (expected > 0)",
        "- WARNED: **emails** — 3 of 100 (3.00 %); beyond the warning level <= 1% (expected <= 5%)",
        "- passed: **ok** — 0 (expected == 0)",
    ]
    two = decide_from_checks([emails, CheckResult("late", "x", "< 3", 2, W), checks[0]])
    assert two.summary.splitlines()[0] == (
        "**Clear** — all 3 checks passed; 2 warnings (on **emails**, **late**)."
    )
    failing = decide_from_checks([emails, CheckResult("rows", "x", "> 0", 0, F)])
    assert failing.summary.splitlines()[0] == (
        "**Needs attention** — 1 failed of 2 checks; 1 warning (on **emails**)."
    )
    assert emails.passed is True and emails.to_dict()["outcome"] == "warned"
