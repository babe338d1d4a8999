"""A check's value over the last runs or buckets, as the report page and ``lookout show`` show it.

Both read the same thing (``run_histories``): for each check of a run, its
``value`` series (``checks.store.series.run_series``) up to and including
that run, at most ``HISTORY_POINTS`` points, oldest first, with how many
there are in all, so a chart can say "the last 30 of 57 runs". Each point
carries the band its run stored (a fixed expectation's, or an anomaly's
computed one) and the check's outcome there; ``HistoryPoint.side`` says on
which side of the band a failing value fell, which the chart and the
sparkline draw as a shape (▲ above, ▼ below), never as a colour alone.

An anomaly check ``over:`` time buckets is judged on buckets, not runs: its
history is that run's buckets (``bucket_history``): the baseline buckets it
was compared with, the tested bucket with its band and outcome, and the
bucket still filling, which is drawn but never tested.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from checks.fields.expectation import parse_expectation
from checks.kinds.in_words import duration, percent_text
from checks.report import CheckOutcome
from checks.store.report_rows import SEGMENTS_KEY
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


def figure(value: float, unit: str | None) -> str:
    """A value of a check's history as the report writes it: with its unit.

    ``percent`` (the value is the percent itself) as ``2.45 %`` or ``< 0.01 %``,
    ``duration`` (seconds) as ``3h 12m``; any other unit as ``number``.
    """
    if unit == "percent":
        return percent_text(value)
    if unit == "duration":
        return duration(value)
    return number(value)


def unit_of(expect: str | None) -> str | None:
    """The unit of a check's values, as its expectation gives it (``percent`` for ``< 5%``).

    One of ``checks.fields.expectation``'s units (``number``, ``percent``,
    ``duration``, ``boolean``, ``rows`` …); None when there is no readable one.
    """
    try:
        return parse_expectation(expect).unit if expect else None
    except ValueError:
        return None


@dataclass(frozen=True)
class HistoryPoint:
    """One run's value of one check, or one time bucket's.

    Attributes:
        run_id: the run.
        scheduled_for: the run's slot time (UTC); for a bucket, its local start (zone-aware).
        value: the number; None when the check had none in that run (an error, not evaluated).
        low: the lowest value the band allowed; None: no lower bound.
        high: the highest; None: no upper bound.
        outcome: the check's outcome in that run (``passed``, ``failed``, ``error``,
            ``not_evaluated``); for a bucket also ``baseline`` or ``filling`` (still
            filling, not tested).
        current: the run the page or ``lookout show`` is about (for buckets: the tested one).
        bucket: the bucket's size (``hour``, ``day``, ``week``); None for a run's point.
    """

    run_id: int
    scheduled_for: dt.datetime
    value: float | None
    low: float | None
    high: float | None
    outcome: str
    current: bool = False
    bucket: str | None = None

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
    """One check's value over the last runs up to one run, or over one run's time buckets.

    Attributes:
        check: the check's name (untrusted text).
        points: at most ``HISTORY_POINTS``, oldest first; the run itself last when it stored one
            (buckets: the baseline, the tested bucket, the bucket still filling).
        total: how many points there are up to and including the run (``len(points)`` or more).
        unit: the unit of the values, from the run's expectation of the check (``unit_of``):
            ``percent`` (the value is the percent itself), ``duration`` (seconds), ``number``
            …; None when unknown.
    """

    check: str
    points: list[HistoryPoint]
    total: int
    unit: str | None = None

    @property
    def values(self) -> list[float]:
        """The numbers among the points (points without one left out)."""
        return [p.value for p in self.points if p.value is not None]

    @property
    def failed(self) -> int:
        """How many of the points failed."""
        return sum(1 for p in self.points if p.failed)

    @property
    def bucket(self) -> str | None:
        """The bucket size when the points are time buckets, else None (runs)."""
        return self.points[0].bucket if self.points else None

    @property
    def shown_words(self) -> str:
        """What the points are, in words.

        ``the last 30 of 57 runs``, ``12 runs``, ``1 run``; for buckets ``28
        baseline days, the tested day and the day still filling``.
        """
        shown = len(self.points)
        size = self.bucket
        if size is None:
            if self.total > shown:
                return f"the last {shown} of {self.total} runs"
            return f"{shown} run{'s' if shown != 1 else ''}"
        roles = [p.outcome for p in self.points]
        baseline = roles.count("baseline")
        hidden = self.total - shown
        parts = []
        if baseline or hidden:
            head = f"the last {baseline} of {baseline + hidden}" if hidden else f"{baseline}"
            parts.append(f"{head} baseline {size}{'s' if baseline + hidden != 1 else ''}")
        if any(p.current for p in self.points):
            parts.append(f"the tested {size}")
        if "filling" in roles:
            parts.append(f"the {size} still filling")
        return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


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


def _start(text: Any, zone: dt.tzinfo = dt.UTC) -> dt.datetime | None:
    """An ISO 8601 time in ``zone`` (a time without an offset is taken as UTC); None if not one."""
    try:
        found = dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return (found if found.tzinfo is not None else found.replace(tzinfo=dt.UTC)).astimezone(zone)


def _zone(name: Any) -> dt.tzinfo:
    try:
        return ZoneInfo(str(name)) if name else dt.UTC
    except (ValueError, ZoneInfoNotFoundError):
        return dt.UTC


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def bucket_history(
    check: str,
    anomaly: Mapping[str, Any] | None,
    buckets: Mapping[str, Any] | None,
    outcome: str,
    run_id: int,
    *,
    limit: int = HISTORY_POINTS,
) -> CheckHistory | None:
    """One run's buckets of an anomaly check ``over:`` time buckets; None for any other check.

    Args:
        check: the check's name.
        anomaly: the stored ``checks.report.Anomaly`` (``to_dict``); its ``source`` must be
            ``buckets``. Its baseline points carry its band (drawn behind them), and are
            never failures.
        buckets: the stored ``checks.report.Buckets``: the size, the zone the bucket
            starts are shown in, and the bucket still filling.
        outcome: the check's outcome (that of the tested bucket).
        run_id: the run.
        limit: at most this many points: the newest baseline buckets are kept.
    """
    if not anomaly or anomaly.get("source") != "buckets":
        return None
    zone = _zone((buckets or {}).get("timezone"))
    tested = _start(anomaly.get("tested_at"), zone)
    if tested is None:
        return None
    size = str((buckets or {}).get("bucket") or "bucket")
    low, high = _float(anomaly.get("low")), _float(anomaly.get("high"))
    baseline = []
    for item in anomaly.get("baseline") or []:
        if isinstance(item, list | tuple) and len(item) == 2 and (at := _start(item[0], zone)):
            baseline.append(
                HistoryPoint(run_id, at, _float(item[1]), low, high, "baseline", False, size)
            )
    points = [
        *baseline,
        HistoryPoint(run_id, tested, _float(anomaly.get("value")), low, high, outcome, True, size),
    ]
    filling = _start((buckets or {}).get("filling_start"), zone)
    if filling is not None:
        value = _float((buckets or {}).get("filling_value"))
        points.append(HistoryPoint(run_id, filling, value, None, None, "filling", False, size))
    dropped = min(len(baseline), max(0, len(points) - limit))  # the oldest baseline buckets
    return CheckHistory(check, points[dropped:], len(points))


def run_histories(
    session: Session, run: RunRow, *, limit: int = HISTORY_POINTS
) -> list[CheckHistory]:
    """Each check's history up to ``run``, in the run's check order.

    An anomaly check over time buckets gets its buckets (``bucket_history``),
    every other check its value over the runs.

    Args:
        session: an open store session.
        run: the run the history ends with (its checks loaded or loadable).
        limit: at most this many points per check (at least 1).
    """
    limit = max(1, limit)
    found: dict[str, CheckHistory] = {}
    for row in run.checks:
        outcome = row.outcome or (
            "passed" if row.passed else "failed" if row.passed is False else "error"
        )
        buckets = bucket_history(row.name, row.anomaly, row.buckets, outcome, run.id, limit=limit)
        if buckets is not None:
            found[row.name] = buckets
    names = [c.name for c in run.checks if c.name not in found]
    series = run_series(session, run, names, limit=limit)
    for name in names:
        points = [_point(p, run.id) for p in series[name]]
        kept = next(c for c in run.checks if c.name == name)
        segmented = SEGMENTS_KEY in (kept.metrics or {})  # its value: segments failed
        unit = "number" if segmented else unit_of(kept.expect)
        found[name] = CheckHistory(name, points, _total(session, run, name), unit)
    return [found[c.name] for c in run.checks]


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
        return run_histories(session, run, limit=limit)
