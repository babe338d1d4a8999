"""Scoring: Brier and ECE against a hand computation; accuracy, agreement, cost per case."""

from __future__ import annotations

import pytest

from checks.eval.scoring import (
    Expected,
    RunOutcome,
    brier_score,
    calibration_bins,
    expected_calibration_error,
    score_case,
    score_decisions,
    score_runs,
)

# A small fixed set of 8 "goal met?" answers (p = probability of yes, y = true label).
#
#   p      y   (p - y)^2   bin (width 0.1)
#   0.00   0   0.0000      0  [0.0, 0.1)
#   0.05   0   0.0025      0
#   0.10   1   0.8100      1  [0.1, 0.2)   (0.1 is the bin's lower edge)
#   0.12   0   0.0144      1
#   0.18   0   0.0324      1
#   0.70   1   0.0900      7  [0.7, 0.8)
#   0.75   0   0.5625      7
#   1.00   1   0.0000      9  [0.9, 1.0]   (1.0 goes in the last bin)
#
# Brier = (0 + 0.0025 + 0.81 + 0.0144 + 0.0324 + 0.09 + 0.5625 + 0) / 8 = 1.5118 / 8 = 0.188975
#
#   bin  n  mean p                      frequency  |frequency - mean p|
#   0    2  (0 + 0.05) / 2 = 0.025      0 / 2      0.025
#   1    3  (0.1 + 0.12 + 0.18) / 3     1 / 3      |0.3333 - 0.1333| = 0.2
#               = 0.40 / 3 = 0.1333
#   7    2  (0.7 + 0.75) / 2 = 0.725    1 / 2      0.225
#   9    1  1.0                         1 / 1      0
#
# ECE = (2 × 0.025 + 3 × 0.2 + 2 × 0.225 + 1 × 0) / 8 = (0.05 + 0.6 + 0.45) / 8 = 1.1 / 8 = 0.1375
#
# Accuracy at threshold 0.5 (yes when p ≥ 0.5): right are 0.00, 0.05, 0.12, 0.18 (no, y=0),
# 0.70 and 1.00 (yes, y=1); wrong are 0.10 (no, y=1) and 0.75 (yes, y=0): 6 / 8 = 0.75.
P = [0.0, 0.05, 0.10, 0.12, 0.18, 0.70, 0.75, 1.0]
Y = [False, False, True, False, False, True, False, True]


def test_brier_score_matches_the_hand_computation() -> None:
    assert brier_score(P, Y) == pytest.approx(0.188975, abs=1e-12)


def test_ece_matches_the_hand_computation() -> None:
    assert expected_calibration_error(P, Y) == pytest.approx(0.1375, abs=1e-12)


def test_calibration_bins_match_the_hand_computation() -> None:
    bins = calibration_bins(P, Y)
    assert len(bins) == 10
    assert [b.count for b in bins] == [2, 3, 0, 0, 0, 0, 0, 2, 0, 1]
    assert (bins[0].low, bins[0].high) == (0.0, 0.1)
    assert bins[1].mean_p == pytest.approx(0.4 / 3)
    assert bins[1].frequency == pytest.approx(1 / 3)
    assert bins[7].mean_p == pytest.approx(0.725) and bins[7].frequency == 0.5
    assert bins[9].mean_p == 1.0 and bins[9].frequency == 1.0
    assert bins[2].mean_p is None and bins[2].frequency is None


def test_perfect_and_worst_forecasts() -> None:
    assert brier_score([1.0, 0.0], [True, False]) == 0.0
    assert expected_calibration_error([1.0, 0.0], [True, False]) == 0.0
    assert brier_score([0.0, 1.0], [True, False]) == 1.0
    assert expected_calibration_error([0.0, 1.0], [True, False]) == 1.0
    assert brier_score([0.5] * 4, [True, False, True, False]) == 0.25


def test_no_answers_and_bad_input() -> None:
    assert brier_score([], []) is None
    assert expected_calibration_error([], []) is None
    with pytest.raises(ValueError, match="outside"):
        brier_score([1.2], [True])
    with pytest.raises(ValueError, match="labels"):
        expected_calibration_error([0.2, 0.3], [True])


def test_decision_score_over_runs_uses_the_threshold_and_the_labels() -> None:
    expected = {f"c{i}": Expected("clear" if y else "needs_attention", y) for i, y in enumerate(Y)}
    outcomes = [RunOutcome(f"c{i}", 1, "completed", "clear", p_goal_met=p) for i, p in enumerate(P)]
    outcomes.append(RunOutcome("c0", 2, "completed", "clear"))  # no second opinion
    outcomes.append(RunOutcome("c0", 3, "skipped", None))  # not run: not "without answer"
    score = score_decisions(expected, outcomes, threshold=0.5)
    assert score.answers == 8 and score.runs_without_answer == 1
    assert score.accuracy == 0.75
    assert score.brier == pytest.approx(0.188975)
    assert score.ece == pytest.approx(0.1375)
    # At 0.11: right are 0.00, 0.05 (no, y=0), 0.70, 1.00 (yes, y=1); wrong are 0.10 (no, y=1)
    # and 0.12, 0.18, 0.75 (yes, y=0): 4 / 8.
    assert score_decisions(expected, outcomes, threshold=0.11).accuracy == 0.5


def test_urgency_is_scored_only_where_the_case_states_one() -> None:
    expected = {"a": Expected("clear", True, "nothing_to_do"), "b": Expected("clear", True)}
    outcomes = [
        RunOutcome("a", 1, "completed", "clear", urgency="nothing_to_do"),
        RunOutcome("a", 2, "completed", "clear", urgency="act_soon"),
        RunOutcome("b", 1, "completed", "clear", urgency="act_now"),
    ]
    score = score_decisions(expected, outcomes)
    assert (score.urgency_answers, score.urgency_accuracy) == (2, 0.5)


def test_decision_tokens_and_cost_are_summed_and_unknown_cost_stays_unknown() -> None:
    expected = {"a": Expected("clear", True)}
    runs = [
        RunOutcome("a", 1, "completed", "clear", decision_input_tokens=900, decision_cost_usd=0.25),
        RunOutcome("a", 2, "completed", "clear", decision_output_tokens=2, decision_cost_usd=0.5),
    ]
    score = score_decisions(expected, runs)
    assert (score.input_tokens, score.output_tokens, score.cost_usd) == (900, 2, 0.75)
    runs.append(RunOutcome("a", 3, "completed", "clear", decision_cost_usd=None))
    assert score_decisions(expected, runs).cost_usd is None


def agent_run(
    run: int, finding: str | None, *, cost: float | None, status: str = "completed"
) -> RunOutcome:
    return RunOutcome(
        "case", run, status, finding, "agent", agent=True, steps=run + 1, tool_calls=2 * run,
        input_tokens=1000 * run, output_tokens=10 * run, cost_usd=cost,
    )  # fmt: skip


def test_case_score_counts_accuracy_agreement_and_cost() -> None:
    runs = [
        agent_run(1, "needs_attention", cost=0.01),
        agent_run(2, "clear", cost=0.02),
        agent_run(3, None, cost=0.03, status="error"),
    ]
    score = score_case("case", Expected("needs_attention", False), runs)
    assert (score.runs, score.scored, score.correct, score.errors) == (3, 3, 1, 1)
    assert score.accuracy == pytest.approx(1 / 3)
    assert score.findings == ["needs_attention", "clear", "error"]
    assert score.agree is False
    assert score.steps_mean == 3 and score.tool_calls_mean == 4
    assert score.input_tokens_mean == 2000 and score.output_tokens_mean == 20
    assert score.cost_usd == pytest.approx(0.06)
    unknown = score_case("case", Expected("clear", True), [agent_run(1, "clear", cost=None)])
    assert unknown.cost_usd is None and unknown.agree is None  # one run: nothing to compare


def test_skipped_runs_are_not_wrong() -> None:
    runs = [RunOutcome("g", k, "skipped", None) for k in (1, 2, 3)]
    score = score_case("g", Expected("clear", True), runs)
    assert (score.scored, score.skipped, score.correct, score.accuracy) == (0, 3, 0, None)
    assert score.agree is None and score.agent_runs == 0 and score.steps_mean is None


def test_score_runs_overall() -> None:
    expected = {"a": Expected("clear", True), "b": Expected("needs_attention", False)}
    outcomes = [
        RunOutcome("a", 1, "completed", "clear", "checks"),
        RunOutcome("a", 2, "completed", "clear", "checks"),
        RunOutcome("b", 1, "completed", "needs_attention", "override"),
        RunOutcome("b", 2, "completed", "clear", "agent", agent=True, steps=3, cost_usd=0.5),
    ]
    card = score_runs(expected, outcomes)
    overall = card.overall
    assert (overall["scored"], overall["correct"], overall["accuracy"]) == (4, 3, 0.75)
    assert overall["agreement"] == {"cases_compared": 2, "cases_agreeing": 1, "rate": 0.5}
    assert overall["by_finding_source"] == {
        "checks": {"runs": 2, "correct": 2},
        "override": {"runs": 1, "correct": 1},
        "agent": {"runs": 1, "correct": 0},
    }
    assert overall["agent"]["runs"] == 1 and overall["agent"]["cost_usd"] == 0.5
    assert [c.case_id for c in card.cases] == ["a", "b"]
    assert card.decision.answers == 0 and card.decision.brier is None
