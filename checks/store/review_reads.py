"""What the run path reads from ops' reviews: resolutions for the agent, recalibrations to apply.

- ``resolutions_for_next_run``: the runs of an automation that ops resolved as
  ``false_positive`` or ``expected`` since its last finished run — what the
  agent is told on the next run (``checks.agent.prompt``).
- ``current_recalibrations`` / ``save_recalibration``: the newest isotonic map
  per question of one decision model (``checks.store.review_tables.CalibrationRow``).

Reads open their own session; ``save_recalibration`` commits its row.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from checks.opinion.calibration import METHOD, Recalibration
from checks.report.ops_resolution import OpsResolution
from checks.store.review_tables import CalibrationRow, ReviewOutcomeRow
from checks.store.run_tables import RunRow
from checks.store.store import Store

CONTEXT_REASONS = ("false_positive", "expected")
"""Resolve reasons the next run's agent is told about."""
MAX_RESOLUTIONS = 3


def resolutions_for_next_run(store: Store, automation: str) -> list[OpsResolution]:
    """Return the resolutions the next run of ``automation`` is given, newest first (at most 3).

    Those labelled ``false_positive`` or ``expected`` after the automation's
    last finished run: the next run to start gets them, the runs after it do not.
    """
    since = (
        select(func.max(RunRow.finished_at))
        .where(RunRow.automation == automation)
        .scalar_subquery()
    )
    query = (
        select(ReviewOutcomeRow)
        .where(
            ReviewOutcomeRow.automation == automation,
            ReviewOutcomeRow.reason.in_(CONTEXT_REASONS),
            or_(since.is_(None), ReviewOutcomeRow.labelled_at > since),
        )
        .order_by(ReviewOutcomeRow.labelled_at.desc(), ReviewOutcomeRow.run_id.desc())
        .limit(MAX_RESOLUTIONS)
    )
    with store.session() as session:  # one statement: the last finished run is its subquery
        return [
            OpsResolution(r.run_id, r.reason, r.comment, r.finding, r.labelled_at)
            for r in session.scalars(query)
        ]


def _to_recalibration(row: CalibrationRow) -> Recalibration:
    return Recalibration(
        backend=row.backend,
        model=row.model,
        question=row.question,
        xs=tuple(float(x) for x in row.points["xs"]),
        ys=tuple(float(y) for y in row.points["ys"]),
        reviews=row.reviews,
        fitted_at=row.fitted_at,
    )


def current_recalibrations(store: Store, backend: str, model: str | None) -> list[Recalibration]:
    """Return the newest recalibration of each question of one decision model."""
    with store.session() as session:
        return read_recalibrations(session, backend, model)


def read_recalibrations(session: Session, backend: str, model: str | None) -> list[Recalibration]:
    """``current_recalibrations`` in an open session."""
    model_is = CalibrationRow.model.is_(None) if model is None else CalibrationRow.model == model
    query = (
        select(CalibrationRow)
        .where(CalibrationRow.backend == backend, model_is)
        .order_by(CalibrationRow.fitted_at.desc(), CalibrationRow.id.desc())
    )
    newest: dict[str, Recalibration] = {}
    for row in session.scalars(query):
        newest.setdefault(row.question, _to_recalibration(row))
    return list(newest.values())


def save_recalibration(store: Store, recal: Recalibration, scores: dict[str, Any]) -> int:
    """Store a fitted recalibration (it becomes the current one); return its row id."""
    with store.session() as session:
        row = CalibrationRow(
            backend=recal.backend,
            model=recal.model,
            question=recal.question,
            method=METHOD,
            reviews=recal.reviews,
            points=recal.to_dict(),
            scores=scores,
            fitted_at=recal.fitted_at,
        )
        session.add(row)
        session.flush()
        return row.id
