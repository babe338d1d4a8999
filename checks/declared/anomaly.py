"""Judging a value against its baseline: the anomaly expectation's score and band.

The baseline is the same check's earlier values: the earlier buckets of its
own grouped query (``over:``, ``checks.declared.buckets``), or, without
``over:``, its values in the automation's past completed runs
(``check_series``, read before this run's slot, so the current run is never
in it). The tested value is never part of its own baseline: an anomaly inside
its baseline widens the spread it is measured with (with 7 points it could
never pass 3σ: (n−1)/√n = 2.27).

With ``n`` baseline values ``x₁…xₙ`` and sensitivity ``k``:

- ``zscore``: centre = mean, spread = sample standard deviation
  (``√(Σ(xᵢ − mean)² / (n − 1))``);
- ``mad``: centre = median, spread = 1.4826 × median(|xᵢ − median|) (1.4826
  makes it the standard deviation for normal data). When more than half the
  points are equal the MAD is 0 although the baseline is not constant; the
  spread then falls back to 1.2533 × mean(|xᵢ − median|) (the same scaling for
  the mean absolute deviation), so one odd point does not flag every change.

score = (value − centre) / spread; the band is centre ± k × spread. ``both``
flags |score| > k, ``up`` only score > k (no lower bound), ``down`` only
score < −k (no upper bound). A value on the band's edge is inside it.

A constant baseline (every point equal) has no spread: there is no division
by zero; the band is that one value, the score is 0 when the value equals it
and none otherwise, and any change in a watched direction is an anomaly.

Fewer points than ``min_history`` (after seasonality) is **not evaluated**,
with "3 of 7 points of history". ``seasonality: weekly`` keeps only the points
on the tested value's weekday in the automation's time zone (and, for hourly
buckets, its hour of that day).
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from zoneinfo import ZoneInfo

from checks.fields.anomaly_rule import AnomalyRule
from checks.fields.judgement import AWAITING_HISTORY
from checks.report import Anomaly, CheckOutcome, CheckResult

MAD_SCALE = 1.4826
"""The median absolute deviation times this is the standard deviation of normal data."""

MEAN_AD_SCALE = 1.2533
"""The mean absolute deviation times this (√(π/2)) is the standard deviation of normal data."""

VALUE = "value"
"""The series metric of a raw query's value (``checks.store.series.VALUE``)."""

HISTORY_READ = 2_000
"""At most this many past runs are read for a baseline (seasonality then keeps some)."""


@dataclass(frozen=True)
class Point:
    """One earlier value: when (zone-aware) and what."""

    at: dt.datetime
    value: float


class History(Protocol):
    """Reads a check's past values: completed runs before this run's slot, oldest first."""

    def __call__(self, check: str, metric: str) -> Sequence[Point]:
        """Return at most ``HISTORY_READ`` points of ``metric`` of ``check``."""
        ...


def judge(
    rule: AnomalyRule,
    value: float,
    tested_at: dt.datetime,
    baseline: Sequence[Point],
    *,
    source: str,
    zone: str = "UTC",
    hourly: bool = False,
) -> tuple[Anomaly, bool | None, str | None]:
    """Score ``value`` against ``baseline`` (the rules are in the module docstring).

    Args:
        rule: the expectation's rule.
        value: the tested value.
        tested_at: the tested bucket's start, or the run's slot (zone-aware).
        baseline: the earlier points, oldest first, the tested one not among them.
        source: ``runs`` or ``buckets`` (recorded in the result).
        zone: the automation's time zone (for weekly seasonality).
        hourly: the points are hourly buckets (weekly seasonality matches the hour too).

    Returns:
        (the computation, passed — None when not evaluated —, a reason: why it
        was not evaluated, or the note on a constant baseline).
    """
    where = ZoneInfo(zone)
    points = list(baseline)
    if rule.seasonality == "weekly":
        points = [p for p in points if _same_slot(p.at, tested_at, where, hourly)]
    if rule.runs and source == "runs":
        points = points[-rule.runs :]
    found = Anomaly(
        method=rule.method,
        sensitivity=rule.sensitivity,
        direction=rule.direction,
        seasonality=rule.seasonality,
        min_history=rule.min_history,
        source=source,
        value=value,
        tested_at=tested_at.isoformat(),
        baseline=[[p.at.isoformat(), p.value] for p in points],
    )
    if len(points) < rule.min_history:
        same = f" on the same {_slot_words(hourly)}" if rule.seasonality == "weekly" else ""
        return found, None, f"{len(points)} of {rule.min_history} points of history{same}"
    values = [p.value for p in points]
    center, spread = _center_spread(rule.method, values)
    found.center, found.spread = center, spread
    found.constant = min(values) == max(values)
    k = rule.sensitivity
    if spread == 0:
        found.low = found.high = center
        found.score = 0.0 if value == center else None
        rose, fell = value > center, value < center
        note = (
            f"constant baseline (all {len(values)} points are {figure(center)}):"
            " any change is an anomaly"
        )
    else:
        found.score = (value - center) / spread
        found.low, found.high = center - k * spread, center + k * spread
        rose, fell = found.score > k, found.score < -k
        note = None
    if rule.direction == "up":
        found.low, flagged = None, rose
    elif rule.direction == "down":
        found.high, flagged = None, fell
    else:
        flagged = rose or fell
    return found, not flagged, note


def _center_spread(method: str, values: list[float]) -> tuple[float, float]:
    if method == "zscore":
        return statistics.fmean(values), statistics.stdev(values)
    median = statistics.median(values)
    deviations = [abs(v - median) for v in values]
    spread = MAD_SCALE * statistics.median(deviations)
    if spread == 0:
        spread = MEAN_AD_SCALE * statistics.fmean(deviations)
    return median, spread


def _same_slot(at: dt.datetime, tested: dt.datetime, zone: ZoneInfo, hourly: bool) -> bool:
    here, there = at.astimezone(zone), tested.astimezone(zone)
    return here.weekday() == there.weekday() and (not hourly or here.hour == there.hour)


def _slot_words(hourly: bool) -> str:
    return "weekday and hour" if hourly else "weekday"


def apply(
    result: CheckResult,
    rule: AnomalyRule,
    tested_at: dt.datetime,
    baseline: Sequence[Point],
    *,
    source: str,
    zone: str,
    hourly: bool = False,
) -> None:
    """Judge a check measured for an anomaly expectation, in place.

    Only a check whose value was measured and awaits its history
    (``AWAITING_HISTORY``) is judged; one in error or not evaluated for another
    reason (an empty scope) stays as it is.
    """
    if result.reason != AWAITING_HISTORY or result.outcome is not CheckOutcome.NOT_EVALUATED:
        return
    value = result.value
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        result.reason = "no number to judge against its history"
        return
    found, passed, note = judge(
        rule, float(value), tested_at, baseline, source=source, zone=zone, hourly=hourly
    )
    result.anomaly = found
    result.reason = note
    if passed is None:
        result.outcome = CheckOutcome.NOT_EVALUATED
    else:
        result.outcome = CheckOutcome.PASSED if passed else CheckOutcome.FAILED


def figure(value: float | None) -> str:
    """A number for people: whole numbers without decimals, others to 2 decimals."""
    if value is None:
        return "—"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.2f}"


def band_text(found: Anomaly) -> str:
    """The expected band in words: ``380.53–449.47``, ``at most 449.47``, ``at least 380.53``."""
    if found.low is not None and found.high is not None:
        if found.low == found.high:
            return figure(found.low)
        return f"{figure(found.low)}–{figure(found.high)}"
    if found.high is not None:
        return f"at most {figure(found.high)}"
    if found.low is not None:
        return f"at least {figure(found.low)}"
    return "no band"


def describe(found: Anomaly) -> str:
    """One line: ``value 412, expected 380.53–449.47, score 5.31 (zscore over 27 buckets)``.

    Without a band (too little history) it says how many points there are.
    """
    unit = "buckets" if found.source == "buckets" else "runs"
    if found.center is None:
        return (
            f"value {figure(found.value)}; {found.baseline_size} of {found.min_history}"
            f" {unit} of history, no band yet"
        )
    score = "—" if found.score is None else f"{found.score:.2f}"
    same = ", same weekday" if found.seasonality == "weekly" else ""
    return (
        f"value {figure(found.value)}, expected {band_text(found)}, score {score}"
        f" ({found.method} over {found.baseline_size} {unit}{same})"
    )


def alert_text(found: Anomaly, bucket: str | None = None) -> str:
    """An alert's line: ``value 260, expected 12.36–174.07, baseline 14 days, score 6.19``.

    ``bucket`` (``day``…) names the baseline's points when they are time
    buckets; otherwise they are runs.
    """
    unit = bucket or "run"
    size = found.baseline_size
    score = "—" if found.score is None else f"{found.score:.2f}"
    return (
        f"value {figure(found.value)}, expected {band_text(found)}, baseline {size:,}"
        f" {unit}{'' if size == 1 else 's'}, score {score}"
    )
