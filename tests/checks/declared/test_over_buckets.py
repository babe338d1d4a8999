"""``over:``: a count per time bucket from one grouped query, on real DuckDB and PostgreSQL.

The data is daily order volume in New York time, with rows half an hour from
midnight on either side, so a bucket cut in UTC instead of the automation's
zone would move them a day and change every count. Expected scores are
computed here from the stated formula.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import psycopg
import pytest

from checks.automation.model import Automation
from checks.automation.time_buckets import Over
from checks.declared.buckets import window
from checks.declared.check import run_checks
from checks.report import CheckResult, Evidence
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, Source, SQLQuerySource
from tests.conftest import scratch_pg_database

NY = ZoneInfo("America/New_York")
NOW = dt.datetime(2026, 11, 30, 15, 0, tzinfo=dt.UTC)  # Monday 30 November, 10:00 in New York
BASELINE = [100, 104, 98, 101, 0, 99, 103, 97, 102, 100, 96, 105, 99, 101]
"""Orders on 15…28 November (New York days); 19 November had none (no row at all)."""

TABLE = "CREATE TABLE orders (id INTEGER, created_at TIMESTAMPTZ, created_utc TIMESTAMP, day DATE)"


def rows_for(day: dt.date, count: int, first_id: int) -> list[tuple[Any, ...]]:
    """``count`` orders on a New York day: half at 00:30, half at 23:30 local time."""
    made = []
    for i in range(count):
        local = dt.datetime.combine(day, dt.time(0, 30) if i % 2 == 0 else dt.time(23, 30))
        at = local.replace(tzinfo=NY)
        made.append((first_id + i, at, at.astimezone(dt.UTC).replace(tzinfo=None), day))
    return made


def data(tested: int, filling: int = 40) -> list[tuple[Any, ...]]:
    made: list[tuple[Any, ...]] = []
    days = [dt.date(2026, 11, 15) + dt.timedelta(days=i) for i in range(14)]
    for day, count in zip(days, BASELINE, strict=True):
        made += rows_for(day, count, len(made))
    made += rows_for(dt.date(2026, 11, 29), tested, len(made))
    # the filling day so far (00:30 local only), a row before the window, one in the future
    for i in range(filling):
        at = dt.datetime(2026, 11, 30, 0, 30, tzinfo=NY) + dt.timedelta(minutes=i)
        made.append((10_000 + i, at, at.astimezone(dt.UTC).replace(tzinfo=None), at.date()))
    early = dt.datetime(2026, 11, 14, 23, 30, tzinfo=NY)
    late = dt.datetime(2026, 12, 1, 0, 30, tzinfo=NY)
    for n, at in enumerate((early, late)):
        made.append((20_000 + n, at, at.astimezone(dt.UTC).replace(tzinfo=None), at.date()))
    return made


class Shop:
    """One engine's database, refilled with a tested day's volume."""

    def __init__(self, engine: str, where: str) -> None:
        self.engine = engine
        self.where = where

    def fill(self, tested: int, filling: int = 40) -> Source:
        rows = data(tested, filling)
        if self.engine == "duckdb":
            with duckdb.connect(self.where) as conn:
                conn.execute("DROP TABLE IF EXISTS orders")
                conn.execute(TABLE)
                conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", rows)
            return DuckDBQuerySource("shop", Path(self.where), Limits())
        with psycopg.connect(self.where.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS orders")
            conn.execute(TABLE)
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO orders VALUES (%s, %s, %s, %s)", rows)
        return SQLQuerySource("shop", SQLAlchemySource(type="sqlalchemy", url=self.where), Limits())


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def shop(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shop]:
    if request.param == "duckdb":
        yield Shop("duckdb", str(tmp_path_factory.mktemp("over") / "shop.duckdb"))
        return
    with scratch_pg_database() as url:
        yield Shop("postgres", url)


def check(expect: Any = "anomaly", column: str = "created_at", **over: Any) -> dict[str, Any]:
    return {
        "name": "daily orders",
        "row_count": {"table": "orders"},
        "over": {"column": column, "bucket": "day", "lookback": "14d", **over},
        "expect": expect,
    }


def run(
    source: Source, *checks: dict[str, Any], zone: str = "America/New_York", now: dt.datetime = NOW
) -> tuple[list[CheckResult], dict[str, Evidence]]:
    auto = Automation.model_validate(
        {
            "name": "daily-orders",
            "source": "shop",
            "goal": "Orders arrive at their usual volume.",
            "timezone": zone,
            "checks": list(checks) or [check()],
            "path": "inline.yaml",
            "line": 1,
        }
    )
    try:
        results, evidence = run_checks(
            auto,
            source,
            Limits(),
            deadline=time.monotonic() + 120,
            clock=lambda: now,
            slot=now,
        )
    finally:
        source.close()
    return results, {e.id: e for e in evidence}


def zscore(baseline: list[int], value: float) -> tuple[float, float, float]:
    n = len(baseline)
    mean = sum(baseline) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in baseline) / (n - 1))
    return (value - mean) / sd, mean - 3 * sd, mean + 3 * sd


@pytest.mark.slow
def test_a_spike_in_daily_volume_needs_attention_with_its_score(shop: Shop) -> None:
    (result,), evidence = run(shop.fill(tested=260))
    score, low, high = zscore(BASELINE, 260)
    assert result.outcome == "failed"
    found = result.anomaly
    assert found is not None
    assert [v for _, v in found.baseline] == [float(x) for x in BASELINE]
    assert found.baseline[0][0] == "2026-11-15T00:00:00-05:00"
    assert found.tested_at == "2026-11-29T00:00:00-05:00"
    assert found.source == "buckets"
    assert found.score == pytest.approx(score, rel=1e-12)
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))
    assert result.value == 260 and result.metrics["rows_in_scope"] == 260
    # one grouped query: one row per bucket with rows (19 November has none), oldest first
    rows = evidence["C1"].rows
    assert len(rows) == 13 + 1 + 1
    assert result.sql.count("GROUP BY") == 1


@pytest.mark.slow
def test_a_drop_in_daily_volume_needs_attention(shop: Shop) -> None:
    source = shop.fill(tested=30)
    by_mean, by_median = run(
        source, check(), {**check({"anomaly": {"method": "mad"}}), "name": "m"}
    )[0]
    # the empty 19 November widens the standard deviation: zscore misses the drop ...
    score, _, _ = zscore(BASELINE, 30)
    assert by_mean.outcome == "passed"
    assert by_mean.anomaly is not None and by_mean.anomaly.score == pytest.approx(score)
    assert -3 < score < -2
    # ... the median and MAD do not: median 100, |x - 100| has median 2
    ordered = sorted(BASELINE)
    median = (ordered[6] + ordered[7]) / 2
    deviations = sorted(abs(x - median) for x in BASELINE)
    spread = 1.4826 * (deviations[6] + deviations[7]) / 2
    assert by_median.outcome == "failed"
    assert by_median.anomaly is not None
    assert by_median.anomaly.score == pytest.approx((30 - median) / spread)
    assert (by_median.anomaly.low, by_median.anomaly.high) == (
        pytest.approx(median - 3 * spread),
        pytest.approx(median + 3 * spread),
    )


@pytest.mark.slow
def test_a_normal_day_is_clear_and_the_filling_day_is_not_tested(shop: Shop) -> None:
    (result,), _ = run(shop.fill(tested=101, filling=3))
    assert result.outcome == "passed"
    assert result.buckets is not None
    assert result.buckets.tested_start == "2026-11-29T00:00:00-05:00"
    assert result.buckets.filling_start == "2026-11-30T00:00:00-05:00"
    assert (result.buckets.filling_value, result.buckets.count) == (3.0, 16)
    from checks.declared.wording import describe_value

    assert describe_value(result).endswith(
        "tested the day from 2026-11-29 00:00 (America/New_York); the day from "
        "2026-11-30 00:00 is still filling (3 so far) and is not tested"
    )


@pytest.mark.slow
def test_a_day_with_no_rows_is_a_drop_to_zero(shop: Shop) -> None:
    (result,), _ = run(shop.fill(tested=0))
    score, _, _ = zscore(BASELINE, 0)
    assert (result.outcome, result.value) == ("failed", 0)
    assert result.anomaly is not None and result.anomaly.score == pytest.approx(score)


@pytest.mark.slow
def test_timestamps_without_zone_and_dates_give_the_same_buckets(shop: Shop) -> None:
    source = shop.fill(tested=260)
    with_zone, naive, dates = run(
        source,
        check(),
        {**check(column="created_utc"), "name": "naive"},
        {**check(column="day"), "name": "dates"},
    )[0]
    for result in (naive, dates):
        assert result.anomaly is not None and with_zone.anomaly is not None
        assert result.anomaly.baseline == with_zone.anomaly.baseline
        assert result.anomaly.score == with_zone.anomaly.score


@pytest.mark.slow
def test_bucket_boundaries_follow_the_automation_time_zone(shop: Shop) -> None:
    source = shop.fill(tested=10)
    # In UTC the 23:30 New York rows are the next day: every count changes.
    (result,), _ = run(source, check("== 10"), zone="UTC")
    # the 29th in UTC: its 5 rows at 00:30 New York and the 28th's 50 at 23:30 New York
    assert result.value == 5 + 50
    (result,), _ = run(shop.fill(tested=10), check("== 10"))
    assert (result.outcome, result.value) == ("passed", 10)


@pytest.mark.slow
def test_an_empty_window_is_not_evaluated(shop: Shop) -> None:
    later = dt.datetime(2027, 6, 1, 12, 0, tzinfo=dt.UTC)
    (result,), _ = run(shop.fill(tested=10), check(), now=later)
    assert result.outcome == "not_evaluated"
    assert result.reason == "0 rows in scope: orders in the 16 days from 2027-05-17 00:00"


def test_days_across_a_dst_change_are_local_days() -> None:
    over = Over.model_validate({"column": "t", "bucket": "day", "lookback": "2d"})
    found = window(over, "Europe/Paris", dt.datetime(2026, 10, 26, 12, 0, tzinfo=dt.UTC))
    assert [s.isoformat() for s in found.starts] == [
        "2026-10-23T00:00:00+02:00",
        "2026-10-24T00:00:00+02:00",
        "2026-10-25T00:00:00+02:00",  # 25 hours long: clocks went back at 03:00
        "2026-10-26T00:00:00+01:00",
    ]
    assert found.end.isoformat() == "2026-10-27T00:00:00+01:00"
    weekly = Over.model_validate({"column": "t", "bucket": "week", "lookback": "14d"})
    found = window(weekly, "UTC", dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC))  # a Thursday
    assert [s.isoformat() for s in found.starts] == [
        "2026-11-09T00:00:00+00:00",
        "2026-11-16T00:00:00+00:00",
        "2026-11-23T00:00:00+00:00",  # tested: the last complete week, Monday to Monday
        "2026-11-30T00:00:00+00:00",  # filling
    ]


def test_hours_across_a_dst_change_are_local_hours() -> None:
    over = Over.model_validate({"column": "t", "bucket": "hour", "lookback": "3h"})
    # 02:30 UTC on 25 October 2026 is 03:30 in Paris, just after 02:00–03:00 came twice
    found = window(over, "Europe/Paris", dt.datetime(2026, 10, 25, 2, 30, tzinfo=dt.UTC))
    assert [s.isoformat() for s in found.starts] == [
        "2026-10-24T23:00:00+02:00",
        "2026-10-25T00:00:00+02:00",
        "2026-10-25T01:00:00+02:00",
        "2026-10-25T02:00:00+02:00",  # the repeated hour: one bucket of two hours
        "2026-10-25T03:00:00+01:00",
    ]
    assert found.end.isoformat() == "2026-10-25T04:00:00+01:00"
