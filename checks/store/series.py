"""A check's numbers over time: written with each finished run, read by automation, check and time.

``finish_run`` turns every check of a report into ``check_series`` rows
(``series_rows``): its compared ``value`` with the band its expectation
allowed, and each numeric metric. ``read_series`` reads one check's series
back, oldest first; the anomaly baselines, the report page's charts and
``lookout show``'s sparklines all read it.

Which runs a read sees: ``finished`` (completed or in error: a run in error
may still have measured some checks) for charts, ``completed`` only for a
baseline (a run that did not complete is no history to judge against).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from checks.fields.expectation import parse_expectation
from checks.report import CheckResult, RunReport, Status
from checks.store.run_tables import RunRow, SeriesRow

VALUE = "value"
"""The metric name of a check's compared value (no kind reports a metric of that name)."""

COMPLETED = (str(Status.COMPLETED),)
"""Run statuses a baseline reads: completed runs only."""

FINISHED = (str(Status.COMPLETED), str(Status.ERROR))
"""Run statuses a chart reads: every run that finished and measured something."""

Band = tuple[float | None, float | None]


@dataclass(frozen=True)
class SeriesPoint:
    """One run's number of one check.

    Attributes:
        run_id: the run.
        scheduled_for: the run's slot time (UTC).
        value: the number; None when the check had none (an error, not evaluated).
        low: the lowest value the expectation allowed in that run; None: no lower bound.
        high: the highest; None: no upper bound.
        outcome: the check's outcome in that run (``passed``, ``failed``…).
    """

    run_id: int
    scheduled_for: dt.datetime
    value: float | None
    low: float | None = None
    high: float | None = None
    outcome: str = "passed"


def number(value: Any) -> float | None:
    """A stored value as a float: booleans 1.0 / 0.0; None for text, NULL and non-finite values."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float | Decimal):
        as_float = float(value)
        return as_float if math.isfinite(as_float) else None
    return None


def expectation_band(expect: str) -> Band:
    """The values a fixed expectation allows, as (low, high); None is unbounded.

    ``< N`` and ``<= N`` give ``(None, N)`` alike (the band is drawn, the
    comparison itself is made by ``checks.fields.expectation``); ``!= N``
    allows everything but one point and gives no band; ``empty`` is the row
    count 0, ``not empty`` at least 1; ``is true`` is 1 and ``is false`` 0 (a
    boolean is stored as 1 or 0). Text that is not a fixed expectation (an
    anomaly, whose band is computed per run) gives ``(None, None)``.
    """
    try:
        parsed = parse_expectation(expect)
    except ValueError:
        return None, None
    low = float(parsed.low) if parsed.low is not None else None
    high = float(parsed.high) if parsed.high is not None else None
    bands: dict[str, Band] = {
        "==": (low, low),
        "<": (None, low),
        "<=": (None, low),
        ">": (low, None),
        ">=": (low, None),
        "between": (low, high),
        "empty": (0.0, 0.0),
        "not_empty": (1.0, None),
        "is_true": (1.0, 1.0),
        "is_false": (0.0, 0.0),
    }
    return bands.get(parsed.op, (None, None))


def check_band(check: CheckResult) -> Band:
    """The band a check's value was judged against in its run.

    An anomaly expectation's band is the one computed in that run from its
    baseline (``CheckResult.anomaly``; unbounded on a side its ``direction``
    does not watch, and none when it was not judged); a fixed expectation's is
    ``expectation_band``.
    """
    if check.segments is not None and check.segments.items:
        return 0.0, 0.0  # its value is how many segments failed
    if check.anomaly is not None:
        return check.anomaly.low, check.anomaly.high
    return expectation_band(check.expect)


def series_rows(
    report: RunReport, automation: str, scheduled_for: dt.datetime
) -> list[dict[str, Any]]:
    """The ``check_series`` rows of one finished run, as column values for one insert.

    Each check's value with its band, and each numeric metric; a segmented
    check's each segment's value with its band too, under the segment's metric
    (``Segment.series_metric``: its anomaly's history); ``automation`` and
    ``scheduled_for`` are the stored run's (copied into every row).
    """
    rows: list[dict[str, Any]] = []
    for check in report.checks:
        low, high = check_band(check)
        points = [(VALUE, number(check.value), low, high)]
        for name, value in check.metrics.items():
            measured = number(value)
            if measured is not None and name != VALUE and not isinstance(value, bool):
                points.append((name, measured, None, None))
        for segment in check.segments.items if check.segments else []:
            found = segment.anomaly
            low_s, high_s = (found.low, found.high) if found else expectation_band(check.expect)
            points.append((segment.series_metric, number(segment.value), low_s, high_s))
        rows += [
            {
                "automation": automation,
                "check_name": check.name,
                "metric": metric,
                "scheduled_for": scheduled_for,
                "value": value,
                "low": low_,
                "high": high_,
                "outcome": str(check.outcome),
            }
            for metric, value, low_, high_ in points
        ]
    return rows


def read_series(
    session: Session,
    automation: str,
    check: str,
    metric: str = VALUE,
    *,
    before: dt.datetime | None = None,
    through: dt.datetime | None = None,
    statuses: Collection[str] = FINISHED,
    exclude_run: int | None = None,
    limit: int = 30,
) -> list[SeriesPoint]:
    """One check's series, oldest first: the newest ``limit`` points of runs in ``statuses``.

    Args:
        session: an open store session.
        automation: the automation's name.
        check: the check's name.
        metric: ``VALUE`` (the compared value) or a metric's name.
        before: only runs whose slot is strictly earlier (a baseline never
            holds the run it judges).
        through: only runs whose slot is at or before it (a chart of a past run).
        statuses: the run statuses read (``COMPLETED`` or ``FINISHED``).
        exclude_run: a run never read (the current one).
        limit: at most this many points, the newest.
    """
    query = (
        select(SeriesRow, RunRow.status)
        .join(RunRow, RunRow.id == SeriesRow.run_id)
        .where(
            SeriesRow.automation == automation,
            SeriesRow.check_name == check,
            SeriesRow.metric == metric,
            RunRow.status.in_(list(statuses)),
        )
        .order_by(SeriesRow.scheduled_for.desc(), SeriesRow.run_id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(SeriesRow.scheduled_for < before)
    if through is not None:
        query = query.where(SeriesRow.scheduled_for <= through)
    if exclude_run is not None:
        query = query.where(SeriesRow.run_id != exclude_run)
    found = [_point(row) for row, _status in session.execute(query)]
    return list(reversed(found))


def run_series(
    session: Session, run: RunRow, checks: Sequence[str], *, limit: int = 30
) -> dict[str, list[SeriesPoint]]:
    """Each check's value over the last ``limit`` finished runs up to ``run`` (and ``run`` itself).

    Returns:
        Check name → points, oldest first; the run itself is included whatever its status.
    """
    found: dict[str, list[SeriesPoint]] = {}
    for name in checks:
        points = read_series(
            session, run.automation, name, through=run.scheduled_for, limit=limit + 1
        )
        points = [p for p in points if p.run_id != run.id][-(limit - 1) :] if limit > 1 else []
        own = session.scalars(
            select(SeriesRow).where(
                SeriesRow.run_id == run.id, SeriesRow.check_name == name, SeriesRow.metric == VALUE
            )
        ).first()
        if own is not None:
            points.append(_point(own))
        found[name] = points
    return found


def _point(row: SeriesRow) -> SeriesPoint:
    return SeriesPoint(
        run_id=row.run_id,
        scheduled_for=row.scheduled_for,
        value=row.value,
        low=row.low,
        high=row.high,
        outcome=row.outcome,
    )
