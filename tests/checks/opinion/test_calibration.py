"""The isotonic recalibration: the fit, its map, and what it is applied to."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from statistics import fmean

import pytest

from checks.opinion.calibration import (
    Recalibration,
    calibrated_answers,
    isotonic_fit,
    raw_probability,
)

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def min_max_reference(points: list[tuple[float, bool]]) -> list[float]:
    """Isotonic regression by the min-max formula: y_i = max_{j<=i} min_{k>=i} mean(y_j..y_k).

    An independent definition of the least-squares monotone fit (Barlow et al. 1972, thm 1.4),
    over the distinct xs with weights, to check PAV against.
    """
    xs = sorted({p for p, _ in points})
    sums = [sum(int(h) for p, h in points if p == x) for x in xs]
    counts = [sum(1 for p, _ in points if p == x) for x in xs]

    def mean(j: int, k: int) -> float:
        return sum(sums[j : k + 1]) / sum(counts[j : k + 1])

    n = len(xs)
    return [max(min(mean(j, k) for k in range(i, n)) for j in range(i + 1)) for i in range(n)]


def test_a_textbook_fit() -> None:
    points = [(0.1, False), (0.2, True), (0.3, False), (0.4, False), (0.9, True), (0.9, True)]
    xs, ys, weights = isotonic_fit(points)
    assert xs == [0.1, 0.2, 0.3, 0.4, 0.9]
    assert ys == pytest.approx([0.0, 1 / 3, 1 / 3, 1 / 3, 1.0])
    assert weights == [1, 1, 1, 1, 2]


@pytest.mark.parametrize("seed", range(20))
def test_pav_equals_the_min_max_formula(seed: int) -> None:
    rng = random.Random(seed)
    points = [(round(rng.random(), 1), rng.random() < 0.5) for _ in range(rng.randint(1, 30))]
    _, ys, _ = isotonic_fit(points)
    assert ys == pytest.approx(min_max_reference(points))
    assert all(a <= b for a, b in itertools.pairwise(ys))


def test_the_fit_keeps_the_share_of_labels() -> None:
    rng = random.Random(3)
    points = [(rng.random(), rng.random() < 0.3) for _ in range(200)]
    _xs, ys, weights = isotonic_fit(points)
    assert sum(y * w for y, w in zip(ys, weights, strict=True)) / len(points) == pytest.approx(
        fmean(int(h) for _, h in points)
    )


def test_the_map_interpolates_clips_and_never_claims_certainty() -> None:
    recal = Recalibration.fit(
        "systemone", "jev", "goal_met", [(0.2, False), (0.8, True)] * 4, fitted_at=NOW
    )
    assert recal.reviews == 8
    assert recal.apply(0.5) == pytest.approx(0.5)
    assert recal.apply(0.95) == pytest.approx(1 - 1 / 10)  # rule of succession: not 1.0
    assert recal.apply(0.0) == pytest.approx(1 / 10)
    assert recal.describe() == "calibrated on 8 reviews"
    ordered = [recal.apply(p / 20) for p in range(21)]
    assert ordered == sorted(ordered)  # monotone: the order of answers never flips


def test_an_over_confident_model_is_pulled_back() -> None:
    points = [(0.95, i % 10 < 6) for i in range(50)] + [(0.05, i % 10 < 3) for i in range(50)]
    recal = Recalibration.fit("systemone", "jev", "goal_met", points, fitted_at=NOW)
    assert recal.apply(0.95) == pytest.approx(0.6)
    assert recal.apply(0.05) == pytest.approx(0.3)


@pytest.mark.parametrize("bad", [[], [(1.5, True)], [(-0.1, False)]])
def test_bad_points_are_refused(bad: list[tuple[float, bool]]) -> None:
    with pytest.raises(ValueError):
        isotonic_fit(bad)


def test_only_the_opinions_own_model_is_applied() -> None:
    goal = Recalibration.fit(
        "systemone", "jev", "goal_met", [(0.9, False), (0.1, False)], fitted_at=NOW
    )
    act = Recalibration.fit("systemone", "jev", "act", [(0.8, True), (0.2, False)], fitted_at=NOW)
    other = Recalibration.fit("systemone", "other", "goal_met", [(0.9, True)], fitted_at=NOW)
    opinion = {
        "backend": "systemone",
        "model": "jev",
        "goal_met": 0.9,
        "urgency_probabilities": {
            "nothing_to_do": 0.1,
            "worth_a_look": 0.1,
            "act_soon": 0.5,
            "act_now": 0.3,
        },
    }
    answers = calibrated_answers(opinion, [goal, act, other])
    assert set(answers) == {"goal_met", "act"}
    assert answers["goal_met"]["p"] == pytest.approx(1 / 4)  # all labels false, floor 1/(2+2)
    assert answers["goal_met"]["raw"] == 0.9 and answers["goal_met"]["reviews"] == 2
    assert answers["act"]["raw"] == pytest.approx(0.8)
    assert calibrated_answers({**opinion, "model": None}, [goal]) == {}
    assert raw_probability("act", {"urgency_probabilities": None}) is None
