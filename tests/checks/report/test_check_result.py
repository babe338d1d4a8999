"""A check's one state is its outcome; ``passed`` is derived for the shapes that carry it."""

from __future__ import annotations

import pytest

from checks.report import CheckOutcome, CheckResult, outcome_of, passed_of


@pytest.mark.parametrize(
    ("outcome", "passed"),
    [
        (CheckOutcome.PASSED, True),
        (CheckOutcome.FAILED, False),
        (CheckOutcome.ERROR, None),
        (CheckOutcome.NOT_EVALUATED, None),
    ],
)
def test_the_json_keeps_passed_derived_from_the_outcome(
    outcome: CheckOutcome, passed: bool | None
) -> None:
    check = CheckResult("c", "SELECT 1", "== 1", 1, outcome, "boom" if outcome == "error" else None)
    assert check.to_dict()["passed"] is passed
    assert check.to_dict()["outcome"] == str(outcome)
    assert passed_of(outcome) is passed


@pytest.mark.parametrize(
    ("passed", "error", "outcome"),
    [
        (True, None, CheckOutcome.PASSED),
        (False, None, CheckOutcome.FAILED),
        (None, None, CheckOutcome.NOT_EVALUATED),
        (None, "table missing", CheckOutcome.ERROR),
    ],
)
def test_a_check_stored_before_outcomes_reads_as_one(
    passed: bool | None, error: str | None, outcome: CheckOutcome
) -> None:
    assert outcome_of(passed, error) is outcome


def test_an_outcome_given_as_text_reads_as_the_enum() -> None:
    check = CheckResult("c", "SELECT 1", "== 1", 1, "failed")  # type: ignore[arg-type]
    assert check.outcome is CheckOutcome.FAILED
