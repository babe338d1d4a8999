"""The shipped recalibration cases: over-confident models get better, a calibrated one no worse."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.eval.recalibration import load_cases, run_recalibration_cases
from checks.eval.suite import SuiteError


def test_every_shipped_case_meets_its_expectation() -> None:
    scores = {s.case_id: s for s in run_recalibration_cases()}
    assert set(scores) == {
        "overconfident-goal-met",
        "overconfident-act",
        "underconfident-goal-met",
        "already-calibrated",
    }
    assert all(s.passed for s in scores.values())
    over = scores["overconfident-goal-met"]
    assert over.answers == 240
    assert over.ece == pytest.approx((60 * (0.42 + 0.40 + 0.05 + 0.07)) / 240)
    assert over.calibrated_ece < over.ece / 2 and over.calibrated_brier < over.brier
    calibrated = scores["already-calibrated"]
    assert calibrated.ece == pytest.approx(0.0)
    assert calibrated.calibrated_brier <= calibrated.brier + 0.01


CASE = "cases:\n  - {id: a, why: w, question: %s, %s labelled: [[%s, 2, 1]]}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cases: 3\n", "cases: a list of recalibration cases"),
        (CASE % ("goal_met", "expect: lower_ece,", "1.5"), "0 <= p <= 1"),
        (CASE % ("goal_met", "", "0.5"), "either expect: lower_ece or brier_within"),
        (CASE % ("sameness", "expect: lower_ece,", "0.5"), "cases.0.question"),
    ],
)
def test_a_bad_case_file_says_where(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_cases(path)
    assert message in str(caught.value)
