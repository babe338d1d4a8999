"""A check's value over the last runs, as the report page's chart and ``lookout show`` show it.

Both read the same thing (``run_histories``): for each check of a run, its
``value`` series (``checks.store.series.run_series``) up to and including
that run, at most ``HISTORY_POINTS`` points, oldest first, with how many
there are in all, so a chart can say "30 of 57 runs". Each point carries the
band its run stored (a fixed expectation's, or an anomaly's computed one) and
the check's outcome there; ``HistoryPoint.side`` says on which side of the
band a failing value fell, which the chart and the sparkline draw as a shape
(▲ above, ▼ below), never as a colour alone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from checks.report import CheckOutcome
from checks.store.run_tables import RunRow, SeriesRow
from checks.store.series import FINISHED, VALUE, SeriesPoint, run_series
from checks.store.store import Store
from worker.review.vocabulary import NotFound

HISTORY_POINTS = 30
"""Points a chart or a sparkline shows at most: the newest, the run itself last."""

Side = Literal["above", "below"]


def number(value: float) -> str:
    """A value as charts and sparklines write it: integers whole, others to 6 significant digits."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


@dataclass(frozen=True)
class HistoryPoint:
    """One run's value of one check.

    Attributes:
        run_id: the run.
        scheduled_for: the run's slot time (UTC).
        value: the number; None when the check had none in that run (an error, not evaluated).
        low: the lowest value the band allowed; None: no lower bound.
        high: the highest; None: no upper bound.
        outcome: the check's outcome in that run (``passed``, ``failed``, ``error``,
            ``not_evaluated``).
        current: the run the page or ``lookout show`` is about.
    """

    run_id: int
    scheduled_for: dt.datetime
    value: float | None
    low: float | None
    high: float | None
    outcome: str
    current: bool = False

    @property
    def failed(self) -> bool:
        """Whether the check failed in that run (an error or not evaluated is no failure)."""
        return self.outcome == CheckOutcome.FAILED

    @property
    def side(self) -> Side | None:
        """Where a failing value lies against its band: ``above``, ``below``, else None."""
        if not self.failed or self.value is None:
            return None
        if self.high is not None and self.value > self.high:
            return "above"
        if self.low is not None and self.value < self.low:
            return "below"
        return None


@dataclass(frozen=True)
class CheckHistory:
    """One check's value over the last runs up to one run.

    Attributes:
        check: the check's name (untrusted text).
        points: at most ``HISTORY_POINTS``, oldest first; the run itself last when it stored one.
        total: how many points there are up to and including the run (``len(points)`` or more).
    """

    check: str
    points: list[HistoryPoint]
    total: int

    @property
    def values(self) -> list[float]:
        """The numbers among the points (points without one left out)."""
        return [p.value for p in self.points if p.value is not None]

    @property
    def failed(self) -> int:
        """How many of the points failed."""
        return sum(1 for p in self.points if p.failed)


def _point(point: SeriesPoint, run_id: int) -> HistoryPoint:
    return HistoryPoint(
        point.run_id,
        point.scheduled_for,
        point.value,
        point.low,
        point.high,
        point.outcome,
        point.run_id == run_id,
    )


def _total(session: Session, run: RunRow, check: str) -> int:
    """Points ``run_series`` could show: finished runs up to the run's slot, and the run itself."""
    query = (
        select(func.count())
        .select_from(SeriesRow)
        .join(RunRow, RunRow.id == SeriesRow.run_id)
        .where(
            SeriesRow.automation == run.automation,
            SeriesRow.check_name == check,
            SeriesRow.metric == VALUE,
            SeriesRow.scheduled_for <= run.scheduled_for,
            or_(RunRow.status.in_(list(FINISHED)), SeriesRow.run_id == run.id),
        )
    )
    return int(session.scalar(query) or 0)


def run_histories(
    session: Session, run: RunRow, checks: Sequence[str], *, limit: int = HISTORY_POINTS
) -> list[CheckHistory]:
    """Each named check's history up to ``run``, in the order given.

    Args:
        session: an open store session.
        run: the run the history ends with.
        checks: the run's check names.
        limit: at most this many points per check (at least 1).
    """
    series = run_series(session, run, checks, limit=max(1, limit))
    return [
        CheckHistory(name, [_point(p, run.id) for p in series[name]], _total(session, run, name))
        for name in checks
    ]


def histories_of_run(
    store: Store, run_id: int, *, limit: int = HISTORY_POINTS
) -> list[CheckHistory]:
    """The history of each check of a stored run, in the run's check order.

    Raises:
        NotFound: no run has this id.
    """
    with store.session() as session:
        run = session.get(RunRow, run_id)
        if run is None:
            raise NotFound(f"no run with id {run_id}")
        names = [c.name for c in run.checks]
        return run_histories(session, run, names, limit=limit)
