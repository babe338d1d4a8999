"""Cron occurrences in a zone, the DST rule (docs/design.md, Scheduling), catch-up decisions."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from checks.automation.model import Automation
from worker.service.slots import CronSchedule, apply_catchup, next_occurrences, occurrences

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def utc(values: list[dt.datetime]) -> list[str]:
    return [v.strftime("%Y-%m-%dT%H:%MZ") for v in values]


def local(values: list[dt.datetime], zone: str) -> list[str]:
    return [v.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z") for v in values]


def automation(**fields: Any) -> Automation:
    base = {"name": "a", "source": "flights", "goal": "g", "path": "a.yaml", "line": 1}
    return Automation.model_validate({**base, **fields})


# -- the DST table of the issue ------------------------------------------------


def test_fixed_time_in_the_repeated_hour_fires_once() -> None:
    sched = CronSchedule("30 1 * * *", ZoneInfo("America/New_York"))
    found = occurrences(sched, at("2025-11-01T12:00"), at("2025-11-03T12:00"))
    assert utc(found) == ["2025-11-02T05:30Z", "2025-11-03T06:30Z"]
    assert local(found, "America/New_York") == ["2025-11-02 01:30 EDT", "2025-11-03 01:30 EST"]


def test_interval_schedule_fires_in_both_passes_of_the_repeated_hour() -> None:
    sched = CronSchedule("0 * * * *", ZoneInfo("America/Los_Angeles"))
    found = occurrences(sched, at("2026-11-01T07:30"), at("2026-11-01T10:30"))
    assert utc(found) == ["2026-11-01T08:00Z", "2026-11-01T09:00Z", "2026-11-01T10:00Z"]
    assert local(found, "America/Los_Angeles") == [
        "2026-11-01 01:00 PDT",
        "2026-11-01 01:00 PST",
        "2026-11-01 02:00 PST",
    ]


def test_fixed_time_in_the_skipped_hour_fires_once_at_its_end() -> None:
    sched = CronSchedule("30 2 * * *", ZoneInfo("America/New_York"))
    found = occurrences(sched, at("2026-03-08T00:00-05:00"), at("2026-03-09T00:00-04:00"))
    assert utc(found) == ["2026-03-08T07:00Z"]
    assert local(found, "America/New_York") == ["2026-03-08 03:00 EDT"]


def test_fixed_time_keeps_its_local_time_across_the_change() -> None:
    sched = CronSchedule("0 6 * * *", ZoneInfo("America/New_York"))
    found = occurrences(sched, at("2024-03-08T00:00-05:00"), at("2024-03-12T23:59-04:00"))
    assert local(found, "America/New_York") == [
        "2024-03-08 06:00 EST",
        "2024-03-09 06:00 EST",
        "2024-03-10 06:00 EDT",
        "2024-03-11 06:00 EDT",
        "2024-03-12 06:00 EDT",
    ]
    assert utc(found)[1:3] == ["2024-03-09T11:00Z", "2024-03-10T10:00Z"]


# -- the rule, against a minute-by-minute oracle --------------------------------


@dataclass(frozen=True)
class Case:
    expression: str
    zone: str
    start: str  # UTC, the window is (start, start + hours]
    hours: int = 30


CASES = [
    Case("*/20 * * * *", "America/New_York", "2026-03-08T00:00"),
    Case("*/20 * * * *", "America/New_York", "2025-11-02T00:00"),
    Case("15 1,2 * * *", "America/New_York", "2025-11-02T00:00"),
    Case("0,30 2 * * *", "America/New_York", "2026-03-08T00:00"),
    Case("45 0-3 * * *", "Europe/London", "2026-03-29T00:00"),
    Case("45 0-3 * * *", "Europe/London", "2026-10-25T00:00"),
    Case("30 2 * * 0", "Europe/Berlin", "2026-03-29T00:00"),
    Case("0 0 * * *", "America/Santiago", "2026-09-05T00:00", 60),  # midnight is skipped
    Case("30 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00"),  # a 30-minute shift
]


def _oracle(case: Case) -> list[dt.datetime]:
    """The rule, stated directly over every UTC minute of the window."""
    zone = ZoneInfo(case.zone)
    sched = CronSchedule(case.expression, zone)
    start = at(case.start)
    minutes = [start + dt.timedelta(minutes=m) for m in range(1, case.hours * 60 + 1)]
    found = []
    for previous, instant in zip([start, *minutes], minutes, strict=False):
        wall = instant.astimezone(zone)
        naive = wall.replace(tzinfo=None)
        if croniter.match(case.expression, naive):
            second_pass = naive.replace(tzinfo=zone, fold=0).astimezone(UTC) != instant
            if not (sched.fixed_time and second_pass):
                found.append(instant)
        offset, before = wall.utcoffset(), previous.astimezone(zone).utcoffset()
        assert offset is not None and before is not None
        if sched.fixed_time and offset > before:
            # clocks jumped forward at `instant`: wall times in the gap fire here, once
            gap_start = previous.astimezone(zone).replace(tzinfo=None) + dt.timedelta(minutes=1)
            walls = [gap_start + dt.timedelta(minutes=m) for m in range(0, 180)]
            in_gap = [w for w in walls if w < naive]
            if any(croniter.match(case.expression, w) for w in in_gap) and instant not in found:
                found.append(instant)
    return sorted(found)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.expression}@{c.zone}@{c.start}")
def test_occurrences_follow_the_rule_minute_by_minute(case: Case) -> None:
    sched = CronSchedule(case.expression, ZoneInfo(case.zone))
    start = at(case.start)
    found = occurrences(sched, start, start + dt.timedelta(hours=case.hours))
    assert utc(found) == utc(_oracle(case))


@pytest.mark.parametrize(
    ("expression", "fixed"),
    [
        ("30 1 * * *", True),
        ("0,30 9,17 * * 1-5", True),
        ("@daily", True),
        ("0 * * * *", False),
        ("*/15 * * * *", False),
        ("0 9-17 * * *", False),
        ("0 */2 * * *", False),
        ("@hourly", False),
    ],
)
def test_fixed_time_is_decided_from_the_raw_minute_and_hour(expression: str, fixed: bool) -> None:
    assert CronSchedule(expression, ZoneInfo("UTC")).fixed_time is fixed


def test_day_match_all_requires_both_day_fields() -> None:
    zone = ZoneInfo("Europe/Paris")
    first_monday = CronSchedule("0 9 1-7 * 1", zone, "all")
    either = CronSchedule("0 9 1-7 * 1", zone, "any")
    window = (at("2026-05-31T12:00"), at("2026-06-30T12:00"))
    assert local(occurrences(first_monday, *window), "Europe/Paris") == ["2026-06-01 09:00 CEST"]
    assert len(occurrences(either, *window)) == 7 + 4  # June 1-7, then Mondays 8, 15, 22, 29


def test_newest_first_with_a_limit_is_the_tail_of_the_full_list() -> None:
    sched = CronSchedule("*/5 * * * *", ZoneInfo("America/New_York"))
    window = (at("2025-10-31T00:00"), at("2025-11-04T00:00"))
    everything = occurrences(sched, *window)
    assert occurrences(sched, *window, limit=7, newest_first=True) == everything[::-1][:7]
    assert occurrences(sched, *window, limit=7) == everything[:7]


def test_next_occurrences_finds_rare_slots_and_naive_times_are_refused() -> None:
    leap = CronSchedule("0 12 29 2 *", ZoneInfo("Asia/Tokyo"))
    assert utc(next_occurrences(leap, at("2026-01-01T00:00"), 2)) == [
        "2028-02-29T03:00Z",
        "2032-02-29T03:00Z",
    ]
    with pytest.raises(ValueError, match="zone-aware"):
        occurrences(leap, dt.datetime(2026, 1, 1), at("2027-01-01T00:00"))


# -- catch-up -----------------------------------------------------------------

NOW = at("2026-06-01T12:00:20")
HOURLY = [at("2026-06-01T09:00"), at("2026-06-01T10:00"), at("2026-06-01T11:00")]


def decisions(policy: str, slots: list[dt.datetime], **fields: Any) -> list[tuple[str, bool]]:
    auto = automation(schedule="0 * * * *", catchup=policy, **fields)
    return [
        (d.scheduled_for.strftime("%H:%M"), d.run)
        for d in apply_catchup(auto, slots, NOW, misfire_grace_s=120)
    ]


def test_on_time_slots_always_run_and_latest_skips_older_missed_ones() -> None:
    slots = [*HOURLY, at("2026-06-01T12:00")]
    assert decisions("latest", slots) == [
        ("09:00", False),
        ("10:00", False),
        ("11:00", False),
        ("12:00", True),
    ]
    assert decisions("none", slots) == [
        ("09:00", False),
        ("10:00", False),
        ("11:00", False),
        ("12:00", True),
    ]
    assert decisions("all", slots) == [
        ("09:00", True),
        ("10:00", True),
        ("11:00", True),
        ("12:00", True),
    ]


def test_latest_runs_the_newest_missed_slot_only_within_the_window() -> None:
    assert decisions("latest", HOURLY, catchup_window="90m") == [
        ("09:00", False),
        ("10:00", False),
        ("11:00", True),
    ]
    assert decisions("latest", HOURLY, catchup_window="30m") == [
        ("09:00", False),
        ("10:00", False),
        ("11:00", False),
    ]


def test_skipped_slots_say_why() -> None:
    auto = automation(schedule="0 * * * *", catchup="latest", catchup_window="30m")
    reasons = [d.reason for d in apply_catchup(auto, HOURLY, NOW, misfire_grace_s=120)]
    assert reasons[0] == (
        "missed: found 3.0 h late; catchup: latest runs only the newest missed slot "
        "(2026-06-01 11:00 UTC)"
    )
    assert reasons[2] == (
        "missed: found 60 min late, more than the catchup_window of 30 min (catchup: latest)"
    )
    none = automation(schedule="0 * * * *", catchup="none")
    assert apply_catchup(none, HOURLY[-1:], NOW, misfire_grace_s=120)[0].reason == (
        "missed: found 60 min late (catchup: none)"
    )
