"""When an automation runs: cron occurrences in its time zone, DST, catch-up.

Pure functions, no broker and no database: ``worker.service.dispatch`` and
``lookout schedule`` both call them, so what the command prints is what the
dispatcher creates.

Occurrences are computed with croniter (pinned in ``pyproject.toml``) over the
*wall-clock* times of the automation's zone, then placed on the time line by
the rule of docs/design.md, Scheduling:

- A **fixed-time** schedule — minute and hour fields are plain numbers or
  lists of numbers, decided from the raw string (``30 1 * * *``,
  ``0 9,17 * * 1-5``, ``@daily``) — fires **once** in a repeated hour (the
  first pass, e.g. 01:30 EDT, not 01:30 EST) and, for a time in a skipped hour,
  **once at the end of the gap** (``30 2 * * *`` on a spring-forward day fires
  at 03:00 local).
- An **interval** schedule — anything else (``0 * * * *``, ``*/15 * * * *``,
  ``0 9-17 * * *``) — follows real elapsed time: it fires at every instant
  whose local time matches, so twice in a repeated hour and never in a skipped
  one.

Every datetime given or returned is zone-aware; returned instants are in UTC.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter

from checks.automation.model import Automation
from checks.fields.schedule import cron_fields

UTC = dt.UTC
_PLAIN = re.compile(r"\d+(,\d+)*")
_OFFSET_SAMPLE = dt.timedelta(hours=6)  # zone offsets are sampled this often to bound a scan
_STEP = dt.timedelta(microseconds=1)
_local = threading.local()  # per-thread croniter cache: croniter objects are stateful


@dataclass(frozen=True)
class CronSchedule:
    """A validated 5-field cron expression in one IANA time zone.

    Attributes:
        expression: the cron expression (already checked by ``checks.fields.schedule``).
        zone: the time zone its wall-clock times are read in.
        day_match: ``all`` ANDs day-of-month and day-of-week (croniter
            ``day_or=False``); ``any`` or None ORs them, as cron does.
    """

    expression: str
    zone: ZoneInfo
    day_match: Literal["any", "all"] | None = None

    @classmethod
    def of(cls, automation: Automation) -> CronSchedule | None:
        """Return the automation's schedule, or None when it runs only on demand."""
        if automation.schedule is None:
            return None
        return cls(automation.schedule, automation.zone, automation.day_match)

    @property
    def fixed_time(self) -> bool:
        """Whether the minute and hour fields are plain numbers or lists of numbers."""
        minute, hour = cron_fields(self.expression)[:2]
        return bool(_PLAIN.fullmatch(minute) and _PLAIN.fullmatch(hour))

    @property
    def key(self) -> str:
        """A text that changes exactly when the times this schedule fires at change."""
        return f"{self.expression}|{self.zone.key}|{self.day_match or 'any'}"


def _cron(schedule: CronSchedule, start: dt.datetime) -> croniter:
    """Return a cached croniter for the expression, set to the naive wall time ``start``."""
    cache: dict[tuple[str, bool], croniter] = getattr(_local, "cache", None) or {}
    _local.cache = cache
    day_or = schedule.day_match != "all"
    it = cache.get((schedule.expression, day_or))
    if it is None:
        if len(cache) > 4096:
            cache.clear()
        it = croniter(schedule.expression, start, ret_type=dt.datetime, day_or=day_or)
        cache[(schedule.expression, day_or)] = it
    it.set_current(start)
    return it


def _offsets(zone: ZoneInfo, start: dt.datetime, end: dt.datetime) -> tuple[dt.timedelta, ...]:
    """Return the zone's UTC offsets sampled from ``start`` to ``end`` (both included)."""
    found = set()
    at = start
    while at < end:
        found.add(at.astimezone(zone).utcoffset() or dt.timedelta())
        at += _OFFSET_SAMPLE
    found.add(end.astimezone(zone).utcoffset() or dt.timedelta())
    return tuple(found)


def _gap_end(zone: ZoneInfo, low: dt.datetime, high: dt.datetime) -> dt.datetime:
    """Return the first instant of the new offset in (low, high], to the second."""
    target = high.astimezone(zone).utcoffset()
    while high - low > dt.timedelta(seconds=1):
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=0)
        if middle <= low:
            break
        if middle.astimezone(zone).utcoffset() == target:
            high = middle
        else:
            low = middle
    return high


def instants(schedule: CronSchedule, wall: dt.datetime) -> list[dt.datetime]:
    """Return the UTC instants one matching wall-clock time stands for, by the DST rule.

    Args:
        schedule: the schedule (its zone and whether it is fixed-time).
        wall: a naive local time that the cron expression matches.

    Returns:
        One instant for an ordinary time; for a time in a repeated hour, the
        first pass (fixed-time) or both passes (interval); for a time in a
        skipped hour, the end of the gap (fixed-time) or nothing (interval).
    """
    zone = schedule.zone
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    if first == second:
        return [first]
    if first < second:  # repeated hour: fold=0 is the earlier pass
        return [first] if schedule.fixed_time else [first, second]
    # skipped hour: fold=1 reads the wall time with the new offset (earlier instant)
    return [_gap_end(zone, second, first)] if schedule.fixed_time else []


def _walls(schedule: CronSchedule, start: dt.datetime, descending: bool) -> Iterator[dt.datetime]:
    it = _cron(schedule, start)
    step = it.get_prev if descending else it.get_next
    while True:
        try:
            yield step()
        except CroniterBadDateError:  # no match within croniter's horizon (50 years)
            return


def occurrences(
    schedule: CronSchedule,
    after: dt.datetime,
    until: dt.datetime,
    *,
    limit: int | None = None,
    newest_first: bool = False,
) -> list[dt.datetime]:
    """Return the instants the schedule fires at in ``(after, until]``, in UTC, sorted.

    Args:
        schedule: the cron expression, zone and day rule.
        after: start of the window, excluded (zone-aware).
        until: end of the window, included (zone-aware).
        limit: keep only this many: the oldest, or the newest with ``newest_first``.
        newest_first: scan backwards from ``until`` and return newest first, so
            that a long window (a week of downtime) costs only ``limit`` steps.

    Raises:
        ValueError: ``after`` or ``until`` is naive.
    """
    if after.tzinfo is None or until.tzinfo is None:
        raise ValueError("occurrences() needs zone-aware datetimes")
    if until <= after:
        return []
    offsets = _offsets(schedule.zone, after, until)
    low, high = min(offsets), max(offsets)
    # A wall time w stands for instants between w - high and w - low.
    first_wall = (after.astimezone(UTC) + low).replace(tzinfo=None)
    last_wall = (until.astimezone(UTC) + high).replace(tzinfo=None)
    found: set[dt.datetime] = set()
    start = last_wall + _STEP if newest_first else first_wall
    for wall in _walls(schedule, start, newest_first):
        if wall > last_wall or wall < first_wall:
            break
        for instant in instants(schedule, wall):
            if after < instant <= until:
                found.add(instant)
        if limit is not None and len(found) >= limit:
            kth = sorted(found, reverse=newest_first)[limit - 1].replace(tzinfo=None)
            # Wall time w stands for instants in [w - high, w - low]: once every
            # further wall lies beyond the kth instant found, none can come before it.
            if (wall - low < kth) if newest_first else (wall - high > kth):
                break
    ordered = sorted(found, reverse=newest_first)
    return ordered[:limit] if limit is not None else ordered


def next_occurrences(
    schedule: CronSchedule, after: dt.datetime, count: int, *, horizon_days: int = 366 * 50
) -> list[dt.datetime]:
    """Return the next ``count`` instants after ``after`` (UTC, oldest first).

    The window grows from a day up to ``horizon_days`` until ``count`` are
    found, so rare schedules (``0 0 29 2 *``) cost a few scans, frequent ones one.
    """
    days = 1
    while True:
        until = after + dt.timedelta(days=days)
        found = occurrences(schedule, after, until, limit=count)
        if len(found) >= count or days >= horizon_days:
            return found
        days = min(days * 8, horizon_days)


@dataclass(frozen=True)
class SlotDecision:
    """What dispatch does with one due slot.

    Attributes:
        scheduled_for: the slot, in UTC.
        run: True to queue a run; False to record the slot as skipped.
        reason: why it is skipped (None when it runs).
    """

    scheduled_for: dt.datetime
    run: bool
    reason: str | None = None


def _ago(delta: dt.timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _stamp(instant: dt.datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def apply_catchup(
    automation: Automation,
    slots: list[dt.datetime],
    now: dt.datetime,
    *,
    misfire_grace_s: float,
) -> list[SlotDecision]:
    """Apply the automation's catch-up policy to its due slots.

    A slot found at most ``misfire_grace_s`` after its time is on time and
    runs; older ones were missed (the service was down) and follow
    ``catchup``: ``latest`` runs the newest missed slot when nothing newer
    runs and it is within ``catchup_window_s``; ``none`` runs none; ``all``
    runs every one (the caller caps how many slots it passes).

    Args:
        automation: gives ``catchup`` and ``catchup_window_s``.
        slots: due slots, UTC, any order.
        now: the dispatch time (zone-aware).
        misfire_grace_s: seconds after its time a slot still counts as on time.

    Returns:
        One decision per slot, oldest first; skipped slots carry their reason.
    """
    grace = dt.timedelta(seconds=misfire_grace_s)
    window = dt.timedelta(seconds=automation.catchup_window_s)
    ordered = sorted(slots)
    on_time = [s for s in ordered if now - s <= grace]
    missed = [s for s in ordered if now - s > grace]
    decisions = [SlotDecision(s, True) for s in on_time]
    policy = automation.catchup
    for slot in missed:
        late = f"missed: found {_ago(now - slot)} late"
        if policy == "all":
            decisions.append(SlotDecision(slot, True))
        elif policy == "none":
            decisions.append(SlotDecision(slot, False, f"{late} (catchup: none)"))
        elif slot != missed[-1]:
            newest = _stamp(missed[-1])
            reason = f"{late}; catchup: latest runs only the newest missed slot ({newest})"
            decisions.append(SlotDecision(slot, False, reason))
        elif on_time:
            reason = f"{late}; catchup: latest, and the newer slot {_stamp(on_time[-1])} runs"
            decisions.append(SlotDecision(slot, False, reason))
        elif now - slot > window:
            reason = f"{late}, more than the catchup_window of {_ago(window)} (catchup: latest)"
            decisions.append(SlotDecision(slot, False, reason))
        else:
            decisions.append(SlotDecision(slot, True))
    return sorted(decisions, key=lambda d: d.scheduled_for)
