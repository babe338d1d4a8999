"""Recalibrating the decision model's probabilities on ops' verdicts: a monotone map per question.

A decision model can be confidently wrong (docs/design.md, Decision models): its 0.95 may
hold only 60 % of the time. Once ops have labelled enough runs (resolve
reasons on the review page), ``lookout calibrate`` fits, per decision model
and question, an **isotonic** map from the raw probability to the frequency
the labels show, and later answers carry the mapped probability beside the
raw one ("calibrated on 57 reviews"). The raw answer is always kept.

- ``isotonic_fit`` is the pool-adjacent-violators algorithm (the least-squares
  non-decreasing fit; Barlow et al., *Statistical Inference under Order
  Restrictions*, 1972): O(n log n) for the sort, O(n) after it.
- ``Recalibration.apply`` interpolates linearly between the fitted points and
  holds the end values outside them, as scikit-learn's ``IsotonicRegression``
  with ``out_of_bounds="clip"`` does; the result is kept inside
  [1 / (n + 2), (n + 1) / (n + 2)] (Laplace's rule of succession), since no
  finite number of reviews proves a certainty.
- Monotone: a higher raw probability never maps lower, so the order of
  answers (what the review page sorts by) never flips; the map moves where a
  probability sits, it never filters anything out.

Questions calibrated (``CALIBRATED_QUESTIONS``): ``goal_met`` (P(the goal is
met); the event held when ops found the report a false positive) and
``act`` (P(urgency is act_soon or act_now); the event held when ops fixed
something). Ops' reasons say nothing about whether a run was the same as the
last one, so ``same_as_last_run`` is not calibrated.
"""

from __future__ import annotations

import datetime as dt
import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CALIBRATED_QUESTIONS = ("goal_met", "act")
"""The probabilities recalibrated, by name (see the module docstring)."""
ACT_URGENCIES = ("act_soon", "act_now")
"""The urgencies whose probabilities add up to P(act)."""
METHOD = "isotonic"


def isotonic_fit(
    points: Sequence[tuple[float, bool]],
) -> tuple[list[float], list[float], list[int]]:
    """Fit a non-decreasing step function to (raw probability, label) points by PAV.

    Args:
        points: (raw probability in [0, 1], whether the event held), any order.

    Returns:
        ``(xs, ys, weights)``: the distinct raw probabilities in increasing
        order, the fitted frequency at each (non-decreasing, each a mean of
        labels), and how many points each distinct probability had.

    Raises:
        ValueError: no points, or a probability outside [0, 1].
    """
    if not points:
        raise ValueError("isotonic_fit needs at least one point")
    if any(not 0.0 <= p <= 1.0 for p, _ in points):
        raise ValueError("a probability is outside [0, 1]")
    grouped: dict[float, list[int]] = {}
    for p, held in points:
        grouped.setdefault(float(p), []).append(int(held))
    xs = sorted(grouped)
    weights = [len(grouped[x]) for x in xs]
    # blocks of [sum of labels, count, how many distinct xs], merged while they violate order
    blocks: list[list[float]] = []
    for x, w in zip(xs, weights, strict=True):
        blocks.append([float(sum(grouped[x])), float(w), 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count, span = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
            blocks[-1][2] += span
    ys: list[float] = []
    for total, count, span in blocks:
        ys += [total / count] * int(span)
    return xs, ys, weights


@dataclass(frozen=True)
class Recalibration:
    """A fitted monotone map for one question of one decision model.

    Attributes:
        backend: the decision backend (``systemone``…).
        model: the decision model's name, or None when the runs did not record it.
        question: one of ``CALIBRATED_QUESTIONS``.
        xs: raw probabilities (increasing) the map passes through.
        ys: the calibrated probability at each ``xs`` (non-decreasing).
        reviews: labelled runs the map was fitted on.
        fitted_at: when it was fitted (aware, UTC).
    """

    backend: str
    model: str | None
    question: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    reviews: int
    fitted_at: dt.datetime

    @classmethod
    def fit(
        cls,
        backend: str,
        model: str | None,
        question: str,
        points: Sequence[tuple[float, bool]],
        *,
        fitted_at: dt.datetime,
    ) -> Recalibration:
        """Fit the map on ``points`` (raw probability, whether the event held).

        Raises:
            ValueError: no points, or a probability outside [0, 1].
        """
        xs, ys, _ = isotonic_fit(points)
        return cls(backend, model, question, tuple(xs), tuple(ys), len(points), fitted_at)

    def apply(self, p: float) -> float:
        """Return the calibrated probability of a raw one (module docstring)."""
        if len(self.xs) == 1 or p <= self.xs[0]:
            mapped = self.ys[0]
        elif p >= self.xs[-1]:
            mapped = self.ys[-1]
        else:
            i = bisect_right(self.xs, p) - 1
            x0, x1, y0, y1 = self.xs[i], self.xs[i + 1], self.ys[i], self.ys[i + 1]
            mapped = y0 + (y1 - y0) * (p - x0) / (x1 - x0)
        floor = 1.0 / (self.reviews + 2)
        return min(1.0 - floor, max(floor, mapped))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON kept in the store (``calibrations.points``)."""
        return {"xs": list(self.xs), "ys": list(self.ys)}

    def describe(self) -> str:
        """Return "calibrated on N reviews", the words shown beside a calibrated answer."""
        return f"calibrated on {self.reviews} review{'s' if self.reviews != 1 else ''}"


def raw_probability(question: str, opinion: Mapping[str, Any]) -> float | None:
    """Return a question's raw probability from a stored second opinion, or None."""
    if question == "goal_met":
        value = opinion.get("goal_met")
        return float(value) if isinstance(value, int | float) else None
    if question == "act":
        probs = opinion.get("urgency_probabilities")
        if not isinstance(probs, dict):
            return None
        return min(1.0, sum(float(probs.get(u) or 0.0) for u in ACT_URGENCIES))
    raise ValueError(f"unknown calibrated question {question!r}")


def calibrated_answers(
    opinion: Mapping[str, Any], recalibrations: Sequence[Recalibration]
) -> dict[str, dict[str, Any]]:
    """Return ``{question: {p, raw, reviews, method, fitted_at}}`` for the answers a map covers.

    Only maps of the opinion's own backend and model apply; a question with no
    raw answer, or no map, is left out.
    """
    out: dict[str, dict[str, Any]] = {}
    for recal in recalibrations:
        if recal.backend != opinion.get("backend") or recal.model != opinion.get("model"):
            continue
        raw = raw_probability(recal.question, opinion)
        if raw is None:
            continue
        out[recal.question] = {
            "p": round(recal.apply(raw), 6),
            "raw": raw,
            "reviews": recal.reviews,
            "method": METHOD,
            "fitted_at": recal.fitted_at.isoformat(),
        }
    return out


def out_of_fold(
    points: Sequence[tuple[float, bool]], *, folds: int = 5, fitted_at: dt.datetime
) -> list[float]:
    """Return each point's calibrated probability from a map fitted without it (k-fold).

    Points are dealt into folds in a fixed pseudo-random order (seed 0: the
    same points give the same folds, and no pattern in the labels' order lines
    up with the folds); each fold is mapped by the isotonic fit of the others,
    so the scores of the result measure what the map does on answers it has
    not seen (an in-sample isotonic fit scores near perfect by construction).
    With fewer points than folds, leave-one-out.

    Raises:
        ValueError: fewer than two points, or a probability outside [0, 1].
    """
    if len(points) < 2:
        raise ValueError("cross-validation needs at least two points")
    folds = min(folds, len(points))
    order = list(range(len(points)))
    random.Random(0).shuffle(order)
    fold_of = {index: position % folds for position, index in enumerate(order)}
    mapped = [0.0] * len(points)
    for fold in range(folds):
        train = [pt for i, pt in enumerate(points) if fold_of[i] != fold]
        recal = Recalibration.fit("", None, "", train, fitted_at=fitted_at)
        for i in (i for i in range(len(points)) if fold_of[i] == fold):
            mapped[i] = recal.apply(points[i][0])
    return mapped
