"""A check's history up to one run, on SQLite and PostgreSQL: bounded, counted, itself last."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.report import (
    CheckOutcome,
    CheckResult,
    Finding,
    FindingSource,
    RunReport,
    Status,
    outcome_of,
)
from checks.store.store import Store
from tests.conftest import scratch_pg_database
from tests.stored_reports import store_report
from worker.review.history import HISTORY_POINTS, bucket_history, histories_of_run
from worker.review.vocabulary import NotFound

SLOT = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        opened = Store(f"sqlite:///{tmp_path}/lookout.db")
        yield opened
        opened.close()
        return
    with scratch_pg_database() as url:
        opened = Store(url)
        yield opened
        opened.close()


def report(day: int, volume: float | None, *, status: Status = Status.COMPLETED) -> RunReport:
    """A run of 'orders' on 2 March + ``day`` days: its volume against ``between 90 and 110``."""
    slot = SLOT + dt.timedelta(days=day)
    passed = None if volume is None else 90 <= volume <= 110
    return RunReport(
        automation="orders",
        scheduled_for=slot,
        status=status,
        finding=Finding.CLEAR if passed else Finding.NEEDS_ATTENTION,
        finding_source=FindingSource.CHECKS,
        checks=[
            CheckResult(
                "volume",
                "SELECT count(*) FROM orders",
                "between 90 and 110",
                volume,
                outcome_of(passed, "no such table" if volume is None else None),
                "no such table" if volume is None else None,
                "C1",
            ),
            CheckResult("paid", "SELECT true", "is true", True, CheckOutcome.PASSED, None, "C2"),
            CheckResult(
                "late share",
                "SELECT 0.000913184",
                "< 1%",
                0.000913184,
                CheckOutcome.PASSED,
                None,
                "C3",
            ),
        ],
        started_at=slot,
        finished_at=slot + dt.timedelta(seconds=1),
    )


def volume(day: int) -> float | None:
    return {7: 140.0, 9: 20.0, 11: None}.get(day, 100.0 + day % 3)


def test_the_history_of_a_run_is_its_last_points_with_how_many_there_are(store: Store) -> None:
    ids = [
        store_report(
            store, report(day, volume(day), status=Status.ERROR if day == 11 else Status.COMPLETED)
        )
        for day in range(36)
    ]
    volume_, paid, late = histories_of_run(store, ids[34])
    assert (volume_.check, paid.check, late.check) == ("volume", "paid", "late share")
    assert (volume_.unit, paid.unit, late.unit) == ("number", "boolean", "percent")
    assert (len(volume_.points), volume_.total) == (HISTORY_POINTS, 35)
    assert [p.run_id for p in volume_.points] == ids[5:35]  # never the later run
    assert [p.current for p in volume_.points] == [False] * 29 + [True]
    shown = {p.run_id: p for p in volume_.points}
    assert (shown[ids[7]].value, shown[ids[7]].failed, shown[ids[7]].side) == (140.0, True, "above")
    assert (shown[ids[9]].value, shown[ids[9]].side) == (20.0, "below")
    assert (shown[ids[11]].value, shown[ids[11]].outcome, shown[ids[11]].failed) == (
        None,
        "error",
        False,
    )  # the run in error is shown: it finished
    assert (shown[ids[12]].low, shown[ids[12]].high, shown[ids[12]].side) == (90.0, 110.0, None)
    assert volume_.failed == 2
    assert volume_.values[:3] == [102.0, 100.0, 140.0]
    assert [p.value for p in paid.points] == [1.0] * 30 and paid.failed == 0


def test_a_first_run_has_one_point_and_an_unfinished_run_none(store: Store) -> None:
    first = store_report(store, report(0, 100.0))
    (only, _, _) = histories_of_run(store, first)
    assert [(p.run_id, p.value, p.current) for p in only.points] == [(first, 100.0, True)]
    assert only.total == 1
    queued = store.create_run("orders", SLOT + dt.timedelta(days=1))
    assert queued is not None
    assert histories_of_run(store, queued) == []  # no checks stored yet
    with pytest.raises(NotFound, match="no run with id 999"):
        histories_of_run(store, 999)


# an anomaly check over daily buckets as the store keeps it (checks.report.Anomaly, Buckets)
ANOMALY = {
    "method": "zscore",
    "source": "buckets",
    "value": 40.0,
    "tested_at": "2026-03-07T23:00:00+00:00",  # 8 March, midnight in Paris
    "baseline": [[f"2026-03-0{d}T23:00:00+00:00", 100.0 + d] for d in range(1, 7)],
    "low": 80.0,
    "high": 125.0,
}
BUCKETS = {
    "column": "created_at",
    "bucket": "day",
    "timezone": "Europe/Paris",
    "filling_start": "2026-03-08T23:00:00+00:00",
    "filling_value": 12.0,
}


def test_an_anomaly_over_buckets_is_its_baseline_the_tested_bucket_and_the_one_filling() -> None:
    found = bucket_history("daily orders", ANOMALY, BUCKETS, "failed", 7)
    assert found is not None and found.bucket == "day"
    got = [(p.scheduled_for.isoformat(), p.value, p.outcome, p.current) for p in found.points]
    assert got == [
        *[(f"2026-03-0{d + 1}T00:00:00+01:00", 100.0 + d, "baseline", False) for d in range(1, 7)],
        ("2026-03-08T00:00:00+01:00", 40.0, "failed", True),
        ("2026-03-09T00:00:00+01:00", 12.0, "filling", False),
    ]
    assert [(p.low, p.high) for p in found.points] == [(80.0, 125.0)] * 7 + [(None, None)]
    assert (found.failed, found.points[6].side, found.total) == (1, "below", 8)
    assert found.shown_words == "6 baseline days, the tested day and the day still filling"
    bounded = bucket_history("daily orders", ANOMALY, BUCKETS, "failed", 7, limit=5)
    assert bounded is not None and [p.outcome for p in bounded.points] == [
        "baseline",
        "baseline",
        "baseline",
        "failed",
        "filling",
    ]
    assert bounded.points[0].value == 104.0  # the newest baseline buckets are kept
    assert (
        bounded.shown_words
        == "the last 3 of 6 baseline days, the tested day and the day still filling"
    )


def test_only_an_anomaly_over_buckets_has_a_bucket_history() -> None:
    runs = {**ANOMALY, "source": "runs"}
    assert bucket_history("c", runs, None, "passed", 1) is None
    assert bucket_history("c", None, BUCKETS, "passed", 1) is None
    too_little = {**ANOMALY, "baseline": [], "value": 40.0, "low": None, "high": None}
    found = bucket_history("c", too_little, BUCKETS, "not_evaluated", 1)
    assert found is not None
    assert [p.outcome for p in found.points] == ["not_evaluated", "filling"]
    assert found.shown_words == "the tested day and the day still filling"
