"""``lookout calibrate``: ops' verdicts against the decision model's answers, and the fit.

Every resolve on the review page keeps the run as a labelled outcome
(``review_outcomes``); the run keeps the second opinion as it was answered.
Per decision model (backend and model name) and per question, on the labelled
runs with an answer:

- the Brier score and the expected calibration error over 10 equal-width
  bins (``checks.eval.scoring``), with the reliability diagram
  (``checks.eval.reliability``) when asked for;
- how often each flag the second opinion raised was right;
- with at least ``min_reviews`` labelled answers, both outcomes among them,
  an isotonic recalibration (``checks.opinion.calibration``) is fitted on all
  of them and stored; the next runs carry it beside the raw answers. Its
  effect is reported out of sample (5-fold: each answer mapped by a fit
  without it).

What a label says (``EVENTS``): ``goal_met`` held when ops found the report a
``false_positive`` (``fixed``, ``expected`` and ``no_action_needed`` all say
the problem was real: the goal was not met); ``act`` (P(act_soon) + P(act_now)) held when ops
``fixed`` something. ``double_check_disagrees`` was right when the finding was
wrong by that reading; ``changed_since_last_run`` was right when the run's
evidence diff shows a change or its finding differs from the previous run's.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from checks.eval.reliability import write_reliability_diagram
from checks.eval.scoring import (
    CalibrationBin,
    brier_score,
    calibration_bins,
    expected_calibration_error,
)
from checks.opinion.calibration import (
    CALIBRATED_QUESTIONS,
    Recalibration,
    out_of_fold,
    raw_probability,
)
from checks.store.review_reads import save_recalibration
from checks.store.review_tables import ReviewOutcomeRow
from checks.store.run_tables import RunRow
from checks.store.store import Store

EVENTS = {
    "goal_met": "the goal was met (resolved as a false positive)",
    "act": "someone had to act (resolved as fixed)",
}
FLAGS = ("double_check_disagrees", "changed_since_last_run")


@dataclass(frozen=True)
class Labelled:
    """One labelled run with a second opinion, as ``lookout calibrate`` reads it."""

    run_id: int
    reason: str
    finding: str | None
    opinion: dict[str, Any]
    previous_finding: str | None

    def truth(self, question: str) -> bool:
        """Whether the event of ``question`` held, by the label (module docstring)."""
        return self.reason == ("false_positive" if question == "goal_met" else "fixed")

    def flag_right(self, flag: str) -> bool:
        """Whether a flag the second opinion raised on this run was right."""
        if flag == "double_check_disagrees":
            return (self.finding == "clear") != self.truth("goal_met")
        diff = self.opinion.get("evidence_diff") or {}
        changed = any(diff.get(k) for k in ("added", "removed", "changed"))
        return changed or self.previous_finding != self.finding


@dataclass
class QuestionReport:
    """One question of one decision model on the labelled runs.

    Attributes:
        question: ``goal_met`` or ``act``; event: what a true label means.
        reviews: labelled runs with an answer to it; held: of which the event held.
        brier, ece: of the raw answers (None without answers).
        bins: the reliability diagram's bins of the raw answers.
        calibrated_brier, calibrated_ece: of the recalibrated answers, out of sample.
        fitted: the recalibration stored now, or None; why_not: why none was fitted.
        diagram: the reliability diagram written, if any.
    """

    question: str
    event: str
    reviews: int
    held: int
    brier: float | None
    ece: float | None
    bins: list[CalibrationBin]
    calibrated_brier: float | None = None
    calibrated_ece: float | None = None
    fitted: Recalibration | None = None
    why_not: str | None = None
    diagram: Path | None = None


@dataclass
class ModelReport:
    """One decision model: its labelled runs, questions and flags."""

    backend: str
    model: str | None
    reviews: int
    reasons: dict[str, int]
    questions: list[QuestionReport] = field(default_factory=list)
    flags: dict[str, tuple[int, int]] = field(default_factory=dict)
    """flag → (times raised on the labelled runs, times it was right)."""


@dataclass
class CalibrationReport:
    """What ``lookout calibrate`` found and did."""

    min_reviews: int
    models: list[ModelReport]
    without_opinion: int
    """Labelled runs without any second opinion (backend none, or no valid answer)."""


def labelled_runs(store: Store) -> list[Labelled]:
    """Return every labelled run with its stored second opinion, oldest label first."""
    query = (
        select(ReviewOutcomeRow, RunRow)
        .join(RunRow, RunRow.id == ReviewOutcomeRow.run_id)
        .order_by(ReviewOutcomeRow.labelled_at, ReviewOutcomeRow.run_id)
    )
    with store.session() as session:
        rows = [(outcome, run) for outcome, run in session.execute(query)]
        previous_ids = {
            (run.second_opinion or {}).get("evidence_diff", {}).get("previous_run_id")
            for _, run in rows
        } - {None}
        findings = {
            run_id: finding
            for run_id, finding in session.execute(
                select(RunRow.id, RunRow.finding).where(RunRow.id.in_(previous_ids))
            )
        }
    labelled = []
    for outcome, run in rows:
        opinion = run.second_opinion or {}
        previous = (opinion.get("evidence_diff") or {}).get("previous_run_id")
        before = findings.get(previous) if isinstance(previous, int) else None
        labelled.append(Labelled(run.id, outcome.reason, run.finding, opinion, before))
    return labelled


def _question(
    question: str, answered: list[tuple[float, bool]], min_reviews: int, now: dt.datetime
) -> QuestionReport:
    ps, ys = [p for p, _ in answered], [y for _, y in answered]
    report = QuestionReport(
        question,
        EVENTS[question],
        len(answered),
        sum(ys),
        brier_score(ps, ys),
        expected_calibration_error(ps, ys),
        calibration_bins(ps, ys),
    )
    if len(answered) < min_reviews:
        report.why_not = f"{len(answered)} of the {min_reviews} labelled answers a fit needs"
    elif report.held in (0, len(answered)):
        report.why_not = "every label says the same: a fit needs both outcomes"
    else:
        mapped = out_of_fold(answered, fitted_at=now)
        report.calibrated_brier = brier_score(mapped, ys)
        report.calibrated_ece = expected_calibration_error(mapped, ys)
    return report


def calibrate(
    store: Store,
    *,
    min_reviews: int,
    now: dt.datetime,
    fit: bool = True,
    plot_dir: Path | None = None,
) -> CalibrationReport:
    """Score every decision model on the labelled runs; fit and store the recalibrations.

    Args:
        store: the report store (its ``calibrations`` get the new fits).
        min_reviews: labelled answers a question needs before it is fitted.
        now: the fits' time (aware).
        fit: store the recalibrations (False: report only).
        plot_dir: where to write one reliability diagram per model and question.
    """
    labelled = labelled_runs(store)
    groups: dict[tuple[str, str | None], list[Labelled]] = {}
    without = 0
    for item in labelled:
        backend = item.opinion.get("backend")
        if not backend or backend == "none":
            without += 1
            continue
        groups.setdefault((backend, item.opinion.get("model")), []).append(item)
    models = []
    for (backend, model), items in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
    ):
        report = ModelReport(backend, model, len(items), dict(Counter(i.reason for i in items)))
        for question in CALIBRATED_QUESTIONS:
            answered = [
                (p, i.truth(question))
                for i in items
                if (p := raw_probability(question, i.opinion)) is not None
            ]
            q = _question(question, answered, min_reviews, now)
            if q.why_not is None and fit:
                q.fitted = Recalibration.fit(backend, model, question, answered, fitted_at=now)
                scores = {
                    "brier": q.brier,
                    "ece": q.ece,
                    "calibrated_brier": q.calibrated_brier,
                    "calibrated_ece": q.calibrated_ece,
                }
                save_recalibration(store, q.fitted, scores)
            if plot_dir is not None and answered:
                name = f"{backend}-{model or 'unknown'}-{question}.png".replace("/", "_")
                q.diagram = write_reliability_diagram(
                    q.bins,
                    plot_dir / name,
                    title=f"{backend} {model or '(model unknown)'}: {question}",
                    ece=q.ece,
                    brier=q.brier,
                )
            report.questions.append(q)
        for flag in FLAGS:
            raised = [i for i in items if flag in (i.opinion.get("flags") or [])]
            report.flags[flag] = (len(raised), sum(i.flag_right(flag) for i in raised))
        models.append(report)
    return CalibrationReport(min_reviews, models, without)


def report_json(report: CalibrationReport) -> dict[str, Any]:
    """Return the ``lookout calibrate --json`` document."""
    return {
        "min_reviews": report.min_reviews,
        "without_opinion": report.without_opinion,
        "models": [
            {
                "backend": m.backend,
                "model": m.model,
                "reviews": m.reviews,
                "reasons": m.reasons,
                "questions": [
                    {
                        "question": q.question,
                        "event": q.event,
                        "reviews": q.reviews,
                        "held": q.held,
                        "brier": q.brier,
                        "ece": q.ece,
                        "calibrated_brier": q.calibrated_brier,
                        "calibrated_ece": q.calibrated_ece,
                        "fitted": q.fitted is not None,
                        "fitted_on": q.fitted.reviews if q.fitted else None,
                        "why_not": q.why_not,
                        "diagram": str(q.diagram) if q.diagram else None,
                    }
                    for q in m.questions
                ],
                "flags": {f: {"raised": r, "right": ok} for f, (r, ok) in m.flags.items()},
            }
            for m in report.models
        ],
    }
